//! The worked example of `docs/cost-models.md` ("Precisions and split buffers"): one group,
//! int8 weights, int16 activations, split buffers, by hand — buffer, DRAM, latency and energy.

use fuselage_cost::{Accelerator, Brr, CostModel, Lbdf, OnChipBuffer};
use fuselage_ir::{ConvAttrs, Graph, GraphBuilder, NodeSet, Op, TensorShape};

const EDGE: &str = r#"
name = "worked-example"
description = "int8 weights, int16 activations, 512 B of weights and 2 KiB of activations"
source = "docs/cost-models.md"

[buffer]
weights = 512
activations = "2KiB"

[precision]
weights = 1
activations = 2

[dram]
bandwidth_gb_per_s = 2.0

[compute]
clock_mhz = 1000
peak_macs_per_cycle = 64

[energy]
dram_pj_per_byte = 100.0
buffer_pj_per_byte = 2.0
mac_pj = 0.5
"#;

/// conv 3×3, 4 → 8 channels, 16×16, then a ReLU.
fn conv_relu() -> (Graph, NodeSet) {
    let mut b = GraphBuilder::new("example");
    let x = b.input("input", TensorShape::nchw(4, 16, 16)).unwrap();
    let c = b
        .node("conv", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[x])
        .unwrap();
    b.node("relu", Op::Relu, &[c]).unwrap();
    let g = b.finish().unwrap();
    let all = NodeSet::full(g.len());
    (g, all)
}

fn hw() -> Accelerator {
    Accelerator::from_toml(EDGE, "worked-example").unwrap()
}

#[test]
fn the_file_reads_as_written() {
    let hw = hw();
    assert_eq!(
        hw.config.buffer(),
        OnChipBuffer::Split {
            weight_bytes: 512,
            activation_bytes: 2048
        }
    );
    assert_eq!(
        (
            hw.config.weight_element_bytes(),
            hw.config.activation_element_bytes()
        ),
        (1, 2)
    );
    assert_eq!(
        (hw.clock_hz, hw.dram_bytes_per_second),
        (1_000_000_000, 2_000_000_000)
    );
    assert_eq!(hw.peak_macs_per_cycle, Some(64));
    assert_eq!(
        (
            hw.energy.dram_fj_per_byte,
            hw.energy.buffer_fj_per_byte,
            hw.energy.mac_fj
        ),
        (100_000, 2_000, 500)
    );
}

#[test]
fn lbdf_by_hand() {
    let (g, all) = conv_relu();
    let hw = hw();
    let c = Lbdf::new(hw.config).evaluate(&g, &all).unwrap();
    // W = 8·4·9 + 8 = 296 weights at 1 byte.
    assert_eq!(c.weight_bytes, 296);
    // Rows at 2 bytes: input 4·16·2 = 128, conv and relu 8·16·2 = 256. Bands: 3 input rows
    // (the 3×3 window), 1 conv row, 1 staging row of relu.
    assert_eq!(c.activation_buffer_bytes, 3 * 128 + 256 + 256);
    assert_eq!(c.buffer_bytes, 296 + 896);
    assert!(c.valid, "296 < 512 and 896 < 2048");
    // F_D = input 2,048 + output 4,096 + W 296.
    assert_eq!(c.dram_bytes, 2048 + 4096 + 296);
    let m = hw.group_metrics(&g, &all, &c);
    assert_eq!(m.macs, 8 * 16 * 16 * 4 * 9);
    assert_eq!(m.compute_cycles, 73_728 / 64);
    assert_eq!(m.dram_cycles, 6440 / 2);
    assert_eq!(m.latency_cycles, 3220);
    // Through the buffer: DRAM 6,440, conv and relu written (4,096 each), the input read by
    // conv (2,048), conv read by relu (4,096), the weights read once (296).
    assert_eq!(m.buffer_traffic_bytes, 6440 + 8192 + 6144 + 296);
    assert_eq!(m.energy_fj, 6440 * 100_000 + 21_072 * 2_000 + 73_728 * 500);
    // The same group does not fit when the weight buffer is 296 bytes: the check is strict.
    let tight = hw.config.with_buffer(OnChipBuffer::Split {
        weight_bytes: 296,
        activation_bytes: 2048,
    });
    assert!(!Lbdf::new(tight.unwrap()).evaluate(&g, &all).unwrap().valid);
}

#[test]
fn brr_by_hand() {
    let (g, all) = conv_relu();
    let hw = hw();
    let c = Brr::new(hw.config).evaluate(&g, &all).unwrap();
    // F(h) = relu h·256 + conv h·256 + input (h + 2)·128 = 640·h + 256.
    assert_eq!(Brr::new(hw.config).footprint(&g, &all, 1).unwrap(), 896);
    let t = c.tiling.unwrap();
    // W = 296 < 512 stays; the largest h with 640·h + 256 < 2048 is 2: 8 tiles.
    assert!(t.weights_resident);
    assert_eq!((t.tile_rows, t.tiles), (2, 8));
    assert_eq!(
        (c.buffer_bytes, c.activation_buffer_bytes),
        (296 + 1536, 1536)
    );
    assert_eq!(c.dram_bytes, 6440);
    // With a 256-byte weight buffer the weights stream, once per tile.
    let small = hw
        .config
        .with_buffer(OnChipBuffer::Split {
            weight_bytes: 256,
            activation_bytes: 2048,
        })
        .unwrap();
    let s = Brr::new(small).evaluate(&g, &all).unwrap();
    assert!(s.valid && !s.tiling.unwrap().weights_resident);
    assert_eq!(s.dram_bytes, 2048 + 4096 + 8 * 296);
    let m = hw.group_metrics(&g, &all, &s);
    assert_eq!(m.buffer_traffic_bytes, 8512 + 8192 + 6144 + 8 * 296);
}
