//! `fuselage diff A.json B.json [--model MODEL] [--json]`: which groups changed between two
//! plan files, and the DRAM delta. The work is
//! [`PlanFile::diff`](fuselage::cost::PlanFile::diff).
//!
//! No cost a file records is trusted: both plans are checked to be partitions of the model
//! and costed again from it, each under the cost model and buffer its file records (a file
//! that lists only nodes is costed under the other file's). The model is `--model`, or the
//! zoo network the files name.

use crate::common::{mb, recorded_setting, recost};
use crate::files::read_plan;
use crate::registry::Registry;
use anyhow::{Context, bail};
use clap::Args;
use fuselage::cost::{GroupEntry, PlanFile};
use fuselage::ir::Graph;
use std::path::PathBuf;

/// Arguments of `fuselage diff`.
#[derive(Debug, Args)]
pub struct DiffCmd {
    /// The first plan file.
    a: PathBuf,
    /// The second plan file.
    b: PathBuf,
    /// The network both plans are for: a zoo name or an .onnx file (default: the zoo network
    /// the plan files name). The plans are costed again from it.
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Square input resolution of a zoo network, 32 to 16384 (default: the network's own).
    #[arg(long, value_parser = clap::value_parser!(u64).range(32..=16_384))]
    resolution: Option<u64>,
    /// Tokens of a zoo text transformer, 1 to 1048576 (default: the preset's own).
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    seq: Option<u64>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// The graph the plans are for: `--model`, or the zoo network the files name.
fn graph(a: &DiffCmd, fa: &PlanFile, fb: &PlanFile) -> anyhow::Result<Graph> {
    if let Some(spec) = &a.model {
        return Ok(fuselage::load_model_sized(spec, a.resolution, a.seq)?);
    }
    let name = if fa.model.is_empty() {
        &fb.model
    } else {
        &fa.model
    };
    if name.is_empty() || fuselage::is_path(name) {
        bail!("the plan files do not name a zoo network to cost them on; give it: --model MODEL");
    }
    fuselage::load_model_sized(name, a.resolution, a.seq).with_context(|| {
        format!(
            "the plans are for `{}`, which is not a zoo network; give the model: --model MODEL.onnx",
            fuselage::ir::escape(name)
        )
    })
}

fn describe(e: &GroupEntry) -> String {
    use fuselage::ir::escape;
    match (e.nodes.first(), e.nodes.last()) {
        (Some(a), Some(b)) if e.nodes.len() > 1 => {
            format!("{} .. {} ({} nodes)", escape(a), escape(b), e.nodes.len())
        }
        (Some(a), _) => escape(a).into_owned(),
        _ => "(empty)".into(),
    }
}

pub fn run(a: DiffCmd, registry: &Registry) -> anyhow::Result<()> {
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
    let g = graph(&a, &fa, &fb)?;
    let (oa, ob) = (a.a.display().to_string(), a.b.display().to_string());
    let (ma, mb_) = (
        recorded_setting(&fa, registry, &oa)?,
        recorded_setting(&fb, registry, &ob)?,
    );
    let (Some(ma), Some(mb_)) = (ma.clone().or(mb_.clone()), mb_.or(ma)) else {
        bail!(
            "neither plan file records a cost model to cost it under; cost one first: \
             fuselage cost MODEL --fusion F --buffer SIZE --plan {oa} --json > costed.json"
        );
    };
    let mut files = Vec::with_capacity(2);
    for (origin, file, model) in [(&oa, &fa, &ma), (&ob, &fb, &mb_)] {
        let fresh = recost(&g, file, model.as_ref(), origin)?;
        if !file.cost_model.is_empty() && file.dram_bytes != fresh.dram_bytes {
            eprintln!(
                "note: {origin} records {} bytes of DRAM; costed again from {} it is {} (used here)",
                file.dram_bytes,
                fuselage::ir::escape(g.name()),
                fresh.dram_bytes
            );
        }
        files.push(fresh);
    }
    let (fa, fb) = (&files[0], &files[1]);
    let d = fa.diff(fb);
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&d)?)?;
        return Ok(());
    }
    for (name, path, f) in [("A", &a.a, fa), ("B", &a.b, fb)] {
        outln!(
            "{name}: {} ({}, {}, {} groups, {:.3} MB)",
            fuselage::ir::escape(&path.display().to_string()),
            fuselage::ir::escape(&f.model),
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
