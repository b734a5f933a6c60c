//! [`Problem`]: the graph, the cost model and the splitter a search works with, and the
//! operations every strategy shares: scoring a plan, repairing its invalid groups, the lower
//! bound. Acyclicity is [`PlanGraph`](fuselage_ir::PlanGraph)'s.

use crate::error::Result;
use crate::mutate::Moves;
use fuselage_cost::{
    Accelerator, Activity, CostConfig, CostModel, GroupCost, Objective, unfusable_nodes,
};
use fuselage_ir::{Graph, NodeSet, Plan, Source};
use fuselage_split::{SplitStats, Splitter};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What a plan scores: the objective strategies minimise, the pair NSGA-II ranks, and what
/// the summary prints beside them.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Score {
    /// Total DRAM bytes: every group, unfusable singletons included.
    pub dram_bytes: u64,
    /// DRAM bytes without the unfusable singletons (the paper's convention).
    pub fusable_dram_bytes: u64,
    /// MBU: the largest `F_β` of a valid group.
    pub max_buffer_bytes: u64,
    /// Number of groups.
    pub groups: usize,
    /// Latency in cycles on the problem's accelerator (groups in sequence).
    pub latency_cycles: u64,
    /// Energy in femtojoules on the problem's accelerator.
    pub energy_fj: u64,
    /// The problem's [`Objective`]: DRAM bytes, cycles, femtojoules, or cycles × femtojoules
    /// for EDP. Every strategy minimises it.
    pub cost: u128,
    /// The two values NSGA-II ranks ([`Problem::pair`]): the objective and the MBU, or
    /// latency and energy.
    pub pair: [u64; 2],
}

impl Score {
    /// Whether `self` is at least as good as `other` on both values of the pair and better on
    /// one.
    pub fn dominates(&self, other: &Score) -> bool {
        let [a0, a1] = self.pair;
        let [b0, b1] = other.pair;
        a0 <= b0 && a1 <= b1 && (a0 < b0 || a1 < b1)
    }

    /// [`cost`](Self::cost) as a `u64`, saturating (exact for the additive objectives, whose
    /// sums saturate at `u64::MAX` anyway).
    pub fn capped_cost(&self) -> u64 {
        u64::try_from(self.cost).unwrap_or(u64::MAX)
    }

    /// The score of no plan at all: worse than every real one.
    pub fn worst() -> Score {
        Score {
            dram_bytes: u64::MAX,
            fusable_dram_bytes: u64::MAX,
            max_buffer_bytes: u64::MAX,
            groups: 0,
            latency_cycles: u64::MAX,
            energy_fj: u64::MAX,
            cost: u128::MAX,
            pair: [u64::MAX; 2],
        }
    }
}

/// Which two values NSGA-II ranks plans by.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pair {
    /// The objective and the MBU (the paper's DRAM–MBU front when the objective is DRAM).
    #[default]
    ObjectiveBuffer,
    /// Latency and energy (`--pareto latency,energy`, and EDP).
    LatencyEnergy,
}

/// What a search works on. Build one with [`Problem::new`]; strategies borrow it.
pub struct Problem<'a> {
    graph: &'a Graph,
    model: &'a dyn CostModel,
    splitter: &'a dyn Splitter,
    hw: Accelerator,
    /// [`Accelerator::activities`] of `hw`: what each node does, summed per scored group.
    activities: Vec<Activity>,
    objective: Objective,
    pair: Pair,
    unfusable: NodeSet,
    /// Nanoseconds in the cost model (atomic, so that a problem is `Sync` and strategies can
    /// evaluate in parallel).
    cost_nanos: AtomicU64,
    split_baseline: Option<SplitStats>,
    moves: Moves,
    /// The graph's repeated structure, found on first use ([`Moves::Repeating`]).
    motifs: std::sync::OnceLock<crate::repeat::Motifs>,
}

