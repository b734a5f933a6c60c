//! ResNet-18/50/101/152 (torchvision's v1.5: a bottleneck strides in its 3x3 convolution).
//!
//! A 7x7/2 stem and a 3x3/2 max pool, four stages of `BasicBlock`s (two 3x3 convolutions) or
//! `Bottleneck`s (1x1, 3x3, 1x1 with 4x expansion) with a 1x1 `downsample` convolution where the
//! shape changes, then a global average pool and `fc`.

use crate::Result;
use crate::scope::{Act, Net, Scope};
use fuselage_ir::{ConvAttrs, Graph, Op, PoolAttrs, Source};

/// Which ResNet.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Depth {
    /// ResNet-18: basic blocks `[2, 2, 2, 2]`.
    R18,
    /// ResNet-50: bottlenecks `[3, 4, 6, 3]`.
    R50,
    /// ResNet-101: bottlenecks `[3, 4, 23, 3]`.
    R101,
    /// ResNet-152: bottlenecks `[3, 8, 36, 3]`.
    R152,
}

impl Depth {
    /// Blocks per stage and whether they are bottlenecks.
    fn layers(self) -> ([usize; 4], bool) {
        match self {
            Depth::R18 => ([2, 2, 2, 2], false),
            Depth::R50 => ([3, 4, 6, 3], true),
            Depth::R101 => ([3, 4, 23, 3], true),
            Depth::R152 => ([3, 8, 36, 3], true),
        }
    }
}

/// One residual block at `scope`: `planes` base width, `stride` on its first 3x3 convolution.
fn block(
    net: &mut Net,
    scope: &Scope,
    x: Source,
    planes: u64,
    stride: u64,
    bottleneck: bool,
) -> Result<Source> {
    let out_c = if bottleneck { planes * 4 } else { planes };
    let relu = |i: usize| scope.call("relu", i);
    let mut y;
    if bottleneck {
        y = net.conv(
            &scope.attr("conv1"),
            x,
            ConvAttrs::square(planes, 1, 1, 1, 1),
        )?;
        y = net.act(&relu(0), y, Act::Relu)?;
        y = net.conv(
            &scope.attr("conv2"),
            y,
            ConvAttrs::square(planes, 3, stride, 1, 1),
        )?;
        y = net.act(&relu(1), y, Act::Relu)?;
        y = net.conv(
            &scope.attr("conv3"),
            y,
            ConvAttrs::square(out_c, 1, 1, 1, 1),
        )?;
    } else {
        y = net.conv(
            &scope.attr("conv1"),
            x,
            ConvAttrs::square(planes, 3, stride, 1, 1),
        )?;
        y = net.act(&relu(0), y, Act::Relu)?;
        y = net.conv(
            &scope.attr("conv2"),
            y,
            ConvAttrs::square(out_c, 3, 1, 1, 1),
        )?;
    }
    let identity = if stride != 1 || net.channels(x) != out_c {
        let ds = scope.attr("downsample").idx(0);
        net.conv(&ds, x, ConvAttrs::square(out_c, 1, stride, 1, 1))?
    } else {
        x
    };
    let sum = net.add(scope, y, identity)?;
    net.act(&relu(if bottleneck { 2 } else { 1 }), sum, Act::Relu)
}

/// A ResNet called `name` at `r`x`r`.
pub(crate) fn resnet(name: &str, depth: Depth, r: u64) -> Result<Graph> {
    let (blocks, bottleneck) = depth.layers();
    let (mut net, x) = Net::new(name, r, r)?;
    let root = Scope::root();
    let stem = ConvAttrs::square(64, 7, 2, 1, 1);
    let mut x = net.conv(&root.attr("conv1"), x, stem)?;
    x = net.act(&root.attr("relu"), x, Act::Relu)?;
    x = net.op(
        &root.attr("maxpool"),
        Op::MaxPool(PoolAttrs::square(3, 2, 1, false)),
        &[x],
    )?;
    for (stage, &n) in blocks.iter().enumerate() {
        let layer = root.attr(&format!("layer{}", stage + 1));
        let planes = 64 << stage;
        for i in 0..n {
            let stride = if stage > 0 && i == 0 { 2 } else { 1 };
            x = block(&mut net, &layer.idx(i), x, planes, stride, bottleneck)?;
        }
    }
    x = net.op(&root.attr("avgpool"), Op::GlobalAveragePool, &[x])?;
    x = net.op(&root, Op::Flatten { axis: 1 }, &[x])?;
    x = net.op(&root.attr("fc"), Op::Gemm { out_features: 1000 }, &[x])?;
    net.finish(x)
}
