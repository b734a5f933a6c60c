//! What is objective-specific: plans compared by the problem's objective, and EDP, which no
//! programme sums, made of the latency and energy optima (see "Objectives" in the
//! [module docs](super)).

use crate::error::Result;
use crate::problem::{Problem, Score};
use crate::strategy::{SearchResult, StopReason};
use fuselage_cost::Objective;
use fuselage_ir::Plan;

/// Replaces `best` by `plan` when `plan` costs strictly less (the first of equals stays).
pub(super) fn keep_better(
    p: &Problem<'_>,
    best: &mut Option<(Plan, Score)>,
    plan: Plan,
) -> Result<()> {
    let score = p.score(&plan)?;
    if best.as_ref().is_none_or(|(_, s)| score.cost < s.cost) {
        *best = Some((plan, score));
    }
    Ok(())
}

/// EDP (see "Objectives" in the [module docs](super)): the exact latency and energy optima
/// (`additive` run on `p`'s siblings for each), the one of smaller EDP first, and the proven
/// lower bound `latency* × energy*` when both programmes finished.
pub(super) fn run_edp(
    p: &Problem<'_>,
    additive: impl Fn(&Problem<'_>) -> Result<SearchResult>,
) -> Result<(SearchResult, Option<u128>)> {
    let fast = additive(&p.sibling(Objective::Latency))?;
    let frugal = additive(&p.sibling(Objective::Energy))?;
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

#[cfg(test)]
mod tests {
    use super::super::testing::{chain, plan, with_problem};
    use super::*;
    use fuselage_cost::CostKind;
    use std::cell::RefCell;

    #[test]
    fn a_plan_replaces_the_best_only_when_it_costs_less() {
        // Four Relus: fused they move 512 bytes, alone 4 × 512.
        let g = chain(4);
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let fused = plan(&g, &[&[0, 1, 2, 3]]);
            let halves = plan(&g, &[&[0, 1], &[2, 3]]);
            let mut best = None;
            keep_better(p, &mut best, Plan::singletons(&g)).unwrap();
            keep_better(p, &mut best, halves.clone()).unwrap();
            assert_eq!(
                best.as_ref().map(|(plan, s)| (plan, s.cost)),
                Some((&halves, 1024))
            );
            // As costly: the first stays.
            let other_halves = plan(&g, &[&[0], &[1, 2, 3]]);
            keep_better(p, &mut best, other_halves).unwrap();
            assert_eq!(best.as_ref().map(|(plan, _)| plan), Some(&halves));
            keep_better(p, &mut best, fused.clone()).unwrap();
            assert_eq!(
                best.as_ref().map(|(plan, s)| (plan, s.cost)),
                Some((&fused, 512))
            );
        });
    }

    #[test]
    fn edp_keeps_the_better_of_the_latency_and_energy_plans_and_bounds_by_their_product() {
        let g = chain(4);
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let edp = p.sibling(Objective::Edp);
            let fused = plan(&g, &[&[0, 1, 2, 3]]);
            let alone = Plan::singletons(&g);
            let (f, a) = (edp.score(&fused).unwrap(), edp.score(&alone).unwrap());
            assert!(f.cost < a.cost);
            // What each programme returns: alone for latency, fused for energy.
            let answer = |plan: &Plan, stop, lower_bound| SearchResult {
                plan: plan.clone(),
                score: edp.score(plan).unwrap(),
                evaluations: 3,
                history: Vec::new(),
                stop,
                front: Vec::new(),
                lower_bound,
            };
            let asked = RefCell::new(Vec::new());
            let run = |stops: [StopReason; 2]| {
                asked.borrow_mut().clear();
                run_edp(&edp, |q| {
                    asked.borrow_mut().push(q.objective());
                    Ok(match q.objective() {
                        Objective::Latency => answer(&alone, stops[0], Some(7)),
                        _ => answer(&fused, stops[1], Some(5)),
                    })
                })
                .unwrap()
            };
            let (result, bound) = run([StopReason::Exhausted; 2]);
            assert_eq!(*asked.borrow(), [Objective::Latency, Objective::Energy]);
            assert_eq!((&result.plan, result.score.cost), (&fused, f.cost));
            assert_eq!(
                bound,
                Some(u128::from(a.latency_cycles) * u128::from(f.energy_fj))
            );
            assert_eq!(
                (result.evaluations, result.stop, result.lower_bound),
                (6, StopReason::Exhausted, Some(35))
            );
            assert_eq!(result.history, [u64::try_from(f.cost).unwrap()]);
            // Either programme cut short: no bound, and its reason.
            let (result, bound) = run([StopReason::Exhausted, StopReason::TimeLimit]);
            assert_eq!((bound, result.stop), (None, StopReason::TimeLimit));
            let (result, bound) = run([StopReason::Interrupted, StopReason::Exhausted]);
            assert_eq!((bound, result.stop), (None, StopReason::Interrupted));
        });
    }
}
