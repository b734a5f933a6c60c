//! [`RestFloor`]: traffic the rest of a plan must move beyond the compulsory bound, with which
//! the exact optimiser ([`Optimal`](crate::Optimal)) prunes its down-set programme.
//!
//! [`remaining_lower_bound`](crate::remaining_lower_bound) counts what no plan of the rest
//! avoids: its weights once, the tensors it reads from the planned part, its graph outputs. On
//! wide graphs that leaves the optimum far above the bound, and a state that has already paid
//! a few cuts too many is not recognised as hopeless until late. Two more terms close most of
//! the distance, and both are sums over parts of the rest, so a state's floor is a sum over
//! what it has not covered:
//!
//! - **Weight rereads.** The cost model's [`TileFloor`] (BRR): every valid group holding a
//!   node whose weights never fit streams them at least `T_v` times, so the rest reads them
//!   `(T_v − 1)·w_v` bytes again. On Llama 3.2 1B under BRR at 128 KiB this is 94.917 GB of
//!   the 101.312 GB optimum, where the compulsory bound is 1.259 GB.
//! - **Cuts.** Take nodes `u` and `w`, `w` a descendant of `u`. A convex group holding both
//!   holds every path between them: their *span* `{u} ∪ (desc(u) ∩ anc(w)) ∪ {w}`. So either
//!   every path from `u` to `w` crosses from one group to another, and the tensor it crosses
//!   on is written once and read at least once: at least the *minimum vertex cut* separating
//!   `u` from `w` in the span, a node costing twice its output's bytes (once for a graph
//!   output, whose write the compulsory bound counts); or one group holds the span, and pays
//!   its [tile excess](TileFloor::excess_of) on the span's nodes. A span pays the smaller of
//!   the two, and the cut alone when no admissible group can hold it (its
//!   [buffer floor](fuselage_cost::CostModel::buffer_floor) does not fit, or it has more nodes
//!   than the family's largest group).
//!
//! The spans considered are every edge's, and those between *bottlenecks* (nodes every path
//! from a source to a sink passes through) up to the first that no group can hold. They are
//! taken largest first while their nodes other than the last are disjoint, so that no tensor
//! and no weight is counted twice; a state pays the spans whose first node it has not covered
//! (then it has covered none of the span, being closed under predecessors).
//!
//! Neither term is counted by the other or by the compulsory bound: rereads and excess are
//! weight bytes beyond the first read, cuts are writes and reads of tensors produced in the
//! rest. Both hold for every plan of the down-set programme's family (groups of at most
//! `max_group` nodes), which is what pruning against the best order plan needs.
//!
//! [`RestFloor::step`] and [`RestFloor::excess`] bound one step of the programme the same way,
//! before its group is costed.

use crate::error::Result;
use crate::problem::Problem;
use fuselage_cost::TileFloor;
use fuselage_ir::{Graph, NodeId, NodeSet, Source};
use std::collections::VecDeque;
use std::time::Instant;

/// What the rest of a plan must move beyond the compulsory bound (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct RestFloor {
    /// The cost model's tile floors (BRR), if any.
    tiles: Option<TileFloor>,
    /// Per node, weight bytes every group holding it reads again.
    rereads: Vec<u64>,
    /// Per node, the minimum cut of the chosen span that starts there (0 for none).
    cuts: Vec<u64>,
    /// The chosen spans' first nodes with their ancestors (themselves included).
    starts: Vec<(NodeId, NodeSet)>,
    /// Per node, its output's bytes at the model's activation size.
    bytes: Vec<u64>,
    /// The model's activation element size.
    ab: u64,
}

/// The largest graph [`RestFloor`] is built for: its reachability tables take `n²/4` bytes,
/// 64 MiB at 16,384 nodes (twelve times the zoo's largest graph, TinyLlama's 1,328). A larger
/// graph gets the empty floor (no rereads, no cuts), which is a floor still, only a weaker
/// one.
pub const MAX_FLOOR_NODES: usize = 1 << 14;

