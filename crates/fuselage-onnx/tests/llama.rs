//! A Llama-style decoder layer, built in memory: RMSNorm as Pow → ReduceMean → Add → Sqrt →
//! Div → Mul, rotary embeddings by Slice → Neg → Concat, grouped-query attention with the
//! keys and values repeated by Unsqueeze → Expand → Reshape, a causal mask bias, and a
//! SiLU-gated MLP. Every op imports by its class, and rows follow the tokens throughout.

mod support;

use fuselage_ir::{NodeSet, OpKind, RowRead};
use fuselage_onnx::import_bytes;
use support::{A, Model};

const L: i64 = 16;
const D: i64 = 32;

/// RMSNorm of `x` under scope `s`: returns the name of its last node.
fn rms_norm(m: Model, s: &str, x: &str) -> Model {
    m.weight(&format!("{s}.g"), &[D])
        .node(&format!("{s}/Pow"), "Pow", &[x, "two"], &[])
        .node(
            &format!("{s}/ReduceMean"),
            "ReduceMean",
            &[&format!("{s}/Pow")],
            &[("axes", A::Ints(&[-1]))],
        )
        .node(
            &format!("{s}/Add"),
            "Add",
            &[&format!("{s}/ReduceMean"), "eps"],
            &[],
        )
        .node(&format!("{s}/Sqrt"), "Sqrt", &[&format!("{s}/Add")], &[])
        .node(&format!("{s}/Div"), "Div", &[x, &format!("{s}/Sqrt")], &[])
        .node(
            &format!("{s}/Mul"),
            "Mul",
            &[&format!("{s}/Div"), &format!("{s}.g")],
            &[],
        )
}

/// Rotary embedding of a `[1, heads, L, 8]` tensor `x` under scope `s`.
fn rotary(m: Model, s: &str, x: &str) -> Model {
    let n = |op: &str| format!("{s}/{op}");
    m.node(&n("Slice"), "Slice", &[x, "zero", "half", "last"], &[])
        .node(&n("Slice_1"), "Slice", &[x, "half", "full", "last"], &[])
        .node(&n("Neg"), "Neg", &[&n("Slice_1")], &[])
        .node(
            &n("Concat"),
            "Concat",
            &[&n("Neg"), &n("Slice")],
            &[("axis", A::Int(-1))],
        )
        .node(&n("Mul"), "Mul", &[x, "cos"], &[])
        .node(&n("Mul_1"), "Mul", &[&n("Concat"), "sin"], &[])
        .node(&n("Add"), "Add", &[&n("Mul"), &n("Mul_1")], &[])
}

