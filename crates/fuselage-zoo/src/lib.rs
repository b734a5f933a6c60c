//! # fuselage-zoo
//!
//! Reference networks built in code: the twelve CNNs of [`NAMES`], the multi-branch
//! Inception CNNs of [`WIDE_NAMES`] (Inception v3, GoogLeNet; module `inception`), and the
//! transformers and post-2020 CNNs of [`MODERN_NAMES`] (BERT, GPT-2, Llama, ViT, ConvNeXt,
//! GhostNet; module `transformer`, `convnext`, `ghostnet`), parameterised by depth, width,
//! heads, sequence length or image size ([`TextConfig`], [`LlamaConfig`], [`VitConfig`],
//! [`ConvNextConfig`]) with named presets. Each transcribes its exporter's graph node for
//! node: the CNNs are structurally identical to what torchvision 0.29's ONNX export gives
//! (TorchScript exporter, opset 17, eval mode, `do_constant_folding=True`). In that export
//! BatchNorm is folded into the preceding convolution (so every `Conv` has a bias), Dropout and stochastic depth disappear, SiLU becomes `Sigmoid` + `Mul(x, sigmoid(x))`
//! and `AdaptiveAvgPool2d(1)` becomes `GlobalAveragePool`.
//!
//! ## Design
//!
//! - One module per family (`vgg`, `squeezenet`, `resnet`, `mobilenet` for V2 and V3,
//!   `efficientnet`, `deeplab`, `inception` for v3 and GoogLeNet), each a transcription of
//!   the torchvision module tree.
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
//! Five CNNs are held node for node (names, ops, shapes, weights, input ports, order) to
//! real exports in the tests, the others to their published multiply-accumulate counts; the
//! presets `vit_tiny_patch16_224`, `convnext_atto`, `ghostnet_100`, `bert_l4_h256` and
//! `gpt2_l4_h256` have the fingerprints of the timm and transformers exports in
//! `shared/models`, and `gpt2` is the 124M model.
//!
//! ```
//! let g = fuselage_zoo::build("resnet18")?;
//! assert_eq!(g.name(), "resnet18");
//! assert_eq!(g.len(), 49);
//! # Ok::<(), fuselage_zoo::ZooError>(())
//! ```
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod convnext;
mod deeplab;
mod efficientnet;
mod ghostnet;
mod inception;
mod mobilenet;
mod nodes;
mod resnet;
mod scope;
mod squeezenet;
mod transformer;
mod vgg;

pub use convnext::ConvNextConfig;
pub use transformer::{LlamaConfig, TextConfig, VitConfig};

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
        /// Every name the zoo knows ([`NAMES`], [`WIDE_NAMES`], [`MODERN_NAMES`]).
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
    /// A transformer shape the builder cannot take (a width that does not split into its
    /// heads, an image that does not cut into patches, a sequence of 0 tokens).
    #[error("{name}: {reason}")]
    BadConfig {
        /// The network.
        name: String,
        /// Why not.
        reason: String,
    },
    /// The IR refused a node (a bug in the zoo, or a resolution too small for a layer).
    #[error(transparent)]
    Ir(#[from] fuselage_ir::IrError),
}

/// `Result` with [`ZooError`].
pub type Result<T> = std::result::Result<T, ZooError>;

/// The zoo's CNNs (the networks of the paper's tables and of the classifier's data set).
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

/// The zoo's multi-branch Inception CNNs, torchvision's `inception_v3` (at 299×299) and
/// `googlenet` (224×224), built with [`build`] or [`build_at`] like [`NAMES`]. They are kept
/// out of [`NAMES`], the networks of the paper's tables and of the classifier's data set, so
/// that those stay as they were.
pub const WIDE_NAMES: [&str; 2] = ["inception_v3", "googlenet"];

/// The zoo's transformers and post-2020 CNNs: text models take a sequence length
/// ([`build_seq`]), vision transformers, ConvNeXts and GhostNet an image side ([`build_at`]).
pub const MODERN_NAMES: [&str; 12] = [
    "bert_l4_h256",
    "bert_base_uncased",
    "gpt2_l4_h256",
    "gpt2",
    "llama_3_2_1b",
    "tinyllama_1_1b",
    "vit_tiny_patch16_224",
    "vit_small_patch16_224",
    "vit_base_patch16_224",
    "convnext_atto",
    "convnext_nano",
    "ghostnet_100",
];

