//! Hardware descriptions on the command line: `hw list` and `hw show`, `--hw` on `optimize`
//! and `cost` (and the plan JSON's latency and energy), malformed files, `--objective` and
//! `--pareto`, and `sweep`.

mod common;
use common::{fails, fuselage, tmp};

fn stdout(args: &[&str]) -> String {
    let out = fuselage(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn hw_list_prints_one_preset_per_line_name_first() {
    let out = stdout(&["hw", "list"]);
    let names: Vec<&str> = out
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        names,
        ["eyeriss-like", "nvdla-small", "tpu-v1-like", "beta-only"]
    );
    for name in names {
        let shown = stdout(&["hw", "show", name]);
        assert!(
            shown.starts_with(name) && shown.contains("source"),
            "{shown}"
        );
        let toml = stdout(&["hw", "show", name, "--toml"]);
        assert!(toml.contains(&format!("name = \"{name}\"")));
    }
}

#[test]
fn a_malformed_file_names_the_field_and_line_and_exits_1() {
    let good = stdout(&["hw", "show", "nvdla-small", "--toml"]);
    let line_of =
        |text: &str, needle: &str| text.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let cases = [
        (
            good.replace("[dram]\n", "[dram]\nbandwith = 3\n"),
            "bandwith",
            line_of(&good, "[dram]") + 1,
        ),
        (
            good.replace("bandwidth_gb_per_s = ", "bandwidth_gb_per_s = -"),
            "dram.bandwidth_gb_per_s",
            line_of(&good, "bandwidth_gb_per_s"),
        ),
        (
            good.replace("[buffer]\nunified = \"128KiB\"\n", ""),
            "buffer",
            1,
        ),
    ];
    for (i, (text, field, line)) in cases.iter().enumerate() {
        let path = tmp(&format!("bad{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let p = path.to_str().unwrap();
        let err = fails(&[
            "optimize",
            "resnet18",
            "--fusion",
            "lbdf",
            "--hw",
            p,
            "--search",
            "local",
            "--out",
            tmp("never.json").to_str().unwrap(),
        ]);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(&format!("{p}:{line}: {field}:")), "{err}");
    }
    // --hw stands in for --buffer: giving both is an error, and so is neither.
    let err = fails(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--hw",
        "nvdla-small",
        "--buffer",
        "1KiB",
        "--group",
        "/conv1/Conv",
    ]);
    assert!(err.contains("--buffer"), "{err}");
    let err = fails(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--group",
        "/conv1/Conv",
    ]);
    assert!(err.contains("--buffer") || err.contains("--hw"), "{err}");
    let err = fails(&["hw", "show", "tpu-v9"]);
    assert!(
        err.contains("tpu-v9") && err.contains("nvdla-small"),
        "{err}"
    );
}

#[test]
fn optimize_on_a_preset_writes_latency_and_energy() {
    let out = tmp("nvdla.json");
    let o = out.to_str().unwrap();
    let text = stdout(&[
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--hw",
        "nvdla-small",
        "--search",
        "optimal",
        "--objective",
        "latency",
        "--out",
        o,
        "--quiet",
    ]);
    let proven = text
        .lines()
        .any(|l| l.starts_with("optimum proven") && l.trim_end().ends_with("yes"));
    assert!(text.contains("nvdla-small") && proven, "{text}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["hardware"], "nvdla-small");
    let cycles = v["latency_cycles"].as_u64().unwrap();
    let groups: u64 = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["latency_cycles"].as_u64().unwrap())
        .sum();
    assert_eq!(cycles, groups);
    assert_eq!(v["objective_value"].as_u64(), Some(cycles));
    assert!((v["latency_seconds"].as_f64().unwrap() - cycles as f64 / 1e9).abs() < 1e-12);
    assert!(v["energy_joules"].as_f64().unwrap() > 0.0);
    // cost --plan re-reads it on the same hardware, to the same numbers.
    let again = stdout(&[
        "cost",
        "resnet18",
        "--fusion",
        "lbdf",
        "--hw",
        "nvdla-small",
        "--plan",
        o,
        "--json",
    ]);
    let w: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(w["latency_cycles"], v["latency_cycles"]);
    assert_eq!(w["energy_joules"], v["energy_joules"]);
}

