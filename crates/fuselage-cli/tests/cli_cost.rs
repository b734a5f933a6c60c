//! `fuselage cost` and `fuselage optimize` end to end: the contract's canonical numbers, plans
//! that re-evaluate cleanly, determinism, and bad input.

mod common;

use common::{fails, fuselage, tmp};

use serde_json::Value;
use std::path::PathBuf;

fn ok_json(args: &[&str]) -> Value {
    let out = fuselage(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The model argument for a canonical case: the shared ONNX export when present (the
/// contract's wording), the identical zoo network otherwise.
fn model(name: &str) -> String {
    match fuselage::onnx::reference_models_dir() {
        Some(d) if d.join(format!("{name}.onnx")).exists() => {
            d.join(format!("{name}.onnx")).display().to_string()
        }
        _ => name.to_string(),
    }
}

#[test]
fn canonical_cases_through_the_program() {
    let cases = [
        (
            "vgg16",
            "/features/features.0/Conv../features/features.4/MaxPool",
            148_256,
            992_064,
            183_232,
        ),
        (
            "resnet18",
            "/layer1/layer1.0/conv1/Conv../layer1/layer1.0/relu_1/Relu",
            109_696,
            475_264,
            50_176,
        ),
        (
            "squeezenet1_1",
            "/features/features.3/squeeze/Conv../features/features.3/Concat",
            39_568,
            592_208,
            36_960,
        ),
        (
            "efficientnet_b0",
            "/features/features.1/features.1.0/block/block.0/block.0.0/Conv../features/features.1/features.1.0/block/block.2/block.2.0/Conv",
            426_224,
            603_512,
            1_611_128,
        ),
    ];
    for (net, group, f_beta, f_d, f1) in cases {
        let m = model(net);
        let lbdf = ok_json(&[
            "cost", &m, "--fusion", "lbdf", "--buffer", "2MiB", "--group", group, "--json",
        ]);
        assert_eq!(lbdf["buffer_bytes"], f_beta, "{net}");
        assert_eq!(lbdf["dram_bytes"], f_d, "{net}");
        assert_eq!(lbdf["valid"], true);
        assert!(
            lbdf["resident_rows"].as_object().unwrap().len()
                >= lbdf["nodes"].as_array().unwrap().len()
        );
        let brr = ok_json(&[
            "cost", &m, "--fusion", "brr", "--buffer", "2MiB", "--group", group, "--json",
        ]);
        assert_eq!(brr["min_footprint_bytes"], f1, "{net}");
        assert!(brr["tiles"].as_u64().unwrap() >= 1);
    }
    // The VGG hand check: resident rows 3, 1, 3, 1, 2 and 1 staging row.
    let v = ok_json(&[
        "cost", "vgg16", "--fusion", "lbdf", "--buffer", "256KiB", "--group", cases[0].1, "--json",
    ]);
    let rows = &v["resident_rows"];
    assert_eq!(rows["input"], 3);
    assert_eq!(rows["/features/features.0/Conv"], 1);
    assert_eq!(rows["/features/features.1/Relu"], 3);
    assert_eq!(rows["/features/features.2/Conv"], 1);
    assert_eq!(rows["/features/features.3/Relu"], 2);
    assert_eq!(rows["/features/features.4/MaxPool"], 1);
    // Strict validity: β equal to F_β is too small.
    let v = ok_json(&[
        "cost", "vgg16", "--fusion", "lbdf", "--buffer", "148256", "--group", cases[0].1, "--json",
    ]);
    assert_eq!(v["valid"], false);
}

#[test]
fn optimize_writes_a_plan_that_re_evaluates_cleanly_and_deterministically() {
    let (a, b) = (tmp("a.json"), tmp("b.json"));
    for (search, budget) in [
        ("nsga2", "300"),
        ("local", "300"),
        ("random", "100"),
        ("optimal", "1"),
    ] {
        for out in [&a, &b] {
            let o = fuselage(&[
                "optimize",
                "mobilenet_v2",
                "--fusion",
                "lbdf",
                "--buffer",
                "128KiB",
                "--search",
                search,
                "--budget",
                budget,
                "--seed",
                "3",
                "--out",
                out.to_str().unwrap(),
                "--quiet",
            ]);
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let table = String::from_utf8_lossy(&o.stdout);
            assert!(
                table.contains("total DRAM (MB)") && table.contains("gap to optimal"),
                "{table}"
            );
        }
        let strip = |p: &PathBuf| {
            let mut v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
            // Times differ from run to run: `seconds` and the splitter's `*_seconds`.
            v.as_object_mut()
                .unwrap()
                .retain(|k, _| k != "seconds" && !k.ends_with("_seconds"));
            v
        };
        let (va, vb) = (strip(&a), strip(&b));
        assert_eq!(va, vb, "{search}: same seed, same plan file");
        assert_eq!(va["search"], search);
        assert!(va["dram_bytes"].as_u64().unwrap() >= va["lower_bound_bytes"].as_u64().unwrap());
        assert!(va["dram_bytes"].as_u64().unwrap() >= va["optimal_dram_bytes"].as_u64().unwrap());
        let again = ok_json(&[
            "cost",
            "mobilenet_v2",
            "--fusion",
            "lbdf",
            "--buffer",
            "128KiB",
            "--plan",
            a.to_str().unwrap(),
            "--json",
        ]);
        assert_eq!(again["problems"], Value::Array(vec![]));
        assert_eq!(again["dram_bytes"], va["dram_bytes"]);
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    // A scratch path, never a device: these runs fail before writing it.
    let never = tmp("never.json");
    let never = never.to_str().unwrap();
    let g = "/layer1/layer1.0/conv1/Conv,/layer1/layer1.0/relu/Relu";
    let err = fails(&[
        "cost", "resnet18", "--fusion", "lbdf", "--buffer", "0", "--group", g,
    ]);
    assert!(err.contains("β = 0"), "{err}");
    let err = fails(&[
        "cost", "resnet18", "--fusion", "lbdf", "--buffer", "lots", "--group", g,
    ]);
    assert!(err.contains("`lots` is not a size"), "{err}");
    let err = fails(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1MiB",
        "--group",
        "/layer1/nope/Conv",
    ]);
    assert!(err.contains("unknown node `/layer1/nope/Conv`"), "{err}");
    let err = fails(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1MiB",
        "--group",
        "/conv1/Conv,/layer1/layer1.0/Add",
    ]);
    assert!(err.contains("is not connected"), "{err}");
    // A plan that is not a partition, and a cyclic one.
    let plan = |groups: &[&[&str]]| {
        let v = serde_json::json!({
            "model": "resnet18", "cost_model": "lbdf", "buffer_bytes": 1048576, "element_bytes": 1,
            "groups": groups.iter().map(|n| serde_json::json!({"nodes": n, "buffer_bytes": 0, "dram_bytes": 0, "valid": true, "unfusable": false})).collect::<Vec<_>>(),
            "dram_bytes": 0, "fusable_dram_bytes": 0, "max_buffer_bytes": 0
        });
        let p = tmp(&format!("plan-{}.json", groups.len()));
        std::fs::write(&p, v.to_string()).unwrap();
        p
    };
    let partial = plan(&[&["/conv1/Conv"]]);
    let err = fails(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1MiB",
        "--plan",
        partial.to_str().unwrap(),
    ]);
    assert!(err.contains("in no group"), "{err}");
    let names: Vec<String> = {
        let v = ok_json(&["inspect", "resnet18", "--json"]);
        assert_eq!(v["nodes"], 49);
        let g = fuselage::zoo::build("resnet18").unwrap();
        g.node_ids().map(|i| g.node(i).name.clone()).collect()
    };
    // {maxpool, Add} and {conv1, relu, conv2}: maxpool -> conv1 -> ... -> conv2 -> Add: a cycle.
    let skip: Vec<&str> = vec!["/maxpool/MaxPool", "/layer1/layer1.0/Add"];
    let inner: Vec<&str> = vec![
        "/layer1/layer1.0/conv1/Conv",
        "/layer1/layer1.0/relu/Relu",
        "/layer1/layer1.0/conv2/Conv",
    ];
    let mut groups: Vec<Vec<&str>> = vec![skip.clone(), inner.clone()];
    for n in &names {
        if !skip.contains(&n.as_str()) && !inner.contains(&n.as_str()) {
            groups.push(vec![n.as_str()]);
        }
    }
    let refs: Vec<&[&str]> = groups.iter().map(|v| v.as_slice()).collect();
    let cyclic = plan(&refs);
    let err = fails(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1MiB",
        "--plan",
        cyclic.to_str().unwrap(),
    ]);
    assert!(
        err.contains("form a cycle: group 0 -> group 1 -> group 0"),
        "{err}"
    );
    let err = fails(&[
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1MiB",
        "--search",
        "annealing",
        "--budget",
        "5",
        "--out",
        never,
    ]);
    assert!(err.contains("annealing"), "{err}");
    let err = fails(&[
        "optimize", "resnet18", "--fusion", "lbdf", "--buffer", "1MiB", "--search", "local",
        "--budget", "0", "--out", never,
    ]);
    assert!(
        err.contains("'0' for '--budget <N>': 0 is not in 1..="),
        "{err}"
    );
    // A buffer below every op is not bad input: the plan is layer by layer, and the program
    // says that nothing fuses (issue 34; `cli_plans.rs` checks the plan).
    let out = fuselage(&[
        "optimize", "resnet18", "--fusion", "brr", "--buffer", "64", "--search", "local",
        "--budget", "5", "--out", never,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("note: nothing fuses at 64 B"), "{text}");
}

#[test]
fn a_group_a_path_leaves_and_reenters_is_refused_with_the_node_on_it() {
    // The max pool feeds layer1.0's convolutions and its skip: {MaxPool, Add} is connected
    // by the skip, but the path through the convolutions leaves it. It used to be costed
    // as valid; inside a plan it is a cycle.
    for cmd in ["cost", "classify"] {
        let err = fails(&[
            cmd,
            "resnet18",
            "--fusion",
            "lbdf",
            "--buffer",
            "128KiB",
            "--group",
            "/maxpool/MaxPool,/layer1/layer1.0/Add",
        ]);
        assert_eq!(
            err.trim(),
            "error: the group is not convex: `/layer1/layer1.0/conv1/Conv` lies on a path from \
             `/maxpool/MaxPool` to `/layer1/layer1.0/Add` outside it, so a plan holding it would \
             have a cycle; add `/layer1/layer1.0/conv1/Conv` or cut the group there",
            "{cmd}"
        );
    }
}

#[test]
fn a_tiled_plan_re_checks_and_a_forged_schedule_is_refused_naming_its_group() {
    let plan = tmp("llama-32k-tiled.json");
    let base = [
        "llama_3_2_1b",
        "--seq",
        "32768",
        "--fusion",
        "tiled",
        "--buffer",
        "2MiB",
    ];
    let out = common::fuselage(
        &[
            &["optimize"][..],
            &base,
            &["--search", "optimal", "--quiet", "--out"],
        ]
        .concat()
        .into_iter()
        .chain([plan.to_str().unwrap()])
        .collect::<Vec<_>>(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // As written, every recorded schedule re-checks.
    let cost = |path: &str| common::fuselage(&[&["cost"][..], &base, &["--plan", path]].concat());
    assert!(cost(plan.to_str().unwrap()).status.success());
    // An attention group run as one tile of all 32,768 query rows does not fit 2 MiB.
    let mut file: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let groups = file["groups"].as_array_mut().unwrap();
    let (index, group) = groups
        .iter_mut()
        .enumerate()
        .find(|(_, g)| g["schedule"]["streamed_operands"] == 2)
        .unwrap();
    let first = group["nodes"][0].as_str().unwrap().to_string();
    group["schedule"]["tiles"] = 1.into();
    group["schedule"]["tile_rows"] = 32768.into();
    let forged = tmp("llama-32k-forged.json");
    std::fs::write(&forged, file.to_string()).unwrap();
    let err = fails(&[&["cost"][..], &base, &["--plan", forged.to_str().unwrap()]].concat());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "group {index} (`{first}`): its recorded schedule (1 tiles of 32768 rows"
        )),
        "{err}"
    );
}

