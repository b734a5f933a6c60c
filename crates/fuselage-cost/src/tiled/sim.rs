//! [`TiledSimulator`]: runs a group's `tiled` schedule as a loop nest and measures it.
//!
//! The model ([`Tiled`](super::Tiled)) adds up what each tensor keeps; the simulator runs the
//! schedule and watches the buffer. It shares with the model only the schedule's decisions
//! (which operands stream, which tensors are blocked, what a streamed operand is recomputed
//! from) and counts every byte it allocates, loads and writes as it goes:
//!
//! ```text
//! for slice in 0..S                      heads one at a time (S = 1: not sliced)
//!   for tile in 0..T                     row tiles of h rows of the tallest output
//!     pull each member's rows of the tile, sinks first, just in time
//!       a plain member computes one row at a time;
//!       a streaming member (it streams an operand or reads a blocked tensor) runs its
//!       whole tile at once, with the members it shares blocked tensors with:
//!         for block in 0..E/b            blocks of the streamed or blocked axis
//!           load a block of each streamed weight; recompute a block of each streamed
//!           operand from its chain's DRAM inputs; make a block of each blocked tensor
//! ```
//!
//! The line buffer (no operand streams) runs LBDF's phased row order instead of tiles, as
//! [`BufferSimulator`](crate::BufferSimulator) does.
//!
//! **Slices.** A tensor that has the independent axis holds one part of it per slice: `e`
//! parts for an extent `e` (GQA's key-value heads: 8 parts over 32 slices, each part serving
//! 4 slices in a row). A tensor that lacks it is cut into `S` parts along its row (the head
//! columns of `[1, L, h·d]`: each slice reads its own), unless several slices read all of it
//! (a broadcast, such as a causal mask): then it is one part, loaded once and kept while the
//! slices run. A part lives for its slices: its rows are freed when the last of their readers
//! has run.
//!
//! **Rows.** As in the LBDF simulator: input rows load when first needed (rows no window
//! reads load and drop, so each input is read exactly once per part), a row is freed as soon
//! as no later computation needs it, outputs are written as they are made, weights that do
//! not stream are loaded once and stay. Row constants (a mask, a position table) load a row
//! at a time beside the row that reads them, or, shared by all slices, whole, once.
//!
//! **Occupancy** is sampled after every allocation. DRAM is every byte loaded or written, so
//! the simulation checks the model's traffic exactly and its buffer from above:
//! `dram == F_D` and `peak ≤ F_β` on every group, CNNs and transformers alike
//! (`tests/tiled_sim.rs`).

use super::prep::{Prep, one_to_one};
use super::roles::{Roles, find};
use super::rows::demand;
use crate::config::CostConfig;
use crate::error::Result;
use crate::model::{Schedule, TensorKind};
use crate::sim::{Rows, Simulation, row_bases, run_phases};
use crate::view::{View, Window, with_view};
use fuselage_ir::{Graph, NodeSet};

/// Runs `tiled` schedules. See the module docs.
///
/// # Example
/// ```
/// use fuselage_cost::{CostConfig, CostModel, Tiled, TiledSimulator};
/// use fuselage_ir::{GraphBuilder, NodeSet, Op, TensorShape};
/// let mut b = GraphBuilder::new("mlp");
/// let x = b.input("x", TensorShape::new(vec![1, 64, 32]))?;
/// let h = b.node_with("fc1", Op::MatMul, &[x], TensorShape::new(vec![1, 64, 128]), 32 * 128)?;
/// let a = b.node("act", Op::Relu, &[h])?;
/// b.node_with("fc2", Op::MatMul, &[a], TensorShape::new(vec![1, 64, 32]), 128 * 32)?;
/// let g = b.finish()?;
/// let all = NodeSet::full(g.len());
/// let config = CostConfig::new(6 * 1024)?;
/// let cost = Tiled::new(config).evaluate(&g, &all)?;
/// let sim = TiledSimulator::new(config).run(&g, &all, &cost.schedule.unwrap())?;
/// assert_eq!(sim.dram_bytes, cost.dram_bytes);
/// assert!(sim.peak_bytes <= cost.buffer_bytes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TiledSimulator {
    config: CostConfig,
}

