//! `fuselage optimize MODEL --fusion F --buffer SIZE --search S --budget N --seed S --out FILE
//! [--splitter random|get] [--explainer E]`.
//!
//! The arguments become one [`Planner`]; this file only reads them, draws the progress bar and
//! writes the plan file and the summary.

use crate::common::{CostArgs, ModelArgs, describe_config, kib, mb};
use crate::files::{Files, shown, write};
use crate::registry::{Choice, Registry};
use anyhow::{Context, bail};
use clap::Args;
use fuselage::cost::{Accelerator, Cached, CostModel, Objective, PlanFile};
use fuselage::ir::human_size;
use fuselage::pipeline::{Outcome, Planner, Reference};
use fuselage::search::StopReason;
use fuselage::search::mutate::Moves;
use fuselage::split::{CutChoice, SplitterKind};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// `--objective`.
fn objective(text: &str) -> Result<Objective, String> {
    text.parse()
        .map_err(|e: fuselage::ir::UnknownKind| e.to_string())
}

/// The one pair `--pareto` takes.
#[derive(Copy, Clone, Debug)]
struct Pair;

fn pareto(text: &str) -> Result<Pair, String> {
    match text.replace(' ', "").as_str() {
        "latency,energy" | "energy,latency" => Ok(Pair),
        _ => Err(format!(
            "`{text}` is not a front fuselage draws: give latency,energy"
        )),
    }
}

/// Splitters repairing invalid groups, as `--splitter` spells them.
fn splitter_kind(text: &str) -> Result<SplitterKind, String> {
    text.parse()
        .map_err(|e: fuselage::ir::UnknownKind| e.to_string())
}

