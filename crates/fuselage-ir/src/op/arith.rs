//! The dimension arithmetic the shape rule ([`Op::infer_shape`](super::Op::infer_shape)) is
//! made of: the output size of a window, a reduction's output, and ONNX's multidirectional
//! broadcasting.

use crate::shape::TensorShape;

/// The output height and width of a window op over the NCHW input `x` (ONNX's `pads` order:
/// top, left, bottom, right), or `None` where a window is larger than the padded input.
pub(super) fn windows_hw(
    x: &TensorShape,
    kernel: [u64; 2],
    stride: [u64; 2],
    pads: [u64; 4],
    dilation: [u64; 2],
    ceil: bool,
) -> Option<(u64, u64)> {
    let h = pooled(
        x.0[2],
        kernel[0],
        stride[0],
        pads[0],
        pads[2],
        dilation[0],
        ceil,
    )?;
    let w = pooled(
        x.0[3],
        kernel[1],
        stride[1],
        pads[1],
        pads[3],
        dilation[1],
        ceil,
    )?;
    Some((h, w))
}

/// The output length of windows of `k` entries, dilated by `dil` and `s` apart, over `len`
/// entries padded with `pad_begin` and `pad_end` (rounding up with `ceil`), or `None` where a
/// window is larger than the padded input.
fn pooled(
    len: u64,
    k: u64,
    s: u64,
    pad_begin: u64,
    pad_end: u64,
    dil: u64,
    ceil: bool,
) -> Option<u64> {
    let span = dil * (k - 1) + 1;
    let padded = len + pad_begin + pad_end;
    if padded < span || s == 0 {
        return None;
    }
    let num = padded - span;
    let mut out = if ceil {
        num.div_ceil(s) + 1
    } else {
        num / s + 1
    };
    // PyTorch (and ONNX since opset 19) drop a last window that would start in the end padding.
    if ceil && (out - 1) * s >= len + pad_begin {
        out -= 1;
    }
    Some(out)
}

/// Whether `axes` are strictly increasing (sorted, without repeats).
pub(super) fn strictly_sorted(axes: &[u64]) -> bool {
    axes.windows(2).all(|w| w[0] < w[1])
}

/// The shape of `x` reduced over `axes` (strictly increasing, each in range), the reduced axes
/// kept as 1 with `keepdims`.
///
/// # Errors
/// A message naming the axes and the shape when they do not fit.
pub(super) fn reduced(
    x: &TensorShape,
    axes: &[u64],
    keepdims: bool,
) -> Result<TensorShape, String> {
    if !strictly_sorted(axes) || axes.iter().any(|&a| a as usize >= x.rank()) {
        return Err(format!("axes {axes:?} out of range for {x}"));
    }
    let mut d = Vec::new();
    for (i, &v) in x.0.iter().enumerate() {
        if axes.contains(&(i as u64)) {
            if keepdims {
                d.push(1);
            }
        } else {
            d.push(v);
        }
    }
    Ok(TensorShape(d))
}

/// The shape `a` and `b` broadcast to (ONNX's multidirectional broadcasting: aligned at the
/// last axis, a 1 or a missing axis stretches), or `None` where they do not broadcast.
pub(super) fn broadcast(a: &TensorShape, b: &TensorShape) -> Option<TensorShape> {
    let rank = a.rank().max(b.rank());
    let mut dims = vec![0; rank];
    for (i, d) in dims.iter_mut().enumerate() {
        let da = if i + a.rank() >= rank {
            a.0[i + a.rank() - rank]
        } else {
            1
        };
        let db = if i + b.rank() >= rank {
            b.0[i + b.rank() - rank]
        } else {
            1
        };
        *d = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(TensorShape(dims))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_round_up_only_with_ceil_and_never_start_in_the_end_padding() {
        // 2 wide, 2 apart over 7: 3 windows, or 4 rounding up.
        assert_eq!(pooled(7, 2, 2, 0, 0, 1, false), Some(3));
        assert_eq!(pooled(7, 2, 2, 0, 0, 1, true), Some(4));
        // Over 4 padded by 1 at the end, a third window would start in the padding.
        assert_eq!(pooled(4, 2, 2, 0, 1, 1, true), Some(2));
        // A 3-tap kernel dilated by 36 spans 73: "same" padding of 36 keeps 32.
        assert_eq!(pooled(32, 3, 1, 36, 36, 36, false), Some(32));
        assert_eq!(pooled(2, 5, 1, 0, 0, 1, false), None);
        assert_eq!(pooled(8, 1, 0, 0, 0, 1, false), None);
    }

    #[test]
    fn reductions_drop_or_keep_their_axes() {
        let x = TensorShape(vec![2, 3, 4]);
        assert_eq!(reduced(&x, &[1], true).unwrap().0, [2, 1, 4]);
        assert_eq!(reduced(&x, &[0, 2], false).unwrap().0, [3]);
        assert!(reduced(&x, &[1, 0], false).is_err());
        assert!(reduced(&x, &[3], false).is_err());
    }

    #[test]
    fn shapes_broadcast_from_the_last_axis() {
        let s = |d: &[u64]| TensorShape(d.to_vec());
        assert_eq!(broadcast(&s(&[3, 1, 5]), &s(&[4, 1])), Some(s(&[3, 4, 5])));
        assert_eq!(broadcast(&s(&[]), &s(&[2])), Some(s(&[2])));
        assert_eq!(broadcast(&s(&[2, 3]), &s(&[3, 2])), None);
        assert!(strictly_sorted(&[0, 2, 3]) && !strictly_sorted(&[0, 0]));
    }
}
