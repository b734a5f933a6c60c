//! # fuselage-cli
//!
//! The `fuselage` command-line program, as a library and a binary.
//!
//! Each subcommand lives in its own file (`inspect.rs`, `cost.rs`, `optimize.rs`,
//! `explain.rs`, `gnn.rs` for dataset/train/classify, `reproduce.rs`, `hw.rs`, `sweep.rs`, `diff.rs`, `export.rs`, `report.rs`);
//! `common.rs` holds the arguments they share, `files.rs` reads and writes every file a user
//! names (regular files only, size caps, no output that is a device or an input), and
//! `plot.rs` draws the latency–energy front (the sweep chart is the report crate's
//! `chart.rs`). The work itself is the library's: a subcommand reads its arguments, runs
//! the facade `fuselage` (the [`Planner`](fuselage::Planner) for `optimize`), and prints.
//!
//! Features (both on by default): `onnx` (ONNX import through tract, and `export`) and
//! `learned` (the GNN and the learned explainers through burn: `dataset`, `train`,
//! `classify`, `reproduce`, `--explainer gnne|pg|rg`). Without them the program plans,
//! costs, explains (cost, random), sweeps and reports zoo networks as it does with them, and
//! builds in a fraction of the time.
//!
//! A downstream crate adds its own cost model, search or explainer to the program through a
//! [`Registry`] and [`main_with`]: its binary is the `fuselage` program that also knows those
//! names. The binary of this crate is `main_with(&Registry::default())`.
// No panic on a path user input can reach.
#![deny(clippy::unwrap_used, clippy::expect_used)]
// Without its features the program leaves out the commands that read checkpoints, data sets
// and ONNX files; the helpers only they use are then unused (the full build checks them).
#![cfg_attr(not(all(feature = "onnx", feature = "learned")), allow(dead_code))]

/// `println!` that returns the write error instead of panicking, so that `fuselage ... | head`
/// ends quietly (see `main`). The summary goes to standard error instead when an output file
/// is standard output (`--out -`, [`SUMMARY_TO_STDERR`]).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if crate::SUMMARY_TO_STDERR.load(std::sync::atomic::Ordering::SeqCst) {
            writeln!(std::io::stderr().lock(), $($arg)*)
        } else {
            writeln!(std::io::stdout().lock(), $($arg)*)
        }
    }};
}

mod common;
mod cost;
mod diff;
mod explain;
#[cfg(feature = "onnx")]
mod export;
mod files;
#[cfg(feature = "learned")]
mod gnn;
mod hw;
mod inspect;
mod optimize;
mod plot;
pub mod registry;
mod report;
#[cfg(feature = "learned")]
mod reproduce;
mod sweep;

pub use registry::Registry;

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the first Ctrl-C: a running search (and its reference optimum) stops with its best
/// plan so far, which `optimize` still writes whole before the program exits 130. A second
/// Ctrl-C exits 130 at once; every output file is written atomically, so none is left half
/// written.
pub(crate) static STOP: AtomicBool = AtomicBool::new(false);

/// Set when an output file is standard output (`--out -`): the command's summary then goes
/// to standard error, so that standard output holds the file alone.
pub(crate) static SUMMARY_TO_STDERR: AtomicBool = AtomicBool::new(false);

/// Whether a search that reads [`STOP`] is running; outside one, Ctrl-C exits 130 at once.
pub(crate) static SEARCHING: AtomicBool = AtomicBool::new(false);

/// The error of a command cut short by Ctrl-C: the program exits 130, as a shell expects of
/// an interrupted program.
#[derive(Debug)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted (Ctrl-C): stopped with the best plan so far")
    }
}

impl std::error::Error for Interrupted {}

use clap::{Parser, Subcommand};