impl RestFloor {
    /// The floor of `p`'s graph for plans whose groups have at most `max_group` nodes (the
    /// empty floor past [`MAX_FLOOR_NODES`]).
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn of(p: &Problem<'_>, max_group: usize) -> Result<RestFloor> {
        Self::within(p, max_group, &[])
    }

    /// [`RestFloor::of`], given up for the empty floor if it is not done by `deadline`: its
    /// work grows with the graph's nodes times its spans, which on a graph of tens of
    /// thousands of nodes is minutes.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn of_by(p: &Problem<'_>, max_group: usize, deadline: Instant) -> Result<RestFloor> {
        Ok(Self::build(p, max_group, &[], Some(deadline))?.unwrap_or_default())
    }

    /// [`RestFloor::of`] with only the spans that lie inside one of `regions` (all spans when
    /// there are none): the floor of each region's rest, for a programme that plans the
    /// regions apart ([`Optimal`](crate::Optimal)'s independent regions).
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn within(p: &Problem<'_>, max_group: usize, regions: &[NodeSet]) -> Result<RestFloor> {
        Ok(Self::build(p, max_group, regions, None)?.unwrap_or_default())
    }

    /// [`RestFloor::within`], or `None` past [`MAX_FLOOR_NODES`] or once `deadline` passes.
    fn build(
        p: &Problem<'_>,
        max_group: usize,
        regions: &[NodeSet],
        deadline: Option<Instant>,
    ) -> Result<Option<RestFloor>> {
        let g = p.graph();
        let n = g.len();
        if n > MAX_FLOOR_NODES {
            return Ok(None);
        }
        let late = || deadline.is_some_and(|d| Instant::now() >= d);
        let tiles = p.model().tile_floor(g)?;
        let rereads = tiles
            .as_ref()
            .map_or_else(|| vec![0; n], TileFloor::rereads);
        let ab = p.model().config().activation_element_bytes();
        let bytes: Vec<u64> = g
            .node_ids()
            .map(|v| tensor_bytes(g, Source::Node(v), ab))
            .collect();
        let (anc, desc) = reach(g);
        let necks: Vec<NodeId> = g
            .node_ids()
            .filter(|v| anc[v.index()].len() + desc[v.index()].len() + 1 == n)
            .collect();
        // Candidate spans: each edge's, and a chain along the bottlenecks; then a disjoint
        // selection, largest cut first.
        let span_of = |u: NodeId, w: NodeId| span(&anc, &desc, u, w);
        // What a span adds, and whether no admissible group holds it.
        let worth = |span: &NodeSet, u: NodeId, w: NodeId| -> Result<(u64, bool)> {
            if span.len() > max_group || !p.fits_somewhere(span)? {
                return Ok((min_cut(g, &bytes, span, u, w), true));
            }
            let mut own = span.clone();
            own.remove(w);
            let excess = tiles.as_ref().map_or(0, |t| t.excess_of(span, &own));
            if excess == 0 {
                return Ok((0, false));
            }
            Ok((min_cut(g, &bytes, span, u, w).min(excess), false))
        };
        let inside =
            |span: &NodeSet| regions.is_empty() || regions.iter().any(|r| span.is_subset(r));
        // Each span as (value, size, first, last): the node set is made again when needed,
        // so that the list takes memory in the spans, not in the spans times the graph.
        let mut spans: Vec<(u64, usize, NodeId, NodeId)> = Vec::new();
        for u in g.node_ids() {
            if late() {
                return Ok(None);
            }
            for w in net_consumers(g, u) {
                let span = span_of(u, w);
                if inside(&span) {
                    spans.push((worth(&span, u, w)?.0, span.len(), u, w));
                }
            }
        }
        for (i, &u) in necks.iter().enumerate() {
            if late() {
                return Ok(None);
            }
            for &w in &necks[i + 1..] {
                let span = span_of(u, w);
                if !inside(&span) {
                    break;
                }
                let (value, forced) = worth(&span, u, w)?;
                spans.push((value, span.len(), u, w));
                if forced {
                    break;
                }
            }
        }
        spans.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
        let mut taken = NodeSet::new(n);
        let mut cuts = vec![0; n];
        let mut starts = Vec::new();
        for (cut, _, u, w) in spans {
            if cut == 0 {
                continue;
            }
            if late() {
                return Ok(None);
            }
            // The span's last node may be cut by another span; its others are this span's.
            let mut span = span_of(u, w);
            span.remove(w);
            if span.is_disjoint(&taken) {
                taken.union_with(&span);
                cuts[u.index()] = cut;
                let mut up = anc[u.index()].clone();
                up.insert(u);
                starts.push((u, up));
            }
        }
        Ok(Some(RestFloor {
            tiles,
            rereads,
            cuts,
            starts,
            bytes,
            ab,
        }))
    }

    /// Bytes the rest of the graph moves beyond the compulsory bound once the down-set
    /// `covered` is planned: `(rereads, cuts)`, to be added.
    pub fn rest(&self, covered: &NodeSet) -> (u64, u64) {
        let (mut rereads, mut cuts) = (0u64, 0u64);
        for (v, (&r, &c)) in self.rereads.iter().zip(&self.cuts).enumerate() {
            if !covered.contains(NodeId(v as u32)) {
                rereads = rereads.saturating_add(r);
                cuts = cuts.saturating_add(c);
            }
        }
        (rereads, cuts)
    }

    /// The cuts of [`rest`](Self::rest) that no group added next can lose: those of spans
    /// whose first node has more than `reach` uncovered ancestors (itself included), so that
    /// no down-closed group of at most `reach` nodes holds it.
    pub fn far_cuts(&self, covered: &NodeSet, reach: usize) -> u64 {
        self.starts
            .iter()
            .filter(|(u, up)| !covered.contains(*u) && up.difference_len(covered) > reach)
            .fold(0u64, |s, (u, _)| s.saturating_add(self.cuts[u.index()]))
    }

    /// Whether nodes `v` and `w` carry the same floors (rereads, cut, output bytes and tile
    /// floors), `map` taking each tensor `v` reads to the one `w` reads in its place.
    pub(crate) fn same_node(
        &self,
        v: NodeId,
        w: NodeId,
        map: impl Fn(Source) -> Option<Source>,
    ) -> bool {
        let (i, j) = (v.index(), w.index());
        self.rereads.get(i) == self.rereads.get(j)
            && self.cuts.get(i) == self.cuts.get(j)
            && self.bytes.get(i) == self.bytes.get(j)
            && self.tiles.as_ref().is_none_or(|t| t.same_node(v, w, map))
    }

    /// Whether the cost model streams weights in tiles (it has a [`TileFloor`]).
    pub fn streams(&self) -> bool {
        self.tiles.is_some()
    }

    /// The number of spans whose cuts count.
    pub fn spans(&self) -> usize {
        self.cuts.iter().filter(|&&c| c > 0).count()
    }

    /// What any plan that covers the down-set `covered` and then adds the group `group` pays
    /// beyond `best[covered] + remaining(covered)` (the compulsory bound with [`rest`](Self::rest)):
    ///
    /// ```text
    /// Σ bytes of tensors of covered nodes or graph inputs that the group and the rest both read
    /// + Σ bytes of the group's tensors the rest reads (twice: written and read; once for a
    ///   graph output, whose write is compulsory)
    /// + the tile excess of the group − the cuts of spans that start in the group
    /// ```
    ///
    /// It follows from `F_D ≥ I + O + W + rereads + excess` by writing out what the
    /// compulsory bound counts before and after the step.
    pub fn step(&self, g: &Graph, covered: &NodeSet, group: &NodeSet) -> u64 {
        let outside = |c: NodeId| !covered.contains(c) && !group.contains(c);
        let mut total = self.excess(group);
        let mut lost = 0u64;
        for v in group.iter() {
            lost = lost.saturating_add(self.cuts[v.index()]);
            if g.consumers(v).iter().any(|&(c, _)| outside(c)) {
                let times = if g.is_output(v) { 1 } else { 2 };
                total = total.saturating_add(self.bytes[v.index()].saturating_mul(times));
            }
            let inputs = &g.node(v).inputs;
            for (port, &s) in inputs.iter().enumerate() {
                if inputs[..port].contains(&s) || s.node().is_some_and(|u| !covered.contains(u)) {
                    continue;
                }
                let readers = g.consumers_of(s);
                // Counted once, at the group's first reader.
                let first = readers.iter().find(|&&(c, _)| group.contains(c));
                if first.is_some_and(|&(c, _)| c == v) && readers.iter().any(|&(c, _)| outside(c)) {
                    let b = match s {
                        Source::Node(u) => self.bytes[u.index()],
                        Source::Input(_) => tensor_bytes(g, s, self.ab),
                    };
                    total = total.saturating_add(b);
                }
            }
        }
        total.saturating_sub(lost)
    }

    /// What every valid group containing `group` pays for the weights of `members` (a
    /// subset of `group`) beyond reading them once: their rereads and their part of the tile
    /// excess ([`TileFloor::excess_of`]). It never falls as `group` grows, and the parts of
    /// disjoint member sets add up, so `F_D ≥ I + O + W + weights_beyond(φ, φ)`.
    pub fn weights_beyond(&self, group: &NodeSet, members: &NodeSet) -> u64 {
        let rereads = members.iter().fold(0u64, |s, v| {
            s.saturating_add(self.rereads.get(v.index()).copied().unwrap_or(0))
        });
        rereads.saturating_add(
            self.tiles
                .as_ref()
                .map_or(0, |t| t.excess_of(group, members)),
        )
    }

    /// What every valid group containing `group` pays beyond its members' rereads
    /// ([`TileFloor::excess`]); never falls as members are added.
    pub fn excess(&self, group: &NodeSet) -> u64 {
        self.tiles.as_ref().map_or(0, |t| t.excess(group))
    }
}

