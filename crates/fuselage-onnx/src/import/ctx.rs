//! The context of one import: the file being read and its opset, and the errors that name
//! them ([`OnnxError::Malformed`], [`OnnxError::BadNode`], [`OnnxError::Ir`],
//! [`OnnxError::Tract`]), so that every part of the importer reports a bad input in the same
//! one line. A leaf: every other part of the importer reads it.

use crate::error::{OnnxError, one_line};
use std::path::Path;
use tract_onnx::pb;

/// The file being imported, and its opset.
pub(super) struct Ctx<'a> {
    /// The file (or the origin given with bytes): every error names it.
    pub(super) path: &'a Path,
    /// The default domain's opset version (0 until the model is decoded).
    pub(super) opset: i64,
}

impl Ctx<'_> {
    /// The model, or a tensor of it, is malformed; `reason` is made one line.
    pub(super) fn malformed(&self, reason: impl Into<String>) -> OnnxError {
        OnnxError::Malformed {
            path: self.path.to_path_buf(),
            reason: one_line(&reason.into()),
        }
    }

    /// `node` cannot be imported; its name, op and `reason` are made one line each.
    pub(super) fn bad(&self, node: &pb::NodeProto, reason: impl Into<String>) -> OnnxError {
        OnnxError::BadNode {
            path: self.path.to_path_buf(),
            node: one_line(&node.name),
            op: one_line(&node.op_type),
            reason: one_line(&reason.into()),
        }
    }

    /// The IR refused the graph, or a node of it.
    pub(super) fn ir(&self, error: fuselage_ir::IrError) -> OnnxError {
        OnnxError::Ir {
            path: self.path.to_path_buf(),
            error,
        }
    }

    /// tract failed on the model; its message is made one line.
    pub(super) fn tract(&self, e: impl std::fmt::Display) -> OnnxError {
        OnnxError::Tract {
            path: self.path.to_path_buf(),
            reason: one_line(&e.to_string()),
        }
    }
}

/// How errors name node `index`: its name, else its first output, else `#index (op)`.
pub(super) fn node_label(node: &pb::NodeProto, index: usize) -> String {
    if !node.name.is_empty() {
        node.name.clone()
    } else if let Some(o) = node.output.first().filter(|o| !o.is_empty()) {
        o.clone()
    } else {
        format!("#{index} ({})", node.op_type)
    }
}

/// The context of the unit tests of the importer's parts: a file `m.onnx` at opset 17.
#[cfg(test)]
pub(super) fn test_ctx() -> Ctx<'static> {
    Ctx {
        path: Path::new("m.onnx"),
        opset: 17,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, op_type: &str, output: &[&str]) -> pb::NodeProto {
        pb::NodeProto {
            name: name.into(),
            op_type: op_type.into(),
            output: output.iter().map(|o| o.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn a_node_is_named_by_its_name_then_its_output_then_its_index() {
        assert_eq!(node_label(&node("conv1", "Conv", &["y"]), 0), "conv1");
        assert_eq!(node_label(&node("", "Conv", &["y"]), 0), "y");
        assert_eq!(node_label(&node("", "Relu", &[""]), 3), "#3 (Relu)");
        assert_eq!(node_label(&node("", "Relu", &[]), 3), "#3 (Relu)");
    }

    #[test]
    fn errors_name_the_file_and_the_node_in_one_line() {
        let cx = Ctx {
            path: Path::new("dir/m.onnx"),
            opset: 17,
        };
        let n = node("a\nb", "Re\u{1b}lu", &["y"]);
        assert_eq!(
            cx.bad(&n, "no\nweight").to_string(),
            "dir/m.onnx: node `a\\nb` (Re\\u{1b}lu): no\\nweight"
        );
        assert_eq!(
            cx.malformed("two\nlines").to_string(),
            "dir/m.onnx: malformed ONNX model: two\\nlines"
        );
        assert_eq!(
            cx.tract("parse\nerror").to_string(),
            "dir/m.onnx: tract could not analyse the model: parse\\nerror"
        );
    }
}
