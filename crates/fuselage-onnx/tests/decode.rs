//! Decode steps exported by transformers with a key-value cache (`past_key_values.*` inputs):
//! the two fixtures of `tests/fixtures` (README.md there says how they were made), a Llama with
//! 4 query heads over 2 key-value heads of width 16, hidden 64, MLP 128, vocabulary 256.
//!
//! - `llama_decode_dynamic.onnx`: 2 layers, batch, new tokens and past length symbolic; it
//!   imports only with the past length given ([`Importer::with_past`]).
//! - `llama_decode_static.onnx`: 4 layers, every shape fixed, 128 past tokens, position ids a
//!   `[1, 1]` input; its rotary frequencies `position_ids[..., None] · inv_freq` were refused
//!   ("recorded shape [1, 1, 8] but its inputs imply [1, 1, 1]").

mod support;

use fuselage_ir::{Graph, Source};
use fuselage_onnx::{Importer, OnnxError, import, import_bytes};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn shape(g: &Graph, name: &str) -> Vec<u64> {
    g.node(g.require(name).unwrap()).shape.0.clone()
}

fn weights(g: &Graph, name: &str) -> u64 {
    g.node(g.require(name).unwrap()).weights
}

/// What a graph input named `name` is shaped.
fn input(g: &Graph, name: &str) -> Vec<u64> {
    g.inputs()
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("no input {name}"))
        .shape
        .0
        .clone()
}

/// The names of the graph inputs node `name` reads.
fn reads(g: &Graph, name: &str) -> Vec<String> {
    g.node(g.require(name).unwrap())
        .inputs
        .iter()
        .filter_map(|s| match s {
            Source::Input(i) => Some(g.inputs()[i.index()].name.clone()),
            Source::Node(_) => None,
        })
        .collect()
}

/// Weights of one layer: q, k, v, o, the gated MLP, two RMSNorm gains.
const LAYER: u64 = 64 * 64 + 2 * 64 * 32 + 64 * 64 + 3 * 64 * 128 + 2 * 64;

#[test]
fn a_dynamic_cache_imports_with_its_past_length() {
    let past = 40;
    let g = Importer::new()
        .with_past(past)
        .import(fixture("llama_decode_dynamic.onnx"))
        .unwrap();
    assert_eq!(g.len(), 154);
    // One new token at one position, and per layer a key and a value cache of `past` tokens:
    // [1, kv_heads, past, head_dim].
    assert_eq!(input(&g, "input_ids"), vec![1, 1]);
    assert_eq!(input(&g, "position_ids"), vec![1, 1]);
    for i in 0..2 {
        for what in ["key", "value"] {
            let name = format!("past_key_values.{i}.{what}");
            assert_eq!(input(&g, &name), vec![1, 2, past, 16], "{name}");
        }
    }
    assert_eq!(g.inputs().len(), 2 + 2 * 2);
    // Each layer appends its new key and value, then attends over past + 1 keys: the 4 query
    // heads as 2 groups of 2 queries per key-value head.
    for i in 0..2 {
        let a = format!("/m/model/layers.{i}/self_attn");
        assert_eq!(
            shape(&g, &format!("{a}/Concat_5")),
            vec![1, 2, past + 1, 16]
        );
        assert_eq!(
            shape(&g, &format!("{a}/Concat_6")),
            vec![1, 2, past + 1, 16]
        );
        assert_eq!(
            reads(&g, &format!("{a}/Concat_6")),
            vec![format!("past_key_values.{i}.value")]
        );
        assert_eq!(
            shape(&g, &format!("{a}/Transpose_3")),
            vec![1, 2, 16, past + 1]
        );
        assert_eq!(shape(&g, &format!("{a}/MatMul")), vec![1, 2, 2, past + 1]);
        assert_eq!(shape(&g, &format!("{a}/Softmax")), vec![1, 2, 2, past + 1]);
        assert_eq!(shape(&g, &format!("{a}/MatMul_1")), vec![1, 2, 2, 16]);
        assert_eq!(weights(&g, &format!("{a}/q_proj/MatMul")), 64 * 64);
        assert_eq!(weights(&g, &format!("{a}/k_proj/MatMul")), 64 * 32);
    }
    // transformers' cache starts empty and concatenates the first key cache onto it.
    assert_eq!(
        reads(&g, "/Concat"),
        vec!["past_key_values.0.key".to_string()]
    );
    assert_eq!(shape(&g, "/m/model/rotary_emb/Mul"), vec![1, 1, 8]);
    assert_eq!(shape(&g, "/m/lm_head/MatMul"), vec![1, 1, 256]);
    assert_eq!(weights(&g, "/m/model/embed_tokens/Gather"), 256 * 64);
    assert_eq!(weights(&g, "/m/lm_head/MatMul"), 64 * 256);
    let matrices: u64 = g
        .nodes()
        .filter(|(_, n)| n.op.kind() == fuselage_ir::OpKind::MatMul)
        .map(|(_, n)| n.weights)
        .sum();
    assert_eq!(matrices, 2 * (LAYER - 2 * 64) + 64 * 256);
    // Another past length binds the same file to other shapes.
    let g = Importer::new()
        .with_past(1000)
        .import(fixture("llama_decode_dynamic.onnx"))
        .unwrap();
    assert_eq!(input(&g, "past_key_values.1.value"), vec![1, 2, 1000, 16]);
    assert_eq!(
        shape(&g, "/m/model/layers.1/self_attn/MatMul"),
        vec![1, 2, 2, 1001]
    );
}

