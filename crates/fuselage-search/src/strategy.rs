//! The [`SearchStrategy`] trait, its budget, and what a run returns.

use crate::error::{Result, SearchError};
use crate::problem::{Problem, Score};
use fuselage_ir::Plan;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How many plan evaluations a run may make, an optional wall-clock limit, an optional stop
/// flag, and an optional progress callback.
///
/// Without a time limit a run is a function of its seed. With one, it stops at the first
/// check after the limit with its best plan so far ([`StopReason::TimeLimit`]), so the result
/// also depends on the machine's speed. A stop flag (set from a Ctrl-C handler, say) ends the
/// run the same way, with [`StopReason::Interrupted`].
pub struct Budget<'p> {
    evaluations: u64,
    deadline: Option<Instant>,
    stop: Option<&'p AtomicBool>,
    progress: Option<&'p (dyn Fn(u64, u64) + Sync)>,
    observer: Option<&'p (dyn Fn(&Score) + Sync)>,
}

impl<'p> Budget<'p> {
    /// A budget of `evaluations` plan evaluations.
    ///
    /// # Errors
    /// [`SearchError::ZeroBudget`] for 0.
    pub fn new(evaluations: u64) -> Result<Self> {
        if evaluations == 0 {
            return Err(SearchError::ZeroBudget);
        }
        Ok(Budget {
            evaluations,
            deadline: None,
            stop: None,
            progress: None,
            observer: None,
        })
    }

    /// Stops the run once `limit` has passed (counted from now), with its best plan so far.
    /// A run always returns a complete plan: a search finishes its first evaluation, the exact
    /// optimiser its first order programme.
    pub fn with_time_limit(mut self, limit: Duration) -> Self {
        self.deadline = Instant::now().checked_add(limit);
        self
    }

    /// Stops the run, with its best plan so far, once `flag` is set (from another thread or a
    /// signal handler).
    pub fn with_stop(mut self, flag: &'p AtomicBool) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Whether the stop flag is set.
    pub fn interrupted(&self) -> bool {
        self.stop.is_some_and(|f| f.load(Ordering::Relaxed))
    }

    /// Whether the run must end early: the time limit has passed or the stop flag is set.
    pub fn expired(&self) -> bool {
        self.interrupted() || self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Why an [`expired`](Self::expired) budget ended its run: [`StopReason::Interrupted`]
    /// when the stop flag is set, else [`StopReason::TimeLimit`].
    pub fn cut_short(&self) -> StopReason {
        if self.interrupted() {
            StopReason::Interrupted
        } else {
            StopReason::TimeLimit
        }
    }

    /// The instant the time limit passes, if there is one.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Calls `f(done, total)` after every evaluation (a progress bar, say).
    pub fn with_progress(mut self, f: &'p (dyn Fn(u64, u64) + Sync)) -> Self {
        self.progress = Some(f);
        self
    }

    /// Calls `f(score)` with every plan a [`Tracker`] records: every plan a search evaluates
    /// (to check a front against them, say).
    pub fn with_observer(mut self, f: &'p (dyn Fn(&Score) + Sync)) -> Self {
        self.observer = Some(f);
        self
    }

    /// The number of evaluations allowed.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Reports `done` evaluations of [`evaluations`](Self::evaluations) to the progress
    /// callback, if there is one. [`Tracker::record`] calls it; a strategy that counts its
    /// own work calls it directly.
    pub fn report(&self, done: u64) {
        if let Some(f) = self.progress {
            f(done, self.evaluations);
        }
    }
}

/// Why a run stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It used its whole budget.
    Budget,
    /// It finished its own work first (the exact optimiser): its answer is proven.
    Exhausted,
    /// Its time limit passed; the plan is the best found so far.
    TimeLimit,
    /// Its stop flag was set (Ctrl-C in the program); the plan is the best found so far.
    Interrupted,
}

/// What a run found.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// The best plan (least [`Score::cost`]: total DRAM unless the problem says otherwise).
    pub plan: Plan,
    /// Its score.
    pub score: Score,
    /// Plans evaluated.
    pub evaluations: u64,
    /// The best [`Score::capped_cost`] after each evaluation (total DRAM by default).
    pub history: Vec<u64>,
    /// Why the run stopped.
    pub stop: StopReason,
    /// The non-dominated front of the problem's [`pair`](Problem::pair) (DRAM and MBU by
    /// default), for multi-objective strategies; empty otherwise.
    pub front: Vec<Score>,
    /// What an exact strategy proved no plan of its family scores below, in [`Score::cost`]'s
    /// units: the returned score itself when it proved that plan optimal, a lower bound on the
    /// optimum otherwise (its budget cut it short, or an objective such as EDP that it only
    /// bounds). `None` for heuristics, which prove nothing.
    pub lower_bound: Option<u128>,
}

