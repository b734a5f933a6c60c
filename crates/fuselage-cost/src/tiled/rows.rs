//! Rows, footprint and traffic at a tile height: how many rows each tensor keeps at `h` rows
//! of the tallest output ([`tile_rows`]), the rows each member makes in a tile of a skewed
//! loop nest ([`demand`]), the on-chip bytes that makes ([`Prep::footprint`]), and the bytes
//! read again over all tiles ([`Prep::reread_exact`]).

use super::prep::Prep;
use super::roles::{Roles, refill};
use crate::model::{OnChipBytes, TensorKind};
use crate::view::{View, Window};

impl Prep {
    pub(super) fn tiles(&self, v: &mut View, roles: &Roles, sliced: bool, h: u64) -> OnChipBytes {
        self.tiles_with(v, roles, sliced, h, 1)
    }

    /// The on-chip need of the tile regime at `h` rows of the tallest output and blocks of
    /// `block` elements.
    pub(super) fn tiles_with(
        &self,
        v: &mut View,
        roles: &Roles,
        sliced: bool,
        h: u64,
        block: u64,
    ) -> OnChipBytes {
        ROWS.with(|cell| {
            let mut scratch = cell.borrow_mut();
            let RowScratch { asks, rows, need } = &mut *scratch;
            tile_rows(v, roles, h, asks, rows, need);
            self.footprint(v, roles, rows, sliced, block)
        })
    }

    /// The on-chip need of the tile regime with `rows` per tensor.
    pub(super) fn footprint(
        &self,
        v: &View,
        roles: &Roles,
        rows: &[u64],
        sliced: bool,
        block: u64,
    ) -> OnChipBytes {
        let mut act = 0u64;
        for (t, info) in v.tensors.iter().enumerate() {
            let d = self.div(t, sliced);
            let whole = self.held[t] || roles.source[t];
            let b = if whole || (sliced && (self.merged[t] || self.shared[t])) {
                self.bytes[t] / d
            } else if roles.blocked[t] {
                let ext = roles.extent[t];
                rows[t]
                    .saturating_mul(info.row / ext.max(1))
                    .saturating_mul(block.min(ext))
                    / d
            } else if roles.chain[t] {
                // One block of keys for the chain; the rows other members read beside it.
                let keys = roles.keys[t].max(1);
                let chain = (self.bytes[t] / keys).saturating_mul(block.min(keys));
                rows[t].saturating_mul(info.row).saturating_add(chain) / d
            } else {
                rows[t].max(1).saturating_mul(info.row) / d
            };
            act = act.saturating_add(b);
        }
        let mut weights = 0u64;
        for (i, mem) in self.members.iter().enumerate() {
            let out_rows = rows[i].max(1);
            if roles.weights[i] {
                let w = self.weights[i];
                // Blocks of the axis the loop runs over: the input's blocked axis for a
                // contraction that sums blocks (rows of its weights), else its outputs.
                let blocked_in = v.ports_of(i).first().map(|q| q.tensor as usize);
                let ext = match blocked_in {
                    Some(t) if roles.blocked[t] => roles.extent[t],
                    _ => mem.out_extent,
                }
                .max(1);
                weights = weights.saturating_add((w / ext).max(1).saturating_mul(block.min(ext)));
            } else if sliced && self.shared_constant[i] {
                act = act.saturating_add(self.weights[i]);
            } else if mem.row_constant > 0 {
                let per = if roles.blocked[i] {
                    (mem.row_constant / roles.extent[i].max(1)).saturating_mul(block)
                } else {
                    mem.row_constant
                };
                act = act.saturating_add(out_rows.saturating_mul(per));
            } else {
                weights = weights.saturating_add(self.weights[i]);
            }
            if mem.softmax
                && v.ports_of(i)
                    .iter()
                    .any(|p| roles.blocked[p.tensor as usize])
            {
                // The online softmax's running maximum and sum, per row.
                let stats = 2 * out_rows * (v.tensors[i].row / self.last[i].max(1)).max(1);
                act = act.saturating_add(stats / self.div(i, sliced));
            }
        }
        OnChipBytes {
            weights,
            activations: act,
        }
    }

    /// Bytes read beyond `I + O + W` when the group runs `tiles` tiles of `h` rows in
    /// `slices` slices: each streamed operand is read once per tile in which its member makes
    /// rows (per slice, for weights). A member whose readers' windows reach ahead may make
    /// all its rows in fewer tiles than the group (the tiles of a chain of convolutions are
    /// skewed, see [`demand`]), so this is at most [`Roles::reread`].
    pub(super) fn reread_exact(
        &self,
        v: &View,
        roles: &Roles,
        h: u64,
        tiles: u64,
        slices: u64,
    ) -> u64 {
        if roles.reread_weights == 0 && roles.reread_chain == 0 {
            return 0;
        }
        let m = v.len();
        let mut need = vec![0u64; m];
        let mut made = vec![0u64; m];
        let mut busy = vec![0u64; m];
        for tile in 0..tiles {
            demand(v, roles, h, tile, &mut need);
            for i in 0..m {
                if need[i] + 1 > made[i] {
                    busy[i] += 1;
                    made[i] = need[i] + 1;
                }
            }
        }
        let mut bytes = 0u64;
        for (i, &busy) in busy.iter().enumerate() {
            let runs = busy.max(1);
            if roles.weights[i] {
                let w = self.weights[i].saturating_mul(runs.saturating_mul(slices) - 1);
                bytes = bytes.saturating_add(w);
            }
            if roles.right[i] {
                bytes = bytes.saturating_add(roles.chain_bytes[i].saturating_mul(runs - 1));
            }
        }
        bytes
    }
}

