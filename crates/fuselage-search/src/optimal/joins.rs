//! Bottlenecks, and the join that makes the groups across each from the best tail for each
//! head (see "Bottlenecks" in the [module docs](super)).

use super::common::{FxMap, rest_bound};
use super::net::Net;
use super::shift::{Known, Memo};
use crate::bound::RestFloor;
use crate::error::{Result, SearchError};
use crate::problem::Problem;
use crate::strategy::Budget;
use fuselage_cost::Objective;
use fuselage_ir::{NodeId, NodeSet};

/// A node `c` of the rest such that every other node of the rest is its ancestor or its
/// descendant, and the descendants read nothing but `c` and each other (see "Bottlenecks"
/// in the [module docs](super)).
pub(super) struct Bottleneck {
    /// The node.
    pub(super) node: NodeId,
    /// The down-set of everything before it: the start and its ancestors.
    pub(super) before: NodeSet,
}

impl Bottleneck {
    /// Whether the state `d` leaves a tail before it that a group of at most `max_group`
    /// nodes can hold with the bottleneck: `d` lies inside `before`, fewer than `max_group`
    /// nodes short of it.
    pub(super) fn has_tail(&self, d: &NodeSet, max_group: usize) -> bool {
        d.len() < self.before.len()
            && self.before.len() - d.len() < max_group
            && d.is_subset(&self.before)
    }
}

/// The bottlenecks of the whole graph, in order (see "Bottlenecks" in the
/// [module docs](super)): the nodes every other node is an ancestor or a descendant of, whose
/// descendants read nothing but them and each other. The down-set programme joins the groups
/// across each.
pub fn bottleneck_nodes(p: &Problem<'_>) -> Vec<NodeId> {
    bottlenecks(p, &NodeSet::new(p.graph().len()))
        .into_iter()
        .map(|neck| neck.node)
        .collect()
}

/// The bottlenecks of the rest of the graph once `start` is covered, in order (each one's
/// `before` inside the next one's). Unfusable nodes are left out: no group holds one with
/// anything else.
pub(super) fn bottlenecks(p: &Problem<'_>, start: &NodeSet) -> Vec<Bottleneck> {
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

/// The groups across the bottleneck `neck` (see "Bottlenecks" in the [module docs](super)), as
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
/// answer. Groups have at most `max_group` nodes (at least 1).
///
/// A pair whose shift was costed at an earlier bottleneck (the same layer one repeat
/// before) takes that answer from `memo` ([`ShiftMemo`]); the pairs costed here are added
/// to it. Each still counts as a set costed.
pub(super) fn join(
    p: &Problem<'_>,
    net: &Net,
    best: &FxMap<NodeSet, (u64, NodeSet)>,
    neck: &Bottleneck,
    (upper, budget): (u64, &Budget<'_>),
    floor: &RestFloor,
    (max_group, memo): (usize, &Memo),
) -> Result<Option<Joined>> {
    use rayon::prelude::*;
    let g = p.graph();
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
    // Per head, its best step `(before ∪ E, cost, tail)`, the pairs costed and those
    // costed here rather than found in the memo; `None` past the budget.
    type Walk = Option<(Option<(NodeSet, u64, usize)>, u64, Vec<(NodeSet, Known)>)>;
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
            let mut fresh = Vec::new();
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
                let mut known = Known::default();
                let answer = memo.answer(p, &group, &mut known)?;
                if !known.is_empty() {
                    fresh.push((group, known));
                }
                // The floor holds for valid groups (the tile floor's rereads and excess
                // are what a valid group streams), the only ones a step can be.
                if dram && answer.valid && i128::from(answer.dram) < key - i128::from(tail.base) {
                    return Err(SearchError::ModelContract {
                        model: p.model().name().to_string(),
                        nodes: tail.part.len() + e.len(),
                        dram: answer.dram,
                        floor: u64::try_from(key - i128::from(tail.base)).unwrap_or(u64::MAX),
                    });
                }
                if let Some(value) = answer.value {
                    let total = tail.base.saturating_add(value);
                    if total < limit {
                        limit = total;
                        found = Some((total, k));
                    }
                }
            }
            Ok(Some((
                found.map(|(total, k)| (next, total, k)),
                evaluated,
                fresh,
            )))
        })
        .collect();
    let mut out = Joined::default();
    for result in walked {
        let Some((found, evaluated, fresh)) = result? else {
            return Ok(None);
        };
        costed += evaluated;
        if let Some((next, total, k)) = found {
            out.steps.push((next, total, tails[k].from.clone()));
        }
        memo.learn(fresh.iter().map(|(group, known)| (group, *known)));
    }
    out.costed = costed;
    Ok(Some(out))
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
pub(super) struct Joined {
    /// `(before ∪ E, cost, D)` for every head with a tail below the bound, in head order.
    pub(super) steps: Vec<(NodeSet, u64, NodeSet)>,
    /// Sets costed.
    pub(super) costed: u64,
}

