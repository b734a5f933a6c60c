//! Reading a model without its weights.
//!
//! fuselage needs a weight's *shape* (its bytes count towards a group's buffer), never its
//! values. Decoding a whole file through generated protobuf types would copy every weight into
//! memory, and tract would copy it again into its tensors: about three times the file at peak
//! (1.6 GB for VGG-16's 528 MB).
//!
//! ## Design
//!
//! [`read`] streams the file once, through a buffered reader, and copies the protobuf wire
//! format field by field into a *slim* model:
//! - every field is copied byte for byte, except
//! - inside `ModelProto.graph`, an initializer (`GraphProto.initializer`, a `TensorProto`) whose
//!   message is larger than [`KEEP_BELOW`] and whose type is floating point: its data fields
//!   (`raw_data`, `float_data`, `double_data`, ...) are skipped with a seek, never read, and
//!   its name is recorded. Its `dims` and `data_type` stay, so its size is still known.
//!
//! Integer initializers stay whole, because shape arithmetic (a `Reshape`'s target, a
//! `Slice`'s bounds) reads their values; so do small float ones (a `Resize`'s scales). The
//! importer hands tract each stripped weight as a graph input of the same type and shape,
//! which shape inference treats like the constant it was.
//!
//! Doc strings (of the model, the graph, nodes, attributes and value infos) are skipped the
//! same way: fuselage never reads them. The counts that size what the decoder and tract
//! allocate are capped as they stream past: [`MAX_NODES`], [`MAX_INITIALIZERS`],
//! [`MAX_VALUE_INFOS`] and [`MAX_ATTRIBUTES`] per node; past one, the file is refused.
//!
//! A node's attribute may hold graphs of its own (`AttributeProto.g` and `.graphs`: the
//! branches of an `If`, the body of a `Loop` or `Scan`). They are read the same way, field by
//! field, their doc strings skipped, and their nodes, initializers and value infos count
//! towards the *same* totals as the main graph's, so a subgraph cannot smuggle what the main
//! graph may not hold. Graphs nest at most [`MAX_GRAPH_DEPTH`] deep (the reader recurses once
//! per level). A subgraph's initializers are copied whole: the weights that are left out are
//! handed to tract as inputs of the main graph, which a subgraph's are not.
//!
//! Memory is then the slim model (kilobytes to a few megabytes) plus the reader's buffer,
//! whatever the weights weigh. Every length is checked against the end of its enclosing
//! message, so a truncated file or a length that runs past its message is an error, never a
//! read past the end or an allocation the file cannot back.

use crate::wire::{FIXED32, FIXED64, LEN, VARINT, put_len, put_varint};
use std::collections::HashSet;
use std::io::{BufRead, Seek, SeekFrom};

/// Initializer messages up to this many bytes are copied whole.
pub(crate) const KEEP_BELOW: u64 = 4096;

/// The most nodes a graph may have. Each node costs a few hundred bytes once decoded, so a
/// small file of empty nodes (25 million in 50 MB) would take gigabytes; the largest real
/// exports have tens of thousands.
pub const MAX_NODES: u64 = 250_000;
/// The most initializers a graph may have (5 million tiny ones in 10 MB took 3.0 GB).
pub const MAX_INITIALIZERS: u64 = 100_000;
/// The most graph inputs, outputs and value infos a graph may have, together.
pub const MAX_VALUE_INFOS: u64 = 250_000;
/// The most attributes a node may have (real ops have a handful; one node with 5 million
/// took 7.2 GB, then aborted).
pub const MAX_ATTRIBUTES: u64 = 1_000;
/// How deep graphs may nest: the main graph is depth 0, an `If` branch in it depth 1, a
/// `Loop` body in that branch depth 2. Real exports nest two or three deep.
pub const MAX_GRAPH_DEPTH: usize = 16;

