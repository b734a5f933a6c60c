//! The op mapping: one ONNX node, its data inputs' shapes and its output shape in, one
//! [`Op`] out, with the attributes that decide shapes read and checked.
//!
//! [`map_op`] dispatches on the kind's [`OpClass`], one function per family: windows
//! (convolution and pooling), global pools, unary math, broadcasting element-wise ops,
//! normalisations, reductions, layout (data movement), linear ops and resampling. A new op of
//! a known family then needs one line in its family's function, or none where the family's
//! generic variant ([`Op::Unary`], [`Op::Elementwise`], [`Op::Reduce`]) takes it.

use super::attrs::{
    attr_int, attr_ints, attr_str, axis, ints_input_or_attr, normalised_axes, pads2d, pair,
};
use super::ctx::Ctx;
use super::facts::Facts;
use crate::error::{OnnxError, Result};
use fuselage_ir::{ConvAttrs, GatherIndex, Op, OpClass, OpKind, PoolAttrs, TensorShape};
use tract_onnx::pb;

/// A node being mapped, and what every family's rule may read.
#[derive(Clone, Copy)]
struct Site<'a> {
    cx: &'a Ctx<'a>,
    node: &'a pb::NodeProto,
    facts: &'a Facts,
    /// The shapes of the node's data inputs, in port order.
    ins: &'a [TensorShape],
    /// The ports those data inputs are on.
    data_ports: &'a [usize],
    /// The first data input's shape.
    x: &'a TensorShape,
    /// The output's shape.
    out: &'a TensorShape,
}

/// The [`Op`] of data node `node`, whose data inputs have shapes `ins` on ports `data_ports`
/// and whose output has shape `out`.
///
/// # Errors
/// [`OnnxError::BadNode`] naming the node where it reads no data tensor, where its op is not
/// one the IR has, or where an attribute or constant input does not fit.
pub(super) fn map_op(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    facts: &Facts,
    ins: &[TensorShape],
    data_ports: &[usize],
    out: &TensorShape,
) -> Result<Op> {
    let x = ins
        .first()
        .ok_or_else(|| cx.bad(node, "the node reads no data tensor"))?;
    let kind = OpKind::from_name(&node.op_type).ok_or_else(|| cx.bad(node, "unsupported op"))?;
    let s = Site {
        cx,
        node,
        facts,
        ins,
        data_ports,
        x,
        out,
    };
    match kind.class() {
        OpClass::Window => window(s, kind),
        OpClass::GlobalPool => global_pool(s, kind),
        OpClass::Unary => Ok(unary(kind)),
        OpClass::Elementwise => Ok(elementwise(kind)),
        OpClass::Normalize => normalization(s, kind),
        OpClass::Reduce => reduction(s, kind),
        OpClass::Layout => layout(s, kind),
        OpClass::Linear => linear(s, kind),
        OpClass::Resample => resample(s, kind),
    }
}

/// The error for a kind its family's function has no rule for (a kind added to [`OpKind`]
/// and not yet here).
fn no_rule(s: Site<'_>, k: OpKind) -> OnnxError {
    s.cx.bad(
        s.node,
        format!("{k} (class {:?}) has no import rule", k.class()),
    )
}

/// Refuses a window op that is not 2-D on NCHW tensors.
fn spatial(s: Site<'_>, what: &str) -> Result<()> {
    let Site {
        cx, node, x, out, ..
    } = s;
    if x.rank() == 4 && out.rank() == 4 {
        Ok(())
    } else {
        Err(cx.bad(
            node,
            format!("only 2-D {what} on NCHW tensors is supported, got {x}"),
        ))
    }
}

/// Conv, MaxPool, AveragePool.
fn window(s: Site<'_>, kind: OpKind) -> Result<Op> {
    match kind {
        OpKind::Conv => conv(s),
        OpKind::MaxPool | OpKind::AveragePool => pool(s, kind),
        k => Err(no_rule(s, k)),
    }
}

