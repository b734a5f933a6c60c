//! `fuselage explain`: why a group does not fit, edge by edge, and where to cut it.

use crate::common::{GroupArgs, describe_config, human_size, mb};
use crate::files::{Files, write, write_with};
use crate::registry::{Choice, Registry};
use anyhow::Context;
use clap::Args;
use fuselage::cost::{CostModel, OnChipBuffer};
use fuselage::explain::{
    CostExplainer, CostTerms, Explainer, MAX_EXPLAINED_NODES, explain_cost, rank_agreement, render,
};
#[cfg(feature = "learned")]
use fuselage::gnn::{ValidityModel, default_device, shipped};
use fuselage::ir::Graph;
use fuselage::ir::escape;
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
    /// Also write the group as Graphviz DOT, edges weighted by importance (`-`: standard
    /// output).
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,
    /// Also draw the group as SVG, edges weighted by importance (`-`: standard output).
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
    Files::new()
        .model(&a.group.model.model)
        .hardware(a.group.cost.hw.as_deref())
        .output("--dot", a.dot.as_deref())
        .output("--svg", a.svg.as_deref())
        .check()?;
    let (g, cost, set) = a.group.load(registry)?;
    let model: Arc<dyn CostModel> = cost.model;
    let beta = model.config().buffer_bytes();
    // The terms' levers and the explainers are quadratic in the group: past the cap, one line
    // at once rather than minutes of work.
    if set.len() > MAX_EXPLAINED_NODES {
        anyhow::bail!(
            "--group: {} nodes, more than the {MAX_EXPLAINED_NODES} `explain` takes (its terms \
             and explainers are quadratic in the group); name a part of it",
            set.len()
        );
    }
    let terms = explain_cost(model.as_ref(), &g, &set)?;
    let request = ExplainerRequest {
        cost_kind: cost.kind,
        model: &model,
    };
    let explainer = match registry.explainer(&a.explainer).context("--explainer")? {
        Choice::Kind(kind) => fuselage::Explainers::default().explainer(kind, &request)?,
        Choice::Custom(entry) => (entry.make)(&request)?,
    };
    // A group that fits has nothing to cut: its terms and slack, no ranking.
    let ranked = if terms.fits {
        None
    } else {
        let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
        let e = explainer.explain(&g, &set, model.as_ref(), &mut rng)?;
        // The exact attribution the ranking is compared with.
        let exact = if e.explainer == "cost" {
            e.clone()
        } else {
            let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
            CostExplainer::new().explain(&g, &set, model.as_ref(), &mut rng)?
        };
        Some((e, exact))
    };
    // The classifier's verdict, where the cost model has one (LBDF and BRR), the buffer
    // is unified, and the build has the GNN.
    #[cfg(feature = "learned")]
    let p = match (cost.kind, model.config().buffer()) {
        (Some(kind), OnChipBuffer::Unified { .. }) if kind != fuselage::cost::CostKind::Tiled => {
            Some(shipped(kind, &default_device())?.invalid_probability(&g, &set, model.config())?)
        }
        _ => None,
    };
    #[cfg(not(feature = "learned"))]
    let p: Option<f32> = None;
    let order = GroupOrder::new(&g, &set);
    let mut rows = Vec::new();
    if let Some((e, exact)) = &ranked {
        let exact_rank = rank_positions(&exact.ranking());
        for (rank, &i) in e.ranking().iter().enumerate() {
            let (u, v) = e.edges[i];
            let (worst, valid) = best_cut(model.as_ref(), &g, &order, (u, v))?;
            rows.push((rank + 1, i, worst, valid, exact_rank[i]));
        }
        if let Some(path) = &a.dot {
            write("--dot", path, render::to_dot(&g, e))?;
        }
        if let Some(path) = &a.svg {
            write_with("--svg", path, |tmp| Ok(render::to_svg(&g, e, tmp)?))?;
        }
    } else if a.dot.is_some() || a.svg.is_some() {
        eprintln!("note: the group fits, so there is no explanation to draw");
    }
    let agreement = ranked.as_ref().and_then(|(e, exact)| {
        let a: Vec<f64> = e.edge_scores.iter().map(|&s| f64::from(s)).collect();
        let b: Vec<f64> = exact.edge_scores.iter().map(|&s| f64::from(s)).collect();
        rank_agreement(&a, &b)
    });
    if a.json {
        let edges: Vec<_> = match &ranked {
            None => Vec::new(),
            Some((e, _)) => {
                let norm = render::normalised(e);
                rows.iter()
                    .map(|&(rank, i, worst, valid, exact_rank)| {
                        let (u, v) = e.edges[i];
                        json!({
                            "rank": rank, "from": g.node(u).name, "to": g.node(v).name,
                            "score": e.edge_scores[i], "rank_score": norm[i],
                            "exact_rank": exact_rank, "selected": e.selected.contains(&i),
                            "cut_worst_part_bytes": worst, "cut_parts_valid": valid,
                        })
                    })
                    .collect()
            }
        };
        let split = terms.split.as_ref().map(|s| {
            json!({
                "parts": s.parts.iter().map(|p| g.names(p)).collect::<Vec<_>>(),
                "dram_bytes": s.dram_bytes, "added_dram_bytes": s.added_dram_bytes,
            })
        });
        let v = json!({
            "model": g.name(), "cost_model": model.name(), "buffer_bytes": beta,
            "explainer": ranked.as_ref().map(|(e, _)| e.explainer.clone()), "seed": a.seed,
            "nodes": g.names(&set), "probability_invalid": p,
            "exact_buffer_bytes": terms.buffer_bytes, "exact_valid": terms.fits,
            "weight_bytes": terms.weight_bytes, "tensors": terms.tensors,
            "overflow_bytes": terms.overflow_bytes, "smallest_buffer_bytes": terms.smallest_buffer,
            "split": split, "rank_agreement": agreement,
            "sparsity": ranked.as_ref().map(|(e, _)| e.sparsity()), "edges": edges,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    outln!(
        "{} · {} · {} · {} nodes",
        escape(g.name()),
        model.name(),
        describe_config(model.config()),
        set.len(),
    )?;
    print_terms(&g, &terms, beta)?;
    // Under `tiled`, the loop nest that fits (or none does).
    if cost.kind == Some(fuselage::cost::CostKind::Tiled) {
        match model.evaluate(&g, &set)?.schedule {
            Some(s) => outln!("schedule: {}", crate::cost::describe_schedule(&s))?,
            None => outln!("schedule: none of tiled's loop nests fits")?,
        }
    }
    if let Some(p) = p {
        outln!("GNN classifier: P(invalid) = {p:.4}")?;
    }
    let Some((e, _)) = &ranked else {
        return Ok(());
    };
    outln!()?;
    outln!(
        "{} explainer · seed {} · {} edges ranked{}",
        e.explainer,
        a.seed,
        e.edges.len(),
        match agreement {
            Some(r) if e.explainer != "cost" => {
                format!(" · rank agreement with the exact attribution (Spearman) {r:+.2}")
            }
            _ => String::new(),
        }
    )?;
    outln!(
        "(* selected; \"rank score\": the score's rank among the edges, 0 lowest to 1 highest; \"exact\": the edge's rank under the cost explainer; \"cut\": the best head/tail cut severing the edge)"
    )?;
    outln!(
        "{:>5}  {:>9}  {:>5}  {:>5}  {:<70}  {:>14}  parts fit",
        "rank",
        "score",
        "rank score",
        "exact",
        "edge",
        "cut: worst F_β"
    )?;
    let norm = render::normalised(e);
    for &(rank, i, worst, valid, exact_rank) in &rows {
        let (u, v) = e.edges[i];
        let mark = if e.selected.contains(&i) { "*" } else { " " };
        outln!(
            "{:>4}{mark}  {:>9.6}  {:>10.2}  {:>5}  {:<70}  {:>14}  {}",
            rank,
            e.edge_scores[i],
            norm[i],
            exact_rank,
            format!(
                "{} -> {}",
                render::short_name(&escape(&g.node(u).name), 34),
                render::short_name(&escape(&g.node(v).name), 34)
            ),
            worst,
            if valid { "yes" } else { "no" }
        )?;
    }
    Ok(())
}

/// For each edge index, its 1-based position in `ranking`.
fn rank_positions(ranking: &[usize]) -> Vec<usize> {
    let mut pos = vec![0; ranking.len()];
    for (r, &i) in ranking.iter().enumerate() {
        if let Some(p) = pos.get_mut(i) {
            *p = r + 1;
        }
    }
    pos
}

/// The inequality with its terms, and the levers.
fn print_terms(g: &Graph, t: &CostTerms, beta: u64) -> anyhow::Result<()> {
    outln!("F_β = W + Σ resident rows × row bytes (largest first):")?;
    outln!(
        "  {:<52} {:>14}",
        "weights kept on chip (W)",
        t.weight_bytes
    )?;
    for x in &t.tensors {
        outln!(
            "  {:<52} {:>14}  {} × {} B, {} ({:?}; {})",
            render::short_name(&escape(&x.tensor), 52),
            x.bytes,
            x.resident_rows,
            x.row_bytes,
            if x.rows == x.resident_rows {
                "whole".to_string()
            } else {
                format!("of {}", x.rows)
            },
            x.kind,
            x.reason.describe(),
        )?;
    }
    outln!("  {:<52} {:>14}", "= F_β", t.buffer_bytes)?;
    if t.fits {
        outln!(
            "fits: F_β = {} bytes ({}) < {}",
            t.buffer_bytes,
            human_size(t.buffer_bytes),
            limit(t, beta),
        )?;
        return Ok(());
    }
    match t.buffer {
        OnChipBuffer::Unified { .. } => outln!(
            "does not fit: F_β = {} ≥ β = {}: exceeds β by {} bytes",
            t.buffer_bytes,
            beta,
            t.overflow_bytes
        )?,
        OnChipBuffer::Split { .. } => outln!("does not fit: {}", limit(t, beta))?,
    }
    outln!("levers:")?;
    outln!(
        "  smallest buffer that fits: {} bytes ({})",
        t.smallest_buffer,
        human_size(t.smallest_buffer)
    )?;
    if let Some(s) = &t.split {
        let parts: Vec<String> = s
            .parts
            .iter()
            .map(|p| {
                let names: Vec<String> =
                    g.names(p).iter().map(|n| escape(n).into_owned()).collect();
                match (names.first(), names.last()) {
                    (Some(a), Some(b)) if names.len() > 1 => {
                        format!("{a} .. {b} ({} nodes)", names.len())
                    }
                    (Some(a), _) => a.clone(),
                    _ => String::new(),
                }
            })
            .collect();
        outln!(
            "  cheapest split into parts that fit: {} parts, adds {} bytes of DRAM ({:.3} MB) to the group's I + O + W:",
            s.parts.len(),
            s.added_dram_bytes,
            mb(s.added_dram_bytes)
        )?;
        for part in parts {
            outln!("    {part}")?;
        }
    }
    let top = t.tensors.first().map_or(0, |x| x.bytes);
    if t.weight_bytes > top {
        outln!(
            "  largest term: the weights ({} bytes, {:.0}% of F_β), kept on chip whole; a model that streams them (brr) or a larger weight buffer moves them out",
            t.weight_bytes,
            100.0 * t.weight_bytes as f64 / t.buffer_bytes.max(1) as f64
        )?;
    }
    if let Some((x, why)) = t.dominant_tensor() {
        outln!(
            "  dominating tensor: {} ({} bytes, {:.0}% of F_β): {}",
            escape(&x.tensor),
            x.bytes,
            100.0 * x.bytes as f64 / t.buffer_bytes.max(1) as f64,
            why.describe()
        )?;
    }
    Ok(())
}

/// The buffer a group is checked against, in words.
fn limit(t: &CostTerms, beta: u64) -> String {
    match t.buffer {
        OnChipBuffer::Unified { .. } => format!("β = {beta} bytes ({})", human_size(beta)),
        OnChipBuffer::Split {
            weight_bytes,
            activation_bytes,
        } => format!(
            "weights {} < β_w = {} and activations {} < β_a = {} (both must hold)",
            t.weight_bytes,
            weight_bytes,
            t.buffer_bytes - t.weight_bytes,
            activation_bytes
        ),
    }
}
