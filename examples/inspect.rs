//! Loads a network (a zoo name or an ONNX path, default `resnet18`) and prints what fuselage
//! sees in it: `cargo run --example inspect -- mobilenet_v2`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let spec = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "resnet18".to_string());
    let g = fuselage::load_model(&spec, None)?;
    println!(
        "{}: {} nodes, {} edges, {:.2} M params, {:.3} GMACs",
        g.name(),
        g.len(),
        g.edge_count(),
        g.params() as f64 / 1e6,
        g.macs() as f64 / 1e9
    );
    for (op, n) in g.op_counts() {
        println!("  {op:<18}{n}");
    }
    println!("fingerprint {}", g.fingerprint());
    Ok(())
}
