//! Op kinds, with the attributes that change shapes, and their shape rules.
//!
//! The IR keeps ONNX-level ops: a `Relu` is a `Relu`, not tract's `Max`, and a
//! `GlobalAveragePool` is not a reduction plus a division. Only attributes that decide an output
//! shape (or, for the cost models, which input rows an output row reads) are kept; values such as
//! Clip bounds or HardSigmoid slopes change nothing a fusion planner reads.
//!
//! [`Op::infer_shape`] is the one shape rule of the project: the zoo builds graphs with it, and
//! [`Graph::check_shapes`](crate::Graph::check_shapes) holds imported graphs to it.
//!
//! The parts: [`OpKind`] and [`OpClass`] come from one table in `kind.rs`; the attribute
//! structs of the ops that have several ([`ConvAttrs`], [`PoolAttrs`], [`GatherIndex`]) are in
//! `attrs.rs`; the dimension arithmetic the shape rule is made of (windows, reductions,
//! broadcasting) is in `arith.rs`. This file has [`Op`] itself, its shape rule and its default
//! weights; the three others are leaves that read nothing of it.

mod arith;
mod attrs;
mod kind;

use crate::shape::TensorShape;
use arith::{broadcast, reduced, strictly_sorted, windows_hw};
use serde::{Deserialize, Serialize};
use std::fmt;

pub use attrs::{ConvAttrs, GatherIndex, PoolAttrs};
pub use kind::{OpClass, OpKind};

