//! [`BufferSimulator`]: runs a group's LBDF schedule row by row and measures the buffer.
//!
//! The simulator checks the analytic model against an execution:
//! - every node computes each of its rows once, in order, at the step the model schedules it
//!   (below), or **just in time** before that, when a consumer's row needs it;
//! - rows of `In(φ)` are loaded from DRAM, in order, when first needed (a row that no window
//!   reads, such as an odd row under a 1×1 stride-2 convolution, is loaded and dropped, so
//!   that every input tensor is read exactly once);
//! - a row is freed as soon as no later computation in φ needs it (a row no consumer reads at
//!   all is freed as soon as it is made, after its write-back if the tensor is in `Out(φ)`);
//! - rows of `Out(φ)` are written back as they are computed;
//! - the weights are loaded once and stay resident (LBDF).
//!
//! **Schedule.** The simulator runs the schedule of [`Lbdf`]'s analysis. The phases run from
//! the highest down to 0. In each, row `r` of a member `t` of the phase is due at step
//! `(r − hi_t)/a_t`, the step at which the model makes it `t`'s newest needed row (the phase's
//! whole tensors and, in phase 0, the pure group outputs have `a = 1`, `hi = 0`: they emit one
//! row per step in lockstep). Rows are made in order of due step, an exact fraction, consumers
//! first on ties, each pulling the rows it reads just in time. So within a step a tensor at
//! rate `a_t > 1` makes its rows one at a time between its consumers' rows, as the model's
//! band of `hi_t − lo_t + 1` rows assumes: a tensor read by two strided branches is shared row
//! by row (advancing one branch a whole step first would make all `a_t` rows of the step before
//! the other branch reads any). Rows that no output row needs (bottom rows that only the
//! write-back wants) come in the same order, so they too are made just in time.
//!
//! **Occupancy** is sampled after every allocation (a computed or loaded row), before frees:
//! the sample at a row's computation holds every input row it reads. The peak is the largest
//! sample, weights included.
//!
//! # Complexity
//! `O(Σ_t H_t · (k + log m))` over the group's tensors and windows, for `m` members.

use crate::config::CostConfig;
use crate::error::Result;
use crate::model::TensorKind;
use crate::view::{View, Window, with_view};
use fuselage_ir::{Graph, NodeSet};
use serde::{Deserialize, Serialize};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// What a simulated run of a group measured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Simulation {
    /// The largest occupancy, weights included, in bytes.
    pub peak_bytes: u64,
    /// The event at which the peak was first reached.
    pub peak_step: u64,
    /// DRAM bytes moved: input rows loaded, output rows written, weights loaded.
    pub dram_bytes: u64,
    /// The group's weight bytes (resident throughout).
    pub weight_bytes: u64,
    /// Rows computed.
    pub rows_computed: u64,
    /// Input rows loaded.
    pub rows_loaded: u64,
    /// `(event, occupancy bytes)` after every allocation, weights included.
    pub timeline: Vec<(u64, u64)>,
}

/// Simulates LBDF schedules. See the module docs.
///
/// # Example
/// ```
/// use fuselage_cost::{BufferSimulator, CostConfig, CostModel, Lbdf};
/// use fuselage_ir::{ConvAttrs, GraphBuilder, NodeSet, Op, TensorShape};
/// let mut b = GraphBuilder::new("tiny");
/// let x = b.input("input", TensorShape::nchw(4, 16, 16))?;
/// let c = b.node("c", Op::Conv(ConvAttrs::square(4, 3, 1, 1, 1)), &[x])?;
/// b.node("r", Op::Relu, &[c])?;
/// let g = b.finish()?;
/// let config = CostConfig::kib(64)?;
/// let all = NodeSet::full(g.len());
/// let sim = BufferSimulator::new(config).run(&g, &all)?;
/// let cost = Lbdf::new(config).evaluate(&g, &all)?;
/// assert_eq!(sim.dram_bytes, cost.dram_bytes);
/// assert!(sim.peak_bytes <= cost.buffer_bytes);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BufferSimulator {
    config: CostConfig,
    timeline: bool,
}

