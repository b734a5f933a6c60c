//! The k-GNN classifier ([`Gnn`]) and the [`ValidityModel`] trait it implements.
//!
//! ## Architecture
//!
//! Four GraphConv layers (Morris et al. 2019), `h' = ReLU(W1·h_v + b + W2·Σ_{u∈N(v)} w_uv·h_u)`,
//! hidden size 128, sum aggregation over the undirected internal edges of a group; a sum
//! readout over the group's nodes; a two-layer head giving one logit for "invalid".
//!
//! Burn has no sparse tensors, so a batch of groups is one disjoint graph: messages gather
//! their source rows with [`Tensor::select`] and are summed into their targets with
//! [`Tensor::select_assign`] and [`IndexingUpdateOp::Add`]; the readout sums node rows into
//! group rows the same way. Edge weights multiply the messages, so an explainer that makes them
//! require gradients learns a soft edge mask through the same code path.
//!
//! ## Validity models
//!
//! [`ValidityModel`] is what the explainers and splitters consume: the probability that a group
//! is invalid at β. [`GnnClassifier`] implements it with the network; [`ExactValidity`] with a
//! cost model (probability 0 or 1), the trivial reference. The learned explainers need more
//! than probabilities; [`ExplainableModel`](crate::ExplainableModel) (in
//! [`explainable`](crate::explainable)) is that part of [`GnnClassifier`].

use crate::compress::{CompressedBatch, CompressedDevice};
use crate::error::{GnnError, Result};
use crate::features::{DeviceBatch, DeviceEdges, FeatureSet, GraphBatch, GroupGraph};
use burn::nn::{Linear, LinearConfig};
use burn::prelude::*;
use burn::tensor::IndexingUpdateOp;
use burn::tensor::activation::{relu, sigmoid};
use fuselage_cost::{CostConfig, CostKind, CostModel};
use fuselage_ir::{Graph, NodeSet};
use serde::{Deserialize, Serialize};

/// The shape of a [`Gnn`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GnnConfig {
    /// Features per node (input width): `feature_set.dim()`.
    pub features: usize,
    /// Which features the network reads. Written only when broad, so that a paper checkpoint
    /// reads and writes the file it always had; without the field, a paper one.
    #[serde(
        default = "FeatureSet::paper",
        skip_serializing_if = "FeatureSet::is_paper"
    )]
    pub feature_set: FeatureSet,
    /// Hidden width of every layer.
    pub hidden: usize,
    /// Number of GraphConv layers.
    pub layers: usize,
}

impl Default for GnnConfig {
    /// The paper's classifier shape, four layers of 128, over the broad features.
    fn default() -> Self {
        GnnConfig::over(FeatureSet::Broad)
    }
}

/// The most GraphConv layers a [`GnnConfig`] may have (the shipped classifiers have 4).
pub const MAX_LAYERS: usize = 32;
/// The widest hidden layer a [`GnnConfig`] may have (the shipped classifiers have 128).
pub const MAX_HIDDEN: usize = 1024;

impl GnnConfig {
    /// The number of parameters (weights and biases) of the network this describes
    /// (saturating at `u64::MAX`: a checkpoint's numbers are a file's).
    pub fn parameters(&self) -> u64 {
        let (f, h, l) = (self.features as u64, self.hidden as u64, self.layers as u64);
        let linear =
            |inputs: u64, bias: bool| inputs.saturating_mul(h).saturating_add(u64::from(bias) * h);
        let first = if l == 0 {
            0
        } else {
            linear(f, true).saturating_add(linear(f, false))
        };
        let rest = l
            .saturating_sub(1)
            .saturating_mul(linear(h, true).saturating_add(linear(h, false)));
        first
            .saturating_add(rest)
            .saturating_add(linear(h, true))
            .saturating_add(h.saturating_add(1))
    }