/// One primitive ONNX op, with its shape-relevant attributes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "op")]
pub enum Op {
    /// 2-D convolution.
    Conv(ConvAttrs),
    /// Max pooling over a window.
    MaxPool(PoolAttrs),
    /// Average pooling over a window.
    AveragePool(PoolAttrs),
    /// Average over all of H and W.
    GlobalAveragePool,
    /// Max over all of H and W.
    GlobalMaxPool,
    /// `max(x, 0)`.
    Relu,
    /// Clamp to `[min, max]` (ReLU6 in MobileNetV2).
    Clip,
    /// Logistic sigmoid.
    Sigmoid,
    /// Piecewise-linear sigmoid.
    HardSigmoid,
    /// `x · HardSigmoid(x)`.
    HardSwish,
    /// Hyperbolic tangent.
    Tanh,
    /// Elementwise sum, with broadcasting.
    Add,
    /// Elementwise difference, with broadcasting.
    Sub,
    /// Elementwise product, with broadcasting (the SE scale).
    Mul,
    /// Elementwise quotient, with broadcasting.
    Div,
    /// Concatenation along `axis`.
    Concat {
        /// The axis, non-negative.
        axis: u64,
        /// Extent along `axis` contributed by constant inputs (a ViT's class token), which
        /// are not data inputs; 0 (and absent from the JSON) for the CNNs.
        #[serde(default, skip_serializing_if = "is_zero")]
        constant: u64,
    },
    /// Flatten to 2-D at `axis`.
    Flatten {
        /// The axis, non-negative.
        axis: u64,
    },
    /// Fully connected layer (`Y = X·Wᵀ + b`).
    Gemm {
        /// Output features.
        out_features: u64,
    },
    /// Matrix product; the output shape is recorded on the node.
    MatMul,
    /// Batch normalisation (inference form).
    BatchNormalization,
    /// Padding.
    Pad {
        /// Padding, ONNX order: all begins, then all ends.
        pads: Vec<u64>,
        /// `reflect` or `edge` mode: a padded row copies a row inside the tensor, not a
        /// constant (absent from the JSON for constant padding, so CNN fingerprints stay).
        #[serde(default, skip_serializing_if = "is_false")]
        mirrored: bool,
    },
    /// Mean over `axes`.
    ReduceMean {
        /// The axes, non-negative.
        axes: Vec<u64>,
        /// Whether reduced axes stay as size 1.
        keepdims: bool,
    },
    /// Resampling; the output shape is recorded on the node.
    Resize {
        /// `nearest`, `linear` or `cubic`.
        mode: String,
    },
    /// Reshape; the output shape is recorded on the node.
    Reshape,
    /// Axis permutation.
    Transpose {
        /// The permutation.
        perm: Vec<u64>,
    },
    /// Softmax along `axis`.
    Softmax {
        /// The axis, non-negative.
        axis: u64,
    },
    /// Element-wise unary math of class [`OpClass::Unary`] (Erf, Sqrt, Exp, Cast, ...): the
    /// kind says which; nothing else changes a shape.
    Unary {
        /// Which function.
        kind: OpKind,
    },
    /// Element-wise op of class [`OpClass::Elementwise`] over up to three broadcast inputs
    /// (Pow, Max, Min, Where, comparisons, ...), beyond Add/Sub/Mul/Div.
    Elementwise {
        /// Which function.
        kind: OpKind,
    },
    /// A reduction of class [`OpClass::Reduce`] other than ReduceMean (ReduceSum, ReduceMax,
    /// ...).
    Reduce {
        /// Which reduction.
        kind: OpKind,
        /// The axes, non-negative, sorted.
        axes: Vec<u64>,
        /// Whether reduced axes stay as size 1.
        keepdims: bool,
    },
    /// A normalisation of class [`OpClass::Normalize`] over `axis`, or with `trailing` over
    /// every axis from `axis` on: LayerNormalization and RMSNormalization (trailing),
    /// InstanceNormalization (trailing from 2), GroupNormalization (trailing from 1: a group
    /// spans channels), LogSoftmax and LpNormalization (one axis), and Softmax or LogSoftmax
    /// before opset 13 (trailing: the input is coerced to 2-D at `axis`). Build one with
    /// [`Op::normalize`].
    Normalize {
        /// Which normalisation.
        kind: OpKind,
        /// The first (or only) normalised axis, non-negative.
        axis: u64,
        /// Whether every axis from `axis` on is normalised.
        trailing: bool,
    },
    /// Removes the size-1 `axes`.
    Squeeze {
        /// The axes, non-negative, sorted.
        axes: Vec<u64>,
    },
    /// Inserts size-1 axes at `axes` (positions in the output).
    Unsqueeze {
        /// The axes, non-negative, sorted.
        axes: Vec<u64>,
    },
    /// One output of an ONNX `Split`: `len` entries from `start` along `axis`. A Split with k
    /// outputs imports as k nodes (see the importer), each a tensor of its own.
    Split {
        /// The axis, non-negative.
        axis: u64,
        /// First entry taken.
        start: u64,
        /// Entries taken.
        len: u64,
    },
    /// Strided slices along `axes` (steps positive; starts and ends normalised and clamped).
    Slice {
        /// The axes, non-negative.
        axes: Vec<u64>,
        /// First entry per axis.
        starts: Vec<u64>,
        /// One past the last entry per axis.
        ends: Vec<u64>,
        /// Step per axis (at least 1).
        steps: Vec<u64>,
    },
    /// `Gather` along `axis`: either constant indices into a data tensor, or data indices
    /// (token ids) into a constant table, whose elements are the node's weights.
    Gather {
        /// The axis, non-negative.
        axis: u64,
        /// Which operand is the data.
        index: GatherIndex,
    },
    /// Broadcast to `target` (not `shape`, which a node's JSON already has).
    Expand {
        /// The target shape (broadcast with the input's).
        target: Vec<u64>,
    },
    /// Repeats the input `repeats` times along each axis.
    Tile {
        /// Repeats per axis.
        repeats: Vec<u64>,
    },
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_false(v: &bool) -> bool {
    !*v
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())
    }
}

