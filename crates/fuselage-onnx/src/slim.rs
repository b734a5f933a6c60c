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
//! Memory is then the slim model (kilobytes to a few megabytes) plus the reader's buffer,
//! whatever the weights weigh. Every length is checked against the end of its enclosing
//! message, so a truncated file or a length that runs past its message is an error, never a
//! read past the end or an allocation the file cannot back.

use crate::wire::{FIXED32, FIXED64, LEN, VARINT, put_len, put_varint};
use std::collections::HashSet;
use std::io::{BufRead, Seek, SeekFrom};

/// Initializer messages up to this many bytes are copied whole.
pub(crate) const KEEP_BELOW: u64 = 4096;

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

/// Reads the model of `len` bytes from `r`, leaving out the data of its large float
/// initializers. See the module docs.
pub(crate) fn read<R: BufRead + Seek>(r: R, len: u64) -> Result<Slim> {
    let mut rd = Reader { r, at: 0 };
    let mut out = Vec::new();
    let mut stripped = HashSet::new();
    while rd.at < len {
        let (number, wire) = rd.tag(len)?;
        if number == MODEL_GRAPH && wire == LEN {
            let n = rd.varint(len)?;
            rd.fits(n, len)?;
            let graph_end = rd.at + n;
            let graph = graph(&mut rd, graph_end, &mut stripped)?;
            put_len(&mut out, MODEL_GRAPH, &graph);
        } else {
            put_varint(&mut out, number << 3 | wire);
            rd.copy_payload(wire, len, &mut out)?;
        }
    }
    Ok(Slim {
        bytes: out,
        stripped,
    })
}

/// The slim copy of a `GraphProto` that ends at `end`.
fn graph<R: BufRead + Seek>(
    rd: &mut Reader<R>,
    end: u64,
    stripped: &mut HashSet<String>,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    while rd.at < end {
        let (number, wire) = rd.tag(end)?;
        if number == GRAPH_INITIALIZER && wire == LEN {
            let n = rd.varint(end)?;
            rd.fits(n, end)?;
            if n > KEEP_BELOW {
                let tensor_end = rd.at + n;
                let (tensor, name) = tensor(rd, tensor_end)?;
                if let Some(name) = name {
                    stripped.insert(name);
                }
                put_len(&mut out, GRAPH_INITIALIZER, &tensor);
                continue;
            }
            put_varint(&mut out, number << 3 | wire);
            put_varint(&mut out, n);
            out.extend(rd.bytes(n, end)?);
        } else {
            put_varint(&mut out, number << 3 | wire);
            rd.copy_payload(wire, end, &mut out)?;
        }
    }
    Ok(out)
}

/// A `TensorProto` ending at `end`, its data left out when its type (read before the data, as
/// every exporter writes it) is floating point; with the tensor's name when it was left out.
fn tensor<R: BufRead + Seek>(rd: &mut Reader<R>, end: u64) -> Result<(Vec<u8>, Option<String>)> {
    let mut out = Vec::new();
    let mut float = false;
    let mut skipped = false;
    let mut name = String::new();
    while rd.at < end {
        let (number, wire) = rd.tag(end)?;
        if number == TENSOR_DATA_TYPE && wire == VARINT {
            let dt = rd.varint(end)?;
            float = FLOAT_TYPES.contains(&dt);
            put_varint(&mut out, number << 3 | wire);
            put_varint(&mut out, dt);
        } else if float && TENSOR_DATA.contains(&number) && wire == LEN {
            let n = rd.varint(end)?;
            rd.skip(n, end)?;
            skipped = true;
        } else if float && TENSOR_DATA.contains(&number) && wire == FIXED32 {
            rd.skip(4, end)?;
            skipped = true;
        } else if float && TENSOR_DATA.contains(&number) && wire == FIXED64 {
            rd.skip(8, end)?;
            skipped = true;
        } else if number == TENSOR_NAME && wire == LEN {
            let n = rd.varint(end)?;
            let bytes = rd.bytes(n, end)?;
            name = String::from_utf8_lossy(&bytes).into_owned();
            put_len(&mut out, number, &bytes);
        } else {
            put_varint(&mut out, number << 3 | wire);
            rd.copy_payload(wire, end, &mut out)?;
        }
    }
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
