//! [`PlanGraph`]: the graph of groups of a plan, built once and asked everything.
//!
//! A plan runs its groups one after another, so the groups must form a DAG: an edge `A → B`
//! when a node of `B` reads the tensor of a node of `A`. The plan check, every search and every
//! mutation ask about that graph: which group owns a node, whether the groups are acyclic, which
//! cycle they form, in which order they can run. This module answers all of them from one
//! structure, [`PlanGraph`], with typed [`GroupId`]s.
//!
//! ## Design
//!
//! - **The owner table** ([`PlanGraph::owners`]) is one flat `GroupId` per node. A node in no
//!   group holds [`GroupId::NONE`] (or any id past the last group); a node in two groups belongs
//!   to the first. [`Graph::check_plan`] reports both cases as errors before it looks at the
//!   graph of groups; here they are tolerated: an edge with an end in no group is left out.
//! - **The edges** are deduplicated and stored in compressed rows (one offset per group, one
//!   target per edge). Construction collects the edges between groups in node order, sorts
//!   them by source group with a stable counting sort and deduplicates each row with one mark
//!   per group: `O(V + E + groups)`, no hashing, no comparison sort, four flat allocations. A
//!   search builds one per candidate edit, so this is the hot path; the predecessor rows are
//!   built only when first asked for.
//! - **The order of successors** is the order in which petgraph's `DiGraph` would list them had
//!   the edges been added in node order (the last group found first). The searches built such a
//!   `DiGraph` before this type existed; keeping its order keeps every result of
//!   [`PlanGraph::cyclic_component`] and [`PlanGraph::cycle`], and so every plan a search
//!   returns, unchanged.
//! - **petgraph's visit traits** are implemented for `&PlanGraph` ([`GraphBase`],
//!   [`IntoNeighbors`], [`IntoNeighborsDirected`], [`IntoNodeIdentifiers`], [`NodeIndexable`],
//!   [`NodeCount`], [`EdgeCount`], [`Visitable`], ...), so petgraph's algorithms
//!   (`toposort`, `tarjan_scc`, `has_path_connecting`, `Dfs`) run on it directly.

use crate::graph::Graph;
use crate::id::NodeId;
use crate::nodeset::NodeSet;
use fixedbitset::FixedBitSet;
use petgraph::visit::{
    EdgeCount, GraphBase, GraphProp, IntoNeighbors, IntoNeighborsDirected, IntoNodeIdentifiers,
    NodeCompactIndexable, NodeCount, NodeIndexable, VisitMap, Visitable,
};
use petgraph::{Directed, Direction};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;
use std::sync::OnceLock;

/// A group of a plan: its index in [`Plan::groups`](crate::Plan::groups) (or in the slice of groups a
/// [`PlanGraph`] was built from).
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct GroupId(pub u32);

impl GroupId {
    /// The owner of a node that no group holds, in an owner table ([`PlanGraph::owners`]).
    /// Never a group of a plan.
    pub const NONE: GroupId = GroupId(u32::MAX);

    /// The id as an index into [`Plan::groups`](crate::Plan::groups) and dense per-group tables.
    #[inline]
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for GroupId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "g{}", self.0)
    }
}

/// Compressed rows: the row of group `x` is `items[start[x]..start[x + 1]]`.
#[derive(Clone, Debug, Default)]
struct Rows {
    start: Vec<u32>,
    items: Vec<GroupId>,
}

