//! The [`CostModel`] trait and what it returns.
//!
//! A cost model answers two questions about a fusion group: how much on-chip buffer it needs
//! (`F_β`) and how much DRAM traffic it causes (`F_D`). The answer is a small `Copy` value,
//! [`GroupCost`], so that searches can cost millions of groups without allocating; the
//! per-tensor explanation ([`TensorCost`]) is a separate, optional call
//! ([`CostModel::breakdown`]) that only reports and command-line tools make.

use crate::config::CostConfig;
use crate::error::Result;
use crate::tiles::TileFloor;
use fuselage_ir::{Graph, NodeSet};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The cost of one fusion group under one cost model.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupCost {
    /// `F_β`: the on-chip buffer the group needs, in bytes (weights included where the model
    /// keeps them on chip).
    pub buffer_bytes: u64,
    /// The activations' part of `F_β` (the rest is the weights kept on chip), in bytes: what a
    /// split activation buffer must hold. Absent from files written before split buffers
    /// (read as 0).
    #[serde(default)]
    pub activation_buffer_bytes: u64,
    /// `F_D`: the DRAM traffic of the group, in bytes. Never below `I + O + W`
    /// (`input_bytes + output_bytes + weight_bytes`): every model reads its inputs, writes
    /// its outputs and loads its weights at least once (LBDF exactly that, BRR streaming
    /// weights `T` times). The exact optimiser relies on it.
    pub dram_bytes: u64,
    /// `W(φ)`: the bytes of the group's weights and biases.
    pub weight_bytes: u64,
    /// `I`: the bytes of `In(φ)`, the tensors read from outside the group.
    pub input_bytes: u64,
    /// `O`: the bytes of `Out(φ)`, the tensors written for outside readers and graph outputs.
    pub output_bytes: u64,
    /// Whether the group fits the buffer: `buffer_bytes < β` (strict).
    pub valid: bool,
    /// Whether the group is a single node that does not fit on its own (`F_β({v}) ≥ β`): an
    /// unfusable node, whose singleton a plan may keep although it is invalid.
    pub unfusable: bool,
    /// The row tiling, for models that tile (BRR); `None` for LBDF.
    pub tiling: Option<Tiling>,
    /// The loop nest, for [`Tiled`](crate::Tiled) on a group that fits; `None` otherwise
    /// (and absent from the JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
}

impl GroupCost {
    /// A group's cost from the terms a model computed, deriving what follows from them:
    /// `F_β` is the on-chip weights plus the activations, `valid` is
    /// [`CostConfig::fits`] of the two, and `unfusable` is an invalid group of one node.
    /// Every model here builds its answer this way (BRR reports `F(1)` as the buffer of an
    /// invalid group, so the rule holds for it too).
    ///
    /// # Example
    /// ```
    /// use fuselage_cost::{CostConfig, GroupCost, OnChipBytes};
    /// let config = CostConfig::new(100)?;
    /// let need = |weights, activations| OnChipBytes { weights, activations };
    /// let c = GroupCost::new(&config, 1, need(10, 90), 50, 10, (20, 20), None);
    /// assert!(!c.valid && c.unfusable);
    /// let c = GroupCost::new(&config, 2, need(10, 89), 50, 10, (20, 20), None);
    /// assert!(c.valid && !c.unfusable);
    /// assert_eq!((c.buffer_bytes, c.activation_buffer_bytes), (99, 89));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(
        config: &CostConfig,
        members: usize,
        on_chip: OnChipBytes,
        dram_bytes: u64,
        weight_bytes: u64,
        (input_bytes, output_bytes): (u64, u64),
        tiling: Option<Tiling>,
    ) -> Self {
        let valid = config.fits(on_chip.weights, on_chip.activations);
        GroupCost {
            buffer_bytes: on_chip.total(),
            activation_buffer_bytes: on_chip.activations,
            dram_bytes,
            weight_bytes,
            input_bytes,
            output_bytes,
            valid,
            unfusable: !valid && members == 1,
            tiling,
            schedule: None,
        }
    }

    /// This cost with `schedule` recorded.
    pub fn with_schedule(mut self, schedule: Option<Schedule>) -> Self {
        self.schedule = schedule;
        self
    }
}

