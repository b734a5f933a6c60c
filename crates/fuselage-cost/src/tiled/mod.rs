//! `tiled`: the loop-nest generalisation of LBDF (`../shared/design/tiled-fusion.md`).
//!
//! LBDF streams one row axis and holds everything else whole. That serves CNNs; it does not
//! serve transformers, where what LBDF holds whole (all heads of K and V, an `L×L` mask,
//! weights larger than the buffer) is exactly what a hand-written kernel tiles. `tiled` runs a
//! group as a loop nest and picks, for each group, the schedule of least DRAM traffic whose
//! peak buffer fits β. A schedule is a point of a small, explicit space:
//!
//! - **Slices of an independent axis** (heads, windows): when every member carries the axis
//!   through untouched, the group runs one slice at a time. A tensor that has the axis holds
//!   one slice; one that lacks it (a weight, a mask broadcast over heads) is held once. What
//!   several slices read (a broadcast: a mask `[1, 1, L, L]` added to every head's scores,
//!   GQA's key-value head read by its query heads) is loaded once and held whole while those
//!   slices run: run head by head, every head reads every row of a mask, so streaming it by
//!   rows would read it once per head. Traffic does not change, except that weights streamed
//!   in blocks are streamed once per slice.
//! - **The line buffer** (no operand streamed): LBDF's schedule, row bands with phases, with
//!   two refinements. Constants that follow the row axis (an element-wise constant larger
//!   than one output row, such as a causal mask or a position embedding) stream by rows
//!   beside the rows they meet, and the slices above divide what carries the axis. With no
//!   slices and no such constants this *is* LBDF, so `tiled` is never above LBDF.
//! - **Row tiles with streamed operands.** A set of *streamable operands* is streamed in
//!   blocks instead of being held: the weights of a Gemm, MatMul or Conv, and the right-hand
//!   activation operand of a MatMul (Kᵀ and V of attention). The group then runs in `T` tiles
//!   of `h` rows of its tallest output, as BRR runs, and every streamed operand is read once
//!   per tile (per slice for weights of a sliced group). A group that streams weights runs
//!   at most [`MAX_WEIGHT_TILES`] tiles, so its weights are read at most twice; keys and
//!   values take any number of tiles. A tensor produced by a contraction
//!   over a streamed operand is *blocked* along that operand's free axis when every member
//!   that reads it is pointwise (an activation, an online softmax) or a contraction that
//!   sums over the block (the second Gemm of an MLP, `P·V`): then it never exists whole, and
//!   the contraction that sums it keeps `h` rows of accumulators. This is the fused MLP and,
//!   along the key axis with an online softmax, FlashAttention. A streamed activation operand
//!   is recomputed per tile from what it is made of, through pointwise and layout members
//!   (its *chain*); the chain's inputs from DRAM are read once per tile.
//!
//!
//! **Tiles are skewed.** Tile `t` makes, of each member, its share of the rows, or more where a
//! reader's window over its own share reaches further (a `3×3` convolution needs one row of
//! the next tile of what it reads; a tensor read whole is made in the first tile). So a
//! member may make all its rows in fewer than `T` tiles, and its operands stream once per
//! tile it runs in (`T_m` below, at most `T`). A plain member makes every row its inputs
//! allow, so that what one reader asks early is not held for another.
//!
//! **A block loop runs its members together.** A blocked tensor is never whole, so every
//! member that reads it runs inside the same loop over blocks; where one of them would have
//! to wait for another's finished output (a residual stream read by a convolution and by the
//! `Add` after it), the tensor is not blocked. A contraction that sums blocks holds the rows
//! of its weights that one block needs; a chain streamed beside rows that other members
//! read keeps both.
//!
//! ```text
//! F_D(σ) = I + O + W + Σ_{weights streamed} (T_m·s − 1)·W_m + Σ_{operands streamed} (T_m − 1)·R_c
//!          s: slices (1 unsliced), R_c: the DRAM inputs and row constants of the chain,
//!          T_m: the tiles member m makes rows in
//! F_β(σ) = Σ_t footprint_t(σ) + resident weights + one block of each streamed operand
//! F_D    = min { F_D(σ) : F_β(σ) < β }
//! ```
//!
//! The search is exact over the space: both slicings, every subset of the streamable operands
//! (up to [`EXACT_OPERANDS`]; beyond, the subsets that drop at most one operand from all,
//! all weights and all activation operands), and for each subset the fewest tiles `T` that
//! fit, found by binary search (`F_β` never falls as `h` grows). The line buffer is tried
//! first: when it fits, `F_D = I + O + W`, the least any schedule moves.
//!
//! **A single node is never charged more than LBDF charges it.** A one-node group whose best
//! schedule re-reads anything is reported as LBDF reports a node that does not fit: invalid,
//! unfusable, at `I + O + W`.
//!
//! Block sizes do not change traffic, so validity is decided with one-element blocks, and the
//! schedule takes the largest power-of-two block that still fits, and the buffer it needs.
//!
//! **Checked by running it.** [`TiledSimulator`] runs a schedule as the loop nest above and
//! counts every byte: on 200 random groups of each zoo network, CNNs and transformers, at
//! 256 KiB and 2 MiB, its traffic equals `F_D` and its peak stays within `F_β`
//! (`tests/tiled_sim.rs`).

