//! [`PgExplainer`] (Luo et al. 2020): an edge MLP over the classifier's embeddings, trained
//! across groups.

use super::checkpoint::{self, Trained};
use super::{
    ExplainSet, device_batch, host, keep_verdict_loss, mask_entropy, message_weights, sigmoid_f32,
};
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

/// The ε of the edge MLP's layer norm (burn's default; not a parameter, so no checkpoint
/// carries it). [`EdgeMlp::infer`] normalises on the host with it.
const NORM_EPSILON: f64 = 1e-5;

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
            norm: LayerNormConfig::new(3 * embed)
                .with_epsilon(NORM_EPSILON)
                .init(device),
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

    /// [`forward`](Self::forward) for one group's edges `(u, v)` on the host embeddings
    /// `emb`, its logits on the host, to the bit. The rows `[h_u, h_v, h_G]` are gathered and
    /// normalised on the host ([`layer_norm_rows`]: the backend's arithmetic, eight rows at
    /// once); the two linear layers run on `device`.
    fn infer(
        &self,
        emb: &HostEmbeddings,
        edges: &[(u32, u32)],
        device: &Device,
    ) -> Result<Vec<f32>> {
        let e = edges.len();
        let width = 3 * emb.width;
        let mut x = Vec::with_capacity(e * width);
        for &(u, v) in edges {
            x.extend_from_slice(emb.node(u as usize));
            x.extend_from_slice(emb.node(v as usize));
            x.extend_from_slice(&emb.graph);
        }
        let gamma = host(self.norm.gamma.val())?;
        let beta = match &self.norm.beta {
            Some(b) => Some(host(b.val())?),
            None => None,
        };
        let x = layer_norm_rows(&x, width, &gamma, beta.as_deref(), NORM_EPSILON as f32);
        let x = Tensor::<2>::from_data(TensorData::new(x, [e, width]), device);
        // Each linear layer is its weight's product on the device, then its bias added; the
        // bias and the ReLU are the backend's `f32` operations, here on the host.
        let first = host(x.matmul(self.first.weight.val()))?;
        let first_bias = linear_bias(&self.first)?;
        let hidden = first_bias.len();
        let h: Vec<f32> = first
            .chunks_exact(hidden.max(1))
            .flat_map(|row| row.iter().zip(&first_bias).map(|(&a, &b)| relu_f32(a + b)))
            .collect();
        let h = Tensor::<2>::from_data(TensorData::new(h, [e, hidden]), device);
        let out_bias = linear_bias(&self.out)?[0];
        Ok(host(h.matmul(self.out.weight.val()))?
            .into_iter()
            .map(|z| z + out_bias)
            .collect())
    }
}

/// A linear layer's bias on the host.
///
/// # Errors
/// [`ExplainError::Checkpoint`] for a layer without one (the explainers' layers that read it
/// have one).
pub(crate) fn linear_bias(layer: &Linear) -> Result<Vec<f32>> {
    match &layer.bias {
        Some(b) => host(b.val()),
        None => Err(ExplainError::Checkpoint(
            "an explainer's linear layer has no bias".into(),
        )),
    }
}

/// ReLU as burn's CPU backend computes it (NaN passes).
pub(crate) fn relu_f32(x: f32) -> f32 {
    if x.is_nan() || x > 0.0 { x } else { 0.0 }
}

