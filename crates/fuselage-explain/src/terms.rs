//! [`explain_cost`]: a group's buffer requirement as an inequality of named terms, and the
//! levers that would make it hold.
//!
//! The learned explainers say *which edges* matter; this says *why*, in the cost model's own
//! terms, the way a compiler engineer checks it by hand:
//!
//! ```text
//! F_β = W + Σ_t resident_t · row(t)  <  β
//! ```
//!
//! with every tensor's rows, row bytes and the reason it keeps them ([`Residency`]), largest
//! first; the terms sum to `F_β` exactly. For a group that does not fit it then gives three
//! levers:
//! - the smallest unified buffer that fits ([`CostModel::smallest_buffer`]);
//! - the cheapest split into parts that each fit: a dynamic programme over the group's node
//!   order (the cuts [`GroupOrder`](fuselage_ir::order::GroupOrder) makes), each segment
//!   split into its connected parts, minimising the DRAM the split adds;
//! - the dominating tensor, and why it is resident.

use crate::error::Result;
use fuselage_cost::{CostModel, OnChipBuffer, Residency, TensorCost};
use fuselage_ir::sample::components;
use fuselage_ir::{Graph, NodeId, NodeSet};
use serde::{Deserialize, Serialize};

/// The cheapest split of a group into parts that each fit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Split {
    /// The parts, in node order (each valid, or a single node that fits nowhere).
    pub parts: Vec<NodeSet>,
    /// The DRAM the parts move together, bytes.
    pub dram_bytes: u64,
    /// What the split adds to the traffic the group would move if it fit, `I + O + W` (its
    /// `F_D` under LBDF; BRR's `F_D` of a group that does not fit counts one-row tiles), bytes.
    pub added_dram_bytes: u64,
}

/// A group's requirement as terms, and the levers. See the [module docs](self).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CostTerms {
    /// The cost model's name.
    pub model: String,
    /// The weights kept on chip (`W`, or 0 where the model streams them).
    pub weight_bytes: u64,
    /// Every tensor's share, largest first.
    pub tensors: Vec<TensorCost>,
    /// `F_β`: the weights plus every tensor's bytes.
    pub buffer_bytes: u64,
    /// The buffer it is checked against.
    pub buffer: OnChipBuffer,
    /// Whether the group fits.
    pub fits: bool,
    /// `F_β − β` for a unified buffer that it does not fit (0 otherwise; `F_β = β` does not
    /// fit either: the check is strict).
    pub overflow_bytes: u64,
    /// The smallest unified buffer at which the group fits.
    pub smallest_buffer: u64,
    /// The cheapest split into fitting parts, for a group that does not fit.
    pub split: Option<Split>,
    /// The index in `tensors` of the largest one (`None` when there are none).
    pub dominant: Option<usize>,
}

impl CostTerms {
    /// The dominating tensor and why it is resident.
    pub fn dominant_tensor(&self) -> Option<(&TensorCost, Residency)> {
        self.dominant
            .and_then(|i| self.tensors.get(i))
            .map(|t| (t, t.reason))
    }
}

/// Explains `group`'s requirement under `model` as terms and levers (see the [module
/// docs](self)). The breakdown comes from [`CostModel::breakdown`]; a model without one
/// gives only the weights and the total.
///
/// # Errors
/// As [`CostModel::evaluate`].
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostKind, CostModel, Lbdf};
/// use fuselage_explain::explain_cost;
/// use fuselage_ir::NodeSet;
/// let g = fuselage_zoo::build("resnet50")?;
/// let group = NodeSet::from_ids(g.len(), g.node_ids().skip(4).take(10));
/// let lbdf = Lbdf::new(CostConfig::kib(128)?);
/// let t = explain_cost(&lbdf, &g, &group)?;
/// assert!(!t.fits);
/// let sum: u64 = t.weight_bytes + t.tensors.iter().map(|x| x.bytes).sum::<u64>();
/// assert_eq!(sum, t.buffer_bytes);
/// // The smallest buffer fits, one byte less does not.
/// let at = |b| CostKind::Lbdf.model(CostConfig::new(b).unwrap()).evaluate(&g, &group).unwrap().valid;
/// assert!(at(t.smallest_buffer) && !at(t.smallest_buffer - 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn explain_cost(model: &dyn CostModel, g: &Graph, group: &NodeSet) -> Result<CostTerms> {
    let c = model.evaluate(g, group)?;
    let mut tensors = model.breakdown(g, group)?.unwrap_or_default();
    tensors.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.tensor.cmp(&b.tensor)));
    let weight_bytes = c.buffer_bytes.saturating_sub(c.activation_buffer_bytes);
    let buffer = model.config().buffer();
    let overflow_bytes = match buffer {
        OnChipBuffer::Unified { bytes } if !c.valid => c.buffer_bytes.saturating_sub(bytes),
        _ => 0,
    };
    let split = if c.valid {
        None
    } else {
        let whole = c
            .input_bytes
            .saturating_add(c.output_bytes)
            .saturating_add(c.weight_bytes);
        cheapest_split(model, g, group, whole)?
    };
    Ok(CostTerms {
        model: model.name().to_string(),
        weight_bytes,
        dominant: (!tensors.is_empty()).then_some(0),
        tensors,
        buffer_bytes: c.buffer_bytes,
        buffer,
        fits: c.valid,
        overflow_bytes,
        smallest_buffer: model.smallest_buffer(g, group)?,
        split,
    })
}

