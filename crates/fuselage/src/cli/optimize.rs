//! `fuselage optimize MODEL --fusion F --buffer SIZE --search S --budget N --seed S --out FILE
//! [--splitter random|get] [--explainer E]`.
//!
//! One [`Cached`] cost model serves the search, the splitter and a cost explainer, so each group
//! is costed once for all three.

use super::common::{CostArgs, ExplainerKind, ModelArgs, kib, learned_explainer, mb};
use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use fuselage::cost::{Cached, CostModel, PlanFile, evaluate_plan};
use fuselage::explain::{CostExplainer, Explainer, RandomExplainer};
use fuselage::ir::Graph;
use fuselage::search::{
    Budget, Optimal, Problem, SearchResult, SearchStrategy, StopReason, strategy_by_name,
};
use fuselage::split::{GetSplitter, RandomSplitter, SplitStats, Splitter};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Search strategies.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Search {
    /// Random search: a fresh random plan per evaluation (also `rs`).
    #[value(alias = "rs")]
    Random,
    /// Local search: population of 10, one-edit mutations (also `ls`).
    #[value(alias = "ls")]
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
    /// Algorithm 1 of Mills et al.: cut where the explainer says the group breaks β, choosing
    /// by DRAM, falling back to random cuts where that fails (needs --explainer).
    Get,
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
    /// Plan evaluations the search may make, 1 to 10^12 (`optimal` is exact and needs none).
    #[arg(long, value_name = "N", default_value = "2000", value_parser = clap::value_parser!(u64).range(1..=1_000_000_000_000))]
    budget: u64,
    /// Seed of every random choice.
    #[arg(
        long,
        value_name = "S",
        allow_hyphen_values = true,
        default_value = "0"
    )]
    seed: u64,
    /// Stop the search after this many seconds with its best plan so far (stop reason
    /// `time_limit`); without it a run is a function of its seed alone.
    #[arg(long, value_name = "SECONDS", value_parser = seconds, allow_hyphen_values = true)]
    time_limit: Option<f64>,
    /// Seconds the reference optimum (the exact optimiser, for the "gap to optimal" line) may
    /// take; past them it reports the best plan it found, marked not proven.
    #[arg(
        long,
        value_name = "SECONDS",
        value_parser = seconds,
        default_value = "10",
        allow_hyphen_values = true
    )]
    reference_limit: f64,
    /// Skip the reference optimum (the summary and the plan file then have none).
    #[arg(long)]
    no_reference: bool,
    /// How invalid groups are repaired [default: random, or get when --explainer is given].
    #[arg(long, value_enum)]
    splitter: Option<SplitterKind>,
    /// The explainer the `get` splitter asks; implies --splitter get, and is an error with
    /// --splitter random.
    #[arg(long, value_enum)]
    explainer: Option<ExplainerKind>,
    /// Seed of the explainer (per group, mixed with the group's nodes), kept apart from --seed
    /// so that runs with different search seeds get the same explanations.
    #[arg(
        long,
        value_name = "S",
        allow_hyphen_values = true,
        default_value = "0"
    )]
    explainer_seed: u64,
    /// How many both-parts-invalid candidates (category 3) the `get` splitter explores.
    #[arg(long, value_name = "N", default_value = "2")]
    max_branch: usize,
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
    /// The explainer of the `get` splitter; `null` for the random splitter.
    explainer: Option<String>,
    seed: u64,
    budget: u64,
    evaluations: u64,
    seconds: f64,
    stop: fuselage::search::StopReason,
    lower_bound_bytes: u64,
    /// The reference optimum's DRAM; `null` with --no-reference.
    optimal_dram_bytes: Option<u64>,
    /// Whether the reference optimum finished (exact over its family) rather than stopping at
    /// its time limit.
    optimal_proven: bool,
    history: Vec<u64>,
    front: Vec<fuselage::search::Score>,
    /// Invalid groups the splitter turned valid without a random fallback, over those met
    /// (0 for the random splitter, 1 when none was met).
    rectify_rate: f64,
    /// Invalid groups the splitter was asked to split during the search.
    invalid_groups_met: u64,
    /// Explainer calls (memo hits make none).
    explanations: u64,
    /// Seconds in the splitter, all told.
    split_seconds: f64,
    /// Seconds in the explainer (its own cost-model calls included).
    explainer_seconds: f64,
    /// Seconds in the cost model outside the explainer: the search's scoring and checks plus
    /// the splitter's own calls.
    cost_seconds: f64,
}

/// Which splitter the arguments ask for.
fn splitter_kind(
    splitter: Option<SplitterKind>,
    explainer: Option<ExplainerKind>,
) -> anyhow::Result<(SplitterKind, Option<ExplainerKind>)> {
    Ok(match (splitter, explainer) {
        (None | Some(SplitterKind::Random), None) => (SplitterKind::Random, None),
        (None | Some(SplitterKind::Get), Some(e)) => (SplitterKind::Get, Some(e)),
        (Some(SplitterKind::Random), Some(e)) => bail!(
            "--explainer {} needs the explanation-guided splitter: drop --splitter random, or give --splitter get",
            e.name()
        ),
        (Some(SplitterKind::Get), None) => {
            bail!("--splitter get needs an explainer: --explainer gnne|pg|rg|cost|random")
        }
    })
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

/// Parses a time limit in seconds: a finite number from 0 to 10^6.
fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && (0.0..=1e6).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s} is not a number of seconds from 0 to 1000000"))
    }
}