/// Arguments of `fuselage optimize`.
#[derive(Debug, Args)]
pub struct OptimizeCmd {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    cost: CostArgs,
    /// Search strategy: random (also rs), local (also ls), nsga2, optimal, or a name a
    /// downstream build registered.
    #[arg(long, value_name = "NAME")]
    search: String,
    /// What the search and the reference optimum minimise: dram, latency, energy or edp
    /// (latency and energy on --hw; EDP ranks the (latency, energy) front).
    #[arg(long, value_name = "OBJECTIVE", default_value = "dram", value_parser = objective)]
    objective: Objective,
    /// Have NSGA-II return the (latency, energy) Pareto front: every point non-dominated by
    /// every plan it evaluated. The only pair is `latency,energy`.
    #[arg(long, value_name = "PAIR", value_parser = pareto)]
    pareto: Option<Pair>,
    /// Also draw the front (--pareto or EDP) as an SVG plot (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    front_svg: Option<PathBuf>,
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
    /// How invalid groups are repaired: random (the paper's baseline) or get (Algorithm 1,
    /// needs --explainer) [default: random, or get when --explainer is given].
    #[arg(long, value_name = "KIND", value_parser = splitter_kind)]
    splitter: Option<SplitterKind>,
    /// The explainer the `get` splitter asks: gnne, pg, rg, cost, random, or a registered
    /// name; implies --splitter get, and is an error with --splitter random.
    #[arg(long, value_name = "NAME")]
    explainer: Option<String>,
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
    /// Have the `get` splitter draw the edges it tries from the explanation's scores at this
    /// temperature (0 to 100; small: near its selection, large: uniform), so that a group met
    /// again may be cut elsewhere. Without it, Algorithm 1 as published: the selection.
    #[arg(long, value_name = "T", value_parser = cut_temperature, allow_hyphen_values = true)]
    cut_temperature: Option<CutChoice>,
    /// How LS and NSGA-II edit plans: random (the paper's moves, merges, splits and absorbs,
    /// each drawn once by the bytes the edit saves), repeating (those, and copies of a
    /// grouping onto the network's repeated blocks), or fitting (up to four draws of a merge
    /// or move, the first whose new group fits the buffer). Default: repeating with
    /// --explainer (the improved guided search; `--paper` gives the paper's method
    /// exactly), random with the random splitter.
    #[arg(long, value_name = "MOVES", value_parser = moves)]
    moves: Option<Moves>,
    /// How many random splits contest each repair; the split whose parts move the least DRAM
    /// is kept (0 to 64). Default: 32 with --explainer (the improved guided search;
    /// `--paper` gives the paper's method exactly), 0 with the random splitter.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..=64))]
    rivals: Option<u8>,
    /// The paper's method: with --explainer, Algorithm 1 exactly as published (the paper's
    /// edits and no rivals, as `--moves random --rivals 0`); with the random splitter, what
    /// it does anyway.
    #[arg(long, conflicts_with_all = ["moves", "rivals"])]
    paper: bool,
    /// Where to write the plan (JSON); `-` writes it to standard output, and the summary to
    /// standard error.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Also write the plan as Graphviz DOT, groups as clusters (`-`: standard output).
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
    /// The temperature the `get` splitter drew its cuts at (`--cut-temperature`); absent for
    /// Algorithm 1 as published, so that such plan files read as they always did.
    #[serde(skip_serializing_if = "Option::is_none")]
    cut_temperature: Option<f32>,
    /// How LS and NSGA-II edited plans (`--moves`, or its default for the splitter);
    /// absent for the paper's random moves.
    #[serde(skip_serializing_if = "Option::is_none")]
    moves: Option<Moves>,
    /// Random splits that contested each repair (`--rivals`, or its default); absent for
    /// none, the paper's.
    #[serde(skip_serializing_if = "Option::is_none")]
    rivals: Option<usize>,
    seed: u64,
    budget: u64,
    evaluations: u64,
    seconds: f64,
    stop: fuselage::search::StopReason,
    lower_bound_bytes: u64,
    /// What the search minimised.
    objective: Objective,
    /// The best plan's objective (bytes, cycles, femtojoules, or cycles × femtojoules).
    objective_value: u128,
    /// What no plan's objective beats.
    objective_lower_bound: u128,
    /// The reference optimum's objective; `null` with --no-reference.
    optimal_objective_value: Option<u128>,
    /// The reference optimum's DRAM; `null` with --no-reference.
    optimal_dram_bytes: Option<u64>,
    /// Whether the reference optimum finished (exact over its family) rather than stopping at
    /// its time limit.
    optimal_proven: bool,
    /// What the optimum's objective is proven to reach at least: `optimal_objective_value`
    /// when proven; `null` with --no-reference.
    optimal_lower_bound: Option<u128>,
    history: Vec<u64>,
    front: Vec<fuselage::search::Score>,
    /// Invalid groups the explanation-guided splitter turned valid without a random
    /// fallback, over those met; `null` for the random splitter, which rectifies nothing (it
    /// draws its cuts), and 1 when none was met.
    rectify_rate: Option<f64>,
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

/// The explainer the arguments ask for: `None` for the random splitter.
fn explainer_name(
    splitter: Option<SplitterKind>,
    explainer: Option<String>,
) -> anyhow::Result<Option<String>> {
    Ok(match (splitter, explainer) {
        (None | Some(SplitterKind::Random), None) => None,
        (None | Some(SplitterKind::Get), Some(e)) => Some(e),
        (Some(SplitterKind::Random), Some(e)) => bail!(
            "--explainer {e} needs the explanation-guided splitter: drop --splitter random, or give --splitter get"
        ),
        (Some(SplitterKind::Get), None) => {
            bail!("--splitter get needs an explainer: --explainer gnne|pg|rg|cost|random")
        }
    })
}

fn gap(value: impl Into<u128>, reference: impl Into<u128>) -> String {
    let (value, reference) = (value.into(), reference.into());
    if reference == 0 {
        return "n/a".into();
    }
    format!("{:+.2}%", (value as f64 / reference as f64 - 1.0) * 100.0)
}

/// A `--moves`: `random`, `repeating` or `fitting`.
fn moves(s: &str) -> Result<Moves, String> {
    match s {
        "random" => Ok(Moves::Random),
        "repeating" => Ok(Moves::Repeating),
        "fitting" => Ok(Moves::Fitting),
        _ => Err(format!("`{s}` is not random, repeating or fitting")),
    }
}

/// A `--cut-temperature`: a number in (0, 100].
fn cut_temperature(s: &str) -> Result<CutChoice, String> {
    let t: f32 = s.parse().map_err(|e| format!("{e}"))?;
    CutChoice::sampled(t).map_err(|e| e.to_string())
}

pub(crate) fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if v.is_finite() && (0.0..=1e6).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{s} is not a number of seconds from 0 to 1000000"))
    }
}