/// Bytes a group keeps on chip, weights and activations apart: what
/// [`CostConfig::fits`] checks, and what [`CostModel::buffer_floor`] bounds.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OnChipBytes {
    /// Weights held on chip (`W`, or 0 where a model streams them).
    pub weights: u64,
    /// Activation bands and tiles.
    pub activations: u64,
}

impl OnChipBytes {
    /// Weights and activations together, `F_β`.
    pub fn total(&self) -> u64 {
        self.weights.saturating_add(self.activations)
    }
}

/// How a row-tiled model (BRR) runs a group.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Tiling {
    /// `F(1)`: the activation footprint of a one-row tile, the least the group can run in.
    pub min_footprint_bytes: u64,
    /// `h`: rows of the group's tallest output per tile.
    pub tile_rows: u64,
    /// `T = ⌈H_max / h⌉`: the number of tiles.
    pub tiles: u64,
    /// Whether the weights stay on chip (`W + F(1) < β`); otherwise they are streamed once per
    /// tile, `T·W` bytes.
    pub weights_resident: bool,
}

/// How [`Tiled`](crate::Tiled) runs a group: the tile sizes a compiler would emit, recorded
/// in plan files.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Schedule {
    /// Slices of the independent axis run one at a time (1: the group is not sliced).
    pub slices: u64,
    /// `T`, row tiles (1 for the line buffer and for a group whose rows all fit).
    pub tiles: u64,
    /// `h`, rows of the tallest output per tile (all of them for the line buffer).
    pub tile_rows: u64,
    /// Members whose weights stream in blocks.
    pub streamed_weights: u32,
    /// Activation operands (keys, values) streamed in blocks.
    pub streamed_operands: u32,
    /// Elements per block along a streamed or blocked axis (0 when nothing streams): the
    /// largest power of two that fits.
    pub block: u64,
    /// Whether the group runs LBDF's line buffer (nothing streams).
    pub line_buffer: bool,
    /// Which of the group's streamable operands stream, one bit each in member order (a
    /// member's weights, then its right-hand operand): what [`Tiled::check`](crate::Tiled::check)
    /// replays.
    #[serde(default)]
    pub streamed: u64,
    /// Bytes read again beyond `I + O + W`: weights and operands streamed once per tile.
    pub reread_bytes: u64,
}

/// Where a tensor stands with respect to a group.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TensorKind {
    /// In `In(φ)`: read from DRAM (a graph input, or produced by another group).
    In,
    /// Produced and consumed inside the group only.
    Internal,
    /// In `Out(φ)`: produced by the group and written to DRAM.
    Out,
}

/// Why a tensor keeps the rows it keeps in a group's buffer: what a person changes to shrink
/// it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Residency {
    /// The rows of one window of its widest reader (a `k`-row kernel needs `k` rows).
    #[default]
    Window,
    /// One staging row: the group writes it and no member reads it.
    Staging,
    /// More rows than any one window: held while a longer branch catches up (a skip
    /// connection).
    Skip,
    /// Whole: a member reads it whole (a global pool, a matrix product, a reshape).
    WholeRead,
    /// Whole: read at two rates, or across a barrier (a skip around a whole read).
    Barrier,
    /// The rows one tile asks of it (BRR: the receptive field of the tile).
    Tile,
    /// Whole, because the model holds every tensor whole.
    Model,
}

impl Residency {
    /// A short phrase for reports.
    pub fn describe(self) -> &'static str {
        match self {
            Residency::Window => "the window of its widest reader",
            Residency::Staging => "one staging row of a group output",
            Residency::Skip => "held while a longer branch catches up (a skip)",
            Residency::WholeRead => "read whole by a member",
            Residency::Barrier => "read at two rates or across a barrier, so held whole",
            Residency::Tile => "the rows one tile asks of it",
            Residency::Model => "the model holds every tensor whole",
        }
    }
}

