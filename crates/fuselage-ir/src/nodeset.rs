//! [`NodeSet`]: a set of nodes as a bitset, the representation of a fusion group.
//!
//! Groups are hashed and compared constantly (memoised cost models, split caches), so a group is
//! a fixed-width bitset over the graph's dense node ids: hashing and equality are a few words,
//! and union, difference and membership are word operations.

use crate::id::NodeId;
use fixedbitset::FixedBitSet;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A set of nodes of one graph, sized to that graph.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct NodeSet {
    bits: FixedBitSet,
}

impl NodeSet {
    /// The empty set for a graph of `n` nodes.
    pub fn new(n: usize) -> Self {
        NodeSet {
            bits: FixedBitSet::with_capacity(n),
        }
    }

    /// The set of every node of a graph of `n` nodes.
    pub fn full(n: usize) -> Self {
        let mut bits = FixedBitSet::with_capacity(n);
        bits.insert_range(..);
        NodeSet { bits }
    }

    /// The set holding `ids`, for a graph of `n` nodes.
    ///
    /// # Panics
    /// If an id is `n` or more.
    pub fn from_ids(n: usize, ids: impl IntoIterator<Item = NodeId>) -> Self {
        let mut s = NodeSet::new(n);
        for id in ids {
            s.insert(id);
        }
        s
    }

    /// The set of one node.
    pub fn singleton(n: usize, id: NodeId) -> Self {
        NodeSet::from_ids(n, [id])
    }

    /// The size of the graph this set belongs to.
    pub fn capacity(&self) -> usize {
        self.bits.len()
    }

    /// Adds a node; returns whether it was new.
    pub fn insert(&mut self, id: NodeId) -> bool {
        !self.bits.put(id.index())
    }

    /// Removes a node; returns whether it was there.
    pub fn remove(&mut self, id: NodeId) -> bool {
        let was = self.bits.contains(id.index());
        self.bits.set(id.index(), false);
        was
    }

    /// Whether the node is in the set.
    #[inline]
    pub fn contains(&self, id: NodeId) -> bool {
        self.bits.contains(id.index())
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.bits.count_ones(..)
    }

    /// Whether the set holds exactly one node (cheaper than `len() == 1` on large graphs: it
    /// stops at the second node).
    pub fn is_singleton(&self) -> bool {
        let mut ones = self.bits.ones();
        ones.next().is_some() && ones.next().is_none()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.is_clear()
    }

    /// The nodes, in increasing (topological) order.
    pub fn iter(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.bits.ones().map(|i| NodeId(i as u32))
    }

    /// The smallest node.
    pub fn first(&self) -> Option<NodeId> {
        self.bits.minimum().map(|i| NodeId(i as u32))
    }

    /// Every node moved by `by` (`v ↦ v + by`), in a set of the same capacity; `None` when
    /// a node would leave it. Word by word, O(capacity / 64): how a repeated layer's group
    /// is compared with the one a layer before.
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{NodeId, NodeSet};
    /// let s = NodeSet::from_ids(200, [NodeId(3), NodeId(70)]);
    /// assert_eq!(s.shifted(100), Some(NodeSet::from_ids(200, [NodeId(103), NodeId(170)])));
    /// assert_eq!(s.shifted(-3), Some(NodeSet::from_ids(200, [NodeId(0), NodeId(67)])));
    /// assert_eq!(s.shifted(130), None);
    /// assert_eq!(s.shifted(-4), None);
    /// ```
    pub fn shifted(&self, by: i64) -> Option<NodeSet> {
        let n = self.capacity();
        let (Some(lo), Some(hi)) = (self.bits.minimum(), self.bits.maximum()) else {
            return Some(NodeSet::new(n));
        };
        if (lo as i64).checked_add(by)? < 0 || (hi as i64).checked_add(by)? >= n as i64 {
            return None;
        }
        const W: usize = usize::BITS as usize;
        let src = self.bits.as_slice();
        let word = |k: i64| {
            usize::try_from(k)
                .ok()
                .and_then(|k| src.get(k).copied())
                .unwrap_or(0)
        };
        let (q, r) = (by.div_euclid(W as i64), by.rem_euclid(W as i64) as u32);
        // Output word k takes the bits of source words k − q (low part) and k − q − 1.
        let blocks = (0..src.len() as i64).map(|k| {
            let low = word(k - q) << r;
            if r == 0 {
                low
            } else {
                low | word(k - q - 1) >> (W as u32 - r)
            }
        });
        Some(NodeSet {
            bits: FixedBitSet::with_capacity_and_blocks(n, blocks),
        })
    }

