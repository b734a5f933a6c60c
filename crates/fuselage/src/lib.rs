//! # fuselage
//!
//! Explainable operator fusion: split a DNN into fusion groups that fit an accelerator's on-chip
//! buffer, with as little DRAM traffic as possible.
//!
//! This facade re-exports the workspace's crates under one name, and adds [`load_model`], the
//! "zoo name or ONNX path" rule the command-line program uses:
//!
//! - [`ir`]: the graph, groups and plans;
//! - [`onnx`]: ONNX import through tract;
//! - [`zoo`]: the reference networks, built in code;
//! - [`cost`]: the cost models (LBDF, BRR), the buffer simulator and plan evaluation;
//! - [`gnn`]: the burn GNN validity classifier, its data set, training and shipped checkpoints;
//! - [`explain`]: explainers of why a group does not fit (the `Explainer` trait, baselines);
//! - [`reproduce`]: the paper's Tables II–V and budget curves, rerun ([`reproduce::run`]);
//! - [`split`] and [`search`]: splitters (random, and explanation-guided), searches and the
//!   exact optimiser.
//!
//! ```
//! let g = fuselage::load_model("resnet18", None)?;
//! assert_eq!(g.len(), 49);
//! # Ok::<(), fuselage::Error>(())
//! ```
#![warn(missing_docs)]

pub use fuselage_cost as cost;
pub use fuselage_explain as explain;
pub use fuselage_gnn as gnn;
pub use fuselage_ir as ir;
pub use fuselage_onnx as onnx;
pub use fuselage_search as search;
pub use fuselage_split as split;
pub use fuselage_zoo as zoo;

pub mod reproduce;

use fuselage_cost::{Brr, CostConfig, CostModel, Lbdf};
use fuselage_ir::Graph;
use std::path::Path;

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ONNX file could not be imported.
    #[error(transparent)]
    Onnx(#[from] fuselage_onnx::OnnxError),
    /// The zoo has no such network, or could not build it.
    #[error(transparent)]
    Zoo(#[from] fuselage_zoo::ZooError),
    /// A buffer or element size that is not a size.
    #[error(
        "`{0}` is not a size: give bytes (131072) or a number with KiB, MiB or GiB (128KiB, 2MiB)"
    )]
    BadSize(String),
    /// A cost-model name that is not known.
    #[error("unknown cost model `{0}`; valid: lbdf, brr")]
    UnknownCostModel(String),
    /// The cost configuration was refused (a zero size).
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// An explainer name that is not known.
    #[error("unknown explainer `{0}`; valid: gnne, pg, rg, cost, random")]
    UnknownExplainer(String),
    /// The GNN classifier could not be loaded or run.
    #[error(transparent)]
    Gnn(#[from] fuselage_gnn::GnnError),
    /// An explainer failed, or its checkpoint could not be loaded.
    #[error(transparent)]
    Explain(#[from] fuselage_explain::ExplainError),
    /// A search failed.
    #[error(transparent)]
    Search(#[from] fuselage_search::SearchError),
    /// A reproduction run failed (the message names the row and run).
    #[error("reproduction: {0}")]
    Reproduce(String),
    /// A resolution was given for an ONNX file, whose input shape is its own.
    #[error("--resolution applies to zoo networks; `{0}` is an ONNX file with its own input shape")]
    ResolutionForFile(String),
    /// A sequence length was given for an ONNX file, or for a zoo network that takes images.
    #[error(
        "--seq applies to the zoo's text transformers (bert_*, gpt2*, *llama*); `{0}` is not one"
    )]
    SeqNotText(String),
}

/// Whether `spec` names a file rather than a zoo network: it ends in `.onnx`, contains a path
/// separator, or is an existing file.
pub fn is_path(spec: &str) -> bool {
    spec.ends_with(".onnx")
        || spec.contains('/')
        || spec.contains('\\')
        || Path::new(spec).is_file()
}

/// Loads `spec`: an ONNX file when [`is_path`] says so, else a zoo network, at `resolution`
/// (square input) or the network's default.
///
/// # Errors
/// [`Error::Onnx`] naming the file, node and op; [`Error::Zoo`] listing the valid names.
pub fn load_model(spec: &str, resolution: Option<u64>) -> Result<Graph, Error> {
    load_model_sized(spec, resolution, None)
}

