//! [`PlanFile`]: the JSON form of a costed plan.
//!
//! Schema (every size in bytes; `cost_model` is the model's [`name`](crate::CostModel::name),
//! `"lbdf"` or `"brr"`):
//!
//! ```json
//! {
//!   "model": "resnet18",
//!   "cost_model": "lbdf",
//!   "buffer_bytes": 131072,
//!   "element_bytes": 1,
//!   "groups": [
//!     { "nodes": ["/conv1/Conv", "/relu/Relu"], "buffer_bytes": 30000,
//!       "dram_bytes": 950000, "valid": true, "unfusable": false }
//!   ],
//!   "dram_bytes": 5974000,
//!   "fusable_dram_bytes": 5974000,
//!   "max_buffer_bytes": 130000
//! }
//! ```
//!
//! - `model`: the graph's name; `groups[].nodes`: ONNX node names, in node order;
//! - `groups[].buffer_bytes`, `dram_bytes`, `valid`, `unfusable`: the group's [`GroupCost`];
//! - `dram_bytes`, `fusable_dram_bytes`, `max_buffer_bytes`: the [`PlanReport`] totals.
//!
//! The costs are a record of what the model said when the file was written; reading a file
//! back ([`PlanFile::to_plan`]) uses only the node names.
//!
//! [`GroupCost`]: crate::GroupCost

use crate::error::{CostError, Result};
use crate::model::CostModel;
use crate::plan::{PlanReport, evaluate_plan};
use fuselage_ir::{Graph, NodeSet, Plan};
use serde::{Deserialize, Serialize};

/// One group of a [`PlanFile`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupEntry {
    /// ONNX node names, in node order.
    pub nodes: Vec<String>,
    /// `F_β` in bytes.
    pub buffer_bytes: u64,
    /// `F_D` in bytes.
    pub dram_bytes: u64,
    /// Whether the group fits the buffer.
    pub valid: bool,
    /// Whether it is the singleton of an unfusable node.
    pub unfusable: bool,
}

/// A costed plan as JSON. See the module docs for the schema.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, Lbdf, PlanFile, layer_by_layer};
/// use fuselage_ir::{GraphBuilder, Op, TensorShape};
/// let mut b = GraphBuilder::new("tiny");
/// let x = b.input("input", TensorShape::nchw(3, 8, 8))?;
/// let r = b.node("r", Op::Relu, &[x])?;
/// b.node("s", Op::Sigmoid, &[r])?;
/// let g = b.finish()?;
/// let plan = layer_by_layer(&g);
/// let file = PlanFile::new(&Lbdf::new(CostConfig::kib(1)?), &g, &plan)?;
/// let back = PlanFile::from_json(&file.to_json())?;
/// assert_eq!(back, file);
/// assert_eq!(back.to_plan(&g)?, plan);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanFile {
    /// The graph's name.
    pub model: String,
    /// The cost model's name (`lbdf` or `brr`).
    pub cost_model: String,
    /// β in bytes.
    pub buffer_bytes: u64,
    /// b in bytes.
    pub element_bytes: u64,
    /// The groups, in plan order.
    pub groups: Vec<GroupEntry>,
    /// Total DRAM in bytes.
    pub dram_bytes: u64,
    /// DRAM without the unfusable singletons, in bytes.
    pub fusable_dram_bytes: u64,
    /// MBU: the largest `F_β` of a valid group, in bytes.
    pub max_buffer_bytes: u64,
}

impl PlanFile {
    /// Costs `plan` with `model` and records it.
    ///
    /// # Errors
    /// As [`evaluate_plan`].
    pub fn new<C: CostModel + ?Sized>(model: &C, g: &Graph, plan: &Plan) -> Result<Self> {
        let report = evaluate_plan(model, g, plan)?;
        Ok(PlanFile::from_report(model, g, plan, &report))
    }

    /// Records `plan` with a report already made for it by `model`.
    pub fn from_report<C: CostModel + ?Sized>(
        model: &C,
        g: &Graph,
        plan: &Plan,
        report: &PlanReport,
    ) -> Self {
        let c = model.config();
        PlanFile {
            model: g.name().to_string(),
            cost_model: model.name().to_string(),
            buffer_bytes: c.buffer_bytes(),
            element_bytes: c.element_bytes(),
            groups: plan
                .groups
                .iter()
                .zip(&report.groups)
                .map(|(set, cost)| GroupEntry {
                    nodes: g.names(set),
                    buffer_bytes: cost.buffer_bytes,
                    dram_bytes: cost.dram_bytes,
                    valid: cost.valid,
                    unfusable: cost.unfusable,
                })
                .collect(),
            dram_bytes: report.dram_bytes,
            fusable_dram_bytes: report.fusable_dram_bytes,
            max_buffer_bytes: report.max_buffer_bytes,
        }
    }

    /// Pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a plan file.
    ///
    /// # Errors
    /// [`CostError::Json`] for text that is not a plan file.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| CostError::Json(e.to_string()))
    }

    /// The plan the file describes, against `g`. The plan is not checked: cost it with
    /// [`evaluate_plan`], which is.
    ///
    /// # Errors
    /// [`CostError::UnknownNode`] for a name not in `g`; [`CostError::RepeatedNode`] for a
    /// name listed twice in one group.
    pub fn to_plan(&self, g: &Graph) -> Result<Plan> {
        let mut groups = Vec::with_capacity(self.groups.len());
        for (gi, entry) in self.groups.iter().enumerate() {
            let mut set = NodeSet::new(g.len());
            for name in &entry.nodes {
                let id = g.id_of(name).ok_or_else(|| CostError::UnknownNode {
                    node: name.clone(),
                    group: gi,
                    model: g.name().to_string(),
                })?;
                if !set.insert(id) {
                    return Err(CostError::RepeatedNode {
                        node: name.clone(),
                        group: gi,
                    });
                }
            }
            groups.push(set);
        }
        Ok(Plan::new(groups))
    }
}