    /// Checks the shape before anything is allocated for it: 1 to [`MAX_LAYERS`] layers, 1
    /// to [`MAX_HIDDEN`] hidden units, and as many features as its feature set has. A
    /// checkpoint's metadata is a file: its numbers size the network.
    ///
    /// # Errors
    /// [`GnnError::Config`] naming the field.
    pub fn check(&self) -> crate::Result<()> {
        let bad = |what: &str, value: usize, max: usize| {
            Err(crate::GnnError::Config(format!(
                "config.{what} is {value}, not in 1..={max}"
            )))
        };
        if !(1..=MAX_LAYERS).contains(&self.layers) {
            return bad("layers", self.layers, MAX_LAYERS);
        }
        if !(1..=MAX_HIDDEN).contains(&self.hidden) {
            return bad("hidden", self.hidden, MAX_HIDDEN);
        }
        if self.features != self.feature_set.dim() {
            return Err(crate::GnnError::Config(format!(
                "config.features is {}, but the feature set `{}` has {}",
                self.features,
                self.feature_set,
                self.feature_set.dim()
            )));
        }
        Ok(())
    }

    /// Four layers of 128 over the features of `set`.
    pub fn over(set: FeatureSet) -> Self {
        GnnConfig {
            features: set.dim(),
            feature_set: set,
            hidden: 128,
            layers: 4,
        }
    }

    /// A fresh, randomly initialised network on `device` (burn's default Kaiming-uniform
    /// initialisation, drawn from burn's seeded generator: call
    /// [`burn::tensor::Device::seed`] first for a reproducible start).
    pub fn init(&self, device: &Device) -> Gnn {
        let mut layers = Vec::with_capacity(self.layers);
        let mut width = self.features;
        for _ in 0..self.layers {
            layers.push(GraphConv {
                root: LinearConfig::new(width, self.hidden).init(device),
                neighbours: LinearConfig::new(width, self.hidden)
                    .with_bias(false)
                    .init(device),
            });
            width = self.hidden;
        }
        Gnn {
            layers,
            head: LinearConfig::new(width, self.hidden).init(device),
            out: LinearConfig::new(self.hidden, 1).init(device),
        }
    }
}

/// One GraphConv layer: `W1·h_v + b + W2·Σ w_uv·h_u`.
#[derive(Module, Debug)]
pub struct GraphConv {
    /// `W1` and `b`, applied to the node itself.
    pub root: Linear,
    /// `W2`, applied to the weighted sum of its neighbours.
    pub neighbours: Linear,
}

impl GraphConv {
    /// One round of message passing (no activation).
    pub fn forward(&self, h: Tensor<2>, batch: &DeviceBatch) -> Tensor<2> {
        self.apply(h.clone(), h, batch.edges.as_ref())
    }

    /// The layer in general form: `W1·own + b + W2·agg`, where row `i` of `agg` sums the
    /// messages whose `dst` is `i`, each the row `src` of `from` times its weight. `forward`
    /// is `apply(h, h, edges)`; the compressed forward ([`crate::compress`]) passes only
    /// the rows it needs as `own`.
    pub fn apply(&self, own: Tensor<2>, from: Tensor<2>, edges: Option<&DeviceEdges>) -> Tensor<2> {
        let root = self.root.forward(own.clone());
        match edges {
            None => root,
            Some(e) => self.combine(
                root,
                own.zeros_like(),
                from.select(0, e.src.clone()),
                &e.dst,
                e.weights.as_ref(),
            ),
        }
    }

    /// The second half of [`apply`](Self::apply): `root + W2·agg`, where `agg` starts as
    /// `zeros` (`[rows, width]`) and adds the message `m`, row `m` of `sources` times
    /// `weights[m]` (1 when `None`), into row `dst[m]`, in message order.
    pub(crate) fn combine(
        &self,
        root: Tensor<2>,
        zeros: Tensor<2>,
        sources: Tensor<2>,
        dst: &Tensor<1, Int>,
        weights: Option<&Tensor<2>>,
    ) -> Tensor<2> {
        let msg = match weights {
            Some(w) => sources * w.clone(),
            None => sources,
        };
        let agg = zeros.select_assign(0, dst.clone(), msg, IndexingUpdateOp::Add);
        root + self.neighbours.forward(agg)
    }
}

/// The validity classifier network. Build one with [`GnnConfig::init`].
#[derive(Module, Debug)]
pub struct Gnn {
    /// The GraphConv layers.
    pub layers: Vec<GraphConv>,
    /// First layer of the head (after the sum readout).
    pub head: Linear,
    /// The output layer: one logit, positive for "invalid".
    pub out: Linear,
}