/// [`load_model`] with a sequence length for the zoo's text transformers (`gpt2` at 1,024
/// tokens is `load_model_sized("gpt2", None, Some(1024))`).
///
/// # Errors
/// As [`load_model`], and [`Error::SeqNotText`] for `seq` with a file or an image network.
pub fn load_model_sized(
    spec: &str,
    resolution: Option<u64>,
    seq: Option<u64>,
) -> Result<Graph, Error> {
    if let Some(seq) = seq {
        if is_path(spec) || !fuselage_zoo::is_text(spec) {
            return Err(Error::SeqNotText(spec.to_string()));
        }
        if let Some(r) = resolution {
            // A text model has no resolution: the zoo says so.
            return Ok(fuselage_zoo::build_at(spec, r)?);
        }
        return Ok(fuselage_zoo::build_seq(spec, seq)?);
    }
    if is_path(spec) {
        if resolution.is_some() {
            return Err(Error::ResolutionForFile(spec.to_string()));
        }
        return Ok(fuselage_onnx::import(spec)?);
    }
    Ok(match resolution {
        Some(r) => fuselage_zoo::build_at(spec, r)?,
        None => fuselage_zoo::build(spec)?,
    })
}

/// Parses a size in bytes: plain digits (`131072`), or digits with a binary unit, `KiB`,
/// `MiB` or `GiB` (case-insensitive, optional `B`): `128KiB` is 131,072 bytes, `2MiB`
/// 2,097,152.
///
/// # Errors
/// [`Error::BadSize`] for anything else, including an overflow.
///
/// # Example
/// ```
/// assert_eq!(fuselage::parse_size("256KiB")?, 262_144);
/// assert_eq!(fuselage::parse_size("2MiB")?, 2_097_152);
/// assert_eq!(fuselage::parse_size("1000")?, 1000);
/// assert!(fuselage::parse_size("12 parsecs").is_err());
/// # Ok::<(), fuselage::Error>(())
/// ```
pub fn parse_size(text: &str) -> Result<u64, Error> {
    let bad = || Error::BadSize(text.to_string());
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kib" | "ki" => 1 << 10,
        "mib" | "mi" => 1 << 20,
        "gib" | "gi" => 1 << 30,
        _ => return Err(bad()),
    };
    n.checked_mul(scale).ok_or_else(bad)
}

/// The cost model called `name` (`lbdf` or `brr`) with a `buffer_bytes` buffer and
/// `element_bytes`-byte elements.
///
/// # Errors
/// [`Error::UnknownCostModel`]; [`Error::Cost`] for a size of 0.
pub fn cost_model(
    name: &str,
    buffer_bytes: u64,
    element_bytes: u64,
) -> Result<Box<dyn CostModel>, Error> {
    let cfg = CostConfig::new(buffer_bytes)?.with_element_bytes(element_bytes)?;
    Ok(match name {
        "lbdf" => Box::new(Lbdf::new(cfg)),
        "brr" => Box::new(Brr::new(cfg)),
        other => return Err(Error::UnknownCostModel(other.to_string())),
    })
}

/// The explainer `name` (`gnne`, `pg`, `rg`, `cost`, `random`) for the cost model `fusion`
/// (`lbdf`, `brr`): the learned ones over the shipped classifier of that cost model, `cost`
/// over `model`.
///
/// # Errors
/// [`Error::UnknownExplainer`]; the classifier's or the explainer's checkpoint errors.
pub fn make_explainer(
    name: &str,
    fusion: &str,
    model: std::sync::Arc<dyn CostModel>,
) -> Result<Box<dyn fuselage_explain::Explainer>, Error> {
    use fuselage_explain::learned::{GnnExplainer, shipped_pg, shipped_rg};
    use fuselage_explain::{CostExplainer, RandomExplainer};
    use fuselage_gnn::{CostKind, default_device, shipped};
    let kind: CostKind = fusion
        .parse()
        .map_err(|_| Error::UnknownCostModel(fusion.into()))?;
    let clf = || shipped(kind, &default_device());
    Ok(match name {
        "gnne" => Box::new(GnnExplainer::new(clf()?)),
        "pg" => Box::new(shipped_pg(clf()?)?),
        "rg" => Box::new(shipped_rg(clf()?)?),
        "cost" => Box::new(CostExplainer::new(model)),
        "random" => Box::new(RandomExplainer::default()),
        other => return Err(Error::UnknownExplainer(other.to_string())),
    })
}
