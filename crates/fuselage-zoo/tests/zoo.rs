//! Every network: structure checks, other resolutions, MAC counts, errors.

use fuselage_ir::OpKind;
use fuselage_zoo::{NAMES, ZooError, build, build_at, default_resolution};

mod common;

use common::check_structure as check;

/// Published multiply-accumulates (torchvision's model cards), 2% tolerance.
const MACS: [(&str, f64); 5] = [
    ("vgg16", 15.47e9),
    ("resnet50", 4.09e9),
    ("resnet101", 7.80e9),
    ("resnet152", 11.51e9),
    ("efficientnet_b3", 1.83e9),
];

#[test]
fn every_network_builds_and_checks() {
    for name in NAMES {
        let r = default_resolution(name).unwrap();
        let g = build(name).unwrap();
        assert_eq!(g.name(), name);
        assert_eq!(g.inputs()[0].shape.dims(), [1, 3, r, r]);
        check(&g, name);
        println!(
            "{name:30} {r:4}px {:5} nodes {:12} params {:8.3} GMACs",
            g.len(),
            g.params(),
            g.macs() as f64 / 1e9
        );
    }
}

#[test]
fn other_resolutions_build_and_check() {
    for name in NAMES {
        // VGG's adaptive pool exports only for feature maps that divide by 7.
        let sides: &[u64] = if name == "vgg16" {
            &[448, 448 + 32 * 7]
        } else {
            &[160, 256]
        };
        for &r in sides {
            let g = build_at(name, r).unwrap_or_else(|e| panic!("{name} at {r}: {e}"));
            assert_eq!(g.inputs()[0].shape.dims(), [1, 3, r, r]);
            check(&g, &format!("{name} at {r}"));
        }
    }
    // Segmentation keeps the input size.
    let g = build_at("deeplabv3_mobilenet_v3_large", 256).unwrap();
    let out = g.node(g.outputs()[0]);
    assert_eq!(out.shape.dims(), [1, 21, 256, 256]);
    assert!(matches!(
        build_at("vgg16", 160),
        Err(ZooError::BadResolution { .. })
    ));
    assert!(matches!(
        build_at("resnet18", 8),
        Err(ZooError::BadResolution { .. })
    ));
}

#[test]
fn macs_match_published_counts() {
    for (name, want) in MACS {
        let got = build(name).unwrap().macs() as f64;
        assert!(
            (got / want - 1.0).abs() < 0.02,
            "{name}: {got:.4e} MACs, published {want:.4e}"
        );
    }
    let small = build("mobilenet_v3_small").unwrap().macs() as f64;
    assert!(
        (0.055e9..0.065e9).contains(&small),
        "mobilenet_v3_small: {small:.4e}"
    );
    // The rest, against torchvision's published figures (looser: sanity only).
    let sane = [
        ("squeezenet1_1", 0.35e9),
        ("resnet18", 1.81e9),
        ("mobilenet_v2", 0.30e9),
        ("mobilenet_v3_large", 0.22e9),
        ("efficientnet_b0", 0.39e9),
    ];
    for (name, want) in sane {
        let got = build(name).unwrap().macs() as f64;
        assert!(
            (got / want - 1.0).abs() < 0.05,
            "{name}: {got:.4e} MACs, published {want:.4e}"
        );
    }
    // torchvision publishes DeepLabV3's count at 520x520 (10.45 G, with the small aux head).
    let dl = build_at("deeplabv3_mobilenet_v3_large", 520)
        .unwrap()
        .macs() as f64;
    assert!(
        (dl / 10.45e9 - 1.0).abs() < 0.02,
        "deeplabv3_mobilenet_v3_large at 520: {dl:.4e}"
    );
}

#[test]
fn structure_of_the_networks_without_exports() {
    let vgg = build("vgg16").unwrap();
    assert_eq!(vgg.op_counts()["Conv"], 13);
    assert_eq!(vgg.op_counts()["Gemm"], 3);
    assert!(vgg.id_of("/avgpool/AveragePool").is_some());
    assert!(vgg.id_of("/classifier/classifier.6/Gemm").is_some());

    let r50 = build("resnet50").unwrap();
    assert_eq!(r50.op_counts()["Conv"], 53);
    assert!(r50.id_of("/layer1/layer1.0/relu_2/Relu").is_some());
    assert!(
        r50.id_of("/layer1/layer1.0/downsample/downsample.0/Conv")
            .is_some()
    );
    assert_eq!(build("resnet101").unwrap().op_counts()["Conv"], 104);
    assert_eq!(build("resnet152").unwrap().op_counts()["Conv"], 155);

    let b3 = build("efficientnet_b3").unwrap();
    // 26 MBConv blocks, each with one SE.
    assert_eq!(b3.op_counts()["GlobalAveragePool"], 27);
    let head = b3.node(
        b3.require("/features/features.8/features.8.0/Conv")
            .unwrap(),
    );
    assert_eq!(head.shape.dims(), [1, 1536, 10, 10]);

    let dl = build("deeplabv3_mobilenet_v3_large").unwrap();
    let feat = dl.node(
        dl.require("/backbone/backbone.16/backbone.16.0/Conv")
            .unwrap(),
    );
    assert_eq!(feat.shape.dims(), [1, 960, 32, 32]);
    let cat = dl.node(dl.require("/classifier/classifier.0/Concat").unwrap());
    assert_eq!(cat.shape.dims(), [1, 1280, 32, 32]);
    assert_eq!(cat.inputs.len(), 5);
    assert!(
        dl.id_of("/classifier/classifier.0/convs/convs.4/Resize")
            .is_some()
    );
    let out = dl.node(dl.outputs()[0]);
    assert_eq!(out.name, "/Resize");
    assert_eq!(out.op.kind(), OpKind::Resize);
    assert_eq!(out.shape.dims(), [1, 21, 512, 512]);
}

