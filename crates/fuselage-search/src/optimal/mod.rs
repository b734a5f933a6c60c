//! [`Optimal`]: an exact dynamic programme over contiguous plans of candidate orders.
//!
//! ## The family of plans it is optimal over
//!
//! Every valid plan is contiguous in *some* topological order: sort its (acyclic) graph of
//! groups topologically and list each group's nodes in order. Conversely, for one topological
//! order π, cutting π into consecutive segments and splitting each segment into its weakly
//! connected components always gives a plan (acyclic by construction). For a fixed π the best
//! such plan is found exactly by a dynamic programme over prefixes:
//!
//! ```text
//! best[0] = 0
//! best[j] = min over i < j of best[i] + Σ F_D(c) over the components c of π[i..j],
//!           provided every component is valid or an unfusable singleton
//! ```
//!
//! `Optimal` returns the best plan over the union of two families.
//!
//! **1. Every plan whose groups have at most `max_group` nodes (default 64).** Take the groups of
//! any valid plan in a topological order of its graph of groups: the nodes covered so far always
//! form a *down-set* (a set closed under predecessors). So the programme's states are the
//! down-sets reached so far, and a step adds one connected group `E` of at most `max_group`
//! nodes that keeps a down-set (valid, or an unfusable singleton):
//!
//! ```text
//! best[∅] = 0
//! best[D ∪ E] = min over D, E of best[D] + F_D(E)
//! ```
//!
//! This is exact over that whole family. Four things keep it fast on wide graphs, none of which
//! gives up exactness:
//! - **Connected steps, grown by closure.** The extensions of `D` are generated from a source of
//!   the rest by adding a consumer together with its uncovered ancestors, so only connected
//!   down-closed sets are ever built. (Adding any node with its components becoming groups, as
//!   this programme once did, visits every combination of branch prefixes of an Inception
//!   module; the components are steps of their own.)
//! - **Buffer floors.** An extension whose [`buffer_floor`](fuselage_cost::CostModel::buffer_floor)
//!   does not fit is not grown further: no group containing it can be valid.
//! - **A bound.** The order programmes (family 2) run first; a state whose cost plus what the
//!   rest must cost at least ([`Problem::remaining_bound`]: the traffic it must move, and for
//!   latency and energy the MACs it must do, with the weights the rest must stream again and
//!   the tensors it must cut, [`RestFloor`]) reaches their best plan is not extended, since
//!   no plan through it can beat that plan.
//! - **Bounded steps** (DRAM, a model that streams weights in tiles). An extension whose own
//!   floor ([`RestFloor::step`]: the tensors it must write and read, the tiles it must add)
//!   uses up the state's slack is not costed, only grown; one whose tile excess
//!   ([`RestFloor::excess`], which never falls as it grows) uses up the slack is not grown.
//!
//! The states of one size are expanded in parallel, each extension generation is costed in
//! parallel, and the results are merged in a fixed order, so the plan is the same whatever the
//! thread count.
//!
//! **Independent regions.** Cut the node order (topological) before node `i` wherever no
//! edge `u → w` with `u < i ≤ w` can lie inside an admissible group: its *span* (`u`, `w` and
//! every node on a path between them) has more than `max_group` nodes, or its
//! [buffer floor](fuselage_cost::CostModel::buffer_floor) does not fit. Then no group of the
//! family crosses the cut: a group is connected, so if it held nodes on both sides it would hold
//! an edge across; it is convex (a step keeps a down-set closed, so a path leaving the group
//! and coming back would leave a node uncovered below a covered one), so it would hold that
//! edge's span; and a valid group holds only spans that fit. A plan of the family is therefore
//! one plan per *region* (the nodes between two cuts), each group's value depends only on its
//! own nodes, and the family's optimum is the sum of the regions' optima
//! ([`independent_regions`]).
//!
//! Where there is more than one region, each region gets its own programme: an upper bound from
//! the candidate orders restricted to it (and the best order plan's groups in it), then the
//! down-set programme from the state that covers everything outside it, pruned by that
//! region's bound alone (the rest floor's spans then lie inside one region, so that what the
//! floor charges a region its plan pays). The point is the bound: a state of the whole-graph
//! programme carries the slack of every layer still ahead, a state of a region only its
//! region's. A region that is another's shift (a repeated layer: same ops, shapes, weights,
//! reads, consumers and floors, checked node by node) has the same programme, so only the
//! first of each kind is solved and the others get its plan shifted. The kinds run in
//! parallel and the plans are concatenated in order. The result is the whole-graph
//! programme's: a region that finds nothing below its bound runs again with the slack left
//! (see `plan_regions`), and a mix of order plans and down-set plans across regions is never
//! returned, so the family stays the one documented above.
//!
//! On the decoders the two attention MatMuls read a whole `seq`-row tensor that no group that
//! fits holds together with a neighbour, so every layer is cut four times: Llama 3.2 1B has
//! 65 regions (per layer each MatMul alone, the scale–mask–softmax between them, and the 55
//! nodes from the attention output to the next layer's key transpose), which repeat from layer
//! to layer. There the programme costs 0.29 million sets in 0.5 s at BRR 128 KiB, where
//! the whole graph cost 1.56 million in 3.8 s (see `docs/optimal.md`). A graph without such
//! cuts (Inception-v3 at 2 MiB, where some group that fits holds any one edge) is one
//! region; there the bottlenecks below do the work.
//!
//! **Bottlenecks.** A node `c` is a *bottleneck* of the rest when every other node of the rest
//! is its ancestor or its descendant, and its descendants read nothing but `c` and each other
//! (an Inception module's concat, a residual block's Add, any node of a chain; see
//! [`bottleneck_nodes`]). A group with nodes on both sides holds `c` (it is connected, and
//! every edge across leaves `c`), so it is a *tail* `P`, the part of `before` (the start
//! and `c`'s ancestors) outside some state `D ⊆ before`, with a *head* `E`: `c` and a
//! connected down-closed part of its descendants. Grown from each state, every (tail, head)
//! pair is an extension of its own: on Inception-v3 at 2 MiB 3.03 of the 3.16 million
//! extensions held a bottleneck and nodes before it. But the two sides share no tensor (the
//! head reads only `c` and itself), so `I + O + W` of `P ∪ E` is that of `P ∪ {c}` plus that
//! of `E` less that of `{c}`: LBDF's `F_D` exactly, and a floor on BRR's, to which each side
//! adds its own weights' rereads and tile excess ([`RestFloor::weights_beyond`]). So the
//! programme *joins* at `c` once every state inside `before` is expanded: it lists the
//! tails once, sorted by `best[D]` plus their part of that floor, and for each head walks
//! them until the floor reaches the best step found, costing only the pairs that can still
//! win. Each head gets its best tail, exactly. A group across several bottlenecks is made at
//! the last one it holds a tail of, and the programme grows no set that holds a bottleneck
//! together with a producer of it outside the state, so every group of the family is reached
//! once. Objectives
//! other than DRAM walk by `best[D]` alone (a group's value is never negative). The optimum
//! is the programme's without joins ([`Optimal::join_bottlenecks`] off, which the tests
//! compare); where two tails tie, the first in the walk stays, so a plan of equal value may
//! differ.
//!
//! **Repeated layers inside a region.** Where a group is another's shift, node for node
//! (`shift.rs`: the same ops, shapes, weights and row reads, consumers inside and outside
//! alike, and what it reads from outside alike in shape and rows), every model gives it the
//! same answer, as the repeated regions above assume. So the joins, the down-set
//! programme's extensions and the order programmes keep the answers they get (values, and
//! whether a larger group might fit), keyed by the group's form, and take them for its
//! shifts: a transformer region's joins cost the (tail, head) pairs of its first layer, and
//! find the others' there. This removes model calls, not sets: the sets costed are counted
//! as before. It is done for a model that says looking up is cheaper than asking it
//! ([`CostModel::costly`](fuselage_cost::CostModel::costly): `tiled`), and not for LBDF.
//!
//! **Where it could still be slow.** The family holds every connected group of up to
//! `max_group` nodes that fits. With the joins, every input in `docs/optimal.md` (the zoo at
//! 128 KiB and 2 MiB under both models, GPT-2 at 12 layers and 1,024 tokens) finishes in
//! under 1.2 s on two cores, Inception-v3 at 2 MiB in about 1.0–1.2 s with 0.62–0.65 million
//! sets costed. A wide graph with neither regions nor bottlenecks would still cost its
//! extensions one by one. [`Budget::with_time_limit`] makes the programme an anytime solver
//! that returns the best plan so far with a proven lower bound on the optimum
//! ([`SearchResult::lower_bound`]): stopped during the orders, the whole graph's rest bound
//! with spans longer than either family's groups; stopped in the down-set programme, the
//! least `best[D]` plus the rest bound over the states still waiting (every plan of the
//! first family that beats the best order plan passes through one of them; the states a
//! bottleneck not yet joined would extend wait too), or the best order plan; with regions,
//! the sum of the regions' floors or the whole graph's rest bound, whichever is higher.
//!
//! **2. Larger groups, along candidate orders.** For one topological order π, the best plan whose
//! groups are the components of consecutive segments of π (at most `max_segment` nodes, default
//! 160) comes from the prefix programme above, run over:
//! - the graph's own node order (the ONNX file's order for an import);
//! - two depth-first orders (Kahn's algorithm with a stack, consumers pushed in order and in
//!   reverse), which finish one branch before starting the next;
//! - `random_orders` random topological orders from the seed;
//! - any orders given with [`Optimal::with_orders`] (for instance [`order_of_plan`] of a plan).
//!
//! A segment starting at `π[i]` is extended while it is at most `max_segment` long and has not
//! been inadmissible for `patience` consecutive lengths.
//!
//! So, exactly: no plan whose groups all have at most `max_group` nodes, and no plan contiguous
//! in a candidate order within the segment limits above, moves less DRAM than the result.
//!
//! **Objectives.** Both programmes sum a group value, so they are exact for every additive
//! [`Objective`](fuselage_cost::Objective) of the problem: DRAM bytes (above), latency cycles
//! or energy (each group's value on the problem's accelerator). EDP is a product of two sums
//! and has no such programme: for it `Optimal` runs the latency and the energy programmes and
//! returns the one of the two plans with the smaller EDP. That plan is not proven optimal; the
//! product of the two optima is a proven lower bound (no plan is faster than the first or
//! cheaper than the second), which [`Optimal::edp_bound`] gives.
//!
//! **Files.** `orders.rs` holds family 2 (the candidate orders and their programme);
//! `downsets.rs` family 1, whose connected steps `net.rs` grows; `joins.rs` the bottlenecks
//! and their joins; `regions.rs` the independent regions and the repeated ones; `objectives.rs`
//! EDP; `shift.rs` the groups that are each other's shift and the memo of their answers;
//! `common.rs` the rest bound they share. Each piece's unit tests stand beside it.
//!
//! Complexity: family 1 costs O(states · connected extensions that cross no bottleneck) plus,
//! per bottleneck, O(tails + heads + the tails walked) cost-model calls, family 2
//! O(orders · n · max_segment); both go through the problem's (cached) model. A segment whose
//! component's buffer floor does not fit ends the extension of its start at once.