pub fn run(a: OptimizeCmd, registry: &Registry) -> anyhow::Result<()> {
    let (explainer, search, wants_front) = check(&a, registry)?;
    let g = a.model.load()?;
    let cost = a.cost.resolve(registry)?;
    let model: std::sync::Arc<dyn CostModel> = std::sync::Arc::new(Cached::new(cost.model));
    let hw = cost.hw.clone();
    let explainers = fuselage::Explainers::default();

    let bar = progress_bar(&a, &g);
    let progress = |done: u64, _total: u64| bar.set_position(done);
    let label = format!("{} on {}", a.search, fuselage::ir::escape(g.name()));
    let on_phase = |p: fuselage::pipeline::Phase| {
        bar.set_message(format!("{label}: {}", p.describe()));
    };
    let mut planner = Planner::with_model(&g, model)
        .explainers(&explainers)
        .progress(&progress)
        .on_phase(&on_phase)
        .hardware(hw.clone());
    if let Some(kind) = cost.kind {
        planner = planner.cost_kind(kind);
    }
    let planner = configure(planner, &a, registry, search, explainer.as_deref())?;
    crate::SEARCHING.store(true, std::sync::atomic::Ordering::SeqCst);
    let out = planner.run();
    crate::SEARCHING.store(false, std::sync::atomic::Ordering::SeqCst);
    let out: Outcome = out?;
    bar.finish_and_clear();
    out.report
        .check()
        .context("the search returned a plan that does not fit (a bug)")?;

    write_outputs(&a, &g, &hw, &out)?;
    print_summary(&a, &g, &hw, &out, wants_front)?;
    outln!("wrote {}", shown(&a.out))?;
    if out.result.stop == StopReason::Interrupted {
        // The plan written is the best so far, whole; the program still says it was cut short.
        return Err(crate::Interrupted.into());
    }
    Ok(())
}

/// Refuses, before any work, an output that cannot be written (or is an input or another
/// output) and flags that do not go together; the explainer named, the search, and whether
/// a (latency, energy) front is wanted.
fn check<'r>(
    a: &OptimizeCmd,
    registry: &'r Registry,
) -> anyhow::Result<(Option<String>, SearchChoice<'r>, bool)> {
    // Refuse an output that cannot be written, is not a regular file, or is an input or
    // another output, before any work, not after the search.
    Files::new()
        .model(&a.model.model)
        .hardware(a.cost.hw.as_deref())
        .output("--out", Some(&a.out))
        .output("--dot", a.dot.as_deref())
        .output("--front-svg", a.front_svg.as_deref())
        .check()?;
    let wants_front = a.pareto.is_some() || a.objective == Objective::Edp;
    if a.front_svg.is_some() && !wants_front {
        bail!(
            "--front-svg draws the (latency, energy) front: give --pareto latency,energy or --objective edp"
        );
    }
    let explainer = explainer_name(a.splitter, a.explainer.clone())?;
    if a.cut_temperature.is_some() && explainer.is_none() {
        bail!(
            "--cut-temperature samples the cuts of the explanation-guided splitter: give --explainer"
        );
    }
    let search = registry.search(&a.search).context("--search")?;
    if let (Some(_), Choice::Kind(kind)) = (&a.pareto, &search)
        && *kind != fuselage::search::SearchKind::Nsga2
    {
        bail!(
            "--pareto needs a multi-objective search: --search nsga2 ({} returns one plan)",
            kind
        );
    }
    Ok((explainer, search, wants_front))
}

