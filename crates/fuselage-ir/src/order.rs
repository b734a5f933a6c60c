//! A group's nodes in id order, its internal edges, and the head/tail cuts that sever an edge.
//!
//! ## Design
//!
//! Node ids are topological, so listing a group's nodes by id gives a topological order of
//! the group ([`GroupOrder`]). Cutting after the first `k` nodes of that order splits the group
//! into a *head* and a *tail* with only head→tail edges between them; on a group of an acyclic
//! plan such a cut keeps the plan acyclic (a path tail→outside→head would need a node id to
//! decrease along a path).
//!
//! An internal edge `u → v` is severed by exactly the cuts with `pos(u) < k ≤ pos(v)`
//! ([`GroupOrder::cuts_of`]). Each such cut also severs every other edge that spans it: for an
//! edge under a skip connection, the enclosing skip edges; for a skip edge, the edges that join
//! its two sides. Nested skips (an SE block inside a residual block) are covered by the same
//! rule, since every enclosing edge spans the cut. This is the candidate expansion of Mills et
//! al.'s Algorithm 1, and the explainers and splitters share it from here.

use crate::{Graph, NodeId, NodeSet};
use std::ops::RangeInclusive;

/// A group's nodes in id (topological) order, with each node's position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupOrder {
    nodes: Vec<NodeId>,
    pos: Vec<u32>,
    capacity: usize,
}

const OUTSIDE: u32 = u32::MAX;

impl GroupOrder {
    /// The order of `group`, a set of `g`'s nodes.
    ///
    /// Complexity: O(n) for a graph of n nodes.
    pub fn new(g: &Graph, group: &NodeSet) -> Self {
        let mut pos = vec![OUTSIDE; g.len()];
        let nodes: Vec<NodeId> = group.iter().collect();
        for (i, v) in nodes.iter().enumerate() {
            pos[v.index()] = i as u32;
        }
        GroupOrder {
            nodes,
            pos,
            capacity: g.len(),
        }
    }

    /// The nodes, by id.
    pub fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the group is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The position of `v` in the order, or `None` outside the group.
    pub fn position(&self, v: NodeId) -> Option<usize> {
        match self.pos.get(v.index()) {
            Some(&p) if p != OUTSIDE => Some(p as usize),
            _ => None,
        }
    }

    /// The group's internal edges `(producer, consumer)`, both ends in the group, sorted by
    /// position and without duplicates (an op reading one tensor twice is one edge).
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{GraphBuilder, NodeSet, Op, TensorShape, order::GroupOrder};
    /// let mut b = GraphBuilder::new("chain");
    /// let x = b.input("x", TensorShape::nchw(3, 8, 8))?;
    /// let a = b.node("a", Op::Relu, &[x])?;
    /// let c = b.node("c", Op::Add, &[a, a])?; // reads `a` twice: still one edge
    /// let g = b.finish()?;
    /// let order = GroupOrder::new(&g, &NodeSet::full(g.len()));
    /// assert_eq!(order.edges(&g), vec![(a.node().unwrap(), c.node().unwrap())]);
    /// # Ok::<(), fuselage_ir::IrError>(())
    /// ```
    pub fn edges(&self, g: &Graph) -> Vec<(NodeId, NodeId)> {
        let mut out = Vec::new();
        for &u in &self.nodes {
            let start = out.len();
            for &(c, _) in g.consumers(u) {
                if self.position(c).is_some() {
                    out.push((u, c));
                }
            }
            out[start..].sort_unstable();
            let mut tail: Vec<_> = out.drain(start..).collect();
            tail.dedup();
            out.extend(tail);
        }
        out
    }

    /// [`edges`](Self::edges) as positions in the order, `(pos(u), pos(v))`: the one list of
    /// a group's internal edges, which an explanation scores and the GNN classifier weighs
    /// (`fuselage_gnn::GroupGraph`), in the same order.
    pub fn local_edges(&self, g: &Graph) -> Vec<(u32, u32)> {
        self.edges(g)
            .into_iter()
            .map(|(u, v)| (self.pos[u.index()], self.pos[v.index()]))
            .collect()
    }

    /// The head sizes `k` whose cut severs the internal edge `u → v`: `pos(u) + 1 ..= pos(v)`.
    ///
    /// # Panics
    /// If `u` or `v` is outside the group, or `v` does not come after `u`.
    pub fn cuts_of(&self, u: NodeId, v: NodeId) -> RangeInclusive<usize> {
        #[allow(
            clippy::expect_used,
            reason = "internal edges join members of the group"
        )]
        let (pu, pv) = (
            self.position(u).expect("edge source in the group"),
            self.position(v).expect("edge target in the group"),
        );
        assert!(pu < pv, "an edge runs forward in id order");
        pu + 1..=pv
    }

    /// The first `k` nodes (the head of the cut after `k`).
    pub fn head(&self, k: usize) -> NodeSet {
        NodeSet::from_ids(
            self.capacity,
            self.nodes[..k.min(self.nodes.len())].iter().copied(),
        )
    }

    /// The head and the tail of the cut after `k` nodes.
    ///
    /// # Panics
    /// If `k` is 0 or not below the group's size.
    pub fn cut(&self, k: usize) -> (NodeSet, NodeSet) {
        assert!(
            k > 0 && k < self.nodes.len(),
            "a cut leaves both sides non-empty"
        );
        let head = self.head(k);
        let tail = NodeSet::from_ids(self.capacity, self.nodes[k..].iter().copied());
        (head, tail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::residual;

    #[test]
    fn cuts_of_an_edge_sever_the_enclosing_skip() {
        // c1 → r1 → c2 → add → r2, with the skip c1 → add.
        let g = residual();
        let o = GroupOrder::new(&g, &NodeSet::full(g.len()));
        let n = |i: usize| NodeId(i as u32);
        let edges = o.edges(&g);
        assert_eq!(
            edges,
            vec![
                (n(0), n(1)),
                (n(0), n(3)),
                (n(1), n(2)),
                (n(2), n(3)),
                (n(3), n(4))
            ]
        );
        // r1 → c2 is severed only by the cut after two nodes, which also severs the skip.
        assert_eq!(o.cuts_of(n(1), n(2)), 2..=2);
        let (head, tail) = o.cut(2);
        let crossing: Vec<_> = edges
            .iter()
            .filter(|(u, v)| head.contains(*u) && tail.contains(*v))
            .collect();
        assert_eq!(crossing, vec![&(n(0), n(3)), &(n(1), n(2))]);
        // The skip itself spans three cuts.
        assert_eq!(o.cuts_of(n(0), n(3)), 1..=3);
        assert_eq!(o.position(n(3)), Some(3));
        let sub = GroupOrder::new(&g, &NodeSet::from_ids(g.len(), [n(2), n(3)]));
        assert_eq!(sub.position(n(0)), None);
        assert_eq!(sub.edges(&g), vec![(n(2), n(3))]);
    }
}
