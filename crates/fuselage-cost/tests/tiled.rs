//! The canonical cases of `../shared/design/tiled-fusion.md` (T1, T1m, T1k, T2, T3), with
//! the contract's numbers, and the properties every `tiled` answer keeps.

use fuselage_cost::{CostConfig, CostModel, GroupCost, Lbdf, Tiled, TiledSimulator};
use fuselage_ir::{Graph, GraphBuilder, NodeSet, Op, OpKind, Source, TensorShape};
use proptest::prelude::*;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * 1024;

fn shape(dims: &[u64]) -> TensorShape {
    TensorShape::new(dims.to_vec())
}

/// T1 (and T1m with `mask`): `S = Q·Kᵀ`, (`S + M`), `P = Softmax(S)`, `O = P·V`, 12 heads
/// of 64 at `l` tokens.
fn attention(l: u64, mask: bool) -> Graph {
    let mut b = GraphBuilder::new("attention");
    let q = b.input("Q", shape(&[1, 12, l, 64])).unwrap();
    let kt = b.input("Kt", shape(&[1, 12, 64, l])).unwrap();
    let v = b.input("V", shape(&[1, 12, l, 64])).unwrap();
    let scores = shape(&[1, 12, l, l]);
    let mut s = b
        .node_with("MatMul", Op::MatMul, &[q, kt], scores.clone(), 0)
        .unwrap();
    if mask {
        s = b.node_with("Add", Op::Add, &[s], scores, l * l).unwrap();
    }
    let p = b.node("Softmax", Op::Softmax { axis: 3 }, &[s]).unwrap();
    b.node_with("MatMul_1", Op::MatMul, &[p, v], shape(&[1, 12, l, 64]), 0)
        .unwrap();
    b.finish().unwrap()
}

/// T2: `x [1, 1024, 768]` → Gemm (W1 [768, 3072] + b1) → Gelu → Gemm (W2 [3072, 768] + b2),
/// with the reshapes to and from `[1024, 768]` around the Gemms that GPT-2's export has.
fn mlp() -> Graph {
    let mut b = GraphBuilder::new("mlp");
    let x = b.input("x", shape(&[1, 1024, 768])).unwrap();
    let r = b
        .node_with("to2d", Op::Reshape, &[x], shape(&[1024, 768]), 0)
        .unwrap();
    let h = b
        .node("fc1", Op::Gemm { out_features: 3072 }, &[r])
        .unwrap();
    let kind = OpKind::Gelu;
    let a = b.node("gelu", Op::Unary { kind }, &[h]).unwrap();
    let y = b.node("fc2", Op::Gemm { out_features: 768 }, &[a]).unwrap();
    b.node_with("to3d", Op::Reshape, &[y], shape(&[1, 1024, 768]), 0)
        .unwrap();
    b.finish().unwrap()
}

/// The `tiled` cost of `group` at a buffer of `bytes`, checked against a run of its loop
/// nest: the same traffic, and a peak within the buffer the model reports.
fn simulated(g: &Graph, group: &NodeSet, bytes: u64) -> GroupCost {
    let c = Tiled::new(at(bytes)).evaluate(g, group).unwrap();
    let schedule = c.schedule.expect("a valid group has a schedule");
    let run = TiledSimulator::new(at(bytes))
        .run(g, group, &schedule)
        .unwrap();
    assert_eq!(run.dram_bytes, c.dram_bytes, "{schedule:?}");
    assert!(
        run.peak_bytes <= c.buffer_bytes,
        "{schedule:?}: peak {}",
        run.peak_bytes
    );
    c
}

fn all(g: &Graph) -> NodeSet {
    NodeSet::full(g.len())
}

fn at(bytes: u64) -> CostConfig {
    CostConfig::new(bytes).unwrap()
}

#[test]
fn t1_heads_make_the_attention_core_fit_256_kib() {
    let g = attention(1024, false);
    let lbdf = Lbdf::new(at(256 * KIB)).evaluate(&g, &all(&g)).unwrap();
    assert!(!lbdf.valid);
    // Kᵀ and V whole across heads.
    assert!(lbdf.buffer_bytes >= 1_572_864);
    let c = simulated(&g, &all(&g), 256 * KIB);
    assert!(c.valid);
    // Q, K, V and O once each.
    assert_eq!(c.dram_bytes, 3_145_728);
    assert_eq!(lbdf.dram_bytes, 3_145_728);
    // One head's Kᵀ and V (65,536 each), a row of Q and O (64 each), a row of S and P
    // (1,024 each): "about 133 KB".
    assert_eq!(c.buffer_bytes, 2 * 65_536 + 2 * 64 + 2 * 1_024);
    let s = c.schedule.unwrap();
    assert_eq!((s.slices, s.tiles, s.line_buffer), (12, 1, true));
}

