//! `fuselage optimize --splitter get --explainer ...` end to end: the run's record in the plan
//! file (splitter, explainer, rectify rate, invalid groups met, explainer and cost-model
//! seconds), a plan that re-evaluates cleanly, determinism, and the argument rules.

mod common;

use common::{fails, fuselage, tmp};

use serde_json::Value;
use std::path::PathBuf;

/// `optimize resnet18 --fusion lbdf --buffer 128KiB --search ls --budget 100 --seed 1` with
/// `extra` arguments, writing `out`; returns the plan file and the summary.
fn optimize(extra: &[&str], out: &PathBuf) -> (Value, String) {
    let mut args = vec![
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--search",
        "ls",
        "--budget",
        "100",
        "--seed",
        "1",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = fuselage(&args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out).unwrap();
    (
        serde_json::from_str(&text).unwrap(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
    )
}

fn number(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("`{key}` is a number: {}", v[key]))
}

#[test]
fn get_with_the_cost_explainer_records_its_work_and_is_deterministic() {
    let (a, b) = (tmp("get-a.json"), tmp("get-b.json"));
    let get = ["--splitter", "get", "--explainer", "cost"];
    let (va, summary) = optimize(&get, &a);
    let (vb, _) = optimize(&get, &b);

    assert_eq!(va["splitter"], "get");
    assert_eq!(va["explainer"], "cost");
    assert_eq!(va["search"], "local");
    let met = va["invalid_groups_met"].as_u64().unwrap();
    assert!(met > 0, "a local search at 128 KiB meets invalid groups");
    let rate = number(&va, "rectify_rate");
    assert!((0.0..=1.0).contains(&rate), "{rate}");
    // The cost explainer reads the exact model: Algorithm 1 almost never falls back.
    assert!(rate >= 0.9, "{rate}");
    assert!(va["explanations"].as_u64().unwrap() >= 1);
    let (explainer_s, cost_s, split_s) = (
        number(&va, "explainer_seconds"),
        number(&va, "cost_seconds"),
        number(&va, "split_seconds"),
    );
    assert!(
        explainer_s > 0.0 && explainer_s <= split_s,
        "{explainer_s} {split_s}"
    );
    assert!(cost_s > 0.0);
    assert!(number(&va, "seconds") >= 0.0);
    for line in [
        "rectify rate",
        "invalid groups met",
        "explainer seconds",
        "cost-model seconds",
        "search (repeating edits) · get splitter (cost explainer, 32 random rivals)",
    ] {
        assert!(summary.contains(line), "summary lacks `{line}`:\n{summary}");
    }

    // Same seed, byte-identical groups (and the same record, times aside).
    assert_eq!(
        serde_json::to_string(&va["groups"]).unwrap(),
        serde_json::to_string(&vb["groups"]).unwrap()
    );
    let strip = |v: &Value| {
        let mut v = v.clone();
        v.as_object_mut()
            .unwrap()
            .retain(|k, _| k != "seconds" && !k.ends_with("_seconds"));
        v
    };
    assert_eq!(strip(&va), strip(&vb));

    // The plan passes `fuselage cost --plan` with no problems.
    let again = fuselage(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--plan",
        a.to_str().unwrap(),
        "--json",
    ]);
    assert!(again.status.success());
    let again: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(again["problems"], Value::Array(vec![]));
    assert_eq!(again["dram_bytes"], va["dram_bytes"]);
}

#[test]
fn the_explainer_implies_get_and_the_random_splitter_has_none() {
    let (a, b) = (tmp("implied.json"), tmp("random.json"));
    let (implied, _) = optimize(&["--explainer", "random"], &a);
    assert_eq!(implied["splitter"], "get");
    assert_eq!(implied["explainer"], "random");
    let (random, _) = optimize(&[], &b);
    assert_eq!(random["splitter"], "random");
    assert_eq!(random["explainer"], Value::Null);
    assert_eq!(random["explanations"], 0);
    assert_eq!(random["explainer_seconds"], 0.0);
    assert!(random["invalid_groups_met"].as_u64().unwrap() > 0);
    // The random splitter never rectifies: every split it makes is random, so it has no
    // rate (it once printed 0.0% after repairing hundreds of groups).
    assert_eq!(random["rectify_rate"], Value::Null);
}

