//! [`ExplainableModel`]: what the learned explainers of `fuselage-explain` read from a
//! classifier, beyond the probabilities of [`ValidityModel`].
//!
//! ## Why
//!
//! A [`ValidityModel`] answers "how likely is this group invalid at β". That is all a splitter
//! needs, and all the cost and random explainers need. The learned explainers look inside:
//! GNNExplainer descends the gradient of the "invalid" logit with respect to a soft mask over
//! the group's edges, PGExplainer trains through the masked logit, and PG and RG read the node
//! embeddings. Written against [`GnnClassifier`] alone, they could explain nothing else; this
//! trait is the part of it they use, so that they are generic over any model that offers it.
//!
//! ## The door: message weights
//!
//! Every question goes through one door, the message weights of a [`DeviceBatch`]
//! ([`DeviceEdges::weights`](crate::features::DeviceEdges)): one weight per message, both
//! directions of an edge adjacent, 1 when absent. A mask on a group's edges is a weight on its
//! messages, so "the logit with the explanation's edges removed" and "the gradient with respect
//! to the mask" are questions about those weights, and the model answers them in its own terms.
//!
//! ## The surface
//!
//! Required, five small methods: the [`cost_kind`](ExplainableModel::cost_kind) it imitates
//! (what explanations are judged against), its [`device`](ExplainableModel::device), the
//! [`forward`](ExplainableModel::forward) pass from a batch to one logit per group,
//! differentiable in the message weights, and the node embeddings
//! ([`embed`](ExplainableModel::embed), [`embedding_dim`](ExplainableModel::embedding_dim)).
//!
//! Provided, three methods a model may answer faster:
//! [`logits`](ExplainableModel::logits) (encoded groups in, host logits out: a forward pass),
//! [`message_weight_grad`](ExplainableModel::message_weight_grad) (burn's autodiff through
//! `forward`) and [`weight_gradients`](ExplainableModel::weight_gradients) (that gradient for
//! one batch under many weightings, each asked anew). [`GnnClassifier`], the reference
//! implementation, overrides all three: the logits by its compressed, chunked inference
//! ([`crate::compress`]), the gradient by the closed form of [`crate::grad`], which needs no
//! autodiff tape, and the many weightings by computing once what they share
//! ([`crate::Fixed`]).
//!
//! Complexity: as the implementation's forward pass; the provided gradient records one forward
//! pass on burn's tape and walks it back once.

use crate::error::{GnnError, Result};
use crate::features::{DeviceBatch, FeatureSet, GraphBatch, GroupGraph};
use crate::model::{GnnClassifier, ValidityModel, to_vec};
use burn::prelude::*;
use fuselage_cost::CostKind;

