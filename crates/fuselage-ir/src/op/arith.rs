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
