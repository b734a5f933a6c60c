//! A memo keyed by node sets must not serve one graph's answers for another whose node sets
//! mean different tensors: the same zoo network at two resolutions has the same name and node
//! count, and different costs.

use fuselage_cost::{Cached, CostConfig, CostModel, Lbdf};
use fuselage_ir::NodeSet;

#[test]
fn a_cache_refuses_the_same_network_at_another_resolution() {
    let small = fuselage_zoo::build_at("resnet18", 224).unwrap();
    let large = fuselage_zoo::build_at("resnet18", 448).unwrap();
    assert_eq!((small.name(), small.len()), (large.name(), large.len()));
    let model = Lbdf::new(CostConfig::kib(128).unwrap());
    let first = NodeSet::singleton(small.len(), small.node_ids().next().unwrap());
    let fresh_large = model.evaluate(&large, &first).unwrap();
    assert_ne!(model.evaluate(&small, &first).unwrap(), fresh_large);

    let cached = Cached::new(model);
    cached.evaluate(&small, &first).unwrap();
    // Either refused, or the large graph's own answer; never the small graph's.
    match cached.evaluate(&large, &first) {
        Ok(c) => assert_eq!(c, fresh_large, "a stale answer from the 224-pixel graph"),
        Err(e) => assert!(e.to_string().contains("resnet18"), "{e}"),
    }
    // The same graph again, and an identical rebuild of it, are served.
    let again = fuselage_zoo::build_at("resnet18", 224).unwrap();
    assert_eq!(
        cached.evaluate(&again, &first).unwrap(),
        model.evaluate(&small, &first).unwrap()
    );
}
