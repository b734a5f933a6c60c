//! Integration tests: data set generation, exact validity, quick training, checkpoints.

use fuselage_cost::{CostConfig, CostModel, Lbdf};
use fuselage_gnn::*;
use fuselage_ir::NodeSet;
use rand::SeedableRng;
use std::time::Instant;

fn small_config() -> DatasetConfig {
    // About 550 groups, 2,700 samples per cost model.
    let mut cfg = DatasetConfig::scaled(3, 0.05);
    cfg.max_lens = vec![2, 4, 8, 16];
    cfg
}

#[test]
fn dataset_is_reproducible_deduplicated_and_round_trips() {
    let mut cfg = DatasetConfig::scaled(11, 0.02);
    cfg.networks.truncate(3);
    let a = generate_dataset(&cfg).unwrap();
    let b = generate_dataset(&cfg).unwrap();
    assert_eq!(a, b);
    let want: usize = cfg.networks.iter().map(|(_, n)| n).sum();
    assert_eq!(a.groups.len(), want);
    let mut seen = std::collections::HashSet::new();
    for g in &a.groups {
        assert!(
            seen.insert((g.network.clone(), g.nodes.clone())),
            "duplicate group"
        );
        assert_eq!(g.lbdf.len(), 5);
        assert_eq!(g.brr.len(), 5);
        // A group that fits a buffer fits every larger one.
        assert!(g.lbdf.windows(2).all(|w| !w[0] || w[1]));
    }
    let dir = std::env::temp_dir().join(format!("fuselage-gnn-ds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ds.jsonl");
    a.save(&path).unwrap();
    assert_eq!(Dataset::load(&path).unwrap(), a);
    // The same from bytes a caller read itself (the program's guarded reader); errors name
    // the path it was given.
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(Dataset::read(&bytes[..], &path).unwrap(), a);
    let cut = &bytes[..bytes.len() / 2];
    let err = Dataset::read(cut, "cut.jsonl").unwrap_err().to_string();
    assert!(err.starts_with("cut.jsonl: line "), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn exact_validity_agrees_with_the_cost_model() {
    let g = fuselage_zoo::build("mobilenet_v2").unwrap();
    let exact = ExactValidity::new(Lbdf::new, "lbdf");
    let groups: Vec<NodeSet> = (0..20)
        .map(|i| NodeSet::from_ids(g.len(), g.node_ids().skip(i * 3).take(1 + i)))
        .filter(|s| g.is_connected_set(s))
        .collect();
    // At 1-byte elements, and at 4-byte ones: the config asked about is costed whole, its
    // element sizes kept (they used to be dropped by a rebuild from β alone).
    let one = CostConfig::kib(256).unwrap();
    let mut flips = 0;
    for config in [one, one.with_element_bytes(4).unwrap()] {
        let p = exact.invalid_probabilities(&g, &groups, &config).unwrap();
        let lbdf = Lbdf::new(config);
        for (s, p) in groups.iter().zip(p) {
            let valid = lbdf.evaluate(&g, s).unwrap().valid;
            assert_eq!(p, if valid { 0.0 } else { 1.0 });
            flips += usize::from(
                config != one && valid != Lbdf::new(one).evaluate(&g, s).unwrap().valid,
            );
        }
    }
    assert!(flips > 0, "no group changes verdict with the element size");
    assert_eq!(exact.name(), "exact-lbdf");
}

#[test]
fn a_small_model_trains_quickly_and_round_trips_through_a_checkpoint() {
    let t = Instant::now();
    let ds = generate_dataset(&small_config()).unwrap();
    let cfg = TrainConfig {
        model: GnnConfig {
            hidden: 32,
            layers: 3,
            ..GnnConfig::default()
        },
        epochs: 12,
        batch_size: 64,
        learning_rate: 5e-3,
        ..TrainConfig::paper(CostKind::Lbdf)
    };
    let device = default_device();
    let mut epochs = 0;
    let (clf, report) = train(&cfg, &ds, &device, |_| epochs += 1).unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!(
        "small model: test acc {:.3} f1 {:.3} {:?} in {secs:.1}s",
        report.test.accuracy(),
        report.test.f1(),
        report.test
    );
    assert_eq!(epochs, 12);
    assert_eq!(report.curve.len(), 12);
    assert!(report.test.accuracy() > 0.85, "{:?}", report.test);
    assert!(secs < 60.0, "took {secs:.1}s");

    // Save, load, same probabilities.
    let dir = std::env::temp_dir().join(format!("fuselage-gnn-ck-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    save_checkpoint(&clf, dir.join("m"), Default::default()).unwrap();
    let back = load_checkpoint(dir.join("m"), &device).unwrap();
    assert_eq!(probe(&back).unwrap(), probe(&clf).unwrap());
    let csv = curve_csv(&report.curve);
    assert_eq!(csv.lines().count(), 13);
    #[cfg(feature = "plot")]
    {
        plot_curve(&report.curve, "test", dir.join("curve.svg")).unwrap();
        assert!(
            std::fs::read_to_string(dir.join("curve.svg"))
                .unwrap()
                .contains("<svg")
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn shipped_checkpoints_reproduce_their_recorded_probabilities() {
    let device = default_device();
    for kind in CostKind::PAPER {
        for set in FeatureSet::ALL {
            let meta = shipped_meta(kind, set).unwrap();
            assert_eq!(meta.cost_model, kind);
            assert_eq!(meta.config.feature_set, set);
            assert_eq!(meta.config.features, set.dim());
            let recorded: Vec<f32> = serde_json::from_value(meta.metrics["probe"].clone()).unwrap();
            let clf = shipped_from(kind, set, &device).unwrap();
            let now = probe(&clf).unwrap();
            assert_eq!(now.len(), recorded.len());
            for (a, b) in now.iter().zip(&recorded) {
                assert!(
                    (a - b).abs() < 1e-5,
                    "{kind} {set}: {now:?} vs {recorded:?}"
                );
            }
        }
    }
    // The default is the broad classifier.
    assert_eq!(
        shipped(CostKind::Brr, &device).unwrap().config.feature_set,
        FeatureSet::Broad
    );
}

#[test]
fn a_shipped_checkpoint_loaded_and_saved_again_is_the_same_bytes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints");
    let tmp = std::env::temp_dir().join(format!("fuselage-gnn-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for (kind, set) in CostKind::PAPER
        .into_iter()
        .flat_map(|k| FeatureSet::ALL.map(|s| (k, s)))
    {
        let stem = dir.join(shipped_stem(kind, set));
        let ck = Checkpoint::<CheckpointMeta>::load(&stem).unwrap();
        assert_eq!(ck.meta, shipped_meta(kind, set).unwrap());
        // The weights of the loaded classifier serialise to the file's bytes.
        let clf = load_checkpoint(&stem, &default_device()).unwrap();
        assert_eq!(weights_to_bytes(&clf).unwrap(), ck.weights);
        ck.save(tmp.join("again")).unwrap();
        let read = |stem: &std::path::Path, ext| std::fs::read(stem.with_extension(ext)).unwrap();
        assert!(
            read(&tmp.join("again"), "bpk") == read(&stem, "bpk"),
            "{kind} weights"
        );
        // The same JSON text but for the last digits of floats, which serde_json's parser
        // rounds (its `float_roundtrip` feature is off).
        let text = |stem: &std::path::Path| String::from_utf8(read(stem, "json")).unwrap();
        let skeleton = |s: String| s.replace(|c: char| "0123456789.-+eE".contains(c), "");
        let (again, shipped) = (text(&tmp.join("again")), text(&stem));
        assert_eq!(skeleton(again.clone()), skeleton(shipped.clone()), "{kind}");
        assert_eq!(again.lines().count(), shipped.lines().count());
    }
    // A missing checkpoint names its metadata file, which is read first.
    let err = load_checkpoint(tmp.join("missing"), &default_device()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("missing.json: No such file or directory (os error 2)")
    );
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn batched_and_single_predictions_agree_and_edge_weights_matter() {
    let device = default_device();
    let clf = shipped(CostKind::Lbdf, &device).unwrap();
    let (g, groups) = probe_groups().unwrap();
    let probe = CostConfig::new(PROBE_BETA).unwrap();
    let all = clf.invalid_probabilities(&g, &groups, &probe).unwrap();
    for (s, p) in groups.iter().zip(&all) {
        let one = clf.invalid_probability(&g, s, &probe).unwrap();
        assert!((one - p).abs() < 1e-4);
    }
    let gg = GroupGraph::new(&g, &groups[15]).unwrap();
    let ones = vec![1.0; gg.edges.len()];
    let zeros = vec![0.0; gg.edges.len()];
    let p = clf
        .logits(&[
            (&gg, PROBE_BETA, None),
            (&gg, PROBE_BETA, Some(&ones)),
            (&gg, PROBE_BETA, Some(&zeros)),
        ])
        .unwrap();
    assert!((p[0] - p[1]).abs() < 1e-3 * p[0].abs().max(1.0));
    assert!(
        (p[0] - p[2]).abs() > 1e-6,
        "masking every edge changes nothing: {p:?}"
    );
}

#[test]
fn a_batch_cut_into_parallel_chunks_answers_each_group_as_alone() {
    let device = default_device();
    let clf = shipped(CostKind::Brr, &device).unwrap();
    let g = fuselage_zoo::build("resnet101").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    // Sizes from 1 node to 300, repeated until the batch spans more than three chunks.
    let sizes = [1usize, 30, 300, 7, 60, 2, 45, 250, 30, 12, 80, 30, 3, 33];
    let groups: Vec<NodeSet> = sizes
        .iter()
        .cycle()
        .take(16 * sizes.len())
        .map(|&n| fuselage_ir::sample::random_group(&g, n, &mut rng))
        .collect();
    let nodes: usize = groups.iter().map(NodeSet::len).sum();
    assert!(nodes > 3 * fuselage_gnn::model::CHUNK_NODES, "{nodes}");
    let beta = CostConfig::kib(256).unwrap();
    let all = clf.invalid_probabilities(&g, &groups, &beta).unwrap();
    assert_eq!(all.len(), groups.len());
    for (s, p) in groups.iter().zip(&all) {
        let one = clf.invalid_probability(&g, s, &beta).unwrap();
        assert!(
            (one - p).abs() < 1e-5,
            "{} nodes: {one} alone, {p} batched",
            s.len()
        );
    }
    // Not all the same answer: the comparison above would be weak otherwise.
    assert!(
        all.iter().any(|&p| p > 0.5) && all.iter().any(|&p| p < 0.5),
        "{all:?}"
    );
}

#[test]
fn the_broad_data_set_keeps_families_apart() {
    // Every family's networks are in the broad data set, and each network in one family.
    let modern: Vec<&str> = MODERN_NETWORKS.iter().map(|(n, _)| *n).collect();
    for (_, nets) in FAMILIES {
        assert!(nets.iter().all(|n| modern.contains(n)));
    }
    for kept in KEPT_OUT {
        assert_eq!(family_networks(&kept).len(), 4);
    }
    let mut cfg = DatasetConfig::broad(5);
    for (_, n) in &mut cfg.networks {
        *n = (*n / 100).max(1);
    }
    let ds = generate_dataset(&cfg).unwrap();
    let kept = family_networks(&["GPT-2", "ConvNeXt"]);
    let (inside, outside) = ds.partition(&kept);
    assert_eq!(inside.groups.len() + outside.groups.len(), ds.groups.len());
    assert!(!inside.groups.is_empty());
    assert!(
        inside
            .groups
            .iter()
            .all(|g| kept.contains(&g.network.as_str()))
    );
    assert!(
        outside
            .groups
            .iter()
            .all(|g| !kept.contains(&g.network.as_str()))
    );
    // Transformer groups encode in the broad layout, row axis and all.
    let enc = inside.encode(CostKind::Brr).unwrap();
    let mut batch = GraphBatch::new(FeatureSet::Broad);
    for s in enc.samples.iter().take(20) {
        batch
            .push(&enc.graphs[s.group], s.beta_bytes as f64, None)
            .unwrap();
    }
    assert_eq!(
        batch.features.len(),
        batch.nodes() * FeatureSet::Broad.dim()
    );
    assert!(batch.features.iter().all(|x| x.is_finite()));
}
