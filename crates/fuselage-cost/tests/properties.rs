//! Properties of the cost models on random DAGs and random connected groups.

mod common;

use fuselage_cost::{Brr, BufferSimulator, CostConfig, CostModel, Lbdf, PlanFile, evaluate_plan};
use fuselage_ir::{Graph, NodeId, NodeSet, Plan};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn dag() -> impl Strategy<Value = (Graph, u64)> {
    (
        6u64..20,
        prop::collection::vec((any::<u8>(), any::<u32>(), any::<u32>()), 2..30),
        any::<u64>(),
    )
        .prop_map(|(h, steps, seed)| (common::random_dag(h, &steps), seed))
}

/// A plan of contiguous id ranges, each cut into its connected components: always acyclic.
fn chunk_plan(g: &Graph, rng: &mut ChaCha8Rng) -> Plan {
    use rand::RngExt;
    let mut groups = Vec::new();
    let mut start = 0;
    while start < g.len() {
        let end = (start + rng.random_range(1..=6)).min(g.len());
        let mut rest = NodeSet::from_ids(g.len(), (start..end).map(|i| NodeId(i as u32)));
        while let Some(first) = rest.first() {
            let part = g.component(&rest, first);
            rest = rest.difference(&part);
            groups.push(part);
        }
        start = end;
    }
    Plan::new(groups)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn splitting_never_saves_dram((g, seed) in dag()) {
        let lbdf = Lbdf::new(CostConfig::kib(64).unwrap());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..8 {
            let group = common::random_group(&g, &mut rng, 16);
            if group.len() < 2 {
                continue;
            }
            // Grow A inside the group; keep the split when B is connected too.
            let sub = Graph::component(&g, &group, group.first().unwrap());
            prop_assert_eq!(sub.len(), group.len());
            let a = grow_inside(&g, &group, &mut rng);
            let b = group.difference(&a);
            if b.is_empty() || !g.is_connected_set(&b) {
                continue;
            }
            let (fa, fb, fu) = (lbdf.dram(&g, &a).unwrap(), lbdf.dram(&g, &b).unwrap(), lbdf.dram(&g, &group).unwrap());
            prop_assert!(fa + fb >= fu, "F_D(A) {} + F_D(B) {} < F_D(A∪B) {}", fa, fb, fu);
        }
    }

    #[test]
    fn brr_grows_with_the_tile_and_costs_more_dram((g, seed) in dag()) {
        let config = CostConfig::kib(4).unwrap();
        let (brr, lbdf) = (Brr::new(config), Lbdf::new(config));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..6 {
            let group = common::random_group(&g, &mut rng, 20);
            let mut last = 0;
            for h in 1..=24 {
                let f = brr.footprint(&g, &group, h).unwrap();
                prop_assert!(f >= last, "F({}) = {} < F({}) = {}", h, f, h - 1, last);
                last = f;
            }
            let (cb, cl) = (brr.evaluate(&g, &group).unwrap(), lbdf.evaluate(&g, &group).unwrap());
            prop_assert!(cb.dram_bytes >= cl.dram_bytes);
            let t = cb.tiling.unwrap();
            prop_assert_eq!(cb.valid, t.min_footprint_bytes < config.buffer_bytes());
            prop_assert_eq!(cb.valid, cb.buffer_bytes < config.buffer_bytes());
            let extra = if t.weights_resident { cb.weight_bytes } else { 0 };
            if cb.valid {
                // h fits, and is the largest tile that does (or covers the whole output).
                let f = brr.footprint(&g, &group, t.tile_rows).unwrap();
                prop_assert_eq!(extra + f, cb.buffer_bytes);
                let next = brr.footprint(&g, &group, t.tile_rows + 1).unwrap();
                prop_assert!(t.tiles == 1 || extra + next >= config.buffer_bytes());
                let w = if t.weights_resident { cb.weight_bytes } else { t.tiles * cb.weight_bytes };
                prop_assert_eq!(cb.dram_bytes, cb.input_bytes + cb.output_bytes + w);
            }
        }
    }

    #[test]
    fn lbdf_bounds_the_simulator((g, seed) in dag()) {
        let config = CostConfig::kib(64).unwrap();
        let (lbdf, sim) = (Lbdf::new(config), BufferSimulator::new(config).with_timeline(false));
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..8 {
            let group = common::random_group(&g, &mut rng, 30);
            let c = lbdf.evaluate(&g, &group).unwrap();
            let run = sim.run(&g, &group).unwrap();
            prop_assert_eq!(run.dram_bytes, c.dram_bytes, "{:?}", g.names(&group));
            prop_assert!(run.peak_bytes <= c.buffer_bytes, "peak {} > F_β {} for {:?}", run.peak_bytes, c.buffer_bytes, g.names(&group));
            prop_assert!(c.buffer_bytes <= fuselage_cost::WholeTensor::new(config).evaluate(&g, &group).unwrap().buffer_bytes);
        }
    }

    #[test]
    fn plan_json_round_trips((g, seed) in dag(), brr in any::<bool>(), kib in 1u64..64) {
        let config = CostConfig::kib(kib).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let plan = chunk_plan(&g, &mut rng);
        let file = if brr {
            PlanFile::new(&Brr::new(config), &g, &plan).unwrap()
        } else {
            PlanFile::new(&Lbdf::new(config), &g, &plan).unwrap()
        };
        let back = PlanFile::from_json(&file.to_json()).unwrap();
        prop_assert_eq!(&back, &file);
        prop_assert_eq!(back.to_plan(&g).unwrap(), plan.clone());
        let report = evaluate_plan(&Lbdf::new(config), &g, &plan).unwrap();
        prop_assert_eq!(report.group_count, plan.len());
        prop_assert!(report.fusable_dram_bytes <= report.dram_bytes);
    }
}