impl Gnn {
    /// Node embeddings after the last layer, `[nodes, hidden]`.
    pub fn embed(&self, batch: &DeviceBatch) -> Tensor<2> {
        let mut h = batch.x.clone();
        for layer in &self.layers {
            h = relu(layer.forward(h, batch));
        }
        h
    }

    /// Sum readout of node embeddings into one row per group, `[groups, hidden]`.
    pub fn readout(&self, h: Tensor<2>, batch: &DeviceBatch) -> Tensor<2> {
        batch.sum_per_group(h)
    }

    /// The head: one logit per group from the read-out rows, `[groups]`.
    pub(crate) fn head_logits(&self, g: Tensor<2>) -> Tensor<1> {
        self.out.forward(relu(self.head.forward(g))).squeeze_dim(1)
    }

    /// The "invalid" logit of every group of the batch, `[groups]`.
    pub fn forward(&self, batch: &DeviceBatch) -> Tensor<1> {
        self.head_logits(self.readout(self.embed(batch), batch))
    }
}

/// The probability that a fusion group is invalid (does not fit the buffer) at β.
///
/// Every question names the [`CostConfig`] it is asked at: β (the buffer) and the element
/// sizes travel together, as the cost model's own [`config`](CostModel::config) carries them,
/// so a validity model is never handed a bare β that could disagree with the cost model's.
/// A model reads what it needs of it ([`GnnClassifier`] reads β alone; [`ExactValidity`]
/// costs each group at the whole config).
///
/// Required: [`name`](ValidityModel::name) and
/// [`invalid_probabilities`](ValidityModel::invalid_probabilities), which answers a batch;
/// [`invalid_probability`](ValidityModel::invalid_probability) (one group) and
/// [`is_invalid`](ValidityModel::is_invalid) (threshold ½) are shorthands.
///
/// # Example
/// A downstream model that calls every group with more than `n` nodes invalid:
/// ```
/// use fuselage_cost::CostConfig;
/// use fuselage_gnn::{Result, ValidityModel};
/// use fuselage_ir::{Graph, NodeSet};
/// struct BySize(usize);
/// impl ValidityModel for BySize {
///     fn name(&self) -> &str { "by-size" }
///     fn invalid_probabilities(&self, _g: &Graph, groups: &[NodeSet], _config: &CostConfig)
///         -> Result<Vec<f32>>
///     {
///         Ok(groups.iter().map(|s| if s.len() > self.0 { 1.0 } else { 0.0 }).collect())
///     }
/// }
/// let g = fuselage_zoo::build("resnet18")?;
/// let all = NodeSet::full(g.len());
/// assert!(BySize(10).is_invalid(&g, &all, &CostConfig::kib(256)?)?);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ValidityModel: Send + Sync {
    /// A short name (`gnn-lbdf`, `exact-lbdf`, ...).
    fn name(&self) -> &str;

    /// For each group (a non-empty weakly connected set of `g`'s nodes), the probability that it
    /// is invalid at `config` (its buffer and element sizes).
    ///
    /// # Errors
    /// [`GnnError::BadGroup`] or [`GnnError::Cost`] for a set that is not a group of `g`.
    fn invalid_probabilities(
        &self,
        g: &Graph,
        groups: &[NodeSet],
        config: &CostConfig,
    ) -> Result<Vec<f32>>;

    /// The probability that one group is invalid.
    ///
    /// # Errors
    /// As [`invalid_probabilities`](ValidityModel::invalid_probabilities).
    fn invalid_probability(&self, g: &Graph, group: &NodeSet, config: &CostConfig) -> Result<f32> {
        let p = self.invalid_probabilities(g, std::slice::from_ref(group), config)?;
        Ok(p[0])
    }

    /// Whether the group is predicted invalid (probability above ½).
    ///
    /// # Errors
    /// As [`invalid_probabilities`](ValidityModel::invalid_probabilities).
    fn is_invalid(&self, g: &Graph, group: &NodeSet, config: &CostConfig) -> Result<bool> {
        Ok(self.invalid_probability(g, group, config)? > 0.5)
    }
}

