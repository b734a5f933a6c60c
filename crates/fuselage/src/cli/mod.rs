//! Argument parsing and dispatch for the `fuselage` program.

/// `println!` that returns the write error instead of panicking, so that `fuselage ... | head`
/// ends quietly (see `main`).
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

mod common;
mod cost;
mod explain;
mod gnn;
mod inspect;
mod optimize;
mod reproduce;

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
    Dataset(gnn::DatasetCmd),
    /// Train the GNN validity classifier for one cost model.
    Train(gnn::TrainCmd),
    /// The GNN's probability that a group is invalid, beside the exact answer.
    Classify(gnn::ClassifyCmd),
    /// Explain why a group does not fit: edges ranked by an explainer, and where to cut.
    Explain(explain::ExplainCmd),
    /// Rerun the paper's Tables II–V and budget curves; write docs/results.md.
    Reproduce(reproduce::ReproduceCmd),
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Inspect(a) => inspect::run(a),
        Command::Cost(a) => cost::run(a),
        Command::Optimize(a) => optimize::run(a),
        Command::Dataset(a) => gnn::dataset(a),
        Command::Train(a) => gnn::train_cmd(a),
        Command::Classify(a) => gnn::classify(a),
        Command::Reproduce(a) => reproduce::run(a),
        Command::Explain(a) => explain::run(a),
    }
}