mod common;
mod downsets;
mod joins;
mod net;
mod objectives;
mod orders;
mod regions;
mod shift;
#[cfg(test)]
mod testing;

pub use joins::bottleneck_nodes;
pub use orders::{depth_first_order, order_of_plan};
pub use regions::independent_regions;

use crate::bound::RestFloor;
use crate::error::Result;
use crate::problem::{Problem, Score};
use crate::strategy::{Budget, SearchResult, SearchStrategy, StopReason};
use common::rest_bound;
use downsets::{DownsetProgramme, Downsets};
use fuselage_ir::{Graph, NodeId, NodeSet, Plan};
use objectives::keep_better;
use orders::OrderProgramme;
use regions::FirstFamily;

/// How long the floor a run stopped in its order programmes proves may take past the time
/// limit ([`RestFloor::of_by`]): tens of milliseconds on a Llama, minutes on a chain of tens
/// of thousands of nodes, which then proves the compulsory bound alone.
pub const FLOOR_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The exact optimiser over contiguous plans (see the module docs for the family).
#[derive(Clone, Debug)]
pub struct Optimal {
    /// Largest group of the exact down-set programme (default 64).
    pub max_group: usize,
    /// Longest segment of the order programmes (default 160).
    pub max_segment: usize,
    /// Consecutive inadmissible segment lengths after which a start gives up (default 48).
    pub patience: usize,
    /// Random topological orders tried besides the structured ones (default 4).
    pub random_orders: usize,
    /// Whether the down-set programme joins the groups that cross a bottleneck (default
    /// true; see "Bottlenecks" in the module docs). Off, every such group is an extension of
    /// its own; the optimum is the same, which the tests check.
    pub join_bottlenecks: bool,
    extra: Vec<Vec<NodeId>>,
}

