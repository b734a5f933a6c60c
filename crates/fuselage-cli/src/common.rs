//! Arguments several subcommands share: the model, the cost model's settings, a group.

use crate::registry::Registry;
use anyhow::{Context, bail};
use clap::Args;
use fuselage::cost::{
    Accelerator, CostConfig, CostFamily, CostKind, CostModel, PlanFile, evaluate_plan,
};
pub use fuselage::ir::human_size;
use fuselage::ir::{Graph, NodeSet};
use std::sync::Arc;

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
    /// One decode step: one new token against a key-value cache of --past tokens per layer,
    /// of a zoo decoder (llama_3_2_1b, tinyllama_1_1b, gpt2, gpt2_l4_h256) or of an ONNX
    /// export with past_key_values.* inputs.
    #[arg(long, requires = "past", conflicts_with_all = ["seq", "resolution"])]
    pub decode: bool,
    /// Tokens already in the key-value cache of a decode step, 1 to 1048576 (with --decode).
    #[arg(long, value_name = "TOKENS", requires = "decode", value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
    pub past: Option<u64>,
}

impl ModelArgs {
    pub fn load(&self) -> anyhow::Result<Graph> {
        if let (true, Some(past)) = (self.decode, self.past) {
            return Ok(fuselage::load_decode(&self.model, past)?);
        }
        // The library says what does not apply; the program names its flag.
        fuselage::load_model_sized(&self.model, self.resolution, self.seq).map_err(|e| {
            let flag = match e {
                fuselage::Error::ResolutionForFile(_) => Some("--resolution"),
                fuselage::Error::SeqNotText(_) => Some("--seq"),
                _ => None,
            };
            match flag {
                Some(flag) => anyhow::Error::new(e).context(flag),
                None => e.into(),
            }
        })
    }
}

/// A cost model on the command line: the model (a built-in kind or a registered one) and its
/// configuration.
pub struct CostSetting {
    /// The model, uncached.
    pub model: Arc<dyn CostModel>,
    /// Which built-in it is; `None` for a registered downstream model.
    pub kind: Option<CostKind>,
    /// Its family: the model at any configuration (the sweep's).
    pub family: crate::registry::CostFamilyRef,
    /// The accelerator: `--hw`, or β-only at `--buffer` and `--bytes`.
    pub hw: Accelerator,
}

/// Cost-model settings.
#[derive(Debug, Args)]
pub struct CostArgs {
    /// Cost model of the fusion method: lbdf (line-buffer depth-first), brr (row-tiled
    /// buffer-requirement reduction), tiled (loop nests: heads, streamed weights and keys,
    /// fused MLPs and attention), or a name a downstream build registered.
    #[arg(long, value_name = "MODEL")]
    pub fusion: String,
    /// On-chip buffer β: bytes, or with KiB / MiB (256KiB, 2MiB); or give --hw.
    #[arg(long, value_name = "SIZE", required_unless_present = "hw")]
    pub buffer: Option<String>,
    /// Bytes per element, activations and weights alike [default: 1].
    #[arg(long, value_name = "N")]
    pub bytes: Option<String>,
    /// The accelerator: a preset (`fuselage hw list`) or a TOML file. It gives the buffer
    /// (unified or split), the element sizes of weights and activations, and the rates
    /// latency and energy are counted at; it stands in for --buffer and --bytes.
    #[arg(long, value_name = "FILE|PRESET", conflicts_with_all = ["buffer", "bytes"])]
    pub hw: Option<String>,
}

impl CostArgs {
    /// The accelerator they describe: `--hw`, or β-only at `--buffer` and `--bytes`.
    pub fn hardware(&self) -> anyhow::Result<Accelerator> {
        if let Some(spec) = &self.hw {
            return crate::files::hardware("--hw", spec);
        }
        let Some(buffer) = &self.buffer else {
            bail!("give the buffer: --buffer SIZE, or --hw FILE|PRESET");
        };
        let buffer = fuselage::parse_size(buffer).context("--buffer")?;
        let bytes =
            fuselage::parse_size(self.bytes.as_deref().unwrap_or("1")).context("--bytes")?;
        Ok(Accelerator::beta_only(
            CostConfig::new(buffer)?.with_element_bytes(bytes)?,
        ))
    }

    /// The cost model they name, at their configuration.
    pub fn resolve(&self, registry: &Registry) -> anyhow::Result<CostSetting> {
        let family = registry.cost_family(&self.fusion).context("--fusion")?;
        let hw = self.hardware()?;
        Ok(CostSetting {
            model: Arc::from(family.at(&hw.config)),
            // The classifier's commands read the built-in model by kind.
            kind: self.fusion.parse().ok(),
            family,
            hw,
        })
    }

    /// The built-in cost model they name, for the commands that read its classifier.
    pub fn kind(&self) -> anyhow::Result<CostKind> {
        self.fusion
            .parse()
            .with_context(|| "--fusion (the classifier exists for the built-in models only)")
    }
}

