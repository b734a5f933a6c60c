//! `fuselage sweep MODEL --fusion lbdf|brr --from SIZE --to SIZE [--hw FILE|PRESET] [--json]
//! [--svg FILE]`: the optimal DRAM against the buffer size, with its exact breakpoints.
//!
//! The work is [`fuselage::pipeline::sweep`], the drawing the report's
//! [`fuselage::report::chart::SweepChart`]; this file reads the arguments and prints.

use crate::common::{ModelArgs, kib, mb};
use crate::files::{Files, write};
use anyhow::Context;
use clap::Args;
use fuselage::cost::{Accelerator, CostConfig};
use std::path::PathBuf;

/// Arguments of `fuselage sweep`.
#[derive(Debug, Args)]
pub struct SweepCmd {
    #[command(flatten)]
    model: ModelArgs,
    /// Cost model: lbdf or brr.
    #[arg(long, value_name = "MODEL")]
    fusion: String,
    /// The smallest buffer: bytes, or with KiB / MiB (32KiB).
    #[arg(long, value_name = "SIZE")]
    from: String,
    /// The largest buffer (4MiB).
    #[arg(long, value_name = "SIZE")]
    to: String,
    /// The accelerator whose element sizes and rates to use (its buffer is swept; it must be
    /// unified) [default: β-only, 1-byte elements].
    #[arg(long, value_name = "FILE|PRESET")]
    hw: Option<String>,
    /// Print JSON: {"points": [...], "breakpoints": [...]}.
    #[arg(long)]
    json: bool,
    /// Also draw the curve as an SVG chart, the report's (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Seconds the sweep may take, 0 to 10^6; a sweep cut short is not exact, so it is then
    /// an error saying how far it got.
    #[arg(long, value_name = "SECONDS", default_value = "600", value_parser = crate::optimize::seconds)]
    time_limit: f64,
}

pub fn run(a: SweepCmd, registry: &crate::registry::Registry) -> anyhow::Result<()> {
    Files::new()
        .model(&a.model.model)
        .hardware(a.hw.as_deref())
        .output("--svg", a.svg.as_deref())
        .check()?;
    let family = registry.cost_family(&a.fusion).context("--fusion")?;
    let kind = fuselage::ir::escape(family.name());
    let from = fuselage::parse_size(&a.from).context("--from")?;
    let to = fuselage::parse_size(&a.to).context("--to")?;
    let hw = match &a.hw {
        Some(spec) => crate::files::hardware("--hw", spec)?,
        None => Accelerator::beta_only(CostConfig::new(1)?),
    };
    let g = a.model.load()?;
    let limit = std::time::Duration::from_secs_f64(a.time_limit);
    let s = fuselage::pipeline::sweep_within(&g, family.as_ref(), &hw, from, to, Some(limit))?;
    if let Some(path) = &a.svg {
        // The report's chart: no β to mark here, the range is the user's.
        let title = format!("{}: optimal DRAM against buffer ({kind})", g.name());
        let chart = fuselage::report::chart::SweepChart::from_sweep(&s).title(&title);
        write("--svg", path, chart.to_svg())?;
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&s)?)?;
        return Ok(());
    }
    outln!(
        "{} · {kind} · {} · buffer {:.1} to {:.1} KiB · {} steps, {} breakpoints",
        fuselage::ir::escape(g.name()),
        fuselage::ir::escape(&hw.name),
        kib(from),
        kib(to),
        s.points.len(),
        s.breakpoints.len()
    )?;
    outln!(
        "{:>14} {:>14} {:>12} {:>7} {:>14} {:>12}",
        "from (bytes)",
        "to (bytes)",
        "DRAM (MB)",
        "groups",
        "latency (ms)",
        "energy (mJ)"
    )?;
    for p in &s.points {
        outln!(
            "{:>14} {:>14} {:>12.3} {:>7} {:>14.4} {:>12.4}",
            p.buffer_bytes,
            p.up_to_bytes,
            mb(p.dram_bytes),
            p.groups,
            p.latency_seconds * 1e3,
            p.energy_joules * 1e3
        )?;
    }
    outln!("breakpoints:")?;
    for b in &s.breakpoints {
        outln!(
            "{:>14} bytes: {:.3} -> {:.3} MB; {}",
            b.buffer_bytes,
            mb(b.dram_below),
            mb(b.dram_from),
            b.change
        )?;
    }
    Ok(())
}