/// A 2-D convolution: kernel from the attribute or the weight's shape, pads explicit or
/// `auto_pad`.
fn conv(s: Site<'_>) -> Result<Op> {
    let Site {
        cx,
        node,
        facts,
        x,
        out,
        ..
    } = s;
    spatial(s, "convolution")?;
    let w = node
        .input
        .get(1)
        .filter(|w| !w.is_empty())
        .ok_or_else(|| cx.bad(node, "no weight input"))?;
    let wshape = facts.shape(cx, w, Some(node))?;
    if wshape.rank() != 4 {
        return Err(cx.bad(
            node,
            format!("weight `{w}` has shape {wshape}, expected 4-D"),
        ));
    }
    let kernel = attr_ints(node, "kernel_shape")
        .map(|k| pair(&k))
        .unwrap_or([wshape.0[2], wshape.0[3]]);
    let stride = attr_ints(node, "strides")
        .map(|s| pair(&s))
        .unwrap_or([1, 1]);
    let dilation = attr_ints(node, "dilations")
        .map(|s| pair(&s))
        .unwrap_or([1, 1]);
    let span = [
        dilation[0] * (kernel[0] - 1) + 1,
        dilation[1] * (kernel[1] - 1) + 1,
    ];
    let pads = pads2d(cx, node, span, stride, x, out)?;
    let group = attr_int(node, "group").unwrap_or(1).max(1) as u64;
    Ok(Op::Conv(ConvAttrs {
        out_channels: wshape.0[0],
        kernel,
        stride,
        pads,
        dilation,
        group,
    }))
}

/// A windowed pool, undilated.
fn pool(s: Site<'_>, kind: OpKind) -> Result<Op> {
    let Site {
        cx, node, x, out, ..
    } = s;
    spatial(s, "pooling")?;
    let kernel =
        pair(&attr_ints(node, "kernel_shape").ok_or_else(|| cx.bad(node, "no kernel_shape"))?);
    let stride = attr_ints(node, "strides")
        .map(|s| pair(&s))
        .unwrap_or([1, 1]);
    if attr_ints(node, "dilations").is_some_and(|d| d.iter().any(|&v| v != 1)) {
        return Err(cx.bad(node, "dilated pooling is not supported"));
    }
    let pads = pads2d(cx, node, kernel, stride, x, out)?;
    let ceil_mode = attr_int(node, "ceil_mode").unwrap_or(0) != 0;
    let a = PoolAttrs {
        kernel,
        stride,
        pads,
        ceil_mode,
    };
    Ok(if kind == OpKind::MaxPool {
        Op::MaxPool(a)
    } else {
        Op::AveragePool(a)
    })
}

/// GlobalAveragePool, GlobalMaxPool.
fn global_pool(s: Site<'_>, kind: OpKind) -> Result<Op> {
    match kind {
        OpKind::GlobalAveragePool => Ok(Op::GlobalAveragePool),
        OpKind::GlobalMaxPool => Ok(Op::GlobalMaxPool),
        k => Err(no_rule(s, k)),
    }
}

/// Unary math: the ops of the CNN zoo have variants of their own, the rest is [`Op::Unary`].
fn unary(kind: OpKind) -> Op {
    match kind {
        OpKind::Relu => Op::Relu,
        OpKind::Clip => Op::Clip,
        OpKind::Sigmoid => Op::Sigmoid,
        OpKind::HardSigmoid => Op::HardSigmoid,
        OpKind::HardSwish => Op::HardSwish,
        OpKind::Tanh => Op::Tanh,
        OpKind::BatchNormalization => Op::BatchNormalization,
        k => Op::Unary { kind: k },
    }
}

/// Broadcasting element-wise ops: Add, Sub, Mul and Div have variants of their own, the rest
/// is [`Op::Elementwise`].
fn elementwise(kind: OpKind) -> Op {
    match kind {
        OpKind::Add => Op::Add,
        OpKind::Sub => Op::Sub,
        OpKind::Mul => Op::Mul,
        OpKind::Div => Op::Div,
        k => Op::Elementwise { kind: k },
    }
}