#[test]
fn unknown_names_list_the_valid_ones() {
    let err = build("alexnet").unwrap_err();
    assert!(matches!(err, ZooError::UnknownModel { ref name, .. } if name == "alexnet"));
    let msg = err.to_string();
    for name in NAMES {
        assert!(msg.contains(name), "{msg} lacks {name}");
    }
    assert!(build_at("alexnet", 224).is_err());
    assert_eq!(default_resolution("alexnet"), None);
}

/// One decode step of GPT-2 (124M) against 1,024 cached tokens: per layer a key and a value
/// cache `[1, 12, 1024, 64]` in, one new token, attention over 1,025 keys, and the new key
/// and value out.
#[test]
fn a_gpt2_decode_step_has_a_cache_per_layer_and_one_new_token() {
    let past = 1024;
    let g = fuselage_zoo::build_decode("gpt2", past).unwrap();
    g.check_shapes().unwrap();
    let (layers, d, h, hd) = (12u64, 768u64, 12u64, 64u64);
    assert_eq!(g.inputs().len() as u64, 1 + 2 * layers);
    assert_eq!(g.inputs()[0].name, "input_ids");
    assert_eq!(g.inputs()[0].shape.0, vec![1, 1]);
    for i in 0..layers as usize {
        for (j, what) in ["key", "value"].iter().enumerate() {
            let input = &g.inputs()[1 + 2 * i + j];
            assert_eq!(input.name, format!("past_key_values.{i}.{what}"));
            assert_eq!(input.shape.0, vec![1, h, past, hd]);
        }
    }
    let shape = |name: &str| g.node(g.require(name).unwrap()).shape.0.clone();
    for i in 0..layers {
        let a = format!("/m/h.{i}/attn");
        assert_eq!(shape(&format!("{a}/c_attn/Gemm")), vec![1, 3 * d]);
        assert_eq!(shape(&format!("{a}/Concat")), vec![1, h, past + 1, hd]);
        assert_eq!(shape(&format!("{a}/Concat_1")), vec![1, h, past + 1, hd]);
        assert_eq!(shape(&format!("{a}/Transpose_3")), vec![1, h, hd, past + 1]);
        assert_eq!(shape(&format!("{a}/MatMul")), vec![1, h, 1, past + 1]);
        assert_eq!(shape(&format!("{a}/Softmax")), vec![1, h, 1, past + 1]);
        assert_eq!(shape(&format!("{a}/MatMul_1")), vec![1, h, 1, hd]);
        // One query sees every key: no mask bias.
        assert!(g.id_of(&format!("{a}/Add")).is_none());
    }
    // Out: the last hidden state, then each layer's new key and value.
    let outs: Vec<(String, Vec<u64>)> = g
        .outputs()
        .iter()
        .map(|&o| (g.node(o).name.clone(), g.node(o).shape.0.clone()))
        .collect();
    assert_eq!(outs.len() as u64, 1 + 2 * layers);
    assert_eq!(outs[0], ("/m/Reshape_1".to_string(), vec![1, 1, d]));
    assert_eq!(
        outs[1],
        ("/m/h.0/attn/Transpose".to_string(), vec![1, h, 1, hd])
    );
    assert_eq!(
        outs[2],
        ("/m/h.0/attn/Transpose_1".to_string(), vec![1, h, 1, hd])
    );
    // The weights are the full sequence's, less each layer's L×L mask and all but one row of
    // the position embedding.
    let full = fuselage_zoo::build_seq("gpt2", 1024).unwrap();
    assert_eq!(g.params(), full.params() - layers * 1024 * 1024 - 1023 * d);
    // By hand: the 124M model's 124,439,808 parameters, with one of the 1,024 position rows,
    // plus per layer the export's scalars: the attention scale on Q and on Kᵀ, and gelu_new's
    // five constants.
    assert_eq!(g.params(), 124_439_808 - 1023 * d + layers * (2 + 5));
    assert_eq!(g.params(), 123_654_228);
    // GPT-2 at 4 layers too; other names are refused with the decoders listed.
    let small = fuselage_zoo::build_decode("gpt2_l4_h256", 128).unwrap();
    assert_eq!(small.inputs()[8].name, "past_key_values.3.value");
    assert_eq!(small.inputs()[8].shape.0, vec![1, 4, 128, 64]);
    let err = fuselage_zoo::build_decode("bert_l4_h256", 8).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown model `bert_l4_h256`; valid names: llama_3_2_1b, tinyllama_1_1b, gpt2, gpt2_l4_h256"
    );
}
