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
//!   "hardware": "beta-only",
//!   "groups": [
//!     { "nodes": ["/conv1/Conv", "/relu/Relu"], "buffer_bytes": 30000,
//!       "dram_bytes": 950000, "valid": true, "unfusable": false,
//!       "latency_cycles": 950000, "energy_joules": 9.5e-7 }
//!   ],
//!   "dram_bytes": 5974000,
//!   "fusable_dram_bytes": 5974000,
//!   "max_buffer_bytes": 130000,
//!   "latency_cycles": 5974000,
//!   "latency_seconds": 0.005974,
//!   "energy_joules": 5.974e-6
//! }
//! ```
//!
//! - `model`: the graph's name; `groups[].nodes`: ONNX node names, in node order;
//! - `buffer_bytes`: β in all (`β_w + β_a` for split buffers, which `weight_buffer_bytes`
//!   and `activation_buffer_bytes` then give); `element_bytes`: the activations' element
//!   size, and `weight_element_bytes` the weights' where it differs;
//! - `groups[].buffer_bytes`, `dram_bytes`, `valid`, `unfusable`: the group's [`GroupCost`];
//! - `dram_bytes`, `fusable_dram_bytes`, `max_buffer_bytes`: the [`PlanReport`] totals;
//! - `hardware`, `latency_cycles`, `latency_seconds`, `energy_joules` (plan and groups): the
//!   [`PlanMetrics`](crate::PlanMetrics) on an [`Accelerator`], present when the file was
//!   written with one ([`PlanFile::with_hardware`]).
//!
//! The costs are a record of what the model said when the file was written; reading a file
//! back ([`PlanFile::to_plan`]) uses only the node names, so a file that lists only each
//! group's `nodes` (`{"groups": [{"nodes": [...]}, ...]}`) is a plan file too.
//! [`PlanFile::diff`] compares two files group by group.
//!
//! [`GroupCost`]: crate::GroupCost

use crate::buffer::OnChipBuffer;
use crate::error::{CostError, Result};
use crate::hardware::Accelerator;
use crate::model::{CostModel, Schedule};
use crate::plan::{PlanReport, evaluate_plan};
use crate::tiled::Tiled;
use fuselage_ir::{Graph, NodeSet, Plan};
use serde::{Deserialize, Serialize};

