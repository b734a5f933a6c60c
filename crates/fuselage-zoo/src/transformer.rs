//! Transformers, built as their exports give them: BERT encoders (transformers'
//! `BertModel`), GPT-2 decoders (`GPT2Model`) and vision transformers (timm's
//! `VisionTransformer`), parameterised by depth, width, heads and sequence length.
//!
//! Each builder transcribes the TorchScript export (opset 17, constant folding) node for node,
//! with the export's names; the tests hold the presets of the shared exports to their
//! fingerprints. What the export folds shows up here as weights: BERT's position and
//! token-type embeddings and GPT-2's position embedding on an `Add`, GPT-2's causal mask bias
//! (`L×L`), the attention scale `√(1/√d)` on Q and on Kᵀ, the GELU constants, ViT's class
//! token on its `Concat`.

use crate::nodes::{Nodes, t, unary};
use crate::{Result, ZooError};
use fuselage_ir::{ConvAttrs, GatherIndex, Graph, Op, OpKind, Source, TensorShape};

/// The shape of a text transformer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TextConfig {
    /// Encoder or decoder layers.
    pub layers: u64,
    /// Hidden width `D`.
    pub hidden: u64,
    /// Attention heads (`D` must be a multiple).
    pub heads: u64,
    /// Width of the feed-forward layer.
    pub ffn: u64,
    /// Vocabulary (rows of the token embedding).
    pub vocab: u64,
    /// Tokens `L`.
    pub seq: u64,
}

/// The shape of a Llama-style decoder: RMSNorm, rotary embeddings, grouped-query attention,
/// SiLU-gated MLP.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct LlamaConfig {
    /// Decoder layers.
    pub layers: u64,
    /// Hidden width `D`.
    pub hidden: u64,
    /// Query heads (`D` must be a multiple).
    pub heads: u64,
    /// Key and value heads (`heads` must be a multiple).
    pub kv_heads: u64,
    /// Width of the gated MLP.
    pub ffn: u64,
    /// Vocabulary.
    pub vocab: u64,
    /// Tokens `L`.
    pub seq: u64,
}

/// The shape of a vision transformer.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct VitConfig {
    /// Blocks.
    pub depth: u64,
    /// Embedding width.
    pub width: u64,
    /// Attention heads.
    pub heads: u64,
    /// Width of the MLP.
    pub mlp: u64,
    /// Image side.
    pub image: u64,
    /// Patch side.
    pub patch: u64,
    /// Classes of the head.
    pub classes: u64,
}

fn check_heads(name: &str, width: u64, heads: u64) -> Result<()> {
    if heads == 0 || width == 0 || !width.is_multiple_of(heads) {
        return Err(ZooError::BadConfig {
            name: name.to_string(),
            reason: format!("width {width} does not split into {heads} heads"),
        });
    }
    Ok(())
}

/// The 22-node self-attention of one BERT layer, from the layer input `x` to the output
/// projection's bias; returns that bias node.
fn bert_attention(n: &mut Nodes, s: &str, x: Source, c: &TextConfig) -> Result<Source> {
    let (l, d, h) = (c.seq, c.hidden, c.heads);
    let hd = d / h;
    let a = format!("{s}/attention/self");
    let proj = |n: &mut Nodes, what: &str| -> Result<Source> {
        let m = n.linear(format!("{a}/{what}/MatMul"), x, d)?;
        n.with(format!("{a}/{what}/Add"), Op::Add, &[m], d)
    };
    let q = proj(n, "query")?;
    let q = n.reshape(format!("{a}/Reshape"), q, &[1, l, h, hd])?;
    let q = n.transpose(format!("{a}/Transpose"), q, &[0, 2, 1, 3])?;
    let k = proj(n, "key")?;
    let k = n.reshape(format!("{a}/Reshape_1"), k, &[1, l, h, hd])?;
    let v = proj(n, "value")?;
    let v = n.reshape(format!("{a}/Reshape_2"), v, &[1, l, h, hd])?;
    let v = n.transpose(format!("{a}/Transpose_1"), v, &[0, 2, 1, 3])?;
    let kt = n.transpose(format!("{a}/Transpose_2"), k, &[0, 2, 3, 1])?;
    let q = n.with(format!("{a}/Mul"), Op::Mul, &[q], 1)?;
    let kt = n.with(format!("{a}/Mul_1"), Op::Mul, &[kt], 1)?;
    let scores = n.matmul(format!("{a}/MatMul"), q, kt)?;
    let p = n.softmax(format!("{a}/Softmax"), scores)?;
    let ctx = n.matmul(format!("{a}/MatMul_1"), p, v)?;
    let ctx = n.reshape(format!("{a}/Reshape_3"), ctx, &[1, h, l, hd])?;
    let ctx = n.transpose(format!("{a}/Transpose_3"), ctx, &[0, 2, 1, 3])?;
    let ctx = n.reshape(format!("{a}/Reshape_4"), ctx, &[1, l, d])?;
    let o = format!("{s}/attention/output/dense");
    let m = n.linear(format!("{o}/MatMul"), ctx, d)?;
    n.with(format!("{o}/Add"), Op::Add, &[m], d)
}

