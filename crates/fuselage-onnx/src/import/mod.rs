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

use crate::error::{OnnxError, Result, UnsupportedOp, one_line};
use crate::slim::{self, Slim, SlimError};
use fuselage_ir::{
    ConvAttrs, GatherIndex, Graph, GraphBuilder, Op, OpClass, OpKind, PoolAttrs, Source,
    TensorShape,
};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use tract_onnx::pb;
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

thread_local! {
    static IN_TRACT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a call into tract) behind `catch_unwind`, marking this thread as inside tract
/// meanwhile ([`inside_tract`]).
fn in_tract<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    IN_TRACT.with(|c| c.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    IN_TRACT.with(|c| c.set(false));
    r
}

/// Whether this thread is running tract for the importer, which catches tract's panics and
/// reports them as [`OnnxError::Tract`]. A program's panic hook can ask this to keep quiet
/// about a panic that will come back as an error.
pub fn inside_tract() -> bool {
    IN_TRACT.with(Cell::get)
}

/// Ops that may read no tensor: they make one from their attributes.
const SOURCE_OPS: [&str; 3] = ["Constant", "RandomNormal", "RandomUniform"];

/// Ops that vanish at import: their output is their first input.
const VANISHING: [&str; 2] = ["Identity", "Dropout"];

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

struct Ctx<'a> {
    path: &'a Path,
    /// The default domain's opset version (0 until the model is decoded).
    opset: i64,
}

impl Ctx<'_> {
    fn malformed(&self, reason: impl Into<String>) -> OnnxError {
        OnnxError::Malformed {
            path: self.path.to_path_buf(),
            reason: one_line(&reason.into()),
        }
    }

    fn bad(&self, node: &pb::NodeProto, reason: impl Into<String>) -> OnnxError {
        OnnxError::BadNode {
            path: self.path.to_path_buf(),
            node: one_line(&node.name),
            op: one_line(&node.op_type),
            reason: one_line(&reason.into()),
        }
    }

    fn tract(&self, e: impl std::fmt::Display) -> OnnxError {
        OnnxError::Tract {
            path: self.path.to_path_buf(),
            reason: one_line(&e.to_string()),
        }
    }
}

fn attr<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

fn attr_ints(node: &pb::NodeProto, name: &str) -> Option<Vec<i64>> {
    attr(node, name).map(|a| a.ints.clone())
}

fn attr_int(node: &pb::NodeProto, name: &str) -> Option<i64> {
    attr(node, name).map(|a| a.i)
}

