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
    pub(super) order: Vec<usize>,
    pub(super) data_nodes: HashSet<usize>,
    pub(super) data_inputs: HashSet<&'a str>,
    pub(super) consumed: HashSet<&'a str>,
    /// The graph's output tensors.
    pub(super) outputs: HashSet<&'a str>,
}

pub(super) fn analyse_structure<'a>(
    cx: &Ctx<'_>,
    graph: &'a pb::GraphProto,
) -> Result<Structure<'a>> {
    let initializers: HashSet<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let real_inputs: Vec<&str> = graph
        .input
        .iter()
        .map(|i| i.name.as_str())
        .filter(|n| !initializers.contains(n))
        .collect();
    // Tensor -> producing node.
    let mut made_by: HashMap<&str, usize> = HashMap::new();
    for (ni, node) in graph.node.iter().enumerate() {
        for o in node.output.iter().filter(|o| !o.is_empty()) {
            if made_by.insert(o.as_str(), ni).is_some() || initializers.contains(o.as_str()) {
                return Err(cx.malformed(format!("tensor `{o}` is defined twice")));
            }
        }
    }
    let mut consumed = HashSet::new();
    for (ni, node) in graph.node.iter().enumerate() {
        for t in node.input.iter().filter(|t| !t.is_empty()) {
            let known = made_by.contains_key(t.as_str())
                || initializers.contains(t.as_str())
                || real_inputs.contains(&t.as_str());
            if !known {
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
    for out in &graph.output {
        let known = made_by.contains_key(out.name.as_str())
            || initializers.contains(out.name.as_str())
            || real_inputs.contains(&out.name.as_str());
        if !known {
            return Err(cx.malformed(format!(
                "the graph output `{}` is defined by no node, initializer or graph input",
                out.name
            )));
        }
    }
    // Topological order (Kahn), stable in file order.
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
    // Data flow from the real inputs; Shape and Size cut it (the input shape is fixed).
    let mut data_tensors: HashSet<&str> = real_inputs.iter().copied().collect();
    let mut data_nodes = HashSet::new();
    for &ni in &order {
        let node = &graph.node[ni];
        let reads_data = node.input.iter().any(|t| data_tensors.contains(t.as_str()));
        if reads_data && !matches!(node.op_type.as_str(), "Shape" | "Size") {
            data_nodes.insert(ni);
            for o in node.output.iter().filter(|o| !o.is_empty()) {
                data_tensors.insert(o.as_str());
            }
        }
    }
    let data_inputs = real_inputs
        .iter()
        .copied()
        .filter(|i| consumed.contains(i))
        .collect();
    // Every data node's op must be one the IR has: list every op type that is not, once.
    let mut unsupported: Vec<UnsupportedOp> = Vec::new();
    for &ni in &order {
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
