//! The crate's one error type.

use thiserror::Error;

/// Everything that can go wrong while explaining a group.
#[derive(Debug, Error)]
pub enum ExplainError {
    /// The graph layer refused a set (not a group of the graph, empty, ...).
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
    /// The cost model failed on a group or a part of it.
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// The classifier failed.
    #[cfg(feature = "learned")]
    #[error(transparent)]
    Gnn(#[from] fuselage_gnn::GnnError),
    /// A set that cannot be explained.
    #[error("cannot explain this set of {graph}: {reason}")]
    BadGroup {
        /// The graph's name.
        graph: String,
        /// What is wrong with the set.
        reason: String,
    },
    /// A bad setting (zero epochs, a share outside (0, 1], ...).
    #[error("bad explainer setting: {0}")]
    Config(String),
    /// A checkpoint that cannot be read, written or matched to its classifier.
    #[error("explainer checkpoint: {0}")]
    Checkpoint(String),
}

/// `Result` with [`ExplainError`].
pub type Result<T> = std::result::Result<T, ExplainError>;
