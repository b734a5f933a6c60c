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
