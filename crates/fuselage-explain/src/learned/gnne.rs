//! [`GnnExplainer`] (Ying et al. 2019): a soft edge mask learnt per instance.

use super::{device_batch, host, keep_verdict_scale, mask_entropy_grad_host, sigmoid_f32};
use crate::error::{ExplainError, Result};
use crate::explanation::Selection;
use burn::optim::{AdamConfig, Optimizer, SgdConfig};
use burn::prelude::*;
use burn::tensor::activation::sigmoid;
use fuselage_gnn::{ExplainableModel, GnnClassifier, GroupGraph, WeightGradients};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

/// How the edge mask is optimised.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MaskOptimizer {
    /// Plain gradient descent: each logit moves in proportion to its own gradient, so edges
    /// the classifier leans on move further than the rest, and the ranking follows the
    /// gradient's size. The default.
    #[default]
    Sgd,
    /// Adam, as in Ying et al. and PyTorch Geometric. Its per-coordinate normalisation moves
    /// every logit by about the learning rate whatever its gradient's size, so while the
    /// keep-verdict term is saturated (the masked group is still invalid) all logits fall
    /// together under the size term and the ranking stays close to the initial noise; on
    /// our classifier it scores below the random explainer (`docs/explainers.md`).
    Adam,
}

impl std::fmt::Display for MaskOptimizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MaskOptimizer::Sgd => "SGD",
            MaskOptimizer::Adam => "Adam",
        })
    }
}

/// GNNExplainer's settings. The defaults are PyTorch Geometric's regularisers (100 epochs,
/// mask-size weight 0.005, mask-entropy weight 1) and the initial logits of Ying et al.'s own
/// code (mean 1), optimised by plain gradient descent at 10 rather than Adam at 0.01 (see
/// [`MaskOptimizer`]; the sweep is in `docs/explainers.md`), with no counterfactual term.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GnnExplainerConfig {
    /// Optimiser steps per explanation.
    pub epochs: usize,
    /// The optimiser of the mask logits.
    #[serde(default)]
    pub optimizer: MaskOptimizer,
    /// The optimiser's learning rate.
    pub learning_rate: f64,
    /// Weight of the mask-size term (sum of the mask).
    pub size_weight: f32,
    /// Weight of the mask-entropy term (mean binary entropy).
    pub entropy_weight: f32,
    /// Mean of the initial mask logits (GNNExplainer's original code: 1).
    #[serde(default = "one")]
    pub init_mean: f32,
    /// Weight of the counterfactual term (0: Ying et al.'s objective alone).
    #[serde(default)]
    pub counterfactual_weight: f32,
    /// How many edges are selected.
    pub selection: Selection,
}

impl Default for GnnExplainerConfig {
    fn default() -> Self {
        GnnExplainerConfig {
            init_mean: 1.0,
            counterfactual_weight: 0.0,
            epochs: 100,
            optimizer: MaskOptimizer::Sgd,
            learning_rate: 10.0,
            size_weight: 0.005,
            entropy_weight: 1.0,
            selection: Selection::default(),
        }
    }
}

fn one() -> f32 {
    1.0
}

/// GNNExplainer over a classifier (any [`ExplainableModel`], by default the shipped
/// [`GnnClassifier`]): for each group, a soft mask `σ(m_e)` on its edges'
/// messages is optimised to keep the classifier's verdict while staying small and nearly binary:
///
/// `L(m) = softplus(−sign(z₀)·z(σ(m))/T) + α·Σ σ(m) + γ·H(σ(m))`
///
/// (`z` the masked logit, `z₀` the unmasked one, `T` the temperature of the module docs, `H`
/// the mean binary entropy). With [`GnnExplainerConfig::counterfactual_weight`] `w > 0` the
/// loss also asks that removing the explanation flips the verdict,
/// `w·softplus(sign(z₀)·z(1 − σ(m))/T)` (the "necessary" half of CF², Tan et al. 2022); both
/// masked copies run in one batch. The mask starts at `N(μ, σ²)` with Ying et al.'s `μ = 1`
/// and `σ = √2·√(2/2n)` for n nodes, drawn from the caller's rng; the scores are `σ(m)` after
/// the last step.
///
/// Complexity: `epochs` forward passes of the classifier over the group, each followed by its
/// gradient with respect to the message weights
/// ([`ExplainableModel::weight_gradients`]). The shipped classifier computes it in closed
/// form ([`fuselage_gnn::Trace`]), at about the cost of one more forward pass and without an
/// autodiff tape, and computes what no step changes once per explanation
/// ([`fuselage_gnn::Fixed`]); it equals burn's autodiff (fuselage-gnn's
/// `tests/weight_grad.rs`). The mask's own arithmetic (E values a step) runs on the host.
pub struct GnnExplainer<M = GnnClassifier> {
    clf: M,
    config: GnnExplainerConfig,
}