fn attr_str(node: &pb::NodeProto, name: &str) -> Option<String> {
    attr(node, name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
}

fn node_label(node: &pb::NodeProto, index: usize) -> String {
    if !node.name.is_empty() {
        node.name.clone()
    } else if let Some(o) = node.output.first().filter(|o| !o.is_empty()) {
        o.clone()
    } else {
        format!("#{index} ({})", node.op_type)
    }
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
        let io = |error| OnnxError::Io {
            path: path.to_path_buf(),
            error,
        };
        // Only regular files, and not past the cap: /dev/zero or a FIFO would be read without
        // bound.
        let meta = std::fs::metadata(path).map_err(io)?;
        if !meta.is_file() {
            return Err(OnnxError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        if meta.len() > self.max_file_bytes {
            return Err(OnnxError::TooLarge {
                path: path.to_path_buf(),
                bytes: meta.len(),
                max: self.max_file_bytes,
            });
        }
        let file = std::fs::File::open(path).map_err(io)?;
        let slim = slim::read(std::io::BufReader::new(file), meta.len());
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
        let facts = self.run_tract(cx, &weights_as_inputs(proto, stripped))?;

        let mut b = GraphBuilder::new(name);
        // Graph inputs that data flows from.
        for input in &graph.input {
            if analysis.data_inputs.contains(input.name.as_str()) {
                let shape = facts.shape(cx, &input.name, None)?;
                b.input(input.name.clone(), shape)
                    .map_err(|error| OnnxError::Ir {
                        path: cx.path.to_path_buf(),
                        error,
                    })?;
            }
        }
        // Tensor name -> the source producing it.
        let mut producer: HashMap<&str, Source> = HashMap::new();
        for input in &graph.input {
            if let Some(s) = b.source(&input.name) {
                producer.insert(&input.name, s);
            }
        }
        for &ni in &analysis.order {
            let node = &graph.node[ni];
            if !analysis.data_nodes.contains(&ni) {
                continue;
            }
            if VANISHING.contains(&node.op_type.as_str()) {
                let (Some(out), Some(&src)) = (
                    node.output.first(),
                    node.input.first().and_then(|i| producer.get(i.as_str())),
                ) else {
                    return Err(cx.bad(node, "reads no data tensor"));
                };
                producer.insert(out, src);
                continue;
            }
            let label = node_label(node, ni);
            let named;
            let node = if node.name.is_empty() {
                named = pb::NodeProto {
                    name: label.clone(),
                    ..node.clone()
                };
                &named
            } else {
                node
            };
            if node.op_type == "Split" {
                let outputs = &graph.node[ni].output;
                split_node(cx, node, &facts, &analysis, &mut b, &mut producer, outputs)?;
                continue;
            }
            for extra in node.output.iter().skip(1).filter(|o| !o.is_empty()) {
                if analysis.consumed.contains(extra.as_str()) {
                    return Err(cx.bad(node, format!("its second output `{extra}` is used; fuselage keeps one output per node")));
                }
            }
            let out_name = graph.node[ni]
                .output
                .first()
                .filter(|o| !o.is_empty())
                .ok_or_else(|| cx.bad(node, "the node has no output"))?;
            let shape = facts.shape(cx, out_name, Some(node))?;
            let mut inputs = Vec::new();
            let mut in_shapes = Vec::new();
            let mut weights = 0u64;
            let mut data_ports = Vec::new();
            for (port, t) in node.input.iter().enumerate() {
                if t.is_empty() {
                    continue;
                }
                if let Some(&s) = producer.get(t.as_str()) {
                    inputs.push(s);
                    in_shapes.push(facts.shape(cx, t, Some(node))?);
                    data_ports.push(port);
                } else if is_weight_port(&node.op_type, port) {
                    weights += facts.float_elements(cx, t, node)?;
                }
            }
            let op = map_op(cx, node, &facts, &in_shapes, &data_ports, &shape)?;
            let s = b
                .node_with(label, op, &inputs, shape, weights)
                .map_err(|error| OnnxError::Ir {
                    path: cx.path.to_path_buf(),
                    error,
                })?;
            producer.insert(out_name, s);
        }
        for out in &graph.output {
            if let Some(&s) = producer.get(out.name.as_str()) {
                b.output(s);
            }
        }
        let g = b.finish().map_err(|error| OnnxError::Ir {
            path: cx.path.to_path_buf(),
            error,
        })?;
        if g.is_empty() {
            return Err(cx.malformed("no node depends on a graph input"));
        }
        g.check_shapes().map_err(|error| OnnxError::Ir {
            path: cx.path.to_path_buf(),
            error,
        })?;
        Ok(g)
    }

    fn run_tract(&self, cx: &Ctx<'_>, proto: &pb::ModelProto) -> Result<Facts> {
        let graph = proto
            .graph
            .as_ref()
            .ok_or_else(|| cx.malformed("the model has no graph"))?;
        let onnx = tract_onnx::onnx();
        let parsed = in_tract(|| onnx.parse(proto, None))
            .map_err(|_| cx.tract("tract failed with an internal error while parsing the model"))?
            .map_err(|e| cx.tract(format!("{e:#}")))?;
        if !parsed.unresolved_inputs.is_empty() {
            return Err(cx.malformed(format!(
                "unresolved inputs: {}",
                parsed.unresolved_inputs.join(", ")
            )));
        }
        let mut model = parsed.model;
        let mut shapes: HashMap<String, Vec<u64>> = crate::decode::bind(cx.path, graph, self.past)?
            .into_iter()
            .collect();
        shapes.extend(self.input_shapes.clone());
        for (name, dims) in &shapes {
            let pos = graph
                .input
                .iter()
                .filter(|i| !graph.initializer.iter().any(|t| t.name == i.name))
                .position(|i| &i.name == name)
                .ok_or_else(|| {
                    cx.malformed(format!("there is no graph input `{name}` to reshape"))
                })?;
            let dims: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
            let dt = model
                .input_fact(pos)
                .ok()
                .and_then(|f| f.datum_type.concretize())
                .unwrap_or(DatumType::F32);
            model
                .set_input_fact(pos, InferenceFact::dt_shape(dt, dims))
                .map_err(|e| cx.tract(format!("{e:#}")))?;
        }
        in_tract(|| model.analyse(false))
            .map_err(|_| cx.tract("tract failed with an internal error while inferring shapes"))?
            .map_err(|e| cx.tract(format!("{e:#}")))?;
        Ok(Facts {
            model,
            outlets: parsed.outlets_by_name,
        })
    }
}

/// The model as tract is given it: each initializer whose data [`slim::read`] left out becomes
/// a graph input of its type and shape (replacing any input entry of that name), so shape
/// inference sees the shape it needs and no weight is ever materialised.
fn weights_as_inputs(proto: &pb::ModelProto, stripped: &HashSet<String>) -> pb::ModelProto {
    let mut proto = proto.clone();
    if let Some(g) = proto.graph.as_mut().filter(|_| !stripped.is_empty()) {
        let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut g.initializer)
            .into_iter()
            .partition(|t| stripped.contains(&t.name));
        g.initializer = kept;
        g.input.retain(|i| !stripped.contains(&i.name));
        g.input.extend(moved.into_iter().map(|t| {
            use pb::tensor_shape_proto::{Dimension, dimension::Value};
            let dim = t
                .dims
                .iter()
                .map(|&d| Dimension {
                    denotation: String::new(),
                    value: Some(Value::DimValue(d)),
                })
                .collect();
            pb::ValueInfoProto {
                name: t.name,
                r#type: Some(pb::TypeProto {
                    denotation: String::new(),
                    value: Some(pb::type_proto::Value::TensorType(pb::type_proto::Tensor {
                        elem_type: t.data_type,
                        shape: Some(pb::TensorShapeProto { dim }),
                    })),
                }),
                doc_string: String::new(),
            }
        }));
    }
    proto
}

