//! Cost-model benchmarks: in progress.
fn main() {}
