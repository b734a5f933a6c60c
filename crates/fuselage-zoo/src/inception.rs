//! Inception v3 and GoogLeNet (Inception v1), as torchvision builds them.
//!
//! Both are made of torchvision's `BasicConv2d` (a bias-free convolution, a BatchNorm with
//! `eps=0.001`, then a functional ReLU): in the export the BN is folded into the convolution as
//! its bias and the ReLU is named in the block's own scope (`/Mixed_5b/branch1x1/conv/Conv`,
//! then `/Mixed_5b/branch1x1/Relu`). Every Inception block runs its branches in the order of
//! torchvision's `_forward`, each branch to its end, and concatenates them on the channels in
//! that order; the pools inside a block are functional (`F.avg_pool2d`, `F.max_pool2d`) in v3,
//! so they are named in the block's scope (`/Mixed_5b/AveragePool`), and modules in GoogLeNet
//! (`/inception3a/branch4/branch4.0/MaxPool`).
//!
//! What the eval-mode export leaves out: the auxiliary classifiers (`AuxLogits`, `aux1`,
//! `aux2`) only run in training, Dropout vanishes, and `transform_input` is off for
//! `weights=None`. `AdaptiveAvgPool2d((1, 1))` becomes `GlobalAveragePool`, then
//! `torch.flatten` and `fc`.
//!
//! v3's average-pool branches (`F.avg_pool2d(x, 3, stride=1, padding=1)`) export, at opset
//! 10 and later, as one `AveragePool` with `pads` 1 and `count_include_pad=1` (PyTorch's
//! default), not as a `Pad` before the pool; the IR keeps only the window, stride and
//! padding, which are all that decide shapes and rows. GoogLeNet's max pools use
//! `ceil_mode=True` (`PoolAttrs::ceil_mode`), so its feature maps round up: 112 → 56 → 28 →
//! 14 → 7 at 224.

use crate::scope::{Act, Net, Scope};
use crate::{Result, ZooError};
use fuselage_ir::{ConvAttrs, Graph, Op, PoolAttrs, Source};

/// The smallest input side Inception v3 takes (torchvision's `min_size`, 75×75): below it,
/// the unpadded stem and the two stride-2 reductions leave `Mixed_7a` a map smaller than its
/// 3×3 windows.
pub(crate) const INCEPTION_V3_MIN: u64 = 75;

/// `nn.Conv2d(kernel_size=(kh, kw), stride=s, padding=(ph, pw))` of `out` channels.
fn conv(out: u64, (kh, kw): (u64, u64), s: u64, (ph, pw): (u64, u64)) -> ConvAttrs {
    ConvAttrs {
        out_channels: out,
        kernel: [kh, kw],
        stride: [s, s],
        pads: [ph, pw, ph, pw],
        dilation: [1, 1],
        group: 1,
    }
}

/// A `k`×`k` convolution with stride `s` and padding `p` (`BasicConv2d` pads 0 unless told).
fn sq(out: u64, k: u64, s: u64, p: u64) -> ConvAttrs {
    conv(out, (k, k), s, (p, p))
}

/// A 1×1 convolution.
fn c1(out: u64) -> ConvAttrs {
    sq(out, 1, 1, 0)
}

/// A `1`×`k` convolution padded `(0, k/2)`: it keeps the map's size.
fn row(out: u64, k: u64) -> ConvAttrs {
    conv(out, (1, k), 1, (0, k / 2))
}

/// A `k`×`1` convolution padded `(k/2, 0)`: it keeps the map's size.
fn col(out: u64, k: u64) -> ConvAttrs {
    conv(out, (k, 1), 1, (k / 2, 0))
}

/// torchvision's `BasicConv2d` at `scope`: `conv` (BN folded in), then `F.relu`.
fn basic(net: &mut Net, scope: &Scope, x: Source, attrs: ConvAttrs) -> Result<Source> {
    let y = net.conv(&scope.attr("conv"), x, attrs)?;
    net.act(scope, y, Act::Relu)
}

/// `BasicConv2d`s in attributes of `block`, run one after the other on `x`.
fn chain(net: &mut Net, block: &Scope, x: Source, convs: &[(&str, ConvAttrs)]) -> Result<Source> {
    let mut y = x;
    for (name, attrs) in convs {
        y = basic(net, &block.attr(name), y, attrs.clone())?;
    }
    Ok(y)
}

