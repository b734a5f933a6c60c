//! `fuselage inspect MODEL [--json] [--dot FILE] [--nodes]`.

use crate::common::ModelArgs;
use crate::files::{Files, shown, write};
use clap::Args;
use fuselage::ir::Graph;
use fuselage::ir::escape;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Arguments of `fuselage inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the graph as Graphviz DOT to FILE (`-`: standard output).
    #[arg(long, value_name = "FILE")]
    dot: Option<PathBuf>,
    /// Also list every node: its name (what --group takes), op and output shape.
    #[arg(long)]
    nodes: bool,
}

/// One node as `inspect --nodes` lists it.
#[derive(Debug, Serialize)]
struct NodeLine {
    name: String,
    op: &'static str,
    shape: Vec<u64>,
}

/// What `inspect --json` prints.
#[derive(Debug, Serialize)]
struct Summary {
    name: String,
    nodes: usize,
    edges: usize,
    inputs: Vec<(String, Vec<u64>)>,
    outputs: Vec<String>,
    params: u64,
    macs: u64,
    activation_bytes: u64,
    ops: BTreeMap<&'static str, usize>,
    fingerprint: String,
    /// Every node, with --nodes.
    #[serde(skip_serializing_if = "Option::is_none")]
    node_list: Option<Vec<NodeLine>>,
}

fn summarise(g: &Graph) -> Summary {
    Summary {
        name: g.name().to_string(),
        nodes: g.len(),
        edges: g.edge_count(),
        inputs: g
            .inputs()
            .iter()
            .map(|i| (i.name.clone(), i.shape.0.clone()))
            .collect(),
        outputs: g
            .outputs()
            .iter()
            .map(|&o| g.node(o).name.clone())
            .collect(),
        params: g.params(),
        macs: g.macs(),
        activation_bytes: g.activation_bytes(1),
        ops: g.op_counts(),
        fingerprint: g.fingerprint(),
        node_list: None,
    }
}

pub fn run(a: InspectArgs) -> anyhow::Result<()> {
    Files::new()
        .model(&a.model.model)
        .output("--dot", a.dot.as_deref())
        .check()?;
    let g = a.model.load()?;
    if let Some(path) = &a.dot {
        write("--dot", path, g.to_dot(None))?;
    }
    let mut s = summarise(&g);
    if a.nodes {
        s.node_list = Some(
            g.nodes()
                .map(|(_, n)| NodeLine {
                    name: n.name.clone(),
                    op: n.op.kind().name(),
                    shape: n.shape.0.clone(),
                })
                .collect(),
        );
    }
    if a.json {
        outln!("{}", serde_json::to_string_pretty(&s)?)?;
        return Ok(());
    }
    let inputs: Vec<String> = s
        .inputs
        .iter()
        .map(|(n, d)| format!("{} {d:?}", escape(n)))
        .collect();
    outln!("model             {}", escape(&s.name))?;
    outln!("inputs            {}", inputs.join(", "))?;
    outln!("nodes             {}", s.nodes)?;
    outln!("edges             {}", s.edges)?;
    outln!(
        "params            {} ({:.2} M)",
        s.params,
        s.params as f64 / 1e6
    )?;
    outln!(
        "MACs              {} ({:.3} G)",
        s.macs,
        s.macs as f64 / 1e9
    )?;
    outln!(
        "activation bytes  {} ({:.2} MB at 1 byte/element)",
        s.activation_bytes,
        s.activation_bytes as f64 / 1e6
    )?;
    outln!("fingerprint       {}", s.fingerprint)?;
    // Columns as wide as their longest entry, two spaces apart (`LayerNormalization` is 18).
    outln!("ops")?;
    let op_width = s.ops.keys().map(|op| op.len()).max().unwrap_or(0);
    for (op, n) in &s.ops {
        outln!("  {op:<op_width$}  {n}")?;
    }
    if let Some(list) = &s.node_list {
        let names: Vec<_> = list.iter().map(|n| escape(&n.name)).collect();
        let width = names.iter().map(|n| n.len()).max().unwrap_or(4).max(4);
        let op_width = list.iter().map(|n| n.op.len()).max().unwrap_or(2).max(2);
        outln!("nodes (name, op, output shape)")?;
        for (n, name) in list.iter().zip(&names) {
            outln!("  {name:<width$}  {:<op_width$}  {:?}", n.op, n.shape)?;
        }
    }
    if let Some(path) = &a.dot {
        outln!("wrote {}", shown(path))?;
    }
    Ok(())
}