impl<M: ExplainableModel> GnnExplainer<M> {
    /// GNNExplainer over `clf` with the default settings.
    pub fn new(clf: M) -> Self {
        Self::with_config(clf, GnnExplainerConfig::default())
    }

    /// GNNExplainer over `clf` with `config`.
    pub fn with_config(clf: M, config: GnnExplainerConfig) -> Self {
        GnnExplainer { clf, config }
    }

    /// The settings.
    pub fn config(&self) -> &GnnExplainerConfig {
        &self.config
    }

    /// The learnt mask of an encoded group at `beta_bytes`, one value in (0, 1) per edge.
    ///
    /// # Errors
    /// Classifier errors; [`ExplainError::Config`] for zero epochs.
    pub fn mask(&self, gg: &GroupGraph, beta_bytes: u64, rng: &mut ChaCha8Rng) -> Result<Vec<f32>> {
        let e = gg.edges.len();
        if e == 0 {
            return Ok(Vec::new());
        }
        if self.config.epochs == 0 {
            return Err(ExplainError::Config(
                "GNNExplainer needs at least one epoch".into(),
            ));
        }
        // With the counterfactual term the group is batched twice, once masked by m and once
        // by 1 − m, so one pass serves both terms.
        let copies = if self.config.counterfactual_weight > 0.0 {
            2
        } else {
            1
        };
        let batch = device_batch(&self.clf, &vec![(gg, beta_bytes); copies])?;
        let z0 = host(self.clf.forward(&batch))?[0];
        let std = 2f32.sqrt() * (2.0 / (2.0 * gg.len() as f32)).sqrt();
        let init: Vec<f32> = (0..e)
            .map(|_| self.config.init_mean + rng.sample::<f32, _>(StandardNormal) * std)
            .collect();
        let logits = Tensor::<1>::from_data(TensorData::new(init, [e]), self.clf.device());
        // The batch is the same at every step; only its message weights change.
        let grads = self.clf.weight_gradients(&batch);
        let logits = match self.config.optimizer {
            MaskOptimizer::Sgd => self.descend(SgdConfig::new().build(), logits, &*grads, z0)?,
            MaskOptimizer::Adam => self.descend(AdamConfig::new().build(), logits, &*grads, z0)?,
        };
        host(sigmoid(logits))
    }

    /// `epochs` steps of `optim` on the mask logits. Each step is one gradient of the masked
    /// batch's logit with respect to its message weights (`grads`); the regularisers'
    /// gradients are analytic.
    fn descend<O: Optimizer>(
        &self,
        optim: O,
        mut logits: Tensor<1>,
        grads: &dyn WeightGradients,
        z0: f32,
    ) -> Result<Tensor<1>> {
        let mut state = None;
        let device = logits.device();
        for _ in 0..self.config.epochs {
            let d_logits = self.loss_gradient(&host(logits.clone())?, grads, z0)?;
            let [e] = logits.dims();
            let d_logits = Tensor::<1>::from_data(TensorData::new(d_logits, [e]), &device);
            let (next, next_state) = optim.step(self.config.learning_rate, logits, d_logits, state);
            logits = next;
            state = next_state;
        }
        Ok(logits)
    }

