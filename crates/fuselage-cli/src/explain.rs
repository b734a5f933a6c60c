//! `fuselage explain`: why a group does not fit, edge by edge, and where to cut it.

use crate::common::GroupArgs;
use crate::registry::{Choice, Registry};
use anyhow::Context;
use clap::Args;
use fuselage::cost::CostModel;
use fuselage::explain::render;
use fuselage::gnn::{ValidityModel, default_device, shipped};
use fuselage::ir::Graph;
use fuselage::ir::order::GroupOrder;
use fuselage::ir::sample::components;
use fuselage::pipeline::{ExplainerFactory, ExplainerRequest};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `fuselage explain`.
#[derive(Debug, Args)]
pub struct ExplainCmd {
    #[command(flatten)]
    group: GroupArgs,
    /// Which explainer: gnne, pg, rg (learned, over the GNN classifier), cost (the exact cost
    /// model), random, or a name a downstream build registered.
    #[arg(long, value_name = "NAME")]
    explainer: String,
    /// Seed of the explainer's random choices.
    #[arg(long, allow_hyphen_values = true, default_value_t = 0)]
    seed: u64,
    /// Also write the group as Graphviz DOT, edges weighted by importance.
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,
    /// Also draw the group as SVG, edges weighted by importance.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

/// The best cut severing an edge: the least worst-part `F_β` over its cuts, and whether every
/// part of that cut is valid.
fn best_cut(
    model: &dyn CostModel,
    g: &Graph,
    order: &GroupOrder,
    (u, v): (fuselage::ir::NodeId, fuselage::ir::NodeId),
) -> anyhow::Result<(u64, bool)> {
    let mut best = (u64::MAX, false);
    for k in order.cuts_of(u, v) {
        let (head, tail) = order.cut(k);
        let mut worst = 0;
        let mut valid = true;
        for part in components(g, &head).into_iter().chain(components(g, &tail)) {
            let c = model.evaluate(g, &part)?;
            worst = worst.max(c.buffer_bytes);
            valid &= c.valid || (part.is_singleton() && c.unfusable);
        }
        if (worst, !valid) < (best.0, !best.1) {
            best = (worst, valid);
        }
    }
    Ok(best)
}

pub fn run(a: ExplainCmd, registry: &Registry) -> anyhow::Result<()> {
    let (g, cost, set) = a.group.load(registry)?;
    let model: Arc<dyn CostModel> = cost.model;
    let beta = model.config().buffer_bytes();
    let request = ExplainerRequest {
        cost_kind: cost.kind,
        model: &model,
    };
    let explainer = match registry.explainer(&a.explainer).context("--explainer")? {
        Choice::Kind(kind) => fuselage::Explainers::default().explainer(kind, &request)?,
        Choice::Custom(entry) => (entry.make)(&request)?,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    let e = explainer.explain(&g, &set, beta, &mut rng)?;
    // The classifier's verdict, where the cost model has one.
    let p = match cost.kind {
        Some(kind) => Some(shipped(kind, &default_device())?.invalid_probability(&g, &set, beta)?),
        None => None,
    };
    let exact = model.evaluate(&g, &set)?;
    let order = GroupOrder::new(&g, &set);
    let ranking = e.ranking();
    let mut rows = Vec::with_capacity(ranking.len());
    for (rank, &i) in ranking.iter().enumerate() {
        let (u, v) = e.edges[i];
        let (worst, valid) = best_cut(model.as_ref(), &g, &order, (u, v))?;
        rows.push((rank + 1, i, worst, valid));
    }
    if let Some(path) = &a.dot {
        crate::common::write_atomic(path, render::to_dot(&g, &e))?;
    }
    if let Some(path) = &a.svg {
        render::to_svg(&g, &e, path)?;
    }
    if a.json {
        let edges: Vec<_> = rows
            .iter()
            .map(|&(rank, i, worst, valid)| {
                let (u, v) = e.edges[i];
                json!({
                    "rank": rank, "from": g.node(u).name, "to": g.node(v).name,
                    "score": e.edge_scores[i], "selected": e.selected.contains(&i),
                    "cut_worst_part_bytes": worst, "cut_parts_valid": valid,
                })
            })
            .collect();
        let v = json!({
            "model": g.name(), "cost_model": model.name(), "buffer_bytes": beta,
            "explainer": e.explainer, "seed": a.seed, "nodes": g.names(&set),
            "probability_invalid": p, "exact_buffer_bytes": exact.buffer_bytes, "exact_valid": exact.valid,
            "sparsity": e.sparsity(), "edges": edges,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    outln!(
        "{} · {} · β = {} bytes · {} nodes, {} edges · {} explainer · seed {}",
        g.name(),
        model.name(),
        beta,
        set.len(),
        e.edges.len(),
        e.explainer,
        a.seed
    )?;
    outln!(
        "GNN P(invalid) = {} · exact F_β = {} bytes -> {}",
        p.map_or(
            "n/a (no classifier for this cost model)".into(),
            |p| format!("{p:.4}")
        ),
        exact.buffer_bytes,
        if exact.valid { "valid" } else { "invalid" }
    )?;
    outln!(
        "(* selected; \"cut\": the best head/tail cut severing the edge, with its enclosing skips)"
    )?;
    outln!(
        "{:>5}  {:>8}  {:<70}  {:>14}  {}",
        "rank",
        "score",
        "edge",
        "cut: worst F_β",
        "parts valid"
    )?;
    for &(rank, i, worst, valid) in &rows {
        let (u, v) = e.edges[i];
        let mark = if e.selected.contains(&i) { "*" } else { " " };
        outln!(
            "{:>4}{mark}  {:>8.4}  {:<70}  {:>14}  {}",
            rank,
            e.edge_scores[i],
            format!("{} -> {}", g.node(u).name, g.node(v).name),
            worst,
            if valid { "yes" } else { "no" }
        )?;
    }
    Ok(())
}
