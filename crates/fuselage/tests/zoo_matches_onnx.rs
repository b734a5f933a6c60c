//! The zoo networks are the graphs torchvision's export gives: same fingerprint as the
//! imported reference files.

use fuselage::onnx::{import, reference_models_dir};

#[test]
fn zoo_fingerprints_equal_imported_exports() {
    let Some(dir) = reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    for name in [
        "squeezenet1_1",
        "mobilenet_v2",
        "resnet18",
        "efficientnet_b0",
        "mobilenet_v3_large",
    ] {
        let imported = import(dir.join(format!("{name}.onnx"))).unwrap();
        let built = fuselage::zoo::build_at(name, 224).unwrap();
        assert_eq!(built.fingerprint(), imported.fingerprint(), "{name}");
        assert_eq!(built.to_json(), imported.to_json(), "{name}: JSON differs");
        // A different resolution is a different graph.
        let other = fuselage::zoo::build_at(name, 256).unwrap();
        assert_ne!(other.fingerprint(), imported.fingerprint(), "{name} at 256");
    }
}