/// Explainable operator fusion: plan fusion groups that fit an on-chip buffer, and see why a
/// group does not.
#[derive(Debug, Parser)]
#[command(name = "fuselage", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Summarise a network: nodes, edges, parameters, MACs, op counts, fingerprint.
    Inspect(inspect::InspectArgs),
    /// Cost one group, or re-evaluate a plan file, under LBDF or BRR.
    Cost(cost::CostCmd),
    /// Search for a fusion plan and write it as JSON.
    Optimize(optimize::OptimizeCmd),
    /// Collect fusion groups by random search and label them at five buffer sizes.
    #[cfg(feature = "learned")]
    Dataset(gnn::DatasetCmd),
    /// Train the GNN validity classifier for one cost model.
    #[cfg(feature = "learned")]
    Train(gnn::TrainCmd),
    /// The GNN's probability that a group is invalid, beside the exact answer.
    #[cfg(feature = "learned")]
    Classify(gnn::ClassifyCmd),
    /// Explain why a group does not fit: edges ranked by an explainer, and where to cut.
    Explain(explain::ExplainCmd),
    /// Rerun the paper's Tables II–V and budget curves; write docs/results.md.
    #[cfg(feature = "learned")]
    Reproduce(reproduce::ReproduceCmd),
    /// Hand a plan to a compiler: the ONNX model unchanged, with each node's group (and the
    /// plan's summary) in its metadata; `cost --plan-from-metadata` reads it back.
    #[cfg(feature = "onnx")]
    Export(export::ExportCmd),
    /// The plan as one self-contained HTML page: the network coloured by group, a sortable
    /// table, each group's cost terms, explanation and buffer timeline, the buffer sweep.
    Report(report::ReportCmd),
    /// Which groups changed between two plan files, and the DRAM delta.
    Diff(diff::DiffCmd),
    /// The accelerator presets: list them, or show one (or a TOML file) in full.
    Hw(hw::HwCmd),
    /// Optimal DRAM against the buffer size, with the exact sizes where the plan changes.
    Sweep(sweep::SweepCmd),
}

/// Runs the parsed command, with the downstream components of `registry`.
///
/// # Errors
/// Whatever the command meets: a bad file, an unknown name, a failed search.
pub fn run(cli: Cli, registry: &Registry) -> anyhow::Result<()> {
    match cli.command {
        Command::Inspect(a) => inspect::run(a),
        Command::Cost(a) => cost::run(a, registry),
        Command::Optimize(a) => optimize::run(a, registry),
        #[cfg(feature = "learned")]
        Command::Dataset(a) => gnn::dataset(a),
        #[cfg(feature = "learned")]
        Command::Train(a) => gnn::train_cmd(a),
        #[cfg(feature = "learned")]
        Command::Classify(a) => gnn::classify(a, registry),
        #[cfg(feature = "learned")]
        Command::Reproduce(a) => reproduce::run(a),
        Command::Explain(a) => explain::run(a, registry),
        Command::Diff(a) => diff::run(a, registry),
        Command::Report(a) => report::run(a, registry),
        #[cfg(feature = "onnx")]
        Command::Export(a) => export::run(a, registry),
        Command::Hw(a) => hw::run(a),
        Command::Sweep(a) => sweep::run(a, registry),
    }
}

/// The importer runs tract behind `catch_unwind` and reports a panic there as a one-line
/// error naming the file; the default hook would print the panic and a backtrace first. So a
/// panic while the importer runs tract prints nothing, and every other panic prints as usual.
fn quiet_caught_tract_panics() {
    #[cfg(feature = "onnx")]
    {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !fuselage::onnx::inside_tract() {
                default(info);
            }
        }));
    }
}

/// The whole program: parses the process's arguments, runs the command with `registry`'s
/// components, prints any error on one line and returns the exit code (0; 1 for any error,
/// usage errors included; 130 after Ctrl-C).
pub fn main_with(registry: &Registry) -> std::process::ExitCode {
    // Usage errors exit 1 like every other bad input; --help and --version exit 0.
    let args = match Cli::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return std::process::ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    quiet_caught_tract_panics();
    // Without a handler (another one is installed already) Ctrl-C ends the process as usual.
    let _ = ctrlc::set_handler(|| {
        if !SEARCHING.load(Ordering::SeqCst) || STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    match run(args, registry) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => std::process::ExitCode::SUCCESS,
        Err(e) if e.downcast_ref::<Interrupted>().is_some() => {
            eprintln!("error: {e}");
            std::process::ExitCode::from(130)
        }
        Err(e) => {
            // Errors quote names from files (nodes, graphs, accelerators, paths): escaped,
            // so that no name can drive the terminal or split the line.
            eprintln!("error: {}", fuselage::ir::escape(&format!("{e:#}")));
            std::process::ExitCode::from(1)
        }
    }
}

/// Whether the error is stdout closed early (`fuselage inspect x | head`), which is no error.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
