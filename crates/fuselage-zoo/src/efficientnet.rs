//! EfficientNet-B0 and -B3: a SiLU stem, seven stages of `MBConv` blocks (optional 1x1 expand,
//! depthwise kxk, squeeze-excitation, linear project, skip where the shape allows) scaled in
//! width and depth per variant, a 1x1 head convolution, pooling and one `Linear`.

use crate::Result;
use crate::scope::{Act, Net, Scope, make_divisible};
use fuselage_ir::{ConvAttrs, Graph, Op, Source};

/// Which EfficientNet.
#[derive(Copy, Clone, Debug)]
pub(crate) enum Variant {
    /// Width 1.0, depth 1.0.
    B0,
    /// Width 1.2, depth 1.4.
    B3,
}

impl Variant {
    /// `(width_mult, depth_mult)`.
    fn mults(self) -> (f64, f64) {
        match self {
            Variant::B0 => (1.0, 1.0),
            Variant::B3 => (1.2, 1.4),
        }
    }
}

/// torchvision's `_efficientnet_conf` for B0..B7, before scaling:
/// `(expand ratio, kernel, stride, input channels, out channels, layers)`.
const STAGES: [(u64, u64, u64, u64, u64, u64); 7] = [
    (1, 3, 1, 32, 16, 1),
    (6, 3, 2, 16, 24, 2),
    (6, 5, 2, 24, 40, 2),
    (6, 3, 2, 40, 80, 3),
    (6, 5, 1, 80, 112, 3),
    (6, 5, 2, 112, 192, 4),
    (6, 3, 1, 192, 320, 1),
];

/// An EfficientNet called `name` at `r`x`r`.
pub(crate) fn efficientnet(name: &str, v: Variant, r: u64) -> Result<Graph> {
    let (width, depth) = v.mults();
    let adjust = |c: u64| make_divisible(c as f64 * width, 8);
    let (mut net, x) = Net::new(name, r, r)?;
    let root = Scope::root();
    let features = root.attr("features");
    let stem = ConvAttrs::square(adjust(STAGES[0].3), 3, 2, 1, 1);
    let mut x = net.conv_bn_act(&features.idx(0), x, stem, Some(Act::Silu))?;
    for (s, &(t, k, stride, _, out, n)) in STAGES.iter().enumerate() {
        let stage = features.idx(s + 1);
        let layers = (n as f64 * depth).ceil() as usize;
        for i in 0..layers {
            let stride = if i == 0 { stride } else { 1 };
            x = mbconv(&mut net, &stage.idx(i), x, t, k, stride, adjust(out))?;
        }
    }
    let head = ConvAttrs::square(4 * net.channels(x), 1, 1, 1, 1);
    x = net.conv_bn_act(&features.idx(STAGES.len() + 1), x, head, Some(Act::Silu))?;
    x = net.op(&root.attr("avgpool"), Op::GlobalAveragePool, &[x])?;
    x = net.flatten_classifier(&root.attr("classifier"), x, &[(1, 1000, None)])?;
    net.finish(x)
}

/// torchvision's `MBConv` at `scope`; its layers are the `block` `Sequential`.
fn mbconv(
    net: &mut Net,
    scope: &Scope,
    x: Source,
    t: u64,
    k: u64,
    stride: u64,
    out: u64,
) -> Result<Source> {
    let inp = net.channels(x);
    let expanded = make_divisible((inp * t) as f64, 8);
    let block = scope.attr("block");
    let mut i = 0;
    let mut y = x;
    if expanded != inp {
        y = net.conv_bn_act(
            &block.idx(i),
            y,
            ConvAttrs::square(expanded, 1, 1, 1, 1),
            Some(Act::Silu),
        )?;
        i += 1;
    }
    let dw = ConvAttrs::square(expanded, k, stride, 1, expanded);
    y = net.conv_bn_act(&block.idx(i), y, dw, Some(Act::Silu))?;
    let squeeze = (inp / 4).max(1);
    y = net.squeeze_excite(&block.idx(i + 1), y, squeeze, Act::Silu, Act::Sigmoid)?;
    y = net.conv_bn_act(
        &block.idx(i + 2),
        y,
        ConvAttrs::square(out, 1, 1, 1, 1),
        None,
    )?;
    // Stochastic depth is the identity in eval mode.
    if stride == 1 && inp == out {
        net.add(scope, y, x)
    } else {
        Ok(y)
    }
}