/// What the protobuf alone tells: a topological order, which nodes carry data, which tensors
/// are read.
struct Structure<'a> {
    order: Vec<usize>,
    data_nodes: HashSet<usize>,
    data_inputs: HashSet<&'a str>,
    consumed: HashSet<&'a str>,
    /// The graph's output tensors.
    outputs: HashSet<&'a str>,
}

fn analyse_structure<'a>(cx: &Ctx<'_>, graph: &'a pb::GraphProto) -> Result<Structure<'a>> {
    let initializers: HashSet<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let real_inputs: Vec<&str> = graph
        .input
        .iter()
        .map(|i| i.name.as_str())
        .filter(|n| !initializers.contains(n))
        .collect();
    // Tensor -> producing node.
    let mut made_by: HashMap<&str, usize> = HashMap::new();
    for (ni, node) in graph.node.iter().enumerate() {
        for o in node.output.iter().filter(|o| !o.is_empty()) {
            if made_by.insert(o.as_str(), ni).is_some() || initializers.contains(o.as_str()) {
                return Err(cx.malformed(format!("tensor `{o}` is defined twice")));
            }
        }
    }
    let mut consumed = HashSet::new();
    for (ni, node) in graph.node.iter().enumerate() {
        for t in node.input.iter().filter(|t| !t.is_empty()) {
            let known = made_by.contains_key(t.as_str())
                || initializers.contains(t.as_str())
                || real_inputs.contains(&t.as_str());
            if !known {
                return Err(cx.malformed(format!(
                    "node `{}` ({}) reads `{t}`, which no node, initializer or graph input defines",
                    node_label(node, ni),
                    node.op_type
                )));
            }
            consumed.insert(t.as_str());
        }
        // Checks tract would otherwise meet with a panic (found by fuzzing).
        if node.input.iter().all(String::is_empty) && !SOURCE_OPS.contains(&node.op_type.as_str()) {
            return Err(cx.bad(node, "the node reads no tensor"));
        }
        if node.op_type == "Transpose"
            && let Some(perm) = attr_ints(node, "perm")
        {
            let mut sorted = perm.clone();
            sorted.sort_unstable();
            if !sorted.iter().copied().eq(0..perm.len() as i64) {
                return Err(cx.bad(node, format!("perm {perm:?} is not a permutation")));
            }
        }
    }
    // tract reads raw initializer data of these types only (and stops at `unimplemented!` on
    // the rest); `STRING` (8) is never raw.
    const RAW_TYPES: [i32; 12] = [1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13];
    if let Some(t) = graph
        .initializer
        .iter()
        .find(|t| !t.raw_data.is_empty() && !RAW_TYPES.contains(&t.data_type))
    {
        return Err(cx.malformed(format!(
            "initializer `{}` holds raw data of ONNX data type {}, which fuselage cannot read",
            t.name, t.data_type
        )));
    }
    for out in &graph.output {
        let known = made_by.contains_key(out.name.as_str())
            || initializers.contains(out.name.as_str())
            || real_inputs.contains(&out.name.as_str());
        if !known {
            return Err(cx.malformed(format!(
                "the graph output `{}` is defined by no node, initializer or graph input",
                out.name
            )));
        }
    }
    // Topological order (Kahn), stable in file order.
    let n = graph.node.len();
    let mut indeg = vec![0usize; n];
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (ni, node) in graph.node.iter().enumerate() {
        for t in node.input.iter().filter(|t| !t.is_empty()) {
            if let Some(&p) = made_by.get(t.as_str()) {
                indeg[ni] += 1;
                users[p].push(ni);
            }
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &u in &users[i] {
            indeg[u] -= 1;
            if indeg[u] == 0 {
                ready.insert(u);
            }
        }
    }
    if order.len() != n {
        return Err(cx.malformed("the nodes form a cycle"));
    }
    // Data flow from the real inputs; Shape and Size cut it (the input shape is fixed).
    let mut data_tensors: HashSet<&str> = real_inputs.iter().copied().collect();
    let mut data_nodes = HashSet::new();
    for &ni in &order {
        let node = &graph.node[ni];
        let reads_data = node.input.iter().any(|t| data_tensors.contains(t.as_str()));
        if reads_data && !matches!(node.op_type.as_str(), "Shape" | "Size") {
            data_nodes.insert(ni);
            for o in node.output.iter().filter(|o| !o.is_empty()) {
                data_tensors.insert(o.as_str());
            }
        }
    }
    let data_inputs = real_inputs
        .iter()
        .copied()
        .filter(|i| consumed.contains(i))
        .collect();
    // Every data node's op must be one the IR has: list every op type that is not, once.
    let mut unsupported: Vec<UnsupportedOp> = Vec::new();
    for &ni in &order {
        if !data_nodes.contains(&ni) {
            continue;
        }
        let node = &graph.node[ni];
        let default_domain = node.domain.is_empty() || node.domain == "ai.onnx";
        let known = OpKind::from_name(&node.op_type).is_some()
            || VANISHING.contains(&node.op_type.as_str());
        if !default_domain || !known {
            let op = if default_domain {
                node.op_type.clone()
            } else {
                format!("{}::{}", node.domain, node.op_type)
            };
            match unsupported.iter_mut().find(|u| u.op == op) {
                Some(u) => u.count += 1,
                None => unsupported.push(UnsupportedOp {
                    op,
                    count: 1,
                    first: node_label(node, ni),
                }),
            }
        }
    }
    if !unsupported.is_empty() {
        return Err(OnnxError::Unsupported {
            path: cx.path.to_path_buf(),
            ops: unsupported,
        });
    }
    for &ni in &order {
        if data_nodes.contains(&ni) {
            check_spatial_attrs(cx, &graph.node[ni], ni)?;
        }
    }
    Ok(Structure {
        order,
        data_nodes,
        data_inputs,
        consumed,
        outputs: graph.output.iter().map(|o| o.name.as_str()).collect(),
    })
}

/// Rejects spatial attributes of the wrong length before tract sees them (tract indexes them
/// without checking).
fn check_spatial_attrs(cx: &Ctx<'_>, node: &pb::NodeProto, index: usize) -> Result<()> {
    if !matches!(node.op_type.as_str(), "Conv" | "MaxPool" | "AveragePool") {
        return Ok(());
    }
    for (name, len) in [
        ("kernel_shape", 2),
        ("strides", 2),
        ("dilations", 2),
        ("pads", 4),
    ] {
        if let Some(v) = attr_ints(node, name)
            && (v.len() != len || v.iter().any(|&x| x < 0) || (name != "pads" && v.contains(&0)))
        {
            let node = pb::NodeProto {
                name: node_label(node, index),
                ..node.clone()
            };
            return Err(cx.bad(
                &node,
                format!("attribute {name} = {v:?}: expected {len} valid values for a 2-D op"),
            ));
        }
    }
    Ok(())
}

/// Whether input `port` of an `op_type` node holds parameters (counted as weights): the
/// weights and biases of Conv and Gemm, BatchNormalization's statistics, the scale and bias of
/// the normalisations, a Gather's table, and any constant operand of an element-wise op, a
/// MatMul or a Concat (a ViT's class token). Clip bounds and shape or index inputs are not.
fn is_weight_port(op_type: &str, port: usize) -> bool {
    match op_type {
        "Conv" | "Gemm" => port == 1 || port == 2,
        "BatchNormalization" => (1..=4).contains(&port),
        "Add" | "Sub" | "Mul" | "Div" | "MatMul" => port <= 1,
        "LayerNormalization" | "InstanceNormalization" | "GroupNormalization" => {
            port == 1 || port == 2
        }
        "RMSNormalization" | "PRelu" => port == 1,
        "Gather" => port == 0,
        "Concat" => true,
        other => OpKind::from_name(other).is_some_and(|k| k.class() == OpClass::Elementwise),
    }
}

/// Imports one ONNX `Split` as one node per used output: output 0 keeps the node's name,
/// output `i` is `NAME:i`. Each is an [`Op::Split`] part, a tensor of its own.
fn split_node<'g>(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    facts: &Facts,
    analysis: &Structure<'_>,
    b: &mut GraphBuilder,
    producer: &mut HashMap<&'g str, Source>,
    outputs: &'g [String],
) -> Result<()> {
    let x = node.input.first().ok_or_else(|| cx.bad(node, "no input"))?;
    let src = *producer
        .get(x.as_str())
        .ok_or_else(|| cx.bad(node, "splits a constant tensor"))?;
    let in_shape = facts.shape(cx, x, Some(node))?;
    let a = axis(
        cx,
        node,
        attr_int(node, "axis").unwrap_or(0),
        in_shape.rank(),
    )?;
    if a as usize >= in_shape.rank() {
        return Err(cx.bad(node, format!("axis {a} out of range for {in_shape}")));
    }
    let mut start = 0u64;
    for (i, out) in outputs.iter().map(String::as_str).enumerate() {
        if out.is_empty() {
            continue;
        }
        let shape = facts.shape(cx, out, Some(node))?;
        let len = shape
            .0
            .get(a as usize)
            .copied()
            .ok_or_else(|| cx.bad(node, format!("output `{out}` has shape {shape}")))?;
        if analysis.consumed.contains(out) || analysis.outputs.contains(out) {
            let name = if i == 0 {
                node.name.clone()
            } else {
                format!("{}:{i}", node.name)
            };
            let op = Op::Split {
                axis: a,
                start,
                len,
            };
            let s = b
                .node_with(name, op, &[src], shape, 0)
                .map_err(|error| OnnxError::Ir {
                    path: cx.path.to_path_buf(),
                    error,
                })?;
            producer.insert(out, s);
        }
        start += len;
    }
    Ok(())
}

