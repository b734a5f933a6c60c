//! Arguments several subcommands share: the model, and the cost model's settings.

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use fuselage::cost::CostModel;
use fuselage::explain::Explainer;
use fuselage::ir::{Graph, NodeSet};

/// Which network.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// A zoo network (vgg16, resnet18, ..., vit_tiny_patch16_224, bert_l4_h256, gpt2) or the
    /// path of an .onnx file.
    pub model: String,
    /// Square input resolution for a zoo network, 32 to 16384 (default: the network's own).
    #[arg(long, value_parser = clap::value_parser!(u64).range(32..=16_384))]
    pub resolution: Option<u64>,
    /// Tokens for a zoo text transformer (bert_*, gpt2*, *llama*), 1 to 1048576 (default: the
    /// preset's own).
    #[arg(long, value_name = "TOKENS", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub seq: Option<u64>,
}

impl ModelArgs {
    pub fn load(&self) -> anyhow::Result<Graph> {
        Ok(fuselage::load_model_sized(
            &self.model,
            self.resolution,
            self.seq,
        )?)
    }
}

/// The fusion method's cost model.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Fusion {
    /// Line-buffer depth-first: weights resident, row bands.
    Lbdf,
    /// Buffer-requirement reduction (Optimus): row tiles, weights resident or streamed.
    Brr,
}

impl Fusion {
    pub fn name(self) -> &'static str {
        match self {
            Fusion::Lbdf => "lbdf",
            Fusion::Brr => "brr",
        }
    }
}

/// Explainers the explanation-guided splitter can ask.
#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExplainerKind {
    /// GNNExplainer over the GNN classifier (a soft edge mask per group).
    Gnne,
    /// PGExplainer over the GNN classifier (an edge MLP trained across groups).
    Pg,
    /// RG-Explainer over the GNN classifier (a seed and a policy growing a subgraph).
    Rg,
    /// The exact cost model: how much the buffer requirement falls when an edge is cut.
    Cost,
    /// Random edge scores (the floor).
    Random,
}

impl ExplainerKind {
    pub fn name(self) -> &'static str {
        match self {
            ExplainerKind::Gnne => "gnne",
            ExplainerKind::Pg => "pg",
            ExplainerKind::Rg => "rg",
            ExplainerKind::Cost => "cost",
            ExplainerKind::Random => "random",
        }
    }
}

/// The learned explainer `kind` (GNNExplainer, PGExplainer or RG-Explainer) for the classifier
/// of `fusion` at a buffer of `beta` bytes.
pub fn learned_explainer(
    kind: ExplainerKind,
    fusion: Fusion,
    beta: u64,
) -> anyhow::Result<Box<dyn Explainer>> {
    let _ = beta;
    // The learned explainers read only the classifier; the cost model argument is for `cost`.
    let unused: std::sync::Arc<dyn CostModel> =
        std::sync::Arc::from(fuselage::cost_model(fusion.name(), beta.max(1), 1)?);
    Ok(fuselage::make_explainer(
        kind.name(),
        fusion.name(),
        unused,
    )?)
}

/// Cost-model settings.
#[derive(Debug, Args)]
pub struct CostArgs {
    /// Cost model of the fusion method.
    #[arg(long, value_enum)]
    pub fusion: Fusion,
    /// On-chip buffer β: bytes, or with KiB / MiB (256KiB, 2MiB).
    #[arg(long, value_name = "SIZE")]
    pub buffer: String,
    /// Bytes per element, activations and weights alike.
    #[arg(long, value_name = "N", default_value = "1")]
    pub bytes: String,
}

impl CostArgs {
    pub fn model(&self) -> anyhow::Result<Box<dyn CostModel>> {
        let buffer = fuselage::parse_size(&self.buffer).context("--buffer")?;
        let bytes = fuselage::parse_size(&self.bytes).context("--bytes")?;
        Ok(fuselage::cost_model(self.fusion.name(), buffer, bytes)?)
    }
}

/// The group `spec` names: comma-separated ONNX node names, or `FIRST..LAST` for every node
/// from FIRST to LAST in node order.
pub fn parse_group(g: &Graph, spec: &str) -> anyhow::Result<NodeSet> {
    if let Some((first, last)) = spec.split_once("..")
        && !spec.contains(',')
    {
        let (a, b) = (g.require(first.trim())?, g.require(last.trim())?);
        if a > b {
            bail!("`{first}` comes after `{last}` in node order");
        }
        return Ok(NodeSet::from_ids(
            g.len(),
            g.node_ids().filter(|&v| v >= a && v <= b),
        ));
    }
    let names: Vec<&str> = spec
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    if names.is_empty() {
        bail!("--group names no node");
    }
    Ok(g.set_of(&names)?)
}

/// Bytes as the paper's MB (10^6 bytes).
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Bytes as KiB.
pub fn kib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0
}
