//! [`RandomSearch`]: a fresh random plan at every step.

use crate::error::Result;
use crate::problem::Problem;
use crate::strategy::{Budget, SearchResult, SearchStrategy, StopReason, Tracker};
use fuselage_ir::Plan;
use fuselage_ir::sample::{plan_from_order, random_topological_order};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Draws a fresh random plan at every step and keeps the best: the paper's RS.
///
/// A random plan is a random topological order cut into consecutive segments of random length
/// (uniform in 1..=L, with L itself drawn uniformly from 1..=`max_segment` for each plan), each
/// segment split into its connected components, unfusable nodes alone; the problem's splitter
/// then repairs the invalid groups.
#[derive(Clone, Debug)]
pub struct RandomSearch {
    /// The largest segment-length bound a plan may draw (default 64).
    pub max_segment: usize,
}

impl Default for RandomSearch {
    fn default() -> Self {
        RandomSearch { max_segment: 64 }
    }
}

/// A random plan as [`RandomSearch`] draws it, before repair.
pub(crate) fn random_plan(p: &Problem<'_>, max_segment: usize, rng: &mut ChaCha8Rng) -> Plan {
    let g = p.graph();
    let order = random_topological_order(g, rng);
    let max_len = rng.random_range(1..=max_segment.max(1));
    plan_from_order(g, &order, max_len, p.unfusable(), rng)
}

impl SearchStrategy for RandomSearch {
    fn name(&self) -> &str {
        "random"
    }

    fn run(&self, p: &Problem<'_>, budget: &Budget<'_>, seed: u64) -> Result<SearchResult> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut t = Tracker::new(budget);
        while !t.done() {
            let plan = p.repair(random_plan(p, self.max_segment, &mut rng), &mut rng)?;
            let score = p.score(&plan)?;
            t.record(&plan, score);
        }
        Ok(t.finish(StopReason::Budget, Vec::new()))
    }
}
