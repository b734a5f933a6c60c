//! Checkpoints: one generic file pair for any trained module ([`Checkpoint`]), the classifier's
//! on top of it, and the two classifiers shipped with the crate.
//!
//! ## Design
//!
//! A checkpoint is two files side by side: `<stem>.bpk`, a module's weights as a burnpack
//! record (burn's own format, f32), and `<stem>.json`, metadata of the caller's type
//! (pretty-printed JSON and a newline). [`Checkpoint<Meta>`] reads and writes the pair for any
//! `Meta: Serialize + DeserializeOwned`; [`Checkpoint::module`] loads the weights into a module
//! of the right shape and refuses what would answer NaN. The classifier's checkpoints carry a
//! [`CheckpointMeta`] (its shape and the numbers it was shipped with); the explainers of
//! `fuselage-explain` save theirs through the same type with their own metadata. So there is
//! one reader, one writer and one set of error messages, each naming its file.
//!
//! The metadata file is read before the weights, so a missing checkpoint is reported by its
//! `.json`. The checkpoints under `crates/fuselage-gnn/checkpoints/` are compiled into the
//! crate (`include_bytes!`), so [`shipped`] needs no file at run time. There are two per cost
//! model, one per [`FeatureSet`]: `lbdf`/`brr` read the paper's features and learnt from its
//! nine CNNs (the paper's tables are reproduced with them); `lbdf_broad`/`brr_broad` read the
//! broad features and learnt from CNNs, transformers and post-2020 CNNs. [`shipped`] gives
//! the broad ones; [`shipped_from`] either.

use crate::error::{GnnError, Result};
use crate::features::FeatureSet;
use crate::model::{GnnClassifier, GnnConfig};
use burn::prelude::*;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use fuselage_cost::CostKind;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A trained module's weights and what it says about itself: the file pair `<stem>.bpk` and
/// `<stem>.json` (module docs).
///
/// # Example
/// A module downstream saved with its own metadata, and loaded back:
/// ```
/// use burn::nn::{Linear, LinearConfig};
/// use fuselage_gnn::{Checkpoint, default_device};
///
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Meta { width: usize }
///
/// let device = default_device();
/// let layer: Linear = LinearConfig::new(4, 2).init(&device);
/// let stem = std::env::temp_dir().join(format!("fuselage-doc-ck-{}", std::process::id()));
/// Checkpoint::new(&layer, Meta { width: 4 })?.save(&stem)?;
/// let back = Checkpoint::<Meta>::load(&stem)?;
/// let saved = back.weights.clone();
/// let fresh: Linear = LinearConfig::new(back.meta.width, 2).init(&device);
/// let loaded = back.module(fresh, "the doc layer")?;
/// assert_eq!(Checkpoint::new(&loaded, ())?.weights, saved);
/// # Ok::<(), fuselage_gnn::GnnError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint<Meta> {
    /// The metadata, `<stem>.json`.
    pub meta: Meta,
    /// The weights as a burnpack record, `<stem>.bpk`.
    pub weights: Vec<u8>,
}

impl<Meta: Serialize + DeserializeOwned> Checkpoint<Meta> {
    /// `module`'s weights with `meta`.
    ///
    /// # Errors
    /// [`GnnError::Checkpoint`] if burn cannot serialise the record.
    pub fn new<M: Module>(module: &M, meta: Meta) -> Result<Self> {
        Ok(Checkpoint {
            meta,
            weights: module_to_bytes(module)?,
        })
    }

    /// A checkpoint from its weights and the text of its metadata; `path` names the metadata
    /// in errors (a shipped checkpoint is compiled in, so it is not read from a file).
    ///
    /// # Errors
    /// [`GnnError::Parse`] for metadata that is not a `Meta`.
    pub fn from_parts(weights: &[u8], json: &str, path: &str) -> Result<Self> {
        Ok(Checkpoint {
            meta: parse_json(json, path)?,
            weights: weights.to_vec(),
        })
    }