/// Rows each tensor keeps at `h` rows of the tallest output.
///
/// A tile runs in three steps: the members before the streaming ones produce, row by row,
/// the rows the tile needs; the streaming members (those that stream an operand or read a
/// blocked tensor) run block by block over all the tile's rows; the members after them
/// consume the finished rows one by one. So a tensor keeps the tile's rows when a streaming
/// member makes or reads it, or when two members read it (they may run in different steps:
/// a skip connection); otherwise it keeps the window its one reader asks for one row (a
/// streaming reader asks for its whole tile). Chain members and streamed ports ask nothing
/// (the chain runs one block at a time): 0 for a tensor nothing else reads.
pub(super) fn tile_rows(
    v: &View,
    roles: &Roles,
    h: u64,
    asks: &mut Vec<u64>,
    rows: &mut Vec<u64>,
    need: &mut Vec<u64>,
) {
    let n = v.tensors.len();
    let m = v.len();
    let h_max = v.h_max();
    refill(asks, n, 0);
    refill(rows, n, 0);
    // The first tile makes the most rows: the share, and the lead its readers reach for.
    refill(need, m, 0);
    demand(v, roles, h, 0, need);
    let keep = |t: usize, ask: u64| {
        let info = v.tensors[t];
        let mut r = ask;
        if roles.resident[t] || roles.readers[t] >= 2 {
            r = r.max(h.saturating_mul(info.h).div_ceil(h_max));
        }
        if t < m && roles.resident[t] && !roles.chain_only[t] {
            r = r.max(need[t] + 1);
        }
        if info.kind == TensorKind::Out || (t < m && !roles.chain[t]) {
            r = r.max(1);
        }
        if r == 0 { 0 } else { r.clamp(1, info.h.max(1)) }
    };
    for i in (0..m).rev() {
        rows[i] = keep(i, asks[i]);
        if roles.recomputed[i] && rows[i] == 0 {
            continue;
        }
        let burst = if roles.streaming[i] {
            rows[i].max(1)
        } else {
            1
        };
        for (port, p) in v.ports_of(i).iter().enumerate() {
            if port == 1 && roles.right[i] {
                continue;
            }
            let want = match p.window {
                Window::Rows { k, stride, .. } => (burst - 1)
                    .saturating_mul(stride as u64)
                    .saturating_add(k as u64),
                Window::Whole => u64::MAX,
            };
            let a = &mut asks[p.tensor as usize];
            *a = (*a).max(want);
        }
    }
    for t in m..n {
        rows[t] = keep(t, asks[t]);
    }
}

/// The last row of its `rows` that tile `tile` gives a tensor, at `h` rows a tile of the
/// tallest output (`h_max` rows): its share.
pub(super) fn tile_end(rows: u64, h: u64, h_max: u64, tile: u64) -> u64 {
    let end = (tile + 1)
        .saturating_mul(h)
        .saturating_mul(rows)
        .div_ceil(h_max.max(1));
    end.clamp(1, rows.max(1)) - 1
}

/// The last row each member makes in tile `tile` (of `h` rows of the tallest output): its
/// share of the tile, or more where a reader's window over its own rows of the tile reaches
/// further. So the tiles of a chain are skewed: a producer runs ahead by the halo its readers
/// need, and a member can make all its rows before the last tile.
pub(super) fn demand(v: &View, roles: &Roles, h: u64, tile: u64, need: &mut [u64]) {
    let m = v.len();
    let h_max = v.h_max();
    for (i, n) in need.iter_mut().enumerate().take(m) {
        let rows = v.tensors[i].h;
        // What a chain starts from is held whole: all its rows in the first tile.
        *n = if roles.source[i] {
            rows.max(1) - 1
        } else {
            tile_end(rows, h, h_max, tile)
        };
    }
    for c in (0..m).rev() {
        if roles.chain_only[c] {
            continue;
        }
        for (port, q) in v.ports_of(c).iter().enumerate() {
            let t = q.tensor as usize;
            if t >= m || (port == 1 && roles.right[c]) {
                continue;
            }
            let rows = v.tensors[t].h.max(1);
            let reach = q.window.last_row(need[c]).clamp(0, rows as i64 - 1) as u64;
            need[t] = need[t].max(reach);
        }
    }
    // A plain member makes every row its inputs already allow, so that a tensor made ahead
    // for one reader is not held for another that lags (the Q, K and V of one projection,
    // V read whole).
    for c in 0..m {
        if roles.chain_only[c] || roles.streaming[c] {
            continue;
        }
        // Only as far as what the group made allows (what it loads does not push it).
        if v.ports_of(c).iter().all(|q| q.tensor as usize >= m) {
            continue;
        }
        let mut can = v.tensors[c].h as i64 - 1;
        for q in v.ports_of(c) {
            let t = q.tensor as usize;
            if t >= m {
                continue;
            }
            let avail = need[t] as i64;
            let r = match q.window {
                Window::Whole if avail + 1 >= v.tensors[t].h as i64 => can,
                Window::Whole => -1,
                Window::Rows { k, stride, pad } => {
                    (avail + pad - (k - 1)).div_euclid(stride.max(1))
                }
            };
            can = can.min(r);
        }
        if can > need[c] as i64 {
            need[c] = can as u64;
        }
    }
}

/// Reused buffers of [`tile_rows`], one per thread.
#[derive(Default)]
pub(super) struct RowScratch {
    pub(super) asks: Vec<u64>,
    pub(super) rows: Vec<u64>,
    pub(super) need: Vec<u64>,
}

thread_local! {
    static ROWS: std::cell::RefCell<RowScratch> = std::cell::RefCell::new(RowScratch::default());
}
