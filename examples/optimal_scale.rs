//! How the exact optimiser's work grows with its largest group, on one zoo network.
//!
//! ```text
//! cargo run --release -p fuselage-search --example optimal_scale -- inception_v3 brr 2048 16,24,32,64
//! ```
//!
//! Arguments: a zoo network (`gpt2` is built at 1,024 tokens; `NAME@SEQ` builds a text model
//! at SEQ tokens, `NAME~PAST` one decode step of a Llama against PAST cached tokens), the cost model (`lbdf`, `brr` or `tiled`), the buffer in KiB, the `max_group` values to try (comma-separated), and optionally
//! `plain` to grow every group across a bottleneck instead of joining them
//! (`Optimal::join_bottlenecks` off: the same optimum, for comparison). For each it prints
//! the optimal DRAM over that family (`docs/optimal.md`), the candidate sets costed, the stop
//! reason and the wall time, then the cost cache's hits and misses. Each run has a fresh
//! cache.

use fuselage_cost::{Cached, CostConfig, CostKind};
use fuselage_search::{Budget, Optimal, Problem, SearchStrategy};
use fuselage_split::RandomSplitter;
use std::error::Error;
use std::time::Instant;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (net, fusion, kib, sizes, plain) = match args.as_slice() {
        [net, fusion, kib, sizes] => (net, fusion, kib, sizes, false),
        [net, fusion, kib, sizes, plain] if plain == "plain" => (net, fusion, kib, sizes, true),
        _ => {
            return Err(
                "usage: optimal_scale NETWORK[@SEQ] lbdf|brr|tiled KIB MAX_GROUP[,MAX_GROUP...] [plain]".into(),
            );
        }
    };
    // `NAME@SEQ` builds a text model at SEQ tokens, `NAME~PAST` a Llama decode step.
    let g = match net.split_once('@') {
        Some((name, seq)) => fuselage_zoo::build_seq(name, seq.parse()?)?,
        None if net.contains('~') => {
            let (name, past) = net.split_once('~').unwrap_or_default();
            fuselage_zoo::build_decode(name, past.parse()?)?
        }
        None if net == "gpt2" => fuselage_zoo::build_seq(net, 1024)?,
        None => fuselage_zoo::build(net)?,
    };
    let kind: CostKind = fusion.parse()?;
    let cfg = CostConfig::kib(kib.parse()?)?;
    for size in sizes.split(',') {
        let max_group: usize = size.parse()?;
        let model = Cached::new(kind.model(cfg));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter)?;
        let mut optimal = Optimal::default();
        optimal.max_group = max_group;
        optimal.join_bottlenecks = !plain;
        let start = Instant::now();
        let r = optimal.run(&p, &Budget::new(1)?, 0)?;
        println!(
            "{net} {fusion} {kib} KiB max_group {max_group}: DRAM {} B, {} sets costed, stop {:?}, {:.2} s",
            r.score.dram_bytes,
            r.evaluations,
            r.stop,
            start.elapsed().as_secs_f64()
        );
        let stats = model.stats();
        println!("  cache: {} hits, {} misses", stats.hits, stats.misses);
    }
    Ok(())
}
