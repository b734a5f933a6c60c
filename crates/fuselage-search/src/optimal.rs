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
//! [`Objective`] of the problem: DRAM bytes (above), latency cycles or energy (each group's
//! value on the problem's accelerator). EDP is a product of two sums and has no such
//! programme: for it `Optimal` runs the latency and the energy programmes and returns the
//! one of the two plans with the smaller EDP. That plan is not proven optimal; the product of
//! the two optima is a proven lower bound (no plan is faster than the first or cheaper than
//! the second), which [`Optimal::edp_bound`] gives.
//!
//! Complexity: family 1 costs O(states · connected extensions that cross no bottleneck) plus,
//! per bottleneck, O(tails + heads + the tails walked) cost-model calls, family 2
//! O(orders · n · max_segment); both go through the problem's (cached) model. A segment whose
//! component's buffer floor does not fit ends the extension of its start at once.

use crate::bound::RestFloor;
use crate::error::{Result, SearchError};
use crate::problem::{Problem, Score};
use crate::strategy::{Budget, SearchResult, SearchStrategy, StopReason};
use fuselage_cost::Objective;
use fuselage_ir::sample::{components, random_topological_order};
use fuselage_ir::{Graph, NodeId, NodeSet, Plan, Source};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

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

/// Kahn's algorithm with a stack: the most recently enabled node goes next, so one branch is
/// finished before the next starts. `reverse` pushes consumers in reverse order.
pub fn depth_first_order(g: &Graph, reverse: bool) -> Vec<NodeId> {
    let mut indeg = g.in_degrees();
    let mut stack: Vec<NodeId> = g
        .node_ids()
        .rev()
        .filter(|v| indeg[v.index()] == 0)
        .collect();
    let mut order = Vec::with_capacity(g.len());
    while let Some(v) = stack.pop() {
        order.push(v);
        let mut ready: Vec<NodeId> = Vec::new();
        for &(c, _) in g.consumers(v) {
            indeg[c.index()] -= 1;
            if indeg[c.index()] == 0 {
                ready.push(c);
            }
        }
        ready.dedup();
        if !reverse {
            ready.reverse();
        }
        stack.extend(ready);
    }
    order
}

/// A topological order in which every group of `plan` (an acyclic plan) is contiguous: groups
/// in [`PlanGraph::topological_order`](fuselage_ir::PlanGraph::topological_order) (the smallest ready group first), each group's nodes in
/// id order. Empty when the plan's graph of groups is cyclic.
pub fn order_of_plan(g: &Graph, plan: &Plan) -> Vec<NodeId> {
    let order = plan.graph(g).topological_order().unwrap_or_default();
    let mut nodes = Vec::with_capacity(g.len());
    for x in order {
        nodes.extend(plan.groups[x.index()].iter());
    }
    nodes
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
        let (plan, cost, costed, _) = self.order_programme(p, order, None)?;
        Ok((plan, cost, costed))
    }

    /// [`best_for_order`](Self::best_for_order), given up when `budget` expires: the plan is
    /// then the best one of the prefix the programme reached, and the rest of the order in
    /// singletons (a complete plan, not the order's best), with `false` for "not finished".
    /// The programme's work grows with the graph's size times its segments, so on a large
    /// graph even one order can outlast a time limit.
    fn order_programme(
        &self,
        p: &Problem<'_>,
        order: &[NodeId],
        budget: Option<&Budget<'_>>,
    ) -> Result<(Plan, u64, u64, bool)> {
        let g = p.graph();
        let n = order.len();
        let mut best = vec![u64::MAX; n + 1];
        let mut from = vec![0usize; n + 1];
        best[0] = 0;
        let mut costed = 0u64;
        // Where the programme stopped: every `best[x]` with `x <= reached` is final.
        let mut reached = n;
        for i in 0..n {
            if budget.is_some_and(Budget::expired) {
                reached = i;
                break;
            }
            if best[i] == u64::MAX {
                continue;
            }
            let mut segment = NodeSet::new(g.len());
            let mut misses = 0;
            for j in i..n.min(i + self.max_segment.max(1)) {
                segment.insert(order[j]);
                costed += 1;
                match segment_cost(p, &segment)? {
                    Segment::Fits(c) => {
                        misses = 0;
                        let through = best[i].saturating_add(c);
                        if through < best[j + 1] {
                            best[j + 1] = through;
                            from[j + 1] = i;
                        }
                    }
                    Segment::Inadmissible { dead: true } => break,
                    Segment::Inadmissible { dead: false } => {
                        misses += 1;
                        if misses >= self.patience.max(1) {
                            break;
                        }
                    }
                }
            }
        }
        let mut groups = Vec::new();
        let finished = reached == n;
        // Cut short: the best plan of the longest prefix reached, then singletons.
        let mut j = (0..=reached)
            .rev()
            .find(|&x| best[x] != u64::MAX)
            .unwrap_or(0);
        for &v in order[j..].iter().rev() {
            groups.push(NodeSet::singleton(g.len(), v));
        }
        while j > 0 {
            let i = from[j];
            let seg = NodeSet::from_ids(g.len(), order[i..j].iter().copied());
            groups.extend(components(g, &seg));
            j = i;
        }
        groups.reverse();
        Ok((Plan::new(groups), best[n], costed, finished))
    }

    /// The candidate orders for `g`, in the order they are tried.
    pub fn candidate_orders(&self, g: &Graph, seed: u64) -> Vec<Vec<NodeId>> {
        let mut orders = vec![
            g.node_ids().collect::<Vec<_>>(),
            depth_first_order(g, false),
            depth_first_order(g, true),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..self.random_orders {
            orders.push(random_topological_order(g, &mut rng));
        }
        orders.extend(self.extra.iter().cloned());
        orders.dedup();
        orders
    }
}

