//! # fuselage-onnx
//!
//! ONNX import for fuselage, through tract-onnx.
//!
//! ```no_run
//! let g = fuselage_onnx::import("resnet18.onnx")?;
//! println!("{} nodes, {} MACs", g.len(), g.macs());
//! # Ok::<(), fuselage_onnx::OnnxError>(())
//! ```
//!
//! The graph keeps ONNX-level ops and ONNX node names; constants and shape arithmetic are
//! folded away; shapes come from tract's inference and are then checked against the IR's own
//! shape rules. See [`import`](mod@import) for the design.
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod decode;
mod error;
pub mod import;
pub mod metadata;
mod slim;
mod wire;

pub use error::{OnnxError, Result, UnsupportedOp};
pub use import::{Importer, MAX_FILE_BYTES, import, import_bytes, inside_tract};
pub use slim::{MAX_ATTRIBUTES, MAX_GRAPH_DEPTH, MAX_INITIALIZERS, MAX_NODES, MAX_VALUE_INFOS};

/// The folder of reference ONNX exports used by tests and benchmarks: `$FUSELAGE_MODELS` when
/// set, else `../shared/models` beside the workspace. `None` when that folder does not exist
/// (a user's clone), so callers can say so and skip.
pub fn reference_models_dir() -> Option<std::path::PathBuf> {
    let dir = match std::env::var_os("FUSELAGE_MODELS") {
        Some(d) => std::path::PathBuf::from(d),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/models"),
    };
    dir.is_dir().then_some(dir)
}