/// Layer norm over rows of `width` values, `(x − mean)·(γ/√(var + ε)) + β`, computed as burn's
/// CPU backend computes it without its `simd` feature: per row, Welford's running mean and
/// sum of squares in `f32`, `1/√(var + ε)`, then each value. Each row's arithmetic is that
/// sequence exactly, so the result is the backend's to the bit; but eight rows run side by
/// side, so that the running mean's chain of divisions, which bounds one row, overlaps across
/// rows (the backend runs the rows one after another).
pub(crate) fn layer_norm_rows(
    x: &[f32],
    width: usize,
    gamma: &[f32],
    beta: Option<&[f32]>,
    epsilon: f32,
) -> Vec<f32> {
    const LANES: usize = 8;
    let mut out = vec![0.0f32; x.len()];
    if width == 0 {
        return out;
    }
    let rows = x.len() / width;
    let mut block = vec![[0.0f32; LANES]; width];
    for first in (0..rows).step_by(LANES) {
        let lanes = LANES.min(rows - first);
        // The block's rows side by side, value k of every row together (absent rows: 0).
        for (k, b) in block.iter_mut().enumerate() {
            for (l, slot) in b.iter_mut().enumerate() {
                *slot = if l < lanes {
                    x[(first + l) * width + k]
                } else {
                    0.0
                };
            }
        }
        let mut mean = [0.0f32; LANES];
        let mut m2 = [0.0f32; LANES];
        for (k, b) in block.iter().enumerate() {
            let n_k = (k + 1) as f32;
            for l in 0..LANES {
                let delta = b[l] - mean[l];
                mean[l] += delta / n_k;
                let delta2 = b[l] - mean[l];
                m2[l] += delta * delta2;
            }
        }
        for l in 0..lanes {
            let var = m2[l] / width as f32;
            let inv_std = 1.0f32 / (var + epsilon).sqrt();
            let row = first + l;
            let input = &x[row * width..][..width];
            let output = &mut out[row * width..][..width];
            for (i, (&v, o)) in input.iter().zip(output.iter_mut()).enumerate() {
                let scale = inv_std * gamma[i];
                let normed = (v - mean[l]) * scale;
                *o = match beta {
                    Some(b) => normed + b[i],
                    None => normed,
                };
            }
        }
    }
    out
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

/// One group's node embeddings (`ln(1 + h)` of the classifier's) and their mean, on the host:
/// the values of [`embeddings`] for a batch of that group alone, to the bit. `ln(1 + h)` is
/// the `ln_1p` the backend runs, the sum adds the nodes' rows in node order from zero as the
/// readout's `select_assign` does, and the mean divides that sum by the node count.
pub(crate) struct HostEmbeddings {
    /// `[n, width]`, row-major.
    pub(crate) nodes: Vec<f32>,
    /// `[width]`.
    pub(crate) graph: Vec<f32>,
    pub(crate) width: usize,
}

impl HostEmbeddings {
    /// The embeddings of `batch`, which holds one group.
    pub(crate) fn new<M: ExplainableModel>(clf: &M, batch: &DeviceBatch) -> Result<Self> {
        let width = clf.embedding_dim();
        let mut nodes = host(clf.embed(batch))?;
        nodes.iter_mut().for_each(|h| *h = h.ln_1p());
        let mut graph = vec![0.0f32; width];
        for row in nodes.chunks_exact(width) {
            for (a, &b) in graph.iter_mut().zip(row) {
                *a += b;
            }
        }
        let count = (nodes.len() / width.max(1)) as f32;
        graph.iter_mut().for_each(|a| *a /= count);
        Ok(HostEmbeddings {
            nodes,
            graph,
            width,
        })
    }

    /// Row `v`.
    pub(crate) fn node(&self, v: usize) -> &[f32] {
        &self.nodes[v * self.width..][..self.width]
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
        let emb = HostEmbeddings::new(&self.clf, &batch)?;
        let logits = self.mlp.infer(&emb, &gg.edges, self.clf.device())?;
        // σ(ω/τ₀), each step the backend's `f32` operation.
        let t0 = self.config.temperature.0;
        Ok(logits.iter().map(|&w| sigmoid_f32(w / t0)).collect())
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

#[cfg(test)]
mod tests {
    use super::*;
    use burn::nn::LayerNormConfig;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|x| x.to_bits()).collect()
    }

    #[test]
    fn the_host_layer_norm_is_the_backends_to_the_bit() {
        let device = fuselage_gnn::default_device();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (rows, width) in [(1, 5), (7, 384), (8, 384), (9, 64), (17, 384), (35, 384)] {
            let mut norm = LayerNormConfig::new(width)
                .with_epsilon(NORM_EPSILON)
                .init(&device);
            let random = |rng: &mut ChaCha8Rng, n: usize, scale: f32| -> Vec<f32> {
                (0..n)
                    .map(|_| rng.random_range(-1.0..1.0) * scale)
                    .collect()
            };
            let gamma = random(&mut rng, width, 2.0);
            let beta = random(&mut rng, width, 1.0);
            norm.gamma = norm
                .gamma
                .map(|_| Tensor::<1>::from_data(TensorData::new(gamma.clone(), [width]), &device));
            norm.beta = norm.beta.map(|b| {
                b.map(|_| Tensor::<1>::from_data(TensorData::new(beta.clone(), [width]), &device))
            });
            let x = random(&mut rng, rows * width, 30.0);
            let t = Tensor::<2>::from_data(TensorData::new(x.clone(), [rows, width]), &device);
            let theirs = host(norm.forward(t)).unwrap();
            let ours = layer_norm_rows(&x, width, &gamma, Some(&beta), NORM_EPSILON as f32);
            assert_eq!(bits(&ours), bits(&theirs), "{rows} rows of {width}");
        }
    }

    #[test]
    fn the_host_scores_are_the_tensor_scores_to_the_bit() {
        let device = fuselage_gnn::default_device();
        let (g, groups) = fuselage_gnn::probe_groups().unwrap();
        for kind in [fuselage_gnn::CostKind::Lbdf, fuselage_gnn::CostKind::Brr] {
            let x = shipped_pg(fuselage_gnn::shipped(kind, &device).unwrap()).unwrap();
            for s in &groups {
                let gg = GroupGraph::new(&g, s).unwrap();
                if gg.edges.is_empty() {
                    continue;
                }
                let beta = fuselage_gnn::PROBE_BETA;
                // The scores as tensor ops, as `scores` computed them before.
                let batch = device_batch(&x.clf, &[(&gg, beta)]).unwrap();
                let idx = EdgeIndex::new(&[&gg], &device);
                let (emb, graph_emb) = embeddings(&x.clf, &batch, &idx);
                let logits = x.mlp.forward(emb, graph_emb, &idx);
                let before = host(sigmoid(logits.div_scalar(x.config.temperature.0))).unwrap();
                assert_eq!(
                    bits(&x.scores(&gg, beta).unwrap()),
                    bits(&before),
                    "{kind:?}"
                );
            }
        }
    }
}