impl BufferSimulator {
    /// A simulator with `config`'s element size (β is not used: the simulator measures).
    pub fn new(config: CostConfig) -> Self {
        BufferSimulator {
            config,
            timeline: true,
        }
    }

    /// Whether to record the occupancy timeline (on by default).
    pub fn with_timeline(self, on: bool) -> Self {
        BufferSimulator {
            timeline: on,
            ..self
        }
    }

    /// Simulates `group` of `g`.
    ///
    /// # Errors
    /// As [`CostModel::evaluate`](crate::CostModel::evaluate).
    pub fn run(&self, g: &Graph, group: &NodeSet) -> Result<Simulation> {
        with_view(g, group, &self.config, |v| {
            v.lbdf(true);
            Ok(Sim::new(v, self.timeline).run())
        })
    }
}

/// A consumer port, seen from the tensor it reads.
#[derive(Copy, Clone, Debug)]
struct Reader {
    /// The consumer member.
    member: u32,
    window: Window,
}

struct Sim<'a> {
    v: &'a View,
    /// Rows computed (or loaded) so far, per tensor.
    done: Vec<u64>,
    /// Per tensor-row: consumer ports that still need the row. `row_base[t]` is the offset.
    pending: Vec<u32>,
    row_base: Vec<usize>,
    alive: Vec<bool>,
    occupancy: u64,
    out: Simulation,
    record: bool,
}

impl<'a> Sim<'a> {
    fn new(v: &'a View, record: bool) -> Self {
        let n = v.tensors.len();
        let mut readers: Vec<Vec<Reader>> = vec![Vec::new(); n];
        for i in 0..v.len() {
            for p in v.ports_of(i) {
                readers[p.tensor as usize].push(Reader {
                    member: i as u32,
                    window: p.window,
                });
            }
        }
        let row_base = row_bases(v);
        let total = row_base[n];
        let mut pending = vec![0u32; total];
        for (t, rs) in readers.iter().enumerate() {
            let h = v.tensors[t].h as i64;
            for r in rs {
                let hc = v.tensors[r.member as usize].h as i64;
                for i in 0..h {
                    if r.window.reads(i, hc) {
                        pending[row_base[t] + i as usize] += 1;
                    }
                }
            }
        }
        let w = v.weight_bytes;
        Sim {
            v,
            done: vec![0; n],
            alive: vec![false; total],
            pending,
            row_base,
            occupancy: w,
            out: Simulation {
                peak_bytes: w,
                peak_step: 0,
                dram_bytes: w,
                weight_bytes: w,
                rows_computed: 0,
                rows_loaded: 0,
                timeline: Vec::new(),
            },
            record,
        }
    }

    fn sample(&mut self) {
        let step = self.out.rows_computed + self.out.rows_loaded;
        if self.occupancy > self.out.peak_bytes {
            self.out.peak_bytes = self.occupancy;
            self.out.peak_step = step;
        }
        if self.record {
            self.out.timeline.push((step, self.occupancy));
        }
    }