impl Optimal {
    /// The exact best plan over all plans whose groups have at most `max_group` nodes (family 1
    /// of the module docs): a dynamic programme whose states are down-sets. Returns the plan,
    /// its objective value and the number of extensions costed.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn best_over_downsets(&self, p: &Problem<'_>) -> Result<(Plan, u64, u64)> {
        // Without a limit or a bound the programme always completes with a plan.
        let unlimited = Budget::new(1)?;
        Ok(
            match self.downsets_until(
                p,
                &unlimited,
                u64::MAX,
                &RestFloor::default(),
                &NodeSet::new(p.graph().len()),
            )? {
                Downsets::Found(plan, cost, costed) => (plan, cost, costed),
                Downsets::NoneBelow(costed) => (Plan::default(), u64::MAX, costed),
                Downsets::GaveUp(_) => (Plan::default(), u64::MAX, 0),
            },
        )
    }

    /// [`Optimal::best_over_downsets`] from the down-set `start` (nothing, for the whole graph;
    /// everything outside a region, for one of the independent regions, whose plan is then
    /// the groups added), given up when `budget` expires (its time limit or its stop flag),
    /// looking only for plans that move less than `upper` bytes.
    ///
    /// **Bound.** A state `D` is not extended when `best[D]` plus the traffic the rest must
    /// move ([`rest_bound`]: [`remaining_lower_bound`] and `floor`'s [`RestFloor::rest`])
    /// already reaches `upper`: every plan through `D` costs at least that; nor is a step whose
    /// floor reaches it (see [`Slack`]). With `upper` the best order plan, this leaves the
    /// programme exact: a plan of the family that beats `upper` passes only through states
    /// below the bound.
    ///
    /// **Given up.** States are expanded by size, so when the budget expires every plan of
    /// the family that beats `upper` enters, at its first step past the expanded states, a
    /// state still waiting, reached at no more than `best` of it (the expanded states kept
    /// every step that could beat `upper`). So the family's optimum is at least the least
    /// `best[D] + rest_bound(D)` over the waiting states, or `upper`:
    /// [`Downsets::GaveUp`] carries that proven lower bound.
    ///
    /// A step adds one *connected* group `E` to the down-set `D`, with `D ∪ E` again a
    /// down-set. Such extensions are generated without visiting any other set: start from a
    /// source of the rest of the graph and repeatedly add a consumer `w` of `E` together with
    /// the not-yet-covered ancestors of `w` (its closure). Every connected extension is reached
    /// this way: if `E` is one and `E₀ ⊂ E` is a connected down-closed part, some node `w` of
    /// `E` outside `E₀` touches `E₀`, it must be a consumer (producers of `E₀` are covered),
    /// and its closure lies inside `E`. A disconnected extension is never needed: its
    /// components are steps of their own. On an Inception module with four branches this visits
    /// a few extensions per state instead of every combination of branch prefixes.
    ///
    /// **Joined.** The extensions that hold a bottleneck and nodes before it are not grown
    /// from each state but made once per bottleneck, from the best tail for each head
    /// (`Optimal::join`, "Bottlenecks" in the module docs).
    fn downsets_until(
        &self,
        p: &Problem<'_>,
        budget: &Budget<'_>,
        upper: u64,
        floor: &RestFloor,
        start: &NodeSet,
    ) -> Result<Downsets> {
        use rayon::prelude::*;
        use std::collections::BTreeMap;
        let g = p.graph();
        let n = g.len();
        let necks = if self.join_bottlenecks && self.max_group >= 2 {
            bottlenecks(p, start)
        } else {
            Vec::new()
        };
        let net = Net::of(g, &necks);
        let max_group = self.max_group.max(1);
        // The next bottleneck to join (they are in order, each one's `before` inside the next).
        let mut joined = 0;
        // best[D] = (cost of covering D, the down-set D came from).
        let mut best: FxMap<NodeSet, (u64, NodeSet)> = FxMap::default();
        best.insert(start.clone(), (0, start.clone()));
        let mut by_size: BTreeMap<usize, Vec<NodeSet>> = BTreeMap::new();
        by_size.entry(start.len()).or_default().push(start.clone());
        let mut costed = 0u64;
        let out_of_time = || budget.expired();
        // States of one size do not lead to each other: they are expanded in parallel, and
        // their extensions merged in the layer's order, so the result is the same whatever the
        // thread count.
        loop {
            let next_size = by_size.keys().next().copied();
            if out_of_time() && (next_size.is_some() || joined < necks.len()) {
                // Every state not yet expanded waits, and so does every state a bottleneck
                // still to be joined would extend (one it has a tail of): the groups across
                // it are not generated yet.
                let pending = |d: &NodeSet| {
                    necks[joined..]
                        .iter()
                        .any(|neck| neck.has_tail(d, max_group))
                };
                let least = best
                    .par_iter()
                    .filter(|(d, _)| next_size.is_some_and(|s| d.len() >= s) || pending(d))
                    .map(|(d, (base, _))| base.saturating_add(rest_bound(p, floor, d).0))
                    .min()
                    .unwrap_or(u64::MAX);
                return Ok(Downsets::GaveUp(least.min(upper)));
            }
            // A bottleneck is joined once every state inside its `before` is expanded (they
            // are all smaller than it); the states it reaches are all larger.
            if let Some(neck) = necks
                .get(joined)
                .filter(|neck| next_size.is_none_or(|s| s > neck.before.len()))
            {
                // Given up when the budget expires: the loop then stops with its states
                // still waiting.
                let Some(found) = self.join(p, &net, &best, neck, (upper, budget), floor)? else {
                    continue;
                };
                costed += found.costed;
                for (next, total, from) in found.steps {
                    keep_step(&mut best, &mut by_size, next, total, from);
                }
                joined += 1;
                continue;
            }
            let Some(size) = next_size else {
                break;
            };
            let layer = by_size.remove(&size).unwrap_or_default();
            let expanded: Vec<Result<Expansion>> = layer
                .par_iter()
                .map(|d| {
                    let base = best[d].0;
                    let mut slack = None;
                    if upper != u64::MAX {
                        let (rest, cuts) = rest_bound(p, floor, d);
                        if base.saturating_add(rest) >= upper {
                            return Ok(Expansion::default());
                        }
                        if p.objective() == Objective::Dram && floor.streams() {
                            // The DRAM bound is a sum: the rest's without its cuts, and the
                            // cuts no group added next can hold the start of.
                            let grow =
                                (rest - cuts).saturating_add(floor.far_cuts(d, self.max_group));
                            slack = Some(Slack {
                                step: upper - base - rest,
                                grow: upper.saturating_sub(base.saturating_add(grow)),
                                floor,
                            });
                        }
                    }
                    self.expand(p, &net, d, base, upper, slack)
                })
                .collect();
            for (d, found) in layer.iter().zip(expanded) {
                let found = found?;
                costed += found.costed;
                for (next, total) in found.steps {
                    keep_step(&mut best, &mut by_size, next, total, d.clone());
                }
            }
        }
        let Some(&(cost, _)) = best.get(&NodeSet::full(n)) else {
            return Ok(Downsets::NoneBelow(costed));
        };
        let mut groups = Vec::new();
        let mut cur = NodeSet::full(n);
        while cur != *start {
            let prev = best[&cur].1.clone();
            groups.push(cur.difference(&prev));
            cur = prev;
        }
        groups.reverse();
        Ok(Downsets::Found(Plan::new(groups), cost, costed))
    }

    /// Every admissible connected extension `E` of the down-set `d` (see
    /// [`Optimal::best_over_downsets`]), as `(d ∪ E, base + F_D(E))` below `upper`.
    ///
    /// Extensions are grown breadth first, one node-closure at a time; each generation is
    /// costed in parallel, and the next one generated in order, so the result does not depend
    /// on the thread count.
    fn expand(
        &self,
        p: &Problem<'_>,
        net: &Net,
        d: &NodeSet,
        base: u64,
        upper: u64,
        slack: Option<Slack<'_>>,
    ) -> Result<Expansion> {
        use rayon::prelude::*;
        let g = p.graph();
        let max_group = self.max_group.max(1);
        let unfusable = p.unfusable();
        let mut out = Expansion::default();
        net.grow(d, max_group, |level| {
            out.costed += level.len() as u64;
            // Each extension's F_D (when admissible) and whether a larger one might fit.
            let costs: Vec<Result<(Option<u64>, bool)>> = level
                .par_iter()
                .map(|e| {
                    // The floors bound valid groups; an unfusable node alone is costed as is.
                    let alone =
                        e.is_singleton() && e.first().is_some_and(|v| unfusable.contains(v));
                    if let Some(slack) = slack.as_ref().filter(|_| !alone) {
                        // No group containing `e` leaves room: neither cost nor grow it.
                        if slack.floor.excess(e) >= slack.grow {
                            return Ok((None, false));
                        }
                        // This step cannot beat `upper`: grow it without costing it.
                        if slack.floor.step(g, d, e) >= slack.step {
                            return Ok((None, p.fits_somewhere(e)?));
                        }
                    }
                    let dram = p.admissible_value(e)?;
                    Ok((dram, dram.is_some() || p.fits_somewhere(e)?))
                })
                .collect();
            let mut grow = Vec::with_capacity(level.len());
            for (e, cost) in level.iter().zip(costs) {
                let (dram, fits) = cost?;
                if let Some(total) = dram
                    .map(|dram| base.saturating_add(dram))
                    .filter(|&t| t < upper)
                {
                    out.steps.push((d.union(e), total));
                }
                grow.push(fits);
            }
            Ok(grow)
        })?;
        Ok(out)
    }

    /// The groups across the bottleneck `neck` (see "Bottlenecks" in the module docs), as
    /// `(before ∪ E, best[D] + F_D(P ∪ E), D)`: for every head `E` (a connected extension of
    /// `before` that holds the bottleneck and no later one), the best tail `P = before − D`
    /// over the states `D` inside `before`, below `upper` and the rest bound. `None` when
    /// `budget` expired first.
    ///
    /// The tails are walked in increasing order of `best[D] + I + O + W` of `P` with the
    /// bottleneck, so that with the head's part (its `I + O + W` less the bottleneck's own)
    /// the key is `best[D]` plus `I + O + W` of `P ∪ E`, a lower bound on what the step
    /// costs (`F_D ≥ I + O + W`; other objectives use `best[D]` alone). Where the model
    /// streams weights, each side adds what its own weights must be read again
    /// ([`RestFloor::weights_beyond`], which only grows with the group). The walk stops at
    /// the first tail whose key reaches the best step found: every tail after it costs at
    /// least as much. Under LBDF, where `F_D = I + O + W`, the first admissible tail is the
    /// answer.
    fn join(
        &self,
        p: &Problem<'_>,
        net: &Net,
        best: &FxMap<NodeSet, (u64, NodeSet)>,
        neck: &Bottleneck,
        (upper, budget): (u64, &Budget<'_>),
        floor: &RestFloor,
    ) -> Result<Option<Joined>> {
        use rayon::prelude::*;
        let g = p.graph();
        let max_group = self.max_group.max(1);
        let dram = p.objective() == Objective::Dram;
        // I + O + W: what F_D is at least, with what the floor adds for some of the weights.
        let io = |group: &NodeSet, members: &NodeSet| -> Result<(u64, fuselage_cost::GroupCost)> {
            let (c, _) = p.admissible_cost(group)?;
            let io = c
                .input_bytes
                .saturating_add(c.output_bytes)
                .saturating_add(c.weight_bytes)
                .saturating_add(floor.weights_beyond(group, members));
            Ok((if dram { io } else { 0 }, c))
        };
        let single = NodeSet::singleton(g.len(), neck.node);
        let (alone, _) = io(&single, &NodeSet::new(g.len()))?;
        let mut states: Vec<(&NodeSet, u64)> = best
            .iter()
            .filter(|(d, _)| neck.has_tail(d, max_group))
            .map(|(d, &(base, _))| (d, base))
            .collect();
        states.sort();
        let tails: Vec<Result<Option<Tail>>> = states
            .par_iter()
            .map(|&(d, base)| {
                if upper != u64::MAX && base.saturating_add(rest_bound(p, floor, d).0) >= upper {
                    return Ok(None);
                }
                let mut part = neck.before.difference(d);
                let size = part.len();
                part.insert(neck.node);
                if !p.fits_somewhere(&part)? {
                    return Ok(None);
                }
                let (io, _) = io(&part, &part)?;
                Ok(Some(Tail {
                    key: i128::from(base) + i128::from(io),
                    base,
                    size,
                    from: d.clone(),
                    part,
                }))
            })
            .collect();
        let mut sorted = Vec::with_capacity(tails.len());
        for tail in tails {
            sorted.extend(tail?);
        }
        // The tails' own sets (with the bottleneck) were costed, those the bound left.
        let mut costed = sorted.len() as u64;
        // Stable: equal keys keep the states' order.
        sorted.sort_by_key(|t| t.key);
        let tails = sorted;
        let Some(smallest) = tails.iter().map(|t| t.size).min() else {
            return Ok(Some(Joined::default()));
        };
        // The heads: connected extensions of `before`, small enough to take a tail.
        let mut heads: Vec<(NodeSet, i128)> = Vec::new();
        net.grow(&neck.before, max_group - smallest, |level| {
            if budget.expired() {
                return Ok(vec![false; level.len()]);
            }
            costed += level.len() as u64;
            let costs: Vec<Result<(bool, u64)>> = level
                .par_iter()
                .map(|e| {
                    let (io, c) = io(e, &e.difference(&single))?;
                    Ok((c.valid || p.fits_somewhere(e)?, io))
                })
                .collect();
            let mut grow = Vec::with_capacity(level.len());
            for (e, cost) in level.iter().zip(costs) {
                let (fits, io) = cost?;
                if fits {
                    heads.push((e.clone(), i128::from(io) - i128::from(alone)));
                }
                grow.push(fits);
            }
            Ok(grow)
        })?;
        if budget.expired() {
            return Ok(None);
        }
        // Per head, its best step `(before ∪ E, cost, tail)` and the pairs costed; `None`
        // past the budget.
        type Walk = Option<(Option<(NodeSet, u64, usize)>, u64)>;
        let walked: Vec<Result<Walk>> = heads
            .par_iter()
            .map(|(e, part)| {
                if budget.expired() {
                    return Ok(None);
                }
                let next = neck.before.union(e);
                let mut limit = if upper == u64::MAX {
                    u64::MAX
                } else {
                    upper.saturating_sub(rest_bound(p, floor, &next).0)
                };
                let mut found = None;
                let mut evaluated = 0;
                for (k, tail) in tails.iter().enumerate() {
                    let key = tail.key + part;
                    if key >= i128::from(limit) {
                        break;
                    }
                    if tail.size + e.len() > max_group {
                        continue;
                    }
                    let group = tail.part.union(e);
                    evaluated += 1;
                    let (c, value) = p.admissible_cost(&group)?;
                    // The floor holds for valid groups (the tile floor's rereads and excess
                    // are what a valid group streams), the only ones a step can be.
                    if dram && c.valid && i128::from(c.dram_bytes) < key - i128::from(tail.base) {
                        return Err(SearchError::ModelContract {
                            model: p.model().name().to_string(),
                            nodes: group.len(),
                            dram: c.dram_bytes,
                            floor: u64::try_from(key - i128::from(tail.base)).unwrap_or(u64::MAX),
                        });
                    }
                    if let Some(value) = value {
                        let total = tail.base.saturating_add(value);
                        if total < limit {
                            limit = total;
                            found = Some((total, k));
                        }
                    }
                }
                Ok(Some((found.map(|(total, k)| (next, total, k)), evaluated)))
            })
            .collect();
        let mut out = Joined::default();
        for result in walked {
            let Some((found, evaluated)) = result? else {
                return Ok(None);
            };
            costed += evaluated;
            if let Some((next, total, k)) = found {
                out.steps.push((next, total, tails[k].from.clone()));
            }
        }
        out.costed = costed;
        Ok(Some(out))
    }
}

