//! The exporter's naming scheme, and the torchvision building blocks on top of
//! [`GraphBuilder`].
//!
//! The TorchScript exporter names a node `/<scope>/<scope>/.../<OpType>`, one scope per module
//! on the call path: a named attribute starts a new local name (`block`, `fc1`), a child of a
//! `Sequential` (or `ModuleList`, `ModuleDict`) extends its parent's local name with its key
//! (`block.0`, then `block.0.0`), and a module run a second time in the same forward gets a
//! `_1` suffix (`relu`, `relu_1`, `relu_2`). Functional ops (`x + y`, `torch.flatten`,
//! `F.interpolate`) are named in the scope they are called from.

use crate::Result;
use fuselage_ir::{ConvAttrs, Graph, GraphBuilder, Op, Source, TensorShape};

/// A module path of the exporter, such as `/features/features.1/block`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Scope {
    /// The whole path, empty for the model itself.
    path: String,
    /// The last component, which a `Sequential` child extends.
    local: String,
}

impl Scope {
    /// The model's own scope: its functional ops are `/Flatten`, `/Resize`, ...
    pub(crate) fn root() -> Self {
        Scope {
            path: String::new(),
            local: String::new(),
        }
    }

    /// The child module held in attribute `name` (`conv1`, `block`, `avgpool`).
    pub(crate) fn attr(&self, name: &str) -> Scope {
        Scope {
            path: format!("{}/{name}", self.path),
            local: name.to_string(),
        }
    }

    /// The `call`-th run (from 0) of the module in attribute `name` within one forward:
    /// `relu`, then `relu_1`, `relu_2`.
    pub(crate) fn call(&self, name: &str, call: usize) -> Scope {
        if call == 0 {
            self.attr(name)
        } else {
            self.attr(&format!("{name}_{call}"))
        }
    }

    /// Child `i` of this `Sequential` (or `ModuleList` / `ModuleDict` key `i`).
    pub(crate) fn idx(&self, i: usize) -> Scope {
        let local = format!("{}.{i}", self.local);
        Scope {
            path: format!("{}/{local}", self.path),
            local,
        }
    }

    /// The name of an op of type `op_type` run directly in this scope.
    pub(crate) fn op(&self, op_type: &str) -> String {
        format!("{}/{op_type}", self.path)
    }

    /// The name of the `n`-th (from 0) op of type `op_type` run directly in this scope: the
    /// exporter keeps node names unique by suffixing repeats, `Concat`, then `Concat_1`,
    /// `Concat_2`.
    pub(crate) fn op_nth(&self, op_type: &str, n: usize) -> String {
        if n == 0 {
            self.op(op_type)
        } else {
            format!("{}/{op_type}_{n}", self.path)
        }
    }
}

/// An activation (or gate) as torchvision modules apply it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Act {
    /// `nn.ReLU`.
    Relu,
    /// `nn.ReLU6`, exported as `Clip`.
    Relu6,
    /// `nn.Hardswish`.
    HardSwish,
    /// `nn.Hardsigmoid`.
    HardSigmoid,
    /// `nn.Sigmoid`.
    Sigmoid,
    /// `nn.SiLU`, exported as `Sigmoid` then `Mul(x, sigmoid(x))`.
    Silu,
}

/// A graph under construction, with the torchvision blocks the zoo is made of.
pub(crate) struct Net {
    b: GraphBuilder,
}

impl Net {
    /// A graph called `name` with the input `input` of shape `[1, 3, h, w]`.
    pub(crate) fn new(name: &str, h: u64, w: u64) -> Result<(Net, Source)> {
        let mut b = GraphBuilder::new(name);
        let x = b.input("input", TensorShape::nchw(3, h, w))?;
        Ok((Net { b }, x))
    }

    /// Shape of a tensor built so far.
    pub(crate) fn shape(&self, x: Source) -> &TensorShape {
        self.b.shape(x)
    }

    /// Channels of an NCHW tensor.
    pub(crate) fn channels(&self, x: Source) -> u64 {
        self.shape(x).c()
    }

    /// `(H, W)` of an NCHW tensor.
    pub(crate) fn hw(&self, x: Source) -> (u64, u64) {
        let s = self.shape(x);
        (s.h(), s.w())
    }

    /// The op `op` run in `scope` on `inputs`, named after its ONNX op type.
    pub(crate) fn op(&mut self, scope: &Scope, op: Op, inputs: &[Source]) -> Result<Source> {
        self.op_nth(scope, op, inputs, 0)
    }

    /// The `n`-th (from 0) op of its type run in `scope` on `inputs` ([`Scope::op_nth`]), for
    /// a forward that calls the same functional op more than once.
    pub(crate) fn op_nth(
        &mut self,
        scope: &Scope,
        op: Op,
        inputs: &[Source],
        n: usize,
    ) -> Result<Source> {
        let name = scope.op_nth(op.kind().name(), n);
        Ok(self.b.node(name, op, inputs)?)
    }

    /// An `nn.Conv2d` module at `scope` (BN folded in: it has a bias).
    pub(crate) fn conv(&mut self, scope: &Scope, x: Source, attrs: ConvAttrs) -> Result<Source> {
        self.op(scope, Op::Conv(attrs), &[x])
    }

