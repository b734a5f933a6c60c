//! Repeated structure: nodes alike up to a shift of their ids, so that what is worked out for
//! one block of a network serves its repeats.
//!
//! ## Design
//!
//! Networks repeat blocks: ResNet-152 has 36 identical bottlenecks in its third stage, a
//! transformer one layer per depth. Builders and exporters emit a block's nodes in the same
//! order every time, so a repeated block is the same run of nodes at another id offset `d`.
//! [`Classes`] gives each node a class (op, shape, weights, rows and the row read of each
//! port: everything a cost model reads of a node on its own), and says whether a set of nodes
//! is another set moved by `d`, node for node alike in what it reads and feeds
//! ([`Classes::shifted`]). Two users:
//!
//! - the exact optimiser reuses a group's answer for each shift of it (`optimal/shift.rs`),
//!   since such groups cost the same under every model;
//! - [`Motifs::offsets`] lists the twins of a window of the graph, onto which
//!   [`Mutation::Repeat`](crate::mutate::Mutation::Repeat) copies the window's groups: a
//!   grouping found for one block is tried on its repeats.

use crate::problem::Problem;
use fuselage_cost::FxHasher;
use fuselage_ir::{NodeId, NodeSet, Source};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// Each node's class: nodes of one class are alike in everything `alike` (in `optimal/shift.rs`) compares of a
/// node on its own (op, shape, weights, multiply–accumulates, graph output, unfusable, rows,
/// row elements, row axis, the row read of every port). With it, a group whose every node
/// reads and feeds exactly the shifts of what its shift's node does is recognised by a
/// subset test of a few words ([`Classes::shifted`]), without `alike`'s comparisons.
pub(crate) struct Classes {
    class: Vec<u32>,
    /// Per node, the class of its tensor's geometry alone (shape, rows, row elements, row
    /// axis): what a group that reads it from outside depends on.
    geometry: Vec<u32>,
    /// Per shift `d` (at `d + n`), the nodes `w` whose node `w − d` is alike them on its
    /// own and in what it reads and feeds ([`Classes::shifted`]), made when first asked.
    tables: Vec<std::sync::OnceLock<NodeSet>>,
}

/// What a node's class is made of.
type Local = (
    fuselage_ir::Op,
    fuselage_ir::TensorShape,
    u64,
    u64,
    bool,
    bool,
    Geometry,
    Vec<fuselage_ir::RowRead>,
);

/// Rows, row elements and row axis of a tensor.
type Geometry = (u64, u64, Option<usize>);

impl Classes {
    /// The classes of `p`'s graph: O(ports) hashed tuples.
    pub(crate) fn of(p: &Problem<'_>) -> Classes {
        let g = p.graph();
        let mut ids: FxMap<Local, u32> = FxMap::default();
        let mut shapes: FxMap<(&fuselage_ir::TensorShape, Geometry), u32> = FxMap::default();
        let mut geometry = Vec::with_capacity(g.len());
        let class = g
            .node_ids()
            .map(|v| {
                let node = g.node(v);
                let s = Source::Node(v);
                let rows = (g.rows_of(s), g.row_elements(s), g.row_axis(s));
                let next = shapes.len() as u32;
                geometry.push(*shapes.entry((&node.shape, rows)).or_insert(next));
                let local: Local = (
                    node.op.clone(),
                    node.shape.clone(),
                    node.weights,
                    g.node_macs(v),
                    g.is_output(v),
                    p.unfusable().contains(v),
                    rows,
                    (0..node.inputs.len()).map(|i| g.row_read(v, i)).collect(),
                );
                let next = ids.len() as u32;
                *ids.entry(local).or_insert(next)
            })
            .collect();
        let tables = (0..=2 * g.len())
            .map(|_| std::sync::OnceLock::new())
            .collect();
        Classes {
            class,
            geometry,
            tables,
        }
    }

    /// A hash of the classes of `group`'s nodes, in order: what tells apart groups of one
    /// form but unlike nodes, before they are compared.
    pub(crate) fn signature(&self, group: &NodeSet) -> u64 {
        use std::hash::Hasher;
        let mut h = fuselage_cost::FxHasher::default();
        for v in group.iter() {
            h.write_u32(self.class[v.index()]);
        }
        h.finish()
    }