/// The distinct consumers of `u`.
pub(crate) fn net_consumers(g: &Graph, u: NodeId) -> Vec<NodeId> {
    let mut c: Vec<NodeId> = g.consumers(u).iter().map(|&(c, _)| c).collect();
    c.dedup();
    c
}

/// The span of `u` and its descendant `w`: both, and every node on a path between them
/// (`anc` and `desc` from [`reach`]). A convex group holding both holds it all.
pub(crate) fn span(anc: &[NodeSet], desc: &[NodeSet], u: NodeId, w: NodeId) -> NodeSet {
    let mut span = desc[u.index()].intersection(&anc[w.index()]);
    span.insert(u);
    span.insert(w);
    span
}

/// Strict ancestors and strict descendants of every node.
pub(crate) fn reach(g: &Graph) -> (Vec<NodeSet>, Vec<NodeSet>) {
    let n = g.len();
    let mut anc = vec![NodeSet::new(n); n];
    for v in g.node_ids() {
        let mut set = NodeSet::new(n);
        for u in g.producers(v) {
            set.union_with(&anc[u.index()]);
            set.insert(u);
        }
        anc[v.index()] = set;
    }
    let mut desc = vec![NodeSet::new(n); n];
    for v in g.node_ids().rev() {
        let mut set = NodeSet::new(n);
        for &(c, _) in g.consumers(v) {
            set.union_with(&desc[c.index()]);
            set.insert(c);
        }
        desc[v.index()] = set;
    }
    (anc, desc)
}