#[test]
fn a_dynamic_cache_without_a_past_length_is_refused_in_one_line() {
    let path = fixture("llama_decode_dynamic.onnx");
    let err = import(&path).unwrap_err();
    assert!(matches!(err, OnnxError::Past { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: the key-value cache input `past_key_values.0.key` has a symbolic past length \
             `past_sequence_length`: give the tokens already in the cache (--decode --past N; \
             Importer::with_past)",
            path.display()
        )
    );
}

#[test]
fn a_static_decode_export_imports() {
    let path = fixture("llama_decode_static.onnx");
    let g = import(&path).unwrap();
    assert_eq!(g.len(), 284);
    assert_eq!(input(&g, "position_ids"), vec![1, 1]);
    // The rotary frequencies: [1, 1, 1] position ids times the 8 inverse frequencies.
    assert_eq!(shape(&g, "/m/model/rotary_emb/Unsqueeze"), vec![1, 1, 1]);
    assert_eq!(shape(&g, "/m/model/rotary_emb/Mul"), vec![1, 1, 8]);
    assert_eq!(weights(&g, "/m/model/rotary_emb/Mul"), 8);
    assert_eq!(shape(&g, "/m/model/rotary_emb/Concat"), vec![1, 1, 16]);
    for i in 0..4 {
        let a = format!("/m/model/layers.{i}/self_attn");
        for what in ["key", "value"] {
            let name = format!("past_key_values.{i}.{what}");
            assert_eq!(input(&g, &name), vec![1, 2, 128, 16], "{name}");
        }
        assert_eq!(shape(&g, &format!("{a}/Concat_2")), vec![1, 2, 129, 16]);
        assert_eq!(shape(&g, &format!("{a}/Concat_3")), vec![1, 2, 129, 16]);
        assert_eq!(shape(&g, &format!("{a}/MatMul")), vec![1, 2, 2, 129]);
    }
    let matrices: u64 = g
        .nodes()
        .filter(|(_, n)| n.op.kind() == fuselage_ir::OpKind::MatMul)
        .map(|(_, n)| n.weights)
        .sum();
    assert_eq!(matrices, 4 * (LAYER - 2 * 64) + 64 * 256);
    // The past the file fixes is the only one it takes.
    let same = Importer::new().with_past(128).import(&path).unwrap();
    assert_eq!(same.fingerprint(), g.fingerprint());
    let err = Importer::new().with_past(64).import(&path).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: the key-value cache input `past_key_values.0.key` holds 128 past tokens in the \
             file, not --past 64",
            path.display()
        )
    );
}

#[test]
fn a_past_length_for_a_model_without_a_cache_is_refused() {
    let bytes = support::Model::default()
        .input("x", &[1, 4])
        .weight("w", &[4])
        .ints("shape", &[2, 2])
        .node("/Mul", "Mul", &["x", "w"], &[])
        .node("/Reshape", "Reshape", &["/Mul", "shape"], &[])
        .output("/Reshape")
        .encode();
    let err = Importer::new()
        .with_past(8)
        .import_bytes(&bytes, "plain.onnx")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "plain.onnx: --past 8 binds a key-value cache, and the model has no `past_key_values.*` input"
    );
    // Without it the same model imports.
    assert_eq!(import_bytes(&bytes, "plain.onnx").unwrap().len(), 2);
}
