//! SqueezeNet 1.1: a 3x3/2 stem, eight `Fire` modules (squeeze 1x1, then parallel 1x1 and 3x3
//! expands concatenated) between ceil-mode max pools, and a 1x1 convolution classifier.

use crate::Result;
use crate::scope::{Act, Net, Scope};
use fuselage_ir::{ConvAttrs, Graph, Op, PoolAttrs, Source};

/// One `features` entry of SqueezeNet 1.1.
enum Layer {
    /// `MaxPool2d(3, 2, ceil_mode=True)`.
    Pool,
    /// `Fire(squeeze, expand1x1, expand3x3)` (input channels follow from the graph).
    Fire(u64, u64, u64),
}

const FEATURES: [Layer; 11] = [
    Layer::Pool,
    Layer::Fire(16, 64, 64),
    Layer::Fire(16, 64, 64),
    Layer::Pool,
    Layer::Fire(32, 128, 128),
    Layer::Fire(32, 128, 128),
    Layer::Pool,
    Layer::Fire(48, 192, 192),
    Layer::Fire(48, 192, 192),
    Layer::Fire(64, 256, 256),
    Layer::Fire(64, 256, 256),
];

/// torchvision's `Fire` module at `scope`.
fn fire(net: &mut Net, scope: &Scope, x: Source, sq: u64, e1: u64, e3: u64) -> Result<Source> {
    let s = net.conv(&scope.attr("squeeze"), x, ConvAttrs::square(sq, 1, 1, 1, 1))?;
    let s = net.act(&scope.attr("squeeze_activation"), s, Act::Relu)?;
    let a = net.conv(
        &scope.attr("expand1x1"),
        s,
        ConvAttrs::square(e1, 1, 1, 1, 1),
    )?;
    let a = net.act(&scope.attr("expand1x1_activation"), a, Act::Relu)?;
    let b = net.conv(
        &scope.attr("expand3x3"),
        s,
        ConvAttrs::square(e3, 3, 1, 1, 1),
    )?;
    let b = net.act(&scope.attr("expand3x3_activation"), b, Act::Relu)?;
    net.op(scope, Op::concat(1), &[a, b])
}

/// `squeezenet1_1` at `r`x`r`.
pub(crate) fn squeezenet1_1(r: u64) -> Result<Graph> {
    let (mut net, x) = Net::new("squeezenet1_1", r, r)?;
    let features = Scope::root().attr("features");
    // The stem convolution has no padding.
    let mut stem = ConvAttrs::square(64, 3, 2, 1, 1);
    stem.pads = [0; 4];
    let mut x = net.conv(&features.idx(0), x, stem)?;
    x = net.act(&features.idx(1), x, Act::Relu)?;
    for (i, layer) in FEATURES.iter().enumerate() {
        let scope = features.idx(i + 2);
        x = match *layer {
            Layer::Pool => net.op(&scope, Op::MaxPool(PoolAttrs::square(3, 2, 0, true)), &[x])?,
            Layer::Fire(sq, e1, e3) => fire(&mut net, &scope, x, sq, e1, e3)?,
        };
    }
    // classifier: Dropout, final_conv, ReLU, AdaptiveAvgPool2d(1); then torch.flatten.
    let classifier = Scope::root().attr("classifier");
    x = net.conv(&classifier.idx(1), x, ConvAttrs::square(1000, 1, 1, 1, 1))?;
    x = net.act(&classifier.idx(2), x, Act::Relu)?;
    x = net.op(&classifier.idx(3), Op::GlobalAveragePool, &[x])?;
    x = net.op(&Scope::root(), Op::Flatten { axis: 1 }, &[x])?;
    net.finish(x)
}