/// tract's analysed model, and where each ONNX tensor name lives in it.
struct Facts {
    model: InferenceModel,
    outlets: HashMap<String, OutletId>,
}

impl Facts {
    fn fact(&self, cx: &Ctx<'_>, tensor: &str) -> Result<&InferenceFact> {
        let outlet = self
            .outlets
            .get(tensor)
            .ok_or_else(|| cx.tract(format!("tract has no tensor `{tensor}`")))?;
        self.model
            .outlet_fact(*outlet)
            .map_err(|e| cx.tract(format!("{e:#}")))
    }

    fn shape(
        &self,
        cx: &Ctx<'_>,
        tensor: &str,
        node: Option<&pb::NodeProto>,
    ) -> Result<TensorShape> {
        let dims = self
            .fact(cx, tensor)?
            .shape
            .as_concrete_finite()
            .ok()
            .flatten()
            .ok_or_else(|| {
                let why = format!(
                    "the shape of `{tensor}` is not static after inference; fix the input shape (Importer::with_input_shape)"
                );
                match node {
                    Some(node) => cx.bad(node, why),
                    None => cx.malformed(why),
                }
            })?;
        Ok(TensorShape(dims.iter().map(|&d| d as u64).collect()))
    }

    fn float_elements(&self, cx: &Ctx<'_>, tensor: &str, node: &pb::NodeProto) -> Result<u64> {
        let fact = self.fact(cx, tensor)?;
        if !fact.datum_type.concretize().is_some_and(|d| d.is_float()) {
            return Ok(0);
        }
        Ok(self.shape(cx, tensor, Some(node))?.elements())
    }

