//! Saving and loading the trained explainers (PG, RG), and the ones shipped with the crate.
//!
//! ## Design
//!
//! A checkpoint is `fuselage-gnn`'s generic file pair ([`Checkpoint`]): `<stem>.bpk`, the
//! explainer's network as a burnpack record, and `<stem>.json`, an [`ExplainerMeta`] (which
//! explainer, for which classifier, its settings, its training report and the scores it gave a
//! fixed probe set, so that a load can be checked to reproduce them). The classifier's
//! checkpoints are the same pair with other metadata, so both crates share one reader and one
//! writer.
//!
//! PG and RG differ only in their network and settings. Each says what it is through
//! [`Trained`]; [`save`], [`load`] and [`shipped`] are written once over it. The shipped
//! checkpoints under `crates/fuselage-explain/checkpoints/` are compiled into the crate: one
//! per explainer, cost model and classifier feature set (`pg_lbdf` explains the paper's LBDF
//! classifier, `pg_lbdf_broad` the broad one). An explainer reads its classifier's node
//! embeddings, so [`shipped`] picks the one trained over the classifier it is given.

use super::probe_scores;
use crate::ExplainerKind;
use crate::error::{ExplainError, Result};
use burn::module::Module;
use burn::prelude::Device;
use fuselage_gnn::{Checkpoint, CostKind, ExplainableModel, FeatureSet, GnnError, GroupGraph};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// What an explainer checkpoint says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplainerMeta {
    /// `pg` or `rg`.
    pub explainer: ExplainerKind,
    /// The cost model of the classifier it explains.
    pub cost_model: CostKind,
    /// The feature set of the classifier it explains. Written only when broad; a checkpoint
    /// without it explains a paper classifier.
    #[serde(
        default = "FeatureSet::paper",
        skip_serializing_if = "FeatureSet::is_paper"
    )]
    pub feature_set: FeatureSet,
    /// The explainer's settings, as JSON.
    pub config: serde_json::Value,
    /// The training report, as JSON.
    pub report: serde_json::Value,
    /// The edge scores it gave the probe groups ([`probe_scores`]) when saved.
    pub probe: Vec<Vec<f32>>,
}

/// A learned explainer with a network of its own over a classifier `M`: what [`save`],
/// [`load`] and [`shipped`] need to know of it.
pub(crate) trait Trained<M: ExplainableModel>: Sized {
    /// Which explainer it is.
    const KIND: ExplainerKind;
    /// Its settings, stored as JSON in the metadata.
    type Config: Copy + Serialize + DeserializeOwned;
    /// Its network, stored as the weights.
    type Net: Module;

    /// The hidden width `config` gives the network (what sizes its allocation).
    fn hidden(config: &Self::Config) -> usize;

    /// A fresh network for `clf` with `config`, on `device`.
    fn init_net(clf: &M, config: &Self::Config, device: &Device) -> Self::Net;

    /// The explainer from its parts.
    fn assemble(clf: M, net: Self::Net, config: Self::Config) -> Self;

    /// Its classifier, network and settings.
    fn parts(&self) -> (&M, &Self::Net, &Self::Config);

    /// Its edge scores of an encoded group at `beta_bytes` (what the probe records).
    fn edge_scores(&self, gg: &GroupGraph, beta_bytes: u64) -> Result<Vec<f32>>;
}

/// Saves `x` as `<stem>.bpk` and `<stem>.json` with its training report.
#[allow(
    clippy::expect_used,
    reason = "serde_json serialises these plain structs and floats (NaN becomes null) without error"
)]
pub(crate) fn save<M: ExplainableModel, T: Trained<M>>(
    x: &T,
    stem: &Path,
    report: &impl Serialize,
) -> Result<()> {
    let (clf, net, config) = x.parts();
    let meta = ExplainerMeta {
        explainer: T::KIND,
        cost_model: clf.cost_kind(),
        feature_set: clf.feature_set(),
        config: serde_json::to_value(config).expect("config serialises"),
        report: serde_json::to_value(report).expect("report serialises"),
        probe: probe_scores(|gg, beta| x.edge_scores(gg, beta))?,
    };
    Checkpoint::new(net, meta)
        .and_then(|ck| ck.save(stem))
        .map_err(|e| checkpoint_error("writing", e))
}

/// Loads a checkpoint written by [`save`] for `clf`.
pub(crate) fn load<M: ExplainableModel, T: Trained<M>>(stem: &Path, clf: M) -> Result<T> {
    let ck = Checkpoint::load(stem).map_err(|e| checkpoint_error("reading", e))?;
    from_checkpoint(clf, ck)
}

