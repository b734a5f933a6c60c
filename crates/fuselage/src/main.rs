//! The `fuselage` command-line program.
//!
//! Each subcommand lives in its own module under `cli/`; this file only parses arguments and
//! maps errors to exit code 1.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Usage errors exit 1 like every other bad input; --help and --version exit 0.
    let args = match cli::Cli::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return std::process::ExitCode::from(if e.use_stderr() { 1 } else { 0 });
        }
    };
    match cli::run(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if is_broken_pipe(&e) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
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
