//! Cost-model benchmarks: LBDF and BRR of a 30-node ResNet-50 group (target: LBDF under
//! 2 µs), a `Cached` hit (target: under 100 ns), and the buffer simulator on the same group.

use criterion::{Criterion, criterion_group, criterion_main};
use fuselage_cost::{Brr, BufferSimulator, Cached, CostConfig, CostModel, Lbdf};
use fuselage_ir::{Graph, NodeSet};
use std::hint::black_box;

/// 30 consecutive nodes of ResNet-50 from the first block of layer2 (a downsampling
/// bottleneck and the next one): connected, with skips and a stride-2 path.
fn group(g: &Graph) -> NodeSet {
    let first = g
        .require("/layer2/layer2.0/conv1/Conv")
        .expect("resnet50 has layer2");
    let set = NodeSet::from_ids(g.len(), g.node_ids().filter(|v| v.0 >= first.0).take(30));
    assert!(g.is_connected_set(&set) && set.len() == 30);
    set
}

fn cost_models(c: &mut Criterion) {
    let g = fuselage_zoo::build("resnet50").expect("builds");
    let set = group(&g);
    let config = CostConfig::kib(256).expect("non-zero");
    let (lbdf, brr) = (Lbdf::new(config), Brr::new(config));
    let cached = Cached::new(lbdf);
    cached.evaluate(&g, &set).expect("costs");
    let sim = BufferSimulator::new(config);
    let mut grp = c.benchmark_group("cost");
    grp.bench_function("lbdf_resnet50_30_nodes", |b| {
        b.iter(|| lbdf.evaluate(black_box(&g), black_box(&set)))
    });
    grp.bench_function("brr_resnet50_30_nodes", |b| {
        b.iter(|| brr.evaluate(black_box(&g), black_box(&set)))
    });
    grp.bench_function("cached_hit_resnet50_30_nodes", |b| {
        b.iter(|| cached.evaluate(black_box(&g), black_box(&set)))
    });
    grp.bench_function("simulator_resnet50_30_nodes", |b| {
        b.iter(|| sim.run(black_box(&g), black_box(&set)))
    });
    grp.finish();
}

criterion_group!(benches, cost_models);
criterion_main!(benches);
