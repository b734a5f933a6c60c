//! The contract's canonical cases (b = 1), through the zoo's graphs.

use fuselage_cost::{Brr, CostConfig, CostModel, Lbdf, TensorKind};
use fuselage_ir::{Graph, NodeSet};

/// All nodes from `first` to `last` in node order.
fn range(g: &Graph, first: &str, last: &str) -> NodeSet {
    let (a, b) = (g.require(first).unwrap(), g.require(last).unwrap());
    NodeSet::from_ids(g.len(), g.node_ids().filter(|v| *v >= a && *v <= b))
}

fn check(model: &str, first: &str, last: &str, nodes: usize, f_beta: u64, f_d: u64, f1: u64) {
    let g = fuselage_zoo::build(model).unwrap();
    let group = range(&g, first, last);
    assert_eq!(group.len(), nodes, "{model}: group size");
    // A buffer large enough for everything; the numbers do not depend on β.
    let config = CostConfig::new(1 << 30).unwrap();
    let lbdf = Lbdf::new(config).evaluate(&g, &group).unwrap();
    let literal = Lbdf::literal(config).evaluate(&g, &group).unwrap();
    let brr = Brr::new(config).evaluate(&g, &group).unwrap();
    let t = brr.tiling.unwrap();
    println!(
        "{model}: {} nodes  F_β LBDF {}  F_D {}  BRR F(1) {}  (W {}, BRR F_D {})",
        group.len(),
        lbdf.buffer_bytes,
        lbdf.dram_bytes,
        t.min_footprint_bytes,
        lbdf.weight_bytes,
        brr.dram_bytes
    );
    for tc in Lbdf::new(config).breakdown(&g, &group).unwrap().unwrap() {
        println!(
            "    {:?} {} rows x {} B = {}  {}",
            tc.kind, tc.resident_rows, tc.row_bytes, tc.bytes, tc.tensor
        );
    }
    assert_eq!(lbdf.buffer_bytes, f_beta, "{model}: LBDF F_β");
    assert_eq!(literal.buffer_bytes, f_beta, "{model}: literal LBDF F_β");
    assert_eq!(lbdf.dram_bytes, f_d, "{model}: F_D");
    assert_eq!(t.min_footprint_bytes, f1, "{model}: BRR F(1)");
    assert_eq!(
        brr.dram_bytes, f_d,
        "{model}: BRR F_D with resident weights"
    );
    assert!(t.weights_resident);
    // Validity is strict: β = F_β is invalid, β = F_β + 1 valid.
    let at = Lbdf::new(CostConfig::new(f_beta).unwrap())
        .evaluate(&g, &group)
        .unwrap();
    let above = Lbdf::new(CostConfig::new(f_beta + 1).unwrap())
        .evaluate(&g, &group)
        .unwrap();
    assert!(!at.valid && above.valid);
    let at = Brr::new(CostConfig::new(f1).unwrap())
        .evaluate(&g, &group)
        .unwrap();
    let above = Brr::new(CostConfig::new(f1 + 1).unwrap())
        .evaluate(&g, &group)
        .unwrap();
    assert!(!at.valid && above.valid);
}

#[test]
fn vgg16_first_block() {
    check(
        "vgg16",
        "/features/features.0/Conv",
        "/features/features.4/MaxPool",
        5,
        148_256,
        992_064,
        183_232,
    );
}

#[test]
fn vgg16_by_hand() {
    let g = fuselage_zoo::build("vgg16").unwrap();
    let group = range(
        &g,
        "/features/features.0/Conv",
        "/features/features.4/MaxPool",
    );
    let lbdf = Lbdf::new(CostConfig::kib(256).unwrap());
    let rows: Vec<(String, u64, TensorKind)> = lbdf
        .breakdown(&g, &group)
        .unwrap()
        .unwrap()
        .into_iter()
        .map(|t| (t.tensor, t.resident_rows, t.kind))
        .collect();
    let expect = [
        ("/features/features.0/Conv", 1, TensorKind::Internal),
        ("/features/features.1/Relu", 3, TensorKind::Internal),
        ("/features/features.2/Conv", 1, TensorKind::Internal),
        ("/features/features.3/Relu", 2, TensorKind::Internal),
        ("/features/features.4/MaxPool", 1, TensorKind::Out),
        ("input", 3, TensorKind::In),
    ];
    let expect: Vec<(String, u64, TensorKind)> = expect
        .iter()
        .map(|&(n, r, k)| (n.to_string(), r, k))
        .collect();
    assert_eq!(rows, expect);
    assert_eq!(lbdf.evaluate(&g, &group).unwrap().weight_bytes, 38_720);
}

#[test]
fn resnet18_first_basic_block() {
    check(
        "resnet18",
        "/layer1/layer1.0/conv1/Conv",
        "/layer1/layer1.0/relu_1/Relu",
        5,
        109_696,
        475_264,
        50_176,
    );
}

#[test]
fn squeezenet_fire3() {
    check(
        "squeezenet1_1",
        "/features/features.3/squeeze/Conv",
        "/features/features.3/Concat",
        7,
        39_568,
        592_208,
        36_960,
    );
}

