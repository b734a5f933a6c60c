//! MobileNetV2 and MobileNetV3 (small, large).
//!
//! Both are a strided stem, a run of inverted residuals (1x1 expand, depthwise kxk, optional
//! squeeze-excitation in V3, linear 1x1 project, a skip where the shape allows) and a 1x1 head
//! convolution. [`v3_features`] builds V3's `features` for the classifiers here and, dilated,
//! for DeepLabV3's backbone.

use crate::Result;
use crate::scope::{Act, Net, Scope, make_divisible};
use fuselage_ir::{ConvAttrs, Graph, Op, Source};

/// MobileNetV2's inverted-residual setting: `(expand ratio t, channels c, repeats n, stride s)`.
const V2_SETTING: [(u64, u64, usize, u64); 7] = [
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
];

/// `mobilenet_v2` at `r`x`r`.
pub(crate) fn mobilenet_v2(r: u64) -> Result<Graph> {
    let (mut net, x) = Net::new("mobilenet_v2", r, r)?;
    let root = Scope::root();
    let features = root.attr("features");
    let mut x = net.conv_bn_act(
        &features.idx(0),
        x,
        ConvAttrs::square(32, 3, 2, 1, 1),
        Some(Act::Relu6),
    )?;
    let mut i = 1;
    for &(t, c, n, s) in &V2_SETTING {
        for k in 0..n {
            let stride = if k == 0 { s } else { 1 };
            x = v2_block(&mut net, &features.idx(i), x, t, c, stride)?;
            i += 1;
        }
    }
    x = net.conv_bn_act(
        &features.idx(i),
        x,
        ConvAttrs::square(1280, 1, 1, 1, 1),
        Some(Act::Relu6),
    )?;
    // forward: adaptive_avg_pool2d, torch.flatten, classifier (Dropout, Linear).
    x = net.op(&root, Op::GlobalAveragePool, &[x])?;
    x = net.flatten_classifier(&root.attr("classifier"), x, &[(1, 1000, None)])?;
    net.finish(x)
}

/// MobileNetV2's `InvertedResidual` at `scope`: `conv` is a `Sequential` of the optional 1x1
/// expand, the depthwise `ConvBNReLU6`, then a plain 1x1 project convolution (and its BN).
fn v2_block(
    net: &mut Net,
    scope: &Scope,
    x: Source,
    t: u64,
    out: u64,
    stride: u64,
) -> Result<Source> {
    let inp = net.channels(x);
    let hidden = inp * t;
    let conv = scope.attr("conv");
    let mut i = 0;
    let mut y = x;
    if t != 1 {
        y = net.conv_bn_act(
            &conv.idx(i),
            y,
            ConvAttrs::square(hidden, 1, 1, 1, 1),
            Some(Act::Relu6),
        )?;
        i += 1;
    }
    let dw = ConvAttrs::square(hidden, 3, stride, 1, hidden);
    y = net.conv_bn_act(&conv.idx(i), y, dw, Some(Act::Relu6))?;
    y = net.conv(&conv.idx(i + 1), y, ConvAttrs::square(out, 1, 1, 1, 1))?;
    if stride == 1 && inp == out {
        net.add(scope, x, y)
    } else {
        Ok(y)
    }
}

/// Which MobileNetV3.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum V3 {
    /// MobileNetV3-Small.
    Small,
    /// MobileNetV3-Large.
    Large,
}

/// One V3 bottleneck: `(kernel, expanded, out, SE, activation, stride)`; the input channels
/// follow from the graph.
type Bneck = (u64, u64, u64, bool, Act, u64);

const RE: Act = Act::Relu;
const HS: Act = Act::HardSwish;

/// torchvision's `_mobilenet_v3_conf("mobilenet_v3_large")` (no reduced tail).
const V3_LARGE: [Bneck; 15] = [
    (3, 16, 16, false, RE, 1),
    (3, 64, 24, false, RE, 2),
    (3, 72, 24, false, RE, 1),
    (5, 72, 40, true, RE, 2),
    (5, 120, 40, true, RE, 1),
    (5, 120, 40, true, RE, 1),
    (3, 240, 80, false, HS, 2),
    (3, 200, 80, false, HS, 1),
    (3, 184, 80, false, HS, 1),
    (3, 184, 80, false, HS, 1),
    (3, 480, 112, true, HS, 1),
    (3, 672, 112, true, HS, 1),
    (5, 672, 160, true, HS, 2),
    (5, 960, 160, true, HS, 1),
    (5, 960, 160, true, HS, 1),
];

