//! The one error type of `fuselage-onnx`.

use std::path::PathBuf;
use thiserror::Error;

/// What can go wrong importing an ONNX file. Every variant names the file, and the node and op
/// where there is one.
#[derive(Debug, Error)]
pub enum OnnxError {
    /// The file cannot be read.
    #[error("{}: cannot read the file: {error}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The path is not a regular file (a folder, a device such as `/dev/zero`, a FIFO).
    #[error("{}: not a regular file", .path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
    },
    /// The file is larger than the importer's cap.
    #[error("{}: the file has {bytes} bytes, over the cap of {max} (Importer::with_max_file_bytes raises it)", .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The cap.
        max: u64,
    },
    /// The bytes are not an ONNX protobuf (or are truncated inside a message).
    #[error("{}: not an ONNX model (protobuf decoding failed: {reason})", .path.display())]
    NotOnnx {
        /// The file.
        path: PathBuf,
        /// The decoder's message.
        reason: String,
    },
    /// The protobuf decodes but does not describe a complete model (a truncated file, for
    /// instance, that ends between two messages).
    #[error("{}: malformed ONNX model: {reason}", .path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is missing or inconsistent.
        reason: String,
    },
    /// Ops the IR does not have: every unsupported op type of the file, once, with how many
    /// nodes use it and the first of them.
    #[error("{}: unsupported ops: {}", .path.display(), list_unsupported(.ops))]
    Unsupported {
        /// The file.
        path: PathBuf,
        /// One entry per unsupported op type, in order of first appearance.
        ops: Vec<UnsupportedOp>,
    },
    /// A node whose attributes or inputs fuselage cannot use.
    #[error("{}: node `{node}` ({op}): {reason}", .path.display())]
    BadNode {
        /// The file.
        path: PathBuf,
        /// The ONNX node name.
        node: String,
        /// Its `op_type`.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// tract could not parse the model or infer its shapes.
    #[error("{}: tract could not analyse the model: {reason}", .path.display())]
    Tract {
        /// The file.
        path: PathBuf,
        /// tract's error chain.
        reason: String,
    },
    /// The key-value cache inputs (`past_key_values.*`) and the past length disagree: a cache
    /// of symbolic length without one, one for a model without a cache, or a cache whose length
    /// the file fixes otherwise ([`Importer::with_past`](crate::Importer::with_past)).
    #[error("{}: {reason}", .path.display())]
    Past {
        /// The file.
        path: PathBuf,
        /// What disagrees, naming the input.
        reason: String,
    },
    /// The imported graph fails the IR's own checks.
    #[error("{}: {}", .path.display(), one_line(&.error.to_string()))]
    Ir {
        /// The file.
        path: PathBuf,
        /// The IR error.
        error: fuselage_ir::IrError,
    },
}

/// One unsupported op type of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsupportedOp {
    /// The `op_type`, with its domain when not the default one (`com.microsoft::Attention`).
    pub op: String,
    /// How many data nodes have it.
    pub count: usize,
    /// The first such node's name.
    pub first: String,
}

fn list_unsupported(ops: &[UnsupportedOp]) -> String {
    ops.iter()
        .map(|u| {
            let nodes = if u.count == 1 { "node" } else { "nodes" };
            format!(
                "{} ({} {nodes}, first `{}`)",
                one_line(&u.op),
                u.count,
                one_line(&u.first)
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `text` with its control and bidirectional characters escaped (`\n`, `\u{1b}`,
/// `\u{202e}`): names in a file are arbitrary strings, and an error must stay one line
/// ([`fuselage_ir::escape`], the one helper every crate prints names through).
pub(crate) fn one_line(text: &str) -> String {
    fuselage_ir::escape(text).into_owned()
}

/// `Result` with [`OnnxError`].
pub type Result<T, E = OnnxError> = std::result::Result<T, E>;