fn grow_inside(g: &Graph, group: &NodeSet, rng: &mut ChaCha8Rng) -> NodeSet {
    use rand::RngExt;
    let members: Vec<NodeId> = group.iter().collect();
    let target = rng.random_range(1..members.len());
    let start = members[rng.random_range(0..members.len())];
    let mut a = NodeSet::singleton(g.len(), start);
    let mut frontier: Vec<NodeId> = g.neighbours(start).filter(|u| group.contains(*u)).collect();
    while a.len() < target && !frontier.is_empty() {
        let v = frontier.swap_remove(rng.random_range(0..frontier.len()));
        if a.insert(v) {
            frontier.extend(
                g.neighbours(v)
                    .filter(|u| group.contains(*u) && !a.contains(*u)),
            );
        }
    }
    a
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The optimiser stops growing a group whose floor does not fit, so the floor must never
    /// exceed `F_β` (LBDF, both readings) or `F(1)` (BRR) of any connected group containing it.
    #[test]
    fn buffer_floor_bounds_every_larger_group((g, seed) in dag()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        prop_assume!(g.len() >= 3);
        let full = NodeSet::full(g.len());
        let big = grow_inside(&g, &full, &mut rng);
        prop_assume!(big.len() >= 2);
        let small = grow_inside(&g, &big, &mut rng);
        let config = CostConfig::new(1 << 20).unwrap();
        for lbdf in [Lbdf::new(config), Lbdf::literal(config)] {
            let floor = lbdf.buffer_floor(&g, &small).unwrap();
            for grp in [&small, &big] {
                let c = lbdf.evaluate(&g, grp).unwrap();
                prop_assert!(floor.weights <= c.buffer_bytes - c.activation_buffer_bytes);
                prop_assert!(floor.activations <= c.activation_buffer_bytes);
            }
        }
        let brr = Brr::new(config);
        let floor = brr.buffer_floor(&g, &small).unwrap();
        prop_assert_eq!(floor.weights, 0);
        for grp in [&small, &big] {
            let f1 = brr.evaluate(&g, grp).unwrap().tiling.unwrap().min_footprint_bytes;
            prop_assert!(floor.activations <= f1, "floor {:?} > F(1) {}", floor, f1);
        }
    }
}

