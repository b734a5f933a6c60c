//! Saving and loading the trained explainers (PG, RG), and the ones shipped with the crate.
//!
//! A checkpoint is `<stem>.bpk` (the module's weights as a burnpack record, burn's own format)
//! and `<stem>.json` ([`ExplainerMeta`]: which explainer, for which classifier, its settings,
//! its training report and the scores it gave a fixed probe set, so that a load can be checked
//! to reproduce them). The shipped LBDF and BRR checkpoints under
//! `crates/fuselage-explain/checkpoints/` are compiled into the crate.

use crate::ExplainerKind;
use crate::error::{ExplainError, Result};
use burn::module::Module;
use burn::store::ModuleRecord;
use burn::tensor::Bytes;
use fuselage_gnn::CostKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// What an explainer checkpoint says about itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplainerMeta {
    /// `pg` or `rg`.
    pub explainer: ExplainerKind,
    /// The cost model of the classifier it explains.
    pub cost_model: CostKind,
    /// The explainer's settings, as JSON.
    pub config: serde_json::Value,
    /// The training report, as JSON.
    pub report: serde_json::Value,
    /// The edge scores it gave the probe groups ([`super::probe_set`]) when saved.
    pub probe: Vec<Vec<f32>>,
}

pub(crate) fn module_bytes<M: Module>(m: &M) -> Result<Vec<u8>> {
    let bytes = m
        .clone()
        .into_record()
        .into_bytes()
        .map_err(|e| ExplainError::Checkpoint(e.to_string()))?;
    Ok(bytes.to_vec())
}

pub(crate) fn module_from_bytes<M: Module>(init: M, bytes: &[u8], what: &str) -> Result<M> {
    if bytes.is_empty() {
        return Err(ExplainError::Checkpoint(format!(
            "no weights for {what} (not trained yet?)"
        )));
    }
    let record = ModuleRecord::from_bytes(Bytes::from_bytes_vec(bytes.to_vec()))
        .map_err(|e| ExplainError::Checkpoint(format!("{what}: {e}")))?;
    init.try_load_record(record)
        .map_err(|e| ExplainError::Checkpoint(format!("{what}: {e}")))
}

pub(crate) fn with_ext(stem: &Path, ext: &str) -> PathBuf {
    let mut s = stem.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

#[allow(
    clippy::expect_used,
    reason = "serde_json serialises this plain struct without error"
)]
pub(crate) fn write(stem: &Path, weights: &[u8], meta: &ExplainerMeta) -> Result<()> {
    let io = |p: &Path, e: std::io::Error| {
        ExplainError::Checkpoint(format!("writing {}: {e}", p.display()))
    };
    let w = with_ext(stem, "bpk");
    std::fs::write(&w, weights).map_err(|e| io(&w, e))?;
    let m = with_ext(stem, "json");
    let json = serde_json::to_string_pretty(meta).expect("metadata serialises") + "\n";
    std::fs::write(&m, json).map_err(|e| io(&m, e))
}

pub(crate) fn read(stem: &Path) -> Result<(Vec<u8>, ExplainerMeta)> {
    let io = |p: &Path, e: std::io::Error| {
        ExplainError::Checkpoint(format!("reading {}: {e}", p.display()))
    };
    let m = with_ext(stem, "json");
    let json = std::fs::read_to_string(&m).map_err(|e| io(&m, e))?;
    let meta = parse_meta(&json, &m.display().to_string())?;
    let w = with_ext(stem, "bpk");
    let weights = std::fs::read(&w).map_err(|e| io(&w, e))?;
    Ok((weights, meta))
}

pub(crate) fn parse_meta(json: &str, path: &str) -> Result<ExplainerMeta> {
    serde_json::from_str(json)
        .map_err(|e| ExplainError::Checkpoint(format!("{path}: line {}: {e}", e.line())))
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

/// The shipped weights and metadata of explainer `which` (`pg`, `rg`) for cost model `kind`.
pub(crate) fn shipped(
    which: ExplainerKind,
    kind: CostKind,
) -> Result<(&'static [u8], ExplainerMeta)> {
    let (w, m) = match (which, kind) {
        (ExplainerKind::Pg, CostKind::Lbdf) => PG_LBDF,
        (ExplainerKind::Pg, CostKind::Brr) => PG_BRR,
        (ExplainerKind::Rg, CostKind::Lbdf) => RG_LBDF,
        (ExplainerKind::Rg, CostKind::Brr) => RG_BRR,
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
    Ok((
        w,
        parse_meta(m, &format!("checkpoints/{which}_{}.json", kind.name()))?,
    ))
}
