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
    /// A cost model reported less DRAM traffic for a valid group than it must move at least:
    /// the tensors it reads and writes and its weights (`I + O + W`), plus the weights its
    /// own tile floor says it reads again. [`Optimal`](crate::Optimal)'s joins at
    /// bottlenecks rely on that floor, and check it on every pair they cost.
    #[error(
        "cost model `{model}` reports F_D = {dram} B for a group of {nodes} nodes, below the \
         {floor} B it must move at least (I + O + W and its weights' rereads)"
    )]
    ModelContract {
        /// The model's name.
        model: String,
        /// The group's size.
        nodes: usize,
        /// The `F_D` it reported.
        dram: u64,
        /// What it must move at least.
        floor: u64,
    },
    /// The IR rejected a plan (a bug in a strategy: plans must stay partitions and acyclic).
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
}

/// `Result` with [`SearchError`].
pub type Result<T, E = SearchError> = std::result::Result<T, E>;
