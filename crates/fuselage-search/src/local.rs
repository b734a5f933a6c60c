//! [`LocalSearch`]: a population of the best plans, improved by one-edit mutations.

use crate::error::Result;
use crate::mutate::random_mutation;
use crate::problem::{Problem, Score};
use crate::random::random_plan;
use crate::strategy::{Budget, SearchResult, SearchStrategy, StopReason, Tracker};
use fuselage_ir::Plan;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The paper's LS: keep the best `population` plans (K = 10); at each step mutate one of them
/// (move a node to a neighbouring group, merge two groups, split one, or merge one with all its
/// neighbours: see [`Mutation`](crate::mutate::Mutation)), repair, evaluate, and let the child
/// replace the worst member if it is better and new.
#[derive(Clone, Debug)]
pub struct LocalSearch {
    /// Population size K (default 10).
    pub population: usize,
    /// Segment-length bound of the random initial plans (default 64).
    pub max_segment: usize,
}

impl Default for LocalSearch {
    fn default() -> Self {
        LocalSearch {
            population: 10,
            max_segment: 64,
        }
    }
}

impl SearchStrategy for LocalSearch {
    fn name(&self) -> &str {
        "local"
    }

    fn run(&self, p: &Problem<'_>, budget: &Budget<'_>, seed: u64) -> Result<SearchResult> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut t = Tracker::new(budget);
        let mut pop: Vec<(Plan, Score)> = Vec::with_capacity(self.population);
        while !t.done() {
            let child = if pop.len() < self.population.max(1) {
                random_plan(p, self.max_segment, &mut rng)
            } else {
                let parent = &pop[rng.random_range(0..pop.len())].0;
                match random_mutation(p, parent, &mut rng) {
                    Some(c) => c,
                    None => random_plan(p, self.max_segment, &mut rng),
                }
            };
            let child = p.repair(child, &mut rng)?;
            let score = p.score(&child)?;
            t.record(&child, score);
            if pop.iter().any(|(q, _)| *q == child) {
                continue;
            }
            if pop.len() < self.population.max(1) {
                pop.push((child, score));
            } else if let Some(worst) = (0..pop.len()).max_by_key(|&i| (pop[i].1.cost, i))
                && score.cost < pop[worst].1.cost
            {
                pop[worst] = (child, score);
            }
        }
        Ok(t.finish(StopReason::Budget, Vec::new()))
    }
}
