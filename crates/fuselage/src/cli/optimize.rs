//! `fuselage optimize MODEL --fusion F --buffer SIZE --search S --budget N --seed S --out FILE`.

use super::common::{CostArgs, ModelArgs, kib, mb};
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use fuselage::cost::{Cached, CostModel, PlanFile, evaluate_plan};
use fuselage::ir::Graph;
use fuselage::search::{Budget, Optimal, Problem, SearchResult, SearchStrategy, strategy_by_name};
use fuselage::split::{RandomSplitter, Splitter};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

/// Search strategies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Search {
    /// Random search: a fresh random plan per evaluation.
    Random,
    /// Local search: population of 10, one-edit mutations.
    Local,
    /// NSGA-II on DRAM and MBU, population 10.
    Nsga2,
    /// The exact dynamic programme over contiguous plans.
    Optimal,
}

/// Splitters repairing invalid groups.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum SplitterKind {
    /// Random cuts until every part fits (the paper's baseline).
    Random,
}

/// Arguments of `fuselage optimize`.
#[derive(Debug, Args)]
pub struct OptimizeCmd {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    cost: CostArgs,
    /// Search strategy.
    #[arg(long, value_enum)]
    search: Search,
    /// Plan evaluations the search may make.
    #[arg(long, value_name = "N")]
    budget: u64,
    /// Seed of every random choice.
    #[arg(long, value_name = "S", default_value = "0")]
    seed: u64,
    /// How invalid groups are repaired.
    #[arg(long, value_enum, default_value = "random")]
    splitter: SplitterKind,
    /// Where to write the plan (JSON).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Also write the plan as Graphviz DOT, groups as clusters.
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// The plan file `optimize` writes: the cost-model plan file plus the run's record.
#[derive(Serialize)]
struct OptimizeFile {
    #[serde(flatten)]
    plan: PlanFile,
    search: String,
    splitter: String,
    seed: u64,
    budget: u64,
    evaluations: u64,
    seconds: f64,
    stop: fuselage::search::StopReason,
    lower_bound_bytes: u64,
    optimal_dram_bytes: u64,
    history: Vec<u64>,
    front: Vec<fuselage::search::Score>,
}

fn gap(value: u64, reference: u64) -> String {
    if reference == 0 {
        return "n/a".into();
    }
    format!("{:+.2}%", (value as f64 / reference as f64 - 1.0) * 100.0)
}

/// Refuses a buffer no single op fits, where no plan but layer by layer is possible and the
/// search would be pointless.
fn check_buffer(g: &Graph, p: &Problem<'_>, model: &dyn CostModel) -> anyhow::Result<()> {
    if p.unfusable().len() == g.len() {
        let smallest = g
            .node_ids()
            .filter_map(|v| {
                model
                    .evaluate(g, &fuselage::ir::NodeSet::singleton(g.len(), v))
                    .ok()
            })
            .map(|c| c.buffer_bytes)
            .min()
            .unwrap_or(0);
        bail!(
            "the {}-byte buffer is smaller than every single op of {} (the smallest needs {} bytes): nothing can be fused",
            model.config().buffer_bytes(),
            g.name(),
            smallest
        );
    }
    Ok(())
}

pub fn run(a: OptimizeCmd) -> anyhow::Result<()> {
    let g = a.model.load()?;
    let inner = a.cost.model()?;
    let model = Cached::new(inner.as_ref());
    let splitter: Box<dyn Splitter> = match a.splitter {
        SplitterKind::Random => Box::new(RandomSplitter::new(&model)),
    };
    let budget_n = a.budget;
    let p = Problem::new(&g, &model, splitter.as_ref())?;
    check_buffer(&g, &p, inner.as_ref())?;
    let name = format!("{:?}", a.search).to_lowercase();
    let strategy = strategy_by_name(&name)?;

    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(budget_n)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} [{bar:40}] {pos}/{len} evaluations ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(format!("{name} on {}", g.name()));
    let progress = |done: u64, _total: u64| bar.set_position(done);
    let budget = Budget::new(budget_n)?.with_progress(&progress);
    let start = Instant::now();
    let result: SearchResult = strategy.run(&p, &budget, a.seed)?;
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();

    let optimal = if a.search == Search::Optimal {
        result.score.dram_bytes
    } else {
        Optimal::default()
            .run(&p, &Budget::new(1)?, a.seed)?
            .score
            .dram_bytes
    };
    let report = evaluate_plan(inner.as_ref(), &g, &result.plan)?;
    report
        .check()
        .context("the search returned a plan that does not fit (a bug)")?;
    let lower = p.lower_bound();

    let file = OptimizeFile {
        plan: PlanFile::from_report(inner.as_ref(), &g, &result.plan, &report),
        search: strategy.name().to_string(),
        splitter: splitter.name().to_string(),
        seed: a.seed,
        budget: budget_n,
        evaluations: result.evaluations,
        seconds,
        stop: result.stop,
        lower_bound_bytes: lower,
        optimal_dram_bytes: optimal,
        history: result.history.clone(),
        front: result.front.clone(),
    };
    std::fs::write(&a.out, serde_json::to_string_pretty(&file)?)
        .with_context(|| format!("writing {}", a.out.display()))?;
    if let Some(dot) = &a.dot {
        std::fs::write(dot, g.to_dot(Some(&result.plan)))
            .with_context(|| format!("writing {}", dot.display()))?;
    }

    let cfg = inner.config();
    outln!(
        "{} · {} · β = {:.0} KiB · b = {} · {} search · {} splitter · seed {}",
        g.name(),
        inner.name(),
        kib(cfg.buffer_bytes()),
        cfg.element_bytes(),
        strategy.name(),
        splitter.name(),
        a.seed
    )?;
    outln!(
        "{:<26}{:>14}",
        "total DRAM (MB)",
        format!("{:.3}", mb(report.dram_bytes))
    )?;
    outln!(
        "{:<26}{:>14}",
        "fusable DRAM (MB)",
        format!("{:.3}", mb(report.fusable_dram_bytes))
    )?;
    outln!(
        "{:<26}{:>14}",
        "MBU (KiB)",
        format!("{:.1}", kib(report.max_buffer_bytes))
    )?;
    outln!("{:<26}{:>14}", "groups", report.group_count)?;
    outln!("{:<26}{:>14}", "unfusable nodes", report.unfusable_count)?;
    outln!("{:<26}{:>14}", "evaluations", result.evaluations)?;
    outln!("{:<26}{:>14}", "seconds", format!("{seconds:.2}"))?;
    outln!(
        "{:<26}{:>14}",
        "lower bound (MB)",
        format!("{:.3}", mb(lower))
    )?;
    outln!(
        "{:<26}{:>14}",
        "gap to lower bound",
        gap(report.dram_bytes, lower)
    )?;
    outln!(
        "{:<26}{:>14}",
        "optimal (MB)",
        format!("{:.3}", mb(optimal))
    )?;
    outln!(
        "{:<26}{:>14}",
        "gap to optimal",
        gap(report.dram_bytes, optimal)
    )?;
    outln!("wrote {}", a.out.display())?;
    Ok(())
}
