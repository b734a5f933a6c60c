//! With no arguments: plans ResNet-18 at 256 KiB with this crate's cost model, explainer and
//! search through the [`Planner`], and prints the plan. With arguments: the `fuselage`
//! program, which also knows this crate's components by name.

use fuselage::cost::{CostConfig, Lbdf};
use fuselage::{Planner, Reference};
use fuselage_downstream::{FanOut, GreedyMerge, Reserved, registry};
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
    let model = Arc::new(Reserved::new(Lbdf::new(CostConfig::kib(256)?), 4096));
    let out = Planner::with_model(&g, model)
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
    Ok(())
}
