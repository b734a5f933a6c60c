//! Every strategy returns a plan that re-evaluates with no problem on every zoo network, under
//! both cost models, at 128 KiB and 2 MiB.

use fuselage_cost::{Brr, Cached, CostConfig, CostModel, Lbdf, evaluate_plan};
use fuselage_search::{Budget, Problem, SearchKind};
use fuselage_split::RandomSplitter;

#[test]
fn every_strategy_every_network_both_models_two_buffers() {
    for net in fuselage_zoo::NAMES {
        let g = fuselage_zoo::build(net).unwrap();
        for kib in [128, 2048] {
            let cfg = CostConfig::kib(kib).unwrap();
            let models: [Box<dyn CostModel>; 2] =
                [Box::new(Lbdf::new(cfg)), Box::new(Brr::new(cfg))];
            for inner in &models {
                let model = Cached::new(inner.as_ref());
                let splitter = RandomSplitter::new(&model);
                let p = Problem::new(&g, &model, &splitter).unwrap();
                let mut optimal = u64::MAX;
                // Optimal first: every other search is checked against it.
                let mut order = SearchKind::ALL;
                order.sort_by_key(|&k| k != SearchKind::Optimal);
                for name in order {
                    let r = name
                        .strategy()
                        .run(&p, &Budget::new(30).unwrap(), 11)
                        .unwrap();
                    let report = evaluate_plan(inner.as_ref(), &g, &r.plan).unwrap();
                    assert!(
                        report.is_valid(),
                        "{name} {net} {} {kib} KiB: {:?}",
                        inner.name(),
                        report.problems.first()
                    );
                    assert!(r.score.dram_bytes >= p.lower_bound());
                    if name == SearchKind::Optimal {
                        optimal = r.score.dram_bytes;
                    } else {
                        assert!(
                            optimal <= r.score.dram_bytes,
                            "{name} beat optimal on {net} {} {kib} KiB",
                            inner.name()
                        );
                    }
                }
            }
        }
    }
}