/// `F.avg_pool2d(x, kernel_size=3, stride=1, padding=1)` run in `block`.
fn avg_pool_3x3(net: &mut Net, block: &Scope, x: Source) -> Result<Source> {
    let pool = PoolAttrs::square(3, 1, 1, false);
    net.op(block, Op::AveragePool(pool), &[x])
}

/// `F.max_pool2d(x, kernel_size=3, stride=2)` run in `block`.
fn max_pool_3x3_s2(net: &mut Net, block: &Scope, x: Source) -> Result<Source> {
    net.op(block, Op::MaxPool(PoolAttrs::square(3, 2, 0, false)), &[x])
}

/// v3's `InceptionA` (35×35, `Mixed_5b`–`5d`): 1×1; 1×1 then 5×5; 1×1 then two 3×3; average
/// pool then 1×1 of `pool_features`.
fn inception_a(net: &mut Net, s: &Scope, x: Source, pool_features: u64) -> Result<Source> {
    let b1 = chain(net, s, x, &[("branch1x1", c1(64))])?;
    let b5 = chain(
        net,
        s,
        x,
        &[("branch5x5_1", c1(48)), ("branch5x5_2", sq(64, 5, 1, 2))],
    )?;
    let b3 = chain(
        net,
        s,
        x,
        &[
            ("branch3x3dbl_1", c1(64)),
            ("branch3x3dbl_2", sq(96, 3, 1, 1)),
            ("branch3x3dbl_3", sq(96, 3, 1, 1)),
        ],
    )?;
    let p = avg_pool_3x3(net, s, x)?;
    let p = chain(net, s, p, &[("branch_pool", c1(pool_features))])?;
    net.op(s, Op::concat(1), &[b1, b5, b3, p])
}

/// v3's `InceptionB` (`Mixed_6a`, 35 → 17): a strided 3×3; 1×1, 3×3, strided 3×3; a strided
/// max pool.
fn inception_b(net: &mut Net, s: &Scope, x: Source) -> Result<Source> {
    let b3 = chain(net, s, x, &[("branch3x3", sq(384, 3, 2, 0))])?;
    let d = chain(
        net,
        s,
        x,
        &[
            ("branch3x3dbl_1", c1(64)),
            ("branch3x3dbl_2", sq(96, 3, 1, 1)),
            ("branch3x3dbl_3", sq(96, 3, 2, 0)),
        ],
    )?;
    let p = max_pool_3x3_s2(net, s, x)?;
    net.op(s, Op::concat(1), &[b3, d, p])
}

/// v3's `InceptionC` (17×17, `Mixed_6b`–`6e`), factorised 7×7s of `c7` channels: 1×1; 1×1,
/// 1×7, 7×1; 1×1, 7×1, 1×7, 7×1, 1×7; average pool then 1×1.
fn inception_c(net: &mut Net, s: &Scope, x: Source, c7: u64) -> Result<Source> {
    let b1 = chain(net, s, x, &[("branch1x1", c1(192))])?;
    let b7 = chain(
        net,
        s,
        x,
        &[
            ("branch7x7_1", c1(c7)),
            ("branch7x7_2", row(c7, 7)),
            ("branch7x7_3", col(192, 7)),
        ],
    )?;
    let d = chain(
        net,
        s,
        x,
        &[
            ("branch7x7dbl_1", c1(c7)),
            ("branch7x7dbl_2", col(c7, 7)),
            ("branch7x7dbl_3", row(c7, 7)),
            ("branch7x7dbl_4", col(c7, 7)),
            ("branch7x7dbl_5", row(192, 7)),
        ],
    )?;
    let p = avg_pool_3x3(net, s, x)?;
    let p = chain(net, s, p, &[("branch_pool", c1(192))])?;
    net.op(s, Op::concat(1), &[b1, b7, d, p])
}

/// v3's `InceptionD` (`Mixed_7a`, 17 → 8): 1×1 then a strided 3×3; 1×1, 1×7, 7×1, strided
/// 3×3; a strided max pool.
fn inception_d(net: &mut Net, s: &Scope, x: Source) -> Result<Source> {
    let b3 = chain(
        net,
        s,
        x,
        &[("branch3x3_1", c1(192)), ("branch3x3_2", sq(320, 3, 2, 0))],
    )?;
    let b7 = chain(
        net,
        s,
        x,
        &[
            ("branch7x7x3_1", c1(192)),
            ("branch7x7x3_2", row(192, 7)),
            ("branch7x7x3_3", col(192, 7)),
            ("branch7x7x3_4", sq(192, 3, 2, 0)),
        ],
    )?;
    let p = max_pool_3x3_s2(net, s, x)?;
    net.op(s, Op::concat(1), &[b3, b7, p])
}