/// Normalisations and softmaxes, with each one's default axis and the older opsets' 2-D
/// coercion.
fn normalization(s: Site<'_>, kind: OpKind) -> Result<Op> {
    let Site { cx, node, x, .. } = s;
    Ok(match kind {
        OpKind::LayerNormalization | OpKind::RMSNormalization | OpKind::LpNormalization => {
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(-1), x.rank())?;
            Op::normalize(kind, a)
        }
        // Before opset 13, Softmax and LogSoftmax coerce the input to 2-D at `axis` (default
        // 1) and normalise every axis from it on.
        OpKind::Softmax | OpKind::LogSoftmax if cx.opset < 13 => {
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(1), x.rank())?;
            if a as usize + 1 >= x.rank() && kind == OpKind::Softmax {
                Op::Softmax { axis: a }
            } else {
                Op::Normalize {
                    kind,
                    axis: a,
                    trailing: true,
                }
            }
        }
        OpKind::LogSoftmax => {
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(-1), x.rank())?;
            Op::normalize(kind, a)
        }
        OpKind::InstanceNormalization | OpKind::GroupNormalization => {
            if x.rank() < 3 {
                return Err(cx.bad(node, format!("needs a spatial input, got {x}")));
            }
            Op::normalize(kind, 2)
        }
        OpKind::Softmax => Op::Softmax {
            axis: axis(cx, node, attr_int(node, "axis").unwrap_or(-1), x.rank())?,
        },
        k => return Err(no_rule(s, k)),
    })
}

/// Reductions: ReduceMean has a variant of its own, the rest is [`Op::Reduce`].
fn reduction(s: Site<'_>, kind: OpKind) -> Result<Op> {
    let Site {
        cx, node, facts, x, ..
    } = s;
    Ok(match kind {
        OpKind::ReduceMean => Op::ReduceMean {
            axes: reduce_axes(cx, node, facts, x)?,
            keepdims: attr_int(node, "keepdims").unwrap_or(1) != 0,
        },
        k => Op::Reduce {
            kind: k,
            axes: reduce_axes(cx, node, facts, x)?,
            keepdims: attr_int(node, "keepdims").unwrap_or(1) != 0,
        },
    })
}

/// Data movement: Reshape, Transpose, Concat, Flatten, Squeeze, Unsqueeze, Slice, Gather,
/// Expand, Tile (a Split is imported part by part, before this).
fn layout(s: Site<'_>, kind: OpKind) -> Result<Op> {
    let Site {
        cx,
        node,
        facts,
        x,
        out,
        ..
    } = s;
    Ok(match kind {
        OpKind::Concat => concat(s)?,
        OpKind::Flatten => Op::Flatten {
            axis: axis(cx, node, attr_int(node, "axis").unwrap_or(1), x.rank())?,
        },
        OpKind::Squeeze => {
            let axes = match ints_input_or_attr(cx, node, facts, 1, "axes")? {
                Some(v) => normalised_axes(cx, node, &v, x.rank())?,
                None => (0..x.rank() as u64)
                    .filter(|&i| x.0[i as usize] == 1)
                    .collect(),
            };
            Op::Squeeze { axes }
        }
        OpKind::Unsqueeze => {
            let v = ints_input_or_attr(cx, node, facts, 1, "axes")?
                .ok_or_else(|| cx.bad(node, "no axes"))?;
            Op::Unsqueeze {
                axes: normalised_axes(cx, node, &v, out.rank())?,
            }
        }
        OpKind::Slice => slice_op(cx, node, facts, x)?,
        OpKind::Gather => gather(s)?,
        OpKind::Expand => Op::Expand {
            target: out.0.clone(),
        },
        OpKind::Tile => tile(s)?,
        OpKind::Split => return Err(cx.bad(node, "Split is imported part by part")),
        OpKind::Reshape => Op::Reshape,
        OpKind::Transpose => {
            let perm =
                attr_ints(node, "perm").unwrap_or_else(|| (0..x.rank() as i64).rev().collect());
            Op::Transpose {
                perm: perm.iter().map(|&p| p.max(0) as u64).collect(),
            }
        }
        k => return Err(no_rule(s, k)),
    })
}

