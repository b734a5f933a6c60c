//! The [`Splitter`] trait and what it returns.

use crate::error::Result;
use fuselage_ir::{Graph, NodeSet};
use rand_chacha::ChaCha8Rng;

/// The valid groups a splitter made of one invalid group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    /// The parts: each valid, or an unfusable singleton; together they are the group.
    pub groups: Vec<NodeSet>,
    /// Whether the splitter had to fall back to random cuts somewhere (always `false` for
    /// [`RandomSplitter`](crate::RandomSplitter), whose cuts are random by design).
    pub fell_back: bool,
}

/// Counters a splitter keeps over its life, for reports (rectify rate, time).
///
/// Only calls on invalid groups count (a valid group comes back whole at the price of one
/// cost-model answer). The times nest: `seconds` holds everything, `explainer_seconds` the
/// explainer's calls (including the cost-model calls an explainer such as
/// `CostExplainer` makes itself), `cost_seconds` the splitter's own cost-model calls.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct SplitStats {
    /// Invalid groups the splitter was asked to split (memo hits included).
    pub invalid_groups: u64,
    /// Of those, groups split without any random fallback.
    pub rectified: u64,
    /// Seconds spent splitting invalid groups, all told.
    pub seconds: f64,
    /// Explainer calls made (0 for splitters without an explainer; memo hits make none).
    pub explanations: u64,
    /// Seconds spent in the explainer.
    pub explainer_seconds: f64,
    /// Seconds the splitter spent in the cost model, outside the explainer.
    pub cost_seconds: f64,
    /// Invalid groups where a random rival's split beat the splitter's own
    /// ([`Contested`](crate::Contested); 0 for a splitter that is not contested).
    pub rival_wins: u64,
}

impl SplitStats {
    /// What was counted after `earlier`, a snapshot of the same splitter: the stats of the
    /// work in between (one search run, say).
    ///
    /// ```
    /// use fuselage_split::SplitStats;
    /// let before = SplitStats { invalid_groups: 3, rectified: 2, ..Default::default() };
    /// let after = SplitStats { invalid_groups: 7, rectified: 5, ..Default::default() };
    /// assert_eq!(after.since(&before).invalid_groups, 4);
    /// assert_eq!(after.since(&before).rectify_rate(), 0.75);
    /// ```
    pub fn since(&self, earlier: &SplitStats) -> SplitStats {
        SplitStats {
            invalid_groups: self.invalid_groups.saturating_sub(earlier.invalid_groups),
            rectified: self.rectified.saturating_sub(earlier.rectified),
            seconds: (self.seconds - earlier.seconds).max(0.0),
            explanations: self.explanations.saturating_sub(earlier.explanations),
            explainer_seconds: (self.explainer_seconds - earlier.explainer_seconds).max(0.0),
            cost_seconds: (self.cost_seconds - earlier.cost_seconds).max(0.0),
            rival_wins: self.rival_wins.saturating_sub(earlier.rival_wins),
        }
    }

    /// Rectified over invalid groups (1 when none was met).
    pub fn rectify_rate(&self) -> f64 {
        if self.invalid_groups == 0 {
            1.0
        } else {
            self.rectified as f64 / self.invalid_groups as f64
        }
    }
}

/// Turns an invalid fusion group into valid ones.
///
/// Contract: given a weakly connected `group` of `g` (typically one the splitter's cost model
/// finds invalid), return groups that partition it, each weakly connected and each valid or an
/// unfusable singleton, such that replacing `group` by them in an acyclic plan keeps the plan
/// acyclic. A valid group comes back whole. Randomness comes only from `rng`.
///
/// Required: [`name`](Splitter::name) and [`split`](Splitter::split); [`stats`](Splitter::stats)
/// declines by default.
///
/// # Example: a splitter downstream
/// ```
/// use fuselage_ir::{Graph, NodeSet};
/// use fuselage_split::{cut, Result, Split, Splitter};
/// use rand_chacha::ChaCha8Rng;
///
/// /// Cuts every group into singletons: always valid unless a node alone does not fit.
/// struct Singletons;
///
/// impl Splitter for Singletons {
///     fn name(&self) -> &str { "singletons" }
///     fn split(&self, g: &Graph, group: &NodeSet, _rng: &mut ChaCha8Rng) -> Result<Split> {
///         let groups = group.iter().map(|v| NodeSet::singleton(g.len(), v)).collect();
///         Ok(Split { groups, fell_back: false })
///     }
/// }
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let mut rng = rand::SeedableRng::seed_from_u64(0);
/// let s = Singletons.split(&g, &NodeSet::full(g.len()), &mut rng)?;
/// assert_eq!(s.groups.len(), g.len());
/// # Ok::<(), fuselage_split::SplitError>(())
/// ```
pub trait Splitter: Send + Sync {
    /// The splitter's name, as reports print it (`random`, `get`, ...).
    fn name(&self) -> &str;

    /// Splits `group` into valid groups (see the trait's contract).
    ///
    /// # Errors
    /// When the cost model fails on a part, or `group` is not a connected group of `g`.
    fn split(&self, g: &Graph, group: &NodeSet, rng: &mut ChaCha8Rng) -> Result<Split>;

    /// Counters so far, if the splitter keeps them (default: `None`).
    fn stats(&self) -> Option<SplitStats> {
        None
    }
}

impl<S: Splitter + ?Sized> Splitter for &S {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn split(&self, g: &Graph, group: &NodeSet, rng: &mut ChaCha8Rng) -> Result<Split> {
        (**self).split(g, group, rng)
    }
    fn stats(&self) -> Option<SplitStats> {
        (**self).stats()
    }
}