/// The search the command line named: a built-in kind or a registered one.
type SearchChoice<'r> = Choice<'r, fuselage::search::SearchKind, crate::registry::SearchFactory>;

/// The progress bar (hidden with `--quiet`).
fn progress_bar(a: &OptimizeCmd, g: &fuselage::ir::Graph) -> ProgressBar {
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(a.budget)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} {msg} [{bar:40}] {pos}/{len} evaluations ({per_sec}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(format!(
        "{} on {}",
        a.search,
        fuselage::ir::escape(g.name())
    ));
    bar
}

/// The planner's settings from the command line: budget, seeds, search, explainer, limits.
fn configure<'a>(
    planner: Planner<'a>,
    a: &OptimizeCmd,
    registry: &Registry,
    search: SearchChoice<'_>,
    explainer: Option<&str>,
) -> anyhow::Result<Planner<'a>> {
    let mut planner = planner
        .budget(a.budget)
        .seed(a.seed)
        .explainer_seed(a.explainer_seed)
        .max_branch(a.max_branch)
        .cut_choice(a.cut_temperature.unwrap_or_default())
        .stop(&crate::STOP)
        .objective(a.objective)
        .reference(if a.no_reference {
            Reference::Off
        } else {
            Reference::Within(Duration::from_secs_f64(a.reference_limit))
        });
    planner = match search {
        Choice::Kind(kind) => planner.search(kind),
        Choice::Custom(entry) => planner.search_with((entry.make)()),
    };
    if let Some(name) = &explainer {
        planner = match registry.explainer(name).context("--explainer")? {
            Choice::Kind(kind) => planner.explainer(kind),
            Choice::Custom(entry) => {
                let make = entry.make.clone();
                planner.explainer_made_by(move |request| make(request))
            }
        };
    }
    if a.paper {
        planner = planner.paper();
    }
    if let Some(moves) = a.moves {
        planner = planner.moves(moves);
    }
    if let Some(n) = a.rivals {
        planner = planner.rivals(n.into());
    }
    if let Some(limit) = a.time_limit {
        planner = planner.time_limit(Duration::from_secs_f64(limit));
    }
    if a.pareto.is_some() {
        planner = planner.pareto();
    }
    Ok(planner)
}

/// The plan file (`--out`), and the DOT (`--dot`) and front (`--front-svg`) drawings.
fn write_outputs(
    a: &OptimizeCmd,
    g: &fuselage::ir::Graph,
    hw: &Accelerator,
    out: &Outcome,
) -> anyhow::Result<()> {
    let (result, split) = (&out.result, &out.split);
    let file = OptimizeFile {
        plan: out.plan_file.clone(),
        search: out.names.search.clone(),
        splitter: out.names.splitter.clone(),
        seed: a.seed,
        budget: a.budget,
        evaluations: result.evaluations,
        seconds: out.seconds,
        stop: result.stop,
        lower_bound_bytes: out.lower_bound,
        objective: out.objective,
        objective_value: result.score.cost,
        objective_lower_bound: out.objective_bound,
        optimal_objective_value: out.reference.map(|r| r.cost),
        optimal_dram_bytes: out.reference.map(|r| r.dram_bytes),
        optimal_proven: out.reference.is_some_and(|r| r.proven),
        optimal_lower_bound: out.reference.map(|r| r.lower_bound),
        history: result.history.clone(),
        front: result.front.clone(),
        explainer: out.names.explainer.clone(),
        cut_temperature: match a.cut_temperature {
            Some(CutChoice::Sampled { temperature }) => Some(temperature),
            _ => None,
        },
        moves: (out.names.moves != Moves::Random).then_some(out.names.moves),
        rivals: (out.names.rivals > 0).then_some(out.names.rivals),
        rectify_rate: out.names.explainer.is_some().then(|| split.rectify_rate()),
        invalid_groups_met: split.invalid_groups,
        explanations: split.explanations,
        split_seconds: split.seconds,
        explainer_seconds: split.explainer_seconds,
        cost_seconds: out.cost_seconds,
    };
    write("--out", &a.out, serde_json::to_string_pretty(&file)?)?;
    if let Some(dot) = &a.dot {
        write("--dot", dot, g.to_dot(Some(&result.plan)))?;
    }
    if let Some(svg) = &a.front_svg {
        if result.front.is_empty() {
            bail!(
                "{} found no front to draw (only nsga2 returns one)",
                out.names.search
            );
        }
        let points: Vec<(f64, f64)> = result
            .front
            .iter()
            .map(|s| {
                (
                    hw.seconds(s.latency_cycles) * 1e3,
                    s.energy_fj as f64 * 1e-12,
                )
            })
            .collect();
        let title = format!("{} on {}: latency-energy front", g.name(), hw.name);
        let plot = crate::plot::Plot::new(&title, "latency (ms)", "energy (mJ)").points(&points);
        write("--front-svg", svg, plot.to_svg()?)?;
    }

    Ok(())
}

