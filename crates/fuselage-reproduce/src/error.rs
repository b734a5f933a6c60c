//! The reproduction's error type.

use fuselage::cost::CostError;
use fuselage::pipeline::PipelineError;
use fuselage::zoo::ZooError;
use std::path::PathBuf;

/// Why a reproduction could not run or be written.
#[derive(Debug, thiserror::Error)]
pub enum ReproduceError {
    /// The facade refused a row: its network could not be built, its cost configuration or a
    /// plan file was refused, or its optimum could not be computed.
    #[error(transparent)]
    Fuselage(#[from] fuselage::Error),
    /// One search run of a row failed.
    #[error("reproduction: {run}: {error}")]
    Run {
        /// The run: network, cost model, β, search, splitter and seed.
        run: String,
        /// What the pipeline said (boxed: the error stays small on the path that succeeds).
        error: Box<PipelineError>,
    },
    /// A file of the results could not be written.
    #[error("reproduction: writing {}: {why}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What the file system (or the SVG drawing) said.
        why: String,
    },
}

/// The reproduction's result type.
pub type Result<T, E = ReproduceError> = std::result::Result<T, E>;

// The facade's own errors reach the harness through `fuselage::Error`, as they reach any user
// of the facade.

impl From<ZooError> for ReproduceError {
    fn from(e: ZooError) -> Self {
        ReproduceError::Fuselage(e.into())
    }
}

impl From<CostError> for ReproduceError {
    fn from(e: CostError) -> Self {
        ReproduceError::Fuselage(e.into())
    }
}

impl From<PipelineError> for ReproduceError {
    fn from(e: PipelineError) -> Self {
        ReproduceError::Fuselage(e.into())
    }
}