/// A BERT encoder (`BertModel` without pooler), token ids `[1, L]` in, the last hidden state
/// out.
pub(crate) fn bert(name: &str, c: &TextConfig) -> Result<Graph> {
    check_heads(name, c.hidden, c.heads)?;
    let (l, d) = (c.seq, c.hidden);
    let mut n = Nodes::new(name);
    let ids = n.b.input("input_ids", t(&[1, l]))?;
    let table = GatherIndex::Table {
        dims: vec![c.vocab, d],
    };
    let e = "/m/embeddings";
    let x = n.op(
        format!("{e}/word_embeddings/Gather"),
        Op::Gather {
            axis: 0,
            index: table,
        },
        &[ids],
    )?;
    // Token-type and position embeddings, folded to constants `[1, L, D]`.
    let x = n.with(format!("{e}/Add"), Op::Add, &[x], l * d)?;
    let x = n.with(format!("{e}/Add_1"), Op::Add, &[x], l * d)?;
    let mut x = n.layer_norm(&format!("{e}/LayerNorm"), x)?;
    for i in 0..c.layers {
        let s = format!("/m/encoder/layer.{i}");
        let att = bert_attention(&mut n, &s, x, c)?;
        let r = n.op(format!("{s}/attention/output/Add"), Op::Add, &[att, x])?;
        let x1 = n.layer_norm(&format!("{s}/attention/output/LayerNorm"), r)?;
        let f = format!("{s}/intermediate/dense");
        let m = n.linear(format!("{f}/MatMul"), x1, c.ffn)?;
        let m = n.with(format!("{f}/Add"), Op::Add, &[m], c.ffn)?;
        let act = n.gelu_erf(&format!("{s}/intermediate/intermediate_act_fn"), m)?;
        let o = format!("{s}/output/dense");
        let m = n.linear(format!("{o}/MatMul"), act, d)?;
        let m = n.with(format!("{o}/Add"), Op::Add, &[m], d)?;
        let r = n.op(format!("{s}/output/Add"), Op::Add, &[m, x1])?;
        x = n.layer_norm(&format!("{s}/output/LayerNorm"), r)?;
    }
    Ok(n.b.finish()?)
}

/// GPT-2's `Conv1D`: reshape to `[L, in]`, Gemm, reshape back to `[1, L, out]`.
fn conv1d(n: &mut Nodes, s: &str, x: Source, l: u64, out: u64) -> Result<Source> {
    let k = *n.b.shape(x).0.last().unwrap_or(&0);
    let r = n.reshape(format!("{s}/Reshape"), x, &[l, k])?;
    let g = n.op(format!("{s}/Gemm"), Op::Gemm { out_features: out }, &[r])?;
    n.reshape(format!("{s}/Reshape_1"), g, &[1, l, out])
}

/// A GPT-2 decoder (`GPT2Model`), token ids `[1, L]` in, the last hidden state out. At 12
/// layers, width 768, 12 heads and vocabulary 50,257 it is the 124M model.
pub(crate) fn gpt2(name: &str, c: &TextConfig) -> Result<Graph> {
    gpt2_with(name, c, None)
}

