//! The one error type of `fuselage-split`.

use thiserror::Error;

/// Why a group could not be split.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum SplitError {
    /// The cost model failed on a part (a bug, or a group of another graph).
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// The group is not a group of this graph (empty, or disconnected).
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
}

/// `Result` with [`SplitError`].
pub type Result<T, E = SplitError> = std::result::Result<T, E>;
