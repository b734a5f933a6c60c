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

/// What `Optimal::run` returned and what it must return on one problem.
struct Against {
    /// `run`'s objective value.
    run: u128,
    /// The better of the unbounded whole-graph down-set programme without bottleneck joins
    /// and the best order plan.
    whole: u128,
    /// Independent regions.
    regions: usize,
    /// Bottlenecks of the whole graph.
    necks: usize,
}

/// Runs `Optimal` (groups of at most `max_group` nodes) on `p` and the references it must
/// equal. Checks on the way that both plans are valid and worth what they say, and that the
/// unbounded programme with joins finds the optimum of the one without.
fn against_the_whole_graph(p: &Problem<'_>, max_group: usize) -> Against {
    let g = p.graph();
    let mut o = Optimal::default();
    o.max_group = max_group;
    let r = o.run(p, &Budget::new(1).unwrap(), 0).unwrap();
    g.check_plan(&r.plan).unwrap();
    assert_eq!(p.score(&r.plan).unwrap().cost, r.score.cost);
    let (plan, joined, _) = o.best_over_downsets(p).unwrap();
    g.check_plan(&plan).unwrap();
    assert!(plan.groups.iter().all(|grp| grp.len() <= max_group));
    assert_eq!(p.score(&plan).unwrap().cost, u128::from(joined));
    let mut plain = o.clone();
    plain.join_bottlenecks = false;
    let grown = plain.best_over_downsets(p).unwrap().1;
    assert_eq!(joined, grown, "joins against growing");
    let orders = o
        .candidate_orders(g, 0)
        .iter()
        .map(|ord| o.best_for_order(p, ord).unwrap().1)
        .min()
        .unwrap();
    Against {
        run: r.score.cost,
        whole: u128::from(grown.min(orders)),
        regions: independent_regions(p, max_group).unwrap().len(),
        necks: bottleneck_nodes(p).len(),
    }
}

/// [`against_the_whole_graph`] on `g` under `kind` at `bytes`, for DRAM.
fn against_for_dram(g: &Graph, kind: CostKind, bytes: u64, max_group: usize) -> Against {
    let model = Cached::new(kind.model(CostConfig::new(bytes).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(g, &model, &splitter).unwrap();
    against_the_whole_graph(&p, max_group)
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

    /// Planned region by region and joined at bottlenecks, the optimum is the whole-graph
    /// programme's without joins (or the best order plan's, when that is better), and the
    /// unbounded programme with joins equals the one without. About a third of the drawn
    /// graphs have more than one region at these buffers (45 of 130 in one run), about a fifth
    /// have bottlenecks (29 of 130).
    #[test]
    fn the_regions_and_the_joins_keep_the_whole_graph_optimum((g, bytes, brr, _) in dag()) {
        let kind = if brr { CostKind::Brr } else { CostKind::Lbdf };
        let a = against_for_dram(&g, kind, bytes, 6);
        prop_assert_eq!(a.run, a.whole);
    }
}

#[test]
fn zoo_networks_split_and_join_and_keep_their_optimum() {
    // Inputs small enough for the unbounded programme without joins: some cut into regions
    // at these buffers (GPT-2 with repeated layers), some one region of wide modules between
    // bottlenecks (Inception-v3's and GoogLeNet's concats, SqueezeNet's fire modules).
    for (name, kind, kib, regions, necks) in [
        ("resnet18", CostKind::Lbdf, 128, 19, 21),
        ("squeezenet1_1", CostKind::Brr, 128, 3, 32),
        ("gpt2_l4_h256", CostKind::Lbdf, 128, 27, 12),
        ("bert_l4_h256", CostKind::Lbdf, 2048, 2, 19),
        ("squeezenet1_1", CostKind::Lbdf, 2048, 1, 33),
        ("resnet18", CostKind::Brr, 2048, 1, 22),
        ("googlenet", CostKind::Brr, 2048, 1, 22),
        ("inception_v3", CostKind::Lbdf, 128, 6, 23),
    ] {
        let g = fuselage_zoo::build(name).unwrap();
        let a = against_for_dram(&g, kind, kib * 1024, 64);
        assert_eq!(
            (a.regions, a.necks),
            (regions, necks),
            "{name}: regions, bottlenecks"
        );
        assert_eq!(a.run, a.whole, "{name}");
    }
}

#[test]
fn the_joins_keep_the_optimum_where_weights_stream() {
    // Under BRR at 32 KiB most groups stream their weights, so the bounded run's tails and
    // heads carry rereads and tile excess in their keys (the unbounded programme has no tile
    // floor). With and without joins, the same optimum.
    // GPT-2's number moved from 50,984,092 when its key and value concats began to stream.
    for (name, dram) in [("gpt2_l4_h256", 50_197_660), ("squeezenet1_1", 14_323_984)] {
        let g = fuselage_zoo::build(name).unwrap();
        let model = Cached::new(CostKind::Brr.model(CostConfig::kib(32).unwrap()));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        let joined = Optimal::default();
        let mut grown = joined.clone();
        grown.join_bottlenecks = false;
        for o in [joined, grown] {
            let r = o.run(&p, &Budget::new(1).unwrap(), 0).unwrap();
            assert_eq!(
                r.score.dram_bytes, dram,
                "{name}, joins {}",
                o.join_bottlenecks
            );
        }
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
        // The joins walk by best[D] alone here: the floor is in DRAM bytes.
        let a = against_the_whole_graph(&p, 64);
        assert_eq!((a.regions, a.necks), (27, 12), "{objective}");
        assert_eq!(a.run, a.whole, "{objective}");
    }
}