/// A [`ValidityModel`] that the learned explainers can look inside: a forward pass
/// differentiable in the message weights, and node embeddings.
///
/// Required: [`cost_kind`](Self::cost_kind), [`device`](Self::device),
/// [`embedding_dim`](Self::embedding_dim), [`embed`](Self::embed) and
/// [`forward`](Self::forward). Provided: [`logits`](Self::logits),
/// [`message_weight_grad`](Self::message_weight_grad) (autodiff through `forward`) and
/// [`weight_gradients`](Self::weight_gradients) (that gradient under many weightings), which
/// an implementation may answer faster. The module docs explain the design.
///
/// # Example
/// A decorator downstream: a classifier whose verdicts are made less confident by dividing
/// every logit by a temperature. Its gradient comes from the provided autodiff.
/// ```
/// use burn::prelude::*;
/// use fuselage_cost::CostConfig;
/// use fuselage_gnn::features::DeviceBatch;
/// use fuselage_gnn::{
///     CostKind, ExplainableModel, FeatureSet, GnnClassifier, GraphBatch, GroupGraph, Result,
///     ValidityModel,
///     default_device, shipped,
/// };
/// use fuselage_ir::{Graph, NodeSet};
///
/// struct Tempered(GnnClassifier, f32);
///
/// impl ValidityModel for Tempered {
///     fn name(&self) -> &str { "tempered" }
///     fn invalid_probabilities(&self, g: &Graph, groups: &[NodeSet], config: &CostConfig)
///         -> Result<Vec<f32>>
///     {
///         let encoded = groups.iter().map(|s| GroupGraph::new(g, s)).collect::<Result<Vec<_>>>()?;
///         let beta = config.buffer_bytes();
///         let items: Vec<_> = encoded.iter().map(|gg| (gg, beta, None)).collect();
///         let z = self.logits(&items)?;
///         Ok(z.iter().map(|z| 1.0 / (1.0 + (-z).exp())).collect())
///     }
/// }
///
/// impl ExplainableModel for Tempered {
///     fn cost_kind(&self) -> CostKind { self.0.cost_kind() }
///     fn device(&self) -> &Device { self.0.device() }
///     fn embedding_dim(&self) -> usize { self.0.embedding_dim() }
///     fn feature_set(&self) -> FeatureSet { self.0.feature_set() }
///     fn embed(&self, batch: &DeviceBatch) -> Tensor<2> { self.0.embed(batch) }
///     fn forward(&self, batch: &DeviceBatch) -> Tensor<1> {
///         self.0.forward(batch).div_scalar(self.1)
///     }
/// }
///
/// let t = Tempered(shipped(CostKind::Lbdf, &default_device())?, 4.0);
/// let g = fuselage_zoo::build("resnet18")?;
/// let gg = GroupGraph::new(&g, &NodeSet::from_ids(g.len(), g.node_ids().take(6)))?;
/// let mut batch = GraphBatch::new(t.feature_set());
/// batch.push(&gg, 128.0 * 1024.0, None)?;
/// // ∂z/∂w for every message: dL/dz = 1.
/// let grad = t.message_weight_grad(&batch.to_device(t.device()), &mut |z| vec![1.0; z.len()])?;
/// assert_eq!(grad.map(|d| d.dims()), Some([2 * gg.edges.len()]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait ExplainableModel: ValidityModel {
    /// The cost model whose verdicts it imitates: what the explanations' cuts are judged by.
    fn cost_kind(&self) -> CostKind;

    /// The device its forward pass runs on; explainers put their batches and masks there.
    fn device(&self) -> &Device;

    /// The width of a node embedding ([`embed`](Self::embed)'s second dimension).
    fn embedding_dim(&self) -> usize;

    /// The node features its batches carry ([`GraphBatch::new`]).
    fn feature_set(&self) -> FeatureSet;

    /// Node embeddings of a batch, `[nodes, embedding_dim]`, non-negative (PGExplainer and
    /// RG-Explainer read them through `ln(1 + h)`).
    fn embed(&self, batch: &DeviceBatch) -> Tensor<2>;

    /// The "invalid" logit of every group of the batch, `[groups]`. It must be differentiable
    /// in the batch's message weights: an explainer may pass weights of an autodiff device
    /// (`Device::autodiff`) and back-propagate into them.
    fn forward(&self, batch: &DeviceBatch) -> Tensor<1>;

    /// The "invalid" logits of encoded groups, each at its own β and with optional edge
    /// weights (one per edge of [`GroupGraph::edges`]), on the host.
    ///
    /// Provided: one [`forward`](Self::forward) over the groups as one batch.
    ///
    /// # Errors
    /// [`GnnError::EdgeWeights`] for a weight vector of the wrong length.
    fn logits(&self, items: &[(&GroupGraph, u64, Option<&[f32]>)]) -> Result<Vec<f32>> {
        let mut batch = GraphBatch::new(self.feature_set());
        for (gg, beta, w) in items {
            batch.push(gg, *beta as f64, *w)?;
        }
        to_vec(self.forward(&batch.to_device(self.device())))
    }

    /// `∂L/∂w_m` for every message `m` of the batch, `[messages]` in batch order, where the
    /// loss `L` is a function of the logits: `dloss` gets the logits of
    /// [`forward`](Self::forward) (one per group) and returns `∂L/∂z`, one per group. `None`
    /// when the batch has no edge (then `dloss` is not called).
    ///
    /// Provided: burn's autodiff through [`forward`](Self::forward), with the batch's weights
    /// (or ones) as the leaf.
    ///
    /// # Errors
    /// [`GnnError::Config`] when `dloss` does not return one value per group;
    /// [`GnnError::Checkpoint`] when a tensor cannot be read back.
    fn message_weight_grad(
        &self,
        batch: &DeviceBatch,
        dloss: &mut dyn FnMut(&[f32]) -> Vec<f32>,
    ) -> Result<Option<Tensor<1>>> {
        let Some(edges) = &batch.edges else {
            return Ok(None);
        };
        let [m] = edges.src.dims();
        let w = match &edges.weights {
            Some(w) => w.clone().inner(),
            None => Tensor::<2>::ones([m, 1], self.device()),
        };
        let w = w.autodiff().require_grad();
        let z = self.forward(&batch.with_weights(w.clone()));
        let dz = loss_gradient(dloss, &to_vec(z.clone().inner())?, batch.graphs)?;
        if !z.is_tracked() {
            // A forward pass that ignores the weights: their gradient is zero.
            return Ok(Some(Tensor::<1>::zeros([m], self.device())));
        }
        let dz = Tensor::<1>::from_data(TensorData::new(dz, [batch.graphs]), &z.device());
        let grads = (z * dz).sum().backward();
        Ok(w.grad(&grads).map(|g| g.reshape([m])))
    }

    /// [`message_weight_grad`](Self::message_weight_grad) of `batch` under many weightings of
    /// its messages, each replacing the batch's own ([`WeightGradients::at`]): what
    /// GNNExplainer asks at every step.
    ///
    /// Provided: each weighting asked anew, as
    /// `message_weight_grad(&batch.with_weights(weights), dloss)`. A model may compute once
    /// what the weightings share; its answers must stay those of `message_weight_grad`.
    fn weight_gradients<'a>(&'a self, batch: &'a DeviceBatch) -> Box<dyn WeightGradients + 'a> {
        Box::new(EachAnew { model: self, batch })
    }
}