/// v3's `InceptionE` (8×8, `Mixed_7b`, `7c`): 1×1; 1×1 then 1×3 and 3×1 side by side,
/// concatenated (`Concat`); 1×1, 3×3, then 1×3 and 3×1, concatenated (`Concat_1`); average
/// pool then 1×1; all four concatenated (`Concat_2`).
fn inception_e(net: &mut Net, s: &Scope, x: Source) -> Result<Source> {
    let b1 = chain(net, s, x, &[("branch1x1", c1(320))])?;
    let t = chain(net, s, x, &[("branch3x3_1", c1(384))])?;
    let a = chain(net, s, t, &[("branch3x3_2a", row(384, 3))])?;
    let b = chain(net, s, t, &[("branch3x3_2b", col(384, 3))])?;
    let b3 = net.op_nth(s, Op::concat(1), &[a, b], 0)?;
    let t = chain(
        net,
        s,
        x,
        &[
            ("branch3x3dbl_1", c1(448)),
            ("branch3x3dbl_2", sq(384, 3, 1, 1)),
        ],
    )?;
    let a = chain(net, s, t, &[("branch3x3dbl_3a", row(384, 3))])?;
    let b = chain(net, s, t, &[("branch3x3dbl_3b", col(384, 3))])?;
    let d = net.op_nth(s, Op::concat(1), &[a, b], 1)?;
    let p = avg_pool_3x3(net, s, x)?;
    let p = chain(net, s, p, &[("branch_pool", c1(192))])?;
    net.op_nth(s, Op::concat(1), &[b1, b3, d, p], 2)
}

/// `inception_v3` (torchvision's `Inception3`, eval mode, no `AuxLogits`) at `r`×`r`.
///
/// # Errors
/// [`ZooError::BadResolution`] for a side under [`INCEPTION_V3_MIN`].
pub(crate) fn inception_v3(r: u64) -> Result<Graph> {
    let name = "inception_v3";
    if r < INCEPTION_V3_MIN {
        return Err(ZooError::BadResolution {
            name: name.to_string(),
            resolution: r,
            reason: format!(
                "Inception v3 needs a side of at least {INCEPTION_V3_MIN} (its unpadded stem \
                 and stride-2 reductions leave Mixed_7a less than a 3x3 window)"
            ),
        });
    }
    let (mut net, x) = Net::new(name, r, r)?;
    let root = Scope::root();
    let mut x = chain(
        &mut net,
        &root,
        x,
        &[
            ("Conv2d_1a_3x3", sq(32, 3, 2, 0)),
            ("Conv2d_2a_3x3", sq(32, 3, 1, 0)),
            ("Conv2d_2b_3x3", sq(64, 3, 1, 1)),
        ],
    )?;
    x = max_pool_3x3_s2(&mut net, &root.attr("maxpool1"), x)?;
    x = chain(
        &mut net,
        &root,
        x,
        &[
            ("Conv2d_3b_1x1", c1(80)),
            ("Conv2d_4a_3x3", sq(192, 3, 1, 0)),
        ],
    )?;
    x = max_pool_3x3_s2(&mut net, &root.attr("maxpool2"), x)?;
    for (block, pool_features) in [("Mixed_5b", 32), ("Mixed_5c", 64), ("Mixed_5d", 64)] {
        x = inception_a(&mut net, &root.attr(block), x, pool_features)?;
    }
    x = inception_b(&mut net, &root.attr("Mixed_6a"), x)?;
    for (block, c7) in [
        ("Mixed_6b", 128),
        ("Mixed_6c", 160),
        ("Mixed_6d", 160),
        ("Mixed_6e", 192),
    ] {
        x = inception_c(&mut net, &root.attr(block), x, c7)?;
    }
    x = inception_d(&mut net, &root.attr("Mixed_7a"), x)?;
    for block in ["Mixed_7b", "Mixed_7c"] {
        x = inception_e(&mut net, &root.attr(block), x)?;
    }
    x = net.op(&root.attr("avgpool"), Op::GlobalAveragePool, &[x])?;
    x = net.op(&root, Op::Flatten { axis: 1 }, &[x])?;
    x = net.op(&root.attr("fc"), Op::Gemm { out_features: 1000 }, &[x])?;
    net.finish(x)
}

