//! Op kinds and classes: [`OpKind`], the attribute-free kind of an op, whose name is the ONNX
//! `op_type`, and [`OpClass`], the family it belongs to. Both come from one table, so a new op
//! of a known family is one line here; the importer and the row rule dispatch on the class. A
//! leaf of the IR: the op, the graph and the features read it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// How an op family treats rows and shapes: what the importer and the row rule dispatch on,
/// so that a new op of a known family needs one line, not a new code path.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum OpClass {
    /// Conv and windowed pools: a row window along H.
    Window,
    /// Global pools: a barrier over H and W.
    GlobalPool,
    /// Element-wise unary math (one input, same shape).
    Unary,
    /// Element-wise ops over broadcast inputs.
    Elementwise,
    /// Normalisations and softmaxes along an axis.
    Normalize,
    /// Reductions over axes.
    Reduce,
    /// Data movement: reshape, transpose, squeeze, split, slice, concat, gather, expand, ...
    Layout,
    /// Gemm and MatMul.
    Linear,
    /// Resize, Pad.
    Resample,
}

impl OpClass {
    /// Every class, in declaration order (the order of the classifier's class one-hot).
    pub const ALL: [OpClass; 9] = [
        OpClass::Window,
        OpClass::GlobalPool,
        OpClass::Unary,
        OpClass::Elementwise,
        OpClass::Normalize,
        OpClass::Reduce,
        OpClass::Layout,
        OpClass::Linear,
        OpClass::Resample,
    ];

    /// Position in [`OpClass::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Declares [`OpKind`] from one table of `(variant, class)`: the ONNX `op_type` is the
/// variant's name, and the order is the order of [`OpKind::ALL`].
macro_rules! op_kinds {
    ($($kind:ident => $class:ident),* $(,)?) => {
        /// The kind of an op, without attributes: what op counts and one-hot features are made
        /// of. Its name is the ONNX `op_type`.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[allow(missing_docs)]
        pub enum OpKind {
            $($kind),*
        }

        impl OpKind {
            /// Every kind, in a fixed order. The first [`OpKind::CNN_KINDS`] are the kinds of the
            /// CNN zoo, in the order of the classifier's one-hot features.
            pub const ALL: &'static [OpKind] = &[$(OpKind::$kind),*];

            /// The ONNX `op_type`.
            pub fn name(self) -> &'static str {
                match self {
                    $(OpKind::$kind => stringify!($kind)),*
                }
            }

            /// The family the kind belongs to.
            pub fn class(self) -> OpClass {
                match self {
                    $(OpKind::$kind => OpClass::$class),*
                }
            }
        }
    };
}

op_kinds! {
    Conv => Window,
    MaxPool => Window,
    AveragePool => Window,
    GlobalAveragePool => GlobalPool,
    GlobalMaxPool => GlobalPool,
    Relu => Unary,
    Clip => Unary,
    Sigmoid => Unary,
    HardSigmoid => Unary,
    HardSwish => Unary,
    Tanh => Unary,
    Add => Elementwise,
    Sub => Elementwise,
    Mul => Elementwise,
    Div => Elementwise,
    Concat => Layout,
    Flatten => Layout,
    Gemm => Linear,
    MatMul => Linear,
    BatchNormalization => Unary,
    Pad => Resample,
    ReduceMean => Reduce,
    Resize => Resample,
    Reshape => Layout,
    Transpose => Layout,
    Softmax => Normalize,
    // Element-wise unary math.
    Erf => Unary,
    Gelu => Unary,
    Sqrt => Unary,
    Exp => Unary,
    Log => Unary,
    Neg => Unary,
    Abs => Unary,
    Reciprocal => Unary,
    Sin => Unary,
    Cos => Unary,
    Tan => Unary,
    Atan => Unary,
    Cast => Unary,
    Floor => Unary,
    Ceil => Unary,
    Round => Unary,
    Sign => Unary,
    Softplus => Unary,
    Softsign => Unary,
    Elu => Unary,
    Selu => Unary,
    Celu => Unary,
    LeakyRelu => Unary,
    ThresholdedRelu => Unary,
    HardTanh => Unary,
    Mish => Unary,
    Not => Unary,
    IsNaN => Unary,
    // Element-wise over broadcast inputs.
    Pow => Elementwise,
    Max => Elementwise,
    Min => Elementwise,
    Mean => Elementwise,
    Sum => Elementwise,
    PRelu => Elementwise,
    Mod => Elementwise,
    Equal => Elementwise,
    Less => Elementwise,
    LessOrEqual => Elementwise,
    Greater => Elementwise,
    GreaterOrEqual => Elementwise,
    And => Elementwise,
    Or => Elementwise,
    Xor => Elementwise,
    Where => Elementwise,
    // Reductions.
    ReduceSum => Reduce,
    ReduceMax => Reduce,
    ReduceMin => Reduce,
    ReduceProd => Reduce,
    ReduceL1 => Reduce,
    ReduceL2 => Reduce,
    ReduceSumSquare => Reduce,
    ReduceLogSumExp => Reduce,
    // Normalisations.
    LayerNormalization => Normalize,
    RMSNormalization => Normalize,
    LpNormalization => Normalize,
    InstanceNormalization => Normalize,
    GroupNormalization => Normalize,
    LogSoftmax => Normalize,
    // Data movement.
    Squeeze => Layout,
    Unsqueeze => Layout,
    Split => Layout,
    Slice => Layout,
    Gather => Layout,
    Expand => Layout,
    Tile => Layout,
}

impl OpKind {
    /// How many kinds the CNN zoo uses: the first entries of [`OpKind::ALL`], which the shipped
    /// classifier checkpoints one-hot encode.
    pub const CNN_KINDS: usize = 26;

    /// The kind whose ONNX `op_type` is `name`, if the IR has it.
    pub fn from_name(name: &str) -> Option<OpKind> {
        OpKind::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Position in [`OpKind::ALL`].
    pub fn index(self) -> usize {
        OpKind::ALL.iter().position(|&k| k == self).unwrap_or(0)
    }

    /// Whether a normalisation of this kind reads every axis from its `axis` on
    /// (LayerNormalization, RMSNormalization, Instance- and GroupNormalization) rather than
    /// `axis` alone (Softmax, LogSoftmax, LpNormalization).
    pub fn normalizes_trailing_axes(self) -> bool {
        matches!(
            self,
            OpKind::LayerNormalization
                | OpKind::RMSNormalization
                | OpKind::InstanceNormalization
                | OpKind::GroupNormalization
        )
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_through_names() {
        for &k in OpKind::ALL {
            assert_eq!(OpKind::from_name(k.name()), Some(k));
            assert_eq!(OpKind::ALL[k.index()], k);
        }
        assert_eq!(OpKind::from_name("Einsum"), None);
    }
}