/// The gradient of [`ExplainableModel::message_weight_grad`] for one batch under many
/// weightings of its messages: what GNNExplainer asks at each of its steps. Made by
/// [`ExplainableModel::weight_gradients`].
pub trait WeightGradients {
    /// `∂L/∂w_m` for every message of the batch with its message weights replaced by
    /// `weights`, `[messages, 1]`: [`message_weight_grad`](ExplainableModel::message_weight_grad)
    /// of [`DeviceBatch::with_weights`]. `None` when the batch has no edge.
    ///
    /// # Errors
    /// As [`message_weight_grad`](ExplainableModel::message_weight_grad).
    fn at(
        &self,
        weights: Tensor<2>,
        dloss: &mut dyn FnMut(&[f32]) -> Vec<f32>,
    ) -> Result<Option<Tensor<1>>>;
}

/// The provided [`WeightGradients`]: each weighting asked anew of the model.
struct EachAnew<'a, M: ?Sized> {
    model: &'a M,
    batch: &'a DeviceBatch,
}

impl<M: ExplainableModel + ?Sized> WeightGradients for EachAnew<'_, M> {
    fn at(
        &self,
        weights: Tensor<2>,
        dloss: &mut dyn FnMut(&[f32]) -> Vec<f32>,
    ) -> Result<Option<Tensor<1>>> {
        self.model
            .message_weight_grad(&self.batch.with_weights(weights), dloss)
    }
}

/// [`GnnClassifier`]'s [`WeightGradients`]: the parts of the forward pass that no weighting
/// changes, computed once ([`crate::Fixed`]); every answer is bit for bit that of
/// [`message_weight_grad`](ExplainableModel::message_weight_grad).
struct FixedGradients<'a> {
    fixed: crate::Fixed<'a>,
    batch: &'a DeviceBatch,
    device: &'a Device,
}

impl WeightGradients for FixedGradients<'_> {
    fn at(
        &self,
        weights: Tensor<2>,
        dloss: &mut dyn FnMut(&[f32]) -> Vec<f32>,
    ) -> Result<Option<Tensor<1>>> {
        if self.batch.edges.is_none() {
            return Ok(None);
        }
        let trace = self.fixed.trace(Some(weights));
        let graphs = self.batch.graphs;
        let dz = loss_gradient(dloss, &to_vec(trace.logits())?, graphs)?;
        let dz = Tensor::<1>::from_data(TensorData::new(dz, [graphs]), self.device);
        Ok(trace.message_weight_grad(dz))
    }
}

