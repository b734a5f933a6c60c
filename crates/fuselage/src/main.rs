//! The `fuselage` command-line program.
//!
//! Each subcommand lives in its own module under `cli/`; this file only parses arguments and
//! maps errors to exit code 1.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::from(1)
        }
    }
}
