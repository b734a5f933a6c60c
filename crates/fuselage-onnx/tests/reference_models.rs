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

/// The CNN exports match their `nodes.json` exactly: no difference, no folded constant.
fn check_against_nodes_json(g: &Graph, json_path: &Path) {
    let (diffs, folded) = differences(g, json_path);
    assert!(diffs.is_empty(), "{}:\n{}", g.name(), diffs.join("\n"));
    assert_eq!(folded, (0, 0), "{}: folded constants", g.name());
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

/// The modern networks of `$FUSELAGE_MODELS`: (file, data nodes in its `nodes.json`, float
/// weight elements in the folder's README, and the folded constants we count as weights where
/// the JSON counts none: how many nodes, and their elements in all).
///
/// The folds: ViT's class token on its Concat (192) and the 24 attention scales `√(1/√d)`
/// on Q and Kᵀ (1 each); BERT's position and token-type embeddings (2 × 128·256); GPT-2's
/// position embedding (128·256) and each layer's causal mask bias (4 × 128·128).
const MODERN: [(&str, usize, u64, usize, u64); 5] = [
    ("timm_vit_tiny_patch16_224", 380, 5_717_260, 25, 192 + 24),
    ("timm_convnext_atto", 178, 3_695_556, 0, 0),
    ("timm_ghostnet_100", 241, 5_171_524, 0, 0),
    ("bert_l4_h256", 144, 10_973_204, 2, 2 * 32_768),
    ("gpt2_l4_h256", 177, 16_025_372, 5, 32_768 + 4 * 16_384),
];

/// Where the graph differs from `nodes.json`, one line per difference, and the weights of the
/// nodes where the JSON has 0 and we have more (`(nodes, elements)`). A Split of k outputs is
/// k nodes (`NAME`, `NAME:1`, ...; a reader of `NAME:i` reads `NAME` in the JSON).
fn differences(g: &Graph, json_path: &Path) -> (Vec<String>, (usize, u64)) {
    let mut folded = (0, 0);
    let text = std::fs::read_to_string(json_path).unwrap();
    let expected: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    let mut diffs = Vec::new();
    let base = |name: &str| name.split(':').next().unwrap().to_string();
    let ours: std::collections::BTreeSet<String> = g.nodes().map(|(_, n)| base(&n.name)).collect();
    for name in ours.iter().filter(|n| !expected.contains_key(*n)) {
        diffs.push(format!("{name}: not in the JSON"));
    }
    for (name, want) in &expected {
        let Some(id) = g.id_of(name) else {
            diffs.push(format!("{name}: missing"));
            continue;
        };
        let node = g.node(id);
        let op = want["op"].as_str().unwrap();
        if node.op.kind().name() != op {
            diffs.push(format!("{name}: op {} != {op}", node.op.kind()));
        }
        let shape: Vec<u64> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        if node.shape.0 != shape {
            diffs.push(format!("{name}: shape {} != {shape:?}", node.shape));
        }
        let w = want["weights"].as_u64().unwrap();
        if w == 0 && node.weights > 0 {
            folded.0 += 1;
            folded.1 += node.weights;
        } else if node.weights != w {
            diffs.push(format!("{name}: weights {} != {w}", node.weights));
        }
        let inputs: Vec<String> = want["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        let got: Vec<String> = node.inputs.iter().map(|&s| base(g.name_of(s))).collect();
        if got != inputs {
            diffs.push(format!("{name}: inputs {got:?} != {inputs:?}"));
        }
    }
    (diffs, folded)
}

#[test]
fn modern_exports_import_node_for_node() {
    let Some(dir) = reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    let mut all = Vec::new();
    for (name, nodes, floats, folds, folded) in MODERN {
        let g = match import(dir.join(format!("{name}.onnx"))) {
            Ok(g) => g,
            Err(e) => {
                all.push(format!("{name}: {e}"));
                continue;
            }
        };
        let splits = g.nodes().filter(|(_, n)| n.name.contains(':')).count();
        assert_eq!(g.len(), nodes + splits, "{name}: data nodes");
        assert!(g.is_acyclic() && g.is_connected(), "{name}");
        let (diffs, got) = differences(&g, &dir.join(format!("{name}.nodes.json")));
        for d in diffs {
            all.push(format!("{name}: {d}"));
        }
        assert_eq!(got, (folds, folded), "{name}: folded constants");
        assert_eq!(g.params(), floats + folded, "{name}: float constants");
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
}
