//! # fuselage-downstream
//!
//! What a compiler team writes when it adds fuselage as a library: three components of its
//! own, built on the public API alone, run through the [`Planner`](fuselage::Planner) and
//! reachable from the `fuselage` program through a [`Registry`](fuselage_cli::Registry).
//!
//! - [`Reserved`], a cost model: a decorator over any [`CostModel`] for an accelerator whose
//!   DMA engine keeps a fixed number of bytes of the buffer for itself; and
//!   [`ReservedFamily`], the same at any buffer, which gets the exact buffer sweep and the
//!   HTML report's sweep for free.
//! - [`FanOut`], an explainer: blames the edges out of nodes read by several members of the
//!   group (skips, branches), weighted by the tensor they carry.
//! - [`GreedyMerge`], a search: from layer by layer, merges the pair of neighbouring groups
//!   that saves the most DRAM, scoring each round's candidates in parallel with rayon and
//!   recording them through a [`Tracker`] in a fixed order, so the plan is a function of the
//!   seed whatever the thread count.
//!
//! `src/main.rs` runs them: with no arguments it plans ResNet-18 with all three through the
//! [`Planner`](fuselage::Planner), prints the plan, sweeps the buffer under the family and
//! writes the plan's HTML report; with arguments it is the `fuselage`
//! program, in which `--fusion reserved-lbdf`, `--explainer fan-out` and `--search
//! greedy-merge` name them.
#![warn(missing_docs)]

use fuselage::cost::{
    CostConfig, CostFamily, CostKind, CostModel, GroupCost, OnChipBytes, Result as CostResult,
    TensorCost,
};
use fuselage::explain::{Explainer, Explanation, Result as ExplainResult, Selection, group_edges};
use fuselage::ir::{Graph, NodeSet, Plan, PlanGraph};
use fuselage::search::{Budget, Problem, Score, SearchResult, SearchStrategy, StopReason, Tracker};
use fuselage_cli::Registry;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// A cost model that keeps `reserve` bytes of the buffer for the DMA engine: a group needs
/// its inner model's `F_β` plus the reserve, and its DRAM traffic is the inner model's.
pub struct Reserved<C> {
    inner: C,
    reserve: u64,
    name: String,
}

impl<C: CostModel> Reserved<C> {
    /// `inner` with `reserve` bytes of the buffer taken.
    pub fn new(inner: C, reserve: u64) -> Self {
        let name = format!("reserved-{}", inner.name());
        Reserved {
            inner,
            reserve,
            name,
        }
    }
}

impl<C: CostModel> CostModel for Reserved<C> {
    fn name(&self) -> &str {
        &self.name
    }

    fn config(&self) -> &CostConfig {
        self.inner.config()
    }

    fn evaluate(&self, g: &Graph, group: &NodeSet) -> CostResult<GroupCost> {
        let c = self.inner.evaluate(g, group)?;
        // The constructor derives `valid` and `unfusable` from the new buffer need.
        Ok(GroupCost::new(
            self.config(),
            group.len(),
            OnChipBytes {
                weights: c.buffer_bytes.saturating_sub(c.activation_buffer_bytes),
                activations: c.activation_buffer_bytes.saturating_add(self.reserve),
            },
            c.dram_bytes,
            c.weight_bytes,
            (c.input_bytes, c.output_bytes),
            c.tiling,
        ))
    }

    fn breakdown(&self, g: &Graph, group: &NodeSet) -> CostResult<Option<Vec<TensorCost>>> {
        self.inner.breakdown(g, group)
    }

    fn buffer_floor(&self, g: &Graph, group: &NodeSet) -> CostResult<OnChipBytes> {
        let floor = self.inner.buffer_floor(g, group)?;
        Ok(OnChipBytes {
            activations: floor.activations.saturating_add(self.reserve),
            ..floor
        })
    }
}

/// Blames the edges out of a node that several members of the group read, weighted by the
/// bytes of the tensor: those are the tensors a fused group must keep resident longest.
#[derive(Copy, Clone, Debug, Default)]
pub struct FanOut;

impl Explainer for FanOut {
    fn name(&self) -> &str {
        "fan-out"
    }

    fn explain(
        &self,
        g: &Graph,
        group: &NodeSet,
        _model: &dyn CostModel,
        _rng: &mut ChaCha8Rng,
    ) -> ExplainResult<Explanation> {
        let (order, edges) = group_edges(g, group)?;
        let readers = |u| edges.iter().filter(|&&(p, _)| p == u).count();
        let scores = edges
            .iter()
            .map(|&(u, _)| (readers(u) as f32) * (g.node(u).shape.elements() as f32).ln_1p())
            .collect();
        Explanation::from_scores(
            self.name(),
            &order,
            edges,
            scores,
            None,
            &Selection::default(),
        )
    }
}