impl Rows {
    #[inline]
    fn row(&self, x: GroupId) -> &[GroupId] {
        let i = x.index();
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// The graph of groups of a plan: an edge `A → B` when a node of group `B` reads the output
/// of a node of group `A` (`A ≠ B`), each such pair once.
///
/// Build it with [`PlanGraph::new`] (from groups), [`Plan::graph`](crate::Plan::graph) or
/// [`PlanGraph::from_owners`] (from an owner table, as the search mutations do after
/// relabelling one). See the [module docs](crate::plan_graph) for the representation and
/// for what happens to nodes in no group or in two.
///
/// # Example
/// ```
/// use fuselage_ir::{ConvAttrs, GraphBuilder, GroupId, Op, Plan, PlanGraph, TensorShape};
/// // c1 -> r1 -> c2 -> add <- c1 (a residual block).
/// let mut b = GraphBuilder::new("residual");
/// let x = b.input("input", TensorShape::nchw(8, 16, 16))?;
/// let c1 = b.node("c1", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[x])?;
/// let r1 = b.node("r1", Op::Relu, &[c1])?;
/// let c2 = b.node("c2", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[r1])?;
/// b.node("add", Op::Add, &[c2, c1])?;
/// let g = b.finish()?;
/// // {c1, add} and {r1, c2}: c1 -> r1 and c2 -> add make a cycle of two groups.
/// let plan = Plan::new(vec![g.set_of(&["c1", "add"])?, g.set_of(&["r1", "c2"])?]);
/// let pg = plan.graph(&g);
/// assert_eq!(pg.owner(g.require("c2")?), Some(GroupId(1)));
/// assert!(!pg.is_acyclic());
/// assert_eq!(pg.cycle(), Some(vec![GroupId(0), GroupId(1), GroupId(0)]));
/// // petgraph's algorithms run on it directly.
/// assert!(petgraph::algo::toposort(&pg, None).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct PlanGraph {
    owner: Vec<GroupId>,
    groups: usize,
    succ: Rows,
    pred: OnceLock<Rows>,
}

impl PlanGraph {
    /// For each node of a graph of `nodes` nodes, the first group of `groups` that holds it,
    /// or [`GroupId::NONE`] where none does.
    ///
    /// This is the one owner computation of the workspace: [`PlanGraph::new`] starts from it,
    /// and the search mutations relabel a copy of it before
    /// [`from_owners`](Self::from_owners).
    ///
    /// # Complexity
    /// `O(groups · V / 64 + V)`: one pass over each group's bitset.
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{GroupId, NodeId, NodeSet, PlanGraph};
    /// let groups = [
    ///     NodeSet::from_ids(4, [NodeId(0), NodeId(2)]),
    ///     NodeSet::from_ids(4, [NodeId(2), NodeId(3)]),
    /// ];
    /// let owner = PlanGraph::owners(4, &groups);
    /// // Node 2 is in both groups: the first wins. Node 1 is in none.
    /// assert_eq!(owner, [GroupId(0), GroupId::NONE, GroupId(0), GroupId(1)]);
    /// ```
    pub fn owners(nodes: usize, groups: &[NodeSet]) -> Vec<GroupId> {
        let mut owner = vec![GroupId::NONE; nodes];
        // Last group first, so that the first group holding a node writes last.
        for (gi, grp) in groups.iter().enumerate().rev() {
            for v in grp.iter() {
                if let Some(o) = owner.get_mut(v.index()) {
                    *o = GroupId(gi as u32);
                }
            }
        }
        owner
    }

    /// The graph of `groups`, a list of sets of `g`'s nodes (normally a partition).
    ///
    /// # Arguments
    /// - `g`: the graph;
    /// - `groups`: the groups; group `i` is `GroupId(i)`.
    ///
    /// # Returns
    /// The graph of groups. A node in no group has no owner and its edges are left out; a node
    /// in two groups belongs to the first ([`owners`](Self::owners)).
    ///
    /// # Complexity
    /// `O(V + E + groups)` after the owner table, `O(groups · V / 64 + V)`.
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{ConvAttrs, GraphBuilder, GroupId, Op, PlanGraph, TensorShape};
    /// let mut b = GraphBuilder::new("chain");
    /// let x = b.input("input", TensorShape::nchw(3, 8, 8))?;
    /// let c = b.node("c", Op::Conv(ConvAttrs::square(4, 3, 1, 1, 1)), &[x])?;
    /// let r = b.node("r", Op::Relu, &[c])?;
    /// b.node("s", Op::Sigmoid, &[r])?;
    /// let g = b.finish()?;
    /// let pg = PlanGraph::new(&g, &[g.set_of(&["r", "s"])?, g.set_of(&["c"])?]);
    /// assert_eq!((pg.group_count(), pg.edge_count()), (2, 1));
    /// assert_eq!(pg.successors(GroupId(1)), &[GroupId(0)]);
    /// assert_eq!(pg.topological_order(), Some(vec![GroupId(1), GroupId(0)]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(g: &Graph, groups: &[NodeSet]) -> Self {
        PlanGraph::from_owners(g, PlanGraph::owners(g.len(), groups), groups.len())
    }

