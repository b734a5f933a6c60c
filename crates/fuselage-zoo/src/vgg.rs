//! VGG-16 (configuration "D"): thirteen 3x3 convolutions in five stages, each stage closed by
//! a 2x2 max pool, then `AdaptiveAvgPool2d((7, 7))` and three `Linear` layers.

use crate::scope::{Act, Net, Scope};
use crate::{Result, ZooError};
use fuselage_ir::{ConvAttrs, Graph, Op, PoolAttrs};

/// Output channels per convolution, 0 for a max pool (torchvision's `cfgs["D"]`).
const CFG_D: [u64; 18] = [
    64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0,
];

/// `vgg16` at `r`x`r`.
pub(crate) fn vgg16(r: u64) -> Result<Graph> {
    let (mut net, mut x) = Net::new("vgg16", r, r)?;
    let features = Scope::root().attr("features");
    let mut i = 0;
    for &c in &CFG_D {
        if c == 0 {
            x = net.op(
                &features.idx(i),
                Op::MaxPool(PoolAttrs::square(2, 2, 0, false)),
                &[x],
            )?;
            i += 1;
        } else {
            x = net.conv(&features.idx(i), x, ConvAttrs::square(c, 3, 1, 1, 1))?;
            x = net.act(&features.idx(i + 1), x, Act::Relu)?;
            i += 2;
        }
    }
    // AdaptiveAvgPool2d((7, 7)) exports as a plain AveragePool when the map divides by 7.
    let (h, w) = net.hw(x);
    if h % 7 != 0 || w % 7 != 0 {
        return Err(ZooError::BadResolution {
            name: "vgg16".into(),
            resolution: r,
            reason: format!(
                "the {h}x{w} feature map does not divide into AdaptiveAvgPool2d((7, 7))'s windows"
            ),
        });
    }
    let pool = PoolAttrs {
        kernel: [h / 7, w / 7],
        stride: [h / 7, w / 7],
        pads: [0; 4],
        ceil_mode: false,
    };
    x = net.op(&Scope::root().attr("avgpool"), Op::AveragePool(pool), &[x])?;
    let classifier = Scope::root().attr("classifier");
    x = net.flatten_classifier(
        &classifier,
        x,
        &[
            (0, 4096, Some(Act::Relu)),
            (3, 4096, Some(Act::Relu)),
            (6, 1000, None),
        ],
    )?;
    net.finish(x)
}