fn llama_layer() -> Vec<u8> {
    let mut m = Model::default()
        .input("x", &[1, L, D])
        .weight("two", &[])
        .weight("eps", &[])
        .weight("cos", &[L, 8])
        .weight("sin", &[L, 8])
        .weight("mask", &[L, L])
        .weight("wq", &[D, D])
        .weight("wk", &[D, 16])
        .weight("wv", &[D, 16])
        .weight("wo", &[D, D])
        .weight("wg", &[D, 64])
        .weight("wu", &[D, 64])
        .weight("wd", &[64, D])
        .ints("zero", &[0])
        .ints("half", &[4])
        .ints("full", &[8])
        .ints("last", &[-1])
        .ints("q_heads", &[1, L, 4, 8])
        .ints("kv_heads", &[1, L, 2, 8])
        .ints("axis2", &[2])
        .ints("expand", &[1, 2, 2, L, 8])
        .ints("merged", &[1, 4, L, 8])
        .ints("out", &[1, L, D]);
    m = rms_norm(m, "/input_layernorm", "x");
    let n0 = "/input_layernorm/Mul";
    m = m
        .node("/q_proj/MatMul", "MatMul", &[n0, "wq"], &[])
        .node("/k_proj/MatMul", "MatMul", &[n0, "wk"], &[])
        .node("/v_proj/MatMul", "MatMul", &[n0, "wv"], &[])
        .node("/q/Reshape", "Reshape", &["/q_proj/MatMul", "q_heads"], &[])
        .node(
            "/k/Reshape",
            "Reshape",
            &["/k_proj/MatMul", "kv_heads"],
            &[],
        )
        .node(
            "/v/Reshape",
            "Reshape",
            &["/v_proj/MatMul", "kv_heads"],
            &[],
        );
    for t in ["q", "k", "v"] {
        m = m.node(
            &format!("/{t}/Transpose"),
            "Transpose",
            &[&format!("/{t}/Reshape")],
            &[("perm", A::Ints(&[0, 2, 1, 3]))],
        );
    }
    m = rotary(m, "/q_rot", "/q/Transpose");
    m = rotary(m, "/k_rot", "/k/Transpose");
    for (t, src) in [("k", "/k_rot/Add"), ("v", "/v/Transpose")] {
        m = m
            .node(
                &format!("/{t}_rep/Unsqueeze"),
                "Unsqueeze",
                &[src, "axis2"],
                &[],
            )
            .node(
                &format!("/{t}_rep/Expand"),
                "Expand",
                &[&format!("/{t}_rep/Unsqueeze"), "expand"],
                &[],
            )
            .node(
                &format!("/{t}_rep/Reshape"),
                "Reshape",
                &[&format!("/{t}_rep/Expand"), "merged"],
                &[],
            );
    }
    m = m
        .node(
            "/kt/Transpose",
            "Transpose",
            &["/k_rep/Reshape"],
            &[("perm", A::Ints(&[0, 1, 3, 2]))],
        )
        .node(
            "/scores/MatMul",
            "MatMul",
            &["/q_rot/Add", "/kt/Transpose"],
            &[],
        )
        .node("/mask/Add", "Add", &["/scores/MatMul", "mask"], &[])
        .node(
            "/Softmax",
            "Softmax",
            &["/mask/Add"],
            &[("axis", A::Int(-1))],
        )
        .node(
            "/ctx/MatMul",
            "MatMul",
            &["/Softmax", "/v_rep/Reshape"],
            &[],
        )
        .node(
            "/ctx/Transpose",
            "Transpose",
            &["/ctx/MatMul"],
            &[("perm", A::Ints(&[0, 2, 1, 3]))],
        )
        .node("/ctx/Reshape", "Reshape", &["/ctx/Transpose", "out"], &[])
        .node("/o_proj/MatMul", "MatMul", &["/ctx/Reshape", "wo"], &[])
        .node("/attn/Add", "Add", &["x", "/o_proj/MatMul"], &[]);
    m = rms_norm(m, "/post_attention_layernorm", "/attn/Add");
    let n1 = "/post_attention_layernorm/Mul";
    m.node("/gate_proj/MatMul", "MatMul", &[n1, "wg"], &[])
        .node("/up_proj/MatMul", "MatMul", &[n1, "wu"], &[])
        .node("/act/Sigmoid", "Sigmoid", &["/gate_proj/MatMul"], &[])
        .node(
            "/act/Mul",
            "Mul",
            &["/gate_proj/MatMul", "/act/Sigmoid"],
            &[],
        )
        .node("/gated/Mul", "Mul", &["/act/Mul", "/up_proj/MatMul"], &[])
        .node("/down_proj/MatMul", "MatMul", &["/gated/Mul", "wd"], &[])
        .node("/mlp/Add", "Add", &["/attn/Add", "/down_proj/MatMul"], &[])
        .output("/mlp/Add")
        .encode()
}

#[test]
fn a_llama_layer_imports_and_streams_tokens() {
    let g = import_bytes(&llama_layer(), "llama.onnx").unwrap();
    assert_eq!(g.len(), 57);
    let count = |k: OpKind| g.nodes().filter(|(_, n)| n.op.kind() == k).count();
    assert_eq!(
        (
            count(OpKind::Pow),
            count(OpKind::Sqrt),
            count(OpKind::Neg),
            count(OpKind::Slice)
        ),
        (2, 2, 2, 4)
    );
    assert_eq!((count(OpKind::Expand), count(OpKind::Unsqueeze)), (2, 2));
    // Weights: the norms' gains, the seven projections, cos, sin, the mask and the scalars.
    let proj = 32 * 32 + 2 * 32 * 16 + 32 * 32 + 3 * 32 * 64;
    assert_eq!(g.params(), 2 * 32 + proj + 2 * 2 * 16 * 8 + 16 * 16 + 4);
    let id = |name: &str| g.require(name).unwrap();
    let src = |name: &str| fuselage_ir::Source::Node(id(name));
    // Rows run along the tokens everywhere: axis 1 of [1, L, D], axis 2 of [1, h, L, d], axis
    // 3 of the repeated [1, kv, rep, L, d], the last axis of Kᵀ.
    for (name, axis) in [
        ("/input_layernorm/Mul", 1),
        ("/q_rot/Add", 2),
        ("/k_rep/Expand", 3),
        ("/k_rep/Reshape", 2),
        ("/kt/Transpose", 3),
        ("/Softmax", 2),
        ("/mlp/Add", 1),
    ] {
        assert_eq!(g.row_axis(src(name)), Some(axis), "{name}");
        assert_eq!(g.rows_of(src(name)), 16, "{name}");
    }
    // RMSNorm reduces over the channels: row-wise. The rotary halves are slices of the last
    // axis: row-wise. The scores read Kᵀ whole.
    let one = fuselage_ir::POINTWISE;
    assert_eq!(g.row_read(id("/input_layernorm/ReduceMean"), 0), one);
    assert_eq!(g.row_read(id("/q_rot/Slice_1"), 0), one);
    assert_eq!(g.row_read(id("/k_rep/Expand"), 0), one);
    assert_eq!(g.row_read(id("/scores/MatMul"), 0), one);
    assert_eq!(g.row_read(id("/scores/MatMul"), 1), RowRead::Whole);
    // The whole layer is one well-formed group.
    g.check_group(&NodeSet::full(g.len()), 0).unwrap();
}
