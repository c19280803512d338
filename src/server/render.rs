//! A published config (published.rs) written out for one server version and this host: the
//! settings that version has, memory scaled to the host (scale.rs), and a comment line for
//! every setting not given as published, so the text says itself what changed and why.

use super::published::{How, Published, Setting, REPOSITORY};
use super::scale::Scale;
use super::version::Version;
use super::Kind;
use crate::error::bad_input;
use crate::results::{ConfigSource, ScaledSetting};

/// The text a server gets, and where it came from (for run.json).
#[derive(Debug, Clone)]
pub struct Rendered {
    pub text: String,
    pub source: ConfigSource,
}

/// `p` for a server of version `version` on a host with `memory_kb` of RAM (MemTotal).
pub fn render(p: &Published, version: Version, memory_kb: u64) -> anyhow::Result<Rendered> {
    if version < p.from || version >= p.before {
        return bad_input(format!(
            "the built-in config {} is for {} {}; this server is {version}",
            p.name,
            p.kind.name(),
            p.versions
        ));
    }
    let scale = Scale::for_host(memory_kb, p.host.memory_gib);
    let source = p.source(version);
    let mut out = Out {
        kind: p.kind,
        text: String::new(),
        scaled: Vec::new(),
        not_as_published: Vec::new(),
    };
    out.text.push_str(&format!(
        "# {}: a published config of the Insert Benchmark and sysbench studies, from\n\
         # {REPOSITORY} {}, for {} {version}.\n\
         # Published for {}; memory scaled to this host's {} GiB (x {}).\n",
        p.name,
        source.path,
        p.kind.name(),
        host_label(p),
        scale.host_gib,
        factor_text(&scale),
    ));
    for s in p.settings() {
        out.setting(s, version, &scale);
    }
    Ok(Rendered {
        source: ConfigSource {
            name: p.name.to_string(),
            source: format!("{REPOSITORY} {}", source.path),
            server_version: version.to_string(),
            published_host: host_label(p),
            host_memory_gib: scale.host_gib,
            scale: scale.factor(),
            scaled: out.scaled,
            not_as_published: out.not_as_published,
        },
        text: out.text,
    })
}

fn host_label(p: &Published) -> String {
    format!(
        "{} ({} cores, {} GiB RAM)",
        p.host.name, p.host.cores, p.host.memory_gib
    )
}

/// `0.75`, `1`, `0.03125`: the factor without float noise.
fn factor_text(scale: &Scale) -> String {
    let f = format!("{:.5}", scale.factor());
    f.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The text being written and what the record says of it.
struct Out {
    kind: Kind,
    text: String,
    scaled: Vec<ScaledSetting>,
    not_as_published: Vec<String>,
}

impl Out {
    fn setting(&mut self, s: &Setting, version: Version, scale: &Scale) {
        match s.how {
            How::Kept => self.line(s.name, s.value),
            How::Memory => self.memory(s, scale),
            How::Versions { from, before, why } => {
                let given = from.is_none_or(|f| version >= f) && before.is_none_or(|b| version < b);
                if given {
                    self.line(s.name, s.value);
                } else {
                    self.note(s, &format!("not given on {version}: {why}"));
                }
            }
            How::Dropped(why) => self.note(s, &format!("not given: {why}")),
            How::Changed(value, why) => {
                self.note(s, &format!("given as {}: {why}", self.form(s.name, value)));
                self.line(s.name, value);
            }
            How::Added(why) => {
                let line = format!(
                    "{} is not in the published file: {why}",
                    self.form(s.name, s.value)
                );
                self.comment(&line);
                self.not_as_published.push(line);
                self.line(s.name, s.value);
            }
        }
    }

    fn memory(&mut self, s: &Setting, scale: &Scale) {
        let Some(used) = scale.apply(s.value) else {
            // Not a size after all: given as published rather than guessed at.
            self.line(s.name, s.value);
            return;
        };
        self.comment(&format!(
            "{} as published; x {}/{} GiB of RAM, rounded down (docs/configs.md)",
            self.form(s.name, s.value),
            scale.host_gib,
            scale.published_gib
        ));
        self.scaled.push(ScaledSetting {
            setting: s.name.to_string(),
            published: s.value.to_string(),
            used: used.clone(),
        });
        self.line(s.name, &used);
    }

    /// A setting not given as published: a comment line, also kept for the record.
    fn note(&mut self, s: &Setting, what: &str) {
        let line = format!("{} {what}", self.form(s.name, s.value));
        self.comment(&line);
        self.not_as_published.push(line);
    }

    fn comment(&mut self, line: &str) {
        self.text.push_str("# ");
        self.text.push_str(line);
        self.text.push('\n');
    }

    fn line(&mut self, name: &str, value: &str) {
        let l = self.form(name, value);
        self.text.push_str(&l);
        self.text.push('\n');
    }

    /// `name = value` in postgresql.conf, `name=value` (or a bare switch) in my.cnf.
    fn form(&self, name: &str, value: &str) -> String {
        match (self.kind, value.is_empty()) {
            (Kind::Postgres, _) => format!("{name} = {value}"),
            (Kind::MariaDb | Kind::MySql, true) => name.to_string(),
            (Kind::MariaDb | Kind::MySql, false) => format!("{name}={value}"),
        }
    }
}