    /// The graph of `groups` groups given by an owner table: node `v` is in group `owner[v]`.
    ///
    /// # Arguments
    /// - `g`: the graph;
    /// - `owner`: a group per node, as [`owners`](Self::owners) returns; an id at or past
    ///   `groups` (such as [`GroupId::NONE`]) means no group, and so do missing entries (a
    ///   table longer than the graph is cut to it);
    /// - `groups`: the number of groups; ids no node has are groups without edges.
    ///
    /// # Returns
    /// The graph of groups, which keeps `owner` as its owner table.
    ///
    /// # Complexity
    /// `O(V + E + groups)`: one pass over the edges, a stable counting sort of those between
    /// two groups by source group, and a deduplication with one mark per group. No hashing
    /// and no comparison sort; four flat allocations.
    pub fn from_owners(g: &Graph, mut owner: Vec<GroupId>, groups: usize) -> Self {
        owner.resize(g.len(), GroupId::NONE);
        let in_range = |o: GroupId| o.index() < groups;
        // The edges between two groups in node order, as `source << 32 | target`.
        let mut crossing: Vec<u64> = Vec::with_capacity(g.edge_count());
        for (v, &a) in owner.iter().enumerate() {
            if in_range(a) {
                for &(c, _) in g.consumers(NodeId(v as u32)) {
                    let b = owner[c.index()];
                    if b != a && in_range(b) {
                        crossing.push((u64::from(a.0) << 32) | u64::from(b.0));
                    }
                }
            }
        }
        // A stable counting sort by source: row x holds x's targets in node order, repeats
        // included, and ends where its cursor start[x] stops.
        let mut start = vec![0u32; groups + 1];
        for &e in &crossing {
            start[(e >> 32) as usize + 1] += 1;
        }
        for x in 0..groups {
            start[x + 1] += start[x];
        }
        let mut items = vec![GroupId::NONE; crossing.len()];
        for &e in &crossing {
            let at = &mut start[(e >> 32) as usize];
            items[*at as usize] = GroupId(e as u32);
            *at += 1;
        }
        drop(crossing);
        // Each row deduplicated in place (one mark per group) and reversed into the order
        // petgraph's DiGraph lists neighbours: the last new edge first.
        let mut mark = vec![GroupId::NONE; groups];
        let (mut kept, mut raw) = (0usize, 0usize);
        for x in 0..groups {
            let (a, raw_end) = (GroupId(x as u32), start[x] as usize);
            start[x] = kept as u32;
            for i in raw..raw_end {
                let b = items[i];
                if mark[b.index()] != a {
                    mark[b.index()] = a;
                    items[kept] = b;
                    kept += 1;
                }
            }
            items[start[x] as usize..kept].reverse();
            raw = raw_end;
        }
        start[groups] = kept as u32;
        items.truncate(kept);
        PlanGraph {
            owner,
            groups,
            succ: Rows { start, items },
            pred: OnceLock::new(),
        }
    }

    /// The group of node `v`, or `None` when no group holds it (or `v` is not a node of the
    /// graph).
    #[inline]
    pub fn owner(&self, v: NodeId) -> Option<GroupId> {
        self.owner
            .get(v.index())
            .copied()
            .filter(|o| o.index() < self.groups)
    }

    /// Number of groups (those without nodes included).
    pub fn group_count(&self) -> usize {
        self.groups
    }

    /// Number of edges between groups, each ordered pair once.
    pub fn edge_count(&self) -> usize {
        self.succ.items.len()
    }

    /// The groups, in id order.
    pub fn group_ids(&self) -> impl DoubleEndedIterator<Item = GroupId> + ExactSizeIterator {
        (0..self.groups as u32).map(GroupId)
    }

    /// The groups that read a tensor of `x`, each once (in petgraph's `DiGraph` order: see the
    /// [module docs](crate::plan_graph)).
    ///
    /// # Panics
    /// If `x` is not a group of this graph.
    pub fn successors(&self, x: GroupId) -> &[GroupId] {
        self.succ.row(x)
    }

    /// The groups whose tensors `x` reads, each once, by increasing id. The first call builds
    /// the predecessor rows (`O(groups + E)`); later calls are free.
    ///
    /// # Panics
    /// If `x` is not a group of this graph.
    pub fn predecessors(&self, x: GroupId) -> &[GroupId] {
        self.pred
            .get_or_init(|| {
                let mut start = vec![0u32; self.groups + 1];
                for &b in &self.succ.items {
                    start[b.index() + 1] += 1;
                }
                for y in 0..self.groups {
                    start[y + 1] += start[y];
                }
                let mut at = start.clone();
                let mut items = vec![GroupId(0); self.succ.items.len()];
                for a in self.group_ids() {
                    for &b in self.succ.row(a) {
                        items[at[b.index()] as usize] = a;
                        at[b.index()] += 1;
                    }
                }
                Rows { start, items }
            })
            .row(x)
    }

