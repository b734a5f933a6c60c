//! [`TileFloor`]: how many tiles, at least, a valid BRR group must run, known before the group
//! is costed. The exact optimiser prunes with it: a group that streams its weights reads them
//! once per tile, and on transformers that is most of the traffic.
//!
//! ## The argument
//!
//! Let `φ` be valid with its weights streamed, `h` its tile, `H_max` the most rows of a tensor
//! of `Out(φ)`, so `T = ⌈H_max / h⌉` and `F(h) ≤ A`, the most activation bytes that fit
//! beside no weights. Then, for every tensor `t` below, `rows_t(h) ≥ ⌈h·H_t / H_max⌉`:
//!
//! - a tensor of `Out(φ)` asks exactly that;
//! - a port that reads `t` *keeps the ratio* when it reads it whole, or through a window with
//!   `stride ≥ 1`, `k ≥ stride` and `stride·(H_c − 1) + k ≥ H_t` (`H_c`: the reader's rows;
//!   the last window reaches the last row, as in a 3×3 stride-2 reduction of 17 rows to 8):
//!   with `x = h / H_max ≤ 1`, a reader holding `rows_c ≥ x·H_c` rows asks
//!   `(rows_c − 1)·stride + k ≥ x·stride·H_c + (k − stride) ≥ x·H_t`, because
//!   `k − stride ≥ max(0, H_t − stride·H_c) ≥ x·(H_t − stride·H_c)`;
//! - so a node's output holds them when it is *tracked*: a graph output, or read through a
//!   ratio-keeping port by a node whose output is tracked (in `φ` it is then in `Out(φ)`, a
//!   consumer being outside, or asked for by that consumer, all being inside), and so does
//!   every input a tracked node reads through a ratio-keeping port.
//!
//! Call these tensors of a node its *tracked tensors*. For any set `S` of tracked tensors of
//! members, `A ≥ F(h) ≥ Σ_{t ∈ S} ⌈h·H_t / H_max⌉·row_t`. Two floors on `T` follow:
//!
//! - **per node**, exactly: `H_max` is the height of some node's output, so `T` is at least
//!   the least, over the graph's heights `H`, of `⌈H / h*(H)⌉`, with `h*(H)` the largest
//!   `h ≤ H` that fits `S` (heights where not even `h = 1` fits are impossible);
//! - **per group**, quickly: `T = ⌈H_max / h⌉ ≥ B / A` for `B = Σ_{t ∈ S} bytes_t`, so
//!   `T ≥ ⌈B / A⌉`; `B` only grows as members are added.
//!
//! A group whose weights stay holds no node whose weights alone do not fit (unified buffer:
//! `W + F(1) < β`; split buffers: `W < β_w`), so such a node's weights are streamed in every
//! valid group holding it: `F_D = I + O + T·W` charges them `T` times. A node whose singleton
//! is invalid may stand alone as an unfusable node with one-row tiles; it gets no floor.

use crate::config::CostConfig;
use crate::error::Result;
use fuselage_ir::{Graph, NodeId, NodeSet, RowRead, Source};

/// Tile floors of one graph under one BRR configuration (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileFloor {
    /// The buffer.
    config: CostConfig,
    /// `A`: the most activation bytes that fit beside no weights.
    room: u64,
    /// Per node: its weights in bytes.
    weights: Vec<u64>,
    /// Per node: whether its weights alone do not fit and its singleton is valid, so that
    /// every admissible group holding it streams.
    streams: Vec<bool>,
    /// Per node: the floor on the tiles of any valid streaming group holding it (1 when
    /// nothing is known).
    tiles: Vec<u64>,
    /// Per node: the bytes of its output when tracked (else 0).
    out_bytes: Vec<u64>,
    /// Per node: its inputs read through a ratio-keeping port when its output is tracked.
    tracked_inputs: Vec<Vec<(Source, u64)>>,
}

impl TileFloor {
    /// The floor of `g` under BRR's `config`; `singleton_valid(v)` says whether the group of
    /// `v` alone is valid (the model costs it).
    ///
    /// # Errors
    /// When `singleton_valid` fails.
    pub fn of(
        g: &Graph,
        config: &CostConfig,
        singleton_valid: impl Fn(NodeId) -> Result<bool>,
    ) -> Result<Self> {
        let n = g.len();
        let room = config.activation_room(0).saturating_sub(1);
        let (wb, ab) = (
            config.weight_element_bytes(),
            config.activation_element_bytes(),
        );
        let keeps = |reader: NodeId, port: usize, read: Source| match g.row_read(reader, port) {
            RowRead::Whole => true,
            RowRead::Window { k, stride, .. } => {
                let rows = g.rows_of(Source::Node(reader));
                stride >= 1
                    && k >= stride
                    && stride
                        .saturating_mul(rows.saturating_sub(1))
                        .saturating_add(k)
                        >= g.rows_of(read)
            }
        };
        let bytes = |s: Source| {
            g.rows_of(s)
                .saturating_mul(g.row_elements(s))
                .saturating_mul(ab)
        };
        let mut tracked = vec![false; n];
        for v in g.node_ids().rev() {
            tracked[v.index()] = g.is_output(v)
                || g.consumers(v).iter().any(|&(c, port)| {
                    tracked[c.index()] && keeps(c, port as usize, Source::Node(v))
                });
        }
        let mut heights: Vec<u64> = g.node_ids().map(|v| g.rows_of(Source::Node(v))).collect();
        heights.sort_unstable();
        heights.dedup();
        let mut floor = TileFloor {
            config: *config,
            room,
            weights: g
                .node_ids()
                .map(|v| g.node(v).weights.saturating_mul(wb))
                .collect(),
            streams: vec![false; n],
            tiles: vec![1; n],
            out_bytes: vec![0; n],
            tracked_inputs: vec![Vec::new(); n],
        };
        for v in g.node_ids() {
            if !tracked[v.index()] {
                continue;
            }
            floor.out_bytes[v.index()] = bytes(Source::Node(v));
            let inputs = &g.node(v).inputs;
            for (port, &s) in inputs.iter().enumerate() {
                if !inputs[..port].contains(&s) && keeps(v, port, s) {
                    floor.tracked_inputs[v.index()].push((s, bytes(s)));
                }
            }
            let mut set: Vec<(u64, u64)> = vec![(
                g.rows_of(Source::Node(v)),
                bytes(Source::Node(v)) / g.rows_of(Source::Node(v)).max(1),
            )];
            for &(s, b) in &floor.tracked_inputs[v.index()] {
                set.push((g.rows_of(s), b / g.rows_of(s).max(1)));
            }
            floor.tiles[v.index()] = least_tiles(&set, &heights, room);
            let w = floor.weights[v.index()];
            floor.streams[v.index()] = w > 0 && !config.fits(w, 0) && singleton_valid(v)?;
        }
        Ok(floor)
    }