/// One tensor's share of a group's buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorCost {
    /// The tensor's name: its producing node's ONNX name, or the graph input's.
    pub tensor: String,
    /// In, internal or out.
    pub kind: TensorKind,
    /// Rows held on chip (LBDF: the resident band; BRR: the rows of the chosen tile).
    pub resident_rows: u64,
    /// `H_t`, the tensor's rows.
    pub rows: u64,
    /// `row(t) = b·C·W`, bytes of one row.
    pub row_bytes: u64,
    /// `resident_rows · row_bytes`.
    pub bytes: u64,
    /// Whether the whole tensor is held (a whole port, mixed rates or phases).
    pub whole: bool,
    /// Why it keeps these rows.
    #[serde(default)]
    pub reason: Residency,
}

/// A model of what a fusion group costs.
///
/// Required: [`name`](CostModel::name), [`config`](CostModel::config) and
/// [`evaluate`](CostModel::evaluate). [`breakdown`](CostModel::breakdown) declines by default;
/// [`is_valid`](CostModel::is_valid) and [`dram`](CostModel::dram) are shorthands.
///
/// Models are `Send + Sync` so that searches can share one across threads.
/// References, boxes and `Arc`s of models are models too, and [`Cached`](crate::Cached) wraps
/// any model in a memo.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostModel, Lbdf};
/// use fuselage_ir::{ConvAttrs, GraphBuilder, NodeSet, Op, TensorShape};
/// let mut b = GraphBuilder::new("tiny");
/// let x = b.input("input", TensorShape::nchw(3, 32, 32))?;
/// let c = b.node("/conv/Conv", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[x])?;
/// b.node("/relu/Relu", Op::Relu, &[c])?;
/// let g = b.finish()?;
/// let lbdf = Lbdf::new(CostConfig::kib(128)?);
/// let cost = lbdf.evaluate(&g, &NodeSet::full(g.len()))?;
/// // W = 8·3·9 + 8; 3 input rows of 3·32; 1 conv row and 1 staging row of 8·32.
/// assert_eq!(cost.buffer_bytes, 224 + 3 * 96 + 2 * 256);
/// assert_eq!(cost.dram_bytes, 3 * 32 * 32 + 8 * 32 * 32 + 224);
/// assert!(cost.valid);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait CostModel: Send + Sync {
    /// The model's name as plan files record it (`lbdf`, `brr`, ...).
    fn name(&self) -> &str;

    /// β and b.
    fn config(&self) -> &CostConfig;

    /// The cost of `group`, a non-empty weakly connected set of `g`'s nodes.
    ///
    /// # Errors
    /// [`CostError::GroupSize`](crate::CostError::GroupSize) for a set of another graph;
    /// [`CostError::Ir`](crate::CostError::Ir) for an empty or disconnected group.
    fn evaluate(&self, g: &Graph, group: &NodeSet) -> Result<GroupCost>;

    /// The per-tensor explanation of `group`'s buffer, if the model has one (default: `None`).
    ///
    /// # Errors
    /// As [`evaluate`](CostModel::evaluate).
    fn breakdown(&self, g: &Graph, group: &NodeSet) -> Result<Option<Vec<TensorCost>>> {
        let _ = (g, group);
        Ok(None)
    }

    /// Whether `group` fits the buffer.
    ///
    /// # Errors
    /// As [`evaluate`](CostModel::evaluate).
    fn is_valid(&self, g: &Graph, group: &NodeSet) -> Result<bool> {
        Ok(self.evaluate(g, group)?.valid)
    }

    /// `F_D` of `group`.
    ///
    /// # Errors
    /// As [`evaluate`](CostModel::evaluate).
    fn dram(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
        Ok(self.evaluate(g, group)?.dram_bytes)
    }

    /// A floor under the on-chip need, weights and activations apart: no greater than the
    /// need of `group` *or of any connected group that contains it*. When the floor does not
    /// fit ([`CostConfig::fits`]), no group grown from `group` is valid, and a search that
    /// grows groups (the exact optimiser) stops there.
    ///
    /// The default, nothing, is always correct. LBDF's floor is `W` and one window of every
    /// tensor the group touches (the whole tensor where a member reads it whole); BRR's is
    /// the same activations without `W`, which BRR may stream. Both only grow as members
    /// are added.
    ///
    /// # Errors
    /// As [`evaluate`](CostModel::evaluate).
    fn buffer_floor(&self, g: &Graph, group: &NodeSet) -> Result<OnChipBytes> {
        let _ = (g, group);
        Ok(OnChipBytes::default())
    }

    /// Floors on the tiles of groups that stream their weights, known before they are
    /// costed ([`TileFloor`]), or `None` for a model that keeps weights on chip (LBDF, the
    /// whole-tensor model: the default). The exact optimiser prunes with them.
    ///
    /// # Errors
    /// As [`evaluate`](CostModel::evaluate).
    fn tile_floor(&self, g: &Graph) -> Result<Option<TileFloor>> {
        let _ = g;
        Ok(None)
    }

    /// For a group valid at this model's unified buffer β: a size `t < β` such that at every
    /// unified buffer from `t + 1` to β the group is valid with the same `F_D`. The buffer
    /// sweep uses it to find, exactly, where an optimal plan stops being optimal.
    ///
    /// The default, `F_β`, is right for every model whose `F_D` does not depend on β (LBDF,
    /// the whole-tensor model). BRR's `F_D` does, through its tiles: see
    /// [`Brr`](crate::Brr).
    ///
    /// # Errors
    /// As [`evaluate`](CostModel::evaluate).
    fn steady_above(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
        Ok(self.evaluate(g, group)?.buffer_bytes)
    }

    /// The smallest unified buffer β at which `group` is valid (with this model's element
    /// sizes). The default, `F_β + 1`, is right for every model whose `F_β` does not depend
    /// on β (LBDF, the whole-tensor model); BRR's is `F(1) + 1`.
    ///
    /// # Errors
    /// As [`evaluate`](CostModel::evaluate).
    fn smallest_buffer(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
        Ok(self.evaluate(g, group)?.buffer_bytes.saturating_add(1))
    }

    /// Whether a search should keep this model's answers and reuse them for a group's
    /// shifts, a repeated layer further on, rather than ask again (the exact optimiser's memo,
    /// `fuselage_search`'s `optimal/shift.rs`): worth it where costing a group takes far
    /// longer than looking it up. [`Tiled`](crate::Tiled) searches a space of schedules, tens
    /// of microseconds a group, and says yes; LBDF and BRR are a few passes over the group,
    /// no dearer than the lookup. The default declines.
    ///
    /// A model that says yes must give a group and its shift the same answer where they are
    /// alike node for node (ops, shapes, weights, rows and row reads, consumers inside and
    /// outside the group, and the shapes and rows of what it reads from outside), as every
    /// model here does.
    fn costly(&self) -> bool {
        false
    }
}

macro_rules! forward {
    ($($ty:ty),*) => {$(
        impl<C: CostModel + ?Sized> CostModel for $ty {
            fn name(&self) -> &str {
                (**self).name()
            }
            fn config(&self) -> &CostConfig {
                (**self).config()
            }
            fn evaluate(&self, g: &Graph, group: &NodeSet) -> Result<GroupCost> {
                (**self).evaluate(g, group)
            }
            fn breakdown(&self, g: &Graph, group: &NodeSet) -> Result<Option<Vec<TensorCost>>> {
                (**self).breakdown(g, group)
            }
            fn buffer_floor(&self, g: &Graph, group: &NodeSet) -> Result<OnChipBytes> {
                (**self).buffer_floor(g, group)
            }
            fn tile_floor(&self, g: &Graph) -> Result<Option<TileFloor>> {
                (**self).tile_floor(g)
            }
            fn steady_above(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
                (**self).steady_above(g, group)
            }
            fn smallest_buffer(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
                (**self).smallest_buffer(g, group)
            }
            fn costly(&self) -> bool {
                (**self).costly()
            }
        }
    )*};
}

forward!(&C, Box<C>, Arc<C>);
