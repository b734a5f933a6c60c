//! timm's ConvNeXt with `conv_mlp` (the `atto`, `femto`, `pico` and `nano` models): a 4×4
//! patchify stem, LayerNorm2d as Transpose → LayerNormalization → Transpose, blocks of a
//! depthwise 7×7 convolution, LayerNorm2d, an MLP of 1×1 convolutions with erf GELU and a
//! layer scale, and a pooled, normalised, linear head.

use crate::{Result, ZooError};
use fuselage_ir::{ConvAttrs, Graph, GraphBuilder, Op, OpKind, Source, TensorShape};

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

struct Cx {
    b: GraphBuilder,
}

impl Cx {
    fn op(&mut self, name: String, op: Op, ins: &[Source]) -> Result<Source> {
        Ok(self.b.node(name, op, ins)?)
    }

    /// A node with `w` constant elements (GELU's scalars, the layer scale).
    fn with(&mut self, name: String, op: Op, x: Source, w: u64) -> Result<Source> {
        let shape = self.b.shape(x).clone();
        Ok(self.b.node_with(name, op, &[x], shape, w)?)
    }

    /// LayerNorm2d: channels last, LayerNormalization over them, channels first again.
    fn norm2d(&mut self, s: &str, x: Source) -> Result<Source> {
        let t = self.op(
            format!("{s}/Transpose"),
            Op::Transpose {
                perm: vec![0, 2, 3, 1],
            },
            &[x],
        )?;
        let ln = Op::normalize(OpKind::LayerNormalization, 3);
        let ln = self.op(format!("{s}/LayerNormalization"), ln, &[t])?;
        self.op(
            format!("{s}/Transpose_1"),
            Op::Transpose {
                perm: vec![0, 3, 1, 2],
            },
            &[ln],
        )
    }

    fn conv(&mut self, name: String, x: Source, attrs: ConvAttrs) -> Result<Source> {
        self.op(name, Op::Conv(attrs), &[x])
    }
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
    let mut n = Cx {
        b: GraphBuilder::new(name),
    };
    let x = n.b.input("input", TensorShape::nchw(3, c.image, c.image))?;
    let x = n.conv("/stem/stem.0/Conv".into(), x, patch(c.dims[0], 4))?;
    let mut x = n.norm2d("/stem/stem.1", x)?;
    for (i, (&depth, &dim)) in c.depths.iter().zip(&c.dims).enumerate() {
        let st = format!("/stages/stages.{i}");
        if i > 0 {
            let d = format!("{st}/downsample");
            let y = n.norm2d(&format!("{d}/downsample.0"), x)?;
            x = n.conv(format!("{d}/downsample.1/Conv"), y, patch(dim, 2))?;
        }
        for j in 0..depth {
            let s = format!("{st}/blocks/blocks.{j}");
            let y = n.conv(
                format!("{s}/conv_dw/Conv"),
                x,
                ConvAttrs::square(dim, 7, 1, 1, dim),
            )?;
            let y = n.norm2d(&format!("{s}/norm"), y)?;
            let y = n.conv(
                format!("{s}/mlp/fc1/Conv"),
                y,
                ConvAttrs::square(4 * dim, 1, 1, 1, 1),
            )?;
            let a = format!("{s}/mlp/act");
            let dv = n.with(format!("{a}/Div"), Op::Div, y, 1)?;
            let e = n.op(format!("{a}/Erf"), Op::Unary { kind: OpKind::Erf }, &[dv])?;
            let e = n.with(format!("{a}/Add"), Op::Add, e, 1)?;
            let m = n.op(format!("{a}/Mul"), Op::Mul, &[y, e])?;
            let m = n.with(format!("{a}/Mul_1"), Op::Mul, m, 1)?;
            let y = n.conv(
                format!("{s}/mlp/fc2/Conv"),
                m,
                ConvAttrs::square(dim, 1, 1, 1, 1),
            )?;
            let y = n.with(format!("{s}/Mul"), Op::Mul, y, dim)?;
            x = n.op(format!("{s}/Add"), Op::Add, &[y, x])?;
        }
    }
    let p = n.op(
        "/head/global_pool/pool/GlobalAveragePool".into(),
        Op::GlobalAveragePool,
        &[x],
    )?;
    let p = n.norm2d("/head/norm", p)?;
    let f = n.op(
        "/head/flatten/Flatten".into(),
        Op::Flatten { axis: 1 },
        &[p],
    )?;
    n.op(
        "/head/fc/Gemm".into(),
        Op::Gemm {
            out_features: c.classes,
        },
        &[f],
    )?;
    Ok(n.b.finish()?)
}
