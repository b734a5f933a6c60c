//! Every strategy returns a valid plan, deterministically, never below the lower bound and never
//! better than the exact optimiser.

use fuselage_cost::{Brr, Cached, CostConfig, CostKind, CostModel, Lbdf, evaluate_plan};
use fuselage_ir::Graph;
use fuselage_search::{
    Budget, Optimal, Problem, RestFloor, SearchKind, SearchStrategy, lower_bound,
};
use fuselage_split::RandomSplitter;

fn check(g: &Graph, model: &dyn CostModel, budget: u64) -> Vec<(String, u64)> {
    let cached = Cached::new(model);
    let splitter = RandomSplitter::new(&cached);
    let p = Problem::new(g, &cached, &splitter).unwrap();
    let lb = p.lower_bound();
    assert_eq!(lb, lower_bound(g, &CostConfig::new(1).unwrap()));
    let mut out = Vec::new();
    let optimal = Optimal::default()
        .run(&p, &Budget::new(1).unwrap(), 0)
        .unwrap();
    let file_order: Vec<_> = g.node_ids().collect();
    let (_, file_dp, _) = Optimal::default().best_for_order(&p, &file_order).unwrap();
    assert!(
        optimal.score.dram_bytes <= file_dp,
        "{}: optimal above the file-order DP",
        g.name()
    );
    for name in SearchKind::ALL {
        let s = name.strategy();
        let r = s.run(&p, &Budget::new(budget).unwrap(), 7).unwrap();
        g.check_plan(&r.plan).unwrap();
        let report = evaluate_plan(model, g, &r.plan).unwrap();
        assert!(
            report.is_valid(),
            "{name} on {}: {:?}",
            g.name(),
            report.problems
        );
        assert_eq!(report.dram_bytes, r.score.dram_bytes);
        assert!(r.score.dram_bytes >= lb, "{name} below the lower bound");
        assert!(
            optimal.score.dram_bytes <= r.score.dram_bytes,
            "{name} beat optimal on {}",
            g.name()
        );
        if name != SearchKind::Optimal {
            assert_eq!(r.evaluations, budget);
            assert_eq!(r.history.len() as u64, budget);
            assert!(r.history.windows(2).all(|w| w[0] >= w[1]));
        }
        let again = s.run(&p, &Budget::new(budget).unwrap(), 7).unwrap();
        assert_eq!(again.plan, r.plan, "{name}: same seed, same plan");
        out.push((name.to_string(), r.score.dram_bytes));
    }
    eprintln!("{} {}: lb {lb} {:?}", g.name(), model.name(), out);
    out
}

#[test]
fn strategies_on_four_networks() {
    for name in [
        "resnet18",
        "squeezenet1_1",
        "mobilenet_v2",
        "efficientnet_b0",
    ] {
        let g = fuselage_zoo::build(name).unwrap();
        for kib in [128, 2048] {
            let cfg = CostConfig::kib(kib).unwrap();
            check(&g, &Lbdf::new(cfg), 150);
            check(&g, &Brr::new(cfg), 150);
        }
    }
}

#[test]
fn zero_budget_and_unknown_strategy_are_errors() {
    assert_eq!(
        Budget::new(0).err().unwrap().to_string(),
        "the budget must allow at least one plan evaluation (budget 0 given)"
    );
    assert!(
        "annealing"
            .parse::<SearchKind>()
            .err()
            .unwrap()
            .to_string()
            .contains("valid: random, local, nsga2, optimal")
    );
}