#[test]
fn summaries_say_what_ran_in_the_units_people_use() {
    let out = tmp("summary.json");
    // The random splitter's summary has no rectify rate to report.
    let (_, summary) = optimize(&[], &out);
    assert!(
        summary
            .lines()
            .any(|l| l.starts_with("rectify rate") && l.ends_with("n/a (random)")),
        "{summary}"
    );
    // An exact run names no splitter, and a 1 GiB buffer reads as 1 GiB, not 1048576 KiB.
    let o = fuselage(&[
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "1GiB",
        "--search",
        "optimal",
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    let header = text.lines().next().unwrap();
    assert!(
        header.contains("no splitter (exact)") && !header.contains("random"),
        "{header}"
    );
    assert!(header.contains("β = 1 GiB"), "{header}");
}

#[test]
fn explainer_and_splitter_must_agree() {
    // A scratch path, never a device: these runs fail before writing it.
    let never = tmp("never.json");
    let never = never.to_str().unwrap();
    let base = [
        "optimize", "resnet18", "--fusion", "lbdf", "--buffer", "128KiB", "--search", "local",
        "--budget", "5", "--out", never,
    ];
    let with = |extra: &[&'static str]| {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    let err = fails(&with(&["--splitter", "random", "--explainer", "cost"]));
    assert!(
        err.contains("--explainer cost") && err.contains("--splitter"),
        "{err}"
    );
    let err = fails(&with(&["--splitter", "get"]));
    assert!(err.contains("--explainer"), "{err}");
    let err = fails(&with(&["--explainer", "shap"]));
    assert!(err.contains("gnne") && err.contains("cost"), "{err}");
    // Sampled cuts need the guided splitter and a temperature in (0, 100].
    let err = fails(&with(&["--cut-temperature", "0.3"]));
    assert!(
        err.contains("--cut-temperature") && err.contains("--explainer"),
        "{err}"
    );
    for bad in ["0", "-1", "100.5", "NaN", "hot"] {
        let err = fails(&with(&["--explainer", "cost", "--cut-temperature", bad]));
        assert!(err.contains("--cut-temperature"), "{bad}: {err}");
    }
}

/// `--cut-temperature`, `--moves` and `--rivals` (issue 32): each run is a function of its
/// seeds, each explores otherwise than the paper's method (another plan on this setting), and
/// the plan file says how it was made: an explainer gets the improved method's edits and
/// rivals unless told otherwise.
#[test]
fn sampled_cuts_are_seeded_and_change_the_search() {
    let (a, b, c) = (tmp("cut-a.json"), tmp("cut-b.json"), tmp("cut-c.json"));
    let sampled = ["--explainer", "cost", "--cut-temperature", "0.3"];
    let (va, _) = optimize(&sampled, &a);
    let (vb, _) = optimize(&sampled, &b);
    assert_eq!(va["groups"], vb["groups"]);
    assert_eq!(
        (
            va["cut_temperature"].as_f64(),
            va["moves"].as_str(),
            va["rivals"].as_u64()
        ),
        (Some(0.3), Some("repeating"), Some(32))
    );
    let (vc, _) = optimize(&["--explainer", "cost"], &c);
    assert_ne!(va["groups"], vc["groups"]);
    // The paper's method, one setting away, has none of the three fields, and is the same as
    // the paper's edits with no rivals spelled out.
    let (vp, _) = optimize(&["--explainer", "cost", "--paper"], &c);
    assert!(
        ["cut_temperature", "moves", "rivals"]
            .iter()
            .all(|k| vp.get(k).is_none())
    );
    assert_ne!(vp["groups"], va["groups"]);
    let spelled = ["--explainer", "cost", "--moves", "random", "--rivals", "0"];
    let (vs, _) = optimize(&spelled, &b);
    assert_eq!(vs["groups"], vp["groups"]);
    // `--moves fitting` likewise: seeded, and another search than the paper's moves.
    let (vd, _) = optimize(&["--moves", "fitting"], &a);
    let (ve, _) = optimize(&["--moves", "fitting"], &b);
    assert_eq!(vd["groups"], ve["groups"]);
    let (vf, _) = optimize(&["--moves", "random"], &c);
    assert_ne!(vd["groups"], vf["groups"]);
    assert_eq!(vd["moves"], "fitting");
    assert!(vf.get("moves").is_none() && vf.get("cut_temperature").is_none());
    // Refused in one line each, naming the option.
    let refused = |extra: &[&str]| {
        let mut args = vec![
            "optimize", "resnet18", "--fusion", "lbdf", "--buffer", "128KiB", "--search", "ls",
            "--out", "x.json",
        ];
        args.extend_from_slice(extra);
        fails(&args)
    };
    let err = refused(&["--moves", "greedy"]);
    assert!(
        err.contains("--moves") && err.contains("random, repeating or fitting"),
        "{err}"
    );
    let err = refused(&["--rivals", "65"]);
    assert!(err.contains("--rivals") && err.contains("0..=64"), "{err}");
    let err = refused(&["--explainer", "cost", "--paper", "--rivals", "3"]);
    assert!(err.contains("--paper") && err.contains("--rivals"), "{err}");
}

#[test]
fn an_unwritable_output_fails_before_the_search() {
    let out = fuselage(&[
        "optimize",
        "resnet152",
        "--fusion",
        "brr",
        "--buffer",
        "128KiB",
        "--search",
        "nsga2",
        "--budget",
        "100000",
        "--out",
        "/nonexistent/x.json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: --out /nonexistent/x.json: the folder /nonexistent does not exist"
    );
}

#[test]
fn the_reference_optimum_can_be_skipped_or_bounded() {
    // A scratch path, never a device: these runs fail before writing it.
    let never = tmp("never.json");
    let never = never.to_str().unwrap();
    let out = tmp("noref.json");
    let (plan, summary) = optimize(&["--no-reference", "--time-limit", "30"], &out);
    assert_eq!(plan["optimal_dram_bytes"], Value::Null);
    assert_eq!(plan["optimal_proven"], false);
    assert_eq!(plan["stop"], "budget");
    assert!(summary.contains("not computed"), "{summary}");
    // resnet18's reference optimum finishes well within the default 10 s: proven.
    let (plan, summary) = optimize(&[], &tmp("ref.json"));
    assert_eq!(plan["optimal_proven"], true);
    assert!(plan["optimal_dram_bytes"].as_u64().is_some());
    assert!(summary.contains("optimum proven"), "{summary}");
    assert_eq!(plan["optimal_lower_bound"], plan["optimal_objective_value"]);
    assert!(!summary.contains("optimum at least"), "{summary}");
    // A spent limit leaves the optimum unproven, between the proven bound and the best plan
    // the optimiser found; the bound is above the compulsory traffic.
    let (plan, summary) = optimize(&["--reference-limit", "0"], &tmp("ref0.json"));
    assert_eq!(plan["optimal_proven"], false);
    let bound = plan["optimal_lower_bound"].as_u64().unwrap();
    let best = plan["optimal_objective_value"].as_u64().unwrap();
    let compulsory = plan["lower_bound_bytes"].as_u64().unwrap();
    assert!(
        compulsory < bound && bound <= best,
        "{compulsory} {bound} {best}"
    );
    let line = |label: &str| {
        summary
            .lines()
            .find(|l| l.starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {summary}"))
            .split_whitespace()
            .last()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        line("optimum at least (MB)"),
        format!("{:.3}", bound as f64 / 1e6)
    );
    let dram = plan["dram_bytes"].as_u64().unwrap();
    assert_eq!(
        line("proven gap at most"),
        format!("{:+.2}%", (dram as f64 / bound as f64 - 1.0) * 100.0)
    );
    let bad = fuselage(&[
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--search",
        "local",
        "--time-limit",
        "-3",
        "--out",
        never,
    ]);
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.starts_with(
            "error: invalid value '-3' for '--time-limit <SECONDS>': -3 is not a number of seconds from 0 to 1000000"
        ),
        "{err}"
    );
}
