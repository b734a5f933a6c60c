//! Plan files between runs: `diff` of two plans, a plan that lists only nodes, and the closest
//! names for a node that is not there.

mod common;
use common::{fails, fuselage, tmp};
use serde_json::Value;

fn optimize(search: &str, out: &std::path::Path) {
    common::optimize_resnet18(
        &["--search", search, "--budget", "50", "--no-reference"],
        out,
    );
}

#[test]
fn diff_names_the_changed_groups_and_the_dram_delta() {
    let (a, b) = (tmp("a.json"), tmp("b.json"));
    optimize("random", &a);
    optimize("optimal", &b);
    let o = fuselage(&["diff", a.to_str().unwrap(), b.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d: Value = serde_json::from_slice(&o.stdout).unwrap();
    let read = |p: &std::path::Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let (va, vb) = (read(&a), read(&b));
    let (da, db) = (
        va["dram_bytes"].as_i64().unwrap(),
        vb["dram_bytes"].as_i64().unwrap(),
    );
    assert_eq!(d["dram_delta"].as_i64().unwrap(), db - da);
    let (only_a, only_b) = (
        d["only_in_a"].as_array().unwrap(),
        d["only_in_b"].as_array().unwrap(),
    );
    let unchanged = d["unchanged"].as_u64().unwrap() as usize;
    assert_eq!(
        only_a.len() + unchanged,
        va["groups"].as_array().unwrap().len()
    );
    assert_eq!(
        only_b.len() + unchanged,
        vb["groups"].as_array().unwrap().len()
    );
    // The changed groups account for the whole delta.
    let sum = |g: &[Value]| {
        g.iter()
            .map(|e| e["dram_bytes"].as_i64().unwrap())
            .sum::<i64>()
    };
    assert_eq!(sum(only_b) - sum(only_a), db - da);
    // A plan against itself: nothing changed.
    let same = fuselage(&["diff", a.to_str().unwrap(), a.to_str().unwrap()]);
    let text = String::from_utf8(same.stdout).unwrap();
    assert!(
        text.contains("DRAM B - A: +0 bytes") && text.contains("only in A (0)"),
        "{text}"
    );
}

#[test]
fn a_plan_listing_only_nodes_is_costed() {
    let full = tmp("full.json");
    optimize("optimal", &full);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&full).unwrap()).unwrap();
    let groups: Vec<Value> = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| serde_json::json!({ "nodes": g["nodes"] }))
        .collect();
    let bare = tmp("bare.json");
    std::fs::write(&bare, serde_json::json!({ "groups": groups }).to_string()).unwrap();
    let o = fuselage(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--plan",
        bare.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let w: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(w["dram_bytes"], v["dram_bytes"]);
}

#[test]
fn an_unknown_node_suggests_the_closest_names() {
    let err = fails(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--group",
        "/layer1/layer1.0/conv1/conv",
    ]);
    assert!(
        err.contains("did you mean `/layer1/layer1.0/conv1/Conv`"),
        "{err}"
    );
}

#[test]
fn a_plan_against_the_optimum_shows_its_gaps_and_the_groups_that_differ() {
    let plan = tmp("rs.json");
    optimize("random", &plan);
    let o = fuselage(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--plan",
        plan.to_str().unwrap(),
        "--against-optimal",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let (dram, opt, lb) = (
        v["dram_bytes"].as_i64().unwrap(),
        v["optimal_dram_bytes"].as_i64().unwrap(),
        v["lower_bound_bytes"].as_i64().unwrap(),
    );
    assert!(lb <= opt && opt <= dram, "{lb} {opt} {dram}");
    assert_eq!(v["optimal_proven"], true);
    assert_eq!(v["optimal_lower_bound"], v["optimal_dram_bytes"]);
    let sum = |k: &str| {
        v[k].as_array()
            .unwrap()
            .iter()
            .map(|e| e["dram_bytes"].as_i64().unwrap())
            .sum::<i64>()
    };
    // The differing groups account for the whole gap.
    assert_eq!(
        sum("groups_not_in_optimal") - sum("optimal_groups_not_in_plan"),
        dram - opt
    );
    let text = String::from_utf8(
        fuselage(&[
            "cost",
            "resnet18",
            "--fusion",
            "lbdf",
            "--buffer",
            "128KiB",
            "--plan",
            plan.to_str().unwrap(),
            "--against-optimal",
        ])
        .stdout,
    )
    .unwrap();
    assert!(
        text.contains("groups that differ from the optimal plan"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("optimal ") && l.contains("gap +")),
        "{text}"
    );
}

/// A buffer below every op (issue 34): `optimize` writes the layer-by-layer plan, the only one
/// there is, with its DRAM, and says that nothing fuses, instead of failing.
#[test]
fn a_buffer_below_every_op_gives_the_layer_by_layer_plan_and_says_so() {
    let out = tmp("layer_by_layer.json");
    let o = fuselage(&[
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1KiB",
        "--search",
        "random",
        "--budget",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.contains("note: nothing fuses at 1 KiB: the smallest op needs "),
        "{text}"
    );
    assert!(text.contains("layer by layer"), "{text}");
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let groups = plan["groups"].as_array().unwrap();
    let inspect = fuselage(&["inspect", "resnet18", "--json"]);
    let nodes = serde_json::from_slice::<Value>(&inspect.stdout).unwrap()["nodes"]
        .as_u64()
        .unwrap();
    assert_eq!(groups.len() as u64, nodes);
    assert!(
        groups
            .iter()
            .all(|g| g["nodes"].as_array().unwrap().len() == 1)
    );
    // Its DRAM is what `cost --plan` gives the same plan.
    let cost = fuselage(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1KiB",
        "--plan",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(
        cost.status.success(),
        "{}",
        String::from_utf8_lossy(&cost.stderr)
    );
    let c: Value = serde_json::from_slice(&cost.stdout).unwrap();
    assert_eq!(c["dram_bytes"], plan["dram_bytes"]);
}
