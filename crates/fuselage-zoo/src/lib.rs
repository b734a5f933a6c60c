//! # fuselage-zoo
//!
//! Reference CNNs, built in code, that are structurally identical to what torchvision 0.29's
//! ONNX export gives (TorchScript exporter, opset 17, eval mode, `do_constant_folding=True`).
//! In that export BatchNorm is folded into the preceding convolution (so every `Conv` has a
//! bias), Dropout and stochastic depth disappear, SiLU becomes `Sigmoid` + `Mul(x, sigmoid(x))`
//! and `AdaptiveAvgPool2d(1)` becomes `GlobalAveragePool`.
//!
//! ## Design
//!
//! - One module per family (`vgg`, `squeezenet`, `resnet`, `mobilenet` for V2 and V3,
//!   `efficientnet`, `deeplab`), each a transcription of the torchvision module tree.
//! - A shared helper (`scope`) reproduces the exporter's node names: a `Scope` is a module
//!   path such as `/features/features.1/block`; `Scope::idx` descends into a
//!   `Sequential` child (`block.0`), `Scope::attr` into a named attribute (`fc1`),
//!   `Scope::call` gives a module called again in one forward its `_N` suffix (`relu_1`),
//!   and a functional op is named in the scope it is called from (`/layer1/layer1.0/Add`).
//!   The same helper (`Net`) wraps [`GraphBuilder`](fuselage_ir::GraphBuilder) with the
//!   torchvision building blocks (`Conv2dNormActivation`, `SqueezeExcitation`, activations),
//!   so blocks are not spelled out node by node.
//! - Shapes come from the IR's one shape rule ([`Op::infer_shape`](fuselage_ir::Op)), weights
//!   from [`Op::default_weights`](fuselage_ir::Op) (convolutions and Gemm with a bias, as after
//!   BN folding). Only `Resize` records its shape explicitly.
//! - The MobileNetV3 backbone is built once and shared by `mobilenet_v3_*` and
//!   `deeplabv3_mobilenet_v3_large` (dilated, under the `backbone` scope).
//!
//! Five networks are held node for node (names, ops, shapes, weights, input ports, order) to
//! real exports in the tests; the others to their published multiply-accumulate counts.
//!
//! ```
//! let g = fuselage_zoo::build("resnet18")?;
//! assert_eq!(g.name(), "resnet18");
//! assert_eq!(g.len(), 49);
//! # Ok::<(), fuselage_zoo::ZooError>(())
//! ```
#![warn(missing_docs)]

mod deeplab;
mod efficientnet;
mod mobilenet;
mod resnet;
mod scope;
mod squeezenet;
mod vgg;

use fuselage_ir::Graph;
use thiserror::Error;

/// Everything that can go wrong while building a zoo network.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ZooError {
    /// A name that is not in the zoo.
    #[error("unknown model `{name}`; valid names: {}", .valid.join(", "))]
    UnknownModel {
        /// The name asked for.
        name: String,
        /// Every name the zoo knows ([`NAMES`]).
        valid: Vec<&'static str>,
    },
    /// An input resolution the network (or its export) cannot take.
    #[error("{name} cannot be built at {resolution}x{resolution}: {reason}")]
    BadResolution {
        /// The network.
        name: String,
        /// The requested height and width.
        resolution: u64,
        /// Why not.
        reason: String,
    },
    /// The IR refused a node (a bug in the zoo, or a resolution too small for a layer).
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
}

/// `Result` with [`ZooError`].
pub type Result<T> = std::result::Result<T, ZooError>;

/// Every network of the zoo.
pub const NAMES: [&str; 12] = [
    "vgg16",
    "squeezenet1_1",
    "resnet18",
    "resnet50",
    "resnet101",
    "resnet152",
    "mobilenet_v2",
    "mobilenet_v3_small",
    "mobilenet_v3_large",
    "efficientnet_b0",
    "efficientnet_b3",
    "deeplabv3_mobilenet_v3_large",
];

/// The smallest input side the zoo accepts (every network downsamples by 32 at most).
const MIN_RESOLUTION: u64 = 32;

/// The input side (height = width) a network is built at by [`build`]: 300 for
/// `efficientnet_b3`, 512 for `deeplabv3_mobilenet_v3_large`, 224 for the rest; `None` for a
/// name not in [`NAMES`].
pub fn default_resolution(name: &str) -> Option<u64> {
    match name {
        "efficientnet_b3" => Some(300),
        "deeplabv3_mobilenet_v3_large" => Some(512),
        n if NAMES.contains(&n) => Some(224),
        _ => None,
    }
}

/// Builds a network at its [`default_resolution`].
///
/// # Errors
/// [`ZooError::UnknownModel`] for a name not in [`NAMES`].
pub fn build(name: &str) -> Result<Graph> {
    let res = default_resolution(name).ok_or_else(|| unknown(name))?;
    build_at(name, res)
}

/// Builds a network for a `1x3xRxR` input (`R = resolution`). The graph is called `name` and
/// its input `input`.
///
/// # Errors
/// [`ZooError::UnknownModel`] for a name not in [`NAMES`]; [`ZooError::BadResolution`] for a
/// side under 32, or one the export cannot take (VGG's `AdaptiveAvgPool2d((7, 7))` exports
/// only when the feature map is a multiple of 7).
pub fn build_at(name: &str, resolution: u64) -> Result<Graph> {
    if !NAMES.contains(&name) {
        return Err(unknown(name));
    }
    if resolution < MIN_RESOLUTION {
        return Err(ZooError::BadResolution {
            name: name.to_string(),
            resolution,
            reason: format!("the side must be at least {MIN_RESOLUTION}"),
        });
    }
    let r = resolution;
    match name {
        "vgg16" => vgg::vgg16(r),
        "squeezenet1_1" => squeezenet::squeezenet1_1(r),
        "resnet18" => resnet::resnet(name, resnet::Depth::R18, r),
        "resnet50" => resnet::resnet(name, resnet::Depth::R50, r),
        "resnet101" => resnet::resnet(name, resnet::Depth::R101, r),
        "resnet152" => resnet::resnet(name, resnet::Depth::R152, r),
        "mobilenet_v2" => mobilenet::mobilenet_v2(r),
        "mobilenet_v3_small" => mobilenet::mobilenet_v3(name, mobilenet::V3::Small, r),
        "mobilenet_v3_large" => mobilenet::mobilenet_v3(name, mobilenet::V3::Large, r),
        "efficientnet_b0" => efficientnet::efficientnet(name, efficientnet::Variant::B0, r),
        "efficientnet_b3" => efficientnet::efficientnet(name, efficientnet::Variant::B3, r),
        "deeplabv3_mobilenet_v3_large" => deeplab::deeplabv3_mobilenet_v3_large(r),
        _ => Err(unknown(name)),
    }
}

fn unknown(name: &str) -> ZooError {
    ZooError::UnknownModel {
        name: name.to_string(),
        valid: NAMES.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_unknown_names() {
        assert_eq!(default_resolution("efficientnet_b3"), Some(300));
        assert_eq!(
            default_resolution("deeplabv3_mobilenet_v3_large"),
            Some(512)
        );
        assert_eq!(default_resolution("vgg16"), Some(224));
        assert_eq!(default_resolution("alexnet"), None);
        let err = build("alexnet").unwrap_err();
        assert!(matches!(err, ZooError::UnknownModel { .. }));
        assert!(matches!(
            build_at("resnet18", 16),
            Err(ZooError::BadResolution { .. })
        ));
    }
}
