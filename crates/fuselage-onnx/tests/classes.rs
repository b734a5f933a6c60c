//! Op classes whose rows depend on attributes or the opset: an old Softmax, GroupNorm, a
//! reflect Pad, and the operands the importer refuses rather than misread.

mod support;

use fuselage_ir::{Op, OpKind, RowRead, Source};
use fuselage_onnx::import_bytes;
use support::{A, Model};

fn last(g: &fuselage_ir::Graph) -> fuselage_ir::NodeId {
    g.node_ids().last().unwrap()
}

#[test]
fn softmax_before_opset_13_normalises_every_axis_from_1() {
    let model = || {
        Model::default()
            .input("x", &[1, 4, 16, 16])
            .node("/Softmax", "Softmax", &["x"], &[])
            .output("/Softmax")
    };
    let g = import_bytes(&model().encode_opset(11), "old.onnx").unwrap();
    let n = g.node(last(&g));
    assert_eq!(
        n.op,
        Op::Normalize {
            kind: OpKind::Softmax,
            axis: 1,
            trailing: true
        }
    );
    assert_eq!(n.op.kind(), OpKind::Softmax);
    assert_eq!(g.row_read(last(&g), 0), RowRead::Whole);
    // From opset 13 the default is the last axis alone: one row per row.
    let g = import_bytes(&model().encode_opset(13), "new.onnx").unwrap();
    assert_eq!(g.node(last(&g)).op, Op::Softmax { axis: 3 });
    assert_eq!(g.row_read(last(&g), 0), fuselage_ir::POINTWISE);
}

#[test]
fn group_norm_reads_whole_and_reflect_pads_reach_their_copies() {
    let bytes = Model::default()
        .input("x", &[1, 8, 32])
        .weight("scale", &[8])
        .weight("bias", &[8])
        .ints("pads", &[0, 2, 0, 0, 1, 0])
        .node(
            "/gn/GroupNormalization",
            "GroupNormalization",
            &["x", "scale", "bias"],
            &[("num_groups", A::Int(2))],
        )
        .node(
            "/pad/Pad",
            "Pad",
            &["/gn/GroupNormalization", "pads"],
            &[("mode", A::Str("reflect"))],
        )
        .output("/pad/Pad")
        .encode_opset(18);
    let g = import_bytes(&bytes, "gn.onnx").unwrap();
    let gn = g.require("/gn/GroupNormalization").unwrap();
    assert_eq!(g.row_read(gn, 0), RowRead::Whole);
    assert_eq!(g.node(gn).weights, 16);
    let pad = g.require("/pad/Pad").unwrap();
    assert_eq!(g.row_axis(Source::Node(pad)), Some(1));
    // [1, 8, 32] rows along the 8 channels of a rank-3 tensor; 2 rows on top, 1 below,
    // mirrored: the window reaches 4 rows both ways.
    assert_eq!(
        g.row_read(pad, 0),
        RowRead::Window {
            k: 9,
            stride: 1,
            pad: 6
        }
    );
}

#[test]
fn operands_fuselage_cannot_place_are_refused_by_name() {
    let gemm = Model::default()
        .input("x", &[16, 16])
        .weight("a", &[16, 16])
        .node("/fc/Gemm", "Gemm", &["a", "x"], &[])
        .output("/fc/Gemm")
        .encode();
    let err = import_bytes(&gemm, "gemm.onnx").unwrap_err().to_string();
    assert_eq!(
        err,
        "gemm.onnx: node `/fc/Gemm` (Gemm): only a data A operand is supported (A·B + C)"
    );
    let slice = Model::default()
        .input("x", &[1, 16, 16])
        .ints("starts", &[0, 1])
        .ints("ends", &[8, 9])
        .ints("axes", &[1, 1])
        .node("/s/Slice", "Slice", &["x", "starts", "ends", "axes"], &[])
        .output("/s/Slice")
        .encode();
    let err = import_bytes(&slice, "slice.onnx").unwrap_err().to_string();
    assert!(err.starts_with("slice.onnx: "), "{err}");
}