/// The presets with the fingerprints of the five modern exports of `shared/models` (ViT-Tiny,
/// ConvNeXt-Atto, GhostNet, BERT and GPT-2 at 4 layers, 128 tokens): the modern rows of
/// `docs/searches.md` and of the reproduction's screen.
pub const EXPORT_PRESETS: [&str; 5] = [
    "vit_tiny_patch16_224",
    "convnext_atto",
    "ghostnet_100",
    "bert_l4_h256",
    "gpt2_l4_h256",
];

/// The shape of a text preset at its default sequence length (128, GPT-2's 124M model 1024).
pub fn text_config(name: &str) -> Option<TextConfig> {
    let c = |layers, hidden, heads, vocab, seq| TextConfig {
        layers,
        hidden,
        heads,
        ffn: 4 * hidden,
        vocab,
        seq,
    };
    Some(match name {
        "bert_l4_h256" => c(4, 256, 4, 30_522, 128),
        "bert_base_uncased" => c(12, 768, 12, 30_522, 128),
        "gpt2_l4_h256" => c(4, 256, 4, 50_257, 128),
        "gpt2" => c(12, 768, 12, 50_257, 1024),
        _ => return None,
    })
}

/// The shape of a vision-transformer preset (224×224, 16×16 patches, 1,000 classes).
pub fn vit_config(name: &str) -> Option<VitConfig> {
    let c = |width, heads| VitConfig {
        depth: 12,
        width,
        heads,
        mlp: 4 * width,
        image: 224,
        patch: 16,
        classes: 1000,
    };
    Some(match name {
        "vit_tiny_patch16_224" => c(192, 3),
        "vit_small_patch16_224" => c(384, 6),
        "vit_base_patch16_224" => c(768, 12),
        _ => return None,
    })
}

/// The shape of a ConvNeXt preset at 224×224 (timm's `conv_mlp` variants).
pub fn convnext_config(name: &str) -> Option<ConvNextConfig> {
    let c = |depths: &[u64], dims: &[u64]| ConvNextConfig {
        depths: depths.to_vec(),
        dims: dims.to_vec(),
        image: 224,
        classes: 1000,
    };
    Some(match name {
        "convnext_atto" => c(&[2, 2, 6, 2], &[40, 80, 160, 320]),
        "convnext_nano" => c(&[2, 2, 8, 2], &[80, 160, 320, 640]),
        _ => return None,
    })
}

/// Builds a ConvNeXt of shape `c`.
///
/// # Errors
/// [`ZooError::BadConfig`] for stages that do not match or an image side that is not a
/// multiple of the total stride.
pub fn build_convnext(name: &str, c: &ConvNextConfig) -> Result<Graph> {
    convnext::convnext(name, c)
}

/// The shape of a Llama preset at 1,024 tokens: Llama 3.2 1B (16 layers, 2,048 wide, 32
/// heads sharing 8 key-value heads, MLP 8,192, vocabulary 128,256) and TinyLlama 1.1B.
pub fn llama_config(name: &str) -> Option<LlamaConfig> {
    let c = |layers, hidden, heads, kv_heads, ffn, vocab| LlamaConfig {
        layers,
        hidden,
        heads,
        kv_heads,
        ffn,
        vocab,
        seq: 1024,
    };
    Some(match name {
        "llama_3_2_1b" => c(16, 2048, 32, 8, 8192, 128_256),
        "tinyllama_1_1b" => c(22, 2048, 32, 4, 5632, 32_000),
        _ => return None,
    })
}

/// Whether `name` is a text preset, which takes a sequence length ([`build_seq`]).
pub fn is_text(name: &str) -> bool {
    text_config(name).is_some() || llama_config(name).is_some()
}

/// Builds a text transformer preset (BERT, GPT-2 or Llama) at `seq` tokens.
///
/// # Errors
/// [`ZooError::UnknownModel`] for a name that is not a text preset; [`ZooError::BadConfig`]
/// for 0 tokens.
pub fn build_seq(name: &str, seq: u64) -> Result<Graph> {
    if (seq == 0 || seq > MAX_SEQ) && is_text(name) {
        return Err(ZooError::BadConfig {
            name: name.to_string(),
            reason: format!("a sequence takes 1 to {MAX_SEQ} tokens, not {seq}"),
        });
    }
    if let Some(mut c) = llama_config(name) {
        c.seq = seq;
        return build_llama(name, &c);
    }
    let mut c = text_config(name).ok_or_else(|| unknown(name))?;
    c.seq = seq;
    build_text(name, &c)
}