    /// Every edge `(from, to)`, by source group.
    pub fn edges(&self) -> impl Iterator<Item = (GroupId, GroupId)> + '_ {
        self.group_ids()
            .flat_map(move |a| self.successors(a).iter().map(move |&b| (a, b)))
    }

    /// Whether the graph of groups is acyclic, so that the groups can run one after another.
    ///
    /// # Complexity
    /// `O(groups + E)`, Kahn's algorithm with two flat allocations. Searches call it once per
    /// candidate plan.
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{GraphBuilder, Op, Plan, PlanGraph, TensorShape};
    /// let mut b = GraphBuilder::new("chain");
    /// let x = b.input("input", TensorShape::nchw(3, 8, 8))?;
    /// let r = b.node("r", Op::Relu, &[x])?;
    /// let s = b.node("s", Op::Sigmoid, &[r])?;
    /// b.node("t", Op::Relu, &[s])?;
    /// let g = b.finish()?;
    /// assert!(Plan::singletons(&g).graph(&g).is_acyclic());
    /// // {r, t} around {s}: r -> s -> t leaves the group and comes back.
    /// let around = [g.set_of(&["r", "t"])?, g.set_of(&["s"])?];
    /// assert!(!PlanGraph::new(&g, &around).is_acyclic());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_acyclic(&self) -> bool {
        let mut indeg = self.in_degrees();
        let mut ready: Vec<GroupId> = self.group_ids().filter(|x| indeg[x.index()] == 0).collect();
        let mut seen = 0;
        while let Some(x) = ready.pop() {
            seen += 1;
            for &y in self.successors(x) {
                indeg[y.index()] -= 1;
                if indeg[y.index()] == 0 {
                    ready.push(y);
                }
            }
        }
        seen == self.groups
    }

    fn in_degrees(&self) -> Vec<u32> {
        let mut indeg = vec![0u32; self.groups];
        for &y in &self.succ.items {
            indeg[y.index()] += 1;
        }
        indeg
    }

    /// An order in which the groups can run: every group after the groups it reads from, and
    /// among the groups ready at a step, the smallest id first (so the order is a function of
    /// the graph alone).
    ///
    /// # Returns
    /// The order, or `None` when the graph of groups is cyclic ([`cycle`](Self::cycle) says
    /// where).
    ///
    /// # Complexity
    /// `O(E + groups · log groups)`: Kahn's algorithm with a binary heap of ready groups.
    pub fn topological_order(&self) -> Option<Vec<GroupId>> {
        let mut indeg = self.in_degrees();
        let mut ready: BinaryHeap<Reverse<GroupId>> = self
            .group_ids()
            .filter(|x| indeg[x.index()] == 0)
            .map(Reverse)
            .collect();
        let mut order = Vec::with_capacity(self.groups);
        while let Some(Reverse(x)) = ready.pop() {
            order.push(x);
            for &y in self.successors(x) {
                indeg[y.index()] -= 1;
                if indeg[y.index()] == 0 {
                    ready.push(Reverse(y));
                }
            }
        }
        (order.len() == self.groups).then_some(order)
    }

    /// The groups of a strongly connected component of more than one group, if the graph of
    /// groups has a cycle: the first such component petgraph's `tarjan_scc` reports (in the
    /// order of the component's discovery, not sorted).
    ///
    /// # Complexity
    /// `O(groups + E)` when acyclic (one [`is_acyclic`](Self::is_acyclic)); one `tarjan_scc`
    /// more when not.
    pub fn cyclic_component(&self) -> Option<Vec<GroupId>> {
        if self.is_acyclic() {
            return None;
        }
        petgraph::algo::tarjan_scc(self)
            .into_iter()
            .find(|c| c.len() > 1)
    }

    /// A cycle of groups, if there is one: the smallest group of
    /// [`cyclic_component`](Self::cyclic_component), then the groups of a shortest path back
    /// to it inside the component, and the first group again at the end.
    ///
    /// # Complexity
    /// `O(groups + E)`.
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{GraphBuilder, GroupId, Op, PlanGraph, TensorShape};
    /// let mut b = GraphBuilder::new("chain");
    /// let x = b.input("input", TensorShape::nchw(3, 8, 8))?;
    /// let r = b.node("r", Op::Relu, &[x])?;
    /// let s = b.node("s", Op::Sigmoid, &[r])?;
    /// b.node("t", Op::Relu, &[s])?;
    /// let g = b.finish()?;
    /// let pg = PlanGraph::new(&g, &[g.set_of(&["s"])?, g.set_of(&["r", "t"])?]);
    /// assert_eq!(pg.cycle(), Some(vec![GroupId(0), GroupId(1), GroupId(0)]));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cycle(&self) -> Option<Vec<GroupId>> {
        let scc = self.cyclic_component()?;
        let start = *scc.iter().min()?;
        let mut inside = FixedBitSet::with_capacity(self.groups);
        for &x in &scc {
            inside.insert(x.index());
        }
        // Breadth first from `start` inside the component, until an edge leads back to it.
        let mut parent = vec![GroupId::NONE; self.groups];
        let mut queue = VecDeque::from([start]);
        while let Some(v) = queue.pop_front() {
            for &w in self.successors(v) {
                if w == start {
                    // start, ..., parent(v), v, then start again.
                    let mut back = Vec::new();
                    let mut cur = v;
                    while cur != start && cur != GroupId::NONE {
                        back.push(cur);
                        cur = parent[cur.index()];
                    }
                    back.push(start);
                    back.reverse();
                    back.push(start);
                    return Some(back);
                }
                if inside.contains(w.index()) && parent[w.index()] == GroupId::NONE {
                    parent[w.index()] = v;
                    queue.push_back(w);
                }
            }
        }
        // Unreachable: every group of a component reaches every other.
        Some(scc)
    }
}

