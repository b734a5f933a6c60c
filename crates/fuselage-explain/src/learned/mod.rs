//! The learned explainers of Mills et al. over the GNN validity classifier, on burn.
//!
//! ## Design
//!
//! The explainers, their training set and the fidelity metrics are generic over
//! [`ExplainableModel`], the part of a classifier they read (its forward pass, differentiable
//! in the message weights, its node embeddings, the cost model it imitates, its device). Each
//! type parameter defaults to the shipped
//! [`GnnClassifier`](fuselage_gnn::GnnClassifier), so `GnnExplainer::new(clf)` and
//! `shipped_pg(clf)` need no annotation.
//!
//! All three explain the classifier's verdict on one group through the same door: the
//! classifier's edge weights. A weight multiplies the messages of one internal edge (both
//! directions), so a soft mask in [0, 1] per edge is learnt through the unchanged network.
//! PG and RG train their own networks, so their masks require gradients on an autodiff device.
//! The classifier's weights stay on the plain device: burn treats them as constants when they
//! meet autodiff tensors, so a backward pass computes only what the mask needs.
//!
//! - [`GnnExplainer`]: one mask per instance, optimised by gradient descent (Adam selectable).
//!   It has no network of its own, so it needs no tape of its own: each step asks the model
//!   for the gradient of its logit with respect to the message weights
//!   ([`ExplainableModel::weight_gradients`]: one batch, a new weighting each step). The
//!   shipped classifier answers in closed form ([`fuselage_gnn::Trace`]), which runs 2.2 times
//!   faster on a 30-node group than burn's autodiff, and computes the first layer's constant
//!   parts once per explanation ([`fuselage_gnn::Fixed`]).
//! - [`PgExplainer`]: an MLP maps the classifier's embeddings of an edge's endpoints and of the
//!   group to the edge's logit; trained once across many groups, then one forward pass.
//! - [`RgExplainer`]: a seed locator and a growth policy over the same embeddings; the grown
//!   connected subgraph is the explanation.
//!
//! Where a step's arithmetic is a handful of values (a mask of E edges, a policy's scores of n
//! nodes, a layer norm's rows), it runs on the host rather than as one small tensor op after
//! another, each with an allocation and a dispatch. Each such function is written as the
//! sequence of `f32` operations burn's CPU backend runs for the ops it replaces (its `simd`
//! feature off, as this workspace builds it), so every explanation is the same to the bit;
//! a unit test beside each compares the two. The matrix products stay on the device.
//!
//! The classifier is confident on most invalid groups, where `σ(z)` saturates and the gradient
//! of `−log σ(z)` vanishes. The prediction terms therefore read the logit at a temperature
//! `T = max(1, |z₀| / 4)` (`z₀` the unmasked logit), which keeps the objective's optimum and
//! its gradients informative; `docs/explainers.md` records it.

/// Implements `Explainer` for a learned explainer `$ty<M>` over any `ExplainableModel` `M`,
/// named `$name`, once for all three. The closure-like argument scores the group encoded for
/// the classifier (`$gg`, a `GroupGraph`, at `$beta` bytes, with the caller's `$rng`) and
/// returns its edge scores and, optionally, its node scores. β is read from the config of the
/// cost model the call is judged by, the one carrier of β; the classifier has no input for the
/// element sizes (it was trained at 1 byte), so it reads β alone. The encoding lists the group's
/// edges in the explanation's order, so the scores need no translation; the explainer's
/// `config().selection` picks the explanation's edges.
macro_rules! learned_explainer {
    ($ty:ident = $name:literal, |$x:ident, $gg:ident, $beta:ident, $rng:ident| $score:expr) => {
        impl<M: ::fuselage_gnn::ExplainableModel> $crate::Explainer for $ty<M> {
            fn name(&self) -> &str {
                $name
            }

            fn explain(
                &self,
                g: &::fuselage_ir::Graph,
                group: &::fuselage_ir::NodeSet,
                model: &dyn ::fuselage_cost::CostModel,
                rng: &mut ::rand_chacha::ChaCha8Rng,
            ) -> $crate::Result<$crate::Explanation> {
                let (order, edges) = $crate::group_edges(g, group)?;
                let $gg = &::fuselage_gnn::GroupGraph::new(g, group)?;
                let ($x, $beta, $rng) = (self, model.config().buffer_bytes(), rng);
                let scored: $crate::Result<(Vec<f32>, Option<Vec<f32>>)> = $score;
                let (edge_scores, node_scores) = scored?;
                $crate::Explanation::from_scores(
                    $name,
                    &order,
                    edges,
                    edge_scores,
                    node_scores,
                    &$x.config().selection,
                )
            }
        }
    };
}

mod checkpoint;
mod data;
mod gnne;
mod metrics;
mod pg;
mod rg;