impl Default for Optimal {
    fn default() -> Self {
        Optimal {
            max_group: 64,
            max_segment: 160,
            patience: 48,
            random_orders: 4,
            join_bottlenecks: true,
            extra: Vec::new(),
        }
    }
}

impl Optimal {
    /// Adds candidate orders (each must be a topological order of the graph).
    pub fn with_orders(mut self, orders: impl IntoIterator<Item = Vec<NodeId>>) -> Self {
        self.extra.extend(orders);
        self
    }

    /// The exact best contiguous plan of one order, and the number of segments costed.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn best_for_order(&self, p: &Problem<'_>, order: &[NodeId]) -> Result<(Plan, u64, u64)> {
        let (plan, cost, costed, _) = self.order_programme().run(p, order, None)?;
        Ok((plan, cost, costed))
    }

    /// The candidate orders for `g`, in the order they are tried.
    pub fn candidate_orders(&self, g: &Graph, seed: u64) -> Vec<Vec<NodeId>> {
        orders::candidate_orders(g, seed, self.random_orders, &self.extra)
    }

    /// The exact best plan over all plans whose groups have at most `max_group` nodes (family 1
    /// of the module docs): a dynamic programme whose states are down-sets. Returns the plan,
    /// its objective value and the number of extensions costed.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn best_over_downsets(&self, p: &Problem<'_>) -> Result<(Plan, u64, u64)> {
        self.downset_programme().best(p)
    }

    /// The order programme with this optimiser's limits.
    fn order_programme(&self) -> OrderProgramme {
        OrderProgramme {
            max_segment: self.max_segment,
            patience: self.patience,
        }
    }

    /// The down-set programme with this optimiser's settings.
    fn downset_programme(&self) -> DownsetProgramme {
        DownsetProgramme {
            max_group: self.max_group,
            join_bottlenecks: self.join_bottlenecks,
        }
    }
}

