//! The group view: a group's tensors and ports, flattened into small vectors, and the passes
//! of the analytic models over them.
//!
//! Design:
//! - One [`View`] is built per costed group. It lists the group's nodes (`members`, in id and
//!   so topological order), then the tensors: one per member (its output), then one per
//!   tensor of `In(φ)`. Each member's input ports point at tensor indices and carry their row
//!   window ([`Window`]).
//! - Views live in a thread-local [`Scratch`], so costing a group allocates nothing once the
//!   vectors have grown: the hot path of a search is one build and one pass.
//! - The passes ([`View::lbdf`], [`View::brr`]) walk members in reverse topological order
//!   and *push* each consumer's request onto the tensors it reads, so that when a member is
//!   reached every request on its output is in.

use crate::config::CostConfig;
use crate::error::{CostError, Result};
use crate::model::TensorKind;
use fuselage_ir::{Graph, NodeId, NodeSet, RowRead, Source};
use std::cell::RefCell;

/// How an output row of a node reads one input port.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Window {
    /// Output row `r` reads rows `[stride·r − pad, stride·r − pad + k − 1]`, clipped.
    Rows {
        /// Window height (dilated kernel height).
        k: i64,
        /// Step along H.
        stride: i64,
        /// Top padding.
        pad: i64,
    },
    /// All rows of the input, before any output row.
    Whole,
}

impl Window {
    /// The last input row that output row `r` reads (`i64::MAX` for a whole read), unclipped.
    pub(crate) fn last_row(self, r: u64) -> i64 {
        match self {
            Window::Whole => i64::MAX,
            Window::Rows { k, stride, pad } => stride
                .saturating_mul(r as i64)
                .saturating_sub(pad)
                .saturating_add(k - 1),
        }
    }

    /// Whether some of a reader's `hc` output rows reads input row `i`.
    pub(crate) fn reads(self, i: i64, hc: i64) -> bool {
        match self {
            Window::Whole => hc > 0,
            Window::Rows { k, stride, pad } => {
                let first = ((i + pad - k + 1).max(0) as u64).div_ceil(stride as u64) as i64;
                let last = (i + pad).div_euclid(stride).min(hc - 1);
                first <= last
            }
        }
    }

    /// The input rows (of `h`) whose last reader is output row `r` (of `hc`), if any: what a
    /// simulator frees once that row is made.
    pub(crate) fn last_read_by(self, r: i64, hc: i64, h: i64) -> Option<(i64, i64)> {
        match self {
            Window::Whole if r == hc - 1 => Some((0, h - 1)),
            Window::Whole => None,
            Window::Rows { k, stride, pad } => {
                let lo = stride.saturating_mul(r).saturating_sub(pad);
                let hi = if r == hc - 1 {
                    lo + k - 1
                } else {
                    (lo + k - 1).min(lo + stride - 1)
                };
                Some((lo.max(0), hi.min(h - 1)))
            }
        }
    }
}

#[cfg(test)]
const POINTWISE: Window = Window::Rows {
    k: 1,
    stride: 1,
    pad: 0,
};

/// The window of `node`'s input `port`: the IR's row rule ([`fuselage_ir::rows`]).
pub(crate) fn window(g: &Graph, node: NodeId, port: usize) -> Window {
    match g.row_read(node, port) {
        RowRead::Window { k, stride, pad } => Window::Rows {
            k: k as i64,
            stride: stride as i64,
            pad,
        },
        RowRead::Whole => Window::Whole,
    }
}

/// One tensor of a group: a member's output or a tensor of `In(φ)`.
#[derive(Copy, Clone, Debug)]
pub(crate) struct TensorInfo {
    /// The producer (or graph input).
    pub source: Source,
    /// `H_t`.
    pub h: u64,
    /// `row(t)` in bytes.
    pub row: u64,
    /// In, internal or out.
    pub kind: TensorKind,
}

impl TensorInfo {
    pub(crate) fn bytes(&self) -> u64 {
        self.h * self.row
    }
}

/// One input port of a member.
#[derive(Copy, Clone, Debug)]
pub(crate) struct PortInfo {
    /// Index of the tensor read.
    pub tensor: u32,
    /// How it is read.
    pub window: Window,
}