/// The pattern of the unary ops (class [`OpClass::Unary`]) that have a variant of their own
/// rather than [`Op::Unary`]; `infer_shape` and the row rule match them alike.
macro_rules! named_unary {
    () => {
        Op::Relu
            | Op::Clip
            | Op::Sigmoid
            | Op::HardSigmoid
            | Op::HardSwish
            | Op::Tanh
            | Op::BatchNormalization
    };
}
pub(crate) use named_unary;

/// Refuses a generic variant ([`Op::Unary`], ...) given a kind of another class.
fn need_class(kind: OpKind, class: OpClass) -> Result<(), String> {
    if kind.class() == class {
        Ok(())
    } else {
        Err(format!("{kind} is not of class {class:?}"))
    }
}

impl Op {
    /// A normalisation of `kind` at `axis`, trailing as the kind is (see [`Op::Normalize`]).
    pub fn normalize(kind: OpKind, axis: u64) -> Op {
        let (axis, trailing) = match kind {
            OpKind::GroupNormalization => (1, true),
            OpKind::InstanceNormalization => (2, true),
            k => (axis, k.normalizes_trailing_axes()),
        };
        Op::Normalize {
            kind,
            axis,
            trailing,
        }
    }

    /// Constant padding.
    pub fn pad(pads: Vec<u64>) -> Op {
        Op::Pad {
            pads,
            mirrored: false,
        }
    }

    /// Concatenation of data inputs along `axis` (no constant part).
    pub fn concat(axis: u64) -> Op {
        Op::Concat { axis, constant: 0 }
    }

    /// The attribute-free kind.
    pub fn kind(&self) -> OpKind {
        match self {
            Op::Conv(_) => OpKind::Conv,
            Op::MaxPool(_) => OpKind::MaxPool,
            Op::AveragePool(_) => OpKind::AveragePool,
            Op::GlobalAveragePool => OpKind::GlobalAveragePool,
            Op::GlobalMaxPool => OpKind::GlobalMaxPool,
            Op::Relu => OpKind::Relu,
            Op::Clip => OpKind::Clip,
            Op::Sigmoid => OpKind::Sigmoid,
            Op::HardSigmoid => OpKind::HardSigmoid,
            Op::HardSwish => OpKind::HardSwish,
            Op::Tanh => OpKind::Tanh,
            Op::Add => OpKind::Add,
            Op::Sub => OpKind::Sub,
            Op::Mul => OpKind::Mul,
            Op::Div => OpKind::Div,
            Op::Concat { .. } => OpKind::Concat,
            Op::Flatten { .. } => OpKind::Flatten,
            Op::Gemm { .. } => OpKind::Gemm,
            Op::MatMul => OpKind::MatMul,
            Op::BatchNormalization => OpKind::BatchNormalization,
            Op::Pad { .. } => OpKind::Pad,
            Op::ReduceMean { .. } => OpKind::ReduceMean,
            Op::Resize { .. } => OpKind::Resize,
            Op::Reshape => OpKind::Reshape,
            Op::Transpose { .. } => OpKind::Transpose,
            Op::Softmax { .. } => OpKind::Softmax,
            Op::Unary { kind }
            | Op::Elementwise { kind }
            | Op::Reduce { kind, .. }
            | Op::Normalize { kind, .. } => *kind,
            Op::Squeeze { .. } => OpKind::Squeeze,
            Op::Unsqueeze { .. } => OpKind::Unsqueeze,
            Op::Split { .. } => OpKind::Split,
            Op::Slice { .. } => OpKind::Slice,
            Op::Gather { .. } => OpKind::Gather,
            Op::Expand { .. } => OpKind::Expand,
            Op::Tile { .. } => OpKind::Tile,
        }
    }

    /// How many data inputs (tensors that depend on the model input) the op takes: `(min, max)`.
    pub fn arity(&self) -> (usize, usize) {
        match self {
            Op::Add | Op::Sub | Op::Mul | Op::Div => (1, 2),
            Op::Elementwise { .. } => (1, 3),
            Op::MatMul => (1, 2),
            Op::Concat { .. } => (1, usize::MAX),
            _ => (1, 1),
        }
    }

