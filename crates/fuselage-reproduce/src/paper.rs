//! The paper's numbers (DRAM MB, rectify rates, seconds), for the columns beside ours.

use fuselage::cost::CostKind;
use fuselage::explain::ExplainerKind;
use fuselage::search::SearchKind;

/// Table II: (network, search) → (baseline, best explainer, which).
pub fn table2(net: &str, search: SearchKind) -> Option<(f64, f64, &'static str)> {
    Some(match (net, search) {
        ("efficientnet_b3", SearchKind::Random) => (172.802, 162.774, "RG"),
        ("efficientnet_b3", SearchKind::Local) => (90.500, 73.569, "PG"),
        ("efficientnet_b3", SearchKind::Nsga2) => (77.334, 61.265, "GNNE"),
        ("resnet152", SearchKind::Random) => (113.661, 94.453, "RG"),
        ("resnet152", SearchKind::Local) => (80.733, 74.461, "GNNE"),
        ("resnet152", SearchKind::Nsga2) => (77.205, 66.621, "RG"),
        ("deeplabv3_mobilenet_v3_large", SearchKind::Random) => (148.153, 142.548, "PG"),
        ("deeplabv3_mobilenet_v3_large", SearchKind::Local) => (116.644, 113.942, "RG"),
        ("deeplabv3_mobilenet_v3_large", SearchKind::Nsga2) => (114.351, 113.602, "GNNE/RG"),
        _ => return None,
    })
}

/// Tables III (LS) and IV (RS): (network, fusion, search) → (baseline, best explainer).
pub fn table34(net: &str, fusion: CostKind, search: SearchKind) -> Option<(f64, f64)> {
    let i = [
        "mobilenet_v2",
        "vgg16",
        "resnet50",
        "resnet18",
        "squeezenet1_1",
    ]
    .iter()
    .position(|n| *n == net)?;
    let t: [(f64, f64); 5] = match (fusion, search) {
        (CostKind::Brr, SearchKind::Local) => [
            (15.101, 13.401),
            (27.606, 26.975),
            (83.685, 83.317),
            (27.127, 26.975),
            (8.202, 6.232),
        ],
        (CostKind::Lbdf, SearchKind::Local) => [
            (9.803, 8.823),
            (5.973, 5.973),
            (25.764, 24.196),
            (5.974, 5.974),
            (3.839, 3.585),
        ],
        (CostKind::Brr, SearchKind::Random) => [
            (16.195, 12.593),
            (29.274, 28.124),
            (91.866, 91.669),
            (28.525, 27.599),
            (10.249, 7.601),
        ],
        (CostKind::Lbdf, SearchKind::Random) => [
            (13.209, 11.432),
            (6.856, 6.268),
            (39.092, 32.036),
            (6.856, 6.464),
            (10.080, 7.333),
        ],
        _ => return None,
    };
    Some(t[i])
}

/// Table V: (search, explainer) → (rectify rate %, seconds).
pub fn table5(search: SearchKind, explainer: ExplainerKind) -> Option<(f64, f64)> {
    Some(match (search, explainer) {
        (SearchKind::Local, ExplainerKind::Gnne) => (83.1, 168.0),
        (SearchKind::Local, ExplainerKind::Pg) => (59.1, 72.0),
        (SearchKind::Local, ExplainerKind::Rg) => (94.0, 99.0),
        (SearchKind::Random, ExplainerKind::Gnne) => (72.1, 106.0),
        (SearchKind::Random, ExplainerKind::Pg) => (50.7, 32.0),
        (SearchKind::Random, ExplainerKind::Rg) => (91.4, 42.0),
        _ => return None,
    })
}