/// `F_D ≥ I + O + W + Σ_{v ∈ φ} rereads_v + excess(ψ)` for a valid BRR group `φ` and a
/// connected part `ψ` of it; the rereads and excess it checked.
fn tiles_are_charged(
    g: &Graph,
    brr: &Brr,
    group: &NodeSet,
    rng: &mut ChaCha8Rng,
) -> Result<u64, TestCaseError> {
    let floor = brr.tile_floor(g).unwrap().unwrap();
    let rereads = floor.rereads();
    let c = brr.evaluate(g, group).unwrap();
    if !c.valid {
        return Ok(0);
    }
    let part = if group.len() > 1 {
        grow_inside(g, group, rng)
    } else {
        group.clone()
    };
    let extra: u64 = group.iter().map(|v| rereads[v.index()]).sum::<u64>() + floor.excess(&part);
    prop_assert!(
        floor.excess(&part) <= floor.excess(group),
        "excess fell as members were added"
    );
    prop_assert!(
        c.dram_bytes >= c.input_bytes + c.output_bytes + c.weight_bytes + extra,
        "F_D {} < I {} + O {} + W {} + floors {} for {:?}",
        c.dram_bytes,
        c.input_bytes,
        c.output_bytes,
        c.weight_bytes,
        extra,
        g.names(group)
    );
    Ok(extra)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The exact optimiser adds the rereads of the nodes it has not planned to its bound and
    /// stops growing a group whose excess leaves no room, so BRR must charge every valid group
    /// at least both. Small buffers make the random DAGs' convolutions stream their weights.
    #[test]
    fn brr_charges_every_tile_floor((g, seed) in dag(), bytes in 200u64..4096) {
        let brr = Brr::new(CostConfig::new(bytes).unwrap());
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..8 {
            let group = common::random_group(&g, &mut rng, 12);
            tiles_are_charged(&g, &brr, &group, &mut rng)?;
        }
    }
}

/// The same on the zoo's transformers, whose projections stream their weights at both buffers.
#[test]
fn brr_charges_the_tile_floor_of_transformer_groups() {
    for (net, kib) in [
        ("gpt2_l4_h256", 128),
        ("bert_l4_h256", 128),
        ("llama_3_2_1b", 2048),
    ] {
        let g = fuselage_zoo::build(net).unwrap();
        let brr = Brr::new(CostConfig::kib(kib).unwrap());
        let rereads = brr.tile_floor(&g).unwrap().unwrap().rereads();
        assert!(rereads.iter().any(|&f| f > 0), "{net}: no floor");
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut checked = 0;
        for _ in 0..300 {
            let group = common::random_group(&g, &mut rng, 24);
            checked += tiles_are_charged(&g, &brr, &group, &mut rng).unwrap();
        }
        assert!(checked > 0, "{net}: no valid group with a floor was drawn");
    }
}

/// A worked example: a 1×1 convolution of 16 channels on 16 rows of 64 bytes, at β = 256
/// bytes. Its 272 weight bytes never fit; its tracked tensors are its input and output, 64
/// bytes a row each, and `A = 255`: at `H_max = 16` one row fits (`128·h ≤ 255`), 16 tiles;
/// at `H_max = 1` not even one. So every valid group holding it streams its weights 16
/// times, as it does alone: a reread floor of 15 × 272. With the ReLU (a graph output,
/// tracked too), a group's tracked bytes are 3 × 1,024 and `⌈3072 / 255⌉ = 13 < 16`: no excess.
#[test]
fn brr_tile_floor_worked_example() {
    use fuselage_ir::{ConvAttrs, GraphBuilder, Op, TensorShape};
    let mut b = GraphBuilder::new("one");
    let x = b.input("x", TensorShape::nchw(16, 16, 4)).unwrap();
    let c = b
        .node("c", Op::Conv(ConvAttrs::square(16, 1, 1, 1, 1)), &[x])
        .unwrap();
    b.node("r", Op::Relu, &[c]).unwrap();
    let g = b.finish().unwrap();
    let brr = Brr::new(CostConfig::new(256).unwrap());
    assert_eq!(g.node(NodeId(0)).weights, 272);
    let floor = brr.tile_floor(&g).unwrap().unwrap();
    assert_eq!(floor.rereads(), vec![15 * 272, 0]);
    assert_eq!(floor.excess(&NodeSet::full(2)), 0);
    let alone = brr.evaluate(&g, &NodeSet::singleton(2, NodeId(0))).unwrap();
    assert_eq!(alone.dram_bytes, 1024 + 1024 + 16 * 272);
    // LBDF keeps weights on chip: no floor.
    assert!(
        Lbdf::new(CostConfig::new(256).unwrap())
            .tile_floor(&g)
            .unwrap()
            .is_none()
    );
}