    /// The output shape for these input shapes.
    ///
    /// Returns `Ok(None)` for ops whose output shape depends on constant inputs the IR does not
    /// keep (`MatMul` with a weight, `Reshape`, `Resize`): such nodes record their shape. A
    /// broadcasting element-wise op gets its data inputs' broadcast, which a constant operand
    /// may widen ([`Op::widened_by_constants`]).
    ///
    /// # Errors
    /// A message saying why the inputs do not fit the op.
    pub fn infer_shape(&self, inputs: &[&TensorShape]) -> Result<Option<TensorShape>, String> {
        let (lo, hi) = self.arity();
        if inputs.len() < lo || inputs.len() > hi {
            return Err(format!(
                "takes {lo} to {hi} data inputs, got {}",
                inputs.len()
            ));
        }
        let x = inputs[0];
        let need_rank4 = || -> Result<(), String> {
            if x.rank() == 4 {
                Ok(())
            } else {
                Err(format!("needs an NCHW input, got {x}"))
            }
        };
        let shape = match self {
            Op::Conv(a) => {
                need_rank4()?;
                if a.group == 0
                    || !x.0[1].is_multiple_of(a.group)
                    || !a.out_channels.is_multiple_of(a.group)
                {
                    return Err(format!(
                        "{} input channels do not split into {} groups",
                        x.0[1], a.group
                    ));
                }
                match windows_hw(x, a.kernel, a.stride, a.pads, a.dilation, false) {
                    Some((h, w)) => TensorShape(vec![x.0[0], a.out_channels, h, w]),
                    None => return Err(format!("kernel larger than the padded input {x}")),
                }
            }
            Op::MaxPool(a) | Op::AveragePool(a) => {
                need_rank4()?;
                match windows_hw(x, a.kernel, a.stride, a.pads, [1, 1], a.ceil_mode) {
                    Some((h, w)) => TensorShape(vec![x.0[0], x.0[1], h, w]),
                    None => return Err(format!("window larger than the padded input {x}")),
                }
            }
            Op::GlobalAveragePool | Op::GlobalMaxPool => {
                if x.rank() < 3 {
                    return Err(format!("needs a spatial input, got {x}"));
                }
                let mut d = x.0.clone();
                for v in d.iter_mut().skip(2) {
                    *v = 1;
                }
                TensorShape(d)
            }
            named_unary!() => x.clone(),
            Op::Softmax { axis } => {
                if *axis as usize >= x.rank() {
                    return Err(format!("axis {axis} out of range for {x}"));
                }
                x.clone()
            }
            Op::Add | Op::Sub | Op::Mul | Op::Div => {
                if inputs.len() == 1 {
                    x.clone()
                } else {
                    broadcast(inputs[0], inputs[1]).ok_or_else(|| {
                        format!("{} and {} do not broadcast", inputs[0], inputs[1])
                    })?
                }
            }
            Op::Concat { axis, constant } => {
                let axis = *axis as usize;
                if axis >= x.rank() {
                    return Err(format!("axis {axis} out of range for {x}"));
                }
                let mut d = x.0.clone();
                d[axis] += constant;
                for s in &inputs[1..] {
                    let same = s.rank() == x.rank()
                        && (0..x.rank()).all(|i| i == axis || s.0[i] == x.0[i]);
                    if !same {
                        return Err(format!("cannot concatenate {x} and {s} on axis {axis}"));
                    }
                    d[axis] += s.0[axis];
                }
                TensorShape(d)
            }
            Op::Flatten { axis } => {
                let axis = *axis as usize;
                if axis > x.rank() {
                    return Err(format!("axis {axis} out of range for {x}"));
                }
                TensorShape(vec![
                    x.0[..axis].iter().product(),
                    x.0[axis..].iter().product(),
                ])
            }
            Op::Gemm { out_features } => {
                if x.rank() != 2 {
                    return Err(format!("needs a 2-D input, got {x}"));
                }
                TensorShape(vec![x.0[0], *out_features])
            }
            Op::Pad { pads, .. } => {
                if pads.len() != 2 * x.rank() {
                    return Err(format!("{} pads for a rank-{} input", pads.len(), x.rank()));
                }
                let r = x.rank();
                let dims = (0..r)
                    .map(|i| x.0[i].checked_add(pads[i])?.checked_add(pads[i + r]))
                    .collect::<Option<Vec<u64>>>()
                    .ok_or_else(|| format!("pads {pads:?} overflow {x}"))?;
                TensorShape(dims)
            }
            Op::ReduceMean { axes, keepdims } => reduced(x, axes, *keepdims)?,
            Op::Transpose { perm } => {
                let mut seen = perm.clone();
                seen.sort_unstable();
                if seen != (0..x.rank() as u64).collect::<Vec<_>>() {
                    return Err(format!("{perm:?} is not a permutation of {x}'s axes"));
                }
                TensorShape(perm.iter().map(|&p| x.0[p as usize]).collect())
            }
            Op::MatMul if inputs.len() == 2 => {
                let (a, b) = (inputs[0], inputs[1]);
                if a.rank() < 2 || b.rank() < 2 || a.0[a.rank() - 1] != b.0[b.rank() - 2] {
                    return Err(format!("cannot multiply {a} by {b}"));
                }
                let batch_a = TensorShape(a.0[..a.rank() - 2].to_vec());
                let batch_b = TensorShape(b.0[..b.rank() - 2].to_vec());
                let mut d = broadcast(&batch_a, &batch_b)
                    .ok_or_else(|| format!("batch dims of {a} and {b} do not broadcast"))?
                    .0;
                d.push(a.0[a.rank() - 2]);
                d.push(b.0[b.rank() - 1]);
                TensorShape(d)
            }
            Op::MatMul | Op::Reshape | Op::Resize { .. } => return Ok(None),
            Op::Unary { kind } => {
                need_class(*kind, OpClass::Unary)?;
                x.clone()
            }
            Op::Elementwise { kind } => {
                need_class(*kind, OpClass::Elementwise)?;
                let mut s = x.clone();
                for other in &inputs[1..] {
                    s = broadcast(&s, other)
                        .ok_or_else(|| format!("{s} and {other} do not broadcast"))?;
                }
                s
            }
            Op::Reduce {
                kind,
                axes,
                keepdims,
            } => {
                need_class(*kind, OpClass::Reduce)?;
                reduced(x, axes, *keepdims)?
            }
            Op::Normalize { kind, axis, .. } => {
                need_class(*kind, OpClass::Normalize)?;
                if *axis as usize >= x.rank() {
                    return Err(format!("axis {axis} out of range for {x}"));
                }
                x.clone()
            }
            Op::Squeeze { axes } => {
                if !strictly_sorted(axes) || axes.iter().any(|&a| x.0.get(a as usize) != Some(&1)) {
                    return Err(format!("cannot squeeze axes {axes:?} of {x}"));
                }
                TensorShape(
                    (0..x.rank())
                        .filter(|&i| !axes.contains(&(i as u64)))
                        .map(|i| x.0[i])
                        .collect(),
                )
            }
            Op::Unsqueeze { axes } => {
                let rank = x.rank() + axes.len();
                if !strictly_sorted(axes) || axes.iter().any(|&a| a as usize >= rank) {
                    return Err(format!("cannot unsqueeze {x} at {axes:?}"));
                }
                let mut rest = x.0.iter();
                TensorShape(
                    (0..rank)
                        .map(|i| {
                            if axes.contains(&(i as u64)) {
                                Some(1)
                            } else {
                                rest.next().copied()
                            }
                        })
                        .collect::<Option<Vec<u64>>>()
                        .ok_or_else(|| format!("cannot unsqueeze {x} at {axes:?}"))?,
                )
            }
            Op::Split { axis, start, len } => {
                let a = *axis as usize;
                if a >= x.rank() || start.checked_add(*len).is_none_or(|e| e > x.0[a]) {
                    return Err(format!(
                        "part [{start}, +{len}) on axis {axis} does not fit {x}"
                    ));
                }
                let mut d = x.0.clone();
                d[a] = *len;
                TensorShape(d)
            }
            Op::Slice {
                axes,
                starts,
                ends,
                steps,
            } => {
                let n = axes.len();
                if starts.len() != n || ends.len() != n || steps.len() != n {
                    return Err("slice attributes of different lengths".into());
                }
                let mut seen = axes.clone();
                seen.sort_unstable();
                if !strictly_sorted(&seen) {
                    return Err(format!("slice axes {axes:?} repeat"));
                }
                let mut d = x.0.clone();
                for i in 0..n {
                    let a = axes[i] as usize;
                    if a >= x.rank() || steps[i] == 0 || ends[i] > x.0[a] || starts[i] > ends[i] {
                        return Err(format!(
                            "slice [{}, {}) step {} on axis {} does not fit {x}",
                            starts[i], ends[i], steps[i], axes[i]
                        ));
                    }
                    d[a] = (ends[i] - starts[i]).div_ceil(steps[i]);
                }
                TensorShape(d)
            }
            Op::Gather { axis, index } => {
                let a = *axis as usize;
                let (data, ix): (&[u64], &[u64]) = match index {
                    GatherIndex::Constant { dims } => (&x.0, dims),
                    GatherIndex::Table { dims } => (dims, &x.0),
                };
                if a >= data.len() {
                    return Err(format!("axis {axis} out of range for {data:?}"));
                }
                let mut d = data[..a].to_vec();
                d.extend_from_slice(ix);
                d.extend_from_slice(&data[a + 1..]);
                TensorShape(d)
            }
            Op::Expand { target } => broadcast(x, &TensorShape(target.clone()))
                .ok_or_else(|| format!("{x} does not expand to {target:?}"))?,
            Op::Tile { repeats } => {
                if repeats.len() != x.rank() {
                    return Err(format!("{} repeats for {x}", repeats.len()));
                }
                let dims = x.0.iter().zip(repeats).map(|(d, r)| d.checked_mul(*r));
                TensorShape(
                    dims.collect::<Option<Vec<u64>>>()
                        .ok_or_else(|| format!("repeats {repeats:?} overflow {x}"))?,
                )
            }
        };
        Ok(Some(shape))
    }

