//! # fuselage-pipeline
//!
//! The fuselage pipeline, assembled once: a graph, a cost model, a splitter (random, or
//! explanation-guided over an explainer), a search and its budget go in; one [`Outcome`]
//! comes out, with the search result, the splitter's statistics, the plan report and the
//! references (lower bound, exact optimum).
//!
//! ## Design
//!
//! The chain cost model → explainer → [`ExplainedSplitter`] → [`Problem`] → strategy →
//! [`evaluate_plan`] has one owner, [`Planner`], a builder. The command-line program, the
//! reproduction of the paper's tables and the examples all run through it, so a setting
//! (β, a seed, a time limit) has one path to the component that reads it.
//!
//! A run with an explainer is the improved guided search unless told otherwise: the splitter
//! is [`Contested`] by [`IMPROVED_RIVALS`] random splits, and the local search and NSGA-II
//! edit plans by [`IMPROVED_MOVES`] ([`Planner::rivals`], [`Planner::moves`];
//! `docs/explainers.md`); [`Planner::paper`] runs Algorithm 1 as published. A run with the
//! random splitter is the paper's baseline.
//!
//! Every component comes in two ways:
//!
//! - **by kind**, a typed enum of the built-ins ([`CostKind`], [`SearchKind`],
//!   [`ExplainerKind`]), which the planner builds with default settings;
//! - **as a trait object** ([`CostModel`], [`SearchStrategy`], [`Explainer`]), which is how a
//!   downstream component, or a built-in with other settings, enters the pipeline.
//!
//! The learned explainers need the GNN classifier of a built-in cost model, and so burn; this
//! crate does not depend on burn. Explainers by kind are therefore made by an
//! [`ExplainerFactory`]: [`Baselines`] here makes the burn-free ones (`cost`, `random`), and
//! the facade `fuselage` supplies one that makes all five.
//!
//! [`sweep`] is the buffer sweep: the exact optimal DRAM against a unified buffer's size, with
//! the sizes at which the optimal plan changes.
//!
//! One cost model serves the search, the splitter and the explainer: a kind is wrapped in
//! [`Cached`], and a model passed in is used as it is (pass a [`Cached`] one, shared between
//! planners if you like: a cache never changes an answer). The splitter hands that model to
//! the explainer with every group, so its config is the one carrier of β and the element
//! sizes from the search to the explanation; the hardware's is checked against it once, in
//! [`Planner::run`] ([`PipelineError::HardwareMismatch`]).
//!
//! ```
//! use fuselage_cost::{CostConfig, CostKind};
//! use fuselage_pipeline::{Planner, Reference};
//! use fuselage_search::SearchKind;
//! let g = fuselage_zoo::build("resnet18")?;
//! let out = Planner::new(&g, CostKind::Lbdf, CostConfig::kib(128)?)
//!     .search(SearchKind::Local)
//!     .budget(200)
//!     .seed(1)
//!     .reference(Reference::Exact)
//!     .run()?;
//! assert!(out.report.is_valid());
//! let optimum = out.reference.unwrap();
//! assert!(optimum.proven && optimum.dram_bytes <= out.report.dram_bytes);
//! assert!(out.lower_bound <= optimum.dram_bytes);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod error;
mod sweep;

pub use error::{PipelineError, Result};
pub use sweep::{Breakpoint, Sweep, SweepPoint, sweep, sweep_partial, sweep_within};

use fuselage_cost::{
    Accelerator, Cached, CostConfig, CostKind, CostModel, Objective, PlanFile, PlanMetrics,
    PlanReport, evaluate_plan,
};
use fuselage_explain::{CostExplainer, Explainer, ExplainerKind, RandomExplainer};
use fuselage_ir::{Graph, NodeSet};
use fuselage_search::mutate::Moves;
use fuselage_search::{
    Budget, Optimal, Pair, Problem, SearchKind, SearchResult, SearchStrategy, StopReason,
};
use fuselage_split::{
    Contested, CutChoice, ExplainedSplitter, RandomSplitter, SplitMemo, SplitStats, Splitter,
};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What a run is doing, for progress displays ([`Planner::on_phase`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The search proper (its evaluations go to [`Planner::progress`]).
    Search,
    /// The exact optimiser, computing the reference optimum for the "gap to optimal".
    Reference,
    /// Costing the best plan group by group for the report and the plan file.
    Report,
}

impl Phase {
    /// What a progress bar says.
    pub fn describe(self) -> &'static str {
        match self {
            Phase::Search => "searching",
            Phase::Reference => "computing the reference optimum",
            Phase::Report => "costing the plan",
        }
    }
}