/// Fails when `path`'s folder does not exist or `path` is a folder.
fn check_writable(path: &std::path::Path) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        bail!(
            "cannot write {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    if path.is_dir() {
        bail!("cannot write {}: it is a folder", path.display());
    }
    Ok(())
}

pub fn run(a: OptimizeCmd) -> anyhow::Result<()> {
    // Refuse an output path that cannot be written before any work, not after the search.
    check_writable(&a.out)?;
    if let Some(dot) = &a.dot {
        check_writable(dot)?;
    }
    let g = a.model.load()?;
    let inner = a.cost.model()?;
    let model = Cached::new(inner.as_ref());
    let (splitter_kind, explainer_kind) = splitter_kind(a.splitter, a.explainer)?;
    let splitter: Box<dyn Splitter + '_> = match (splitter_kind, explainer_kind) {
        (SplitterKind::Get, Some(kind)) => {
            let beta = inner.config().buffer_bytes();
            let explainer: Box<dyn Explainer + '_> = match kind {
                ExplainerKind::Cost => Box::new(CostExplainer::new(&model)),
                ExplainerKind::Random => Box::new(RandomExplainer::default()),
                ExplainerKind::Gnne | ExplainerKind::Pg | ExplainerKind::Rg => {
                    learned_explainer(kind, a.cost.fusion, beta)?
                }
            };
            Box::new(
                GetSplitter::new(explainer, &model)
                    .with_seed(a.explainer_seed)
                    .with_max_branch(a.max_branch),
            )
        }
        _ => Box::new(RandomSplitter::new(&model)),
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
    let mut budget = Budget::new(budget_n)?.with_progress(&progress);
    if let Some(limit) = a.time_limit {
        budget = budget.with_time_limit(Duration::from_secs_f64(limit));
    }
    let start = Instant::now();
    let result: SearchResult = strategy.run(&p, &budget, a.seed)?;
    let seconds = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    // Read before the exact optimiser's reference run below adds cost-model time.
    let split: SplitStats = p.split_stats().unwrap_or_default();
    let cost_seconds = p.cost_seconds() + split.cost_seconds;

    // The reference optimum: the run itself for `optimal`, else the exact optimiser within
    // --reference-limit; proven when it finished its programmes.
    let reference: Option<(u64, bool)> = if a.search == Search::Optimal {
        Some((
            result.score.dram_bytes,
            result.stop == StopReason::Exhausted,
        ))
    } else if a.no_reference {
        None
    } else {
        let limit = Duration::from_secs_f64(a.reference_limit);
        let r = Optimal::default().run(&p, &Budget::new(1)?.with_time_limit(limit), a.seed)?;
        Some((r.score.dram_bytes, r.stop == StopReason::Exhausted))
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
        optimal_dram_bytes: reference.map(|r| r.0),
        optimal_proven: reference.is_some_and(|r| r.1),
        history: result.history.clone(),
        front: result.front.clone(),
        explainer: explainer_kind.map(|e| e.name().to_string()),
        rectify_rate: split.rectify_rate(),
        invalid_groups_met: split.invalid_groups,
        explanations: split.explanations,
        split_seconds: split.seconds,
        explainer_seconds: split.explainer_seconds,
        cost_seconds,
    };
    std::fs::write(&a.out, serde_json::to_string_pretty(&file)?)
        .with_context(|| format!("writing {}", a.out.display()))?;
    if let Some(dot) = &a.dot {
        std::fs::write(dot, g.to_dot(Some(&result.plan)))
            .with_context(|| format!("writing {}", dot.display()))?;
    }

    let cfg = inner.config();
    let splitter_label = match explainer_kind {
        Some(e) => format!("{} splitter ({} explainer)", splitter.name(), e.name()),
        None => format!("{} splitter", splitter.name()),
    };
    outln!(
        "{} · {} · β = {:.0} KiB · b = {} · {} search · {} · seed {}",
        g.name(),
        inner.name(),
        kib(cfg.buffer_bytes()),
        cfg.element_bytes(),
        strategy.name(),
        splitter_label,
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
    outln!(
        "{:<26}{:>14}",
        "rectify rate",
        format!("{:.1}%", 100.0 * split.rectify_rate())
    )?;
    outln!("{:<26}{:>14}", "invalid groups met", split.invalid_groups)?;
    outln!("{:<26}{:>14}", "explanations", split.explanations)?;
    outln!(
        "{:<26}{:>14}",
        "explainer seconds",
        format!("{:.2}", split.explainer_seconds)
    )?;
    outln!(
        "{:<26}{:>14}",
        "cost-model seconds",
        format!("{cost_seconds:.2}")
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
    match reference {
        Some((optimal, proven)) => {
            let label = if proven {
                "optimal (MB)"
            } else {
                "best of Optimal (MB)"
            };
            outln!("{:<26}{:>14}", label, format!("{:.3}", mb(optimal)))?;
            outln!(
                "{:<26}{:>14}",
                "optimum proven",
                if proven { "yes" } else { "no (time limit)" }
            )?;
            outln!(
                "{:<26}{:>14}",
                "gap to optimal",
                gap(report.dram_bytes, optimal)
            )?;
        }
        None => outln!("{:<26}{:>14}", "optimal (MB)", "not computed")?,
    }
    let stop = serde_json::to_value(result.stop)?;
    outln!("{:<26}{:>14}", "stop", stop.as_str().unwrap_or("?"))?;
    outln!("wrote {}", a.out.display())?;
    Ok(())
}
