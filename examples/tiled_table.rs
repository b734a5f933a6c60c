//! The table of `docs/searches.md` "tiled against LBDF, BRR and the floor": the exact optimum
//! of every zoo network under each cost model at 256 KiB and 2 MiB, b = 1.
//!
//! ```text
//! cargo run --release -p fuselage-search --example tiled_table -- [SECONDS] [NETWORK...]
//! ```
//!
//! `SECONDS` (default 120) limits each run of the exact optimiser; a run stopped by it is
//! marked "(not proven)". Text models run at the sequence lengths of the table in
//! `../shared/design/tiled-fusion.md` (GPT-2 1,024, BERT-base 512, Llama 2,048); vision models
//! at their presets. Prints one Markdown row per network and buffer, with the `tiled`
//! optimiser's wall time.

use fuselage_cost::{Cached, CostConfig, CostKind};
use fuselage_ir::Graph;
use fuselage_search::{Budget, Optimal, Problem, SearchStrategy, StopReason};
use fuselage_split::RandomSplitter;
use std::error::Error;
use std::time::{Duration, Instant};

fn network(name: &str) -> Result<Graph, Box<dyn Error>> {
    let seq = match name {
        "gpt2" => Some(1024),
        "bert_base_uncased" => Some(512),
        "llama_3_2_1b" | "tinyllama_1_1b" => Some(2048),
        _ => None,
    };
    Ok(match seq {
        Some(s) => fuselage_zoo::build_seq(name, s)?,
        None => fuselage_zoo::build(name)?,
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (limit, names): (u64, Vec<String>) = match args.first().map(|a| a.parse::<u64>()) {
        Some(Ok(s)) => (s, args[1..].to_vec()),
        _ => (120, args.clone()),
    };
    let names: Vec<String> = if names.is_empty() {
        fuselage_zoo::NAMES
            .iter()
            .chain(&fuselage_zoo::WIDE_NAMES)
            .chain(&fuselage_zoo::MODERN_NAMES)
            .map(|s| s.to_string())
            .collect()
    } else {
        names
    };
    println!(
        "| network | β | LBDF (MB) | BRR (MB) | tiled (MB) | floor (MB) | tiled ÷ floor | LBDF ÷ floor | tiled time |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for name in &names {
        let g = network(name)?;
        for kib in [256u64, 2048] {
            let cfg = CostConfig::kib(kib)?;
            let mut cells = Vec::new();
            let mut floor = 0;
            let mut values = Vec::new();
            let mut seconds = 0.0;
            for kind in CostKind::ALL {
                let model = Cached::new(kind.model(cfg));
                let splitter = RandomSplitter::new(&model);
                let p = Problem::new(&g, &model, &splitter)?;
                floor = p.lower_bound();
                let budget = Budget::new(1)?.with_time_limit(Duration::from_secs(limit));
                let start = Instant::now();
                let r = Optimal::default().run(&p, &budget, 0)?;
                if kind == CostKind::Tiled {
                    seconds = start.elapsed().as_secs_f64();
                }
                let proven = if r.stop == StopReason::Exhausted {
                    ""
                } else {
                    " (not proven)"
                };
                cells.push(format!("{:.3}{proven}", r.score.dram_bytes as f64 / 1e6));
                values.push(r.score.dram_bytes);
            }
            let beta = if kib >= 1024 {
                format!("{} MiB", kib / 1024)
            } else {
                format!("{kib} KiB")
            };
            let ratio = |v: u64| v as f64 / floor.max(1) as f64;
            println!(
                "| {name} | {beta} | {} | {} | **{}** | {:.3} | {:.2} | {:.2} | {seconds:.2} s |",
                cells[0],
                cells[1],
                cells[2],
                floor as f64 / 1e6,
                ratio(values[2]),
                ratio(values[0]),
            );
        }
    }
    Ok(())
}
