//! Decode steps: the input shapes of an export with a key-value cache, bound from the number of
//! tokens already in the cache ([`Importer::with_past`](crate::Importer::with_past)).
//!
//! A decoder exported for generation (transformers' `LlamaForCausalLM` or `GPT2LMHeadModel`
//! with `use_cache=True`) takes, beside its token inputs, one key and one value cache per
//! layer, named `past_key_values.{i}.key` and `past_key_values.{i}.value` and shaped
//! `[batch, kv_heads, past, head_dim]`. An export with dynamic axes leaves the batch, the past
//! length and the new tokens symbolic; fuselage plans one shape, so they are bound here:
//!
//! | input | bound to |
//! | --- | --- |
//! | `past_key_values.*` (rank 4) | `[1, kv_heads, N, head_dim]`: the batch 1, the past `N` |
//! | `attention_mask` (rank 2) | `[1, N + 1]`: the cache and the new token |
//! | any other input | each symbolic dim 1: the batch, and one new token |
//!
//! where `N` is the past given. A cache whose past length the file fixes must be `N`. A file
//! whose cache has a symbolic past length cannot be imported without `N`, and `N` is refused
//! for a file that has no cache: both in one line ([`OnnxError::Past`]).

use crate::error::{OnnxError, Result, one_line};
use std::path::Path;
use tract_onnx::pb;
use tract_onnx::pb::tensor_shape_proto::dimension::Value;

/// The prefix of a key-value cache input's name.
const CACHE: &str = "past_key_values";

/// The axis of a cache input that holds the past tokens.
const PAST_AXIS: usize = 2;

/// One dim of a graph input as the file declares it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Dim {
    /// A fixed size.
    Fixed(u64),
    /// A symbolic size, by its name (empty when the file gives none).
    Symbol(String),
}

/// The declared dims of `input`, or `None` when it declares no tensor shape.
fn dims(input: &pb::ValueInfoProto) -> Option<Vec<Dim>> {
    let pb::type_proto::Value::TensorType(t) = input.r#type.as_ref()?.value.as_ref()?;
    let shape = t.shape.as_ref()?;
    Some(
        shape
            .dim
            .iter()
            .map(|d| match &d.value {
                Some(Value::DimValue(v)) if *v >= 0 => Dim::Fixed(*v as u64),
                Some(Value::DimParam(p)) => Dim::Symbol(p.clone()),
                _ => Dim::Symbol(String::new()),
            })
            .collect(),
    )
}

fn is_cache(input: &pb::ValueInfoProto) -> bool {
    input.name.starts_with(CACHE)
}

/// The shapes to give the graph inputs of `graph` (initializers left out) for a decode step
/// against `past` cached tokens: see the module docs. With `past` of `None`, nothing is bound,
/// and a cache of symbolic length is refused.
///
/// # Errors
/// [`OnnxError::Past`] naming the file and the input.
pub(crate) fn bind(
    path: &Path,
    graph: &pb::GraphProto,
    past: Option<u64>,
) -> Result<Vec<(String, Vec<u64>)>> {
    let err = |reason: String| OnnxError::Past {
        path: path.to_path_buf(),
        reason: one_line(&reason),
    };
    let inputs: Vec<&pb::ValueInfoProto> = graph
        .input
        .iter()
        .filter(|i| !graph.initializer.iter().any(|t| t.name == i.name))
        .collect();
    let caches: Vec<(&pb::ValueInfoProto, Vec<Dim>)> = inputs
        .iter()
        .filter(|i| is_cache(i))
        .filter_map(|i| Some((*i, dims(i)?)))
        .collect();
    let Some(past) = past else {
        for (input, d) in &caches {
            if let Some(Dim::Symbol(name)) = d.get(PAST_AXIS) {
                return Err(err(format!(
                    "the key-value cache input `{}` has a symbolic past length `{name}`: give \
                     the tokens already in the cache (--decode --past N; Importer::with_past)",
                    input.name
                )));
            }
        }
        return Ok(Vec::new());
    };
    if caches.is_empty() {
        return Err(err(format!(
            "--past {past} binds a key-value cache, and the model has no `{CACHE}.*` input"
        )));
    }
    let mut shapes = Vec::new();
    for input in inputs {
        let Some(d) = dims(input) else {
            continue;
        };
        let one = |x: &Dim| match x {
            Dim::Fixed(v) => *v,
            Dim::Symbol(_) => 1,
        };
        let bound: Vec<u64> = if is_cache(input) {
            if d.len() != 4 {
                return Err(err(format!(
                    "the key-value cache input `{}` has rank {}, not 4 ([batch, heads, past, head_dim])",
                    input.name,
                    d.len()
                )));
            }
            if let Dim::Fixed(p) = d[PAST_AXIS]
                && p != past
            {
                return Err(err(format!(
                    "the key-value cache input `{}` holds {p} past tokens in the file, not --past {past}",
                    input.name
                )));
            }
            for (axis, what) in [(1, "heads"), (3, "head width")] {
                if let Dim::Symbol(s) = &d[axis] {
                    return Err(err(format!(
                        "the key-value cache input `{}` has a symbolic {what} `{s}`",
                        input.name
                    )));
                }
            }
            vec![1, one(&d[1]), past, one(&d[3])]
        } else if input.name == "attention_mask" && d.len() == 2 {
            vec![1, past + 1]
        } else {
            d.iter().map(one).collect()
        };
        let declared: Vec<Dim> = bound.iter().map(|&v| Dim::Fixed(v)).collect();
        if declared != d {
            shapes.push((input.name.clone(), bound));
        }
    }
    Ok(shapes)
}