pub use checkpoint::ExplainerMeta;
pub use data::{ExplainSet, ExplainSetConfig, Instance};
/// What the learned explainers read from a classifier (defined in `fuselage-gnn`).
pub use fuselage_gnn::ExplainableModel;
pub use gnne::{GnnExplainer, GnnExplainerConfig, MaskOptimizer};
pub use metrics::{ExplainerMetrics, evaluate_explainer, fidelity};
pub use pg::{EdgeMlp, PgConfig, PgEpoch, PgExplainer, PgReport, shipped_pg};
pub use rg::{RgConfig, RgEpoch, RgExplainer, RgPolicy, RgReport, shipped_rg};

use crate::error::{ExplainError, Result};
use burn::prelude::*;
use fuselage_gnn::features::DeviceBatch;
use fuselage_gnn::{GraphBatch, GroupGraph};

/// The temperature at which the prediction terms read the logit `z0`.
pub(crate) fn logit_temperature(z0: f32) -> f32 {
    (z0.abs() / 4.0).max(1.0)
}

/// Per-edge mask `[E]` to per-message weights `[2E, 1]`, in the order [`GraphBatch::push`]
/// lays messages out (both directions of edge 0, then of edge 1, ...).
pub(crate) fn message_weights(mask: Tensor<1>) -> Tensor<2> {
    let [e] = mask.dims();
    mask.reshape([e, 1]).repeat_dim(1, 2).reshape([2 * e, 1])
}

/// Groups, each at its β, encoded as one batch on the classifier's device.
pub(crate) fn device_batch<M: ExplainableModel + ?Sized>(
    clf: &M,
    groups: &[(&GroupGraph, u64)],
) -> Result<DeviceBatch> {
    let mut b = GraphBatch::new(clf.feature_set());
    for (gg, beta) in groups {
        b.push(gg, *beta as f64, None)?;
    }
    Ok(b.to_device(clf.device()))
}

/// Reads a float tensor back to the host.
pub(crate) fn host<const D: usize>(t: Tensor<D>) -> Result<Vec<f32>> {
    t.into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|e| ExplainError::Checkpoint(format!("reading a tensor back: {e:?}")))
}

/// The factor `s = −sign(z0)/T(z0)` of [`keep_verdict_loss`]: a masked logit `z` costs
/// `softplus(s·z)`.
pub(crate) fn keep_verdict_scale(z0: f32) -> f32 {
    (if z0 >= 0.0 { -1.0 } else { 1.0 }) / logit_temperature(z0)
}

/// The temperature-scaled "keep the verdict" loss of logits `z` whose unmasked values were
/// `z0`: `Σ softplus(−sign(z0)·z/T(z0))`.
pub(crate) fn keep_verdict_loss(z: Tensor<1>, z0: &[f32]) -> Tensor<1> {
    let device = z.device();
    let scale: Vec<f32> = z0.iter().map(|&z| keep_verdict_scale(z)).collect();
    let n = scale.len();
    let s = Tensor::<1>::from_data(TensorData::new(scale, [n]), &device);
    burn::tensor::activation::softplus(z * s, 1.0).sum()
}

/// The edge scores an explainer gives the probe groups of `fuselage_gnn::probe_groups` at
/// [`fuselage_gnn::PROBE_BETA`]: what a checkpoint records, and a load must reproduce.
///
/// # Errors
/// The explainer's errors.
pub fn probe_scores(
    mut scores: impl FnMut(&GroupGraph, u64) -> Result<Vec<f32>>,
) -> Result<Vec<Vec<f32>>> {
    let (g, groups) = fuselage_gnn::probe_groups()?;
    groups
        .iter()
        .map(|s| scores(&GroupGraph::new(&g, s)?, fuselage_gnn::PROBE_BETA))
        .collect()
}

/// Mean binary entropy of a mask in (0, 1).
pub(crate) fn mask_entropy(m: Tensor<1>) -> Tensor<1> {
    let eps = 1e-6;
    let one_minus = m.clone().neg().add_scalar(1.0);
    let h =
        m.clone() * m.add_scalar(eps).log() + one_minus.clone() * one_minus.add_scalar(eps).log();
    h.mean().neg()
}

/// The gradient of [`mask_entropy`] with respect to the mask, on the host:
/// `−(1/E)·(ln(m+ε) + m/(m+ε) − ln(1−m+ε) − (1−m)/(1−m+ε))`.
///
/// Each step is the `f32` operation that burn's CPU backend runs for the tensor op it stands
/// for (`1 − m` as `(−m) + 1`, ε as the `f32` nearest the `f64` 10⁻⁶ that `add_scalar` is
/// given, the division by `−E` last), so the values are those of the tensor version to the
/// bit (`gnne.rs` tests it).
pub(crate) fn mask_entropy_grad_host(m: &[f32]) -> Vec<f32> {
    let eps = 1e-6f64 as f32;
    let d = |p: f32| (p + eps).ln() + p / (p + eps);
    let n = -(m.len() as f32);
    m.iter().map(|&x| (d(x) - d(-x + 1.0)) / n).collect()
}

/// The logistic function as burn's CPU backend computes `sigmoid`, on the host: the same
/// branches and `f32` operations, so the same bits.
pub(crate) fn sigmoid_f32(x: f32) -> f32 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}
