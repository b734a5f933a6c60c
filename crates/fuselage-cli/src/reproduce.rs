//! `fuselage reproduce`: the paper's tables and curves, rerun by the harness `fuselage-reproduce`;
//! this module holds the command's flags, its progress bar and its summary.

use clap::Args;
use fuselage_reproduce::{self as reproduce, Scale};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};

/// Arguments of `fuselage reproduce`.
#[derive(Debug, Args)]
pub struct ReproduceCmd {
    /// A smoke run of every table: one seed, budgets 300 (Table II) and 150 (III/IV),
    /// GNNExplainer at 10 steps.
    #[arg(long)]
    quick: bool,
    /// Where `results.md` goes; `results/` beside it gets the curves (SVG), the per-run numbers
    /// (JSON) and every plan (plan files for `fuselage cost --plan`).
    #[arg(long, value_name = "DIR", default_value = "docs")]
    out: PathBuf,
    /// Worker threads (default: one per core).
    #[arg(long)]
    threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// The files a reproduction into `dir` writes that exist already, where they can be known
/// before the run: `results.md`, `results/runs.json` and `timings.json`, and every JSON and SVG
/// file in `results/` and `results/plans/`.
fn written_under(dir: &Path) -> Vec<PathBuf> {
    let sub = dir.join("results");
    let mut files = vec![
        dir.join("results.md"),
        sub.join("runs.json"),
        sub.join("timings.json"),
    ];
    for folder in [sub.clone(), sub.join("plans")] {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        files.extend(entries.flatten().map(|e| e.path()).filter(|p| {
            p.extension()
                .is_some_and(|ext| ext == "json" || ext == "svg")
        }));
    }
    files
}

pub fn run(a: ReproduceCmd) -> anyhow::Result<()> {
    // The folder must take the files before the run (minutes), not after it.
    crate::files::check_output_folder("--out", &a.out, &written_under(&a.out))?;
    if let Some(n) = a.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()?;
    }
    let scale = if a.quick {
        Scale::quick()
    } else {
        Scale::full()
    };
    let bar = if a.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0)
    };
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} reproducing [{bar:40}] {pos}/{len} runs ({elapsed}, eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let progress = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let r = reproduce::run(&scale, &progress)?;
    bar.finish_and_clear();
    r.write(&a.out)?;
    outln!(
        "{} runs in {:.0} s; {} plan problems; wrote {} and {}",
        r.runs.len(),
        r.seconds,
        r.plan_problems(),
        a.out.join("results.md").display(),
        a.out.join("results").display()
    )?;
    if r.plan_problems() > 0 {
        anyhow::bail!(
            "{} plans of the reproduction do not check (a bug)",
            r.plan_problems()
        );
    }
    Ok(())
}
