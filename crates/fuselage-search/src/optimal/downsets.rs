//! Family 1 of the [module docs](super): the down-set programme over every plan whose groups
//! have at most `max_group` nodes, its steps grown as connected extensions ([`Net`]) and, at
//! each bottleneck, joined ([`join`]).

use super::common::{FxMap, rest_bound};
use super::joins::{bottlenecks, join};
use super::net::Net;
use super::shift::{Known, Memo};
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
                (&NodeSet::new(p.graph().len()), &Memo::new(p)),
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
        (start, memo): (&NodeSet, &Memo),
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
                let Some(found) = join(
                    p,
                    &net,
                    &best,
                    neck,
                    (upper, budget),
                    floor,
                    (max_group, memo),
                )?
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
                    self.expand(p, &net, d, (base, upper), slack, memo)
                })
                .collect();
            for (d, found) in layer.iter().zip(expanded) {
                let found = found?;
                costed += found.costed;
                memo.learn(found.fresh.iter().map(|(e, known)| (e, *known)));
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
    /// [`until`](Self::until)), as `(d ∪ E, base + F_D(E))` below `upper`, each
    /// extension's value and floor taken from `memo` when it holds a shift of it.
    ///
    /// Extensions are grown breadth first, one node-closure at a time; each generation is
    /// costed in parallel, and the next one generated in order, so the result does not depend
    /// on the thread count.
    fn expand(
        &self,
        p: &Problem<'_>,
        net: &Net,
        d: &NodeSet,
        (base, upper): (u64, u64),
        slack: Option<Slack<'_>>,
        memo: &Memo,
    ) -> Result<Expansion> {
        use rayon::prelude::*;
        let g = p.graph();
        let max_group = self.max_group.max(1);
        let unfusable = p.unfusable();
        let mut out = Expansion::default();
        net.grow(d, max_group, |level| {
            out.costed += level.len() as u64;
            // Each extension's F_D (when admissible), whether a larger one might fit, and
            // the answers the memo did not have.
            let costs: Vec<Result<(Option<u64>, bool, Known)>> = level
                .par_iter()
                .map(|e| {
                    let mut fresh = Known::default();
                    // The floors bound valid groups; an unfusable node alone is costed as is.
                    let alone =
                        e.is_singleton() && e.first().is_some_and(|v| unfusable.contains(v));
                    if let Some(slack) = slack.as_ref().filter(|_| !alone) {
                        // No group containing `e` leaves room: neither cost nor grow it.
                        if slack.floor.excess(e) >= slack.grow {
                            return Ok((None, false, fresh));
                        }
                        // This step cannot beat `upper`: grow it without costing it.
                        if slack.floor.step(g, d, e) >= slack.step {
                            let fits = memo.fits(p, e, &mut fresh)?;
                            return Ok((None, fits, fresh));
                        }
                    }
                    let dram = memo.answer(p, e, &mut fresh)?.value;
                    let grow = dram.is_some() || memo.fits(p, e, &mut fresh)?;
                    Ok((dram, grow, fresh))
                })
                .collect();
            let mut grow = Vec::with_capacity(level.len());
            for (e, cost) in level.iter().zip(costs) {
                let (dram, fits, fresh) = cost?;
                if memo.keeps() && !fresh.is_empty() {
                    out.fresh.push((e.clone(), fresh));
                }
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
    /// What the model said of extensions the memo did not know, in the order found.
    fresh: Vec<(NodeSet, Known)>,
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

#[cfg(test)]
mod tests {
    use super::super::testing::{diamond, groups, ids, residual, set, with_problem};
    use super::*;
    use fuselage_cost::CostKind;
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicBool;

    const ALL: DownsetProgramme = DownsetProgramme {
        max_group: 64,
        join_bottlenecks: true,
    };

    #[test]
    fn the_programme_finds_a_residual_blocks_best_plan() {
        // The block moves 512 bytes in, 512 out and two convs' 584 bytes of weights when it
        // is one group (2 KiB); at 1,088 bytes it is best cut in two, a and c written and
        // read once more (2 × 1,024).
        let g = residual();
        with_problem(&g, CostKind::Lbdf, 2048, |p| {
            let (plan, cost, _) = ALL.best(p).unwrap();
            assert_eq!((groups(&plan), cost), (vec![vec![0, 1, 2, 3, 4, 5]], 2192));
        });
        with_problem(&g, CostKind::Lbdf, 1088, |p| {
            let (plan, cost, _) = ALL.best(p).unwrap();
            assert_eq!(
                (groups(&plan), cost),
                (vec![vec![0, 1, 2], vec![3, 4, 5]], 4240)
            );
            // Groups of one: every node alone.
            let single = DownsetProgramme {
                max_group: 1,
                ..ALL
            };
            let (plan, cost, _) = single.best(p).unwrap();
            assert_eq!(plan, Plan::singletons(&g));
            assert_eq!(cost, 1024 + 1608 + 1024 + 1608 + 1536 + 1024);
        });
    }

    #[test]
    fn the_bound_is_strict_and_a_start_plans_only_the_rest() {
        let g = residual();
        with_problem(&g, CostKind::Lbdf, 1088, |p| {
            let floor = RestFloor::of(p, 64).unwrap();
            let none = NodeSet::new(g.len());
            let budget = Budget::new(1).unwrap();
            let memo = Memo::new(p);
            let until =
                |upper, start: &NodeSet| ALL.until(p, &budget, upper, &floor, (start, &memo));
            assert!(matches!(
                until(4240, &none).unwrap(),
                Downsets::NoneBelow(_)
            ));
            let Downsets::Found(plan, cost, _) = until(4241, &none).unwrap() else {
                panic!("the optimum is below 4,241");
            };
            assert_eq!(
                (groups(&plan), cost),
                (vec![vec![0, 1, 2], vec![3, 4, 5]], 4240)
            );
            // From {a, b, c}: the rest in one group, reading c and a, writing g, with e's
            // weights.
            let Downsets::Found(plan, cost, _) = until(u64::MAX, &set(&g, &[0, 1, 2])).unwrap()
            else {
                panic!("no bound");
            };
            assert_eq!((groups(&plan), cost), (vec![vec![3, 4, 5]], 2120));
        });
    }

    #[test]
    fn a_programme_stopped_at_once_proves_the_rest_bound_of_the_start() {
        let g = residual();
        with_problem(&g, CostKind::Lbdf, 1088, |p| {
            let floor = RestFloor::of(p, 64).unwrap();
            let none = NodeSet::new(g.len());
            let stop = AtomicBool::new(true);
            let budget = Budget::new(1).unwrap().with_stop(&stop);
            let bound = rest_bound(p, &floor, &none).0;
            assert!(bound <= 4240);
            assert!(matches!(
                ALL.until(p, &budget, 5000, &floor, (&none, &Memo::new(p)))
                    .unwrap(),
                Downsets::GaveUp(b) if b == bound
            ));
            // The bound given is no higher than the upper one.
            assert!(matches!(
                ALL.until(p, &budget, 1, &floor, (&none, &Memo::new(p)))
                    .unwrap(),
                Downsets::GaveUp(1)
            ));
        });
    }

    #[test]
    fn a_state_extends_by_each_connected_down_closed_set_below_the_bound() {
        // The diamond with room for all: a moves 256 in and 256 out; {a, b}, {a, c} and
        // {a, b, c} write two tensors; the whole diamond one.
        let g = diamond();
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let net = Net::of(&g, []);
            let none = NodeSet::new(g.len());
            let steps = |base, upper| -> (Vec<(Vec<u32>, u64)>, u64) {
                let found = ALL
                    .expand(p, &net, &none, (base, upper), None, &Memo::new(p))
                    .unwrap();
                let steps = found.steps.iter().map(|(s, c)| (ids(s), *c)).collect();
                (steps, found.costed)
            };
            assert_eq!(
                steps(0, u64::MAX),
                (
                    vec![
                        (vec![0], 512),
                        (vec![0, 1], 768),
                        (vec![0, 2], 768),
                        (vec![0, 1, 2], 768),
                        (vec![0, 1, 2, 3], 512),
                    ],
                    5
                )
            );
            // From a state worth 100, below 868: every set is still costed.
            assert_eq!(
                steps(100, 868),
                (vec![(vec![0], 612), (vec![0, 1, 2, 3], 612)], 5)
            );
        });
    }

    #[test]
    fn a_step_is_kept_when_it_is_the_first_or_a_cheaper_way() {
        let g = diamond();
        let (none, a, c) = (NodeSet::new(4), set(&g, &[0]), set(&g, &[0, 2]));
        let mut best = FxMap::default();
        let mut by_size = BTreeMap::new();
        keep_step(&mut best, &mut by_size, a.clone(), 512, none.clone());
        keep_step(&mut best, &mut by_size, c.clone(), 768, a.clone());
        // As cheap: the first stays. Cheaper: it replaces, and the state waits once.
        keep_step(&mut best, &mut by_size, c.clone(), 768, none.clone());
        assert_eq!(best[&c], (768, a.clone()));
        keep_step(&mut best, &mut by_size, c.clone(), 700, none.clone());
        assert_eq!(best[&c], (700, none.clone()));
        assert_eq!(by_size, BTreeMap::from([(1, vec![a]), (2, vec![c])]));
    }
}
