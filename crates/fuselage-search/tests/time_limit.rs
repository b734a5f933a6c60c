//! A time limit stops any strategy with its best plan so far and says so; without one the
//! exact optimiser finishes and is proven.

use fuselage_cost::{Brr, Cached, CostConfig, evaluate_plan};
use fuselage_ir::NodeSet;
use fuselage_search::{
    Budget, Optimal, Problem, RestFloor, SearchKind, SearchStrategy, StopReason,
};
use fuselage_split::RandomSplitter;
use std::time::Duration;

/// What `Optimal` proves when stopped during its order programmes: the compulsory traffic
/// with the weights the rest must stream again and the tensors it must cut, over spans no
/// group of either family holds.
fn floor_of_the_orders(p: &Problem<'_>) -> u64 {
    let none = NodeSet::new(p.graph().len());
    let o = Optimal::default();
    let (rereads, cuts) = RestFloor::of(p, o.max_group.max(o.max_segment))
        .unwrap()
        .rest(&none);
    p.remaining_bound(&none) + rereads + cuts
}

#[test]
fn a_spent_time_limit_returns_a_complete_plan_marked_unproven() {
    let g = fuselage_zoo::build("resnet152").unwrap();
    let inner = Brr::new(CostConfig::kib(128).unwrap());
    let model = Cached::new(&inner);
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter).unwrap();
    let spent = || {
        Budget::new(1_000_000)
            .unwrap()
            .with_time_limit(Duration::ZERO)
    };

    // The exact optimiser gives up its down-set programme, still runs the graph's own order,
    // and says it is not proven.
    let quick = Optimal::default().run(&p, &spent(), 1).unwrap();
    assert_eq!(quick.stop, StopReason::TimeLimit);
    assert!(evaluate_plan(&inner, &g, &quick.plan).unwrap().is_valid());
    let full = Optimal::default()
        .run(&p, &Budget::new(1).unwrap(), 1)
        .unwrap();
    assert_eq!(full.stop, StopReason::Exhausted);
    assert!(full.score.dram_bytes <= quick.score.dram_bytes);
    // Finished, it proves its plan optimal; stopped during the orders, it still proves the
    // whole graph's rest bound: the compulsory traffic with the weights the rest must stream
    // again and the tensors it must cut, over spans no group of either family holds.
    assert_eq!(full.lower_bound, Some(full.score.cost));
    let rest = floor_of_the_orders(&p);
    assert!(rest > p.lower_bound(), "{rest} {}", p.lower_bound());
    assert!(rest <= full.score.dram_bytes);
    assert_eq!(quick.lower_bound, Some(u128::from(rest)));

    // A search makes its first evaluation, then stops.
    for name in [SearchKind::Random, SearchKind::Local, SearchKind::Nsga2] {
        let r = name.strategy().run(&p, &spent(), 1).unwrap();
        assert_eq!(r.stop, StopReason::TimeLimit, "{name}");
        assert_eq!(r.lower_bound, None, "{name} proves nothing");
        assert!(r.evaluations >= 1 && r.evaluations < 1_000_000, "{name}");
        assert!(
            evaluate_plan(&inner, &g, &r.plan).unwrap().is_valid(),
            "{name}"
        );
    }
    // A generous limit changes nothing: the budget ends the run.
    let generous = Budget::new(40)
        .unwrap()
        .with_time_limit(Duration::from_secs(3600));
    let r = SearchKind::Local.strategy().run(&p, &generous, 1).unwrap();
    let plain = SearchKind::Local
        .strategy()
        .run(&p, &Budget::new(40).unwrap(), 1)
        .unwrap();
    assert_eq!((r.stop, r.score), (StopReason::Budget, plain.score));
}

#[test]
fn a_stop_flag_ends_every_strategy_with_its_best_plan_so_far() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let g = fuselage_zoo::build("resnet50").unwrap();
    let inner = Brr::new(CostConfig::kib(128).unwrap());
    let model = Cached::new(&inner);
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter).unwrap();
    let flag = AtomicBool::new(false);
    // Set from another thread after the search has started, as a Ctrl-C handler would.
    let budget = Budget::new(u64::MAX).unwrap().with_stop(&flag);
    let r = std::thread::scope(|s| {
        let run = s.spawn(|| SearchKind::Nsga2.strategy().run(&p, &budget, 1).unwrap());
        std::thread::sleep(Duration::from_millis(200));
        flag.store(true, Ordering::SeqCst);
        run.join().unwrap()
    });
    assert_eq!(r.stop, StopReason::Interrupted);
    assert!(r.evaluations >= 1);
    assert!(evaluate_plan(&inner, &g, &r.plan).unwrap().is_valid());
    // Set before the run: every strategy still returns a complete plan, and says why it
    // stopped; the stop flag wins over a time limit that has passed too.
    let set = AtomicBool::new(true);
    for kind in SearchKind::ALL {
        let b = Budget::new(1000)
            .unwrap()
            .with_time_limit(Duration::ZERO)
            .with_stop(&set);
        let r = kind.strategy().run(&p, &b, 1).unwrap();
        assert_eq!(r.stop, StopReason::Interrupted, "{kind}");
        assert!(
            evaluate_plan(&inner, &g, &r.plan).unwrap().is_valid(),
            "{kind}"
        );
    }
}

