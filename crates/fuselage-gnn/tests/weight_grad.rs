//! The closed-form gradient of `fuselage_gnn::grad` against burn's autodiff, and the
//! classifier's `ExplainableModel` answers against the trait's provided ones.

use burn::prelude::*;
use fuselage_gnn::explainable::RequiredOnly;
use fuselage_gnn::features::DeviceBatch;
use fuselage_gnn::{
    CostKind, ExplainableModel, GnnClassifier, GraphBatch, GroupGraph, default_device, shipped,
};
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};

/// `v` as a tensor on `device`.
fn tensor(v: &[f32], device: &Device) -> Tensor<1> {
    Tensor::<1>::from_data(TensorData::new(v.to_vec(), [v.len()]), device)
}

fn read(t: Tensor<1>) -> Vec<f32> {
    t.into_data().convert::<f32>().try_to_vec::<f32>().unwrap()
}

/// `batch` on the classifier's device, its messages weighted by `w`.
fn weighted(clf: &GnnClassifier, batch: &GraphBatch, w: Tensor<1>) -> DeviceBatch {
    let mut b = batch.to_device(&clf.device);
    let [m] = w.dims();
    b.edges.as_mut().unwrap().weights = Some(w.reshape([m, 1]));
    b
}

/// `∂(Σ c_g z_g)/∂w` through burn's autodiff, and the logits.
fn autodiff_grad(
    clf: &GnnClassifier,
    batch: &GraphBatch,
    weights: &[f32],
    c: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    let ad = clf.device.clone().autodiff();
    let w = tensor(weights, &ad).require_grad();
    let z = clf.model.forward(&weighted(clf, batch, w.clone()));
    let grads = (z.clone() * tensor(c, &ad)).sum().backward();
    (read(w.grad(&grads).unwrap()), read(z.inner()))
}

/// The same through [`fuselage_gnn::Trace`].
fn closed_form(
    clf: &GnnClassifier,
    batch: &GraphBatch,
    weights: &[f32],
    c: &[f32],
) -> (Vec<f32>, Vec<f32>) {
    let b = weighted(clf, batch, tensor(weights, &clf.device));
    let trace = clf.model.trace(&b);
    let gw = trace.message_weight_grad(tensor(c, &clf.device)).unwrap();
    (read(gw), read(trace.logits()))
}

fn assert_close(a: &[f32], b: &[f32], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    let scale = b.iter().fold(1e-3f32, |m, x| m.max(x.abs()));
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-4 * scale,
            "{what}[{i}]: closed form {x}, autodiff {y} (scale {scale})"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// On random groups of resnet50, batched one to three at a time, with random message
    /// weights and random upstream gradients, the closed form equals burn's autodiff.
    #[test]
    fn the_closed_form_matches_autodiff(
        seed in 0u64..1_000_000,
        groups in 1usize..=3,
        len in 2usize..=40,
        brr in any::<bool>(),
    ) {
        let device = default_device();
        let kind = if brr { CostKind::Brr } else { CostKind::Lbdf };
        let clf = shipped(kind, &device).unwrap();
        let g = fuselage_zoo::build("resnet50").unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut batch = GraphBatch::new(clf.config.feature_set);
        for _ in 0..groups {
            let s = fuselage_ir::sample::random_group(&g, len, &mut rng);
            let beta = [128.0, 256.0, 1024.0][rng.random_range(0..3)] * 1024.0;
            batch.push(&GroupGraph::new(&g, &s).unwrap(), beta, None).unwrap();
        }
        prop_assume!(!batch.src.is_empty());
        let weights: Vec<f32> = (0..batch.src.len()).map(|_| rng.random_range(0.0..1.0)).collect();
        let c: Vec<f32> = (0..groups).map(|_| rng.random_range(-2.0..2.0)).collect();
        let (grad, z) = closed_form(&clf, &batch, &weights, &c);
        let (grad_ad, z_ad) = autodiff_grad(&clf, &batch, &weights, &c);
        assert_close(&z, &z_ad, "logits");
        assert_close(&grad, &grad_ad, "gradient");
        // A gradient that is zero everywhere would match trivially.
        prop_assert!(grad_ad.iter().any(|x| x.abs() > 1e-6));
    }
}

#[test]
fn a_batch_without_edges_has_no_gradient() {
    let device = default_device();
    let clf = shipped(CostKind::Lbdf, &device).unwrap();
    let g = fuselage_zoo::build("resnet50").unwrap();
    let one = fuselage_ir::NodeSet::from_ids(g.len(), g.node_ids().take(1));
    let mut batch = GraphBatch::new(clf.config.feature_set);
    batch
        .push(&GroupGraph::new(&g, &one).unwrap(), 262144.0, None)
        .unwrap();
    let b = batch.to_device(&device);
    let trace = clf.model.trace(&b);
    assert!(trace.message_weight_grad(tensor(&[1.0], &device)).is_none());
    let z = read(trace.logits());
    assert_eq!(z, read(clf.model.forward(&b)));
}

