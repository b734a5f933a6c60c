//! Node features and batched group graphs: what the classifier reads.
//!
//! ## Design
//!
//! A fusion group is encoded once, independently of β, as a [`GroupGraph`]: its nodes (in
//! topological order), its internal edges (producer → consumer, both ends in the group) and a
//! few raw numbers per node ([`NodeRaw`]). The β-dependent features are computed when a
//! [`GraphBatch`] is assembled, so one encoding serves all five buffer sizes of the data set.
//!
//! Each node gets [`FEATURE_DIM`] features (element size 1 byte, as the labels):
//!
//! | features | count | scaling |
//! | --- | ---: | --- |
//! | op kind one-hot over the first [`OpKind::CNN_KINDS`] of [`OpKind::ALL`] | 26 | 0/1 |
//! | first input C, H, W; output C, H, W | 6 | `ln(1+x)/8` |
//! | weight bytes, output bytes, input bytes | 3 | `ln(1+x)/16` |
//! | kernel h, w; stride h, w; dilation; depthwise; data inputs | 7 | `k/7`, `s/2`, `d/4`, 0/1, `n/2` |
//! | share of inputs read from outside the group; output leaves the group | 2 | 0..1 |
//! | β | 1 | `ln(β)/16` |
//! | weight, output, output-row, input and input-row bytes relative to β | 5 | `ln(1+x/β)` |
//!
//! The first six rows are the paper's features (op type, shapes, weight size, β on every
//! node). The boundary flags and the β-relative sizes are our additions: a group's buffer is a
//! sum of weights and row bands compared with β, and giving the network those ratios directly is
//! what lets it generalise to networks it never saw (see `docs/classifier.md`).
//!
//! That is the [`FeatureSet::Paper`] layout, which the paper's checkpoints read. It sees a
//! tensor as `C×H×W` and a row as `C·W`, and it one-hot encodes only the CNN zoo's kinds. The
//! [`FeatureSet::Broad`] layout appends what transformers and post-2020 CNNs need,
//! [`BROAD_EXTRA`] features:
//!
//! | features | count | scaling |
//! | --- | ---: | --- |
//! | op class one-hot over [`OpClass::ALL`] (every kind has one, seen in training or not) | 9 | 0/1 |
//! | the output has a row axis; rows of the output, of the first input | 3 | 0/1, `ln(1+x)/8` |
//! | one row of the output, of all inputs, along their row axes, relative to β | 2 | `ln(1+x/β)` |
//!
//! Rows follow the graph's row axis ([`Graph::rows_of`]): H of an image, the sequence of a
//! token tensor, so an attention group's row band is its token rows, not `C·W`. The class
//! one-hot, rather than one input per kind, keeps an unseen kind (an `Atan` in some export)
//! from reading an input whose weights training never moved.
//!
//! Message passing is over the undirected version of the internal edges; each edge carries an
//! optional weight (1 by default), which the explainers use as a soft edge mask.

use crate::error::{GnnError, Result};
use burn::prelude::*;
use burn::tensor::IndexingUpdateOp;
use fuselage_ir::{Graph, NodeId, NodeSet, Op, OpClass, OpKind, Source};

/// Number of features per node of the [`FeatureSet::Paper`] layout.
pub const FEATURE_DIM: usize = 50;

/// Features the [`FeatureSet::Broad`] layout appends to the paper's.
pub const BROAD_EXTRA: usize = OpClass::ALL.len() + 5;

/// The paper layout one-hot encodes the CNN zoo's kinds; a kind beyond them (the transformer
/// ops) has an all-zero one-hot there, and only its class in the broad layout.
const N_KINDS: usize = OpKind::CNN_KINDS;

fuselage_ir::kinds! {
    /// Which node features a classifier reads (module docs): the paper's layout, or the broad
    /// one that adds op classes and row-axis sizes. A checkpoint records its own.
    pub enum FeatureSet: "feature set" {
        /// [`FEATURE_DIM`] features: the paper's checkpoints, trained on its nine CNNs.
        Paper = "paper",
        /// [`FEATURE_DIM`] + [`BROAD_EXTRA`]: the checkpoints trained on CNNs, transformers and
        /// post-2020 CNNs.
        Broad = "broad",
    }
}

impl FeatureSet {
    /// [`FeatureSet::Paper`]: what a checkpoint that does not name its feature set reads.
    pub fn paper() -> Self {
        FeatureSet::Paper
    }

