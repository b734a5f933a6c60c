//! A small reproduction is byte-identical across two runs with the same seeds, and every plan
//! it returns checks.

use fuselage::cost::CostKind;
use fuselage::search::SearchKind;
use fuselage_reproduce::{
    EXPLAINERS, Method, Row, Scale, Screened, Table, repair_name, run_rows, wins_candidates,
};

fn small() -> (Vec<Row>, Scale) {
    let rows = vec![Row {
        table: Table::IIIandIV,
        network: "resnet18".into(),
        resolution: Some(224),
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

#[test]
fn a_setting_is_screened_in_only_above_five_percent() {
    let row = |kib| Row {
        table: Table::Wins,
        network: "resnet18".into(),
        resolution: None,
        fusion: CostKind::Brr,
        buffer_kib: kib,
        budget: 60,
        searches: vec![SearchKind::Local, SearchKind::Nsga2],
    };
    let screened = |random_bytes: Vec<u64>| Screened {
        row: row(128),
        improved_bytes: random_bytes.clone(),
        random_bytes,
        optimal_bytes: 1000,
    };
    // 5% above the optimum is 1050 bytes: a setting needs one search strictly above it.
    assert!(!screened(vec![1050, 1000]).selected());
    assert!(screened(vec![1000, 1051]).selected());
    assert!(!screened(vec![1000, 1000]).selected());
    // The candidates: every setting of docs/searches.md and the two Inception CNNs.
    let candidates = wins_candidates(&Scale::full());
    assert_eq!(candidates.len(), 76);
    assert!(
        candidates
            .iter()
            .all(|r| r.budget == 2000 && r.table == Table::Wins)
    );
    assert!(
        candidates
            .iter()
            .any(|r| r.network == "googlenet" && r.buffer_kib == 256)
    );
    assert!(
        candidates
            .iter()
            .any(|r| r.network == "gpt2_l4_h256" && r.buffer_kib == 2048)
    );
    // A text preset has no resolution: it is built at its default sequence length.
    let gpt2 = candidates
        .iter()
        .find(|r| r.network == "gpt2_l4_h256")
        .unwrap();
    assert!(gpt2.graph().unwrap().len() > 100);
}

#[test]
fn a_wins_row_reports_the_share_of_the_gap_each_explainer_closes() {
    let row = Row {
        table: Table::Wins,
        network: "squeezenet1_1".into(),
        resolution: None,
        fusion: CostKind::Brr,
        buffer_kib: 128,
        budget: 60,
        searches: vec![SearchKind::Local, SearchKind::Nsga2],
    };
    let mut scale = Scale::quick();
    scale.wins_budget = 60;
    let mut r = run_rows(vec![row.clone()], &scale, &|_, _| {}).unwrap();
    // 2 searches × (random + 4 explainers) × 1 seed, by the paper's method and the improved.
    assert_eq!(r.runs.len(), 20);
    let improved = r
        .runs
        .iter()
        .filter(|x| x.method == Method::Improved)
        .count();
    assert_eq!(improved, 10);
    assert_eq!(r.plan_problems(), 0);
    let opt = r.references[0].optimal_bytes;
    for &s in &row.searches {
        let base = r.median_dram(0, s, None);
        let (_, best) = r.best_explainer(0, s);
        let closed = r.gap_closed(0, s, &EXPLAINERS);
        if base > opt {
            let want = (base as f64 - best as f64) / (base - opt) as f64;
            assert!((closed - want).abs() < 1e-12, "{closed} vs {want}");
        } else {
            assert_eq!(closed, 1.0);
        }
        assert!(closed <= 1.0);
    }
    // Evaluations to within 5%: the first evaluation whose best is within 5%, by hand.
    for run in &r.runs {
        let bar = opt as f64 * 1.05;
        let first = run.history.iter().position(|&b| b as f64 <= bar);
        let got = r.evaluations_to_within(0, run.search, run.explainer, run.method, 0.05);
        assert_eq!(got, first.map(|i| i as u64 + 1), "{run:?}");
    }
    let local = r.median_dram(0, SearchKind::Local, None);
    r.screen = vec![Screened {
        row,
        random_bytes: vec![local; 2],
        // The improved method 2% above random on NSGA-II: the section names that line.
        improved_bytes: vec![local, local + local / 50],
        optimal_bytes: opt,
    }];
    let md = r.markdown();
    assert!(md.contains("## Where explanations should win: LS and NSGA-II, budget 60"));
    assert!(md.contains("Screened: 1 settings"));
    assert!(md.contains("| squeezenet1_1 | BRR | 128 KiB | LS |"));
    assert!(md.contains("| squeezenet1_1 | BRR | 128 KiB | NSGA-II |"));
    assert!(md.contains("## The improved guided search: LS and NSGA-II, budget 60"));
    assert!(
        md.contains("than 1% above the random splitter's median on 1: squeezenet1_1 BRR 128 KiB NSGA-II (+2.0%)"),
        "{md}"
    );
}
