//! Search benchmarks: NSGA-II throughput on ResNet-152 with a `Cached` model, a 2,000-plan
//! NSGA-II on EfficientNet-B3, and the exact optimiser on ResNet-152, on Inception-v3 and on
//! GPT-2 (12 layers, width 768, 1,024 tokens) at 128 KiB and 2 MiB under both models, and
//! under `tiled` at 2 MiB on Llama 3.2 1B, GPT-2 (1,024 tokens) and BERT-base (512).

use criterion::{Criterion, criterion_group, criterion_main};
use fuselage_cost::{Cached, CostConfig, CostKind, Lbdf};
use fuselage_search::{Budget, Nsga2, Optimal, Problem, SearchStrategy};
use fuselage_split::RandomSplitter;
use std::hint::black_box;

fn searches(c: &mut Criterion) {
    let cfg = CostConfig::kib(256).expect("256 KiB is a size");
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    for (net, budget) in [("resnet152", 2000), ("efficientnet_b3", 2000)] {
        let g = fuselage_zoo::build(net).expect("zoo network");
        group.bench_function(format!("nsga2_{budget}_{net}_lbdf_256KiB"), |b| {
            b.iter(|| {
                // A fresh cache each run: the throughput includes the misses of a real run.
                let model = Cached::new(Lbdf::new(cfg));
                let splitter = RandomSplitter::new(&model);
                let p = Problem::new(&g, &model, &splitter).expect("problem");
                let budget = Budget::new(budget).expect("budget");
                black_box(Nsga2::default().run(&p, &budget, 1).expect("runs").score)
            })
        });
    }
    let g = fuselage_zoo::build("resnet152").expect("zoo network");
    group.bench_function("optimal_resnet152_lbdf_256KiB", |b| {
        b.iter(|| {
            let model = Cached::new(Lbdf::new(cfg));
            let splitter = RandomSplitter::new(&model);
            let p = Problem::new(&g, &model, &splitter).expect("problem");
            black_box(
                Optimal::default()
                    .run(&p, &Budget::new(1).expect("budget"), 0)
                    .expect("runs")
                    .score,
            )
        })
    });
    group.finish();
}

/// The exact optimiser on the two wide networks of the scale issue, and on Llama 3.2 1B (cut
/// into independent regions), a fresh cache each run.
fn optimal_wide(c: &mut Criterion) {
    let mut group = c.benchmark_group("optimal");
    group.sample_size(10);
    for net in ["inception_v3", "gpt2", "llama_3_2_1b"] {
        let g = if net == "gpt2" {
            fuselage_zoo::build_seq(net, 1024).expect("zoo network")
        } else {
            fuselage_zoo::build(net).expect("zoo network")
        };
        for kib in [128, 2048] {
            let cfg = CostConfig::kib(kib).expect("a size");
            for fusion in [CostKind::Lbdf, CostKind::Brr] {
                group.bench_function(format!("{net}_{fusion}_{kib}KiB"), |b| {
                    b.iter(|| {
                        let model = Cached::new(fusion.model(cfg));
                        let splitter = RandomSplitter::new(&model);
                        let p = Problem::new(&g, &model, &splitter).expect("problem");
                        let budget = Budget::new(1).expect("budget");
                        black_box(Optimal::default().run(&p, &budget, 0).expect("runs").score)
                    })
                });
            }
        }
    }
    group.finish();
}

/// The exact `tiled` optimum at 2 MiB of Llama 3.2 1B at 2,048 tokens and at 32,768 (long
/// context: attention through key blocks), of GPT-2 at 1,024 tokens and of BERT-base at 512,
/// a fresh cache each run (the targets of `../shared/design/tiled-fusion.md`: under 5 s, and
/// under 30 s at 32,768 tokens).
fn optimal_tiled(c: &mut Criterion) {
    let mut group = c.benchmark_group("optimal_tiled");
    group.sample_size(10);
    let cfg = CostConfig::kib(2048).expect("a size");
    for (net, seq) in [
        ("llama_3_2_1b", 2048),
        ("llama_3_2_1b", 32_768),
        ("gpt2", 1024),
        ("bert_base_uncased", 512),
    ] {
        let g = fuselage_zoo::build_seq(net, seq).expect("zoo network");
        group.bench_function(format!("{net}_seq{seq}_tiled_2MiB"), |b| {
            b.iter(|| {
                let model = Cached::new(CostKind::Tiled.model(cfg));
                let splitter = RandomSplitter::new(&model);
                let p = Problem::new(&g, &model, &splitter).expect("problem");
                let budget = Budget::new(1).expect("budget");
                black_box(Optimal::default().run(&p, &budget, 0).expect("runs").score)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, searches, optimal_wide, optimal_tiled);
criterion_main!(benches);