/// One decode step of a GPT-2 decoder: one new token (`c.seq` is ignored) against a key-value
/// cache of `past` tokens per layer, the graph inputs `past_key_values.{i}.key` and `.value`
/// (`[1, heads, past, head_dim]`). Each layer concatenates the cache and its new key and value
/// along the tokens (the `Concat` and `Concat_1` that hold the empty cache in the full
/// sequence) and attends over all `past + 1`: one query sees every key, so there is no mask.
/// The position embedding is the one row of the new token's position. The graph outputs are
/// the last hidden state and each layer's new key and value (`[1, heads, 1, head_dim]`).
pub(crate) fn gpt2_decode(name: &str, c: &TextConfig, past: u64) -> Result<Graph> {
    gpt2_with(name, &TextConfig { seq: 1, ..*c }, Some(past))
}

fn gpt2_with(name: &str, c: &TextConfig, past: Option<u64>) -> Result<Graph> {
    check_heads(name, c.hidden, c.heads)?;
    let (l, d, h) = (c.seq, c.hidden, c.heads);
    let hd = d / h;
    let mut n = Nodes::new(name);
    let mut appended = Vec::new();
    let ids = n.b.input("input_ids", t(&[1, l]))?;
    let ids = n.reshape("/m/Reshape".into(), ids, &[1, l])?;
    let table = GatherIndex::Table {
        dims: vec![c.vocab, d],
    };
    let x = n.op(
        "/m/wte/Gather",
        Op::Gather {
            axis: 0,
            index: table,
        },
        &[ids],
    )?;
    // The position embedding, folded to a constant `[1, L, D]` (one row in a decode step).
    let mut x = n.with("/m/Add", Op::Add, &[x], l * d)?;
    for i in 0..c.layers {
        let s = format!("/m/h.{i}");
        let a = format!("{s}/attn");
        let ln = n.layer_norm(&format!("{s}/ln_1"), x)?;
        let qkv = conv1d(&mut n, &format!("{a}/c_attn"), ln, l, 3 * d)?;
        let mut parts = Vec::new();
        for (p, suffix) in ["", ":1", ":2"].iter().enumerate() {
            let op = Op::Split {
                axis: 2,
                start: p as u64 * d,
                len: d,
            };
            parts.push(n.op(format!("{a}/Split{suffix}"), op, &[qkv])?);
        }
        let heads = |n: &mut Nodes, src: Source, r: &str, tr: &str| -> Result<Source> {
            let x = n.reshape(format!("{a}/{r}"), src, &[1, l, h, hd])?;
            n.transpose(format!("{a}/{tr}"), x, &[0, 2, 1, 3])
        };
        let k = heads(&mut n, parts[1], "Reshape", "Transpose")?;
        let v = heads(&mut n, parts[2], "Reshape_1", "Transpose_1")?;
        let q = heads(&mut n, parts[0], "Reshape_2", "Transpose_2")?;
        // The key and value caches (empty for the full sequence) and the new keys and values
        // are concatenated along the tokens.
        let mut grown = Vec::new();
        for (new, what, suffix) in [(k, "key", ""), (v, "value", "_1")] {
            let ins = match past {
                Some(p) => {
                    appended.push(new);
                    let cache =
                        n.b.input(format!("past_key_values.{i}.{what}"), t(&[1, h, p, hd]))?;
                    vec![cache, new]
                }
                None => vec![new],
            };
            grown.push(n.op(format!("{a}/Concat{suffix}"), Op::concat(2), &ins)?);
        }
        let (k, v) = (grown[0], grown[1]);
        let kt = n.transpose(format!("{a}/Transpose_3"), k, &[0, 1, 3, 2])?;
        let q = n.with(format!("{a}/Mul"), Op::Mul, &[q], 1)?;
        let kt = n.with(format!("{a}/Mul_1"), Op::Mul, &[kt], 1)?;
        let scores = n.matmul(format!("{a}/MatMul"), q, kt)?;
        // The causal mask, folded to an `L×L` bias (one query of a decode step sees every
        // key: no mask).
        let scores = if past.is_none() {
            n.with(format!("{a}/Add"), Op::Add, &[scores], l * l)?
        } else {
            scores
        };
        let p = n.softmax(format!("{a}/Softmax"), scores)?;
        let ctx = n.matmul(format!("{a}/MatMul_1"), p, v)?;
        let ctx = n.reshape(format!("{a}/Reshape_3"), ctx, &[1, h, l, hd])?;
        let ctx = n.transpose(format!("{a}/Transpose_4"), ctx, &[0, 2, 1, 3])?;
        let ctx = n.reshape(format!("{a}/Reshape_4"), ctx, &[1, l, d])?;
        let o = conv1d(&mut n, &format!("{a}/c_proj"), ctx, l, d)?;
        let r = n.op(format!("{s}/Add"), Op::Add, &[o, x])?;
        let ln = n.layer_norm(&format!("{s}/ln_2"), r)?;
        let f = conv1d(&mut n, &format!("{s}/mlp/c_fc"), ln, l, c.ffn)?;
        // gelu_new: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
        let g = format!("{s}/mlp/act");
        let half = n.with(format!("{g}/Mul"), Op::Mul, &[f], 1)?;
        let pow = Op::Elementwise { kind: OpKind::Pow };
        let cube = n.with(format!("{g}/Pow"), pow, &[f], 1)?;
        let cube = n.with(format!("{g}/Mul_1"), Op::Mul, &[cube], 1)?;
        let inner = n.op(format!("{g}/Add"), Op::Add, &[f, cube])?;
        let inner = n.with(format!("{g}/Mul_2"), Op::Mul, &[inner], 1)?;
        let th = n.op(format!("{g}/Tanh"), Op::Tanh, &[inner])?;
        let th = n.with(format!("{g}/Add_1"), Op::Add, &[th], 1)?;
        let act = n.op(format!("{g}/Mul_3"), Op::Mul, &[half, th])?;
        let o = conv1d(&mut n, &format!("{s}/mlp/c_proj"), act, l, d)?;
        x = n.op(format!("{s}/Add_1"), Op::Add, &[r, o])?;
    }
    let x = n.layer_norm("/m/ln_f", x)?;
    let out = n.reshape("/m/Reshape_1".into(), x, &[1, l, d])?;
    if past.is_some() {
        n.b.output(out);
        for t in appended {
            n.b.output(t);
        }
    }
    Ok(n.b.finish()?)
}