#[test]
fn efficientnet_b0_first_mbconv() {
    check(
        "efficientnet_b0",
        "/features/features.1/features.1.0/block/block.0/block.0.0/Conv",
        "/features/features.1/features.1.0/block/block.2/block.2.0/Conv",
        11,
        426_224,
        603_512,
        1_611_128,
    );
}

/// Every number of a hand-worked group: LBDF `F_β` with phases and literally, `F_D`, BRR
/// `F(1)`, and the simulator's agreement.
fn check_by_hand(g: &Graph, f_beta: u64, literal: u64, f_d: u64, f1: u64, w: u64) {
    let all = NodeSet::full(g.len());
    let config = CostConfig::new(1 << 30).unwrap();
    let lbdf = Lbdf::new(config).evaluate(g, &all).unwrap();
    assert_eq!(lbdf.weight_bytes, w, "W");
    assert_eq!(lbdf.buffer_bytes, f_beta, "F_β");
    assert_eq!(
        Lbdf::literal(config)
            .evaluate(g, &all)
            .unwrap()
            .buffer_bytes,
        literal,
        "literal F_β"
    );
    assert_eq!(lbdf.dram_bytes, f_d, "F_D");
    let brr = Brr::new(config).evaluate(g, &all).unwrap();
    assert_eq!(brr.tiling.unwrap().min_footprint_bytes, f1, "BRR F(1)");
    let sim = fuselage_cost::BufferSimulator::new(config)
        .run(g, &all)
        .unwrap();
    assert_eq!(sim.dram_bytes, f_d);
    assert!(sim.peak_bytes <= f_beta);
}

/// One attention head, `docs/cost-models.md` "An attention head by hand": X `[1, 16, 8]`,
/// Q/K/V projections, `Kᵀ`, scores, softmax, context, output projection.
#[test]
fn attention_head_by_hand() {
    use fuselage_ir::{GraphBuilder, Op, TensorShape};
    let t = |d: &[u64]| TensorShape::new(d.to_vec());
    let mut b = GraphBuilder::new("head");
    let x = b.input("x", t(&[1, 16, 8])).unwrap();
    let q = b
        .node_with("q", Op::MatMul, &[x], t(&[1, 16, 8]), 64)
        .unwrap();
    let k = b
        .node_with("k", Op::MatMul, &[x], t(&[1, 16, 8]), 64)
        .unwrap();
    let v = b
        .node_with("v", Op::MatMul, &[x], t(&[1, 16, 8]), 64)
        .unwrap();
    let kt = b
        .node(
            "kt",
            Op::Transpose {
                perm: vec![0, 2, 1],
            },
            &[k],
        )
        .unwrap();
    let s = b
        .node_with("s", Op::MatMul, &[q, kt], t(&[1, 16, 16]), 0)
        .unwrap();
    let p = b.node("p", Op::Softmax { axis: 2 }, &[s]).unwrap();
    let c = b
        .node_with("c", Op::MatMul, &[p, v], t(&[1, 16, 8]), 0)
        .unwrap();
    b.node_with("o", Op::MatMul, &[c], t(&[1, 16, 8]), 64)
        .unwrap();
    let g = b.finish().unwrap();
    g.check_shapes().unwrap();
    // Kᵀ `[1, 8, 16]` streams along its last axis, the tokens.
    assert_eq!(g.row_axis(kt), Some(2));
    check_by_hand(&g, 704, 584, 512, 568, 256);
}

/// A ConvNeXt block, `docs/cost-models.md` "A ConvNeXt block by hand": X `[1, 8, 8, 8]`,
/// depthwise 7×7, channels-last LayerNorm and MLP (8 → 32 → 8), layer scale, residual.
#[test]
fn convnext_block_by_hand() {
    use fuselage_ir::{ConvAttrs, GraphBuilder, Op, OpKind, TensorShape};
    let t = |d: &[u64]| TensorShape::new(d.to_vec());
    let mut b = GraphBuilder::new("convnext");
    let x = b.input("x", TensorShape::nchw(8, 8, 8)).unwrap();
    let dw = b
        .node("dw", Op::Conv(ConvAttrs::square(8, 7, 1, 1, 8)), &[x])
        .unwrap();
    let cl = b
        .node(
            "nhwc",
            Op::Transpose {
                perm: vec![0, 2, 3, 1],
            },
            &[dw],
        )
        .unwrap();
    let ln = Op::normalize(OpKind::LayerNormalization, 3);
    let ln = b.node("ln", ln, &[cl]).unwrap();
    let fc1 = b
        .node_with("fc1", Op::MatMul, &[ln], t(&[1, 8, 8, 32]), 256)
        .unwrap();
    let b1 = b
        .node_with("b1", Op::Add, &[fc1], t(&[1, 8, 8, 32]), 32)
        .unwrap();
    let gelu = Op::Unary { kind: OpKind::Gelu };
    let act = b.node("gelu", gelu, &[b1]).unwrap();
    let fc2 = b
        .node_with("fc2", Op::MatMul, &[act], t(&[1, 8, 8, 8]), 256)
        .unwrap();
    let b2 = b
        .node_with("b2", Op::Add, &[fc2], t(&[1, 8, 8, 8]), 8)
        .unwrap();
    let gamma = b
        .node_with("gamma", Op::Mul, &[b2], t(&[1, 8, 8, 8]), 8)
        .unwrap();
    let back = b
        .node(
            "nchw",
            Op::Transpose {
                perm: vec![0, 3, 1, 2],
            },
            &[gamma],
        )
        .unwrap();
    b.node("add", Op::Add, &[back, x]).unwrap();
    let g = b.finish().unwrap();
    g.check_shapes().unwrap();
    // Channels last, rows still run along H.
    assert_eq!((g.row_axis(cl), g.row_axis(back)), (Some(1), Some(2)));
    check_by_hand(&g, 2_704, 2_704, 2_000, 1_728, 976);
}