/// Records the step `from → next` at `total` when it is the first way to `next` or a cheaper
/// one (the first of equals stays); a new state waits in its size's layer.
fn keep_step(
    best: &mut FxMap<NodeSet, (u64, NodeSet)>,
    by_size: &mut std::collections::BTreeMap<usize, Vec<NodeSet>>,
    next: NodeSet,
    total: u64,
    from: NodeSet,
) {
    use std::collections::hash_map::Entry;
    match best.entry(next) {
        Entry::Occupied(mut o) => {
            if total < o.get().0 {
                o.insert((total, from));
            }
        }
        Entry::Vacant(v) => {
            let len = v.key().len();
            by_size.entry(len).or_default().push(v.key().clone());
            v.insert((total, from));
        }
    }
}

/// A node `c` of the rest such that every other node of the rest is its ancestor or its
/// descendant, and the descendants read nothing but `c` and each other (see "Bottlenecks"
/// in the module docs).
struct Bottleneck {
    /// The node.
    node: NodeId,
    /// The down-set of everything before it: the start and its ancestors.
    before: NodeSet,
}

impl Bottleneck {
    /// Whether the state `d` leaves a tail before it that a group of at most `max_group`
    /// nodes can hold with the bottleneck: `d` lies inside `before`, fewer than `max_group`
    /// nodes short of it.
    fn has_tail(&self, d: &NodeSet, max_group: usize) -> bool {
        d.len() < self.before.len()
            && self.before.len() - d.len() < max_group
            && d.is_subset(&self.before)
    }
}

