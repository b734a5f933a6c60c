//! Typed ids: a node is a [`NodeId`], a graph input an [`InputId`], never a bare `usize`.

use petgraph::graph::NodeIndex;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A node of a [`Graph`](crate::Graph). Ids are dense, start at 0 and follow a topological
/// order: every node's producers have smaller ids.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id as an index into dense per-node tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl From<NodeIndex> for NodeId {
    fn from(i: NodeIndex) -> Self {
        NodeId(i.index() as u32)
    }
}

impl From<NodeId> for NodeIndex {
    fn from(i: NodeId) -> Self {
        NodeIndex::new(i.index())
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// A graph input (the model's image, typically). Inputs are tensors, not nodes: they belong to
/// no group, and groups read them from DRAM.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct InputId(pub u32);

impl InputId {
    /// The id as an index into [`Graph::inputs`](crate::Graph::inputs).
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Where a node's input port reads from: another node's output, or a graph input.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Source {
    /// The one output tensor of a node.
    Node(NodeId),
    /// A graph input.
    Input(InputId),
}

impl Source {
    /// The producing node, if the source is a node.
    pub fn node(self) -> Option<NodeId> {
        match self {
            Source::Node(n) => Some(n),
            Source::Input(_) => None,
        }
    }
}