impl<'a> Problem<'a> {
    /// A problem over `graph`, costed by `model` (wrap it in
    /// [`Cached`](fuselage_cost::Cached): searches ask about the same groups again and again),
    /// repaired by `splitter`. Finds the unfusable nodes once, up front. It minimises DRAM on
    /// the β-only accelerator of the model's configuration until
    /// [`with_hardware`](Self::with_hardware) says otherwise.
    ///
    /// # Errors
    /// When the cost model fails on a single node.
    pub fn new(
        graph: &'a Graph,
        model: &'a dyn CostModel,
        splitter: &'a dyn Splitter,
    ) -> Result<Self> {
        let unfusable = unfusable_nodes(model, graph)?;
        let hw = Accelerator::beta_only(*model.config());
        Ok(Problem {
            graph,
            model,
            splitter,
            activities: hw.activities(graph),
            hw,
            objective: Objective::Dram,
            pair: Pair::ObjectiveBuffer,
            unfusable,
            cost_nanos: AtomicU64::new(0),
            split_baseline: splitter.stats(),
            moves: Moves::Random,
            motifs: std::sync::OnceLock::new(),
        })
    }

    /// The same problem on `hw` (whose [`config`](Accelerator::config) the model should be
    /// at), minimising `objective`. EDP ranks latency and energy in NSGA-II.
    pub fn with_hardware(mut self, hw: Accelerator, objective: Objective) -> Self {
        self.activities = hw.activities(self.graph);
        self.hw = hw;
        self.objective = objective;
        if !objective.is_additive() {
            self.pair = Pair::LatencyEnergy;
        }
        self
    }

    /// The same problem with the local search and NSGA-II editing plans by `moves` (default
    /// [`Moves::Random`], the paper's).
    pub fn with_moves(mut self, moves: Moves) -> Self {
        self.moves = moves;
        self
    }

    /// How the local search and NSGA-II pick their merges and moves.
    pub fn moves(&self) -> Moves {
        self.moves
    }

    /// The graph's repeated structure (found on the first call).
    pub(crate) fn motifs(&self) -> &crate::repeat::Motifs {
        self.motifs.get_or_init(|| crate::repeat::Motifs::new(self))
    }

    /// The same problem with NSGA-II ranking `pair`.
    pub fn with_pair(mut self, pair: Pair) -> Self {
        self.pair = if self.objective.is_additive() {
            pair
        } else {
            Pair::LatencyEnergy
        };
        self
    }