/// One group of a [`PlanFile`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupEntry {
    /// ONNX node names, in node order.
    pub nodes: Vec<String>,
    /// `F_β` in bytes (0 in a file that lists only nodes).
    #[serde(default)]
    pub buffer_bytes: u64,
    /// `F_D` in bytes (0 in a file that lists only nodes).
    #[serde(default)]
    pub dram_bytes: u64,
    /// Whether the group fits the buffer.
    #[serde(default)]
    pub valid: bool,
    /// Whether it is the singleton of an unfusable node.
    #[serde(default)]
    pub unfusable: bool,
    /// Its latency in cycles on the file's hardware.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_cycles: Option<u64>,
    /// Its energy in joules on the file's hardware.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_joules: Option<f64>,
    /// Its loop nest under `tiled` (slices, tiles, streamed operands, block).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanFile {
    /// The graph's name (empty in a file that does not say).
    #[serde(default)]
    pub model: String,
    /// The cost model's name (`lbdf` or `brr`; empty in a file that lists only nodes).
    #[serde(default)]
    pub cost_model: String,
    /// β in bytes (both buffers together when they are split).
    #[serde(default)]
    pub buffer_bytes: u64,
    /// The weight buffer, for split buffers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_buffer_bytes: Option<u64>,
    /// The activation buffer, for split buffers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_buffer_bytes: Option<u64>,
    /// Bytes of an activation element (of every element unless `weight_element_bytes` says
    /// otherwise).
    #[serde(default)]
    pub element_bytes: u64,
    /// Bytes of a weight element, where they differ from the activations'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_element_bytes: Option<u64>,
    /// The accelerator the latency and energy are counted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hardware: Option<String>,
    /// The groups, in plan order.
    pub groups: Vec<GroupEntry>,
    /// Total DRAM in bytes.
    #[serde(default)]
    pub dram_bytes: u64,
    /// DRAM without the unfusable singletons, in bytes.
    #[serde(default)]
    pub fusable_dram_bytes: u64,
    /// MBU: the largest `F_β` of a valid group, in bytes.
    #[serde(default)]
    pub max_buffer_bytes: u64,
    /// Latency in cycles on `hardware`, groups in sequence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_cycles: Option<u64>,
    /// Latency in seconds at `hardware`'s clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_seconds: Option<f64>,
    /// Energy in joules on `hardware`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_joules: Option<f64>,
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
        let split = match c.buffer() {
            OnChipBuffer::Split {
                weight_bytes,
                activation_bytes,
            } => Some((weight_bytes, activation_bytes)),
            OnChipBuffer::Unified { .. } => None,
        };
        PlanFile {
            model: g.name().to_string(),
            cost_model: model.name().to_string(),
            buffer_bytes: c.buffer_bytes(),
            weight_buffer_bytes: split.map(|s| s.0),
            activation_buffer_bytes: split.map(|s| s.1),
            element_bytes: c.activation_element_bytes(),
            weight_element_bytes: (c.uniform_element_bytes().is_none())
                .then_some(c.weight_element_bytes()),
            hardware: None,
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
                    latency_cycles: None,
                    energy_joules: None,
                    schedule: cost.schedule,
                })
                .collect(),
            dram_bytes: report.dram_bytes,
            fusable_dram_bytes: report.fusable_dram_bytes,
            max_buffer_bytes: report.max_buffer_bytes,
            latency_cycles: None,
            latency_seconds: None,
            energy_joules: None,
        }
    }

    /// Adds latency and energy on `hw`, plan and groups: `plan` is the file's plan and
    /// `report` its costs under a model at `hw`'s configuration.
    ///
    /// # Example
    /// ```
    /// use fuselage_cost::{Accelerator, Lbdf, PlanFile, evaluate_plan, layer_by_layer};
    /// let g = fuselage_zoo::build("resnet18")?;
    /// let hw = Accelerator::preset("nvdla-small").unwrap();
    /// let lbdf = Lbdf::new(hw.config);
    /// let plan = layer_by_layer(&g);
    /// let report = evaluate_plan(&lbdf, &g, &plan)?;
    /// let file = PlanFile::from_report(&lbdf, &g, &plan, &report).with_hardware(&hw, &g, &plan, &report);
    /// assert_eq!(file.hardware.as_deref(), Some("nvdla-small"));
    /// let cycles: u64 = file.groups.iter().map(|e| e.latency_cycles.unwrap()).sum();
    /// assert_eq!(file.latency_cycles, Some(cycles));
    /// let back = PlanFile::from_json(&file.to_json())?;
    /// assert_eq!((back.latency_cycles, back.to_plan(&g)?), (file.latency_cycles, plan));
    /// let (e, f) = (back.energy_joules.unwrap(), file.energy_joules.unwrap());
    /// assert!((e - f).abs() <= 1e-12 * f);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_hardware(
        mut self,
        hw: &Accelerator,
        g: &Graph,
        plan: &Plan,
        report: &PlanReport,
    ) -> Self {
        let mut total = crate::hardware::PlanMetrics {
            clock_hz: hw.clock_hz,
            ..Default::default()
        };
        let table = hw.activities(g);
        for ((entry, set), cost) in self.groups.iter_mut().zip(&plan.groups).zip(&report.groups) {
            let m = hw.metrics(crate::hardware::Activity::of_group(&table, set), cost);
            total.add(&m);
            entry.latency_cycles = Some(m.latency_cycles);
            entry.energy_joules = Some(m.energy_fj as f64 * 1e-15);
        }
        self.hardware = Some(hw.name.clone());
        self.latency_cycles = Some(total.latency_cycles);
        self.latency_seconds = Some(total.latency_seconds());
        self.energy_joules = Some(total.energy_joules());
        self
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
                    closest: g.closest_names(name, 3),
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

impl PlanFile {
    /// Re-checks every schedule the file records against `tiled` (its β and element
    /// sizes): each group, run as recorded, must fit.
    ///
    /// # Errors
    /// [`CostError::ScheduleOverflow`] naming the first group whose recorded schedule does
    /// not fit; [`CostError::Schedule`] for one its group cannot run; as
    /// [`PlanFile::to_plan`] for unknown nodes.
    pub fn check_schedules(&self, tiled: &Tiled, g: &Graph) -> Result<()> {
        let plan = self.to_plan(g)?;
        for (gi, (entry, set)) in self.groups.iter().zip(&plan.groups).enumerate() {
            let Some(schedule) = &entry.schedule else {
                continue;
            };
            let c = tiled.check(g, set, schedule)?;
            if !c.valid {
                return Err(CostError::ScheduleOverflow {
                    group: gi,
                    node: entry.nodes.first().cloned().unwrap_or_default(),
                    tiles: schedule.tiles,
                    rows: schedule.tile_rows,
                    slices: schedule.slices,
                    need: c.buffer_bytes,
                    beta: tiled.config().buffer_bytes(),
                });
            }
        }
        Ok(())
    }
}

/// How two plan files differ ([`PlanFile::diff`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanDiff {
    /// Groups (node names) of the first file that the second does not have.
    pub only_in_a: Vec<GroupEntry>,
    /// Groups of the second file that the first does not have.
    pub only_in_b: Vec<GroupEntry>,
    /// Groups both have.
    pub unchanged: usize,
    /// The first file's total DRAM, bytes.
    pub dram_a: u64,
    /// The second file's, bytes.
    pub dram_b: u64,
    /// `dram_b − dram_a`, bytes.
    pub dram_delta: i128,
}

