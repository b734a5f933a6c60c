//! The paper's experiments through the library, as `fuselage reproduce` runs them.
//!
//! ```text
//! cargo run --release -p fuselage-reproduce --example reproduce -- [--quick] [OUT_DIR]
//! cargo run --release -p fuselage-reproduce --example reproduce -- [--quick] --screen
//! ```
//!
//! `--screen` runs only the screen of the "where explanations should win" table and prints
//! each setting's random-splitter medians against the optimum.

use fuselage_reproduce::{self as reproduce, Scale, Table};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let out = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or("docs", String::as_str);
    let scale = if quick { Scale::quick() } else { Scale::full() };
    if args.iter().any(|a| a == "--screen") {
        for s in reproduce::screen(&scale, &|done, total| eprint!("\r{done}/{total} runs"))? {
            let r = &s.row;
            let gaps: Vec<String> = r
                .searches
                .iter()
                .zip(&s.random_bytes)
                .map(|(search, &b)| {
                    let gap = (b as f64 / s.optimal_bytes.max(1) as f64 - 1.0) * 100.0;
                    format!(
                        "{} {:.3} MB ({gap:+.1}%)",
                        search.table_name(),
                        b as f64 / 1e6
                    )
                })
                .collect();
            println!(
                "{} {} {} KiB: {}; optimal {:.3} MB{}",
                r.network,
                r.fusion,
                r.buffer_kib,
                gaps.join(", "),
                s.optimal_bytes as f64 / 1e6,
                if s.selected() { "  <- selected" } else { "" }
            );
        }
        return Ok(());
    }
    let r = reproduce::run(&scale, &|done, total| eprint!("\r{done}/{total} runs"))?;
    eprintln!();
    r.write(std::path::Path::new(out))?;
    for (i, row) in r
        .rows
        .iter()
        .enumerate()
        .filter(|(_, row)| row.table == Table::II)
    {
        for &s in &row.searches {
            let (best, dram) = r.best_explainer(i, s);
            println!(
                "{} {}: random {:.3} MB, best ({best}) {:.3} MB, optimal {:.3} MB",
                row.network,
                s.table_name(),
                r.median_dram(i, s, None) as f64 / 1e6,
                dram as f64 / 1e6,
                r.references[i].optimal_bytes as f64 / 1e6
            );
        }
    }
    Ok(())
}