impl TiledSimulator {
    /// A simulator with `config`'s element sizes (β is not used: the simulator measures).
    pub fn new(config: CostConfig) -> Self {
        TiledSimulator { config }
    }

    /// Runs `group` of `g` as `schedule` says (the schedule [`Tiled`](super::Tiled) chose
    /// for it, or one a plan file recorded).
    ///
    /// # Errors
    /// As [`Tiled::check`](super::Tiled::check): a schedule this group cannot run.
    pub fn run(&self, g: &Graph, group: &NodeSet, schedule: &Schedule) -> Result<Simulation> {
        // The same checks as the model's replay of a recorded schedule.
        super::Tiled::new(self.config).check(g, group, schedule)?;
        with_view(g, group, &self.config, |v| {
            let p = Prep::new(g, v, &self.config);
            let line = schedule.line_buffer || schedule.streamed == 0;
            let roles = p.roles(v, if line { 0 } else { schedule.streamed });
            v.lbdf(true);
            Ok(Nest::new(v, &p, &roles, schedule, line).run())
        })
    }
}

/// A port as the simulator reads it: which member reads which tensor through what window.
#[derive(Copy, Clone, Debug)]
struct Read {
    member: usize,
    tensor: usize,
    window: Window,
}

/// `x` cut into `n` parts as evenly as integers allow: part `k`.
fn part(x: u64, n: u64, k: u64) -> u64 {
    let n = u128::from(n.max(1));
    let (x, k) = (u128::from(x), u128::from(k));
    ((x * (k + 1)) / n - (x * k) / n) as u64
}

/// The share of `x` that elements `from..from + len` of an axis of `extent` carry.
fn share(x: u64, extent: u64, from: u64, len: u64) -> u64 {
    let e = u128::from(extent.max(1));
    let at = |i: u64| (u128::from(x) * u128::from(i.min(extent))) / e;
    (at(from + len) - at(from)) as u64
}

/// What one member streams in a block loop.
#[derive(Clone, Debug, Default)]
struct Chain {
    /// DRAM tensors the streamed operand is recomputed from, per block.
    inputs: Vec<usize>,
    /// Members recomputed per block (their outputs are made a block at a time).
    members: Vec<usize>,
    /// Tensors read whole beside the blocks: held for the whole slice.
    sources: Vec<usize>,
}

struct Nest<'a> {
    v: &'a View,
    p: &'a Prep,
    r: &'a Roles,
    line: bool,
    slices: u64,
    tiles: u64,
    h: u64,
    block: u64,
    /// Per tensor: parts over the slices, and slices a part lives for.
    parts: Vec<u64>,
    period: Vec<u64>,
    /// Per member: whether its row constants are held whole across slices.
    shared_constant: Vec<bool>,
    constant_loaded: Vec<bool>,
    /// Per member: computed only block by block inside a chain (never as rows).
    chain_only: Vec<bool>,
    /// Per member: what it streams from (right operands only).
    chains: Vec<Chain>,
    /// Per member: the streaming component it runs in (`usize::MAX`: none).
    comp: Vec<usize>,
    comps: Vec<Vec<usize>>,
    /// Per tensor: the reads that count against its rows.
    reads: Vec<Vec<Read>>,
    /// The same reads, per reading member.
    by_member: Vec<Vec<Read>>,
    row_base: Vec<usize>,
    pending: Vec<u32>,
    alive: Vec<bool>,
    done: Vec<u64>,
    slice: u64,
    tile: u64,
    /// Per member: the last row the current tile makes (its own share of the tile, or more
    /// where a reader's window reaches into the next: the tiles of a chain are skewed).
    need: Vec<u64>,
    /// Weights loaded once and held throughout.
    resident: u64,
    occupancy: u64,
    out: Simulation,
}