use crate::config::CostConfig;
use crate::error::Result;
use crate::model::{CostModel, GroupCost, OnChipBytes, Schedule};
use crate::view::{View, with_view};
use fuselage_ir::Graph;

mod prep;
mod roles;
mod rows;
mod search;
mod sim;

pub use prep::{EXACT_OPERANDS, MAX_WEIGHT_TILES};
pub use sim::TiledSimulator;

use prep::Prep;

/// The `tiled` cost model.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostModel, Tiled};
/// use fuselage_ir::{GraphBuilder, NodeSet, Op, TensorShape};
/// // x [1, 64, 32] -> MatMul (32 -> 128) -> Relu -> MatMul (128 -> 32): a small MLP.
/// let mut b = GraphBuilder::new("mlp");
/// let x = b.input("x", TensorShape::new(vec![1, 64, 32]))?;
/// let h = b.node_with("fc1", Op::MatMul, &[x], TensorShape::new(vec![1, 64, 128]), 32 * 128)?;
/// let a = b.node("act", Op::Relu, &[h])?;
/// b.node_with("fc2", Op::MatMul, &[a], TensorShape::new(vec![1, 64, 32]), 128 * 32)?;
/// let g = b.finish()?;
/// let all = NodeSet::full(g.len());
/// // 6 KiB cannot hold both weight matrices (4,096 bytes each): they stream in blocks of
/// // the hidden axis, x and y stay whole, and the hidden tensor never exists whole.
/// let cost = Tiled::new(CostConfig::new(6 * 1024)?).evaluate(&g, &all)?;
/// assert!(cost.valid);
/// assert_eq!(cost.dram_bytes, cost.input_bytes + cost.output_bytes + cost.weight_bytes);
/// let s = cost.schedule.unwrap();
/// assert_eq!((s.tiles, s.streamed_weights), (1, 2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Tiled {
    config: CostConfig,
}

impl Tiled {
    /// `tiled` at `config`.
    pub fn new(config: CostConfig) -> Self {
        Tiled { config }
    }

