//! The buffer sweep: the optimal DRAM of a network against the size of a unified buffer, with
//! the exact sizes at which the optimal plan changes.
//!
//! ## Why the breakpoints are exact
//!
//! Shrinking the buffer only removes plans: a group of several nodes is admissible when it is
//! valid, validity only fails as β falls, a single node is always admissible (valid or
//! unfusable), and no group's `F_D` falls as β falls. So the optimum `opt(β)` never rises as β
//! grows. If `P` is optimal at β and every valid group of `P` keeps its validity and `F_D` at
//! each buffer above `t` ([`CostModel::steady_above`], the largest over `P`'s groups), then
//! `P` costs `opt(β)` at every β' in `(t, β]`, and `opt(β') ≥ opt(β)` forces `opt(β') = opt(β)`.
//!
//! [`sweep`] therefore starts at the top of the range, solves once with the exact optimiser,
//! jumps to `t`, where `P` no longer fits, solves again, and so on: one exact solve per plan,
//! however wide the range. Where the next solve finds another plan of the same DRAM (a tie),
//! the optimum has not changed: the two steps are one, and a breakpoint is a size at which the
//! optimal DRAM itself changes. The optimiser's own family (see
//! [`Optimal`](fuselage_search::Optimal)) only loses plans as β falls too, so the curve and its
//! breakpoints are exact over that family.

use crate::error::{PipelineError, Result};
use fuselage_cost::{Accelerator, Cached, CostFamily, CostModel, OnChipBuffer, evaluate_plan};
use fuselage_ir::{Graph, NodeSet, Plan};
use fuselage_search::{Budget, Optimal, Problem, SearchStrategy, StopReason};
use fuselage_split::RandomSplitter;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// One step of the curve: from `buffer_bytes` up to `up_to_bytes` the optimal DRAM is the
/// same, and the step's plan (optimal on the whole step) is what the other fields describe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The smallest buffer of the step, bytes.
    pub buffer_bytes: u64,
    /// The largest buffer of the step (within the range), bytes.
    pub up_to_bytes: u64,
    /// The optimal DRAM on the step, bytes.
    pub dram_bytes: u64,
    /// Groups of the optimal plan.
    pub groups: usize,
    /// Its latency in cycles on the sweep's accelerator.
    pub latency_cycles: u64,
    /// Its latency in seconds.
    pub latency_seconds: f64,
    /// Its energy in joules.
    pub energy_joules: f64,
    /// Whether the optimiser finished (exact over its family).
    pub proven: bool,
}

/// A size at which the optimal DRAM changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Breakpoint {
    /// From this buffer up, the larger step's plan is optimal; one byte less and it is not.
    pub buffer_bytes: u64,
    /// Optimal DRAM just below, bytes.
    pub dram_below: u64,
    /// Optimal DRAM from here up, bytes.
    pub dram_from: u64,
    /// The group of the plan from here up that stops fitting below (its first node).
    pub group: String,
    /// Its nodes.
    pub group_nodes: usize,
    /// What changed, in words.
    pub change: String,
}

/// The curve and its breakpoints, smallest buffer first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    /// The steps of the curve.
    pub points: Vec<SweepPoint>,
    /// Where the optimum changes.
    pub breakpoints: Vec<Breakpoint>,
    /// Where a time limit stopped a [`sweep_partial`]: the curve covers the buffers from this
    /// size up, not the whole range (`None`: the whole range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<u64>,
}

/// A solved step: its point, its optimal plan, and the largest buffer below which that plan
/// changes, with the group that sets it.
type Step = (SweepPoint, Plan, Option<(u64, NodeSet)>);