    /// `self ∪ other`.
    pub fn union(&self, other: &NodeSet) -> NodeSet {
        let mut bits = self.bits.clone();
        bits.union_with(&other.bits);
        NodeSet { bits }
    }

    /// `self ∖ other`.
    pub fn difference(&self, other: &NodeSet) -> NodeSet {
        let mut bits = self.bits.clone();
        bits.difference_with(&other.bits);
        NodeSet { bits }
    }

    /// `|self ∖ other|`, without building the set.
    pub fn difference_len(&self, other: &NodeSet) -> usize {
        self.bits.difference_count(&other.bits)
    }

    /// `self ∩ other`.
    pub fn intersection(&self, other: &NodeSet) -> NodeSet {
        let mut bits = self.bits.clone();
        bits.intersect_with(&other.bits);
        NodeSet { bits }
    }

    /// Adds every node of `other`.
    pub fn union_with(&mut self, other: &NodeSet) {
        self.bits.union_with(&other.bits);
    }

    /// Whether the sets share no node.
    pub fn is_disjoint(&self, other: &NodeSet) -> bool {
        self.bits.is_disjoint(&other.bits)
    }

    /// Whether every node of `self` is in `other`.
    pub fn is_subset(&self, other: &NodeSet) -> bool {
        self.bits.is_subset(&other.bits)
    }
}

impl Serialize for NodeSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Repr {
            capacity: usize,
            nodes: Vec<u32>,
        }
        Repr {
            capacity: self.capacity(),
            nodes: self.iter().map(|n| n.0).collect(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for NodeSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Repr {
            capacity: usize,
            nodes: Vec<u32>,
        }
        let r = Repr::deserialize(d)?;
        if let Some(bad) = r.nodes.iter().find(|&&n| n as usize >= r.capacity) {
            return Err(serde::de::Error::custom(format!(
                "node {bad} out of range for a graph of {} nodes",
                r.capacity
            )));
        }
        Ok(NodeSet::from_ids(
            r.capacity,
            r.nodes.into_iter().map(NodeId),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn set_algebra_matches_btreeset(a in proptest::collection::btree_set(0u32..100, 0..40),
                                        b in proptest::collection::btree_set(0u32..100, 0..40)) {
            let sa = NodeSet::from_ids(100, a.iter().map(|&i| NodeId(i)));
            let sb = NodeSet::from_ids(100, b.iter().map(|&i| NodeId(i)));
            let ids = |s: &NodeSet| s.iter().map(|n| n.0).collect::<Vec<_>>();
            prop_assert_eq!(ids(&sa.union(&sb)), a.union(&b).copied().collect::<Vec<_>>());
            prop_assert_eq!(ids(&sa.difference(&sb)), a.difference(&b).copied().collect::<Vec<_>>());
            prop_assert_eq!(ids(&sa.intersection(&sb)), a.intersection(&b).copied().collect::<Vec<_>>());
            prop_assert_eq!(sa.len(), a.len());
            prop_assert_eq!(sa.is_disjoint(&sb), a.is_disjoint(&b));
            prop_assert_eq!(sa.first().map(|n| n.0), a.first().copied());
            let json = serde_json::to_string(&sa).unwrap();
            prop_assert_eq!(serde_json::from_str::<NodeSet>(&json).unwrap(), sa);
        }

        #[test]
        fn a_shift_moves_every_node_or_refuses(a in proptest::collection::btree_set(0u32..150, 0..40),
                                                by in -160i64..160) {
            let sa = NodeSet::from_ids(150, a.iter().map(|&i| NodeId(i)));
            let moved: Vec<i64> = a.iter().map(|&i| i64::from(i) + by).collect();
            let expected = moved
                .iter()
                .all(|&i| (0..150).contains(&i))
                .then(|| NodeSet::from_ids(150, moved.iter().map(|&i| NodeId(i as u32))));
            prop_assert_eq!(sa.shifted(by), expected);
        }
    }

    #[test]
    fn insert_remove() {
        let mut s = NodeSet::new(10);
        assert!(!s.is_singleton());
        assert!(s.insert(NodeId(3)));
        assert!(s.is_singleton());
        assert!(!s.insert(NodeId(3)));
        assert!(s.contains(NodeId(3)));
        s.insert(NodeId(9));
        assert!(!s.is_singleton());
        s.remove(NodeId(9));
        assert!(s.remove(NodeId(3)));
        assert!(s.is_empty());
        assert_eq!(NodeSet::full(10).len(), 10);
        assert!(serde_json::from_str::<NodeSet>(r#"{"capacity":2,"nodes":[5]}"#).is_err());
    }
}