impl PlanFile {
    /// The groups that changed from `self` to `other` (a group is its set of node names) and
    /// the DRAM delta, from the costs the files record.
    ///
    /// # Example
    /// ```
    /// use fuselage_cost::{CostConfig, Lbdf, PlanFile, layer_by_layer};
    /// use fuselage_ir::Plan;
    /// let g = fuselage_zoo::build("resnet18")?;
    /// let lbdf = Lbdf::new(CostConfig::kib(128)?);
    /// let a = PlanFile::new(&lbdf, &g, &layer_by_layer(&g))?;
    /// let mut groups = layer_by_layer(&g).groups;
    /// let first = groups.remove(0);
    /// groups[0] = groups[0].union(&first); // conv1 fused with its ReLU
    /// let b = PlanFile::new(&lbdf, &g, &Plan::new(groups))?;
    /// let d = a.diff(&b);
    /// assert_eq!((d.only_in_a.len(), d.only_in_b.len(), d.unchanged), (2, 1, g.len() - 2));
    /// assert!(d.dram_delta < 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn diff(&self, other: &PlanFile) -> PlanDiff {
        let key = |e: &GroupEntry| {
            let mut n = e.nodes.clone();
            n.sort();
            n
        };
        let a: std::collections::HashSet<Vec<String>> = self.groups.iter().map(key).collect();
        let b: std::collections::HashSet<Vec<String>> = other.groups.iter().map(key).collect();
        PlanDiff {
            only_in_a: self
                .groups
                .iter()
                .filter(|e| !b.contains(&key(e)))
                .cloned()
                .collect(),
            only_in_b: other
                .groups
                .iter()
                .filter(|e| !a.contains(&key(e)))
                .cloned()
                .collect(),
            unchanged: self.groups.iter().filter(|e| b.contains(&key(e))).count(),
            dram_a: self.dram_bytes,
            dram_b: other.dram_bytes,
            dram_delta: i128::from(other.dram_bytes) - i128::from(self.dram_bytes),
        }
    }
}