/// The bottlenecks of the whole graph, in order (see "Bottlenecks" in the module docs): the
/// nodes every other node is an ancestor or a descendant of, whose descendants read nothing
/// but them and each other. The down-set programme joins the groups across each.
pub fn bottleneck_nodes(p: &Problem<'_>) -> Vec<NodeId> {
    bottlenecks(p, &NodeSet::new(p.graph().len()))
        .into_iter()
        .map(|neck| neck.node)
        .collect()
}

/// The bottlenecks of the rest of the graph once `start` is covered, in order (each one's
/// `before` inside the next one's). Unfusable nodes are left out: no group holds one with
/// anything else.
fn bottlenecks(p: &Problem<'_>, start: &NodeSet) -> Vec<Bottleneck> {
    let g = p.graph();
    let rest = NodeSet::full(g.len()).difference(start);
    let (anc, desc) = crate::bound::reach(g);
    let mut necks: Vec<Bottleneck> = rest
        .iter()
        .filter(|&c| !p.unfusable().contains(c))
        .filter(|&c| {
            let (up, down) = (&anc[c.index()], &desc[c.index()]);
            let after = down.intersection(&rest);
            up.intersection(&rest).len() + after.len() + 1 == rest.len()
                && after.iter().all(|v| {
                    g.node(v)
                        .inputs
                        .iter()
                        .all(|s| s.node().is_some_and(|u| u == c || after.contains(u)))
                })
        })
        .map(|c| Bottleneck {
            node: c,
            before: start.union(&anc[c.index()]),
        })
        .collect();
    necks.sort_by_key(|neck| neck.before.len());
    necks
}

