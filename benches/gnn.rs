//! Classifier benchmarks: one batch of 256 groups of ~30 nodes (resnet101, and efficientnet_b3,
//! whose groups repeat less; and the plain, uncompressed forward pass on the first), a single
//! group, and one training epoch on the full data set. `FUSELAGE_GNN_BACKEND=ndarray` (with
//! `--features ndarray`) benchmarks the other CPU backend.

use criterion::{Criterion, criterion_group, criterion_main};
use fuselage_gnn::*;
use rand::SeedableRng;
use std::hint::black_box;

/// 256 random 30-node groups of `net`, encoded.
fn groups_of(net: &str) -> Vec<GroupGraph> {
    let g = fuselage_zoo::build(net).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    (0..256)
        .map(|_| {
            let s = fuselage_ir::sample::random_group(&g, 30, &mut rng);
            GroupGraph::new(&g, &s).unwrap()
        })
        .collect()
}

fn inference(c: &mut Criterion) {
    let device = default_device();
    let clf = shipped(CostKind::Lbdf, &device).expect("shipped checkpoint");
    let groups = groups_of("resnet101");
    let items: Vec<_> = groups.iter().map(|gg| (gg, 256 * 1024, None)).collect();
    c.bench_function("batch_256_groups_30_nodes", |b| {
        b.iter(|| black_box(clf.probabilities(&items).unwrap()))
    });
    let one = [(&groups[0], 256 * 1024, None)];
    c.bench_function("single_group_30_nodes", |b| {
        b.iter(|| black_box(clf.probabilities(&one).unwrap()))
    });
    // The compressed forward shares repeated rows (`fuselage_gnn::compress`); efficientnet_b3's
    // groups repeat least of the zoo's, and the plain forward shares nothing.
    let effnet = groups_of("efficientnet_b3");
    let items: Vec<_> = effnet.iter().map(|gg| (gg, 256 * 1024, None)).collect();
    c.bench_function("batch_256_groups_30_nodes_efficientnet_b3", |b| {
        b.iter(|| black_box(clf.probabilities(&items).unwrap()))
    });
    let mut batch = GraphBatch::new(clf.config.feature_set);
    for gg in &groups {
        batch.push(gg, 262144.0, None).unwrap();
    }
    c.bench_function("batch_256_groups_30_nodes_plain_forward", |b| {
        b.iter(|| black_box(clf.model.forward(&batch.to_device(&device))))
    });
}

fn epoch(c: &mut Criterion) {
    let device = default_device();
    // The full data set (`DatasetConfig::paper`, 10,866 groups, 54,330 LBDF samples); one
    // epoch trains on its 80% split with the paper's settings.
    let ds = generate_dataset(&DatasetConfig::paper(0)).unwrap();
    let data = ds.encode(CostKind::Lbdf).unwrap();
    let tc = TrainConfig {
        epochs: 1,
        ..TrainConfig::paper(CostKind::Lbdf)
    };
    let mut group = c.benchmark_group("training");
    group.sample_size(10);
    group.bench_function(
        format!(
            "one_epoch_full_dataset_{}_samples",
            data.samples.len() * 8 / 10
        ),
        |b| b.iter(|| black_box(train_encoded(&tc, &data, &device, |_| {}).unwrap())),
    );
    group.finish();
}

criterion_group!(benches, inference, epoch);
criterion_main!(benches);
