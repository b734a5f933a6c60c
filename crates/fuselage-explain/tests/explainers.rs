//! Every explainer scores every edge, deterministically per seed; the shipped PG and RG
//! checkpoints load and reproduce their saved explanations; training is seeded.

#![cfg(feature = "learned")]

use fuselage_cost::{CostConfig, CostModel, Lbdf};
use fuselage_explain::learned::{
    ExplainSet, ExplainSetConfig, ExplainerMeta, GnnExplainer, GnnExplainerConfig, PgConfig,
    PgExplainer, RgConfig, RgExplainer, evaluate_explainer, fidelity, probe_scores, shipped_pg,
    shipped_rg,
};
use fuselage_explain::{CostExplainer, Explainer, RandomExplainer, render};
use fuselage_gnn::explainable::RequiredOnly;
use fuselage_gnn::{
    Checkpoint, CostKind, FeatureSet, GnnClassifier, GroupGraph, default_device, shipped,
    shipped_from, shipped_meta, shipped_stem,
};
use fuselage_ir::{Graph, NodeSet};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const BETA: u64 = 128 * 1024;

/// The cost model every explanation is judged by: LBDF at β = [`BETA`].
fn lbdf() -> Lbdf {
    Lbdf::new(CostConfig::new(BETA).unwrap())
}

fn classifier() -> GnnClassifier {
    shipped(CostKind::Lbdf, &default_device()).unwrap()
}

/// 30 consecutive nodes of ResNet-50 from layer2: invalid at 128 KiB, with skips.
fn group(g: &Graph, n: usize) -> NodeSet {
    let first = g.require("/layer2/layer2.0/conv1/Conv").unwrap();
    NodeSet::from_ids(g.len(), g.node_ids().filter(|v| v.0 >= first.0).take(n))
}

fn all_explainers(clf: &GnnClassifier) -> Vec<Box<dyn Explainer>> {
    vec![
        Box::new(GnnExplainer::new(clf.clone())),
        Box::new(shipped_pg(clf.clone()).unwrap()),
        Box::new(shipped_rg(clf.clone()).unwrap()),
        Box::new(CostExplainer::new()),
        Box::new(RandomExplainer::default()),
    ]
}

#[test]
fn every_explainer_scores_every_edge_and_is_seeded() {
    let clf = classifier();
    let g = fuselage_zoo::build("resnet50").unwrap();
    let set = group(&g, 30);
    let n_edges = GroupGraph::new(&g, &set).unwrap().edges.len();
    assert!(n_edges >= 30);
    for e in all_explainers(&clf) {
        let run = |seed| {
            e.explain(&g, &set, &lbdf(), &mut ChaCha8Rng::seed_from_u64(seed))
                .unwrap()
        };
        let a = run(7);
        assert_eq!(a.edges.len(), n_edges, "{}", e.name());
        assert_eq!(a.edge_scores.len(), n_edges, "{}", e.name());
        assert_eq!(a.node_scores.len(), 30, "{}", e.name());
        assert!(a.edge_scores.iter().all(|s| s.is_finite()), "{}", e.name());
        assert_eq!(a.selected.len(), (n_edges as f32 * 0.25).ceil() as usize);
        assert_eq!(a, run(7), "{} is not deterministic per seed", e.name());
        // The selection is the top of the ranking.
        let worst_selected = a
            .selected
            .iter()
            .map(|&i| a.edge_scores[i])
            .fold(f32::MAX, f32::min);
        let best_other = (0..n_edges)
            .filter(|i| !a.selected.contains(i))
            .map(|i| a.edge_scores[i])
            .fold(f32::MIN, f32::max);
        assert!(worst_selected >= best_other, "{}", e.name());
        let dot = render::to_dot(&g, &a);
        assert_eq!(dot.matches(" -> ").count(), n_edges);
    }
}

