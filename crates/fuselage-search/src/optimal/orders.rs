//! Family 2 of the [module docs](super): the candidate topological orders, and the prefix
//! programme that finds the best plan contiguous in one of them.

use super::shift::{Known, Memo};
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
        self.run_with(p, order, budget, &Memo::new(p))
    }

    /// [`run`](Self::run), each segment's components answered from `memo` when it holds a
    /// shift of them, and kept there: an order's segments repeat from layer to layer, and the
    /// orders share many.
    pub(super) fn run_with(
        &self,
        p: &Problem<'_>,
        order: &[NodeId],
        budget: Option<&Budget<'_>>,
        memo: &Memo,
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
            // The segment's components, by first node, grown with it.
            let mut pieces: Vec<NodeSet> = Vec::new();
            let mut misses = 0;
            for j in i..n.min(i + self.max_segment.max(1)) {
                add_to_pieces(g, &mut pieces, order[j]);
                costed += 1;
                match segment_cost(p, &pieces, memo)? {
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

/// What a segment of an order (or one of its components) costs.
#[derive(Copy, Clone, Debug)]
enum Segment {
    /// The summed objective of its components, all admissible.
    Fits(u64),
    /// A component is inadmissible; `dead` when its buffer floor does not fit, so that no
    /// longer segment from the same start (whose components contain this one) fits either.
    Inadmissible { dead: bool },
}

/// Adds `v` to a segment whose weakly connected components are `pieces`, ordered by their
/// first node: the pieces it touches (holding one of its producers or consumers) merge with
/// it. They stay [`components`] of the segment, in its order, without a walk of it.
fn add_to_pieces(g: &Graph, pieces: &mut Vec<NodeSet>, v: NodeId) {
    let mut merged = NodeSet::singleton(g.len(), v);
    let consumers = g.consumers(v);
    pieces.retain(|c| {
        let touches =
            g.producers(v).any(|u| c.contains(u)) || consumers.iter().any(|&(w, _)| c.contains(w));
        if touches {
            merged.union_with(c);
        }
        !touches
    });
    let first = merged.first();
    let at = pieces.partition_point(|c| c.first() < first);
    pieces.insert(at, merged);
}

/// The summed objective of the segment's components (`pieces`, by first node), or why it
/// has none; each component's answer from `memo` when it holds a shift of it, and what the
/// model said kept there.
fn segment_cost(p: &Problem<'_>, pieces: &[NodeSet], memo: &Memo) -> Result<Segment> {
    let mut total = 0;
    for c in pieces {
        let mut fresh = Known::default();
        let part = match memo.answer(p, c, &mut fresh)?.value {
            Some(value) => Segment::Fits(value),
            None => Segment::Inadmissible {
                dead: !memo.fits(p, c, &mut fresh)?,
            },
        };
        memo.learn([(c, fresh)]);
        match part {
            Segment::Fits(value) => total = u64::saturating_add(total, value),
            dead @ Segment::Inadmissible { .. } => return Ok(dead),
        }
    }
    Ok(Segment::Fits(total))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{chain, groups, layers, plan, set, two_branches, with_problem};
    use super::*;
    use fuselage_cost::CostKind;
    use std::sync::atomic::AtomicBool;

    fn numbers(order: &[NodeId]) -> Vec<u32> {
        order.iter().map(|v| v.0).collect()
    }

    const LONG: OrderProgramme = OrderProgramme {
        max_segment: 160,
        patience: 48,
    };

    #[test]
    fn depth_first_orders_finish_one_branch_before_the_next() {
        // The file interleaves the branches (a, b1, c1, b2, c2, d).
        let g = two_branches();
        assert_eq!(numbers(&depth_first_order(&g, false)), [0, 1, 3, 2, 4, 5]);
        assert_eq!(numbers(&depth_first_order(&g, true)), [0, 2, 4, 1, 3, 5]);
    }

    #[test]
    fn the_order_of_a_plan_keeps_each_group_together() {
        let g = two_branches();
        // Groups listed out of order: after {a}, the smallest ready group ({c1, c2}) first.
        let branches = plan(&g, &[&[2, 4], &[1, 3], &[0], &[5]]);
        assert_eq!(numbers(&order_of_plan(&g, &branches)), [0, 2, 4, 1, 3, 5]);
        // {a, d} with either branch is a cycle of groups: no order.
        let cyclic = plan(&g, &[&[0, 5], &[1, 3], &[2, 4]]);
        assert!(order_of_plan(&g, &cyclic).is_empty());
    }

    #[test]
    fn the_candidates_are_the_file_order_two_depth_first_ones_then_the_extra() {
        let g = two_branches();
        let numbered = |extra: &[Vec<NodeId>]| -> Vec<Vec<u32>> {
            candidate_orders(&g, 0, 0, extra)
                .iter()
                .map(|o| numbers(o))
                .collect()
        };
        let structured = vec![
            vec![0, 1, 2, 3, 4, 5],
            vec![0, 1, 3, 2, 4, 5],
            vec![0, 2, 4, 1, 3, 5],
        ];
        assert_eq!(numbered(&[]), structured);
        // An extra order equal to the last one goes; one equal to an earlier one stays.
        let c_first = order_of_plan(&g, &plan(&g, &[&[0], &[2, 4], &[1, 3], &[5]]));
        assert_eq!(numbered(&[c_first]), structured);
        let b_first = order_of_plan(&g, &plan(&g, &[&[0], &[1, 3], &[2, 4], &[5]]));
        let mut four = structured.clone();
        four.push(vec![0, 1, 3, 2, 4, 5]);
        assert_eq!(numbered(&[b_first]), four);
        // A chain has one topological order: the random ones repeat it and go.
        assert_eq!(candidate_orders(&chain(4), 7, 3, &[]).len(), 1);
    }

    #[test]
    fn a_segment_costs_its_components_or_says_why_not() {
        // Under 1 KiB a conv's 2,320 bytes of weights never fit: alone it is an unfusable
        // node (1,024 in, 1,024 out and its weights), with anything else a dead end.
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            let memo = Memo::new(p);
            let cost =
                |ids: &[u32]| segment_cost(p, &components(&g, &set(&g, ids)), &memo).unwrap();
            assert!(matches!(cost(&[0, 1]), Segment::Fits(2048)));
            assert!(matches!(cost(&[2]), Segment::Fits(4368)));
            // The second layer is the first moved by 3: its answers come from the memo.
            assert!(matches!(cost(&[3, 4]), Segment::Fits(2048)));
            assert!(matches!(cost(&[5]), Segment::Fits(4368)));
            // Two components, each admissible: their sum.
            assert!(matches!(cost(&[0, 2]), Segment::Fits(6416)));
            assert!(matches!(
                cost(&[1, 2]),
                Segment::Inadmissible { dead: true }
            ));
        });
    }

    #[test]
    fn pieces_grown_node_by_node_are_the_components_in_order() {
        // Every segment of every candidate order of two small graphs, and of GPT-2 at four
        // layers: the pieces grown node by node are the segment's components, by first node.
        let gpt = fuselage_zoo::build("gpt2_l4_h256").unwrap();
        for g in [two_branches(), layers(), gpt] {
            for order in candidate_orders(&g, 3, 2, &[]) {
                for i in (0..order.len()).step_by(7) {
                    let mut pieces = Vec::new();
                    let mut segment = NodeSet::new(g.len());
                    for &v in order[i..].iter().take(60) {
                        add_to_pieces(&g, &mut pieces, v);
                        segment.insert(v);
                        assert_eq!(pieces, components(&g, &segment));
                    }
                }
            }
        }
    }

    #[test]
    fn the_order_programme_fuses_a_chain_and_counts_its_segments() {
        // Four Relus fit together: one group moving 256 bytes in and 256 out, found after
        // 4 + 3 + 2 + 1 segments. With segments of two, 2 + 2 + 2 + 1 segments and two
        // groups, the tensor between them written and read.
        let g = chain(4);
        let order: Vec<NodeId> = g.node_ids().collect();
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let (plan, cost, costed, finished) = LONG.run(p, &order, None).unwrap();
            assert_eq!(
                (groups(&plan), cost, costed, finished),
                (vec![vec![0, 1, 2, 3]], 512, 10, true)
            );
            let short = OrderProgramme {
                max_segment: 2,
                ..LONG
            };
            let (plan, cost, costed, _) = short.run(p, &order, None).unwrap();
            assert_eq!(
                (groups(&plan), cost, costed),
                (vec![vec![0, 1], vec![2, 3]], 1024, 7)
            );
        });
    }

    #[test]
    fn a_segment_of_another_branch_splits_into_components() {
        // At 128 bytes the best plan fuses each branch: 512 for a, for each branch, and 768
        // for d (two reads, one write). In the depth-first order a segment of two holds a
        // branch; in the file's order it holds one node of each branch (two components) or
        // a with b1 (768: a is also written for c1), then singletons.
        let g = two_branches();
        with_problem(&g, CostKind::Lbdf, 128, |p| {
            let short = OrderProgramme {
                max_segment: 2,
                ..LONG
            };
            let (plan, cost, _, _) = short.run(p, &depth_first_order(&g, false), None).unwrap();
            assert_eq!(groups(&plan), [vec![0], vec![1, 3], vec![2, 4], vec![5]]);
            assert_eq!(cost, 2304);
            let file: Vec<NodeId> = g.node_ids().collect();
            let (plan, cost, _, _) = short.run(p, &file, None).unwrap();
            assert_eq!(
                groups(&plan),
                [vec![0, 1], vec![2], vec![4], vec![3], vec![5]]
            );
            assert_eq!(cost, 768 + 3 * 512 + 768);
            // A segment of four holds both branches as two components.
            assert_eq!(LONG.run(p, &file, None).unwrap().1, 2304);
        });
    }

    #[test]
    fn an_order_programme_stopped_at_once_returns_singletons_unfinished() {
        let g = chain(4);
        let order: Vec<NodeId> = g.node_ids().collect();
        let stop = AtomicBool::new(true);
        let budget = Budget::new(1).unwrap().with_stop(&stop);
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let (plan, cost, costed, finished) = LONG.run(p, &order, Some(&budget)).unwrap();
            assert_eq!(plan, Plan::singletons(&g));
            assert_eq!((cost, costed, finished), (u64::MAX, 0, false));
        });
    }
}
