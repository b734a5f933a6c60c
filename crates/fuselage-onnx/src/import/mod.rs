//! The importer: protobuf in, [`Graph`] out.
//!
//! Two sources of truth are combined:
//! - the **protobuf** (decoded by tract-onnx's prost types) gives the ONNX-level view: node
//!   names, `op_type`s, attributes and the wiring. Ops are mapped from here, so a `Relu` stays a
//!   `Relu` whatever tract would lower it to;
//! - **tract's analysed inference model** (`InferenceModel::analyse`) gives every tensor's
//!   inferred shape and datum type, and the values of tensors computable without the model
//!   input (shape arithmetic, `Constant` nodes, initializers).
//!
//! Folding: a tensor is *static* when it is an initializer, a `Constant`, the output of `Shape`
//! or `Size` (the input shape is fixed), or computed only from static tensors. Static tensors
//! are not nodes; nodes that read the model input (through something other than `Shape`) are
//! *data nodes*, and only those become nodes of the graph. The float static inputs on a data
//! node's parameter ports (Conv and Gemm weight and bias, BatchNormalization statistics, the
//! scale and bias of a normalisation, a Gather's table, a constant operand of an element-wise
//! op, a MatMul or a Concat) are its weights, folded ones included.
//!
//! Ops map by class ([`OpClass`]): every unary math op becomes [`Op::Unary`], every
//! broadcasting element-wise op [`Op::Elementwise`], every reduction [`Op::Reduce`], so a new
//! op of a known family is one line of [`OpKind`]. Identity and Dropout vanish (their output is
//! their input). A `Split` of k outputs becomes k [`Op::Split`] nodes, `NAME` for output 0 and
//! `NAME:i` for output i, so that every node still has one tensor.
//!
//! [`OpClass`]: fuselage_ir::OpClass
//! [`OpKind`]: fuselage_ir::OpKind
//! [`Op::Unary`]: fuselage_ir::Op::Unary
//! [`Op::Elementwise`]: fuselage_ir::Op::Elementwise
//! [`Op::Reduce`]: fuselage_ir::Op::Reduce
//! [`Op::Split`]: fuselage_ir::Op::Split
//!
//! The importer checks before tract sees the model (a missing graph, an undefined tensor,
//! unsupported ops: every unsupported op type is listed once, with its count and first node), so
//! that errors name the file, node and op; tract is then run behind `catch_unwind`, and finally
//! the graph is held to the IR's own shape rules. Only regular files up to
//! [`MAX_FILE_BYTES`] are read.
//!
//! Weights are never materialised: the file is streamed through `slim.rs`, which
//! leaves out the data of every large float initializer and keeps its type and dims, and tract
//! sees each such weight as a graph input of that type and shape. Peak memory is then a few
//! megabytes over the program's own, whatever the file weighs (docs/reliability.md).
//!
//! The parts, one file each, from the leaves up: `ctx.rs` (the file and its opset, and the
//! errors that name them), `facts.rs` (tract, run behind `catch_unwind`: every tensor's shape,
//! type and static value), `attrs.rs` (attribute reading: axes, pads, integers from an
//! attribute or a constant input), `structure.rs` (what the protobuf alone tells: the checks,
//! the order, the data nodes), `ops.rs` (the op mapping, one function per op family) and
//! `assemble.rs` (the graph built from the data nodes). This file has the options
//! ([`Importer`]) and reads the file; no part reads it.

mod assemble;
mod attrs;
mod ctx;
mod facts;
mod ops;
mod structure;

use crate::error::{OnnxError, Result};
use crate::slim::{self, Slim, SlimError};
use assemble::assemble;
use ctx::Ctx;
use facts::{run_tract, weights_as_inputs};
use fuselage_ir::Graph;
use fuselage_ir::fs::Refused;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use structure::analyse_structure;
use tract_onnx::pb;
use tract_onnx::prelude::Framework;

pub use facts::inside_tract;

/// The largest file [`Importer::import`] reads by default: 2 GiB, the most a protobuf message
/// (and so an ONNX file without external data) can hold. [`Importer::with_max_file_bytes`]
/// changes it.
pub const MAX_FILE_BYTES: u64 = 2 << 30;

/// Import options.
#[derive(Clone, Debug)]
pub struct Importer {
    input_shapes: HashMap<String, Vec<u64>>,
    max_file_bytes: u64,
    /// Tokens in the key-value cache of a decode step (`with_past`).
    past: Option<u64>,
}

impl Default for Importer {
    fn default() -> Self {
        Importer {
            input_shapes: HashMap::new(),
            max_file_bytes: MAX_FILE_BYTES,
            past: None,
        }
    }
}

/// Imports the ONNX file at `path` with default options.
///
/// # Errors
/// See [`OnnxError`]: every variant names the file.
pub fn import(path: impl AsRef<Path>) -> Result<Graph> {
    Importer::default().import(path)
}

