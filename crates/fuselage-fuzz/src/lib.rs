//! # fuselage-fuzz
//!
//! The fuzz targets: every reader fuselage points at untrusted input, as a function of raw
//! bytes that must return, never panic, abort or hang, and whose error (when the input is bad)
//! is one line naming where it came from.
//!
//! ## Design
//!
//! The targets live in this ordinary workspace crate, so that two drivers share them:
//! - `fuzz/` (outside the workspace, built by `cargo +nightly fuzz`, libFuzzer) runs each
//!   target for as long as it is asked to; see `fuzz/README.md`;
//! - `tests/corpus.rs` replays the seed corpus `fuzz/corpus/TARGET/*` (and any crash input a
//!   run saved under `fuzz/artifacts/`) on the stable toolchain, in `cargo test`, so that no
//!   target rots where no nightly toolchain is installed.
//!
//! A target panics (and the fuzzer reports a crash) when the code under test panics or when one
//! of the target's own properties fails: an error message spans lines or does not name its
//! origin, or an accepted input yields a result that breaks an invariant.
#![warn(missing_docs)]

use fuselage_cost::{Accelerator, CostModel, Lbdf, PlanFile, evaluate_plan};
use fuselage_ir::Graph;
use std::sync::OnceLock;

/// The name the targets give their input in error messages.
pub const ORIGIN: &str = "fuzz-input";

/// A fuzz target: the input's raw bytes in, a panic on any failure.
pub type Target = fn(&[u8]);

/// The targets, by the names `fuzz/` and the corpus folders use.
pub const TARGETS: [(&str, Target); 4] = [
    ("onnx", onnx),
    ("plan_json", plan_json),
    ("accelerator", accelerator),
    ("group_names", group_names),
];

/// The graph plans and group names are read against: ResNet-18 from the zoo.
fn graph() -> &'static Graph {
    static G: OnceLock<Graph> = OnceLock::new();
    G.get_or_init(|| fuselage_zoo::build("resnet18").expect("the zoo builds resnet18"))
}

/// Checks that an error is one line and names `origin`.
fn one_line(message: &str, origin: &str) {
    assert!(!message.contains('\n'), "a multi-line error: {message:?}");
    assert!(
        message.contains(origin),
        "an error that does not name {origin}: {message}"
    );
}

/// The ONNX importer: the bytes as a model file. An imported graph must hold the IR's shape
/// rules and fingerprint deterministically.
pub fn onnx(data: &[u8]) {
    match fuselage_onnx::import_bytes(data, ORIGIN) {
        Ok(g) => {
            g.check_shapes()
                .expect("an imported graph holds the shape rules");
            assert_eq!(g.fingerprint(), g.fingerprint());
        }
        Err(e) => one_line(&e.to_string(), ORIGIN),
    }
}

/// The plan JSON reader: the bytes as a plan file for ResNet-18, costed under LBDF at 128 KiB
/// when it names a plan.
pub fn plan_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = PlanFile::from_json(text) else {
        return;
    };
    let g = graph();
    let Ok(plan) = file.to_plan(g) else {
        return;
    };
    let lbdf = Lbdf::new(fuselage_cost::CostConfig::kib(128).expect("128 KiB is a buffer"));
    if let Ok(report) = evaluate_plan(&lbdf, g, &plan) {
        assert_eq!(report.group_count, plan.len());
    }
}

/// The accelerator file reader: the bytes as TOML. A description it accepts must cost a
/// group of ResNet-18 without overflow.
pub fn accelerator(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Accelerator::from_toml(text, ORIGIN) {
        Ok(acc) => {
            let g = graph();
            let lbdf = Lbdf::new(acc.config);
            let first = g.node_ids().take(3).collect::<Vec<_>>();
            let set = fuselage_ir::NodeSet::from_ids(g.len(), first);
            if let Ok(cost) = lbdf.evaluate(g, &set) {
                acc.group_metrics(g, &set, &cost);
            }
        }
        Err(e) => one_line(&e.to_string(), ORIGIN),
    }
}

/// The group-name parser (`--group`): the bytes as a spec against ResNet-18. A group it
/// accepts is non-empty and connected.
pub fn group_names(data: &[u8]) {
    let Ok(spec) = std::str::from_utf8(data) else {
        return;
    };
    let g = graph();
    match g.parse_group(spec) {
        Ok(set) => assert!(g.is_connected_set(&set)),
        Err(e) => assert!(!e.to_string().contains('\n') || spec.contains('\n')),
    }
}
