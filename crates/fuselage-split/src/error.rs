//! The one error type of `fuselage-split`.

use thiserror::Error;

/// Why a group could not be split.
///
/// Not `Clone` or `PartialEq`: it carries the explainer's errors, which hold the classifier's.
#[derive(Debug, Error)]
pub enum SplitError {
    /// The cost model failed on a part (a bug, or a group of another graph).
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// The group is not a group of this graph (empty, or disconnected).
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
    /// The explainer of an explanation-guided splitter failed.
    #[error(transparent)]
    Explain(#[from] fuselage_explain::ExplainError),
    /// The explainer returned an explanation that does not belong to the group it was asked
    /// about (an edge outside the group, or a selection index out of range).
    #[error("explainer {explainer} explained group {group:?} with {reason}")]
    BadExplanation {
        /// The explainer's name.
        explainer: String,
        /// The group's node names.
        group: Vec<String>,
        /// What is wrong.
        reason: String,
    },
    /// A [`SplitMemo`](crate::SplitMemo) shared between splitters that do not agree on the
    /// graph, cost model, β, explainer or seed, whose answers would then be wrong.
    #[error("split memo bound to {bound} was used with {found}")]
    MemoMismatch {
        /// What the memo was filled for.
        bound: String,
        /// What it was asked about.
        found: String,
    },
    /// A bad setting (a cut temperature out of range).
    #[error("bad splitter setting: {0}")]
    Config(String),
}

/// `Result` with [`SplitError`].
pub type Result<T, E = SplitError> = std::result::Result<T, E>;