/// `ModelProto.doc_string`, `GraphProto.doc_string`, `NodeProto.doc_string`,
/// `AttributeProto.doc_string`, `ValueInfoProto.doc_string`: text for people, which fuselage
/// never reads and skips with a seek (a 600 MB one used to be copied twice).
const MODEL_DOC: u64 = 6;
const GRAPH_DOC: u64 = 10;
const NODE_DOC: u64 = 6;
const ATTRIBUTE_DOC: u64 = 13;
const VALUE_INFO_DOC: u64 = 3;
/// `GraphProto.node`, `.input`, `.output`, `.value_info`; `NodeProto.attribute`.
const GRAPH_NODE: u64 = 1;
const GRAPH_INPUT: u64 = 11;
const GRAPH_OUTPUT: u64 = 12;
const GRAPH_VALUE_INFO: u64 = 13;
const NODE_ATTRIBUTE: u64 = 5;
/// `AttributeProto.g` (one graph) and `.graphs` (repeated).
const ATTRIBUTE_GRAPH: u64 = 6;
const ATTRIBUTE_GRAPHS: u64 = 11;

/// `ModelProto.graph`, `GraphProto.initializer`, and the `TensorProto` fields read here.
const MODEL_GRAPH: u64 = 7;
const GRAPH_INITIALIZER: u64 = 5;
const TENSOR_DATA_TYPE: u64 = 2;
const TENSOR_NAME: u64 = 8;
/// `float_data`, `int32_data`, `string_data`, `int64_data`, `raw_data`, `double_data`,
/// `uint64_data`.
const TENSOR_DATA: [u64; 7] = [4, 5, 6, 7, 9, 10, 11];
/// `FLOAT`, `FLOAT16`, `DOUBLE`, `BFLOAT16`: the element types whose values never matter.
const FLOAT_TYPES: [u64; 4] = [1, 10, 11, 16];

/// A model read without its large float initializers' data.
#[derive(Debug)]
pub(crate) struct Slim {
    /// The model's bytes, every large float initializer's data left out.
    pub(crate) bytes: Vec<u8>,
    /// The names of the initializers whose data was left out.
    pub(crate) stripped: HashSet<String>,
}

/// Why [`read`] failed.
#[derive(Debug)]
pub(crate) enum SlimError {
    /// The reader failed.
    Io(std::io::Error),
    /// The bytes are not a well-formed protobuf message (truncated, or a length past its end).
    Malformed(String),
    /// The model has more of something than the importer takes ([`MAX_NODES`], ...).
    Limit(String),
}

impl From<std::io::Error> for SlimError {
    fn from(e: std::io::Error) -> Self {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            SlimError::Malformed("the file ends inside a field".into())
        } else {
            SlimError::Io(e)
        }
    }
}

type Result<T> = std::result::Result<T, SlimError>;

fn malformed<T>(what: impl Into<String>) -> Result<T> {
    Err(SlimError::Malformed(what.into()))
}

/// A reader that knows where it is.
struct Reader<R> {
    r: R,
    at: u64,
}

impl<R: BufRead + Seek> Reader<R> {
    fn byte(&mut self, end: u64) -> Result<u8> {
        if self.at >= end {
            return malformed(format!(
                "a varint runs past its message at byte {}",
                self.at
            ));
        }
        let mut b = [0u8];
        self.r.read_exact(&mut b)?;
        self.at += 1;
        Ok(b[0])
    }

    fn varint(&mut self, end: u64) -> Result<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte(end)?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        malformed(format!(
            "a varint longer than 10 bytes ends at byte {}",
            self.at
        ))
    }

    /// Checks that `len` more bytes lie within `end`.
    fn fits(&self, len: u64, end: u64) -> Result<()> {
        if len > end.saturating_sub(self.at) {
            return malformed(format!(
                "a field of {len} bytes at byte {} runs past the end of its message (byte {end})",
                self.at
            ));
        }
        Ok(())
    }

    fn bytes(&mut self, len: u64, end: u64) -> Result<Vec<u8>> {
        self.fits(len, end)?;
        let n = usize::try_from(len)
            .or_else(|_| malformed(format!("a field of {len} bytes is too large")))?;
        let mut v = vec![0u8; n];
        self.r.read_exact(&mut v)?;
        self.at += len;
        Ok(v)
    }

    fn skip(&mut self, len: u64, end: u64) -> Result<()> {
        self.fits(len, end)?;
        let by = i64::try_from(len)
            .or_else(|_| malformed(format!("a field of {len} bytes is too large")))?;
        self.r.seek(SeekFrom::Current(by))?;
        self.at += len;
        Ok(())
    }

    /// Reads a tag within `end`: the field number and wire type.
    fn tag(&mut self, end: u64) -> Result<(u64, u64)> {
        let at = self.at;
        let tag = self.varint(end)?;
        let (number, wire) = (tag >> 3, tag & 7);
        if number == 0 {
            return malformed(format!("field number 0 at byte {at}"));
        }
        Ok((number, wire))
    }

    /// Copies the payload of a field whose tag was just read (and is already in `out`).
    fn copy_payload(&mut self, wire: u64, end: u64, out: &mut Vec<u8>) -> Result<()> {
        match wire {
            VARINT => put_varint(out, self.varint(end)?),
            FIXED64 => out.extend(self.bytes(8, end)?),
            FIXED32 => out.extend(self.bytes(4, end)?),
            LEN => {
                let len = self.varint(end)?;
                let payload = self.bytes(len, end)?;
                put_varint(out, len);
                out.extend(payload);
            }
            _ => {
                return malformed(format!(
                    "wire type {wire} (protobuf groups) before byte {}",
                    self.at
                ));
            }
        }
        Ok(())
    }
}