#[test]
fn the_provided_answers_match_the_classifiers_own() {
    let device = default_device();
    let clf = shipped(CostKind::Brr, &device).unwrap();
    let plain = RequiredOnly(clf.clone());
    let g = fuselage_zoo::build("resnet50").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let groups: Vec<GroupGraph> = (0..3)
        .map(|i| {
            let s = fuselage_ir::sample::random_group(&g, 8 + 6 * i, &mut rng);
            GroupGraph::new(&g, &s).unwrap()
        })
        .collect();
    let masks: Vec<Vec<f32>> = groups
        .iter()
        .map(|gg| {
            gg.edges
                .iter()
                .map(|_| rng.random_range(0.0..1.0))
                .collect()
        })
        .collect();
    let items: Vec<_> = groups
        .iter()
        .zip(&masks)
        .enumerate()
        .map(|(i, (gg, m))| (gg, 128 * 1024, (i > 0).then_some(m.as_slice())))
        .collect();
    // Logits: one plain forward pass against the compressed, chunked inference.
    assert_close(
        &ExplainableModel::logits(&clf, &items).unwrap(),
        &plain.logits(&items).unwrap(),
        "logits",
    );
    // The gradient: the closed form against autodiff, with a loss that reads the logits.
    let mut batch = GraphBatch::new(clf.config.feature_set);
    for (gg, beta, w) in &items {
        batch.push(gg, *beta as f64, *w).unwrap();
    }
    let b = batch.to_device(&device);
    let mut seen = Vec::new();
    let mut dloss = |z: &[f32]| {
        seen.push(z.to_vec());
        z.iter().map(|z| z.tanh()).collect()
    };
    let ours = read(clf.message_weight_grad(&b, &mut dloss).unwrap().unwrap());
    let provided = read(plain.message_weight_grad(&b, &mut dloss).unwrap().unwrap());
    assert_close(&seen[0], &seen[1], "logits given to the loss");
    assert_close(&ours, &provided, "gradient");
    assert!(provided.iter().any(|x| x.abs() > 1e-6));
    // A loss gradient of the wrong length is an error, not a panic.
    for m in [&clf as &dyn ExplainableModel, &plain] {
        assert!(m.message_weight_grad(&b, &mut |_| vec![1.0]).is_err());
    }
}

/// A batch traced under many weightings ([`ExplainableModel::weight_gradients`], which
/// computes the first layer's constant parts once) gives, bit for bit, what the batch with
/// each weighting gives alone; and a trace's logits are those of the plain forward pass.
#[test]
fn many_weightings_of_one_batch_are_bit_for_bit_each_alone() {
    let device = default_device();
    let g = fuselage_zoo::build("resnet50").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    for kind in [CostKind::Lbdf, CostKind::Brr] {
        let clf = shipped(kind, &device).unwrap();
        let plain = RequiredOnly(clf.clone());
        let mut batch = GraphBatch::new(clf.config.feature_set);
        for len in [12, 30] {
            let s = fuselage_ir::sample::random_group(&g, len, &mut rng);
            batch
                .push(&GroupGraph::new(&g, &s).unwrap(), 131072.0, None)
                .unwrap();
        }
        let b = batch.to_device(&device);
        let m = batch.src.len();
        let ours = clf.weight_gradients(&b);
        let provided = plain.weight_gradients(&b);
        for _ in 0..3 {
            let w: Vec<f32> = (0..m).map(|_| rng.random_range(0.0..1.0)).collect();
            let weights = || Tensor::<1>::from_data(TensorData::new(w.clone(), [m]), &device);
            let alone = b.with_weights(weights().reshape([m, 1]));
            let dloss = |z: &[f32]| z.iter().map(|z| z.tanh()).collect::<Vec<_>>();
            let many = read(
                ours.at(weights().reshape([m, 1]), &mut |z| dloss(z))
                    .unwrap()
                    .unwrap(),
            );
            let each = read(
                clf.message_weight_grad(&alone, &mut |z| dloss(z))
                    .unwrap()
                    .unwrap(),
            );
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&many), bits(&each), "{kind:?}: gradient");
            assert_eq!(
                bits(&read(clf.model.trace(&alone).logits())),
                bits(&read(clf.model.forward(&alone))),
                "{kind:?}: logits"
            );
            // The provided answer (autodiff, each weighting anew) agrees to rounding.
            let autodiff = read(
                provided
                    .at(weights().reshape([m, 1]), &mut |z| dloss(z))
                    .unwrap()
                    .unwrap(),
            );
            assert_close(&many, &autodiff, "gradient against autodiff");
        }
    }
}
