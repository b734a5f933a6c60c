//! # fuselage
//!
//! Explainable operator fusion: split a DNN into fusion groups that fit an accelerator's on-chip
//! buffer, with as little DRAM traffic as possible.
//!
//! This facade re-exports the workspace's crates under one name, and adds [`load_model`] (the
//! "zoo name or ONNX path" rule) and [`Explainers`]:
//!
//! - [`ir`]: the graph, groups and plans;
//! - `onnx` (feature `onnx`): ONNX import through tract;
//! - [`zoo`]: the reference networks, built in code;
//! - [`cost`]: the cost models (LBDF, BRR), the buffer simulator and plan evaluation;
//! - `gnn` (feature `learned`): the burn GNN validity classifier, its data set, training and
//!   shipped checkpoints;
//! - [`explain`]: explainers of why a group does not fit (the `Explainer` trait, baselines);
//! - [`split`] and [`search`]: splitters (random, and explanation-guided), searches and the
//!   exact optimiser;
//! - [`pipeline`]: [`Planner`], which assembles all of the above once and runs it; this
//!   facade adds [`Explainers`], the factory that also makes the learned explainers.
//!
//! The command-line program is the crate `fuselage-cli`; this facade has no CLI dependencies.
//! The paper's experiments (Tables II–V, the budget curves) are the crate `fuselage-reproduce`,
//! a harness over this facade that the program's `reproduce` runs: a compiler that depends on
//! `fuselage` builds neither it nor its plotting.
//!
//! ## Features
//!
//! - `onnx` (off by default; the program turns it on): [`load_model`] imports `.onnx` files
//!   and `fuselage::onnx` is re-exported. It brings tract, the largest dependency and the
//!   longest build; without it a path is refused with [`Error::NoOnnx`], and the zoo, the
//!   cost models, the searches and the explainers work as they do with it.
//! - `learned` (on by default; `fuselage-reproduce` needs it): `gnn` and the learned
//!   explainers in [`Explainers`]. It brings burn. Without it, [`Explainers`] makes the `cost`
//!   and `random` explainers and refuses the learned kinds in one line. With neither feature
//!   the facade builds in about a fifth of the time (`fuselage-cli --no-default-features`,
//!   the README's first command).
//!
//! ```
//! let g = fuselage::load_model("resnet18", None)?;
//! assert_eq!(g.len(), 49);
//! # Ok::<(), fuselage::Error>(())
//! ```
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub use fuselage_cost as cost;
pub use fuselage_explain as explain;
#[cfg(feature = "learned")]
pub use fuselage_gnn as gnn;
pub use fuselage_ir as ir;
#[cfg(feature = "onnx")]
pub use fuselage_onnx as onnx;
pub use fuselage_pipeline as pipeline;
pub use fuselage_report as report;
pub use fuselage_search as search;
pub use fuselage_split as split;
pub use fuselage_zoo as zoo;

pub use fuselage_pipeline::{Outcome, Planner, Reference};

