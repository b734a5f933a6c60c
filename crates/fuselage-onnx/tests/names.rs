//! ONNX names live in namespaces of their own: graph inputs (tensors), initializers and nodes.
//! A node may be called like a graph input or an initializer, which is valid ONNX.

mod support;

use fuselage_onnx::import_bytes;
use support::Model;

/// A node called `x` reading the graph input `x`, and a node called `w` reading the
/// initializer `w`, used to be refused as "duplicate node name `x`".
#[test]
fn a_node_may_share_its_name_with_a_graph_input_or_an_initializer() {
    let bytes = Model::default()
        .input("x", &[1, 4])
        .weight("w", &[4, 4])
        .node_out("x", "Relu", &["x"], "t0")
        .node_out("w", "MatMul", &["t0", "w"], "t1")
        .output("t1")
        .encode();
    let g = import_bytes(&bytes, std::path::Path::new("namespaces.onnx")).unwrap();
    assert_eq!(g.len(), 2);
    let x = g.id_of("x").expect("the node `x`");
    let w = g.id_of("w").expect("the node `w`");
    assert_eq!(g.node(x).op.kind().name(), "Relu");
    assert_eq!(g.node(w).op.kind().name(), "MatMul");
    // The node `x` reads the graph input `x`, and `w` reads the node `x`.
    assert_eq!(g.inputs()[0].name, "x");
    assert_eq!(g.consumers(x), &[(w, 0)]);
    assert_eq!(g.node(w).weights, 16);
}