/// T1m. The contract's 4,194,304 at 256 KiB (the mask streamed by rows, once, beside one
/// head at a time) is no loop nest: run head by head, every head reads every row of the
/// mask, so the mask is either held whole (1 MiB) or read 12 times; run row by row, every
/// row reads all heads' K and V (1.5 MiB). `docs/cost-models.md` derives both regimes.
#[test]
fn t1m_the_mask_is_held_across_heads_or_the_keys_stream() {
    let g = attention(1024, true);
    let mask = 1024 * 1024;
    let tensor = 12 * 1024 * 64;
    // 1,280 KiB: all heads' K and V (1.5 MiB) do not fit, but one head at a time does, the
    // mask loaded once and held whole while the heads run.
    let c = simulated(&g, &all(&g), 1280 * KIB);
    let s = c.schedule.unwrap();
    assert!(c.valid && s.line_buffer);
    assert_eq!(s.slices, 12);
    assert_eq!(c.dram_bytes, 4_194_304);
    assert_eq!(c.dram_bytes, 4 * tensor + mask);
    // T1's buffer, the Add's row of scores (1,024) and the whole mask.
    assert_eq!(c.buffer_bytes, 2 * 65_536 + 2 * 64 + 3 * 1_024 + mask);
    // 256 KiB holds neither the mask nor all heads' K and V: the queries run in tiles over
    // all heads, K and V stream in key blocks once per tile, the mask by rows once.
    let c = simulated(&g, &all(&g), 256 * KIB);
    let s = c.schedule.unwrap();
    assert!(c.valid);
    assert_eq!(
        (s.slices, s.tiles, s.tile_rows, s.streamed_operands),
        (1, 7, 147, 2)
    );
    assert_eq!(c.dram_bytes, 4 * tensor + mask + 6 * 2 * tensor);
    assert_eq!(c.dram_bytes, 13_631_488);
    let lbdf = Lbdf::new(at(256 * KIB)).evaluate(&g, &all(&g)).unwrap();
    assert!(!lbdf.valid && lbdf.buffer_bytes > MIB);
}

#[test]
fn t1k_long_context_streams_key_blocks() {
    let l = 32_768;
    let g = attention(l, false);
    let tensor = 12 * l * 64;
    // One head's Kᵀ is 2 MiB: heads alone do not fit.
    assert_eq!(tensor / 12, 2 * MIB);
    let c = simulated(&g, &all(&g), 2 * MIB);
    assert!(c.valid);
    let s = c.schedule.unwrap();
    // Per head and query row: Q and O (64 + 64), one key of S and P (1 + 1), the online
    // softmax's maximum and sum (2): 132·R + 128 < 2 MiB gives R ≤ 15,886, so T = 3 query
    // tiles of 10,923 rows.
    assert_eq!((s.slices, s.tiles, s.tile_rows), (12, 3, 10_923));
    assert_eq!(s.streamed_operands, 2);
    // Q and O once, K and V once per query tile: (2 + 2·T)·12·L·64.
    assert_eq!(c.dram_bytes, (2 + 2 * 3) * tensor);
    assert_eq!(c.dram_bytes, 201_326_592);
    assert_eq!(s.reread_bytes, 2 * 2 * tensor);
    // No score matrix is ever whole: the buffer is far below one head's 32,768² scores.
    assert!(c.buffer_bytes < 2 * MIB);
}

