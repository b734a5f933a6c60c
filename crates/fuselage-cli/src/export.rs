//! `fuselage export MODEL.onnx --plan FILE --out OUT.onnx`: the plan handed to a compiler as
//! ONNX node metadata, and `cost --plan-from-metadata`, which reads it back.
//!
//! Every node of the original model gets `fuselage.group` (its group's index in the plan),
//! `fuselage.group_buffer_bytes` and `fuselage.group_dram_bytes`; the model gets
//! `fuselage.plan`, the plan file's summary as JSON (cost model, buffer, element size, totals,
//! hardware). Every cost written is computed again from the model and the plan, under the
//! cost model and buffer the plan file records: the costs the file records are not trusted,
//! and a plan that is not a partition of the model is refused. Nothing else in the file changes
//! ([`fuselage::onnx::metadata::annotate`]), so it imports to the same graph.

use crate::common::{recorded_setting, recost};
use crate::files::{Files, Kind, read, read_plan, shown, write};
use crate::registry::Registry;
use anyhow::{Context, bail};
use clap::Args;
use fuselage::cost::{GroupEntry, PlanFile};
use fuselage::ir::Graph;
use fuselage::onnx::metadata;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The prefix of every metadata key fuselage writes.
pub const PREFIX: &str = "fuselage.";

/// Arguments of `fuselage export`.
#[derive(Debug, Args)]
pub struct ExportCmd {
    /// The ONNX model the plan is for.
    model: PathBuf,
    /// The plan file (JSON, as `optimize` or `cost --plan --json` writes it).
    #[arg(long, value_name = "FILE")]
    plan: PathBuf,
    /// Where to write the annotated model (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

pub fn run(a: ExportCmd, registry: &Registry) -> anyhow::Result<()> {
    Files::new()
        .input("<MODEL>", Some(&a.model))
        .input("--plan", Some(&a.plan))
        .output("--out", Some(&a.out))
        .check()?;
    let bytes = read("<MODEL>", &a.model, Kind::Model)?;
    let g = fuselage::onnx::import_bytes(&bytes, &a.model)?;
    let file = read_plan("--plan", &a.plan)?;
    let origin = a.plan.display().to_string();
    let Some(model) = recorded_setting(&file, registry, &origin)? else {
        bail!(
            "{}: the plan records no costs; cost it first: fuselage cost {} --fusion F --buffer SIZE --plan {} --json > costed.json",
            a.plan.display(),
            a.model.display(),
            a.plan.display()
        );
    };
    let file = recost(&g, &file, model.as_ref(), &origin)?;
    let mut props: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for (gi, entry) in file.groups.iter().enumerate() {
        for name in &entry.nodes {
            props.insert(
                name.clone(),
                vec![
                    (format!("{PREFIX}group"), gi.to_string()),
                    (
                        format!("{PREFIX}group_buffer_bytes"),
                        entry.buffer_bytes.to_string(),
                    ),
                    (
                        format!("{PREFIX}group_dram_bytes"),
                        entry.dram_bytes.to_string(),
                    ),
                ],
            );
        }
    }
    let summary = PlanFile {
        groups: Vec::new(),
        ..file.clone()
    };
    let mut summary = serde_json::to_value(&summary)?;
    if let Some(m) = summary.as_object_mut() {
        m.remove("groups");
        m.insert("group_count".into(), file.groups.len().into());
    }
    let model = [(format!("{PREFIX}plan"), summary.to_string())];
    let out = metadata::annotate(&bytes, &props, &model, PREFIX, &a.model)?;
    write("--out", &a.out, &out)?;
    outln!(
        "wrote {}: {} nodes in {} groups annotated ({} bytes, {} added)",
        shown(&a.out),
        g.len(),
        file.groups.len(),
        out.len(),
        out.len() as i64 - bytes.len() as i64
    )?;
    Ok(())
}

/// The plan an exported model carries in its node metadata: every node of `g` with its
/// `fuselage.group`, groups in index order.
///
/// # Errors
/// When the file carries no plan, a node of the graph has no group, or an index is not one.
pub fn plan_from_metadata(g: &Graph, path: &Path) -> anyhow::Result<PlanFile> {
    let bytes = read("<MODEL>", path, Kind::Model)?;
    let (nodes, _) = metadata::read(&bytes, PREFIX, path)?;
    let key = format!("{PREFIX}group");
    let mut groups: Vec<Vec<String>> = Vec::new();
    let mut missing = Vec::new();
    for (_, node) in g.nodes() {
        let Some(value) = nodes
            .get(&node.name)
            .and_then(|kv| kv.iter().find(|(k, _)| *k == key))
            .map(|(_, v)| v)
        else {
            missing.push(node.name.clone());
            continue;
        };
        let gi: usize = value.parse().with_context(|| {
            format!(
                "{}: node `{}` has {key} = `{value}`, not a group index",
                path.display(),
                node.name
            )
        })?;
        if gi >= g.len() {
            bail!(
                "{}: node `{}` has {key} = {gi}, more groups than nodes",
                path.display(),
                node.name
            );
        }
        if groups.len() <= gi {
            groups.resize(gi + 1, Vec::new());
        }
        groups[gi].push(node.name.clone());
    }
    if missing.len() == g.len() {
        bail!(
            "{}: the model carries no plan (no node has {key}); write one with fuselage export",
            path.display()
        );
    }
    if let Some(first) = missing.first() {
        bail!(
            "{}: {} node(s) have no {key}, the first `{first}`",
            path.display(),
            missing.len()
        );
    }
    if let Some(empty) = groups.iter().position(Vec::is_empty) {
        bail!("{}: group {empty} has no node", path.display());
    }
    Ok(PlanFile {
        model: g.name().to_string(),
        cost_model: String::new(),
        buffer_bytes: 0,
        weight_buffer_bytes: None,
        activation_buffer_bytes: None,
        element_bytes: 0,
        weight_element_bytes: None,
        hardware: None,
        groups: groups
            .into_iter()
            .map(|nodes| GroupEntry {
                nodes,
                buffer_bytes: 0,
                dram_bytes: 0,
                valid: false,
                unfusable: false,
                latency_cycles: None,
                energy_joules: None,
                schedule: None,
            })
            .collect(),
        dram_bytes: 0,
        fusable_dram_bytes: 0,
        max_buffer_bytes: 0,
        latency_cycles: None,
        latency_seconds: None,
        energy_joules: None,
    })
}
