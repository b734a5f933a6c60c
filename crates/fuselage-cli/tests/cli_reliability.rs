//! Hostile inputs of the reliability issue, case by case: each gets exit code 1 and one line
//! naming the file, option or node, never a panic, an abort, a runaway or a wrong answer.

mod common;

use common::fuselage;

use std::process::Command;

/// Runs `args`, expects exit code 1 and no panic, and returns the first line of stderr.
fn fails(args: &[&str]) -> String {
    common::fails(args)
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

const COST: [&str; 6] = ["cost", "resnet18", "--fusion", "lbdf", "--buffer", "128KiB"];

fn with<'a>(base: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    base.iter().chain(extra).copied().collect()
}

#[test]
fn devices_and_folders_are_not_read() {
    // /dev/zero used to be read without bound (23.6 GB after 58 s).
    assert_eq!(
        fails(&["inspect", "/dev/zero"]),
        "error: /dev/zero: not a regular file"
    );
    let dir = std::env::temp_dir();
    let dir = dir.to_str().unwrap();
    assert_eq!(
        fails(&["inspect", dir]),
        format!("error: {dir}: not a regular file")
    );
}

#[test]
fn physical_options_are_range_checked_at_parse_time() {
    // A scratch path, never a device: these runs fail before writing it.
    let never = common::tmp("never.json");
    let never = never.to_str().unwrap();
    assert_eq!(
        fails(&["inspect", "resnet18", "--resolution", "4294967296"]),
        "error: invalid value '4294967296' for '--resolution <RESOLUTION>': 4294967296 is not in 32..=16384"
    );
    assert_eq!(
        fails(&["inspect", "gpt2", "--seq", "99999999"]),
        "error: invalid value '99999999' for '--seq <TOKENS>': 99999999 is not in 1..=1048576"
    );
    let optimize = [
        "optimize", "resnet18", "--fusion", "lbdf", "--buffer", "128KiB", "--search", "random",
        "--out", never,
    ];
    // 2^64 − 1 used to panic with a capacity overflow, 10^10 to abort allocating 80 GB.
    assert_eq!(
        fails(&with(&optimize, &["--budget", "18446744073709551615"])),
        "error: invalid value '18446744073709551615' for '--budget <N>': 18446744073709551615 is not in 1..=1000000000000"
    );
    // clap used to suggest `-- -1`, which is wrong for an option value.
    assert_eq!(
        fails(&with(&optimize, &["--seed", "-1"])),
        "error: invalid value '-1' for '--seed <S>': invalid digit found in string"
    );
}

#[test]
fn absurd_sizes_are_errors_not_wraparounds() {
    // --bytes 10^13 used to wrap the weights to 6166655557742690304 bytes.
    assert_eq!(
        fails(&with(
            &COST,
            &["--bytes", "10000000000000", "--group", "/conv1/Conv"]
        )),
        "error: the element size must be 1 to 16 bytes (b = 10000000000000 given)"
    );
    let cost = [
        "cost", "resnet18", "--fusion", "lbdf", "--buffer", "2048GiB",
    ];
    assert_eq!(
        fails(&with(&cost, &["--group", "/conv1/Conv"])),
        "error: the on-chip buffer must be at most 1 TiB (β = 2199023255552 bytes given)"
    );
}

#[test]
fn a_node_named_twice_is_an_error() {
    assert_eq!(
        fails(&with(&COST, &["--group", "/conv1/Conv,/conv1/Conv"])),
        "error: node `/conv1/Conv` is named twice in one group"
    );
    // A real plan, with group 0's first node listed a second time.
    let plan = std::env::temp_dir().join(format!("fuselage-twice-{}.json", std::process::id()));
    let path = plan.to_str().unwrap();
    let made = fuselage(
        &with(
            &COST,
            &[
                "--search", "random", "--budget", "5", "--out", path, "--quiet",
            ],
        )
        .iter()
        .map(|a| if *a == "cost" { "optimize" } else { a })
        .collect::<Vec<_>>(),
    );
    assert!(made.status.success());
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let nodes = json["groups"][0]["nodes"].as_array_mut().unwrap();
    let first = nodes[0].clone();
    nodes.push(first.clone());
    std::fs::write(&plan, json.to_string()).unwrap();
    let line = fails(&with(&COST, &["--plan", plan.to_str().unwrap()]));
    std::fs::remove_file(&plan).ok();
    let want = format!(
        "node `{}` is listed twice in group 0 of the plan",
        first.as_str().unwrap()
    );
    assert!(line.contains(&want), "{line}");
}

