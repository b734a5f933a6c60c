//! A small reproduction is byte-identical across two runs with the same seeds, and every plan
//! it returns checks.

use fuselage::cost::CostKind;
use fuselage::reproduce::{Row, Scale, Table, repair_name, run_rows};
use fuselage::search::SearchKind;

fn small() -> (Vec<Row>, Scale) {
    let rows = vec![Row {
        table: Table::IIIandIV,
        network: "resnet18".into(),
        resolution: 224,
        fusion: CostKind::Lbdf,
        buffer_kib: 128,
        budget: 60,
        searches: vec![SearchKind::Local, SearchKind::Random],
    }];
    let mut scale = Scale::quick();
    scale.table34_budget = 60;
    (rows, scale)
}

#[test]
fn a_reproduction_is_deterministic_and_its_plans_check() {
    let (rows, scale) = small();
    let a = run_rows(rows.clone(), &scale, &|_, _| {}).unwrap();
    let b = run_rows(rows, &scale, &|_, _| {}).unwrap();
    // 2 searches × (random + 4 explainers) × 1 seed.
    assert_eq!(a.runs.len(), 10);
    assert_eq!(a.runs_json(), b.runs_json());
    assert_eq!(a.plan_problems(), 0);
    let opt = a.references[0].optimal_bytes;
    assert!(opt >= a.references[0].lower_bound_bytes);
    for r in &a.runs {
        assert!(
            r.dram_bytes >= opt,
            "{} {}: {} < optimal {}",
            r.search,
            repair_name(r.explainer),
            r.dram_bytes,
            opt
        );
        assert_eq!(r.history.len(), 60);
        assert!(r.rectified <= r.invalid_groups_met);
    }
    let md = a.markdown();
    assert!(md.contains("## Table III") && md.contains("## Table IV"));
    let dir = std::env::temp_dir().join(format!("fuselage-repro-{}", std::process::id()));
    a.write(&dir).unwrap();
    assert!(dir.join("results.md").exists());
    let plans = std::fs::read_dir(dir.join("results/plans"))
        .unwrap()
        .count();
    assert_eq!(plans, 10);
}
