//! Independent regions: the cuts no group of family 1 crosses, and the programme planned
//! region by region, each repeated region once (see "Independent regions" in the
//! [module docs](super)).

use super::common::rest_bound;
use super::downsets::{DownsetProgramme, Downsets};
use super::orders::OrderProgramme;
use super::shift::{Memo, alike};
use crate::bound::RestFloor;
use crate::error::Result;
use crate::problem::Problem;
use crate::strategy::Budget;
use fuselage_ir::{NodeId, NodeSet, Plan};

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
pub(super) fn plan_regions(
    p: &Problem<'_>,
    (budget, memo): (&Budget<'_>, &Memo),
    orders: &[Vec<NodeId>],
    regions: &[NodeSet],
    (upper_plan, upper): (&Plan, u64),
    order_programme: OrderProgramme,
    downsets: DownsetProgramme,
) -> Result<FirstFamily> {
    use rayon::prelude::*;
    let g = p.graph();
    let all = NodeSet::full(g.len());
    let floor = RestFloor::within(p, downsets.max_group.max(1), regions)?;
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
                let (_, cost, c, _) = order_programme.run_with(p, &inside, None, memo)?;
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
            match downsets.until(p, budget, bound, &floor, (&start, memo))? {
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
            let whole = RestFloor::of(p, downsets.max_group.max(1))?;
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
/// Checked for each node: what [`alike`] checks (op, shape, weights, multiply–accumulates,
/// row geometry and reads, consumers inside and outside, inputs), and the rest floor's
/// values.
fn shift_between(p: &Problem<'_>, floor: &RestFloor, a: &NodeSet, b: &NodeSet) -> Option<i64> {
    let (Some(a0), Some(b0)) = (a.first(), b.first()) else {
        return None;
    };
    let d = i64::from(b0.0) - i64::from(a0.0);
    alike(p, a, b, d, |v, w, map| floor.same_node(v, w, map)).then_some(d)
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
pub(super) enum FirstFamily {
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

#[cfg(test)]
mod tests {
    use super::super::testing::{chain, groups, layers, plan, set, with_problem};
    use super::*;
    use fuselage_cost::CostKind;
    use std::sync::atomic::AtomicBool;

    const ORDERS: OrderProgramme = OrderProgramme {
        max_segment: 160,
        patience: 48,
    };
    const DOWNSETS: DownsetProgramme = DownsetProgramme {
        max_group: 64,
        join_bottlenecks: true,
    };

    fn numbered(regions: &[NodeSet]) -> Vec<Vec<u32>> {
        regions
            .iter()
            .map(|r| r.iter().map(|v| v.0).collect())
            .collect()
    }

    /// The best plan of `layers` under 1 KiB: each Relu with its Sigmoid (1,024 bytes in and
    /// out), each conv alone (its weights too), the head alone.
    const BEST: [&[u32]; 5] = [&[0, 1], &[2], &[3, 4], &[5], &[6]];
    const OPTIMUM: u64 = 2048 + 4368 + 2048 + 4368 + 2048;

    #[test]
    fn a_chain_is_one_region_unless_no_group_holds_an_edge() {
        let g = chain(4);
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            assert_eq!(
                numbered(&independent_regions(p, 64).unwrap()),
                [[0, 1, 2, 3]]
            );
            // Groups of one node hold no edge: a cut before every node.
            assert_eq!(
                numbered(&independent_regions(p, 1).unwrap()),
                [[0], [1], [2], [3]]
            );
        });
    }

    #[test]
    fn convs_that_fit_with_nothing_cut_the_layers() {
        // Under 1 KiB neither conv shares a group (2,320 bytes of weights): cuts before and
        // after each. At 64 KiB any edge fits: one region.
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            assert_eq!(
                numbered(&independent_regions(p, 64).unwrap()),
                [vec![0, 1], vec![2], vec![3, 4], vec![5], vec![6]]
            );
        });
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            assert_eq!(independent_regions(p, 64).unwrap().len(), 1);
        });
    }

    #[test]
    fn the_second_layer_is_the_first_shifted() {
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            let floor = RestFloor::of(p, 64).unwrap();
            let shift = |a: &[u32], b: &[u32]| shift_between(p, &floor, &set(&g, a), &set(&g, b));
            assert_eq!(shift(&[0, 1], &[3, 4]), Some(3));
            assert_eq!(shift(&[3, 4], &[0, 1]), Some(-3));
            assert_eq!(shift(&[2], &[5]), Some(3));
            // Other ops, other sizes, or a graph output (the head) where there was none.
            assert_eq!(shift(&[0, 1], &[1, 2]), None);
            assert_eq!(shift(&[0, 1], &[2]), None);
            assert_eq!(shift(&[4], &[6]), None);
            assert_eq!(shift(&[3], &[6]), None);
            assert_eq!(groups(&shifted(&plan(&g, &[&[0, 1]]), 3)), [vec![3, 4]]);
        });
    }

    #[test]
    fn planned_region_by_region_the_layers_reach_the_whole_graph_optimum() {
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            let regions = independent_regions(p, 64).unwrap();
            let budget = Budget::new(1).unwrap();
            assert_eq!(DOWNSETS.best(p).unwrap().1, OPTIMUM);
            let orders = vec![g.node_ids().collect::<Vec<NodeId>>()];
            let (best_order, value, _, _) = ORDERS.run(p, &orders[0], None).unwrap();
            assert_eq!(value, OPTIMUM);
            let plan_below = |orders: &[Vec<NodeId>], upper_plan: &Plan, upper: u64| {
                plan_regions(
                    p,
                    (&budget, &Memo::new(p)),
                    orders,
                    &regions,
                    (upper_plan, upper),
                    ORDERS,
                    DOWNSETS,
                )
                .unwrap()
            };
            // Nothing of the family below the optimum.
            assert!(matches!(
                plan_below(&orders, &best_order, OPTIMUM),
                FirstFamily::NoneBelow(_)
            ));
            // Just above it, each region first bounded by its own optimum finds nothing
            // below that, and runs again with the slack.
            let FirstFamily::Found(found, _) = plan_below(&orders, &best_order, OPTIMUM + 1) else {
                panic!("the optimum is below the bound");
            };
            assert_eq!(groups(&found), groups(&plan(&g, &BEST)));
            // Bounded by every node alone (and no order), the first layer's Relu and Sigmoid
            // fuse, and the second layer takes that plan shifted.
            let alone = Plan::singletons(&g);
            let worth = p.score(&alone).unwrap().dram_bytes;
            let FirstFamily::Found(found, _) = plan_below(&[], &alone, worth) else {
                panic!("the optimum is below every node alone");
            };
            assert_eq!(groups(&found), groups(&plan(&g, &BEST)));
        });
    }

    #[test]
    fn regions_stopped_at_once_prove_a_floor_below_the_optimum() {
        let g = layers();
        with_problem(&g, CostKind::Lbdf, 1024, |p| {
            let regions = independent_regions(p, 64).unwrap();
            let stop = AtomicBool::new(true);
            let budget = Budget::new(1).unwrap().with_stop(&stop);
            let alone = Plan::singletons(&g);
            let worth = p.score(&alone).unwrap().dram_bytes;
            let FirstFamily::GaveUp(floor) = plan_regions(
                p,
                (&budget, &Memo::new(p)),
                &[],
                &regions,
                (&alone, worth),
                ORDERS,
                DOWNSETS,
            )
            .unwrap() else {
                panic!("stopped");
            };
            // The compulsory traffic at least: 1,024 in, 1,024 out, both convs' weights.
            assert!((2048 + 2 * 2320..=OPTIMUM).contains(&floor), "{floor}");
        });
    }
}
