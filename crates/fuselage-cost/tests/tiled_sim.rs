//! The tiled simulator against the `tiled` model (issue 36, point 2): on random connected
//! groups of every zoo network, at 256 KiB and at 2 MiB, the loop nest that runs a group's
//! schedule moves exactly `F_D` and never holds more than `F_β`.

mod common;

use fuselage_cost::{CostConfig, CostModel, Tiled, TiledSimulator};
use fuselage_ir::Graph;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Groups with a schedule simulated per network (half at each buffer).
const GROUPS_PER_NETWORK: usize = 200;
const MAX_GROUP: usize = 40;

/// Simulates up to `GROUPS_PER_NETWORK` scheduled groups of `g`; returns the number checked
/// and the largest and summed peak ÷ buffer.
fn check(name: &str, g: &Graph, seed: u64) -> (usize, f64, f64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (mut checked, mut worst, mut sum) = (0usize, 0.0f64, 0.0f64);
    let mut tries = 0;
    while checked < GROUPS_PER_NETWORK && tries < 20 * GROUPS_PER_NETWORK {
        tries += 1;
        let kib = if tries % 2 == 0 { 256 } else { 2048 };
        let config = CostConfig::kib(kib).unwrap();
        let group = common::random_group(g, &mut rng, MAX_GROUP);
        let cost = Tiled::new(config).evaluate(g, &group).unwrap();
        let Some(schedule) = cost.schedule else {
            continue;
        };
        let run = TiledSimulator::new(config)
            .run(g, &group, &schedule)
            .unwrap();
        common::assert_run_matches(
            g,
            &group,
            &run,
            &cost,
            &format!("{name} at {kib} KiB, {schedule:?}"),
        );
        let ratio = run.peak_bytes as f64 / cost.buffer_bytes as f64;
        worst = worst.max(ratio);
        sum += ratio;
        checked += 1;
    }
    (checked, worst, sum)
}

#[test]
fn the_loop_nest_moves_f_d_and_stays_under_f_beta_on_zoo_groups() {
    println!("| network | groups | largest peak/F_β | mean peak/F_β |");
    println!("| --- | ---: | ---: | ---: |");
    let (mut total, mut worst, mut sum) = (0usize, 0.0f64, 0.0f64);
    // Every zoo network; the text models at the lengths the search tests use.
    let mut nets: Vec<(String, Graph)> = fuselage_zoo::NAMES
        .iter()
        .chain(&fuselage_zoo::WIDE_NAMES)
        .chain(&fuselage_zoo::MODERN_NAMES)
        .map(|&n| {
            let g = match n {
                "gpt2" | "bert_base_uncased" => fuselage_zoo::build_seq(n, 128),
                "llama_3_2_1b" | "tinyllama_1_1b" => fuselage_zoo::build_seq(n, 64),
                _ => fuselage_zoo::build(n),
            };
            (n.to_string(), g.unwrap())
        })
        .collect();
    nets.push((
        "llama_3_2_1b, decode, 4,096 past".into(),
        fuselage_zoo::build_decode("llama_3_2_1b", 4096).unwrap(),
    ));
    nets.push((
        "gpt2, decode, 1,024 past".into(),
        fuselage_zoo::build_decode("gpt2", 1024).unwrap(),
    ));
    for (k, (name, g)) in nets.iter().enumerate() {
        let (n, w, s) = check(name, g, 3600 + k as u64);
        assert!(
            n >= GROUPS_PER_NETWORK,
            "{name}: only {n} groups have a schedule"
        );
        println!("| {name} | {n} | {w:.4} | {:.4} |", s / n as f64);
        total += n;
        worst = worst.max(w);
        sum += s;
    }
    println!(
        "all: {total} groups, largest peak/F_β {worst:.4}, mean {:.4}",
        sum / total as f64
    );
}
