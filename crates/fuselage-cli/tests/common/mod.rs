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

/// ONNX files written byte by byte (the protobuf wire format), for tests that need a model no
/// exporter makes: a chain of tens of thousands of nodes, names with control characters,
/// fields of hostile sizes.
pub mod onnx {
    /// `n` as a protobuf varint.
    pub fn varint(mut n: u64) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let b = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(b);
                return out;
            }
            out.push(b | 0x80);
        }
    }

    /// Field `field` holding bytes.
    pub fn bytes(field: u64, b: &[u8]) -> Vec<u8> {
        let mut out = varint(field << 3 | 2);
        out.extend(varint(b.len() as u64));
        out.extend_from_slice(b);
        out
    }

    /// Field `field` holding a varint.
    pub fn int(field: u64, n: u64) -> Vec<u8> {
        let mut out = varint(field << 3);
        out.extend(varint(n));
        out
    }

    /// A float tensor's `ValueInfoProto` (a graph input) of shape `dims`.
    pub fn value_info(name: &str, dims: &[u64]) -> Vec<u8> {
        let shape: Vec<u8> = dims.iter().flat_map(|&d| bytes(1, &int(1, d))).collect();
        let tensor = [int(1, 1), bytes(2, &shape)].concat();
        [bytes(1, name.as_bytes()), bytes(2, &bytes(1, &tensor))].concat()
    }

    /// A `NodeProto` with one output.
    pub fn node(name: &str, op: &str, inputs: &[&str], output: &str) -> Vec<u8> {
        let mut n: Vec<u8> = inputs.iter().flat_map(|i| bytes(1, i.as_bytes())).collect();
        n.extend(bytes(2, output.as_bytes()));
        n.extend(bytes(3, name.as_bytes()));
        n.extend(bytes(4, op.as_bytes()));
        n
    }

    /// A model at opset 17 around the `GraphProto` fields `graph` (nodes are field 1, the
    /// name 2, initializers 5, doc_string 10, inputs 11, outputs 12).
    pub fn model(graph: &[u8]) -> Vec<u8> {
        let opset = [bytes(1, b""), int(2, 17)].concat();
        [int(1, 8), bytes(8, &opset), bytes(7, graph)].concat()
    }

    /// A chain of `n` Relu nodes (`n0`, `n1`, ...) over an input `x` of 1×8×16×16.
    pub fn relu_chain(n: usize) -> Vec<u8> {
        let mut g = Vec::new();
        let mut prev = "x".to_string();
        for i in 0..n {
            let out = format!("r{i}");
            g.extend(bytes(1, &node(&format!("n{i}"), "Relu", &[&prev], &out)));
            prev = out;
        }
        g.extend(bytes(2, b"chain"));
        g.extend(bytes(11, &value_info("x", &[1, 8, 16, 16])));
        g.extend(bytes(12, &bytes(1, prev.as_bytes())));
        model(&g)
    }
}
