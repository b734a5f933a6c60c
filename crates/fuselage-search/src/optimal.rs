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
//! `Optimal` returns the best plan over the union of these families for a set of candidate
//! orders:
//! - the graph's own node order (the ONNX file's order for an import);
//! - two depth-first orders (Kahn's algorithm with a stack, consumers pushed in order and in
//!   reverse), which finish one branch before starting the next, so that a residual block, an
//!   SE block or a fire module stays contiguous;
//! - `random_orders` random topological orders from the seed;
//! - any orders given with [`Optimal::with_orders`] (for instance
//!   [`order_of_plan`] of a search's result: the DP then never loses to that search).
//!
//! A segment starting at `π[i]` is extended while it is shorter than `max_segment` and has not
//! been inadmissible for `patience` consecutive lengths; so, exactly: the result is optimal over
//! all plans whose groups are the components of consecutive segments of a candidate order, each
//! segment at most `max_segment` long and reached from its start without `patience`
//! consecutive inadmissible prefixes.
//!
//! Complexity: O(orders · n · max_segment) cost-model calls (cached), each segment's components
//! found in O(max_segment · degree).

use crate::error::Result;
use crate::problem::{Problem, Score};
use crate::strategy::{Budget, SearchResult, SearchStrategy, StopReason};
use fuselage_ir::sample::{components, random_topological_order};
use fuselage_ir::{Graph, NodeId, NodeSet, Plan};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The exact optimiser over contiguous plans (see the module docs for the family).
#[derive(Clone, Debug)]
pub struct Optimal {
    /// Longest segment considered (default 160).
    pub max_segment: usize,
    /// Consecutive inadmissible segment lengths after which a start gives up (default 48).
    pub patience: usize,
    /// Random topological orders tried besides the structured ones (default 4).
    pub random_orders: usize,
    extra: Vec<Vec<NodeId>>,
}

impl Default for Optimal {
    fn default() -> Self {
        Optimal {
            max_segment: 160,
            patience: 48,
            random_orders: 4,
            extra: Vec::new(),
        }
    }
}

/// Kahn's algorithm with a stack: the most recently enabled node goes next, so one branch is
/// finished before the next starts. `reverse` pushes consumers in reverse order.
pub fn depth_first_order(g: &Graph, reverse: bool) -> Vec<NodeId> {
    let mut indeg: Vec<usize> = g
        .node_ids()
        .map(|v| {
            g.node(v)
                .inputs
                .iter()
                .filter(|s| s.node().is_some())
                .count()
        })
        .collect();
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
/// in topological order of the graph of groups, each group's nodes in id order.
pub fn order_of_plan(g: &Graph, plan: &Plan) -> Vec<NodeId> {
    let owner = crate::problem::owners(g.len(), &plan.groups);
    let n = plan.len();
    let mut indeg = vec![0usize; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for v in g.node_ids() {
        for &(c, _) in g.consumers(v) {
            let (a, b) = (owner[v.index()] as usize, owner[c.index()] as usize);
            if a != b && !succ[a].contains(&b) {
                succ[a].push(b);
                indeg[b] += 1;
            }
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(g.len());
    while let Some(x) = ready.pop_first() {
        order.extend(plan.groups[x].iter());
        for &y in &succ[x] {
            indeg[y] -= 1;
            if indeg[y] == 0 {
                ready.insert(y);
            }
        }
    }
    order
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
        let g = p.graph();
        let n = order.len();
        let mut best = vec![u64::MAX; n + 1];
        let mut from = vec![0usize; n + 1];
        best[0] = 0;
        let mut costed = 0u64;
        for i in 0..n {
            if best[i] == u64::MAX {
                continue;
            }
            let mut segment = NodeSet::new(g.len());
            let mut misses = 0;
            for j in i..n.min(i + self.max_segment.max(1)) {
                segment.insert(order[j]);
                costed += 1;
                match segment_cost(p, &segment)? {
                    Some(c) => {
                        misses = 0;
                        if best[i] + c < best[j + 1] {
                            best[j + 1] = best[i] + c;
                            from[j + 1] = i;
                        }
                    }
                    None => {
                        misses += 1;
                        if misses >= self.patience.max(1) {
                            break;
                        }
                    }
                }
            }
        }
        let mut groups = Vec::new();
        let mut j = n;
        while j > 0 {
            let i = from[j];
            let seg = NodeSet::from_ids(g.len(), order[i..j].iter().copied());
            groups.extend(components(g, &seg));
            j = i;
        }
        groups.reverse();
        Ok((Plan::new(groups), best[n], costed))
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

/// `Σ F_D` of the segment's components, or `None` when one is inadmissible.
fn segment_cost(p: &Problem<'_>, segment: &NodeSet) -> Result<Option<u64>> {
    let mut total = 0;
    for c in components(p.graph(), segment) {
        if !p.admissible(&c)? {
            return Ok(None);
        }
        total += p.model().dram(p.graph(), &c)?;
    }
    Ok(Some(total))
}

impl SearchStrategy for Optimal {
    fn name(&self) -> &str {
        "optimal"
    }

    /// Runs the programme over every candidate order. The budget is not consumed (the work is
    /// fixed by the family); `evaluations` counts the segments costed, and the history holds the
    /// best DRAM after each order.
    fn run(&self, p: &Problem<'_>, budget: &Budget<'_>, seed: u64) -> Result<SearchResult> {
        let g = p.graph();
        let orders = self.candidate_orders(g, seed);
        let mut best: Option<(Plan, Score)> = None;
        let mut history = Vec::with_capacity(orders.len());
        let mut evaluations = 0;
        for (k, order) in orders.iter().enumerate() {
            let (plan, _, costed) = self.best_for_order(p, order)?;
            evaluations += costed;
            let score = p.score(&plan)?;
            if best
                .as_ref()
                .is_none_or(|(_, s)| score.dram_bytes < s.dram_bytes)
            {
                best = Some((plan, score));
            }
            history.push(best.as_ref().map_or(u64::MAX, |(_, s)| s.dram_bytes));
            budget.report(((k + 1) as u64 * budget.evaluations()) / orders.len() as u64);
        }
        let (plan, score) = best.unwrap_or_else(|| {
            let plan = Plan::singletons(g);
            (
                plan,
                Score {
                    dram_bytes: u64::MAX,
                    fusable_dram_bytes: u64::MAX,
                    max_buffer_bytes: 0,
                    groups: 0,
                },
            )
        });
        Ok(SearchResult {
            plan,
            score,
            evaluations,
            history,
            stop: StopReason::Exhausted,
            front: Vec::new(),
        })
    }
}