impl<'a> Nest<'a> {
    fn new(v: &'a View, p: &'a Prep, r: &'a Roles, s: &Schedule, line: bool) -> Self {
        let n = v.tensors.len();
        let m = v.len();
        let slices = s.slices.max(1);
        let sliced = slices > 1;
        let (mut parts, mut period) = (vec![1u64; n], vec![1u64; n]);
        if sliced {
            for t in 0..n {
                let e = p.e[t].max(1);
                parts[t] = if e > 1 {
                    e
                } else if p.shared[t] {
                    1
                } else {
                    slices
                };
                period[t] = slices / parts[t];
            }
        }
        // Chains of streamed right operands, walked as the model walks them.
        let mut chains = vec![Chain::default(); m];
        // A tensor two chains share is loaded once a block, by the first (as the model counts).
        let mut seen = vec![false; n];
        for (i, chain) in chains.iter_mut().enumerate() {
            if line || !r.right[i] {
                continue;
            }
            let Some(q) = v.ports_of(i).get(1) else {
                continue;
            };
            let mut stack = vec![q.tensor as usize];
            while let Some(t) = stack.pop() {
                let walk = t >= m || (p.members[t].chain && !p.held[t]);
                if walk && std::mem::replace(&mut seen[t], true) {
                    continue;
                }
                if t >= m {
                    chain.inputs.push(t);
                } else if walk {
                    chain.members.push(t);
                    for q in v.ports_of(t) {
                        if one_to_one(q.window) {
                            stack.push(q.tensor as usize);
                        } else {
                            chain.sources.push(q.tensor as usize);
                        }
                    }
                } else {
                    chain.sources.push(t);
                }
            }
            chain.members.sort_unstable();
        }
        // A chain member whose rows nothing else needs is made only block by block.
        let chain_only = if line {
            vec![false; m]
        } else {
            r.chain_only.clone()
        };
        // Streaming components: members linked by blocked tensors run their tiles together
        // (a member that reads blocked tensors of two components joins them).
        let mut root: Vec<usize> = (0..m).collect();
        if !line {
            for i in 0..m {
                for q in v.ports_of(i) {
                    let t = q.tensor as usize;
                    if t < m && r.blocked[t] && r.streaming[i] {
                        let (a, b) = (find(&mut root, i), find(&mut root, t));
                        root[a.max(b)] = a.min(b);
                    }
                }
            }
        }
        let mut comp = vec![usize::MAX; m];
        let mut comps: Vec<Vec<usize>> = Vec::new();
        let mut index = vec![usize::MAX; m];
        for (i, c) in comp.iter_mut().enumerate() {
            if line || !r.streaming[i] {
                continue;
            }
            let x = find(&mut root, i);
            if index[x] == usize::MAX {
                index[x] = comps.len();
                comps.push(Vec::new());
            }
            *c = index[x];
            comps[index[x]].push(i);
        }
        let mut reads: Vec<Vec<Read>> = vec![Vec::new(); n];
        for i in 0..m {
            if chain_only[i] {
                continue;
            }
            for (port, q) in v.ports_of(i).iter().enumerate() {
                let t = q.tensor as usize;
                if (port == 1 && r.right[i] && !line) || (!line && r.blocked[t]) {
                    continue;
                }
                reads[t].push(Read {
                    member: i,
                    tensor: t,
                    window: q.window,
                });
            }
            // A chain's sources are read whole beside every block of every tile.
            for &t in &chains[i].sources {
                reads[t].push(Read {
                    member: i,
                    tensor: t,
                    window: Window::Whole,
                });
            }
        }
        let mut by_member: Vec<Vec<Read>> = vec![Vec::new(); m];
        for read in reads.iter().flatten() {
            by_member[read.member].push(*read);
        }
        let row_base = row_bases(v);
        let total = row_base[n];
        // Weights that do not stream are loaded once and stay.
        let resident: u64 = (0..m)
            .filter(|&i| (line || !r.weights[i]) && p.members[i].row_constant == 0)
            .map(|i| p.weights[i])
            .sum();
        Nest {
            v,
            p,
            r,
            line,
            slices,
            tiles: if line { 1 } else { s.tiles.max(1) },
            h: if line { v.h_max() } else { s.tile_rows.max(1) },
            block: s.block.max(1),
            parts,
            period,
            shared_constant: (0..m).map(|i| sliced && p.shared_constant[i]).collect(),
            constant_loaded: vec![false; m],
            chain_only,
            chains,
            comp,
            comps,
            reads,
            by_member,
            row_base,
            pending: vec![0; total],
            alive: vec![false; total],
            done: vec![0; n],
            slice: 0,
            tile: 0,
            need: vec![0; m],
            resident,
            occupancy: resident,
            out: Simulation {
                peak_bytes: resident,
                peak_step: 0,
                dram_bytes: resident,
                weight_bytes: v.weight_bytes,
                rows_computed: 0,
                rows_loaded: 0,
                timeline: Vec::new(),
            },
        }
    }

