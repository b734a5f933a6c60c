//! The pipeline's error type.

use fuselage_explain::ExplainerKind;

/// Why a planner could not be assembled or run.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The cost model failed or refused its settings.
    #[error(transparent)]
    Cost(#[from] fuselage_cost::CostError),
    /// A search failed.
    #[error(transparent)]
    Search(#[from] fuselage_search::SearchError),
    /// An explainer could not be made.
    #[error(transparent)]
    Explain(#[from] fuselage_explain::ExplainError),
    /// The explainer factory cannot make this kind (a learned explainer without the factory
    /// that knows the classifiers, or without a built-in cost model to pick the classifier).
    #[error("the {kind} explainer is not available here: {why}")]
    ExplainerUnavailable {
        /// The kind asked for.
        kind: ExplainerKind,
        /// Why not.
        why: String,
    },
    /// A buffer sweep that cannot run as asked (an empty range, split buffers).
    #[error("sweep: {0}")]
    Sweep(String),
}

/// The pipeline's result type.
pub type Result<T> = std::result::Result<T, PipelineError>;