impl SearchStrategy for Optimal {
    fn name(&self) -> &str {
        "optimal"
    }

    /// Runs both programmes (see the module docs) and returns the better plan: the order
    /// programmes first, then the down-set programme bounded by their best plan. The budget's
    /// evaluations are not consumed (the work is fixed by the families); `evaluations` counts
    /// the candidate sets costed, and the history holds the best DRAM after each order and
    /// after the down-set programme.
    ///
    /// With a time limit ([`Budget::with_time_limit`]) it is an anytime solver: the order
    /// programmes stop between orders, the down-set programme is given up when the limit
    /// passes, and the best plan so far comes back with [`StopReason::TimeLimit`] (not
    /// proven). Every order, the first (the graph's own) included, stops at the limit; the
    /// first's best plan of the prefix it reached, completed in singletons, always comes back,
    /// so a whole plan does on any graph. The floor then proven is given [`FLOOR_GRACE`].
    fn run(&self, p: &Problem<'_>, budget: &Budget<'_>, seed: u64) -> Result<SearchResult> {
        if !p.objective().is_additive() {
            return self.run_edp(p, budget, seed).map(|(result, _)| result);
        }
        self.run_additive(p, budget, seed)
    }
}

impl Optimal {
    /// EDP (see the module docs): the exact latency and energy optima, the one of smaller EDP
    /// first, and the proven lower bound `latency* × energy*` when both programmes finished
    /// ([`objectives::run_edp`]).
    fn run_edp(
        &self,
        p: &Problem<'_>,
        budget: &Budget<'_>,
        seed: u64,
    ) -> Result<(SearchResult, Option<u128>)> {
        objectives::run_edp(p, |q| self.run_additive(q, budget, seed))
    }