    /// Writes `<stem>.bpk`, then `<stem>.json` (pretty-printed, with a final newline).
    ///
    /// # Errors
    /// [`GnnError::Io`] naming the file; [`GnnError::Config`] for metadata that JSON cannot
    /// hold (a map with keys that are not strings).
    pub fn save(&self, stem: impl AsRef<Path>) -> Result<()> {
        let stem = stem.as_ref();
        let w = with_ext(stem, "bpk");
        std::fs::write(&w, &self.weights).map_err(|e| GnnError::io(&w, e))?;
        let m = with_ext(stem, "json");
        let json = serde_json::to_string_pretty(&self.meta)
            .map_err(|e| GnnError::Config(format!("{}: {e}", m.display())))?
            + "\n";
        std::fs::write(&m, json).map_err(|e| GnnError::io(&m, e))
    }

    /// Reads `<stem>.json`, then `<stem>.bpk`.
    ///
    /// # Errors
    /// [`GnnError::Io`] naming the file; [`GnnError::Parse`] for metadata that is not a
    /// `Meta`.
    pub fn load(stem: impl AsRef<Path>) -> Result<Self> {
        let stem = stem.as_ref();
        let m = with_ext(stem, "json");
        let json = std::fs::read_to_string(&m).map_err(|e| GnnError::io(&m, e))?;
        let meta = parse_json(&json, &m.display().to_string())?;
        let w = with_ext(stem, "bpk");
        let weights = std::fs::read(&w).map_err(|e| GnnError::io(&w, e))?;
        Ok(Checkpoint { meta, weights })
    }
}

impl<Meta> Checkpoint<Meta> {
    /// The weights loaded into `init`, a module of the shape they were saved from; `what`
    /// names the module in errors (`the lbdf classifier`).
    ///
    /// # Errors
    /// [`GnnError::Checkpoint`] for no weights, bytes that are not a record of `init`'s shape,
    /// or weights that are not finite (a corrupted file that still decodes).
    pub fn module<M: Module>(self, init: M, what: &str) -> Result<M> {
        module_from_bytes(init, self.weights, what)
    }
}

/// A module's weights as burnpack bytes.
fn module_to_bytes<M: Module>(module: &M) -> Result<Vec<u8>> {
    let bytes = module
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| GnnError::Checkpoint(e.to_string()))?;
    Ok(bytes.to_vec())
}

/// [`Checkpoint::module`].
fn module_from_bytes<M: Module>(init: M, weights: Vec<u8>, what: &str) -> Result<M> {
    if weights.is_empty() {
        return Err(GnnError::Checkpoint(format!(
            "no weights for {what} (not trained yet?)"
        )));
    }
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(weights))
        .map_err(|e| GnnError::Checkpoint(format!("{what}: {e}")))?;
    let module = init
        .try_load_record(record)
        .map_err(|e| GnnError::Checkpoint(format!("{what}: {e}")))?;
    // A corrupted file can still decode: NaN or infinite weights would answer NaN, which a
    // classifier reads as "valid". Refuse them here.
    let mut finite = FiniteCheck::default();
    module.visit(&mut finite);
    if finite.bad > 0 {
        return Err(GnnError::Checkpoint(format!(
            "{} of {what}'s {} weights are not finite (a corrupted checkpoint)",
            finite.bad, finite.seen
        )));
    }
    Ok(module)
}

/// Counts the non-finite entries of every float parameter of a module.
#[derive(Default)]
struct FiniteCheck {
    seen: usize,
    bad: usize,
}

impl burn::module::ModuleVisitor for FiniteCheck {
    fn visit_float<const D: usize>(&mut self, param: &burn::module::Param<Tensor<D>>) {
        let data = param.val().into_data().convert::<f32>();
        match data.as_slice::<f32>() {
            Ok(values) => {
                self.seen += values.len();
                self.bad += values.iter().filter(|v| !v.is_finite()).count();
            }
            // Unreadable data is as bad as a NaN.
            Err(_) => self.bad += 1,
        }
    }
}

fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

fn parse_json<T: DeserializeOwned>(json: &str, path: &str) -> Result<T> {
    serde_json::from_str(json).map_err(|e| GnnError::Parse {
        path: path.to_string(),
        line: e.line(),
        message: e.to_string(),
    })
}

/// What a classifier checkpoint says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// The cost model the classifier imitates (`lbdf`, `brr` in the file).
    pub cost_model: CostKind,
    /// The network's shape.
    pub config: GnnConfig,
    /// Free-form numbers recorded at training time (test accuracy, F1, ...).
    #[serde(default)]
    pub metrics: serde_json::Map<String, serde_json::Value>,
}

