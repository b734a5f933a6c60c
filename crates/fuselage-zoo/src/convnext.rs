//! timm's ConvNeXt with `conv_mlp` (the `atto`, `femto`, `pico` and `nano` models): a 4×4
//! patchify stem, LayerNorm2d as Transpose → LayerNormalization → Transpose, blocks of a
//! depthwise 7×7 convolution, LayerNorm2d, an MLP of 1×1 convolutions with erf GELU and a
//! layer scale, and a pooled, normalised, linear head.

use crate::nodes::Nodes;
use crate::{Result, ZooError};
use fuselage_ir::{ConvAttrs, Graph, Op, Source, TensorShape};

/// The shape of a ConvNeXt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvNextConfig {
    /// Blocks per stage.
    pub depths: Vec<u64>,
    /// Channels per stage.
    pub dims: Vec<u64>,
    /// Image side.
    pub image: u64,
    /// Classes of the head.
    pub classes: u64,
}

/// LayerNorm2d under scope `s`: channels last, LayerNormalization over them, channels first.
fn norm2d(n: &mut Nodes, s: &str, x: Source) -> Result<Source> {
    let t = n.transpose(format!("{s}/Transpose"), x, &[0, 2, 3, 1])?;
    let ln = n.layer_norm(s, t)?;
    n.transpose(format!("{s}/Transpose_1"), ln, &[0, 3, 1, 2])
}

fn conv(n: &mut Nodes, name: String, x: Source, attrs: ConvAttrs) -> Result<Source> {
    n.op(name, Op::Conv(attrs), &[x])
}

fn patch(out: u64, k: u64) -> ConvAttrs {
    ConvAttrs {
        out_channels: out,
        kernel: [k, k],
        stride: [k, k],
        pads: [0; 4],
        dilation: [1, 1],
        group: 1,
    }
}

/// Builds a ConvNeXt of shape `c` for a `1×3×image×image` input.
pub(crate) fn convnext(name: &str, c: &ConvNextConfig) -> Result<Graph> {
    let down = 4 * (1u64 << c.dims.len().saturating_sub(1));
    if c.depths.len() != c.dims.len() || c.dims.is_empty() || !c.image.is_multiple_of(down) {
        return Err(ZooError::BadConfig {
            name: name.to_string(),
            reason: format!(
                "{} stages of depths {:?} and widths {:?} on a {}x{} image (a multiple of {down})",
                c.dims.len(),
                c.depths,
                c.dims,
                c.image,
                c.image
            ),
        });
    }
    let mut n = Nodes::new(name);
    let x = n.b.input("input", TensorShape::nchw(3, c.image, c.image))?;
    let x = conv(&mut n, "/stem/stem.0/Conv".into(), x, patch(c.dims[0], 4))?;
    let mut x = norm2d(&mut n, "/stem/stem.1", x)?;
    for (i, (&depth, &dim)) in c.depths.iter().zip(&c.dims).enumerate() {
        let st = format!("/stages/stages.{i}");
        if i > 0 {
            let d = format!("{st}/downsample");
            let y = norm2d(&mut n, &format!("{d}/downsample.0"), x)?;
            x = conv(&mut n, format!("{d}/downsample.1/Conv"), y, patch(dim, 2))?;
        }
        for j in 0..depth {
            let s = format!("{st}/blocks/blocks.{j}");
            let y = conv(
                &mut n,
                format!("{s}/conv_dw/Conv"),
                x,
                ConvAttrs::square(dim, 7, 1, 1, dim),
            )?;
            let y = norm2d(&mut n, &format!("{s}/norm"), y)?;
            let y = conv(
                &mut n,
                format!("{s}/mlp/fc1/Conv"),
                y,
                ConvAttrs::square(4 * dim, 1, 1, 1, 1),
            )?;
            let m = n.gelu_erf(&format!("{s}/mlp/act"), y)?;
            let y = conv(
                &mut n,
                format!("{s}/mlp/fc2/Conv"),
                m,
                ConvAttrs::square(dim, 1, 1, 1, 1),
            )?;
            let y = n.with(format!("{s}/Mul"), Op::Mul, &[y], dim)?;
            x = n.op(format!("{s}/Add"), Op::Add, &[y, x])?;
        }
    }
    let p = n.op(
        "/head/global_pool/pool/GlobalAveragePool",
        Op::GlobalAveragePool,
        &[x],
    )?;
    let p = norm2d(&mut n, "/head/norm", p)?;
    let f = n.op("/head/flatten/Flatten", Op::Flatten { axis: 1 }, &[p])?;
    n.op(
        "/head/fc/Gemm",
        Op::Gemm {
            out_features: c.classes,
        },
        &[f],
    )?;
    n.finish()
}
