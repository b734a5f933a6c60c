//! The gradient of the classifier's logits with respect to its message weights, in closed form.
//!
//! ## Why
//!
//! The explainers learn a soft mask over a group's edges through the classifier's message
//! weights (see [`DeviceEdges::weights`](crate::features::DeviceEdges)). GNNExplainer needs that
//! gradient a hundred times per explanation. Burn's autodiff records every op of the forward
//! pass on a tape and then walks the tape back. On a 30-node group that bookkeeping (a graph
//! node, a hash-map entry and an allocation per op) costs more than the arithmetic.
//!
//! For an explainer the network's parameters are constants, and the network is fixed: four
//! GraphConv layers, a sum readout and a two-layer head. So the vector-Jacobian product has a
//! short closed form, computed here with plain tensor ops on the classifier's device.
//!
//! ## The product
//!
//! [`Gnn::trace`] runs the forward pass and keeps every layer's output and its messages'
//! source rows. It runs the ops of [`GraphConv::forward`](crate::GraphConv::forward), as
//! [`Gnn::forward`] does, so its logits are `forward`'s bit for bit.
//! [`Trace::message_weight_grad`] takes `∂L/∂z` per group and returns `∂L/∂w_m` per message.
//! With `h⁰ = x` and `hˡ = ReLU(hˡ⁻¹·W1ˡ + b + Aᵂ·hˡ⁻¹·W2ˡ)`, where `Aᵂ[dst, src] = Σ w_m`,
//! the product runs from the head down:
//!
//! - `∂L/∂pre = ∂L/∂hˡ ⊙ [hˡ > 0]`;
//! - `∂L/∂agg = ∂L/∂pre · W2ˡᵀ`;
//! - `∂L/∂w_m += ⟨∂L/∂agg[dst_m], hˡ⁻¹[src_m]⟩`;
//! - `∂L/∂hˡ⁻¹ = ∂L/∂pre · W1ˡᵀ + Σ_{m: src_m = v} w_m·∂L/∂agg[dst_m]`. This step is skipped
//!   for the input features, which are constants.
//!
//! `tests/weight_grad.rs` checks the result against burn's autodiff on real groups.
//!
//! ## One batch, many weightings
//!
//! GNNExplainer asks for the gradient of the same batch under a new mask at every step. The
//! first layer reads only the constant features, so its root term `x·W1⁰ + b` and its
//! messages' source rows `x[src]` do not change between steps: [`Gnn::fixed`] computes them
//! once and [`Fixed::trace`] reuses them. The backward pass reuses the source rows the forward
//! pass gathered (`hˡ⁻¹[src_m]` above) instead of gathering them again. Neither changes an
//! operation's inputs or order, so every result is the same to the bit
//! (`tests/weight_grad.rs`).

use crate::features::DeviceBatch;
use crate::model::Gnn;
use burn::prelude::*;
use burn::tensor::IndexingUpdateOp;
use burn::tensor::activation::relu;

/// What a [`Gnn`]'s forward pass over one batch computes whatever its message weights: the
/// first layer reads only the constant features `x`, so its root term `x·W1⁰ + b` and its
/// messages' source rows `x[src]` are the same under every weighting. Build one with
/// [`Gnn::fixed`], then [`trace`](Fixed::trace) the batch under as many weightings as needed:
/// GNNExplainer traces one batch a hundred times, and so computes these once.
///
/// A trace from here is bit for bit the trace of [`Gnn::trace`] on the batch with those
/// weights: the same tensor ops on the same inputs, some of them run earlier.
#[derive(Clone, Debug)]
pub struct Fixed<'a> {
    gnn: &'a Gnn,
    batch: &'a DeviceBatch,
    /// The first layer's root term, `[nodes, hidden]` (`None` for a network without layers).
    root: Option<Tensor<2>>,
    /// `x[src]`, `[messages, features]` (`None` without edges).
    sources: Option<Tensor<2>>,
}

impl Gnn {
    /// The parts of a forward pass over `batch` that its message weights do not change
    /// ([`Fixed`]).
    pub fn fixed<'a>(&'a self, batch: &'a DeviceBatch) -> Fixed<'a> {
        Fixed {
            gnn: self,
            batch,
            root: self.layers.first().map(|l| l.root.forward(batch.x.clone())),
            sources: batch
                .edges
                .as_ref()
                .map(|e| batch.x.clone().select(0, e.src.clone())),
        }
    }

    /// The forward pass of [`Gnn::forward`], keeping the activations that
    /// [`Trace::message_weight_grad`] needs. The logits are exactly those of `forward`.
    pub fn trace<'a>(&'a self, batch: &'a DeviceBatch) -> Trace<'a> {
        let weights = batch.edges.as_ref().and_then(|e| e.weights.clone());
        self.fixed(batch).trace(weights)
    }
}