/// Every tensor of every zoo CNN has the contract's rows: H of NCHW, one row for `[1, F]`
/// (the row axis of `fuselage_ir::rows` changes nothing for the CNNs).
#[test]
fn cnn_rows_are_the_contracts() {
    for name in fuselage_zoo::NAMES {
        let g = fuselage_zoo::build(name).unwrap();
        for (id, n) in g.nodes() {
            let s = fuselage_ir::Source::Node(id);
            let want = (n.shape.h(), n.shape.c() * n.shape.w());
            assert_eq!(
                (g.rows_of(s), g.row_elements(s)),
                want,
                "{name}: {}",
                n.name
            );
        }
    }
}

/// The contract's window table, as it was written for NCHW tensors before the row axis.
fn contract_window(g: &Graph, node: &fuselage_ir::Node, port: usize) -> fuselage_ir::RowRead {
    use fuselage_ir::{Op, POINTWISE, RowRead};
    let x = g.shape_of(node.inputs[port]);
    let (h_in, h_out) = (x.h(), node.shape.h());
    let pointwise = if h_in == h_out {
        POINTWISE
    } else {
        RowRead::Whole
    };
    match &node.op {
        Op::Conv(a) => RowRead::Window {
            k: a.dilation[0] * (a.kernel[0] - 1) + 1,
            stride: a.stride[0],
            pad: a.pads[0] as i64,
        },
        Op::MaxPool(a) | Op::AveragePool(a) => RowRead::Window {
            k: a.kernel[0],
            stride: a.stride[0],
            pad: a.pads[0] as i64,
        },
        Op::GlobalAveragePool
        | Op::GlobalMaxPool
        | Op::ReduceMean { .. }
        | Op::Gemm { .. }
        | Op::MatMul
        | Op::Flatten { .. }
        | Op::Reshape
        | Op::Transpose { .. }
        | Op::Softmax { .. }
        | Op::Resize { .. } => RowRead::Whole,
        Op::Concat { axis, .. } if *axis == 2 => RowRead::Whole,
        _ => pointwise,
    }
}

/// Every port of every zoo CNN reads rows as the contract's table says.
#[test]
fn cnn_reads_are_the_contracts() {
    for name in fuselage_zoo::NAMES {
        let g = fuselage_zoo::build(name).unwrap();
        for (id, n) in g.nodes() {
            for port in 0..n.inputs.len() {
                assert_eq!(
                    g.row_read(id, port),
                    contract_window(&g, n, port),
                    "{name}: {} port {port}",
                    n.name
                );
            }
        }
    }
}

/// Issue 36, point 7: LBDF's layout rules on a transformer. In GPT-2 at four layers, the seven
/// nodes from `/m/h.0/attn/Transpose_1` through `/m/h.0/attn/c_proj/Reshape` at 256 KiB: the
/// Transpose feeds only a Concat along the row axis, so it streams into it one row at a time,
/// while the Concat (the value chain, 128 rows of 256 bytes) is held whole for the MatMul.
/// F_β is that Concat (32,768 bytes), one row of each of the six other tensors of the group
/// (6 × 256, the last its output), and one row of each input (Reshape_1's 256 bytes, Softmax's
/// 512): 35,072 bytes, as the independent reference gives; the project gave 67,584
/// before the contract's row window for a Concat along the row axis.
#[test]
fn a_layout_chain_that_keeps_the_row_axis_streams() {
    let g = fuselage_zoo::build("gpt2_l4_h256").unwrap();
    let names: Vec<String> = [
        "Transpose_1",
        "Concat_1",
        "MatMul_1",
        "Reshape_3",
        "Transpose_4",
        "Reshape_4",
        "c_proj/Reshape",
    ]
    .iter()
    .map(|n| format!("/m/h.0/attn/{n}"))
    .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let group = g.set_of(&names).unwrap();
    let c = Lbdf::new(CostConfig::kib(256).unwrap())
        .evaluate(&g, &group)
        .unwrap();
    assert_eq!(c.buffer_bytes, 32_768 + 6 * 256 + 256 + 512);
    assert_eq!(c.buffer_bytes, 35_072);
    assert_eq!(c.dram_bytes, 131_072);
    assert!(c.valid);
}