/// A request on a tensor, accumulated over its consumer ports (LBDF).
#[derive(Copy, Clone, Debug, Default)]
struct Request {
    any: bool,
    whole: bool,
    rate: i64,
    lo: i64,
    hi: i64,
    phase: u32,
}

/// How a tensor streams under LBDF.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stream {
    /// Resident rows.
    pub resident: u64,
    /// Rows per step, `a_t`.
    pub rate: i64,
    /// Newest needed row at step 0, `hi_t`.
    pub hi: i64,
    /// Phase: 0 for tensors that stream with the group's outputs; a tensor held whole is
    /// produced in a phase after (higher than) every phase that reads it.
    pub phase: u32,
    /// Held whole.
    pub whole: bool,
    /// No consumer in the group (a pure group output, one staging row).
    pub pure: bool,
}

/// A group flattened for the passes.
#[derive(Debug, Default)]
pub(crate) struct View {
    /// The group's nodes, in id order.
    pub members: Vec<fuselage_ir::NodeId>,
    /// Members' outputs (same index as `members`), then the tensors of `In(φ)`.
    pub tensors: Vec<TensorInfo>,
    /// Input ports of all members, member by member.
    pub ports: Vec<PortInfo>,
    /// `ports[port_start[i]..port_start[i + 1]]` are member `i`'s ports.
    pub port_start: Vec<u32>,
    /// `W(φ)` in bytes.
    pub weight_bytes: u64,
    /// Graph node index → member index (`u32::MAX` outside); reset after every build.
    slot: Vec<u32>,
    /// Union-find parents, for the connectivity check.
    uf: Vec<u32>,
    /// Pass state.
    requests: Vec<Request>,
    asks: Vec<u64>,
    /// LBDF results, one per tensor (filled by [`View::lbdf`]).
    pub streams: Vec<Stream>,
    /// BRR rows, one per tensor (filled by [`View::brr`]).
    pub rows: Vec<u64>,
}

fn find(uf: &mut [u32], mut x: u32) -> u32 {
    while uf[x as usize] != x {
        let p = uf[uf[x as usize] as usize];
        uf[x as usize] = p;
        x = p;
    }
    x
}

impl View {
    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Member `i`'s ports.
    pub fn ports_of(&self, i: usize) -> &[PortInfo] {
        &self.ports[self.port_start[i] as usize..self.port_start[i + 1] as usize]
    }

    /// Flattens `group` of `g` with `(weight, activation)` element sizes of `b` bytes.
    ///
    /// # Errors
    /// [`CostError::GroupSize`], or the IR's error for an empty or disconnected group.
    pub fn build(&mut self, g: &Graph, group: &NodeSet, (wb, b): (u64, u64)) -> Result<()> {
        if group.capacity() != g.len() {
            return Err(CostError::GroupSize {
                model: g.name().to_string(),
                expected: g.len(),
                found: group.capacity(),
            });
        }
        self.members.clear();
        self.tensors.clear();
        self.ports.clear();
        self.port_start.clear();
        self.members.extend(group.iter());
        if self.members.is_empty() {
            return Err(fuselage_ir::IrError::EmptyGroup { group: 0 }.into());
        }
        if self.slot.len() < g.len() {
            self.slot.resize(g.len(), u32::MAX);
        }
        let m = self.members.len();
        let mut weights = 0;
        for (i, &v) in self.members.iter().enumerate() {
            self.slot[v.index()] = i as u32;
            let node = g.node(v);
            weights += node.weights;
            let outside = g.consumers(v).iter().any(|&(c, _)| !group.contains(c));
            let kind = if outside || g.is_output(v) {
                TensorKind::Out
            } else {
                TensorKind::Internal
            };
            let src = Source::Node(v);
            self.tensors.push(TensorInfo {
                source: src,
                h: g.rows_of(src),
                row: b * g.row_elements(src),
                kind,
            });
        }
        self.weight_bytes = weights.saturating_mul(wb);
        self.uf.clear();
        self.uf.extend(0..m as u32);
        for i in 0..m {
            self.port_start.push(self.ports.len() as u32);
            let node = g.node(self.members[i]);
            for (port, &src) in node.inputs.iter().enumerate() {
                let inner = match src {
                    Source::Node(p) if self.slot[p.index()] != u32::MAX => {
                        Some(self.slot[p.index()])
                    }
                    _ => None,
                };
                let tensor = match inner {
                    Some(j) => {
                        let (a, c) = (find(&mut self.uf, i as u32), find(&mut self.uf, j));
                        self.uf[a as usize] = c;
                        j
                    }
                    None => match self.tensors[m..].iter().position(|t| t.source == src) {
                        Some(k) => (m + k) as u32,
                        None => {
                            self.tensors.push(TensorInfo {
                                source: src,
                                h: g.rows_of(src),
                                row: b * g.row_elements(src),
                                kind: TensorKind::In,
                            });
                            (self.tensors.len() - 1) as u32
                        }
                    },
                };
                self.ports.push(PortInfo {
                    tensor,
                    window: window(g, self.members[i], port),
                });
            }
        }
        self.port_start.push(self.ports.len() as u32);
        for &v in &self.members {
            self.slot[v.index()] = u32::MAX;
        }
        let root = find(&mut self.uf, 0);
        if (1..m as u32).any(|i| find(&mut self.uf, i) != root) {
            g.check_group(group, 0)?;
        }
        Ok(())
    }

