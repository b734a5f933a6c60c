//! Inference that computes each distinct row of a batch once: colour refinement
//! (Weisfeiler–Lehman) over the batch before the forward pass.
//!
//! ## Why
//!
//! After `l` GraphConv layers, a node's row is a function of its features and of what lies
//! within `l` edges of it. The function is sum aggregation over the message weights. Two nodes
//! with the same features, whose neighbours pairwise carry the same weights and rows, get the
//! same row. Groups drawn from one network repeat its blocks and its shapes, so a batch holds
//! many such nodes. The benchmark batch has 256 random 30-node groups of resnet101: 7,680
//! nodes, but only 430, 1,196, 2,252 and 3,471 distinct rows after layers 1 to 4 (and 331,
//! 771, 1,335 and 1,960 in each of the two chunks [`GnnClassifier`](crate::GnnClassifier) cuts
//! it into). So most products of the plain forward pass compute a row that is already known.
//!
//! ## How
//!
//! [`CompressedBatch::new`] refines colours on the host, one round per layer:
//!
//! - depth 0: equal feature rows (bit for bit) share a colour;
//! - depth `l`: two nodes share a colour when they shared one at depth `l − 1` and their
//!   incoming messages carry the same multiset of (depth `l − 1` colour of the source, weight
//!   bits).
//!
//! Each colour becomes one row, computed for its first node, the *representative*. Layer `l`
//! reads the depth `l − 1` rows of its representatives (the root term) and of the sources of
//! their messages. The readout gathers every node's last row and sums them per group, as the
//! plain forward does. [`Gnn::forward_compressed`](crate::Gnn::forward_compressed) runs this with the same layers
//! ([`GraphConv::apply`](crate::GraphConv::apply)), so the network, its checkpoints and its
//! training are unchanged. Each layer runs in blocks of [`BLOCK_ROWS`] rows, in parallel.
//!
//! ## Exactness
//!
//! A representative's messages are summed in the order of its key: by source colour, then by
//! weight bits. So within a batch a row's value depends only on its colour, not on which node
//! represents it: merging equal rows is exact, and every copy of a group gets the same bits.
//! Against [`Gnn::forward`](crate::Gnn::forward), which sums messages in edge order, and across batches, whose
//! matrix products differ in size, results differ by float rounding only (`tests/compress.rs`
//! checks them to 1e-5).
//!
//! Complexity: O(nodes · features + messages · log(in-degree)) on the host, with one hash
//! map per layer, against O(nodes · hidden²) per layer for the products it saves.

use crate::features::{DeviceEdges, FeatureSet, GraphBatch};
use burn::prelude::*;
use fuselage_cost::FxHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The rows one layer computes, in host memory.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LayerRows {
    /// Rows this layer outputs (distinct colours at its depth).
    pub rows: usize,
    /// For each row, the previous depth's row of its representative (the root term).
    pub own: Vec<i64>,
    /// Message sources: previous-depth rows.
    pub src: Vec<i64>,
    /// Message targets: this layer's rows, in non-decreasing order.
    pub dst: Vec<i64>,
    /// Message weights, aligned with `src`; `None` when the batch had none.
    pub weights: Option<Vec<f32>>,
}

/// A [`GraphBatch`] with its repeated rows merged, for a network of a given depth. Build one
/// with [`CompressedBatch::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedBatch {
    /// The layout of `features`.
    pub set: FeatureSet,
    /// Distinct feature rows, row-major `[rows, set.dim()]`.
    pub features: Vec<f32>,
    /// What each layer computes.
    pub layers: Vec<LayerRows>,
    /// For each node of the batch, its row after the last layer.
    pub last_row: Vec<i64>,
    /// The group of each node.
    pub graph_of: Vec<i64>,
    /// Number of groups.
    pub graphs: usize,
}

