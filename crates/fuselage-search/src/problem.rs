//! [`Problem`]: the graph, the cost model and the splitter a search works with, and the
//! operations every strategy shares: scoring a plan, repairing its invalid groups, the lower
//! bound. Acyclicity is [`PlanGraph`](fuselage_ir::PlanGraph)'s.

use crate::error::Result;
use fuselage_cost::{CostModel, unfusable_nodes};
use fuselage_ir::{Graph, NodeSet, Plan, Source};
use fuselage_split::{SplitStats, Splitter};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The two objectives of a plan, and what the summary prints beside them.
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
}

impl Score {
    /// Whether `self` is at least as good as `other` on both objectives and better on one.
    pub fn dominates(&self, other: &Score) -> bool {
        self.dram_bytes <= other.dram_bytes
            && self.max_buffer_bytes <= other.max_buffer_bytes
            && (self.dram_bytes < other.dram_bytes
                || self.max_buffer_bytes < other.max_buffer_bytes)
    }
}

/// What a search works on. Build one with [`Problem::new`]; strategies borrow it.
pub struct Problem<'a> {
    graph: &'a Graph,
    model: &'a dyn CostModel,
    splitter: &'a dyn Splitter,
    unfusable: NodeSet,
    /// Nanoseconds in the cost model (atomic, so that a problem is `Sync` and strategies can
    /// evaluate in parallel).
    cost_nanos: AtomicU64,
    split_baseline: Option<SplitStats>,
}

impl<'a> Problem<'a> {
    /// A problem over `graph`, costed by `model` (wrap it in
    /// [`Cached`](fuselage_cost::Cached): searches ask about the same groups again and again),
    /// repaired by `splitter`. Finds the unfusable nodes once, up front.
    ///
    /// # Errors
    /// When the cost model fails on a single node.
    pub fn new(
        graph: &'a Graph,
        model: &'a dyn CostModel,
        splitter: &'a dyn Splitter,
    ) -> Result<Self> {
        let unfusable = unfusable_nodes(model, graph)?;
        Ok(Problem {
            graph,
            model,
            splitter,
            unfusable,
            cost_nanos: AtomicU64::new(0),
            split_baseline: splitter.stats(),
        })
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

    /// `F_D` of a group that may stand in a plan, or `None` when it may not: one cost-model
    /// call where [`admissible`](Self::admissible) and a DRAM query would make two.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn admissible_dram(&self, group: &NodeSet) -> Result<Option<u64>> {
        self.timed(|| {
            let c = self.model.evaluate(self.graph, group)?;
            Ok((c.valid || self.is_unfusable_singleton(group)).then_some(c.dram_bytes))
        })
    }

    /// Whether `group` or some connected group containing it might fit: false when the cost
    /// model's [buffer floor](CostModel::buffer_floor) of `group` is already `≥ β`.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn fits_somewhere(&self, group: &NodeSet) -> Result<bool> {
        self.timed(|| {
            let floor = self.model.buffer_floor(self.graph, group)?;
            Ok(self.model.config().fits(floor))
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
            };
            for grp in &plan.groups {
                let c = self.model.evaluate(self.graph, grp)?;
                s.dram_bytes += c.dram_bytes;
                if c.valid {
                    s.fusable_dram_bytes += c.dram_bytes;
                    s.max_buffer_bytes = s.max_buffer_bytes.max(c.buffer_bytes);
                } else if !c.unfusable {
                    s.fusable_dram_bytes += c.dram_bytes;
                }
            }
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
    /// output written once, every weight read once, at the model's element size.
    pub fn lower_bound(&self) -> u64 {
        lower_bound(self.graph, self.model.config().element_bytes())
    }
}

/// The traffic no plan of the rest can avoid once the down-set `covered` is planned: the
/// weights of the uncovered nodes, every tensor they read from a covered node or a graph
/// input (read at least once; its write is already paid), and the graph outputs among them
/// (written at least once). Both LBDF and BRR charge at least this (`F_D ≥ I + O + W`), so
/// `cost(covered) + remaining_lower_bound` bounds every plan that extends the cover.
pub fn remaining_lower_bound(g: &Graph, element_bytes: u64, covered: &NodeSet) -> u64 {
    let mut read_nodes = NodeSet::new(g.len());
    let mut read_inputs = vec![false; g.inputs().len()];
    let bytes = |s: Source| g.rows_of(s).saturating_mul(g.row_elements(s));
    let mut total: u64 = 0;
    for v in g.node_ids().filter(|&v| !covered.contains(v)) {
        let node = g.node(v);
        total = total.saturating_add(node.weights);
        if g.is_output(v) {
            total = total.saturating_add(bytes(Source::Node(v)));
        }
        for &s in &node.inputs {
            let first = match s {
                Source::Node(u) => covered.contains(u) && read_nodes.insert(u),
                Source::Input(i) => !std::mem::replace(&mut read_inputs[i.index()], true),
            };
            if first {
                total = total.saturating_add(bytes(s));
            }
        }
    }
    total.saturating_mul(element_bytes)
}

/// The compulsory DRAM traffic of `g` at `element_bytes` per element: graph inputs, graph
/// outputs and all weights, each once. No plan under any cost model moves less.
pub fn lower_bound(g: &Graph, element_bytes: u64) -> u64 {
    let inputs: u64 = g.inputs().iter().map(|i| i.shape.elements()).sum();
    let outputs: u64 = g
        .outputs()
        .iter()
        .map(|&o| g.node(o).shape.elements())
        .sum();
    (inputs + outputs + g.params()) * element_bytes
}
