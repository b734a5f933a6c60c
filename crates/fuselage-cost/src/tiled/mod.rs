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
use crate::model::{CostModel, GroupCost, OnChipBytes, Schedule, TensorKind};
use crate::view::{View, Window, with_view};
use fuselage_ir::{Graph, Op, OpClass, Source};

mod sim;
pub use sim::TiledSimulator;

/// The most row tiles a group that streams weights may run: its weights are read at most this
/// many times (per slice). The bound gives the exact optimiser a buffer floor to prune with
/// (see [`Tiled`]'s `buffer_floor`): without it, Llama-3.2-1B at 2,048 tokens did not finish
/// in 600 s; with it, 0.5 s. GPT-2 (1,024 tokens) and BERT-base (512) at 2 MiB have the same
/// optimum either way (278.0 and 143.5 MB). Streamed activation operands (keys and values)
/// take any number of tiles.
pub const MAX_WEIGHT_TILES: u64 = 2;

/// Above this many streamable operands, a group's subsets are not all tried (see the module
/// docs): `2^4` subsets, each a binary search over its tiles.
pub const EXACT_OPERANDS: usize = 4;

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

/// One candidate schedule's answer.
#[derive(Copy, Clone, Debug)]
struct Found {
    dram: u64,
    on_chip: OnChipBytes,
    schedule: Schedule,
}

/// Something a schedule may stream in blocks.
#[derive(Copy, Clone, Debug)]
enum Operand {
    /// The weights of member `i`.
    Weights(usize),
    /// Port 1 (the right-hand operand) of member `i`, a MatMul.
    Right(usize),
}

/// What `tiled` needs of each member beyond the view.
#[derive(Copy, Clone, Debug, Default)]
struct Member {
    /// A contraction: Gemm, MatMul or Conv.
    linear: bool,
    /// Pointwise along the blocked axis: every port reads one row, and it is an activation,
    /// an element-wise op or a softmax along the last axis (online).
    preserver: bool,
    /// A softmax over the last axis: with a blocked input it keeps two statistics a row.
    softmax: bool,
    /// A reshape, squeeze or unsqueeze that keeps the last axis (the `[L, D]` ↔ `[1, L, D]`
    /// around an exported Gemm): it carries a block of the last axis through.
    relayout: bool,
    /// Nothing is contracted, and every port reads one row (shifted or not) or is read
    /// whole, one at least by rows: recomputable block by block.
    chain: bool,
    /// Bytes of constants that follow the row axis, per output row (0 when none).
    row_constant: u64,
    /// Extent of the output's free axis a contraction may block (last axis; channels for a
    /// Conv).
    out_extent: u64,
}

/// The group, prepared once per evaluation.
struct Prep {
    /// Per tensor: the independent extent it carries (1 when it lacks the axis).
    e: Vec<u64>,
    /// Slices when the group can run one slice at a time.
    slices: Option<u64>,
    /// Per tensor: read whole by a port no schedule streams.
    held: Vec<bool>,
    /// Per tensor: produced by merging slices and read inside the group (held whole when
    /// sliced).
    merged: Vec<bool>,
    /// Per tensor: read by several slices, a broadcast over the independent axis (a mask
    /// `[1, 1, L, L]` added to scores `[1, h, L, L]`, GQA's key-value head repeated): a
    /// sliced schedule loads its part once and holds it whole while the slices that read it
    /// run, instead of reading it again per slice.
    shared: Vec<bool>,
    /// Per member: its row constants lack the independent axis, so every slice reads them
    /// all: a sliced schedule holds them whole.
    shared_constant: Vec<bool>,
    members: Vec<Member>,
    operands: Vec<Operand>,
    /// Per tensor: bytes, and extent along the last axis.
    bytes: Vec<u64>,
    last: Vec<u64>,
    /// Bytes of each member's row constants, all rows (read again with the chain).
    constant_bytes: Vec<u64>,
    /// Weight bytes per member, at the weight element size.
    weights: Vec<u64>,
}

/// The independent extent of a tensor: the product of the axes after the batch and before
/// both its row axis and its last two axes (heads of `[1, h, L, d]`, of `[1, h, d, L]` and
/// of `[1, kv, rep, L, d]`); 1 below rank 4.
fn extent(g: &Graph, s: Source) -> u64 {
    let shape = g.shape_of(s);
    let r = shape.rank();
    match g.row_axis(s) {
        Some(a) if r >= 4 && a >= 2 => shape.0[1..a.min(r - 2)].iter().product::<u64>().max(1),
        _ => 1,
    }
}

/// The representative of `x` in a union-find forest (`root[x] == x` at a root), halving the
/// path as it goes.
fn find(root: &mut [usize], mut x: usize) -> usize {
    while root[x] != x {
        root[x] = root[root[x]];
        x = root[x];
    }
    x
}

fn pointwise(w: Window) -> bool {
    w == Window::Rows {
        k: 1,
        stride: 1,
        pad: 0,
    }
}

/// Output row `r` reads exactly one input row, `r` shifted by an offset (a pointwise read,
/// or a port of a concat along the rows): recomputable row by row.
fn one_to_one(w: Window) -> bool {
    matches!(
        w,
        Window::Rows {
            k: 1,
            stride: 1,
            ..
        }
    )
}

