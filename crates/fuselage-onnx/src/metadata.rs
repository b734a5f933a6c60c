//! Node and model metadata of an ONNX file, written and read without touching anything else.
//!
//! ONNX gives every node `metadata_props` (`NodeProto` field 9, string pairs) and the model
//! its own (`ModelProto` field 14). A compiler reads them from the file it is given, so
//! fuselage hands a plan over there ([`annotate`]) and reads it back ([`read`]).
//!
//! ## Design
//!
//! The decoder fuselage imports with (tract's generated protobuf types) predates node
//! metadata, and re-encoding through it would drop every field it does not know. So this
//! module walks the protobuf wire format itself: it copies every field of the model, graph
//! and nodes byte for byte, drops only the `metadata_props` entries whose key starts with the
//! given prefix (an earlier export), appends the new entries, and rewrites the lengths of the
//! messages that grew. Everything else — weights, attributes, other tools' metadata — comes
//! out as it went in, so the exported file imports to the same graph.
//!
//! Nodes are matched by the names the importer gives them: the node's name, else its first
//! output's, else `#index (op)`; a `Split`'s part `i ≥ 1` is `NAME:i`, whose keys are written
//! on the `Split` node with the suffix `:i`.

use crate::error::{OnnxError, Result};
use crate::wire::{Field, LEN, fields, put_len};
use std::collections::HashMap;
use std::path::Path;

/// `ModelProto.graph`, `ModelProto.metadata_props`, `GraphProto.node`, `NodeProto.output`,
/// `NodeProto.name`, `NodeProto.op_type`, `NodeProto.metadata_props`.
const MODEL_GRAPH: u64 = 7;
const MODEL_METADATA: u64 = 14;
const GRAPH_NODE: u64 = 1;
const NODE_OUTPUT: u64 = 2;
const NODE_NAME: u64 = 3;
const NODE_OP: u64 = 4;
const NODE_METADATA: u64 = 9;

/// A `StringStringEntryProto`'s key and value.
fn entry(bytes: &[u8]) -> Option<(String, String)> {
    let (mut key, mut value) = (String::new(), String::new());
    for f in fields(bytes)? {
        match (f.number, f.wire) {
            (1, LEN) => key = String::from_utf8(f.payload.to_vec()).ok()?,
            (2, LEN) => value = String::from_utf8(f.payload.to_vec()).ok()?,
            _ => {}
        }
    }
    Some((key, value))
}

fn put_entry(out: &mut Vec<u8>, number: u64, key: &str, value: &str) {
    let mut e = Vec::with_capacity(key.len() + value.len() + 4);
    put_len(&mut e, 1, key.as_bytes());
    put_len(&mut e, 2, value.as_bytes());
    put_len(out, number, &e);
}

