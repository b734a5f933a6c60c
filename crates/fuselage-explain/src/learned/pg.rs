//! [`PgExplainer`] (Luo et al. 2020): an edge MLP over the classifier's embeddings, trained
//! across groups.

use super::checkpoint::{self, Trained};
use super::{ExplainSet, device_batch, host, keep_verdict_loss, mask_entropy, message_weights};
use crate::ExplainerKind;
use crate::error::{ExplainError, Result};
use crate::explanation::Selection;
use burn::nn::{LayerNorm, LayerNormConfig, Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::{relu, sigmoid};
use fuselage_gnn::features::DeviceBatch;
use fuselage_gnn::{ExplainableModel, GnnClassifier, GroupGraph};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;

/// PGExplainer's settings. Epochs as in the paper (25); MLP width, optimiser and temperature
/// schedule as PyTorch Geometric's PGExplainer (MLP of 64, Adam at 0.003, temperature from 5
/// down to 1); a mask-size weight of 10 on the mean gate and an entropy weight of 0.1.
///
/// The size term is much stronger than PyTorch Geometric's because of what the classifier
/// does: with sum aggregation, every message an invalid group's nodes receive adds to its
/// "invalid" evidence, so the keep-the-verdict term asks to keep every edge. With weak size
/// and strong entropy terms (0.01 and 1) every gate saturates at exactly 1 early in
/// training, its gradient vanishes, and the ranking carries no information (fidelity+ below
/// the random explainer's); the sweep is in `docs/explainers.md`.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgConfig {
    /// Hidden width of the edge MLP.
    pub hidden: usize,
    /// Passes over the training groups.
    pub epochs: usize,
    /// Groups per optimiser step.
    pub batch_size: usize,
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// Concrete-relaxation temperature at the first and at the last epoch (geometric schedule).
    pub temperature: (f32, f32),
    /// Weight of the mask-size term (mean of the mask per group).
    pub size_weight: f32,
    /// Weight of the mask-entropy term.
    pub entropy_weight: f32,
    /// Seed of the initial weights, the shuffles and the relaxation noise.
    pub seed: u64,
    /// How many edges are selected.
    pub selection: Selection,
}

impl Default for PgConfig {
    fn default() -> Self {
        PgConfig {
            hidden: 64,
            epochs: 25,
            batch_size: 16,
            learning_rate: 0.003,
            temperature: (5.0, 1.0),
            size_weight: 10.0,
            entropy_weight: 0.1,
            seed: 0,
            selection: Selection::default(),
        }
    }
}

/// The edge MLP: `[h_u, h_v, h_G] → layer norm → hidden → logit`. The norm puts groups of
/// every size on one scale (the embeddings of a sum-aggregating GNN grow with the group).
#[derive(Module, Debug)]
pub struct EdgeMlp {
    norm: LayerNorm,
    first: Linear,
    out: Linear,
}

impl EdgeMlp {
    fn init(embed: usize, hidden: usize, device: &Device) -> Self {
        EdgeMlp {
            norm: LayerNormConfig::new(3 * embed).init(device),
            first: LinearConfig::new(3 * embed, hidden).init(device),
            out: LinearConfig::new(hidden, 1).init(device),
        }
    }

    /// Edge logits `[E]` from node embeddings `[N, H]` and mean group embeddings `[G, H]`.
    fn forward(&self, emb: Tensor<2>, graph_emb: Tensor<2>, idx: &EdgeIndex) -> Tensor<1> {
        let x = Tensor::cat(
            vec![
                emb.clone().select(0, idx.src.clone()),
                emb.select(0, idx.dst.clone()),
                graph_emb.select(0, idx.graph.clone()),
            ],
            1,
        );
        let [e, _] = x.dims();
        let x = self.norm.forward(x);
        self.out.forward(relu(self.first.forward(x))).reshape([e])
    }
}

/// Edge endpoints and owners of a batch, as global node indices.
pub(crate) struct EdgeIndex {
    pub(crate) src: Tensor<1, Int>,
    pub(crate) dst: Tensor<1, Int>,
    pub(crate) graph: Tensor<1, Int>,
    /// `[G, 1]` node counts, to turn the classifier's sum readout into a mean.
    pub(crate) counts: Tensor<2>,
}

