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
    /// The accelerator given to a [`Planner`](crate::Planner) and its cost model disagree on
    /// the buffer or the element sizes.
    #[error(
        "the accelerator `{hardware}` has {} but the cost model `{model}` was built for {}: give the model the accelerator's configuration (Planner::on does)",
        describe(&configs.0),
        describe(&configs.1)
    )]
    HardwareMismatch {
        /// The accelerator's name.
        hardware: String,
        /// The cost model's name.
        model: String,
        /// The accelerator's configuration and the model's.
        configs: Box<(fuselage_cost::CostConfig, fuselage_cost::CostConfig)>,
    },
    /// A buffer sweep that cannot run as asked (an empty range, split buffers).
    #[error("sweep: {0}")]
    Sweep(String),
}

/// The pipeline's result type.
pub type Result<T> = std::result::Result<T, PipelineError>;

/// A configuration in words: its buffer and element sizes.
fn describe(c: &fuselage_cost::CostConfig) -> String {
    let buffer = match c.buffer() {
        fuselage_cost::OnChipBuffer::Unified { bytes } => format!("β = {bytes} bytes"),
        fuselage_cost::OnChipBuffer::Split {
            weight_bytes,
            activation_bytes,
        } => format!("β_w = {weight_bytes}, β_a = {activation_bytes} bytes"),
    };
    format!(
        "{buffer} (weights {} B, activations {} B per element)",
        c.weight_element_bytes(),
        c.activation_element_bytes()
    )
}