    fn ints(&self, cx: &Ctx<'_>, tensor: &str, node: &pb::NodeProto) -> Result<Vec<i64>> {
        let value = self
            .fact(cx, tensor)?
            .value
            .concretize()
            .ok_or_else(|| cx.bad(node, format!("input `{tensor}` is not a constant")))?;
        let cast = value
            .cast_to::<i64>()
            .map_err(|e| cx.bad(node, format!("input `{tensor}` is not integer: {e}")))?;
        let values = cast
            .to_plain_array_view::<i64>()
            .map_err(|e| cx.bad(node, format!("input `{tensor}`: {e}")))?;
        Ok(values.iter().copied().collect())
    }
}

fn axis(cx: &Ctx<'_>, node: &pb::NodeProto, a: i64, rank: usize) -> Result<u64> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if v < 0 || v > r {
        return Err(cx.bad(node, format!("axis {a} out of range for rank {rank}")));
    }
    Ok(v as u64)
}

fn pair(v: &[i64]) -> [u64; 2] {
    [
        v.first().copied().unwrap_or(1) as u64,
        v.get(1).copied().unwrap_or(1) as u64,
    ]
}

/// `[top, left, bottom, right]`, from explicit pads or from `auto_pad`.
fn pads2d(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    span: [u64; 2],
    stride: [u64; 2],
    input: &TensorShape,
    output: &TensorShape,
) -> Result<[u64; 4]> {
    let auto = attr_str(node, "auto_pad").unwrap_or_default();
    match auto.as_str() {
        "" | "NOTSET" => {
            let p = attr_ints(node, "pads").unwrap_or_else(|| vec![0; 4]);
            if p.len() != 4 || p.iter().any(|&x| x < 0) {
                return Err(cx.bad(node, format!("pads {p:?} are not 4 non-negative values")));
            }
            Ok([p[0] as u64, p[1] as u64, p[2] as u64, p[3] as u64])
        }
        "VALID" => Ok([0; 4]),
        "SAME_UPPER" | "SAME_LOWER" => {
            let mut pads = [0; 4];
            for d in 0..2 {
                let (i, o) = (input.0[2 + d], output.0[2 + d]);
                let total = ((o.saturating_sub(1)) * stride[d] + span[d]).saturating_sub(i);
                let (small, big) = (total / 2, total - total / 2);
                let (begin, end) = if auto == "SAME_UPPER" {
                    (small, big)
                } else {
                    (big, small)
                };
                pads[d] = begin;
                pads[d + 2] = end;
            }
            Ok(pads)
        }
        other => Err(cx.bad(node, format!("unknown auto_pad `{other}`"))),
    }
}

