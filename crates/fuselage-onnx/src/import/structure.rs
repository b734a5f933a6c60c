//! What the protobuf alone tells, before tract sees the model: every tensor defined once and
//! read only where defined, a topological order (stable in file order), which nodes carry
//! data from the model input, and every unsupported op listed once. The checks here stand
//! where tract would otherwise panic (found by fuzzing) or lose the node's name.

use super::attrs::attr_ints;
use super::ctx::{Ctx, node_label};
use crate::error::{OnnxError, Result, UnsupportedOp};
use fuselage_ir::OpKind;
use std::collections::{HashMap, HashSet};
use tract_onnx::pb;

/// Ops that may read no tensor: they make one from their attributes.
const SOURCE_OPS: [&str; 3] = ["Constant", "RandomNormal", "RandomUniform"];

/// Ops that vanish at import: their output is their first input.
pub(super) const VANISHING: [&str; 2] = ["Identity", "Dropout"];

/// What the protobuf alone tells: a topological order, which nodes carry data, which tensors
/// are read.
pub(super) struct Structure<'a> {
    /// Every node's index in `graph.node`, in a topological order stable in file order.
    pub(super) order: Vec<usize>,
    /// The nodes that read the model input (through something other than Shape or Size).
    pub(super) data_nodes: HashSet<usize>,
    /// The graph inputs, initializers aside, that some node reads.
    pub(super) data_inputs: HashSet<&'a str>,
    /// The tensors that some node reads.
    pub(super) consumed: HashSet<&'a str>,
    /// The graph's output tensors.
    pub(super) outputs: HashSet<&'a str>,
}

/// Checks `graph` and reads its [`Structure`].
///
/// The checks run in this order, so that the first error is the same whatever is wrong
/// after it: every tensor defined once; every node's inputs defined, and each node reading a
/// tensor unless it is a source, each Transpose's `perm` a permutation; initializers' raw
/// data of a type tract reads; graph outputs defined; no cycle; every data node's op one the IR
/// has; spatial attributes of the right length.
///
/// # Errors
/// [`OnnxError::Malformed`] or [`OnnxError::BadNode`] naming the tensor or node;
/// [`OnnxError::Unsupported`] listing every unsupported op type once.
pub(super) fn analyse_structure<'a>(
    cx: &Ctx<'_>,
    graph: &'a pb::GraphProto,
) -> Result<Structure<'a>> {
    let tensors = Tensors::of(cx, graph)?;
    let consumed = check_nodes(cx, graph, &tensors)?;
    check_raw_data(cx, graph)?;
    for out in &graph.output {
        if !tensors.defines(&out.name) {
            return Err(cx.malformed(format!(
                "the graph output `{}` is defined by no node, initializer or graph input",
                out.name
            )));
        }
    }
    let order = topological_order(cx, graph, &tensors.made_by)?;
    let data_nodes = data_nodes(graph, &order, &tensors.real_inputs);
    let data_inputs = tensors
        .real_inputs
        .iter()
        .copied()
        .filter(|i| consumed.contains(i))
        .collect();
    check_supported(cx, graph, &order, &data_nodes)?;
    for &ni in &order {
        if data_nodes.contains(&ni) {
            check_spatial_attrs(cx, &graph.node[ni], ni)?;
        }
    }
    Ok(Structure {
        order,
        data_nodes,
        data_inputs,
        consumed,
        outputs: graph.output.iter().map(|o| o.name.as_str()).collect(),
    })
}

/// Where each tensor of a graph comes from.
struct Tensors<'a> {
    initializers: HashSet<&'a str>,
    /// The graph inputs that are not initializers, in file order.
    real_inputs: Vec<&'a str>,
    /// Tensor -> producing node.
    made_by: HashMap<&'a str, usize>,
}

impl<'a> Tensors<'a> {
    /// Reads where each tensor of `graph` comes from.
    ///
    /// # Errors
    /// [`OnnxError::Malformed`] naming the first tensor that two nodes, or a node and an
    /// initializer, define.
    fn of(cx: &Ctx<'_>, graph: &'a pb::GraphProto) -> Result<Self> {
        let initializers: HashSet<&str> =
            graph.initializer.iter().map(|t| t.name.as_str()).collect();
        let real_inputs: Vec<&str> = graph
            .input
            .iter()
            .map(|i| i.name.as_str())
            .filter(|n| !initializers.contains(n))
            .collect();
        let mut made_by: HashMap<&str, usize> = HashMap::new();
        for (ni, node) in graph.node.iter().enumerate() {
            for o in node.output.iter().filter(|o| !o.is_empty()) {
                if made_by.insert(o.as_str(), ni).is_some() || initializers.contains(o.as_str()) {
                    return Err(cx.malformed(format!("tensor `{o}` is defined twice")));
                }
            }
        }
        Ok(Tensors {
            initializers,
            real_inputs,
            made_by,
        })
    }

