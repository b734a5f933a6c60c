//! Each way of misusing the crate is a clear error naming what is wrong.

use fuselage_cost::{Brr, Cached, CostConfig, CostError, CostModel, Lbdf, PlanFile, evaluate_plan};
use fuselage_ir::{ConvAttrs, Graph, GraphBuilder, IrError, NodeSet, Op, Plan, TensorShape};

/// conv -> relu -> conv -> add(skip) -> relu.
fn residual() -> Graph {
    let mut b = GraphBuilder::new("residual");
    let x = b.input("input", TensorShape::nchw(8, 16, 16)).unwrap();
    let c1 = b
        .node("c1", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[x])
        .unwrap();
    let r1 = b.node("r1", Op::Relu, &[c1]).unwrap();
    let c2 = b
        .node("c2", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[r1])
        .unwrap();
    let a = b.node("add", Op::Add, &[c2, c1]).unwrap();
    b.node("r2", Op::Relu, &[a]).unwrap();
    b.finish().unwrap()
}

fn set(g: &Graph, names: &[&str]) -> NodeSet {
    g.set_of(names).unwrap()
}

#[test]
fn zero_buffer_and_zero_element_size() {
    assert_eq!(CostConfig::new(0), Err(CostError::ZeroBuffer));
    assert_eq!(CostConfig::kib(0), Err(CostError::ZeroBuffer));
    let err = CostConfig::new(1)
        .unwrap()
        .with_element_bytes(0)
        .unwrap_err();
    assert_eq!(err, CostError::ZeroElementBytes);
    assert!(CostError::ZeroBuffer.to_string().contains("β = 0"));
    assert_eq!(
        CostConfig::new((1 << 40) + 1),
        Err(CostError::BufferTooLarge((1 << 40) + 1))
    );
    assert!(CostConfig::new(1 << 40).is_ok());
    let c = CostConfig::kib(256).unwrap();
    assert_eq!(
        c.with_element_bytes(17),
        Err(CostError::ElementBytesTooLarge(17))
    );
    assert!(c.with_element_bytes(16).is_ok());
}

#[test]
fn unknown_node_in_a_plan_file() {
    let g = residual();
    let lbdf = Lbdf::new(CostConfig::kib(64).unwrap());
    let mut file = PlanFile::new(&lbdf, &g, &Plan::singletons(&g)).unwrap();
    file.groups[2].nodes.push("nope".into());
    let err = file.to_plan(&g).unwrap_err();
    assert_eq!(
        err,
        CostError::UnknownNode {
            node: "nope".into(),
            group: 2,
            model: "residual".into(),
            closest: Vec::new(),
        }
    );
    // A near miss names the closest nodes.
    let mut near = PlanFile::new(&lbdf, &g, &Plan::singletons(&g)).unwrap();
    near.groups[0].nodes = vec!["c3".into()];
    let msg = near.to_plan(&g).unwrap_err().to_string();
    assert!(msg.contains("did you mean `c1`"), "{msg}");
    assert_eq!(
        err.to_string(),
        "unknown node `nope` in group 2 of the plan for `residual`"
    );
    assert!(matches!(
        PlanFile::from_json("{\"model\": 1}"),
        Err(CostError::Json(_))
    ));
}

#[test]
fn plans_that_are_not_partitions() {
    let g = residual();
    let lbdf = Lbdf::new(CostConfig::kib(64).unwrap());
    let missing = Plan::new(vec![set(&g, &["c1", "r1"])]);
    let err = evaluate_plan(&lbdf, &g, &missing).unwrap_err();
    assert!(
        matches!(err, CostError::Ir(IrError::Uncovered { .. })),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "the plan leaves 3 node(s) in no group: c2, add, r2"
    );
    let overlap = Plan::new(vec![
        set(&g, &["c1", "r1"]),
        set(&g, &["r1", "c2", "add", "r2"]),
    ]);
    let err = evaluate_plan(&lbdf, &g, &overlap).unwrap_err();
    assert_eq!(err.to_string(), "node `r1` is in group 0 and in group 1");
}

#[test]
fn cyclic_plan() {
    let g = residual();
    let lbdf = Lbdf::new(CostConfig::kib(64).unwrap());
    let cyclic = Plan::new(vec![set(&g, &["c1", "add", "r2"]), set(&g, &["r1", "c2"])]);
    let err = evaluate_plan(&lbdf, &g, &cyclic).unwrap_err();
    assert!(
        matches!(err, CostError::Ir(IrError::CyclicPlan { ref cycle }) if cycle.len() == 3),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("the plan's groups form a cycle: group "),
        "{err}"
    );
}

#[test]
fn disconnected_and_empty_groups() {
    let g = residual();
    let config = CostConfig::kib(64).unwrap();
    for model in [&Lbdf::new(config) as &dyn CostModel, &Brr::new(config)] {
        let err = model.evaluate(&g, &set(&g, &["r1", "r2"])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "group 0 is not connected: {r2} is cut off from {r1}"
        );
        let err = model.evaluate(&g, &NodeSet::new(g.len())).unwrap_err();
        assert_eq!(err, CostError::Ir(IrError::EmptyGroup { group: 0 }));
        let err = model.evaluate(&g, &NodeSet::full(3)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the group is sized for a graph of 3 nodes, but `residual` has 5"
        );
    }
    let bad = Plan::new(vec![
        set(&g, &["c1", "r1", "c2", "add"]),
        NodeSet::new(g.len()),
        set(&g, &["r2"]),
    ]);
    let err = evaluate_plan(&Lbdf::new(config), &g, &bad).unwrap_err();
    assert_eq!(err.to_string(), "group 1 is empty");
}

#[test]
fn invalid_groups_are_problems_not_errors() {
    let g = residual();
    // c1 alone: 584 weight bytes + 3 input rows + 1 staging row of 128 bytes = 1,096.
    let lbdf = Lbdf::new(CostConfig::new(1096).unwrap());
    let c1 = lbdf.evaluate(&g, &set(&g, &["c1"])).unwrap();
    assert_eq!(c1.buffer_bytes, 1096);
    assert!(c1.unfusable && !c1.valid);
    let plan = Plan::new(vec![set(&g, &["c1"]), set(&g, &["r1", "c2", "add", "r2"])]);
    let report = evaluate_plan(&lbdf, &g, &plan).unwrap();
    assert_eq!(report.unfusable_count, 1);
    assert_eq!(report.problems.len(), 1);
    let err = report.check().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "group 1 needs {} bytes of buffer, not under the 1096-byte buffer: r1, c2, add, r2",
            report.groups[1].buffer_bytes
        )
    );
    assert_eq!(report.dram_bytes - report.fusable_dram_bytes, c1.dram_bytes);
}

#[test]
fn a_cache_serves_one_graph() {
    let (g, mut other) = (residual(), GraphBuilder::new("other"));
    let x = other.input("input", TensorShape::nchw(1, 4, 4)).unwrap();
    other.node("r", Op::Relu, &[x]).unwrap();
    let other = other.finish().unwrap();
    let cached = Cached::new(Lbdf::new(CostConfig::kib(64).unwrap()));
    cached.evaluate(&g, &NodeSet::full(g.len())).unwrap();
    let err = cached.evaluate(&other, &NodeSet::full(1)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "this cache holds groups of `residual` (5 nodes); it was asked about a different graph, `other` (1 nodes)"
    );
    cached.clear();
    assert!(cached.evaluate(&other, &NodeSet::full(1)).is_ok());
}
