//! The one error type of `fuselage-cost`, and [`PlanProblem`], what it says of a group that
//! does not fit (a plan report lists them too).

use crate::buffer::OnChipBuffer;
use fuselage_ir::IrError;
use serde::{Deserialize, Serialize};
use std::fmt;
use thiserror::Error;

/// Everything that can go wrong while configuring a cost model, costing a group or a plan, or
/// reading a plan file. Each variant names what is wrong: the group (by its index in the plan),
/// its nodes (by ONNX name) and the numbers involved.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CostError {
    /// A buffer of 0 bytes: no group can be valid under it.
    #[error("the on-chip buffer must hold at least one byte (β = 0 given)")]
    ZeroBuffer,
    /// An element size of 0 bytes.
    #[error("the element size must be at least one byte (b = 0 given)")]
    ZeroElementBytes,
    /// A buffer larger than any accelerator's (over 1 TiB).
    #[error("the on-chip buffer must be at most 1 TiB (β = {0} bytes given)")]
    BufferTooLarge(u64),
    /// An element size larger than any ONNX type's (over 16 bytes).
    #[error("the element size must be 1 to 16 bytes (b = {0} given)")]
    ElementBytesTooLarge(u64),
    /// A node name that is not in the graph.
    #[error("unknown node `{node}` in group {group} of the plan for `{model}`{}", fuselage_ir::closest_hint(.closest))]
    UnknownNode {
        /// The name.
        node: String,
        /// The index of the plan group that names it.
        group: usize,
        /// The graph the plan was read against.
        model: String,
        /// Up to three of the graph's names closest to it.
        closest: Vec<String>,
    },
    /// A node listed twice in one group of a plan file.
    #[error("node `{node}` is listed twice in group {group} of the plan")]
    RepeatedNode {
        /// The name.
        node: String,
        /// The index of the plan group.
        group: usize,
    },
    /// A node set sized for another graph.
    #[error("the group is sized for a graph of {found} nodes, but `{model}` has {expected}")]
    GroupSize {
        /// The graph.
        model: String,
        /// The graph's node count.
        expected: usize,
        /// The set's capacity.
        found: usize,
    },
    /// A [`Cached`](crate::Cached) model used with a second graph.
    #[error(
        "this cache holds groups of `{expected}` ({expected_len} nodes); it was asked about a different graph, `{found}` ({found_len} nodes)"
    )]
    GraphMismatch {
        /// The graph the cache was first used with.
        expected: String,
        /// Its node count.
        expected_len: usize,
        /// The graph of this call.
        found: String,
        /// Its node count.
        found_len: usize,
    },
    /// A group of a plan that does not fit the buffer (and is not an unfusable singleton).
    #[error("{0}")]
    InvalidGroup(Box<PlanProblem>),
    /// A recorded `tiled` schedule the group cannot run.
    #[error("the schedule does not apply: {message}")]
    Schedule {
        /// Why.
        message: String,
    },
    /// A plan file's recorded schedule of a group needs more buffer than β.
    #[error(
        "group {group} (`{node}`): its recorded schedule ({tiles} tiles of {rows} rows, {slices} slices) needs {need} bytes, not under β = {beta}"
    )]
    ScheduleOverflow {
        /// The group's index in the plan.
        group: usize,
        /// Its first node.
        node: String,
        /// The schedule's tiles.
        tiles: u64,
        /// Its rows a tile.
        rows: u64,
        /// Its slices.
        slices: u64,
        /// What it needs.
        need: u64,
        /// The buffer.
        beta: u64,
    },
    /// A plan file names a cost model this crate does not know, or settings that disagree
    /// with the model it is used with.
    #[error("plan file mismatch: {0}")]
    PlanFile(String),
    /// The graph IR rejected a group or a plan (empty, disconnected, overlapping, uncovered,
    /// cyclic): the IR's message names the groups and nodes.
    #[error(transparent)]
    Ir(#[from] IrError),
    /// An accelerator description with a bad or missing field: `origin` is the file (or
    /// preset), `line` the 1-based line of the field (0 when the text has none).
    #[error("{origin}:{line}: {field}: {message}")]
    Hardware {
        /// The file or preset the description came from.
        origin: String,
        /// The line of the offending field.
        line: usize,
        /// The field, as a dotted TOML path (`dram.bandwidth_gb_per_s`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// An accelerator file that cannot be read.
    #[error("cannot read the accelerator file {path}: {message}")]
    HardwareIo {
        /// The path.
        path: String,
        /// The operating system's reason.
        message: String,
    },
    /// `--hw` named neither a preset nor a file.
    #[error("`{given}` is neither a hardware preset ({}) nor an accelerator file", .presets.join(", "))]
    UnknownHardware {
        /// What was given.
        given: String,
        /// The presets.
        presets: Vec<String>,
    },
    /// JSON that does not describe a plan file.
    #[error("invalid plan JSON: {0}")]
    Json(String),
}

/// `Result` with [`CostError`].
pub type Result<T, E = CostError> = std::result::Result<T, E>;

/// A group of a plan that does not fit the buffer and is not an unfusable singleton.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanProblem {
    /// Index of the group in the plan.
    pub group: usize,
    /// Its nodes, by ONNX name.
    pub nodes: Vec<String>,
    /// Its `F_β`.
    pub buffer_bytes: u64,
    /// The activations' part of it.
    pub activation_buffer_bytes: u64,
    /// The buffer β (both together when they are split).
    pub limit: u64,
    /// The buffer, unified or split.
    pub buffer: OnChipBuffer,
}

impl fmt::Display for PlanProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.buffer {
            OnChipBuffer::Unified { .. } => write!(
                f,
                "group {} needs {} bytes of buffer, not under the {}-byte buffer",
                self.group, self.buffer_bytes, self.limit,
            )?,
            OnChipBuffer::Split {
                weight_bytes,
                activation_bytes,
            } => write!(
                f,
                "group {} needs {} weight bytes and {} activation bytes, not under the \
                 {weight_bytes}-byte weight and {activation_bytes}-byte activation buffers",
                self.group,
                self.buffer_bytes
                    .saturating_sub(self.activation_buffer_bytes),
                self.activation_buffer_bytes,
            )?,
        }
        write!(f, ": {}", self.nodes.join(", "))
    }
}
