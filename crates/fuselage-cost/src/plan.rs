//! Costing whole plans: validity, total and fusable DRAM, MBU.
//!
//! A plan is valid when it is a partition into weakly connected groups with an acyclic graph
//! of groups ([`Graph::check_plan`]) and every group fits the buffer, except the singletons of
//! unfusable nodes (`F_β({v}) ≥ β`), which a plan must keep and whose traffic is reported apart.

use crate::error::{CostError, PlanProblem, Result};
use crate::model::{CostModel, GroupCost};
use fuselage_ir::{Graph, NodeSet, Plan};
use serde::{Deserialize, Serialize};

/// The cost of a plan, group by group and in total.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanReport {
    /// Each group's cost, in plan order.
    pub groups: Vec<GroupCost>,
    /// Total DRAM: every group, unfusable singletons at their `F_D`.
    pub dram_bytes: u64,
    /// Fusable DRAM: unfusable singletons left out (the paper's convention).
    pub fusable_dram_bytes: u64,
    /// MBU: the largest `F_β` of a valid group (0 when none is).
    pub max_buffer_bytes: u64,
    /// Number of groups.
    pub group_count: usize,
    /// Number of unfusable singletons.
    pub unfusable_count: usize,
    /// Groups that do not fit and are not unfusable singletons.
    pub problems: Vec<PlanProblem>,
}

impl PlanReport {
    /// Whether every group fits (unfusable singletons aside).
    pub fn is_valid(&self) -> bool {
        self.problems.is_empty()
    }

    /// `Ok` for a valid plan.
    ///
    /// # Errors
    /// [`CostError::InvalidGroup`] for the first problem.
    pub fn check(&self) -> Result<()> {
        match self.problems.first() {
            None => Ok(()),
            Some(p) => Err(CostError::InvalidGroup(Box::new(p.clone()))),
        }
    }
}

/// Costs every group of `plan` and totals them.
///
/// # Arguments
/// - `model`: the cost model;
/// - `g`: the graph;
/// - `plan`: a partition of `g`'s nodes.
///
/// # Returns
/// The [`PlanReport`]; groups that do not fit are listed in [`PlanReport::problems`], not
/// returned as errors, so that searches can score invalid plans.
///
/// # Errors
/// [`CostError::Ir`] when the plan is not a partition into connected groups with an acyclic
/// graph of groups.
///
/// # Complexity
/// One [`CostModel::evaluate`] per group, after an `O(V + E)` plan check.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, Lbdf, evaluate_plan, layer_by_layer};
/// use fuselage_ir::{ConvAttrs, GraphBuilder, Op, Plan, TensorShape};
/// let mut b = GraphBuilder::new("tiny");
/// let x = b.input("input", TensorShape::nchw(3, 8, 8))?;
/// let c = b.node("c", Op::Conv(ConvAttrs::square(4, 3, 1, 1, 1)), &[x])?;
/// let r = b.node("r", Op::Relu, &[c])?;
/// let g = b.finish()?;
/// let lbdf = Lbdf::new(CostConfig::kib(1)?);
/// let apart = evaluate_plan(&lbdf, &g, &layer_by_layer(&g))?;
/// let fused = evaluate_plan(&lbdf, &g, &Plan::new(vec![g.set_of(&["c", "r"])?]))?;
/// assert!(apart.is_valid() && fused.is_valid());
/// // Fusing saves writing and reading back the 4x8x8 conv output.
/// assert_eq!(apart.dram_bytes - fused.dram_bytes, 2 * 256);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn evaluate_plan<C: CostModel + ?Sized>(
    model: &C,
    g: &Graph,
    plan: &Plan,
) -> Result<PlanReport> {
    g.check_plan(plan)?;
    let limit = model.config().buffer_bytes();
    let mut report = PlanReport {
        groups: Vec::with_capacity(plan.len()),
        dram_bytes: 0,
        fusable_dram_bytes: 0,
        max_buffer_bytes: 0,
        group_count: plan.len(),
        unfusable_count: 0,
        problems: Vec::new(),
    };
    for (gi, group) in plan.groups.iter().enumerate() {
        let c = model.evaluate(g, group)?;
        report.dram_bytes += c.dram_bytes;
        if c.unfusable {
            report.unfusable_count += 1;
        } else {
            report.fusable_dram_bytes += c.dram_bytes;
        }
        if c.valid {
            report.max_buffer_bytes = report.max_buffer_bytes.max(c.buffer_bytes);
        } else if !c.unfusable {
            report.problems.push(PlanProblem {
                group: gi,
                nodes: g.names(group),
                buffer_bytes: c.buffer_bytes,
                activation_buffer_bytes: c.activation_buffer_bytes,
                limit,
                buffer: model.config().buffer(),
            });
        }
        report.groups.push(c);
    }
    Ok(report)
}

/// The layer-by-layer reference plan: every node alone.
pub fn layer_by_layer(g: &Graph) -> Plan {
    Plan::singletons(g)
}

/// The unfusable nodes of `g` under `model`: those whose singleton does not fit.
///
/// # Errors
/// As [`CostModel::evaluate`].
pub fn unfusable_nodes<C: CostModel + ?Sized>(model: &C, g: &Graph) -> Result<NodeSet> {
    let mut set = NodeSet::new(g.len());
    for v in g.node_ids() {
        if model
            .evaluate(g, &NodeSet::singleton(g.len(), v))?
            .unfusable
        {
            set.insert(v);
        }
    }
    Ok(set)
}
