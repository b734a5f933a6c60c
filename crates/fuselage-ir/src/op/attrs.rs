//! The attributes of the ops that have several: a convolution's ([`ConvAttrs`]), a windowed
//! pool's ([`PoolAttrs`]), and which operand of a `Gather` is data ([`GatherIndex`]), with the
//! constructors the zoo builds its networks with.

use serde::{Deserialize, Serialize};

/// Attributes of a 2-D convolution (`Conv`), in ONNX's conventions.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ConvAttrs {
    /// Output channels (the first dimension of the weight tensor).
    pub out_channels: u64,
    /// Kernel `[kh, kw]`.
    pub kernel: [u64; 2],
    /// Strides `[sh, sw]`.
    pub stride: [u64; 2],
    /// Padding `[top, left, bottom, right]` (ONNX `pads` order).
    pub pads: [u64; 4],
    /// Dilations `[dh, dw]`.
    pub dilation: [u64; 2],
    /// Channel groups (`in_channels` for a depthwise convolution).
    pub group: u64,
}

impl ConvAttrs {
    /// A `k`×`k` convolution with stride `s`, "same"-style padding `(k-1)/2·d`, dilation `d`
    /// and `group` channel groups: the shape of nearly every convolution in the zoo.
    pub fn square(out_channels: u64, k: u64, s: u64, d: u64, group: u64) -> Self {
        let p = (k - 1) / 2 * d;
        ConvAttrs {
            out_channels,
            kernel: [k, k],
            stride: [s, s],
            pads: [p, p, p, p],
            dilation: [d, d],
            group,
        }
    }

    /// Weight elements, bias included, for `in_channels` input channels.
    pub fn weight_elements(&self, in_channels: u64, bias: bool) -> u64 {
        let per_out = in_channels / self.group.max(1) * self.kernel[0] * self.kernel[1];
        self.out_channels * per_out + if bias { self.out_channels } else { 0 }
    }
}

/// Attributes of a windowed pool (`MaxPool`, `AveragePool`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PoolAttrs {
    /// Kernel `[kh, kw]`.
    pub kernel: [u64; 2],
    /// Strides `[sh, sw]`.
    pub stride: [u64; 2],
    /// Padding `[top, left, bottom, right]`.
    pub pads: [u64; 4],
    /// Whether the output size rounds up (`ceil_mode = 1`).
    pub ceil_mode: bool,
}

impl PoolAttrs {
    /// A `k`×`k` pool with stride `s`, padding `p` on every side.
    pub fn square(k: u64, s: u64, p: u64, ceil_mode: bool) -> Self {
        PoolAttrs {
            kernel: [k, k],
            stride: [s, s],
            pads: [p, p, p, p],
            ceil_mode,
        }
    }
}

/// Which operand of a [`Op::Gather`](crate::Op::Gather) is data.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "data")]
pub enum GatherIndex {
    /// The data input is gathered by constant indices of this shape (`[]` for a scalar).
    Constant {
        /// The shape of the index tensor.
        dims: Vec<u64>,
    },
    /// The data input is the index tensor (int64 token ids); the gathered table is a constant
    /// of this shape.
    Table {
        /// The table's shape (`[vocabulary, width]` for an embedding).
        dims: Vec<u64>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conv_weights_count_bias() {
        // VGG16 conv1_1: 64·3·9 + 64.
        let a = ConvAttrs::square(64, 3, 1, 1, 1);
        assert_eq!(a.weight_elements(3, true), 1792);
        // Depthwise 3x3 on 32 channels.
        assert_eq!(
            ConvAttrs::square(32, 3, 1, 1, 32).weight_elements(32, true),
            320
        );
    }
}