// petgraph's visit traits, so that its algorithms run on a `&PlanGraph`.

impl GraphBase for PlanGraph {
    type NodeId = GroupId;
    type EdgeId = (GroupId, GroupId);
}

impl GraphProp for PlanGraph {
    type EdgeType = Directed;
}

impl NodeCount for PlanGraph {
    fn node_count(&self) -> usize {
        self.groups
    }
}

impl EdgeCount for PlanGraph {
    fn edge_count(&self) -> usize {
        self.succ.items.len()
    }
}

impl NodeIndexable for PlanGraph {
    fn node_bound(&self) -> usize {
        self.groups
    }

    fn to_index(&self, a: GroupId) -> usize {
        a.index()
    }

    fn from_index(&self, i: usize) -> GroupId {
        GroupId(i as u32)
    }
}

impl NodeCompactIndexable for PlanGraph {}

impl<'a> IntoNeighbors for &'a PlanGraph {
    type Neighbors = std::iter::Copied<std::slice::Iter<'a, GroupId>>;

    fn neighbors(self, a: GroupId) -> Self::Neighbors {
        self.successors(a).iter().copied()
    }
}

impl<'a> IntoNeighborsDirected for &'a PlanGraph {
    type NeighborsDirected = std::iter::Copied<std::slice::Iter<'a, GroupId>>;

    fn neighbors_directed(self, a: GroupId, d: Direction) -> Self::NeighborsDirected {
        match d {
            Direction::Outgoing => self.successors(a).iter().copied(),
            Direction::Incoming => self.predecessors(a).iter().copied(),
        }
    }
}

impl IntoNodeIdentifiers for &PlanGraph {
    type NodeIdentifiers = std::iter::Map<std::ops::Range<u32>, fn(u32) -> GroupId>;

    fn node_identifiers(self) -> Self::NodeIdentifiers {
        (0..self.groups as u32).map(GroupId as fn(u32) -> GroupId)
    }
}

impl Visitable for PlanGraph {
    type Map = FixedBitSet;

    fn visit_map(&self) -> FixedBitSet {
        FixedBitSet::with_capacity(self.groups)
    }

    fn reset_map(&self, map: &mut FixedBitSet) {
        map.clear();
        map.grow(self.groups);
    }
}

impl VisitMap<GroupId> for FixedBitSet {
    fn visit(&mut self, a: GroupId) -> bool {
        !self.put(a.index())
    }

    fn is_visited(&self, a: &GroupId) -> bool {
        self.contains(a.index())
    }