/// A `Concat`: what its constant inputs add along the axis is the output's extent less the
/// data inputs'.
fn concat(s: Site<'_>) -> Result<Op> {
    let Site {
        cx,
        node,
        ins,
        x,
        out,
        ..
    } = s;
    let a = axis(cx, node, attr_int(node, "axis").unwrap_or(0), x.rank())?;
    let data: u64 = ins
        .iter()
        .map(|s| s.0.get(a as usize).copied().unwrap_or(0))
        .sum();
    let constant = out
        .0
        .get(a as usize)
        .and_then(|&o| o.checked_sub(data))
        .ok_or_else(|| cx.bad(node, format!("output {out} is smaller than its inputs")))?;
    Ok(Op::Concat { axis: a, constant })
}

/// A `Gather`: constant indices into data, or data indices into a constant table.
fn gather(s: Site<'_>) -> Result<Op> {
    let Site {
        cx,
        node,
        facts,
        data_ports,
        x,
        ..
    } = s;
    let index = match data_ports {
        [0] => GatherIndex::Constant {
            dims: const_shape(cx, node, facts, 1)?,
        },
        [1] => GatherIndex::Table {
            dims: const_shape(cx, node, facts, 0)?,
        },
        _ => return Err(cx.bad(node, "gathers data by data indices")),
    };
    let data_rank = match &index {
        GatherIndex::Constant { .. } => x.rank(),
        GatherIndex::Table { dims } => dims.len(),
    };
    let a = axis(cx, node, attr_int(node, "axis").unwrap_or(0), data_rank)?;
    if a as usize >= data_rank {
        return Err(cx.bad(node, format!("axis {a} out of range")));
    }
    Ok(Op::Gather { axis: a, index })
}

/// A `Tile`, its repeats non-negative.
fn tile(s: Site<'_>) -> Result<Op> {
    let Site {
        cx, node, facts, ..
    } = s;
    let repeats = ints_input_or_attr(cx, node, facts, 1, "repeats")?
        .ok_or_else(|| cx.bad(node, "no repeats"))?;
    if repeats.iter().any(|&r| r < 0) {
        return Err(cx.bad(node, format!("negative repeats {repeats:?}")));
    }
    Ok(Op::Tile {
        repeats: repeats.iter().map(|&r| r as u64).collect(),
    })
}

/// Gemm (a data A operand, 2-D, untransposed) and MatMul (a data left operand).
fn linear(s: Site<'_>, kind: OpKind) -> Result<Op> {
    let Site {
        cx,
        node,
        data_ports,
        out,
        ..
    } = s;
    match kind {
        OpKind::Gemm => {
            if data_ports != [0] {
                return Err(cx.bad(node, "only a data A operand is supported (A·B + C)"));
            }
            if out.rank() != 2 {
                return Err(cx.bad(node, format!("output {out} is not 2-D")));
            }
            if attr_int(node, "transA").unwrap_or(0) != 0 {
                return Err(cx.bad(node, "transA = 1 is not supported"));
            }
            Ok(Op::Gemm {
                out_features: out.0[1],
            })
        }
        OpKind::MatMul => {
            if data_ports == [1] {
                return Err(cx.bad(node, "a constant left operand is not supported"));
            }
            Ok(Op::MatMul)
        }
        k => Err(no_rule(s, k)),
    }
}

/// Pad (from its input or, before opset 11, its attribute) and Resize.
fn resample(s: Site<'_>, kind: OpKind) -> Result<Op> {
    let Site {
        cx, node, facts, ..
    } = s;
    match kind {
        OpKind::Pad => {
            let pads = match node.input.get(1).filter(|p| !p.is_empty()) {
                Some(p) => facts.ints(cx, p, node)?,
                None => attr_ints(node, "pads").unwrap_or_default(),
            };
            if pads.iter().any(|&p| p < 0) {
                return Err(cx.bad(node, "negative pads (cropping) are not supported"));
            }
            if node.input.get(3).is_some_and(|a| !a.is_empty()) {
                return Err(cx.bad(node, "Pad with an `axes` input is not supported"));
            }
            let mirrored = match attr_str(node, "mode").as_deref() {
                None | Some("constant") => false,
                Some("reflect" | "edge") => true,
                Some(other) => return Err(cx.bad(node, format!("unknown pad mode `{other}`"))),
            };
            Ok(Op::Pad {
                pads: pads.iter().map(|&p| p as u64).collect(),
                mirrored,
            })
        }
        OpKind::Resize => Ok(Op::Resize {
            mode: attr_str(node, "mode").unwrap_or_else(|| "nearest".into()),
        }),
        k => Err(no_rule(s, k)),
    }
}