    /// Whether `recorded` is what this broadcasting element-wise op (Add, Sub, Mul, Div, or an
    /// [`Op::Elementwise`]) gives when its constant operands, `weights` elements in all, widen
    /// its data inputs' broadcast `inferred` ([`Op::infer_shape`]). The IR keeps a constant
    /// operand's element count, not its shape, so the rule asks what a constant could do:
    /// `inferred` must broadcast to `recorded` (it grows only where an axis of `inferred` is 1
    /// or missing), and the constants must hold at least the product of the axes it grows
    /// along. Rotary embeddings need this: `position_ids[..., None] · inv_freq` is
    /// `[1, 1, 1] · [32] = [1, 1, 32]` when the position ids are a `[1, 1]` graph input.
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{Op, TensorShape};
    /// let ids = TensorShape::new(vec![1, 1, 1]);
    /// let freqs = TensorShape::new(vec![1, 1, 32]);
    /// assert!(Op::Mul.widened_by_constants(&ids, &freqs, 32));
    /// // 16 constant elements cannot widen an axis to 32; ReLU has no constant operand.
    /// assert!(!Op::Mul.widened_by_constants(&ids, &freqs, 16));
    /// assert!(!Op::Relu.widened_by_constants(&ids, &freqs, 32));
    /// ```
    pub fn widened_by_constants(
        &self,
        inferred: &TensorShape,
        recorded: &TensorShape,
        weights: u64,
    ) -> bool {
        let broadcasting = matches!(
            self,
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Elementwise { .. }
        );
        if !broadcasting || broadcast(inferred, recorded).as_ref() != Some(recorded) {
            return false;
        }
        let extra = recorded.rank() - inferred.rank();
        recorded
            .0
            .iter()
            .enumerate()
            .map(|(i, &d)| {
                let before = i.checked_sub(extra).map_or(1, |j| inferred.0[j]);
                if before == d { 1 } else { d }
            })
            .try_fold(1u64, u64::checked_mul)
            .is_some_and(|need| weights >= need)
    }

