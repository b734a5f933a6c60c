//! The modern networks of `$FUSELAGE_MODELS` (ViT-Tiny, ConvNeXt-Atto, GhostNet, BERT, GPT-2)
//! under the cost models: the independent reference's BERT attention group, and the buffer
//! simulator against LBDF on random groups of every network.

use fuselage::cost::{Brr, BufferSimulator, CostConfig, CostModel, Lbdf};
use fuselage::ir::{Graph, NodeSet};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MODERN: [&str; 5] = [
    "timm_vit_tiny_patch16_224",
    "timm_convnext_atto",
    "timm_ghostnet_100",
    "bert_l4_h256",
    "gpt2_l4_h256",
];

fn load(name: &str) -> Option<Graph> {
    let Some(dir) = fuselage::onnx::reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return None;
    };
    Some(fuselage::onnx::import(dir.join(format!("{name}.onnx"))).unwrap())
}

/// The 22 nodes of BERT layer 0's attention, query MatMul to output dense Add, in file order:
/// the reference point of `shared/design/cost-models.md` (2026-12-04 amendments).
#[test]
fn bert_attention_matches_the_independent_reference() {
    let Some(g) = load("bert_l4_h256") else {
        return;
    };
    let first = g
        .require("/m/encoder/layer.0/attention/self/query/MatMul")
        .unwrap();
    let last = g
        .require("/m/encoder/layer.0/attention/output/dense/Add")
        .unwrap();
    let group = NodeSet::from_ids(g.len(), g.node_ids().filter(|&v| v >= first && v <= last));
    assert_eq!(group.len(), 22);
    let config = CostConfig::new(1 << 30).unwrap();
    let lbdf = Lbdf::new(config).evaluate(&g, &group).unwrap();
    let brr = Brr::new(config).evaluate(&g, &group).unwrap();
    assert_eq!(lbdf.weight_bytes, 263_170);
    assert_eq!(lbdf.buffer_bytes, 367_106);
    assert_eq!(lbdf.dram_bytes, 328_706);
    assert_eq!(brr.tiling.unwrap().min_footprint_bytes, 331_520);
    // The input is held whole (read by Q in phase 0, by K and V in phase 1), as are scaled
    // Kᵀ and V; every other tensor holds one row.
    let whole: Vec<String> = Lbdf::new(config)
        .breakdown(&g, &group)
        .unwrap()
        .unwrap()
        .into_iter()
        .filter(|t| t.resident_rows > 1)
        .map(|t| t.tensor)
        .collect();
    assert_eq!(
        whole,
        [
            "/m/encoder/layer.0/attention/self/Transpose_1",
            "/m/encoder/layer.0/attention/self/Mul_1",
            "/m/embeddings/LayerNorm/LayerNormalization",
        ]
    );
    let sim = BufferSimulator::new(config).run(&g, &group).unwrap();
    assert_eq!(sim.dram_bytes, lbdf.dram_bytes);
    assert!(sim.peak_bytes <= lbdf.buffer_bytes);
}

/// Draws 200 random connected groups (1 to 40 nodes) of `g` from `seed` and holds the
/// simulator to LBDF at 256 KiB on each: DRAM equal to F_D, peak at most F_β. Returns the
/// largest and the mean peak/F_β, and how many groups reach F_β.
fn check_random_groups(g: &Graph, seed: u64) -> (f64, f64, usize) {
    let config = CostConfig::kib(256).unwrap();
    let lbdf = Lbdf::new(config);
    let sim = BufferSimulator::new(config).with_timeline(false);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut worst, mut sum, mut equal) = (0.0f64, 0.0, 0);
    for _ in 0..200 {
        let size = rng.random_range(1..=40usize);
        let group = fuselage::ir::sample::random_group(g, size, &mut rng);
        let cost = lbdf.evaluate(g, &group).unwrap();
        let run = sim.run(g, &group).unwrap();
        let names = || g.names(&group).join(", ");
        let name = g.name();
        assert_eq!(
            run.dram_bytes,
            cost.dram_bytes,
            "{name}: DRAM of {{{}}}",
            names()
        );
        assert!(
            run.peak_bytes <= cost.buffer_bytes,
            "{name}: peak {} > F_β {} for {{{}}}",
            run.peak_bytes,
            cost.buffer_bytes,
            names()
        );
        let ratio = run.peak_bytes as f64 / cost.buffer_bytes as f64;
        worst = worst.max(ratio);
        sum += ratio;
        equal += usize::from(run.peak_bytes == cost.buffer_bytes);
    }
    (worst, sum / 200.0, equal)
}

/// 200 random connected groups of each network: the simulator's DRAM equals F_D and its peak
/// never exceeds F_β.
#[test]
fn simulator_agrees_with_lbdf_on_modern_groups() {
    for (k, name) in MODERN.iter().enumerate() {
        let Some(g) = load(name) else {
            return;
        };
        let (worst, mean, equal) = check_random_groups(&g, 4100 + k as u64);
        println!("| {name} | 200 | {worst:.4} | {mean:.4} | {equal} |");
    }
}

/// A Llama-style decoder from the zoo (RMSNorm, rotary embeddings, grouped-query attention,
/// SiLU-gated MLP), 2 layers at 64 tokens: 200 random groups pass the simulator check too.
#[test]
fn simulator_agrees_with_lbdf_on_a_llama() {
    let c = fuselage::zoo::LlamaConfig {
        layers: 2,
        hidden: 256,
        heads: 8,
        kv_heads: 2,
        ffn: 512,
        vocab: 1000,
        seq: 64,
    };
    let g = fuselage::zoo::build_llama("llama_small", &c).unwrap();
    check_random_groups(&g, 4200);
}
