//! Plans on zoo networks: totals, unfusable nodes, caching and the plan file.

use fuselage_cost::{
    Brr, Cached, CostConfig, CostModel, Lbdf, PlanFile, evaluate_plan, layer_by_layer,
    unfusable_nodes,
};
use fuselage_ir::{NodeSet, Plan};

#[test]
fn layer_by_layer_totals() {
    let g = fuselage_zoo::build("resnet18").unwrap();
    let lbdf = Lbdf::new(CostConfig::kib(128).unwrap());
    let plan = layer_by_layer(&g);
    let report = evaluate_plan(&lbdf, &g, &plan).unwrap();
    assert_eq!(report.group_count, g.len());
    // Each singleton reads its inputs and writes its output: the sum over nodes.
    let mut expect = 0;
    for v in g.node_ids() {
        let n = g.node(v);
        expect += n.weights + n.shape.elements();
        expect += n
            .inputs
            .iter()
            .map(|&s| g.shape_of(s).elements())
            .sum::<u64>();
    }
    assert_eq!(report.dram_bytes, expect);
    let unfusable = unfusable_nodes(&lbdf, &g).unwrap();
    assert_eq!(report.unfusable_count, unfusable.len());
    assert!(report.is_valid(), "{:?}", report.problems);
    let fused_out: u64 = report
        .groups
        .iter()
        .filter(|c| c.unfusable)
        .map(|c| c.dram_bytes)
        .sum();
    assert_eq!(report.dram_bytes - report.fusable_dram_bytes, fused_out);
    assert!(report.max_buffer_bytes < 128 * 1024);
    println!(
        "resnet18 layer-by-layer, LBDF 128 KiB: {:.3} MB total, {:.3} MB fusable, {} unfusable, MBU {:.1} KiB",
        report.dram_bytes as f64 / 1e6,
        report.fusable_dram_bytes as f64 / 1e6,
        report.unfusable_count,
        report.max_buffer_bytes as f64 / 1024.0
    );
}

#[test]
fn fusing_the_basic_block_saves_its_internal_traffic() {
    let g = fuselage_zoo::build("resnet18").unwrap();
    let lbdf = Lbdf::new(CostConfig::kib(128).unwrap());
    let block = g
        .set_of(&[
            "/layer1/layer1.0/conv1/Conv",
            "/layer1/layer1.0/relu/Relu",
            "/layer1/layer1.0/conv2/Conv",
            "/layer1/layer1.0/Add",
            "/layer1/layer1.0/relu_1/Relu",
        ])
        .unwrap();
    let mut groups = vec![block.clone()];
    groups.extend(
        g.node_ids()
            .filter(|v| !block.contains(*v))
            .map(|v| NodeSet::singleton(g.len(), v)),
    );
    let fused = evaluate_plan(&lbdf, &g, &Plan::new(groups)).unwrap();
    let apart = evaluate_plan(&lbdf, &g, &layer_by_layer(&g)).unwrap();
    // Five singletons move 11 tensors (6 reads, 5 writes); the block 2; all are 64x56x56.
    assert_eq!(apart.dram_bytes - fused.dram_bytes, 9 * 64 * 56 * 56);
    assert_eq!(fused.max_buffer_bytes.max(109_696), fused.max_buffer_bytes);
}

#[test]
fn cached_answers_match_and_count() {
    let g = fuselage_zoo::build("mobilenet_v2").unwrap();
    let config = CostConfig::kib(256).unwrap();
    let cached = Cached::new(Brr::new(config));
    let plan = layer_by_layer(&g);
    let direct = evaluate_plan(&Brr::new(config), &g, &plan).unwrap();
    let first = evaluate_plan(&cached, &g, &plan).unwrap();
    let again = evaluate_plan(&cached, &g, &plan).unwrap();
    assert_eq!(first, direct);
    assert_eq!(again, direct);
    let s = cached.stats();
    assert_eq!(
        (s.misses, s.hits, s.entries),
        (g.len() as u64, g.len() as u64, g.len() as u64)
    );
    assert!((s.hit_rate() - 0.5).abs() < 1e-12);
    // Shared across threads.
    std::thread::scope(|sc| {
        for _ in 0..4 {
            sc.spawn(|| evaluate_plan(&cached, &g, &plan).unwrap());
        }
    });
    assert_eq!(cached.stats().hits, 5 * g.len() as u64);
    assert_eq!(cached.name(), "brr");
}

#[test]
fn plan_file_records_the_report() {
    let g = fuselage_zoo::build("squeezenet1_1").unwrap();
    let lbdf = Lbdf::new(CostConfig::kib(128).unwrap());
    let plan = layer_by_layer(&g);
    let file = PlanFile::new(&lbdf, &g, &plan).unwrap();
    let report = evaluate_plan(&lbdf, &g, &plan).unwrap();
    assert_eq!(file.model, "squeezenet1_1");
    assert_eq!(file.cost_model, "lbdf");
    assert_eq!((file.buffer_bytes, file.element_bytes), (131_072, 1));
    assert_eq!(file.dram_bytes, report.dram_bytes);
    assert_eq!(file.fusable_dram_bytes, report.fusable_dram_bytes);
    assert_eq!(file.max_buffer_bytes, report.max_buffer_bytes);
    assert_eq!(
        file.groups[0].nodes,
        vec!["/features/features.0/Conv".to_string()]
    );
    let json: serde_json::Value = serde_json::from_str(&file.to_json()).unwrap();
    let keys: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    for k in [
        "model",
        "cost_model",
        "buffer_bytes",
        "element_bytes",
        "groups",
        "dram_bytes",
        "fusable_dram_bytes",
        "max_buffer_bytes",
    ] {
        assert!(keys.contains(&k), "missing {k}");
    }
    let group = json["groups"][0].as_object().unwrap();
    for k in ["nodes", "buffer_bytes", "dram_bytes", "valid", "unfusable"] {
        assert!(group.contains_key(k), "missing groups[].{k}");
    }
    assert_eq!(
        PlanFile::from_json(&file.to_json())
            .unwrap()
            .to_plan(&g)
            .unwrap(),
        plan
    );
}

#[test]
fn element_size_scales_everything() {
    let g = fuselage_zoo::build("vgg16").unwrap();
    let group = NodeSet::from_ids(g.len(), g.node_ids().take(5));
    let one = Lbdf::new(CostConfig::new(1 << 30).unwrap())
        .evaluate(&g, &group)
        .unwrap();
    let four = Lbdf::new(
        CostConfig::new(1 << 30)
            .unwrap()
            .with_element_bytes(4)
            .unwrap(),
    )
    .evaluate(&g, &group)
    .unwrap();
    assert_eq!(four.buffer_bytes, 4 * one.buffer_bytes);
    assert_eq!(four.dram_bytes, 4 * one.dram_bytes);
}