    fn unvisit(&mut self, a: GroupId) -> bool {
        let was = self.contains(a.index());
        self.set(a.index(), false);
        was
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GraphBuilder;
    use crate::graph::tests::residual;
    use crate::id::Source;
    use crate::op::Op;
    use crate::shape::TensorShape;
    use petgraph::graph::{DiGraph, NodeIndex};
    use proptest::prelude::*;

    fn set(g: &Graph, names: &[&str]) -> NodeSet {
        g.set_of(names).unwrap()
    }

    fn ids(xs: &[u32]) -> Vec<GroupId> {
        xs.iter().copied().map(GroupId).collect()
    }

    /// A random DAG of 1x4x4 tensors: node i is a Relu of one earlier tensor or an Add of
    /// two, picked by `steps`.
    fn random_dag(steps: &[(bool, u32, u32)]) -> Graph {
        let mut b = GraphBuilder::new("random");
        let mut ts: Vec<Source> = vec![b.input("input", TensorShape::nchw(1, 4, 4)).unwrap()];
        for (i, &(add, x, y)) in steps.iter().enumerate() {
            let a = ts[x as usize % ts.len()];
            let c = ts[y as usize % ts.len()];
            let t = if add && a != c {
                b.node(format!("n{i}"), Op::Add, &[a, c]).unwrap()
            } else {
                b.node(format!("n{i}"), Op::Relu, &[a]).unwrap()
            };
            ts.push(t);
        }
        b.finish().unwrap()
    }

    /// The reference: the graph of groups as a petgraph `DiGraph`, built edge by edge.
    fn reference(g: &Graph, owner: &[GroupId], groups: usize) -> DiGraph<(), ()> {
        let mut gg = DiGraph::new();
        for _ in 0..groups {
            gg.add_node(());
        }
        for v in g.node_ids() {
            for &(c, _) in g.consumers(v) {
                let (a, b) = (owner[v.index()], owner[c.index()]);
                if a != b && a.index() < groups && b.index() < groups {
                    gg.update_edge(NodeIndex::new(a.index()), NodeIndex::new(b.index()), ());
                }
            }
        }
        gg
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Random graphs and random owner tables (nodes in no group included): the edges,
        /// acyclicity, topological order, cycle and components agree with petgraph, both on a
        /// `DiGraph` built edge by edge and run on the `PlanGraph` itself.
        #[test]
        fn agrees_with_petgraph(
            steps in proptest::collection::vec((any::<bool>(), 0u32..1000, 0u32..1000), 1..40),
            labels in proptest::collection::vec(0u32..12, 40),
            groups in 1usize..10,
        ) {
            let g = random_dag(&steps);
            // Labels at or past `groups` mean no group.
            let owner: Vec<GroupId> = labels[..g.len()].iter().map(|&l| GroupId(l)).collect();
            let pg = PlanGraph::from_owners(&g, owner.clone(), groups);
            let gg = reference(&g, &owner, groups);
            prop_assert_eq!(pg.group_count(), gg.node_count());
            prop_assert_eq!(pg.edge_count(), gg.edge_count());
            for x in pg.group_ids() {
                // Same successors, in the same order (the order the searches depend on).
                let theirs: Vec<GroupId> = gg
                    .neighbors(NodeIndex::new(x.index()))
                    .map(|n| GroupId(n.index() as u32))
                    .collect();
                prop_assert_eq!(pg.successors(x), theirs.as_slice());
                let mut preds: Vec<GroupId> = gg
                    .neighbors_directed(NodeIndex::new(x.index()), Direction::Incoming)
                    .map(|n| GroupId(n.index() as u32))
                    .collect();
                preds.sort();
                prop_assert_eq!(pg.predecessors(x), preds.as_slice());
            }
            let acyclic = petgraph::algo::toposort(&gg, None).is_ok();
            prop_assert_eq!(pg.is_acyclic(), acyclic);
            prop_assert_eq!(petgraph::algo::toposort(&pg, None).is_ok(), acyclic);
            prop_assert_eq!(petgraph::algo::is_cyclic_directed(&pg), !acyclic);
            let sccs: Vec<Vec<GroupId>> = petgraph::algo::tarjan_scc(&gg)
                .into_iter()
                .map(|c| c.into_iter().map(|n| GroupId(n.index() as u32)).collect())
                .collect();
            prop_assert_eq!(&petgraph::algo::tarjan_scc(&pg), &sccs);
            match pg.topological_order() {
                Some(order) => {
                    prop_assert!(acyclic);
                    let mut pos = vec![0; groups];
                    for (i, x) in order.iter().enumerate() {
                        pos[x.index()] = i;
                    }
                    prop_assert_eq!(order.len(), groups);
                    prop_assert!(pg.edges().all(|(a, b)| pos[a.index()] < pos[b.index()]));
                    prop_assert_eq!(pg.cycle(), None);
                    prop_assert_eq!(pg.cyclic_component(), None);
                }
                None => {
                    prop_assert!(!acyclic);
                    let cycle = pg.cycle().unwrap();
                    prop_assert!(cycle.len() >= 3);
                    prop_assert_eq!(cycle.first(), cycle.last());
                    for w in cycle.windows(2) {
                        prop_assert!(pg.successors(w[0]).contains(&w[1]));
                    }
                    let first = sccs.iter().find(|c| c.len() > 1).unwrap();
                    prop_assert_eq!(pg.cyclic_component(), Some(first.clone()));
                    prop_assert_eq!(cycle[0], *first.iter().min().unwrap());
                }
            }
            for v in g.node_ids() {
                let o = owner[v.index()];
                prop_assert_eq!(pg.owner(v), (o.index() < groups).then_some(o));
            }
        }
    }

    #[test]
    fn owners_of_groups() {
        let g = residual();
        // c1 r1 c2 add r2: r1 in both groups (the first wins), r2 in none.
        let groups = [set(&g, &["c1", "r1"]), set(&g, &["r1", "c2", "add"])];
        let pg = PlanGraph::new(&g, &groups);
        let owner: Vec<Option<GroupId>> = g.node_ids().map(|v| pg.owner(v)).collect();
        assert_eq!(
            owner,
            [
                Some(GroupId(0)),
                Some(GroupId(0)),
                Some(GroupId(1)),
                Some(GroupId(1)),
                None
            ]
        );
        assert_eq!(pg.owner(NodeId(99)), None);
        // c1 -> add and r1 -> c2 are one edge 0 -> 1; add -> r2 has no group at its end.
        assert_eq!(pg.edges().collect::<Vec<_>>(), [(GroupId(0), GroupId(1))]);
        assert_eq!(pg.edge_count(), 1);
        assert!(pg.is_acyclic());
        assert_eq!(pg.topological_order(), Some(ids(&[0, 1])));
        // An empty plan of an empty table.
        let none = PlanGraph::from_owners(&g, Vec::new(), 0);
        assert!(none.is_acyclic() && none.edge_count() == 0 && none.owner(NodeId(0)).is_none());
        assert_eq!(none.topological_order(), Some(Vec::new()));
    }

    #[test]
    fn cycle_of_three_groups() {
        let g = residual();
        // {c2}, {c1, add}, {r1}, {r2}: c1 -> r1 -> c2 -> add is 1 -> 2 -> 0 -> 1.
        let groups = [
            set(&g, &["c2"]),
            set(&g, &["c1", "add"]),
            set(&g, &["r1"]),
            set(&g, &["r2"]),
        ];
        let pg = PlanGraph::new(&g, &groups);
        assert!(!pg.is_acyclic());
        assert_eq!(pg.topological_order(), None);
        assert_eq!(pg.cycle(), Some(ids(&[0, 1, 2, 0])));
        let mut scc = pg.cyclic_component().unwrap();
        scc.sort();
        assert_eq!(scc, ids(&[0, 1, 2]));
        assert_eq!(pg.successors(GroupId(1)), ids(&[3, 2]).as_slice());
        assert_eq!(pg.predecessors(GroupId(1)), ids(&[0]).as_slice());
        assert_eq!(pg.predecessors(GroupId(3)), ids(&[1]).as_slice());
        let err = petgraph::algo::toposort(&pg, None).unwrap_err();
        assert!(scc.contains(&err.node_id()));
    }

    #[test]
    fn group_id_display_and_serde() {
        assert_eq!(GroupId(7).to_string(), "g7");
        assert_eq!(GroupId(7).index(), 7);
        assert_eq!(serde_json::to_string(&GroupId(7)).unwrap(), "7");
        assert_eq!(serde_json::from_str::<GroupId>("7").unwrap(), GroupId(7));
    }
}
