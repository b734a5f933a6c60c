//! The context of one import: the file being read and its opset, and the three errors that
//! name them ([`OnnxError::Malformed`], [`OnnxError::BadNode`], [`OnnxError::Tract`]), so that
//! every part of the importer reports a bad input in the same one line. A leaf: every other
//! part of the importer reads it.

use crate::error::{OnnxError, one_line};
use std::path::Path;
use tract_onnx::pb;

pub(super) struct Ctx<'a> {
    pub(super) path: &'a Path,
    /// The default domain's opset version (0 until the model is decoded).
    pub(super) opset: i64,
}

impl Ctx<'_> {
    pub(super) fn malformed(&self, reason: impl Into<String>) -> OnnxError {
        OnnxError::Malformed {
            path: self.path.to_path_buf(),
            reason: one_line(&reason.into()),
        }
    }

    pub(super) fn bad(&self, node: &pb::NodeProto, reason: impl Into<String>) -> OnnxError {
        OnnxError::BadNode {
            path: self.path.to_path_buf(),
            node: one_line(&node.name),
            op: one_line(&node.op_type),
            reason: one_line(&reason.into()),
        }
    }

    pub(super) fn tract(&self, e: impl std::fmt::Display) -> OnnxError {
        OnnxError::Tract {
            path: self.path.to_path_buf(),
            reason: one_line(&e.to_string()),
        }
    }
}

pub(super) fn node_label(node: &pb::NodeProto, index: usize) -> String {
    if !node.name.is_empty() {
        node.name.clone()
    } else if let Some(o) = node.output.first().filter(|o| !o.is_empty()) {
        o.clone()
    } else {
        format!("#{index} ({})", node.op_type)
    }
}
