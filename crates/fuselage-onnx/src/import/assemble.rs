//! Graph assembly: the data nodes, in topological order, become the nodes of a [`Graph`].
//!
//! A node's data inputs are the tensors that a graph input or an earlier data node produces;
//! its constant inputs on a weight port ([`is_weight_port`]) count as its weights. Identity and
//! Dropout vanish (their output is their input), a `Split` of k outputs becomes k nodes
//! ([`split_node`]), and every other node gets its [`Op`] from [`map_op`]. The graph is then
//! held to the IR's own shape rules.

use super::attrs::{attr_int, axis};
use super::ctx::{Ctx, node_label};
use super::facts::Facts;
use super::ops::map_op;
use super::structure::{Structure, VANISHING};
use crate::error::Result;
use fuselage_ir::{Graph, GraphBuilder, Op, OpClass, OpKind, Source, TensorShape};
use std::collections::HashMap;
use tract_onnx::pb;

/// The graph named `name` of `graph`'s data nodes, as `analysis` orders them and with the
/// shapes of `facts`.
///
/// # Errors
/// [`OnnxError::BadNode`](crate::OnnxError::BadNode) naming a node that cannot be imported,
/// [`OnnxError::Ir`](crate::OnnxError::Ir) where the graph fails the IR's checks, and
/// [`OnnxError::Malformed`](crate::OnnxError::Malformed) where no node depends on a graph input.
pub(super) fn assemble(
    cx: &Ctx<'_>,
    graph: &pb::GraphProto,
    analysis: &Structure<'_>,
    facts: &Facts,
    name: String,
) -> Result<Graph> {
    let mut b = GraphBuilder::new(name);
    // Graph inputs that data flows from.
    for input in &graph.input {
        if analysis.data_inputs.contains(input.name.as_str()) {
            let shape = facts.shape(cx, &input.name, None)?;
            b.input(input.name.clone(), shape)
                .map_err(|error| cx.ir(error))?;
        }
    }
    // Tensor name -> the source producing it.
    let mut producer: HashMap<&str, Source> = HashMap::new();
    for input in &graph.input {
        if let Some(s) = b.source(&input.name) {
            producer.insert(&input.name, s);
        }
    }
    for &ni in &analysis.order {
        if analysis.data_nodes.contains(&ni) {
            data_node(cx, graph, ni, analysis, facts, &mut b, &mut producer)?;
        }
    }
    for out in &graph.output {
        if let Some(&s) = producer.get(out.name.as_str()) {
            b.output(s);
        }
    }
    let g = b.finish().map_err(|error| cx.ir(error))?;
    if g.is_empty() {
        return Err(cx.malformed("no node depends on a graph input"));
    }
    g.check_shapes().map_err(|error| cx.ir(error))?;
    Ok(g)
}

/// Adds data node `ni` of `graph` to `b`, and records in `producer` the source of each tensor
/// it makes: a vanishing node's output is its input's source.
fn data_node<'g>(
    cx: &Ctx<'_>,
    graph: &'g pb::GraphProto,
    ni: usize,
    analysis: &Structure<'_>,
    facts: &Facts,
    b: &mut GraphBuilder,
    producer: &mut HashMap<&'g str, Source>,
) -> Result<()> {
    let node = &graph.node[ni];
    if VANISHING.contains(&node.op_type.as_str()) {
        let (Some(out), Some(&src)) = (
            node.output.first(),
            node.input.first().and_then(|i| producer.get(i.as_str())),
        ) else {
            return Err(cx.bad(node, "reads no data tensor"));
        };
        producer.insert(out, src);
        return Ok(());
    }
    let label = node_label(node, ni);
    let named;
    let node = if node.name.is_empty() {
        named = pb::NodeProto {
            name: label.clone(),
            ..node.clone()
        };
        &named
    } else {
        node
    };
    if node.op_type == "Split" {
        let outputs = &graph.node[ni].output;
        return split_node(cx, node, facts, analysis, b, producer, outputs);
    }
    for extra in node.output.iter().skip(1).filter(|o| !o.is_empty()) {
        if analysis.consumed.contains(extra.as_str()) {
            return Err(cx.bad(
                node,
                format!("its second output `{extra}` is used; fuselage keeps one output per node"),
            ));
        }
    }
    let out_name = graph.node[ni]
        .output
        .first()
        .filter(|o| !o.is_empty())
        .ok_or_else(|| cx.bad(node, "the node has no output"))?;
    let shape = facts.shape(cx, out_name, Some(node))?;
    let ins = Inputs::of(cx, node, facts, producer)?;
    let op = map_op(cx, node, facts, &ins.shapes, &ins.ports, &shape)?;
    let s = b
        .node_with(label, op, &ins.sources, shape, ins.weights)
        .map_err(|error| cx.ir(error))?;
    producer.insert(out_name, s);
    Ok(())
}

/// A node's data inputs, and the weights its constant inputs hold.
struct Inputs {
    /// Where each data input comes from, in port order.
    sources: Vec<Source>,
    /// Each data input's shape.
    shapes: Vec<TensorShape>,
    /// Each data input's port.
    ports: Vec<usize>,
    /// The float elements of the constant inputs on weight ports.
    weights: u64,
}

impl Inputs {
    /// The inputs of `node`: a tensor in `producer` is data, any other one on a weight port
    /// counts its float elements.
    fn of(
        cx: &Ctx<'_>,
        node: &pb::NodeProto,
        facts: &Facts,
        producer: &HashMap<&str, Source>,
    ) -> Result<Inputs> {
        let mut ins = Inputs {
            sources: Vec::new(),
            shapes: Vec::new(),
            ports: Vec::new(),
            weights: 0,
        };
        for (port, t) in node.input.iter().enumerate() {
            if t.is_empty() {
                continue;
            }
            if let Some(&s) = producer.get(t.as_str()) {
                ins.sources.push(s);
                ins.shapes.push(facts.shape(cx, t, Some(node))?);
                ins.ports.push(port);
            } else if is_weight_port(&node.op_type, port) {
                ins.weights += facts.float_elements(cx, t, node)?;
            }
        }
        Ok(ins)
    }
}

/// Whether input `port` of an `op_type` node holds parameters (counted as weights): the
/// weights and biases of Conv and Gemm, BatchNormalization's statistics, the scale and bias of
/// the normalisations, a Gather's table, and any constant operand of an element-wise op, a
/// MatMul or a Concat (a ViT's class token). Clip bounds and shape or index inputs are not.
fn is_weight_port(op_type: &str, port: usize) -> bool {
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
fn split_node<'g>(
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
                .map_err(|error| cx.ir(error))?;
            producer.insert(out, s);
        }
        start += len;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weight_ports_hold_parameters_not_shapes_bounds_or_indices() {
        // Weight and bias.
        assert!(!is_weight_port("Conv", 0));
        assert!(is_weight_port("Conv", 1) && is_weight_port("Gemm", 2));
        // Scale, bias, mean, variance.
        assert!(is_weight_port("BatchNormalization", 4));
        assert!(!is_weight_port("BatchNormalization", 5));
        // A Gather's table, not its indices; an embedding is gathered by data indices.
        assert!(is_weight_port("Gather", 0) && !is_weight_port("Gather", 1));
        // A Reshape's shape and a Clip's bounds are not weights.
        assert!(!is_weight_port("Reshape", 1) && !is_weight_port("Clip", 1));
        // Any element-wise op by its class, a constant operand of Concat (a class token).
        assert!(is_weight_port("Pow", 1) && is_weight_port("Where", 2));
        assert!(is_weight_port("Concat", 5));
        assert!(!is_weight_port("Einsum", 1));
    }
}