/// transformers' `LlamaRMSNorm`: `x · 1/√(mean(x²) + ε) · g`.
fn rms_norm(n: &mut Nodes, s: &str, x: Source) -> Result<Source> {
    let d = *n.b.shape(x).0.last().unwrap_or(&1);
    let rank = n.b.shape(x).rank() as u64;
    let pow = Op::Elementwise { kind: OpKind::Pow };
    let p = n.with(format!("{s}/Pow"), pow, &[x], 1)?;
    let mean = Op::ReduceMean {
        axes: vec![rank - 1],
        keepdims: true,
    };
    let m = n.op(format!("{s}/ReduceMean"), mean, &[p])?;
    let m = n.with(format!("{s}/Add"), Op::Add, &[m], 1)?;
    let r = n.op(format!("{s}/Sqrt"), unary(OpKind::Sqrt), &[m])?;
    let r = n.op(format!("{s}/Reciprocal"), unary(OpKind::Reciprocal), &[r])?;
    let y = n.op(format!("{s}/Mul"), Op::Mul, &[x, r])?;
    n.with(format!("{s}/Mul_1"), Op::Mul, &[y], d)
}

/// Rotary embedding of `x` `[1, heads, L, d]`: `x·cos + rotate_half(x)·sin`, with cos and sin
/// folded to `[1, 1, L, d]` constants.
fn rotary(n: &mut Nodes, s: &str, x: Source) -> Result<Source> {
    let shape = n.b.shape(x).clone();
    let (l, d) = (shape.0[2], shape.0[3]);
    let half = |start: u64| Op::Slice {
        axes: vec![3],
        starts: vec![start],
        ends: vec![start + d / 2],
        steps: vec![1],
    };
    let x1 = n.op(format!("{s}/Slice"), half(0), &[x])?;
    let x2 = n.op(format!("{s}/Slice_1"), half(d / 2), &[x])?;
    let neg = n.op(format!("{s}/Neg"), unary(OpKind::Neg), &[x2])?;
    let rot = n.op(format!("{s}/Concat"), Op::concat(3), &[neg, x1])?;
    let a = n.with(format!("{s}/Mul"), Op::Mul, &[x], l * d)?;
    let b = n.with(format!("{s}/Mul_1"), Op::Mul, &[rot], l * d)?;
    n.op(format!("{s}/Add"), Op::Add, &[a, b])
}