#[test]
fn t2_the_fused_mlp_streams_hidden_blocks() {
    let g = mlp();
    let (w1, w2) = (
        g.node(fuselage_ir::NodeId(1)).weights,
        g.node(fuselage_ir::NodeId(3)).weights,
    );
    assert_eq!((w1, w2), (2_362_368, 2_360_064));
    let c = simulated(&g, &all(&g), 2 * MIB);
    assert!(c.valid);
    assert_eq!(c.dram_bytes, 6_295_296);
    let s = c.schedule.unwrap();
    assert_eq!((s.tiles, s.streamed_weights), (1, 2));
    // The Gemm's input rows and the accumulators whole, a row of x and of the output, and
    // per hidden element of the block (128, the largest power of two that fits): the two
    // blocked hidden tensors' 1,024 rows, a column of W1 (768 + bias) and a row of W2.
    assert_eq!(s.block, 128);
    assert_eq!(
        c.buffer_bytes,
        2 * 786_432 + 2 * 768 + 128 * (2 * 1_024 + 769 + 768)
    );
    // Today's plan at 2 MiB: three groups (each Gemm unfusable), 18,878,208 bytes.
    let lbdf = Lbdf::new(at(2 * MIB));
    let groups = [vec!["to2d", "fc1"], vec!["gelu"], vec!["fc2", "to3d"]];
    let three: u64 = groups
        .iter()
        .map(|names| {
            let c = lbdf.evaluate(&g, &g.set_of(names).unwrap()).unwrap();
            assert!(!c.valid || names.len() == 1);
            c.dram_bytes
        })
        .sum();
    assert_eq!(three, 18_878_208);
    // At 1 MiB x and y fit only as 512-row blocks: the weights are read twice.
    let c = simulated(&g, &all(&g), MIB);
    assert!(c.valid);
    assert_eq!(c.dram_bytes, 11_017_728);
    let s = c.schedule.unwrap();
    assert_eq!((s.tiles, s.tile_rows), (2, 512));
}

#[test]
fn t3_resnet18_streams_the_weights_of_layer4() {
    let g = fuselage_zoo::build("resnet18").unwrap();
    let group = g
        .set_of(&[
            "/layer4/layer4.0/conv1/Conv",
            "/layer4/layer4.0/relu/Relu",
            "/layer4/layer4.0/conv2/Conv",
        ])
        .unwrap();
    let lbdf = Lbdf::new(at(2 * MIB)).evaluate(&g, &group).unwrap();
    assert_eq!((lbdf.valid, lbdf.buffer_bytes), (false, 3_568_640));
    assert_eq!(lbdf.weight_bytes, 3_539_968);
    let c = simulated(&g, &group, 2 * MIB);
    assert!(c.valid);
    assert_eq!((c.input_bytes, c.output_bytes), (50_176, 25_088));
    assert_eq!(c.dram_bytes, 50_176 + 25_088 + 3_539_968);
    assert_eq!(c.dram_bytes, 3_615_232);
    let s = c.schedule.unwrap();
    assert!(s.streamed_weights >= 1 && s.tiles == 1);
}

#[test]
fn a_single_node_is_never_charged_more_than_lbdf() {
    // fc1 alone at 512 KiB would fit only in tiles of its 1,024 input rows, reading W1 more
    // than once: it is reported as LBDF reports it, unfusable at I + O + W.
    let g = mlp();
    let one = NodeSet::singleton(g.len(), fuselage_ir::NodeId(1));
    let c = Tiled::new(at(512 * KIB)).evaluate(&g, &one).unwrap();
    let l = Lbdf::new(at(512 * KIB)).evaluate(&g, &one).unwrap();
    assert!(c.unfusable && !c.valid);
    assert!(c.buffer_bytes >= 512 * KIB);
    assert_eq!(c.dram_bytes, l.dram_bytes);
    // At 1 MiB its 1,024 input rows fit beside a streamed column of W1: valid at I + O + W
    // (LBDF, which holds W1, still finds it unfusable).
    let c = Tiled::new(at(MIB)).evaluate(&g, &one).unwrap();
    assert!(c.valid && !Lbdf::new(at(MIB)).evaluate(&g, &one).unwrap().valid);
    assert_eq!(c.dram_bytes, l.dram_bytes);
    // The input rows, and per output column of the block (128): its 1,024 rows and a column
    // of W1 (768 + bias).
    assert_eq!(c.schedule.unwrap().block, 128);
    assert_eq!(c.buffer_bytes, 786_432 + 128 * (1_024 + 769));
}

#[test]
fn the_smallest_buffer_is_where_the_group_starts_to_fit() {
    for (g, group) in [
        (mlp(), all(&mlp())),
        (attention(1024, true), all(&attention(1024, true))),
    ] {
        let s = Tiled::new(at(2 * MIB)).smallest_buffer(&g, &group).unwrap();
        assert!(Tiled::new(at(s)).evaluate(&g, &group).unwrap().valid);
        assert!(!Tiled::new(at(s - 1)).evaluate(&g, &group).unwrap().valid);
    }
}

