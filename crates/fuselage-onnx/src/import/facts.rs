//! What tract infers: the model is handed to tract-onnx (its large weights as typed graph
//! inputs, [`weights_as_inputs`]), the input shapes are fixed, and tract's analysis gives every
//! tensor's shape, datum type and, where it needs no model input, its value ([`Facts`]). Every
//! call into tract runs behind `catch_unwind` ([`in_tract`]), so that a panic in tract comes
//! back as an error.

use super::ctx::Ctx;
use crate::error::Result;
use fuselage_ir::TensorShape;
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use tract_onnx::pb;
use tract_onnx::prelude::*;
use tract_onnx::tract_hir::infer::Factoid;

thread_local! {
    static IN_TRACT: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` (a call into tract) behind `catch_unwind`, marking this thread as inside tract
/// meanwhile ([`inside_tract`]).
pub(super) fn in_tract<T>(f: impl FnOnce() -> T) -> std::thread::Result<T> {
    IN_TRACT.with(|c| c.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    IN_TRACT.with(|c| c.set(false));
    r
}

/// Whether this thread is running tract for the importer, which catches tract's panics and
/// reports them as [`OnnxError::Tract`](crate::OnnxError::Tract). A program's panic hook can
/// ask this to keep quiet about a panic that will come back as an error.
pub fn inside_tract() -> bool {
    IN_TRACT.with(Cell::get)
}

/// Runs tract on `proto` with the input shapes bound (a decode step's by `past`, then
/// `input_shapes`), and returns its analysed model.
pub(super) fn run_tract(
    cx: &Ctx<'_>,
    proto: &pb::ModelProto,
    input_shapes: &HashMap<String, Vec<u64>>,
    past: Option<u64>,
) -> Result<Facts> {
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
    let mut shapes: HashMap<String, Vec<u64>> = crate::decode::bind(cx.path, graph, past)?
        .into_iter()
        .collect();
    shapes.extend(input_shapes.clone());
    for (name, dims) in &shapes {
        let pos = graph
            .input
            .iter()
            .filter(|i| !graph.initializer.iter().any(|t| t.name == i.name))
            .position(|i| &i.name == name)
            .ok_or_else(|| cx.malformed(format!("there is no graph input `{name}` to reshape")))?;
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

/// The model as tract is given it: each initializer whose data
/// [`slim::read`](crate::slim::read) left out becomes a graph input of its type and shape
/// (replacing any input entry of that name), so shape inference sees the shape it needs and no
/// weight is ever materialised.
pub(super) fn weights_as_inputs(
    proto: &pb::ModelProto,
    stripped: &HashSet<String>,
) -> pb::ModelProto {
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

/// tract's analysed model, and where each ONNX tensor name lives in it.
pub(super) struct Facts {
    model: InferenceModel,
    outlets: HashMap<String, OutletId>,
}

impl Facts {
    pub(super) fn fact(&self, cx: &Ctx<'_>, tensor: &str) -> Result<&InferenceFact> {
        let outlet = self
            .outlets
            .get(tensor)
            .ok_or_else(|| cx.tract(format!("tract has no tensor `{tensor}`")))?;
        self.model
            .outlet_fact(*outlet)
            .map_err(|e| cx.tract(format!("{e:#}")))
    }

    pub(super) fn shape(
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

    pub(super) fn float_elements(
        &self,
        cx: &Ctx<'_>,
        tensor: &str,
        node: &pb::NodeProto,
    ) -> Result<u64> {
        let fact = self.fact(cx, tensor)?;
        if !fact.datum_type.concretize().is_some_and(|d| d.is_float()) {
            return Ok(0);
        }
        Ok(self.shape(cx, tensor, Some(node))?.elements())
    }

    pub(super) fn ints(
        &self,
        cx: &Ctx<'_>,
        tensor: &str,
        node: &pb::NodeProto,
    ) -> Result<Vec<i64>> {
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