#[test]
fn gnn_explainer_seeds_differ_and_mask_is_a_probability() {
    let clf = classifier();
    let g = fuselage_zoo::build("resnet50").unwrap();
    let set = group(&g, 10);
    let gnne = GnnExplainer::with_config(
        clf,
        GnnExplainerConfig {
            epochs: 30,
            ..Default::default()
        },
    );
    let gg = GroupGraph::new(&g, &set).unwrap();
    let a = gnne
        .mask(&gg, BETA, &mut ChaCha8Rng::seed_from_u64(1))
        .unwrap();
    let b = gnne
        .mask(&gg, BETA, &mut ChaCha8Rng::seed_from_u64(2))
        .unwrap();
    assert_eq!(a.len(), gg.edges.len());
    assert!(a.iter().all(|m| *m > 0.0 && *m < 1.0));
    assert_ne!(a, b);
}

#[test]
fn fidelity_of_the_whole_graph_is_zero_when_kept() {
    let clf = classifier();
    let g = fuselage_zoo::build("resnet50").unwrap();
    let gg = GroupGraph::new(&g, &group(&g, 30)).unwrap();
    let all = vec![1.0; gg.edges.len()];
    let (plus, minus) = fidelity(&clf, &gg, BETA, &all).unwrap();
    assert!(
        minus.abs() < 1e-6,
        "keeping every edge changes nothing: {minus}"
    );
    let none = vec![0.0; gg.edges.len()];
    let (plus0, _) = fidelity(&clf, &gg, BETA, &none).unwrap();
    assert!(
        plus0.abs() < 1e-6,
        "removing no edge changes nothing: {plus0}"
    );
    assert!(plus.is_finite());
}

#[test]
fn shipped_checkpoints_reproduce_their_saved_explanations() {
    for (kind, set) in [CostKind::Lbdf, CostKind::Brr]
        .into_iter()
        .flat_map(|k| FeatureSet::ALL.map(|s| (k, s)))
    {
        let clf = shipped_from(kind, set, &default_device()).unwrap();
        assert_eq!(shipped_meta(kind, set).unwrap().cost_model, kind);
        let stem = shipped_stem(kind, set);
        let pg = shipped_pg(clf.clone()).unwrap();
        let rg = shipped_rg(clf.clone()).unwrap();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("checkpoints");
        for (name, scores) in [
            ("pg", probe_scores(|gg, b| pg.scores(gg, b)).unwrap()),
            ("rg", probe_scores(|gg, b| rg.scores(gg, b)).unwrap()),
        ] {
            let json = std::fs::read_to_string(dir.join(format!("{name}_{stem}.json"))).unwrap();
            let meta: serde_json::Value = serde_json::from_str(&json).unwrap();
            let saved: Vec<Vec<f32>> = serde_json::from_value(meta["probe"].clone()).unwrap();
            assert_eq!(saved.len(), 16);
            // The ranking carries information: gates saturated at one value (what PG's
            // defaults once trained to) would tie every edge.
            let tied: Vec<usize> = saved
                .iter()
                .filter(|s| s.len() >= 2 && s.windows(2).all(|w| w[0] == w[1]))
                .map(Vec::len)
                .collect();
            assert!(
                tied.is_empty(),
                "{name} {}: tied probe groups of {tied:?} edges",
                kind.name()
            );
            for (a, b) in saved.iter().zip(&scores) {
                assert_eq!(a.len(), b.len());
                for (x, y) in a.iter().zip(b) {
                    assert!((x - y).abs() < 1e-5, "{name} {}: {x} vs {y}", kind.name());
                }
            }
        }
        // A PG checkpoint is not an RG one.
        let tmp = std::env::temp_dir().join(format!("fuselage-explain-{}", std::process::id()));
        std::fs::create_dir_all(&tmp).unwrap();
        std::fs::copy(dir.join(format!("pg_{stem}.bpk")), tmp.join("x.bpk")).unwrap();
        std::fs::copy(dir.join(format!("pg_{stem}.json")), tmp.join("x.json")).unwrap();
        assert!(RgExplainer::load(tmp.join("x"), clf.clone()).is_err());
        assert!(PgExplainer::load(tmp.join("x"), clf.clone()).is_ok());
        // Nor does it explain the other feature set's classifier, whose embeddings it never
        // read.
        let other = FeatureSet::ALL.into_iter().find(|&o| o != set).unwrap();
        let err = PgExplainer::load(
            tmp.join("x"),
            shipped_from(kind, other, &default_device()).unwrap(),
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("cannot explain"), "{err}");
        // The files are fuselage-gnn's generic checkpoint: read and written again, the same
        // weights and the same JSON but for the last digits of floats (serde_json's parser
        // rounds them).
        for name in ["pg", "rg"] {
            let file = dir.join(format!("{name}_{stem}"));
            let ck = Checkpoint::<ExplainerMeta>::load(&file).unwrap();
            assert_eq!(ck.meta.feature_set, set);
            ck.save(tmp.join("again")).unwrap();
            let read = |stem: &std::path::Path, ext| std::fs::read(stem.with_extension(ext));
            let (again, shipped) = (tmp.join("again"), file);
            assert!(read(&again, "bpk").unwrap() == read(&shipped, "bpk").unwrap());
            let skeleton = |stem: &std::path::Path| {
                let text = String::from_utf8(read(stem, "json").unwrap()).unwrap();
                text.replace(|c: char| "0123456789.-+eE".contains(c), "")
            };
            assert_eq!(skeleton(&again), skeleton(&shipped), "{name} {kind}");
        }
        // A width read from the file is range-checked before the network is allocated: a
        // forged `hidden` of 2^62 once overflowed its capacity (a panic).
        for (name, forged) in [("pg", 4_611_686_018_427_387_904u64), ("rg", 0)] {
            let file = dir.join(format!("{name}_{stem}"));
            let mut meta: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(file.with_extension("json")).unwrap(),
            )
            .unwrap();
            meta["config"]["hidden"] = serde_json::json!(forged);
            std::fs::write(tmp.join("forged.json"), meta.to_string()).unwrap();
            std::fs::copy(file.with_extension("bpk"), tmp.join("forged.bpk")).unwrap();
            let err = match name {
                "pg" => PgExplainer::load(tmp.join("forged"), clf.clone()).err(),
                _ => RgExplainer::load(tmp.join("forged"), clf.clone()).err(),
            };
            assert_eq!(
                err.unwrap().to_string(),
                format!("explainer checkpoint: {name} settings: hidden is {forged}, not 1 to 1024")
            );
        }
        // A missing checkpoint names its file.
        let err = PgExplainer::load(tmp.join("missing"), clf).err().unwrap();
        let message = err.to_string();
        assert!(
            message.starts_with("explainer checkpoint: reading ")
                && message.contains("missing.json: "),
            "{message}"
        );
    }
}