/// The exact validity of a cost model as a [`ValidityModel`]: probability 1 for an invalid
/// group, 0 for a valid one. Each call is costed by the model made at the [`CostConfig`] it
/// is asked about, element sizes included.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, Lbdf};
/// use fuselage_gnn::{ExactValidity, ValidityModel};
/// use fuselage_ir::NodeSet;
/// let exact = ExactValidity::new(|c: CostConfig| Lbdf::new(c), "lbdf");
/// let g = fuselage_zoo::build("vgg16")?;
/// let all = NodeSet::full(g.len());
/// assert_eq!(exact.invalid_probability(&g, &all, &CostConfig::kib(128)?)?, 1.0);
/// // A group that fits 1-byte elements can overflow the same buffer at 4 bytes each.
/// let two = NodeSet::from_ids(g.len(), g.node_ids().take(2));
/// let one_byte = CostConfig::kib(64)?;
/// assert_eq!(exact.invalid_probability(&g, &two, &one_byte)?, 0.0);
/// assert_eq!(exact.invalid_probability(&g, &two, &one_byte.with_element_bytes(4)?)?, 1.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ExactValidity<F> {
    make: F,
    name: String,
}

impl<F, C> ExactValidity<F>
where
    F: Fn(CostConfig) -> C + Send + Sync,
    C: CostModel,
{
    /// Wraps a constructor of the cost model at a given [`CostConfig`] (for example
    /// `Lbdf::new`); `name` is the cost model's (the trait name becomes `exact-<name>`).
    pub fn new(make: F, name: &str) -> Self {
        ExactValidity {
            make,
            name: format!("exact-{name}"),
        }
    }
}

impl<F, C> ValidityModel for ExactValidity<F>
where
    F: Fn(CostConfig) -> C + Send + Sync,
    C: CostModel,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn invalid_probabilities(
        &self,
        g: &Graph,
        groups: &[NodeSet],
        config: &CostConfig,
    ) -> Result<Vec<f32>> {
        let model = (self.make)(*config);
        groups
            .iter()
            .map(|s| {
                Ok(if model.evaluate(g, s)?.valid {
                    0.0
                } else {
                    1.0
                })
            })
            .collect()
    }
}

/// A trained [`Gnn`] on a device, for one cost model: a [`ValidityModel`].
#[derive(Clone, Debug)]
pub struct GnnClassifier {
    /// The network's shape.
    pub config: GnnConfig,
    /// The network (in inference mode, no autodiff).
    pub model: Gnn,
    /// Where it runs.
    pub device: Device,
    /// The cost model it imitates.
    pub cost_model: CostKind,
    name: String,
}

impl GnnClassifier {
    /// Wraps a network; `model` is put in inference mode.
    pub fn new(config: GnnConfig, model: Gnn, device: Device, cost_model: CostKind) -> Self {
        GnnClassifier {
            config,
            model: model.valid(),
            device,
            cost_model,
            name: format!("gnn-{cost_model}"),
        }
    }

    /// "Invalid" probabilities of encoded groups, each at its own β and with optional edge
    /// weights: forward passes over chunks of at most [`CHUNK_NODES`] nodes, each computing its
    /// distinct rows once ([`compress`](crate::compress)), run in parallel.
    ///
    /// # Errors
    /// [`GnnError::EdgeWeights`] for a weight vector of the wrong length.
    pub fn probabilities(&self, items: &[(&GroupGraph, u64, Option<&[f32]>)]) -> Result<Vec<f32>> {
        self.run(items, true)
    }

    /// The "invalid" logits of encoded groups (as [`probabilities`](Self::probabilities),
    /// before the sigmoid: informative where the probability saturates at 0 or 1).
    ///
    /// # Errors
    /// [`GnnError::EdgeWeights`] for a weight vector of the wrong length.
    pub fn logits(&self, items: &[(&GroupGraph, u64, Option<&[f32]>)]) -> Result<Vec<f32>> {
        self.run(items, false)
    }