fn map_op(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    facts: &Facts,
    ins: &[TensorShape],
    data_ports: &[usize],
    out: &TensorShape,
) -> Result<Op> {
    let x = ins
        .first()
        .ok_or_else(|| cx.bad(node, "the node reads no data tensor"))?;
    let spatial = |what: &str| -> Result<()> {
        if x.rank() == 4 && out.rank() == 4 {
            Ok(())
        } else {
            Err(cx.bad(
                node,
                format!("only 2-D {what} on NCHW tensors is supported, got {x}"),
            ))
        }
    };
    let kind = OpKind::from_name(&node.op_type).ok_or_else(|| cx.bad(node, "unsupported op"))?;
    Ok(match kind {
        OpKind::Conv => {
            spatial("convolution")?;
            let w = node
                .input
                .get(1)
                .filter(|w| !w.is_empty())
                .ok_or_else(|| cx.bad(node, "no weight input"))?;
            let wshape = facts.shape(cx, w, Some(node))?;
            if wshape.rank() != 4 {
                return Err(cx.bad(
                    node,
                    format!("weight `{w}` has shape {wshape}, expected 4-D"),
                ));
            }
            let kernel = attr_ints(node, "kernel_shape")
                .map(|k| pair(&k))
                .unwrap_or([wshape.0[2], wshape.0[3]]);
            let stride = attr_ints(node, "strides")
                .map(|s| pair(&s))
                .unwrap_or([1, 1]);
            let dilation = attr_ints(node, "dilations")
                .map(|s| pair(&s))
                .unwrap_or([1, 1]);
            let span = [
                dilation[0] * (kernel[0] - 1) + 1,
                dilation[1] * (kernel[1] - 1) + 1,
            ];
            let pads = pads2d(cx, node, span, stride, x, out)?;
            let group = attr_int(node, "group").unwrap_or(1).max(1) as u64;
            Op::Conv(ConvAttrs {
                out_channels: wshape.0[0],
                kernel,
                stride,
                pads,
                dilation,
                group,
            })
        }
        OpKind::MaxPool | OpKind::AveragePool => {
            spatial("pooling")?;
            let kernel = pair(
                &attr_ints(node, "kernel_shape").ok_or_else(|| cx.bad(node, "no kernel_shape"))?,
            );
            let stride = attr_ints(node, "strides")
                .map(|s| pair(&s))
                .unwrap_or([1, 1]);
            if attr_ints(node, "dilations").is_some_and(|d| d.iter().any(|&v| v != 1)) {
                return Err(cx.bad(node, "dilated pooling is not supported"));
            }
            let pads = pads2d(cx, node, kernel, stride, x, out)?;
            let ceil_mode = attr_int(node, "ceil_mode").unwrap_or(0) != 0;
            let a = PoolAttrs {
                kernel,
                stride,
                pads,
                ceil_mode,
            };
            if kind == OpKind::MaxPool {
                Op::MaxPool(a)
            } else {
                Op::AveragePool(a)
            }
        }
        OpKind::GlobalAveragePool => Op::GlobalAveragePool,
        OpKind::GlobalMaxPool => Op::GlobalMaxPool,
        OpKind::Relu => Op::Relu,
        OpKind::Clip => Op::Clip,
        OpKind::Sigmoid => Op::Sigmoid,
        OpKind::HardSigmoid => Op::HardSigmoid,
        OpKind::HardSwish => Op::HardSwish,
        OpKind::Tanh => Op::Tanh,
        OpKind::Add => Op::Add,
        OpKind::Sub => Op::Sub,
        OpKind::Mul => Op::Mul,
        OpKind::Div => Op::Div,
        OpKind::Concat => {
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(0), x.rank())?;
            let data: u64 = ins
                .iter()
                .map(|s| s.0.get(a as usize).copied().unwrap_or(0))
                .sum();
            let constant = out
                .0
                .get(a as usize)
                .and_then(|&o| o.checked_sub(data))
                .ok_or_else(|| cx.bad(node, format!("output {out} is smaller than its inputs")))?;
            Op::Concat { axis: a, constant }
        }
        OpKind::Flatten => Op::Flatten {
            axis: axis(cx, node, attr_int(node, "axis").unwrap_or(1), x.rank())?,
        },
        OpKind::Gemm => {
            if data_ports != [0] {
                return Err(cx.bad(node, "only a data A operand is supported (A·B + C)"));
            }
            if out.rank() != 2 {
                return Err(cx.bad(node, format!("output {out} is not 2-D")));
            }
            if attr_int(node, "transA").unwrap_or(0) != 0 {
                return Err(cx.bad(node, "transA = 1 is not supported"));
            }
            Op::Gemm {
                out_features: out.0[1],
            }
        }
        OpKind::MatMul => {
            if data_ports == [1] {
                return Err(cx.bad(node, "a constant left operand is not supported"));
            }
            Op::MatMul
        }
        OpKind::BatchNormalization => Op::BatchNormalization,
        OpKind::Pad => {
            let pads = match node.input.get(1).filter(|p| !p.is_empty()) {
                Some(p) => facts.ints(cx, p, node)?,
                None => attr_ints(node, "pads").unwrap_or_default(),
            };
            if pads.iter().any(|&p| p < 0) {
                return Err(cx.bad(node, "negative pads (cropping) are not supported"));
            }
            if node.input.get(3).is_some_and(|a| !a.is_empty()) {
                return Err(cx.bad(node, "Pad with an `axes` input is not supported"));
            }
            let mirrored = match attr_str(node, "mode").as_deref() {
                None | Some("constant") => false,
                Some("reflect" | "edge") => true,
                Some(other) => return Err(cx.bad(node, format!("unknown pad mode `{other}`"))),
            };
            Op::Pad {
                pads: pads.iter().map(|&p| p as u64).collect(),
                mirrored,
            }
        }
        OpKind::ReduceMean => Op::ReduceMean {
            axes: reduce_axes(cx, node, facts, x)?,
            keepdims: attr_int(node, "keepdims").unwrap_or(1) != 0,
        },
        k if k.class() == OpClass::Reduce => Op::Reduce {
            kind: k,
            axes: reduce_axes(cx, node, facts, x)?,
            keepdims: attr_int(node, "keepdims").unwrap_or(1) != 0,
        },
        k if k.class() == OpClass::Unary => Op::Unary { kind: k },
        k if k.class() == OpClass::Elementwise => Op::Elementwise { kind: k },
        OpKind::LayerNormalization | OpKind::RMSNormalization | OpKind::LpNormalization => {
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(-1), x.rank())?;
            Op::normalize(kind, a)
        }
        // Before opset 13, Softmax and LogSoftmax coerce the input to 2-D at `axis` (default
        // 1) and normalise every axis from it on.
        OpKind::Softmax | OpKind::LogSoftmax if cx.opset < 13 => {
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(1), x.rank())?;
            if a as usize + 1 >= x.rank() && kind == OpKind::Softmax {
                Op::Softmax { axis: a }
            } else {
                Op::Normalize {
                    kind,
                    axis: a,
                    trailing: true,
                }
            }
        }
        OpKind::LogSoftmax => {
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(-1), x.rank())?;
            Op::normalize(kind, a)
        }
        OpKind::InstanceNormalization | OpKind::GroupNormalization => {
            if x.rank() < 3 {
                return Err(cx.bad(node, format!("needs a spatial input, got {x}")));
            }
            Op::normalize(kind, 2)
        }
        OpKind::Squeeze => {
            let axes = match ints_input_or_attr(cx, node, facts, 1, "axes")? {
                Some(v) => normalised_axes(cx, node, &v, x.rank())?,
                None => (0..x.rank() as u64)
                    .filter(|&i| x.0[i as usize] == 1)
                    .collect(),
            };
            Op::Squeeze { axes }
        }
        OpKind::Unsqueeze => {
            let v = ints_input_or_attr(cx, node, facts, 1, "axes")?
                .ok_or_else(|| cx.bad(node, "no axes"))?;
            Op::Unsqueeze {
                axes: normalised_axes(cx, node, &v, out.rank())?,
            }
        }
        OpKind::Slice => slice_op(cx, node, facts, x)?,
        OpKind::Gather => {
            let index = match data_ports {
                [0] => GatherIndex::Constant {
                    dims: const_shape(cx, node, facts, 1)?,
                },
                [1] => GatherIndex::Table {
                    dims: const_shape(cx, node, facts, 0)?,
                },
                _ => return Err(cx.bad(node, "gathers data by data indices")),
            };
            let data_rank = match &index {
                GatherIndex::Constant { .. } => x.rank(),
                GatherIndex::Table { dims } => dims.len(),
            };
            let a = axis(cx, node, attr_int(node, "axis").unwrap_or(0), data_rank)?;
            if a as usize >= data_rank {
                return Err(cx.bad(node, format!("axis {a} out of range")));
            }
            Op::Gather { axis: a, index }
        }
        OpKind::Expand => Op::Expand {
            target: out.0.clone(),
        },
        OpKind::Tile => {
            let repeats = ints_input_or_attr(cx, node, facts, 1, "repeats")?
                .ok_or_else(|| cx.bad(node, "no repeats"))?;
            if repeats.iter().any(|&r| r < 0) {
                return Err(cx.bad(node, format!("negative repeats {repeats:?}")));
            }
            Op::Tile {
                repeats: repeats.iter().map(|&r| r as u64).collect(),
            }
        }
        OpKind::Split => return Err(cx.bad(node, "Split is imported part by part")),
        OpKind::Resize => Op::Resize {
            mode: attr_str(node, "mode").unwrap_or_else(|| "nearest".into()),
        },
        OpKind::Reshape => Op::Reshape,
        OpKind::Transpose => {
            let perm =
                attr_ints(node, "perm").unwrap_or_else(|| (0..x.rank() as i64).rev().collect());
            Op::Transpose {
                perm: perm.iter().map(|&p| p.max(0) as u64).collect(),
            }
        }
        OpKind::Softmax => Op::Softmax {
            axis: axis(cx, node, attr_int(node, "axis").unwrap_or(-1), x.rank())?,
        },
        k => {
            return Err(cx.bad(
                node,
                format!("{k} (class {:?}) has no import rule", k.class()),
            ));
        }
    })
}

