//! Checks every zoo test file makes of a built network.

use fuselage_ir::Graph;

/// Acyclic, connected, shapes consistent, one input called `input` and one output.
pub fn check_structure(g: &Graph, what: &str) {
    assert!(g.is_acyclic(), "{what}: cyclic");
    assert!(g.is_connected(), "{what}: not connected");
    g.check_shapes().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(g.inputs().len(), 1, "{what}");
    assert_eq!(g.inputs()[0].name, "input", "{what}");
    assert_eq!(g.outputs().len(), 1, "{what}: one output");
}
