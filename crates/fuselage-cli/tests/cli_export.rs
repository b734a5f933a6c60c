//! `export` hands a plan over in the model's node metadata and `cost --plan-from-metadata`
//! reads the same plan back, on the five reference CNNs of `shared/models` and a
//! transformer; the exported file imports to the same graph (same fingerprint).

mod common;
use common::{fails, fuselage, tmp};
use serde_json::Value;
use std::collections::BTreeSet;

fn ok(args: &[&str]) -> Vec<u8> {
    let o = fuselage(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// A plan's groups as sets of node names, order-free.
fn groups(v: &Value) -> BTreeSet<BTreeSet<String>> {
    v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            g["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
                .collect()
        })
        .collect()
}

fn fingerprint(path: &str) -> String {
    let v: Value = serde_json::from_slice(&ok(&["inspect", path, "--json"])).unwrap();
    v["fingerprint"].as_str().unwrap().to_string()
}

#[test]
fn export_then_plan_from_metadata_gives_back_the_plan() {
    let Some(dir) = fuselage::onnx::reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    for name in [
        "resnet18",
        "mobilenet_v2",
        "squeezenet1_1",
        "efficientnet_b0",
        "mobilenet_v3_large",
        "bert_l4_h256",
    ] {
        let model = dir.join(format!("{name}.onnx"));
        let model = model.to_str().unwrap();
        let (plan, out) = (
            tmp(&format!("{name}.json")),
            tmp(&format!("{name}.fused.onnx")),
        );
        let (plan_s, out_s) = (plan.to_str().unwrap(), out.to_str().unwrap());
        ok(&[
            "optimize",
            model,
            "--fusion",
            "lbdf",
            "--buffer",
            "256KiB",
            "--search",
            "local",
            "--budget",
            "30",
            "--no-reference",
            "--quiet",
            "--out",
            plan_s,
        ]);
        ok(&["export", model, "--plan", plan_s, "--out", out_s]);
        let back: Value = serde_json::from_slice(&ok(&[
            "cost",
            out_s,
            "--fusion",
            "lbdf",
            "--buffer",
            "256KiB",
            "--plan-from-metadata",
            "--json",
        ]))
        .unwrap();
        let written: Value =
            serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
        assert_eq!(groups(&back), groups(&written), "{name}");
        assert_eq!(back["dram_bytes"], written["dram_bytes"], "{name}");
        assert_eq!(fingerprint(out_s), fingerprint(model), "{name}");
        // Exporting the exported model replaces fuselage's entries: the same bytes again.
        let again = tmp(&format!("{name}.again.onnx"));
        ok(&[
            "export",
            out_s,
            "--plan",
            plan_s,
            "--out",
            again.to_str().unwrap(),
        ]);
        assert_eq!(
            std::fs::read(&again).unwrap(),
            std::fs::read(&out).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn a_model_without_a_plan_says_so() {
    let Some(dir) = fuselage::onnx::reference_models_dir() else {
        eprintln!("skipping: FUSELAGE_MODELS not found");
        return;
    };
    let model = dir.join("resnet18.onnx");
    let err = fails(&[
        "cost",
        model.to_str().unwrap(),
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--plan-from-metadata",
    ]);
    assert!(err.contains("carries no plan"), "{err}");
    // A plan of another network is refused before anything is written.
    let plan = tmp("other.json");
    ok(&[
        "optimize",
        "vgg16",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--search",
        "local",
        "--budget",
        "5",
        "--no-reference",
        "--quiet",
        "--out",
        plan.to_str().unwrap(),
    ]);
    let out = tmp("never.onnx");
    let err = fails(&[
        "export",
        model.to_str().unwrap(),
        "--plan",
        plan.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(err.contains("unknown node"), "{err}");
    assert!(!out.exists());
}