    /// Whether it is [`FeatureSet::Paper`] (what metadata leaves unwritten).
    pub fn is_paper(&self) -> bool {
        *self == FeatureSet::Paper
    }

    /// Features per node.
    pub const fn dim(self) -> usize {
        match self {
            FeatureSet::Paper => FEATURE_DIM,
            FeatureSet::Broad => FEATURE_DIM + BROAD_EXTRA,
        }
    }
}

/// The β-independent numbers of one node of a group.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRaw {
    /// Position of the op kind in [`OpKind::ALL`].
    pub kind: usize,
    /// C, H, W of the first input.
    pub input_chw: [f32; 3],
    /// C, H, W of the output.
    pub output_chw: [f32; 3],
    /// Weight bytes.
    pub weight_bytes: f32,
    /// Output tensor bytes.
    pub output_bytes: f32,
    /// Bytes of one output row (`C·W`).
    pub output_row_bytes: f32,
    /// Bytes of all input tensors.
    pub input_bytes: f32,
    /// Bytes of one row of every input tensor.
    pub input_row_bytes: f32,
    /// Kernel `[h, w]` (1 for ops without a window).
    pub kernel: [f32; 2],
    /// Stride `[h, w]` (1 for ops without a window).
    pub stride: [f32; 2],
    /// Vertical dilation (1 without).
    pub dilation: f32,
    /// Whether the op is a grouped (depthwise) convolution.
    pub depthwise: bool,
    /// Number of data inputs.
    pub inputs: usize,
    /// Inputs read from outside the group (graph inputs included).
    pub external_inputs: usize,
    /// Whether the output is read outside the group or is a graph output.
    pub output_leaves: bool,
    /// Position of the op's class in [`OpClass::ALL`].
    pub class: usize,
    /// Whether the output has a row axis (a global pool's or a flattened vector's has none).
    pub has_row_axis: bool,
    /// Rows of the output along its row axis (1 without one).
    pub output_rows: f32,
    /// Rows of the first input along its row axis.
    pub input_rows: f32,
    /// Bytes of one output row along its row axis.
    pub output_axis_row_bytes: f32,
    /// Bytes of one row of every input along its row axis.
    pub input_axis_row_bytes: f32,
}

/// A fusion group encoded for the classifier, independent of β.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupGraph {
    /// The group's nodes, in topological order; local index `i` is `nodes[i]`.
    pub nodes: Vec<NodeId>,
    /// Internal edges `(producer, consumer)` as local indices, sorted, without duplicates.
    /// Edge weights given to the classifier follow this order.
    pub edges: Vec<(u32, u32)>,
    /// Raw per-node numbers.
    pub raw: Vec<NodeRaw>,
}

fn chw(s: &fuselage_ir::TensorShape) -> [f32; 3] {
    [s.c() as f32, s.h() as f32, s.w() as f32]
}