#[test]
fn a_gpt2_decode_step_plans_at_its_weights_cache_and_four_cuts() {
    // One token of GPT-2 (124M) against 1,024 cached tokens per layer, exact under tiled.
    let plan = tmp("gpt2-decode-tiled.json");
    let base = [
        "gpt2", "--decode", "--past", "1024", "--fusion", "tiled", "--buffer", "2MiB",
    ];
    let args: Vec<&str> = [
        &["optimize"][..],
        &base,
        &["--search", "optimal", "--quiet"],
    ]
    .concat()
    .into_iter()
    .chain(["--out", plan.to_str().unwrap()])
    .collect();
    let out = fuselage(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(v["optimal_proven"], true);
    // Every plan moves the weights (123,654,228), the cache (12 layers × a key and a value of
    // 12·1,024·64 = 18,874,368), the token id in, the hidden state out and each layer's new
    // key and value (1 + 768 + 24·768): 142,547,797, the lower bound.
    assert_eq!(v["lower_bound_bytes"], 142_547_797u64);
    // The optimum cuts the token id once (written and read: 2 bytes) and the 768-wide hidden
    // state four times (4 × 2 × 768).
    assert_eq!(v["dram_bytes"], 142_547_797u64 + 2 + 4 * 2 * 768);
    // It re-checks.
    let cost = fuselage(&[&["cost"][..], &base, &["--plan", plan.to_str().unwrap()]].concat());
    assert!(
        cost.status.success(),
        "{}",
        String::from_utf8_lossy(&cost.stderr)
    );
}

/// Issue 34, point 4: ONNX users name nodes, not outputs. The group below names the Split of
/// `gpt2_l4_h256`'s first attention; it costs what the list with its other two outputs costs.
#[test]
fn a_split_named_in_a_group_brings_its_other_outputs() {
    let m = model("gpt2_l4_h256");
    let a = "/m/h.0/attn";
    let short = format!(
        "{a}/c_attn/Gemm,{a}/c_attn/Reshape_1,{a}/Split,{a}/Reshape,{a}/Reshape_1,{a}/Reshape_2"
    );
    let long = format!("{short},{a}/Split:1,{a}/Split:2");
    let cost = |group: &str| {
        ok_json(&[
            "cost", &m, "--fusion", "lbdf", "--buffer", "256KiB", "--group", group, "--json",
        ])
    };
    let (s, l) = (cost(&short), cost(&long));
    assert_eq!(s["dram_bytes"], 328_448);
    assert_eq!(s["dram_bytes"], l["dram_bytes"]);
    assert_eq!(s["nodes"].as_array().unwrap().len(), 8);
}