/// A tail of a join: the state `from`, its cost, and the group `part` it leaves before the
/// bottleneck (bottleneck included; `size` nodes without it).
struct Tail {
    /// `best[from]` plus `I + O + W` of `part` (and its weights' rereads).
    key: i128,
    /// `best[from]`.
    base: u64,
    /// The tail's nodes, without the bottleneck.
    size: usize,
    /// The state it leaves.
    from: NodeSet,
    /// The tail with the bottleneck.
    part: NodeSet,
}

/// What joining one bottleneck found.
#[derive(Default)]
struct Joined {
    /// `(before ∪ E, cost, D)` for every head with a tail below the bound, in head order.
    steps: Vec<(NodeSet, u64, NodeSet)>,
    /// Sets costed.
    costed: u64,
}

type Fx = std::hash::BuildHasherDefault<fuselage_cost::FxHasher>;
type FxMap<K, V> = std::collections::HashMap<K, V, Fx>;
type FxSet<K> = std::collections::HashSet<K, Fx>;

/// Producers and (distinct) consumers of every node, by index, and the bottlenecks whose
/// crossing groups are joined rather than grown.
struct Net {
    preds: Vec<Vec<NodeId>>,
    succs: Vec<Vec<NodeId>>,
    necks: NodeSet,
}

impl Net {
    fn of(g: &Graph, necks: &[Bottleneck]) -> Net {
        Net {
            preds: g.node_ids().map(|v| g.producers(v).collect()).collect(),
            succs: g
                .node_ids()
                .map(|v| crate::bound::net_consumers(g, v))
                .collect(),
            necks: NodeSet::from_ids(g.len(), necks.iter().map(|neck| neck.node)),
        }
    }

    /// Generates the connected extensions of the down-set `d` of at most `limit` nodes, one
    /// generation at a time (see [`Optimal::best_over_downsets`]): `visit` gets each
    /// generation and says which of its sets may grow. A set that holds a bottleneck with a
    /// producer outside `d` is neither visited nor grown: it crosses the bottleneck, and the
    /// join makes those groups.
    fn grow(
        &self,
        d: &NodeSet,
        limit: usize,
        mut visit: impl FnMut(&[NodeSet]) -> Result<Vec<bool>>,
    ) -> Result<()> {
        let n = d.capacity();
        let crosses = |e: &NodeSet| {
            !e.is_disjoint(&self.necks)
                && e.iter().any(|c| {
                    self.necks.contains(c) && self.preds[c.index()].iter().any(|&u| !d.contains(u))
                })
        };
        let mut seen: FxSet<NodeSet> = FxSet::default();
        let mut level: Vec<NodeSet> = (0..n)
            .map(|i| NodeId(i as u32))
            .filter(|&s| !d.contains(s) && self.preds[s.index()].iter().all(|&u| d.contains(u)))
            .map(|s| NodeSet::singleton(n, s))
            .filter(|e| e.len() <= limit)
            .collect();
        let mut closure: Vec<NodeId> = Vec::new();
        while !level.is_empty() {
            let grow = visit(&level)?;
            let mut next = Vec::new();
            for (e, grow) in level.iter().zip(grow) {
                if !grow || e.len() >= limit {
                    continue;
                }
                for v in e.iter() {
                    for &w in &self.succs[v.index()] {
                        if d.contains(w) || e.contains(w) {
                            continue;
                        }
                        // E ∪ closure(w): w and its ancestors not yet covered.
                        let mut bigger = e.clone();
                        closure.clear();
                        closure.push(w);
                        bigger.insert(w);
                        while let Some(x) = closure.pop() {
                            for &u in &self.preds[x.index()] {
                                if !d.contains(u) && bigger.insert(u) {
                                    closure.push(u);
                                }
                            }
                        }
                        if bigger.len() <= limit && !crosses(&bigger) && seen.insert(bigger.clone())
                        {
                            next.push(bigger);
                        }
                    }
                }
            }
            level = next;
        }
        Ok(())
    }
}

/// How far a state is from the bound, in DRAM bytes, for pruning its extensions (see
/// [`RestFloor::step`] and [`RestFloor::excess`]).
struct Slack<'a> {
    /// `upper − best[D] − remaining(D)`: a step whose own floor reaches it cannot beat `upper`.
    step: u64,
    /// The same without the cuts a grown group might hold the start of
    /// ([`RestFloor::far_cuts`]): a group whose tile excess reaches it cannot be grown into one
    /// that beats `upper` (the excess never falls as it grows).
    grow: u64,
    /// The floors.
    floor: &'a RestFloor,
}

