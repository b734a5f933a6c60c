//! Family 1 of the [module docs](super): the down-set programme over every plan whose groups
//! have at most `max_group` nodes, its steps grown as connected extensions ([`Net`]) and, at
//! each bottleneck, joined ([`join`]).

use super::common::{FxMap, rest_bound};
use super::joins::{bottlenecks, join};
use super::net::Net;
use crate::bound::RestFloor;
use crate::error::Result;
use crate::problem::Problem;
use crate::strategy::Budget;
use fuselage_cost::Objective;
use fuselage_ir::{NodeSet, Plan};

/// The down-set programme, with the settings of [`Optimal`](super::Optimal) it reads.
#[derive(Clone, Copy, Debug)]
pub(super) struct DownsetProgramme {
    /// [`Optimal::max_group`](super::Optimal::max_group).
    pub(super) max_group: usize,
    /// [`Optimal::join_bottlenecks`](super::Optimal::join_bottlenecks).
    pub(super) join_bottlenecks: bool,
}

impl DownsetProgramme {
    /// [`Optimal::best_over_downsets`](super::Optimal::best_over_downsets): the programme
    /// from nothing, without a limit or a bound.
    pub(super) fn best(&self, p: &Problem<'_>) -> Result<(Plan, u64, u64)> {
        // Without a limit or a bound the programme always completes with a plan.
        let unlimited = Budget::new(1)?;
        Ok(
            match self.until(
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

    /// The programme from the down-set `start` (nothing, for the whole graph;
    /// everything outside a region, for one of the independent regions, whose plan is then
    /// the groups added), given up when `budget` expires (its time limit or its stop flag),
    /// looking only for plans that move less than `upper` bytes.
    ///
    /// **Bound.** A state `D` is not extended when `best[D]` plus the traffic the rest must
    /// move ([`rest_bound`]: [`remaining_lower_bound`](crate::remaining_lower_bound) and
    /// `floor`'s [`RestFloor::rest`])
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
    /// ([`join`], "Bottlenecks" in the [module docs](super)).
    pub(super) fn until(
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
        let net = Net::of(g, necks.iter().map(|neck| neck.node));
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
                let Some(found) = join(p, &net, &best, neck, (upper, budget), floor, max_group)?
                else {
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
    /// [`until`](Self::until)), as `(d ∪ E, base + F_D(E))` below `upper`.
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

/// How the down-set programme ended.
pub(super) enum Downsets {
    /// The best plan of the family below the bound, its objective value and the extensions costed.
    Found(Plan, u64, u64),
    /// No plan of the family moves less than the bound (after this many extensions).
    NoneBelow(u64),
    /// The budget expired (time limit or stop flag); what the family's optimum is proven to
    /// reach at least (see [`DownsetProgramme::until`]).
    GaveUp(u64),
}
