//! `fuselage inspect` end to end: output, and exit code 1 with a clear message on bad input.

mod common;

use common::fuselage;

use serde_json::Value;
use std::process::Output;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn inspect_json_reports_the_graph() {
    let out = fuselage(&["inspect", "resnet18", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "resnet18");
    assert_eq!(v["nodes"], 49);
    assert_eq!(v["edges"], 56);
    assert_eq!(v["params"], 11_684_712);
    assert_eq!(v["macs"], 1_814_073_344u64);
    assert_eq!(v["ops"]["Conv"], 20);
    assert_eq!(v["ops"]["Relu"], 17);
    assert_eq!(v["fingerprint"].as_str().unwrap().len(), 32);
    assert!(v["activation_bytes"].as_u64().unwrap() > 0);
}

#[test]
fn inspect_writes_dot() {
    let dir = std::env::temp_dir().join(format!("fuselage-inspect-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dot = dir.join("sq.dot");
    let out = fuselage(&["inspect", "squeezenet1_1", "--dot", dot.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&dot).unwrap();
    assert!(text.starts_with("digraph \"squeezenet1_1\""));
    assert_eq!(
        text.matches("[label=").count(),
        65 + 1,
        "65 nodes and the input"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn unknown_zoo_name_lists_the_valid_ones() {
    let out = fuselage(&["inspect", "resnet19"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    for name in fuselage::zoo::NAMES {
        assert!(err.contains(name), "{err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn missing_and_non_onnx_files_exit_1() {
    let out = fuselage(&["inspect", "/no/such/file.onnx"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("/no/such/file.onnx: cannot read the file"),
        "{}",
        stderr(&out)
    );
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml");
    let out = fuselage(&["inspect", manifest]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("not an ONNX model"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn unsupported_op_in_a_real_export_names_node_and_op() {
    let Some(dir) = fuselage::onnx::reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    // Rename every "Flatten" to "Fl4tten" and every "Relu" to "R3lu" (same lengths, so the
    // protobuf stays valid): op types, node names and tensor names change together.
    let mut bytes = std::fs::read(dir.join("squeezenet1_1.onnx")).unwrap();
    for (from, to) in [(&b"Flatten"[..], &b"Fl4tten"[..]), (b"Relu", b"R3lu")] {
        let mut i = 0;
        while i + from.len() <= bytes.len() {
            if &bytes[i..i + from.len()] == from {
                bytes[i..i + from.len()].copy_from_slice(to);
            }
            i += 1;
        }
    }
    let tmp =
        std::env::temp_dir().join(format!("fuselage-unsupported-{}.onnx", std::process::id()));
    std::fs::write(&tmp, &bytes).unwrap();
    let out = fuselage(&["inspect", tmp.to_str().unwrap()]);
    std::fs::remove_file(&tmp).ok();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    // One error, every unsupported op type with its count and first node.
    assert_eq!(
        err.trim_end(),
        format!(
            "error: {}: unsupported ops: R3lu (26 nodes, first `/features/features.1/R3lu`), \
             Fl4tten (1 node, first `/Fl4tten`)",
            tmp.display()
        )
    );
}

#[test]
fn nodes_lists_every_name_op_and_shape() {
    let out = fuselage(&["inspect", "resnet18", "--nodes"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("/layer1/layer1.0/conv1/Conv "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("Conv") && line.contains("[1, 64, 56, 56]"),
        "{line}"
    );
    let json = fuselage(&["inspect", "resnet18", "--nodes", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let list = v["node_list"].as_array().unwrap();
    assert_eq!(list.len() as u64, v["nodes"].as_u64().unwrap());
    assert_eq!(list[0]["name"], "/conv1/Conv");
    assert_eq!(list[0]["op"], "Conv");
    // Without --nodes the JSON stays as it was.
    let plain = fuselage(&["inspect", "resnet18", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    assert!(v.get("node_list").is_none());
}

/// Columns never run together: an op name as long as `LayerNormalization` (18 characters)
/// stands two spaces from the next column, in the op counts and in the node list (issue 34).
#[test]
fn long_op_names_keep_their_columns_apart() {
    let out = fuselage(&["inspect", "bert_l4_h256", "--nodes"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let count = text
        .lines()
        .find(|l| l.trim_start().starts_with("LayerNormalization"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        count.trim_start().starts_with("LayerNormalization  "),
        "{count}"
    );
    let node = text
        .lines()
        .find(|l| l.contains("/LayerNorm/LayerNormalization "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(node.contains("LayerNormalization  [1, "), "{node}");
    assert!(!text.contains("LayerNormalization["), "{text}");
}

/// A transformers export of a Llama decode step whose cache length is symbolic (see
/// crates/fuselage-onnx/tests/fixtures/README.md): `--decode --past N` binds it, and without
/// them it is refused in one line.
#[test]
fn a_decode_export_imports_with_decode_past() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuselage-onnx/tests/fixtures/llama_decode_dynamic.onnx"
    );
    let out = fuselage(&["inspect", file, "--decode", "--past", "40", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["nodes"], 154);
    assert_eq!(v["inputs"][0], serde_json::json!(["input_ids", [1, 1]]));
    assert_eq!(
        v["inputs"][5],
        serde_json::json!(["past_key_values.1.value", [1, 2, 40, 16]])
    );
    let out = fuselage(&["inspect", file]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: {file}: the key-value cache input `past_key_values.0.key` has a symbolic \
             past length `past_sequence_length`: give the tokens already in the cache \
             (--decode --past N; Importer::with_past)\n"
        )
    );
}