fn zoo_group(name: &str) -> Graph {
    match name {
        "gpt2_l4_h256" | "bert_l4_h256" => fuselage_zoo::build_seq(name, 128).unwrap(),
        _ => fuselage_zoo::build(name).unwrap(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// On random connected groups of CNNs and transformers: `tiled` is valid wherever LBDF
    /// is, at the same traffic; it never moves less than `I + O + W`; its buffer fits when
    /// it says so; and its buffer floor is below its need.
    #[test]
    fn tiled_is_never_worse_than_lbdf(
        net in prop::sample::select(vec!["resnet18", "mobilenet_v2", "gpt2_l4_h256", "bert_l4_h256"]),
        seed in any::<u64>(),
        size in 1usize..24,
        kib in prop::sample::select(vec![64u64, 256, 2048]),
    ) {
        let g = zoo_group(net);
        let (group, part) = grow(&g, seed, size);
        let config = at(kib * KIB);
        let t = Tiled::new(config).evaluate(&g, &group).unwrap();
        let l = Lbdf::new(config).evaluate(&g, &group).unwrap();
        let floor = t.input_bytes + t.output_bytes + t.weight_bytes;
        prop_assert!(t.dram_bytes >= floor);
        prop_assert_eq!(floor, l.dram_bytes);
        if l.valid {
            prop_assert!(t.valid);
            prop_assert_eq!(t.dram_bytes, l.dram_bytes);
        }
        if t.valid {
            prop_assert!(t.buffer_bytes < config.buffer_bytes());
            prop_assert!(t.schedule.is_some());
        }
        // The floor of the group, and of a connected part of it, never exceeds its need.
        for sub in [&group, &part] {
            let f = Tiled::new(config).buffer_floor(&g, sub).unwrap();
            prop_assert!(f.total() <= t.buffer_bytes, "floor {} need {}", f.total(), t.buffer_bytes);
        }
    }
}

/// A connected group of about `size` nodes grown from a seeded start, and the connected part
/// of it grown first (about half).
fn grow(g: &Graph, seed: u64, size: usize) -> (NodeSet, NodeSet) {
    use rand::{RngExt, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let start = rng.random_range(0..g.len() as u32);
    let mut set = NodeSet::singleton(g.len(), fuselage_ir::NodeId(start));
    let mut frontier = vec![fuselage_ir::NodeId(start)];
    let mut part = set.clone();
    while set.len() < size && !frontier.is_empty() {
        if set.len() <= size / 2 {
            part = set.clone();
        }
        let i = rng.random_range(0..frontier.len());
        let v = frontier[i];
        let mut next: Vec<_> = g.consumers(v).iter().map(|&(c, _)| c).collect();
        next.extend(g.node(v).inputs.iter().filter_map(|s| match s {
            Source::Node(p) => Some(*p),
            Source::Input(_) => None,
        }));
        next.retain(|n| !set.contains(*n));
        if next.is_empty() {
            frontier.swap_remove(i);
            continue;
        }
        let n = next[rng.random_range(0..next.len())];
        set.insert(n);
        frontier.push(n);
    }
    (set, part)
}

#[test]
fn plan_files_record_schedules_and_a_schedule_that_overflows_is_refused() {
    use fuselage_cost::{CostError, PlanFile};
    use fuselage_ir::Plan;
    let g = attention(32_768, false);
    let tiled = Tiled::new(at(2 * MIB));
    let plan = Plan::new(vec![all(&g)]);
    let file = PlanFile::new(&tiled, &g, &plan).unwrap();
    let back = PlanFile::from_json(&file.to_json()).unwrap();
    assert_eq!(back, file);
    let s = back.groups[0].schedule.unwrap();
    assert_eq!((s.tiles, s.tile_rows, s.streamed), (3, 10_923, 0b11));
    back.check_schedules(&tiled, &g).unwrap();
    // Replayed, the schedule costs what the search found.
    let c = tiled.check(&g, &all(&g), &s).unwrap();
    assert_eq!((c.valid, c.dram_bytes), (true, 201_326_592));
    // Two tiles of 16,384 query rows do not fit 2 MiB.
    let mut forged = back.clone();
    let f = forged.groups[0].schedule.as_mut().unwrap();
    (f.tiles, f.tile_rows) = (2, 16_384);
    let err = forged.check_schedules(&tiled, &g).unwrap_err();
    assert!(matches!(err, CostError::ScheduleOverflow { group: 0, .. }));
    let line = err.to_string();
    assert!(
        line.contains("group 0 (`MatMul`)") && !line.contains('\n'),
        "{line}"
    );
    // A schedule for operands the group does not have.
    let f = forged.groups[0].schedule.as_mut().unwrap();
    f.streamed = 0b100;
    let err = forged.check_schedules(&tiled, &g).unwrap_err();
    assert!(matches!(err, CostError::Schedule { .. }), "{err}");
}