    /// The activation floor: of every tensor the group touches, the rows its widest reader's
    /// window spans (one row when nothing in the group reads it; all rows when a member reads
    /// it whole). LBDF keeps at least a window's span of a tensor in its band and BRR asks at
    /// least `k` rows of it for a one-row tile, and a larger group touches a superset of
    /// tensors through a superset of ports, so this never exceeds the activation footprint of
    /// the group or of any group containing it.
    pub fn activation_floor(&mut self) -> u64 {
        self.asks.clear();
        self.asks.resize(self.tensors.len(), 1);
        for port in &self.ports {
            let t = port.tensor as usize;
            let want = match port.window {
                Window::Rows { k, .. } => u64::try_from(k).unwrap_or(1),
                Window::Whole => u64::MAX,
            };
            self.asks[t] = self.asks[t].max(want);
        }
        self.tensors
            .iter()
            .zip(&self.asks)
            .map(|(t, &ask)| ask.clamp(1, t.h.max(1)).saturating_mul(t.row))
            .fold(0, u64::saturating_add)
    }

    /// Why each tensor keeps its LBDF band, after [`View::lbdf`]: no reader → a staging row;
    /// held whole → read whole by a member, or else across a barrier; a band wider than any
    /// one reader's window → a skip; otherwise the window.
    pub fn lbdf_reasons(&self) -> Vec<crate::model::Residency> {
        use crate::model::Residency;
        let n = self.tensors.len();
        let mut widest = vec![0u64; n];
        let mut whole_port = vec![false; n];
        let mut read = vec![false; n];
        for port in &self.ports {
            let t = port.tensor as usize;
            read[t] = true;
            match port.window {
                Window::Rows { k, .. } => widest[t] = widest[t].max(u64::try_from(k).unwrap_or(1)),
                Window::Whole => whole_port[t] = true,
            }
        }
        (0..n)
            .map(|t| {
                let st = &self.streams[t];
                if !read[t] {
                    Residency::Staging
                } else if st.whole && whole_port[t] {
                    Residency::WholeRead
                } else if st.whole {
                    Residency::Barrier
                } else if st.resident > widest[t].min(self.tensors[t].h.max(1)) {
                    Residency::Skip
                } else {
                    Residency::Window
                }
            })
            .collect()
    }

    /// Whether a member reads each tensor whole.
    pub fn read_whole(&self) -> Vec<bool> {
        let mut whole = vec![false; self.tensors.len()];
        for port in &self.ports {
            if port.window == Window::Whole {
                whole[port.tensor as usize] = true;
            }
        }
        whole
    }