    /// Groups are independent, so a batch is cut into chunks of whole groups, balanced, of
    /// at most [`CHUNK_NODES`] nodes where groups allow (a larger group is a chunk of its
    /// own). Each chunk is compressed ([`CompressedBatch`]) and run on a rayon thread. The
    /// chunks depend on the batch alone, never on the number of threads.
    fn run(
        &self,
        items: &[(&GroupGraph, u64, Option<&[f32]>)],
        probabilities: bool,
    ) -> Result<Vec<f32>> {
        use rayon::prelude::*;
        let total: usize = items.iter().map(|(gg, _, _)| gg.len()).sum();
        let target = total.div_ceil(total.div_ceil(CHUNK_NODES).max(1));
        let mut chunks = Vec::new();
        let (mut start, mut nodes) = (0, 0);
        for (i, (gg, _, _)) in items.iter().enumerate() {
            if nodes > 0 && nodes + gg.len() > target {
                chunks.push(&items[start..i]);
                (start, nodes) = (i, 0);
            }
            nodes += gg.len();
        }
        if start < items.len() {
            chunks.push(&items[start..]);
        }
        let parts = chunks
            .into_par_iter()
            .map(|part| {
                let mut batch = GraphBatch::new(self.config.feature_set);
                for (gg, beta, w) in part {
                    batch.push(gg, *beta as f64, *w)?;
                }
                let compressed = CompressedBatch::new(&batch, self.model.layers.len());
                let z = self
                    .model
                    .forward_compressed(&compressed.to_device(&self.device))?;
                to_vec(if probabilities { sigmoid(z) } else { z })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(parts.concat())
    }
}

/// The most nodes [`GnnClassifier::probabilities`] puts in one chunk when a batch has more
/// (chunks are balanced, so a batch of 1.5 chunks runs as two of 0.75).
///
/// A chunk is the unit of parallel work and of compression: larger chunks share more rows
/// (`compress`), smaller ones spread better over threads. 256 random 30-node groups of
/// resnet101 run as two chunks of 3,840 nodes (`docs/classifier.md`).
pub const CHUNK_NODES: usize = 4096;

pub(crate) fn to_vec(t: Tensor<1>) -> Result<Vec<f32>> {
    t.into_data()
        .convert::<f32>()
        .try_to_vec::<f32>()
        .map_err(|e| GnnError::Checkpoint(format!("reading a tensor back: {e:?}")))
}

impl ValidityModel for GnnClassifier {
    fn name(&self) -> &str {
        &self.name
    }

    /// Reads β alone, the config's buffer in all
    /// ([`buffer_bytes`](CostConfig::buffer_bytes)): the network was trained on one unified
    /// buffer with 1-byte elements, and has no input for the element sizes.
    fn invalid_probabilities(
        &self,
        g: &Graph,
        groups: &[NodeSet],
        config: &CostConfig,
    ) -> Result<Vec<f32>> {
        let beta_bytes = config.buffer_bytes();
        let encoded = groups
            .iter()
            .map(|s| GroupGraph::new(g, s))
            .collect::<Result<Vec<_>>>()?;
        let items: Vec<_> = encoded.iter().map(|gg| (gg, beta_bytes, None)).collect();
        self.probabilities(&items)
    }
}

/// The compressed forward pass (see [`crate::compress`]): here, beside the layers it runs, so
/// that `compress.rs` prepares batches without knowing the network.
impl Gnn {
    /// The "invalid" logit of every group, `[groups]`, as [`Gnn::forward`] gives it, computing
    /// each distinct row once (module docs).
    ///
    /// # Errors
    /// [`GnnError::Config`] when the batch was compressed for another
    /// number of layers.
    pub fn forward_compressed(&self, batch: &CompressedDevice) -> Result<Tensor<1>> {
        use rayon::prelude::*;
        if batch.layers.len() != self.layers.len() {
            return Err(GnnError::Config(format!(
                "a batch compressed for {} layers given to a network of {}",
                batch.layers.len(),
                self.layers.len()
            )));
        }
        let mut h = batch.x.clone();
        for (layer, blocks) in self.layers.iter().zip(&batch.layers) {
            let rows: Vec<Tensor<2>> = blocks
                .par_iter()
                .map(|b| {
                    let own = h.clone().select(0, b.own.clone());
                    relu(layer.apply(own, h.clone(), b.edges.as_ref()))
                })
                .collect();
            h = Tensor::cat(rows, 0);
        }
        let [_, width] = h.dims();
        let mut groups = Tensor::<2>::zeros([batch.graphs, width], &h.device());
        for (last_row, graph_of) in &batch.readout {
            let rows = h.clone().select(0, last_row.clone());
            groups = groups.select_assign(0, graph_of.clone(), rows, IndexingUpdateOp::Add);
        }
        Ok(self.head_logits(groups))
    }
}