/// A shipped checkpoint: its weights, its metadata and the metadata's name.
type Shipped = (&'static [u8], &'static str, &'static str);

const LBDF: Shipped = (
    include_bytes!("../checkpoints/lbdf.bpk"),
    include_str!("../checkpoints/lbdf.json"),
    "checkpoints/lbdf.json",
);
const BRR: Shipped = (
    include_bytes!("../checkpoints/brr.bpk"),
    include_str!("../checkpoints/brr.json"),
    "checkpoints/brr.json",
);
const LBDF_BROAD: Shipped = (
    include_bytes!("../checkpoints/lbdf_broad.bpk"),
    include_str!("../checkpoints/lbdf_broad.json"),
    "checkpoints/lbdf_broad.json",
);
const BRR_BROAD: Shipped = (
    include_bytes!("../checkpoints/brr_broad.bpk"),
    include_str!("../checkpoints/brr_broad.json"),
    "checkpoints/brr_broad.json",
);

/// The weights of a classifier as burnpack bytes.
///
/// # Errors
/// [`GnnError::Checkpoint`] if burn cannot serialise the record.
pub fn weights_to_bytes(clf: &GnnClassifier) -> Result<Vec<u8>> {
    module_to_bytes(&clf.model)
}

/// A classifier from burnpack weight bytes and its metadata, on `device`.
///
/// # Errors
/// [`GnnError::Checkpoint`] for bytes that are not a record of a network of `meta.config`'s
/// shape, or whose weights are not finite.
pub fn classifier_from_bytes(
    weights: &[u8],
    meta: &CheckpointMeta,
    device: &Device,
) -> Result<GnnClassifier> {
    classifier(
        Checkpoint {
            meta: meta.clone(),
            weights: weights.to_vec(),
        },
        device,
    )
}

fn classifier(ck: Checkpoint<CheckpointMeta>, device: &Device) -> Result<GnnClassifier> {
    let (config, kind) = (ck.meta.config, ck.meta.cost_model);
    if kind == CostKind::Tiled {
        return Err(GnnError::Checkpoint(format!(
            "a classifier of `{kind}`: classifiers learn lbdf and brr only"
        )));
    }
    if config.features != config.feature_set.dim() {
        return Err(GnnError::Checkpoint(format!(
            "the {kind} classifier reads {} features, but its feature set `{}` has {}",
            config.features,
            config.feature_set,
            config.feature_set.dim()
        )));
    }
    config
        .check()
        .map_err(|e| GnnError::Checkpoint(format!("the {kind} classifier: {e}")))?;
    // Each parameter takes at least 2 bytes of the weights file: a config that claims more
    // than the file can hold is refused before the network is allocated.
    let need = config.parameters();
    if need > ck.weights.len() as u64 / 2 {
        return Err(GnnError::Checkpoint(format!(
            "the {kind} classifier's config has {need} parameters, more than its {} bytes of weights can hold",
            ck.weights.len()
        )));
    }
    let model = ck.module(config.init(device), &format!("the {kind} classifier"))?;
    Ok(GnnClassifier::new(config, model, device.clone(), kind))
}

/// Saves `clf` as `<stem>.bpk` and `<stem>.json`, with `metrics` in the metadata (plus its
/// [`probe`] predictions under `probe`).
///
/// # Errors
/// [`GnnError::Io`], [`GnnError::Checkpoint`].
#[allow(
    clippy::expect_used,
    reason = "serde_json serialises floats (NaN becomes null) without error"
)]
pub fn save_checkpoint(
    clf: &GnnClassifier,
    stem: impl AsRef<Path>,
    metrics: serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    let mut metrics = metrics;
    metrics.insert(
        "probe".into(),
        serde_json::to_value(probe(clf)?).expect("floats"),
    );
    let meta = CheckpointMeta {
        cost_model: clf.cost_model,
        config: clf.config,
        metrics,
    };
    Checkpoint::new(&clf.model, meta)?.save(stem)
}

/// Loads a checkpoint written by [`save_checkpoint`] onto `device`.
///
/// # Errors
/// [`GnnError::Io`], [`GnnError::Parse`], [`GnnError::Checkpoint`].
pub fn load_checkpoint(stem: impl AsRef<Path>, device: &Device) -> Result<GnnClassifier> {
    classifier(Checkpoint::load(stem)?, device)
}