/// torchvision's `_mobilenet_v3_conf("mobilenet_v3_small")` (no reduced tail).
const V3_SMALL: [Bneck; 11] = [
    (3, 16, 16, true, RE, 2),
    (3, 72, 24, false, RE, 2),
    (3, 88, 24, false, RE, 1),
    (5, 96, 40, true, HS, 2),
    (5, 240, 40, true, HS, 1),
    (5, 240, 40, true, HS, 1),
    (5, 120, 48, true, HS, 1),
    (5, 144, 48, true, HS, 1),
    (5, 288, 96, true, HS, 2),
    (5, 576, 96, true, HS, 1),
    (5, 576, 96, true, HS, 1),
];

impl V3 {
    fn setting(self) -> &'static [Bneck] {
        match self {
            V3::Small => &V3_SMALL,
            V3::Large => &V3_LARGE,
        }
    }

    /// Width of the classifier's hidden `Linear` (`last_channel`).
    fn last_channel(self) -> u64 {
        match self {
            V3::Small => 1024,
            V3::Large => 1280,
        }
    }
}

/// MobileNetV3's `features` under `features` (children `features.0` ... `features.N`): the
/// stem, the bottlenecks and the 1x1 head convolution (6x the last bottleneck's width).
///
/// With `dilated`, the last stage (the bottlenecks after the last stride-2 one, and that one)
/// keeps its resolution: stride 1 and dilation 2 instead of stride 2, as
/// `mobilenet_v3_large(dilated=True)` builds it for segmentation.
pub(crate) fn v3_features(
    net: &mut Net,
    features: &Scope,
    x: Source,
    v: V3,
    dilated: bool,
) -> Result<Source> {
    let setting = v.setting();
    // The C4 stage is the last stride-2 bottleneck and everything after it.
    let last_stage = setting
        .iter()
        .rposition(|b| b.5 == 2)
        .unwrap_or(setting.len());
    let stem = ConvAttrs::square(16, 3, 2, 1, 1);
    let mut x = net.conv_bn_act(&features.idx(0), x, stem, Some(Act::HardSwish))?;
    for (i, &(k, exp, out, se, act, stride)) in setting.iter().enumerate() {
        let dilation = if dilated && i >= last_stage { 2 } else { 1 };
        x = v3_block(
            net,
            &features.idx(i + 1),
            x,
            (k, exp, out, se, act, stride),
            dilation,
        )?;
    }
    let head = ConvAttrs::square(6 * net.channels(x), 1, 1, 1, 1);
    net.conv_bn_act(
        &features.idx(setting.len() + 1),
        x,
        head,
        Some(Act::HardSwish),
    )
}

/// MobileNetV3's `InvertedResidual` at `scope`; its layers are the `block` `Sequential`.
fn v3_block(net: &mut Net, scope: &Scope, x: Source, b: Bneck, dilation: u64) -> Result<Source> {
    let (k, exp, out, se, act, stride) = b;
    let inp = net.channels(x);
    let block = scope.attr("block");
    let mut i = 0;
    let mut y = x;
    if exp != inp {
        y = net.conv_bn_act(
            &block.idx(i),
            y,
            ConvAttrs::square(exp, 1, 1, 1, 1),
            Some(act),
        )?;
        i += 1;
    }
    // A dilated block keeps its resolution; the skip still follows the configured stride.
    let dw_stride = if dilation > 1 { 1 } else { stride };
    let dw = ConvAttrs::square(exp, k, dw_stride, dilation, exp);
    y = net.conv_bn_act(&block.idx(i), y, dw, Some(act))?;
    i += 1;
    if se {
        let squeeze = make_divisible((exp / 4) as f64, 8);
        y = net.squeeze_excite(&block.idx(i), y, squeeze, Act::Relu, Act::HardSigmoid)?;
        i += 1;
    }
    y = net.conv_bn_act(&block.idx(i), y, ConvAttrs::square(out, 1, 1, 1, 1), None)?;
    if stride == 1 && inp == out {
        net.add(scope, y, x)
    } else {
        Ok(y)
    }
}

/// A MobileNetV3 classifier called `name` at `r`x`r`.
pub(crate) fn mobilenet_v3(name: &str, v: V3, r: u64) -> Result<Graph> {
    let (mut net, x) = Net::new(name, r, r)?;
    let root = Scope::root();
    let mut x = v3_features(&mut net, &root.attr("features"), x, v, false)?;
    x = net.op(&root.attr("avgpool"), Op::GlobalAveragePool, &[x])?;
    let layers = [(0, v.last_channel(), Some(Act::HardSwish)), (3, 1000, None)];
    x = net.flatten_classifier(&root.attr("classifier"), x, &layers)?;
    net.finish(x)
}