/// What expanding one down-set found.
#[derive(Default)]
struct Expansion {
    /// `(D ∪ E, cost)` for every admissible extension below the bound, in the order found.
    steps: Vec<(NodeSet, u64)>,
    /// Extensions costed.
    costed: u64,
}

impl Optimal {
    /// The first family planned region by region (see "Independent regions" in the module
    /// docs), against `upper`, the best order plan `upper_plan`'s value. The first family's
    /// optimum is the sum of the regions' optima, so this is exact over the same family as
    /// the whole-graph programme, and returns what it would: the first family's best plan
    /// when it moves less than `upper`, or nothing.
    ///
    /// Each region is first bounded by the best of its own order plans and of `upper_plan`'s
    /// groups in it (when none crosses a cut). A region whose programme finds nothing below
    /// its bound is only known to cost at least that; while the regions' floors still sum to
    /// less than `upper`, the first such region runs again, bounded by its floor plus that
    /// slack, which either finds its optimum or lifts the sum to `upper`.
    fn plan_regions(
        &self,
        p: &Problem<'_>,
        budget: &Budget<'_>,
        orders: &[Vec<NodeId>],
        regions: &[NodeSet],
        (upper_plan, upper): (&Plan, u64),
    ) -> Result<FirstFamily> {
        use rayon::prelude::*;
        let g = p.graph();
        let all = NodeSet::full(g.len());
        let floor = RestFloor::within(p, self.max_group.max(1), regions)?;
        // A region that is another's shift (a repeated layer) has the same programme: only
        // the first of each kind is solved.
        let mut first_of: Vec<(usize, i64)> = Vec::with_capacity(regions.len());
        for (k, region) in regions.iter().enumerate() {
            let found = (0..k)
                .filter(|&r| first_of[r].0 == r)
                .find_map(|r| shift_between(p, &floor, &regions[r], region).map(|d| (r, d)));
            first_of.push(found.unwrap_or((k, 0)));
        }
        let kinds: Vec<usize> = (0..regions.len()).filter(|&k| first_of[k].0 == k).collect();
        // The best order plan's groups, when each lies in one region, bound each region.
        let mut given: Option<Vec<u64>> = Some(vec![0; regions.len()]);
        for group in &upper_plan.groups {
            let (Some(sums), Some(k)) = (
                given.as_mut(),
                regions.iter().position(|r| group.is_subset(r)),
            ) else {
                given = None;
                break;
            };
            let value = p.admissible_value(group)?.unwrap_or(u64::MAX);
            sums[k] = sums[k].saturating_add(value);
        }
        // Each kind's bound: the better of that and its own best order plan (the candidate
        // orders restricted to it). A shifted plan of one region is a plan of the others of
        // its kind, at the same value.
        let bounds: Vec<Result<(u64, u64)>> = kinds
            .par_iter()
            .map(|&k| {
                let region = &regions[k];
                let mut bound = given.as_ref().map_or(u64::MAX, |sums| sums[k]);
                let mut costed = 0;
                for (i, order) in orders.iter().enumerate() {
                    // Past the limit the programme below gives up at once: the bound so far
                    // will do (the first order always runs, so there is one).
                    if i > 0 && budget.expired() {
                        break;
                    }
                    let inside: Vec<NodeId> = order
                        .iter()
                        .copied()
                        .filter(|&v| region.contains(v))
                        .collect();
                    let (_, cost, c) = self.best_for_order(p, &inside)?;
                    costed += c;
                    bound = bound.min(cost);
                }
                Ok((bound, costed))
            })
            .collect();
        let mut costed = 0;
        let mut bound_of = vec![u64::MAX; regions.len()];
        for (&k, b) in kinds.iter().zip(bounds) {
            let (bound, c) = b?;
            costed += c;
            bound_of[k] = bound;
        }
        let solve = |region: &NodeSet, bound: u64| -> Result<(Part, u64)> {
            let start = all.difference(region);
            Ok(
                match self.downsets_until(p, budget, bound, &floor, &start)? {
                    Downsets::Found(plan, cost, c) => (Part::Exact(plan, cost), c),
                    Downsets::NoneBelow(c) => (Part::AtLeast(bound), c),
                    Downsets::GaveUp(least) => (Part::Stopped(least), 0),
                },
            )
        };
        // The kinds' programmes are independent: they run in parallel and are combined in
        // order.
        let solved: Vec<Result<(Part, u64)>> = kinds
            .par_iter()
            .map(|&k| solve(&regions[k], bound_of[k]))
            .collect();
        let mut solved_kinds = Vec::with_capacity(kinds.len());
        for part in solved {
            let (part, c) = part?;
            costed += c;
            solved_kinds.push(part);
        }
        // Every region takes its kind's part, a plan shifted onto it.
        let mut parts: Vec<Part> = first_of
            .iter()
            .map(
                |&(r, shift)| match &solved_kinds[kinds.partition_point(|&k| k < r)] {
                    Part::Exact(plan, cost) => Part::Exact(shifted(plan, shift), *cost),
                    Part::AtLeast(v) => Part::AtLeast(*v),
                    Part::Stopped(v) => Part::Stopped(*v),
                },
            )
            .collect();
        loop {
            let floor_sum = parts
                .iter()
                .fold(0u64, |s, part| s.saturating_add(part.floor()));
            if floor_sum >= upper {
                return Ok(FirstFamily::NoneBelow(costed));
            }
            if parts.iter().any(|part| matches!(part, Part::Stopped(_))) {
                // The regions' floors leave out the spans across cuts: the whole graph's
                // rest bound may still be higher.
                let whole = RestFloor::of(p, self.max_group.max(1))?;
                let none = NodeSet::new(g.len());
                return Ok(FirstFamily::GaveUp(
                    floor_sum.max(rest_bound(p, &whole, &none).0),
                ));
            }
            let Some(k) = parts
                .iter()
                .position(|part| matches!(part, Part::AtLeast(_)))
            else {
                let mut groups = Vec::new();
                for part in parts {
                    if let Part::Exact(plan, _) = part {
                        groups.extend(plan.groups);
                    }
                }
                return Ok(FirstFamily::Found(Plan::new(groups), costed));
            };
            // This region may cost up to the slack more and still leave the sum below `upper`.
            let bound = parts[k].floor().saturating_add(upper - floor_sum);
            let (part, c) = solve(&regions[k], bound)?;
            costed += c;
            parts[k] = part;
        }
    }
}

