//! The Insert Benchmark's parameters from a preset and the flags, validated with errors a user
//! can act on.

use super::bounds::{check_seconds, DEFAULT_SEED, MAX_STEP_SECONDS};
use super::presets::{all, listed_rows, Listing, Preset};
use crate::error::bad_input;
/// The Insert Benchmark's delete statement form is a parameter of what to run.
pub use crate::workload::ibench::DeleteForm;
pub use crate::workload::ibench::StatementForms;
use crate::workload::ibench::{IbenchParams, StepName};

/// Flags that override a preset; `None` keeps the preset's value or the original's default.
#[derive(Debug, Default, Clone)]
pub struct IbenchOverrides {
    pub clients: Option<u64>,
    pub shared_table: bool,
    pub deletes: Option<bool>,
    pub delete_form: Option<DeleteForm>,
    pub rows_l_i0: Option<u64>,
    pub rows_l_i1: Option<u64>,
    pub rows_l_i2: Option<u64>,
    pub query_seconds: Option<u64>,
    pub rates: Option<Vec<u64>>,
    pub wait_seconds: Option<u64>,
    pub seed: Option<u64>,
    pub data_length_min: Option<u64>,
    pub data_length_max: Option<u64>,
    pub data_random_pct: Option<u64>,
    pub resync_get_min: Option<u64>,
    pub rows_per_query: Option<u64>,
    pub steps: Option<Vec<String>>,
    pub statement_forms: Option<StatementForms>,
}

pub fn ibench_params(preset: &Preset, o: &IbenchOverrides) -> anyhow::Result<IbenchParams> {
    let clients = clients(o)?;
    let deletes = deletes(o)?;
    let rates = rates(o)?;
    let query_seconds = query_seconds(preset, o, &rates)?;
    if let Some(w) = o.wait_seconds {
        check_seconds("--wait-seconds", w, MAX_STEP_SECONDS)?;
    }
    let (dmin, dmax, pct) = data(o)?;
    let rows_per_query = o.rows_per_query.unwrap_or(10);
    if rows_per_query == 0 || rows_per_query > 1000 {
        return bad_input(format!(
            "--rows-per-query must be 1..1000, got {rows_per_query}"
        ));
    }
    let mut params = IbenchParams {
        preset: preset.name.clone(),
        clients,
        shared_table: o.shared_table,
        deletes,
        delete_form: o.delete_form.unwrap_or(DeleteForm::Current),
        rows_l_i0: o.rows_l_i0.unwrap_or(preset.rows_l_i0),
        rows_l_i1: o.rows_l_i1.unwrap_or(preset.rows_l_i1),
        rows_l_i2: o.rows_l_i2.unwrap_or(preset.rows_l_i2),
        query_seconds,
        rates,
        wait_seconds: o.wait_seconds.or(preset.wait_seconds),
        seed: o.seed.unwrap_or(DEFAULT_SEED),
        data_length_min: dmin,
        data_length_max: dmax,
        data_random_pct: pct,
        resync_get_min: o.resync_get_min.unwrap_or(1000),
        rows_per_query,
        cashregisters: 1000,
        products: 10_000,
        customers: 100_000,
        max_price: 500,
        steps: Vec::new(),
        statement_forms: o.statement_forms.unwrap_or(StatementForms::Original),
    };
    params.steps = steps(&params, o)?;
    Ok(params)
}

fn clients(o: &IbenchOverrides) -> anyhow::Result<u64> {
    let clients = o.clients.unwrap_or(1);
    if clients == 0 {
        return bad_input("--clients must be at least 1");
    }
    if clients > 1024 {
        return bad_input(format!(
            "--clients {clients} is more than 1024; each client opens up to 3 connections"
        ));
    }
    Ok(clients)
}

fn deletes(o: &IbenchOverrides) -> anyhow::Result<bool> {
    match (o.deletes, o.shared_table) {
        (Some(true), true) => bad_input(
            "--deletes on cannot be combined with --shared-table: every client's deleter would \
                 remove the same lowest rows (the original refuses this too)",
        ),
        (Some(d), _) => Ok(d),
        (None, shared) => Ok(!shared),
    }
}

fn rates(o: &IbenchOverrides) -> anyhow::Result<Vec<u64>> {
    let rates = o.rates.clone().unwrap_or_else(|| vec![100, 500, 1000]);
    if rates.is_empty() || rates.contains(&0) {
        return bad_input("--rates needs one or more positive rows/s values, e.g. 100,500,1000");
    }
    let mut sorted = rates.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != rates.len() {
        return bad_input("--rates has a repeated value; each rate names two steps (qrN, qpN)");
    }
    Ok(rates)
}

fn query_seconds(preset: &Preset, o: &IbenchOverrides, rates: &[u64]) -> anyhow::Result<u64> {
    let query_seconds = o.query_seconds.unwrap_or(preset.query_seconds);
    if query_seconds == 0 {
        return bad_input("--query-seconds must be at least 1");
    }
    check_seconds("--query-seconds", query_seconds, MAX_STEP_SECONDS)?;
    // Each qr/qp step's background inserter inserts this many seconds' worth of rows.
    const MAX_QUERY_STEP_ROWS: u64 = 1_000_000_000_000_000;
    if let Some(r) = rates.iter().find(|r| {
        r.checked_mul(query_seconds)
            .is_none_or(|n| n > MAX_QUERY_STEP_ROWS)
    }) {
        return bad_input(format!(
            "--rates {r} for --query-seconds {query_seconds} is more than 10^15 rows per client \
             and step"
        ));
    }
    Ok(query_seconds)
}