    /// `∂L/∂logits` of the loss in the type's docs, at mask logits `logits`, for the batch of
    /// `grads` (the group once, or twice with the counterfactual term) whose unmasked logit is
    /// `z0`.
    ///
    /// The mask's arithmetic runs on the host, one vector of E values: each line is the
    /// element-wise tensor op it replaces (burn's CPU backend computes those with these same
    /// `f32` operations, one rounding each, so the values are the same to the bit), without an
    /// allocation and a dispatch per op. The classifier's part stays on its device.
    fn loss_gradient(
        &self,
        logits: &[f32],
        grads: &dyn WeightGradients,
        z0: f32,
    ) -> Result<Vec<f32>> {
        let e = logits.len();
        let twice = self.config.counterfactual_weight > 0.0;
        // m = σ(logits); message weights: both directions of an edge carry its mask value;
        // the second copy carries 1 − m.
        let m: Vec<f32> = logits.iter().map(|&x| sigmoid_f32(x)).collect();
        let mut w = Vec::with_capacity(if twice { 4 * e } else { 2 * e });
        w.extend(m.iter().flat_map(|&x| [x, x]));
        if twice {
            w.extend(m.iter().map(|&x| -x + 1.0).flat_map(|x| [x, x]));
        }
        let messages = w.len();
        let weights = Tensor::<2>::from_data(TensorData::new(w, [messages, 1]), self.clf.device());
        let s = keep_verdict_scale(z0);
        let cf = self.config.counterfactual_weight;
        let d_w = grads
            .at(weights, &mut |z| {
                // keep_verdict_loss(z) = softplus(s·z): ∂/∂z = s·σ(s·z).
                let mut dz = vec![s * logistic(s * z[0])];
                if twice {
                    // w·softplus(−s·z₁): ∂/∂z₁ = −w·s·σ(−s·z₁).
                    dz.push(-cf * s * logistic(-s * z[1]));
                }
                dz
            })?
            .ok_or_else(|| ExplainError::Config("a group with edges has no messages".into()))?;
        let d_w = host(d_w)?;
        // ∂L/∂m: both directions of an edge summed (a sum over a dimension of 2), minus the
        // second copy's; then the regularisers, (d + γ·∂H/∂m) + α.
        let pair =
            |copy: usize, i: usize| -> f32 { d_w[2 * (copy * e + i)..][..2].iter().copied().sum() };
        let entropy = mask_entropy_grad_host(&m);
        let (gamma, alpha) = (self.config.entropy_weight, self.config.size_weight);
        Ok((0..e)
            .map(|i| {
                let mut d: f32 = pair(0, i);
                if twice {
                    d -= pair(1, i);
                }
                let d = (d + entropy[i] * gamma) + alpha;
                // Through the sigmoid: ∂m/∂logit = m(1 − m).
                (d * m[i]) * (-m[i] + 1.0)
            })
            .collect())
    }
}

learned_explainer!(GnnExplainer = "gnne", |x, gg, beta, rng| {
    Ok((x.mask(gg, beta, rng)?, None))
});