#[test]
fn training_is_seeded_and_round_trips_through_a_checkpoint() {
    let clf = classifier();
    let mut cfg = ExplainSetConfig::training(3, 3);
    cfg.networks.truncate(3);
    let set = ExplainSet::collect(&cfg, &clf).unwrap();
    assert!(set.instances.len() >= 6, "{} groups", set.instances.len());
    assert!(set.instances.iter().all(|i| i.logit > 0.0));
    let pg_cfg = PgConfig {
        epochs: 3,
        ..Default::default()
    };
    let (a, ra) = PgExplainer::train(clf.clone(), &set, pg_cfg, |_| {}).unwrap();
    let (b, _) = PgExplainer::train(clf.clone(), &set, pg_cfg, |_| {}).unwrap();
    let probe_a = probe_scores(|gg, be| a.scores(gg, be)).unwrap();
    assert_eq!(probe_a, probe_scores(|gg, be| b.scores(gg, be)).unwrap());
    assert_eq!(ra.epochs.len(), 3);
    let rg_cfg = RgConfig {
        epochs: 2,
        ..Default::default()
    };
    let (r, rr) = RgExplainer::train(clf.clone(), &set, rg_cfg, |_| {}).unwrap();
    assert_eq!(rr.epochs.len(), 2);
    let tmp = std::env::temp_dir().join(format!("fuselage-explain-train-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    a.save(tmp.join("pg"), &ra).unwrap();
    r.save(tmp.join("rg"), &rr).unwrap();
    let a2 = PgExplainer::load(tmp.join("pg"), clf.clone()).unwrap();
    let r2 = RgExplainer::load(tmp.join("rg"), clf).unwrap();
    assert_eq!(probe_a, probe_scores(|gg, be| a2.scores(gg, be)).unwrap());
    assert_eq!(
        probe_scores(|gg, be| r.scores(gg, be)).unwrap(),
        probe_scores(|gg, be| r2.scores(gg, be)).unwrap()
    );
}

/// Records the configuration of every cost model it is handed; explains at random.
#[derive(Default)]
struct SeenConfigs(std::sync::Mutex<Vec<CostConfig>>);

impl Explainer for SeenConfigs {
    fn name(&self) -> &str {
        "seen"
    }
    fn explain(
        &self,
        g: &Graph,
        group: &NodeSet,
        model: &dyn CostModel,
        rng: &mut ChaCha8Rng,
    ) -> fuselage_explain::Result<fuselage_explain::Explanation> {
        self.0.lock().unwrap().push(*model.config());
        RandomExplainer::default().explain(g, group, model, rng)
    }
}

/// The set's element sizes travel with each instance to the model the metrics hand the
/// explainer: no β is rebuilt into a config that drops them (issue 35).
#[test]
fn an_explain_set_carries_its_element_sizes_to_the_metrics() {
    let clf = classifier();
    let mut cfg = ExplainSetConfig::training(5, 3);
    cfg.networks.truncate(2);
    cfg.activation_element_bytes = 2;
    let set = ExplainSet::collect(&cfg, &clf).unwrap();
    assert!(!set.instances.is_empty());
    for inst in &set.instances {
        let c = inst.config;
        assert_eq!(
            (c.weight_element_bytes(), c.activation_element_bytes()),
            (1, 2)
        );
        assert!(cfg.betas_kib.contains(&(c.buffer_bytes() / 1024)));
        let exact = CostKind::Lbdf.model(c);
        assert!(
            !exact
                .evaluate(set.graph_of(inst), &inst.group)
                .unwrap()
                .valid
        );
    }
    let seen = SeenConfigs::default();
    evaluate_explainer(&seen, &clf, &set, 0).unwrap();
    let configs: Vec<CostConfig> = set.instances.iter().map(|i| i.config).collect();
    assert_eq!(*seen.0.lock().unwrap(), configs);
}

#[test]
fn explainers_and_metrics_are_generic_over_the_model() {
    let clf = classifier();
    let other = || RequiredOnly(clf.clone());
    let g = fuselage_zoo::build("resnet50").unwrap();
    let set = group(&g, 12);
    let gg = GroupGraph::new(&g, &set).unwrap();
    // Fidelity: the same up to the rounding of the classifier's compressed inference.
    let selected: Vec<f32> = (0..gg.edges.len()).map(|i| (i % 2) as f32).collect();
    let (plus, minus) = fidelity(&clf, &gg, BETA, &selected).unwrap();
    let (plus2, minus2) = fidelity(&other(), &gg, BETA, &selected).unwrap();
    assert!((plus - plus2).abs() < 1e-4 && (minus - minus2).abs() < 1e-4);
    // PG and RG read only the embeddings at inference: the same explanations, bit for bit.
    let run = |e: &dyn Explainer| {
        e.explain(&g, &set, &lbdf(), &mut ChaCha8Rng::seed_from_u64(1))
            .unwrap()
    };
    let pg = shipped_pg(other()).unwrap();
    assert_eq!(run(&pg), run(&shipped_pg(clf.clone()).unwrap()));
    let rg = shipped_rg(other()).unwrap();
    assert_eq!(run(&rg), run(&shipped_rg(clf.clone()).unwrap()));
    // GNNExplainer descends the provided (autodiff) gradient where the classifier uses its
    // closed form: the same mask up to rounding.
    let config = GnnExplainerConfig {
        epochs: 10,
        ..Default::default()
    };
    let ours = GnnExplainer::with_config(other(), config)
        .mask(&gg, BETA, &mut ChaCha8Rng::seed_from_u64(1))
        .unwrap();
    let reference = GnnExplainer::with_config(clf.clone(), config)
        .mask(&gg, BETA, &mut ChaCha8Rng::seed_from_u64(1))
        .unwrap();
    assert_eq!(ours.len(), gg.edges.len());
    for (a, b) in ours.iter().zip(&reference) {
        assert!((a - b).abs() < 1e-3, "{ours:?} vs {reference:?}");
    }
}