/// A Llama-style decoder (transformers' `LlamaModel`), token ids `[1, L]` in, the last hidden
/// state out; names follow the module paths. No export of one is in the tests: the preset
/// `llama_3_2_1b` is held to the published parameter count instead.
pub(crate) fn llama(name: &str, c: &LlamaConfig) -> Result<Graph> {
    llama_with(name, c, None)
}

/// One decode step of a Llama-style decoder: one new token (`c.seq` is ignored) against a
/// key-value cache of `past` tokens per layer, the graph inputs
/// `past_key_values.{i}.key` and `.value` (`[1, kv_heads, past, head_dim]`, as transformers
/// names them). Each layer appends its new key and value (after the rotary embedding) to the
/// cache along the tokens and attends over all `past + 1`; no mask is needed for one query.
/// The graph outputs are the last hidden state and each layer's new key and value
/// (`[1, kv_heads, 1, head_dim]`: what the step appends to the cache).
pub(crate) fn llama_decode(name: &str, c: &LlamaConfig, past: u64) -> Result<Graph> {
    llama_with(name, &LlamaConfig { seq: 1, ..*c }, Some(past))
}

fn llama_with(name: &str, c: &LlamaConfig, past: Option<u64>) -> Result<Graph> {
    check_heads(name, c.hidden, c.heads)?;
    if c.kv_heads == 0 || !c.heads.is_multiple_of(c.kv_heads) {
        return Err(ZooError::BadConfig {
            name: name.to_string(),
            reason: format!(
                "{} heads do not share {} key-value heads",
                c.heads, c.kv_heads
            ),
        });
    }
    let (l, d, h, kv) = (c.seq, c.hidden, c.heads, c.kv_heads);
    let hd = d / h;
    let rep = h / kv;
    // Keys a query attends over: its own tokens, and the cache's in a decode step.
    let keys = l + past.unwrap_or(0);
    let mut n = Nodes::new(name);
    let mut appended = Vec::new();
    let ids = n.b.input("input_ids", t(&[1, l]))?;
    let table = GatherIndex::Table {
        dims: vec![c.vocab, d],
    };
    let gather = Op::Gather {
        axis: 0,
        index: table,
    };
    let mut x = n.op("/model/embed_tokens/Gather", gather, &[ids])?;
    for i in 0..c.layers {
        let s = format!("/model/layers.{i}");
        let a = format!("{s}/self_attn");
        let y = rms_norm(&mut n, &format!("{s}/input_layernorm"), x)?;
        let q = n.linear(format!("{a}/q_proj/MatMul"), y, d)?;
        let k = n.linear(format!("{a}/k_proj/MatMul"), y, kv * hd)?;
        let v = n.linear(format!("{a}/v_proj/MatMul"), y, kv * hd)?;
        let q = n.reshape(format!("{a}/Reshape"), q, &[1, l, h, hd])?;
        let q = n.transpose(format!("{a}/Transpose"), q, &[0, 2, 1, 3])?;
        let k = n.reshape(format!("{a}/Reshape_1"), k, &[1, l, kv, hd])?;
        let k = n.transpose(format!("{a}/Transpose_1"), k, &[0, 2, 1, 3])?;
        let v = n.reshape(format!("{a}/Reshape_2"), v, &[1, l, kv, hd])?;
        let v = n.transpose(format!("{a}/Transpose_2"), v, &[0, 2, 1, 3])?;
        let q = rotary(&mut n, &format!("{a}/rotary_q"), q)?;
        let mut k = rotary(&mut n, &format!("{a}/rotary_k"), k)?;
        let mut v = v;
        if let Some(p) = past {
            // The cache, then the new token, along the tokens.
            appended.extend([k, v]);
            let mut grown = Vec::new();
            for (new, what, suffix) in [(k, "key", ""), (v, "value", "_1")] {
                let cache =
                    n.b.input(format!("past_key_values.{i}.{what}"), t(&[1, kv, p, hd]))?;
                let cat = Op::concat(2);
                grown.push(n.op(format!("{a}/Concat{suffix}"), cat, &[cache, new])?);
            }
            (k, v) = (grown[0], grown[1]);
        }
        // repeat_kv: [1, kv, L, d] -> [1, kv, rep, L, d] -> [1, h, L, d].
        let mut repeated = Vec::new();
        for (t, suffix) in [(k, ""), (v, "_1")] {
            let u = Op::Unsqueeze { axes: vec![2] };
            let u = n.op(format!("{a}/Unsqueeze{suffix}"), u, &[t])?;
            let e = Op::Expand {
                target: vec![1, kv, rep, keys, hd],
            };
            let e = n.op(format!("{a}/Expand{suffix}"), e, &[u])?;
            repeated.push(n.reshape(format!("{a}/Reshape_3{suffix}"), e, &[1, h, keys, hd])?);
        }
        let kt = n.transpose(format!("{a}/Transpose_3"), repeated[0], &[0, 1, 3, 2])?;
        let scores = n.matmul(format!("{a}/MatMul"), q, kt)?;
        let scores = n.with(format!("{a}/Mul_2"), Op::Mul, &[scores], 1)?;
        // The causal mask, folded to an `L×L` bias (one query of a decode step sees every
        // key: no mask).
        let scores = if past.is_none() {
            n.with(format!("{a}/Add_2"), Op::Add, &[scores], l * l)?
        } else {
            scores
        };
        let p = n.softmax(format!("{a}/Softmax"), scores)?;
        let ctx = n.matmul(format!("{a}/MatMul_1"), p, repeated[1])?;
        let ctx = n.transpose(format!("{a}/Transpose_4"), ctx, &[0, 2, 1, 3])?;
        let ctx = n.reshape(format!("{a}/Reshape_4"), ctx, &[1, l, d])?;
        let o = n.linear(format!("{a}/o_proj/MatMul"), ctx, d)?;
        let r = n.op(format!("{s}/Add"), Op::Add, &[x, o])?;
        let y = rms_norm(&mut n, &format!("{s}/post_attention_layernorm"), r)?;
        let m = format!("{s}/mlp");
        let gate = n.linear(format!("{m}/gate_proj/MatMul"), y, c.ffn)?;
        let sig = n.op(format!("{m}/act_fn/Sigmoid"), Op::Sigmoid, &[gate])?;
        let silu = n.op(format!("{m}/act_fn/Mul"), Op::Mul, &[gate, sig])?;
        let up = n.linear(format!("{m}/up_proj/MatMul"), y, c.ffn)?;
        let gated = n.op(format!("{m}/Mul"), Op::Mul, &[silu, up])?;
        let down = n.linear(format!("{m}/down_proj/MatMul"), gated, d)?;
        x = n.op(format!("{s}/Add_1"), Op::Add, &[r, down])?;
    }
    let out = rms_norm(&mut n, "/model/norm", x)?;
    if past.is_some() {
        n.b.output(out);
        for t in appended {
            n.b.output(t);
        }
    }
    Ok(n.b.finish()?)
}

