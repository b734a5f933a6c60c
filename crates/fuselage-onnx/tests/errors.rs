//! Bad input gets an error naming the file (and the node and op where there is one), never a
//! panic.

mod support;

use fuselage_onnx::{OnnxError, import, import_bytes, reference_models_dir};
use proptest::prelude::*;
use support::{A, Model};

#[test]
fn missing_file_is_named() {
    let err = import("/no/such/model.onnx").unwrap_err();
    assert!(matches!(err, OnnxError::Io { .. }));
    assert!(
        err.to_string()
            .starts_with("/no/such/model.onnx: cannot read the file"),
        "{err}"
    );
}

#[test]
fn non_onnx_bytes_are_rejected() {
    let err = import_bytes(b"[package]\nname = \"x\"\n", "Cargo.toml").unwrap_err();
    assert!(err.to_string().starts_with("Cargo.toml: "), "{err}");
    assert!(
        matches!(err, OnnxError::NotOnnx { .. } | OnnxError::Malformed { .. }),
        "{err}"
    );
    let err = import_bytes(&[], "empty.onnx").unwrap_err();
    assert_eq!(
        err.to_string(),
        "empty.onnx: malformed ONNX model: the model has no graph"
    );
}

#[test]
fn unsupported_op_names_node_and_op() {
    let bytes = Model::default()
        .input("x", &[1, 4, 8, 8])
        .node("/block/Relu", "Relu", &["x"], &[])
        .node(
            "/block/Einsum",
            "Einsum",
            &["/block/Relu", "/block/Relu"],
            &[("equation", A::Str("ij,jk->ik"))],
        )
        .output("/block/Einsum")
        .encode();
    let err = import_bytes(&bytes, "net.onnx").unwrap_err();
    assert!(
        matches!(&err, OnnxError::Unsupported { ops, .. } if ops.len() == 1 && ops[0].first == "/block/Einsum" && ops[0].op == "Einsum")
    );
    assert_eq!(
        err.to_string(),
        "net.onnx: unsupported ops: Einsum (1 node, first `/block/Einsum`)"
    );
}

#[test]
fn every_unsupported_op_is_listed_once_with_its_count() {
    let bytes = Model::default()
        .input("x", &[1, 4, 8, 8])
        .node(
            "/a/Einsum",
            "Einsum",
            &["x", "x"],
            &[("equation", A::Str("ij,jk->ik"))],
        )
        .node("/b/Relu", "Relu", &["/a/Einsum"], &[])
        .node("/c/Hardmax", "Hardmax", &["/b/Relu"], &[])
        .node(
            "/d/Einsum",
            "Einsum",
            &["/c/Hardmax", "x"],
            &[("equation", A::Str("ij,jk->ik"))],
        )
        .output("/d/Einsum")
        .encode();
    let err = import_bytes(&bytes, "net.onnx").unwrap_err();
    assert_eq!(
        err.to_string(),
        "net.onnx: unsupported ops: Einsum (2 nodes, first `/a/Einsum`), Hardmax (1 node, first `/c/Hardmax`)"
    );
}

#[test]
fn undefined_tensor_is_named() {
    let bytes = Model::default()
        .input("x", &[1, 4, 8, 8])
        .node("/a/Relu", "Relu", &["ghost"], &[])
        .output("/a/Relu")
        .encode();
    let err = import_bytes(&bytes, "net.onnx").unwrap_err();
    assert_eq!(
        err.to_string(),
        "net.onnx: malformed ONNX model: node `/a/Relu` (Relu) reads `ghost`, which no node, initializer or graph input defines"
    );
}

#[test]
fn a_reference_model_truncated_at_every_offset_never_imports() {
    let Some(dir) = reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    let path = dir.join("squeezenet1_1.onnx");
    let bytes = std::fs::read(&path).unwrap();
    let n = bytes.len();
    let name = path.display().to_string();
    // Every one of the 5 MB's cuts. The weights are never read, so a cut inside them is found
    // from the lengths of the messages around it, at once.
    for cut in 0..n {
        let err = import_bytes(&bytes[..cut], &path)
            .err()
            .unwrap_or_else(|| panic!("a file truncated at byte {cut} of {n} imported"));
        if cut % 4096 == 0 || cut + 4096 > n {
            let line = err.to_string();
            assert!(line.starts_with(&name) && !line.contains('\n'), "{line}");
        }
    }
}

/// 1,000 seeded byte flips in a real model: each one either is refused with a one-line error
/// naming the file, or imports to a graph that holds the IR's shape rules (the importer checks
/// them) — never a panic. A flip inside a weight's data leaves the graph as it was, since
/// weights are never read; one in a dimension is caught by tract's inference or by the shape
/// rules.
#[test]
fn a_thousand_byte_flips_are_refused_or_import_consistently() {
    use rand::{RngExt, SeedableRng};
    let Some(dir) = reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    let path = dir.join("squeezenet1_1.onnx");
    let bytes = std::fs::read(&path).unwrap();
    let want = import_bytes(&bytes, &path).unwrap().fingerprint();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(19);
    let (mut refused, mut same, mut changed) = (0, 0, 0);
    for _ in 0..1000 {
        let mut flipped = bytes.clone();
        let at = rng.random_range(0..flipped.len());
        flipped[at] ^= 1 << rng.random_range(0..8u32);
        match import_bytes(&flipped, &path) {
            Err(e) => {
                let line = e.to_string();
                assert!(line.starts_with(&path.display().to_string()), "{line}");
                assert!(!line.contains('\n'), "byte {at}: {line}");
                refused += 1;
            }
            Ok(g) if g.fingerprint() == want => same += 1,
            Ok(g) => {
                g.check_shapes().unwrap();
                changed += 1;
            }
        }
    }
    eprintln!("{refused} refused, {same} unchanged, {changed} changed and consistent");
    // Almost every byte of the file is weight data.
    assert!(same > 900, "{refused} {same} {changed}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]
    #[test]
    fn random_bytes_are_an_error(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(import_bytes(&bytes, "random.onnx").is_err());
    }
}

#[test]
fn pads_attribute_of_wrong_length() {
    let bytes = Model::default()
        .input("x", &[1, 4, 8, 8])
        .weight("w", &[4, 4, 3, 3])
        .ints("unused", &[0])
        .node(
            "/c/Conv",
            "Conv",
            &["x", "w"],
            &[("pads", A::Ints(&[1, 1])), ("group", A::Int(1))],
        )
        .output("/c/Conv")
        .encode();
    let err = import_bytes(&bytes, "net.onnx").unwrap_err();
    assert_eq!(
        err.to_string(),
        "net.onnx: node `/c/Conv` (Conv): attribute pads = [1, 1]: expected 4 valid values for a 2-D op"
    );
}
