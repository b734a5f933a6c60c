//! BRR: buffer-requirement reduction, after Optimus (Cai et al., LCTES 2021).
//!
//! A group runs in row tiles: a tile produces `h` rows of the group's tallest output, and the
//! rows each tensor needs propagate backward as a receptive field. Weights stay on chip when
//! they fit beside a one-row tile; otherwise they are streamed once per tile.
//!
//! ```text
//! rows_t(h) = clamp(max(asks), 1, H_t)   asks: (rows_c − 1)·α + k per window port, H_t per
//!                                         whole port, ⌈h·H_t/H_max⌉ for t ∈ Out(φ)
//! F(h)      = Σ_t rows_t(h) · row(t)
//! valid     ⇔ F(1) < β
//! W + F(1) < β:  h = max{h : W + F(h) < β}, F_D = I + O + W,   buffer = W + F(h)
//! otherwise:     h = max{h : F(h) < β},     F_D = I + O + T·W, buffer = F(h)
//! T = ⌈H_max / h⌉
//! ```
//!
//! With split buffers ([`OnChipBuffer::Split`](crate::OnChipBuffer)) the tiles live in the
//! activation buffer and the weights in theirs: valid ⇔ `F(1) < β_a`, the weights stay when
//! `W < β_w`, and `h = max{h : F(h) < β_a}` either way.
//!
//! `F` never falls as `h` grows, so `h` is found by binary search over `[1, H_max]`:
//! `O(log H_max)` passes of `O(|φ| + ports)` each.
//!
//! An invalid group (`F(1) ≥ β`) reports `buffer = F(1)`, one-row tiles (`h = 1`,
//! `T = H_max`) and streamed weights.

use crate::config::CostConfig;
use crate::error::Result;
use crate::model::{CostModel, GroupCost, OnChipBytes, Residency, TensorCost, Tiling};
use crate::tiles::TileFloor;
use crate::view::{View, with_view};
use fuselage_ir::{Graph, NodeSet};

/// The BRR cost model.
///
/// # Example
/// ```
/// use fuselage_cost::{Brr, CostConfig, CostModel};
/// use fuselage_ir::{ConvAttrs, GraphBuilder, NodeSet, Op, TensorShape};
/// let mut b = GraphBuilder::new("tiny");
/// let x = b.input("input", TensorShape::nchw(4, 16, 16))?;
/// let c = b.node("c", Op::Conv(ConvAttrs::square(4, 3, 1, 1, 1)), &[x])?;
/// b.node("r", Op::Relu, &[c])?;
/// let g = b.finish()?;
/// let brr = Brr::new(CostConfig::new(1024)?);
/// let cost = brr.evaluate(&g, &NodeSet::full(g.len()))?;
/// let t = cost.tiling.unwrap();
/// // F(1) = 3 input rows + 1 conv row + 1 relu row, 64 bytes each.
/// assert_eq!(t.min_footprint_bytes, 5 * 64);
/// // W = 148: W + F(h) = 148 + (h + 2 + 2h)·64 < 1024 gives h = 3.
/// assert!(t.weights_resident);
/// assert_eq!((t.tile_rows, t.tiles), (3, 6));
/// assert_eq!(cost.buffer_bytes, 148 + 11 * 64);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Brr {
    config: CostConfig,
}

impl Brr {
    /// BRR under `config`.
    pub fn new(config: CostConfig) -> Self {
        Brr { config }
    }

    /// The largest `h` in `[1, h_max]` whose `F(h)` fits beside `extra` bytes of on-chip
    /// weights, given that `h = 1` qualifies.
    ///
    /// `F` is close to linear in `h`, so the search guesses by interpolation between the
    /// bracket's ends, and bisects every other step to keep `O(log h_max)` passes when it is
    /// not; the answer is the same as plain bisection's.
    fn largest_tile(&self, view: &mut View, h_max: u64, extra: u64) -> (u64, u64) {
        let (mut lo, mut hi) = (1, h_max);
        let mut f_lo = view.brr(1, h_max);
        let mut f_hi = view.brr(h_max, h_max);
        if self.config.fits(extra, f_hi) {
            return (h_max, f_hi);
        }
        // Invariant: lo qualifies, hi does not.
        let target = self.config.activation_room(extra);
        let mut interpolate = true;
        while hi - lo > 1 {
            let mid = if interpolate && f_hi > f_lo {
                // The h at which the line through (lo, F(lo)) and (hi, F(hi)) reaches β - extra.
                let span = u128::from(hi - lo);
                let rise = u128::from(f_hi - f_lo);
                let room = u128::from(target.saturating_sub(f_lo));
                let step = (room * span / rise).min(span) as u64;
                (lo + step).clamp(lo + 1, hi - 1)
            } else {
                lo + (hi - lo) / 2
            };
            interpolate = !interpolate;
            let f = view.brr(mid, h_max);
            if self.config.fits(extra, f) {
                lo = mid;
                f_lo = f;
            } else {
                hi = mid;
                f_hi = f;
            }
        }
        (lo, f_lo)
    }