/// `plan` with every node id moved by `shift`.
fn shifted(plan: &Plan, shift: i64) -> Plan {
    if shift == 0 {
        return plan.clone();
    }
    let at = |v: NodeId| NodeId((i64::from(v.0) + shift) as u32);
    Plan::new(
        plan.groups
            .iter()
            .map(|grp| NodeSet::from_ids(grp.capacity(), grp.iter().map(at)))
            .collect(),
    )
}

/// The shift `d` that takes region `a` onto region `b` node for node (`v ↦ v + d`), when it
/// preserves everything a group's value, validity and floors depend on; else `None`. Then
/// every group of `a` and its shift in `b` have the same value and fit alike, each state's
/// bound is its shift's, and `b`'s programme is `a`'s, shifted.
///
/// Checked for each node: op, shape, weights, multiply–accumulates, whether it is a graph
/// output or unfusable, the row read of every port, its consumers inside the region (shifted)
/// and whether it has any outside, its inputs (inside: shifted; outside: a one-to-one
/// correspondence of tensors of equal shape and rows), and the rest floor's values.
fn shift_between(p: &Problem<'_>, floor: &RestFloor, a: &NodeSet, b: &NodeSet) -> Option<i64> {
    let g = p.graph();
    let (Some(a0), Some(b0)) = (a.first(), b.first()) else {
        return None;
    };
    if a.len() != b.len() {
        return None;
    }
    let d = i64::from(b0.0) - i64::from(a0.0);
    let at = |v: NodeId| NodeId((i64::from(v.0) + d) as u32);
    // A tensor of `a`'s, as `b` reads it.
    let inside = |s: Source| match s {
        Source::Node(u) if a.contains(u) => Some(Source::Node(at(u))),
        _ => None,
    };
    // Tensors from outside the regions: a's to b's, and back.
    let mut there: FxMap<Source, Source> = FxMap::default();
    let mut back: FxMap<Source, Source> = FxMap::default();
    let unfusable = p.unfusable();
    for v in a.iter() {
        let w = at(v);
        if !b.contains(w) {
            return None;
        }
        let (x, y) = (g.node(v), g.node(w));
        if x.op != y.op
            || x.shape != y.shape
            || x.weights != y.weights
            || x.inputs.len() != y.inputs.len()
            || g.node_macs(v) != g.node_macs(w)
            || g.is_output(v) != g.is_output(w)
            || unfusable.contains(v) != unfusable.contains(w)
            || g.rows_of(Source::Node(v)) != g.rows_of(Source::Node(w))
            || g.row_elements(Source::Node(v)) != g.row_elements(Source::Node(w))
        {
            return None;
        }
        for (port, (&s, &t)) in x.inputs.iter().zip(&y.inputs).enumerate() {
            let same = match inside(s) {
                Some(shifted) => shifted == t,
                None => {
                    !matches!(t, Source::Node(u) if b.contains(u))
                        && g.shape_of(s) == g.shape_of(t)
                        && g.rows_of(s) == g.rows_of(t)
                        && g.row_elements(s) == g.row_elements(t)
                        && *there.entry(s).or_insert(t) == t
                        && *back.entry(t).or_insert(s) == s
                }
            };
            if !same || g.row_read(v, port) != g.row_read(w, port) {
                return None;
            }
        }
        // Consumers inside the region (less `shift`), and whether any is outside.
        let consumers = |set: &NodeSet, u: NodeId, shift: i64| -> (Vec<(i64, u32)>, bool) {
            let mut within = Vec::new();
            let mut beyond = false;
            for &(c, port) in g.consumers(u) {
                if set.contains(c) {
                    within.push((i64::from(c.0) - shift, port));
                } else {
                    beyond = true;
                }
            }
            within.sort_unstable();
            (within, beyond)
        };
        let map = |s: Source| inside(s).or_else(|| there.get(&s).copied());
        if consumers(a, v, 0) != consumers(b, w, d) || !floor.same_node(v, w, map) {
            return None;
        }
    }
    Some(d)
}

/// What one region's programme proved.
enum Part {
    /// Its optimum, and a plan of the region that reaches it.
    Exact(Plan, u64),
    /// Nothing below this.
    AtLeast(u64),
    /// Stopped by the budget, with this floor.
    Stopped(u64),
}

impl Part {
    /// What the region's optimum is proven to reach at least.
    fn floor(&self) -> u64 {
        match self {
            Part::Exact(_, v) | Part::AtLeast(v) | Part::Stopped(v) => *v,
        }
    }
}

/// How the first family's programme ended, planned whole or region by region.
enum FirstFamily {
    /// The family's best plan, below the bound, and the sets costed.
    Found(Plan, u64),
    /// No plan of the family below the bound (after this many sets costed).
    NoneBelow(u64),
    /// Stopped by the budget: the family's optimum is at least this.
    GaveUp(u64),
}