/// A network, a cost model and a group of the network.
#[derive(Debug, Args)]
pub struct GroupArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub cost: CostArgs,
    /// The group: comma-separated ONNX node names, or FIRST..LAST.
    #[arg(long, value_name = "NAMES")]
    pub group: String,
}

impl GroupArgs {
    /// The graph, the cost model and the group, checked to be a group of the graph.
    pub fn load(&self, registry: &Registry) -> anyhow::Result<(Graph, CostSetting, NodeSet)> {
        let g = self.model.load()?;
        let cost = self.cost.resolve(registry)?;
        let set = parse_group(&g, &self.group)?;
        Ok((g, cost, set))
    }
}

/// The group `spec` names ([`Graph::parse_group`]: `A,B,C` or `FIRST..LAST`), checked to
/// be a group of `g`.
pub fn parse_group(g: &Graph, spec: &str) -> anyhow::Result<NodeSet> {
    Ok(g.parse_group(spec)?)
}

/// Bytes as the paper's MB (10^6 bytes).
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// The buffer and element sizes, as summaries print them: `β = 128 KiB · b = 1`, or
/// `β_w = 8 KiB, β_a = 100 KiB · b_w = 2, b_a = 2` for split buffers and mixed precisions.
pub fn describe_config(cfg: &CostConfig) -> String {
    use fuselage::cost::OnChipBuffer;
    let buffer = match cfg.buffer() {
        OnChipBuffer::Unified { bytes } => format!("β = {}", human_size(bytes)),
        OnChipBuffer::Split {
            weight_bytes,
            activation_bytes,
        } => format!(
            "β_w = {}, β_a = {}",
            human_size(weight_bytes),
            human_size(activation_bytes)
        ),
    };
    let elements = match cfg.uniform_element_bytes() {
        Some(b) => format!("b = {b}"),
        None => format!(
            "b_w = {}, b_a = {}",
            cfg.weight_element_bytes(),
            cfg.activation_element_bytes()
        ),
    };
    format!("{buffer} · {elements}")
}

/// Bytes as KiB.
pub fn kib(bytes: u64) -> f64 {
    bytes as f64 / 1024.0
}

/// The cost model and configuration a plan file records (`cost_model`, the buffers and the
/// element sizes), each checked as the flags would be; `None` when the file records no cost
/// model (it lists only nodes).
///
/// # Errors
/// An unknown cost model, or a buffer or element size out of its range, naming `origin`.
pub fn recorded_setting(
    file: &PlanFile,
    registry: &Registry,
    origin: &str,
) -> anyhow::Result<Option<Arc<dyn CostModel>>> {
    if file.cost_model.is_empty() {
        return Ok(None);
    }
    let buffer = match (file.weight_buffer_bytes, file.activation_buffer_bytes) {
        (Some(w), Some(a)) => CostConfig::split(w, a),
        _ => CostConfig::new(file.buffer_bytes),
    }
    .with_context(|| format!("{origin}: buffer_bytes"))?;
    let config = buffer
        .with_element_sizes(
            file.weight_element_bytes.unwrap_or(file.element_bytes),
            file.element_bytes,
        )
        .with_context(|| format!("{origin}: element_bytes"))?;
    let family = registry
        .cost_family(&file.cost_model)
        .with_context(|| format!("{origin}: cost_model"))?;
    Ok(Some(Arc::from(family.at(&config))))
}

/// `file` costed again from `g` with `model`: every group's cost, the totals and, where the
/// file names a preset whose configuration is the model's, the latency and energy. Nothing
/// the file says about costs is kept, so a forged `dram_bytes` cannot pass through; its
/// `model` label is (a model's graph name is its file's stem, which an export changes).
///
/// # Errors
/// A plan that is not a partition of `g` (an unknown node, a node missing or listed twice, a
/// cycle between groups), naming `origin`; or what the cost model reports.
pub fn recost(
    g: &Graph,
    file: &PlanFile,
    model: &dyn CostModel,
    origin: &str,
) -> anyhow::Result<PlanFile> {
    let plan = file.to_plan(g).with_context(|| origin.to_string())?;
    g.check_plan(&plan)
        .with_context(|| format!("{origin}: not a plan of {}", g.name()))?;
    let report = evaluate_plan(model, g, &plan)?;
    let mut fresh = PlanFile::from_report(model, g, &plan, &report);
    if !file.model.is_empty() {
        fresh.model.clone_from(&file.model);
    }
    Ok(
        match file
            .hardware
            .as_deref()
            .and_then(Accelerator::preset)
            .filter(|hw| hw.config == *model.config())
        {
            Some(hw) => fresh.with_hardware(&hw, g, &plan, &report),
            None => fresh,
        },
    )
}
