//! [`Net`]: the growth of connected extensions of a down-set, which the down-set programme
//! costs as steps and the joins as heads (see "Bottlenecks" in the [module docs](super)).

use super::common::FxSet;
use crate::error::Result;
use fuselage_ir::{Graph, NodeId, NodeSet};

/// Producers and (distinct) consumers of every node, by index, and the bottlenecks whose
/// crossing groups are joined rather than grown.
pub(super) struct Net {
    preds: Vec<Vec<NodeId>>,
    succs: Vec<Vec<NodeId>>,
    necks: NodeSet,
}

impl Net {
    /// The net of `g`, with the bottlenecks `necks`.
    pub(super) fn of(g: &Graph, necks: impl IntoIterator<Item = NodeId>) -> Net {
        Net {
            preds: g.node_ids().map(|v| g.producers(v).collect()).collect(),
            succs: g
                .node_ids()
                .map(|v| crate::bound::net_consumers(g, v))
                .collect(),
            necks: NodeSet::from_ids(g.len(), necks),
        }
    }

    /// Generates the connected extensions of the down-set `d` of at most `limit` nodes, one
    /// generation at a time (see
    /// [`DownsetProgramme::until`](super::downsets::DownsetProgramme::until)): `visit` gets
    /// each generation and says which of its sets may grow. A set that holds a bottleneck
    /// with a producer outside `d` is neither visited nor grown: it crosses the bottleneck,
    /// and the join makes those groups.
    pub(super) fn grow(
        &self,
        d: &NodeSet,
        limit: usize,
        mut visit: impl FnMut(&[NodeSet]) -> Result<Vec<bool>>,
    ) -> Result<()> {
        let n = d.capacity();
        let crosses = |e: &NodeSet| {
            !e.is_disjoint(&self.necks)
                && e.iter().any(|c| {
                    self.necks.contains(c) && self.preds[c.index()].iter().any(|&u| !d.contains(u))
                })
        };
        let mut seen: FxSet<NodeSet> = FxSet::default();
        let mut level: Vec<NodeSet> = (0..n)
            .map(|i| NodeId(i as u32))
            .filter(|&s| !d.contains(s) && self.preds[s.index()].iter().all(|&u| d.contains(u)))
            .map(|s| NodeSet::singleton(n, s))
            .filter(|e| e.len() <= limit)
            .collect();
        let mut closure: Vec<NodeId> = Vec::new();
        while !level.is_empty() {
            let grow = visit(&level)?;
            let mut next = Vec::new();
            for (e, grow) in level.iter().zip(grow) {
                if !grow || e.len() >= limit {
                    continue;
                }
                for v in e.iter() {
                    for &w in &self.succs[v.index()] {
                        if d.contains(w) || e.contains(w) {
                            continue;
                        }
                        // E ∪ closure(w): w and its ancestors not yet covered.
                        let mut bigger = e.clone();
                        closure.clear();
                        closure.push(w);
                        bigger.insert(w);
                        while let Some(x) = closure.pop() {
                            for &u in &self.preds[x.index()] {
                                if !d.contains(u) && bigger.insert(u) {
                                    closure.push(u);
                                }
                            }
                        }
                        if bigger.len() <= limit && !crosses(&bigger) && seen.insert(bigger.clone())
                        {
                            next.push(bigger);
                        }
                    }
                }
            }
            level = next;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{diamond, ids, set};
    use super::*;

    /// Every generation `net` grows from `d` up to `limit` nodes, growing the sets `grow`
    /// allows.
    fn generations(
        net: &Net,
        d: &NodeSet,
        limit: usize,
        grow: impl Fn(&NodeSet) -> bool,
    ) -> Vec<Vec<Vec<u32>>> {
        let mut out = Vec::new();
        net.grow(d, limit, |level| {
            out.push(level.iter().map(ids).collect());
            Ok(level.iter().map(&grow).collect())
        })
        .unwrap();
        out
    }

    #[test]
    fn a_diamond_grows_its_connected_down_closed_sets_once_each() {
        // a (0) feeds b (1) and c (2), d (3) reads both: adding d to {a, b} brings c, its
        // uncovered producer, along; {a, b, c} is reached from {a, b} and {a, c} but made once.
        let g = diamond();
        let net = Net::of(&g, []);
        let none = NodeSet::new(g.len());
        assert_eq!(
            generations(&net, &none, 64, |_| true),
            [
                vec![vec![0]],
                vec![vec![0, 1], vec![0, 2]],
                vec![vec![0, 1, 2], vec![0, 1, 2, 3]],
            ]
        );
        // At most two nodes; and nothing grows from a set that may not.
        assert_eq!(
            generations(&net, &none, 2, |_| true),
            [vec![vec![0]], vec![vec![0, 1], vec![0, 2]]]
        );
        assert_eq!(
            generations(&net, &none, 64, |e| e.len() < 2),
            [vec![vec![0]], vec![vec![0, 1], vec![0, 2]]]
        );
        // From {a, b}: c, and c with d.
        assert_eq!(
            generations(&net, &set(&g, &[0, 1]), 64, |_| true),
            [vec![vec![2]], vec![vec![2, 3]]]
        );
    }

    #[test]
    fn no_set_crosses_a_bottleneck_with_a_producer_outside() {
        // With d a bottleneck, no set holds it before b and c are covered; then d alone.
        let g = diamond();
        let net = Net::of(&g, [NodeId(3)]);
        assert_eq!(
            generations(&net, &NodeSet::new(g.len()), 64, |_| true),
            [
                vec![vec![0]],
                vec![vec![0, 1], vec![0, 2]],
                vec![vec![0, 1, 2]]
            ]
        );
        assert_eq!(
            generations(&net, &set(&g, &[0, 1, 2]), 64, |_| true),
            [vec![vec![3]]]
        );
    }
}