/// The optimal DRAM of `g` under the cost models of `family` (a built-in
/// [`CostKind`](fuselage_cost::CostKind) or one of the caller's own) for every unified buffer
/// from `from` to `to` bytes, on `hw` (its element sizes and rates; its buffer is replaced).
/// See the module docs for why it is exact.
///
/// # Errors
/// [`PipelineError::Sweep`] for an empty range or split buffers; the cost model's and the
/// optimiser's errors.
///
/// # Example
/// ```
/// use fuselage_cost::{Accelerator, CostConfig, CostKind};
/// let g = fuselage_zoo::build_at("resnet18", 64)?;
/// let hw = Accelerator::beta_only(CostConfig::new(1)?);
/// let s = fuselage_pipeline::sweep(&g, &CostKind::Lbdf, &hw, 16 << 10, 1 << 20)?;
/// assert!(s.points.windows(2).all(|w| w[0].dram_bytes >= w[1].dram_bytes));
/// assert_eq!(s.breakpoints.len() + 1, s.points.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sweep(
    g: &Graph,
    family: &dyn CostFamily,
    hw: &Accelerator,
    from: u64,
    to: u64,
) -> Result<Sweep> {
    sweep_within(g, family, hw, from, to, None)
}

/// [`sweep`], given up with [`PipelineError::Sweep`] once `limit` has passed (a sweep cut
/// short does not cover the range).
///
/// # Errors
/// As [`sweep`], and the time limit.
pub fn sweep_within(
    g: &Graph,
    family: &dyn CostFamily,
    hw: &Accelerator,
    from: u64,
    to: u64,
    limit: Option<std::time::Duration>,
) -> Result<Sweep> {
    run(g, family, hw, (from, to), limit, false)
}

/// [`sweep`] for as long as `limit` allows: the steps solved by then, from `to` down, exact
/// on the part of the range they cover, with [`Sweep::stopped_at`] saying where that part
/// ends. (The report draws what a few seconds give on a network whose curve has a hundred
/// steps.)
///
/// # Errors
/// As [`sweep`].
///
/// # Example
/// ```
/// use fuselage_cost::{Accelerator, CostConfig, CostKind};
/// use std::time::Duration;
/// let g = fuselage_zoo::build_at("resnet18", 64)?;
/// let hw = Accelerator::beta_only(CostConfig::new(1)?);
/// let whole = fuselage_pipeline::sweep(&g, &CostKind::Lbdf, &hw, 16 << 10, 1 << 20)?;
/// let none = fuselage_pipeline::sweep_partial(&g, &CostKind::Lbdf, &hw, 16 << 10, 1 << 20, Duration::ZERO)?;
/// assert_eq!((none.points.len(), none.stopped_at), (0, Some(1 << 20)));
/// let all = fuselage_pipeline::sweep_partial(&g, &CostKind::Lbdf, &hw, 16 << 10, 1 << 20, Duration::from_secs(600))?;
/// assert_eq!(all, whole);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn sweep_partial(
    g: &Graph,
    family: &dyn CostFamily,
    hw: &Accelerator,
    from: u64,
    to: u64,
    limit: std::time::Duration,
) -> Result<Sweep> {
    run(g, family, hw, (from, to), Some(limit), true)
}