/// Builds a Llama-style decoder of shape `c`.
///
/// # Errors
/// [`ZooError::BadConfig`] for heads that do not split the width or share the key-value heads.
pub fn build_llama(name: &str, c: &LlamaConfig) -> Result<Graph> {
    transformer::llama(name, c)
}

/// The zoo's decoders, which [`build_decode`] builds a decode step of.
pub const DECODE_NAMES: [&str; 4] = ["llama_3_2_1b", "tinyllama_1_1b", "gpt2", "gpt2_l4_h256"];

/// One decode step of a decoder preset ([`DECODE_NAMES`]: the Llama presets and GPT-2): one
/// new token against a key-value cache of `past` tokens per layer, given as the graph inputs
/// `past_key_values.{i}.key` and `.value` (`[1, kv_heads, past, head_dim]`); the outputs are
/// the last hidden state and the keys and values the step appends to the cache.
/// Grouped-query attention as the preset has it (Llama 3.2 1B: 32 query heads over 8
/// key-value heads; GPT-2 has a key and value head per query head).
///
/// # Errors
/// [`ZooError::UnknownModel`] for a name that is not a decoder preset;
/// [`ZooError::BadConfig`] for `past` of 0 or above [`MAX_SEQ`].
///
/// # Example
/// ```
/// let g = fuselage_zoo::build_decode("llama_3_2_1b", 4096)?;
/// assert_eq!(g.inputs().len(), 1 + 2 * 16);
/// assert_eq!(g.outputs().len(), 1 + 2 * 16);
/// let g = fuselage_zoo::build_decode("gpt2", 1024)?;
/// assert_eq!(g.inputs()[1].shape.0, vec![1, 12, 1024, 64]);
/// # Ok::<(), fuselage_zoo::ZooError>(())
/// ```
pub fn build_decode(name: &str, past: u64) -> Result<Graph> {
    if !DECODE_NAMES.contains(&name) {
        return Err(ZooError::UnknownModel {
            name: name.to_string(),
            valid: DECODE_NAMES.to_vec(),
        });
    }
    if past == 0 || past > MAX_SEQ {
        return Err(ZooError::BadConfig {
            name: name.to_string(),
            reason: format!("a key-value cache holds 1 to {MAX_SEQ} tokens, not {past}"),
        });
    }
    if let Some(c) = llama_config(name) {
        return transformer::llama_decode(name, &c, past);
    }
    let c = text_config(name).ok_or_else(|| unknown(name))?;
    transformer::gpt2_decode(name, &c, past)
}

/// Builds a BERT encoder (`bert*` names) or a GPT-2 decoder (any other name) of shape `c`.
///
/// # Errors
/// [`ZooError::BadConfig`] for a width that does not split into the heads.
pub fn build_text(name: &str, c: &TextConfig) -> Result<Graph> {
    if name.starts_with("bert") {
        transformer::bert(name, c)
    } else {
        transformer::gpt2(name, c)
    }
}

/// Builds a vision transformer of shape `c`.
///
/// # Errors
/// [`ZooError::BadConfig`] for a width that does not split into the heads or an image that
/// does not cut into patches.
pub fn build_vit(name: &str, c: &VitConfig) -> Result<Graph> {
    transformer::vit(name, c)
}

/// The smallest input side the zoo accepts (every network downsamples by 32 at most;
/// `inception_v3`, whose stem and reductions do not pad, needs 75).
pub const MIN_RESOLUTION: u64 = 32;

/// The largest input side the zoo accepts (a 16,384-pixel side is past any accelerator's
/// workload; beyond it tensor sizes head for overflow).
pub const MAX_RESOLUTION: u64 = 16_384;

/// The longest sequence the zoo's text models accept (2^20 tokens).
pub const MAX_SEQ: u64 = 1 << 20;