/// What a node message says about itself: the importer's name for it, and its outputs.
fn node_names(node: &[Field<'_>], index: usize) -> (String, usize) {
    let text = |f: &Field<'_>| String::from_utf8_lossy(f.payload).into_owned();
    let name = node
        .iter()
        .find(|f| f.number == NODE_NAME && f.wire == LEN)
        .map(text)
        .unwrap_or_default();
    let outputs: Vec<String> = node
        .iter()
        .filter(|f| f.number == NODE_OUTPUT && f.wire == LEN)
        .map(text)
        .collect();
    let op = node
        .iter()
        .find(|f| f.number == NODE_OP && f.wire == LEN)
        .map(text)
        .unwrap_or_default();
    let label = if !name.is_empty() {
        name
    } else if let Some(o) = outputs.first().filter(|o| !o.is_empty()) {
        o.clone()
    } else {
        format!("#{index} ({op})")
    };
    (label, outputs.len())
}

fn malformed(origin: &Path, what: &str) -> OnnxError {
    OnnxError::NotOnnx {
        path: origin.to_path_buf(),
        reason: format!("{what} is not a well-formed protobuf message"),
    }
}

/// The model with `props[name]` added to the metadata of the node fuselage calls `name`, and
/// `model` to the model's, after dropping every earlier entry whose key starts with `prefix`.
/// See the module docs.
///
/// # Errors
/// [`OnnxError::NotOnnx`] for bytes that are not a model message with a graph.
///
/// # Example
/// ```
/// use std::collections::HashMap;
/// # let Some(dir) = fuselage_onnx::reference_models_dir() else { return Ok(()) };
/// let path = dir.join("resnet18.onnx");
/// let bytes = std::fs::read(&path)?;
/// let props = HashMap::from([("/conv1/Conv".to_string(), vec![("fuselage.group".to_string(), "0".to_string())])]);
/// let out = fuselage_onnx::metadata::annotate(&bytes, &props, &[], "fuselage.", &path)?;
/// let (nodes, _) = fuselage_onnx::metadata::read(&out, "fuselage.", &path)?;
/// assert_eq!(nodes["/conv1/Conv"], vec![("fuselage.group".to_string(), "0".to_string())]);
/// // The model itself is unchanged.
/// assert_eq!(fuselage_onnx::import_bytes(&out, &path)?.fingerprint(), fuselage_onnx::import(&path)?.fingerprint());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn annotate(
    bytes: &[u8],
    props: &HashMap<String, Vec<(String, String)>>,
    model: &[(String, String)],
    prefix: &str,
    origin: &Path,
) -> Result<Vec<u8>> {
    let top = fields(bytes).ok_or_else(|| malformed(origin, "the model"))?;
    if !top.iter().any(|f| f.number == MODEL_GRAPH && f.wire == LEN) {
        return Err(malformed(origin, "the model (it has no graph)"));
    }
    let ours = |f: &Field<'_>, number: u64| {
        f.number == number
            && f.wire == LEN
            && entry(f.payload).is_some_and(|(k, _)| k.starts_with(prefix))
    };
    let mut out = Vec::with_capacity(bytes.len() + 64 * props.len());
    for f in &top {
        if ours(f, MODEL_METADATA) {
            continue;
        }
        if f.number != MODEL_GRAPH || f.wire != LEN {
            out.extend_from_slice(f.whole);
            continue;
        }
        let graph = fields(f.payload).ok_or_else(|| malformed(origin, "the graph"))?;
        let mut g = Vec::with_capacity(f.payload.len() + 64 * props.len());
        let mut index = 0;
        for gf in &graph {
            if gf.number != GRAPH_NODE || gf.wire != LEN {
                g.extend_from_slice(gf.whole);
                continue;
            }
            let node = fields(gf.payload).ok_or_else(|| malformed(origin, "a node"))?;
            let (label, outputs) = node_names(&node, index);
            index += 1;
            let mut n = Vec::with_capacity(gf.payload.len());
            for nf in &node {
                if !ours(nf, NODE_METADATA) {
                    n.extend_from_slice(nf.whole);
                }
            }
            for part in 0..outputs.max(1) {
                let (name, suffix) = if part == 0 {
                    (label.clone(), String::new())
                } else {
                    (format!("{label}:{part}"), format!(":{part}"))
                };
                for (k, v) in props.get(&name).into_iter().flatten() {
                    put_entry(&mut n, NODE_METADATA, &format!("{k}{suffix}"), v);
                }
            }
            put_len(&mut g, GRAPH_NODE, &n);
        }
        put_len(&mut out, MODEL_GRAPH, &g);
    }
    for (k, v) in model {
        put_entry(&mut out, MODEL_METADATA, k, v);
    }
    Ok(out)
}

/// Node metadata by fuselage's node name (a `Split` part's `:i` keys under `NAME:i`, without
/// the suffix), and the model's, keeping only keys that start with `prefix`.
///
/// # Errors
/// [`OnnxError::NotOnnx`] for bytes that are not a model message with a graph.
#[allow(clippy::type_complexity)]
pub fn read(
    bytes: &[u8],
    prefix: &str,
    origin: &Path,
) -> Result<(
    HashMap<String, Vec<(String, String)>>,
    Vec<(String, String)>,
)> {
    let top = fields(bytes).ok_or_else(|| malformed(origin, "the model"))?;
    let mut nodes: HashMap<String, Vec<(String, String)>> = HashMap::new();
    let mut model = Vec::new();
    let mut graph_seen = false;
    for f in &top {
        match (f.number, f.wire) {
            (MODEL_METADATA, LEN) => {
                if let Some((k, v)) = entry(f.payload).filter(|(k, _)| k.starts_with(prefix)) {
                    model.push((k, v));
                }
            }
            (MODEL_GRAPH, LEN) => {
                graph_seen = true;
                let graph = fields(f.payload).ok_or_else(|| malformed(origin, "the graph"))?;
                for (index, gf) in graph
                    .iter()
                    .filter(|x| x.number == GRAPH_NODE && x.wire == LEN)
                    .enumerate()
                {
                    let node = fields(gf.payload).ok_or_else(|| malformed(origin, "a node"))?;
                    let (label, _) = node_names(&node, index);
                    for nf in node
                        .iter()
                        .filter(|x| x.number == NODE_METADATA && x.wire == LEN)
                    {
                        let Some((k, v)) = entry(nf.payload).filter(|(k, _)| k.starts_with(prefix))
                        else {
                            continue;
                        };
                        // `key:i` belongs to part i of a Split.
                        let (key, name) = match k.rsplit_once(':') {
                            Some((key, i))
                                if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) =>
                            {
                                (key.to_string(), format!("{label}:{i}"))
                            }
                            _ => (k.clone(), label.clone()),
                        };
                        nodes.entry(name).or_default().push((key, v));
                    }
                }
            }
            _ => {}
        }
    }
    if !graph_seen {
        return Err(malformed(origin, "the model (it has no graph)"));
    }
    Ok((nodes, model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncated_messages_are_refused() {
        let mut m = Vec::new();
        put_len(&mut m, 7, b"graph bytes");
        for cut in 1..m.len() {
            assert!(fields(&m[..cut]).is_none(), "cut at {cut}");
        }
        assert!(fields(&m).is_some());
    }
}
