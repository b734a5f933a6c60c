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

#[test]
fn a_full_cache_answers_without_keeping() {
    // A budget of a few entries per shard: every singleton of ResNet-18 is still answered
    // exactly, twice, but the memo stops growing.
    let g = fuselage_zoo::build("resnet18").unwrap();
    let model = Lbdf::new(CostConfig::kib(128).unwrap());
    let cached = Cached::with_budget(model, 16 * 3 * 200);
    for _ in 0..2 {
        for v in g.node_ids() {
            let one = NodeSet::singleton(g.len(), v);
            assert_eq!(
                cached.evaluate(&g, &one).unwrap(),
                model.evaluate(&g, &one).unwrap()
            );
        }
    }
    let s = cached.stats();
    assert!(s.entries > 0 && s.entries <= 16 * 3, "{s:?}");
    assert_eq!(s.hits + s.misses, 2 * g.len() as u64);
    assert!(s.misses > g.len() as u64, "{s:?}");
    // The default budget keeps them all.
    let all = Cached::new(model);
    for v in g.node_ids() {
        all.evaluate(&g, &NodeSet::singleton(g.len(), v)).unwrap();
    }
    assert_eq!(all.stats().entries, g.len() as u64);
}