/// A timm `VisionTransformer` with a class token, fused qkv, erf GELU and a linear head.
pub(crate) fn vit(name: &str, c: &VitConfig) -> Result<Graph> {
    check_heads(name, c.width, c.heads)?;
    if c.patch == 0 || c.image < c.patch || !c.image.is_multiple_of(c.patch) {
        return Err(ZooError::BadConfig {
            name: name.to_string(),
            reason: format!(
                "a {0}x{0} image does not cut into {1}x{1} patches",
                c.image, c.patch
            ),
        });
    }
    let (d, h) = (c.width, c.heads);
    let hd = d / h;
    let side = c.image / c.patch;
    let l = side * side + 1;
    let mut n = Nodes::new(name);
    let x = n.b.input("input", TensorShape::nchw(3, c.image, c.image))?;
    let conv = ConvAttrs {
        out_channels: d,
        kernel: [c.patch; 2],
        stride: [c.patch; 2],
        pads: [0; 4],
        dilation: [1, 1],
        group: 1,
    };
    let x = n.op("/patch_embed/proj/Conv", Op::Conv(conv), &[x])?;
    let x = n.reshape("/patch_embed/Reshape".into(), x, &[1, d, side * side])?;
    let x = n.transpose("/patch_embed/Transpose".into(), x, &[0, 2, 1])?;
    // The class token (a constant row) goes first.
    let cat = Op::Concat {
        axis: 1,
        constant: 1,
    };
    let x = n.with("/Concat", cat, &[x], d)?;
    let mut x = n.with("/Add", Op::Add, &[x], l * d)?;
    for i in 0..c.depth {
        let s = format!("/blocks/blocks.{i}");
        let a = format!("{s}/attn");
        let ln = n.layer_norm(&format!("{s}/norm1"), x)?;
        let qkv = n.linear(format!("{a}/qkv/MatMul"), ln, 3 * d)?;
        let qkv = n.with(format!("{a}/qkv/Add"), Op::Add, &[qkv], 3 * d)?;
        let qkv = n.reshape(format!("{a}/Reshape"), qkv, &[1, l, 3, h, hd])?;
        let qkv = n.transpose(format!("{a}/Transpose"), qkv, &[2, 0, 3, 1, 4])?;
        let mut parts = Vec::new();
        for (p, suffix) in ["", "_1", "_2"].iter().enumerate() {
            let split = if p == 0 {
                format!("{a}/Split")
            } else {
                format!("{a}/Split:{p}")
            };
            let op = Op::Split {
                axis: 0,
                start: p as u64,
                len: 1,
            };
            let part = n.op(split, op, &[qkv])?;
            let sq = Op::Squeeze { axes: vec![0] };
            parts.push(n.op(format!("{a}/Squeeze{suffix}"), sq, &[part])?);
        }
        let kt = n.transpose(format!("{a}/Transpose_1"), parts[1], &[0, 1, 3, 2])?;
        let q = n.with(format!("{a}/Mul"), Op::Mul, &[parts[0]], 1)?;
        let kt = n.with(format!("{a}/Mul_1"), Op::Mul, &[kt], 1)?;
        let scores = n.matmul(format!("{a}/MatMul"), q, kt)?;
        let p = n.softmax(format!("{a}/Softmax"), scores)?;
        let ctx = n.matmul(format!("{a}/MatMul_1"), p, parts[2])?;
        let ctx = n.transpose(format!("{a}/Transpose_2"), ctx, &[0, 2, 1, 3])?;
        let ctx = n.reshape(format!("{a}/Reshape_1"), ctx, &[1, l, d])?;
        let o = n.linear(format!("{a}/proj/MatMul"), ctx, d)?;
        let o = n.with(format!("{a}/proj/Add"), Op::Add, &[o], d)?;
        let r = n.op(format!("{s}/Add"), Op::Add, &[x, o])?;
        let ln = n.layer_norm(&format!("{s}/norm2"), r)?;
        let m = format!("{s}/mlp");
        let f = n.linear(format!("{m}/fc1/MatMul"), ln, c.mlp)?;
        let f = n.with(format!("{m}/fc1/Add"), Op::Add, &[f], c.mlp)?;
        let act = n.gelu_erf(&format!("{m}/act"), f)?;
        let f = n.linear(format!("{m}/fc2/MatMul"), act, d)?;
        let f = n.with(format!("{m}/fc2/Add"), Op::Add, &[f], d)?;
        x = n.op(format!("{s}/Add_1"), Op::Add, &[r, f])?;
    }
    let x = n.layer_norm("/norm", x)?;
    let cls = Op::Gather {
        axis: 1,
        index: GatherIndex::Constant { dims: vec![] },
    };
    let x = n.op("/Gather", cls, &[x])?;
    n.op(
        "/head/Gemm",
        Op::Gemm {
            out_features: c.classes,
        },
        &[x],
    )?;
    Ok(n.b.finish()?)
}
