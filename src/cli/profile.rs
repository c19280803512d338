//! `dbperf profile diff`: the functions whose CPU per operation changed most between two steps'
//! CPU profiles (docs/profiles.md).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::error::bad_input;
use crate::profile::diff;

#[derive(Subcommand, Debug)]
pub enum ProfileCommand {
    /// Compare two steps' profiles (taken with `dbperf run --profile`): the functions whose CPU
    /// per operation changed most, base first.
    Diff(DiffArgs),
}

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The base step file (`<result dir>/steps/<step>.json`).
    #[arg(value_name = "BASE_STEP")]
    pub base: PathBuf,
    /// The step file to compare with the base.
    #[arg(value_name = "STEP")]
    pub new: PathBuf,
    /// How many functions to list.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub top: u32,
}

pub fn run(cmd: ProfileCommand) -> anyhow::Result<i32> {
    let ProfileCommand::Diff(a) = cmd;
    let base = match diff::load(&a.base) {
        Ok(p) => p,
        Err(e) => return bad_input(e),
    };
    let new = match diff::load(&a.new) {
        Ok(p) => p,
        Err(e) => return bad_input(e),
    };
    let d = diff::compare(&base, &new, a.top as usize);
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(vec![
        "function",
        "base self",
        "self",
        "change self",
        "base total",
        "total",
    ]);
    let f = |x: f64| format!("{x:.3}");
    for r in &d.rows {
        t.add_row(vec![
            r.function.clone(),
            f(r.base_self),
            f(r.new_self),
            format!("{:+.3}", r.change_self()),
            f(r.base_total),
            f(r.new_total),
        ]);
    }
    out!(
        "{} ({} per {}): base {} ({} samples), compared {} ({} samples)",
        d.unit.label(),
        match d.unit {
            diff::Unit::UsPerOp => "share of the samples × CPU µs",
            diff::Unit::PctOfSamples =>
                "a step did not measure its CPU per operation, so shares of the samples",
        },
        new.op,
        a.base.display(),
        base.samples(),
        a.new.display(),
        new.samples()
    );
    out!("{t}");
    out!("self: in the function itself; total: with what it called. [bracketed]: not resolved.");
    for (which, p) in [("base", &base), ("compared", &new)] {
        if let Some(why) = &p.partial {
            out!("The {which} profile is partial: {why}.");
        }
    }
    Ok(super::EXIT_OK)
}
