//! The buffer simulator against the analytic LBDF model, on random connected groups drawn
//! from every zoo network: DRAM must equal `F_D` and the peak must never exceed `F_β`.

mod common;

use fuselage_cost::{BufferSimulator, CostConfig, CostModel, Lbdf};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const GROUPS_PER_NETWORK: usize = 200;
const MAX_GROUP: usize = 40;

#[test]
fn simulator_agrees_with_lbdf_on_zoo_groups() {
    let config = CostConfig::kib(256).unwrap();
    let lbdf = Lbdf::new(config);
    let literal = Lbdf::literal(config);
    let sim = BufferSimulator::new(config).with_timeline(false);
    let mut total = 0;
    println!(
        "| network | groups | largest peak/F_β | mean peak/F_β | peak = F_β | literal F_β exceeded |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (k, name) in fuselage_zoo::NAMES.iter().enumerate() {
        let g = fuselage_zoo::build(name).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(2025 + k as u64);
        let (mut worst, mut sum, mut equal, mut literal_over) = (0.0f64, 0.0, 0, 0);
        for _ in 0..GROUPS_PER_NETWORK {
            let group = common::random_group(&g, &mut rng, MAX_GROUP);
            let cost = lbdf.evaluate(&g, &group).unwrap();
            let run = sim.run(&g, &group).unwrap();
            common::assert_run_matches(&g, &group, &run, &cost, name);
            if run.peak_bytes > literal.evaluate(&g, &group).unwrap().buffer_bytes {
                literal_over += 1;
            }
            let ratio = run.peak_bytes as f64 / cost.buffer_bytes as f64;
            worst = worst.max(ratio);
            sum += ratio;
            equal += usize::from(run.peak_bytes == cost.buffer_bytes);
            total += 1;
        }
        println!(
            "| {name} | {GROUPS_PER_NETWORK} | {worst:.4} | {:.4} | {equal} | {literal_over} |",
            sum / GROUPS_PER_NETWORK as f64
        );
    }
    assert!(total >= 2000);
}

#[test]
fn timeline_is_recorded_and_peaks_match() {
    let g = fuselage_zoo::build("resnet18").unwrap();
    let group = g
        .set_of(&[
            "/layer1/layer1.0/conv1/Conv",
            "/layer1/layer1.0/relu/Relu",
            "/layer1/layer1.0/conv2/Conv",
            "/layer1/layer1.0/Add",
            "/layer1/layer1.0/relu_1/Relu",
        ])
        .unwrap();
    let config = CostConfig::kib(128).unwrap();
    let run = BufferSimulator::new(config).run(&g, &group).unwrap();
    let cost = Lbdf::new(config).evaluate(&g, &group).unwrap();
    assert_eq!(run.rows_computed, 5 * 56);
    assert_eq!(run.rows_loaded, 56);
    assert_eq!(
        run.timeline.len() as u64,
        run.rows_computed + run.rows_loaded
    );
    assert_eq!(
        run.timeline.iter().map(|&(_, b)| b).max(),
        Some(run.peak_bytes)
    );
    assert!(run.timeline.iter().all(|&(_, b)| b >= cost.weight_bytes));
    assert_eq!(run.dram_bytes, cost.dram_bytes);
    println!(
        "resnet18 layer1.0: simulated peak {} vs F_β {}",
        run.peak_bytes, cost.buffer_bytes
    );
    assert!(run.peak_bytes <= cost.buffer_bytes);
}

/// Regression (proptest `lbdf_bounds_the_simulator`): rows that no output row needs (here the
/// bottom rows that floor-mode pools skip) were made tensor by tensor at the end of a phase, so
/// the ReLU made all of its last rows before the Add read any, and the input rows they loaded
/// waited for the Add: peak 196 > `F_β` 140. They are now made just in time, at the phase's
/// rates.
#[test]
fn rows_no_output_needs_are_made_just_in_time() {
    use fuselage_ir::{GraphBuilder, NodeSet, Op, PoolAttrs, TensorShape};
    // input 4×7×7 -> relu -> add(relu, input) -> maxpool 2/2 (3 rows) -> maxpool 2/2 (1 row)
    let mut b = GraphBuilder::new("tail");
    let x = b.input("input", TensorShape::nchw(4, 7, 7)).unwrap();
    let r = b.node("relu", Op::Relu, &[x]).unwrap();
    let a = b.node("add", Op::Add, &[r, x]).unwrap();
    let pool = || Op::MaxPool(PoolAttrs::square(2, 2, 0, false));
    let p = b.node("pool", pool(), &[a]).unwrap();
    b.node("pool2", pool(), &[p]).unwrap();
    let g = b.finish().unwrap();
    let all = NodeSet::full(g.len());
    let config = CostConfig::kib(64).unwrap();
    let lbdf = Lbdf::new(config);
    let rows = resident_rows(&lbdf, &g, &all);
    let expected = [
        ("relu", 1),
        ("add", 2),
        ("pool", 2),
        ("pool2", 1),
        ("input", 1),
    ];
    assert_eq!(
        rows,
        expected.map(|(t, n)| (t.to_string(), n)).to_vec(),
        "resident rows"
    );
    // Rows of 28 bytes (input, relu, add), 12 (pool) and 4 (pool2); no weights.
    let cost = lbdf.evaluate(&g, &all).unwrap();
    assert_eq!(cost.buffer_bytes, 28 + 2 * 28 + 2 * 12 + 4 + 28);
    assert_eq!(cost.buffer_bytes, 140);
    let run = BufferSimulator::new(config).run(&g, &all).unwrap();
    assert_eq!(run.dram_bytes, cost.dram_bytes);
    assert_eq!(run.rows_computed, 7 + 7 + 3 + 1);
    assert_eq!(run.rows_loaded, 7);
    assert!(run.peak_bytes <= cost.buffer_bytes);
    assert_eq!(run.peak_bytes, 124);
}