    /// Bytes of one row of tensor `t` in this slice's part.
    fn row(&self, t: usize) -> u64 {
        part(
            self.v.tensors[t].row,
            self.parts[t],
            self.slice / self.period[t],
        )
    }

    /// Bytes of all of tensor `t` in this slice's part.
    fn whole(&self, t: usize) -> u64 {
        part(self.p.bytes[t], self.parts[t], self.slice / self.period[t])
    }

    fn alloc(&mut self, bytes: u64) {
        self.occupancy += bytes;
        if self.occupancy > self.out.peak_bytes {
            self.out.peak_bytes = self.occupancy;
            self.out.peak_step = self.out.rows_computed + self.out.rows_loaded;
        }
    }

    fn free(&mut self, bytes: u64) {
        self.occupancy -= bytes;
    }

    /// How many times member `i` runs in the slices `from..from + len`: once per part of its
    /// output.
    fn runs(&self, i: usize, from: u64, len: u64) -> u32 {
        (from..from + len)
            .filter(|j| j % self.period[i] == 0)
            .count() as u32
    }

    /// Starts a new part of tensor `t`: its rows are pending for the reads of the slices
    /// it lives for.
    fn start_part(&mut self, t: usize) {
        let base = self.row_base[t];
        let h = self.v.tensors[t].h as i64;
        for k in 0..h as usize {
            if self.alive[base + k] {
                self.alive[base + k] = false;
                let row = self.row(t);
                self.free(row);
            }
            self.pending[base + k] = 0;
        }
        self.done[t] = 0;
        for x in 0..self.reads[t].len() {
            let read = self.reads[t][x];
            let runs = self.runs(read.member, self.slice, self.period[t]);
            if runs == 0 {
                continue;
            }
            let hc = self.v.tensors[read.member].h as i64;
            for i in 0..h {
                if read.window.reads(i, hc) {
                    self.pending[base + i as usize] += runs;
                }
            }
        }
    }

    fn free_if_unneeded(&mut self, t: usize, i: u64) {
        let k = self.row_base[t] + i as usize;
        if self.alive[k] && self.pending[k] == 0 {
            self.alive[k] = false;
            let row = self.row(t);
            self.free(row);
        }
    }

    /// Makes rows `..=upto` of tensor `t` exist.
    fn ensure(&mut self, t: usize, upto: i64) {
        let h = self.v.tensors[t].h as i64;
        let upto = upto.min(h - 1);
        while (self.done[t] as i64) <= upto {
            let i = self.done[t];
            if t >= self.v.len() {
                self.load(t, i);
            } else if self.comp[t] != usize::MAX {
                self.burst(self.comp[t], t, upto as u64);
            } else {
                self.compute(t, i);
            }
        }
    }