/// Whether and how a run also computes the exact optimum, for its "gap to optimal".
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Reference {
    /// No reference optimum.
    Off,
    /// [`Optimal`] within this time; past it, its best plan so far, marked not proven.
    Within(Duration),
    /// [`Optimal`] to the end, however long it takes.
    Exact,
}

/// The reference optimum of a run.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Optimum {
    /// Its total DRAM, bytes.
    pub dram_bytes: u64,
    /// Its value of the run's objective ([`fuselage_search::Score::cost`]).
    pub cost: u128,
    /// Whether [`Optimal`] finished (exact over its family) rather than stop at its limit.
    /// Never for EDP, for which `Optimal` is not exact.
    pub proven: bool,
    /// What no plan of [`Optimal`]'s family scores below ([`SearchResult::lower_bound`]):
    /// `cost` itself when proven; else a lower bound on the family's optimum: what the whole
    /// graph must cost (the compulsory traffic, the weights it must stream again and the
    /// tensors it must cut: [`fuselage_search::RestFloor`]), or, when the limit stopped the
    /// down-set programme, what its waiting states must cost (see [`Optimal`]'s module docs).
    pub lower_bound: u128,
}

impl Optimum {
    fn of(result: &SearchResult, objective: Objective) -> Optimum {
        Optimum {
            dram_bytes: result.score.dram_bytes,
            cost: result.score.cost,
            proven: result.stop == StopReason::Exhausted && objective.is_additive(),
            lower_bound: result.lower_bound.unwrap_or(0).min(result.score.cost),
        }
    }
}

/// What a factory may read when making an explainer.
pub struct ExplainerRequest<'r> {
    /// The built-in cost model the pipeline runs, when it runs one (the learned explainers
    /// read that model's classifier).
    pub cost_kind: Option<CostKind>,
    /// The pipeline's cost model (cached): the one the splitter hands the explainer with every
    /// group. A factory may read its configuration (the facade refuses the learned explainers
    /// on split buffers); an explainer needs no copy of it.
    pub model: &'r Arc<dyn CostModel>,
}

/// Makes explainers by kind. See [`Baselines`]; the facade `fuselage` has the one that also
/// makes the learned explainers.
pub trait ExplainerFactory: Sync {
    /// The explainer of `kind` for `request`.
    ///
    /// # Errors
    /// [`PipelineError::ExplainerUnavailable`] for a kind this factory cannot make;
    /// checkpoint and classifier errors.
    fn explainer(
        &self,
        kind: ExplainerKind,
        request: &ExplainerRequest<'_>,
    ) -> Result<Box<dyn Explainer>>;
}

/// The burn-free explainers: `cost` over the pipeline's cost model, and `random`.
#[derive(Copy, Clone, Debug, Default)]
pub struct Baselines;

impl ExplainerFactory for Baselines {
    fn explainer(
        &self,
        kind: ExplainerKind,
        _request: &ExplainerRequest<'_>,
    ) -> Result<Box<dyn Explainer>> {
        match kind {
            ExplainerKind::Cost => Ok(Box::new(CostExplainer::new())),
            ExplainerKind::Random => Ok(Box::new(RandomExplainer::default())),
            ExplainerKind::Gnne | ExplainerKind::Pg | ExplainerKind::Rg => {
                Err(PipelineError::ExplainerUnavailable {
                    kind,
                    why: "learned explainers need the facade's factory (`fuselage::Explainers`)"
                        .into(),
                })
            }
        }
    }
}

enum SearchSource<'a> {
    Kind(SearchKind),
    Given(Box<dyn SearchStrategy + 'a>),
}

/// Makes an explainer once the pipeline's cost model exists.
type MakeExplainer<'a> = Box<dyn FnOnce(&ExplainerRequest<'_>) -> Result<Box<dyn Explainer>> + 'a>;

