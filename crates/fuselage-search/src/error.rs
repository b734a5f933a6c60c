//! The one error type of `fuselage-search`.

use thiserror::Error;

/// Why a search could not run or finish.
///
/// Not `Clone` or `PartialEq`, because [`SplitError`](fuselage_split::SplitError) is not.
#[derive(Debug, Error)]
pub enum SearchError {
    /// A budget of zero evaluations.
    #[error("the budget must allow at least one plan evaluation (budget 0 given)")]
    ZeroBudget,
    /// The cost model failed.
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// The splitter failed.
    #[error(transparent)]
    Split(#[from] fuselage_split::SplitError),
    /// The IR rejected a plan (a bug in a strategy: plans must stay partitions and acyclic).
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
}

/// `Result` with [`SearchError`].
pub type Result<T, E = SearchError> = std::result::Result<T, E>;