impl GroupGraph {
    /// Encodes `group`, a non-empty set of `g`'s nodes.
    ///
    /// # Errors
    /// [`GnnError::BadGroup`] for an empty set or one sized for another graph.
    ///
    /// # Example
    /// ```
    /// use fuselage_gnn::GroupGraph;
    /// use fuselage_ir::NodeSet;
    /// let g = fuselage_zoo::build("resnet18")?;
    /// let group = NodeSet::from_ids(g.len(), g.node_ids().take(3));
    /// let gg = GroupGraph::new(&g, &group)?;
    /// assert_eq!(gg.nodes.len(), 3);
    /// assert_eq!(gg.edges, vec![(0, 1), (1, 2)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(g: &Graph, group: &NodeSet) -> Result<Self> {
        if group.capacity() != g.len() {
            return Err(GnnError::BadGroup {
                graph: g.name().to_string(),
                reason: format!(
                    "a set for {} nodes, but the graph has {}",
                    group.capacity(),
                    g.len()
                ),
            });
        }
        if group.is_empty() {
            return Err(GnnError::BadGroup {
                graph: g.name().to_string(),
                reason: "the group is empty".into(),
            });
        }
        let order = fuselage_ir::order::GroupOrder::new(g, group);
        let nodes: Vec<NodeId> = order.nodes().to_vec();
        // The edges explanations score, in their order (one source: `GroupOrder::edges`).
        let edges = order.local_edges(g);
        let mut raw = Vec::with_capacity(nodes.len());
        for &v in &nodes {
            let n = g.node(v);
            let mut external = 0;
            let mut input_bytes = 0.0;
            let mut input_row_bytes = 0.0;
            let mut input_axis_row_bytes = 0.0;
            for &s in &n.inputs {
                let shape = g.shape_of(s);
                input_bytes += shape.elements() as f32;
                input_row_bytes += (shape.c() * shape.w()) as f32;
                input_axis_row_bytes += shape.elements() as f32 / g.rows_of(s).max(1) as f32;
                if !matches!(s, Source::Node(u) if group.contains(u)) {
                    external += 1;
                }
            }
            let leaves = g.is_output(v) || g.consumers(v).iter().any(|&(c, _)| !group.contains(c));
            let (kernel, stride, dilation, depthwise) = match &n.op {
                Op::Conv(a) => (
                    [a.kernel[0] as f32, a.kernel[1] as f32],
                    [a.stride[0] as f32, a.stride[1] as f32],
                    a.dilation[0] as f32,
                    a.group > 1,
                ),
                Op::MaxPool(p) | Op::AveragePool(p) => (
                    [p.kernel[0] as f32, p.kernel[1] as f32],
                    [p.stride[0] as f32, p.stride[1] as f32],
                    1.0,
                    false,
                ),
                _ => ([1.0, 1.0], [1.0, 1.0], 1.0, false),
            };
            let out = &n.shape;
            let me = Source::Node(v);
            let output_rows = g.rows_of(me).max(1) as f32;
            raw.push(NodeRaw {
                class: n.op.kind().class().index(),
                has_row_axis: g.row_axis(me).is_some(),
                output_rows,
                input_rows: g.rows_of(n.inputs[0]).max(1) as f32,
                output_axis_row_bytes: out.elements() as f32 / output_rows,
                input_axis_row_bytes,
                kind: n.op.kind().index(),
                input_chw: chw(g.shape_of(n.inputs[0])),
                output_chw: chw(out),
                weight_bytes: n.weights as f32,
                output_bytes: out.elements() as f32,
                output_row_bytes: (out.c() * out.w()) as f32,
                input_bytes,
                input_row_bytes,
                kernel,
                stride,
                dilation,
                depthwise,
                inputs: n.inputs.len(),
                external_inputs: external,
                output_leaves: leaves,
            });
        }
        Ok(GroupGraph { nodes, edges, raw })
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the group has no node (never true for a built encoding).
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Appends the [`FeatureSet::dim`] features of every node at buffer size `beta_bytes` to
    /// `out`.
    pub fn features_into(&self, set: FeatureSet, beta_bytes: f64, out: &mut Vec<f32>) {
        let beta = beta_bytes.max(1.0) as f32;
        let l8 = |x: f32| (1.0 + x).ln() / 8.0;
        let l16 = |x: f32| (1.0 + x).ln() / 16.0;
        let rel = |x: f32| (1.0 + x / beta).ln();
        for r in &self.raw {
            let start = out.len();
            out.resize(start + N_KINDS, 0.0);
            if r.kind < N_KINDS {
                out[start + r.kind] = 1.0;
            }
            out.extend(r.input_chw.iter().map(|&x| l8(x)));
            out.extend(r.output_chw.iter().map(|&x| l8(x)));
            out.extend([l16(r.weight_bytes), l16(r.output_bytes), l16(r.input_bytes)]);
            out.extend([
                r.kernel[0] / 7.0,
                r.kernel[1] / 7.0,
                r.stride[0] / 2.0,
                r.stride[1] / 2.0,
                r.dilation / 4.0,
                f32::from(u8::from(r.depthwise)),
                r.inputs as f32 / 2.0,
            ]);
            out.extend([
                r.external_inputs as f32 / r.inputs.max(1) as f32,
                f32::from(u8::from(r.output_leaves)),
            ]);
            out.push(beta.ln() / 16.0);
            out.extend([
                rel(r.weight_bytes),
                rel(r.output_bytes),
                rel(r.output_row_bytes),
                rel(r.input_bytes),
                rel(r.input_row_bytes),
            ]);
            if set == FeatureSet::Broad {
                let classes = out.len();
                out.resize(classes + OpClass::ALL.len(), 0.0);
                out[classes + r.class] = 1.0;
                out.extend([
                    f32::from(u8::from(r.has_row_axis)),
                    l8(r.output_rows),
                    l8(r.input_rows),
                    rel(r.output_axis_row_bytes),
                    rel(r.input_axis_row_bytes),
                ]);
            }
            debug_assert_eq!(out.len() - start, set.dim());
        }
    }
}