/// One entry of GoogLeNet's body after its stem.
enum Stage {
    /// `nn.MaxPool2d(k, stride=2, ceil_mode=True)` in this attribute.
    Pool(&'static str, u64),
    /// An `Inception(in, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj)` in this
    /// attribute (the input channels follow from the graph).
    Inception(&'static str, [u64; 6]),
}

/// torchvision's `GoogLeNet` from `inception3a` to `inception5b`.
const GOOGLENET_BODY: [Stage; 11] = [
    Stage::Inception("inception3a", [64, 96, 128, 16, 32, 32]),
    Stage::Inception("inception3b", [128, 128, 192, 32, 96, 64]),
    Stage::Pool("maxpool3", 3),
    Stage::Inception("inception4a", [192, 96, 208, 16, 48, 64]),
    Stage::Inception("inception4b", [160, 112, 224, 24, 64, 64]),
    Stage::Inception("inception4c", [128, 128, 256, 24, 64, 64]),
    Stage::Inception("inception4d", [112, 144, 288, 32, 64, 64]),
    Stage::Inception("inception4e", [256, 160, 320, 32, 128, 128]),
    Stage::Pool("maxpool4", 2),
    Stage::Inception("inception5a", [256, 160, 320, 32, 128, 128]),
    Stage::Inception("inception5b", [384, 192, 384, 48, 128, 128]),
];

/// `nn.MaxPool2d(k, stride=2, ceil_mode=True)` at `scope`.
fn ceil_pool(net: &mut Net, scope: &Scope, x: Source, k: u64) -> Result<Source> {
    net.op(scope, Op::MaxPool(PoolAttrs::square(k, 2, 0, true)), &[x])
}

/// GoogLeNet's `Inception` at `s`: `branch1` a 1×1; `branch2` a `Sequential` of 1×1 and 3×3;
/// `branch3` the same (torchvision's 3×3 where the paper has 5×5, pytorch/vision#906);
/// `branch4` a 3×3/1 ceil-mode max pool (padding 1) then a 1×1.
fn inception_v1(net: &mut Net, s: &Scope, x: Source, ch: [u64; 6]) -> Result<Source> {
    let [c1x1, r3, c3, r5, c5, pool_proj] = ch;
    let b1 = basic(net, &s.attr("branch1"), x, c1(c1x1))?;
    let b2 = s.attr("branch2");
    let y2 = basic(net, &b2.idx(0), x, c1(r3))?;
    let y2 = basic(net, &b2.idx(1), y2, sq(c3, 3, 1, 1))?;
    let b3 = s.attr("branch3");
    let y3 = basic(net, &b3.idx(0), x, c1(r5))?;
    let y3 = basic(net, &b3.idx(1), y3, sq(c5, 3, 1, 1))?;
    let b4 = s.attr("branch4");
    let pool = PoolAttrs::square(3, 1, 1, true);
    let y4 = net.op(&b4.idx(0), Op::MaxPool(pool), &[x])?;
    let y4 = basic(net, &b4.idx(1), y4, c1(pool_proj))?;
    net.op(s, Op::concat(1), &[b1, y2, y3, y4])
}

/// `googlenet` (torchvision's `GoogLeNet`, eval mode, no `aux1`/`aux2`) at `r`×`r`.
pub(crate) fn googlenet(r: u64) -> Result<Graph> {
    let (mut net, x) = Net::new("googlenet", r, r)?;
    let root = Scope::root();
    let mut x = basic(&mut net, &root.attr("conv1"), x, sq(64, 7, 2, 3))?;
    x = ceil_pool(&mut net, &root.attr("maxpool1"), x, 3)?;
    x = chain(
        &mut net,
        &root,
        x,
        &[("conv2", c1(64)), ("conv3", sq(192, 3, 1, 1))],
    )?;
    x = ceil_pool(&mut net, &root.attr("maxpool2"), x, 3)?;
    for stage in &GOOGLENET_BODY {
        x = match *stage {
            Stage::Pool(attr, k) => ceil_pool(&mut net, &root.attr(attr), x, k)?,
            Stage::Inception(attr, ch) => inception_v1(&mut net, &root.attr(attr), x, ch)?,
        };
    }
    x = net.op(&root.attr("avgpool"), Op::GlobalAveragePool, &[x])?;
    x = net.op(&root, Op::Flatten { axis: 1 }, &[x])?;
    x = net.op(&root.attr("fc"), Op::Gemm { out_features: 1000 }, &[x])?;
    net.finish(x)
}
