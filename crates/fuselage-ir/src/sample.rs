//! Random structures over a graph: topological orders, plans and connected groups.
//!
//! Searches draw random plans, data sets draw random groups, and property tests draw both, so
//! the samplers live here, next to the checks they must satisfy. Every sampler takes the
//! caller's RNG (seed it with `rand_chacha` for reproducibility); the same RNG state gives the
//! same result.

use crate::graph::Graph;
use crate::id::NodeId;
use crate::nodeset::NodeSet;
use crate::plan::Plan;
use rand::{Rng, RngExt};

/// A uniformly random choice among the ready nodes at each step of Kahn's algorithm: a random
/// topological order.
///
/// Complexity: O(V²) in the worst case (removal from the ready list), O(V + E) typical.
pub fn random_topological_order<R: Rng + ?Sized>(g: &Graph, rng: &mut R) -> Vec<NodeId> {
    let mut indeg = g.in_degrees();
    let mut ready: Vec<NodeId> = g.node_ids().filter(|v| indeg[v.index()] == 0).collect();
    let mut order = Vec::with_capacity(g.len());
    while !ready.is_empty() {
        let i = rng.random_range(0..ready.len());
        let v = ready.swap_remove(i);
        order.push(v);
        for &(c, _) in g.consumers(v) {
            indeg[c.index()] -= 1;
            if indeg[c.index()] == 0 {
                ready.push(c);
            }
        }
    }
    order
}

/// Splits `order` (a topological order) into consecutive segments of 1 to `max_len` nodes
/// (uniform), and each segment into its weakly connected components: a random plan whose graph
/// of groups is acyclic by construction (every edge runs inside a component or to a later
/// segment). Nodes in `alone` always end the segment before them and form a singleton (the
/// unfusable nodes of a cost model).
///
/// # Panics
/// If `max_len` is 0.
pub fn plan_from_order<R: Rng + ?Sized>(
    g: &Graph,
    order: &[NodeId],
    max_len: usize,
    alone: &NodeSet,
    rng: &mut R,
) -> Plan {
    assert!(max_len > 0, "segments need at least one node");
    let mut groups = Vec::new();
    let mut segment = NodeSet::new(g.len());
    let mut left = 0;
    for &v in order {
        if alone.contains(v) {
            groups.extend(components(g, &segment));
            segment = NodeSet::new(g.len());
            left = 0;
            groups.push(NodeSet::singleton(g.len(), v));
            continue;
        }
        if left == 0 {
            groups.extend(components(g, &segment));
            segment = NodeSet::new(g.len());
            left = rng.random_range(1..=max_len);
        }
        segment.insert(v);
        left -= 1;
    }
    groups.extend(components(g, &segment));
    Plan::new(groups)
}

/// A random plan: [`plan_from_order`] over a [`random_topological_order`], no node forced
/// alone.
///
/// # Panics
/// If `max_len` is 0.
pub fn random_plan<R: Rng + ?Sized>(g: &Graph, max_len: usize, rng: &mut R) -> Plan {
    let order = random_topological_order(g, rng);
    plan_from_order(g, &order, max_len, &NodeSet::new(g.len()), rng)
}

/// The weakly connected components of `set`, each as a set, ordered by their first node.
pub fn components(g: &Graph, set: &NodeSet) -> Vec<NodeSet> {
    let mut rest = set.clone();
    let mut out = Vec::new();
    while let Some(first) = rest.first() {
        let comp = g.component(&rest, first);
        rest = rest.difference(&comp);
        out.push(comp);
    }
    out
}

/// A random connected group of up to `size` nodes: start from a uniformly random node and add
/// a uniformly random neighbour of the group until it has `size` nodes or no neighbour is left.
pub fn random_group<R: Rng + ?Sized>(g: &Graph, size: usize, rng: &mut R) -> NodeSet {
    let mut set = NodeSet::new(g.len());
    if g.is_empty() || size == 0 {
        return set;
    }
    let start = NodeId(rng.random_range(0..g.len()) as u32);
    set.insert(start);
    let mut frontier: Vec<NodeId> = g.neighbours(start).collect();
    while set.len() < size && !frontier.is_empty() {
        let v = frontier.swap_remove(rng.random_range(0..frontier.len()));
        if set.insert(v) {
            frontier.extend(g.neighbours(v).filter(|u| !set.contains(*u)));
        }
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::residual;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn random_plans_are_valid_and_seeded() {
        let g = residual();
        for seed in 0..200 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let order = random_topological_order(&g, &mut rng);
            let mut pos = vec![0; g.len()];
            for (i, v) in order.iter().enumerate() {
                pos[v.index()] = i;
            }
            assert!(g.node_ids().all(|v| {
                g.consumers(v)
                    .iter()
                    .all(|&(c, _)| pos[v.index()] < pos[c.index()])
            }));
            let plan = random_plan(&g, 4, &mut rng);
            g.check_plan(&plan).unwrap();
        }
        let a = random_plan(&g, 3, &mut ChaCha8Rng::seed_from_u64(7));
        let b = random_plan(&g, 3, &mut ChaCha8Rng::seed_from_u64(7));
        assert_eq!(a, b);
    }

    #[test]
    fn random_groups_are_connected() {
        let g = residual();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for size in 1..=6 {
            let s = random_group(&g, size, &mut rng);
            assert_eq!(s.len(), size.min(g.len()));
            assert!(g.is_connected_set(&s));
        }
        let split = components(&g, &g.set_of(&["c1", "r2", "add"]).unwrap());
        assert_eq!(split.len(), 1);
        let split = components(&g, &g.set_of(&["r1", "r2"]).unwrap());
        assert_eq!(split.len(), 2);
        let alone = g.set_of(&["c2"]).unwrap();
        let order: Vec<NodeId> = g.node_ids().collect();
        for seed in 0..20 {
            let plan = plan_from_order(&g, &order, 5, &alone, &mut ChaCha8Rng::seed_from_u64(seed));
            g.check_plan(&plan).unwrap();
            assert!(plan.groups.contains(&alone));
        }
    }
}
