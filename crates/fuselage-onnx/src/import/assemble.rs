//! Graph assembly helpers: which input ports of a node hold its weights, and a `Split` of k
//! outputs imported as k nodes.

use super::attrs::{attr_int, axis};
use super::ctx::Ctx;
use super::facts::Facts;
use super::structure::Structure;
use crate::error::{OnnxError, Result};
use fuselage_ir::{GraphBuilder, Op, OpClass, OpKind, Source};
use std::collections::HashMap;
use tract_onnx::pb;

/// Whether input `port` of an `op_type` node holds parameters (counted as weights): the
/// weights and biases of Conv and Gemm, BatchNormalization's statistics, the scale and bias of
/// the normalisations, a Gather's table, and any constant operand of an element-wise op, a
/// MatMul or a Concat (a ViT's class token). Clip bounds and shape or index inputs are not.
pub(super) fn is_weight_port(op_type: &str, port: usize) -> bool {
    match op_type {
        "Conv" | "Gemm" => port == 1 || port == 2,
        "BatchNormalization" => (1..=4).contains(&port),
        "Add" | "Sub" | "Mul" | "Div" | "MatMul" => port <= 1,
        "LayerNormalization" | "InstanceNormalization" | "GroupNormalization" => {
            port == 1 || port == 2
        }
        "RMSNormalization" | "PRelu" => port == 1,
        "Gather" => port == 0,
        "Concat" => true,
        other => OpKind::from_name(other).is_some_and(|k| k.class() == OpClass::Elementwise),
    }
}

/// Imports one ONNX `Split` as one node per used output: output 0 keeps the node's name,
/// output `i` is `NAME:i`. Each is an [`Op::Split`] part, a tensor of its own.
pub(super) fn split_node<'g>(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    facts: &Facts,
    analysis: &Structure<'_>,
    b: &mut GraphBuilder,
    producer: &mut HashMap<&'g str, Source>,
    outputs: &'g [String],
) -> Result<()> {
    let x = node.input.first().ok_or_else(|| cx.bad(node, "no input"))?;
    let src = *producer
        .get(x.as_str())
        .ok_or_else(|| cx.bad(node, "splits a constant tensor"))?;
    let in_shape = facts.shape(cx, x, Some(node))?;
    let a = axis(
        cx,
        node,
        attr_int(node, "axis").unwrap_or(0),
        in_shape.rank(),
    )?;
    if a as usize >= in_shape.rank() {
        return Err(cx.bad(node, format!("axis {a} out of range for {in_shape}")));
    }
    let mut start = 0u64;
    for (i, out) in outputs.iter().map(String::as_str).enumerate() {
        if out.is_empty() {
            continue;
        }
        let shape = facts.shape(cx, out, Some(node))?;
        let len = shape
            .0
            .get(a as usize)
            .copied()
            .ok_or_else(|| cx.bad(node, format!("output `{out}` has shape {shape}")))?;
        if analysis.consumed.contains(out) || analysis.outputs.contains(out) {
            let name = if i == 0 {
                node.name.clone()
            } else {
                format!("{}:{i}", node.name)
            };
            let op = Op::Split {
                axis: a,
                start,
                len,
            };
            let s = b
                .node_with(name, op, &[src], shape, 0)
                .map_err(|error| OnnxError::Ir {
                    path: cx.path.to_path_buf(),
                    error,
                })?;
            producer.insert(out, s);
        }
        start += len;
    }
    Ok(())
}