    /// Whether a node, an initializer or a graph input defines `tensor`.
    fn defines(&self, tensor: &str) -> bool {
        self.made_by.contains_key(tensor)
            || self.initializers.contains(tensor)
            || self.real_inputs.contains(&tensor)
    }
}

/// Checks each node in file order: every input defined, some tensor read unless the op is a
/// source, a Transpose's `perm` a permutation (tract would otherwise panic: found by
/// fuzzing). Returns the tensors that nodes read.
fn check_nodes<'a>(
    cx: &Ctx<'_>,
    graph: &'a pb::GraphProto,
    tensors: &Tensors<'_>,
) -> Result<HashSet<&'a str>> {
    let mut consumed = HashSet::new();
    for (ni, node) in graph.node.iter().enumerate() {
        for t in node.input.iter().filter(|t| !t.is_empty()) {
            if !tensors.defines(t) {
                return Err(cx.malformed(format!(
                    "node `{}` ({}) reads `{t}`, which no node, initializer or graph input defines",
                    node_label(node, ni),
                    node.op_type
                )));
            }
            consumed.insert(t.as_str());
        }
        // Checks tract would otherwise meet with a panic (found by fuzzing).
        if node.input.iter().all(String::is_empty) && !SOURCE_OPS.contains(&node.op_type.as_str()) {
            return Err(cx.bad(node, "the node reads no tensor"));
        }
        if node.op_type == "Transpose"
            && let Some(perm) = attr_ints(node, "perm")
        {
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            if !sorted.iter().copied().eq(0..perm.len() as i64) {
                return Err(cx.bad(node, format!("perm {perm:?} is not a permutation")));
            }
        }
    }
    Ok(consumed)
}

/// Refuses an initializer whose raw data tract cannot read.
fn check_raw_data(cx: &Ctx<'_>, graph: &pb::GraphProto) -> Result<()> {
    // tract reads raw initializer data of these types only (and stops at `unimplemented!` on
    // the rest); `STRING` (8) is never raw.
    const RAW_TYPES: [i32; 12] = [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13];
    if let Some(t) = graph
        .initializer
        .iter()
        .find(|t| !t.raw_data.is_empty() && !RAW_TYPES.contains(&t.data_type))
    {
        return Err(cx.malformed(format!(
            "initializer `{}` holds raw data of ONNX data type {}, which fuselage cannot read",
            t.name, t.data_type
        )));
    }
    Ok(())
}

/// A topological order of the nodes (Kahn's), stable in file order: of the nodes ready, the
/// first in the file comes first.
///
/// # Errors
/// [`OnnxError::Malformed`] where the nodes form a cycle.
fn topological_order(
    cx: &Ctx<'_>,
    graph: &pb::GraphProto,
    made_by: &HashMap<&str, usize>,
) -> Result<Vec<usize>> {
    let n = graph.node.len();
    let mut indeg = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (ni, node) in graph.node.iter().enumerate() {
        for t in node.input.iter().filter(|t| !t.is_empty()) {
            if let Some(&p) = made_by.get(t.as_str()) {
                indeg[ni] += 1;
                users[p].push(ni);
            }
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.insert(u);
            }
        }
    }
    if order.len() != n {
        return Err(cx.malformed("the nodes form a cycle"));
    }
    Ok(order)
}

/// The nodes that data flows through from the real inputs; Shape and Size cut it (the input
/// shape is fixed).
fn data_nodes(graph: &pb::GraphProto, order: &[usize], real_inputs: &[&str]) -> HashSet<usize> {
    let mut data_tensors: HashSet<&str> = real_inputs.iter().copied().collect();
    let mut data_nodes = HashSet::new();
    for &ni in order {
        let node = &graph.node[ni];
        let reads_data = node.input.iter().any(|t| data_tensors.contains(t.as_str()));
        if reads_data && !matches!(node.op_type.as_str(), "Shape" | "Size") {
            data_nodes.insert(ni);
            for o in node.output.iter().filter(|o| !o.is_empty()) {
                data_tensors.insert(o.as_str());
            }
        }
    }
    data_nodes
}

/// Every data node's op must be one the IR has: lists every op type that is not, once, with
/// its count and first node, in one [`OnnxError::Unsupported`].
fn check_supported(
    cx: &Ctx<'_>,
    graph: &pb::GraphProto,
    order: &[usize],
    data_nodes: &HashSet<usize>,
) -> Result<()> {
    let mut unsupported: Vec<UnsupportedOp> = Vec::new();
    for &ni in order {
        if !data_nodes.contains(&ni) {
            continue;
        }
        let node = &graph.node[ni];
        let default_domain = node.domain.is_empty() || node.domain == "ai.onnx";
        let known = OpKind::from_name(&node.op_type).is_some()
            || VANISHING.contains(&node.op_type.as_str());
        if !default_domain || !known {
            let op = if default_domain {
                node.op_type.clone()
            } else {
                format!("{}::{}", node.domain, node.op_type)
            };
            match unsupported.iter_mut().find(|u| u.op == op) {
                Some(u) => u.count += 1,
                None => unsupported.push(UnsupportedOp {
                    op,
                    count: 1,
                    first: node_label(node, ni),
                }),
            }
        }
    }
    if !unsupported.is_empty() {
        return Err(OnnxError::Unsupported {
            path: cx.path.to_path_buf(),
            ops: unsupported,
        });
    }
    Ok(())
}