    /// An activation module at `scope`.
    pub(crate) fn act(&mut self, scope: &Scope, x: Source, act: Act) -> Result<Source> {
        let op = match act {
            Act::Relu => Op::Relu,
            Act::Relu6 => Op::Clip,
            Act::HardSwish => Op::HardSwish,
            Act::HardSigmoid => Op::HardSigmoid,
            Act::Sigmoid => Op::Sigmoid,
            Act::Silu => {
                let s = self.op(scope, Op::Sigmoid, &[x])?;
                return self.op(scope, Op::Mul, &[x, s]);
            }
        };
        self.op(scope, op, &[x])
    }

    /// torchvision's `Conv2dNormActivation` (or any `Sequential(conv, bn, act)`) at `seq`:
    /// the convolution is child 0, the folded BN child 1, the activation (if any) child 2.
    pub(crate) fn conv_bn_act(
        &mut self,
        seq: &Scope,
        x: Source,
        attrs: ConvAttrs,
        act: Option<Act>,
    ) -> Result<Source> {
        let y = self.conv(&seq.idx(0), x, attrs)?;
        match act {
            Some(a) => self.act(&seq.idx(2), y, a),
            None => Ok(y),
        }
    }

    /// torchvision's `SqueezeExcitation` at `scope`: `avgpool`, `fc1`, `activation`, `fc2`,
    /// `scale_activation`, then `Mul(scale, x)`.
    pub(crate) fn squeeze_excite(
        &mut self,
        scope: &Scope,
        x: Source,
        squeeze: u64,
        act: Act,
        gate: Act,
    ) -> Result<Source> {
        let c = self.channels(x);
        let p = self.op(&scope.attr("avgpool"), Op::GlobalAveragePool, &[x])?;
        let s = self.conv(
            &scope.attr("fc1"),
            p,
            ConvAttrs::square(squeeze, 1, 1, 1, 1),
        )?;
        let s = self.act(&scope.attr("activation"), s, act)?;
        let s = self.conv(&scope.attr("fc2"), s, ConvAttrs::square(c, 1, 1, 1, 1))?;
        let s = self.act(&scope.attr("scale_activation"), s, gate)?;
        self.op(scope, Op::Mul, &[s, x])
    }

    /// `x + y` run in `scope`, ports in that order.
    pub(crate) fn add(&mut self, scope: &Scope, x: Source, y: Source) -> Result<Source> {
        self.op(scope, Op::Add, &[x, y])
    }

    /// `F.interpolate(x, size=(h, w), mode="bilinear")` run in `scope`.
    pub(crate) fn resize(&mut self, scope: &Scope, x: Source, h: u64, w: u64) -> Result<Source> {
        let shape = TensorShape::nchw(self.channels(x), h, w);
        let op = Op::Resize {
            mode: "linear".into(),
        };
        Ok(self.b.node_with(scope.op("Resize"), op, &[x], shape, 0)?)
    }

    /// `torch.flatten(x, 1)` in the model's forward, then the `Linear` layers of a
    /// classifier `Sequential` at `seq`: `(index, out_features, activation)` each, the
    /// activation at the next index.
    pub(crate) fn flatten_classifier(
        &mut self,
        seq: &Scope,
        x: Source,
        layers: &[(usize, u64, Option<Act>)],
    ) -> Result<Source> {
        let mut x = self.op(&Scope::root(), Op::Flatten { axis: 1 }, &[x])?;
        for &(i, out, act) in layers {
            x = self.op(&seq.idx(i), Op::Gemm { out_features: out }, &[x])?;
            if let Some(a) = act {
                x = self.act(&seq.idx(i + 1), x, a)?;
            }
        }
        Ok(x)
    }

    /// Finishes the graph with `out` as its output.
    pub(crate) fn finish(mut self, out: Source) -> Result<Graph> {
        self.b.output(out);
        Ok(self.b.finish()?)
    }
}

/// torchvision's `_make_divisible`: `v` rounded to the nearest multiple of `divisor` (at least
/// `divisor`), not going down by more than 10%.
pub(crate) fn make_divisible(v: f64, divisor: u64) -> u64 {
    let d = divisor as f64;
    let mut new_v = (((v + d / 2.0) as u64) / divisor * divisor).max(divisor);
    if (new_v as f64) < 0.9 * v {
        new_v += divisor;
    }
    new_v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_follow_the_exporter() {
        let f = Scope::root()
            .attr("features")
            .idx(1)
            .attr("block")
            .idx(0)
            .idx(0);
        assert_eq!(
            f.op("Conv"),
            "/features/features.1/block/block.0/block.0.0/Conv"
        );
        let b = Scope::root().attr("layer1").idx(0);
        assert_eq!(b.call("relu", 0).op("Relu"), "/layer1/layer1.0/relu/Relu");
        assert_eq!(b.call("relu", 2).op("Relu"), "/layer1/layer1.0/relu_2/Relu");
        assert_eq!(b.op("Add"), "/layer1/layer1.0/Add");
        assert_eq!(Scope::root().op("Flatten"), "/Flatten");
        let e = Scope::root().attr("Mixed_7b");
        assert_eq!(e.op_nth("Concat", 0), "/Mixed_7b/Concat");
        assert_eq!(e.op_nth("Concat", 2), "/Mixed_7b/Concat_2");
    }

    #[test]
    fn make_divisible_matches_torchvision() {
        assert_eq!(make_divisible(32.0 * 1.2, 8), 40);
        assert_eq!(make_divisible(16.0 * 1.2, 8), 24);
        assert_eq!(make_divisible(72.0 / 4.0, 8), 24);
        assert_eq!(make_divisible(4.0, 8), 8);
    }
}