/// One forward pass of a [`Gnn`] over a batch, with what its gradient with respect to the
/// message weights needs. Build one with [`Gnn::trace`] or [`Fixed::trace`].
#[derive(Clone, Debug)]
pub struct Trace<'a> {
    gnn: &'a Gnn,
    batch: &'a DeviceBatch,
    /// The message weights `[messages, 1]` of this pass (`None`: all ones).
    weights: Option<Tensor<2>>,
    /// `h⁰ = x`, then the output of every layer.
    hidden: Vec<Tensor<2>>,
    /// Each layer's message source rows `hˡ[src]` (empty without edges).
    sources: Vec<Tensor<2>>,
    /// The head's hidden layer, after its ReLU, `[groups, hidden]`.
    head: Tensor<2>,
    logits: Tensor<1>,
}

impl<'a> Fixed<'a> {
    /// The forward pass of [`Gnn::forward`] over the batch with its message weights replaced
    /// by `weights`, `[messages, 1]` (`None`: all ones), as [`Gnn::trace`] of
    /// [`DeviceBatch::with_weights`] gives it, bit for bit.
    pub fn trace(&self, weights: Option<Tensor<2>>) -> Trace<'a> {
        let (gnn, batch) = (self.gnn, self.batch);
        let mut hidden = Vec::with_capacity(gnn.layers.len() + 1);
        let mut sources = Vec::with_capacity(gnn.layers.len());
        hidden.push(batch.x.clone());
        for (l, layer) in gnn.layers.iter().enumerate() {
            let h = &hidden[l];
            // As `GraphConv::forward`, with the first layer's constant parts computed once.
            let root = match (l, &self.root) {
                (0, Some(root)) => root.clone(),
                _ => layer.root.forward(h.clone()),
            };
            let out = match &batch.edges {
                None => root,
                Some(e) => {
                    let from = match (l, &self.sources) {
                        (0, Some(x)) => x.clone(),
                        _ => h.clone().select(0, e.src.clone()),
                    };
                    sources.push(from.clone());
                    layer.combine(root, h.zeros_like(), from, &e.dst, weights.as_ref())
                }
            };
            hidden.push(relu(out));
        }
        let g = gnn.readout(hidden[hidden.len() - 1].clone(), batch);
        let head = relu(gnn.head.forward(g));
        let logits = gnn.out.forward(head.clone()).squeeze_dim(1);
        Trace {
            gnn,
            batch,
            weights,
            hidden,
            sources,
            head,
            logits,
        }
    }
}

impl Trace<'_> {
    /// The "invalid" logit of every group of the batch, `[groups]`.
    pub fn logits(&self) -> Tensor<1> {
        self.logits.clone()
    }

    /// `∂L/∂w_m` for every message `m` of the batch, `[messages]`, given `dz = ∂L/∂z`,
    /// `[groups]`. Messages are in [`GraphBatch`](crate::GraphBatch) order: both directions of
    /// an edge are adjacent. `None` when the batch has no edge.
    ///
    /// # Panics
    /// When `dz` does not have one entry per group.
    pub fn message_weight_grad(&self, dz: Tensor<1>) -> Option<Tensor<1>> {
        let edges = self.batch.edges.as_ref()?;
        let [groups] = dz.dims();
        assert_eq!(groups, self.batch.graphs, "one ∂L/∂z per group");
        let gnn = self.gnn;
        let transposed = |l: &burn::nn::Linear| l.weight.val().transpose();
        // The head: z = out(ReLU(head(g))), g the sum readout.
        let d_head = dz
            .reshape([groups, 1])
            .matmul(transposed(&gnn.out))
            .mask_fill(self.head.clone().lower_equal_elem(0.0), 0.0);
        let d_readout = d_head.matmul(transposed(&gnn.head));
        // The readout sums a group's nodes, so every node gets its group's gradient.
        let mut d_h = d_readout.select(0, self.batch.graph_of.clone());
        let mut d_w: Option<Tensor<2>> = None;
        for (l, layer) in gnn.layers.iter().enumerate().rev() {
            let output = &self.hidden[l + 1];
            let d_pre = d_h.mask_fill(output.clone().lower_equal_elem(0.0), 0.0);
            let d_agg = d_pre.clone().matmul(transposed(&layer.neighbours));
            let d_msg = d_agg.select(0, edges.dst.clone());
            let term = (d_msg.clone() * self.sources[l].clone()).sum_dim(1);
            d_w = Some(match d_w {
                None => term,
                Some(acc) => acc + term,
            });
            if l == 0 {
                break;
            }
            let d_msg = match &self.weights {
                Some(w) => d_msg * w.clone(),
                None => d_msg,
            };
            d_h = d_pre.matmul(transposed(&layer.root)).select_assign(
                0,
                edges.src.clone(),
                d_msg,
                IndexingUpdateOp::Add,
            );
        }
        d_w.map(|t| t.squeeze_dim(1))
    }
}