/// The cheapest set of tensors of `span` (nodes other than `w`) that every path from `u` to
/// `w` passes: a node costs its output's bytes twice (written and read), once for a graph
/// output. Max flow over the span with every node split in two (Edmonds–Karp).
fn min_cut(g: &Graph, bytes: &[u64], span: &NodeSet, u: NodeId, w: NodeId) -> u64 {
    let nodes: Vec<NodeId> = span.iter().collect();
    let slot = |v: NodeId| nodes.binary_search(&v).ok();
    // Vertex 2k is node k's entry, 2k + 1 its exit.
    let m = 2 * nodes.len();
    let mut cap: Vec<Vec<(usize, u64)>> = vec![Vec::new(); m];
    const ENDLESS: u64 = u64::MAX / 4;
    for (k, &v) in nodes.iter().enumerate() {
        if v == w {
            continue;
        }
        let times = if g.is_output(v) { 1 } else { 2 };
        cap[2 * k].push((
            2 * k + 1,
            bytes[v.index()].saturating_mul(times).min(ENDLESS),
        ));
        for c in net_consumers(g, v) {
            if let Some(j) = slot(c) {
                cap[2 * k + 1].push((2 * j, ENDLESS));
            }
        }
    }
    let (Some(source), Some(sink)) = (slot(u), slot(w)) else {
        return 0;
    };
    max_flow(cap, 2 * source, 2 * sink)
}