    fn load(&mut self, t: usize, i: u64) {
        let row = self.row(t);
        self.alive[self.row_base[t] + i as usize] = true;
        self.alloc(row);
        self.out.dram_bytes += row;
        self.out.rows_loaded += 1;
        self.done[t] = i + 1;
        self.free_if_unneeded(t, i);
    }

    /// The bytes of row constants member `c` reads beside `rows` of its output, to load
    /// (`None`: shared by all slices, loaded whole once and held).
    fn constants(&mut self, c: usize, rows: u64) -> Option<u64> {
        let rc = self.p.members[c].row_constant;
        if rc == 0 {
            return Some(0);
        }
        if self.shared_constant[c] {
            if !std::mem::replace(&mut self.constant_loaded[c], true) {
                let w = self.p.weights[c];
                self.alloc(w);
                self.out.dram_bytes += w;
            }
            return None;
        }
        // The constant has the axis (or the group is not sliced): this slice's part.
        Some(part(rc, self.parts[c], self.slice / self.period[c]) * rows)
    }

    /// Computes row `r` of plain member `c`.
    fn compute(&mut self, c: usize, r: u64) {
        let v = self.v;
        for x in 0..self.by_member[c].len() {
            let read = self.by_member[c][x];
            self.ensure(read.tensor, read.window.last_row(r));
        }
        if self.done[c] > r {
            // Made meanwhile, pushed by the last of its inputs.
            return;
        }
        let constant = self.constants(c, 1).unwrap_or(0);
        self.out.dram_bytes += constant;
        self.alloc(constant);
        let row = self.row(c);
        self.alive[self.row_base[c] + r as usize] = true;
        self.alloc(row);
        if v.tensors[c].kind == TensorKind::Out {
            self.out.dram_bytes += row;
        }
        self.out.rows_computed += 1;
        self.done[c] = r + 1;
        self.free(constant);
        self.release(c, r);
        self.push(c);
        self.free_if_unneeded(c, r);
    }

    /// After a row of `t` is made, its plain readers make every row of this tile they now
    /// can (the forward half of [`demand`]), so that a row made early for one reader is not
    /// held for another that would come later (the Q and K beside a V read whole).
    fn push(&mut self, t: usize) {
        if self.line {
            return;
        }
        let m = self.v.len();
        for x in 0..self.reads[t].len() {
            let c = self.reads[t][x].member;
            if self.comp[c] != usize::MAX || self.chain_only[c] {
                continue;
            }
            while self.done[c] <= self.need[c] && self.ready(c, self.done[c], m) {
                let r = self.done[c];
                self.compute(c, r);
            }
        }
    }

    /// Whether every input row that row `r` of member `c` reads from another member has
    /// been made (what it loads, it loads).
    fn ready(&self, c: usize, r: u64, m: usize) -> bool {
        self.by_member[c].iter().all(|read| {
            let t = read.tensor;
            if t >= m {
                return true;
            }
            let h = self.v.tensors[t].h as i64;
            let want = read.window.last_row(r).min(h - 1);
            self.done[t] as i64 > want
        })
    }

    /// Releases the input rows whose last reader was row `r` of member `c`.
    fn release(&mut self, c: usize, r: u64) {
        let hc = self.v.tensors[c].h as i64;
        let r = r as i64;
        for x in 0..self.by_member[c].len() {
            let read = self.by_member[c][x];
            let t = read.tensor;
            let h = self.v.tensors[t].h as i64;
            let Some((lo, hi)) = read.window.last_read_by(r, hc, h) else {
                continue;
            };
            for i in lo..=hi {
                let k = self.row_base[t] + i as usize;
                self.pending[k] -= 1;
                self.free_if_unneeded(t, i as u64);
            }
        }
    }

