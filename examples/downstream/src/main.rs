//! With no arguments: plans ResNet-18 at 256 KiB with this crate's cost model, explainer and
//! search through the [`Planner`], prints the plan, sweeps the buffer exactly under the
//! crate's cost family, and writes the plan's HTML report (with that sweep) to the folder
//! `FUSELAGE_DOWNSTREAM_OUT` names, or the temporary folder. With arguments: the `fuselage`
//! program, which also knows this crate's components by name.

use fuselage::cost::{Accelerator, Cached, CostConfig, CostFamily, CostKind};
use fuselage::{Planner, Reference};
use fuselage_downstream::{FanOut, GreedyMerge, ReservedFamily, registry};
use std::process::ExitCode;
use std::sync::Arc;

fn main() -> ExitCode {
    if std::env::args_os().len() > 1 {
        return fuselage_cli::main_with(&registry());
    }
    match demo() {
        Ok(()) => ExitCode::SUCCESS,
        // `fuselage-downstream | head` closed the pipe: no error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn demo() -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let g = fuselage::zoo::build("resnet18")?;
    let family = ReservedFamily::new(CostKind::Lbdf, 4096);
    let config = CostConfig::kib(256)?;
    let model = Arc::new(Cached::new(family.at(&config)));
    let out = Planner::with_model(&g, model.clone())
        .search_with(Box::new(GreedyMerge::default()))
        .explainer_with(Box::new(FanOut))
        .budget(2000)
        .seed(1)
        .reference(Reference::Exact)
        .run()?;
    writeln!(
        stdout,
        "{} with {} ({} search, {} splitter over {}): {} groups, {} bytes of DRAM after {} evaluations ({:?})",
        g.name(),
        out.names.cost_model,
        out.names.search,
        out.names.splitter,
        out.names.explainer.as_deref().unwrap_or("-"),
        out.report.groups.len(),
        out.report.dram_bytes,
        out.result.evaluations,
        out.result.stop,
    )?;
    if let Some(opt) = out.reference {
        writeln!(
            stdout,
            "optimum {} bytes ({}), lower bound {} bytes",
            opt.dram_bytes,
            if opt.proven { "proven" } else { "not proven" },
            out.lower_bound
        )?;
    }
    // In the order of their first node, which is a topological order of an acyclic plan.
    let mut groups = out.result.plan.groups.clone();
    groups.sort_by_key(|grp| grp.first());
    for (i, grp) in groups.iter().enumerate() {
        writeln!(stdout, "group {i}: {}", g.names(grp).join(" "))?;
    }
    // The family at every buffer: the exact sweep, as for a built-in model.
    let hw = Accelerator::beta_only(config);
    let sweep = fuselage::pipeline::sweep(&g, &family, &hw, 64 << 10, 512 << 10)?;
    writeln!(
        stdout,
        "sweep of {} from 64 KiB to 512 KiB: {} steps, optimal DRAM {} to {} bytes",
        family.name(),
        sweep.points.len(),
        sweep.points.first().map_or(0, |p| p.dram_bytes),
        sweep.points.last().map_or(0, |p| p.dram_bytes),
    )?;
    if sweep
        .points
        .windows(2)
        .any(|w| w[0].dram_bytes < w[1].dram_bytes)
    {
        return Err("the optimum rose with the buffer".into());
    }
    // And the report, whose sweep runs on the family too.
    let html = fuselage::report::Report::new(&g, model, &out.result.plan)
        .family(family)
        .hardware(hw)
        .render()?;
    if !html.contains("optimal DRAM against buffer (reserved-lbdf)") {
        return Err("the report has no sweep of the family".into());
    }
    let dir = std::env::var_os("FUSELAGE_DOWNSTREAM_OUT")
        .map_or_else(std::env::temp_dir, std::path::PathBuf::from);
    let path = dir.join("fuselage-downstream-report.html");
    std::fs::write(&path, &html)?;
    writeln!(
        stdout,
        "report: {} ({} KiB)",
        path.display(),
        html.len() / 1024
    )?;
    Ok(())
}