#[cfg(feature = "learned")]
use fuselage_explain::ExplainError;
#[cfg(feature = "learned")]
use fuselage_explain::learned::{GnnExplainer, GnnExplainerConfig, shipped_pg, shipped_rg};
use fuselage_explain::{Explainer, ExplainerKind};
#[cfg(feature = "learned")]
use fuselage_gnn::{FeatureSet, default_device, shipped_from};
use fuselage_ir::Graph;
use fuselage_pipeline::{Baselines, ExplainerFactory, ExplainerRequest, PipelineError};
use std::path::Path;

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The ONNX file could not be imported.
    #[cfg(feature = "onnx")]
    #[error(transparent)]
    Onnx(#[from] fuselage_onnx::OnnxError),
    /// A file was named, and this build has no ONNX import (the `onnx` feature is off).
    #[error(
        "{0}: this build of fuselage has no ONNX import (the facade's `onnx` feature, which fuselage-cli's default features turn on)"
    )]
    NoOnnx(String),
    /// The zoo has no such network, or could not build it.
    #[error(transparent)]
    Zoo(#[from] fuselage_zoo::ZooError),
    /// A buffer or element size that is not a size.
    #[error(
        "`{0}` is not a size: give bytes (131072) or a number with KiB, MiB or GiB (128KiB, 2MiB)"
    )]
    BadSize(String),
    /// A name that is no kind of its family (cost model, search, explainer, ...).
    #[error(transparent)]
    Kind(#[from] fuselage_ir::UnknownKind),
    /// The cost configuration was refused (a zero size).
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// The GNN classifier could not be loaded or run.
    #[cfg(feature = "learned")]
    #[error(transparent)]
    Gnn(#[from] fuselage_gnn::GnnError),
    /// An explainer failed, or its checkpoint could not be loaded.
    #[error(transparent)]
    Explain(#[from] fuselage_explain::ExplainError),
    /// A search failed.
    #[error(transparent)]
    Search(#[from] fuselage_search::SearchError),
    /// The pipeline could not be assembled or run.
    #[error(transparent)]
    Pipeline(#[from] fuselage_pipeline::PipelineError),
    /// A resolution was given for an ONNX file, whose input shape is its own.
    #[error("a resolution applies to zoo networks; `{0}` is an ONNX file with its own input shape")]
    ResolutionForFile(String),
    /// A sequence length was given for an ONNX file, or for a zoo network that takes images.
    #[error(
        "a sequence length applies to the zoo's text transformers (bert_*, gpt2*, *llama*); `{0}` is not one"
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
/// `Error::Onnx` naming the file, node and op (feature `onnx`; [`Error::NoOnnx`] without it);
/// [`Error::Zoo`] listing the valid names.
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
        #[cfg(feature = "onnx")]
        return Ok(fuselage_onnx::import(spec)?);
        #[cfg(not(feature = "onnx"))]
        return Err(Error::NoOnnx(spec.to_string()));
    }
    Ok(match resolution {
        Some(r) => fuselage_zoo::build_at(spec, r)?,
        None => fuselage_zoo::build(spec)?,
    })
}

/// One decode step of `spec` against a key-value cache of `past` tokens per layer: an ONNX
/// export with `past_key_values.*` inputs when [`is_path`] says so
/// ([`Importer::with_past`](fuselage_onnx::Importer::with_past) binds its shapes: feature
/// `onnx`), else a zoo decoder ([`fuselage_zoo::build_decode`]: the Llama presets and GPT-2).
///
/// # Errors
/// As [`load_model`]; a file whose cache does not take `past` is refused naming its input.
pub fn load_decode(spec: &str, past: u64) -> Result<Graph, Error> {
    if is_path(spec) {
        #[cfg(feature = "onnx")]
        return Ok(fuselage_onnx::Importer::new()
            .with_past(past)
            .import(spec)?);
        #[cfg(not(feature = "onnx"))]
        return Err(Error::NoOnnx(spec.to_string()));
    }
    Ok(fuselage_zoo::build_decode(spec, past)?)
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

/// The explainer factory of the whole workspace: every [`ExplainerKind`], the learned ones
/// over the shipped classifier of the pipeline's built-in cost model (and, for PG and RG,
/// their shipped checkpoints): the broad classifier by default, the paper's with
/// `features: FeatureSet::Paper` (the reproduction of the paper's tables). Give it to a [`Planner`] with
/// [`Planner::explainers`](fuselage_pipeline::Planner::explainers).
///
/// ```
/// use fuselage::cost::{CostConfig, CostKind};
/// use fuselage::explain::ExplainerKind;
/// use fuselage::{Explainers, Planner, Reference};
/// let g = fuselage::load_model("resnet18", None)?;
/// let explainers = Explainers::default();
/// let out = Planner::new(&g, CostKind::Lbdf, CostConfig::kib(128)?)
///     .explainers(&explainers)
///     .explainer(ExplainerKind::Pg)
///     .budget(20)
///     .reference(Reference::Off)
///     .run()?;
/// assert_eq!(out.names.explainer.as_deref(), Some("pg"));
/// assert!(out.report.is_valid());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "learned")]
#[derive(Copy, Clone, Debug)]
pub struct Explainers {
    /// GNNExplainer's settings (the reproduction runs fewer steps than the default).
    pub gnne: GnnExplainerConfig,
    /// Which shipped classifiers (and explainer checkpoints) the learned explainers use.
    pub features: FeatureSet,
}

#[cfg(feature = "learned")]
impl Default for Explainers {
    /// GNNExplainer's defaults over the broad classifiers.
    fn default() -> Self {
        Explainers {
            gnne: GnnExplainerConfig::default(),
            features: FeatureSet::Broad,
        }
    }
}

impl ExplainerFactory for Explainers {
    fn explainer(
        &self,
        kind: ExplainerKind,
        request: &ExplainerRequest<'_>,
    ) -> Result<Box<dyn Explainer>, PipelineError> {
        if !kind.is_learned() {
            return Baselines.explainer(kind, request);
        }
        self.learned(kind, request)
    }
}

#[cfg(feature = "learned")]
impl Explainers {
    /// GNNExplainer, PG or RG over the shipped classifier of the request's built-in model.
    fn learned(
        &self,
        kind: ExplainerKind,
        request: &ExplainerRequest<'_>,
    ) -> Result<Box<dyn Explainer>, PipelineError> {
        let cost = request
            .cost_kind
            .ok_or_else(|| PipelineError::ExplainerUnavailable {
                kind,
                why: "the learned explainers read the classifier of a built-in cost model (lbdf, brr), and this pipeline runs a cost model of its own".into(),
            })?;
        if let fuselage_cost::OnChipBuffer::Split { .. } = request.model.config().buffer() {
            return Err(PipelineError::ExplainerUnavailable {
                kind,
                why: "the shipped classifiers were trained on one unified buffer; with split buffers use the cost or random explainer".into(),
            });
        }
        let clf =
            shipped_from(cost, self.features, &default_device()).map_err(ExplainError::from)?;
        Ok(match kind {
            ExplainerKind::Pg => Box::new(shipped_pg(clf)?),
            ExplainerKind::Rg => Box::new(shipped_rg(clf)?),
            _ => Box::new(GnnExplainer::with_config(clf, self.gnne)),
        })
    }
}

/// The explainer factory of a build without the `learned` feature: the baselines (`cost`,
/// `random`); a learned kind is refused with a line that says how to get it.
///
/// ```
/// # #[cfg(not(feature = "learned"))] {
/// use fuselage::cost::{CostConfig, CostKind};
/// use fuselage::explain::ExplainerKind;
/// use fuselage::{Explainers, Planner, Reference};
/// let g = fuselage::load_model("resnet18", None).unwrap();
/// let run = Planner::new(&g, CostKind::Lbdf, CostConfig::kib(128).unwrap())
///     .explainers(&Explainers::default())
///     .explainer(ExplainerKind::Pg)
///     .budget(20)
///     .reference(Reference::Off)
///     .run();
/// assert!(run.unwrap_err().to_string().contains("`learned` feature"));
/// # }
/// ```
#[cfg(not(feature = "learned"))]
#[derive(Copy, Clone, Debug, Default)]
pub struct Explainers {
    /// Fields may come; build it with `Explainers::default()`.
    _private: (),
}

#[cfg(not(feature = "learned"))]
impl Explainers {
    /// A learned kind, refused: this build has no GNN.
    fn learned(
        &self,
        kind: ExplainerKind,
        _request: &ExplainerRequest<'_>,
    ) -> Result<Box<dyn Explainer>, PipelineError> {
        Err(PipelineError::ExplainerUnavailable {
            kind,
            why: "this build of fuselage has no learned explainers (build it with its `learned` feature, which fuselage-cli's default features turn on)".into(),
        })
    }
}
