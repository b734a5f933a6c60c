//! Inception v3 and GoogLeNet ([`WIDE_NAMES`]): sizes pinned at the default resolution,
//! intermediate shapes, names, other resolutions and the smallest sides.
//!
//! Parameter counts are what the eval-mode export holds: every convolution's weights plus one
//! bias per output channel (its BatchNorm folded in), plus `fc`. torchvision counts each
//! `BatchNorm2d` as two tensors per channel (weight and bias; the running statistics are
//! buffers), and builds the auxiliary classifiers, which the export leaves out. So:
//!
//! - `inception_v3`: torchvision's 27,161,264 parameters include `AuxLogits`: `conv0` 1×1
//!   768→128 (98,304 + BN 256), `conv1` 5×5 128→768 (2,457,600 + BN 1,536) and `fc` 768→1000
//!   (769,000), 3,326,696 in all, which leaves 23,834,568. Its 94 `BasicConv2d`s have 17,216
//!   BN channels; folding turns their 2 × 17,216 BN parameters into 17,216 biases:
//!   23,834,568 − 17,216 = 23,817,352 (21,751,136 convolution weights + 17,216 biases +
//!   2,049,000 in `fc`).
//! - `googlenet`: torchvision's 6,624,904 is the model without `aux1`/`aux2` (as its pretrained
//!   weights ship); its 57 `BasicConv2d`s have 7,280 BN channels: 6,624,904 − 7,280 =
//!   6,617,624.
//!
//! MACs are torchvision's published `_ops` (5.713 and 1.498 GFLOPs, counted as
//! multiply-accumulates).

use fuselage_ir::{Graph, OpKind};
use fuselage_zoo::{
    MIN_RESOLUTION, NAMES, WIDE_NAMES, ZooError, build, build_at, default_resolution,
};

mod common;

fn check(g: &Graph, what: &str) {
    common::check_structure(g, what);
    // Every port has a row read (the cost models' one row rule), 1xk and kx1 kernels included.
    for (id, node) in g.nodes() {
        for port in 0..node.inputs.len() {
            let _ = g.row_read(id, port);
        }
    }
    let out = g.node(g.outputs()[0]);
    assert_eq!(out.name, "/fc/Gemm", "{what}");
    assert_eq!(out.shape.dims(), [1, 1000], "{what}");
}

fn dims<'g>(g: &'g Graph, node: &str) -> &'g [u64] {
    g.node(g.require(node).unwrap()).shape.dims()
}

#[test]
fn wide_names_are_apart_from_the_papers_twelve() {
    assert_eq!(NAMES.len(), 12);
    for name in WIDE_NAMES {
        assert!(!NAMES.contains(&name), "{name}");
    }
    assert_eq!(default_resolution("inception_v3"), Some(299));
    assert_eq!(default_resolution("googlenet"), Some(224));
    let msg = build("alexnet").unwrap_err().to_string();
    for name in WIDE_NAMES {
        assert!(msg.contains(name), "{msg} lacks {name}");
    }
}

