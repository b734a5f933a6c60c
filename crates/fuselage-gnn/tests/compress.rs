//! The compressed forward pass (`fuselage_gnn::compress`) against the plain one.

use burn::prelude::*;
use fuselage_gnn::{
    CompressedBatch, CostKind, GnnClassifier, GraphBatch, GroupGraph, default_device, shipped,
};
use fuselage_ir::NodeSet;
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};

fn read(t: Tensor<1>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

/// The logits of `batch` by the plain forward and by the compressed one.
fn both(clf: &GnnClassifier, batch: &GraphBatch) -> (Vec<f32>, Vec<f32>, CompressedBatch) {
    let plain = read(clf.model.forward(&batch.to_device(&clf.device)));
    let c = CompressedBatch::new(batch, clf.model.layers.len());
    let fast = read(
        clf.model
            .forward_compressed(&c.to_device(&clf.device))
            .unwrap(),
    );
    (plain, fast, c)
}

fn assert_close(plain: &[f32], fast: &[f32]) {
    assert_eq!(plain.len(), fast.len());
    for (a, b) in plain.iter().zip(fast) {
        assert!(
            (a - b).abs() <= 1e-5 * a.abs().max(1.0),
            "plain {a} compressed {b}"
        );
    }
}

/// `count` random groups of up to `max_len` nodes of `net`, at β = 128 or 512 KiB.
fn groups(net: &str, count: usize, max_len: usize, seed: u64) -> (Vec<GroupGraph>, Vec<u64>) {
    let g = fuselage_zoo::build(net).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = rng.random_range(1..=max_len);
            let s = fuselage_ir::sample::random_group(&g, n, &mut rng);
            let beta = if rng.random_bool(0.5) { 128 } else { 512 } * 1024;
            (GroupGraph::new(&g, &s).unwrap(), beta)
        })
        .unzip()
}

#[test]
fn compressed_logits_match_the_plain_forward_on_zoo_groups() {
    let device = default_device();
    for kind in [CostKind::Lbdf, CostKind::Brr] {
        let clf = shipped(kind, &device).unwrap();
        for net in [
            "resnet101",
            "efficientnet_b3",
            "vgg16",
            "mobilenet_v3_small",
        ] {
            let (gs, betas) = groups(net, 64, 40, 3);
            let mut batch = GraphBatch::new(clf.config.feature_set);
            for (gg, &b) in gs.iter().zip(&betas) {
                batch.push(gg, b as f64, None).unwrap();
            }
            let (plain, fast, c) = both(&clf, &batch);
            assert_close(&plain, &fast);
            // Real sharing, else the comparison says little about the merging.
            let last = c.layers.last().unwrap().rows;
            assert!(last < batch.nodes(), "{net}: {last} of {}", batch.nodes());
            assert!(c.input_rows() <= c.layers[0].rows);
        }
    }
}

#[test]
fn a_repeated_group_costs_the_rows_of_one() {
    let device = default_device();
    let clf = shipped(CostKind::Lbdf, &device).unwrap();
    let (gs, _) = groups("resnet50", 1, 30, 9);
    let (mut one, mut many) = (
        GraphBatch::new(clf.config.feature_set),
        GraphBatch::new(clf.config.feature_set),
    );
    one.push(&gs[0], 262144.0, None).unwrap();
    for _ in 0..10 {
        many.push(&gs[0], 262144.0, None).unwrap();
    }
    let (_, alone, c1) = both(&clf, &one);
    let (plain, fast, c10) = both(&clf, &many);
    assert_close(&plain, &fast);
    for (l1, l10) in c1.layers.iter().zip(&c10.layers) {
        assert_eq!(l1.rows, l10.rows);
        assert_eq!(l1.src.len(), l10.src.len());
    }
    // Ten copies, ten identical answers, bit for bit the group's own.
    assert!(
        fast.iter().all(|z| z.to_bits() == alone[0].to_bits()),
        "{fast:?} vs {alone:?}"
    );
}

#[test]
fn a_batch_of_singletons_has_no_messages() {
    let device = default_device();
    let clf = shipped(CostKind::Lbdf, &device).unwrap();
    let g = fuselage_zoo::build("resnet18").unwrap();
    let mut batch = GraphBatch::new(clf.config.feature_set);
    for v in g.node_ids().take(20) {
        let gg = GroupGraph::new(&g, &NodeSet::from_ids(g.len(), [v])).unwrap();
        batch.push(&gg, 131072.0, None).unwrap();
    }
    let (plain, fast, c) = both(&clf, &batch);
    assert_close(&plain, &fast);
    assert!(c.layers.iter().all(|l| l.src.is_empty()));
    assert!(
        c.input_rows() < 20,
        "resnet18's first nodes repeat some rows"
    );
}

#[test]
fn a_batch_compressed_for_another_depth_is_refused() {
    let device = default_device();
    let clf = shipped(CostKind::Lbdf, &device).unwrap();
    let (gs, _) = groups("resnet18", 2, 10, 1);
    let mut batch = GraphBatch::new(clf.config.feature_set);
    batch.push(&gs[0], 131072.0, None).unwrap();
    let c = CompressedBatch::new(&batch, 3);
    let err = clf
        .model
        .forward_compressed(&c.to_device(&device))
        .unwrap_err();
    assert!(err.to_string().contains("3 layers"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Edge weights drawn from a few values, so that equal weights make equal rows and
    /// different ones keep rows apart: the compressed logits still match.
    #[test]
    fn weighted_batches_match(seed in 0u64..1000, levels in 1usize..4) {
        let device = default_device();
        let clf = shipped(CostKind::Lbdf, &device).unwrap();
        let (gs, betas) = groups("mobilenet_v2", 12, 25, seed);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut batch = GraphBatch::new(clf.config.feature_set);
        for (gg, &b) in gs.iter().zip(&betas) {
            let w: Vec<f32> = (0..gg.edges.len())
                .map(|_| rng.random_range(0..levels) as f32 / levels as f32 + 0.25)
                .collect();
            batch.push(gg, b as f64, Some(&w)).unwrap();
            // The same group unweighted (all weights 1): shares rows only where w is 1.
            batch.push(gg, b as f64, None).unwrap();
        }
        let (plain, fast, _) = both(&clf, &batch);
        for (a, b) in plain.iter().zip(&fast) {
            prop_assert!((a - b).abs() <= 1e-5 * a.abs().max(1.0), "plain {} compressed {}", a, b);
        }
    }
}