/// The input side (height = width) a network is built at by [`build`]: 300 for
/// `efficientnet_b3`, 299 for `inception_v3`, 512 for `deeplabv3_mobilenet_v3_large`, 224 for
/// the rest; `None` for a name the zoo does not know or a text model.
pub fn default_resolution(name: &str) -> Option<u64> {
    match name {
        "efficientnet_b3" => Some(300),
        "inception_v3" => Some(299),
        "googlenet" => Some(224),
        "deeplabv3_mobilenet_v3_large" => Some(512),
        n if NAMES.contains(&n) => Some(224),
        "ghostnet_100" => Some(224),
        n => vit_config(n)
            .map(|c| c.image)
            .or_else(|| convnext_config(n).map(|c| c.image)),
    }
}

/// Builds a network at its [`default_resolution`].
///
/// # Errors
/// [`ZooError::UnknownModel`] for a name the zoo does not know.
pub fn build(name: &str) -> Result<Graph> {
    if let Some(c) = text_config(name) {
        return build_text(name, &c);
    }
    if let Some(c) = llama_config(name) {
        return build_llama(name, &c);
    }
    let res = default_resolution(name).ok_or_else(|| unknown(name))?;
    build_at(name, res)
}

/// Builds a network for a `1x3xRxR` input (`R = resolution`). The graph is called `name` and
/// its input `input`.
///
/// # Errors
/// [`ZooError::UnknownModel`] for a name the zoo does not know; [`ZooError::BadResolution`]
/// for a side under 32 (under 75 for `inception_v3`), or one the export cannot take (VGG's
/// `AdaptiveAvgPool2d((7, 7))` exports only when the feature map is a multiple of 7).
pub fn build_at(name: &str, resolution: u64) -> Result<Graph> {
    if resolution > MAX_RESOLUTION && !is_text(name) {
        return Err(ZooError::BadResolution {
            name: name.to_string(),
            resolution,
            reason: format!("the side must be at most {MAX_RESOLUTION}"),
        });
    }
    if let Some(mut c) = vit_config(name) {
        c.image = resolution;
        return build_vit(name, &c);
    }
    if let Some(mut c) = convnext_config(name) {
        c.image = resolution;
        return build_convnext(name, &c);
    }
    if name == "ghostnet_100" {
        return ghostnet::ghostnet_100(name, resolution);
    }
    if is_text(name) {
        return Err(ZooError::BadResolution {
            name: name.to_string(),
            resolution,
            reason: "a text model takes a sequence length (--seq), not a resolution".into(),
        });
    }
    if !NAMES.contains(&name) && !WIDE_NAMES.contains(&name) {
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
        "inception_v3" => inception::inception_v3(r),
        "googlenet" => inception::googlenet(r),
        _ => Err(unknown(name)),
    }
}

fn unknown(name: &str) -> ZooError {
    ZooError::UnknownModel {
        name: name.to_string(),
        valid: NAMES
            .iter()
            .chain(&WIDE_NAMES)
            .chain(&MODERN_NAMES)
            .copied()
            .collect(),
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

    #[test]
    fn transformer_shapes_follow_their_configs() {
        let g = build_seq("bert_l4_h256", 64).unwrap();
        assert_eq!(g.inputs()[0].shape.0, vec![1, 64]);
        // 4 layers of 35 nodes, 4 embedding nodes.
        assert_eq!(g.len(), 4 + 4 * 35);
        let mut c = text_config("gpt2").unwrap();
        c.heads = 7;
        let err = build_text("gpt2", &c).unwrap_err();
        assert_eq!(
            err.to_string(),
            "gpt2: width 768 does not split into 7 heads"
        );
        assert!(matches!(
            build_seq("gpt2", 0),
            Err(ZooError::BadConfig { .. })
        ));
        assert!(matches!(
            build_seq("gpt2", MAX_SEQ + 1),
            Err(ZooError::BadConfig { .. })
        ));
        assert!(matches!(
            build_at("resnet18", MAX_RESOLUTION + 32),
            Err(ZooError::BadResolution { .. })
        ));
        assert!(matches!(
            build_seq("resnet18", 8),
            Err(ZooError::UnknownModel { .. })
        ));
        let vit = build_at("vit_tiny_patch16_224", 240).unwrap();
        assert_eq!(
            vit.inputs()[0].shape,
            fuselage_ir::TensorShape::nchw(3, 240, 240)
        );
        assert!(matches!(
            build_at("vit_tiny_patch16_224", 250),
            Err(ZooError::BadConfig { .. })
        ));
        assert_eq!(default_resolution("vit_base_patch16_224"), Some(224));
    }
}
