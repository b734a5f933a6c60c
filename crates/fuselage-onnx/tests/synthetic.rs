//! Ops the reference exports do not have (Pad, BatchNormalization, Resize fed by shape
//! arithmetic, ReduceMean, Reshape, Transpose, MatMul, Softmax), in a model built in memory.

mod support;

use fuselage_ir::{Op, OpKind};
use fuselage_onnx::import_bytes;
use support::{A, Model};

#[test]
fn shape_arithmetic_folds_and_onnx_ops_survive() {
    let bytes = Model::default()
        .input("x", &[1, 3, 16, 16])
        .ints("pads", &[0, 0, 1, 1, 0, 0, 1, 1])
        .weight("w", &[8, 3, 3, 3])
        .weight("b", &[8])
        .weight("scale", &[8])
        .weight("bias", &[8])
        .weight("mean", &[8])
        .weight("var", &[8])
        .ints("hw", &[2, 3])
        .ints("two", &[2, 2])
        .ints("nc", &[1, 8])
        .ints("flat", &[1, 8, 1024])
        .weight("proj", &[8, 4])
        .node("/pad/Pad", "Pad", &["x", "pads"], &[])
        .node(
            "/conv/Conv",
            "Conv",
            &["/pad/Pad", "w", "b"],
            &[("kernel_shape", A::Ints(&[3, 3]))],
        )
        .node(
            "/bn/BatchNormalization",
            "BatchNormalization",
            &["/conv/Conv", "scale", "bias", "mean", "var"],
            &[],
        )
        .node("/act/Relu", "Relu", &["/bn/BatchNormalization"], &[])
        .node("/Shape", "Shape", &["/act/Relu"], &[])
        .node(
            "/Gather",
            "Gather",
            &["/Shape", "hw"],
            &[("axis", A::Int(0))],
        )
        .node("/Mul_1", "Mul", &["/Gather", "two"], &[])
        .node(
            "/Concat",
            "Concat",
            &["nc", "/Mul_1"],
            &[("axis", A::Int(0))],
        )
        .node(
            "/up/Resize",
            "Resize",
            &["/act/Relu", "", "", "/Concat"],
            &[("mode", A::Str("linear"))],
        )
        .node(
            "/pool/ReduceMean",
            "ReduceMean",
            &["/up/Resize"],
            &[("axes", A::Ints(&[2, 3])), ("keepdims", A::Int(1))],
        )
        .node("/se/Mul", "Mul", &["/up/Resize", "/pool/ReduceMean"], &[])
        .node("/Reshape", "Reshape", &["/se/Mul", "flat"], &[])
        .node(
            "/Transpose",
            "Transpose",
            &["/Reshape"],
            &[("perm", A::Ints(&[0, 2, 1]))],
        )
        .node("/head/MatMul", "MatMul", &["/Transpose", "proj"], &[])
        .node(
            "/Softmax",
            "Softmax",
            &["/head/MatMul"],
            &[("axis", A::Int(-1))],
        )
        .output("/Softmax")
        .encode();
    let g = import_bytes(&bytes, "synthetic.onnx").unwrap();
    assert_eq!(g.name(), "synthetic");
    let ops: Vec<OpKind> = g.nodes().map(|(_, n)| n.op.kind()).collect();
    use OpKind::*;
    assert_eq!(
        ops,
        vec![
            Pad,
            Conv,
            BatchNormalization,
            Relu,
            Resize,
            ReduceMean,
            Mul,
            Reshape,
            Transpose,
            MatMul,
            Softmax
        ]
    );
    let node = |name: &str| g.node(g.id_of(name).unwrap());
    assert_eq!(node("/pad/Pad").op, Op::pad(vec![0, 0, 1, 1, 0, 0, 1, 1]));
    assert_eq!(node("/pad/Pad").shape.0, vec![1, 3, 18, 18]);
    assert_eq!(node("/conv/Conv").weights, 8 * 27 + 8);
    assert_eq!(node("/bn/BatchNormalization").weights, 32);
    assert_eq!(node("/up/Resize").shape.0, vec![1, 8, 32, 32]);
    assert_eq!(node("/up/Resize").inputs.len(), 1, "sizes are folded away");
    assert_eq!(
        node("/pool/ReduceMean").op,
        Op::ReduceMean {
            axes: vec![2, 3],
            keepdims: true
        }
    );
    assert_eq!(node("/se/Mul").shape.0, vec![1, 8, 32, 32]);
    assert_eq!(node("/Reshape").shape.0, vec![1, 8, 1024]);
    assert_eq!(node("/Transpose").shape.0, vec![1, 1024, 8]);
    assert_eq!(node("/head/MatMul").shape.0, vec![1, 1024, 4]);
    assert_eq!(node("/head/MatMul").weights, 32);
    assert_eq!(node("/Softmax").op, Op::Softmax { axis: 2 });
    assert_eq!(g.outputs(), &[g.id_of("/Softmax").unwrap()]);
    assert_eq!(g.macs(), 8 * 16 * 16 * 27 + 1024 * 8 * 4);
    assert!(g.check_shapes().is_ok());
}

/// The rotary frequencies of a decode step, as transformers' `LlamaRotaryEmbedding` exports
/// them when the position ids are a `[1, 1]` graph input:
/// `position_ids[..., None] · inv_freq`, a `[1, 1, 1]` tensor times a constant `[8]`. The
/// constant widens the product to `[1, 1, 8]`; the import used to refuse it ("recorded shape
/// [1, 1, 8] but its inputs imply [1, 1, 1]").
#[test]
fn a_constant_operand_widens_a_broadcast() {
    let bytes = Model::default()
        .input("position_ids", &[1, 1])
        .ints("last", &[-1])
        .weight("inv_freq", &[8])
        .weight("scale", &[])
        .node(
            "/rotary_emb/Unsqueeze",
            "Unsqueeze",
            &["position_ids", "last"],
            &[],
        )
        .node(
            "/rotary_emb/Mul",
            "Mul",
            &["/rotary_emb/Unsqueeze", "inv_freq"],
            &[],
        )
        .node(
            "/rotary_emb/Concat",
            "Concat",
            &["/rotary_emb/Mul", "/rotary_emb/Mul"],
            &[("axis", A::Int(-1))],
        )
        .node("/rotary_emb/Cos", "Cos", &["/rotary_emb/Concat"], &[])
        .node(
            "/rotary_emb/Mul_1",
            "Mul",
            &["/rotary_emb/Cos", "scale"],
            &[],
        )
        .output("/rotary_emb/Mul_1")
        .encode();
    let g = import_bytes(&bytes, "rotary.onnx").unwrap();
    let node = |name: &str| g.node(g.id_of(name).unwrap());
    assert_eq!(node("/rotary_emb/Unsqueeze").shape.0, vec![1, 1, 1]);
    assert_eq!(node("/rotary_emb/Mul").shape.0, vec![1, 1, 8]);
    assert_eq!(node("/rotary_emb/Mul").weights, 8);
    assert_eq!(node("/rotary_emb/Concat").shape.0, vec![1, 1, 16]);
    // A scalar constant widens nothing.
    assert_eq!(node("/rotary_emb/Mul_1").shape.0, vec![1, 1, 16]);
    assert_eq!(node("/rotary_emb/Mul_1").weights, 1);
    assert!(g.check_shapes().is_ok());
}
