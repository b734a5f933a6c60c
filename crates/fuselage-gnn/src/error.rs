//! [`GnnError`]: everything that can go wrong in this crate, and [`Result`].

use thiserror::Error;

/// Everything that can go wrong while featurising, generating data, training or loading a
/// classifier.
#[derive(Debug, Error)]
pub enum GnnError {
    /// A cost model refused a group (wrong graph, empty or disconnected set).
    #[error("cost model: {0}")]
    Cost(#[from] fuselage_cost::CostError),
    /// A network name the zoo does not know.
    #[error(transparent)]
    Zoo(#[from] fuselage_zoo::ZooError),
    /// A group that is not a non-empty set of the graph's nodes.
    #[error("bad group of `{graph}`: {reason}")]
    BadGroup {
        /// The graph's name.
        graph: String,
        /// Why the group was refused.
        reason: String,
    },
    /// An edge-weight vector whose length is not the group's edge count.
    #[error("group has {edges} edges but {weights} edge weights were given")]
    EdgeWeights {
        /// Edges of the group.
        edges: usize,
        /// Weights given.
        weights: usize,
    },
    /// Reading or writing a file. The message holds the I/O error itself, which is therefore
    /// not also a `source` (a report that walks the chain would print it twice).
    #[error("{path}: {error}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        error: std::io::Error,
    },
    /// A malformed data set or metadata file.
    #[error("{path}: line {line}: {message}")]
    Parse {
        /// The file (or `<memory>`).
        path: String,
        /// 1-based line number.
        line: usize,
        /// What was wrong.
        message: String,
    },
    /// A checkpoint that burn could not read or apply.
    #[error("checkpoint: {0}")]
    Checkpoint(String),
    /// The learned classifier covers LBDF and BRR only.
    #[error("the learned classifier covers lbdf and brr, not {0}: use --fusion lbdf or brr")]
    Unlearned(fuselage_cost::CostKind),
    /// A data set or configuration that cannot be trained on.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Drawing the learning curve.
    #[error("plot: {0}")]
    Plot(String),
}

/// `Result` with [`GnnError`].
pub type Result<T> = std::result::Result<T, GnnError>;

impl GnnError {
    pub(crate) fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Self {
        GnnError::Io {
            path: path.as_ref().display().to_string(),
            error: source,
        }
    }
}
