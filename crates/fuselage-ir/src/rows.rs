//! Rows of a tensor: its row axis, and how an op's output rows read its inputs' rows.
//!
//! The cost models stream a group row by row. For a CNN a row is one H line of an NCHW
//! tensor; for a transformer it is one token. This module is the one rule that says, for
//! every tensor, along which axis its rows run (the *row axis*), and for every input port of
//! an op, which input rows one output row reads ([`RowRead`]). The cost models and the buffer
//! simulator only read its answers, so LBDF, BRR and the simulator cannot disagree on rows.
//!
//! ## The row axis
//!
//! - A graph input takes the default of its rank ([`default_row_axis`]): H (axis `n − 2`) of a
//!   rank-4-or-more tensor, L (axis 1) of `[1, L, D]`, none for rank 2 or less (one row: the
//!   whole tensor).
//! - An op's output row axis is *tracked* from its inputs ([`Op::rows`]): a Transpose moves
//!   it, a Squeeze or Unsqueeze shifts it, a Reshape keeps it where the axis survives with the
//!   same size and the same number of elements before it, a MatMul's output takes its left
//!   operand's. So `[1, L, D]` → reshape `[1, L, heads, d]` → transpose `[1, heads, L, d]`
//!   streams tokens throughout.
//! - Where tracking loses the axis (it is squeezed, gathered or reduced away, or was of size
//!   1), the output takes the default of its rank. A reshape that merges the row axis with
//!   another (H×W → tokens) makes the merged axis the row axis; one that splits it makes the
//!   outer part the row axis. Both read their input whole. A merge or split into rank 2 or
//!   less (the CNN head's flatten to `[1, C·H·W]`) leaves one row, as the contract's `[1, F]`.
//!
//! ## Reads
//!
//! | class | reads of an input port |
//! | --- | --- |
//! | Conv, pools | the window `(k, stride, top pad)` along H |
//! | unary, element-wise | one row (`k = 1`) when the port's row axis lines up with the output's at the same size; whole otherwise (a broadcast port such as the SE scale) |
//! | normalisations, softmax, reductions | one row when the row axis is not normalised or reduced; whole when it is |
//! | Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Expand, Tile | one row when the row axis survives in place; whole otherwise |
//! | Split, Slice along the row axis | the exact window: `k = 1`, step α, offset −start |
//! | Split, Slice, Gather along another axis | one row |
//! | Concat | one row along another axis; along the row axis, each port its own rows at its offset (whole where a constant is concatenated: a class token) |
//! | Gemm | one row when rows run along M; whole otherwise (the classifier's `[1, F]`) |
//! | MatMul `A·B` | A: one row when its row axis is not the contracted one; B: whole, or one row when rows run along a batch axis both share (Swin's windows) |
//! | Global pools, Resize, Gather along the row axis | whole |

#[cfg(test)]
use crate::op::OpKind;
use crate::op::{GatherIndex, Op, named_unary};
use crate::shape::TensorShape;
use serde::{Deserialize, Serialize};

/// How an output row of a node reads the rows of one input port.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RowRead {
    /// Output row `r` reads input rows `[stride·r − pad, stride·r − pad + k − 1]`, clipped to
    /// the tensor.
    Window {
        /// Window height (dilated kernel height; 1 for a pointwise read).
        k: u64,
        /// Step along the row axis.
        stride: u64,
        /// Offset: the top pad of a convolution, minus the first row of a slice.
        pad: i64,
    },
    /// All rows of the input, before any output row.
    Whole,
}

/// One row of the input for one row of the output.
pub const POINTWISE: RowRead = RowRead::Window {
    k: 1,
    stride: 1,
    pad: 0,
};

/// The row axis of a tensor that nothing tracks (a graph input, or an output whose input's axis
/// was lost): H (`n − 2`) for rank 4 or more, L (1) for rank 3, none (a single row) below.
pub fn default_row_axis(shape: &TensorShape) -> Option<usize> {
    match shape.rank() {
        0..=2 => None,
        3 => Some(1),
        n => Some(n - 2),
    }
}

/// Rows of `shape` along `axis` (1 without a row axis).
pub fn rows_along(shape: &TensorShape, axis: Option<usize>) -> u64 {
    axis.and_then(|a| shape.0.get(a).copied()).unwrap_or(1)
}

/// An input of [`Op::rows`]: a shape and its row axis.
#[derive(Copy, Clone, Debug)]
pub struct RowInput<'a> {
    /// The input's shape.
    pub shape: &'a TensorShape,
    /// Its row axis.
    pub axis: Option<usize>,
}