impl CompressedBatch {
    /// Refines the colours of `batch` for `layers` rounds (see the module docs).
    pub fn new(batch: &GraphBatch, layers: usize) -> Self {
        let n = batch.nodes();
        let dim = batch.set.dim();
        // Incoming messages of each node, as a compressed row table (a counting sort by dst,
        // stable, so each node's messages keep batch order until sorted by key).
        let mut start = vec![0usize; n + 1];
        for &d in &batch.dst {
            start[d as usize + 1] += 1;
        }
        for v in 0..n {
            start[v + 1] += start[v];
        }
        let mut incoming = vec![0usize; batch.dst.len()];
        let mut next = start.clone();
        for (m, &d) in batch.dst.iter().enumerate() {
            incoming[next[d as usize]] = m;
            next[d as usize] += 1;
        }
        let weight_bits = |m: usize| {
            batch
                .weights
                .as_ref()
                .map_or(1.0f32.to_bits(), |w| w[m].to_bits())
        };

        // Depth 0: equal feature rows.
        let bits: Vec<u32> = batch.features.iter().map(|x| x.to_bits()).collect();
        let mut colour = vec![0u32; n];
        let mut features = Vec::new();
        {
            let mut seen: FxMap<&[u32], u32> = FxMap::default();
            seen.reserve(n);
            for (v, c) in colour.iter_mut().enumerate() {
                let row = &bits[v * dim..(v + 1) * dim];
                let fresh = seen.len() as u32;
                *c = *seen.entry(row).or_insert_with(|| {
                    features.extend_from_slice(&batch.features[v * dim..][..dim]);
                    fresh
                });
            }
        }

        let mut out_layers = Vec::with_capacity(layers);
        let mut key: Vec<u64> = Vec::with_capacity(n + batch.dst.len());
        let mut key_start = vec![0usize; n + 1];
        for _ in 0..layers {
            // Each node's key: its colour, then (source colour, weight bits) sorted.
            key.clear();
            for v in 0..n {
                key.push(u64::from(colour[v]));
                let from = key.len();
                key.extend(incoming[start[v]..start[v + 1]].iter().map(|&m| {
                    (u64::from(colour[batch.src[m] as usize]) << 32) | u64::from(weight_bits(m))
                }));
                key[from..].sort_unstable();
                key_start[v + 1] = key.len();
            }
            let mut layer = LayerRows {
                weights: batch.weights.as_ref().map(|_| Vec::new()),
                ..LayerRows::default()
            };
            let mut seen: FxMap<&[u64], u32> = FxMap::default();
            seen.reserve(n);
            let mut next_colour = vec![0u32; n];
            for (v, c) in next_colour.iter_mut().enumerate() {
                let k = &key[key_start[v]..key_start[v + 1]];
                let fresh = layer.rows as u32;
                *c = *seen.entry(k).or_insert_with(|| {
                    layer.own.push(k[0] as i64);
                    for &msg in &k[1..] {
                        layer.src.push((msg >> 32) as i64);
                        layer.dst.push(i64::from(fresh));
                        if let Some(w) = layer.weights.as_mut() {
                            w.push(f32::from_bits(msg as u32));
                        }
                    }
                    layer.rows += 1;
                    fresh
                });
            }
            colour = next_colour;
            out_layers.push(layer);
        }
        CompressedBatch {
            set: batch.set,
            features,
            layers: out_layers,
            last_row: colour.into_iter().map(i64::from).collect(),
            graph_of: batch.graph_of.clone(),
            graphs: batch.graphs,
        }
    }

    /// Distinct feature rows.
    pub fn input_rows(&self) -> usize {
        self.features.len() / self.set.dim()
    }

    /// Moves the batch to `device`, each layer cut into blocks of at most [`BLOCK_ROWS`]
    /// rows.
    pub fn to_device(&self, device: &Device) -> CompressedDevice {
        let ints =
            |v: &[i64]| Tensor::<1, Int>::from_data(TensorData::new(v.to_vec(), [v.len()]), device);
        let layers = self
            .layers
            .iter()
            .map(|l| {
                let mut blocks = Vec::with_capacity(l.rows.div_ceil(BLOCK_ROWS));
                let mut m = 0;
                for first in (0..l.rows).step_by(BLOCK_ROWS) {
                    let end = (first + BLOCK_ROWS).min(l.rows);
                    // Messages are sorted by target row, so a block's are one range.
                    let from = m;
                    while m < l.dst.len() && (l.dst[m] as usize) < end {
                        m += 1;
                    }
                    let local: Vec<i64> = l.dst[from..m].iter().map(|d| d - first as i64).collect();
                    blocks.push(DeviceBlock {
                        own: ints(&l.own[first..end]),
                        edges: (m > from).then(|| DeviceEdges {
                            src: ints(&l.src[from..m]),
                            dst: ints(&local),
                            weights: l.weights.as_ref().map(|w| {
                                Tensor::<2>::from_data(
                                    TensorData::new(w[from..m].to_vec(), [m - from, 1]),
                                    device,
                                )
                            }),
                        }),
                    });
                }
                blocks
            })
            .collect();
        let readout = (0..self.last_row.len())
            .step_by(BLOCK_ROWS)
            .map(|first| {
                let end = (first + BLOCK_ROWS).min(self.last_row.len());
                (
                    ints(&self.last_row[first..end]),
                    ints(&self.graph_of[first..end]),
                )
            })
            .collect();
        CompressedDevice {
            x: Tensor::<2>::from_data(
                TensorData::new(self.features.clone(), [self.input_rows(), self.set.dim()]),
                device,
            ),
            layers,
            readout,
            graphs: self.graphs,
        }
    }
}

/// The most rows one block of a layer computes.
///
/// burn's CPU backend allocates every op's output afresh. A `[256, 128]` f32 tensor is 128 KiB,
/// under glibc's threshold for `mmap`, so its pages are reused instead of faulted in anew, and
/// it stays in a core's L2 cache. The blocks of a layer are independent and run in parallel.
pub const BLOCK_ROWS: usize = 256;

/// Rows `own` of the previous depth and the messages into them: one block of one layer.
#[derive(Clone, Debug)]
pub struct DeviceBlock {
    /// [`LayerRows::own`] of the block's rows.
    pub own: Tensor<1, Int>,
    /// The messages into the block, targets counted from its first row; `None` when none.
    pub edges: Option<DeviceEdges>,
}

/// A [`CompressedBatch`] on a device.
#[derive(Clone, Debug)]
pub struct CompressedDevice {
    /// Distinct feature rows, `[rows, features]`.
    pub x: Tensor<2>,
    /// Each layer's blocks, in row order.
    pub layers: Vec<Vec<DeviceBlock>>,
    /// The nodes in blocks of [`BLOCK_ROWS`]: each node's last row, and its group.
    pub readout: Vec<(Tensor<1, Int>, Tensor<1, Int>)>,
    /// Number of groups.
    pub graphs: usize,
}
