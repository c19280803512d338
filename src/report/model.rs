//! What a report is, independent of how it is written out: sections of text, tables and charts.
//! Every output format (HTML, Markdown, CSV, JSON) renders this one model, so they always agree.

use serde::Serialize;

/// Which way a column is better, for colouring relative values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
    Neither,
}

#[derive(Debug, Clone, Serialize)]
pub struct Column {
    pub key: String,
    pub label: String,
    pub unit: String,
    /// Shown on hover (HTML) and in the legend: what the number is.
    pub help: String,
    pub better: Better,
}

impl Column {
    /// The same columns holding ratios: no unit.
    pub fn ratios(cols: &[Column]) -> Vec<Column> {
        cols.iter()
            .map(|c| Column {
                unit: String::new(),
                ..c.clone()
            })
            .collect()
    }

    pub fn new(key: &str, label: &str, unit: &str, help: &str, better: Better) -> Column {
        Column {
            key: key.into(),
            label: label.into(),
            unit: unit.into(),
            help: help.into(),
            better,
        }
    }
}

/// How a cell is highlighted. Each output renders these in its own way (colours, bold, marks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mark {
    None,
    /// Absolute tables: top quarter of the column's range (green).
    Best,
    /// Absolute tables: bottom quarter of the range (red).
    Worst,
    /// qr/qp: the background insert rate missed its SLA (grey; red in the SLA table).
    SlaMissed,
    /// Relative tables: at or beyond the "worse" threshold.
    Worse,
    /// Relative tables: at or beyond the "better" threshold.
    Better,
    /// Relative tables: beyond the "worse" threshold, but nothing measured how far another run
    /// could land (one round on a side, or no interval): not a finding until repeats confirm it.
    UnconfirmedWorse,
    /// Relative tables: beyond the "better" threshold, unconfirmed as `UnconfirmedWorse`.
    UnconfirmedBetter,
    /// Response-time buckets: grey level 0..=20 by percentage.
    Shade(u8),
    /// No value: the step is missing, failed, or the metric was not measured.
    Gap,
}

/// The number behind a cell, for CSV/JSON. `inf` is the relative rule's "only the base is 0".
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Num(f64),
    Inf,
    Missing,
}

#[derive(Debug, Clone)]
pub struct Cell {
    pub value: Value,
    pub text: String,
    pub mark: Mark,
    /// Why (hover text): the error of a failed step, the SLA ratio, ...
    pub note: Option<String>,
    /// Relative tables: the absolute value, so the page can recompute against another base.
    pub abs: Option<f64>,
    /// Long text shown on demand (a target's full config).
    pub more: Option<String>,
}

impl Cell {
    pub fn num(v: f64, text: String) -> Cell {
        Cell {
            value: Value::Num(v),
            text,
            mark: Mark::None,
            note: None,
            abs: None,
            more: None,
        }
    }

    pub fn text(s: impl Into<String>) -> Cell {
        Cell {
            value: Value::Missing,
            text: s.into(),
            mark: Mark::None,
            note: None,
            abs: None,
            more: None,
        }
    }

    /// A clear gap: an em dash, never a zero; `why` says what is missing.
    pub fn gap(why: impl Into<String>) -> Cell {
        Cell {
            value: Value::Missing,
            text: "—".into(),
            mark: Mark::Gap,
            note: Some(why.into()),
            abs: None,
            more: None,
        }
    }

    pub fn mark(mut self, m: Mark) -> Cell {
        self.mark = m;
        self
    }

    pub fn note(mut self, n: impl Into<String>) -> Cell {
        self.note = Some(n.into());
        self
    }
}

