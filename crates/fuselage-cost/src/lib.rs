//! # fuselage-cost
//!
//! Fusion-group cost models: given a group of a [`Graph`](fuselage_ir::Graph), how much
//! on-chip buffer it needs (`F_β`) and how much DRAM traffic it causes (`F_D`).
//!
//! - [`CostModel`]: the trait; [`GroupCost`] what it returns (small, `Copy`), [`TensorCost`] the
//!   optional per-tensor breakdown. [`CostConfig`] holds β (buffer bytes) and b (element bytes).
//! - [`Lbdf`]: line-buffer depth-first, the reference model (weights resident, row bands).
//! - [`Brr`]: row-tiled buffer-requirement reduction after Optimus (tiles, weights resident or
//!   streamed).
//! - [`Tiled`]: the loop-nest generalisation of LBDF (slices of heads, weights and keys
//!   streamed in blocks, fused MLPs and attention), choosing each group's [`Schedule`].
//! - [`WholeTensor`]: the trivial model, every tensor held whole (an upper bound on LBDF).
//! - [`CostKind`]: the built-in models by name (`lbdf`, `brr`, `tiled`), typed.
//! - [`Cached`]: a thread-safe memoising decorator that is itself a `CostModel`.
//! - [`BufferSimulator`]: executes the LBDF schedule row by row, checking the analytic model
//!   (peak ≤ `F_β`, DRAM = `F_D`).
//! - [`evaluate_plan`], [`PlanReport`], [`layer_by_layer`], [`unfusable_nodes`]: whole plans.
//! - [`PlanFile`]: plans as JSON.
//! - [`Accelerator`]: a hardware description (TOML, presets); [`GroupMetrics`] and
//!   [`PlanMetrics`], MACs, on-chip traffic, latency and energy on it; [`Objective`], what a
//!   search minimises (DRAM, latency, energy, EDP).
//!
//! ## Row windows
//!
//! Output row `r` of a node reads rows `[α·r − p, α·r − p + k − 1]` of an input port (clipped):
//! Conv, MaxPool and AveragePool with the dilated kernel height, the stride and the top pad;
//! pointwise ops (activations, same-height Add/Sub/Mul/Div, BatchNormalization, Concat not on
//! H) with `k = α = 1`, `p = 0`; Pad with its top pad. A port is read **whole** when it
//! broadcasts (`H_in = 1 < H_out`), for GlobalAveragePool/GlobalMaxPool, ReduceMean, Gemm,
//! MatMul, Flatten, Reshape, Transpose, Softmax, Resize, Concat on H, and for any other op
//! whose output height differs from its input's.
//!
//! ## Performance
//!
//! Costing a group builds a flat view of it (members, tensors, ports) in a thread-local
//! scratch and makes one backward pass (LBDF) or `O(log H)` passes (BRR): no allocation once
//! the scratch has grown. Breakdowns allocate names and are for reports only.
//!
//! See `docs/cost-models.md` for the models, a worked example and the simulator comparison.
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod brr;
mod buffer;
mod cached;
mod config;
mod error;
mod family;
mod hardware;
mod kind;
mod lbdf;
mod model;
mod plan;
mod planfile;
mod sim;
mod tiled;
mod tiles;
mod view;
mod whole;

pub use brr::Brr;
pub use buffer::OnChipBuffer;
pub use cached::{CacheStats, Cached, FxHasher};
pub use config::CostConfig;
pub use error::{CostError, PlanProblem, Result};
pub use family::{CostFamily, FnFamily};
pub use hardware::{
    Accelerator, Activity, GroupMetrics, Objective, PlanMetrics, UnitEnergy, parse_size,
};
pub use kind::CostKind;
pub use lbdf::Lbdf;
pub use model::{
    CostModel, GroupCost, OnChipBytes, Residency, Schedule, TensorCost, TensorKind, Tiling,
};
pub use plan::{PlanReport, evaluate_plan, layer_by_layer, unfusable_nodes};
pub use planfile::{GroupEntry, PlanDiff, PlanFile};
pub use sim::{BufferSimulator, Simulation};
pub use tiled::{EXACT_OPERANDS, MAX_WEIGHT_TILES, Tiled, TiledSimulator};
pub use tiles::TileFloor;
pub use whole::WholeTensor;