    /// Whether the node `v` and `v + d` are of one class, read exactly the shifts of each
    /// other's inputs (a node's by `d`, of one geometry; a graph input the same) and feed
    /// exactly the shifts of each other's consumers, port for port.
    fn local(&self, p: &Problem<'_>, v: NodeId, d: i64) -> bool {
        let g = p.graph();
        let n = self.class.len() as i64;
        let at = |v: NodeId| {
            let w = i64::from(v.0) + d;
            (0..n).contains(&w).then_some(NodeId(w as u32))
        };
        let Some(w) = at(v).filter(|&w| self.class[v.index()] == self.class[w.index()]) else {
            return false;
        };
        let (x, y) = (&g.node(v).inputs, &g.node(w).inputs);
        let inputs = x.len() == y.len()
            && x.iter().zip(y).all(|(&s, &t)| match (s, t) {
                (Source::Node(u), Source::Node(u2)) => {
                    at(u) == Some(u2) && self.geometry[u.index()] == self.geometry[u2.index()]
                }
                (Source::Input(i), Source::Input(j)) => i == j,
                _ => false,
            });
        let (cv, cw) = (g.consumers(v), g.consumers(w));
        inputs
            && cv.len() == cw.len()
            && cv
                .iter()
                .zip(cw)
                .all(|(&(c, port), &(c2, port2))| at(c) == Some(c2) && port == port2)
    }

    /// Whether every node `w` of `b` and `w − d` are [alike on their own](Self::local). Then
    /// `b` and `b − d` are alike (`optimal/shift.rs`): what a member reads from outside `b − d` its shift
    /// reads from outside `b`, one tensor for one, of equal shape and rows; consumers inside
    /// and outside correspond. `false` says nothing (the two may still be alike).
    ///
    /// Complexity: a subset test of `n / 64` words, once the table of `d` is made (O(ports
    /// and consumers of the graph), once per `d`).
    pub(crate) fn shifted(&self, p: &Problem<'_>, b: &NodeSet, d: i64) -> bool {
        let n = self.class.len();
        let Some(slot) = d
            .checked_add(n as i64)
            .and_then(|k| usize::try_from(k).ok())
            .and_then(|k| self.tables.get(k))
        else {
            return false;
        };
        let table = slot.get_or_init(|| {
            let ids = (0..n as i64)
                .filter(|&w| (0..n as i64).contains(&(w - d)))
                .filter(|&w| self.local(p, NodeId((w - d) as u32), d))
                .map(|w| NodeId(w as u32));
            NodeSet::from_ids(n, ids)
        });
        b.is_subset(table)
    }
}

/// The twins of windows of one problem's graph (see the module docs).
pub struct Motifs {
    classes: Classes,
    /// The nodes of each class, in id order.
    members: FxMap<u32, Vec<u32>>,
}

impl Motifs {
    /// The classes of `p`'s graph, and the nodes of each.
    pub fn new(p: &Problem<'_>) -> Self {
        let classes = Classes::of(p);
        let mut members: FxMap<u32, Vec<u32>> = FxMap::default();
        for (v, &c) in classes.class.iter().enumerate() {
            members.entry(c).or_default().push(v as u32);
        }
        Motifs { classes, members }
    }

    /// Every offset `d ≠ 0` at which `window`, moved by `d`, is a twin of it: each node
    /// `v + d` alike `v` in itself and in what it reads and feeds ([`Classes::shifted`]).
    /// In increasing order; empty for an empty window.
    pub fn offsets(&self, p: &Problem<'_>, window: &[NodeId]) -> Vec<i64> {
        let Some(&first) = window.first() else {
            return Vec::new();
        };
        let n = self.classes.class.len();
        let set = NodeSet::from_ids(n, window.iter().copied());
        self.members
            .get(&self.classes.class[first.index()])
            .into_iter()
            .flatten()
            .map(|&u| i64::from(u) - i64::from(first.0))
            .filter(|&d| d != 0)
            .filter(|&d| {
                set.shifted(d)
                    .is_some_and(|twin| self.classes.shifted(p, &twin, d))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuselage_cost::{CostConfig, Lbdf};
    use fuselage_split::RandomSplitter;

    /// ResNet-50's third stage repeats one bottleneck five times after its first: block 2's
    /// nodes are block 1's shifted, and blocks 1–4 are twins of each other. Block 5 is not:
    /// its output feeds the next stage's first block, read by its first conv and by its
    /// downsampling branch, where block 1's feeds one block like itself. The stem's first
    /// nodes recur nowhere.
    #[test]
    fn a_repeated_block_is_found_at_its_offset() {
        let g = fuselage_zoo::build("resnet50").unwrap();
        let model = Lbdf::new(CostConfig::kib(256).unwrap());
        let splitter = RandomSplitter::new(&model);
        let p = Problem::new(&g, &model, &splitter).unwrap();
        let m = Motifs::new(&p);
        let block = |b: usize| -> Vec<NodeId> {
            let prefix = format!("/layer3/layer3.{b}/");
            g.node_ids()
                .filter(|&v| g.node(v).name.starts_with(&prefix))
                .collect()
        };
        let (b1, b2) = (block(1), block(2));
        assert_eq!(b1.len(), b2.len());
        let d = i64::from(b2[0].0) - i64::from(b1[0].0);
        let offsets = m.offsets(&p, &b1);
        assert_eq!(offsets, vec![d, 2 * d, 3 * d]);
        let stem: Vec<NodeId> = g.node_ids().take(3).collect();
        assert!(m.offsets(&p, &stem).is_empty());
    }
}
