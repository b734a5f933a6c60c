//! Attribute reading: a node's attributes by name, axes made non-negative, a 2-D op's pads
//! (explicit or `auto_pad`), and integers that newer opsets pass as a constant input where
//! older ones had an attribute. Each bad value is a [`Ctx::bad`] error naming the node.

use super::ctx::Ctx;
use super::facts::Facts;
use crate::error::Result;
use fuselage_ir::TensorShape;
use tract_onnx::pb;

pub(super) fn attr<'a>(node: &'a pb::NodeProto, name: &str) -> Option<&'a pb::AttributeProto> {
    node.attribute.iter().find(|a| a.name == name)
}

pub(super) fn attr_ints(node: &pb::NodeProto, name: &str) -> Option<Vec<i64>> {
    attr(node, name).map(|a| a.ints.clone())
}

pub(super) fn attr_int(node: &pb::NodeProto, name: &str) -> Option<i64> {
    attr(node, name).map(|a| a.i)
}

pub(super) fn attr_str(node: &pb::NodeProto, name: &str) -> Option<String> {
    attr(node, name).map(|a| String::from_utf8_lossy(&a.s).into_owned())
}

pub(super) fn axis(cx: &Ctx<'_>, node: &pb::NodeProto, a: i64, rank: usize) -> Result<u64> {
    let r = rank as i64;
    let v = if a < 0 { a + r } else { a };
    if v < 0 || v > r {
        return Err(cx.bad(node, format!("axis {a} out of range for rank {rank}")));
    }
    Ok(v as u64)
}

pub(super) fn pair(v: &[i64]) -> [u64; 2] {
    [
        v.first().copied().unwrap_or(1) as u64,
        v.get(1).copied().unwrap_or(1) as u64,
    ]
}

/// `[top, left, bottom, right]`, from explicit pads or from `auto_pad`.
pub(super) fn pads2d(
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

/// Integers from input `port` (newer opsets) or attribute `name` (older ones).
pub(super) fn ints_input_or_attr(
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
pub(super) fn normalised_axes(
    cx: &Ctx<'_>,
    node: &pb::NodeProto,
    v: &[i64],
    rank: usize,
) -> Result<Vec<u64>> {
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