/// The graph cut, along its node order, wherever no group of at most `max_group` nodes can
/// cross (see "Independent regions" in the module docs): the regions between the cuts, in
/// order. One region, the whole graph, when there is no such cut or the node order is not
/// topological.
///
/// # Errors
/// When the cost model fails.
pub fn independent_regions(p: &Problem<'_>, max_group: usize) -> Result<Vec<NodeSet>> {
    let g = p.graph();
    let n = g.len();
    let (anc, desc) = crate::bound::reach(g);
    // held[i]: the edges some admissible group may hold that cross the cut before node i.
    let mut held = vec![0i64; n + 1];
    for u in g.node_ids() {
        for w in crate::bound::net_consumers(g, u) {
            if w <= u {
                return Ok(vec![NodeSet::full(n)]);
            }
            let span = crate::bound::span(&anc, &desc, u, w);
            if span.len() <= max_group && p.fits_somewhere(&span)? {
                held[u.index() + 1] += 1;
                held[w.index() + 1] -= 1;
            }
        }
    }
    let mut regions = Vec::new();
    let mut region = NodeSet::new(n);
    let mut open = 0i64;
    for v in g.node_ids() {
        open += held[v.index()];
        if open == 0 && !region.is_empty() {
            regions.push(std::mem::replace(&mut region, NodeSet::new(n)));
        }
        region.insert(v);
    }
    if !region.is_empty() {
        regions.push(region);
    }
    Ok(regions)
}

/// Replaces `best` by `plan` when `plan` costs strictly less (the first of equals stays).
fn keep_better(p: &Problem<'_>, best: &mut Option<(Plan, Score)>, plan: Plan) -> Result<()> {
    let score = p.score(&plan)?;
    if best.as_ref().is_none_or(|(_, s)| score.cost < s.cost) {
        *best = Some((plan, score));
    }
    Ok(())
}

/// How the down-set programme ended.
enum Downsets {
    /// The best plan of the family below the bound, its objective value and the extensions costed.
    Found(Plan, u64, u64),
    /// No plan of the family moves less than the bound (after this many extensions).
    NoneBelow(u64),
    /// The budget expired (time limit or stop flag); what the family's optimum is proven to
    /// reach at least (see [`Optimal::downsets_until`]).
    GaveUp(u64),
}

/// What every plan through the down-set `covered` still pays for the rest, in the problem's
/// objective ([`Problem::remaining_bound_with`] the rest floor's rereads and cuts), and those
/// cuts.
fn rest_bound(p: &Problem<'_>, floor: &RestFloor, covered: &NodeSet) -> (u64, u64) {
    let (rereads, cuts) = floor.rest(covered);
    let rest = p.remaining_bound_with(covered, rereads.saturating_add(cuts));
    (rest, cuts)
}

/// What a segment of an order costs.
enum Segment {
    /// The summed objective of its components, all admissible.
    Fits(u64),
    /// A component is inadmissible; `dead` when its buffer floor does not fit, so that no
    /// longer segment from the same start (whose components contain this one) fits either.
    Inadmissible { dead: bool },
}

/// The summed objective of the segment's components, or why it has none.
fn segment_cost(p: &Problem<'_>, segment: &NodeSet) -> Result<Segment> {
    let mut total = 0;
    for c in components(p.graph(), segment) {
        match p.admissible_value(&c)? {
            Some(value) => total = u64::saturating_add(total, value),
            None => {
                return Ok(Segment::Inadmissible {
                    dead: !p.fits_somewhere(&c)?,
                });
            }
        }
    }
    Ok(Segment::Fits(total))
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
    /// first, and the proven lower bound `latency* × energy*` when both programmes finished.
    fn run_edp(
        &self,
        p: &Problem<'_>,
        budget: &Budget<'_>,
        seed: u64,
    ) -> Result<(SearchResult, Option<u128>)> {
        let fast = self.run_additive(&p.sibling(Objective::Latency), budget, seed)?;
        let frugal = self.run_additive(&p.sibling(Objective::Energy), budget, seed)?;
        let bound = (fast.stop == StopReason::Exhausted && frugal.stop == StopReason::Exhausted)
            .then(|| u128::from(fast.score.latency_cycles) * u128::from(frugal.score.energy_fj));
        let stop = if fast.stop == StopReason::Exhausted {
            frugal.stop
        } else {
            fast.stop
        };
        let mut best = None;
        keep_better(p, &mut best, fast.plan)?;
        keep_better(p, &mut best, frugal.plan)?;
        let (plan, score) = match best {
            Some(b) => b,
            None => (Plan::default(), Score::worst()),
        };
        let history = vec![u64::try_from(score.cost).unwrap_or(u64::MAX)];
        // Every plan of the family is at least as slow and as costly as the two bounds.
        let lower_bound = fast
            .lower_bound
            .zip(frugal.lower_bound)
            .map(|(l, e)| l.saturating_mul(e));
        Ok((
            SearchResult {
                plan,
                score,
                evaluations: fast.evaluations + frugal.evaluations,
                history,
                stop,
                front: Vec::new(),
                lower_bound,
            },
            bound,
        ))
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
        let steps = orders.len() as u64 + 1;
        let mut stop = StopReason::Exhausted;
        let mut evaluations = 0;
        let mut best: Option<(Plan, Score)> = None;
        let mut history = Vec::new();
        // The orders run in parallel and are compared in their own order: the same plan comes
        // back whatever the thread count. Past the time limit an order is skipped or given up
        // (the first is completed in singletons from where it stopped).
        let done = std::sync::atomic::AtomicU64::new(0);
        let first_cut = std::sync::atomic::AtomicBool::new(false);
        let results: Vec<Result<Option<(Plan, u64)>>> = orders
            .par_iter()
            .enumerate()
            .map(|(k, order)| {
                if k > 0 && budget.expired() {
                    return Ok(None);
                }
                let (plan, _, costed, complete) = self.order_programme(p, order, Some(budget))?;
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
                self.plan_regions(p, budget, &orders, &regions, (&upper_plan, upper))?
            } else {
                let floor = if upper == u64::MAX {
                    RestFloor::default()
                } else {
                    RestFloor::of(p, self.max_group.max(1))?
                };
                match self.downsets_until(p, budget, upper, &floor, &none)? {
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
