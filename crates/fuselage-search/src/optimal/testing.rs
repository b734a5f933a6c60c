//! Small hand-built graphs and problems for the unit tests of the optimiser's pieces.
//!
//! Every tensor has one-byte elements, so the numbers in the tests are counted by hand: a
//! `c × h × w` tensor is `c·h·w` bytes, and under LBDF a group moves the tensors it reads
//! from outside, those it writes for outside, and its weights.

use crate::problem::Problem;
use fuselage_cost::{Cached, CostConfig, CostKind};
use fuselage_ir::{ConvAttrs, Graph, GraphBuilder, NodeId, NodeSet, Op, Plan, TensorShape};
use fuselage_split::RandomSplitter;

/// Runs `f` on the DRAM problem of `g` under `kind` with a buffer of `bytes`.
pub(super) fn with_problem<R>(
    g: &Graph,
    kind: CostKind,
    bytes: u64,
    f: impl FnOnce(&Problem<'_>) -> R,
) -> R {
    let model = Cached::new(kind.model(CostConfig::new(bytes).expect("a buffer")));
    let splitter = RandomSplitter::new(&model);
    let p = Problem::new(g, &model, &splitter).expect("a problem");
    f(&p)
}

/// The set of the nodes numbered `ids` in `g`.
pub(super) fn set(g: &Graph, ids: &[u32]) -> NodeSet {
    NodeSet::from_ids(g.len(), ids.iter().map(|&i| NodeId(i)))
}

/// The plan of the groups numbered `groups` in `g`.
pub(super) fn plan(g: &Graph, groups: &[&[u32]]) -> Plan {
    Plan::new(groups.iter().map(|ids| set(g, ids)).collect())
}

/// The node numbers of `set`, in order.
pub(super) fn ids(set: &NodeSet) -> Vec<u32> {
    set.iter().map(|v| v.0).collect()
}

/// The node numbers of each group of `plan`, in the plan's order.
pub(super) fn groups(plan: &Plan) -> Vec<Vec<u32>> {
    plan.groups.iter().map(ids).collect()
}

/// `n` Relus in a row on a 4 × 8 × 8 input (256 bytes a tensor), numbered 0 to `n − 1`.
pub(super) fn chain(n: usize) -> Graph {
    let mut b = GraphBuilder::new("chain");
    let mut t = b.input("x", TensorShape::nchw(4, 8, 8)).expect("input");
    for i in 0..n {
        t = b.node(format!("r{i}"), Op::Relu, &[t]).expect("relu");
    }
    b.finish().expect("a graph")
}

/// Two branches of two nodes each between a fork and a join, built interleaved: `a` (0) feeds
/// `b1` (1) and `c1` (2), `b2` (3) follows `b1`, `c2` (4) follows `c1`, and `d` (5) adds
/// `b2` and `c2`. 4 × 8 × 8 tensors throughout.
pub(super) fn two_branches() -> Graph {
    let mut b = GraphBuilder::new("two branches");
    let x = b.input("x", TensorShape::nchw(4, 8, 8)).expect("input");
    let a = b.node("a", Op::Relu, &[x]).expect("a");
    let b1 = b.node("b1", Op::Relu, &[a]).expect("b1");
    let c1 = b.node("c1", Op::Sigmoid, &[a]).expect("c1");
    let b2 = b.node("b2", Op::Relu, &[b1]).expect("b2");
    let c2 = b.node("c2", Op::Sigmoid, &[c1]).expect("c2");
    b.node("d", Op::Add, &[b2, c2]).expect("d");
    b.finish().expect("a graph")
}

/// A diamond: `a` (0) feeds `b` (1) and `c` (2), which `d` (3) adds. 4 × 8 × 8 tensors.
pub(super) fn diamond() -> Graph {
    let mut b = GraphBuilder::new("diamond");
    let x = b.input("x", TensorShape::nchw(4, 8, 8)).expect("input");
    let a = b.node("a", Op::Relu, &[x]).expect("a");
    let l = b.node("b", Op::Relu, &[a]).expect("b");
    let r = b.node("c", Op::Sigmoid, &[a]).expect("c");
    b.node("d", Op::Add, &[l, r]).expect("d");
    b.finish().expect("a graph")
}

/// A residual block: `a` Relu (0), `b` conv 3×3 (1), `c` Relu (2), `e` conv 3×3 (3), `f` the
/// Add of `e` and the skip from `a` (4), `g` Relu (5). 8 × 8 × 8 tensors, 584 bytes of
/// weights a conv.
pub(super) fn residual() -> Graph {
    let mut b = GraphBuilder::new("residual");
    let conv = || Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1));
    let x = b.input("x", TensorShape::nchw(8, 8, 8)).expect("input");
    let a = b.node("a", Op::Relu, &[x]).expect("a");
    let c1 = b.node("b", conv(), &[a]).expect("b");
    let r = b.node("c", Op::Relu, &[c1]).expect("c");
    let c2 = b.node("e", conv(), &[r]).expect("e");
    let f = b.node("f", Op::Add, &[c2, a]).expect("f");
    b.node("g", Op::Relu, &[f]).expect("g");
    b.finish().expect("a graph")
}

/// Two identical layers and a head, on 16 × 8 × 8 tensors (1,024 bytes): Relu (0), Sigmoid
/// (1), conv 3×3 (2), Relu (3), Sigmoid (4), conv 3×3 (5), Relu (6). A conv's weights are
/// 16·16·9 + 16 = 2,320 bytes, so under a 1 KiB buffer no group holds one with anything else.
pub(super) fn layers() -> Graph {
    let mut b = GraphBuilder::new("layers");
    let mut t = b.input("x", TensorShape::nchw(16, 8, 8)).expect("input");
    for i in 0..2 {
        t = b.node(format!("r{i}"), Op::Relu, &[t]).expect("relu");
        t = b.node(format!("s{i}"), Op::Sigmoid, &[t]).expect("sigmoid");
        t = b
            .node(
                format!("k{i}"),
                Op::Conv(ConvAttrs::square(16, 3, 1, 1, 1)),
                &[t],
            )
            .expect("conv");
    }
    b.node("head", Op::Relu, &[t]).expect("head");
    b.finish().expect("a graph")
}