enum ExplainerSource<'a> {
    Kind(ExplainerKind),
    Given(Box<dyn Explainer + 'a>),
    Made(MakeExplainer<'a>),
}

/// The names of the components of a run, as they call themselves (`name()`), for summaries
/// and plan files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Names {
    /// The cost model's.
    pub cost_model: String,
    /// The search's.
    pub search: String,
    /// The splitter's.
    pub splitter: String,
    /// The explainer's, for an explanation-guided splitter.
    pub explainer: Option<String>,
    /// How the local search and NSGA-II drew their edits ([`Planner::moves`], or its
    /// default for the splitter).
    pub moves: Moves,
    /// Random splits that contested each repair ([`Planner::rivals`], or its default).
    pub rivals: usize,
}

/// Everything one run gives.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The search's result: best plan, score, history, stop reason, front.
    pub result: SearchResult,
    /// The best plan re-evaluated group by group.
    pub report: PlanReport,
    /// The best plan as a plan file (`fuselage cost --plan` reads it).
    pub plan_file: PlanFile,
    /// The splitter's counters for this run (zero for a splitter that keeps none).
    pub split: SplitStats,
    /// The compulsory traffic no plan beats, bytes.
    pub lower_bound: u64,
    /// What no plan's objective beats ([`Problem::remaining_bound`] of the whole graph; for
    /// EDP the product of the latency and energy bounds). Equal to `lower_bound` for DRAM.
    pub objective_bound: u128,
    /// What the search minimised.
    pub objective: Objective,
    /// The accelerator latency and energy are counted on (β-only unless one was given).
    pub hardware: Accelerator,
    /// The best plan's latency and energy on it.
    pub metrics: PlanMetrics,
    /// The exact optimum, unless [`Reference::Off`]; for [`SearchKind::Optimal`] the run itself.
    pub reference: Option<Optimum>,
    /// Wall-clock seconds of the search (the reference optimum not included).
    pub seconds: f64,
    /// Seconds in the cost model outside the explainer: the search's scoring plus the
    /// splitter's own calls.
    pub cost_seconds: f64,
    /// β and b.
    pub config: CostConfig,
    /// The components' names.
    pub names: Names,
    /// `Some(the least buffer any single op needs)` when β is below every op: nothing can
    /// fuse, the plan is layer by layer (the only plan there is, each op a group at
    /// `I + O + W`), and no search ran.
    pub nothing_fuses: Option<u64>,
}

/// Random splits that contest each repair of a guided run by default ([`Planner::rivals`]):
/// part of the improved guided search (`docs/explainers.md`).
pub const IMPROVED_RIVALS: usize = 32;

/// How the local search and NSGA-II edit plans in a guided run by default
/// ([`Planner::moves`]): part of the improved guided search (`docs/explainers.md`).
pub const IMPROVED_MOVES: Moves = Moves::Repeating;

/// `splitter`, contested by `rivals` random splits judged by `model` when there are any.
fn contested<'a, S: Splitter + 'a>(
    splitter: S,
    model: &Arc<dyn CostModel>,
    rivals: usize,
) -> Box<dyn Splitter + 'a> {
    if rivals == 0 {
        Box::new(splitter)
    } else {
        Box::new(Contested::new(splitter, model.clone(), rivals))
    }
}

/// Assembles and runs the pipeline: see the [crate docs](crate).
pub struct Planner<'a> {
    graph: &'a Graph,
    model: Arc<dyn CostModel>,
    cost_kind: Option<CostKind>,
    search: SearchSource<'a>,
    explainer: Option<ExplainerSource<'a>>,
    explainer_seed: u64,
    max_branch: Option<usize>,
    cut_choice: CutChoice,
    moves: Option<Moves>,
    rivals: Option<usize>,
    memo: Option<Arc<SplitMemo>>,
    budget: u64,
    seed: u64,
    time_limit: Option<Duration>,
    stop: Option<&'a AtomicBool>,
    progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
    phase: Option<&'a dyn Fn(Phase)>,
    reference: Reference,
    factory: &'a dyn ExplainerFactory,
    hardware: Option<Accelerator>,
    objective: Objective,
    pair: Pair,
}