/// The sweep; where `limit` passes, the steps so far when `partial`, else an error.
fn run(
    g: &Graph,
    family: &dyn CostFamily,
    hw: &Accelerator,
    (from, to): (u64, u64),
    limit: Option<std::time::Duration>,
    partial: bool,
) -> Result<Sweep> {
    let deadline = limit.and_then(|l| std::time::Instant::now().checked_add(l));
    if from == 0 || from > to {
        return Err(PipelineError::Sweep(format!(
            "the range must go up: from {from} to {to} bytes"
        )));
    }
    if matches!(hw.config.buffer(), OnChipBuffer::Split { .. }) {
        return Err(PipelineError::Sweep(format!(
            "{} has split buffers; the sweep varies one unified buffer",
            hw.name
        )));
    }
    let mut steps: Vec<Step> = Vec::new();
    let mut beta = to;
    let mut stopped = false;
    loop {
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) && partial {
            stopped = true;
            break;
        }
        let config = hw
            .config
            .with_buffer(OnChipBuffer::Unified { bytes: beta })?;
        let at = Accelerator {
            config,
            ..hw.clone()
        };
        let model = Cached::new(family.at(&config));
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(g, &model, &splitter)?;
        let mut budget = Budget::new(1)?;
        if let Some(d) = deadline {
            budget = budget.with_time_limit(d.saturating_duration_since(std::time::Instant::now()));
        }
        let r = Optimal::default().run(&p, &budget, 0)?;
        if r.stop == StopReason::TimeLimit && partial {
            stopped = true;
            break;
        }
        if r.stop != StopReason::Exhausted {
            let why = match r.stop {
                StopReason::TimeLimit => "the time limit passed",
                _ => "Optimal stopped before it proved the optimum",
            };
            return Err(PipelineError::Sweep(format!(
                "{why} after {} steps of the curve",
                steps.len()
            )));
        }
        let report = evaluate_plan(&model, g, &r.plan)?;
        let metrics = at.plan_metrics(g, &r.plan, &report);
        // The largest threshold over the plan's valid groups, and the group that sets it.
        let mut limit: Option<(u64, NodeSet)> = None;
        for (group, cost) in r.plan.groups.iter().zip(&report.groups) {
            if !cost.valid {
                continue;
            }
            let t = model.steady_above(g, group)?;
            if limit.as_ref().is_none_or(|(best, _)| t > *best) {
                limit = Some((t, group.clone()));
            }
        }
        let low = limit.as_ref().map_or(1, |(t, _)| t + 1).max(from);
        steps.push((
            SweepPoint {
                buffer_bytes: low,
                up_to_bytes: beta,
                dram_bytes: report.dram_bytes,
                groups: r.plan.len(),
                latency_cycles: metrics.latency_cycles,
                latency_seconds: metrics.latency_seconds(),
                energy_joules: metrics.energy_joules(),
                proven: r.stop == StopReason::Exhausted,
            },
            r.plan,
            limit.clone(),
        ));
        match limit {
            Some((t, _)) if t >= from => beta = t,
            _ => break,
        }
    }
    let stopped_at = stopped.then(|| steps.last().map_or(to, |s| s.0.buffer_bytes));
    steps.reverse();
    // Ties: where the next solve finds another plan of the same DRAM, the optimum has not
    // changed; the step grows down to the lower plan's bound, whose plan and bound it keeps.
    let mut merged: Vec<Step> = Vec::new();
    for step in steps.into_iter().rev() {
        match merged.last_mut() {
            Some(last) if last.0.dram_bytes == step.0.dram_bytes => {
                let up_to = last.0.up_to_bytes;
                *last = step;
                last.0.up_to_bytes = up_to;
            }
            _ => merged.push(step),
        }
    }
    merged.reverse();
    let steps = merged;
    let mut breakpoints = Vec::new();
    for w in steps.windows(2) {
        let ((below, below_plan, _), (above, above_plan, limit)) = (&w[0], &w[1]);
        let Some((_, group)) = limit else { continue };
        let first = group.first().map_or_else(String::new, |v| {
            g.name_of(fuselage_ir::Source::Node(v)).to_string()
        });
        let kept: HashSet<&NodeSet> = below_plan.groups.iter().collect();
        let changed = above_plan
            .groups
            .iter()
            .filter(|x| !kept.contains(x))
            .count();
        breakpoints.push(Breakpoint {
            buffer_bytes: above.buffer_bytes,
            dram_below: below.dram_bytes,
            dram_from: above.dram_bytes,
            group: first.clone(),
            group_nodes: group.len(),
            change: format!(
                "the {}-node group at {first} fits from here; {} of the plan's {} groups change ({} groups below)",
                group.len(),
                changed,
                above.groups,
                below.groups,
            ),
        });
    }
    Ok(Sweep {
        points: steps.into_iter().map(|(p, _, _)| p).collect(),
        breakpoints,
        stopped_at,
    })
}