    /// The weight elements (bias included) the op carries by default for this input shape, as
    /// the torchvision exports have them: convolutions and Gemm with a bias, nothing for the rest.
    pub fn default_weights(&self, input: &TensorShape) -> u64 {
        match self {
            Op::Conv(a) => a.weight_elements(input.0.get(1).copied().unwrap_or(0), true),
            Op::Gemm { out_features } => {
                let inf = input.0.last().copied().unwrap_or(0);
                inf * out_features + out_features
            }
            Op::BatchNormalization => 4 * input.0.get(1).copied().unwrap_or(0),
            Op::Normalize {
                kind: OpKind::LayerNormalization,
                axis,
                ..
            } => {
                2 * input.0[(*axis as usize).min(input.rank())..]
                    .iter()
                    .product::<u64>()
            }
            Op::Gather {
                index: GatherIndex::Table { dims },
                ..
            } => dims.iter().product(),
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_and_pool_shapes_follow_pytorch() {
        let x = TensorShape::nchw(3, 224, 224);
        let conv = Op::Conv(ConvAttrs {
            out_channels: 64,
            kernel: [7, 7],
            stride: [2, 2],
            pads: [3, 3, 3, 3],
            dilation: [1, 1],
            group: 1,
        });
        assert_eq!(
            conv.infer_shape(&[&x]).unwrap(),
            Some(TensorShape::nchw(64, 112, 112))
        );
        // SqueezeNet: 3x3/2 pool with ceil mode, 111 -> 55.
        let pool = Op::MaxPool(PoolAttrs::square(3, 2, 0, true));
        assert_eq!(
            pool.infer_shape(&[&TensorShape::nchw(64, 111, 111)])
                .unwrap(),
            Some(TensorShape::nchw(64, 55, 55))
        );
        // Ceil mode drops a window that would start in the padding.
        let pool = Op::MaxPool(PoolAttrs::square(2, 2, 0, true));
        assert_eq!(
            pool.infer_shape(&[&TensorShape::nchw(1, 7, 7)]).unwrap(),
            Some(TensorShape::nchw(1, 4, 4))
        );
        let dil = Op::Conv(ConvAttrs::square(8, 3, 1, 36, 1));
        assert_eq!(
            dil.infer_shape(&[&TensorShape::nchw(4, 32, 32)]).unwrap(),
            Some(TensorShape::nchw(8, 32, 32))
        );
    }

    #[test]
    fn broadcasting_and_errors() {
        let a = TensorShape::nchw(72, 28, 28);
        let s = TensorShape::nchw(72, 1, 1);
        assert_eq!(Op::Mul.infer_shape(&[&s, &a]).unwrap(), Some(a.clone()));
        assert!(
            Op::Add
                .infer_shape(&[&a, &TensorShape::nchw(24, 28, 28)])
                .is_err()
        );
        assert!(Op::Relu.infer_shape(&[]).is_err());
        let c = Op::concat(1).infer_shape(&[&a, &a]).unwrap().unwrap();
        assert_eq!(c, TensorShape::nchw(144, 28, 28));
    }
}