/// Many groups (each at its own β, with optional edge weights) as one disjoint graph, in host
/// memory: what [`Gnn::forward`](crate::Gnn::forward) takes once moved to a device.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphBatch {
    /// The layout of `features`.
    pub set: FeatureSet,
    /// Node features, row-major `[nodes, set.dim()]`.
    pub features: Vec<f32>,
    /// Message sources (global node index), both directions of every edge.
    pub src: Vec<i64>,
    /// Message targets, aligned with `src`.
    pub dst: Vec<i64>,
    /// Message weights, aligned with `src`; `None` when every weight is 1.
    pub weights: Option<Vec<f32>>,
    /// The group of each node.
    pub graph_of: Vec<i64>,
    /// Number of groups.
    pub graphs: usize,
}

impl GraphBatch {
    /// An empty batch of features `set` (the classifier's: [`GnnConfig::feature_set`](crate::GnnConfig)).
    pub fn new(set: FeatureSet) -> Self {
        GraphBatch {
            set,
            features: Vec::new(),
            src: Vec::new(),
            dst: Vec::new(),
            weights: None,
            graph_of: Vec::new(),
            graphs: 0,
        }
    }

    /// Adds one group at buffer size `beta_bytes`, with one weight per edge of
    /// [`GroupGraph::edges`] (or none: every weight 1).
    ///
    /// # Errors
    /// [`GnnError::EdgeWeights`] when `edge_weights` has the wrong length.
    pub fn push(
        &mut self,
        group: &GroupGraph,
        beta_bytes: f64,
        edge_weights: Option<&[f32]>,
    ) -> Result<()> {
        if let Some(w) = edge_weights
            && w.len() != group.edges.len()
        {
            return Err(GnnError::EdgeWeights {
                edges: group.edges.len(),
                weights: w.len(),
            });
        }
        let base = self.nodes() as i64;
        let gi = self.graphs as i64;
        group.features_into(self.set, beta_bytes, &mut self.features);
        self.graph_of.extend(std::iter::repeat_n(gi, group.len()));
        if edge_weights.is_some() && self.weights.is_none() {
            self.weights = Some(vec![1.0; self.src.len()]);
        }
        for (e, &(u, v)) in group.edges.iter().enumerate() {
            let (u, v) = (base + i64::from(u), base + i64::from(v));
            self.src.extend([u, v]);
            self.dst.extend([v, u]);
            if let Some(ws) = self.weights.as_mut() {
                let w = edge_weights.map_or(1.0, |w| w[e]);
                ws.extend([w, w]);
            }
        }
        self.graphs += 1;
        Ok(())
    }

    /// Number of nodes over all groups.
    pub fn nodes(&self) -> usize {
        self.graph_of.len()
    }

    /// Moves the batch to `device`.
    pub fn to_device(&self, device: &Device) -> DeviceBatch {
        let n = self.nodes();
        let x = Tensor::<2>::from_data(
            TensorData::new(self.features.clone(), [n, self.set.dim()]),
            device,
        );
        let edges = if self.src.is_empty() {
            None
        } else {
            let m = self.src.len();
            let src = Tensor::<1, Int>::from_data(TensorData::new(self.src.clone(), [m]), device);
            let dst = Tensor::<1, Int>::from_data(TensorData::new(self.dst.clone(), [m]), device);
            let w = self
                .weights
                .as_ref()
                .map(|w| Tensor::<2>::from_data(TensorData::new(w.clone(), [m, 1]), device));
            Some(DeviceEdges {
                src,
                dst,
                weights: w,
            })
        };
        let graph_of =
            Tensor::<1, Int>::from_data(TensorData::new(self.graph_of.clone(), [n]), device);
        DeviceBatch {
            x,
            edges,
            graph_of,
            graphs: self.graphs,
        }
    }
}

/// The message edges of a [`DeviceBatch`].
#[derive(Clone, Debug)]
pub struct DeviceEdges {
    /// Sources, `[messages]`.
    pub src: Tensor<1, Int>,
    /// Targets, `[messages]`.
    pub dst: Tensor<1, Int>,
    /// Weights `[messages, 1]`, or `None` for all ones. Make it require gradients to learn an
    /// edge mask.
    pub weights: Option<Tensor<2>>,
}

