//! Bottlenecks, and the join that makes the groups across each from the best tail for each
//! head (see "Bottlenecks" in the [module docs](super)).

use super::common::{FxMap, rest_bound};
use super::net::Net;
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
pub(super) fn join(
    p: &Problem<'_>,
    net: &Net,
    best: &FxMap<NodeSet, (u64, NodeSet)>,
    neck: &Bottleneck,
    (upper, budget): (u64, &Budget<'_>),
    floor: &RestFloor,
    max_group: usize,
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