    fn free_if_unneeded(&mut self, t: usize, i: u64) {
        let k = self.row_base[t] + i as usize;
        if self.alive[k] && self.pending[k] == 0 {
            self.alive[k] = false;
            self.occupancy -= self.v.tensors[t].row;
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
            } else {
                self.compute(t, i);
            }
        }
    }

    fn load(&mut self, t: usize, i: u64) {
        let row = self.v.tensors[t].row;
        self.alive[self.row_base[t] + i as usize] = true;
        self.occupancy += row;
        self.out.dram_bytes += row;
        self.out.rows_loaded += 1;
        self.done[t] = i + 1;
        self.sample();
        self.free_if_unneeded(t, i);
    }

    /// Computes row `r` of member `c`.
    fn compute(&mut self, c: usize, r: u64) {
        let v = self.v;
        for p in v.ports_of(c) {
            self.ensure(p.tensor as usize, p.window.last_row(r));
        }
        let info = v.tensors[c];
        self.alive[self.row_base[c] + r as usize] = true;
        self.occupancy += info.row;
        if info.kind == TensorKind::Out {
            self.out.dram_bytes += info.row;
        }
        self.out.rows_computed += 1;
        self.done[c] = r + 1;
        self.sample();
        // Release the input rows whose last reader was this row.
        let hc = info.h as i64;
        for p in v.ports_of(c) {
            let t = p.tensor as usize;
            let h = v.tensors[t].h as i64;
            let Some((lo, hi)) = p.window.last_read_by(r as i64, hc, h) else {
                continue;
            };
            for i in lo..=hi {
                let k = self.row_base[t] + i as usize;
                self.pending[k] -= 1;
                self.free_if_unneeded(t, i as u64);
            }
        }
        self.free_if_unneeded(c, r);
    }

    fn run(mut self) -> Simulation {
        let v = self.v;
        run_phases(v, &mut self);
        for t in v.len()..v.tensors.len() {
            self.ensure(t, i64::MAX);
        }
        self.out
    }
}

impl Rows for Sim<'_> {
    fn made(&self, i: usize) -> u64 {
        self.done[i]
    }

    fn make(&mut self, i: usize, r: u64) {
        self.ensure(i, r as i64);
    }
}

/// Where each tensor's rows start in one flat per-row array, and (last) the rows in all.
pub(crate) fn row_bases(v: &View) -> Vec<usize> {
    let mut bases = Vec::with_capacity(v.tensors.len() + 1);
    let mut total = 0;
    for t in &v.tensors {
        bases.push(total);
        total += t.h as usize;
    }
    bases.push(total);
    bases
}

/// A row-by-row run that LBDF's phased order can drive: how many rows of a member exist, and
/// making the next one (pulling what it reads).
pub(crate) trait Rows {
    /// Rows of member `i` made so far.
    fn made(&self, i: usize) -> u64;
    /// Makes rows of member `i` up to `r`.
    fn make(&mut self, i: usize, r: u64);
}

/// LBDF's phased row order (see the module docs): the phases from the highest down; in each,
/// every member's rows in order of due step, consumers first on ties.
pub(crate) fn run_phases(v: &View, rows: &mut impl Rows) {
    let m = v.len();
    let top = v.streams[..m].iter().map(|s| s.phase).max().unwrap_or(0);
    // Queues member `i`'s next row, if it has one left, at its due step.
    let schedule = |queue: &mut BinaryHeap<(Reverse<Due>, u32, u64)>, rows: &dyn Rows, i| {
        let r = rows.made(i);
        if r < v.tensors[i].h {
            let st = v.streams[i];
            queue.push((Reverse(Due::of(r, st.hi, st.rate)), i as u32, r));
        }
    };
    let mut queue = BinaryHeap::new();
    for phase in (0..=top).rev() {
        queue.clear();
        for i in (0..m).filter(|&i| v.streams[i].phase == phase) {
            schedule(&mut queue, rows, i);
        }
        while let Some((_, i, r)) = queue.pop() {
            let i = i as usize;
            if rows.made(i) == r {
                rows.make(i, r);
            }
            // Made now, or already pulled ahead by a consumer: queue the next row.
            schedule(&mut queue, rows, i);
        }
    }
}

/// The step at which a row is due: row `r` of a tensor with rate `a` and offset `hi` is the
/// newest needed row at step `(r − hi)/a`, kept as an exact fraction.
#[derive(Copy, Clone, Debug)]
struct Due {
    num: i128,
    /// Positive.
    den: i128,
}

impl Due {
    fn of(r: u64, hi: i64, rate: i64) -> Due {
        // |r − hi| < 2^64 and 1 ≤ rate < 2^63, so cross products stay below 2^127.
        Due {
            num: i128::from(r) - i128::from(hi),
            den: i128::from(rate.max(1)),
        }
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Due) -> Ordering {
        (self.num * other.den).cmp(&(other.num * self.den))
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Due) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Due {
    fn eq(&self, other: &Due) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Due {}
