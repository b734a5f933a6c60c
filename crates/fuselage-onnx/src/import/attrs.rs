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

#[cfg(test)]
mod tests {
    use super::*;

    use super::super::ctx::test_ctx as cx;

    /// A `Conv` node named `n` with these attributes.
    fn conv(attribute: Vec<pb::AttributeProto>) -> pb::NodeProto {
        pb::NodeProto {
            name: "n".into(),
            op_type: "Conv".into(),
            attribute,
            ..Default::default()
        }
    }

    fn ints(name: &str, v: &[i64]) -> pb::AttributeProto {
        pb::AttributeProto {
            name: name.into(),
            ints: v.to_vec(),
            r#type: 7,
            ..Default::default()
        }
    }

    fn int(name: &str, i: i64) -> pb::AttributeProto {
        pb::AttributeProto {
            name: name.into(),
            i,
            r#type: 2,
            ..Default::default()
        }
    }

    fn string(name: &str, s: &str) -> pb::AttributeProto {
        pb::AttributeProto {
            name: name.into(),
            s: s.as_bytes().to_vec(),
            r#type: 3,
            ..Default::default()
        }
    }

    #[test]
    fn attributes_are_read_by_name() {
        let n = conv(vec![
            ints("strides", &[2, 1]),
            int("group", 4),
            string("auto_pad", "VALID"),
        ]);
        assert_eq!(attr_ints(&n, "strides"), Some(vec![2, 1]));
        assert_eq!(attr_int(&n, "group"), Some(4));
        assert_eq!(attr_str(&n, "auto_pad").as_deref(), Some("VALID"));
        assert_eq!(attr_ints(&n, "dilations"), None);
        assert_eq!(
            attr_int(&n, "strides"),
            Some(0),
            "the field of another type"
        );
        // A short list is padded with 1s.
        assert_eq!(pair(&[3]), [3, 1]);
        assert_eq!(pair(&[]), [1, 1]);
    }

    #[test]
    fn axes_count_from_the_end_and_a_bad_one_names_the_node() {
        let (cx, n) = (cx(), conv(Vec::new()));
        assert_eq!(axis(&cx, &n, -1, 4).unwrap(), 3);
        // One past the last axis is an axis for Flatten.
        assert_eq!(axis(&cx, &n, 4, 4).unwrap(), 4);
        assert_eq!(
            axis(&cx, &n, -5, 4).unwrap_err().to_string(),
            "m.onnx: node `n` (Conv): axis -5 out of range for rank 4"
        );
        assert_eq!(
            normalised_axes(&cx, &n, &[3, -1, 0], 4).unwrap(),
            vec![0, 3]
        );
        assert_eq!(
            normalised_axes(&cx, &n, &[0, 4], 4)
                .unwrap_err()
                .to_string(),
            "m.onnx: node `n` (Conv): axis 4 out of range for rank 4"
        );
    }

    #[test]
    fn same_padding_puts_the_odd_pixel_after_or_before() {
        // A 3×3 window with stride 2 over 8×8 gives 4×4: one pixel of padding in all, per axis.
        let (i, o) = (TensorShape::nchw(1, 8, 8), TensorShape::nchw(1, 4, 4));
        let pads = |attrs| pads2d(&cx(), &conv(attrs), [3, 3], [2, 2], &i, &o);
        assert_eq!(
            pads(vec![string("auto_pad", "SAME_UPPER")]).unwrap(),
            [0, 0, 1, 1]
        );
        assert_eq!(
            pads(vec![string("auto_pad", "SAME_LOWER")]).unwrap(),
            [1, 1, 0, 0]
        );
        assert_eq!(pads(vec![string("auto_pad", "VALID")]).unwrap(), [0; 4]);
        assert_eq!(pads(Vec::new()).unwrap(), [0; 4]);
        assert_eq!(
            pads(vec![ints("pads", &[1, 2, 3, 4])]).unwrap(),
            [1, 2, 3, 4]
        );
        assert_eq!(
            pads(vec![ints("pads", &[1, -2, 3, 4])])
                .unwrap_err()
                .to_string(),
            "m.onnx: node `n` (Conv): pads [1, -2, 3, 4] are not 4 non-negative values"
        );
        assert_eq!(
            pads(vec![string("auto_pad", "SAME\n")])
                .unwrap_err()
                .to_string(),
            "m.onnx: node `n` (Conv): unknown auto_pad `SAME\\n`"
        );
    }
}