impl Prep {
    fn new(g: &Graph, v: &View, config: &CostConfig) -> Prep {
        let wb = config.weight_element_bytes();
        let n = v.tensors.len();
        let m = v.len();
        let e: Vec<u64> = v.tensors.iter().map(|t| extent(g, t.source)).collect();
        let last: Vec<u64> = (0..n)
            .map(|t| {
                let s = &g.shape_of(v.tensors[t].source).0;
                s.last().copied().unwrap_or(1).max(1)
            })
            .collect();
        let bytes: Vec<u64> = v.tensors.iter().map(|t| t.bytes()).collect();
        let mut members = Vec::with_capacity(m);
        let mut operands = Vec::new();
        let mut weights = Vec::with_capacity(m);
        let mut constant_bytes = Vec::with_capacity(m);
        let mut held = vec![false; n];
        let mut sliceable = true;
        for i in 0..m {
            let id = v.members[i];
            let node = g.node(id);
            let ports = v.ports_of(i);
            let all_pointwise = !ports.is_empty() && ports.iter().all(|p| pointwise(p.window));
            let row_for_row = !ports.is_empty() && ports.iter().all(|p| one_to_one(p.window));
            // Recomputable block by block: rows one for one, beside small tensors read whole
            // (a decode step's new key beside its cache).
            let recomputable = ports.iter().any(|p| one_to_one(p.window))
                && ports
                    .iter()
                    .all(|p| one_to_one(p.window) || p.window == Window::Whole);
            let class = node.op.kind().class();
            let linear = matches!(node.op, Op::Gemm { .. } | Op::MatMul | Op::Conv(_));
            let softmax =
                matches!(node.op, Op::Softmax { axis } if axis as usize + 1 == node.shape.rank());
            let elementwise = matches!(class, OpClass::Unary | OpClass::Elementwise);
            let relayout = matches!(
                node.op,
                Op::Reshape | Op::Squeeze { .. } | Op::Unsqueeze { .. }
            ) && ports.len() == 1
                && node.shape.0.last()
                    == g.shape_of(v.tensors[ports[0].tensor as usize].source)
                        .0
                        .last();
            let w = node.weights.saturating_mul(wb);
            let out_rows = v.tensors[i].h.max(1);
            let out_row_elems = g.row_elements(Source::Node(id));
            // An element-wise constant larger than one output row must run along the rows
            // (it is at most the output's size): it streams by rows.
            let row_constant = if elementwise
                && node.weights > out_row_elems
                && out_rows > 1
                && node.weights.is_multiple_of(out_rows)
            {
                (node.weights / out_rows).saturating_mul(wb)
            } else {
                0
            };
            let out_extent = match node.op {
                Op::Conv(_) => node.shape.0.get(1).copied().unwrap_or(1),
                _ => node.shape.0.last().copied().unwrap_or(1),
            }
            .max(1);
            if linear && node.weights > 0 {
                operands.push(Operand::Weights(i));
            }
            for (port, p) in ports.iter().enumerate() {
                let right = matches!(node.op, Op::MatMul) && port == 1 && node.weights == 0;
                if p.window == Window::Whole {
                    if right {
                        operands.push(Operand::Right(i));
                    } else {
                        held[p.tensor as usize] = true;
                    }
                }
            }
            // Slices: every member carries the independent axis through untouched.
            let eo = e[i];
            let ins = ports.iter().map(|p| e[p.tensor as usize]);
            sliceable &= match &node.op {
                Op::MatMul if node.weights == 0 => ins.clone().all(|x| x == eo || x == 1),
                // Moving the heads before the rows, or back behind them.
                Op::Transpose { perm } => {
                    perm.first() == Some(&0) && ins.clone().all(|x| x == eo || x == 1 || eo == 1)
                }
                _ if softmax => ins.clone().all(|x| x == eo),
                _ if linear => false,
                // Pointwise and layout members along the rows (GQA's repeat multiplies the
                // heads: each slice reads its key-value head's slice).
                _ if row_for_row
                    && matches!(
                        class,
                        OpClass::Unary | OpClass::Elementwise | OpClass::Layout
                    ) =>
                {
                    ins.clone()
                        .all(|x| x == eo || x == 1 || eo.is_multiple_of(x))
                }
                _ => false,
            };
            members.push(Member {
                linear,
                preserver: !linear && all_pointwise && (elementwise || softmax || relayout),
                softmax,
                relayout,
                chain: !linear && recomputable,
                row_constant,
                out_extent,
            });
            weights.push(w);
            constant_bytes.push(if row_constant > 0 { w } else { 0 });
        }
        let slices = e.iter().copied().max().unwrap_or(1);
        let sliceable = sliceable && slices > 1 && e.iter().all(|&x| slices.is_multiple_of(x));
        // A tensor that merges slices back (it lacks the axis, an input has it) and that a
        // member reads must wait for every slice.
        let mut merged = vec![false; n];
        if sliceable {
            for i in 0..m {
                if e[i] == 1 && v.ports_of(i).iter().any(|p| e[p.tensor as usize] > 1) {
                    merged[i] = v.tensors[i].kind == TensorKind::Internal
                        || v.ports.iter().any(|p| p.tensor as usize == i);
                }
            }
        }
        // What several slices read: a broadcast port, or row constants that lack the axis.
        let mut shared = vec![false; n];
        let mut shared_constant = vec![false; m];
        if sliceable {
            for i in 0..m {
                let node = g.node(v.members[i]);
                let broadcasts =
                    matches!(
                        node.op.kind().class(),
                        OpClass::Unary | OpClass::Elementwise
                    ) || matches!(node.op, Op::MatMul | Op::Expand { .. } | Op::Tile { .. });
                for p in v.ports_of(i) {
                    let t = p.tensor as usize;
                    shared[t] |= broadcasts && e[t] < e[i];
                }
                shared_constant[i] = members[i].row_constant > 0
                    && e[i] > 1
                    && node.weights.saturating_mul(e[i]) <= node.shape.elements();
            }
        }
        Prep {
            e,
            slices: sliceable.then_some(slices),
            held,
            merged,
            shared,
            shared_constant,
            members,
            operands,
            bytes,
            last,
            constant_bytes,
            weights,
        }
    }

    /// The divisor of tensor `t` under `sliced`.
    fn div(&self, t: usize, sliced: bool) -> u64 {
        if sliced && !self.merged[t] {
            self.e[t].max(1)
        } else {
            1
        }
    }