    /// `(I, O)`: bytes of `In(φ)` and of `Out(φ)`.
    pub fn io_bytes(&self) -> (u64, u64) {
        let (mut i, mut o) = (0, 0);
        for t in &self.tensors {
            match t.kind {
                TensorKind::In => i += t.bytes(),
                TensorKind::Out => o += t.bytes(),
                TensorKind::Internal => {}
            }
        }
        (i, o)
    }

    /// The LBDF backward pass; fills [`View::streams`] and returns `Σ resident_t · row(t)`.
    ///
    /// With `phased`, requests from different phases make a tensor whole (see the crate
    /// docs); without, every tensor is in phase 0 (the contract's rule read literally).
    pub fn lbdf(&mut self, phased: bool) -> u64 {
        let n = self.tensors.len();
        let m = self.members.len();
        self.requests.clear();
        self.requests.resize(n, Request::default());
        self.streams.clear();
        self.streams.resize(n, Stream::default());
        let mut total = 0;
        for i in (0..m).rev() {
            let st = finish(&self.requests[i], self.tensors[i].h, phased);
            self.streams[i] = st;
            total += st.resident * self.tensors[i].row;
            let (lo_port, hi_port) = (self.port_start[i] as usize, self.port_start[i + 1] as usize);
            for p in lo_port..hi_port {
                let port = self.ports[p];
                let req = &mut self.requests[port.tensor as usize];
                let phase = if phased { st.phase } else { 0 };
                match port.window {
                    Window::Rows { k, stride, pad } => {
                        // Saturating: a chain of strides on a one-row tensor (a corrupt or
                        // absurd graph) must not overflow; real rates stay far below i64.
                        let lo = stride.saturating_mul(st.hi).saturating_sub(pad);
                        let hi = lo.saturating_add(k - 1);
                        merge(req, false, stride.saturating_mul(st.rate), lo, hi, phase);
                    }
                    Window::Whole => merge(req, true, 0, 0, 0, phase),
                }
            }
        }
        for i in m..n {
            let st = finish(&self.requests[i], self.tensors[i].h, phased);
            self.streams[i] = st;
            total += st.resident * self.tensors[i].row;
        }
        total
    }

    /// `H_max`: the most rows of a tensor of `Out(φ)` (of any member's output when the group
    /// writes nothing).
    pub fn h_max(&self) -> u64 {
        let m = self.members.len();
        let out = self.tensors[..m]
            .iter()
            .filter(|t| t.kind == TensorKind::Out)
            .map(|t| t.h)
            .max();
        out.unwrap_or_else(|| self.tensors[..m].iter().map(|t| t.h).max().unwrap_or(1))
            .max(1)
    }

    /// The BRR backward pass for tiles of `h` rows of the tallest output; fills
    /// [`View::rows`] and returns `F(h) = Σ rows_t · row(t)`.
    pub fn brr(&mut self, h: u64, h_max: u64) -> u64 {
        self.brr_pass(h, h_max, true)
    }

    /// BRR's floor: the pass for one-row tiles without the rows a group output asks for its
    /// own sake. Every other ask only grows as members are added (a new consumer adds an ask;
    /// a consumer's rows grow, so its window over its input grows), so this never exceeds
    /// `F(1)` of the group or of any group containing it.
    pub fn brr_floor(&mut self) -> u64 {
        self.brr_pass(1, 1, false)
    }

    fn brr_pass(&mut self, h: u64, h_max: u64, out_asks: bool) -> u64 {
        let n = self.tensors.len();
        let m = self.members.len();
        self.asks.clear();
        self.asks.resize(n, 0);
        self.rows.clear();
        self.rows.resize(n, 0);
        let mut total = 0;
        for i in (0..m).rev() {
            let t = self.tensors[i];
            let mut ask = self.asks[i];
            if out_asks && t.kind == TensorKind::Out {
                ask = ask.max((h * t.h).div_ceil(h_max));
            }
            let rows = ask.clamp(1, t.h.max(1));
            self.rows[i] = rows;
            total += rows * t.row;
            for p in self.port_start[i] as usize..self.port_start[i + 1] as usize {
                let port = self.ports[p];
                let want = match port.window {
                    Window::Rows { k, stride, .. } => (rows - 1)
                        .saturating_mul(stride as u64)
                        .saturating_add(k as u64),
                    Window::Whole => u64::MAX,
                };
                let a = &mut self.asks[port.tensor as usize];
                *a = (*a).max(want);
            }
        }
        for i in m..n {
            let t = self.tensors[i];
            let rows = self.asks[i].clamp(1, t.h.max(1));
            self.rows[i] = rows;
            total += rows * t.row;
        }
        total
    }
}

