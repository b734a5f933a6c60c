//! The downstream components, through the library and through the program.

use fuselage::cost::{Accelerator, CostConfig, CostKind, CostModel, Lbdf};
use fuselage::ir::NodeSet;
use fuselage::{Planner, Reference};
use fuselage_downstream::{FanOut, GreedyMerge, Reserved, ReservedFamily};
use std::process::Command;
use std::sync::Arc;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_fuselage-downstream"))
}

#[test]
fn the_reserve_makes_a_group_that_just_fits_invalid() {
    let g = fuselage::zoo::build("resnet18").unwrap();
    let group = NodeSet::from_ids(g.len(), g.node_ids().take(3));
    let need = Lbdf::new(CostConfig::kib(1024).unwrap())
        .evaluate(&g, &group)
        .unwrap()
        .buffer_bytes;
    // β one byte above the need: LBDF fits, the reserved model does not.
    let config = CostConfig::new(need + 1).unwrap();
    assert!(Lbdf::new(config).evaluate(&g, &group).unwrap().valid);
    let reserved = Reserved::new(Lbdf::new(config), 1)
        .evaluate(&g, &group)
        .unwrap();
    assert_eq!(reserved.buffer_bytes, need + 1);
    assert!(!reserved.valid);
}

#[test]
fn greedy_merge_is_the_same_on_one_thread_and_two() {
    let g = fuselage::zoo::build("resnet18").unwrap();
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let model = Arc::new(Reserved::new(
                Lbdf::new(CostConfig::kib(256).unwrap()),
                4096,
            ));
            Planner::with_model(&g, model)
                .search_with(Box::new(GreedyMerge::default()))
                .explainer_with(Box::new(FanOut))
                .budget(300)
                .seed(3)
                .reference(Reference::Off)
                .run()
                .unwrap()
        })
    };
    let (one, two) = (run(1), run(2));
    assert_eq!(one.result.plan, two.result.plan);
    assert_eq!(one.result.history, two.result.history);
    assert!(one.report.is_valid());
    // It merged something: fewer groups than layer by layer, and less DRAM.
    assert!(one.report.groups.len() < g.len());
    assert_eq!(one.names.search, "greedy-merge");
    assert_eq!(one.names.explainer.as_deref(), Some("fan-out"));
}

/// A downstream family goes through the same exact sweep as a built-in: reserving `r` bytes
/// of every buffer is LBDF at `β − r`, so its curve is LBDF's shifted right by `r`, step for
/// step, and with no reserve it is LBDF's.
#[test]
fn a_family_gets_the_exact_sweep_shifted_by_its_reserve() {
    let g = fuselage::zoo::build_at("resnet18", 64).unwrap();
    let hw = Accelerator::beta_only(CostConfig::new(1).unwrap());
    let sweep = fuselage::pipeline::sweep;
    let lbdf = sweep(&g, &CostKind::Lbdf, &hw, 16 << 10, 256 << 10).unwrap();
    let none = sweep(
        &g,
        &ReservedFamily::new(CostKind::Lbdf, 0),
        &hw,
        16 << 10,
        256 << 10,
    );
    assert_eq!(none.unwrap(), lbdf);
    let r = 4096;
    let reserved = sweep(
        &g,
        &ReservedFamily::new(CostKind::Lbdf, r),
        &hw,
        (16 << 10) + r,
        (256 << 10) + r,
    )
    .unwrap();
    assert!(lbdf.points.len() > 10, "{}", lbdf.points.len());
    assert_eq!(reserved.points.len(), lbdf.points.len());
    for (a, b) in reserved.points.iter().zip(&lbdf.points) {
        assert_eq!(
            (a.buffer_bytes, a.up_to_bytes, a.dram_bytes, a.groups),
            (
                b.buffer_bytes + r,
                b.up_to_bytes + r,
                b.dram_bytes,
                b.groups
            )
        );
    }
}

#[test]
fn without_arguments_it_prints_its_plan_its_sweep_and_its_report() {
    let dir = std::env::temp_dir().join(format!("fuselage-downstream-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = bin().env("FUSELAGE_DOWNSTREAM_OUT", &dir).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(
            "resnet18 with reserved-lbdf (greedy-merge search, get splitter over fan-out)"
        ),
        "{first}"
    );
    assert!(
        text.contains("optimum ") && text.contains("(proven)"),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("group 0: ")), "{text}");
    assert!(
        text.contains("sweep of reserved-lbdf from 64 KiB to 512 KiB: "),
        "{text}"
    );
    let html = std::fs::read_to_string(dir.join("fuselage-downstream-report.html")).unwrap();
    assert!(html.contains("optimal DRAM against buffer (reserved-lbdf)"));
    assert!(html.contains("β = 256 KiB"));
    // The program's sweep knows the registered family too.
    let out = bin()
        .args([
            "sweep",
            "resnet18",
            "--fusion",
            "reserved-lbdf",
            "--from",
            "64KiB",
            "--to",
            "256KiB",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("resnet18 · reserved-lbdf · beta-only · buffer 64.0 to 256.0 KiB"),
        "{text}"
    );
}

#[test]
fn the_program_knows_the_registered_names() {
    let dir = std::env::temp_dir().join(format!("fuselage-downstream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    let out = bin()
        .args([
            "optimize",
            "resnet18",
            "--fusion",
            "reserved-lbdf",
            "--buffer",
            "256KiB",
            "--search",
            "greedy-merge",
            "--splitter",
            "get",
            "--explainer",
            "fan-out",
            "--budget",
            "300",
            "--seed",
            "1",
            "--no-reference",
            "--quiet",
            "--out",
        ])
        .arg(&plan)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = std::fs::read_to_string(&plan).unwrap();
    assert!(json.contains("\"cost_model\": \"reserved-lbdf\""), "{json}");
    // An unknown name lists the built-ins and the registered ones.
    let out = bin()
        .args([
            "optimize", "resnet18", "--fusion", "lbdf", "--buffer", "256KiB",
        ])
        .args(["--search", "greedy", "--out"])
        .arg(&plan)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("unknown search `greedy`") && err.contains("registered: greedy-merge"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