/// Copies the message that ends at `end` field by field. `special` sees each field's tag
/// first: it returns `true` when it read the field's payload itself (writing into `out` what
/// it keeps), `false` to have the field copied byte for byte. Every copier below is this loop
/// with its own special fields.
fn copy_message<R: BufRead + Seek>(
    rd: &mut Reader<R>,
    end: u64,
    mut special: impl FnMut(&mut Reader<R>, u64, u64, &mut Vec<u8>) -> Result<bool>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    while rd.at < end {
        let (number, wire) = rd.tag(end)?;
        if !special(rd, number, wire, &mut out)? {
            put_varint(&mut out, number << 3 | wire);
            rd.copy_payload(wire, end, &mut out)?;
        }
    }
    Ok(out)
}

impl<R: BufRead + Seek> Reader<R> {
    /// Skips the payload of a length-delimited field whose tag was just read.
    fn skip_field(&mut self, end: u64) -> Result<()> {
        let n = self.varint(end)?;
        self.skip(n, end)
    }

    /// Reads the length of an embedded message whose tag was just read, and returns where it
    /// ends, checked to lie within `end`.
    fn message_end(&mut self, end: u64) -> Result<u64> {
        let n = self.varint(end)?;
        self.fits(n, end)?;
        Ok(self.at + n)
    }
}