#[test]
fn a_missing_folder_is_reported_once() {
    // The I/O reason used to be printed twice ("...: No such file or directory (os error 2):
    // No such file or directory (os error 2)").
    let line = fails(&["dataset", "--out", "/nonexistent/groups.jsonl"]);
    assert_eq!(
        line,
        "error: --out /nonexistent/groups.jsonl: the folder /nonexistent does not exist"
    );
    let line = fails(&[
        "classify",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--group",
        "/conv1/Conv",
        "--checkpoint",
        "/nonexistent/ck",
    ]);
    assert_eq!(
        line,
        "error: --checkpoint /nonexistent/ck.json: No such file or directory (os error 2)"
    );
}

/// Ctrl-C stops the search with its best plan so far: the plan file is written whole (never a
/// partial or temporary file), says why it stopped, and the program exits 130.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_search_writes_the_best_plan_whole_and_exits_130() {
    let dir = std::env::temp_dir().join(format!("fuselage-ctrl-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    let child = Command::new(env!("CARGO_BIN_EXE_fuselage"))
        .args([
            "optimize",
            "resnet152",
            "--fusion",
            "brr",
            "--buffer",
            "128KiB",
            "--search",
            "nsga2",
            "--budget",
            "1000000000000",
            "--no-reference",
            "--quiet",
            "--out",
        ])
        .arg(&plan)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Long enough to be searching (the budget would take days), then SIGINT.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted (Ctrl-C)"), "{err}");
    let text = std::fs::read_to_string(&plan).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["stop"], "interrupted");
    assert!(json["evaluations"].as_u64().unwrap() >= 1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("interrupted"), "{stdout}");
    // Only the plan is left in the folder: no temporary file.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("plan.json")]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs the program with `RAYON_NUM_THREADS=threads` and returns its stdout.
fn with_threads(threads: &str, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_fuselage"))
        .env("RAYON_NUM_THREADS", threads)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn plans_and_explanations_do_not_depend_on_the_thread_count() {
    // A search whose splitter asks a learned explainer, and the explainers themselves.
    let mut plans = Vec::new();
    for threads in ["1", "2"] {
        let plan = common::tmp(&format!("threads-{threads}.json"));
        with_threads(
            threads,
            &[
                "optimize",
                "resnet18",
                "--fusion",
                "lbdf",
                "--buffer",
                "128KiB",
                "--search",
                "nsga2",
                "--splitter",
                "get",
                "--explainer",
                "pg",
                "--budget",
                "150",
                "--seed",
                "7",
                "--no-reference",
                "--quiet",
                "--out",
                plan.to_str().unwrap(),
            ],
        );
        let mut json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
        // Wall-clock times are the one thing allowed to differ.
        json.as_object_mut()
            .unwrap()
            .retain(|k, _| k == "latency_seconds" || (k != "seconds" && !k.ends_with("_seconds")));
        plans.push(json.to_string());
    }
    assert_eq!(plans[0], plans[1]);
    for explainer in ["gnne", "pg", "rg"] {
        let args = [
            "explain",
            "resnet50",
            "--fusion",
            "lbdf",
            "--buffer",
            "128KiB",
            "--group",
            "/layer2/layer2.0/conv1/Conv../layer2/layer2.1/relu_2/Relu",
            "--explainer",
            explainer,
            "--seed",
            "3",
            "--json",
        ];
        assert_eq!(
            with_threads("1", &args),
            with_threads("2", &args),
            "{explainer}"
        );
    }
}

/// Inputs fuzzing found (fuzz/artifacts/onnx): tract panicked on them inside the importer's
/// `catch_unwind`, so the program printed a panic and a backtrace before its error, and one
/// error spanned lines through a node name with a newline. Each is now a one-line error, found
/// before tract runs where the protobuf alone tells, and no panic is printed.
#[test]
fn fuzzing_finds_stay_one_line_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/artifacts/onnx");
    let mut found = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let err = common::fails(&["inspect", path.to_str().unwrap()]);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("error: {}: ", path.display())),
            "{err}"
        );
        found += 1;
    }
    assert!(found >= 2);
}
