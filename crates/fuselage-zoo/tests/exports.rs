//! The zoo against real torchvision exports, node for node.
//!
//! `$FUSELAGE_MODELS` (default: the workspace's `../shared/models`) holds `NAME.nodes.json`,
//! which lists, in the export's (topological) order, every data node with its op, output
//! shape, weight elements and producers.

use fuselage_ir::Graph;
use serde_json::Value;
use std::path::PathBuf;

fn models_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("FUSELAGE_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../../shared/models"
            ))
        });
    dir.is_dir().then_some(dir)
}

/// The top-level keys of the JSON object, in file order (serde_json's map sorts them).
fn key_order(text: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut depth = 0usize;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth -= 1,
            '"' => {
                let start = i + 1;
                let mut end = start;
                while let Some((j, d)) = chars.next() {
                    if d == '\\' {
                        chars.next();
                    } else if d == '"' {
                        end = j;
                        break;
                    }
                }
                if depth == 1 {
                    let rest = text[end + 1..].trim_start();
                    if rest.starts_with(':') {
                        keys.push(text[start..end].to_string());
                    }
                }
            }
            _ => {}
        }
    }
    keys
}

fn compare(name: &str) {
    let Some(dir) = models_dir() else {
        println!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    let path = dir.join(format!("{name}.nodes.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let json: Value = serde_json::from_str(&text).unwrap();
    let map = json.as_object().unwrap();
    let order = key_order(&text);
    assert_eq!(order.len(), map.len(), "key scan of {}", path.display());

    let g: Graph = fuselage_zoo::build_at(name, 224).unwrap();
    let ours: Vec<&str> = g.nodes().map(|(_, n)| n.name.as_str()).collect();
    for (i, (want, got)) in order.iter().zip(&ours).enumerate() {
        assert_eq!(want, got, "{name}: node {i} is misnamed or out of order");
    }
    assert_eq!(order.len(), g.len(), "{name}: node count");

    for (id, node) in g.nodes() {
        let want = &map[&node.name];
        let at = format!("{name}: {}", node.name);
        assert_eq!(
            want["op"].as_str().unwrap(),
            node.op.kind().name(),
            "{at}: op"
        );
        let shape: Vec<u64> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_u64().unwrap())
            .collect();
        assert_eq!(shape, node.shape.dims(), "{at}: shape");
        assert_eq!(
            want["weights"].as_u64().unwrap(),
            node.weights,
            "{at}: weights"
        );
        let inputs: Vec<&str> = want["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        let got: Vec<&str> = node.inputs.iter().map(|&s| g.name_of(s)).collect();
        assert_eq!(inputs, got, "{at}: inputs (port order)");
        let _ = id;
    }
    // What the README records for the whole file.
    let total: u64 = map.values().map(|n| n["weights"].as_u64().unwrap()).sum();
    assert_eq!(total, g.params(), "{name}: weight elements");
}

#[test]
fn squeezenet1_1_matches_export() {
    compare("squeezenet1_1");
}

#[test]
fn mobilenet_v2_matches_export() {
    compare("mobilenet_v2");
}

#[test]
fn resnet18_matches_export() {
    compare("resnet18");
}

#[test]
fn efficientnet_b0_matches_export() {
    compare("efficientnet_b0");
}

#[test]
fn mobilenet_v3_large_matches_export() {
    compare("mobilenet_v3_large");
}

#[test]
fn key_order_reads_file_order() {
    let keys = key_order(r#"{"b": {"x": [1, {"y": 2}]}, "a": {"s": "\"q\": {"}}"#);
    assert_eq!(keys, ["b", "a"]);
}
