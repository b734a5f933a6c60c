//! Graph construction benchmarks: importing `resnet18.onnx` and `gpt2_l4_h256.onnx` through
//! tract, and building ResNet-152, EfficientNet-B3 and GPT-2 (124M, 1,024 tokens) from the
//! zoo.

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;

fn import_resnet18(c: &mut Criterion) {
    let Some(dir) = fuselage_onnx::reference_models_dir() else {
        eprintln!("skipping import_resnet18: FUSELAGE_MODELS not found");
        return;
    };
    let path = dir.join("resnet18.onnx");
    let bytes = std::fs::read(&path).expect("resnet18.onnx is readable");
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.bench_function("resnet18.onnx", |b| {
        b.iter(|| fuselage_onnx::import_bytes(black_box(&bytes), &path).expect("imports"))
    });
    let path = dir.join("gpt2_l4_h256.onnx");
    let bytes = std::fs::read(&path).expect("gpt2_l4_h256.onnx is readable");
    group.bench_function("gpt2_l4_h256.onnx", |b| {
        b.iter(|| fuselage_onnx::import_bytes(black_box(&bytes), &path).expect("imports"))
    });
    group.finish();
}

fn build_zoo(c: &mut Criterion) {
    let mut group = c.benchmark_group("zoo");
    group.bench_function("resnet152", |b| {
        b.iter(|| fuselage_zoo::build(black_box("resnet152")).expect("builds"))
    });
    group.bench_function("efficientnet_b3", |b| {
        b.iter(|| fuselage_zoo::build(black_box("efficientnet_b3")).expect("builds"))
    });
    group.bench_function("gpt2_seq1024", |b| {
        b.iter(|| fuselage_zoo::build_seq(black_box("gpt2"), 1024).expect("builds"))
    });
    group.finish();
}

criterion_group!(benches, import_resnet18, build_zoo);
criterion_main!(benches);
