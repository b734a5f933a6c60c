//! `fuselage cost MODEL --fusion F --buffer SIZE (--group NAMES | --plan FILE) [--json]`.

use crate::common::{CostArgs, ModelArgs, describe_config, kib, mb, parse_group};
use crate::files::read_plan;
use crate::registry::Registry;
use anyhow::{Context, bail};
use clap::Args;
use fuselage::cost::{Accelerator, CostModel, PlanFile, evaluate_plan};
use fuselage::ir::{Graph, escape};
use fuselage::pipeline::Planner;
use fuselage::search::SearchKind;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `fuselage cost`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["group", "plan", "plan_from_metadata"])))]
pub struct CostCmd {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    cost: CostArgs,
    /// One group: comma-separated ONNX node names, or FIRST..LAST for a node-order range.
    #[arg(long, value_name = "NAMES")]
    group: Option<String>,
    /// A plan file (JSON) to re-evaluate under these settings.
    #[arg(long, value_name = "FILE")]
    plan: Option<PathBuf>,
    /// Re-evaluate the plan that `fuselage export` wrote into the model's own node metadata
    /// (MODEL must be that .onnx file).
    #[arg(long)]
    plan_from_metadata: bool,
    /// With --plan or --plan-from-metadata: also compare the plan with the exact optimum
    /// (computed within 10 s) and the lower bound — the gaps, and which groups differ.
    #[arg(long)]
    against_optimal: bool,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// The optimum a plan is compared with, and the lower bound.
struct Reference {
    lower_bound: u64,
    optimal: PlanFile,
    proven: bool,
    /// What the optimum's DRAM is proven to reach at least: `optimal`'s when proven.
    optimum_floor: u64,
}

fn reference(g: &Graph, model: &Arc<dyn CostModel>, hw: &Accelerator) -> anyhow::Result<Reference> {
    let out = Planner::with_model(g, model.clone())
        .hardware(hw.clone())
        .search(SearchKind::Optimal)
        .reference(fuselage::pipeline::Reference::Off)
        .time_limit(std::time::Duration::from_secs(10))
        .stop(&crate::STOP)
        .run()?;
    let optimum_floor = out.reference.map_or(out.lower_bound, |r| {
        u64::try_from(r.lower_bound).unwrap_or(u64::MAX)
    });
    Ok(Reference {
        lower_bound: out.lower_bound,
        proven: out.reference.is_some_and(|r| r.proven),
        optimal: out.plan_file,
        optimum_floor,
    })
}

pub fn run(a: CostCmd, registry: &Registry) -> anyhow::Result<()> {
    let g = a.model.load()?;
    let setting = a.cost.resolve(registry)?;
    let (model, hw) = (setting.model, &setting.hw);
    // Under `tiled`, each schedule a plan file records is re-run, and must fit.
    let tiled = (setting.kind == Some(fuselage::cost::CostKind::Tiled))
        .then(|| fuselage::cost::Tiled::new(*model.config()));
    let check = |file: &PlanFile, origin: &str| -> anyhow::Result<()> {
        if let Some(t) = &tiled {
            file.check_schedules(t, &g)
                .with_context(|| origin.to_string())?;
        }
        Ok(())
    };
    if a.against_optimal && a.group.is_some() {
        bail!("--against-optimal compares a plan: give --plan or --plan-from-metadata");
    }
    let against = || -> anyhow::Result<Option<Reference>> {
        if a.against_optimal {
            Ok(Some(reference(&g, &model, hw)?))
        } else {
            Ok(None)
        }
    };
    match (&a.group, &a.plan) {
        (Some(spec), _) => group(&g, model.as_ref(), hw, spec, a.json),
        (None, Some(path)) => {
            let file = read_plan("--plan", path)?;
            check(&file, &path.display().to_string())?;
            let r = against()?;
            plan(
                &g,
                model.as_ref(),
                hw,
                &file,
                &path.display().to_string(),
                a.json,
                r,
            )
        }
        (None, None) if a.plan_from_metadata => {
            let path = PathBuf::from(&a.model.model);
            let file = metadata_plan(&g, &path)?;
            check(&file, &path.display().to_string())?;
            let r = against()?;
            plan(
                &g,
                model.as_ref(),
                hw,
                &file,
                &path.display().to_string(),
                a.json,
                r,
            )
        }
        (None, None) => bail!("give --group, --plan or --plan-from-metadata"),
    }
}

fn group(
    g: &Graph,
    model: &dyn CostModel,
    hw: &Accelerator,
    spec: &str,
    json: bool,
) -> anyhow::Result<()> {
    let set = parse_group(g, spec)?;
    let c = model.evaluate(g, &set)?;
    let m = hw.group_metrics(g, &set, &c);
    let tensors = model.breakdown(g, &set)?.unwrap_or_default();
    if json {
        let mut out = Map::new();
        out.insert("model".into(), json!(g.name()));
        out.insert("cost_model".into(), json!(model.name()));
        out.insert(
            "buffer_limit_bytes".into(),
            json!(model.config().buffer_bytes()),
        );
        out.insert(
            "element_bytes".into(),
            json!(model.config().activation_element_bytes()),
        );
        out.insert(
            "weight_element_bytes".into(),
            json!(model.config().weight_element_bytes()),
        );
        out.insert("hardware".into(), json!(hw.name));
        out.insert("macs".into(), json!(m.macs));
        out.insert("buffer_traffic_bytes".into(), json!(m.buffer_traffic_bytes));
        out.insert("compute_cycles".into(), json!(m.compute_cycles));
        out.insert("dram_cycles".into(), json!(m.dram_cycles));
        out.insert("latency_cycles".into(), json!(m.latency_cycles));
        out.insert(
            "latency_seconds".into(),
            json!(hw.seconds(m.latency_cycles)),
        );
        out.insert("energy_joules".into(), json!(m.energy_fj as f64 * 1e-15));
        out.insert(
            "activation_buffer_bytes".into(),
            json!(c.activation_buffer_bytes),
        );
        out.insert("nodes".into(), json!(g.names(&set)));
        out.insert("buffer_bytes".into(), json!(c.buffer_bytes));
        out.insert("dram_bytes".into(), json!(c.dram_bytes));
        out.insert("weight_bytes".into(), json!(c.weight_bytes));
        out.insert("input_bytes".into(), json!(c.input_bytes));
        out.insert("output_bytes".into(), json!(c.output_bytes));
        out.insert("valid".into(), json!(c.valid));
        out.insert("unfusable".into(), json!(c.unfusable));
        let rows: Map<String, Value> = tensors
            .iter()
            .map(|t| (t.tensor.clone(), json!(t.resident_rows)))
            .collect();
        out.insert("resident_rows".into(), Value::Object(rows));
        if let Some(t) = c.tiling {
            out.insert("min_footprint_bytes".into(), json!(t.min_footprint_bytes));
            out.insert("tile_rows".into(), json!(t.tile_rows));
            out.insert("tiles".into(), json!(t.tiles));
            out.insert("weights_resident".into(), json!(t.weights_resident));
        }
        if let Some(s) = &c.schedule {
            out.insert("schedule".into(), serde_json::to_value(s)?);
        }
        out.insert("tensors".into(), serde_json::to_value(&tensors)?);
        outln!("{}", serde_json::to_string_pretty(&Value::Object(out))?)?;
        return Ok(());
    }
    outln!(
        "{} group of {} nodes under {} on {} ({})",
        escape(g.name()),
        set.len(),
        model.name(),
        escape(&hw.name),
        describe_config(model.config()),
    )?;
    outln!(
        "{:<60} {:>8} {:>6} {:>6} {:>10} {:>10}",
        "tensor",
        "kind",
        "rows",
        "of",
        "row bytes",
        "bytes"
    )?;
    for t in &tensors {
        outln!(
            "{:<60} {:>8} {:>6} {:>6} {:>10} {:>10}",
            escape(&t.tensor),
            format!("{:?}", t.kind).to_lowercase(),
            t.resident_rows,
            t.rows,
            t.row_bytes,
            t.bytes
        )?;
    }
    outln!("weights           {:>12} bytes", c.weight_bytes)?;
    outln!(
        "buffer (F_β)      {:>12} bytes ({:.1} KiB)",
        c.buffer_bytes,
        kib(c.buffer_bytes)
    )?;
    if let Some(t) = c.tiling {
        outln!(
            "F(1)              {:>12} bytes; tile of {} rows, {} tiles, weights {}",
            t.min_footprint_bytes,
            t.tile_rows,
            t.tiles,
            if t.weights_resident {
                "resident"
            } else {
                "streamed"
            }
        )?;
    }
    if let Some(s) = &c.schedule {
        outln!("schedule          {}", describe_schedule(s))?;
    }
    outln!(
        "DRAM (F_D)        {:>12} bytes ({:.3} MB)",
        c.dram_bytes,
        mb(c.dram_bytes)
    )?;
    outln!(
        "valid             {}{}",
        c.valid,
        if c.unfusable { " (unfusable node)" } else { "" }
    )?;
    outln!("MACs              {:>12}", m.macs)?;
    outln!("on-chip traffic   {:>12} bytes", m.buffer_traffic_bytes)?;
    outln!(
        "latency           {:>12} cycles ({:.3e} s; compute {} cycles, DRAM {} cycles)",
        m.latency_cycles,
        hw.seconds(m.latency_cycles),
        m.compute_cycles,
        m.dram_cycles
    )?;
    outln!("energy            {:>12.4e} J", m.energy_fj as f64 * 1e-15)?;
    Ok(())
}

fn plan(
    g: &Graph,
    model: &dyn CostModel,
    hw: &Accelerator,
    file: &PlanFile,
    origin: &str,
    json: bool,
    against: Option<Reference>,
) -> anyhow::Result<()> {
    if !file.model.is_empty() && file.model != g.name() {
        eprintln!(
            "warning: {} was written for `{}`, evaluating it against `{}`",
            escape(origin),
            escape(&file.model),
            escape(g.name())
        );
    }
    let p = file.to_plan(g).with_context(|| origin.to_string())?;
    let report = evaluate_plan(model, g, &p).with_context(|| origin.to_string())?;
    let fresh = PlanFile::from_report(model, g, &p, &report).with_hardware(hw, g, &p, &report);
    let metrics = hw.plan_metrics(g, &p, &report);
    if json {
        let mut v = serde_json::to_value(&fresh)?;
        if let Value::Object(m) = &mut v {
            m.insert("group_count".into(), json!(report.group_count));
            m.insert("unfusable_count".into(), json!(report.unfusable_count));
            m.insert("problems".into(), serde_json::to_value(&report.problems)?);
            if let Some(r) = &against {
                let d = fresh.diff(&r.optimal);
                m.insert("lower_bound_bytes".into(), json!(r.lower_bound));
                m.insert("optimal_dram_bytes".into(), json!(r.optimal.dram_bytes));
                m.insert("optimal_proven".into(), json!(r.proven));
                m.insert("optimal_lower_bound".into(), json!(r.optimum_floor));
                m.insert(
                    "groups_not_in_optimal".into(),
                    serde_json::to_value(&d.only_in_a)?,
                );
                m.insert(
                    "optimal_groups_not_in_plan".into(),
                    serde_json::to_value(&d.only_in_b)?,
                );
            }
        }
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        outln!(
            "{}: {} groups ({} unfusable) under {} on {} ({})",
            escape(g.name()),
            report.group_count,
            report.unfusable_count,
            model.name(),
            escape(&hw.name),
            describe_config(model.config())
        )?;
        outln!("total DRAM    {:>10.3} MB", mb(report.dram_bytes))?;
        outln!("fusable DRAM  {:>10.3} MB", mb(report.fusable_dram_bytes))?;
        outln!("MBU           {:>10.1} KiB", kib(report.max_buffer_bytes))?;
        outln!(
            "latency       {:>10.6} s ({} cycles)",
            metrics.latency_seconds(),
            metrics.latency_cycles
        )?;
        outln!("energy        {:>10.4e} J", metrics.energy_joules())?;
        for pr in &report.problems {
            outln!("problem: {}", escape(&pr.to_string()))?;
        }
        if let Some(r) = &against {
            let gap = |value: u64, to: u64| {
                if to == 0 {
                    "n/a".to_string()
                } else {
                    format!("{:+.2}%", (value as f64 / to as f64 - 1.0) * 100.0)
                }
            };
            let d = fresh.diff(&r.optimal);
            outln!(
                "lower bound   {:>10.3} MB   gap {}",
                mb(r.lower_bound),
                gap(report.dram_bytes, r.lower_bound)
            )?;
            outln!(
                "{:<13} {:>10.3} MB   gap {}{}",
                if r.proven { "optimal" } else { "best Optimal" },
                mb(r.optimal.dram_bytes),
                gap(report.dram_bytes, r.optimal.dram_bytes),
                if r.proven {
                    ""
                } else {
                    " (not proven: time limit)"
                }
            )?;
            if !r.proven {
                outln!(
                    "optimum at least {:>7.3} MB   proven gap at most {}",
                    mb(r.optimum_floor),
                    gap(report.dram_bytes, r.optimum_floor)
                )?;
            }
            outln!(
                "groups that differ from the optimal plan: {} here, {} there ({} shared)",
                d.only_in_a.len(),
                d.only_in_b.len(),
                d.unchanged
            )?;
            let here = d.only_in_a.iter().map(|e| ("here:   ", e));
            for (side, e) in here.chain(d.only_in_b.iter().map(|e| ("optimal:", e))) {
                outln!(
                    "  {side} {} ({} nodes, {} B DRAM)",
                    escape(e.nodes.first().map_or("", String::as_str)),
                    e.nodes.len(),
                    e.dram_bytes
                )?;
            }
        }
    }
    if !report.problems.is_empty() {
        bail!(
            "{origin}: {} group(s) do not fit the buffer; the first: {}",
            report.problems.len(),
            report.problems[0]
        );
    }
    Ok(())
}

/// A `tiled` schedule in one line: the slices, the tiles and what streams.
pub fn describe_schedule(s: &fuselage::cost::Schedule) -> String {
    let slices = if s.slices > 1 {
        format!("one slice of {} at a time; ", s.slices)
    } else {
        String::new()
    };
    if s.line_buffer {
        return format!("{slices}line buffer, nothing streamed");
    }
    format!(
        "{slices}{} tile{} of {} rows; {} weight matrices and {} activation operands streamed in blocks of {}; {} bytes read again",
        s.tiles,
        if s.tiles == 1 { "" } else { "s" },
        s.tile_rows,
        s.streamed_weights,
        s.streamed_operands,
        s.block,
        s.reread_bytes
    )
}

/// The plan `fuselage export` wrote into `path`'s node metadata.
fn metadata_plan(g: &fuselage::ir::Graph, path: &std::path::Path) -> anyhow::Result<PlanFile> {
    #[cfg(feature = "onnx")]
    return crate::export::plan_from_metadata(g, path);
    #[cfg(not(feature = "onnx"))]
    {
        let _ = g;
        bail!(
            "{}: --plan-from-metadata reads an ONNX file, and this build has no ONNX import (build fuselage-cli with its default features)",
            path.display()
        )
    }
}
