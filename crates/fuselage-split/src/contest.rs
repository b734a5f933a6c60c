//! [`Contested`]: a decorator that puts any splitter's answer against random splits and keeps
//! the one that moves the least DRAM.
//!
//! ## Why
//!
//! Replacing an invalid group by its parts changes a plan's DRAM by exactly the parts' `F_D`
//! (a plan's traffic is the sum of its groups'), so of two splits of the same group the one
//! whose parts sum to less is the better repair, whatever the rest of the plan. Algorithm 1
//! picks its cut from the explanation and then by DRAM, but it never looks past the edges the
//! explanation selects, and its answer is a pure function of the group: a search that meets
//! the group again gets the same parts (`docs/explainers.md`, "Where explanations should
//! win"). A random split explores but ignores DRAM. [`Contested`] asks the inner splitter, then
//! draws `rivals` random splits from the search's rng and returns the cheapest of all, ties to
//! the inner splitter's: never a repair worse than the inner splitter's, and a group met again
//! may be repaired better.
//!
//! The rivals cost cost-model calls (cached, no plan evaluations) and a draw from the search's
//! rng per invalid group, so a run stays a function of its seeds. The counters are the inner
//! splitter's, plus [`SplitStats::rival_wins`], the invalid groups a rival won.

use crate::error::Result;
use crate::random::RandomSplitter;
use crate::splitter::{Split, SplitStats, Splitter};
use fuselage_cost::CostModel;
use fuselage_ir::{Graph, NodeSet};
use rand_chacha::ChaCha8Rng;
use std::sync::atomic::{AtomicU64, Ordering};

/// `inner`'s split of each invalid group against `rivals` random splits; the least total
/// `F_D` wins (see the module docs).
///
/// # Example
/// ```
/// use fuselage_cost::{Cached, CostConfig, CostModel, Lbdf};
/// use fuselage_explain::CostExplainer;
/// use fuselage_ir::NodeSet;
/// use fuselage_split::{Contested, ExplainedSplitter, Splitter};
/// use rand::SeedableRng;
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let model = Cached::new(Lbdf::new(CostConfig::kib(128)?));
/// let get = ExplainedSplitter::new(CostExplainer::new(), &model);
/// let contested = Contested::new(&get, &model, 2);
/// let all = NodeSet::full(g.len());
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let dram = |parts: &[NodeSet]| -> u64 {
///     parts.iter().map(|p| model.evaluate(&g, p).unwrap().dram_bytes).sum()
/// };
/// let alone = get.split(&g, &all, &mut rng.clone())?;
/// let best = contested.split(&g, &all, &mut rng)?;
/// assert!(dram(&best.groups) <= dram(&alone.groups));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Contested<S, C> {
    inner: S,
    rival: RandomSplitter<C>,
    rivals: usize,
    wins: AtomicU64,
}

impl<S: Splitter, C: CostModel> Contested<S, C> {
    /// `inner` against `rivals` random splits judged by `model` (0: `inner` alone).
    pub fn new(inner: S, model: C, rivals: usize) -> Self {
        Contested {
            inner,
            rival: RandomSplitter::new(model),
            rivals,
            wins: AtomicU64::new(0),
        }
    }

    /// The splitter whose answers are contested.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Random splits drawn against each of its answers.
    pub fn rivals(&self) -> usize {
        self.rivals
    }

    /// The total `F_D` of `parts`.
    fn dram(&self, g: &Graph, parts: &[NodeSet]) -> Result<u64> {
        let model = self.rival.model();
        parts.iter().try_fold(0u64, |sum, p| {
            Ok(sum.saturating_add(model.evaluate(g, p)?.dram_bytes))
        })
    }
}

impl<S: Splitter, C: CostModel> Splitter for Contested<S, C> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn split(&self, g: &Graph, group: &NodeSet, rng: &mut ChaCha8Rng) -> Result<Split> {
        let mut best = self.inner.split(g, group, rng)?;
        if best.groups.len() == 1 || self.rivals == 0 {
            return Ok(best);
        }
        let mut least = self.dram(g, &best.groups)?;
        let mut won = false;
        // The inner splitter cut the group, so it is connected and invalid: each rival skips
        // those checks and costs its parts as it makes them.
        for _ in 0..self.rivals {
            let (parts, dram) = self.rival.split_costed(g, group, rng)?;
            if dram < least {
                least = dram;
                best.groups = parts;
                won = true;
            }
        }
        if won {
            self.wins.fetch_add(1, Ordering::Relaxed);
        }
        Ok(best)
    }

    fn stats(&self) -> Option<SplitStats> {
        let mut s = self.inner.stats()?;
        s.rival_wins += self.wins.load(Ordering::Relaxed);
        Some(s)
    }
}