    /// Per node, weight bytes every admissible group holding it reads beyond the first time:
    /// `(T_v − 1)·w_v` for a node that always streams, else 0. `F_D ≥ I + O + W + Σ` of these
    /// over the group's members.
    pub fn rereads(&self) -> Vec<u64> {
        (0..self.weights.len())
            .map(|v| {
                if self.streams[v] {
                    (self.tiles[v] - 1).saturating_mul(self.weights[v])
                } else {
                    0
                }
            })
            .collect()
    }

    /// Whether nodes `v` and `w` have the same floors, `map` taking each tensor `v` reads to
    /// the one `w` reads in its place: then a group holding `v` and its shift holding `w`
    /// get the same [`excess`](Self::excess).
    pub fn same_node(&self, v: NodeId, w: NodeId, map: impl Fn(Source) -> Option<Source>) -> bool {
        let (i, j) = (v.index(), w.index());
        self.weights[i] == self.weights[j]
            && self.streams[i] == self.streams[j]
            && self.tiles[i] == self.tiles[j]
            && self.out_bytes[i] == self.out_bytes[j]
            && self.tracked_inputs[i].len() == self.tracked_inputs[j].len()
            && self.tracked_inputs[i]
                .iter()
                .zip(&self.tracked_inputs[j])
                .all(|(&(s, b), &(t, c))| b == c && map(s) == Some(t))
    }

    /// What every valid group containing `group` pays beyond `I + O + W` and its members'
    /// [`rereads`](Self::rereads): when `group` must stream (it holds a node that always
    /// streams, or its weights alone do not fit), every member's weights are read `T − 1`
    /// more times, with `T` at least each member's floor and `⌈B / A⌉` for the bytes `B` of
    /// the members' tracked tensors. It never falls as members are added.
    pub fn excess(&self, group: &NodeSet) -> u64 {
        self.excess_of(group, group)
    }

    /// The part of [`excess`](Self::excess)`(group)` that falls on `members` (a subset of
    /// `group`): what every valid group containing `group` pays for their weights beyond
    /// `W` and their rereads. The parts of disjoint member sets add up.
    pub fn excess_of(&self, group: &NodeSet, members: &NodeSet) -> u64 {
        let weights = group
            .iter()
            .fold(0u64, |s, v| s.saturating_add(self.weights[v.index()]));
        let streams =
            group.iter().any(|v| self.streams[v.index()]) || !self.config.fits(weights, 0);
        if !streams || self.room == 0 {
            return 0;
        }
        let mut seen: Vec<Source> = Vec::new();
        let mut tracked: u64 = 0;
        let mut tiles = 1;
        for v in group.iter() {
            tiles = tiles.max(self.tiles[v.index()]);
            tracked = tracked.saturating_add(self.out_bytes[v.index()]);
            for &(s, b) in &self.tracked_inputs[v.index()] {
                let inner = s
                    .node()
                    .is_some_and(|u| group.contains(u) && self.out_bytes[u.index()] > 0);
                if !inner && !seen.contains(&s) {
                    seen.push(s);
                    tracked = tracked.saturating_add(b);
                }
            }
        }
        let tiles = tiles.max(tracked.div_ceil(self.room));
        members
            .iter()
            .map(|v| {
                let w = self.weights[v.index()];
                let own = if self.streams[v.index()] {
                    self.tiles[v.index()]
                } else {
                    1
                };
                (tiles - own).saturating_mul(w)
            })
            .fold(0u64, u64::saturating_add)
    }
}

/// The least `⌈H / h*(H)⌉` over the heights `H` at which the tensors `(H_t, row_t)` fit at all
/// (see the module docs); 1 when none does.
fn least_tiles(set: &[(u64, u64)], heights: &[u64], room: u64) -> u64 {
    let need = |h: u64, hm: u64| {
        set.iter().fold(0u64, |s, &(ht, row)| {
            let rows = (u128::from(h) * u128::from(ht)).div_ceil(u128::from(hm.max(1)));
            s.saturating_add(u64::try_from(rows).unwrap_or(u64::MAX).saturating_mul(row))
        })
    };
    let mut least: Option<u64> = None;
    for &hm in heights {
        if need(1, hm) > room {
            continue;
        }
        let (mut lo, mut hi) = (1, hm.max(1));
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if need(mid, hm) <= room {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let t = hm.div_ceil(lo);
        least = Some(least.map_or(t, |l| l.min(t)));
    }
    least.unwrap_or(1)
}