    /// The proven EDP lower bound of `p` (see the module docs): the exact latency optimum
    /// times the exact energy optimum, or `None` when `budget` cut either programme short.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn edp_bound(
        &self,
        p: &Problem<'_>,
        budget: &Budget<'_>,
        seed: u64,
    ) -> Result<Option<u128>> {
        Ok(self.run_edp(p, budget, seed)?.1)
    }

    fn run_additive(
        &self,
        p: &Problem<'_>,
        budget: &Budget<'_>,
        seed: u64,
    ) -> Result<SearchResult> {
        use rayon::prelude::*;
        let g = p.graph();
        let orders = self.candidate_orders(g, seed);
        let order_programme = self.order_programme();
        let steps = orders.len() as u64 + 1;
        let mut stop = StopReason::Exhausted;
        let mut evaluations = 0;
        let mut best: Option<(Plan, Score)> = None;
        let mut history = Vec::new();
        // The orders run in parallel and are compared in their own order: the same plan comes
        // back whatever the thread count. Past the time limit an order is skipped or given up
        // (the first is completed in singletons from where it stopped).
        let done = std::sync::atomic::AtomicU64::new(0);
        // The orders share the answers of their segments' components (and their shifts), and
        // hand them to the down-set programme.
        let memo = shift::Memo::new(p);
        let first_cut = std::sync::atomic::AtomicBool::new(false);
        let results: Vec<Result<Option<(Plan, u64)>>> = orders
            .par_iter()
            .enumerate()
            .map(|(k, order)| {
                if k > 0 && budget.expired() {
                    return Ok(None);
                }
                let (plan, _, costed, complete) =
                    order_programme.run_with(p, order, Some(budget), &memo)?;
                let finished = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                budget.report((finished * budget.evaluations()) / steps);
                // An order cut short is dropped, except the first: its prefix, completed in
                // singletons, is the plan that always comes back.
                if !complete {
                    if k > 0 {
                        return Ok(None);
                    }
                    first_cut.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                Ok(Some((plan, costed)))
            })
            .collect();
        if first_cut.into_inner() {
            stop = budget.cut_short();
        }
        for result in results {
            let Some((plan, costed)) = result? else {
                stop = budget.cut_short();
                continue;
            };
            evaluations += costed;
            keep_better(p, &mut best, plan)?;
            if let Some((_, s)) = &best {
                history.push(s.capped_cost());
            }
        }
        let none = NodeSet::new(g.len());
        // What no plan of either family beats (`u64::MAX`: the plan is optimal).
        let proven;
        if stop == StopReason::Exhausted {
            let upper = best.as_ref().map_or(u64::MAX, |(_, s)| s.capped_cost());
            let regions = if upper == u64::MAX {
                Vec::new()
            } else {
                independent_regions(p, self.max_group.max(1))?
            };
            let first = if regions.len() > 1 {
                let upper_plan = best
                    .as_ref()
                    .map(|(plan, _)| plan.clone())
                    .unwrap_or_default();
                regions::plan_regions(
                    p,
                    (budget, &memo),
                    &orders,
                    &regions,
                    (&upper_plan, upper),
                    order_programme,
                    self.downset_programme(),
                )?
            } else {
                let floor = if upper == u64::MAX {
                    RestFloor::default()
                } else {
                    RestFloor::of(p, self.max_group.max(1))?
                };
                match self
                    .downset_programme()
                    .until(p, budget, upper, &floor, (&none, &memo))?
                {
                    Downsets::Found(plan, _, costed) => FirstFamily::Found(plan, costed),
                    Downsets::NoneBelow(costed) => FirstFamily::NoneBelow(costed),
                    // The first family pays at least the whole graph's rest bound too.
                    Downsets::GaveUp(least) => {
                        FirstFamily::GaveUp(least.max(rest_bound(p, &floor, &none).0))
                    }
                }
            };
            // The best order plan is the second family's optimum.
            proven = match first {
                FirstFamily::Found(plan, costed) => {
                    evaluations += costed;
                    keep_better(p, &mut best, plan)?;
                    u64::MAX
                }
                FirstFamily::NoneBelow(costed) => {
                    evaluations += costed;
                    u64::MAX
                }
                FirstFamily::GaveUp(floor) => {
                    stop = budget.cut_short();
                    floor.min(upper)
                }
            };
            if let Some((_, s)) = &best {
                history.push(s.capped_cost());
            }
        } else {
            // Not every order ran, so the second family's optimum is unknown: a floor that
            // every plan of both families pays, whose spans no group of either holds (tens of
            // milliseconds past the limit on a Llama).
            // The floor gets `FLOOR_GRACE` of its own; past it (a graph of tens of thousands
            // of nodes) the compulsory bound alone.
            let reach = self.max_group.max(self.max_segment).max(1);
            let floor = RestFloor::of_by(p, reach, std::time::Instant::now() + FLOOR_GRACE)?;
            proven = rest_bound(p, &floor, &none).0;
        }
        budget.report(budget.evaluations());
        let (plan, score) = match best {
            Some(best) => best,
            // No order at all (an empty graph): the empty plan.
            None => {
                let plan = Plan::default();
                let score = p.score(&plan)?;
                (plan, score)
            }
        };
        let lower_bound = Some(u128::from(proven).min(score.cost));
        Ok(SearchResult {
            plan,
            score,
            evaluations,
            history,
            stop,
            front: Vec::new(),
            lower_bound,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{chain, groups, layers, plan, two_branches, with_problem};
    use super::*;
    use fuselage_cost::{CostKind, Objective};
    use std::sync::atomic::AtomicBool;

    fn run(o: &Optimal, p: &Problem<'_>) -> SearchResult {
        o.run(p, &Budget::new(1).unwrap(), 0).unwrap()
    }

    #[test]
    fn a_run_over_independent_regions_proves_its_plan_optimal() {
        // Under 1 KiB the layers cut into five regions (see regions.rs); the plan fuses
        // each Relu with its Sigmoid and leaves the convs and the head alone.
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            let r = run(&Optimal::default(), p);
            assert_eq!(
                groups(&r.plan),
                [vec![0, 1], vec![2], vec![3, 4], vec![5], vec![6]]
            );
            assert_eq!(r.score.dram_bytes, 14880);
            assert_eq!(
                (r.stop, r.lower_bound),
                (StopReason::Exhausted, Some(14880))
            );
            assert_eq!(r.history.last(), Some(&14880));
        });
    }

    #[test]
    fn a_run_returns_the_better_of_the_two_families() {
        // At 128 bytes the best plan fuses each branch (2,304 bytes); every node alone
        // moves 3,328. Groups of one leave it to the orders, segments of one to the
        // down-sets; with both at one, every node stays alone.
        let g = two_branches();
        with_problem(&g, CostKind::Lbdf, 128, |p| {
            for (max_group, max_segment, dram) in
                [(64, 160, 2304), (1, 2, 2304), (2, 1, 2304), (1, 1, 3328)]
            {
                let o = Optimal {
                    max_group,
                    max_segment,
                    ..Optimal::default()
                };
                let r = run(&o, p);
                assert_eq!(r.score.dram_bytes, dram, "{max_group}, {max_segment}");
                assert_eq!(r.lower_bound, Some(u128::from(dram)));
            }
        });
    }

    #[test]
    fn the_candidates_take_the_random_and_the_given_orders() {
        let g = two_branches();
        let given = order_of_plan(&g, &plan(&g, &[&[0], &[1, 3], &[2, 4], &[5]]));
        let three = Optimal {
            random_orders: 0,
            ..Optimal::default()
        };
        assert_eq!(three.candidate_orders(&g, 0).len(), 3);
        let four = three.with_orders([given.clone()]).candidate_orders(&g, 0);
        assert_eq!(four.len(), 4);
        assert_eq!(four.last(), Some(&given));
        // Random orders between the structured ones and the given one, from the seed.
        let o = Optimal::default().with_orders([given.clone()]);
        let orders = o.candidate_orders(&g, 5);
        assert_eq!(orders.last(), Some(&given));
        assert_eq!(orders, o.candidate_orders(&g, 5));
        assert!(orders.len() > 4);
    }

    #[test]
    fn a_stopped_run_returns_every_node_alone_and_a_floor() {
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            let stop = AtomicBool::new(true);
            let budget = Budget::new(1).unwrap().with_stop(&stop);
            let r = Optimal::default().run(p, &budget, 0).unwrap();
            assert_eq!(r.plan, Plan::singletons(&g));
            assert_eq!(r.stop, StopReason::Interrupted);
            let floor = r.lower_bound.unwrap();
            assert!(floor <= 14880 && floor < r.score.cost, "{floor}");
        });
    }

    #[test]
    fn the_edp_bound_is_the_latency_optimum_times_the_energy_optimum() {
        let g = chain(4);
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let o = Optimal::default();
            let latency = run(&o, &p.sibling(Objective::Latency)).score.latency_cycles;
            let energy = run(&o, &p.sibling(Objective::Energy)).score.energy_fj;
            let edp = p.sibling(Objective::Edp);
            let budget = Budget::new(1).unwrap();
            assert_eq!(
                o.edp_bound(&edp, &budget, 0).unwrap(),
                Some(u128::from(latency) * u128::from(energy))
            );
            // The fused chain is both fastest and most frugal: its EDP is the bound.
            let r = run(&o, &edp);
            assert_eq!(groups(&r.plan), [vec![0, 1, 2, 3]]);
            assert_eq!(Some(r.score.cost), o.edp_bound(&edp, &budget, 0).unwrap());
        });
    }
}
