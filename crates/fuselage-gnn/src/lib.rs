//! # fuselage-gnn
//!
//! A graph neural network that predicts whether a fusion group fits the on-chip buffer, after
//! the validity classifier of Mills et al. ("Applying Graph Explanation to Operator Fusion"),
//! on [burn](https://burn.dev) 0.22.
//!
//! - [`features`]: node features (op one-hot, shapes, weights, kernel, stride, β) and batches
//!   of groups as one disjoint graph ([`GroupGraph`], [`GraphBatch`]).
//! - [`model`]: the network ([`Gnn`]: four GraphConv layers of 128, sum readout, binary head)
//!   and the [`ValidityModel`] trait, implemented by [`GnnClassifier`] and by the exact cost
//!   models ([`ExactValidity`]).
//! - [`compress`]: inference that computes each distinct row of a batch once, by colour
//!   refinement ([`CompressedBatch`], [`Gnn::forward_compressed`]); what [`GnnClassifier`]
//!   runs.
//! - [`grad`]: the gradient of the logits with respect to the message weights in closed
//!   form ([`Gnn::trace`], [`Trace`]), what GNNExplainer descends without burn's autodiff tape;
//!   [`Gnn::fixed`] computes once what a batch's many weightings share.
//! - [`explainable`]: the [`ExplainableModel`] trait, what the learned explainers of
//!   `fuselage-explain` read from a classifier beyond its probabilities (masked logits, their
//!   gradient with respect to the message weights, node embeddings), implemented by
//!   [`GnnClassifier`].
//! - [`dataset`]: groups from random search on nine zoo networks, labelled by LBDF and BRR at
//!   five β ([`generate_dataset`]), as JSON lines.
//! - [`train`](mod@train): the training loop, metrics, learning curves ([`train()`],
//!   [`Confusion`]).
//! - [`checkpoint`]: one generic checkpoint, burnpack weights and JSON metadata
//!   ([`Checkpoint`]), the classifier's on top of it, and the LBDF and BRR classifiers
//!   compiled into the crate ([`shipped`]).
//!
//! ## Backends
//!
//! burn 0.22 picks the backend from the [`Device`] at run time. The crate
//! features choose which are compiled: `flex` (default, burn's pure-Rust CPU backend),
//! `ndarray` (the deprecated CPU backend), `wgpu` (GPU). [`default_device`] returns the first
//! compiled of flex, ndarray, wgpu, unless `FUSELAGE_GNN_BACKEND` names one.
//!
//! ```
//! use fuselage_gnn::{CostConfig, CostKind, classify};
//! use fuselage_ir::NodeSet;
//! let g = fuselage_zoo::build("resnet18")?;
//! let first_three = NodeSet::from_ids(g.len(), g.node_ids().take(3));
//! let beta = CostConfig::kib(256)?;
//! let p = classify(&g, &[first_three, NodeSet::full(g.len())], &beta, CostKind::Lbdf)?;
//! assert!(p[0] < 0.5 && p[1] > 0.5);
//! # Ok::<(), fuselage_gnn::GnnError>(())
//! ```
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod checkpoint;
pub mod compress;
pub mod dataset;
mod error;
pub mod explainable;
pub mod features;
pub mod grad;
pub mod model;
pub mod train;

pub use checkpoint::{
    Checkpoint, CheckpointMeta, PROBE_BETA, classifier_from_bytes, load_checkpoint, probe,
    probe_groups, save_checkpoint, shipped, shipped_from, shipped_meta, shipped_stem,
    weights_to_bytes,
};
pub use compress::CompressedBatch;
pub use dataset::{
    BETAS_KIB, Dataset, DatasetConfig, EncodedDataset, FAMILIES, GroupRecord, HELD_OUT_NETWORKS,
    KEPT_OUT, MAX_BETA_KIB, MODERN_NETWORKS, PAPER_NETWORKS, Sample, family_networks,
    generate_dataset,
};
pub use error::{GnnError, Result};
pub use explainable::{ExplainableModel, WeightGradients};
pub use features::{BROAD_EXTRA, FEATURE_DIM, FeatureSet, GraphBatch, GroupGraph};
/// The built-in cost models, which label the data set (defined in `fuselage-cost`).
pub use fuselage_cost::{CostConfig, CostKind};
pub use grad::{Fixed, Trace};
pub use model::{
    ExactValidity, Gnn, GnnClassifier, GnnConfig, GraphConv, MAX_HIDDEN, MAX_LAYERS, ValidityModel,
};
#[cfg(feature = "plot")]
pub use train::plot_curve;
pub use train::{
    Confusion, EpochStats, MAX_EPOCHS, Split, TrainConfig, TrainReport, curve_csv, evaluate,
    split_samples, train, train_encoded,
};

use burn::tensor::Device;
use fuselage_ir::{Graph, NodeSet};

/// The names [`device_named`] knows, in the order [`default_device`] tries them.
pub const BACKENDS: [&str; 3] = ["flex", "ndarray", "wgpu"];

/// The device of backend `name` (`flex`, `ndarray`, `wgpu`), if that backend was compiled in.
pub fn device_named(name: &str) -> Option<Device> {
    match name {
        #[cfg(feature = "flex")]
        "flex" => Some(Device::flex()),
        #[cfg(feature = "ndarray")]
        #[allow(deprecated)]
        "ndarray" => Some(Device::ndarray()),
        #[cfg(feature = "wgpu")]
        "wgpu" => Some(Device::wgpu(Default::default())),
        _ => None,
    }
}

/// The device of `FUSELAGE_GNN_BACKEND` if it names a compiled backend, else the first compiled
/// of [`BACKENDS`].
///
/// # Panics
/// If the crate was built with no backend feature.
#[allow(
    clippy::expect_used,
    reason = "a build configuration error: `flex` is a default feature"
)]
pub fn default_device() -> Device {
    std::env::var("FUSELAGE_GNN_BACKEND")
        .ok()
        .and_then(|n| device_named(&n))
        .or_else(|| BACKENDS.iter().find_map(|n| device_named(n)))
        .expect("fuselage-gnn needs one of the features flex, ndarray or wgpu")
}

/// The probability that each of `groups` is invalid at `config` under cost model `kind`, by
/// the shipped classifier on the [`default_device`] (which reads the config's β).
///
/// # Errors
/// [`GnnError::BadGroup`] for a set that is not a group of `g`; [`GnnError::Checkpoint`] if no
/// checkpoint was shipped.
pub fn classify(
    g: &Graph,
    groups: &[NodeSet],
    config: &CostConfig,
    kind: CostKind,
) -> Result<Vec<f32>> {
    shipped(kind, &default_device())?.invalid_probabilities(g, groups, config)
}
