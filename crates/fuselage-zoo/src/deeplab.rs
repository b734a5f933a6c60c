//! DeepLabV3 with a MobileNetV3-Large backbone: the dilated V3 `features` (output stride 16)
//! under `backbone`, then `DeepLabHead(960, 21)` (ASPP with rates 12, 24, 36 and image
//! pooling, a 3x3 convolution, a 1x1 classifier) and a bilinear resize back to the input. The
//! auxiliary classifier is not built.

use crate::Result;
use crate::mobilenet::{V3, v3_features};
use crate::scope::{Act, Net, Scope};
use fuselage_ir::{ConvAttrs, Graph, Op, Source};

/// ASPP's atrous rates.
const RATES: [u64; 3] = [12, 24, 36];
/// ASPP's (and the head's) width.
const ASPP_OUT: u64 = 256;
/// Pascal VOC's 21 classes.
const CLASSES: u64 = 21;

/// `deeplabv3_mobilenet_v3_large` at `r`x`r`.
pub(crate) fn deeplabv3_mobilenet_v3_large(r: u64) -> Result<Graph> {
    let (mut net, x) = Net::new("deeplabv3_mobilenet_v3_large", r, r)?;
    let root = Scope::root();
    // IntermediateLayerGetter keeps the features' children under their keys "0".."16".
    let features = v3_features(&mut net, &root.attr("backbone"), x, V3::Large, true)?;
    let classifier = root.attr("classifier");
    // DeepLabHead: Sequential(ASPP, conv 3x3, BN, ReLU, conv 1x1).
    let mut y = aspp(&mut net, &classifier.idx(0), features)?;
    y = net.conv(
        &classifier.idx(1),
        y,
        ConvAttrs::square(ASPP_OUT, 3, 1, 1, 1),
    )?;
    y = net.act(&classifier.idx(3), y, Act::Relu)?;
    y = net.conv(
        &classifier.idx(4),
        y,
        ConvAttrs::square(CLASSES, 1, 1, 1, 1),
    )?;
    y = net.resize(&root, y, r, r)?;
    net.finish(y)
}

/// torchvision's `ASPP` at `scope`: five branches in `convs`, concatenated, then `project`.
fn aspp(net: &mut Net, scope: &Scope, x: Source) -> Result<Source> {
    let convs = scope.attr("convs");
    let one = ConvAttrs::square(ASPP_OUT, 1, 1, 1, 1);
    let mut branches = vec![net.conv_bn_act(&convs.idx(0), x, one.clone(), Some(Act::Relu))?];
    for (i, &rate) in RATES.iter().enumerate() {
        let atrous = ConvAttrs::square(ASPP_OUT, 3, 1, rate, 1);
        branches.push(net.conv_bn_act(&convs.idx(i + 1), x, atrous, Some(Act::Relu))?);
    }
    // ASPPPooling: Sequential(AdaptiveAvgPool2d(1), conv, BN, ReLU), then F.interpolate.
    let pooling = convs.idx(RATES.len() + 1);
    let (h, w) = net.hw(x);
    let p = net.op(&pooling.idx(0), Op::GlobalAveragePool, &[x])?;
    let p = net.conv(&pooling.idx(1), p, one.clone())?;
    let p = net.act(&pooling.idx(3), p, Act::Relu)?;
    branches.push(net.resize(&pooling, p, h, w)?);
    let cat = net.op(scope, Op::concat(1), &branches)?;
    // project: Sequential(conv, BN, ReLU, Dropout).
    net.conv_bn_act(&scope.attr("project"), cat, one, Some(Act::Relu))
}
