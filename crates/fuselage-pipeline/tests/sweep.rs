//! The buffer sweep: the curve never rises as the buffer grows, its steps tile the range, and
//! each breakpoint is where the optimum really changes (checked by solving on both sides).

use fuselage_cost::{Accelerator, Cached, CostConfig, CostKind, evaluate_plan};
use fuselage_pipeline::sweep;
use fuselage_search::{Budget, Optimal, Problem, SearchStrategy};
use fuselage_split::RandomSplitter;
use proptest::prelude::*;

const NETS: [&str; 3] = ["resnet18", "mobilenet_v2", "squeezenet1_1"];

fn optimum(g: &fuselage_ir::Graph, kind: CostKind, beta: u64) -> u64 {
    let model = Cached::new(kind.model(CostConfig::new(beta).unwrap()));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(g, &model, &splitter).unwrap();
    let r = Optimal::default()
        .run(&p, &Budget::new(1).unwrap(), 0)
        .unwrap();
    evaluate_plan(&model, g, &r.plan).unwrap().dram_bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn the_curve_never_rises_and_its_steps_tile_the_range(
        net in 0..NETS.len(),
        px in 32u64..=64,
        brr in any::<bool>(),
        from_kib in 4u64..64,
        span in 2u64..64,
    ) {
        let g = fuselage_zoo::build_at(NETS[net], px).unwrap();
        let kind = if brr { CostKind::Brr } else { CostKind::Lbdf };
        let (from, to) = (from_kib << 10, (from_kib * span) << 10);
        let hw = Accelerator::beta_only(CostConfig::new(1).unwrap());
        let s = sweep(&g, &kind, &hw, from, to).unwrap();
        prop_assert_eq!(s.points.first().unwrap().buffer_bytes, from);
        prop_assert_eq!(s.points.last().unwrap().up_to_bytes, to);
        for w in s.points.windows(2) {
            prop_assert!(w[0].dram_bytes >= w[1].dram_bytes, "{:?}", w);
            prop_assert_eq!(w[0].up_to_bytes + 1, w[1].buffer_bytes);
        }
        prop_assert_eq!(s.breakpoints.len() + 1, s.points.len());
    }
}

#[test]
fn breakpoints_are_exact() {
    let g = fuselage_zoo::build_at("resnet18", 64).unwrap();
    for kind in [CostKind::Lbdf, CostKind::Brr] {
        let hw = Accelerator::beta_only(CostConfig::new(1).unwrap());
        let s = sweep(&g, &kind, &hw, 8 << 10, 512 << 10).unwrap();
        assert!(s.breakpoints.len() >= 3, "{kind}: {:?}", s.breakpoints);
        for (b, p) in s.breakpoints.iter().zip(&s.points[1..]) {
            assert_eq!(b.buffer_bytes, p.buffer_bytes);
            // At the breakpoint and at the top of its step the optimum is the step's ...
            assert_eq!(
                optimum(&g, kind, b.buffer_bytes),
                b.dram_from,
                "{kind} {b:?}"
            );
            assert_eq!(
                optimum(&g, kind, p.up_to_bytes),
                p.dram_bytes,
                "{kind} {b:?}"
            );
            // ... and one byte less it is the step below's.
            assert_eq!(
                optimum(&g, kind, b.buffer_bytes - 1),
                b.dram_below,
                "{kind} {b:?}"
            );
        }
    }
}

#[test]
fn a_split_buffer_or_an_empty_range_is_refused() {
    let g = fuselage_zoo::build_at("resnet18", 32).unwrap();
    let tpu = Accelerator::preset("tpu-v1-like").unwrap();
    let e = sweep(&g, &CostKind::Lbdf, &tpu, 1 << 10, 1 << 20).unwrap_err();
    assert!(e.to_string().contains("split buffers"), "{e}");
    let hw = Accelerator::beta_only(CostConfig::new(1).unwrap());
    assert!(sweep(&g, &CostKind::Lbdf, &hw, 2 << 20, 1 << 20).is_err());
}
