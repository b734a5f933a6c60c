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

/// Plans ResNet-18 under LBDF at 128 KiB with `extra` options (the search and its budget),
/// quietly, into `out`, and expects success.
pub fn optimize_resnet18(extra: &[&str], out: &std::path::Path) {
    let mut args = vec![
        "optimize", "resnet18", "--fusion", "lbdf", "--buffer", "128KiB",
    ];
    args.extend_from_slice(extra);
    args.extend(["--quiet", "--out", out.to_str().expect("a UTF-8 path")]);
    let o = fuselage(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
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