/// The logistic function on the host.
fn logistic(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learned::{keep_verdict_loss, mask_entropy, message_weights};
    use fuselage_gnn::features::DeviceBatch;
    use rand::SeedableRng;

    /// The loss of the type's docs through burn's autodiff: what `loss_gradient` must equal.
    fn autodiff_gradient(
        x: &GnnExplainer,
        logits: &[f32],
        batch: &DeviceBatch,
        z0: f32,
    ) -> Vec<f32> {
        let ad = x.clf.device().clone().autodiff();
        let e = logits.len();
        let l = Tensor::<1>::from_data(TensorData::new(logits.to_vec(), [e]), &ad).require_grad();
        let m = sigmoid(l.clone());
        let cf = x.config.counterfactual_weight;
        let prediction = if batch.graphs == 2 {
            let w = Tensor::cat(
                vec![
                    message_weights(m.clone()),
                    message_weights(m.clone().neg().add_scalar(1.0)),
                ],
                0,
            );
            let z = x.clf.forward(&batch.with_weights(w));
            keep_verdict_loss(z.clone().narrow(0, 0, 1), &[z0])
                + keep_verdict_loss(z.narrow(0, 1, 1).neg(), &[z0]).mul_scalar(cf)
        } else {
            let z = x
                .clf
                .forward(&batch.with_weights(message_weights(m.clone())));
            keep_verdict_loss(z, &[z0])
        };
        let loss = prediction
            + m.clone().sum().mul_scalar(x.config.size_weight)
            + mask_entropy(m).mul_scalar(x.config.entropy_weight);
        host(l.grad(&loss.backward()).unwrap()).unwrap()
    }

    /// The gradient of [`mask_entropy`] as tensor ops: what `mask_entropy_grad_host` stands for.
    fn mask_entropy_grad(m: Tensor<1>) -> Tensor<1> {
        let eps = 1e-6;
        let [e] = m.dims();
        let one_minus = m.clone().neg().add_scalar(1.0);
        let d = |p: Tensor<1>| p.clone().add_scalar(eps).log() + p.clone() / p.add_scalar(eps);
        (d(m) - d(one_minus)).div_scalar(-(e as f32))
    }

    /// `loss_gradient` as it was written before its mask arithmetic moved to the host: every
    /// step a tensor op on the classifier's device, the gradient through
    /// `message_weight_grad` of the batch with the mask's weights.
    fn tensor_gradient(x: &GnnExplainer, logits: &[f32], batch: &DeviceBatch, z0: f32) -> Vec<f32> {
        let e = logits.len();
        let logits = Tensor::<1>::from_data(TensorData::new(logits.to_vec(), [e]), x.clf.device());
        let twice = batch.graphs == 2;
        let m = sigmoid(logits);
        let mut weights = message_weights(m.clone());
        if twice {
            let rest = message_weights(m.clone().neg().add_scalar(1.0));
            weights = Tensor::cat(vec![weights, rest], 0);
        }
        let s = keep_verdict_scale(z0);
        let cf = x.config.counterfactual_weight;
        let d_w = x
            .clf
            .message_weight_grad(&batch.with_weights(weights), &mut |z| {
                let mut dz = vec![s * logistic(s * z[0])];
                if twice {
                    dz.push(-cf * s * logistic(-s * z[1]));
                }
                dz
            })
            .unwrap()
            .unwrap();
        let d_w = d_w
            .reshape([batch.graphs, e, 2])
            .sum_dim(2)
            .reshape([batch.graphs, e]);
        let mut d_m = d_w.clone().narrow(0, 0, 1).reshape([e]);
        if twice {
            d_m = d_m - d_w.narrow(0, 1, 1).reshape([e]);
        }
        let d_m = d_m
            + mask_entropy_grad(m.clone()).mul_scalar(x.config.entropy_weight)
            + x.config.size_weight;
        host(d_m * m.clone() * m.neg().add_scalar(1.0)).unwrap()
    }

    #[test]
    fn the_loss_gradient_equals_autodiff_with_and_without_the_counterfactual_term() {
        let device = fuselage_gnn::default_device();
        let (g, groups) = fuselage_gnn::probe_groups().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for kind in [fuselage_gnn::CostKind::Lbdf, fuselage_gnn::CostKind::Brr] {
            let clf = fuselage_gnn::shipped(kind, &device).unwrap();
            for cf in [0.0, 0.7] {
                let x = GnnExplainer::with_config(
                    clf.clone(),
                    GnnExplainerConfig {
                        counterfactual_weight: cf,
                        size_weight: 0.3,
                        ..GnnExplainerConfig::default()
                    },
                );
                for s in groups.iter().filter(|s| s.len() >= 6) {
                    let gg = GroupGraph::new(&g, s).unwrap();
                    let copies = if cf > 0.0 { 2 } else { 1 };
                    let beta = fuselage_gnn::PROBE_BETA;
                    let batch = device_batch(&clf, &vec![(&gg, beta); copies]).unwrap();
                    let z0 = host(clf.forward(&batch)).unwrap()[0];
                    let logits: Vec<f32> = (0..gg.edges.len())
                        .map(|_| rng.sample::<f32, _>(StandardNormal) * 2.0)
                        .collect();
                    let grads = clf.weight_gradients(&batch);
                    let ours = x.loss_gradient(&logits, &*grads, z0).unwrap();
                    // The same bits as the tensor ops the host arithmetic stands for.
                    let before = tensor_gradient(&x, &logits, &batch, z0);
                    assert_eq!(
                        ours.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        before.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                        "{kind:?} cf {cf}: {ours:?} vs {before:?}"
                    );
                    let theirs = autodiff_gradient(&x, &logits, &batch, z0);
                    let scale = theirs.iter().fold(1e-3f32, |a, v| a.max(v.abs()));
                    for (a, b) in ours.iter().zip(&theirs) {
                        assert!(
                            (a - b).abs() <= 1e-4 * scale,
                            "{kind:?} cf {cf}: {ours:?} vs {theirs:?}"
                        );
                    }
                }
            }
        }
    }
}