/// The `data` column's length bounds and random share.
fn data(o: &IbenchOverrides) -> anyhow::Result<(u64, u64, u64)> {
    let dmin = o.data_length_min.unwrap_or(10);
    let dmax = o.data_length_max.unwrap_or(20);
    if dmin == 0 || dmin > dmax || dmax > 4000 {
        return bad_input(format!(
            "data length must satisfy 1 <= min <= max <= 4000 (the column is varchar(4000)), got {dmin}..{dmax}"
        ));
    }
    let pct = o.data_random_pct.unwrap_or(50);
    if pct > 100 {
        return bad_input(format!("--data-random-pct must be 0..100, got {pct}"));
    }
    Ok((dmin, dmax, pct))
}

/// The steps selected, in the benchmark's order, none inserting 0 rows.
fn steps(params: &IbenchParams, o: &IbenchOverrides) -> anyhow::Result<Vec<String>> {
    let all: Vec<String> = params
        .all_step_names()
        .iter()
        .map(StepName::to_string)
        .collect();
    let steps = match &o.steps {
        None => all,
        Some(sel) => {
            for s in sel {
                if !all.contains(s) {
                    return bad_input(format!("unknown step '{s}'; steps are: {}", all.join(", ")));
                }
            }
            // Steps always run in the benchmark's order, whatever order they were named in.
            all.into_iter().filter(|s| sel.contains(s)).collect()
        }
    };
    for (name, rows) in [
        ("l.i0", params.rows_l_i0),
        ("l.i1", params.rows_l_i1),
        ("l.i2", params.rows_l_i2),
    ] {
        if rows == 0 && steps.iter().any(|s| s == name) {
            return bad_input(format!(
                "{name} would insert 0 rows; give it rows or leave it out of --steps"
            ));
        }
    }
    Ok(steps)
}

/// The presets as `--list-presets` shows them; one sized from the memory cap shows its rows for
/// `cap`, or says "from cap".
pub fn listing(cap: Option<u64>) -> Listing {
    let rows = all()
        .into_iter()
        .map(|p| {
            let sized = p.sized_by_cap.is_some();
            let p = p.clone().for_cap(cap, 1).unwrap_or(p);
            vec![
                p.name.clone().into(),
                listed_rows(sized, cap, p.rows_l_i0),
                listed_rows(sized, cap, p.rows_l_i1),
                listed_rows(sized, cap, p.rows_l_i2),
                p.query_seconds.to_string().into(),
                p.wait_seconds
                    .map(|w| w.to_string())
                    .unwrap_or_else(|| "formula".into())
                    .into(),
                p.description.clone().into(),
            ]
        })
        .collect();
    Listing {
        header: [
            "preset",
            "l.i0 rows",
            "l.i1 rows",
            "l.i2 rows",
            "qr/qp s",
            "wait s",
            "description",
        ]
        .map(String::from)
        .to_vec(),
        rows,
        note: "Rows are per client. 'formula' = min(1200, 60 + total l.i0 rows / 1e6) seconds. \
               'from cap': sized from --server-memory when the run is planned (give it with \
               --list-presets to see the rows).\n"
            .into(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::presets;
    use super::*;

    fn quick() -> presets::Preset {
        presets::get("quick").unwrap()
    }

    #[test]
    fn defaults_follow_the_original() {
        let p = ibench_params(&quick(), &IbenchOverrides::default()).unwrap();
        assert_eq!(
            p.steps.join(","),
            "l.i0,l.x,l.i1,l.i2,qr100,qp100,qr500,qp500,qr1000,qp1000"
        );
        assert!(p.deletes);
        assert_eq!(p.delete_form, DeleteForm::Current);
        assert_eq!(
            (p.data_length_min, p.data_length_max, p.data_random_pct),
            (10, 20, 50)
        );
        assert_eq!(p.resync_get_min, 1000);
    }

    #[test]
    fn shared_table_turns_deletes_off_and_refuses_them() {
        let o = IbenchOverrides {
            shared_table: true,
            ..Default::default()
        };
        assert!(!ibench_params(&quick(), &o).unwrap().deletes);
        let o = IbenchOverrides {
            shared_table: true,
            deletes: Some(true),
            ..Default::default()
        };
        assert!(crate::error::is_bad_input(
            &ibench_params(&quick(), &o).unwrap_err()
        ));
    }

    #[test]
    fn impossible_values_are_bad_input() {
        let cases = [
            IbenchOverrides {
                clients: Some(0),
                ..Default::default()
            },
            IbenchOverrides {
                rates: Some(vec![0]),
                ..Default::default()
            },
            IbenchOverrides {
                rates: Some(vec![100, 500, 100]),
                ..Default::default()
            },
            IbenchOverrides {
                query_seconds: Some(0),
                ..Default::default()
            },
            IbenchOverrides {
                steps: Some(vec!["l.i9".into()]),
                ..Default::default()
            },
            IbenchOverrides {
                data_length_min: Some(30),
                ..Default::default()
            },
            IbenchOverrides {
                rows_l_i0: Some(0),
                ..Default::default()
            },
        ];
        for o in cases {
            let e = ibench_params(&quick(), &o).unwrap_err();
            assert!(crate::error::is_bad_input(&e), "{o:?}: {e}");
        }
    }

    #[test]
    fn selected_steps_keep_benchmark_order_and_rates_rename_steps() {
        let o = IbenchOverrides {
            rates: Some(vec![200]),
            steps: Some(vec!["qp200".into(), "l.i0".into()]),
            ..Default::default()
        };
        assert_eq!(
            ibench_params(&quick(), &o).unwrap().steps,
            vec!["l.i0", "qp200"]
        );
    }
}
