//! The zoo networks are the graphs torchvision's export gives: same fingerprint as the
//! imported reference files.

use fuselage::onnx::{import, reference_models_dir};

#[test]
fn zoo_fingerprints_equal_imported_exports() {
    let Some(dir) = reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    for name in [
        "squeezenet1_1",
        "mobilenet_v2",
        "resnet18",
        "efficientnet_b0",
        "mobilenet_v3_large",
    ] {
        let imported = import(dir.join(format!("{name}.onnx"))).unwrap();
        let built = fuselage::zoo::build_at(name, 224).unwrap();
        assert_eq!(built.fingerprint(), imported.fingerprint(), "{name}");
        assert_eq!(built.to_json(), imported.to_json(), "{name}: JSON differs");
        // A different resolution is a different graph.
        let other = fuselage::zoo::build_at(name, 256).unwrap();
        assert_ne!(other.fingerprint(), imported.fingerprint(), "{name} at 256");
    }
}

/// The transformer presets have their exports' fingerprints; where one does not, the test
/// names the first node that differs.
#[test]
fn transformer_presets_equal_imported_exports() {
    let Some(dir) = reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    for (preset, file) in [
        ("bert_l4_h256", "bert_l4_h256"),
        ("gpt2_l4_h256", "gpt2_l4_h256"),
        ("vit_tiny_patch16_224", "timm_vit_tiny_patch16_224"),
        ("convnext_atto", "timm_convnext_atto"),
        ("ghostnet_100", "timm_ghostnet_100"),
    ] {
        let imported = import(dir.join(format!("{file}.onnx"))).unwrap();
        let built = fuselage::zoo::build(preset).unwrap();
        for (_, n) in imported.nodes() {
            let Some(id) = built.id_of(&n.name) else {
                panic!("{preset}: no node `{}`", n.name);
            };
            let b = built.node(id);
            let ins = |g: &fuselage::ir::Graph, node: &fuselage::ir::Node| -> Vec<String> {
                node.inputs
                    .iter()
                    .map(|&s| g.name_of(s).to_string())
                    .collect()
            };
            assert_eq!(
                (&b.op, &b.shape, b.weights, ins(&built, b)),
                (&n.op, &n.shape, n.weights, ins(&imported, n)),
                "{preset}: node `{}`",
                n.name
            );
        }
        assert_eq!(built.len(), imported.len(), "{preset}: nodes");
        assert_eq!(built.fingerprint(), imported.fingerprint(), "{preset}");
        if !preset.contains("_l4_") {
            let other = fuselage::zoo::build_at(preset, 256).unwrap();
            assert_ne!(
                other.fingerprint(),
                imported.fingerprint(),
                "{preset} at 256"
            );
        } else {
            let other = fuselage::zoo::build_seq(preset, 64).unwrap();
            assert_ne!(
                other.fingerprint(),
                imported.fingerprint(),
                "{preset} at 64"
            );
        }
    }
}

/// `gpt2` at 12 layers and width 768 is the 124M model: 124,439,808 parameters in
/// transformers' count, plus the constants the export folds (the position embedding is a
/// parameter there and a folded constant here, the same elements; each layer's causal mask
/// bias, `L×L`; and two scalars per layer for the attention scale and five for gelu_new).
#[test]
fn gpt2_preset_is_the_124m_model() {
    let g = fuselage::zoo::build("gpt2").unwrap();
    let l = 1024u64;
    assert_eq!(g.params(), 124_439_808 + 12 * (l * l + 2 + 5));
    assert_eq!(g.inputs()[0].shape.0, vec![1, l]);
}

/// `llama_3_2_1b` has Llama 3.2 1B's published 1,235,814,400 parameters (embeddings tied),
/// plus per layer what the export folds: cos and sin on Q and K (`4·L·64`), the attention
/// scale, the causal mask bias (`L×L`) and the two norms' ε, and the final norm's ε.
#[test]
fn llama_preset_is_llama_3_2_1b() {
    let g = fuselage::zoo::build_seq("llama_3_2_1b", 256).unwrap();
    let l = 256u64;
    assert_eq!(
        g.params(),
        1_235_814_400 + 16 * (4 * l * 64 + 1 + l * l + 2 * 2) + 2
    );
    let tiny = fuselage::zoo::build("tinyllama_1_1b").unwrap();
    // TinyLlama 1.1B: 1,034,512,384 parameters without its untied output head (32,000 × 2,048).
    let l = 1024u64;
    assert_eq!(
        tiny.params(),
        1_100_048_384 - 32_000 * 2048 + 22 * (4 * l * 64 + 1 + l * l + 2 * 2) + 2
    );
}

/// Every modern preset round-trips through the graph JSON, row axes included.
#[test]
fn modern_presets_round_trip_through_json() {
    for name in fuselage::zoo::MODERN_NAMES {
        let g = if fuselage::zoo::is_text(name) {
            fuselage::zoo::build_seq(name, 32).unwrap()
        } else {
            fuselage::zoo::build(name).unwrap()
        };
        let back = fuselage::ir::Graph::from_json(&g.to_json()).unwrap();
        assert_eq!(back.fingerprint(), g.fingerprint(), "{name}");
        for (id, _) in g.nodes() {
            let s = fuselage::ir::Source::Node(id);
            assert_eq!(back.row_axis(s), g.row_axis(s), "{name}");
        }
        back.check_shapes().unwrap();
    }
}