/// Rejects spatial attributes of the wrong length before tract sees them (tract indexes them
/// without checking).
fn check_spatial_attrs(cx: &Ctx<'_>, node: &pb::NodeProto, index: usize) -> Result<()> {
    if !matches!(node.op_type.as_str(), "Conv" | "MaxPool" | "AveragePool") {
        return Ok(());
    }
    for (name, len) in [
        ("kernel_shape", 2),
        ("strides", 2),
        ("dilations", 2),
        ("pads", 4),
    ] {
        if let Some(v) = attr_ints(node, name)
            && (v.len() != len || v.iter().any(|&x| x < 0) || (name != "pads" && v.contains(&0)))
        {
            let node = pb::NodeProto {
                name: node_label(node, index),
                ..node.clone()
            };
            return Err(cx.bad(
                &node,
                format!("attribute {name} = {v:?}: expected {len} valid values for a 2-D op"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::ctx::test_ctx as cx;

    /// A graph of input `x` and these `(name, op_type, inputs)` nodes, in file order, each
    /// with one output named like it.
    fn graph(nodes: &[(&str, &str, &[&str])]) -> pb::GraphProto {
        pb::GraphProto {
            input: vec![pb::ValueInfoProto {
                name: "x".into(),
                ..Default::default()
            }],
            node: nodes
                .iter()
                .map(|(name, op, inputs)| pb::NodeProto {
                    name: name.to_string(),
                    op_type: op.to_string(),
                    input: inputs.iter().map(|i| i.to_string()).collect(),
                    output: vec![name.to_string()],
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn error(nodes: &[(&str, &str, &[&str])]) -> String {
        match analyse_structure(&cx(), &graph(nodes)) {
            Ok(_) => panic!("the graph passes"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_order_is_topological_and_else_the_files() {
        // `c` comes first in the file but reads `b`.
        let g = graph(&[
            ("c", "Relu", &["b"]),
            ("b", "Relu", &["x"]),
            ("a", "Relu", &["x"]),
            ("d", "Add", &["a", "c"]),
        ]);
        let s = analyse_structure(&cx(), &g).unwrap();
        assert_eq!(s.order, [1, 0, 2, 3]);
        assert_eq!(s.data_nodes, HashSet::from([0, 1, 2, 3]));
        assert_eq!(s.data_inputs, HashSet::from(["x"]));
        assert_eq!(s.consumed, HashSet::from(["x", "a", "b", "c"]));
    }

    #[test]
    fn shape_cuts_the_data_flow() {
        // `s` and what only reads it are static; the Reshape reads `x`, so it carries data.
        let g = graph(&[
            ("s", "Shape", &["x"]),
            ("c", "Cast", &["s"]),
            ("r", "Reshape", &["x", "c"]),
        ]);
        let s = analyse_structure(&cx(), &g).unwrap();
        assert_eq!(s.data_nodes, HashSet::from([2]));
    }

    #[test]
    fn malformed_wiring_is_named() {
        assert_eq!(
            error(&[("a", "Relu", &["b"]), ("b", "Relu", &["a"])]),
            "m.onnx: malformed ONNX model: the nodes form a cycle"
        );
        assert_eq!(
            error(&[("a", "Relu", &["x"]), ("a", "Sigmoid", &["x"])]),
            "m.onnx: malformed ONNX model: tensor `a` is defined twice"
        );
        assert_eq!(
            error(&[("a", "Relu", &["y"])]),
            "m.onnx: malformed ONNX model: node `a` (Relu) reads `y`, which no node, \
             initializer or graph input defines"
        );
        assert_eq!(
            error(&[("a", "Relu", &[""])]),
            "m.onnx: node `a` (Relu): the node reads no tensor"
        );
    }

    #[test]
    fn unsupported_ops_are_listed_once_each_and_static_ones_are_not() {
        let mut g = graph(&[
            ("e1", "Einsum", &["x"]),
            ("att", "Attention", &["e1"]),
            ("e2", "Einsum", &["att"]),
            // Static: reads only the input's shape.
            ("s", "Shape", &["x"]),
            ("k", "NonZero", &["s"]),
        ]);
        g.node[1].domain = "com.microsoft".into();
        let e = analyse_structure(&cx(), &g).err().unwrap();
        assert_eq!(
            e.to_string(),
            "m.onnx: unsupported ops: Einsum (2 nodes, first `e1`), \
             com.microsoft::Attention (1 node, first `att`)"
        );
    }
}