/// Bytes of tensor `s` at `ab` bytes an element.
fn tensor_bytes(g: &Graph, s: Source, ab: u64) -> u64 {
    g.rows_of(s)
        .saturating_mul(g.row_elements(s))
        .saturating_mul(ab)
}

/// Edmonds–Karp on adjacency lists of `(head, capacity)`.
fn max_flow(edges: Vec<Vec<(usize, u64)>>, source: usize, sink: usize) -> u64 {
    let m = edges.len();
    // Residual graph: each edge and its reverse, by index.
    let mut head = Vec::new();
    let mut left = Vec::new();
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (from, list) in edges.iter().enumerate() {
        for &(to, c) in list {
            out[from].push(head.len());
            head.push(to);
            left.push(c);
            out[to].push(head.len());
            head.push(from);
            left.push(0);
        }
    }
    let mut flow = 0u64;
    loop {
        let mut via = vec![usize::MAX; m];
        let mut queue = VecDeque::from([source]);
        let mut seen = vec![false; m];
        seen[source] = true;
        while let Some(x) = queue.pop_front() {
            for &e in &out[x] {
                let y = head[e];
                if left[e] > 0 && !seen[y] {
                    seen[y] = true;
                    via[y] = e;
                    queue.push_back(y);
                }
            }
        }
        if !seen[sink] {
            return flow;
        }
        let mut push = u64::MAX;
        let mut y = sink;
        while y != source {
            let e = via[y];
            push = push.min(left[e]);
            y = head[e ^ 1];
        }
        let mut y = sink;
        while y != source {
            let e = via[y];
            left[e] -= push;
            left[e ^ 1] += push;
            y = head[e ^ 1];
        }
        flow = flow.saturating_add(push);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_flow_of_two_paths() {
        // 0 → 1 → 3 (caps 5, 2) and 0 → 2 → 3 (caps 4, 9): 2 + 4.
        let edges = vec![vec![(1, 5), (2, 4)], vec![(3, 2)], vec![(3, 9)], vec![]];
        assert_eq!(max_flow(edges, 0, 3), 6);
    }

    #[test]
    fn min_cut_of_a_fork_and_join() {
        // a (8 rows of 64 bytes) forks into b (1×1, 2 channels) and c (1×1, 8 channels),
        // joined by d. Cutting a costs 2 × 512; cutting b and c costs 2 × (128 + 512).
        use fuselage_ir::{ConvAttrs, GraphBuilder, Op, TensorShape};
        let mut gb = GraphBuilder::new("fork");
        let x = gb.input("x", TensorShape::nchw(8, 8, 8)).unwrap();
        let a = gb.node("a", Op::Relu, &[x]).unwrap();
        let b = gb
            .node("b", Op::Conv(ConvAttrs::square(2, 1, 1, 1, 1)), &[a])
            .unwrap();
        let c = gb
            .node("c", Op::Conv(ConvAttrs::square(8, 1, 1, 1, 1)), &[a])
            .unwrap();
        gb.node("d", Op::concat(1), &[b, c]).unwrap();
        let g = gb.finish().unwrap();
        let bytes: Vec<u64> = g
            .node_ids()
            .map(|v| tensor_bytes(&g, Source::Node(v), 1))
            .collect();
        assert_eq!(bytes, vec![512, 128, 512, 640]);
        let all = NodeSet::full(4);
        assert_eq!(min_cut(&g, &bytes, &all, NodeId(0), NodeId(3)), 2 * 512);
        // The span of b and d: only b can be cut, 2 × 128.
        let bd = NodeSet::from_ids(4, [NodeId(1), NodeId(3)]);
        assert_eq!(min_cut(&g, &bytes, &bd, NodeId(1), NodeId(3)), 2 * 128);
    }
}