/// Integers from input `port` (newer opsets) or attribute `name` (older ones).
fn ints_input_or_attr(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    facts: &Facts,
    port: usize,
    name: &str,
) -> Result<Option<Vec<i64>>> {
    match node.input.get(port).filter(|a| !a.is_empty()) {
        Some(t) => Ok(Some(facts.ints(cx, t, node)?)),
        None => Ok(attr_ints(node, name)),
    }
}

/// Axes made non-negative against `rank`, sorted, each in range.
fn normalised_axes(cx: &Ctx<'_>, node: &pb::NodeProto, v: &[i64], rank: usize) -> Result<Vec<u64>> {
    let mut axes = Vec::with_capacity(v.len());
    for &a in v {
        let n = axis(cx, node, a, rank)?;
        if n as usize >= rank {
            return Err(cx.bad(node, format!("axis {a} out of range for rank {rank}")));
        }
        axes.push(n);
    }
    axes.sort_unstable();
    axes.dedup();
    Ok(axes)
}

/// The reduced axes of a reduction (input or attribute; every axis when there are none).
fn reduce_axes(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    facts: &Facts,
    x: &TensorShape,
) -> Result<Vec<u64>> {
    match ints_input_or_attr(cx, node, facts, 1, "axes")? {
        Some(v) if !v.is_empty() => normalised_axes(cx, node, &v, x.rank()),
        _ if attr_int(node, "noop_with_empty_axes").unwrap_or(0) != 0 => Ok(Vec::new()),
        _ => Ok((0..x.rank() as u64).collect()),
    }
}