impl<'a> Planner<'a> {
    /// A planner over `graph` with the built-in cost model `kind` at `config` (cached), the
    /// random splitter, local search with a budget of 2,000, seed 0, and a reference optimum
    /// within 10 s.
    pub fn new(graph: &'a Graph, kind: CostKind, config: CostConfig) -> Self {
        let mut p = Planner::with_model(graph, Arc::new(Cached::new(kind.model(config))));
        p.cost_kind = Some(kind);
        p
    }

    /// A planner over `graph` with a cost model of your own (or a shared, cached built-in),
    /// used as it is.
    pub fn with_model(graph: &'a Graph, model: Arc<dyn CostModel>) -> Self {
        Planner {
            graph,
            model,
            cost_kind: None,
            search: SearchSource::Kind(SearchKind::Local),
            explainer: None,
            explainer_seed: 0,
            max_branch: None,
            cut_choice: CutChoice::Selected,
            moves: None,
            rivals: None,
            memo: None,
            budget: 2000,
            seed: 0,
            time_limit: None,
            stop: None,
            progress: None,
            phase: None,
            reference: Reference::Within(Duration::from_secs(10)),
            factory: &Baselines,
            hardware: None,
            objective: Objective::Dram,
            pair: Pair::ObjectiveBuffer,
        }
    }