/// The bookkeeping every budgeted strategy shares: the best plan so far, the best-DRAM
/// history (one entry per evaluation), the budget and time limit, the progress callback, and
/// the [`SearchResult`] at the end.
///
/// A strategy scores plans its own way (in parallel, if it likes: [`Problem`] is `Sync`) and
/// [`record`](Self::record)s them in a fixed order, so that its result stays a function of
/// its seed; it stops when [`done`](Self::done) says so and returns
/// [`finish`](Self::finish), which turns a run cut short by the clock into
/// [`StopReason::TimeLimit`].
///
/// ```
/// use fuselage_cost::{CostConfig, Lbdf};
/// use fuselage_ir::Plan;
/// use fuselage_search::{Budget, Problem, StopReason, Tracker};
/// use fuselage_split::RandomSplitter;
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let model = Lbdf::new(CostConfig::kib(256)?);
/// let splitter = RandomSplitter::new(&model);
/// let p = Problem::new(&g, &model, &splitter)?;
/// let budget = Budget::new(3)?;
/// let mut t = Tracker::new(&budget);
/// while !t.done() {
///     let plan = Plan::singletons(&g);
///     let score = p.score(&plan)?;
///     t.record(&plan, score);
/// }
/// let result = t.finish(StopReason::Budget, vec![]);
/// assert_eq!((result.evaluations, result.history.len()), (3, 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Tracker<'b, 'p> {
    budget: &'b Budget<'p>,
    best: Option<(Plan, Score)>,
    history: Vec<u64>,
}

impl<'b, 'p> Tracker<'b, 'p> {
    /// A tracker for a run under `budget`, with nothing recorded yet.
    pub fn new(budget: &'b Budget<'p>) -> Self {
        Tracker {
            budget,
            best: None,
            // Grown as evaluations come: a budget is a bound, not a size to allocate (a budget
            // of 10^10 must not ask for 80 GB up front).
            history: Vec::with_capacity(budget.evaluations().min(1 << 16) as usize),
        }
    }

    /// Whether the run must stop: its evaluations are spent, or its time limit has passed
    /// after at least one plan was recorded (a run always returns a plan).
    pub fn done(&self) -> bool {
        self.history.len() as u64 >= self.budget.evaluations()
            || (self.best.is_some() && self.budget.expired())
    }

    /// Records one evaluated plan, keeps it if it is the best so far (least
    /// [`Score::cost`]; the first of equals), shows it to the budget's observer, and reports
    /// progress.
    pub fn record(&mut self, plan: &Plan, score: Score) {
        if let Some(f) = self.budget.observer {
            f(&score);
        }
        let better = self.best.as_ref().is_none_or(|(_, s)| score.cost < s.cost);
        if better {
            self.best = Some((plan.clone(), score));
        }
        let best = self
            .best
            .as_ref()
            .map_or(score.capped_cost(), |(_, s)| s.capped_cost());
        self.history.push(best);
        self.budget.report(self.history.len() as u64);
    }

    /// The best plan so far and its score.
    pub fn best(&self) -> Option<&(Plan, Score)> {
        self.best.as_ref()
    }

    /// Plans recorded so far.
    pub fn evaluations(&self) -> u64 {
        self.history.len() as u64
    }

    /// The result: the best plan, the history, and `stop`, or [`StopReason::TimeLimit`] when
    /// the clock ended the run before its budget. With nothing recorded, the plan is empty and
    /// its score [`Score::worst`].
    pub fn finish(self, stop: StopReason, front: Vec<Score>) -> SearchResult {
        let evaluations = self.history.len() as u64;
        let stop = if evaluations < self.budget.evaluations() && self.budget.expired() {
            self.budget.cut_short()
        } else {
            stop
        };
        let (plan, score) = self
            .best
            .unwrap_or_else(|| (Plan::default(), Score::worst()));
        SearchResult {
            plan,
            score,
            evaluations,
            history: self.history,
            stop,
            front,
            lower_bound: None,
        }
    }
}

/// A search for a fusion plan.
///
/// Contract: every plan a strategy returns is a partition of the graph into weakly connected
/// groups with an acyclic graph of groups, each group valid or an unfusable singleton; invalid
/// groups it meets are repaired through the problem's splitter ([`Problem::repair`]); all
/// randomness flows from `seed`, so the same seed gives the same plan.
///
/// Required: [`name`](SearchStrategy::name) and [`run`](SearchStrategy::run).
///
/// # Example: a strategy downstream
/// ```
/// use fuselage_cost::{Cached, CostConfig, Lbdf};
/// use fuselage_ir::Plan;
/// use fuselage_search::{Budget, Problem, Result, SearchResult, SearchStrategy, StopReason};
/// use fuselage_split::RandomSplitter;
///
/// /// Evaluates the layer-by-layer plan and stops.
/// struct LayerByLayer;
///
/// impl SearchStrategy for LayerByLayer {
///     fn name(&self) -> &str { "layer-by-layer" }
///     fn run(&self, p: &Problem<'_>, _budget: &Budget<'_>, _seed: u64) -> Result<SearchResult> {
///         let plan = Plan::singletons(p.graph());
///         let score = p.score(&plan)?;
///         Ok(SearchResult { plan, score, evaluations: 1, history: vec![score.capped_cost()],
///                           stop: StopReason::Exhausted, front: vec![], lower_bound: None })
///     }
/// }
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let model = Cached::new(Lbdf::new(CostConfig::kib(256)?));
/// let splitter = RandomSplitter::new(&model);
/// let problem = Problem::new(&g, &model, &splitter)?;
/// let r = LayerByLayer.run(&problem, &Budget::new(1)?, 0)?;
/// assert_eq!(r.plan.len(), g.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait SearchStrategy {
    /// The strategy's name (`random`, `local`, `nsga2`, `optimal`).
    fn name(&self) -> &str;

    /// Searches `problem` within `budget`, drawing randomness from `seed`.
    ///
    /// # Errors
    /// When the cost model or the splitter fails.
    fn run(&self, problem: &Problem<'_>, budget: &Budget<'_>, seed: u64) -> Result<SearchResult>;
}