impl EdgeIndex {
    pub(crate) fn new(groups: &[&GroupGraph], device: &Device) -> Self {
        let (mut src, mut dst, mut graph, mut counts) = (vec![], vec![], vec![], vec![]);
        let mut base = 0i64;
        for (gi, gg) in groups.iter().enumerate() {
            for &(u, v) in &gg.edges {
                src.push(base + i64::from(u));
                dst.push(base + i64::from(v));
                graph.push(gi as i64);
            }
            counts.push(gg.len() as f32);
            base += gg.len() as i64;
        }
        let int = |v: Vec<i64>| {
            let n = v.len();
            Tensor::<1, Int>::from_data(TensorData::new(v, [n]), device)
        };
        let g = counts.len();
        EdgeIndex {
            src: int(src),
            dst: int(dst),
            graph: int(graph),
            counts: Tensor::<2>::from_data(TensorData::new(counts, [g, 1]), device),
        }
    }
}

/// Node embeddings (`ln(1 + h)` of the classifier's) and their mean per group.
pub(crate) fn embeddings<M: ExplainableModel>(
    clf: &M,
    batch: &DeviceBatch,
    idx: &EdgeIndex,
) -> (Tensor<2>, Tensor<2>) {
    // ReLU embeddings grow with the group; log1p keeps their order and tames the scale for
    // the MLPs, element by element (so a batch gives each group what it gets alone).
    let emb = clf.embed(batch).log1p();
    let graph_emb = batch.sum_per_group(emb.clone()) / idx.counts.clone();
    (emb, graph_emb)
}

/// One epoch of PGExplainer training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgEpoch {
    /// 1-based.
    pub epoch: usize,
    /// Mean loss per group.
    pub loss: f64,
    /// Relaxation temperature.
    pub temperature: f32,
    /// Seconds since training started.
    pub seconds: f64,
}

/// What PGExplainer training did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgReport {
    /// Groups trained on.
    pub instances: usize,
    /// Every epoch.
    pub epochs: Vec<PgEpoch>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// PGExplainer over a classifier (any [`ExplainableModel`], by default the shipped
/// [`GnnClassifier`]): an MLP reads the classifier's embeddings of each edge's
/// endpoints and of the group (mean of its nodes) and gives the edge's logit; the scores are
/// the logits' sigmoid (see [`PgExplainer::scores`]). Trained across many groups
/// ([`PgExplainer::train`]) with a concrete relaxation, `σ((log ε − log(1−ε) + ω)/τ)`, to keep
/// the classifier's verdict with a small, nearly binary mask; explaining is then one forward
/// pass.
pub struct PgExplainer<M = GnnClassifier> {
    clf: M,
    mlp: EdgeMlp,
    config: PgConfig,
}

