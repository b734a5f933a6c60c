//! Fidelity, sparsity and cut quality of explanations on held-out invalid groups.
//!
//! For a group `G` the classifier calls invalid with probability `p(G)`, and an explanation's
//! selected edges `S`:
//!
//! - fidelity+ = `p(G) − p(G ∖ S)`: how much the verdict weakens when the explanation's
//!   messages are removed (edge weights 0 on `S`). Higher is better.
//! - fidelity− = `p(G) − p(S)`: how much it weakens when only the explanation's messages are
//!   kept. Lower is better.
//! - sparsity: the share of edges left out of `S`.
//! - top-cut share: the share of groups where some cut that severs the top-ranked edge (see
//!   [`fuselage_ir::order`]) leaves parts whose exact buffer requirement is each below the
//!   group's, and the share where both parts become valid.

use super::ExplainSet;
use crate::error::{ExplainError, Result};
use crate::explainer::Explainer;
use fuselage_cost::CostModel;
use fuselage_gnn::{ExplainableModel, GroupGraph};
use fuselage_ir::order::GroupOrder;
use fuselage_ir::sample::components;
use fuselage_ir::{Graph, NodeSet};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One explainer's scores over an [`ExplainSet`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplainerMetrics {
    /// The explainer's name.
    pub explainer: String,
    /// Groups scored.
    pub groups: usize,
    /// Mean fidelity+ (higher is better).
    pub fidelity_plus: f64,
    /// Mean fidelity− (lower is better).
    pub fidelity_minus: f64,
    /// Mean logit fidelity+, `(z(G) − z(G ∖ S)) / |z(G)|`: fidelity+ before the sigmoid, which
    /// still ranks explainers where the probability saturates (higher is better).
    pub logit_fidelity_plus: f64,
    /// Mean logit fidelity−, `(z(G) − z(S)) / |z(G)|` (lower is better).
    pub logit_fidelity_minus: f64,
    /// Mean sparsity.
    pub sparsity: f64,
    /// Share of groups whose top edge, cut, leaves parts each with a lower buffer requirement.
    pub top_cut_lowers: f64,
    /// Share of groups whose top edge, cut, leaves parts that are all valid.
    pub top_cut_valid: f64,
    /// Mean seconds per explanation.
    pub seconds_per_group: f64,
}

/// Fidelity+ and fidelity− of a selection mask (1 on the selected edges, edge order) on an
/// encoded group at `beta_bytes`.
///
/// # Errors
/// Classifier errors.
pub fn fidelity<M: ExplainableModel + ?Sized>(
    clf: &M,
    gg: &GroupGraph,
    beta_bytes: u64,
    selected: &[f32],
) -> Result<(f64, f64)> {
    let f = Fidelity::of(clf, gg, beta_bytes, selected)?;
    Ok((f.plus, f.minus))
}

/// Fidelity on the probability and on the logit scale.
struct Fidelity {
    plus: f64,
    minus: f64,
    logit_plus: f64,
    logit_minus: f64,
}

impl Fidelity {
    fn of<M: ExplainableModel + ?Sized>(
        clf: &M,
        gg: &GroupGraph,
        beta_bytes: u64,
        selected: &[f32],
    ) -> Result<Self> {
        let removed: Vec<f32> = selected.iter().map(|s| 1.0 - s).collect();
        let z = clf.logits(&[
            (gg, beta_bytes, None),
            (gg, beta_bytes, Some(&removed)),
            (gg, beta_bytes, Some(selected)),
        ])?;
        let p: Vec<f64> = z
            .iter()
            .map(|&z| 1.0 / (1.0 + (-f64::from(z)).exp()))
            .collect();
        let scale = f64::from(z[0].abs()).max(1e-6);
        Ok(Fidelity {
            plus: p[0] - p[1],
            minus: p[0] - p[2],
            logit_plus: f64::from(z[0] - z[1]) / scale,
            logit_minus: f64::from(z[0] - z[2]) / scale,
        })
    }
}

/// The largest buffer requirement of the connected parts of `set`.
fn worst_part(model: &dyn CostModel, g: &Graph, set: &NodeSet) -> Result<(u64, bool)> {
    let mut worst = 0;
    let mut valid = true;
    for part in components(g, set) {
        let c = model.evaluate(g, &part)?;
        worst = worst.max(c.buffer_bytes);
        valid &= c.valid || (part.is_singleton() && c.unfusable);
    }
    Ok((worst, valid))
}

/// Scores `explainer` on every instance of `set` (instance `i` explained with seed
/// `seed + i`), fidelity read from `clf` (any [`ExplainableModel`]), cuts judged by the exact
/// cost model `clf` imitates at the instance's configuration: the model the explainer is
/// handed.
///
/// # Errors
/// [`ExplainError::Config`] for an empty set; the explainer's and the models' errors.
pub fn evaluate_explainer<M: ExplainableModel + ?Sized>(
    explainer: &dyn Explainer,
    clf: &M,
    set: &ExplainSet,
    seed: u64,
) -> Result<ExplainerMetrics> {
    if set.instances.is_empty() {
        return Err(ExplainError::Config(
            "no groups to score explanations on".into(),
        ));
    }
    let kind = clf.cost_kind();
    let (mut fp, mut fm, mut sp, mut lowers, mut valid, mut secs) = (0.0, 0.0, 0.0, 0, 0, 0.0);
    let (mut zp, mut zm) = (0.0, 0.0);
    for (i, inst) in set.instances.iter().enumerate() {
        let g = set.graph_of(inst);
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(i as u64));
        let model = kind.model(inst.config);
        let start = Instant::now();
        let e = explainer.explain(g, &inst.group, model.as_ref(), &mut rng)?;
        secs += start.elapsed().as_secs_f64();
        let beta = inst.config.buffer_bytes();
        let f = Fidelity::of(clf, &inst.encoded, beta, &e.selection_mask())?;
        fp += f.plus;
        fm += f.minus;
        zp += f.logit_plus;
        zm += f.logit_minus;
        sp += e.sparsity();
        let Some(&top) = e.ranking().first() else {
            continue;
        };
        let whole = model.evaluate(g, &inst.group)?.buffer_bytes;
        let order = GroupOrder::new(g, &inst.group);
        let (u, v) = e.edges[top];
        let (mut lower, mut ok) = (false, false);
        for k in order.cuts_of(u, v) {
            let (head, tail) = order.cut(k);
            let (bh, vh) = worst_part(model.as_ref(), g, &head)?;
            let (bt, vt) = worst_part(model.as_ref(), g, &tail)?;
            lower |= bh < whole && bt < whole;
            ok |= vh && vt;
        }
        lowers += usize::from(lower);
        valid += usize::from(ok);
    }
    let n = set.instances.len() as f64;
    Ok(ExplainerMetrics {
        explainer: explainer.name().to_string(),
        groups: set.instances.len(),
        fidelity_plus: fp / n,
        fidelity_minus: fm / n,
        logit_fidelity_plus: zp / n,
        logit_fidelity_minus: zm / n,
        sparsity: sp / n,
        top_cut_lowers: lowers as f64 / n,
        top_cut_valid: valid as f64 / n,
        seconds_per_group: secs / n,
    })
}