/// Stops `Optimal` on `p` each of `millis` after its order programmes end (so that the stop
/// lands in the down-set programme: between or inside its joins, or in its layers) and checks
/// what it proves: at least the floor of a run stopped in its orders, at most `optimum`, and
/// the optimum itself when it finished first.
fn stopped_runs_prove_a_floor_below(p: &Problem<'_>, optimum: u128, millis: &[u64]) {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Instant;
    // The floor of a run stopped in the orders; one stopped later proves at least as much.
    let rest = u128::from(floor_of_the_orders(p));
    let orders = Optimal::default().candidate_orders(p.graph(), 1).len();
    for &millis in millis {
        let flag = AtomicBool::new(false);
        // `run` reports once after each order, then once at the end.
        let reports = AtomicUsize::new(0);
        let orders_done: Mutex<Option<Instant>> = Mutex::new(None);
        let progress = |_: u64, _: u64| {
            if reports.fetch_add(1, Ordering::SeqCst) + 1 == orders {
                *orders_done.lock().unwrap() = Some(Instant::now());
            }
        };
        let budget = Budget::new(1)
            .unwrap()
            .with_stop(&flag)
            .with_progress(&progress);
        let r = std::thread::scope(|s| {
            let run = s.spawn(|| Optimal::default().run(p, &budget, 1).unwrap());
            while !run.is_finished() {
                let done = *orders_done.lock().unwrap();
                if done.is_some_and(|t| t.elapsed() >= Duration::from_millis(millis)) {
                    flag.store(true, Ordering::SeqCst);
                    break;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
            run.join().unwrap()
        });
        let bound = r.lower_bound.unwrap();
        assert!(
            rest <= bound && bound <= optimum,
            "{millis} ms: {rest} {bound} {optimum}"
        );
        assert!(bound <= r.score.cost);
        if r.stop == StopReason::Exhausted {
            assert_eq!(bound, optimum);
        }
    }
}

#[test]
fn the_optimiser_stopped_in_its_down_set_programme_proves_a_bound_below_the_optimum() {
    // Inception-v3 at 128 KiB: three regions, with bottlenecks inside them.
    let g = fuselage_zoo::build("inception_v3").unwrap();
    let inner = Brr::new(CostConfig::kib(128).unwrap());
    let model = Cached::new(&inner);
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter).unwrap();
    let full = Optimal::default()
        .run(&p, &Budget::new(1).unwrap(), 1)
        .unwrap();
    let optimum = full.score.cost;
    // docs/optimal.md's optimum, found before the joins too.
    assert_eq!(optimum, 61_788_347);
    assert_eq!(full.lower_bound, Some(optimum));
    stopped_runs_prove_a_floor_below(&p, optimum, &[0, 5, 20, 50, 100, 200]);
}

#[test]
fn the_optimiser_stopped_between_its_joins_proves_a_bound_below_the_optimum() {
    // Inception-v3 at 2 MiB under LBDF is one region with 26 bottlenecks. Its optimum is
    // docs/optimal.md's, 27,482,235 B.
    let g = fuselage_zoo::build("inception_v3").unwrap();
    let model = Cached::new(fuselage_cost::Lbdf::new(CostConfig::kib(2048).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter).unwrap();
    stopped_runs_prove_a_floor_below(&p, 27_482_235, &[0, 5, 20, 50, 100, 200]);
}

/// A chain of `n` ReLUs over 8×16×16.
fn relu_chain(n: usize) -> fuselage_ir::Graph {
    use fuselage_ir::{GraphBuilder, Op, TensorShape};
    let mut b = GraphBuilder::new("chain");
    let mut prev = b.input("x", TensorShape::nchw(8, 16, 16)).unwrap();
    for i in 0..n {
        prev = b.node(format!("n{i}"), Op::Relu, &[prev]).unwrap();
    }
    b.finish().unwrap()
}

/// The order programmes used to run the graph's own order to the end whatever the limit, and
/// the floor after them to be built whatever the limit: on a chain of 30,000 nodes, minutes
/// and gigabytes. A spent limit now stops even the first order (its prefix is completed in
/// singletons, so a whole plan still comes back), and the floor is given up at its deadline.
#[test]
fn a_spent_time_limit_stops_the_first_order_and_the_floor() {
    let g = relu_chain(3000);
    let inner = fuselage_cost::Lbdf::new(CostConfig::kib(128).unwrap());
    let model = Cached::new(&inner);
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter).unwrap();
    let spent = Budget::new(1).unwrap().with_time_limit(Duration::ZERO);
    let r = Optimal::default().run(&p, &spent, 1).unwrap();
    assert_eq!(r.stop, StopReason::TimeLimit);
    assert_eq!(r.evaluations, 0, "no segment is costed past the limit");
    let covered: usize = r.plan.groups.iter().map(NodeSet::len).sum();
    assert_eq!(covered, g.len());
    assert!(evaluate_plan(&inner, &g, &r.plan).unwrap().is_valid());
    // A floor past its deadline is the empty one: a floor still, proving the compulsory bound.
    let none = NodeSet::new(g.len());
    let late = RestFloor::of_by(&p, 160, std::time::Instant::now()).unwrap();
    assert_eq!(late.rest(&none), (0, 0));
    let proven = r.lower_bound.unwrap();
    assert!(proven >= u128::from(p.remaining_bound(&none)) && proven <= r.score.cost);
}