fn merge(req: &mut Request, whole: bool, rate: i64, lo: i64, hi: i64, phase: u32) {
    if !req.any {
        *req = Request {
            any: true,
            whole,
            rate,
            lo,
            hi,
            phase,
        };
        return;
    }
    if whole || req.whole || rate != req.rate || phase != req.phase {
        req.whole = true;
        req.phase = req.phase.max(phase);
        return;
    }
    req.lo = req.lo.min(lo);
    req.hi = req.hi.max(hi);
}

fn finish(req: &Request, h: u64, phased: bool) -> Stream {
    let h = h.max(1);
    if !req.any {
        return Stream {
            resident: 1,
            rate: 1,
            hi: 0,
            phase: 0,
            whole: false,
            pure: true,
        };
    }
    if req.whole {
        let phase = if phased { req.phase + 1 } else { 0 };
        return Stream {
            resident: h,
            rate: 1,
            hi: 0,
            phase,
            whole: true,
            pure: false,
        };
    }
    let span = req.hi.saturating_sub(req.lo).saturating_add(1).max(1) as u64;
    Stream {
        resident: span.min(h),
        rate: req.rate,
        hi: req.hi,
        phase: req.phase,
        whole: false,
        pure: false,
    }
}

/// Per-thread reusable views.
#[derive(Debug, Default)]
struct Scratch {
    view: View,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` on this thread's scratch (a fresh one if it is in use further up the stack).
fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// Runs `f` on this thread's [`View`] of `group`, built at `config`'s element sizes: the
/// first step of every model's and the simulator's answer.
pub(crate) fn with_view<R>(
    g: &Graph,
    group: &NodeSet,
    config: &CostConfig,
    f: impl FnOnce(&mut View) -> Result<R>,
) -> Result<R> {
    with_scratch(|s| {
        s.view.build(
            g,
            group,
            (
                config.weight_element_bytes(),
                config.activation_element_bytes(),
            ),
        )?;
        f(&mut s.view)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuselage_ir::{ConvAttrs, GraphBuilder, Op, PoolAttrs, TensorShape};

    fn view(g: &Graph, names: &[&str]) -> View {
        let mut v = View::default();
        v.build(g, &g.set_of(names).unwrap(), (1, 1)).unwrap();
        v
    }

    #[test]
    fn windows_follow_the_table() {
        let mut b = GraphBuilder::new("w");
        let x = b.input("input", TensorShape::nchw(4, 16, 16)).unwrap();
        let d = b
            .node("dil", Op::Conv(ConvAttrs::square(4, 3, 2, 2, 1)), &[x])
            .unwrap();
        let p = b
            .node("pool", Op::MaxPool(PoolAttrs::square(3, 2, 1, false)), &[x])
            .unwrap();
        let pad = b
            .node("pad", Op::pad(vec![0, 0, 1, 0, 0, 0, 2, 0]), &[x])
            .unwrap();
        let cat_h = b.node("cat_h", Op::concat(2), &[x, x]).unwrap();
        let cat_c = b.node("cat_c", Op::concat(1), &[x, x]).unwrap();
        let gap = b.node("gap", Op::GlobalAveragePool, &[x]).unwrap();
        let se = b.node("se", Op::Mul, &[gap, x]).unwrap();
        let g = b.finish().unwrap();
        let w = |s: Source, port: usize| window(&g, s.node().unwrap(), port);
        assert_eq!(
            w(d, 0),
            Window::Rows {
                k: 5,
                stride: 2,
                pad: 2
            }
        );
        assert_eq!(
            w(p, 0),
            Window::Rows {
                k: 3,
                stride: 2,
                pad: 1
            }
        );
        assert_eq!(
            w(pad, 0),
            Window::Rows {
                k: 1,
                stride: 1,
                pad: 1
            }
        );
        // Along H each port streams its own rows, the second 16 rows down.
        assert_eq!(w(cat_h, 0), POINTWISE);
        assert_eq!(
            w(cat_h, 1),
            Window::Rows {
                k: 1,
                stride: 1,
                pad: 16
            }
        );
        assert_eq!(w(cat_c, 1), POINTWISE);
        assert_eq!(w(gap, 0), Window::Whole);
        assert_eq!(w(se, 0), Window::Whole);
        assert_eq!(w(se, 1), POINTWISE);
    }

    /// input -> conv -> [SE: gap -> sigmoid -> mul] -> add(input) : the skip crosses the
    /// barrier of the global pool.
    fn se_with_skip() -> Graph {
        let mut b = GraphBuilder::new("se");
        let x = b.input("input", TensorShape::nchw(4, 8, 8)).unwrap();
        let c = b
            .node("conv", Op::Conv(ConvAttrs::square(4, 3, 1, 1, 1)), &[x])
            .unwrap();
        let p = b.node("gap", Op::GlobalAveragePool, &[c]).unwrap();
        let s = b.node("sig", Op::Sigmoid, &[p]).unwrap();
        let m = b.node("mul", Op::Mul, &[s, c]).unwrap();
        b.node("add", Op::Add, &[m, x]).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn a_skip_across_a_whole_read_is_held_whole_with_phases() {
        let g = se_with_skip();
        let mut v = view(&g, &["conv", "gap", "sig", "mul", "add"]);
        let input = v.len();
        v.lbdf(true);
        // conv is read whole by the pool: phase 2 (the pool's output, phase 1, feeds the
        // broadcast port of the phase-0 mul). The input is read by conv (phase 2) and by the
        // add (phase 0): whole.
        assert_eq!((v.streams[0].whole, v.streams[0].phase), (true, 2));
        assert_eq!(v.streams[input].resident, 8);
        v.lbdf(false);
        // The literal rule: both ports ask at rate 1, so the input keeps a band of 3 rows.
        assert_eq!(v.streams[input].resident, 3);
    }

    #[test]
    fn mixed_rates_make_a_tensor_whole() {
        let mut b = GraphBuilder::new("mixed");
        let x = b.input("input", TensorShape::nchw(4, 8, 8)).unwrap();
        let r = b.node("r", Op::Relu, &[x]).unwrap();
        b.node("s2", Op::Conv(ConvAttrs::square(4, 1, 2, 1, 1)), &[r])
            .unwrap();
        b.node("s1", Op::Sigmoid, &[r]).unwrap();
        let g = b.finish().unwrap();
        let mut v = view(&g, &["r", "s2", "s1"]);
        v.lbdf(true);
        assert_eq!(v.streams[0].resident, 8);
        assert!(v.streams[0].whole && v.streams[1].pure && v.streams[2].pure);
        // r is made in its own phase, streaming as an output: 1 input row.
        assert_eq!(v.streams[3].resident, 1);
    }

    #[test]
    fn brr_rows_propagate_as_receptive_fields() {
        let mut b = GraphBuilder::new("rf");
        let x = b.input("input", TensorShape::nchw(1, 32, 4)).unwrap();
        let c = b
            .node("c", Op::Conv(ConvAttrs::square(1, 3, 2, 1, 1)), &[x])
            .unwrap();
        b.node("p", Op::MaxPool(PoolAttrs::square(2, 2, 0, false)), &[c])
            .unwrap();
        let g = b.finish().unwrap();
        let mut v = view(&g, &["c", "p"]);
        let h_max = v.h_max();
        assert_eq!(h_max, 8);
        // h = 2 pool rows -> (2-1)·2+2 = 4 conv rows -> (4-1)·2+3 = 9 input rows.
        // Row bytes: pool 1, conv 2, input 4.
        assert_eq!(v.brr(2, h_max), 2 + 4 * 2 + 9 * 4);
        assert_eq!(v.rows, vec![4, 2, 9]);
        // Clamped to the tensor.
        v.brr(100, h_max);
        assert_eq!(v.rows, vec![16, 8, 32]);
    }
}
