//! The `fuselage` command-line program: the built-in components, no downstream ones.

fn main() -> std::process::ExitCode {
    fuselage_cli::main_with(&fuselage_cli::Registry::default())
}