/// `dloss(z)`, checked to hold one value per group.
fn loss_gradient(
    dloss: &mut dyn FnMut(&[f32]) -> Vec<f32>,
    z: &[f32],
    groups: usize,
) -> Result<Vec<f32>> {
    let dz = dloss(z);
    if dz.len() != groups {
        return Err(GnnError::Config(format!(
            "a loss gradient of {} values for {groups} groups",
            dz.len()
        )));
    }
    Ok(dz)
}

/// The reference implementation: the network's own passes, its compressed inference for
/// [`logits`](ExplainableModel::logits), and the closed-form gradient of [`crate::grad`],
/// whose first layer's constant parts are computed once per batch for
/// [`weight_gradients`](ExplainableModel::weight_gradients).
impl ExplainableModel for GnnClassifier {
    fn cost_kind(&self) -> CostKind {
        self.cost_model
    }

    fn device(&self) -> &Device {
        &self.device
    }

    fn embedding_dim(&self) -> usize {
        self.config.hidden
    }

    fn feature_set(&self) -> FeatureSet {
        self.config.feature_set
    }

    fn embed(&self, batch: &DeviceBatch) -> Tensor<2> {
        self.model.embed(batch)
    }

    fn forward(&self, batch: &DeviceBatch) -> Tensor<1> {
        self.model.forward(batch)
    }

    fn logits(&self, items: &[(&GroupGraph, u64, Option<&[f32]>)]) -> Result<Vec<f32>> {
        GnnClassifier::logits(self, items)
    }

    fn message_weight_grad(
        &self,
        batch: &DeviceBatch,
        dloss: &mut dyn FnMut(&[f32]) -> Vec<f32>,
    ) -> Result<Option<Tensor<1>>> {
        if batch.edges.is_none() {
            return Ok(None);
        }
        let trace = self.model.trace(batch);
        let dz = loss_gradient(dloss, &to_vec(trace.logits())?, batch.graphs)?;
        let dz = Tensor::<1>::from_data(TensorData::new(dz, [batch.graphs]), &self.device);
        Ok(trace.message_weight_grad(dz))
    }

    fn weight_gradients<'a>(&'a self, batch: &'a DeviceBatch) -> Box<dyn WeightGradients + 'a> {
        Box::new(FixedGradients {
            fixed: self.model.fixed(batch),
            batch,
            device: &self.device,
        })
    }
}

/// A model seen through the required methods of [`ExplainableModel`] alone: the provided
/// [`logits`](ExplainableModel::logits) and
/// [`message_weight_grad`](ExplainableModel::message_weight_grad) answer for it, whatever the
/// inner model overrides. It checks a model's fast paths against the trait's own answers, and
/// shows what a downstream model that writes only the required methods gets.
///
/// ```
/// use fuselage_gnn::{CostKind, ExplainableModel, default_device, shipped};
/// use fuselage_gnn::explainable::RequiredOnly;
/// let clf = shipped(CostKind::Lbdf, &default_device())?;
/// let plain = RequiredOnly(clf.clone());
/// assert_eq!(plain.cost_kind(), clf.cost_kind());
/// # Ok::<(), fuselage_gnn::GnnError>(())
/// ```
#[derive(Clone, Debug)]
pub struct RequiredOnly<M>(pub M);

impl<M: ValidityModel> ValidityModel for RequiredOnly<M> {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn invalid_probabilities(
        &self,
        g: &fuselage_ir::Graph,
        groups: &[fuselage_ir::NodeSet],
        config: &fuselage_cost::CostConfig,
    ) -> Result<Vec<f32>> {
        self.0.invalid_probabilities(g, groups, config)
    }
}

impl<M: ExplainableModel> ExplainableModel for RequiredOnly<M> {
    fn cost_kind(&self) -> CostKind {
        self.0.cost_kind()
    }

    fn device(&self) -> &Device {
        self.0.device()
    }

    fn embedding_dim(&self) -> usize {
        self.0.embedding_dim()
    }

    fn feature_set(&self) -> FeatureSet {
        self.0.feature_set()
    }

    fn embed(&self, batch: &DeviceBatch) -> Tensor<2> {
        self.0.embed(batch)
    }

    fn forward(&self, batch: &DeviceBatch) -> Tensor<1> {
        self.0.forward(batch)
    }
}
