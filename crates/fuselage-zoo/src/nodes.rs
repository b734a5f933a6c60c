//! The node shapes the modern builders (transformer, ConvNeXt, GhostNet) share, on top of
//! [`GraphBuilder`]: a node with inferred shape and default weights, one with explicit
//! weights, a linear layer, reshapes and transposes, LayerNorm, softmax and the erf GELU.
//!
//! The CNN builders use `scope::Net`, which also names nodes from module scopes; these take
//! the export's names as given.

use crate::{Result, ZooError};
use fuselage_ir::{Graph, GraphBuilder, Op, OpKind, Source, TensorShape};

/// A [`GraphBuilder`] with the node shapes the modern networks are made of.
pub(crate) struct Nodes {
    pub(crate) b: GraphBuilder,
}

/// A shape from its dimensions.
pub(crate) fn t(d: &[u64]) -> TensorShape {
    TensorShape::new(d.to_vec())
}

impl Nodes {
    /// An empty graph called `name`.
    pub(crate) fn new(name: &str) -> Self {
        Nodes {
            b: GraphBuilder::new(name),
        }
    }

    /// The finished graph.
    pub(crate) fn finish(self) -> Result<Graph> {
        Ok(self.b.finish()?)
    }

    /// A node whose shape the IR infers, with the op's default weights.
    pub(crate) fn op(&mut self, name: impl Into<String>, op: Op, ins: &[Source]) -> Result<Source> {
        Ok(self.b.node(name, op, ins)?)
    }

    /// A node whose shape the IR infers, with `w` constant elements (a bias, a scalar, a folded
    /// table).
    pub(crate) fn with(
        &mut self,
        name: impl Into<String>,
        op: Op,
        ins: &[Source],
        w: u64,
    ) -> Result<Source> {
        let name = name.into();
        let shapes: Vec<&TensorShape> = ins.iter().map(|&s| self.b.shape(s)).collect();
        let kind = op.kind().name();
        let shape = op
            .infer_shape(&shapes)
            .map_err(|reason| bad(&name, kind, reason))?
            .ok_or_else(|| bad(&name, kind, "the op records its shape".into()))?;
        Ok(self.b.node_with(name, op, ins, shape, w)?)
    }
    /// `x · W` with a constant `W` of `out` columns.
    pub(crate) fn linear(&mut self, name: String, x: Source, out: u64) -> Result<Source> {
        let mut shape = self.b.shape(x).clone();
        let Some(last) = shape.0.last_mut() else {
            return Err(bad(&name, "MatMul", "a scalar input".into()));
        };
        let k = std::mem::replace(last, out);
        let weights = k
            .checked_mul(out)
            .ok_or_else(|| bad(&name, "MatMul", format!("{k}×{out} weights overflow")))?;
        Ok(self.b.node_with(name, Op::MatMul, &[x], shape, weights)?)
    }

    /// A reshape to `dims`.
    pub(crate) fn reshape(&mut self, name: String, x: Source, dims: &[u64]) -> Result<Source> {
        Ok(self.b.node_with(name, Op::Reshape, &[x], t(dims), 0)?)
    }

    /// A transpose by `perm`.
    pub(crate) fn transpose(&mut self, name: String, x: Source, perm: &[u64]) -> Result<Source> {
        self.op(
            name,
            Op::Transpose {
                perm: perm.to_vec(),
            },
            &[x],
        )
    }

    /// LayerNormalization over the last axis, named `{scope}/LayerNormalization`.
    pub(crate) fn layer_norm(&mut self, scope: &str, x: Source) -> Result<Source> {
        let axis = self.b.shape(x).rank() as u64 - 1;
        let op = Op::normalize(OpKind::LayerNormalization, axis);
        self.op(format!("{scope}/LayerNormalization"), op, &[x])
    }

    /// `a · b` of two activations.
    pub(crate) fn matmul(&mut self, name: String, a: Source, b: Source) -> Result<Source> {
        self.with(name, Op::MatMul, &[a, b], 0)
    }

    /// Softmax over the last axis.
    pub(crate) fn softmax(&mut self, name: String, x: Source) -> Result<Source> {
        let axis = self.b.shape(x).rank() as u64 - 1;
        self.op(name, Op::Softmax { axis }, &[x])
    }

    /// The erf GELU: `x/√2`, Erf, `+1`, `x·`, `·0.5`.
    pub(crate) fn gelu_erf(&mut self, s: &str, x: Source) -> Result<Source> {
        let d = self.with(format!("{s}/Div"), Op::Div, &[x], 1)?;
        let e = self.op(format!("{s}/Erf"), unary(OpKind::Erf), &[d])?;
        let a = self.with(format!("{s}/Add"), Op::Add, &[e], 1)?;
        let m = self.op(format!("{s}/Mul"), Op::Mul, &[x, a])?;
        self.with(format!("{s}/Mul_1"), Op::Mul, &[m], 1)
    }
}

/// A builder error naming the node.
pub(crate) fn bad(node: &str, op: &str, reason: String) -> ZooError {
    ZooError::Ir(fuselage_ir::IrError::BadNode {
        node: node.to_string(),
        op: op.to_string(),
        reason,
    })
}

/// The unary op of `kind`.
pub(crate) fn unary(kind: OpKind) -> Op {
    Op::Unary { kind }
}