/// Regression (proptest `lbdf_bounds_the_simulator`, peak 360 > `F_β` 352): a Pad read by two
/// stride-2 pools. Each phase used to advance its drivers (the pure outputs) one whole step at
/// a time, each pulling its branch just in time: `pool_a2`'s row `s` pulled `pool_a` rows `2s`
/// and `2s + 1`, so the Pad made all four rows `4s..=4s + 3` of the step before `pool_b` read
/// any, against the two rows LBDF counts. Every row is now made at its own due step,
/// `(r − hi_t)/a_t`, so the two pools take turns row by row, as the model assumes.
#[test]
fn a_tensor_read_by_two_strided_branches_is_shared_row_by_row() {
    use fuselage_ir::{ConvAttrs, GraphBuilder, NodeSet, Op, PoolAttrs, TensorShape};
    // input 4×9×9 -> pad (1 row on top, 2 below: 12 rows) -> pool_a 2/2 -> pool_a2 2/2
    //                                                     -> pool_b 2/2 -> conv 3×3 /2
    let mut b = GraphBuilder::new("fork");
    let x = b.input("input", TensorShape::nchw(4, 9, 9)).unwrap();
    let pad = b
        .node("pad", Op::pad(vec![0, 0, 1, 0, 0, 0, 2, 0]), &[x])
        .unwrap();
    let pool = || Op::MaxPool(PoolAttrs::square(2, 2, 0, false));
    let pa = b.node("pool_a", pool(), &[pad]).unwrap();
    let pb = b.node("pool_b", pool(), &[pad]).unwrap();
    b.node("pool_a2", pool(), &[pa]).unwrap();
    b.node("conv", Op::Conv(ConvAttrs::square(4, 3, 2, 1, 1)), &[pb])
        .unwrap();
    let g = b.finish().unwrap();
    let all = NodeSet::full(g.len());
    let config = CostConfig::kib(64).unwrap();
    let lbdf = Lbdf::new(config);
    let rows = resident_rows(&lbdf, &g, &all);
    // The pad streams at 4 rows a step; each pool asks for [2, 3] of it at that rate.
    let expected = [
        ("pad", 2),
        ("pool_a", 2),
        ("pool_b", 3),
        ("pool_a2", 1),
        ("conv", 1),
        ("input", 1),
    ];
    assert_eq!(
        rows,
        expected.map(|(t, n)| (t.to_string(), n)).to_vec(),
        "resident rows"
    );
    // Rows of 36 bytes (input, pad), 16 (pools) and 8 (pool_a2, conv); W = 4·4·9 + 4.
    let cost = lbdf.evaluate(&g, &all).unwrap();
    assert_eq!(cost.weight_bytes, 148);
    assert_eq!(
        cost.buffer_bytes,
        148 + 2 * 36 + 2 * 16 + 3 * 16 + 8 + 8 + 36
    );
    assert_eq!(cost.buffer_bytes, 352);
    let run = BufferSimulator::new(config).run(&g, &all).unwrap();
    assert_eq!(run.dram_bytes, cost.dram_bytes);
    assert_eq!(run.rows_computed, 12 + 6 + 6 + 3 + 3);
    assert_eq!(run.rows_loaded, 9);
    assert!(run.peak_bytes <= cost.buffer_bytes);
    // The peak: 148 + 2 pad rows (72) + 1 of pool_a (16) + 2 of pool_b (32) + 1 input row
    // (36). The pad never holds more than its 2 rows (it held 4, 144 bytes, at the old peak).
    assert_eq!(run.peak_bytes, 304);
}

/// Each tensor of `group` with its resident rows under `lbdf`.
fn resident_rows(
    lbdf: &Lbdf,
    g: &fuselage_ir::Graph,
    group: &fuselage_ir::NodeSet,
) -> Vec<(String, u64)> {
    lbdf.breakdown(g, group)
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|t| (t.tensor, t.resident_rows))
        .collect()
}