impl RowInput<'_> {
    fn rows(&self) -> u64 {
        rows_along(self.shape, self.axis)
    }
}

/// What [`Op::rows`] decides for one node: its output's row axis and each port's read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowFlow {
    /// The output's row axis.
    pub axis: Option<usize>,
    /// One read per data input port.
    pub reads: Vec<RowRead>,
}

/// The row axis of `shape` after a reshape from `input` (see the module docs), and whether
/// it survived in place.
fn reshaped(input: RowInput<'_>, out: &TensorShape) -> (Option<usize>, bool) {
    let Some(a) = input.axis else {
        return (default_row_axis(out), false);
    };
    let len = input.shape.0[a];
    if len <= 1 {
        return (default_row_axis(out), false);
    }
    let before = input.shape.0[..a]
        .iter()
        .fold(1u64, |p, &d| p.saturating_mul(d));
    let mut prefix = 1u64;
    let mut first_split = None;
    for (i, &d) in out.0.iter().enumerate() {
        let next = prefix.saturating_mul(d);
        if prefix == before && d == len {
            return (Some(i), true);
        }
        // The axis holding the row axis with others (a merge). A merge into a matrix or a
        // vector (the CNN head's `[1, C·H·W]`) is one row, as the contract's `[1, F]`.
        if prefix <= before && next >= before.saturating_mul(len) && d > len {
            return (Some(i).filter(|_| out.rank() > 2), false);
        }
        if prefix == before && d > 1 && first_split.is_none() {
            first_split = Some(i);
        }
        prefix = next;
    }
    let split = first_split.filter(|_| out.rank() > 2);
    (split.or_else(|| default_row_axis(out)), false)
}

/// `a` of a rank-`from` tensor, right-aligned into rank `to` (broadcasting).
fn aligned(a: usize, from: usize, to: usize) -> Option<usize> {
    (to >= from).then(|| a + to - from)
}