#[derive(Debug, Clone)]
pub struct Row {
    /// Target name, or the label of a row that is not a target (the SLA table's "target").
    pub label: String,
    /// Index into the report's targets, for hiding rows and choosing the base in the page.
    pub target: Option<usize>,
    pub cells: Vec<Cell>,
    /// Said after the row (a failed step's error).
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Absolute values, quartile highlighting.
    Absolute,
    /// Ratios to the base row; the page recomputes them when another base is chosen.
    Relative,
    /// Background insert rate of qr/qp steps vs its target.
    Sla,
    /// Response-time buckets as percentages.
    Buckets,
    /// Latency percentiles.
    Percentiles,
    /// Coefficient of variation of per-second rates.
    Variance,
    /// Summary statistics of a relative table's rows.
    Stats,
    /// Descriptive: targets, hosts.
    Info,
    /// A figure at each level of a concurrency sweep: numbers, not ranked.
    Scaling,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub id: String,
    pub title: String,
    pub kind: Kind,
    pub suite: &'static str,
    pub step: Option<String>,
    pub op: Option<String>,
    /// Header of the row label column ("target", "microbenchmark").
    pub row_header: String,
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// One line under the table: how to read the colours.
    pub legend: Option<String>,
    /// Stats tables: the id of the relative table they summarise.
    pub source: Option<String>,
    /// Relative and stats tables: the target the values are relative to.
    pub base: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Chart {
    pub title: String,
    /// A complete inline `<svg>` element.
    pub svg: String,
    /// Drawn relative to the base given on the command line: the page says so when another
    /// base is chosen (tables follow the choice, charts do not).
    pub base_dependent: bool,
}

// A report holds a few hundred blocks, built once: boxing tables would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Block {
    Text(String),
    /// Sentences that change how the numbers should be read.
    Warnings(Vec<String>),
    Table(Table),
    Charts(Vec<Chart>),
}

#[derive(Debug, Clone)]
pub struct Section {
    pub id: String,
    pub title: String,
    pub blocks: Vec<Block>,
    pub sub: Vec<Section>,
}

impl Section {
    pub fn new(id: impl Into<String>, title: impl Into<String>) -> Section {
        Section {
            id: id.into(),
            title: title.into(),
            blocks: Vec::new(),
            sub: Vec::new(),
        }
    }

    pub fn tables(&self) -> Vec<&Table> {
        let mut out: Vec<&Table> = self
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::Table(t) => Some(t),
                _ => None,
            })
            .collect();
        for s in &self.sub {
            out.extend(s.tables());
        }
        out
    }
}

/// A target as the page's controls and legends name it.
#[derive(Debug, Clone, Serialize)]
pub struct TargetLabel {
    pub name: String,
    pub dir: String,
    /// Its suite's name (empty on a chart's own curves).
    pub suite: String,
    pub engine: String,
    pub version: String,
    pub config_name: String,
    pub status: String,
    /// Line colour in charts.
    pub colour: String,
    /// SVG dash pattern when there are more targets than distinct colours.
    pub dash: String,
}

#[derive(Debug, Clone)]
pub struct Doc {
    pub title: String,
    pub generated_by: String,
    pub targets: Vec<TargetLabel>,
    pub base: usize,
    pub worse: f64,
    pub better: f64,
    pub warnings: Vec<String>,
    /// What the inputs lack of their campaign (missing shards, cells not finished): said
    /// before everything else, since the report is then not the campaign's last word.
    pub incomplete: Vec<String>,
    pub sections: Vec<Section>,
}

impl Doc {
    pub fn tables(&self) -> Vec<&Table> {
        self.sections.iter().flat_map(|s| s.tables()).collect()
    }

    pub fn base_name(&self) -> &str {
        &self.targets[self.base].name
    }
}

impl Mark {
    /// Name used in CSV and JSON.
    pub fn name(self) -> String {
        match self {
            Mark::None => String::new(),
            Mark::Best => "best".into(),
            Mark::Worst => "worst".into(),
            Mark::SlaMissed => "sla_missed".into(),
            Mark::Worse => "worse".into(),
            Mark::Better => "better".into(),
            Mark::UnconfirmedWorse => "unconfirmed_worse".into(),
            Mark::UnconfirmedBetter => "unconfirmed_better".into(),
            Mark::Shade(n) => format!("shade{n}"),
            Mark::Gap => "gap".into(),
        }
    }
}