#[test]
fn downset_programme_is_exact_on_small_groups() {
    // The down-set programme covers every plan with small groups, so it is never worse than the
    // order programme restricted to the same group size, on any order.
    let g = fuselage_zoo::build("resnet50").unwrap();
    let model = Cached::new(Lbdf::new(CostConfig::kib(128).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter).unwrap();
    let mut o = Optimal::default();
    o.max_group = 24;
    o.max_segment = 24;
    let (plan, cost, _) = o.best_over_downsets(&p).unwrap();
    g.check_plan(&plan).unwrap();
    assert!(plan.groups.iter().all(|grp| grp.len() <= 24));
    assert_eq!(p.score(&plan).unwrap().dram_bytes, cost);
    for order in o.candidate_orders(&g, 5) {
        let (_, by_order, _) = o.best_for_order(&p, &order).unwrap();
        assert!(cost <= by_order);
    }
    // On this network, per-block branch placement matters: no single candidate order reaches it.
    let best_order = o
        .candidate_orders(&g, 5)
        .iter()
        .map(|ord| o.best_for_order(&p, ord).unwrap().1)
        .min()
        .unwrap();
    assert!(cost < best_order, "{cost} vs {best_order}");
}

#[test]
fn optimal_is_the_same_on_one_thread_or_two() {
    // The orders and the down-set layers run in parallel and are merged in a fixed order.
    for (name, kib) in [("resnet18", 128), ("bert_l4_h256", 2048)] {
        let g = fuselage_zoo::build(name).unwrap();
        let run = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| {
                let model = Cached::new(Brr::new(CostConfig::kib(kib).unwrap()));
                let splitter = RandomSplitter::new(&model);
                let p = Problem::new(&g, &model, &splitter).unwrap();
                let r = Optimal::default()
                    .run(&p, &Budget::new(1).unwrap(), 3)
                    .unwrap();
                (r.plan, r.score, r.evaluations, r.history)
            })
        };
        assert_eq!(run(1), run(2), "{name}");
    }
}

#[test]
fn the_bounded_run_matches_the_unbounded_downset_programme() {
    // `run` bounds the down-set programme by the best order plan, which may not lose the optimum
    // of the family. (The buffer floor, used by both, is a property test of fuselage-cost.)
    for (name, kind, kib) in [
        ("resnet50", CostKind::Lbdf, 128),
        ("mobilenet_v2", CostKind::Brr, 128),
        ("gpt2_l4_h256", CostKind::Brr, 2048),
        ("googlenet", CostKind::Lbdf, 2048),
    ] {
        let g = fuselage_zoo::build(name).unwrap();
        let model = Cached::new(kind.model(CostConfig::kib(kib).unwrap()));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        let o = Optimal::default();
        let (_, downsets, _) = o.best_over_downsets(&p).unwrap();
        let r = o.run(&p, &Budget::new(1).unwrap(), 0).unwrap();
        let orders = o
            .candidate_orders(&g, 0)
            .iter()
            .map(|ord| o.best_for_order(&p, ord).unwrap().1)
            .min()
            .unwrap();
        assert_eq!(r.score.dram_bytes, downsets.min(orders), "{name}");
    }
}

#[test]
fn the_rest_floor_is_below_the_optimum_and_adds_to_the_bound() {
    // Before anything is planned, compulsory traffic, rereads and cuts together may not exceed
    // the optimum; on these inputs the floor adds something (it prunes).
    for (name, kind, kib) in [
        ("googlenet", CostKind::Lbdf, 2048),
        ("googlenet", CostKind::Brr, 128),
        ("gpt2_l4_h256", CostKind::Brr, 128),
        ("bert_l4_h256", CostKind::Brr, 2048),
        ("vit_tiny_patch16_224", CostKind::Brr, 2048),
    ] {
        let g = fuselage_zoo::build(name).unwrap();
        let model = Cached::new(kind.model(CostConfig::kib(kib).unwrap()));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        let none = fuselage_ir::NodeSet::new(g.len());
        let (rereads, cuts) = RestFloor::of(&p, 64).unwrap().rest(&none);
        let optimum = Optimal::default()
            .run(&p, &Budget::new(1).unwrap(), 0)
            .unwrap()
            .score
            .dram_bytes;
        let floor = p.remaining_bound(&none) + rereads + cuts;
        assert!(rereads + cuts > 0, "{name} {kib}: nothing added");
        assert!(
            floor <= optimum,
            "{name} {kib}: floor {floor} > optimum {optimum}"
        );
    }
}