    /// The slicings a schedule may use: unsliced, and sliced where the group can be.
    fn slicings(&self) -> &'static [bool] {
        if self.slices.is_some() {
            &[false, true]
        } else {
            &[false]
        }
    }

    /// The tensors read whole through ports no schedule streams, one slice of each: what
    /// every schedule holds.
    fn held_bytes(&self) -> u64 {
        (0..self.held.len())
            .filter(|&t| self.held[t])
            .map(|t| self.bytes[t] / self.e[t].max(1))
            .fold(0, u64::saturating_add)
    }

    /// What streaming the weights of `members` keeps at least: a contraction that streams
    /// them runs at most [`MAX_WEIGHT_TILES`] tiles, so its input (it opens a block) or its
    /// output (it sums one) keeps that share of its rows, one slice of them. Each member's
    /// share is capped by `cap`, and counted only where its two tensors are neither held
    /// whole nor counted for another member.
    fn kept_by_streaming(
        &self,
        v: &View,
        members: impl Iterator<Item = usize>,
        cap: impl Fn(usize) -> u64,
    ) -> u64 {
        let part = |t: usize| {
            let info = v.tensors[t];
            info.h.div_ceil(MAX_WEIGHT_TILES).saturating_mul(info.row) / self.e[t].max(1)
        };
        let mut counted: Vec<usize> = Vec::new();
        let mut kept = 0u64;
        for i in members {
            let Some(a) = v.ports_of(i).first().map(|q| q.tensor as usize) else {
                continue;
            };
            let taken = |t: usize| self.held[t] || counted.contains(&t);
            if !self.members[i].linear || self.weights[i] == 0 || a == i || taken(a) || taken(i) {
                continue;
            }
            kept = kept.saturating_add(part(a).min(part(i)).min(cap(i)));
            counted.extend([a, i]);
        }
        kept
    }

    /// What every schedule of this group, and of any group containing it, keeps on chip (see
    /// [`Tiled`]'s `buffer_floor`): the held tensors, the weights of non-contractions, and
    /// for each contraction the least of its weights and what streaming them keeps (unified
    /// buffers only: the two sides of that choice live in different split buffers).
    fn floor(&self, v: &View, config: &CostConfig) -> OnChipBytes {
        let weights = self
            .members
            .iter()
            .zip(&self.weights)
            .filter(|(m, _)| !m.linear && m.row_constant == 0)
            .map(|(_, &w)| w)
            .fold(0, u64::saturating_add);
        let mut activations = self.held_bytes();
        if matches!(config.buffer(), crate::buffer::OnChipBuffer::Unified { .. }) {
            let kept = self.kept_by_streaming(v, 0..self.members.len(), |i| self.weights[i]);
            activations = activations.saturating_add(kept);
        }
        OnChipBytes {
            weights,
            activations,
        }
    }

    /// The line buffer: LBDF's bands (phased), row constants by rows, slices dividing.
    fn line_buffer(&self, v: &mut View, sliced: bool) -> OnChipBytes {
        v.lbdf(true);
        let mut act = 0u64;
        for (t, st) in v.streams.iter().enumerate() {
            let rows = st.resident;
            let b = if sliced && (self.merged[t] || self.shared[t]) {
                self.bytes[t] / self.div(t, sliced)
            } else {
                rows.saturating_mul(v.tensors[t].row) / self.div(t, sliced)
            };
            act = act.saturating_add(b);
        }
        let mut weights = 0u64;
        for (i, mem) in self.members.iter().enumerate() {
            if sliced && self.shared_constant[i] {
                act = act.saturating_add(self.weights[i]);
            } else if mem.row_constant > 0 {
                let rows = v.streams[i].resident;
                act = act.saturating_add(rows.saturating_mul(mem.row_constant));
            } else {
                weights = weights.saturating_add(self.weights[i]);
            }
        }
        OnChipBytes {
            weights,
            activations: act,
        }
    }

    /// The best schedule of the space (see the module docs), and the least on-chip need of
    /// any schedule tried (what a group that fits none reports). With `no_reread`, only
    /// schedules that read nothing again are tried (a single node).
    fn search(
        &self,
        v: &mut View,
        config: &CostConfig,
        no_reread: bool,
    ) -> (Option<Found>, OnChipBytes) {
        let io = v.io_bytes();
        let floor = io.0 + io.1 + v.weight_bytes;
        let h_max = v.h_max();
        let slicings = self.slicings();
        let mut least: Option<OnChipBytes> = None;
        let mut keep_least = |c: OnChipBytes| {
            if least.is_none_or(|l| c.total() < l.total()) {
                least = Some(c);
            }
        };
        for &sliced in slicings {
            let c = self.line_buffer(v, sliced);
            keep_least(c);
            if config.fits(c.weights, c.activations) {
                let schedule = Schedule {
                    slices: if sliced { self.slices.unwrap_or(1) } else { 1 },
                    tiles: 1,
                    tile_rows: h_max,
                    streamed_weights: 0,
                    streamed_operands: 0,
                    block: 0,
                    line_buffer: true,
                    streamed: 0,
                    reread_bytes: 0,
                };
                let found = Found {
                    dram: floor,
                    on_chip: c,
                    schedule,
                };
                return (Some(found), c);
            }
        }
        // What every schedule keeps whatever streams: tensors read whole through ports that
        // do not stream (one slice of each at best), and the weights of non-contractions.
        let held = self.held_bytes();
        let resident: u64 = self.weights.iter().sum::<u64>()
            - self
                .members
                .iter()
                .zip(&self.weights)
                .filter(|(m, _)| m.row_constant > 0)
                .map(|(_, w)| w)
                .sum::<u64>();
        let mut best: Option<(Found, u64, bool)> = None;
        let mut roles = Roles::default();
        for mask in subsets(&self.operands) {
            // Nothing moves less than I + O + W.
            if best.is_some_and(|(b, _, _)| b.dram == floor) {
                break;
            }
            let streamed: u64 = self
                .operands
                .iter()
                .enumerate()
                .filter(|(b, _)| mask >> b & 1 == 1)
                .map(|(_, o)| match *o {
                    Operand::Weights(i) => self.weights[i],
                    Operand::Right(_) => 0,
                })
                .sum();
            // What the members that stream weights keep at least (see `buffer_floor`).
            let streaming = self
                .operands
                .iter()
                .enumerate()
                .filter_map(|(b, o)| match *o {
                    Operand::Weights(i) if mask >> b & 1 == 1 => Some(i),
                    _ => None,
                });
            let forced = self.kept_by_streaming(v, streaming, |_| u64::MAX);
            if !config.fits(resident - streamed, held.saturating_add(forced)) {
                continue;
            }
            self.roles_into(v, mask, &mut roles);
            let roles = &roles;
            for &sliced in slicings {
                let s = if sliced { self.slices.unwrap_or(1) } else { 1 };
                let traffic = |tiles: u64| floor.saturating_add(roles.reread(tiles, s));
                if no_reread && traffic(1) > floor {
                    continue;
                }
                if best.is_some_and(|(b, _, _)| traffic(1) >= b.dram) {
                    continue;
                }
                // Without reading anything again, the tiles are all the rows; beside a
                // schedule already found, only as many tiles as still move less are worth
                // trying.
                let mut fewest = if no_reread && traffic(2) > floor {
                    h_max
                } else {
                    1
                };
                if roles.reread_weights > 0 {
                    fewest = fewest.max(h_max.div_ceil(MAX_WEIGHT_TILES));
                }
                if let Some((b, _, _)) = best {
                    let (mut lo, mut hi) = (1u64, h_max);
                    while lo < hi {
                        let mid = lo + (hi - lo).div_ceil(2);
                        if traffic(mid) < b.dram {
                            lo = mid;
                        } else {
                            hi = mid - 1;
                        }
                    }
                    fewest = fewest.max(h_max.div_ceil(lo));
                }
                let smallest = self.tiles(v, roles, sliced, fewest);
                keep_least(smallest);
                if !config.fits(smallest.weights, smallest.activations) {
                    continue;
                }
                let fits = |v: &mut View, h: u64| {
                    let c = self.tiles(v, roles, sliced, h);
                    config.fits(c.weights, c.activations).then_some(c)
                };
                // The fewest tiles that fit (F_β never falls as h grows): a binary search over
                // T, whose rows are h = ⌈H_max / T⌉.
                let (mut lo, mut hi) = (1u64, h_max.div_ceil(fewest));
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if fits(v, h_max.div_ceil(mid)).is_some() {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                let tiles = lo;
                let h = h_max.div_ceil(tiles);
                let Some(on_chip) = fits(v, h) else { continue };
                let dram = floor.saturating_add(self.reread_exact(v, roles, h, tiles, s));
                if best
                    .is_some_and(|(b, _, _)| (b.dram, b.on_chip.total()) <= (dram, on_chip.total()))
                {
                    continue;
                }
                let found = Found {
                    dram,
                    on_chip,
                    schedule: Schedule {
                        slices: s,
                        tiles,
                        tile_rows: h,
                        streamed_weights: roles.weights_streamed,
                        streamed_operands: roles.operands_streamed,
                        block: 1,
                        line_buffer: false,
                        streamed: mask,
                        reread_bytes: dram - floor,
                    },
                };
                best = Some((found, mask, sliced));
            }
        }
        // The block: the largest that fits, and the buffer the schedule then needs.
        let best = best.map(|(mut found, mask, sliced)| {
            let roles = self.roles(v, mask);
            let h = found.schedule.tile_rows;
            let block = self.block(v, &roles, sliced, h, config);
            found.schedule.block = block;
            found.on_chip = self.tiles_with(v, &roles, sliced, h, block);
            found
        });
        (best, least.unwrap_or_default())
    }

    /// The least on-chip need of any schedule of the space (without reading anything again
    /// when `no_reread`): the line buffer, or each subset at its fewest rows.
    fn least(&self, v: &mut View, no_reread: bool) -> OnChipBytes {
        let slicings = self.slicings();
        let h_max = v.h_max();
        let mut least = u64::MAX;
        let mut out = OnChipBytes::default();
        let mut keep = |c: OnChipBytes| {
            if c.total() < least {
                least = c.total();
                out = c;
            }
        };
        for &sliced in slicings {
            keep(self.line_buffer(v, sliced));
        }
        for mask in subsets(&self.operands) {
            let roles = self.roles(v, mask);
            for &sliced in slicings {
                let s = if sliced { self.slices.unwrap_or(1) } else { 1 };
                if no_reread && roles.reread(1, s) > 0 {
                    continue;
                }
                let mut h = if no_reread && roles.reread(2, s) > 0 {
                    h_max
                } else {
                    1
                };
                if roles.reread_weights > 0 {
                    h = h.max(h_max.div_ceil(MAX_WEIGHT_TILES));
                }
                keep(self.tiles(v, &roles, sliced, h));
            }
        }
        out
    }

    /// The largest power-of-two block (elements along a streamed or blocked axis) that fits
    /// at `h` rows.
    fn block(&self, v: &mut View, roles: &Roles, sliced: bool, h: u64, config: &CostConfig) -> u64 {
        let mut block = 1u64;
        while block < (1 << 20) {
            let c = self.tiles_with(v, roles, sliced, h, block * 2);
            if !config.fits(c.weights, c.activations) {
                break;
            }
            block *= 2;
        }
        block
    }

    /// What streaming the operands in `mask` makes of each tensor and member.
    fn roles(&self, v: &View, mask: u64) -> Roles {
        let mut r = Roles::default();
        self.roles_into(v, mask, &mut r);
        r
    }

    /// [`roles`](Self::roles) into `r`, reusing its vectors.
    fn roles_into(&self, v: &View, mask: u64, r: &mut Roles) {
        let n = v.tensors.len();
        let m = v.len();
        let reset = |x: &mut Vec<bool>, len: usize| {
            x.clear();
            x.resize(len, false);
        };
        reset(&mut r.weights, m);
        reset(&mut r.right, m);
        reset(&mut r.streaming, m);
        reset(&mut r.recomputed, m);
        reset(&mut r.resident, n);
        reset(&mut r.blocked, n);
        reset(&mut r.chain, n);
        reset(&mut r.source, n);
        r.readers.clear();
        r.readers.resize(n, 0);
        r.extent.clear();
        r.extent.resize(n, 1);
        r.chain_bytes.clear();
        r.chain_bytes.resize(m, 0);
        r.keys.clear();
        r.keys.resize(n, 1);
        r.weights_streamed = 0;
        r.operands_streamed = 0;
        r.reread_weights = 0;
        r.reread_chain = 0;
        for (b, op) in self.operands.iter().enumerate() {
            if mask >> b & 1 == 1 {
                match *op {
                    Operand::Weights(i) => {
                        r.weights[i] = true;
                        r.weights_streamed += 1;
                        r.reread_weights += self.weights[i];
                    }
                    Operand::Right(i) => {
                        r.right[i] = true;
                        r.operands_streamed += 1;
                    }
                }
            }
        }
        // Blocked tensors: a fixpoint of a forward candidacy and a backward check that every
        // reader is pointwise or sums the block.
        let mut allowed = vec![true; n];
        loop {
            for (i, &mem) in self.members.iter().enumerate() {
                let ports = v.ports_of(i);
                let first = ports.first().map(|p| p.tensor as usize);
                let blocked_in = first.is_some_and(|t| r.blocked[t]);
                let (cand, ext) = if mem.linear {
                    let streams = r.weights[i] || r.right[i];
                    (streams && !blocked_in, mem.out_extent)
                } else if mem.preserver {
                    let src = ports
                        .iter()
                        .map(|p| p.tensor as usize)
                        .find(|&t| r.blocked[t] && (!mem.relayout || r.extent[t] == self.last[t]));
                    (src.is_some(), src.map_or(1, |t| r.extent[t]))
                } else {
                    (false, 1)
                };
                r.blocked[i] = cand && allowed[i];
                r.extent[i] = if r.blocked[i] { ext.max(1) } else { 1 };
            }
            let mut changed = false;
            for i in 0..m {
                let mem = self.members[i];
                for (port, p) in v.ports_of(i).iter().enumerate() {
                    let t = p.tensor as usize;
                    // A relayout carries only a block of the last axis.
                    let carried = !mem.relayout || r.extent[t] == self.last[t];
                    let ok = (mem.preserver && carried) || (mem.linear && port == 0);
                    if r.blocked[t] && !ok {
                        allowed[t] = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                changed = self.split_waits(v, r, &mut allowed);
            }
            if !changed {
                break;
            }
        }
        for i in 0..m {
            r.streaming[i] = r.weights[i]
                || r.right[i]
                || v.ports_of(i).iter().any(|p| r.blocked[p.tensor as usize]);
        }
        // Chains of streamed right operands: what each is made of, recomputed per tile.
        for i in 0..m {
            if !r.right[i] {
                continue;
            }
            let Some(p) = v.ports_of(i).get(1) else {
                continue;
            };
            // The keys: the blocked axis, or the rows of the operand summed into accumulators.
            let first = v.ports_of(i).first().map(|q| q.tensor as usize);
            let keys = if r.blocked[i] {
                self.members[i].out_extent
            } else {
                match first {
                    Some(t) if r.blocked[t] => r.extent[t],
                    Some(t) => self.last[t],
                    None => 1,
                }
            }
            .max(1);
            let mut stack = vec![p.tensor as usize];
            let mut seen_in = 0u64;
            while let Some(t) = stack.pop() {
                if r.chain[t] {
                    continue;
                }
                r.keys[t] = keys;
                if t >= m {
                    r.chain[t] = true;
                    seen_in = seen_in.saturating_add(self.bytes[t]);
                } else if self.members[t].chain && !self.held[t] {
                    r.chain[t] = true;
                    seen_in = seen_in.saturating_add(self.constant_bytes[t]);
                    for q in v.ports_of(t) {
                        if one_to_one(q.window) {
                            stack.push(q.tensor as usize);
                        } else {
                            // Read whole beside the blocks: held once.
                            r.source[q.tensor as usize] = true;
                        }
                    }
                } else {
                    r.source[t] = true;
                }
            }
            r.reread_chain = r.reread_chain.saturating_add(seen_in);
            r.chain_bytes[i] = seen_in;
        }
        for i in 0..m {
            r.recomputed[i] = r.chain[i] && self.members[i].chain;
            let streaming = r.streaming[i];
            r.resident[i] |= streaming;
            for (port, p) in v.ports_of(i).iter().enumerate() {
                if port == 1 && r.right[i] {
                    continue;
                }
                let t = p.tensor as usize;
                r.resident[t] |= streaming;
                if !r.recomputed[i] {
                    r.readers[t] += 1;
                }
            }
        }
        chain_only(v, r);
    }

    /// A block loop runs the members its blocked tensors link all at once, block by block,
    /// so none of them may wait for another's finished output. Where a path from one member
    /// of a loop to another leaves the blocks (passes through a tensor that is not blocked,
    /// such as the output of the contraction that sums them), the blocked tensors the later
    /// member reads are made whole instead (a residual stream read by both a convolution and
    /// the `Add` after it). Returns whether anything changed.
    fn split_waits(&self, v: &View, r: &Roles, allowed: &mut [bool]) -> bool {
        let m = v.len();
        if !r.blocked[..m].iter().any(|&b| b) {
            return false;
        }
        // Loops: members linked by the blocked tensors they make and read.
        let mut root: Vec<usize> = (0..m).collect();
        for i in 0..m {
            for p in v.ports_of(i) {
                let t = p.tensor as usize;
                if t < m && r.blocked[t] {
                    let (a, b) = (find(&mut root, i), find(&mut root, t));
                    root[a.max(b)] = a.min(b);
                }
            }
        }
        // Loops of two members or more, numbered, as bits.
        let roots: Vec<usize> = (0..m).map(|i| find(&mut root, i)).collect();
        let mut size = vec![0u32; m];
        for &x in &roots {
            size[x] += 1;
        }
        let mut id = vec![usize::MAX; m];
        let mut loops = 0usize;
        for x in 0..m {
            if size[x] >= 2 {
                id[x] = loops;
                loops += 1;
            }
        }
        if loops == 0 {
            return false;
        }
        // Per member, as bit sets over loops: the loops that reach it through blocked
        // tensors only (itself included), and those that reach it through a whole tensor.
        let words = loops.div_ceil(64);
        let mut reach = vec![0u64; m * words];
        let mut crossed = vec![0u64; m * words];
        let mut changed = false;
        for i in 0..m {
            for p in v.ports_of(i) {
                let t = p.tensor as usize;
                if t >= m {
                    continue;
                }
                for w in 0..words {
                    let (rt, ct) = (reach[t * words + w], crossed[t * words + w]);
                    if r.blocked[t] {
                        reach[i * words + w] |= rt;
                        crossed[i * words + w] |= ct;
                    } else {
                        crossed[i * words + w] |= rt | ct;
                    }
                }
            }
            let own = id[roots[i]];
            if own == usize::MAX {
                continue;
            }
            reach[i * words + own / 64] |= 1 << (own % 64);
            if crossed[i * words + own / 64] >> (own % 64) & 1 == 1 {
                for p in v.ports_of(i) {
                    let t = p.tensor as usize;
                    if r.blocked[t] && allowed[t] {
                        allowed[t] = false;
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    fn tiles(&self, v: &mut View, roles: &Roles, sliced: bool, h: u64) -> OnChipBytes {
        self.tiles_with(v, roles, sliced, h, 1)
    }

    /// The on-chip need of the tile regime at `h` rows of the tallest output and blocks of
    /// `block` elements.
    fn tiles_with(
        &self,
        v: &mut View,
        roles: &Roles,
        sliced: bool,
        h: u64,
        block: u64,
    ) -> OnChipBytes {
        ROWS.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let RowScratch { asks, rows, need } = &mut *scratch;
            tile_rows(v, roles, h, asks, rows, need);
            self.footprint(v, roles, rows, sliced, block)
        })
    }

    /// The on-chip need of the tile regime with `rows` per tensor.
    fn footprint(
        &self,
        v: &View,
        roles: &Roles,
        rows: &[u64],
        sliced: bool,
        block: u64,
    ) -> OnChipBytes {
        let mut act = 0u64;
        for (t, info) in v.tensors.iter().enumerate() {
            let d = self.div(t, sliced);
            let whole = self.held[t] || roles.source[t];
            let b = if whole || (sliced && (self.merged[t] || self.shared[t])) {
                self.bytes[t] / d
            } else if roles.blocked[t] {
                let ext = roles.extent[t];
                rows[t]
                    .saturating_mul(info.row / ext.max(1))
                    .saturating_mul(block.min(ext))
                    / d
            } else if roles.chain[t] {
                // One block of keys for the chain; the rows other members read beside it.
                let keys = roles.keys[t].max(1);
                let chain = (self.bytes[t] / keys).saturating_mul(block.min(keys));
                rows[t].saturating_mul(info.row).saturating_add(chain) / d
            } else {
                rows[t].max(1).saturating_mul(info.row) / d
            };
            act = act.saturating_add(b);
        }
        let mut weights = 0u64;
        for (i, mem) in self.members.iter().enumerate() {
            let out_rows = rows[i].max(1);
            if roles.weights[i] {
                let w = self.weights[i];
                // Blocks of the axis the loop runs over: the input's blocked axis for a
                // contraction that sums blocks (rows of its weights), else its outputs.
                let blocked_in = v.ports_of(i).first().map(|q| q.tensor as usize);
                let ext = match blocked_in {
                    Some(t) if roles.blocked[t] => roles.extent[t],
                    _ => mem.out_extent,
                }
                .max(1);
                weights = weights.saturating_add((w / ext).max(1).saturating_mul(block.min(ext)));
            } else if sliced && self.shared_constant[i] {
                act = act.saturating_add(self.weights[i]);
            } else if mem.row_constant > 0 {
                let per = if roles.blocked[i] {
                    (mem.row_constant / roles.extent[i].max(1)).saturating_mul(block)
                } else {
                    mem.row_constant
                };
                act = act.saturating_add(out_rows.saturating_mul(per));
            } else {
                weights = weights.saturating_add(self.weights[i]);
            }
            if mem.softmax
                && v.ports_of(i)
                    .iter()
                    .any(|p| roles.blocked[p.tensor as usize])
            {
                // The online softmax's running maximum and sum, per row.
                let stats = 2 * out_rows * (v.tensors[i].row / self.last[i].max(1)).max(1);
                act = act.saturating_add(stats / self.div(i, sliced));
            }
        }
        OnChipBytes {
            weights,
            activations: act,
        }
    }

    /// Bytes read beyond `I + O + W` when the group runs `tiles` tiles of `h` rows in
    /// `slices` slices: each streamed operand is read once per tile in which its member makes
    /// rows (per slice, for weights). A member whose readers' windows reach ahead may make
    /// all its rows in fewer tiles than the group (the tiles of a chain of convolutions are
    /// skewed, see [`demand`]), so this is at most [`Roles::reread`].
    fn reread_exact(&self, v: &View, roles: &Roles, h: u64, tiles: u64, slices: u64) -> u64 {
        if roles.reread_weights == 0 && roles.reread_chain == 0 {
            return 0;
        }
        let m = v.len();
        let mut need = vec![0u64; m];
        let mut made = vec![0u64; m];
        let mut busy = vec![0u64; m];
        for tile in 0..tiles {
            demand(v, roles, h, tile, &mut need);
            for i in 0..m {
                if need[i] + 1 > made[i] {
                    busy[i] += 1;
                    made[i] = need[i] + 1;
                }
            }
        }
        let mut bytes = 0u64;
        for (i, &busy) in busy.iter().enumerate() {
            let runs = busy.max(1);
            if roles.weights[i] {
                let w = self.weights[i].saturating_mul(runs.saturating_mul(slices) - 1);
                bytes = bytes.saturating_add(w);
            }
            if roles.right[i] {
                bytes = bytes.saturating_add(roles.chain_bytes[i].saturating_mul(runs - 1));
            }
        }
        bytes
    }
}

/// Rows each tensor keeps at `h` rows of the tallest output.
///
/// A tile runs in three steps: the members before the streaming ones produce, row by row,
/// the rows the tile needs; the streaming members (those that stream an operand or read a
/// blocked tensor) run block by block over all the tile's rows; the members after them
/// consume the finished rows one by one. So a tensor keeps the tile's rows when a streaming
/// member makes or reads it, or when two members read it (they may run in different steps:
/// a skip connection); otherwise it keeps the window its one reader asks for one row (a
/// streaming reader asks for its whole tile). Chain members and streamed ports ask nothing
/// (the chain runs one block at a time): 0 for a tensor nothing else reads.
fn tile_rows(
    v: &View,
    roles: &Roles,
    h: u64,
    asks: &mut Vec<u64>,
    rows: &mut Vec<u64>,
    need: &mut Vec<u64>,
) {
    let n = v.tensors.len();
    let m = v.len();
    let h_max = v.h_max();
    asks.clear();
    asks.resize(n, 0);
    rows.clear();
    rows.resize(n, 0);
    // The first tile makes the most rows: the share, and the lead its readers reach for.
    need.clear();
    need.resize(m, 0);
    demand(v, roles, h, 0, need);
    let keep = |t: usize, ask: u64| {
        let info = v.tensors[t];
        let mut r = ask;
        if roles.resident[t] || roles.readers[t] >= 2 {
            r = r.max(h.saturating_mul(info.h).div_ceil(h_max));
        }
        if t < m && roles.resident[t] && !roles.chain_only[t] {
            r = r.max(need[t] + 1);
        }
        if info.kind == TensorKind::Out || (t < m && !roles.chain[t]) {
            r = r.max(1);
        }
        if r == 0 { 0 } else { r.clamp(1, info.h.max(1)) }
    };
    for i in (0..m).rev() {
        rows[i] = keep(i, asks[i]);
        if roles.recomputed[i] && rows[i] == 0 {
            continue;
        }
        let burst = if roles.streaming[i] {
            rows[i].max(1)
        } else {
            1
        };
        for (port, p) in v.ports_of(i).iter().enumerate() {
            if port == 1 && roles.right[i] {
                continue;
            }
            let want = match p.window {
                Window::Rows { k, stride, .. } => (burst - 1)
                    .saturating_mul(stride as u64)
                    .saturating_add(k as u64),
                Window::Whole => u64::MAX,
            };
            let a = &mut asks[p.tensor as usize];
            *a = (*a).max(want);
        }
    }
    for t in m..n {
        rows[t] = keep(t, asks[t]);
    }
}

/// The last row of its `rows` that tile `tile` gives a tensor, at `h` rows a tile of the
/// tallest output (`h_max` rows): its share.
fn tile_end(rows: u64, h: u64, h_max: u64, tile: u64) -> u64 {
    let end = (tile + 1)
        .saturating_mul(h)
        .saturating_mul(rows)
        .div_ceil(h_max.max(1));
    end.clamp(1, rows.max(1)) - 1
}

/// Chain members that nothing needs as rows (not a group output, read only by other such
/// members or as a streamed operand): they are made block by block, per tile, and never
/// row by row.
fn chain_only(v: &View, roles: &mut Roles) {
    let m = v.len();
    let only = &mut roles.chain_only;
    only.clear();
    only.resize(m, false);
    // Readers come after what they read: deciding members last to first, every reader of a
    // member is decided before it.
    let mut read = std::mem::take(&mut roles.needed);
    read.clear();
    read.resize(m, false);
    for i in (0..m).rev() {
        only[i] = roles.recomputed[i] && !read[i] && v.tensors[i].kind != TensorKind::Out;
        if only[i] {
            continue;
        }
        for (port, q) in v.ports_of(i).iter().enumerate() {
            let t = q.tensor as usize;
            if t < m && !(port == 1 && roles.right[i]) {
                read[t] = true;
            }
        }
    }
    roles.needed = read;
}

/// The last row each member makes in tile `tile` (of `h` rows of the tallest output): its
/// share of the tile, or more where a reader's window over its own rows of the tile reaches
/// further. So the tiles of a chain are skewed: a producer runs ahead by the halo its readers
/// need, and a member can make all its rows before the last tile.
fn demand(v: &View, roles: &Roles, h: u64, tile: u64, need: &mut [u64]) {
    let m = v.len();
    let h_max = v.h_max();
    for (i, n) in need.iter_mut().enumerate().take(m) {
        let rows = v.tensors[i].h;
        // What a chain starts from is held whole: all its rows in the first tile.
        *n = if roles.source[i] {
            rows.max(1) - 1
        } else {
            tile_end(rows, h, h_max, tile)
        };
    }
    for c in (0..m).rev() {
        if roles.chain_only[c] {
            continue;
        }
        for (port, q) in v.ports_of(c).iter().enumerate() {
            let t = q.tensor as usize;
            if t >= m || (port == 1 && roles.right[c]) {
                continue;
            }
            let rows = v.tensors[t].h.max(1);
            let reach = q.window.last_row(need[c]).clamp(0, rows as i64 - 1) as u64;
            need[t] = need[t].max(reach);
        }
    }
    // A plain member makes every row its inputs already allow, so that a tensor made ahead
    // for one reader is not held for another that lags (the Q, K and V of one projection,
    // V read whole).
    for c in 0..m {
        if roles.chain_only[c] || roles.streaming[c] {
            continue;
        }
        // Only as far as what the group made allows (what it loads does not push it).
        if v.ports_of(c).iter().all(|q| q.tensor as usize >= m) {
            continue;
        }
        let mut can = v.tensors[c].h as i64 - 1;
        for q in v.ports_of(c) {
            let t = q.tensor as usize;
            if t >= m {
                continue;
            }
            let avail = need[t] as i64;
            let r = match q.window {
                Window::Whole if avail + 1 >= v.tensors[t].h as i64 => can,
                Window::Whole => -1,
                Window::Rows { k, stride, pad } => {
                    (avail + pad - (k - 1)).div_euclid(stride.max(1))
                }
            };
            can = can.min(r);
        }
        if can > need[c] as i64 {
            need[c] = can as u64;
        }
    }
}

/// Reused buffers of [`tile_rows`], one per thread.
#[derive(Default)]
struct RowScratch {
    asks: Vec<u64>,
    rows: Vec<u64>,
    need: Vec<u64>,
}

thread_local! {
    static ROWS: std::cell::RefCell<RowScratch> = std::cell::RefCell::new(RowScratch::default());
}

/// What a subset of streamed operands makes of the group.
#[derive(Debug, Default)]
struct Roles {
    /// Per member: its weights stream.
    weights: Vec<bool>,
    /// Per member: its right operand streams.
    right: Vec<bool>,
    /// Per member: it streams an operand or reads a blocked tensor (it runs block by block
    /// over a whole tile).
    streaming: Vec<bool>,
    /// Per member: a chain member, recomputed per block (its reads ask no rows).
    recomputed: Vec<bool>,
    /// Per tensor: made or read by a streaming member (it keeps the tile's rows).
    resident: Vec<bool>,
    /// Per tensor: members that read it, chain members apart.
    readers: Vec<u32>,
    /// Per tensor: blocked along a contraction's free axis.
    blocked: Vec<bool>,
    /// Per tensor: the blocked axis's extent.
    extent: Vec<u64>,
    /// Per tensor: recomputed per tile as part of a streamed operand's chain.
    chain: Vec<bool>,
    /// Per tensor: a chain starts from it, made by a member that cannot be recomputed: held.
    source: Vec<bool>,
    weights_streamed: u32,
    operands_streamed: u32,
    /// Bytes of streamed weights (read `T·s` times).
    reread_weights: u64,
    /// Bytes of the chains' DRAM inputs and row constants (read `T` times).
    reread_chain: u64,
    /// Per member: the bytes of its streamed operand's chain, read once per tile it runs in.
    chain_bytes: Vec<u64>,
    /// Per member: made only block by block inside a chain (see [`chain_only`]).
    chain_only: Vec<bool>,
    /// Per chain tensor: the keys its streamed operand runs over (a block is
    /// `bytes / keys` per key).
    keys: Vec<u64>,
    /// Scratch of [`chain_only`]: per member, read as rows by a member that is not.
    needed: Vec<bool>,
}

impl Roles {
    /// Bytes read beyond `I + O + W` with `tiles` tiles and `slices` slices.
    fn reread(&self, tiles: u64, slices: u64) -> u64 {
        let w = tiles.saturating_mul(slices).saturating_sub(1);
        self.reread_weights
            .saturating_mul(w)
            .saturating_add(self.reread_chain.saturating_mul(tiles - 1))
    }
}

/// The subsets of `operands` tried: all of them up to [`EXACT_OPERANDS`]; beyond, all, all
/// weights, all right operands, and all but one.
///
/// Largest subsets first: with all rows in one tile, streaming reads nothing again, and the
/// more that streams the likelier the group fits, so the search usually stops at the first.
fn subsets(operands: &[Operand]) -> Vec<u64> {
    let k = operands.len();
    if k <= EXACT_OPERANDS {
        let mut all: Vec<u64> = (1..(1u64 << k)).collect();
        all.sort_by_key(|m| (std::cmp::Reverse(m.count_ones()), *m));
        return all;
    }
    let k = k.min(63);
    let all = (1u64 << k) - 1;
    let pick = |f: &dyn Fn(&Operand) -> bool| {
        operands[..k]
            .iter()
            .enumerate()
            .filter(|(_, o)| f(o))
            .fold(0u64, |m, (b, _)| m | 1 << b)
    };
    let mut out = vec![
        all,
        pick(&|o| matches!(o, Operand::Weights(_))),
        pick(&|o| matches!(o, Operand::Right(_))),
    ];
    out.extend((0..k).map(|b| all & !(1 << b)));
    out.retain(|&m| m != 0);
    out.sort_by_key(|m| (std::cmp::Reverse(m.count_ones()), *m));
    out.dedup();
    out
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

    /// One more than the least on-chip need of any schedule of the space (one-row tiles for
    /// a group of several nodes, all rows for a single node, which reads nothing again).
    fn smallest_buffer(&self, g: &Graph, group: &fuselage_ir::NodeSet) -> Result<u64> {
        with_view(g, group, &self.config, |v| {
            let p = Prep::new(g, v, &self.config);
            Ok(p.least(v, v.len() == 1).total().saturating_add(1))
        })
    }
}