#[test]
fn pareto_writes_a_front_and_its_plot() {
    let out = tmp("front.json");
    let svg = tmp("front.svg");
    stdout(&[
        "optimize",
        "resnet18",
        "--resolution",
        "64",
        "--fusion",
        "lbdf",
        "--hw",
        "nvdla-small",
        "--search",
        "nsga2",
        "--budget",
        "200",
        "--pareto",
        "latency,energy",
        "--no-reference",
        "--out",
        out.to_str().unwrap(),
        "--front-svg",
        svg.to_str().unwrap(),
        "--quiet",
    ]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let front = v["front"].as_array().unwrap();
    assert!(!front.is_empty());
    for a in front {
        for b in front {
            let (al, ae) = (
                a["latency_cycles"].as_u64().unwrap(),
                a["energy_fj"].as_u64().unwrap(),
            );
            let (bl, be) = (
                b["latency_cycles"].as_u64().unwrap(),
                b["energy_fj"].as_u64().unwrap(),
            );
            assert!(!(bl <= al && be <= ae && (bl < al || be < ae)));
        }
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg") && plot.contains("latency"));
    let err = fails(&[
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--search",
        "local",
        "--pareto",
        "latency,dram",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(err.contains("latency,energy"), "{err}");
    let err = fails(&[
        "optimize",
        "resnet18",
        "--fusion",
        "lbdf",
        "--buffer",
        "128KiB",
        "--search",
        "local",
        "--pareto",
        "latency,energy",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(err.contains("--search nsga2"), "{err}");
}

#[test]
fn sweep_prints_points_and_breakpoints_as_json() {
    let text = stdout(&[
        "sweep",
        "resnet18",
        "--resolution",
        "64",
        "--fusion",
        "lbdf",
        "--from",
        "16KiB",
        "--to",
        "1MiB",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let points = v["points"].as_array().unwrap();
    let breakpoints = v["breakpoints"].as_array().unwrap();
    assert_eq!(points.len(), breakpoints.len() + 1);
    assert_eq!(points[0]["buffer_bytes"], 16384);
    for w in points.windows(2) {
        assert!(w[0]["dram_bytes"].as_u64() > w[1]["dram_bytes"].as_u64());
        for key in ["latency_cycles", "energy_joules", "groups"] {
            assert!(!w[0][key].is_null(), "{key}");
        }
    }
    let err = fails(&[
        "sweep", "resnet18", "--fusion", "lbdf", "--from", "1MiB", "--to", "16KiB",
    ]);
    assert!(err.contains("range"), "{err}");
}

/// The texts of the SVG's `<text class="{class}" ...>` elements, in order.
fn svg_texts(svg: &str, class: &str) -> Vec<String> {
    svg.split(&format!(r#"<text class="{class}""#))
        .skip(1)
        .map(|t| {
            let (_, rest) = t.split_once('>').unwrap();
            rest.split_once("</text>").unwrap().0.to_owned()
        })
        .collect()
}

/// `sweep --svg` draws the report's chart (issue 34, point 2): tick labels in KiB and MiB on
/// the buffer axis and round MB on the DRAM axis, a dot per breakpoint, no β marker (the
/// sweep has no plan).
#[test]
fn sweep_svg_has_tick_labels_on_both_axes() {
    let svg = tmp("sweep.svg");
    let text = stdout(&[
        "sweep",
        "resnet18",
        "--resolution",
        "64",
        "--fusion",
        "lbdf",
        "--from",
        "16KiB",
        "--to",
        "1MiB",
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(plot.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(
        svg_texts(&plot, "title"),
        ["resnet18: optimal DRAM against buffer (lbdf)"]
    );
    assert_eq!(
        svg_texts(&plot, "x-tick"),
        [
            "16 KiB", "32 KiB", "64 KiB", "128 KiB", "256 KiB", "512 KiB", "1 MiB"
        ]
    );
    assert_eq!(svg_texts(&plot, "x-title"), ["buffer (log scale)"]);
    // 12.438 MB at 16 KiB down to 11.786 MB at 1 MiB: a step of 0.2 MB.
    assert_eq!(
        svg_texts(&plot, "y-tick"),
        ["11.6", "11.8", "12.0", "12.2", "12.4", "12.6"]
    );
    assert_eq!(svg_texts(&plot, "y-title"), ["optimal DRAM (MB)"]);
    assert!(svg_texts(&plot, "beta-label").is_empty() && !plot.contains("class=\"beta\""));
    // One dot per breakpoint, and the very chart the report draws of this sweep.
    let sweep: fuselage::pipeline::Sweep = serde_json::from_str(&text).unwrap();
    assert_eq!(sweep.breakpoints.len(), 39);
    assert_eq!(plot.matches("class=\"breakpoint\"").count(), 39);
    let chart = fuselage::report::chart::SweepChart::from_sweep(&sweep)
        .title("resnet18: optimal DRAM against buffer (lbdf)");
    assert_eq!(plot, chart.to_svg());
}
