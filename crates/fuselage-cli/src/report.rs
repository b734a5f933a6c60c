//! `fuselage report MODEL --fusion F (--buffer SIZE | --hw PRESET) --plan FILE --out
//! report.html`: the plan as one self-contained HTML page ([`fuselage::report::Report`]).

use crate::common::{CostArgs, ModelArgs};
use crate::files::{Files, read_plan, shown, write};
use crate::registry::Registry;
use anyhow::Context;
use clap::Args;
use fuselage::cost::{Cached, CostModel};
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `fuselage report`.
#[derive(Debug, Args)]
pub struct ReportCmd {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    cost: CostArgs,
    /// The plan file (JSON) to report on.
    #[arg(long, value_name = "FILE")]
    plan: PathBuf,
    /// Where to write the HTML (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Leave out the buffer sweep (it solves the network once per step of the curve).
    #[arg(long)]
    no_sweep: bool,
    /// Seconds the buffer sweep may take; past them the report draws the part of the curve
    /// solved by then (from 2β down), and says so. `fuselage sweep` draws it whole.
    #[arg(long, value_name = "SECONDS", default_value = "3", value_parser = crate::optimize::seconds)]
    sweep_time_limit: f64,
    /// Draw the network only up to this many nodes.
    #[arg(long, value_name = "N", default_value = "200")]
    max_drawn_nodes: usize,
}

pub fn run(a: ReportCmd, registry: &Registry) -> anyhow::Result<()> {
    Files::new()
        .model(&a.model.model)
        .hardware(a.cost.hw.as_deref())
        .input("--plan", Some(&a.plan))
        .output("--out", Some(&a.out))
        .check()?;
    let g = a.model.load()?;
    let setting = a.cost.resolve(registry)?;
    let file = read_plan("--plan", &a.plan)?;
    let plan = file
        .to_plan(&g)
        .with_context(|| format!("{}", a.plan.display()))?;
    let model: Arc<dyn CostModel> = Arc::new(Cached::new(setting.model));
    let report = fuselage::report::Report::new(&g, model, &plan)
        .family(setting.family.clone())
        .hardware(setting.hw)
        .with_sweep(!a.no_sweep)
        .sweep_limit(std::time::Duration::from_secs_f64(a.sweep_time_limit))
        .max_drawn_nodes(a.max_drawn_nodes);
    let html = report
        .render()
        .with_context(|| format!("{}", a.plan.display()))?;
    write("--out", &a.out, &html)?;
    outln!(
        "wrote {} ({} groups, {} KiB)",
        shown(&a.out),
        plan.len(),
        html.len() / 1024
    )?;
    Ok(())
}
