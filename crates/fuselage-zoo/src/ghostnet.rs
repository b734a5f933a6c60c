//! timm's GhostNet (`ghostnet_100`): Ghost modules (a 1×1 primary convolution, a cheap
//! depthwise 3×3 on its output, both concatenated and sliced to the width asked for), Ghost
//! bottlenecks with a strided depthwise convolution, hard-sigmoid Squeeze-and-Excite and a
//! depthwise-then-pointwise shortcut, and a 1×1 head before and after the global pool.

use crate::nodes::Nodes;
use crate::scope::make_divisible;
use crate::{Result, ZooError};
use fuselage_ir::{ConvAttrs, Graph, Op, Source, TensorShape};

/// One bottleneck: kernel, expansion width, output width, SE ratio (0 for none), stride.
type Cfg = (u64, u64, u64, f64, u64);

/// `ghostnet_100`'s stages (timm's `cfgs`).
const STAGES: [&[Cfg]; 9] = [
    &[(3, 16, 16, 0.0, 1)],
    &[(3, 48, 24, 0.0, 2)],
    &[(3, 72, 24, 0.0, 1)],
    &[(5, 72, 40, 0.25, 2)],
    &[(5, 120, 40, 0.25, 1)],
    &[(3, 240, 80, 0.0, 2)],
    &[
        (3, 200, 80, 0.0, 1),
        (3, 184, 80, 0.0, 1),
        (3, 184, 80, 0.0, 1),
        (3, 480, 112, 0.25, 1),
        (3, 672, 112, 0.25, 1),
    ],
    &[(5, 672, 160, 0.25, 2)],
    &[
        (5, 960, 160, 0.0, 1),
        (5, 960, 160, 0.25, 1),
        (5, 960, 160, 0.0, 1),
        (5, 960, 160, 0.25, 1),
    ],
];

/// A Ghost module of `out` channels, with ReLUs when `relu`.
fn ghost(n: &mut Nodes, s: &str, x: Source, out: u64, relu: bool) -> Result<Source> {
    let init = out.div_ceil(2);
    let p = format!("{s}/primary_conv");
    let mut a = n.op(
        format!("{p}/primary_conv.0/Conv"),
        Op::Conv(ConvAttrs::square(init, 1, 1, 1, 1)),
        &[x],
    )?;
    if relu {
        a = n.op(format!("{p}/primary_conv.2/Relu"), Op::Relu, &[a])?;
    }
    let c = format!("{s}/cheap_operation");
    let mut b = n.op(
        format!("{c}/cheap_operation.0/Conv"),
        Op::Conv(ConvAttrs::square(init, 3, 1, 1, init)),
        &[a],
    )?;
    if relu {
        b = n.op(format!("{c}/cheap_operation.2/Relu"), Op::Relu, &[b])?;
    }
    let cat = n.op(format!("{s}/Concat"), Op::concat(1), &[a, b])?;
    let slice = Op::Slice {
        axes: vec![1],
        starts: vec![0],
        ends: vec![out],
        steps: vec![1],
    };
    n.op(format!("{s}/Slice"), slice, &[cat])
}

fn bottleneck(n: &mut Nodes, s: &str, x: Source, cfg: Cfg) -> Result<Source> {
    let (k, mid, out, se, stride) = cfg;
    let cin = n.b.shape(x).0[1];
    let mut y = ghost(n, &format!("{s}/ghost1"), x, mid, true)?;
    if stride > 1 {
        y = n.op(
            format!("{s}/conv_dw/Conv"),
            Op::Conv(ConvAttrs::square(mid, k, stride, 1, mid)),
            &[y],
        )?;
    }
    if se > 0.0 {
        let rd = make_divisible(mid as f64 * se, 4);
        let e = format!("{s}/se");
        let mean = Op::ReduceMean {
            axes: vec![2, 3],
            keepdims: true,
        };
        let g = n.op(format!("{e}/ReduceMean"), mean, &[y])?;
        let g = n.op(
            format!("{e}/conv_reduce/Conv"),
            Op::Conv(ConvAttrs::square(rd, 1, 1, 1, 1)),
            &[g],
        )?;
        let g = n.op(format!("{e}/act1/Relu"), Op::Relu, &[g])?;
        let g = n.op(
            format!("{e}/conv_expand/Conv"),
            Op::Conv(ConvAttrs::square(mid, 1, 1, 1, 1)),
            &[g],
        )?;
        let g = n.op(format!("{e}/gate/HardSigmoid"), Op::HardSigmoid, &[g])?;
        y = n.op(format!("{e}/Mul"), Op::Mul, &[y, g])?;
    }
    let y = ghost(n, &format!("{s}/ghost2"), y, out, false)?;
    let short = if cin == out && stride == 1 {
        x
    } else {
        let c = format!("{s}/shortcut");
        let d = n.op(
            format!("{c}/shortcut.0/Conv"),
            Op::Conv(ConvAttrs::square(cin, k, stride, 1, cin)),
            &[x],
        )?;
        n.op(
            format!("{c}/shortcut.2/Conv"),
            Op::Conv(ConvAttrs::square(out, 1, 1, 1, 1)),
            &[d],
        )?
    };
    n.op(format!("{s}/Add"), Op::Add, &[y, short])
}

/// Builds `ghostnet_100` for a `1×3×R×R` input.
pub(crate) fn ghostnet_100(name: &str, resolution: u64) -> Result<Graph> {
    if !resolution.is_multiple_of(32) {
        return Err(ZooError::BadResolution {
            name: name.to_string(),
            resolution,
            reason: "GhostNet downsamples by 32; take a multiple of 32".into(),
        });
    }
    let mut n = Nodes::new(name);
    let x =
        n.b.input("input", TensorShape::nchw(3, resolution, resolution))?;
    let x = n.op(
        "/conv_stem/Conv",
        Op::Conv(ConvAttrs::square(16, 3, 2, 1, 1)),
        &[x],
    )?;
    let mut x = n.op("/act1/Relu", Op::Relu, &[x])?;
    for (i, stage) in STAGES.iter().enumerate() {
        for (j, &cfg) in stage.iter().enumerate() {
            x = bottleneck(
                &mut n,
                &format!("/blocks/blocks.{i}/blocks.{i}.{j}"),
                x,
                cfg,
            )?;
        }
    }
    let s = "/blocks/blocks.9/blocks.9.0";
    let x = n.op(
        format!("{s}/conv/Conv"),
        Op::Conv(ConvAttrs::square(960, 1, 1, 1, 1)),
        &[x],
    )?;
    let x = n.op(format!("{s}/bn1/act/Relu"), Op::Relu, &[x])?;
    let x = n.op(
        "/global_pool/pool/GlobalAveragePool",
        Op::GlobalAveragePool,
        &[x],
    )?;
    let x = n.op(
        "/conv_head/Conv",
        Op::Conv(ConvAttrs::square(1280, 1, 1, 1, 1)),
        &[x],
    )?;
    let x = n.op("/act2/Relu", Op::Relu, &[x])?;
    let x = n.op("/flatten/Flatten", Op::Flatten { axis: 1 }, &[x])?;
    n.op("/classifier/Gemm", Op::Gemm { out_features: 1000 }, &[x])?;
    n.finish()
}
