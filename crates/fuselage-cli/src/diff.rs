//! `fuselage diff A.json B.json [--json]`: which groups changed between two plan files, and
//! the DRAM delta. The work is [`PlanFile::diff`](fuselage::cost::PlanFile::diff).

use crate::common::mb;
use crate::files::read_plan;
use anyhow::bail;
use clap::Args;
use fuselage::cost::GroupEntry;
use std::path::PathBuf;

/// Arguments of `fuselage diff`.
#[derive(Debug, Args)]
pub struct DiffCmd {
    /// The first plan file.
    a: PathBuf,
    /// The second plan file.
    b: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

fn describe(e: &GroupEntry) -> String {
    match (e.nodes.first(), e.nodes.last()) {
        (Some(a), Some(b)) if e.nodes.len() > 1 => {
            format!("{a} .. {b} ({} nodes)", e.nodes.len())
        }
        (Some(a), _) => a.clone(),
        _ => "(empty)".into(),
    }
}

pub fn run(a: DiffCmd) -> anyhow::Result<()> {
    let (fa, fb) = (read_plan("<A>", &a.a)?, read_plan("<B>", &a.b)?);
    if !fa.model.is_empty() && !fb.model.is_empty() && fa.model != fb.model {
        bail!(
            "{} is a plan for `{}` and {} one for `{}`: nothing to compare",
            a.a.display(),
            fa.model,
            a.b.display(),
            fb.model
        );
    }
    let d = fa.diff(&fb);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&d)?)?;
        return Ok(());
    }
    for (name, path, f) in [("A", &a.a, &fa), ("B", &a.b, &fb)] {
        outln!(
            "{name}: {} ({}, {}, {} groups, {:.3} MB)",
            path.display(),
            f.model,
            f.cost_model,
            f.groups.len(),
            mb(f.dram_bytes)
        )?;
    }
    let pct = if d.dram_a > 0 {
        format!(" ({:+.2}%)", d.dram_delta as f64 / d.dram_a as f64 * 100.0)
    } else {
        String::new()
    };
    outln!(
        "DRAM B - A: {:+} bytes ({:+.3} MB){pct}",
        d.dram_delta,
        d.dram_delta as f64 / 1e6
    )?;
    outln!("unchanged groups: {}", d.unchanged)?;
    for (label, groups) in [("only in A", &d.only_in_a), ("only in B", &d.only_in_b)] {
        outln!("{label} ({}):", groups.len())?;
        for e in groups.iter() {
            outln!("  {:<90} {:>12} B DRAM", describe(e), e.dram_bytes)?;
        }
    }
    Ok(())
}