    /// A planner over `graph` with the built-in cost model `kind` on the accelerator `hw`
    /// (its buffer and element sizes), counting latency and energy on it.
    ///
    /// ```
    /// use fuselage_cost::{Accelerator, CostKind, Objective};
    /// use fuselage_pipeline::{Planner, Reference};
    /// use fuselage_search::SearchKind;
    /// let g = fuselage_zoo::build("resnet18")?;
    /// let hw = Accelerator::preset("nvdla-small").unwrap();
    /// let out = Planner::on(&g, CostKind::Lbdf, hw)
    ///     .objective(Objective::Latency)
    ///     .search(SearchKind::Optimal)
    ///     .run()?;
    /// assert!(out.reference.unwrap().proven);
    /// assert_eq!(out.result.score.cost, u128::from(out.metrics.latency_cycles));
    /// assert!(out.objective_bound <= out.result.score.cost);
    /// assert_eq!(out.plan_file.latency_cycles, Some(out.metrics.latency_cycles));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on(graph: &'a Graph, kind: CostKind, hw: Accelerator) -> Self {
        Planner::new(graph, kind, hw.config).hardware(hw)
    }

    /// Counts latency and energy on `hw`. Its configuration (buffer and element sizes) must be
    /// the cost model's: [`run`](Self::run) refuses a mismatch with
    /// [`PipelineError::HardwareMismatch`] rather than plan with two β. [`Planner::on`]
    /// builds the model at the accelerator's configuration.
    pub fn hardware(mut self, hw: Accelerator) -> Self {
        self.hardware = Some(hw);
        self
    }

    /// What the search (and the reference optimum) minimises (default DRAM).
    pub fn objective(mut self, objective: Objective) -> Self {
        self.objective = objective;
        self
    }

    /// Has NSGA-II rank latency and energy, for a (latency, energy) front in
    /// [`SearchResult::front`] (EDP does so anyway).
    pub fn pareto(mut self) -> Self {
        self.pair = Pair::LatencyEnergy;
        self
    }

    /// Says which built-in cost model a [`with_model`](Self::with_model) model is (a shared
    /// cached LBDF, say), so that the learned explainers can pick its classifier.
    pub fn cost_kind(mut self, kind: CostKind) -> Self {
        self.cost_kind = Some(kind);
        self
    }

    /// A built-in search with its default settings.
    pub fn search(mut self, kind: SearchKind) -> Self {
        self.search = SearchSource::Kind(kind);
        self
    }

    /// A search of your own, or a built-in with other settings.
    pub fn search_with(mut self, strategy: Box<dyn SearchStrategy + 'a>) -> Self {
        self.search = SearchSource::Given(strategy);
        self
    }

    /// Repairs invalid groups with [`ExplainedSplitter`] over the built-in explainer `kind`, made by
    /// the [`explainers`](Self::explainers) factory. Without an explainer the splitter is
    /// random.
    pub fn explainer(mut self, kind: ExplainerKind) -> Self {
        self.explainer = Some(ExplainerSource::Kind(kind));
        self
    }

    /// Repairs invalid groups with [`ExplainedSplitter`] over an explainer of your own.
    pub fn explainer_with(mut self, explainer: Box<dyn Explainer + 'a>) -> Self {
        self.explainer = Some(ExplainerSource::Given(explainer));
        self
    }

    /// Repairs invalid groups with [`ExplainedSplitter`] over the explainer `make` returns, called
    /// once the pipeline's cost model exists, with its [`ExplainerRequest`] (for a downstream
    /// explainer made from the model's kind or configuration; every call of the explainer is
    /// handed the model itself).
    pub fn explainer_made_by(
        mut self,
        make: impl FnOnce(&ExplainerRequest<'_>) -> Result<Box<dyn Explainer>> + 'a,
    ) -> Self {
        self.explainer = Some(ExplainerSource::Made(Box::new(make)));
        self
    }

    /// The factory that makes explainers by kind (default [`Baselines`]).
    pub fn explainers(mut self, factory: &'a dyn ExplainerFactory) -> Self {
        self.factory = factory;
        self
    }

    /// The explainer's seed (mixed with each group's nodes), apart from the search's.
    pub fn explainer_seed(mut self, seed: u64) -> Self {
        self.explainer_seed = seed;
        self
    }

    /// How many both-parts-invalid candidates [`ExplainedSplitter`] explores (its default is 2).
    pub fn max_branch(mut self, n: usize) -> Self {
        self.max_branch = Some(n);
        self
    }

    /// Which edges of each explanation [`ExplainedSplitter`] tries: its selection, as
    /// published (the default), or a draw from its scores ([`CutChoice::Sampled`]), so that a
    /// group met again may be cut elsewhere.
    pub fn cut_choice(mut self, choice: CutChoice) -> Self {
        self.cut_choice = choice;
        self
    }

    /// How the local search and NSGA-II pick their merges and moves: the paper's random
    /// draws ([`Moves::Random`]), those and copies of a grouping onto the network's repeated
    /// blocks ([`Moves::Repeating`]), or edits whose new group fits first ([`Moves::Fitting`]).
    ///
    /// Unset, a run with an explainer uses [`IMPROVED_MOVES`] (with Algorithm 1's cuts, the
    /// improved guided search of `docs/explainers.md`) and a run with the random splitter the
    /// paper's [`Moves::Random`]. [`Planner::paper`] gives the paper's method exactly.
    pub fn moves(mut self, moves: Moves) -> Self {
        self.moves = Some(moves);
        self
    }

    /// How many random splits contest each of the splitter's repairs ([`Contested`]: the one
    /// whose parts move the least DRAM is kept; 0 for the splitter alone).
    ///
    /// Unset, a run with an explainer draws [`IMPROVED_RIVALS`] (the improved guided search
    /// of `docs/explainers.md`), and a run with the random splitter none. [`Planner::paper`]
    /// gives the paper's method exactly.
    pub fn rivals(mut self, n: usize) -> Self {
        self.rivals = Some(n);
        self
    }

    /// The paper's method: the paper's edits ([`Moves::Random`]) and no rivals, so that a run
    /// with an explainer is Algorithm 1 exactly as published (`.moves(Moves::Random)
    /// .rivals(0)`). A run with the random splitter is that already.
    pub fn paper(self) -> Self {
        self.moves(Moves::Random).rivals(0)
    }

    /// A [`SplitMemo`] shared with other runs of the same graph, cost model and explainer.
    pub fn split_memo(mut self, memo: Arc<SplitMemo>) -> Self {
        self.memo = Some(memo);
        self
    }

    /// Plan evaluations the search may make.
    pub fn budget(mut self, evaluations: u64) -> Self {
        self.budget = evaluations;
        self
    }

    /// The seed of every random choice of the search.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Stops the search after `limit` with its best plan so far.
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.time_limit = Some(limit);
        self
    }

    /// Ends the search, and the reference optimum, with their best plans so far once `flag`
    /// is set (from a Ctrl-C handler, say): [`StopReason::Interrupted`].
    pub fn stop(mut self, flag: &'a AtomicBool) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Called with (evaluations done, budget) as the search goes.
    pub fn progress(mut self, f: &'a (dyn Fn(u64, u64) + Sync)) -> Self {
        self.progress = Some(f);
        self
    }

    /// Called as the run moves from one [`Phase`] to the next (a progress bar names the phase:
    /// the reference optimum can take longer than the search).
    ///
    /// ```
    /// use fuselage_cost::{CostConfig, CostKind};
    /// use fuselage_pipeline::{Phase, Planner, Reference};
    /// use std::cell::RefCell;
    /// let g = fuselage_zoo::build("resnet18")?;
    /// let seen = RefCell::new(Vec::new());
    /// let record = |p: Phase| seen.borrow_mut().push(p);
    /// Planner::new(&g, CostKind::Lbdf, CostConfig::kib(128)?).budget(10).on_phase(&record).run()?;
    /// assert_eq!(*seen.borrow(), [Phase::Search, Phase::Reference, Phase::Report]);
    /// seen.borrow_mut().clear();
    /// Planner::new(&g, CostKind::Lbdf, CostConfig::kib(128)?)
    ///     .budget(10)
    ///     .reference(Reference::Off)
    ///     .on_phase(&record)
    ///     .run()?;
    /// assert_eq!(*seen.borrow(), [Phase::Search, Phase::Report]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_phase(mut self, f: &'a dyn Fn(Phase)) -> Self {
        self.phase = Some(f);
        self
    }

    /// Whether and how long to compute the exact optimum as a reference.
    pub fn reference(mut self, reference: Reference) -> Self {
        self.reference = reference;
        self
    }

    /// Runs the search and everything around it. Where β is below every single op, no search
    /// runs: the outcome is the layer-by-layer plan, with [`Outcome::nothing_fuses`] set.
    ///
    /// # Errors
    /// [`PipelineError::HardwareMismatch`] when the accelerator given to [`hardware`](Self::hardware)
    /// and the cost model disagree on the buffer or the element sizes; the errors of the
    /// explainer factory, the cost model and the search.
    pub fn run(self) -> Result<Outcome> {
        let g = self.graph;
        let model = &self.model;
        // One β: the accelerator's buffer and element sizes are the model's.
        if let Some(hw) = &self.hardware
            && hw.config != *model.config()
        {
            return Err(PipelineError::HardwareMismatch {
                hardware: hw.name.clone(),
                model: model.name().to_string(),
                configs: Box::new((hw.config, *model.config())),
            });
        }
        let guided = self.explainer.is_some();
        let moves = self.moves.unwrap_or(if guided {
            IMPROVED_MOVES
        } else {
            Moves::Random
        });
        let rivals = self
            .rivals
            .unwrap_or(if guided { IMPROVED_RIVALS } else { 0 });
        let explainer_name;
        let splitter: Box<dyn Splitter + 'a> = match self.explainer {
            None => {
                explainer_name = None;
                contested(RandomSplitter::new(model.clone()), model, rivals)
            }
            Some(source) => {
                let request = ExplainerRequest {
                    cost_kind: self.cost_kind,
                    model,
                };
                let explainer: Box<dyn Explainer + 'a> = match source {
                    ExplainerSource::Given(e) => e,
                    ExplainerSource::Kind(kind) => self.factory.explainer(kind, &request)?,
                    ExplainerSource::Made(make) => make(&request)?,
                };
                explainer_name = Some(explainer.name().to_string());
                let mut get = ExplainedSplitter::new(explainer, model.clone())
                    .with_seed(self.explainer_seed)
                    .with_cut_choice(self.cut_choice);
                if let Some(n) = self.max_branch {
                    get = get.with_max_branch(n);
                }
                if let Some(memo) = self.memo {
                    get = get.with_memo(memo);
                }
                contested(get, model, rivals)
            }
        };
        let hardware = self
            .hardware
            .unwrap_or_else(|| Accelerator::beta_only(*model.config()));
        let p = Problem::new(g, model.as_ref(), splitter.as_ref())?
            .with_hardware(hardware.clone(), self.objective)
            .with_pair(self.pair)
            .with_moves(moves);
        let nothing_fuses = smallest_if_nothing_fits(g, &p);
        let (strategy, exact_search): (Box<dyn SearchStrategy + 'a>, bool) = match self.search {
            SearchSource::Kind(kind) => (kind.strategy(), kind == SearchKind::Optimal),
            SearchSource::Given(s) => (s, false),
        };
        let mut budget = Budget::new(self.budget)?;
        if let Some(f) = self.progress {
            budget = budget.with_progress(f);
        }
        if let Some(limit) = self.time_limit {
            budget = budget.with_time_limit(limit);
        }
        if let Some(flag) = self.stop {
            budget = budget.with_stop(flag);
        }
        let phase = |x: Phase| {
            if let Some(f) = self.phase {
                f(x);
            }
        };
        phase(Phase::Search);
        let start = Instant::now();
        let result = match nothing_fuses {
            None => strategy.run(&p, &budget, self.seed)?,
            Some(_) => layer_by_layer(&p)?,
        };
        let seconds = start.elapsed().as_secs_f64();
        // Read before the reference optimum adds cost-model time.
        let split = p.split_stats().unwrap_or_default();
        let cost_seconds = p.cost_seconds() + split.cost_seconds;
        let reference = if exact_search || nothing_fuses.is_some() {
            Some(Optimum::of(&result, self.objective))
        } else {
            let limit = match self.reference {
                Reference::Off => None,
                Reference::Within(limit) => Some(Some(limit)),
                Reference::Exact => Some(None),
            };
            match limit {
                None => None,
                Some(limit) => {
                    phase(Phase::Reference);
                    let mut b = Budget::new(1)?;
                    if let Some(limit) = limit {
                        b = b.with_time_limit(limit);
                    }
                    if let Some(flag) = self.stop {
                        b = b.with_stop(flag);
                    }
                    let r = Optimal::default().run(&p, &b, self.seed)?;
                    Some(Optimum::of(&r, self.objective))
                }
            }
        };
        phase(Phase::Report);
        let report = evaluate_plan(model.as_ref(), g, &result.plan)?;
        let plan_file = PlanFile::from_report(model.as_ref(), g, &result.plan, &report)
            .with_hardware(&hardware, g, &result.plan, &report);
        let metrics = hardware.plan_metrics(g, &result.plan, &report);
        let none_covered = NodeSet::new(g.len());
        let objective_bound = if self.objective.is_additive() {
            u128::from(p.remaining_bound(&none_covered))
        } else {
            u128::from(p.sibling(Objective::Latency).remaining_bound(&none_covered))
                * u128::from(p.sibling(Objective::Energy).remaining_bound(&none_covered))
        };
        Ok(Outcome {
            names: Names {
                cost_model: model.name().to_string(),
                search: strategy.name().to_string(),
                splitter: splitter.name().to_string(),
                explainer: explainer_name,
                moves,
                rivals,
            },
            lower_bound: p.lower_bound(),
            objective_bound,
            objective: self.objective,
            hardware,
            metrics,
            config: *model.config(),
            result,
            report,
            plan_file,
            split,
            reference,
            seconds,
            cost_seconds,
            nothing_fuses,
        })
    }
}

/// The least buffer any single op needs, when β is below every one of them: then no group
/// fits and the only plan is layer by layer.
fn smallest_if_nothing_fits(g: &Graph, p: &Problem<'_>) -> Option<u64> {
    if p.unfusable().len() < g.len() {
        return None;
    }
    let smallest = g
        .node_ids()
        .filter_map(|v| p.model().evaluate(g, &NodeSet::singleton(g.len(), v)).ok())
        .map(|c| c.buffer_bytes)
        .min()
        .unwrap_or(0);
    Some(smallest)
}

/// The layer-by-layer plan, scored: what a run gives where nothing fuses. It is the only plan
/// (every op is its own group, unfusable), so it is proven.
fn layer_by_layer(p: &Problem<'_>) -> Result<SearchResult> {
    let plan = fuselage_ir::Plan::singletons(p.graph());
    let score = p.score(&plan)?;
    Ok(SearchResult {
        plan,
        score,
        evaluations: 1,
        history: vec![score.capped_cost()],
        stop: StopReason::Exhausted,
        front: Vec::new(),
        lower_bound: Some(score.cost),
    })
}