/// From layer by layer, merges neighbouring groups greedily.
///
/// Each round draws up to `candidates` pairs of groups joined by an edge (in an order drawn
/// from the seed), scores every merge whose group is admissible and whose plan stays acyclic
/// in parallel, records them in draw order, and keeps the best if it saves DRAM. It stops
/// when a round saves nothing or the budget is spent.
#[derive(Copy, Clone, Debug)]
pub struct GreedyMerge {
    /// Merges scored per round.
    pub candidates: usize,
}

impl Default for GreedyMerge {
    fn default() -> Self {
        GreedyMerge { candidates: 64 }
    }
}

impl GreedyMerge {
    /// The pairs of groups (by index, smaller first) joined by at least one edge.
    fn neighbours(g: &Graph, plan: &Plan) -> Vec<(usize, usize)> {
        let pg = plan.graph(g);
        let mut pairs: Vec<(usize, usize)> = pg
            .edges()
            .map(|(a, b)| (a.index().min(b.index()), a.index().max(b.index())))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }

    /// `plan` with groups `a` and `b` merged, if the merged group may stand and the graph of
    /// groups stays acyclic.
    fn merge(p: &Problem<'_>, plan: &Plan, (a, b): (usize, usize)) -> Option<Plan> {
        let merged = plan.groups[a].union(&plan.groups[b]);
        if !p.admissible(&merged).ok()? {
            return None;
        }
        let mut groups: Vec<NodeSet> = plan
            .groups
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != a && i != b)
            .map(|(_, s)| s.clone())
            .collect();
        groups.push(merged);
        PlanGraph::new(p.graph(), &groups)
            .is_acyclic()
            .then(|| Plan::new(groups))
    }
}

impl SearchStrategy for GreedyMerge {
    fn name(&self) -> &str {
        "greedy-merge"
    }

    fn run(
        &self,
        p: &Problem<'_>,
        budget: &Budget<'_>,
        seed: u64,
    ) -> fuselage::search::Result<SearchResult> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut t = Tracker::new(budget);
        let mut plan = Plan::singletons(p.graph());
        let mut score = p.score(&plan)?;
        t.record(&plan, score);
        let mut stop = StopReason::Exhausted;
        while !t.done() {
            let mut pairs = Self::neighbours(p.graph(), &plan);
            pairs.shuffle(&mut rng);
            pairs.truncate(self.candidates);
            // Scored in parallel (a `Problem` is `Sync`), recorded in draw order.
            let scored: Vec<Option<(Plan, Score)>> = pairs
                .par_iter()
                .map(|&pair| {
                    let next = Self::merge(p, &plan, pair)?;
                    let s = p.score(&next).ok()?;
                    Some((next, s))
                })
                .collect();
            let mut best: Option<(Plan, Score)> = None;
            for (next, s) in scored.into_iter().flatten() {
                if t.done() {
                    stop = StopReason::Budget;
                    break;
                }
                t.record(&next, s);
                if best
                    .as_ref()
                    .is_none_or(|(_, b)| s.dram_bytes < b.dram_bytes)
                {
                    best = Some((next, s));
                }
            }
            match best {
                Some((next, s)) if s.dram_bytes < score.dram_bytes => (plan, score) = (next, s),
                _ => break,
            }
        }
        if t.done() && stop == StopReason::Exhausted {
            stop = StopReason::Budget;
        }
        Ok(t.finish(stop, vec![]))
    }
}

/// The family of [`Reserved`] over a built-in model: the same reserve at every buffer. With
/// it the exact buffer sweep and the HTML report's sweep work for this crate's model as they
/// do for the built-ins (`fuselage_pipeline::sweep`, `Report::family`).
#[derive(Clone, Debug)]
pub struct ReservedFamily {
    inner: CostKind,
    reserve: u64,
    name: String,
}

impl ReservedFamily {
    /// [`Reserved`] over `inner`, `reserve` bytes taken at every buffer.
    pub fn new(inner: CostKind, reserve: u64) -> Self {
        ReservedFamily {
            inner,
            reserve,
            name: format!("reserved-{inner}"),
        }
    }
}

impl CostFamily for ReservedFamily {
    fn name(&self) -> &str {
        &self.name
    }

    fn at(&self, config: &CostConfig) -> Box<dyn CostModel> {
        Box::new(Reserved::new(self.inner.model(*config), self.reserve))
    }
}

/// The program's registry with the three components: `--fusion reserved-lbdf`,
/// `--explainer fan-out`, `--search greedy-merge`.
pub fn registry() -> Registry {
    Registry::default()
        .with_cost_family(
            "LBDF with 4 KiB of the buffer kept for the DMA engine",
            ReservedFamily::new(CostKind::Lbdf, 4096),
        )
        .with_explainer(
            "fan-out",
            "blames edges out of nodes read by several members",
            |_| Ok(Box::new(FanOut)),
        )
        .with_search(
            "greedy-merge",
            "merges neighbouring groups greedily, scored in parallel",
            || Box::new(GreedyMerge::default()),
        )
}