    pub(crate) fn run(&self, view: &mut View) -> GroupCost {
        let h_max = view.h_max();
        let f1 = view.brr(1, h_max);
        let io = view.io_bytes();
        let w = view.weight_bytes;
        let valid = self.config.fits(0, f1);
        let weights_resident = valid && self.config.fits(w, f1);
        let (h, on_chip) = if !valid {
            (1, (0, f1))
        } else if weights_resident {
            let (h, f) = self.largest_tile(view, h_max, w);
            (h, (w, f))
        } else {
            let (h, f) = self.largest_tile(view, h_max, 0);
            (h, (0, f))
        };
        let tiles = h_max.div_ceil(h);
        let dram_bytes = io.0 + io.1 + if weights_resident { w } else { tiles * w };
        // Valid groups get a tile under β, invalid ones report F(1) ≥ β: `new` derives the same
        // validity.
        let tiling = Tiling {
            min_footprint_bytes: f1,
            tile_rows: h,
            tiles,
            weights_resident,
        };
        GroupCost::new(
            &self.config,
            view.len(),
            OnChipBytes {
                weights: on_chip.0,
                activations: on_chip.1,
            },
            dram_bytes,
            w,
            io,
            Some(tiling),
        )
    }

    /// `F(h)` of `group`, the activation footprint of `h`-row tiles.
    ///
    /// # Errors
    /// As [`CostModel::evaluate`].
    pub fn footprint(&self, g: &Graph, group: &NodeSet, h: u64) -> Result<u64> {
        with_view(g, group, &self.config, |v| {
            let h_max = v.h_max();
            Ok(v.brr(h.max(1), h_max))
        })
    }
}

impl CostModel for Brr {
    fn name(&self) -> &str {
        "brr"
    }

    fn config(&self) -> &CostConfig {
        &self.config
    }

    fn evaluate(&self, g: &Graph, group: &NodeSet) -> Result<GroupCost> {
        with_view(g, group, &self.config, |v| Ok(self.run(v)))
    }

    /// `F(1)` without the rows group outputs ask for themselves (see
    /// [`CostModel::buffer_floor`]): validity asks `F(1) < β`, and every other ask of a
    /// one-row tile, receptive fields included, only grows with the group. Weights are left
    /// out: BRR may stream them.
    fn buffer_floor(&self, g: &Graph, group: &NodeSet) -> Result<OnChipBytes> {
        with_view(g, group, &self.config, |v| {
            Ok(OnChipBytes {
                weights: 0,
                activations: v.brr_floor(),
            })
        })
    }

    /// See [`TileFloor`]: BRR streams weights once per tile.
    fn tile_floor(&self, g: &Graph) -> Result<Option<TileFloor>> {
        let n = g.len();
        TileFloor::of(g, &self.config, |v| {
            Ok(self.evaluate(g, &NodeSet::singleton(n, v))?.valid)
        })
        .map(Some)
    }

    /// With the weights resident, `W + F(1)`: above it they stay and `F_D = I + O + W`.
    /// With them streamed in `T` tiles, `F(⌈H_max / T⌉)`, the footprint of the smallest tile
    /// that still needs `T` tiles: above it `F_D = I + O + T·W` (and below the current β the
    /// weights cannot become resident).
    fn steady_above(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
        with_view(g, group, &self.config, |v| {
            let c = self.run(v);
            let h_max = v.h_max();
            Ok(match c.tiling {
                Some(t) if t.weights_resident => {
                    c.weight_bytes.saturating_add(t.min_footprint_bytes)
                }
                Some(t) => v.brr(h_max.div_ceil(t.tiles.max(1)), h_max),
                None => c.buffer_bytes,
            })
        })
    }

    /// `F(1) + 1`: validity asks only that a one-row tile fit (the weights may stream).
    fn smallest_buffer(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
        with_view(g, group, &self.config, |v| {
            let h_max = v.h_max();
            Ok(v.brr(1, h_max).saturating_add(1))
        })
    }

    /// The rows of the chosen tile, per tensor.
    fn breakdown(&self, g: &Graph, group: &NodeSet) -> Result<Option<Vec<TensorCost>>> {
        with_view(g, group, &self.config, |v| {
            let cost = self.run(v);
            let h = cost.tiling.map_or(1, |t| t.tile_rows);
            let h_max = v.h_max();
            v.brr(h, h_max);
            let whole = v.read_whole();
            let out = v
                .tensors
                .iter()
                .zip(&v.rows)
                .zip(whole)
                .map(|((t, &rows), read_whole)| TensorCost {
                    tensor: g.name_of(t.source).to_string(),
                    kind: t.kind,
                    resident_rows: rows,
                    rows: t.h,
                    row_bytes: t.row,
                    bytes: rows * t.row,
                    whole: rows == t.h && t.h > 1,
                    reason: if read_whole {
                        Residency::WholeRead
                    } else {
                        Residency::Tile
                    },
                })
                .collect();
            Ok(Some(out))
        })
    }
}