/// The explainer of type `T` shipped for `clf`'s cost model and feature set.
pub(crate) fn shipped<M: ExplainableModel, T: Trained<M>>(clf: M) -> Result<T> {
    let (which, kind, set) = (T::KIND, clf.cost_kind(), clf.feature_set());
    let (w, m) = match (which, kind, set) {
        (ExplainerKind::Pg, CostKind::Lbdf, FeatureSet::Paper) => PG_LBDF,
        (ExplainerKind::Pg, CostKind::Brr, FeatureSet::Paper) => PG_BRR,
        (ExplainerKind::Rg, CostKind::Lbdf, FeatureSet::Paper) => RG_LBDF,
        (ExplainerKind::Rg, CostKind::Brr, FeatureSet::Paper) => RG_BRR,
        (ExplainerKind::Pg, CostKind::Lbdf, FeatureSet::Broad) => PG_LBDF_BROAD,
        (ExplainerKind::Pg, CostKind::Brr, FeatureSet::Broad) => PG_BRR_BROAD,
        (ExplainerKind::Rg, CostKind::Lbdf, FeatureSet::Broad) => RG_LBDF_BROAD,
        (ExplainerKind::Rg, CostKind::Brr, FeatureSet::Broad) => RG_BRR_BROAD,
        _ => {
            return Err(ExplainError::Checkpoint(format!(
                "no shipped explainer {which}"
            )));
        }
    };
    if m.trim().is_empty() {
        return Err(ExplainError::Checkpoint(format!(
            "the {which} explainer for {} was not trained yet",
            kind.name()
        )));
    }
    let path = format!(
        "checkpoints/{which}_{}.json",
        fuselage_gnn::shipped_stem(kind, set)
    );
    let ck = Checkpoint::from_parts(w, m, &path).map_err(|e| checkpoint_error("reading", e))?;
    from_checkpoint(clf, ck)
}

/// The explainer of a checkpoint, checked to be a `T` for `clf`'s cost model.
fn from_checkpoint<M: ExplainableModel, T: Trained<M>>(
    clf: M,
    ck: Checkpoint<ExplainerMeta>,
) -> Result<T> {
    let meta = &ck.meta;
    let which = T::KIND;
    if meta.explainer != which
        || meta.cost_model != clf.cost_kind()
        || meta.feature_set != clf.feature_set()
    {
        return Err(ExplainError::Checkpoint(format!(
            "a {} checkpoint for the {} {} classifier cannot explain the {} {} classifier as {which}",
            meta.explainer,
            meta.feature_set,
            meta.cost_model,
            clf.feature_set(),
            clf.cost_kind()
        )));
    }
    let config: T::Config = serde_json::from_value(meta.config.clone())
        .map_err(|e| ExplainError::Checkpoint(format!("{which} settings: {e}")))?;
    // A number read from a file sizes the network: checked before anything is allocated.
    let hidden = T::hidden(&config);
    if !(1..=fuselage_gnn::MAX_HIDDEN).contains(&hidden) {
        return Err(ExplainError::Checkpoint(format!(
            "{which} settings: hidden is {hidden}, not 1 to {}",
            fuselage_gnn::MAX_HIDDEN
        )));
    }
    let init = T::init_net(&clf, &config, clf.device());
    let net = ck
        .module(init, &format!("the {which} explainer"))
        .map_err(|e| checkpoint_error("reading", e))?;
    Ok(T::assemble(clf, net, config))
}

/// A checkpoint error of `fuselage-gnn` as this crate's [`ExplainError::Checkpoint`]: a file
/// that cannot be read or written says which (`doing`, `reading` or `writing`) and names it.
fn checkpoint_error(doing: &str, e: GnnError) -> ExplainError {
    ExplainError::Checkpoint(match e {
        GnnError::Io { path, error } => format!("{doing} {path}: {error}"),
        GnnError::Checkpoint(m) => m,
        other => other.to_string(),
    })
}

const PG_LBDF: (&[u8], &str) = (
    include_bytes!("../../checkpoints/pg_lbdf.bpk"),
    include_str!("../../checkpoints/pg_lbdf.json"),
);
const PG_BRR: (&[u8], &str) = (
    include_bytes!("../../checkpoints/pg_brr.bpk"),
    include_str!("../../checkpoints/pg_brr.json"),
);
const RG_LBDF: (&[u8], &str) = (
    include_bytes!("../../checkpoints/rg_lbdf.bpk"),
    include_str!("../../checkpoints/rg_lbdf.json"),
);
const RG_BRR: (&[u8], &str) = (
    include_bytes!("../../checkpoints/rg_brr.bpk"),
    include_str!("../../checkpoints/rg_brr.json"),
);
const PG_LBDF_BROAD: (&[u8], &str) = (
    include_bytes!("../../checkpoints/pg_lbdf_broad.bpk"),
    include_str!("../../checkpoints/pg_lbdf_broad.json"),
);
const PG_BRR_BROAD: (&[u8], &str) = (
    include_bytes!("../../checkpoints/pg_brr_broad.bpk"),
    include_str!("../../checkpoints/pg_brr_broad.json"),
);
const RG_LBDF_BROAD: (&[u8], &str) = (
    include_bytes!("../../checkpoints/rg_lbdf_broad.bpk"),
    include_str!("../../checkpoints/rg_lbdf_broad.json"),
);
const RG_BRR_BROAD: (&[u8], &str) = (
    include_bytes!("../../checkpoints/rg_brr_broad.bpk"),
    include_str!("../../checkpoints/rg_brr_broad.json"),
);
