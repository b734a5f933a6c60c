//! [`CutChoice`]: which edges of an explanation the [`ExplainedSplitter`] tries to cut.
//!
//! ## Why sample
//!
//! Algorithm 1 as published tries the edges the explainer *selects*, best first, and picks among
//! the cuts by DRAM: its answer is a pure function of the group (which is what lets a
//! [`SplitMemo`] share it). A local search or NSGA-II that meets the same invalid group again
//! therefore gets the same parts every time, and explores only through its own mutations. The
//! random splitter explores at every call, which is why it often ends closer to the optimum
//! (`docs/explainers.md`).
//!
//! [`CutChoice::Sampled`] keeps the explanation's guidance and adds exploration: the splitter
//! draws as many edges as the explanation selects, without replacement, each with a
//! probability that grows with its score, `exp(s / T)` for the score `s` rescaled to [0, 1]
//! over the group's edges and a temperature `T` (the Gumbel top-k draw: `s / T` plus standard
//! Gumbel noise per edge, the largest keys taken). As `T` falls the draw becomes the selection;
//! as it grows, a uniform draw. Everything else of Algorithm 1 (the categories, the choice by
//! DRAM, the fallback) is unchanged.
//!
//! ## Determinism and cost
//!
//! The draw comes from one number drawn from the search's rng per call of
//! [`Splitter::split`](crate::Splitter::split), so a run is still a function of its seeds, and a
//! group met again may be cut elsewhere. Sampled splits are not memoised; the explanations
//! are (they stay a function of the group, the explainer's seed being the group's), so a
//! group met again costs no explainer call.
//!
//! [`ExplainedSplitter`]: crate::ExplainedSplitter
//! [`SplitMemo`]: crate::SplitMemo

use crate::error::{Result, SplitError};
use fuselage_explain::Explanation;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// Which edges of an explanation the [`ExplainedSplitter`](crate::ExplainedSplitter) tries to
/// cut (see the module docs).
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub enum CutChoice {
    /// The explanation's selected edges, best first: Algorithm 1 as published, a pure function
    /// of the group.
    #[default]
    Selected,
    /// As many edges as the explanation selects, drawn without replacement with probability
    /// growing as `exp(s / temperature)` in the rescaled score `s`, from the search's rng.
    Sampled {
        /// The temperature: in (0, 100]; small is close to the selection, large is uniform.
        temperature: f32,
    },
}

/// The largest temperature [`CutChoice::sampled`] takes (the draw is all but uniform long
/// before it).
pub const MAX_TEMPERATURE: f32 = 100.0;

impl CutChoice {
    /// [`CutChoice::Sampled`] at `temperature`.
    ///
    /// # Errors
    /// [`SplitError::Config`] for a temperature that is not in (0, [`MAX_TEMPERATURE`]].
    pub fn sampled(temperature: f32) -> Result<Self> {
        if !(temperature > 0.0 && temperature <= MAX_TEMPERATURE) {
            return Err(SplitError::Config(format!(
                "a cut temperature must be in (0, {MAX_TEMPERATURE}], not {temperature}"
            )));
        }
        Ok(CutChoice::Sampled { temperature })
    }

    /// The indices into `e.edges` to try, in order: the selection, or a draw from `rng`.
    pub(crate) fn edges(self, e: &Explanation, rng: &mut ChaCha8Rng) -> Vec<usize> {
        match self {
            CutChoice::Selected => e.selected.clone(),
            CutChoice::Sampled { temperature } => {
                gumbel_top_k(&e.edge_scores, e.selected.len().max(1), temperature, rng)
            }
        }
    }
}

/// `k` indices of `scores` drawn without replacement, each with probability proportional to
/// `exp(s / t)` among those left, `s` the score rescaled to [0, 1]; in the order drawn.
fn gumbel_top_k(scores: &[f32], k: usize, t: f32, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let lo = scores.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = scores.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut keyed: Vec<(f64, usize)> = scores
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            // u in (0, 1): never 0, so the logarithms are finite.
            let u: f64 = rng.random_range(f64::EPSILON..1.0);
            let gumbel = -(-u.ln()).ln();
            (f64::from((s - lo) / span) / f64::from(t) + gumbel, i)
        })
        .collect();
    keyed.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    keyed.into_iter().take(k).map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn the_temperature_is_range_checked() {
        for bad in [0.0, -1.0, f32::NAN, 100.5, f32::INFINITY] {
            assert!(CutChoice::sampled(bad).is_err(), "{bad}");
        }
        assert_eq!(
            CutChoice::sampled(0.5).unwrap(),
            CutChoice::Sampled { temperature: 0.5 }
        );
    }

    /// A cold draw is the ranking; a hot one reaches every edge; each draw is k distinct
    /// indices, the same for the same seed.
    #[test]
    fn the_draw_goes_from_the_ranking_to_uniform() {
        let scores = [0.9f32, 0.1, 0.5, 0.3, 0.0];
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            assert_eq!(gumbel_top_k(&scores, 2, 1e-4, &mut rng), vec![0, 2]);
        }
        let mut first = [0u32; 5];
        for _ in 0..5_000 {
            let d = gumbel_top_k(&scores, 2, MAX_TEMPERATURE, &mut rng);
            assert_eq!(d.len(), 2);
            assert_ne!(d[0], d[1]);
            first[d[0]] += 1;
        }
        // Near uniform: each edge first about a fifth of the time.
        assert!(first.iter().all(|&n| (800..1200).contains(&n)), "{first:?}");
        // At T = 0.25 the best edge leads more often than the worst, and not always.
        let mut best = 0;
        let mut worst = 0;
        for _ in 0..2_000 {
            match gumbel_top_k(&scores, 1, 0.25, &mut rng)[0] {
                0 => best += 1,
                4 => worst += 1,
                _ => {}
            }
        }
        assert!(best > 5 * worst && best < 2_000, "{best} {worst}");
        let draw = |seed| gumbel_top_k(&scores, 3, 1.0, &mut ChaCha8Rng::seed_from_u64(seed));
        assert_eq!(draw(9), draw(9));
    }
}