/// The reduced axes of a reduction (input or attribute; every axis when there are none).
fn reduce_axes(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    facts: &Facts,
    x: &TensorShape,
) -> Result<Vec<u64>> {
    match ints_input_or_attr(cx, node, facts, 1, "axes")? {
        Some(v) if !v.is_empty() => normalised_axes(cx, node, &v, x.rank()),
        _ if attr_int(node, "noop_with_empty_axes").unwrap_or(0) != 0 => Ok(Vec::new()),
        _ => Ok((0..x.rank() as u64).collect()),
    }
}

/// The shape of the constant on input `port`.
fn const_shape(cx: &Ctx<'_>, node: &pb::NodeProto, facts: &Facts, port: usize) -> Result<Vec<u64>> {
    let t = node
        .input
        .get(port)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| cx.bad(node, format!("no input {port}")))?;
    Ok(facts.shape(cx, t, Some(node))?.0)
}

/// A `Slice`, its starts and ends normalised (negative from the end) and clamped as ONNX says.
fn slice_op(cx: &Ctx<'_>, node: &pb::NodeProto, facts: &Facts, x: &TensorShape) -> Result<Op> {
    let starts = ints_input_or_attr(cx, node, facts, 1, "starts")?
        .ok_or_else(|| cx.bad(node, "no starts"))?;
    let ends =
        ints_input_or_attr(cx, node, facts, 2, "ends")?.ok_or_else(|| cx.bad(node, "no ends"))?;
    let axes = ints_input_or_attr(cx, node, facts, 3, "axes")?
        .unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = ints_input_or_attr(cx, node, facts, 4, "steps")?.unwrap_or(vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(cx.bad(node, "starts, ends, axes and steps differ in length"));
    }
    let (mut a_out, mut s_out, mut e_out, mut st_out) = (vec![], vec![], vec![], vec![]);
    for i in 0..starts.len() {
        let a = axis(cx, node, axes[i], x.rank())?;
        let dim =
            *x.0.get(a as usize)
                .ok_or_else(|| cx.bad(node, format!("axis {} out of range for {x}", axes[i])))?
                as i64;
        if steps[i] <= 0 {
            return Err(cx.bad(
                node,
                format!("step {} is not supported (only positive steps)", steps[i]),
            ));
        }
        if a_out.contains(&a) {
            return Err(cx.bad(node, format!("axis {} is sliced twice", axes[i])));
        }
        let clamp = |v: i64| if v < 0 { v.saturating_add(dim) } else { v }.clamp(0, dim) as u64;
        let (s, e) = (clamp(starts[i]), clamp(ends[i]));
        a_out.push(a);
        s_out.push(s);
        e_out.push(e.max(s));
        // A step past the slice takes its first entry only: the same slice, with no huge
        // stride for the row windows to multiply.
        st_out.push((steps[i] as u64).min((e.max(s) - s).max(1)));
    }
    Ok(Op::Slice {
        axes: a_out,
        starts: s_out,
        ends: e_out,
        steps: st_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unary_and_elementwise_kind_maps_to_an_op_of_that_kind() {
        for &k in OpKind::ALL {
            match k.class() {
                OpClass::Unary => assert_eq!(unary(k).kind(), k),
                OpClass::Elementwise => assert_eq!(elementwise(k).kind(), k),
                _ => {}
            }
        }
        // The CNN zoo's ops keep variants of their own; the rest share the family's.
        assert_eq!(unary(OpKind::Relu), Op::Relu);
        assert_eq!(unary(OpKind::BatchNormalization), Op::BatchNormalization);
        assert_eq!(unary(OpKind::Erf), Op::Unary { kind: OpKind::Erf });
        assert_eq!(elementwise(OpKind::Div), Op::Div);
        assert_eq!(
            elementwise(OpKind::Pow),
            Op::Elementwise { kind: OpKind::Pow }
        );
    }
}