/// The summary: the setting, the plan's figures, the split statistics, and the gaps to the
/// lower bound and to the reference optimum.
fn print_summary(
    a: &OptimizeCmd,
    g: &fuselage::ir::Graph,
    hw: &Accelerator,
    out: &Outcome,
    wants_front: bool,
) -> anyhow::Result<()> {
    let (result, split, report) = (&out.result, &out.split, &out.report);
    let cfg = out.config;
    // The exact optimiser never repairs a group: no splitter takes part in its run.
    let exact = out.names.search == "optimal";
    // How the search edited and repaired, where it is not the paper's: the improved guided
    // search names its repeat edits and its rivals.
    let mut notes: Vec<String> = out
        .names
        .explainer
        .iter()
        .map(|e| format!("{e} explainer"))
        .collect();
    if out.names.rivals > 0 {
        notes.push(format!("{} random rivals", out.names.rivals));
    }
    let splitter_label = if exact {
        "no splitter (exact)".to_string()
    } else if notes.is_empty() {
        format!("{} splitter", out.names.splitter)
    } else {
        format!("{} splitter ({})", out.names.splitter, notes.join(", "))
    };
    let edits = match (out.names.moves, exact) {
        (Moves::Random, _) | (_, true) => String::new(),
        (Moves::Repeating, false) => " (repeating edits)".to_string(),
        (Moves::Fitting, false) => " (fitting edits)".to_string(),
    };
    outln!(
        "{} · {} · {} · {} · {} search{} · {} · seed {}",
        fuselage::ir::escape(g.name()),
        out.names.cost_model,
        fuselage::ir::escape(&hw.name),
        describe_config(&cfg),
        out.names.search,
        edits,
        splitter_label,
        a.seed
    )?;
    outln!("{:<26}{:>14}", "objective", out.objective.name())?;
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
        "latency (ms)",
        format!("{:.4}", out.metrics.latency_seconds() * 1e3)
    )?;
    outln!(
        "{:<26}{:>14}",
        "latency (cycles)",
        out.metrics.latency_cycles
    )?;
    outln!(
        "{:<26}{:>14}",
        "energy (mJ)",
        format!("{:.4}", out.metrics.energy_joules() * 1e3)
    )?;
    if !result.front.is_empty() && wants_front {
        outln!("{:<26}{:>14}", "front points", result.front.len())?;
    }
    // The rectify rate is the explanation-guided splitter's: the random splitter repairs
    // every group it meets by drawing cuts, which is no rectification.
    let rectify = match (&out.names.explainer, split.invalid_groups) {
        (_, 0) => "n/a (none met)".to_string(),
        (None, _) => "n/a (random)".to_string(),
        (Some(_), _) => format!("{:.1}%", 100.0 * split.rectify_rate()),
    };
    outln!("{:<26}{:>14}", "rectify rate", rectify)?;
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
        format!("{:.2}", out.cost_seconds)
    )?;
    outln!("{:<26}{:>14}", "groups", report.group_count)?;
    outln!("{:<26}{:>14}", "unfusable nodes", report.unfusable_count)?;
    outln!("{:<26}{:>14}", "evaluations", result.evaluations)?;
    outln!("{:<26}{:>14}", "seconds", format!("{:.2}", out.seconds))?;
    outln!(
        "{:<26}{:>14}",
        "lower bound (MB)",
        format!("{:.3}", mb(out.lower_bound))
    )?;
    outln!(
        "{:<26}{:>14}",
        "gap to lower bound",
        gap(report.dram_bytes, out.lower_bound)
    )?;
    print_reference(out)?;
    let stop = serde_json::to_value(result.stop)?;
    outln!("{:<26}{:>14}", "stop", stop.as_str().unwrap_or("?"))?;
    // Past `MAX_FLOOR_NODES` the exact optimiser skips its rest floor (its tables would take
    // n²/4 bytes), so an unproven bound is the compulsory traffic alone: say so.
    let floor_max = fuselage::search::MAX_FLOOR_NODES;
    if g.len() > floor_max && out.lower_bound < report.dram_bytes {
        outln!(
            "note: the lower bound is the compulsory traffic alone: the graph's {} nodes are \
             over the {} the exact optimiser's rest floor is built for, so it was skipped",
            g.len(),
            floor_max
        )?;
    }
    if let Some(smallest) = out.nothing_fuses {
        outln!(
            "note: nothing fuses at {}: the smallest op needs {}, so the plan is layer by layer \
             (each op its own group) and no search ran",
            human_size(out.config.buffer_bytes()),
            human_size(smallest)
        )?;
    }
    Ok(())
}

