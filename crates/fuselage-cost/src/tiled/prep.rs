//! The group prepared once per evaluation ([`Prep`]): per tensor its bytes, its independent
//! extent (heads, windows) and whether some port reads it whole; per member what `tiled`
//! needs of it ([`Member`]: a contraction, pointwise along a blocked axis, recomputable in a
//! chain, its row constants); the operands a schedule may stream ([`Operand`]); and whether
//! the group can run one slice at a time. Everything the search tries is a function of this
//! and a subset of the operands.

use crate::config::CostConfig;
use crate::model::TensorKind;
use crate::view::{View, Window};
use fuselage_ir::{Graph, Op, OpClass, Source};

/// The most row tiles a group that streams weights may run: its weights are read at most this
/// many times (per slice). The bound gives the exact optimiser a buffer floor to prune with
/// (see [`Tiled`](super::Tiled)'s `buffer_floor`): without it, Llama-3.2-1B at 2,048 tokens did not finish
/// in 600 s; with it, 0.5 s. GPT-2 (1,024 tokens) and BERT-base (512) at 2 MiB have the same
/// optimum either way (278.0 and 143.5 MB). Streamed activation operands (keys and values)
/// take any number of tiles.
pub const MAX_WEIGHT_TILES: u64 = 2;

/// Above this many streamable operands, a group's subsets are not all tried (see the module
/// docs): `2^4` subsets, each a binary search over its tiles.
pub const EXACT_OPERANDS: usize = 4;

/// Something a schedule may stream in blocks.
#[derive(Copy, Clone, Debug)]
pub(super) enum Operand {
    /// The weights of member `i`.
    Weights(usize),
    /// Port 1 (the right-hand operand) of member `i`, a MatMul.
    Right(usize),
}

/// What `tiled` needs of each member beyond the view.
#[derive(Copy, Clone, Debug, Default)]
pub(super) struct Member {
    /// A contraction: Gemm, MatMul or Conv.
    pub(super) linear: bool,
    /// Pointwise along the blocked axis: every port reads one row, and it is an activation,
    /// an element-wise op or a softmax along the last axis (online).
    pub(super) preserver: bool,
    /// A softmax over the last axis: with a blocked input it keeps two statistics a row.
    pub(super) softmax: bool,
    /// A reshape, squeeze or unsqueeze that keeps the last axis (the `[L, D]` ↔ `[1, L, D]`
    /// around an exported Gemm): it carries a block of the last axis through.
    pub(super) relayout: bool,
    /// Nothing is contracted, and every port reads one row (shifted or not) or is read
    /// whole, one at least by rows: recomputable block by block.
    pub(super) chain: bool,
    /// Bytes of constants that follow the row axis, per output row (0 when none).
    pub(super) row_constant: u64,
    /// Extent of the output's free axis a contraction may block (last axis; channels for a
    /// Conv).
    pub(super) out_extent: u64,
}

/// The group, prepared once per evaluation.
pub(super) struct Prep {
    /// Per tensor: the independent extent it carries (1 when it lacks the axis).
    pub(super) e: Vec<u64>,
    /// Slices when the group can run one slice at a time.
    pub(super) slices: Option<u64>,
    /// Per tensor: read whole by a port no schedule streams.
    pub(super) held: Vec<bool>,
    /// Per tensor: produced by merging slices and read inside the group (held whole when
    /// sliced).
    pub(super) merged: Vec<bool>,
    /// Per tensor: read by several slices, a broadcast over the independent axis (a mask
    /// `[1, 1, L, L]` added to scores `[1, h, L, L]`, GQA's key-value head repeated): a
    /// sliced schedule loads its part once and holds it whole while the slices that read it
    /// run, instead of reading it again per slice.
    pub(super) shared: Vec<bool>,
    /// Per member: its row constants lack the independent axis, so every slice reads them
    /// all: a sliced schedule holds them whole.
    pub(super) shared_constant: Vec<bool>,
    pub(super) members: Vec<Member>,
    pub(super) operands: Vec<Operand>,
    /// Per tensor: bytes, and extent along the last axis.
    pub(super) bytes: Vec<u64>,
    pub(super) last: Vec<u64>,
    /// Bytes of each member's row constants, all rows (read again with the chain).
    pub(super) constant_bytes: Vec<u64>,
    /// Weight bytes per member, at the weight element size.
    pub(super) weights: Vec<u64>,
}

/// The independent extent of a tensor: the product of the axes after the batch and before
/// both its row axis and its last two axes (heads of `[1, h, L, d]`, of `[1, h, d, L]` and
/// of `[1, kv, rep, L, d]`); 1 below rank 4.
pub(super) fn extent(g: &Graph, s: Source) -> u64 {
    let shape = g.shape_of(s);
    let r = shape.rank();
    match g.row_axis(s) {
        Some(a) if r >= 4 && a >= 2 => shape.0[1..a.min(r - 2)].iter().product::<u64>().max(1),
        _ => 1,
    }
}

pub(super) fn pointwise(w: Window) -> bool {
    w == Window::Rows {
        k: 1,
        stride: 1,
        pad: 0,
    }
}

/// Output row `r` reads exactly one input row, `r` shifted by an offset (a pointwise read,
/// or a port of a concat along the rows): recomputable row by row.
pub(super) fn one_to_one(w: Window) -> bool {
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
    pub(super) fn new(g: &Graph, v: &View, config: &CostConfig) -> Prep {
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
    pub(super) fn div(&self, t: usize, sliced: bool) -> u64 {
        if sliced && !self.merged[t] {
            self.e[t].max(1)
        } else {
            1
        }
    }

    /// The slicings a schedule may use: unsliced, and sliced where the group can be.
    pub(super) fn slicings(&self) -> &'static [bool] {
        if self.slices.is_some() {
            &[false, true]
        } else {
            &[false]
        }
    }
}