    /// A problem over the same graph, model, splitter and hardware minimising `objective`
    /// (the unfusable nodes are not found again).
    pub fn sibling(&self, objective: Objective) -> Problem<'a> {
        Problem {
            graph: self.graph,
            model: self.model,
            splitter: self.splitter,
            hw: self.hw.clone(),
            activities: self.activities.clone(),
            objective,
            pair: if objective.is_additive() {
                self.pair
            } else {
                Pair::LatencyEnergy
            },
            unfusable: self.unfusable.clone(),
            cost_nanos: AtomicU64::new(0),
            split_baseline: self.splitter.stats(),
            moves: self.moves,
            motifs: std::sync::OnceLock::new(),
        }
    }

    /// The accelerator latency and energy are counted on.
    pub fn hardware(&self) -> &Accelerator {
        &self.hw
    }

    /// What every strategy minimises.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    /// What NSGA-II ranks.
    pub fn pair(&self) -> Pair {
        self.pair
    }

    /// The graph.
    pub fn graph(&self) -> &'a Graph {
        self.graph
    }

    /// The cost model.
    pub fn model(&self) -> &'a dyn CostModel {
        self.model
    }

    /// The splitter.
    pub fn splitter(&self) -> &'a dyn Splitter {
        self.splitter
    }

    /// Nodes that do not fit alone (`F_β({v}) ≥ β`): always singletons.
    pub fn unfusable(&self) -> &NodeSet {
        &self.unfusable
    }

    /// Seconds spent in the cost model by [`score`](Self::score) and
    /// [`repair`](Self::repair) so far.
    pub fn cost_seconds(&self) -> f64 {
        Duration::from_nanos(self.cost_nanos.load(Ordering::Relaxed)).as_secs_f64()
    }

    /// The splitter's counters for the work done on this problem: what it counted since the
    /// problem was built (a splitter may serve several problems), or `None` when the splitter
    /// keeps no counters. Read it right after a run for that run's rectify rate and times.
    ///
    /// # Example
    /// ```
    /// use fuselage_cost::{Cached, CostConfig, Lbdf};
    /// use fuselage_search::{Budget, Problem, RandomSearch, SearchStrategy};
    /// use fuselage_split::RandomSplitter;
    /// let g = fuselage_zoo::build("resnet18").unwrap();
    /// let model = Cached::new(Lbdf::new(CostConfig::kib(128)?));
    /// let splitter = RandomSplitter::new(&model);
    /// let p = Problem::new(&g, &model, &splitter)?;
    /// RandomSearch::default().run(&p, &Budget::new(20)?, 1)?;
    /// let stats = p.split_stats().unwrap();
    /// assert!(stats.invalid_groups > 0);
    /// // A second problem over the same splitter starts from zero.
    /// let q = Problem::new(&g, &model, &splitter)?;
    /// assert_eq!(q.split_stats().unwrap().invalid_groups, 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn split_stats(&self) -> Option<SplitStats> {
        let now = self.splitter.stats()?;
        Some(match &self.split_baseline {
            Some(before) => now.since(before),
            None => now,
        })
    }

    fn timed<T>(&self, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        let nanos = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.cost_nanos.fetch_add(nanos, Ordering::Relaxed);
        out
    }

    /// Whether a group may stand in a plan: valid, or an unfusable singleton.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn admissible(&self, group: &NodeSet) -> Result<bool> {
        self.timed(|| self.admissible_untimed(group))
    }

    fn admissible_untimed(&self, group: &NodeSet) -> Result<bool> {
        if self.is_unfusable_singleton(group) {
            return Ok(true);
        }
        Ok(self.model.is_valid(self.graph, group)?)
    }

    /// Whether `group` is one unfusable node, which a plan keeps although it does not fit.
    fn is_unfusable_singleton(&self, group: &NodeSet) -> bool {
        group.is_singleton() && group.first().is_some_and(|v| self.unfusable.contains(v))
    }

    /// The objective's value of a group that may stand in a plan (`F_D`, its cycles or its
    /// femtojoules; its energy for EDP, which no group has alone), or `None` when it may
    /// not: one cost-model call where [`admissible`](Self::admissible) and a query would
    /// make two.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn admissible_value(&self, group: &NodeSet) -> Result<Option<u64>> {
        Ok(self.admissible_cost(group)?.1)
    }

    /// The cost model's answer for `group` with its [`admissible_value`](Self::admissible_value),
    /// from one call: for a caller that also reads the cost's terms (its `I + O + W`).
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn admissible_cost(&self, group: &NodeSet) -> Result<(GroupCost, Option<u64>)> {
        self.timed(|| {
            let c = self.model.evaluate(self.graph, group)?;
            let value =
                (c.valid || self.is_unfusable_singleton(group)).then(|| self.value(group, &c));
            Ok((c, value))
        })
    }

    fn value(&self, group: &NodeSet, c: &GroupCost) -> u64 {
        match self.objective {
            Objective::Dram => c.dram_bytes,
            o => self
                .hw
                .group_value(o, Activity::of_group(&self.activities, group), c),
        }
    }

    /// Whether `group` or some connected group containing it might fit: false when the cost
    /// model's [buffer floor](CostModel::buffer_floor) of `group` is already `≥ β`.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn fits_somewhere(&self, group: &NodeSet) -> Result<bool> {
        self.timed(|| {
            let floor = self.model.buffer_floor(self.graph, group)?;
            Ok(self.model.config().fits(floor.weights, floor.activations))
        })
    }

    /// Scores a plan whose groups are all admissible.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn score(&self, plan: &Plan) -> Result<Score> {
        self.timed(|| {
            let mut s = Score {
                dram_bytes: 0,
                fusable_dram_bytes: 0,
                max_buffer_bytes: 0,
                groups: plan.len(),
                latency_cycles: 0,
                energy_fj: 0,
                cost: 0,
                pair: [0; 2],
            };
            for grp in &plan.groups {
                let c = self.model.evaluate(self.graph, grp)?;
                let m = self
                    .hw
                    .metrics(Activity::of_group(&self.activities, grp), &c);
                s.latency_cycles = s.latency_cycles.saturating_add(m.latency_cycles);
                s.energy_fj = s.energy_fj.saturating_add(m.energy_fj);
                s.dram_bytes += c.dram_bytes;
                if c.valid {
                    s.fusable_dram_bytes += c.dram_bytes;
                    s.max_buffer_bytes = s.max_buffer_bytes.max(c.buffer_bytes);
                } else if !c.unfusable {
                    s.fusable_dram_bytes += c.dram_bytes;
                }
            }
            s.cost = match self.objective {
                Objective::Dram => u128::from(s.dram_bytes),
                Objective::Latency => u128::from(s.latency_cycles),
                Objective::Energy => u128::from(s.energy_fj),
                Objective::Edp => u128::from(s.latency_cycles) * u128::from(s.energy_fj),
            };
            s.pair = match self.pair {
                Pair::ObjectiveBuffer => [s.capped_cost(), s.max_buffer_bytes],
                Pair::LatencyEnergy => [s.latency_cycles, s.energy_fj],
            };
            Ok(s)
        })
    }

    /// Replaces every inadmissible group of `plan` by the splitter's parts. The checks count as
    /// cost-model time, the splitting does not (the splitter keeps its own time).
    ///
    /// # Errors
    /// When the cost model or the splitter fails.
    pub fn repair(&self, plan: Plan, rng: &mut ChaCha8Rng) -> Result<Plan> {
        let mut bad = Vec::new();
        let mut groups = Vec::with_capacity(plan.len());
        self.timed(|| -> Result<()> {
            for grp in plan.groups {
                if self.admissible_untimed(&grp)? {
                    groups.push(grp);
                } else {
                    bad.push(grp);
                }
            }
            Ok(())
        })?;
        for grp in bad {
            groups.extend(self.splitter.split(self.graph, &grp, rng)?.groups);
        }
        Ok(Plan::new(groups))
    }

    /// The compulsory traffic no plan can avoid: every graph input read once, every graph
    /// output written once, every weight read once, at the model's element sizes.
    pub fn lower_bound(&self) -> u64 {
        lower_bound(self.graph, self.model.config())
    }

    /// A lower bound on the objective of every plan of the rest once the down-set `covered`
    /// is planned (additive objectives; the energy part for EDP):
    /// - DRAM: [`remaining_lower_bound`];
    /// - latency: the larger of the rest's MACs at peak and that traffic at the DRAM
    ///   bandwidth (`Σ max(c, d) ≥ max(Σ c, Σ d)`, and a sum of ceilings is at least the
    ///   ceiling of the sum);
    /// - energy: that traffic at DRAM and buffer energy, the rest's MACs, and the buffer
    ///   traffic every plan makes (each output written, each port read, each weight read).
    pub fn remaining_bound(&self, covered: &NodeSet) -> u64 {
        self.remaining_bound_with(covered, 0)
    }

    /// [`remaining_bound`](Self::remaining_bound) when the rest is also known to move
    /// `extra_dram` bytes beyond [`remaining_lower_bound`] (traffic it must add, such as
    /// weights it must stream again or tensors it must cut): that traffic counts in every
    /// objective as DRAM traffic does.
    pub fn remaining_bound_with(&self, covered: &NodeSet, extra_dram: u64) -> u64 {
        let g = self.graph;
        let config = self.model.config();
        let dram = remaining_lower_bound(g, config, covered).saturating_add(extra_dram);
        if self.objective == Objective::Dram {
            return dram;
        }
        let ab = config.activation_element_bytes();
        let bytes = |s: Source| {
            g.rows_of(s)
                .saturating_mul(g.row_elements(s))
                .saturating_mul(ab)
        };
        let (mut macs, mut traffic) = (0u64, 0u64);
        for v in g.node_ids().filter(|&v| !covered.contains(v)) {
            macs = macs.saturating_add(g.node_macs(v));
            traffic = traffic
                .saturating_add(bytes(Source::Node(v)))
                .saturating_add(
                    g.node(v)
                        .weights
                        .saturating_mul(config.weight_element_bytes()),
                );
            for &s in &g.node(v).inputs {
                traffic = traffic.saturating_add(bytes(s));
            }
        }
        let hw = &self.hw;
        match self.objective {
            Objective::Latency => {
                let compute = hw
                    .peak_macs_per_cycle
                    .map_or(0, |p| macs.div_ceil(p.max(1)));
                compute.max(hw.dram_cycles(dram))
            }
            _ => {
                let e = &hw.energy;
                dram.saturating_mul(e.dram_fj_per_byte)
                    .saturating_add(
                        dram.saturating_add(traffic)
                            .saturating_mul(e.buffer_fj_per_byte),
                    )
                    .saturating_add(macs.saturating_mul(e.mac_fj))
            }
        }
    }
}

