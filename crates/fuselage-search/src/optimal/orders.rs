//! Family 2 of the [module docs](super): the candidate topological orders, and the prefix
//! programme that finds the best plan contiguous in one of them.

use crate::error::Result;
use crate::problem::Problem;
use crate::strategy::Budget;
use fuselage_ir::sample::{components, random_topological_order};
use fuselage_ir::{Graph, NodeId, NodeSet, Plan};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

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
/// in [`PlanGraph::topological_order`](fuselage_ir::PlanGraph::topological_order) (the
/// smallest ready group first), each group's nodes in id order. Empty when the plan's graph of
/// groups is cyclic.
pub fn order_of_plan(g: &Graph, plan: &Plan) -> Vec<NodeId> {
    let order = plan.graph(g).topological_order().unwrap_or_default();
    let mut nodes = Vec::with_capacity(g.len());
    for x in order {
        nodes.extend(plan.groups[x.index()].iter());
    }
    nodes
}

/// The prefix programme over one order, with the limits of [`Optimal`](super::Optimal) it
/// reads: a segment starting at `π[i]` is extended while it is at most `max_segment` long and
/// has not been inadmissible for `patience` consecutive lengths.
#[derive(Clone, Copy, Debug)]
pub(super) struct OrderProgramme {
    /// [`Optimal::max_segment`](super::Optimal::max_segment).
    pub(super) max_segment: usize,
    /// [`Optimal::patience`](super::Optimal::patience).
    pub(super) patience: usize,
}

impl OrderProgramme {
    /// [`Optimal::best_for_order`](super::Optimal::best_for_order), given up when `budget`
    /// expires: the plan is then the best one of the prefix the programme reached, and the
    /// rest of the order in singletons (a complete plan, not the order's best), with `false`
    /// for "not finished".
    /// The programme's work grows with the graph's size times its segments, so on a large
    /// graph even one order can outlast a time limit.
    pub(super) fn run(
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
}

/// The candidate orders for `g`, in the order they are tried: the graph's own, the two
/// depth-first ones, `random` random ones from `seed`, then `extra`.
pub(super) fn candidate_orders(
    g: &Graph,
    seed: u64,
    random: usize,
    extra: &[Vec<NodeId>],
) -> Vec<Vec<NodeId>> {
    let mut orders = vec![
        g.node_ids().collect::<Vec<_>>(),
        depth_first_order(g, false),
        depth_first_order(g, true),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..random {
        orders.push(random_topological_order(g, &mut rng));
    }
    orders.extend(extra.iter().cloned());
    orders.dedup();
    orders
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