/// Reads the model of `len` bytes from `r`, leaving out the data of its large float
/// initializers. See the module docs.
pub(crate) fn read<R: BufRead + Seek>(r: R, len: u64) -> Result<Slim> {
    let mut rd = Reader { r, at: 0 };
    let mut stripped = HashSet::new();
    let bytes = copy_message(&mut rd, len, |rd, number, wire, out| {
        match (wire, number) {
            (LEN, MODEL_GRAPH) => {
                let graph_end = rd.message_end(len)?;
                let mut within = Within {
                    counts: Counts::default(),
                    depth: 0,
                };
                let graph = graph(rd, graph_end, &mut stripped, &mut within)?;
                put_len(out, MODEL_GRAPH, &graph);
            }
            (LEN, MODEL_DOC) => rd.skip_field(len)?,
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    Ok(Slim { bytes, stripped })
}

/// What a model's graphs hold so far, all of them together (the main graph and every
/// subgraph), against [`MAX_NODES`], [`MAX_INITIALIZERS`] and [`MAX_VALUE_INFOS`].
#[derive(Debug, Default)]
struct Counts {
    nodes: u64,
    initializers: u64,
    infos: u64,
}

/// Where the reader is among the model's graphs: the totals so far, and how deep the graph
/// being read nests (0 for the main graph).
#[derive(Debug)]
struct Within {
    counts: Counts,
    depth: usize,
}

/// Adds one to `count`, or refuses the graph past `max` of `what`.
fn count(count: &mut u64, max: u64, what: &str) -> Result<()> {
    *count += 1;
    if *count > max {
        return Err(SlimError::Limit(format!(
            "the graph has more than {max} {what}, the importer's limit"
        )));
    }
    Ok(())
}

/// The slim copy of a `GraphProto` that ends at `end`, at `within.depth`: the main graph
/// (depth 0), whose large float initializers lose their data into `stripped`, or a subgraph,
/// copied with its initializers whole.
fn graph<R: BufRead + Seek>(
    rd: &mut Reader<R>,
    end: u64,
    stripped: &mut HashSet<String>,
    within: &mut Within,
) -> Result<Vec<u8>> {
    copy_message(rd, end, |rd, number, wire, out| {
        match (wire, number) {
            (LEN, GRAPH_DOC) => rd.skip_field(end)?,
            (LEN, GRAPH_NODE) => {
                count(&mut within.counts.nodes, MAX_NODES, "nodes")?;
                let node_end = rd.message_end(end)?;
                let node = node(rd, node_end, stripped, within)?;
                put_len(out, number, &node);
            }
            (LEN, GRAPH_INPUT | GRAPH_OUTPUT | GRAPH_VALUE_INFO) => {
                count(
                    &mut within.counts.infos,
                    MAX_VALUE_INFOS,
                    "inputs, outputs and value infos",
                )?;
                let info_end = rd.message_end(end)?;
                let info = without(rd, info_end, VALUE_INFO_DOC)?;
                put_len(out, number, &info);
            }
            (LEN, GRAPH_INITIALIZER) => {
                count(
                    &mut within.counts.initializers,
                    MAX_INITIALIZERS,
                    "initializers",
                )?;
                let tensor_end = rd.message_end(end)?;
                if tensor_end - rd.at > KEEP_BELOW && within.depth == 0 {
                    let (tensor, name) = tensor(rd, tensor_end)?;
                    if let Some(name) = name {
                        stripped.insert(name);
                    }
                    put_len(out, GRAPH_INITIALIZER, &tensor);
                } else {
                    let n = tensor_end - rd.at;
                    put_len(out, GRAPH_INITIALIZER, &rd.bytes(n, end)?);
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    })
}

/// A `NodeProto` ending at `end`, without its doc string and its attributes' doc strings;
/// the graphs its attributes hold are read as subgraphs of `within`.
fn node<R: BufRead + Seek>(
    rd: &mut Reader<R>,
    end: u64,
    stripped: &mut HashSet<String>,
    within: &mut Within,
) -> Result<Vec<u8>> {
    let mut attributes = 0u64;
    copy_message(rd, end, |rd, number, wire, out| {
        match (wire, number) {
            (LEN, NODE_DOC) => rd.skip_field(end)?,
            (LEN, NODE_ATTRIBUTE) => {
                attributes += 1;
                if attributes > MAX_ATTRIBUTES {
                    return Err(SlimError::Limit(format!(
                        "a node has more than {MAX_ATTRIBUTES} attributes, the importer's limit"
                    )));
                }
                let attribute_end = rd.message_end(end)?;
                let attribute = attribute(rd, attribute_end, stripped, within)?;
                put_len(out, number, &attribute);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })
}

/// An `AttributeProto` ending at `end`, without its doc string, its graphs (`g`, `graphs`)
/// read as subgraphs one level below `within.depth`.
fn attribute<R: BufRead + Seek>(
    rd: &mut Reader<R>,
    end: u64,
    stripped: &mut HashSet<String>,
    within: &mut Within,
) -> Result<Vec<u8>> {
    copy_message(rd, end, |rd, number, wire, out| {
        match (wire, number) {
            (LEN, ATTRIBUTE_DOC) => rd.skip_field(end)?,
            (LEN, ATTRIBUTE_GRAPH | ATTRIBUTE_GRAPHS) => {
                if within.depth >= MAX_GRAPH_DEPTH {
                    return Err(SlimError::Limit(format!(
                        "graphs nest more than {MAX_GRAPH_DEPTH} deep (an If, Loop or Scan \
                         inside another), the importer's limit"
                    )));
                }
                let graph_end = rd.message_end(end)?;
                within.depth += 1;
                let sub = graph(rd, graph_end, stripped, within);
                within.depth -= 1;
                put_len(out, number, &sub?);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })
}

/// The message ending at `end`, without its length-delimited field `skip` (a doc string).
fn without<R: BufRead + Seek>(rd: &mut Reader<R>, end: u64, skip: u64) -> Result<Vec<u8>> {
    copy_message(rd, end, |rd, number, wire, _| {
        if wire == LEN && number == skip {
            rd.skip_field(end)?;
            return Ok(true);
        }
        Ok(false)
    })
}

/// A `TensorProto` ending at `end`, its data left out when its type (read before the data, as
/// every exporter writes it) is floating point; with the tensor's name when it was left out.
fn tensor<R: BufRead + Seek>(rd: &mut Reader<R>, end: u64) -> Result<(Vec<u8>, Option<String>)> {
    let mut float = false;
    let mut skipped = false;
    let mut name = String::new();
    let out = copy_message(rd, end, |rd, number, wire, out| {
        let data = float && TENSOR_DATA.contains(&number);
        match (wire, number) {
            (VARINT, TENSOR_DATA_TYPE) => {
                let dt = rd.varint(end)?;
                float = FLOAT_TYPES.contains(&dt);
                put_varint(out, number << 3 | wire);
                put_varint(out, dt);
            }
            (LEN, _) if data => rd.skip_field(end)?,
            (FIXED32, _) if data => rd.skip(4, end)?,
            (FIXED64, _) if data => rd.skip(8, end)?,
            (LEN, TENSOR_NAME) => {
                let n = rd.varint(end)?;
                let bytes = rd.bytes(n, end)?;
                name = String::from_utf8_lossy(&bytes).into_owned();
                put_len(out, number, &bytes);
            }
            _ => return Ok(false),
        }
        if data {
            skipped = true;
        }
        Ok(true)
    })?;
    Ok((out, skipped.then_some(name)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn tensor_proto(name: &str, dt: u64, dims: &[u64], raw: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        for &d in dims {
            put_varint(&mut t, 1 << 3 | VARINT);
            put_varint(&mut t, d);
        }
        put_varint(&mut t, TENSOR_DATA_TYPE << 3 | VARINT);
        put_varint(&mut t, dt);
        put_len(&mut t, TENSOR_NAME, name.as_bytes());
        put_len(&mut t, 9, raw);
        t
    }

    fn model(tensors: &[Vec<u8>]) -> Vec<u8> {
        let mut g = Vec::new();
        put_len(&mut g, 2, b"graph-name");
        for t in tensors {
            put_len(&mut g, GRAPH_INITIALIZER, t);
        }
        let mut m = Vec::new();
        put_varint(&mut m, 1 << 3 | VARINT);
        put_varint(&mut m, 8);
        put_len(&mut m, MODEL_GRAPH, &g);
        m
    }

    #[test]
    fn large_float_data_is_left_out_and_everything_else_kept() {
        let big = tensor_proto("w", 1, &[64, 32], &[7u8; 64 * 32 * 4]);
        let ints = tensor_proto("shape", 7, &[1024], &[1u8; 1024 * 8]);
        let small = tensor_proto("scales", 1, &[4], &[0u8; 16]);
        let bytes = model(&[big, ints.clone(), small.clone()]);
        let slim = read(Cursor::new(&bytes), bytes.len() as u64).unwrap();
        assert_eq!(slim.stripped, HashSet::from(["w".to_string()]));
        let want = model(&[
            tensor_proto("w", 1, &[64, 32], &[])[..]
                .strip_suffix(&[9 << 3 | 2, 0][..])
                .unwrap()
                .to_vec(),
            ints,
            small,
        ]);
        assert_eq!(slim.bytes, want);
    }

    /// A model whose graph holds `graph` (raw `GraphProto` fields) and whose doc string is
    /// `doc`.
    fn model_with(graph: &[u8], doc: &[u8]) -> Vec<u8> {
        let mut m = Vec::new();
        put_len(&mut m, MODEL_DOC, doc);
        put_len(&mut m, MODEL_GRAPH, graph);
        m
    }

    /// Doc strings used to be copied into the slim model and decoded again (a 600 MB one
    /// peaked at 2.35 GB); they are skipped now, at every level, and nothing else is.
    #[test]
    fn doc_strings_are_skipped_at_every_level() {
        let doc = vec![b'd'; 1 << 20];
        let mut attribute = Vec::new();
        put_len(&mut attribute, 1, b"axis");
        put_len(&mut attribute, ATTRIBUTE_DOC, &doc);
        let mut node = Vec::new();
        put_len(&mut node, 1, b"x");
        put_len(&mut node, 2, b"y");
        put_len(&mut node, NODE_DOC, &doc);
        put_len(&mut node, NODE_ATTRIBUTE, &attribute);
        let mut info = Vec::new();
        put_len(&mut info, 1, b"x");
        put_len(&mut info, VALUE_INFO_DOC, &doc);
        let mut g = Vec::new();
        put_len(&mut g, GRAPH_NODE, &node);
        put_len(&mut g, GRAPH_DOC, &doc);
        put_len(&mut g, GRAPH_INPUT, &info);
        let bytes = model_with(&g, &doc);
        let slim = read(Cursor::new(&bytes), bytes.len() as u64).unwrap();
        assert!(slim.bytes.len() < 100, "{} bytes kept", slim.bytes.len());
        let (mut a, mut n, mut i, mut gr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        put_len(&mut a, 1, b"axis");
        put_len(&mut n, 1, b"x");
        put_len(&mut n, 2, b"y");
        put_len(&mut n, NODE_ATTRIBUTE, &a);
        put_len(&mut i, 1, b"x");
        put_len(&mut gr, GRAPH_NODE, &n);
        put_len(&mut gr, GRAPH_INPUT, &i);
        let mut want = Vec::new();
        put_len(&mut want, MODEL_GRAPH, &gr);
        assert_eq!(slim.bytes, want);
    }

    fn refused(graph: &[u8]) -> String {
        let bytes = model_with(graph, b"");
        match read(Cursor::new(&bytes), bytes.len() as u64) {
            Err(SlimError::Limit(m)) => m,
            other => panic!("not refused: {:?}", other.map(|s| s.bytes.len())),
        }
    }

    /// Counts past their limits used to be decoded whole: 25 million empty nodes took 4.2
    /// GB, 5 million initializers 3.0 GB, a node of 5 million attributes aborted at 7.2 GB.
    #[test]
    fn counts_past_their_limits_are_refused() {
        let mut g = Vec::new();
        for _ in 0..=MAX_NODES {
            put_len(&mut g, GRAPH_NODE, b"");
        }
        assert_eq!(
            refused(&g),
            "the graph has more than 250000 nodes, the importer's limit"
        );
        let mut g = Vec::new();
        for _ in 0..=MAX_INITIALIZERS {
            put_len(&mut g, GRAPH_INITIALIZER, b"");
        }
        assert_eq!(
            refused(&g),
            "the graph has more than 100000 initializers, the importer's limit"
        );
        let mut g = Vec::new();
        for _ in 0..=MAX_VALUE_INFOS {
            put_len(&mut g, GRAPH_VALUE_INFO, b"");
        }
        assert!(refused(&g).contains("more than 250000 inputs, outputs and value infos"));
        let mut node = Vec::new();
        for _ in 0..=MAX_ATTRIBUTES {
            put_len(&mut node, NODE_ATTRIBUTE, b"");
        }
        let mut g = Vec::new();
        put_len(&mut g, GRAPH_NODE, &node);
        assert_eq!(
            refused(&g),
            "a node has more than 1000 attributes, the importer's limit"
        );
        // At the limits, nothing is refused.
        let mut g = Vec::new();
        for _ in 0..MAX_NODES {
            put_len(&mut g, GRAPH_NODE, b"");
        }
        let bytes = model_with(&g, b"");
        assert!(read(Cursor::new(&bytes), bytes.len() as u64).is_ok());
    }

    /// A node whose attribute `then_branch` holds `sub` as its graph.
    fn if_node(sub: &[u8]) -> Vec<u8> {
        let mut attribute = Vec::new();
        put_len(&mut attribute, 1, b"then_branch");
        put_len(&mut attribute, ATTRIBUTE_GRAPH, sub);
        let mut node = Vec::new();
        put_len(&mut node, 4, b"If");
        put_len(&mut node, NODE_ATTRIBUTE, &attribute);
        node
    }

    /// A graph of one `If` node whose branch is `sub`.
    fn graph_of_if(sub: &[u8]) -> Vec<u8> {
        let mut g = Vec::new();
        put_len(&mut g, GRAPH_NODE, &if_node(sub));
        g
    }

    /// The graphs of an `If`, `Loop` or `Scan` were copied whole: a branch of 5 million empty
    /// nodes (20 MB) peaked at 1.7 GB, of 5 million initializers at 3.0 GB, and 300 MB of a
    /// branch's doc string at 1.8 GB. They are read like the main graph now, counted with
    /// it, and nest at most `MAX_GRAPH_DEPTH` deep.
    #[test]
    fn subgraphs_count_with_the_main_graph_and_nest_boundedly() {
        // The main graph's `If` and a branch of MAX_NODES nodes: one too many together.
        let mut sub = Vec::new();
        for _ in 0..MAX_NODES {
            put_len(&mut sub, GRAPH_NODE, b"");
        }
        assert_eq!(
            refused(&graph_of_if(&sub)),
            "the graph has more than 250000 nodes, the importer's limit"
        );
        let mut sub = Vec::new();
        for _ in 0..=MAX_INITIALIZERS {
            put_len(&mut sub, GRAPH_INITIALIZER, b"");
        }
        assert!(refused(&graph_of_if(&sub)).contains("more than 100000 initializers"));
        let mut sub = Vec::new();
        for _ in 0..=MAX_VALUE_INFOS {
            put_len(&mut sub, GRAPH_INPUT, b"");
        }
        assert!(refused(&graph_of_if(&sub)).contains("more than 250000 inputs"));
        // Nesting: the main graph at depth 0 and MAX_GRAPH_DEPTH levels below it are read;
        // one more is refused, before the reader recurses any further.
        let nest = |levels: usize| {
            let mut g = Vec::new();
            for _ in 0..levels {
                g = graph_of_if(&g);
            }
            g
        };
        let bytes = model_with(&nest(MAX_GRAPH_DEPTH), b"");
        let slim = read(Cursor::new(&bytes), bytes.len() as u64).unwrap();
        assert_eq!(slim.bytes, bytes[bytes.len() - slim.bytes.len()..]);
        assert_eq!(
            refused(&nest(MAX_GRAPH_DEPTH + 1)),
            "graphs nest more than 16 deep (an If, Loop or Scan inside another), the \
             importer's limit"
        );
        // A branch's doc strings are skipped, and so are its nodes' and attributes'; its
        // initializers are kept whole, however large (only the main graph's lose their data).
        let doc = vec![b'd'; 1 << 20];
        let weight = tensor_proto("w", 1, &[64, 32], &[7u8; 64 * 32 * 4]);
        let mut inner_attribute = Vec::new();
        put_len(&mut inner_attribute, 1, b"axis");
        let mut with_doc = inner_attribute.clone();
        put_len(&mut with_doc, ATTRIBUTE_DOC, &doc);
        let branch = |attribute: &[u8], doc: &[u8]| {
            let mut node = Vec::new();
            put_len(&mut node, 4, b"Relu");
            put_len(&mut node, NODE_ATTRIBUTE, attribute);
            if !doc.is_empty() {
                put_len(&mut node, NODE_DOC, doc);
            }
            let mut sub = Vec::new();
            put_len(&mut sub, GRAPH_NODE, &node);
            put_len(&mut sub, GRAPH_INITIALIZER, &weight);
            if !doc.is_empty() {
                put_len(&mut sub, GRAPH_DOC, doc);
            }
            sub
        };
        let bytes = model_with(&graph_of_if(&branch(&with_doc, &doc)), b"");
        let slim = read(Cursor::new(&bytes), bytes.len() as u64).unwrap();
        let mut want = Vec::new();
        put_len(
            &mut want,
            MODEL_GRAPH,
            &graph_of_if(&branch(&inner_attribute, b"")),
        );
        assert_eq!(slim.bytes, want);
        assert!(slim.stripped.is_empty());
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = model(&[tensor_proto("w", 1, &[2048], &[1u8; 8192])]);
        // Cut after the first field, the rest is a well-formed (if graphless) message.
        assert!(read(Cursor::new(&bytes[..2]), 2).is_ok());
        for cut in (1..bytes.len()).filter(|&c| c != 2) {
            let r = read(Cursor::new(&bytes[..cut]), cut as u64);
            assert!(matches!(r, Err(SlimError::Malformed(_))), "cut at {cut}");
        }
    }
}