/// A [`GraphBatch`] on a device.
#[derive(Clone, Debug)]
pub struct DeviceBatch {
    /// Node features `[nodes, features]`.
    pub x: Tensor<2>,
    /// Edges, `None` when no group has an edge.
    pub edges: Option<DeviceEdges>,
    /// The group of each node, `[nodes]`.
    pub graph_of: Tensor<1, Int>,
    /// Number of groups.
    pub graphs: usize,
}

impl DeviceBatch {
    /// Sums node rows `[nodes, width]` into one row per group, `[groups, width]`: the readout.
    pub fn sum_per_group(&self, rows: Tensor<2>) -> Tensor<2> {
        let [_, width] = rows.dims();
        let zeros = Tensor::<2>::zeros([self.graphs, width], &rows.device());
        zeros.select_assign(0, self.graph_of.clone(), rows, IndexingUpdateOp::Add)
    }

    /// The batch with its message weights replaced by `weights`, `[messages, 1]` (a batch
    /// without edges stays as it is). An explainer's mask enters the classifier this way.
    pub fn with_weights(&self, weights: Tensor<2>) -> DeviceBatch {
        let mut b = self.clone();
        if let Some(e) = b.edges.as_mut() {
            e.weights = Some(weights);
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_have_the_declared_width() {
        let g = fuselage_zoo::build("mobilenet_v3_small").unwrap();
        let group = NodeSet::from_ids(g.len(), g.node_ids().take(12));
        let gg = GroupGraph::new(&g, &group).unwrap();
        let mut f = Vec::new();
        gg.features_into(FeatureSet::Paper, 131072.0, &mut f);
        assert_eq!(f.len(), gg.len() * FEATURE_DIM);
        assert!(f.iter().all(|x| x.is_finite()));
        // The broad layout is the paper's, then the extras.
        let mut broad = Vec::new();
        gg.features_into(FeatureSet::Broad, 131072.0, &mut broad);
        let d = FeatureSet::Broad.dim();
        assert_eq!(broad.len(), gg.len() * d);
        for (i, row) in broad.chunks(d).enumerate() {
            assert_eq!(row[..FEATURE_DIM], f[i * FEATURE_DIM..][..FEATURE_DIM]);
            assert_eq!(
                row[FEATURE_DIM..][..OpClass::ALL.len()].iter().sum::<f32>(),
                1.0
            );
        }
        let mut b = GraphBatch::new(FeatureSet::Paper);
        b.push(&gg, 131072.0, None).unwrap();
        b.push(&gg, 262144.0, Some(&vec![0.5; gg.edges.len()]))
            .unwrap();
        assert_eq!(b.graphs, 2);
        assert_eq!(b.src.len(), 4 * gg.edges.len());
        assert_eq!(b.weights.as_ref().unwrap().len(), b.src.len());
        assert!(b.push(&gg, 1.0, Some(&[1.0])).is_err() || gg.edges.len() == 1);
        assert!(GroupGraph::new(&g, &NodeSet::new(g.len())).is_err());
    }

    #[test]
    fn broad_rows_follow_the_row_axis() {
        // BERT at 4 layers, hidden 256, 128 tokens: a LayerNorm's rows are its 128 tokens of
        // 256 bytes, where the paper's C·W reading of `[1, 128, 256]` sees something else.
        let g = fuselage_zoo::build("bert_l4_h256").unwrap();
        let ln = g
            .node_ids()
            .find(|&v| g.node(v).op.kind() == OpKind::LayerNormalization)
            .unwrap();
        let gg = GroupGraph::new(&g, &NodeSet::from_ids(g.len(), [ln])).unwrap();
        let r = &gg.raw[0];
        assert_eq!(g.node(ln).shape.elements(), 128 * 256);
        assert!(r.has_row_axis);
        assert_eq!((r.output_rows, r.output_axis_row_bytes), (128.0, 256.0));
        assert_eq!(r.class, OpClass::Normalize.index());
        assert_eq!(OpClass::ALL[r.class], OpClass::Normalize);
        let mut f = Vec::new();
        gg.features_into(FeatureSet::Broad, 2048.0 * 1024.0, &mut f);
        let extra = &f[FEATURE_DIM..];
        assert_eq!(extra[OpClass::Normalize.index()], 1.0);
        let rows = &extra[OpClass::ALL.len()..];
        assert_eq!(rows[0], 1.0);
        assert!((rows[1] - (129.0f32).ln() / 8.0).abs() < 1e-6);
        assert!((rows[3] - (1.0 + 256.0f32 / 2097152.0).ln()).abs() < 1e-9);
    }
}