/// β of the reference probe, bytes.
pub const PROBE_BETA: u64 = 256 * 1024;

/// The probe groups a checkpoint records its own predictions on: 16 seeded random connected
/// groups of 1 to 16 nodes of `resnet18`, at [`PROBE_BETA`]. Loading a checkpoint and
/// predicting the probe must give back the recorded probabilities.
///
/// # Errors
/// [`GnnError::Zoo`] (never, for a correct zoo).
pub fn probe_groups() -> Result<(fuselage_ir::Graph, Vec<fuselage_ir::NodeSet>)> {
    use rand::SeedableRng;
    let g = fuselage_zoo::build("resnet18")?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let groups = (1..=16)
        .map(|n| fuselage_ir::sample::random_group(&g, n, &mut rng))
        .collect();
    Ok((g, groups))
}

/// The classifier's probabilities on the [`probe_groups`], as recorded in checkpoint metadata
/// under `probe`.
///
/// # Errors
/// As [`ValidityModel::invalid_probabilities`](crate::ValidityModel::invalid_probabilities).
pub fn probe(clf: &GnnClassifier) -> Result<Vec<f32>> {
    use crate::model::ValidityModel;
    let (g, groups) = probe_groups()?;
    // The probe's setting: a unified buffer of PROBE_BETA, 1-byte elements.
    clf.invalid_probabilities(&g, &groups, &fuselage_cost::CostConfig::new(PROBE_BETA)?)
}

/// The metadata of the checkpoint shipped for `kind` over features `set`.
///
/// # Errors
/// [`GnnError::Parse`] if the shipped file is malformed; [`GnnError::Unlearned`] for
/// `tiled`, which no classifier learns.
pub fn shipped_meta(kind: CostKind, set: FeatureSet) -> Result<CheckpointMeta> {
    let (_, json, name) = shipped_files(kind, set)?;
    parse_json(json, name)
}

/// The file stem (under `checkpoints/`) of the checkpoint shipped for `kind` over `set`:
/// `lbdf`, `brr`, `lbdf_broad`, `brr_broad`.
pub fn shipped_stem(kind: CostKind, set: FeatureSet) -> String {
    match set {
        FeatureSet::Paper => kind.name().to_string(),
        FeatureSet::Broad => format!("{}_broad", kind.name()),
    }
}

fn shipped_files(kind: CostKind, set: FeatureSet) -> Result<Shipped> {
    Ok(match (kind, set) {
        (CostKind::Lbdf, FeatureSet::Paper) => LBDF,
        (CostKind::Brr, FeatureSet::Paper) => BRR,
        (CostKind::Lbdf, FeatureSet::Broad) => LBDF_BROAD,
        (CostKind::Brr, FeatureSet::Broad) => BRR_BROAD,
        (CostKind::Tiled, _) => return Err(GnnError::Unlearned(kind)),
    })
}

/// The classifier shipped for `kind` over features `set`, on `device`: the paper's
/// ([`FeatureSet::Paper`], what the reproduction of the paper's tables runs) or the broad one.
///
/// # Errors
/// As [`shipped`].
pub fn shipped_from(kind: CostKind, set: FeatureSet, device: &Device) -> Result<GnnClassifier> {
    let (weights, json, name) = shipped_files(kind, set)?;
    classifier(Checkpoint::from_parts(weights, json, name)?, device)
}

/// The classifier shipped with the crate for `kind`, on `device`: the broad one, trained on
/// CNNs, transformers and post-2020 CNNs ([`shipped_from`] for the paper's).
///
/// # Errors
/// [`GnnError::Checkpoint`] if the crate was built without trained weights.
///
/// # Example
/// ```
/// use fuselage_gnn::{CostConfig, CostKind, ValidityModel, default_device, shipped};
/// use fuselage_ir::NodeSet;
/// let clf = shipped(CostKind::Lbdf, &default_device())?;
/// let g = fuselage_zoo::build("resnet50")?;
/// let whole = NodeSet::full(g.len());
/// assert!(clf.is_invalid(&g, &whole, &CostConfig::kib(128)?)?);
/// # Ok::<(), fuselage_gnn::GnnError>(())
/// ```
pub fn shipped(kind: CostKind, device: &Device) -> Result<GnnClassifier> {
    shipped_from(kind, FeatureSet::Broad, device)
}
