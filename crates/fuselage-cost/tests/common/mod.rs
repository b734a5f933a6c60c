//! Shared helpers of the integration tests: random connected groups, and the check that a
//! simulator's run agrees with its model.

use fuselage_cost::{GroupCost, Simulation};
use fuselage_ir::{Graph, NodeSet};
use rand::{Rng, RngExt};

/// A random weakly connected group of `g` with 1 to `max` nodes (uniform), grown from a random
/// node by adding random frontier nodes ([`fuselage_ir::sample::random_group`]).
#[allow(dead_code)]
pub fn random_group<R: Rng>(g: &Graph, rng: &mut R, max: usize) -> NodeSet {
    let target = rng.random_range(1..=max.min(g.len()));
    fuselage_ir::sample::random_group(g, target, rng)
}

/// Asserts that `run`, a simulation of `group`, moves exactly the model's DRAM and peaks at
/// or under its `F_β`; `what` names the setting (network, buffer, schedule) in a failure.
#[allow(dead_code)]
pub fn assert_run_matches(
    g: &Graph,
    group: &NodeSet,
    run: &Simulation,
    cost: &GroupCost,
    what: &str,
) {
    let names = || g.names(group).join(", ");
    assert_eq!(
        run.dram_bytes,
        cost.dram_bytes,
        "{what}: DRAM of {{{}}}",
        names()
    );
    assert!(
        run.peak_bytes <= cost.buffer_bytes,
        "{what}: peak {} > F_β {} for {{{}}}",
        run.peak_bytes,
        cost.buffer_bytes,
        names()
    );
}

use fuselage_ir::{ConvAttrs, GraphBuilder, Op, PoolAttrs, Source, TensorShape};

/// Builds a random DAG from `steps` (op choice, two operands): chains, skips (Add of two
/// equal-shaped tensors), forks and joins (channel Concat), Squeeze-and-Excite scales (a
/// broadcast Mul), strided and dilated convolutions, pools and a Pad.
#[allow(dead_code)]
pub fn random_dag(h: u64, steps: &[(u8, u32, u32)]) -> Graph {
    let mut b = GraphBuilder::new("random");
    let mut ts: Vec<Source> = vec![b.input("input", TensorShape::nchw(4, h, h)).unwrap()];
    for (i, &(op, x, y)) in steps.iter().enumerate() {
        // Prefer recent tensors, so that the graph is deep rather than flat.
        let pick = |r: u32, ts: &Vec<Source>| ts[ts.len() - 1 - (r as usize % ts.len().min(4))];
        let a = pick(x, &ts);
        let sa = b.shape(a).clone();
        let name = format!("n{i}");
        let conv = |k: u64, s: u64, d: u64, c: u64| Op::Conv(ConvAttrs::square(c, k, s, d, 1));
        let made = match op % 10 {
            0 | 1 => b.node(
                &name,
                conv(
                    [1, 3, 5][y as usize % 3],
                    1,
                    1,
                    [4, 8][(y / 3) as usize % 2],
                ),
                &[a],
            ),
            2 if sa.h() >= 4 => b.node(&name, conv(3, 2, 1, sa.c()), &[a]),
            3 => b.node(&name, Op::Relu, &[a]),
            4 if sa.h() >= 4 => b.node(&name, Op::MaxPool(PoolAttrs::square(2, 2, 0, false)), &[a]),
            5 => {
                // Skip: add an earlier tensor of the same shape, if there is one.
                let same: Vec<Source> = ts
                    .iter()
                    .copied()
                    .filter(|&t| t != a && *b.shape(t) == sa)
                    .collect();
                if same.is_empty() {
                    b.node(&name, Op::Sigmoid, &[a])
                } else {
                    b.node(&name, Op::Add, &[a, same[y as usize % same.len()]])
                }
            }
            6 => {
                // Squeeze-and-Excite.
                let p = b
                    .node(format!("{name}_gap"), Op::GlobalAveragePool, &[a])
                    .unwrap();
                let f = b
                    .node(format!("{name}_fc"), conv(1, 1, 1, sa.c()), &[p])
                    .unwrap();
                let s = b.node(format!("{name}_sig"), Op::Sigmoid, &[f]).unwrap();
                b.node(&name, Op::Mul, &[s, a])
            }
            7 => {
                // Fork and join on channels.
                let l = b.node(format!("{name}_l"), conv(1, 1, 1, 4), &[a]).unwrap();
                let r = b.node(format!("{name}_r"), conv(3, 1, 1, 4), &[a]).unwrap();
                b.node(&name, Op::concat(1), &[l, r])
            }
            8 => b.node(&name, conv(3, 1, 2, 4), &[a]),
            _ => b.node(&name, Op::pad(vec![0, 0, 1, 0, 0, 0, 2, 0]), &[a]),
        };
        let t = match made {
            Ok(t) => t,
            Err(_) => b.node(&name, Op::Relu, &[a]).unwrap(),
        };
        ts.push(t);
    }
    b.finish().unwrap()
}