/// Imports an ONNX model from bytes; `origin` names it in errors and gives the graph its name.
///
/// # Errors
/// See [`OnnxError`].
pub fn import_bytes(bytes: &[u8], origin: impl AsRef<Path>) -> Result<Graph> {
    Importer::default().import_bytes(bytes, origin)
}

impl Importer {
    /// Default options: input shapes as the file declares them.
    pub fn new() -> Self {
        Self::default()
    }

    /// Refuses files larger than `bytes` (default [`MAX_FILE_BYTES`]).
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// Fixes the shape of graph input `name` (for files with a symbolic batch or resolution).
    pub fn with_input_shape(mut self, name: impl Into<String>, dims: Vec<u64>) -> Self {
        self.input_shapes.insert(name.into(), dims);
        self
    }

    /// Imports the file as one decode step against a key-value cache of `past` tokens: its
    /// `past_key_values.*` inputs become `[1, kv_heads, past, head_dim]`, its other inputs one
    /// new token (the module `decode.rs` has the rules). Without it, a file whose cache has a
    /// symbolic length is refused in one line ([`OnnxError::Past`]). Shapes given with
    /// [`Importer::with_input_shape`] take precedence.
    pub fn with_past(mut self, past: u64) -> Self {
        self.past = Some(past);
        self
    }

    /// Imports the ONNX file at `path`.
    ///
    /// # Errors
    /// See [`OnnxError`].
    pub fn import(&self, path: impl AsRef<Path>) -> Result<Graph> {
        let path = path.as_ref();
        // Only regular files, and not past the cap: /dev/zero or a FIFO would be read without
        // bound; checked by path and again on the open handle (`open_regular`).
        let (file, len) =
            fuselage_ir::fs::open_regular(path, self.max_file_bytes).map_err(|refused| {
                match refused {
                    Refused::Io(error) => OnnxError::Io {
                        path: path.to_path_buf(),
                        error,
                    },
                    Refused::NotAFile(_) => OnnxError::NotAFile {
                        path: path.to_path_buf(),
                    },
                    Refused::TooLarge(bytes) => OnnxError::TooLarge {
                        path: path.to_path_buf(),
                        bytes,
                        max: self.max_file_bytes,
                    },
                }
            })?;
        let slim = slim::read(std::io::BufReader::new(file), len);
        self.import_slim(slim, path)
    }

    /// Imports a model from bytes; `origin` names it in errors, and its file stem names the
    /// graph.
    ///
    /// # Errors
    /// See [`OnnxError`].
    pub fn import_bytes(&self, bytes: &[u8], origin: impl AsRef<Path>) -> Result<Graph> {
        let slim = slim::read(std::io::Cursor::new(bytes), bytes.len() as u64);
        self.import_slim(slim, origin.as_ref())
    }

    /// Imports a model read by [`slim::read`]: its large float weights have shapes but no
    /// data.
    fn import_slim(
        &self,
        slim: std::result::Result<Slim, SlimError>,
        path: &Path,
    ) -> Result<Graph> {
        let slim = slim.map_err(|e| match e {
            SlimError::Io(error) => OnnxError::Io {
                path: path.to_path_buf(),
                error,
            },
            SlimError::Malformed(reason) => OnnxError::NotOnnx {
                path: path.to_path_buf(),
                reason,
            },
            SlimError::Limit(reason) => OnnxError::Malformed {
                path: path.to_path_buf(),
                reason,
            },
        })?;
        let proto = tract_onnx::onnx()
            .proto_model_for_read(&mut &slim.bytes[..])
            .map_err(|e| OnnxError::NotOnnx {
                path: path.to_path_buf(),
                reason: format!("{e:#}"),
            })?;
        let opset = proto
            .opset_import
            .iter()
            .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
            .map_or(0, |o| o.version);
        let cx = Ctx { path, opset };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.convert(&cx, &proto, &slim.stripped, name)
    }

    /// The graph of `proto`: checked from the protobuf alone, then shaped by tract, then
    /// assembled from its data nodes.
    fn convert(
        &self,
        cx: &Ctx<'_>,
        proto: &pb::ModelProto,
        stripped: &HashSet<String>,
        name: String,
    ) -> Result<Graph> {
        let graph = proto
            .graph
            .as_ref()
            .ok_or_else(|| cx.malformed("the model has no graph"))?;
        if proto.opset_import.is_empty() {
            return Err(cx.malformed("the model declares no opset (opset_import is empty)"));
        }
        if graph.node.is_empty() {
            return Err(cx.malformed("the graph has no node"));
        }
        let analysis = analyse_structure(cx, graph)?;
        let facts = run_tract(
            cx,
            &weights_as_inputs(proto, stripped),
            &self.input_shapes,
            self.past,
        )?;
        assemble(cx, graph, &analysis, &facts, name)
    }
}