impl<M: ExplainableModel> PgExplainer<M> {
    /// Trains an explainer for `clf` on `set`'s groups, calling `progress` after each epoch.
    ///
    /// # Errors
    /// [`ExplainError::Config`] for an empty set or zero epochs or batch size; classifier errors.
    pub fn train(
        clf: M,
        set: &ExplainSet,
        config: PgConfig,
        mut progress: impl FnMut(&PgEpoch),
    ) -> Result<(Self, PgReport)> {
        config.selection.check()?;
        if set.instances.is_empty() || config.epochs == 0 || config.batch_size == 0 {
            return Err(ExplainError::Config(
                "PGExplainer training needs groups, epochs and a batch size".into(),
            ));
        }
        let start = Instant::now();
        let ad = clf.device().clone().autodiff();
        ad.seed(config.seed);
        let mut mlp = Self::init_net(&clf, &config, &ad);
        let mut optim = AdamConfig::new().init();
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x9e);
        let mut order: Vec<usize> = (0..set.instances.len()).collect();
        let mut epochs = Vec::with_capacity(config.epochs);
        let (t0, t1) = config.temperature;
        for epoch in 1..=config.epochs {
            let frac = (epoch - 1) as f32 / (config.epochs.max(2) - 1) as f32;
            let tau = t0 * (t1 / t0).powf(frac);
            order.shuffle(&mut rng);
            let mut loss_sum = 0.0;
            for chunk in order.chunks(config.batch_size) {
                let insts: Vec<_> = chunk.iter().map(|&i| &set.instances[i]).collect();
                let ggs: Vec<&GroupGraph> = insts.iter().map(|i| &i.encoded).collect();
                let items: Vec<_> = insts
                    .iter()
                    .map(|i| (&i.encoded, i.config.buffer_bytes()))
                    .collect();
                let batch = device_batch(&clf, &items)?;
                let idx = EdgeIndex::new(&ggs, clf.device());
                let (emb, graph_emb) = embeddings(&clf, &batch, &idx);
                let logits = mlp.forward(emb, graph_emb, &idx);
                let [e] = logits.dims();
                if e == 0 {
                    continue;
                }
                let noise: Vec<f32> = (0..e)
                    .map(|_| {
                        let u: f32 = rng.random_range(1e-4..1.0 - 1e-4);
                        u.ln() - (1.0 - u).ln()
                    })
                    .collect();
                let noise = Tensor::<1>::from_data(TensorData::new(noise, [e]), &ad);
                let gate = sigmoid((logits + noise).div_scalar(tau));
                let z = clf.forward(&batch.with_weights(message_weights(gate.clone())));
                let z0: Vec<f32> = insts.iter().map(|i| i.logit).collect();
                let groups = insts.len() as f32;
                let loss = keep_verdict_loss(z, &z0).div_scalar(groups)
                    + gate.clone().mean().mul_scalar(config.size_weight)
                    + mask_entropy(gate).mul_scalar(config.entropy_weight);
                loss_sum += f64::from(host(loss.clone().detach())?[0]) * f64::from(groups);
                let grads = GradientsParams::from_grads(loss.backward(), &mlp);
                mlp = optim.step(config.learning_rate, mlp, grads);
            }
            let stats = PgEpoch {
                epoch,
                loss: loss_sum / set.instances.len() as f64,
                temperature: tau,
                seconds: start.elapsed().as_secs_f64(),
            };
            progress(&stats);
            epochs.push(stats);
        }
        let report = PgReport {
            instances: set.instances.len(),
            epochs,
            seconds: start.elapsed().as_secs_f64(),
        };
        let mlp = mlp.valid();
        Ok((PgExplainer { clf, mlp, config }, report))
    }

    /// The settings.
    pub fn config(&self) -> &PgConfig {
        &self.config
    }

    /// Edge scores (in (0, 1), edge order) of an encoded group at `beta_bytes`: the noise-free
    /// gates at the first epoch's temperature, `σ(ω/τ₀)`. They rank the edges as the gates at
    /// the last temperature would, but the trained logits are large enough (tens) that
    /// `σ(ω)` rounds to exactly 1 in `f32` for many edges, and the ranking would tie.
    ///
    /// # Errors
    /// Classifier errors.
    pub fn scores(&self, gg: &GroupGraph, beta_bytes: u64) -> Result<Vec<f32>> {
        if gg.edges.is_empty() {
            return Ok(Vec::new());
        }
        let batch = device_batch(&self.clf, &[(gg, beta_bytes)])?;
        let idx = EdgeIndex::new(&[gg], self.clf.device());
        let (emb, graph_emb) = embeddings(&self.clf, &batch, &idx);
        let logits = self.mlp.forward(emb, graph_emb, &idx);
        host(sigmoid(logits.div_scalar(self.config.temperature.0)))
    }

    /// Saves the explainer as `<stem>.bpk` and `<stem>.json` with its training report.
    ///
    /// # Errors
    /// [`ExplainError::Checkpoint`].
    pub fn save(&self, stem: impl AsRef<Path>, report: &PgReport) -> Result<()> {
        checkpoint::save(self, stem.as_ref(), report)
    }

    /// Loads a checkpoint written by [`save`](Self::save) for `clf`.
    ///
    /// # Errors
    /// [`ExplainError::Checkpoint`] for missing or mismatched files.
    pub fn load(stem: impl AsRef<Path>, clf: M) -> Result<Self> {
        checkpoint::load(stem.as_ref(), clf)
    }
}

impl<M: ExplainableModel> Trained<M> for PgExplainer<M> {
    const KIND: ExplainerKind = ExplainerKind::Pg;
    type Config = PgConfig;
    type Net = EdgeMlp;

    fn hidden(config: &PgConfig) -> usize {
        config.hidden
    }

    fn init_net(clf: &M, config: &PgConfig, device: &Device) -> EdgeMlp {
        EdgeMlp::init(clf.embedding_dim(), config.hidden, device)
    }

    fn assemble(clf: M, mlp: EdgeMlp, config: PgConfig) -> Self {
        PgExplainer { clf, mlp, config }
    }

    fn parts(&self) -> (&M, &EdgeMlp, &PgConfig) {
        (&self.clf, &self.mlp, &self.config)
    }

    fn edge_scores(&self, gg: &GroupGraph, beta_bytes: u64) -> Result<Vec<f32>> {
        self.scores(gg, beta_bytes)
    }
}

/// The PGExplainer shipped for `clf`'s cost model.
///
/// # Errors
/// [`ExplainError::Checkpoint`] if none was shipped or it does not fit `clf`.
pub fn shipped_pg<M: ExplainableModel>(clf: M) -> Result<PgExplainer<M>> {
    checkpoint::shipped(clf)
}

learned_explainer!(PgExplainer = "pg", |x, gg, beta, _rng| {
    Ok((x.scores(gg, beta)?, None))
});
