//! [`GnnExplainer`] (Ying et al. 2019): a soft edge mask learnt per instance.

use super::{device_batch, host, keep_verdict_scale, mask_entropy_grad, message_weights};
use crate::error::{ExplainError, Result};
use crate::explanation::Selection;
use burn::optim::{AdamConfig, Optimizer, SgdConfig};
use burn::prelude::*;
use burn::tensor::activation::sigmoid;
use fuselage_gnn::features::DeviceBatch;
use fuselage_gnn::{ExplainableModel, GnnClassifier, GroupGraph};
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
/// ([`ExplainableModel::message_weight_grad`]). The shipped classifier computes it in closed
/// form ([`fuselage_gnn::Trace`]), at about the cost of one more forward pass and without an
/// autodiff tape; it equals burn's autodiff (fuselage-gnn's `tests/weight_grad.rs`).
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
        let logits = match self.config.optimizer {
            MaskOptimizer::Sgd => self.descend(SgdConfig::new().build(), logits, &batch, z0)?,
            MaskOptimizer::Adam => self.descend(AdamConfig::new().build(), logits, &batch, z0)?,
        };
        host(sigmoid(logits))
    }

    /// `epochs` steps of `optim` on the mask logits. Each step is one gradient of the masked
    /// batch's logit with respect to its message weights
    /// ([`ExplainableModel::message_weight_grad`]); the regularisers' gradients are analytic.
    fn descend<O: Optimizer>(
        &self,
        optim: O,
        mut logits: Tensor<1>,
        batch: &DeviceBatch,
        z0: f32,
    ) -> Result<Tensor<1>> {
        let mut state = None;
        for _ in 0..self.config.epochs {
            let d_logits = self.loss_gradient(logits.clone(), batch, z0)?;
            let (next, next_state) = optim.step(self.config.learning_rate, logits, d_logits, state);
            logits = next;
            state = next_state;
        }
        Ok(logits)
    }

    /// `∂L/∂logits` of the loss in the type's docs, at mask logits `logits`, for `batch` (the
    /// group once, or twice with the counterfactual term) whose unmasked logit is `z0`.
    fn loss_gradient(&self, logits: Tensor<1>, batch: &DeviceBatch, z0: f32) -> Result<Tensor<1>> {
        let [e] = logits.dims();
        let twice = batch.graphs == 2;
        let m = sigmoid(logits);
        let mut weights = message_weights(m.clone());
        if twice {
            let rest = message_weights(m.clone().neg().add_scalar(1.0));
            weights = Tensor::cat(vec![weights, rest], 0);
        }
        let s = keep_verdict_scale(z0);
        let cf = self.config.counterfactual_weight;
        let d_w = self
            .clf
            .message_weight_grad(&batch.with_weights(weights), &mut |z| {
                // keep_verdict_loss(z) = softplus(s·z): ∂/∂z = s·σ(s·z).
                let mut dz = vec![s * logistic(s * z[0])];
                if twice {
                    // w·softplus(−s·z₁): ∂/∂z₁ = −w·s·σ(−s·z₁).
                    dz.push(-cf * s * logistic(-s * z[1]));
                }
                dz
            })?
            .ok_or_else(|| ExplainError::Config("a group with edges has no messages".into()))?;
        // Both directions of an edge carry its mask value; the second copy carries 1 − m.
        let d_w = d_w
            .reshape([batch.graphs, e, 2])
            .sum_dim(2)
            .reshape([batch.graphs, e]);
        let mut d_m = d_w.clone().narrow(0, 0, 1).reshape([e]);
        if twice {
            d_m = d_m - d_w.narrow(0, 1, 1).reshape([e]);
        }
        let d_m = d_m
            + mask_entropy_grad(m.clone()).mul_scalar(self.config.entropy_weight)
            + self.config.size_weight;
        // Through the sigmoid: ∂m/∂logit = m(1 − m).
        Ok(d_m * m.clone() * m.neg().add_scalar(1.0))
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
    use crate::learned::{keep_verdict_loss, mask_entropy};
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
                    let t = Tensor::<1>::from_data(
                        TensorData::new(logits.clone(), [logits.len()]),
                        &device,
                    );
                    let ours = host(x.loss_gradient(t, &batch, z0).unwrap()).unwrap();
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
