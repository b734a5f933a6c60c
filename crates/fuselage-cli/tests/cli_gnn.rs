//! `fuselage classify` and `fuselage dataset` end to end.

mod common;

use common::fuselage;

use serde_json::Value;

#[test]
fn classify_prints_probability_beside_the_exact_answer() {
    let group = "/layer1/layer1.0/conv1/Conv../layer1/layer1.0/relu_1/Relu";
    // F_β of this group is 109,696 bytes under LBDF: valid at 256 KiB, invalid at 64 KiB.
    for (buffer, valid) in [("256KiB", true), ("64KiB", false)] {
        let out = fuselage(&[
            "classify", "resnet18", "--fusion", "lbdf", "--buffer", buffer, "--group", group,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["exact_valid"], valid);
        let p = v["probability_invalid"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p));
        assert_eq!(
            v["predicted_valid"], valid,
            "the shipped classifier gets this textbook group right (p = {p})"
        );
    }
    let out = fuselage(&[
        "classify", "resnet18", "--fusion", "lbdf", "--buffer", "256KiB", "--group", "/nope",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown node `/nope`"));
}

#[test]
fn dataset_writes_labelled_groups() {
    let path = std::env::temp_dir().join(format!("fuselage-dataset-{}.jsonl", std::process::id()));
    let out = fuselage(&[
        "dataset",
        "--seed",
        "2",
        "--scale",
        "0.02",
        "--out",
        path.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.lines().count() > 100, "{} lines", text.lines().count());
    std::fs::remove_file(&path).ok();
}
