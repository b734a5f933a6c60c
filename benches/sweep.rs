//! The exact buffer sweep (`fuselage sweep resnet50 --fusion lbdf --from 32KiB --to 4MiB`):
//! one exact solve per step of the curve. Run with
//! `cargo bench -p fuselage-pipeline --bench sweep`.

use criterion::{Criterion, criterion_group, criterion_main};
use fuselage_cost::{Accelerator, CostConfig, CostKind};
use std::hint::black_box;
use std::time::Duration;

fn sweeps(c: &mut Criterion) {
    let g = fuselage_zoo::build("resnet50").unwrap();
    let hw = Accelerator::beta_only(CostConfig::new(1).unwrap());
    let mut grp = c.benchmark_group("sweep");
    grp.sample_size(10)
        .measurement_time(Duration::from_secs(20));
    grp.bench_function("resnet50_lbdf_32KiB_to_4MiB", |b| {
        b.iter(|| {
            let s = fuselage_pipeline::sweep(&g, &CostKind::Lbdf, &hw, 32 << 10, 4 << 20).unwrap();
            black_box(s.points.len())
        })
    });
    grp.finish();
}

criterion_group!(benches, sweeps);
criterion_main!(benches);
