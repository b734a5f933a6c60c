//! Shared helpers of the program's integration tests: run the binary, expect a clean failure,
//! and a scratch folder per test binary. Each test file uses some of them.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `fuselage` binary with `args`.
pub fn fuselage(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fuselage"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs `args`, expects exit code 1 and no panic, and returns stderr.
pub fn fails(args: &[&str]) -> String {
    let out = fuselage(args);
    assert_eq!(out.status.code(), Some(1), "{args:?} should exit 1");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// `name` in a scratch folder of this test binary and process.
pub fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fuselage-{}-{}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}