/// The split of `group` into parts that each fit with the least DRAM: the best cut of the
/// group's node order into segments, each segment's connected parts admissible (valid, or a
/// single node that fits nowhere). `None` when no such split exists (never: single nodes
/// always qualify).
fn cheapest_split(
    model: &dyn CostModel,
    g: &Graph,
    group: &NodeSet,
    fused_dram: u64,
) -> Result<Option<Split>> {
    let nodes: Vec<NodeId> = group.iter().collect();
    let n = nodes.len();
    let mut best = vec![u64::MAX; n + 1];
    let mut from = vec![0usize; n + 1];
    best[0] = 0;
    for i in 0..n {
        if best[i] == u64::MAX {
            continue;
        }
        let mut segment = NodeSet::new(g.len());
        for j in i..n {
            segment.insert(nodes[j]);
            if j - i + 1 == n {
                break; // the whole group: not a split
            }
            let mut total = 0u64;
            let mut failed = None;
            for part in components(g, &segment) {
                let c = model.evaluate(g, &part)?;
                if !(c.valid || c.unfusable) {
                    failed = Some(part);
                    break;
                }
                total = total.saturating_add(c.dram_bytes);
            }
            if let Some(part) = failed {
                // A longer segment's part containing this one fits no better once its floor
                // does not fit.
                let floor = model.buffer_floor(g, &part)?;
                if !model.config().fits(floor.weights, floor.activations) {
                    break;
                }
                continue;
            }
            let through = best[i].saturating_add(total);
            if through < best[j + 1] {
                best[j + 1] = through;
                from[j + 1] = i;
            }
        }
    }
    if best[n] == u64::MAX {
        return Ok(None);
    }
    let mut parts = Vec::new();
    let mut j = n;
    while j > 0 {
        let i = from[j];
        let seg = NodeSet::from_ids(g.len(), nodes[i..j].iter().copied());
        let mut comps = components(g, &seg);
        comps.reverse();
        parts.extend(comps);
        j = i;
    }
    parts.reverse();
    Ok(Some(Split {
        parts,
        dram_bytes: best[n],
        added_dram_bytes: best[n].saturating_sub(fused_dram),
    }))
}

/// Spearman's rank correlation between two score vectors of the same edges (1: the same
/// order; −1: reversed; ties share their mean rank). `None` for fewer than two edges or a
/// constant vector.
///
/// ```
/// use fuselage_explain::rank_agreement;
/// assert_eq!(rank_agreement(&[0.1, 0.5, 0.9], &[1.0, 2.0, 3.0]), Some(1.0));
/// assert_eq!(rank_agreement(&[0.1, 0.5, 0.9], &[3.0, 2.0, 1.0]), Some(-1.0));
/// ```
pub fn rank_agreement(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 {
        return None;
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let mean = (a.len() as f64 + 1.0) / 2.0;
    let (mut num, mut da, mut db) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        num += (x - mean) * (y - mean);
        da += (x - mean) * (x - mean);
        db += (y - mean) * (y - mean);
    }
    (da > 0.0 && db > 0.0).then(|| num / (da * db).sqrt())
}

/// Ranks from 1 (smallest), ties sharing their mean rank.
pub(crate) fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&x, &y| v[x].total_cmp(&v[y]));
    let mut r = vec![0.0; v.len()];
    let mut k = 0;
    while k < idx.len() {
        let mut e = k;
        while e + 1 < idx.len() && v[idx[e + 1]] == v[idx[k]] {
            e += 1;
        }
        let mean = (k + e) as f64 / 2.0 + 1.0;
        for &i in &idx[k..=e] {
            r[i] = mean;
        }
        k = e + 1;
    }
    r
}