/// The objective's bound and the reference optimum, proven or the best within its limit,
/// with the gaps to them.
fn print_reference(out: &Outcome) -> anyhow::Result<()> {
    let (result, report) = (&out.result, &out.report);
    let dram = out.objective == Objective::Dram;
    if !dram {
        outln!(
            "{:<26}{:>14}",
            format!("{} lower bound", out.objective),
            out.objective_bound
        )?;
    }
    match out.reference {
        Some(r) if !dram => {
            outln!(
                "{:<26}{:>14}",
                if r.proven {
                    format!("optimal {}", out.objective)
                } else {
                    format!("best of Optimal ({})", out.objective)
                },
                r.cost
            )?;
            outln!(
                "{:<26}{:>14}",
                "optimum proven",
                match (r.proven, out.objective) {
                    (true, _) => "yes",
                    (false, Objective::Edp) => "no (EDP)",
                    (false, _) => "no (time limit)",
                }
            )?;
            outln!(
                "{:<26}{:>14}",
                if r.proven {
                    "gap to optimal"
                } else {
                    "gap to best of Optimal"
                },
                gap(result.score.cost, r.cost)
            )?;
            if !r.proven {
                outln!(
                    "{:<26}{:>14}",
                    format!("optimum at least ({})", out.objective),
                    r.lower_bound
                )?;
                outln!(
                    "{:<26}{:>14}",
                    "proven gap at most",
                    gap(result.score.cost, r.lower_bound)
                )?;
            }
        }
        Some(r) => {
            let (optimal, proven) = (r.dram_bytes, r.proven);
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
            // Unproven, the reference is the best plan Optimal reached within its limit (on a
            // graph too large for one order in time, the order's prefix and singletons): a
            // plan to compare with, not the optimum.
            outln!(
                "{:<26}{:>14}",
                if proven {
                    "gap to optimal"
                } else {
                    "gap to best of Optimal"
                },
                gap(report.dram_bytes, optimal)
            )?;
            if !proven {
                let bound = u64::try_from(r.lower_bound).unwrap_or(u64::MAX);
                outln!(
                    "{:<26}{:>14}",
                    "optimum at least (MB)",
                    format!("{:.3}", mb(bound))
                )?;
                outln!(
                    "{:<26}{:>14}",
                    "proven gap at most",
                    gap(report.dram_bytes, bound)
                )?;
            }
        }
        None => outln!("{:<26}{:>14}", "optimal (MB)", "not computed")?,
    }
    Ok(())
}