#[cfg(test)]
mod tests {
    use super::super::downsets::DownsetProgramme;
    use super::super::testing::{chain, diamond, ids, residual, set, two_branches, with_problem};
    use super::*;
    use fuselage_cost::CostKind;

    fn numbers(nodes: &[NodeId]) -> Vec<u32> {
        nodes.iter().map(|v| v.0).collect()
    }

    #[test]
    fn a_residual_block_has_its_stem_its_add_and_what_follows_as_bottlenecks() {
        // a (0), conv b (1), c (2), conv e (3), f = e + a (4), g (5). Every node lies before
        // or after b, c and e too, but the Add after them reads a, from before them.
        let g = residual();
        with_problem(&g, CostKind::Lbdf, 2048, |p| {
            assert_eq!(numbers(&bottleneck_nodes(p)), [0, 4, 5]);
            // Once a is covered: f and g, with everything before each.
            let necks = bottlenecks(p, &set(&g, &[0]));
            let found: Vec<(u32, Vec<u32>)> = necks
                .iter()
                .map(|neck| (neck.node.0, ids(&neck.before)))
                .collect();
            assert_eq!(found, [(4, vec![0, 1, 2, 3]), (5, vec![0, 1, 2, 3, 4])]);
        });
        // Under 128 bytes no node fits alone: unfusable, none is a bottleneck.
        with_problem(&g, CostKind::Lbdf, 128, |p| {
            assert_eq!(p.unfusable().len(), 6);
            assert!(bottleneck_nodes(p).is_empty());
        });
    }

    #[test]
    fn every_node_of_a_chain_and_the_ends_of_a_diamond_are_bottlenecks() {
        with_problem(&chain(4), CostKind::Lbdf, 2048, |p| {
            assert_eq!(numbers(&bottleneck_nodes(p)), [0, 1, 2, 3]);
        });
        with_problem(&diamond(), CostKind::Lbdf, 2048, |p| {
            assert_eq!(numbers(&bottleneck_nodes(p)), [0, 3]);
        });
    }

    #[test]
    fn a_state_has_a_tail_when_it_lies_inside_before_and_a_group_can_reach_it() {
        // f's `before` is {a, b, c, e}.
        let g = residual();
        let f = Bottleneck {
            node: NodeId(4),
            before: set(&g, &[0, 1, 2, 3]),
        };
        assert!(f.has_tail(&NodeSet::new(g.len()), 5));
        assert!(f.has_tail(&set(&g, &[0, 1]), 3));
        // Four nodes short, with the bottleneck five: not in a group of four.
        assert!(!f.has_tail(&NodeSet::new(g.len()), 4));
        // All of `before` covered: no tail; not inside `before`: none either.
        assert!(!f.has_tail(&set(&g, &[0, 1, 2, 3]), 64));
        assert!(!f.has_tail(&set(&g, &[0, 5]), 64));
    }