#[test]
fn inception_v3_at_299() {
    let g = build("inception_v3").unwrap();
    assert_eq!(g.name(), "inception_v3");
    assert_eq!(g.inputs()[0].shape.dims(), [1, 3, 299, 299]);
    check(&g, "inception_v3");
    // Stem 5 BasicConv2d (Conv + Relu) and 2 MaxPool = 12; InceptionA 7 convs, AveragePool,
    // Concat = 16 (x3); InceptionB 4 convs, MaxPool, Concat = 10; InceptionC 10 convs,
    // AveragePool, Concat = 22 (x4); InceptionD 6 convs, MaxPool, Concat = 14; InceptionE
    // 9 convs, AveragePool, 3 Concat = 22 (x2); GlobalAveragePool, Flatten, Gemm = 3.
    assert_eq!(g.len(), 12 + 3 * 16 + 10 + 4 * 22 + 14 + 2 * 22 + 3);
    assert_eq!(g.len(), 219);
    // One edge per data port that reads a node: one per node, plus the extra ports of the
    // concats (3 x 3 in A, 2 in B, 4 x 3 in C, 2 in D, 2 x (1 + 1 + 3) in E), less the stem
    // convolution's read of the graph input: 219 + 35 - 1.
    assert_eq!(g.edge_count(), 219 + 35 - 1);
    assert_eq!(g.edge_count(), 253);
    assert_eq!(g.params(), 23_834_568 - 17_216);
    assert_eq!(g.params(), 23_817_352);
    assert_eq!(g.macs(), 5_713_216_096);
    let ops = g.op_counts();
    assert_eq!(ops["Conv"], 94);
    assert_eq!(ops["Relu"], 94);
    assert_eq!(ops["MaxPool"], 4);
    assert_eq!(ops["AveragePool"], 9);
    assert_eq!(ops["Concat"], 15);
    assert_eq!(ops["GlobalAveragePool"], 1);
    assert_eq!(ops["Gemm"], 1);

    assert_eq!(dims(&g, "/Conv2d_1a_3x3/Relu"), [1, 32, 149, 149]);
    assert_eq!(dims(&g, "/maxpool1/MaxPool"), [1, 64, 73, 73]);
    assert_eq!(dims(&g, "/maxpool2/MaxPool"), [1, 192, 35, 35]);
    assert_eq!(dims(&g, "/Mixed_5b/Concat"), [1, 256, 35, 35]);
    assert_eq!(dims(&g, "/Mixed_5d/Concat"), [1, 288, 35, 35]);
    assert_eq!(dims(&g, "/Mixed_6a/Concat"), [1, 768, 17, 17]);
    assert_eq!(dims(&g, "/Mixed_6e/Concat"), [1, 768, 17, 17]);
    assert_eq!(dims(&g, "/Mixed_7a/Concat"), [1, 1280, 8, 8]);
    assert_eq!(dims(&g, "/Mixed_7b/Concat"), [1, 768, 8, 8]);
    assert_eq!(dims(&g, "/Mixed_7b/Concat_1"), [1, 768, 8, 8]);
    assert_eq!(dims(&g, "/Mixed_7c/Concat_2"), [1, 2048, 8, 8]);
    assert_eq!(dims(&g, "/avgpool/GlobalAveragePool"), [1, 2048, 1, 1]);
    assert_eq!(dims(&g, "/Flatten"), [1, 2048]);

    // The exporter's names and the order of torchvision's forward.
    let first: Vec<&str> = g.nodes().take(4).map(|(_, n)| n.name.as_str()).collect();
    assert_eq!(
        first,
        [
            "/Conv2d_1a_3x3/conv/Conv",
            "/Conv2d_1a_3x3/Relu",
            "/Conv2d_2a_3x3/conv/Conv",
            "/Conv2d_2a_3x3/Relu"
        ]
    );
    let conv = g.node(g.require("/Mixed_6b/branch7x7_2/conv/Conv").unwrap());
    assert_eq!(conv.op.kind(), OpKind::Conv);
    assert_eq!(conv.shape.dims(), [1, 128, 17, 17]);
    assert!(g.id_of("/Mixed_5b/AveragePool").is_some());
    assert!(g.id_of("/Mixed_6a/MaxPool").is_some());
    assert!(g.id_of("/Mixed_7c/branch3x3dbl_3b/Relu").is_some());
    // The final concat reads its branches in forward order.
    let cat = g.node(g.require("/Mixed_7c/Concat_2").unwrap());
    let from: Vec<&str> = cat.inputs.iter().map(|&s| g.name_of(s)).collect();
    assert_eq!(
        from,
        [
            "/Mixed_7c/branch1x1/Relu",
            "/Mixed_7c/Concat",
            "/Mixed_7c/Concat_1",
            "/Mixed_7c/branch_pool/Relu"
        ]
    );
    // No auxiliary classifier.
    assert!(g.nodes().all(|(_, n)| !n.name.contains("AuxLogits")));
}