/// Reads for ops that keep rows one for one: a port reads one row when its row axis lines up
/// with the output's at the same size (or both have a single row), whole otherwise.
fn line_up(ins: &[RowInput<'_>], out: &TensorShape, axis: Option<usize>) -> Vec<RowRead> {
    let out_rows = rows_along(out, axis);
    ins.iter()
        .map(|i| {
            let lined = match (i.axis, axis) {
                (Some(a), Some(o)) => {
                    aligned(a, i.shape.rank(), out.rank()) == Some(o) && i.shape.0[a] == out.0[o]
                }
                _ => false,
            };
            if lined || (i.rows() == 1 && out_rows == 1) {
                POINTWISE
            } else {
                RowRead::Whole
            }
        })
        .collect()
}

/// The output axis of an element-wise op: that of the first port whose row axis lines up with
/// the output at full size, else the default.
fn elementwise_axis(ins: &[RowInput<'_>], out: &TensorShape) -> Option<usize> {
    ins.iter()
        .find_map(|i| {
            let a = i.axis?;
            let o = aligned(a, i.shape.rank(), out.rank())?;
            (i.shape.0[a] == out.0[o]).then_some(o)
        })
        .or_else(|| default_row_axis(out))
}

/// The row axis after removing `axes` (sorted), or `None` when it is one of them.
fn after_removal(a: usize, axes: &[u64]) -> Option<usize> {
    if axes.contains(&(a as u64)) {
        None
    } else {
        Some(a.saturating_sub(axes.iter().filter(|&&x| (x as usize) < a).count()))
    }
}

impl Op {
    /// The output's row axis and each input port's read, for inputs with these shapes and row
    /// axes and an output of shape `out`. See the module docs for the table.
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{Op, RowInput, RowRead, TensorShape, POINTWISE};
    /// // Q·Kᵀ on per-head tensors: stream query rows, hold Kᵀ whole.
    /// let q = TensorShape::new(vec![1, 4, 128, 64]);
    /// let kt = TensorShape::new(vec![1, 4, 64, 128]);
    /// let out = TensorShape::new(vec![1, 4, 128, 128]);
    /// let flow = Op::MatMul.rows(
    ///     &[RowInput { shape: &q, axis: Some(2) }, RowInput { shape: &kt, axis: Some(3) }],
    ///     &out,
    /// );
    /// assert_eq!(flow.axis, Some(2));
    /// assert_eq!(flow.reads, vec![POINTWISE, RowRead::Whole]);
    /// ```
    pub fn rows(&self, ins: &[RowInput<'_>], out: &TensorShape) -> RowFlow {
        let whole = |axis: Option<usize>| RowFlow {
            axis,
            reads: vec![RowRead::Whole; ins.len()],
        };
        let Some(&x) = ins.first() else {
            return RowFlow {
                axis: default_row_axis(out),
                reads: Vec::new(),
            };
        };
        let keep = |axis: Option<usize>| RowFlow {
            axis,
            reads: line_up(ins, out, axis),
        };
        // A layout op that carried the row axis to `axis` (moved or shifted it): one row.
        let moved = |axis: Option<usize>| match axis {
            Some(o) if x.axis.is_some() && out.0.get(o) == Some(&x.rows()) => RowFlow {
                axis,
                reads: vec![POINTWISE],
            },
            _ => keep(axis.or_else(|| default_row_axis(out))),
        };
        match self {
            Op::Conv(_) | Op::MaxPool(_) | Op::AveragePool(_) => {
                let (k, stride, pad) = match self {
                    Op::Conv(a) => (
                        a.dilation[0].max(1) * (a.kernel[0].max(1) - 1) + 1,
                        a.stride[0].max(1),
                        a.pads[0],
                    ),
                    Op::MaxPool(a) | Op::AveragePool(a) => {
                        (a.kernel[0].max(1), a.stride[0].max(1), a.pads[0])
                    }
                    _ => unreachable!("matched above"),
                };
                let read = if x.axis == Some(2) && x.shape.rank() == 4 {
                    RowRead::Window {
                        k,
                        stride,
                        pad: pad as i64,
                    }
                } else {
                    RowRead::Whole
                };
                RowFlow {
                    axis: default_row_axis(out),
                    reads: vec![read],
                }
            }
            Op::GlobalAveragePool | Op::GlobalMaxPool | Op::Resize { .. } => {
                whole(default_row_axis(out))
            }
            named_unary!()
            | Op::Unary { .. }
            | Op::Add
            | Op::Sub
            | Op::Mul
            | Op::Div
            | Op::Elementwise { .. } => keep(elementwise_axis(ins, out)),
            Op::Softmax { axis } => self.normalised(x, *axis as usize, false),
            Op::Normalize { axis, trailing, .. } => self.normalised(x, *axis as usize, *trailing),
            Op::ReduceMean { axes, keepdims } | Op::Reduce { axes, keepdims, .. } => match x.axis {
                Some(a) if axes.contains(&(a as u64)) => {
                    whole(if *keepdims { Some(a) } else { None }.or(default_row_axis(out)))
                }
                // Reducing other axes carries the row axis over, shifted when dims go.
                Some(a) => moved(if *keepdims {
                    Some(a)
                } else {
                    after_removal(a, axes)
                }),
                None => keep(default_row_axis(out)),
            },
            // A reshape that does not keep the row axis reads whole, even when nothing streams
            // on either side (the CNN head's Flatten, as the contract says).
            Op::Reshape | Op::Flatten { .. } => match reshaped(x, out) {
                (axis, true) => moved(axis),
                (axis, false) => whole(axis),
            },
            Op::Transpose { perm } => moved(
                x.axis
                    .and_then(|a| perm.iter().position(|&p| p as usize == a)),
            ),
            Op::Squeeze { axes } => moved(x.axis.and_then(|a| after_removal(a, axes))),
            Op::Unsqueeze { axes } => {
                let o = x.axis.and_then(|a| {
                    (0..out.rank())
                        .filter(|i| !axes.contains(&(*i as u64)))
                        .nth(a)
                });
                moved(o)
            }
            Op::Split { axis, start, .. } => self.sliced(x, out, &[(*axis as usize, *start, 1)]),
            Op::Slice {
                axes,
                starts,
                steps,
                ..
            } => {
                let cuts: Vec<(usize, u64, u64)> = axes
                    .iter()
                    .zip(starts)
                    .zip(steps)
                    .map(|((&a, &s), &st)| (a as usize, s, st))
                    .collect();
                self.sliced(x, out, &cuts)
            }
            Op::Concat { axis, constant } => {
                let axis = *axis as usize;
                let along = |i: &RowInput<'_>| i.axis == Some(axis);
                // A port of one entry along the axis (a decode step's new key, whose own row
                // axis is another) adds one row, read whole.
                let single = |i: &RowInput<'_>| i.shape.0.get(axis) == Some(&1);
                if *constant == 0
                    && ins.iter().any(along)
                    && ins.iter().all(|i| along(i) || single(i))
                {
                    // Along the row axis: output row r is row r − offset of the port that
                    // holds it, so each port streams its own rows (a key cache's concat).
                    let mut offset = 0u64;
                    let reads = ins
                        .iter()
                        .map(|i| {
                            let pad = offset as i64;
                            offset =
                                offset.saturating_add(i.shape.0.get(axis).copied().unwrap_or(1));
                            if along(i) {
                                RowRead::Window {
                                    k: 1,
                                    stride: 1,
                                    pad,
                                }
                            } else {
                                RowRead::Whole
                            }
                        })
                        .collect();
                    RowFlow {
                        axis: Some(axis),
                        reads,
                    }
                } else if x.axis == Some(axis) {
                    whole(x.axis)
                } else {
                    keep(x.axis.or_else(|| default_row_axis(out)))
                }
            }
            Op::Gather { axis, index } => {
                let axis = *axis as usize;
                match (index, x.axis) {
                    (GatherIndex::Constant { .. }, Some(a)) if a == axis => {
                        whole(default_row_axis(out))
                    }
                    (GatherIndex::Constant { dims }, Some(a)) => {
                        let o = if a < axis {
                            a
                        } else {
                            (a + dims.len()).saturating_sub(1)
                        };
                        moved(Some(o))
                    }
                    // Token ids index the table: a row of ids gives a row of embeddings.
                    // Ids without a row axis ([1, L]) are one row, read whole.
                    (GatherIndex::Table { .. }, Some(a)) => moved(Some(a)),
                    (GatherIndex::Table { .. }, None) => whole(default_row_axis(out)),
                    (GatherIndex::Constant { .. }, None) => keep(default_row_axis(out)),
                }
            }
            Op::Expand { .. } | Op::Tile { .. } | Op::Pad { .. } => {
                let o = x
                    .axis
                    .and_then(|a| aligned(a, x.shape.rank(), out.rank()))
                    .or_else(|| default_row_axis(out));
                let mut flow = keep(o);
                if let (Op::Pad { pads, mirrored }, Some(a)) = (self, x.axis) {
                    let r = x.shape.rank();
                    if pads.len() == 2 * r {
                        let (top, bottom) = (pads[a], pads[a + r]);
                        let grown = x.shape.0[a].saturating_add(top).saturating_add(bottom);
                        if top.saturating_add(bottom) > 0 && o.is_some_and(|o| out.0[o] == grown) {
                            // A mirrored pad row at position p = r − top (p < 0) copies row
                            // −p (reflect) or 0 (edge), and one below the bottom copies a row as
                            // far inside: a window reaching 2·max(top, bottom) rows both ways
                            // covers every copy (safe, wider than the interior needs).
                            let reach = if *mirrored { 2 * top.max(bottom) } else { 0 };
                            flow.reads[0] = RowRead::Window {
                                k: 2 * reach + 1,
                                stride: 1,
                                pad: top.saturating_add(reach) as i64,
                            };
                        }
                    }
                }
                flow
            }
            Op::Gemm { .. } => {
                if x.axis == Some(0) && x.shape.rank() == 2 && x.rows() > 1 {
                    RowFlow {
                        axis: Some(0),
                        reads: vec![POINTWISE],
                    }
                } else {
                    whole(default_row_axis(out))
                }
            }
            Op::MatMul => {
                let ra = x.shape.rank();
                let o = x
                    .axis
                    .filter(|&a| a + 1 < ra)
                    .and_then(|a| aligned(a, ra, out.rank()));
                let Some(o) = o else {
                    return whole(default_row_axis(out));
                };
                let mut reads = vec![POINTWISE];
                if let Some(b) = ins.get(1) {
                    let rb = b.shape.rank();
                    let batch = b
                        .axis
                        .filter(|&a| a + 2 < rb && o + 2 < out.rank())
                        .and_then(|a| aligned(a, rb, out.rank()))
                        == Some(o)
                        && b.rows() == out.0[o];
                    reads.push(if batch { POINTWISE } else { RowRead::Whole });
                }
                if x.shape.0[x.axis.unwrap_or(0)] != out.0[o] {
                    reads[0] = RowRead::Whole;
                }
                RowFlow {
                    axis: Some(o),
                    reads,
                }
            }
        }
    }

    /// Normalisations over `axis` (and, with `trailing`, every axis after it).
    fn normalised(&self, x: RowInput<'_>, axis: usize, trailing: bool) -> RowFlow {
        let over = match x.axis {
            Some(a) => a == axis || (trailing && a >= axis),
            None => false,
        };
        RowFlow {
            axis: x.axis,
            reads: vec![if over { RowRead::Whole } else { POINTWISE }],
        }
    }

    /// Split and Slice: `(axis, start, step)` cuts; the exact window along the row axis.
    fn sliced(&self, x: RowInput<'_>, out: &TensorShape, cuts: &[(usize, u64, u64)]) -> RowFlow {
        let Some(a) = x.axis else {
            return RowFlow {
                axis: default_row_axis(out).filter(|&o| out.0[o] == 1),
                reads: vec![POINTWISE],
            };
        };
        let read = match cuts.iter().find(|c| c.0 == a) {
            Some(&(_, start, step)) => RowRead::Window {
                k: 1,
                stride: step.max(1),
                pad: -(start as i64),
            },
            None => POINTWISE,
        };
        RowFlow {
            axis: Some(a),
            reads: vec![read],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inp(shape: &TensorShape, axis: Option<usize>) -> RowInput<'_> {
        RowInput { shape, axis }
    }

    #[test]
    fn reshapes_track_keep_merge_and_split() {
        let t = TensorShape::new(vec![1, 128, 256]);
        // Heads: [1, L, D] -> [1, L, h, d] keeps L.
        let heads = TensorShape::new(vec![1, 128, 4, 64]);
        assert_eq!(reshaped(inp(&t, Some(1)), &heads), (Some(1), true));
        // GPT-2's Conv1D: [1, L, D] -> [L, D] keeps L.
        let flat = TensorShape::new(vec![128, 256]);
        assert_eq!(reshaped(inp(&t, Some(1)), &flat), (Some(0), true));
        // ViT's patches: [1, C, 14, 14] -> [1, C, 196] merges H into tokens.
        let img = TensorShape::nchw(192, 14, 14);
        let tok = TensorShape::new(vec![1, 192, 196]);
        assert_eq!(reshaped(inp(&img, Some(2)), &tok), (Some(2), false));
        // A split of L: [1, 128, 256] -> [1, 8, 16, 256].
        let win = TensorShape::new(vec![1, 8, 16, 256]);
        assert_eq!(reshaped(inp(&t, Some(1)), &win), (Some(1), false));
        // The CNN head: [1, 512, 1, 1] -> [1, 512] has no rows to track, and VGG's
        // [1, 512, 7, 7] -> [1, 25088] is one row, as the contract's [1, F].
        let head = TensorShape::nchw(512, 1, 1);
        assert_eq!(
            reshaped(inp(&head, Some(2)), &TensorShape::new(vec![1, 512])),
            (None, false)
        );
        let vgg = TensorShape::nchw(512, 7, 7);
        assert_eq!(
            reshaped(inp(&vgg, Some(2)), &TensorShape::new(vec![1, 25088])),
            (None, false)
        );
    }

    #[test]
    fn attention_streams_queries_and_holds_keys() {
        let kt = TensorShape::new(vec![1, 128, 4, 64]);
        let t = Op::Transpose {
            perm: vec![0, 2, 3, 1],
        };
        let out = TensorShape::new(vec![1, 4, 64, 128]);
        let flow = t.rows(&[inp(&kt, Some(1))], &out);
        assert_eq!(
            flow,
            RowFlow {
                axis: Some(3),
                reads: vec![POINTWISE]
            }
        );
        // Softmax over the key axis is row-wise; over the query axis it is whole.
        let s = TensorShape::new(vec![1, 4, 128, 128]);
        let soft = Op::Softmax { axis: 3 }.rows(&[inp(&s, Some(2))], &s);
        assert_eq!(soft.reads, vec![POINTWISE]);
        let soft = Op::Softmax { axis: 2 }.rows(&[inp(&s, Some(2))], &s);
        assert_eq!(soft.reads, vec![RowRead::Whole]);
        // LayerNormalization over the channels of a channels-last ConvNeXt tensor.
        let cl = TensorShape::new(vec![1, 56, 56, 40]);
        let ln = Op::normalize(OpKind::LayerNormalization, 3);
        assert_eq!(ln.rows(&[inp(&cl, Some(1))], &cl).reads, vec![POINTWISE]);
        // GroupNormalization on [N, C, L] rows along C: a group spans channels, read whole.
        let seq = TensorShape::new(vec![1, 64, 100]);
        let gn = Op::normalize(OpKind::GroupNormalization, 2);
        assert_eq!(
            gn.rows(&[inp(&seq, Some(1))], &seq).reads,
            vec![RowRead::Whole]
        );
        // Softmax over axis 1 of a rank-4 tensor before opset 13 covers every later axis.
        let coerced = Op::Normalize {
            kind: OpKind::Softmax,
            axis: 1,
            trailing: true,
        };
        assert_eq!(
            coerced.rows(&[inp(&s, Some(2))], &s).reads,
            vec![RowRead::Whole]
        );
    }

    #[test]
    fn slices_along_rows_are_exact_windows() {
        let t = TensorShape::new(vec![1, 197, 192]);
        let s = Op::Slice {
            axes: vec![1],
            starts: vec![1],
            ends: vec![197],
            steps: vec![2],
        };
        let out = TensorShape::new(vec![1, 98, 192]);
        assert_eq!(
            s.rows(&[inp(&t, Some(1))], &out).reads,
            vec![RowRead::Window {
                k: 1,
                stride: 2,
                pad: -1
            }]
        );
        // Along channels: one row.
        let c = Op::Split {
            axis: 2,
            start: 64,
            len: 64,
        };
        let out = TensorShape::new(vec![1, 197, 64]);
        assert_eq!(c.rows(&[inp(&t, Some(1))], &out).reads, vec![POINTWISE]);
        // A reflect pad of 2 rows on top, 1 below: output row 0 copies input row 2, so the
        // window reaches 4 rows both ways.
        let x = TensorShape::nchw(4, 8, 8);
        let pad = Op::Pad {
            pads: vec![0, 0, 2, 0, 0, 0, 1, 0],
            mirrored: true,
        };
        let out = TensorShape::nchw(4, 11, 8);
        assert_eq!(
            pad.rows(&[inp(&x, Some(2))], &out).reads,
            vec![RowRead::Window {
                k: 9,
                stride: 1,
                pad: 6
            }]
        );
        // The SE scale broadcast over H is read whole.
        let x = TensorShape::nchw(8, 16, 16);
        let se = TensorShape::nchw(8, 1, 1);
        let flow = Op::Mul.rows(&[inp(&se, Some(2)), inp(&x, Some(2))], &x);
        assert_eq!(flow.axis, Some(2));
        assert_eq!(flow.reads, vec![RowRead::Whole, POINTWISE]);
    }

    #[test]
    fn shapes_that_contradict_their_op_do_not_panic() {
        // A Transpose whose recorded output lost an axis (a corrupt file): the row rule
        // answers, and the graph's shape check names the node.
        let x = TensorShape::new(vec![1, 8, 4, 2]);
        let t = Op::Transpose {
            perm: vec![0, 3, 1, 2],
        };
        let out = TensorShape::new(vec![1, 2]);
        let flow = t.rows(&[inp(&x, Some(2))], &out);
        assert_eq!(flow.reads.len(), 1);
        let mut b = crate::GraphBuilder::new("bad");
        let i = b.input("x", x).unwrap();
        b.node_with("t", t, &[i], out, 0).unwrap();
        let g = b.finish().unwrap();
        assert!(g.row_axis(crate::Source::Node(crate::NodeId(0))).is_none());
        assert!(g.check_shapes().is_err());
    }

    #[test]
    fn reductions_and_gathers_off_the_row_axis_read_one_row() {
        // [1, L, D] -> [1, L] (mean over D, keepdims 0): one row per row.
        let t = TensorShape::new(vec![1, 128, 256]);
        let mean = Op::ReduceMean {
            axes: vec![2],
            keepdims: false,
        };
        let flow = mean.rows(&[inp(&t, Some(1))], &TensorShape::new(vec![1, 128]));
        assert_eq!(
            flow,
            RowFlow {
                axis: Some(1),
                reads: vec![POINTWISE]
            }
        );
        // Gathering one channel of [1, L, D] by a scalar index keeps the tokens.
        let g = Op::Gather {
            axis: 2,
            index: GatherIndex::Constant { dims: vec![] },
        };
        let flow = g.rows(&[inp(&t, Some(1))], &TensorShape::new(vec![1, 128]));
        assert_eq!(
            flow,
            RowFlow {
                axis: Some(1),
                reads: vec![POINTWISE]
            }
        );
    }
}
