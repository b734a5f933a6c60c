//! The two decompositions of `Optimal`'s down-set programme keep its optimum:
//! - independent regions: no admissible group crosses a cut, and planning the regions apart
//!   gives the same optimum as the whole-graph down-set programme;
//! - bottleneck joins: making the groups across a bottleneck from the best tail for each head
//!   gives the same optimum as growing each of them from its own state.

#[path = "../../fuselage-cost/tests/common/mod.rs"]
mod common;

use fuselage_cost::{Cached, CostConfig, CostKind};
use fuselage_ir::{Graph, NodeSet, Plan};
use fuselage_search::optimal::{bottleneck_nodes, independent_regions};
use fuselage_search::{Budget, Optimal, Problem, SearchStrategy};
use fuselage_split::RandomSplitter;
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// `Optimal::run`'s DRAM against the unbounded whole-graph down-set programme and the best
/// order plan, and the number of regions.
fn against_the_whole_graph(
    g: &Graph,
    kind: CostKind,
    bytes: u64,
    max_group: usize,
) -> (u64, u64, usize) {
    let model = Cached::new(kind.model(CostConfig::new(bytes).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(g, &model, &splitter).unwrap();
    let mut o = Optimal::default();
    o.max_group = max_group;
    let regions = independent_regions(&p, max_group).unwrap();
    let r = o.run(&p, &Budget::new(1).unwrap(), 0).unwrap();
    g.check_plan(&r.plan).unwrap();
    assert_eq!(p.score(&r.plan).unwrap().dram_bytes, r.score.dram_bytes);
    (r.score.dram_bytes, both_families(&o, &p), regions.len())
}

/// The better of the unbounded whole-graph down-set programme (without bottleneck joins) and
/// the best order plan: what `Optimal::run` must return.
fn both_families(o: &Optimal, p: &Problem<'_>) -> u64 {
    plain_downsets(o, p).min(best_order(o, p))
}

/// The unbounded whole-graph down-set programme's optimum, every group grown from its own
/// state (no bottleneck joins).
fn plain_downsets(o: &Optimal, p: &Problem<'_>) -> u64 {
    let mut plain = o.clone();
    plain.join_bottlenecks = false;
    plain.best_over_downsets(p).unwrap().1
}

/// The best order plan's value.
fn best_order(o: &Optimal, p: &Problem<'_>) -> u64 {
    o.candidate_orders(p.graph(), 0)
        .iter()
        .map(|ord| o.best_for_order(p, ord).unwrap().1)
        .min()
        .unwrap()
}

fn dag() -> impl Strategy<Value = (Graph, u64, bool, u64)> {
    (
        4u64..12,
        prop::collection::vec((any::<u8>(), any::<u32>(), any::<u32>()), 2..24),
        200u64..4096,
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(h, steps, bytes, brr, seed)| (common::random_dag(h, &steps), bytes, brr, seed))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The regions partition the graph in node order, and every admissible convex connected
    /// group of at most `max_group` nodes (every group a plan of the family can hold) lies
    /// inside one of them.
    #[test]
    fn no_admissible_group_crosses_a_cut((g, bytes, brr, seed) in dag()) {
        let kind = if brr { CostKind::Brr } else { CostKind::Lbdf };
        let model = Cached::new(kind.model(CostConfig::new(bytes).unwrap()));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        let max_group = 8;
        let regions = independent_regions(&p, max_group).unwrap();
        let mut next = 0;
        for region in &regions {
            let ids: Vec<usize> = region.iter().map(|v| v.index()).collect();
            prop_assert_eq!(ids, (next..next + region.len()).collect::<Vec<_>>());
            next += region.len();
        }
        prop_assert_eq!(next, g.len());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..200 {
            let group = common::random_group(&g, &mut rng, max_group);
            // A group of a plan is convex: with every other node alone, the plan is acyclic.
            let mut plan = vec![group.clone()];
            plan.extend(g.node_ids().filter(|&v| !group.contains(v)).map(|v| NodeSet::singleton(g.len(), v)));
            if group.is_singleton()
                || g.check_plan(&Plan::new(plan)).is_err()
                || !p.admissible(&group).unwrap()
            {
                continue;
            }
            prop_assert!(
                regions.iter().any(|r| group.is_subset(r)),
                "{:?} crosses a cut", group
            );
        }
    }

    /// With bottleneck joins, the unbounded programme finds the optimum of the programme
    /// without them, its plan is valid and worth what it says, and the bounded run (joins,
    /// regions and bounds together) returns the better of that and the best order plan.
    /// About a fifth of the drawn graphs have bottlenecks (29 of 130 in one run).
    #[test]
    fn joining_at_bottlenecks_keeps_the_optimum((g, bytes, brr, _) in dag()) {
        let kind = if brr { CostKind::Brr } else { CostKind::Lbdf };
        let model = Cached::new(kind.model(CostConfig::new(bytes).unwrap()));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        let mut o = Optimal::default();
        o.max_group = 6;
        let (plan, joined, _) = o.best_over_downsets(&p).unwrap();
        let grown = plain_downsets(&o, &p);
        prop_assert_eq!(joined, grown);
        g.check_plan(&plan).unwrap();
        prop_assert!(plan.groups.iter().all(|grp| grp.len() <= 6));
        prop_assert_eq!(p.score(&plan).unwrap().dram_bytes, joined);
        let r = o.run(&p, &Budget::new(1).unwrap(), 0).unwrap();
        prop_assert_eq!(r.score.dram_bytes, grown.min(best_order(&o, &p)));
    }

    /// Planned region by region, the optimum is the whole-graph programme's (or the best order
    /// plan's, when that is better). About a third of the drawn graphs have more than one
    /// region at these buffers (45 of 130 in one run).
    #[test]
    fn the_regions_add_up_to_the_whole_graph_optimum((g, bytes, brr, _) in dag()) {
        let kind = if brr { CostKind::Brr } else { CostKind::Lbdf };
        let (run, whole, _) = against_the_whole_graph(&g, kind, bytes, 6);
        prop_assert_eq!(run, whole);
    }
}

#[test]
fn zoo_networks_split_into_regions_and_keep_their_optimum() {
    // Inputs with cuts at these buffers, small enough for the unbounded programme.
    for (name, kind, kib, count) in [
        ("resnet18", CostKind::Lbdf, 128, 19),
        ("squeezenet1_1", CostKind::Brr, 128, 3),
        ("gpt2_l4_h256", CostKind::Lbdf, 128, 27),
        ("bert_l4_h256", CostKind::Lbdf, 2048, 2),
    ] {
        let g = fuselage_zoo::build(name).unwrap();
        let (run, whole, regions) = against_the_whole_graph(&g, kind, kib * 1024, 64);
        assert_eq!(regions, count, "{name}: regions");
        assert_eq!(run, whole, "{name}");
    }
}

#[test]
fn zoo_networks_join_at_bottlenecks_and_keep_their_optimum() {
    // Wide modules between bottlenecks, one region each at these buffers: Inception-v3's and
    // GoogLeNet's concats, SqueezeNet's fire modules, ResNet-18's blocks (the unbounded
    // programme without joins is the slow reference here).
    for (name, kind, kib, necks) in [
        ("squeezenet1_1", CostKind::Lbdf, 2048, 33),
        ("resnet18", CostKind::Brr, 2048, 22),
        ("googlenet", CostKind::Brr, 2048, 22),
        ("inception_v3", CostKind::Lbdf, 128, 23),
    ] {
        let g = fuselage_zoo::build(name).unwrap();
        let model = Cached::new(kind.model(CostConfig::kib(kib).unwrap()));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        assert_eq!(bottleneck_nodes(&p).len(), necks, "{name}: bottlenecks");
        let o = Optimal::default();
        let (plan, joined, _) = o.best_over_downsets(&p).unwrap();
        g.check_plan(&plan).unwrap();
        assert_eq!(p.score(&plan).unwrap().dram_bytes, joined, "{name}");
        let r = o.run(&p, &Budget::new(1).unwrap(), 0).unwrap();
        assert_eq!(r.score.dram_bytes, both_families(&o, &p), "{name}");
    }
}

#[test]
fn regions_keep_the_optimum_of_latency_and_energy() {
    // The regions and the shifts of repeated ones hold for any objective a group's value
    // sums to: GPT-2 (4 layers) at LBDF 128 KiB, 27 regions, on a compute-bound accelerator.
    use fuselage_cost::{Accelerator, Lbdf, Objective};
    let g = fuselage_zoo::build("gpt2_l4_h256").unwrap();
    let mut hw = Accelerator::preset("nvdla-small").unwrap();
    hw.config = CostConfig::kib(128).unwrap();
    hw.peak_macs_per_cycle = Some(16);
    let model = Cached::new(Lbdf::new(hw.config));
    let splitter = RandomSplitter::new(&model);
    for objective in [Objective::Latency, Objective::Energy] {
        let p = Problem::new(&g, &model, &splitter)
            .unwrap()
            .with_hardware(hw.clone(), objective);
        assert_eq!(independent_regions(&p, 64).unwrap().len(), 27);
        // Joined with best[D] alone as the key: the lower bound is in DRAM bytes.
        assert_eq!(bottleneck_nodes(&p).len(), 12);
        let o = Optimal::default();
        let r = o.run(&p, &Budget::new(1).unwrap(), 0).unwrap();
        g.check_plan(&r.plan).unwrap();
        assert_eq!(
            r.score.cost,
            u128::from(both_families(&o, &p)),
            "{objective}"
        );
    }
}