#[test]
fn googlenet_at_224() {
    let g = build("googlenet").unwrap();
    assert_eq!(g.name(), "googlenet");
    assert_eq!(g.inputs()[0].shape.dims(), [1, 3, 224, 224]);
    check(&g, "googlenet");
    // Stem 3 BasicConv2d and 2 MaxPool = 8; each Inception 6 convs, a MaxPool and a Concat
    // = 14 (x9); maxpool3 and maxpool4; GlobalAveragePool, Flatten, Gemm = 3.
    assert_eq!(g.len(), 8 + 9 * 14 + 2 + 3);
    assert_eq!(g.len(), 139);
    // One per node, 3 more per 4-way concat, less the read of the graph input.
    assert_eq!(g.edge_count(), 139 + 9 * 3 - 1);
    assert_eq!(g.edge_count(), 165);
    assert_eq!(g.params(), 6_624_904 - 7_280);
    assert_eq!(g.params(), 6_617_624);
    assert_eq!(g.macs(), 1_498_376_192);
    let ops = g.op_counts();
    assert_eq!(ops["Conv"], 57);
    assert_eq!(ops["Relu"], 57);
    assert_eq!(ops["MaxPool"], 13);
    assert_eq!(ops["Concat"], 9);

    // Ceil-mode pools: 112 -> 56 -> 28 -> 14 -> 7.
    assert_eq!(dims(&g, "/conv1/Relu"), [1, 64, 112, 112]);
    assert_eq!(dims(&g, "/maxpool1/MaxPool"), [1, 64, 56, 56]);
    assert_eq!(dims(&g, "/maxpool2/MaxPool"), [1, 192, 28, 28]);
    assert_eq!(dims(&g, "/inception3a/Concat"), [1, 256, 28, 28]);
    assert_eq!(dims(&g, "/inception3b/Concat"), [1, 480, 28, 28]);
    assert_eq!(dims(&g, "/maxpool3/MaxPool"), [1, 480, 14, 14]);
    assert_eq!(dims(&g, "/inception4e/Concat"), [1, 832, 14, 14]);
    assert_eq!(dims(&g, "/maxpool4/MaxPool"), [1, 832, 7, 7]);
    assert_eq!(dims(&g, "/inception5b/Concat"), [1, 1024, 7, 7]);
    // torchvision's branch3 is a 3x3, not the paper's 5x5.
    let b3 = g.node(
        g.require("/inception3a/branch3/branch3.1/conv/Conv")
            .unwrap(),
    );
    match &b3.op {
        fuselage_ir::Op::Conv(a) => assert_eq!(a.kernel, [3, 3]),
        op => panic!("{op}"),
    }
    assert_eq!(
        dims(&g, "/inception3a/branch4/branch4.0/MaxPool"),
        [1, 192, 28, 28]
    );
    assert!(g.id_of("/inception5b/branch4/branch4.1/Relu").is_some());
    assert!(g.nodes().all(|(_, n)| !n.name.contains("aux")));
}

#[test]
fn other_resolutions() {
    for (name, r, last) in [
        ("inception_v3", 224, 5),
        ("inception_v3", 512, 14),
        ("inception_v3", 75, 1),
        ("googlenet", 299, 9),
        ("googlenet", 512, 16),
        ("googlenet", MIN_RESOLUTION, 1),
    ] {
        let g = build_at(name, r).unwrap_or_else(|e| panic!("{name} at {r}: {e}"));
        assert_eq!(g.inputs()[0].shape.dims(), [1, 3, r, r]);
        check(&g, &format!("{name} at {r}"));
        let tail = if name == "googlenet" {
            "/inception5b/Concat"
        } else {
            "/Mixed_7c/Concat_2"
        };
        let d = dims(&g, tail);
        assert_eq!(d[2..], [last, last], "{name} at {r}");
        // Structure and weights do not depend on the side.
        let at_default = build(name).unwrap();
        assert_eq!(g.len(), at_default.len(), "{name} at {r}");
        assert_eq!(g.params(), at_default.params(), "{name} at {r}");
    }
}

#[test]
fn sides_too_small_are_refused() {
    for (name, r) in [
        ("inception_v3", 74),
        ("inception_v3", MIN_RESOLUTION),
        ("inception_v3", 8),
        ("googlenet", MIN_RESOLUTION - 1),
        ("googlenet", 1),
    ] {
        let err = build_at(name, r).unwrap_err();
        assert!(
            matches!(err, ZooError::BadResolution { resolution, .. } if resolution == r),
            "{name} at {r}: {err}"
        );
    }
    let msg = build_at("inception_v3", 74).unwrap_err().to_string();
    assert!(msg.contains("at least 75"), "{msg}");
}
