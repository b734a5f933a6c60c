//! Imports every reference export in `$FUSELAGE_MODELS` and holds it to the numbers of the
//! folder's README and, node for node, to its `NAME.nodes.json` (ONNX's own shape inference).

use fuselage_ir::Graph;
use fuselage_onnx::{import, reference_models_dir};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// (file, data nodes, op counts, float constant elements), from `shared/models/README.md`.
type Expected = (&'static str, usize, &'static [(&'static str, usize)], u64);

const EXPECTED: [Expected; 5] = [
    (
        "squeezenet1_1",
        65,
        &[
            ("Conv", 26),
            ("Relu", 26),
            ("MaxPool", 3),
            ("Concat", 8),
            ("GlobalAveragePool", 1),
            ("Flatten", 1),
        ],
        1_235_496,
    ),
    (
        "mobilenet_v2",
        100,
        &[
            ("Conv", 52),
            ("Clip", 35),
            ("Add", 10),
            ("GlobalAveragePool", 1),
            ("Flatten", 1),
            ("Gemm", 1),
        ],
        3_487_816,
    ),
    (
        "resnet18",
        49,
        &[
            ("Conv", 20),
            ("Relu", 17),
            ("MaxPool", 1),
            ("Add", 8),
            ("GlobalAveragePool", 1),
            ("Flatten", 1),
            ("Gemm", 1),
        ],
        11_684_712,
    ),
    (
        "efficientnet_b0",
        239,
        &[
            ("Conv", 81),
            ("Sigmoid", 65),
            ("Mul", 65),
            ("GlobalAveragePool", 17),
            ("Add", 9),
            ("Flatten", 1),
            ("Gemm", 1),
        ],
        5_267_540,
    ),
    (
        "mobilenet_v3_large",
        140,
        &[
            ("Conv", 62),
            ("HardSwish", 21),
            ("Relu", 19),
            ("Add", 10),
            ("GlobalAveragePool", 9),
            ("HardSigmoid", 8),
            ("Mul", 8),
            ("Flatten", 1),
            ("Gemm", 2),
        ],
        5_470_832,
    ),
];

fn check_against_nodes_json(g: &Graph, json_path: &Path) {
    let text = std::fs::read_to_string(json_path).unwrap();
    let expected: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(g.len(), expected.len(), "{}: node count", g.name());
    for (name, want) in &expected {
        let id = g
            .id_of(name)
            .unwrap_or_else(|| panic!("{}: no node `{name}`", g.name()));
        let node = g.node(id);
        assert_eq!(
            node.op.kind().name(),
            want["op"].as_str().unwrap(),
            "{name}: op"
        );
        let shape: Vec<u64> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(node.shape.0, shape, "{name}: shape");
        assert_eq!(
            node.weights,
            want["weights"].as_u64().unwrap(),
            "{name}: weights"
        );
        let inputs: Vec<&str> = want["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let got: Vec<&str> = node.inputs.iter().map(|&s| g.name_of(s)).collect();
        assert_eq!(got, inputs, "{name}: inputs");
    }
}

#[test]
fn reference_exports_import_exactly() {
    let Some(dir) = reference_models_dir() else {
        eprintln!(
            "skipping: FUSELAGE_MODELS not found (set it to the folder of reference ONNX exports)"
        );
        return;
    };
    for (name, nodes, ops, floats) in EXPECTED {
        let g = import(dir.join(format!("{name}.onnx"))).unwrap();
        assert_eq!(g.name(), name);
        assert_eq!(g.len(), nodes, "{name}: data nodes");
        let want: BTreeMap<&str, usize> = ops.iter().copied().collect();
        assert_eq!(g.op_counts(), want, "{name}: op counts");
        assert_eq!(g.params(), floats, "{name}: float constants");
        assert!(g.is_acyclic() && g.is_connected(), "{name}");
        assert_eq!(g.inputs().len(), 1);
        assert_eq!(g.inputs()[0].shape.0, vec![1, 3, 224, 224]);
        check_against_nodes_json(&g, &dir.join(format!("{name}.nodes.json")));
    }
}