    /// Runs streaming component `k` over the current tile (at least to row `upto` of
    /// member `asked`): its inputs pulled, its outputs held as accumulators, its streamed
    /// operands and blocked tensors made block by block.
    fn burst(&mut self, k: usize, asked: usize, upto: u64) {
        let v = self.v;
        let members = self.comps[k].clone();
        let ends: Vec<u64> = members
            .iter()
            .map(|&i| {
                let end = self.need[i];
                if i == asked { end.max(upto) } else { end }
            })
            .collect();
        let starts: Vec<u64> = members.iter().map(|&i| self.done[i]).collect();
        // Inputs, pulled for every row of the tile.
        for (x, &i) in members.iter().enumerate() {
            for y in 0..self.by_member[i].len() {
                let read = self.by_member[i][y];
                self.ensure(read.tensor, read.window.last_row(ends[x]));
            }
        }
        // Outputs that are not blocked: the tile's rows, as accumulators.
        let mut held = 0u64;
        let mut constants = 0u64;
        for (x, &i) in members.iter().enumerate() {
            let rows = (ends[x] + 1).saturating_sub(starts[x]);
            if !self.r.blocked[i] {
                let row = self.row(i);
                for r in starts[x]..=ends[x] {
                    self.alive[self.row_base[i] + r as usize] = true;
                }
                self.alloc(rows * row);
                if self.p.members[i].softmax {
                    // Softmax over a blocked input: a running maximum and sum a row.
                    let stats = 2 * rows * (row / self.p.last[i].max(1)).max(1);
                    self.alloc(stats);
                    held += stats;
                }
                if let Some(c) = self.constants(i, rows) {
                    self.out.dram_bytes += c;
                    self.alloc(c);
                    constants += c;
                }
            }
        }
        // The block loop over the component's axis.
        // The axis: the blocked tensors'; else, for a lone member, its streamed operand's
        // rows (keys or values summed into accumulators) or its weights' columns.
        let lone = members[0];
        let extent = members
            .iter()
            .filter(|&&i| self.r.blocked[i])
            .map(|&i| self.r.extent[i])
            .max()
            .unwrap_or_else(|| match v.ports_of(lone).first() {
                Some(q) if self.r.right[lone] => self.p.last[q.tensor as usize],
                _ => self.p.members[lone].out_extent,
            })
            .max(1);
        let mut from = 0u64;
        while from < extent {
            let len = self.block.min(extent - from);
            let mut live: Vec<(usize, u64)> = Vec::new();
            for (x, &i) in members.iter().enumerate() {
                let rows = (ends[x] + 1).saturating_sub(starts[x]);
                if rows == 0 {
                    // Nothing of this member in this tile: none of its operands streams.
                    continue;
                }
                let mut temp = 0u64;
                if self.r.weights[i] {
                    let w = share(self.p.weights[i], extent, from, len);
                    self.out.dram_bytes += w;
                    self.alloc(w);
                    temp += w;
                }
                if self.r.right[i] {
                    temp += self.chain_block(i, extent, from, len);
                }
                if self.r.blocked[i] {
                    let b = share(rows * self.row(i), extent, from, len);
                    self.alloc(b);
                    if v.tensors[i].kind == TensorKind::Out {
                        self.out.dram_bytes += b;
                    }
                    live.push((i, b));
                    // Row constants along the block: this block's columns of the tile's rows.
                    if let Some(c) = self.constants(i, rows) {
                        let c = share(c, extent, from, len);
                        self.out.dram_bytes += c;
                        self.alloc(c);
                        temp += c;
                    }
                }
                self.free(temp);
                // Blocked inputs whose last reader in the component is this member.
                let mut x2 = 0;
                while x2 < live.len() {
                    let (t, b) = live[x2];
                    let last_reader = members
                        .iter()
                        .rev()
                        .find(|&&j| v.ports_of(j).iter().any(|q| q.tensor as usize == t));
                    if t != i && last_reader.is_none_or(|&j| j == i) {
                        self.free(b);
                        live.swap_remove(x2);
                    } else {
                        x2 += 1;
                    }
                }
            }
            for (_, b) in live {
                self.free(b);
            }
            from += len;
        }
        self.free(held + constants);
        // The tile's rows are made: written, and their inputs released.
        for (x, &i) in members.iter().enumerate() {
            if self.r.blocked[i] {
                self.done[i] = ends[x] + 1;
                continue;
            }
            let row = self.row(i);
            let rows = (ends[x] + 1).saturating_sub(starts[x]);
            if v.tensors[i].kind == TensorKind::Out {
                self.out.dram_bytes += rows * row;
            }
            self.out.rows_computed += rows;
            self.done[i] = ends[x] + 1;
        }
        for (x, &i) in members.iter().enumerate() {
            for r in starts[x]..=ends[x] {
                self.release(i, r);
            }
        }
        for (x, &i) in members.iter().enumerate() {
            if !self.r.blocked[i] {
                for r in starts[x]..=ends[x] {
                    self.free_if_unneeded(i, r);
                }
            }
        }
    }

