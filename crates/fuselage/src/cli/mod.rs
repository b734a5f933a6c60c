//! Argument parsing and dispatch for the `fuselage` program.

mod inspect;

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
}

/// Runs the parsed command.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Inspect(a) => inspect::run(a),
    }
}
