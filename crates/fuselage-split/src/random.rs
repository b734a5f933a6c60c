//! [`RandomSplitter`]: the paper's baseline.

use crate::cut::random_cut;
use crate::error::Result;
use crate::splitter::{Split, SplitStats, Splitter};
use fuselage_cost::CostModel;
use fuselage_ir::{Graph, NodeSet};
use rand_chacha::ChaCha8Rng;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Random cuts, recursively, until every part is valid: the baseline of Mills et al., which
/// ignores DRAM entirely.
///
/// A part is done when the cost model finds it valid, or when it is a single node (valid, or
/// unfusable and kept alone). Otherwise it is cut at a random point of a random topological
/// order and each connected piece is split again. Terminates: every cut makes parts smaller.
///
/// Complexity: O(n) cuts for a group of n nodes, each O(n + e) plus one cost-model call per
/// part (wrap the model in [`Cached`](fuselage_cost::Cached) to share answers with the search).
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostModel, Lbdf};
/// use fuselage_ir::NodeSet;
/// use fuselage_split::{RandomSplitter, Splitter};
/// use rand::SeedableRng;
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let lbdf = Lbdf::new(CostConfig::kib(256)?);
/// let splitter = RandomSplitter::new(&lbdf);
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let split = splitter.split(&g, &NodeSet::full(g.len()), &mut rng)?;
/// for part in &split.groups {
///     let c = lbdf.evaluate(&g, part)?;
///     assert!(c.valid || (c.unfusable && part.len() == 1));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct RandomSplitter<C> {
    model: C,
    stats: Mutex<SplitStats>,
}

impl<C: CostModel> RandomSplitter<C> {
    /// A random splitter judging validity with `model`.
    pub fn new(model: C) -> Self {
        RandomSplitter {
            model,
            stats: Mutex::new(SplitStats::default()),
        }
    }

    /// The cost model.
    pub fn model(&self) -> &C {
        &self.model
    }

    /// Whether `part` is done (a single node, or valid), timing the cost model.
    fn done(&self, g: &Graph, part: &NodeSet, cost: &mut Duration) -> Result<bool> {
        if part.is_singleton() {
            return Ok(true);
        }
        let start = Instant::now();
        let valid = self.model.is_valid(g, part);
        *cost += start.elapsed();
        Ok(valid?)
    }

    /// Cuts `pieces` (the first cut of an invalid group, in the order to work on them) at
    /// random until every part is done, pushing the parts to `out`. Returns the parts' total
    /// `F_D` when `costed`; then single nodes are costed too, which a plain split skips.
    fn split_into(
        &self,
        g: &Graph,
        mut stack: Vec<NodeSet>,
        rng: &mut ChaCha8Rng,
        out: &mut Vec<NodeSet>,
        cost: &mut Duration,
        costed: bool,
    ) -> Result<u64> {
        let mut dram = 0u64;
        while let Some(part) = stack.pop() {
            let single = part.is_singleton();
            if single && !costed {
                out.push(part);
                continue;
            }
            let start = Instant::now();
            let c = self.model.evaluate(g, &part);
            *cost += start.elapsed();
            let c = c?;
            if single || c.valid {
                dram = dram.saturating_add(c.dram_bytes);
                out.push(part);
                continue;
            }
            stack.extend(Self::cut_pieces(g, &part, rng));
        }
        Ok(dram)
    }

    /// A random cut of `part`, its pieces in the order the split works on them.
    fn cut_pieces(g: &Graph, part: &NodeSet, rng: &mut ChaCha8Rng) -> Vec<NodeSet> {
        let mut pieces = random_cut(g, part, rng);
        pieces.reverse();
        pieces
    }

    /// A random split of `group`, which the caller knows to be a connected, invalid group of
    /// `g`, with its parts' total `F_D`: what [`split`](Splitter::split) returns for it, from
    /// the same draws of `rng`, without checking the group again and with each part costed
    /// once. The rivals of [`Contested`](crate::Contested) are drawn with it; no counter
    /// moves.
    pub(crate) fn split_costed(
        &self,
        g: &Graph,
        group: &NodeSet,
        rng: &mut ChaCha8Rng,
    ) -> Result<(Vec<NodeSet>, u64)> {
        let (mut parts, mut cost) = (Vec::new(), Duration::ZERO);
        let pieces = Self::cut_pieces(g, group, rng);
        let dram = self.split_into(g, pieces, rng, &mut parts, &mut cost, true)?;
        Ok((parts, dram))
    }
}

impl<C: CostModel> Splitter for RandomSplitter<C> {
    fn name(&self) -> &str {
        "random"
    }

    fn split(&self, g: &Graph, group: &NodeSet, rng: &mut ChaCha8Rng) -> Result<Split> {
        g.check_group(group, 0)?;
        let start = Instant::now();
        let mut cost = Duration::ZERO;
        let mut groups = Vec::new();
        let invalid = !self.done(g, group, &mut cost)?;
        if invalid {
            let pieces = Self::cut_pieces(g, group, rng);
            self.split_into(g, pieces, rng, &mut groups, &mut cost, false)?;
            let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            s.invalid_groups += 1;
            s.seconds += start.elapsed().as_secs_f64();
            s.cost_seconds += cost.as_secs_f64();
        } else {
            groups.push(group.clone());
        }
        Ok(Split {
            groups,
            fell_back: false,
        })
    }

    fn stats(&self) -> Option<SplitStats> {
        Some(*self.stats.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuselage_cost::{CostConfig, Lbdf};
    use rand::SeedableRng;

    #[test]
    fn random_splits_are_valid_partitions_and_seeded() {
        let g = fuselage_zoo::build("mobilenet_v2").unwrap();
        let lbdf = Lbdf::new(CostConfig::kib(128).unwrap());
        let s = RandomSplitter::new(&lbdf);
        let all = NodeSet::full(g.len());
        let a = s
            .split(&g, &all, &mut ChaCha8Rng::seed_from_u64(5))
            .unwrap();
        let b = s
            .split(&g, &all, &mut ChaCha8Rng::seed_from_u64(5))
            .unwrap();
        assert_eq!(a, b);
        g.check_plan(&fuselage_ir::Plan::new(a.groups.clone()))
            .unwrap();
        for p in &a.groups {
            let c = lbdf.evaluate(&g, p).unwrap();
            assert!(c.valid || (p.len() == 1 && c.unfusable), "{:?}", g.names(p));
        }
        let stats = s.stats().unwrap();
        assert_eq!(stats.invalid_groups, 2);
        assert_eq!(stats.rectified, 0);
        assert_eq!(stats.explanations, 0);
        assert!(stats.cost_seconds > 0.0 && stats.cost_seconds <= stats.seconds);
    }
}
