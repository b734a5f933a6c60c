//! Cut primitives: topological orders of a group, head/tail cuts, connected parts.
//!
//! Every function here returns parts that are weakly connected and, used on a group of an
//! acyclic plan, keep the plan acyclic (see the crate docs).

use fuselage_ir::sample::components;
use fuselage_ir::{Graph, NodeId, NodeSet};
use rand::{Rng, RngExt};

/// A uniformly random topological order of `group`'s nodes (Kahn's algorithm restricted to
/// the group, a random ready node at each step).
pub fn random_order<R: Rng + ?Sized>(g: &Graph, group: &NodeSet, rng: &mut R) -> Vec<NodeId> {
    let mut indeg = vec![0u32; g.len()];
    for v in group.iter() {
        indeg[v.index()] = g.producers(v).filter(|p| group.contains(*p)).count() as u32;
    }
    let mut ready: Vec<NodeId> = group.iter().filter(|v| indeg[v.index()] == 0).collect();
    let mut order = Vec::with_capacity(group.len());
    while !ready.is_empty() {
        let v = ready.swap_remove(rng.random_range(0..ready.len()));
        order.push(v);
        for &(c, _) in g.consumers(v) {
            if group.contains(c) {
                indeg[c.index()] -= 1;
                if indeg[c.index()] == 0 {
                    ready.push(c);
                }
            }
        }
    }
    order
}

/// Cuts `group` after the first `k` nodes of `order` (a topological order of it) and returns
/// the connected components of the head and of the tail, head parts first.
///
/// # Panics
/// If `k` is 0 or not below the group's size.
pub fn cut_at(g: &Graph, group: &NodeSet, order: &[NodeId], k: usize) -> Vec<NodeSet> {
    assert!(
        k > 0 && k < order.len(),
        "a cut leaves both sides non-empty"
    );
    let head = NodeSet::from_ids(g.len(), order[..k].iter().copied());
    let tail = group.difference(&head);
    let mut parts = components(g, &head);
    parts.extend(components(g, &tail));
    parts
}

/// A random head/tail cut of a group of two or more nodes: a random topological order, cut at
/// a uniformly random position. Returns the connected parts (at least two).
///
/// # Panics
/// If the group has fewer than two nodes.
pub fn random_cut<R: Rng + ?Sized>(g: &Graph, group: &NodeSet, rng: &mut R) -> Vec<NodeSet> {
    let order = random_order(g, group, rng);
    let k = rng.random_range(1..order.len());
    cut_at(g, group, &order, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn cuts_partition_into_connected_parts() {
        let g = fuselage_zoo::build("resnet18").unwrap();
        let group = g
            .set_of(&[
                "/layer1/layer1.0/conv1/Conv",
                "/layer1/layer1.0/relu/Relu",
                "/layer1/layer1.0/conv2/Conv",
                "/layer1/layer1.0/Add",
                "/layer1/layer1.0/relu_1/Relu",
            ])
            .unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            let parts = random_cut(&g, &group, &mut rng);
            assert!(parts.len() >= 2);
            let mut all = NodeSet::new(g.len());
            for p in &parts {
                assert!(g.is_connected_set(p));
                assert!(all.is_disjoint(p));
                all.union_with(p);
            }
            assert_eq!(all, group);
        }
    }
}