    /// `group` run as `schedule` says (a schedule a plan file recorded): its cost, `valid`
    /// when that schedule fits β. The traffic is the schedule's, which may exceed the best.
    ///
    /// # Errors
    /// As [`CostModel::evaluate`]; [`CostError::Schedule`](crate::CostError::Schedule) for a
    /// schedule this group cannot run (slices it does not have, operands it does not have,
    /// more tiles than rows).
    pub fn check(
        &self,
        g: &Graph,
        group: &fuselage_ir::NodeSet,
        schedule: &Schedule,
    ) -> Result<GroupCost> {
        with_view(g, group, &self.config, |v| {
            let p = Prep::new(g, v, &self.config);
            let io = v.io_bytes();
            let w = v.weight_bytes;
            let floor = io.0 + io.1 + w;
            let bad = |message: String| crate::error::CostError::Schedule { message };
            let sliced = schedule.slices > 1;
            if sliced && p.slices != Some(schedule.slices) {
                return Err(bad(format!(
                    "{} slices, but the group has {}",
                    schedule.slices,
                    p.slices
                        .map_or("no independent axis".to_string(), |s| format!("{s}"))
                )));
            }
            let h_max = v.h_max();
            let k = p.operands.len();
            if k < 64 && schedule.streamed >> k != 0 {
                return Err(bad(format!(
                    "it streams operands the group does not have (it has {k})"
                )));
            }
            let roles = p.roles(v, schedule.streamed);
            if roles.reread_weights > 0 && schedule.tiles > MAX_WEIGHT_TILES {
                return Err(bad(format!(
                    "{} tiles with streamed weights (at most {MAX_WEIGHT_TILES})",
                    schedule.tiles
                )));
            }
            let (on_chip, dram) = if schedule.line_buffer || schedule.streamed == 0 {
                (p.line_buffer(v, sliced), floor)
            } else {
                if schedule.tile_rows == 0 || schedule.tile_rows > h_max {
                    return Err(bad(format!(
                        "{} rows a tile, but the group has {h_max}",
                        schedule.tile_rows
                    )));
                }
                let tiles = h_max.div_ceil(schedule.tile_rows);
                let s = if sliced { schedule.slices } else { 1 };
                let h = schedule.tile_rows;
                let c = p.tiles_with(v, &roles, sliced, h, schedule.block.max(1));
                (
                    c,
                    floor.saturating_add(p.reread_exact(v, &roles, h, tiles, s)),
                )
            };
            let cost = GroupCost::new(&self.config, v.len(), on_chip, dram, w, io, None);
            Ok(cost.with_schedule(Some(*schedule)))
        })
    }

    fn run(&self, g: &Graph, v: &mut View) -> GroupCost {
        let p = Prep::new(g, v, &self.config);
        let io = v.io_bytes();
        let w = v.weight_bytes;
        // No schedule fits when the floor does not: the floor is the least it could need.
        let floor = p.floor(v, &self.config);
        if !self.config.fits(floor.weights, floor.activations) {
            return GroupCost::new(&self.config, v.len(), floor, io.0 + io.1 + w, w, io, None);
        }
        // A single node never reads anything again (see the module docs).
        let (best, least) = p.search(v, &self.config, v.len() == 1);
        let cost =
            |on_chip, dram| GroupCost::new(&self.config, v.len(), on_chip, dram, w, io, None);
        match best {
            Some(b) => cost(b.on_chip, b.dram).with_schedule(Some(b.schedule)),
            // Nothing fits: the least need of any schedule tried, at I + O + W.
            None => cost(least, io.0 + io.1 + w),
        }
    }
}

impl CostModel for Tiled {
    fn name(&self) -> &str {
        "tiled"
    }

    fn config(&self) -> &CostConfig {
        &self.config
    }

    fn evaluate(&self, g: &Graph, group: &fuselage_ir::NodeSet) -> Result<GroupCost> {
        with_view(g, group, &self.config, |v| Ok(self.run(g, v)))
    }

    /// Weights no schedule streams (those of members that are not contractions and do not
    /// follow the rows); every tensor a member reads whole through a port no schedule
    /// streams, one slice of it; and for contractions with weights, the least of the weights
    /// and what streaming them keeps (see [`MAX_WEIGHT_TILES`]). A larger group keeps all of
    /// these.
    fn buffer_floor(&self, g: &Graph, group: &fuselage_ir::NodeSet) -> Result<OnChipBytes> {
        with_view(g, group, &self.config, |v| {
            Ok(Prep::new(g, v, &self.config).floor(v, &self.config))
        })
    }

    /// The buffer of the schedule chosen: at any buffer between it and β that schedule
    /// still fits, and none that moves less does (none fitted at β).
    fn steady_above(&self, g: &Graph, group: &fuselage_ir::NodeSet) -> Result<u64> {
        Ok(self.evaluate(g, group)?.buffer_bytes)
    }

    /// Yes: a group's schedules are searched, subsets of operands times tile counts, tens of
    /// microseconds a group on a transformer layer.
    fn costly(&self) -> bool {
        true
    }

    /// One more than the least on-chip need of any schedule of the space (one-row tiles for
    /// a group of several nodes, all rows for a single node, which reads nothing again).
    fn smallest_buffer(&self, g: &Graph, group: &fuselage_ir::NodeSet) -> Result<u64> {
        with_view(g, group, &self.config, |v| {
            let p = Prep::new(g, v, &self.config);
            Ok(p.least(v, v.len() == 1).total().saturating_add(1))
        })
    }
}
