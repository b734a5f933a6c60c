//! The op mapping: one ONNX node, its data inputs' shapes and its output shape in, one
//! [`Op`] out, with the attributes that decide shapes read and checked.

use super::attrs::{
    attr_int, attr_ints, attr_str, axis, ints_input_or_attr, normalised_axes, pads2d, pair,
};
use super::ctx::Ctx;
use super::facts::Facts;
use crate::error::Result;
use fuselage_ir::{ConvAttrs, GatherIndex, Op, OpClass, OpKind, PoolAttrs, TensorShape};
use tract_onnx::pb;

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
    let spatial = |what: &str| -> Result<()> {
        if x.rank() == 4 && out.rank() == 4 {
            Ok(())
        } else {
            Err(cx.bad(
                node,
                format!("only 2-D {what} on NCHW tensors is supported, got {x}"),
            ))
        }
    };
    let kind = OpKind::from_name(&node.op_type).ok_or_else(|| cx.bad(node, "unsupported op"))?;
    Ok(match kind {
        OpKind::Conv => {
            spatial("convolution")?;
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
            Op::Conv(ConvAttrs {
                out_channels: wshape.0[0],
                kernel,
                stride,
                pads,
                dilation,
                group,
            })
        }
        OpKind::MaxPool | OpKind::AveragePool => {
            spatial("pooling")?;
            let kernel = pair(
                &attr_ints(node, "kernel_shape").ok_or_else(|| cx.bad(node, "no kernel_shape"))?,
            );
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
            if kind == OpKind::MaxPool {
                Op::MaxPool(a)
            } else {
                Op::AveragePool(a)
            }
        }
        OpKind::GlobalAveragePool => Op::GlobalAveragePool,
        OpKind::GlobalMaxPool => Op::GlobalMaxPool,
        OpKind::Relu => Op::Relu,
        OpKind::Clip => Op::Clip,
        OpKind::Sigmoid => Op::Sigmoid,
        OpKind::HardSigmoid => Op::HardSigmoid,
        OpKind::HardSwish => Op::HardSwish,
        OpKind::Tanh => Op::Tanh,
        OpKind::Add => Op::Add,
        OpKind::Sub => Op::Sub,
        OpKind::Mul => Op::Mul,
        OpKind::Div => Op::Div,
        OpKind::Concat => {
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
            Op::Concat { axis: a, constant }
        }
        OpKind::Flatten => Op::Flatten {
            axis: axis(cx, node, attr_int(node, "axis").unwrap_or(1), x.rank())?,
        },
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
            Op::Gemm {
                out_features: out.0[1],
            }
        }
        OpKind::MatMul => {
            if data_ports == [1] {
                return Err(cx.bad(node, "a constant left operand is not supported"));
            }
            Op::MatMul
        }
        OpKind::BatchNormalization => Op::BatchNormalization,
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
            Op::Pad {
                pads: pads.iter().map(|&p| p as u64).collect(),
                mirrored,
            }
        }
        OpKind::ReduceMean => Op::ReduceMean {
            axes: reduce_axes(cx, node, facts, x)?,
            keepdims: attr_int(node, "keepdims").unwrap_or(1) != 0,
        },
        k if k.class() == OpClass::Reduce => Op::Reduce {
            kind: k,
            axes: reduce_axes(cx, node, facts, x)?,
            keepdims: attr_int(node, "keepdims").unwrap_or(1) != 0,
        },
        k if k.class() == OpClass::Unary => Op::Unary { kind: k },
        k if k.class() == OpClass::Elementwise => Op::Elementwise { kind: k },
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
        OpKind::Gather => {
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
            Op::Gather { axis: a, index }
        }
        OpKind::Expand => Op::Expand {
            target: out.0.clone(),
        },
        OpKind::Tile => {
            let repeats = ints_input_or_attr(cx, node, facts, 1, "repeats")?
                .ok_or_else(|| cx.bad(node, "no repeats"))?;
            if repeats.iter().any(|&r| r < 0) {
                return Err(cx.bad(node, format!("negative repeats {repeats:?}")));
            }
            Op::Tile {
                repeats: repeats.iter().map(|&r| r as u64).collect(),
            }
        }
        OpKind::Split => return Err(cx.bad(node, "Split is imported part by part")),
        OpKind::Resize => Op::Resize {
            mode: attr_str(node, "mode").unwrap_or_else(|| "nearest".into()),
        },
        OpKind::Reshape => Op::Reshape,
        OpKind::Transpose => {
            let perm =
                attr_ints(node, "perm").unwrap_or_else(|| (0..x.rank() as i64).rev().collect());
            Op::Transpose {
                perm: perm.iter().map(|&p| p.max(0) as u64).collect(),
            }
        }
        OpKind::Softmax => Op::Softmax {
            axis: axis(cx, node, attr_int(node, "axis").unwrap_or(-1), x.rank())?,
        },
        k => {
            return Err(cx.bad(
                node,
                format!("{k} (class {:?}) has no import rule", k.class()),
            ));
        }
    })
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
