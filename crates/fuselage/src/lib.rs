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
//! - [`cost`]: the cost models (LBDF, BRR), the buffer simulator and plan evaluation.
//!
//! ```
//! let g = fuselage::load_model("resnet18", None)?;
//! assert_eq!(g.len(), 49);
//! # Ok::<(), fuselage::Error>(())
//! ```
#![warn(missing_docs)]

pub use fuselage_cost as cost;
pub use fuselage_ir as ir;
pub use fuselage_onnx as onnx;
pub use fuselage_zoo as zoo;

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
    /// A resolution was given for an ONNX file, whose input shape is its own.
    #[error("--resolution applies to zoo networks; `{0}` is an ONNX file with its own input shape")]
    ResolutionForFile(String),
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