/// The traffic no plan of the rest can avoid once the down-set `covered` is planned: the
/// weights of the uncovered nodes, every tensor they read from a covered node or a graph
/// input (read at least once; its write is already paid), and the graph outputs among them
/// (written at least once). Both LBDF and BRR charge at least this (`F_D ≥ I + O + W`), so
/// `cost(covered) + remaining_lower_bound` bounds every plan that extends the cover.
/// Weights count at `config`'s weight element size, tensors at its activation size.
pub fn remaining_lower_bound(g: &Graph, config: &CostConfig, covered: &NodeSet) -> u64 {
    let ab = config.activation_element_bytes();
    let wb = config.weight_element_bytes();
    let bytes = |s: Source| {
        g.rows_of(s)
            .saturating_mul(g.row_elements(s))
            .saturating_mul(ab)
    };
    let rest_reads = |s: Source| g.consumers_of(s).iter().any(|&(c, _)| !covered.contains(c));
    let mut total: u64 = 0;
    // Each tensor once: an uncovered node's weights and graph output, a covered node's or a
    // graph input's tensor when the rest reads it (the optimiser asks this for every state,
    // so it allocates nothing).
    for v in g.node_ids() {
        let s = Source::Node(v);
        if !covered.contains(v) {
            total = total.saturating_add(g.node(v).weights.saturating_mul(wb));
            if g.is_output(v) {
                total = total.saturating_add(bytes(s));
            }
        } else if rest_reads(s) {
            total = total.saturating_add(bytes(s));
        }
    }
    for i in 0..g.inputs().len() {
        let s = Source::Input(fuselage_ir::InputId(i as u32));
        if rest_reads(s) {
            total = total.saturating_add(bytes(s));
        }
    }
    total
}

/// The compulsory DRAM traffic of `g` at `config`'s element sizes: graph inputs, graph
/// outputs and all weights, each once. No plan under any cost model moves less.
pub fn lower_bound(g: &Graph, config: &CostConfig) -> u64 {
    let inputs: u64 = g.inputs().iter().map(|i| i.shape.elements()).sum();
    let outputs: u64 = g
        .outputs()
        .iter()
        .map(|&o| g.node(o).shape.elements())
        .sum();
    inputs
        .saturating_add(outputs)
        .saturating_mul(config.activation_element_bytes())
        .saturating_add(g.params().saturating_mul(config.weight_element_bytes()))
}