/// The shape of the constant on input `port`.
fn const_shape(cx: &Ctx<'_>, node: &pb::NodeProto, facts: &Facts, port: usize) -> Result<Vec<u64>> {
    let t = node
        .input
        .get(port)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| cx.bad(node, format!("no input {port}")))?;
    Ok(facts.shape(cx, t, Some(node))?.0)
}

/// A `Slice`, its starts and ends normalised (negative from the end) and clamped as ONNX says.
fn slice_op(cx: &Ctx<'_>, node: &pb::NodeProto, facts: &Facts, x: &TensorShape) -> Result<Op> {
    let starts = ints_input_or_attr(cx, node, facts, 1, "starts")?
        .ok_or_else(|| cx.bad(node, "no starts"))?;
    let ends =
        ints_input_or_attr(cx, node, facts, 2, "ends")?.ok_or_else(|| cx.bad(node, "no ends"))?;
    let axes = ints_input_or_attr(cx, node, facts, 3, "axes")?
        .unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = ints_input_or_attr(cx, node, facts, 4, "steps")?.unwrap_or(vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(cx.bad(node, "starts, ends, axes and steps differ in length"));
    }
    let (mut a_out, mut s_out, mut e_out, mut st_out) = (vec![], vec![], vec![], vec![]);
    for i in 0..starts.len() {
        let a = axis(cx, node, axes[i], x.rank())?;
        let dim =
            *x.0.get(a as usize)
                .ok_or_else(|| cx.bad(node, format!("axis {} out of range for {x}", axes[i])))?
                as i64;
        if steps[i] <= 0 {
            return Err(cx.bad(
                node,
                format!("step {} is not supported (only positive steps)", steps[i]),
            ));
        }
        if a_out.contains(&a) {
            return Err(cx.bad(node, format!("axis {} is sliced twice", axes[i])));
        }
        let clamp = |v: i64| if v < 0 { v.saturating_add(dim) } else { v }.clamp(0, dim) as u64;
        let (s, e) = (clamp(starts[i]), clamp(ends[i]));
        a_out.push(a);
        s_out.push(s);
        e_out.push(e.max(s));
        // A step past the slice takes its first entry only: the same slice, with no huge
        // stride for the row windows to multiply.
        st_out.push((steps[i] as u64).min((e.max(s) - s).max(1)));
    }
    Ok(Op::Slice {
        axes: a_out,
        starts: s_out,
        ends: e_out,
        steps: st_out,
    })
}