    #[test]
    fn joins_keep_the_optimum_of_growing_every_group() {
        // Every buffer from 128 bytes to 2 KiB, groups of at most 2, 3, 4 or 64 nodes: the
        // programme that joins at the bottlenecks finds what the one that grows every group
        // from its own state finds (a residual block: 2,192 bytes whole at 2 KiB).
        for (name, g) in [
            ("residual", residual()),
            ("diamond", diamond()),
            ("branches", two_branches()),
        ] {
            for bytes in (128..=2048).step_by(64) {
                with_problem(&g, CostKind::Lbdf, bytes, |p| {
                    for max_group in [2, 3, 4, 64] {
                        let joined = DownsetProgramme {
                            max_group,
                            join_bottlenecks: true,
                        };
                        let grown = DownsetProgramme {
                            join_bottlenecks: false,
                            ..joined
                        };
                        let (plan, cost, _) = joined.best(p).unwrap();
                        g.check_plan(&plan).unwrap();
                        assert_eq!(p.score(&plan).unwrap().cost, u128::from(cost));
                        assert_eq!(
                            cost,
                            grown.best(p).unwrap().1,
                            "{name} at {bytes} bytes, groups of {max_group}"
                        );
                    }
                });
            }
        }
        with_problem(&residual(), CostKind::Lbdf, 2048, |p| {
            let all = DownsetProgramme {
                max_group: 64,
                join_bottlenecks: true,
            };
            assert_eq!(all.best(p).unwrap().1, 2192);
        });
    }

    #[test]
    fn a_join_takes_the_best_tail_for_each_head() {
        // The residual block at 2 KiB, with two states inside f's `before` ({a, b, c, e}):
        // the empty one and {a} (a alone, 1,024 bytes). f's only head is f itself (g, the
        // next bottleneck, is joined on its own). From the empty state f and its tail move
        // 512 in, 512 out and two convs' 584 bytes of weights, 2,192; from {a} the same
        // group less a moves as much again after the 1,024 paid for a.
        let g = residual();
        with_problem(&g, CostKind::Lbdf, 2048, |p| {
            let empty = NodeSet::new(g.len());
            let a = set(&g, &[0]);
            let mut best = FxMap::default();
            best.insert(empty.clone(), (0, empty.clone()));
            best.insert(a.clone(), (1024, empty.clone()));
            let necks = bottlenecks(p, &empty);
            let net = Net::of(&g, necks.iter().map(|neck| neck.node));
            let f = &necks[1];
            assert_eq!(f.node, NodeId(4));
            let budget = Budget::new(1).unwrap();
            let steps = |upper: u64| -> Vec<(Vec<u32>, u64, Vec<u32>)> {
                join(
                    p,
                    &net,
                    &best,
                    f,
                    (upper, &budget),
                    &RestFloor::default(),
                    (64, &Memo::new(p)),
                )
                .unwrap()
                .unwrap()
                .steps
                .iter()
                .map(|(next, total, from)| (ids(next), *total, ids(from)))
                .collect()
            };
            assert_eq!(steps(u64::MAX), [(vec![0, 1, 2, 3, 4], 2192, vec![])]);
            // Against an upper bound, a step must leave room for what g must still move.
            let rest = rest_bound(p, &RestFloor::default(), &set(&g, &[0, 1, 2, 3, 4])).0;
            assert_eq!(rest, 1024);
            assert!(steps(2192 + rest).is_empty());
            assert_eq!(steps(2193 + rest).len(), 1);
            // Stopped: no answer.
            let stop = std::sync::atomic::AtomicBool::new(true);
            let stopped = Budget::new(1).unwrap().with_stop(&stop);
            let none = join(
                p,
                &net,
                &best,
                f,
                (u64::MAX, &stopped),
                &RestFloor::default(),
                (64, &Memo::new(p)),
            );
            assert!(none.unwrap().is_none());
        });
    }
}
