//! Checkpoints: saving and loading trained classifiers, and the two shipped with the crate.
//!
//! A checkpoint is two files side by side: `<stem>.bpk`, the weights as a burnpack record
//! (burn's own format, f32, about 0.5 MB), and `<stem>.json`, a [`CheckpointMeta`] with the
//! network's shape and the numbers it was shipped with. The LBDF and BRR checkpoints under
//! `crates/fuselage-gnn/checkpoints/` are compiled into the crate (`include_bytes!`), so
//! [`shipped`] needs no file at run time.

use crate::error::{GnnError, Result};
use crate::model::{GnnClassifier, GnnConfig};
use burn::prelude::*;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use fuselage_cost::CostKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What a checkpoint says about itself.
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

const LBDF_WEIGHTS: &[u8] = include_bytes!("../checkpoints/lbdf.bpk");
const LBDF_META: &str = include_str!("../checkpoints/lbdf.json");
const BRR_WEIGHTS: &[u8] = include_bytes!("../checkpoints/brr.bpk");
const BRR_META: &str = include_str!("../checkpoints/brr.json");

/// The weights of a classifier as burnpack bytes.
///
/// # Errors
/// [`GnnError::Checkpoint`] if burn cannot serialise the record.
pub fn weights_to_bytes(clf: &GnnClassifier) -> Result<Vec<u8>> {
    let bytes = clf
        .model
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| GnnError::Checkpoint(e.to_string()))?;
    Ok(bytes.to_vec())
}

/// A classifier from burnpack weight bytes and its metadata, on `device`.
///
/// # Errors
/// [`GnnError::Checkpoint`] for bytes that are not a record of a network of `meta.config`'s
/// shape.
pub fn classifier_from_bytes(
    weights: &[u8],
    meta: &CheckpointMeta,
    device: &Device,
) -> Result<GnnClassifier> {
    if weights.is_empty() {
        return Err(GnnError::Checkpoint(format!(
            "no weights for the {} classifier (not trained yet?)",
            meta.cost_model
        )));
    }
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(weights.to_vec()))
        .map_err(|e| GnnError::Checkpoint(e.to_string()))?;
    let model = meta
        .config
        .init(device)
        .try_load_record(record)
        .map_err(|e| GnnError::Checkpoint(e.to_string()))?;
    // A corrupted file can still decode: NaN or infinite weights would answer NaN, which reads
    // as "valid". Refuse them here.
    let mut finite = FiniteCheck::default();
    model.visit(&mut finite);
    if finite.bad > 0 {
        return Err(GnnError::Checkpoint(format!(
            "{} of the {} classifier's {} weights are not finite (a corrupted checkpoint)",
            finite.bad, meta.cost_model, finite.seen
        )));
    }
    Ok(GnnClassifier::new(
        meta.config,
        model,
        device.clone(),
        meta.cost_model,
    ))
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

/// Saves `clf` as `<stem>.bpk` and `<stem>.json`, with `metrics` in the metadata (plus its
/// [`probe`] predictions under `probe`).
///
/// # Errors
/// [`GnnError::Io`], [`GnnError::Checkpoint`].
#[allow(
    clippy::expect_used,
    reason = "serde_json serialises these plain structs and floats (NaN becomes null) without error"
)]
pub fn save_checkpoint(
    clf: &GnnClassifier,
    stem: impl AsRef<Path>,
    metrics: serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    let stem = stem.as_ref();
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
    let w = with_ext(stem, "bpk");
    std::fs::write(&w, weights_to_bytes(clf)?).map_err(|e| GnnError::io(&w, e))?;
    let m = with_ext(stem, "json");
    let json = serde_json::to_string_pretty(&meta).expect("metadata serialises") + "\n";
    std::fs::write(&m, json).map_err(|e| GnnError::io(&m, e))
}

fn parse_meta(json: &str, path: &str) -> Result<CheckpointMeta> {
    serde_json::from_str(json).map_err(|e| GnnError::Parse {
        path: path.to_string(),
        line: e.line(),
        message: e.to_string(),
    })
}

/// Loads a checkpoint written by [`save_checkpoint`] onto `device`.
///
/// # Errors
/// [`GnnError::Io`], [`GnnError::Parse`], [`GnnError::Checkpoint`].
pub fn load_checkpoint(stem: impl AsRef<Path>, device: &Device) -> Result<GnnClassifier> {
    let stem = stem.as_ref();
    let m = with_ext(stem, "json");
    let json = std::fs::read_to_string(&m).map_err(|e| GnnError::io(&m, e))?;
    let meta = parse_meta(&json, &m.display().to_string())?;
    let w = with_ext(stem, "bpk");
    let weights = std::fs::read(&w).map_err(|e| GnnError::io(&w, e))?;
    classifier_from_bytes(&weights, &meta, device)
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
    clf.invalid_probabilities(&g, &groups, PROBE_BETA)
}

/// The metadata of the checkpoint shipped for `kind`.
///
/// # Errors
/// [`GnnError::Parse`] if the shipped file is malformed.
pub fn shipped_meta(kind: CostKind) -> Result<CheckpointMeta> {
    let (json, name) = match kind {
        CostKind::Lbdf => (LBDF_META, "checkpoints/lbdf.json"),
        CostKind::Brr => (BRR_META, "checkpoints/brr.json"),
    };
    parse_meta(json, name)
}

/// The classifier shipped with the crate for `kind`, on `device`.
///
/// # Errors
/// [`GnnError::Checkpoint`] if the crate was built without trained weights.
///
/// # Example
/// ```
/// use fuselage_gnn::{CostKind, ValidityModel, default_device, shipped};
/// use fuselage_ir::NodeSet;
/// let clf = shipped(CostKind::Lbdf, &default_device())?;
/// let g = fuselage_zoo::build("resnet50")?;
/// let whole = NodeSet::full(g.len());
/// assert!(clf.is_invalid(&g, &whole, 128 * 1024)?);
/// # Ok::<(), fuselage_gnn::GnnError>(())
/// ```
pub fn shipped(kind: CostKind, device: &Device) -> Result<GnnClassifier> {
    let weights = match kind {
        CostKind::Lbdf => LBDF_WEIGHTS,
        CostKind::Brr => BRR_WEIGHTS,
    };
    classifier_from_bytes(weights, &shipped_meta(kind)?, device)
}