    /// Makes block `from..from + len` of member `i`'s streamed right operand from its chain:
    /// its DRAM inputs' share loaded, its members' share made. Returns the bytes to free
    /// after the block.
    fn chain_block(&mut self, i: usize, extent: u64, from: u64, len: u64) -> u64 {
        let mut temp = 0u64;
        let chain = self.chains[i].clone();
        for &t in &chain.inputs {
            let b = share(self.whole(t), extent, from, len);
            // In the first tile, an input other members read by rows is read once: its
            // rows and the chain's pass over it are one transfer (the model counts it once
            // in I, and once more per later tile).
            if self.tile > 0 || self.reads[t].is_empty() {
                self.out.dram_bytes += b;
            }
            self.alloc(b);
            temp += b;
        }
        for &c in &chain.members {
            let b = share(self.whole(c), extent, from, len);
            let rc = self.p.constant_bytes[c];
            if rc > 0 {
                let cb = share(
                    part(rc, self.parts[c], self.slice / self.period[c]),
                    extent,
                    from,
                    len,
                );
                self.out.dram_bytes += cb;
                self.alloc(cb);
                temp += cb;
            }
            self.alloc(b);
            temp += b;
        }
        temp
    }

    fn run(mut self) -> Simulation {
        let v = self.v;
        let n = v.tensors.len();
        let m = v.len();
        for slice in 0..self.slices {
            self.slice = slice;
            for t in 0..n {
                if slice % self.period[t] == 0 {
                    self.start_part(t);
                }
            }
            if self.line {
                run_phases(v, &mut self);
            } else {
                for tile in 0..self.tiles {
                    self.tile = tile;
                    demand(v, self.r, self.h, tile, &mut self.need);
                    for i in (0..m).rev() {
                        if !self.chain_only[i] {
                            self.ensure(i, self.need[i] as i64);
                        }
                    }
                }
            }
            // Input rows no window reads still load (each part is read exactly once).
            for t in m..n {
                if (slice + 1) % self.period[t] == 0 && !self.reads[t].is_empty() {
                    self.ensure(t, i64::MAX);
                }
            }
        }
        // Everything made or loaded was freed: only the resident weights and the constants
        // held across slices remain.
        let held: u64 = (0..m)
            .filter(|&i| self.constant_loaded[i])
            .map(|i| self.p.weights[i])
            .sum();
        debug_assert!(!self.alive.iter().any(|&a| a), "a row outlived its readers");
        debug_assert_eq!(self.occupancy, self.resident + held);
        self.out
    }
}

impl Rows for Nest<'_> {
    fn made(&self, i: usize) -> u64 {
        self.done[i]
    }

    fn make(&mut self, i: usize, r: u64) {
        self.ensure(i, r as i64);
    }
}
