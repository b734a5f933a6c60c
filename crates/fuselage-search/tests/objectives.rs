//! Objectives beyond DRAM: `Optimal` is exact for DRAM, latency and energy (checked against
//! every plan of a small graph with a skip), and NSGA-II's (latency, energy) front is not
//! dominated by any plan it evaluated.

use fuselage_cost::{Accelerator, Cached, CostConfig, CostModel, Lbdf, Objective, evaluate_plan};
use fuselage_ir::{ConvAttrs, Graph, GraphBuilder, NodeSet, Op, Plan, PoolAttrs, TensorShape};
use fuselage_search::{Budget, Nsga2, Optimal, Pair, Problem, Score, SearchStrategy};
use fuselage_split::RandomSplitter;
use std::collections::HashSet;
use std::sync::Mutex;

/// Twelve nodes: a stem, a residual block whose skip jumps three nodes, a strided conv, a
/// second block with a skip, a pool and a head.
fn twelve() -> Graph {
    let mut b = GraphBuilder::new("twelve");
    let conv = |c, k, s| Op::Conv(ConvAttrs::square(c, k, s, 1, 1));
    let x = b.input("input", TensorShape::nchw(8, 32, 32)).unwrap();
    let c0 = b.node("c0", conv(16, 3, 1), &[x]).unwrap();
    let r0 = b.node("r0", Op::Relu, &[c0]).unwrap();
    let c1 = b.node("c1", conv(16, 3, 1), &[r0]).unwrap();
    let r1 = b.node("r1", Op::Relu, &[c1]).unwrap();
    let c2 = b.node("c2", conv(16, 3, 1), &[r1]).unwrap();
    let a1 = b.node("a1", Op::Add, &[c2, r0]).unwrap();
    let c3 = b.node("c3", conv(32, 3, 2), &[a1]).unwrap();
    let r3 = b.node("r3", Op::Relu, &[c3]).unwrap();
    let c4 = b.node("c4", conv(32, 1, 1), &[r3]).unwrap();
    let a2 = b.node("a2", Op::Add, &[c4, r3]).unwrap();
    let p = b
        .node(
            "pool",
            Op::MaxPool(PoolAttrs::square(2, 2, 0, false)),
            &[a2],
        )
        .unwrap();
    b.node("head", conv(8, 1, 1), &[p]).unwrap();
    b.finish().unwrap()
}

/// Every partition of `g` into weakly connected groups: the components of every subset of
/// the edges (each such partition is the components of the edges inside its groups).
fn every_partition(g: &Graph) -> Vec<Plan> {
    let edges: Vec<(usize, usize)> = g
        .node_ids()
        .flat_map(|v| g.producers(v).map(move |u| (u.index(), v.index())))
        .collect();
    assert!(edges.len() <= 16, "{} edges", edges.len());
    let n = g.len();
    let mut seen = HashSet::new();
    let mut plans = Vec::new();
    for mask in 0u32..(1 << edges.len()) {
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], x: usize) -> usize {
            if p[x] != x {
                let r = find(p, p[x]);
                p[x] = r;
            }
            p[x]
        }
        for (k, &(u, v)) in edges.iter().enumerate() {
            if mask >> k & 1 == 1 {
                let (a, b) = (find(&mut parent, u), find(&mut parent, v));
                parent[a] = b;
            }
        }
        let roots: Vec<usize> = (0..n).map(|x| find(&mut parent, x)).collect();
        if !seen.insert(roots.clone()) {
            continue;
        }
        let mut groups: Vec<NodeSet> = Vec::new();
        let mut index = vec![usize::MAX; n];
        for (x, &r) in roots.iter().enumerate() {
            if index[r] == usize::MAX {
                index[r] = groups.len();
                groups.push(NodeSet::new(n));
            }
            groups[index[r]].insert(fuselage_ir::NodeId(x as u32));
        }
        plans.push(Plan::new(groups));
    }
    plans
}

#[test]
fn optimal_is_exact_for_dram_latency_and_energy() {
    let g = twelve();
    assert_eq!(g.len(), 12);
    // Compute-heavy enough that latency and DRAM disagree on some groups.
    let mut hw = Accelerator::preset("nvdla-small").unwrap();
    hw.config = CostConfig::new(24 * 1024).unwrap();
    hw.peak_macs_per_cycle = Some(16);
    let model = Cached::new(Lbdf::new(hw.config));
    let splitter = RandomSplitter::new(&model);
    let plans = every_partition(&g);
    let mut admissible = 0;
    for objective in [Objective::Dram, Objective::Latency, Objective::Energy] {
        let p = Problem::new(&g, &model, &splitter)
            .unwrap()
            .with_hardware(hw.clone(), objective);
        let mut best = u128::MAX;
        admissible = 0;
        for plan in &plans {
            if g.check_plan(plan).is_err() {
                continue;
            }
            let report = evaluate_plan(&model, &g, plan).unwrap();
            if !report.is_valid() {
                continue;
            }
            admissible += 1;
            best = best.min(p.score(plan).unwrap().cost);
        }
        let r = Optimal::default()
            .run(&p, &Budget::new(1).unwrap(), 0)
            .unwrap();
        assert_eq!(r.score.cost, best, "{objective}");
        assert!(evaluate_plan(&model, &g, &r.plan).unwrap().is_valid());
        assert!(u128::from(p.remaining_bound(&NodeSet::new(g.len()))) <= best);
    }
    // The buffer leaves a real choice: many plans, not all of them.
    assert!(
        admissible > 100 && admissible < plans.len(),
        "{admissible} of {}",
        plans.len()
    );
    let _ = model.config();
}

#[test]
fn the_pareto_front_is_dominated_by_no_evaluated_plan() {
    let g = fuselage_zoo::build_at("resnet18", 64).unwrap();
    let hw = Accelerator::preset("nvdla-small").unwrap();
    let model = Cached::new(Lbdf::new(hw.config));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(&g, &model, &splitter)
        .unwrap()
        .with_hardware(hw, Objective::Latency)
        .with_pair(Pair::LatencyEnergy);
    let seen: Mutex<Vec<Score>> = Mutex::new(Vec::new());
    let observe = |s: &Score| seen.lock().unwrap().push(*s);
    let budget = Budget::new(400).unwrap().with_observer(&observe);
    let r = Nsga2::default().run(&p, &budget, 3).unwrap();
    let seen = seen.into_inner().unwrap();
    assert_eq!(seen.len(), 400);
    assert!(r.front.len() >= 2, "{} points", r.front.len());
    for a in &r.front {
        assert_eq!(a.pair, [a.latency_cycles, a.energy_fj]);
        for b in r.front.iter().chain(&seen) {
            assert!(
                !b.dominates(a),
                "{:?} dominates front point {:?}",
                b.pair,
                a.pair
            );
        }
    }
    // Every evaluated plan is dominated by or equal to a front point.
    for s in &seen {
        assert!(r.front.iter().any(|a| a.pair == s.pair || a.dominates(s)));
    }
}
