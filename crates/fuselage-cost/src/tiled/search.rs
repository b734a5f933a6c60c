//! The search over the schedule space (see the module docs of `tiled`): the line buffer
//! first, where nothing is read again; then every subset of the streamable operands
//! ([`subsets`]), each at the fewest tiles that fit (a binary search, `F_β` never falls as
//! the tiles grow), pruned by the traffic of the best schedule found; then the largest block
//! that still fits. Also what every schedule keeps (the floor a larger group keeps too, which
//! the exact optimiser prunes with).

use super::prep::{EXACT_OPERANDS, MAX_WEIGHT_TILES, Operand, Prep};
use super::roles::Roles;
use crate::config::CostConfig;
use crate::model::{OnChipBytes, Schedule};
use crate::view::View;

/// One candidate schedule's answer.
#[derive(Copy, Clone, Debug)]
pub(super) struct Found {
    pub(super) dram: u64,
    pub(super) on_chip: OnChipBytes,
    pub(super) schedule: Schedule,
}

impl Prep {
    /// The tensors read whole through ports no schedule streams, one slice of each: what
    /// every schedule holds.
    pub(super) fn held_bytes(&self) -> u64 {
        (0..self.held.len())
            .filter(|&t| self.held[t])
            .map(|t| self.bytes[t] / self.e[t].max(1))
            .fold(0, u64::saturating_add)
    }

    /// What streaming the weights of `members` keeps at least: a contraction that streams
    /// them runs at most [`MAX_WEIGHT_TILES`] tiles, so its input (it opens a block) or its
    /// output (it sums one) keeps that share of its rows, one slice of them. Each member's
    /// share is capped by `cap`, and counted only where its two tensors are neither held
    /// whole nor counted for another member.
    pub(super) fn kept_by_streaming(
        &self,
        v: &View,
        members: impl Iterator<Item = usize>,
        cap: impl Fn(usize) -> u64,
    ) -> u64 {
        let part = |t: usize| {
            let info = v.tensors[t];
            info.h.div_ceil(MAX_WEIGHT_TILES).saturating_mul(info.row) / self.e[t].max(1)
        };
        let mut counted: Vec<usize> = Vec::new();
        let mut kept = 0u64;
        for i in members {
            let Some(a) = v.ports_of(i).first().map(|q| q.tensor as usize) else {
                continue;
            };
            let taken = |t: usize| self.held[t] || counted.contains(&t);
            if !self.members[i].linear || self.weights[i] == 0 || a == i || taken(a) || taken(i) {
                continue;
            }
            kept = kept.saturating_add(part(a).min(part(i)).min(cap(i)));
            counted.extend([a, i]);
        }
        kept
    }

    /// What every schedule of this group, and of any group containing it, keeps on chip (see
    /// [`Tiled`]'s `buffer_floor`): the held tensors, the weights of non-contractions, and
    /// for each contraction the least of its weights and what streaming them keeps (unified
    /// buffers only: the two sides of that choice live in different split buffers).
    pub(super) fn floor(&self, v: &View, config: &CostConfig) -> OnChipBytes {
        let weights = self
            .members
            .iter()
            .zip(&self.weights)
            .filter(|(m, _)| !m.linear && m.row_constant == 0)
            .map(|(_, &w)| w)
            .fold(0, u64::saturating_add);
        let mut activations = self.held_bytes();
        if matches!(config.buffer(), crate::buffer::OnChipBuffer::Unified { .. }) {
            let kept = self.kept_by_streaming(v, 0..self.members.len(), |i| self.weights[i]);
            activations = activations.saturating_add(kept);
        }
        OnChipBytes {
            weights,
            activations,
        }
    }

    /// The line buffer: LBDF's bands (phased), row constants by rows, slices dividing.
    pub(super) fn line_buffer(&self, v: &mut View, sliced: bool) -> OnChipBytes {
        v.lbdf(true);
        let mut act = 0u64;
        for (t, st) in v.streams.iter().enumerate() {
            let rows = st.resident;
            let b = if sliced && (self.merged[t] || self.shared[t]) {
                self.bytes[t] / self.div(t, sliced)
            } else {
                rows.saturating_mul(v.tensors[t].row) / self.div(t, sliced)
            };
            act = act.saturating_add(b);
        }
        let mut weights = 0u64;
        for (i, mem) in self.members.iter().enumerate() {
            if sliced && self.shared_constant[i] {
                act = act.saturating_add(self.weights[i]);
            } else if mem.row_constant > 0 {
                let rows = v.streams[i].resident;
                act = act.saturating_add(rows.saturating_mul(mem.row_constant));
            } else {
                weights = weights.saturating_add(self.weights[i]);
            }
        }
        OnChipBytes {
            weights,
            activations: act,
        }
    }

    /// The best schedule of the space (see the module docs), and the least on-chip need of
    /// any schedule tried (what a group that fits none reports). With `no_reread`, only
    /// schedules that read nothing again are tried (a single node).
    pub(super) fn search(
        &self,
        v: &mut View,
        config: &CostConfig,
        no_reread: bool,
    ) -> (Option<Found>, OnChipBytes) {
        let io = v.io_bytes();
        let floor = io.0 + io.1 + v.weight_bytes;
        let h_max = v.h_max();
        let slicings = self.slicings();
        let mut least: Option<OnChipBytes> = None;
        let mut keep_least = |c: OnChipBytes| {
            if least.is_none_or(|l| c.total() < l.total()) {
                least = Some(c);
            }
        };
        for &sliced in slicings {
            let c = self.line_buffer(v, sliced);
            keep_least(c);
            if config.fits(c.weights, c.activations) {
                let schedule = Schedule {
                    slices: if sliced { self.slices.unwrap_or(1) } else { 1 },
                    tiles: 1,
                    tile_rows: h_max,
                    streamed_weights: 0,
                    streamed_operands: 0,
                    block: 0,
                    line_buffer: true,
                    streamed: 0,
                    reread_bytes: 0,
                };
                let found = Found {
                    dram: floor,
                    on_chip: c,
                    schedule,
                };
                return (Some(found), c);
            }
        }
        // What every schedule keeps whatever streams: tensors read whole through ports that
        // do not stream (one slice of each at best), and the weights of non-contractions.
        let held = self.held_bytes();
        let resident: u64 = self.weights.iter().sum::<u64>()
            - self
                .members
                .iter()
                .zip(&self.weights)
                .filter(|(m, _)| m.row_constant > 0)
                .map(|(_, w)| w)
                .sum::<u64>();
        let mut best: Option<(Found, u64, bool)> = None;
        // Reused from the last group this thread costed: nothing allocated once grown.
        let mut roles = ROLES.with(|cell| cell.take());
        for mask in subsets(&self.operands) {
            // Nothing moves less than I + O + W.
            if best.is_some_and(|(b, _, _)| b.dram == floor) {
                break;
            }
            let streamed: u64 = self
                .operands
                .iter()
                .enumerate()
                .filter(|(b, _)| mask >> b & 1 == 1)
                .map(|(_, o)| match *o {
                    Operand::Weights(i) => self.weights[i],
                    Operand::Right(_) => 0,
                })
                .sum();
            // What the members that stream weights keep at least (see `buffer_floor`).
            let streaming = self
                .operands
                .iter()
                .enumerate()
                .filter_map(|(b, o)| match *o {
                    Operand::Weights(i) if mask >> b & 1 == 1 => Some(i),
                    _ => None,
                });
            let forced = self.kept_by_streaming(v, streaming, |_| u64::MAX);
            if !config.fits(resident - streamed, held.saturating_add(forced)) {
                continue;
            }
            self.roles_into(v, mask, &mut roles);
            let roles = &roles;
            for &sliced in slicings {
                let s = if sliced { self.slices.unwrap_or(1) } else { 1 };
                let traffic = |tiles: u64| floor.saturating_add(roles.reread(tiles, s));
                if no_reread && traffic(1) > floor {
                    continue;
                }
                if best.is_some_and(|(b, _, _)| traffic(1) >= b.dram) {
                    continue;
                }
                // Without reading anything again, the tiles are all the rows; beside a
                // schedule already found, only as many tiles as still move less are worth
                // trying.
                let mut fewest = if no_reread && traffic(2) > floor {
                    h_max
                } else {
                    1
                };
                if roles.reread_weights > 0 {
                    fewest = fewest.max(h_max.div_ceil(MAX_WEIGHT_TILES));
                }
                if let Some((b, _, _)) = best {
                    let (mut lo, mut hi) = (1u64, h_max);
                    while lo < hi {
                        let mid = lo + (hi - lo).div_ceil(2);
                        if traffic(mid) < b.dram {
                            lo = mid;
                        } else {
                            hi = mid - 1;
                        }
                    }
                    fewest = fewest.max(h_max.div_ceil(lo));
                }
                let smallest = self.tiles(v, roles, sliced, fewest);
                keep_least(smallest);
                if !config.fits(smallest.weights, smallest.activations) {
                    continue;
                }
                let fits = |v: &mut View, h: u64| {
                    let c = self.tiles(v, roles, sliced, h);
                    config.fits(c.weights, c.activations).then_some(c)
                };
                // The fewest tiles that fit (F_β never falls as h grows): a binary search over
                // T, whose rows are h = ⌈H_max / T⌉.
                let (mut lo, mut hi) = (1u64, h_max.div_ceil(fewest));
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if fits(v, h_max.div_ceil(mid)).is_some() {
                        hi = mid;
                    } else {
                        lo = mid + 1;
                    }
                }
                let tiles = lo;
                let h = h_max.div_ceil(tiles);
                let Some(on_chip) = fits(v, h) else { continue };
                let dram = floor.saturating_add(self.reread_exact(v, roles, h, tiles, s));
                if best
                    .is_some_and(|(b, _, _)| (b.dram, b.on_chip.total()) <= (dram, on_chip.total()))
                {
                    continue;
                }
                let found = Found {
                    dram,
                    on_chip,
                    schedule: Schedule {
                        slices: s,
                        tiles,
                        tile_rows: h,
                        streamed_weights: roles.weights_streamed,
                        streamed_operands: roles.operands_streamed,
                        block: 1,
                        line_buffer: false,
                        streamed: mask,
                        reread_bytes: dram - floor,
                    },
                };
                best = Some((found, mask, sliced));
            }
        }
        ROLES.with(|cell| cell.replace(roles));
        // The block: the largest that fits, and the buffer the schedule then needs.
        let best = best.map(|(mut found, mask, sliced)| {
            let roles = self.roles(v, mask);
            let h = found.schedule.tile_rows;
            let block = self.block(v, &roles, sliced, h, config);
            found.schedule.block = block;
            found.on_chip = self.tiles_with(v, &roles, sliced, h, block);
            found
        });
        (best, least.unwrap_or_default())
    }

    /// The least on-chip need of any schedule of the space (without reading anything again
    /// when `no_reread`): the line buffer, or each subset at its fewest rows.
    pub(super) fn least(&self, v: &mut View, no_reread: bool) -> OnChipBytes {
        let slicings = self.slicings();
        let h_max = v.h_max();
        let mut least = u64::MAX;
        let mut out = OnChipBytes::default();
        let mut keep = |c: OnChipBytes| {
            if c.total() < least {
                least = c.total();
                out = c;
            }
        };
        for &sliced in slicings {
            keep(self.line_buffer(v, sliced));
        }
        for mask in subsets(&self.operands) {
            let roles = self.roles(v, mask);
            for &sliced in slicings {
                let s = if sliced { self.slices.unwrap_or(1) } else { 1 };
                if no_reread && roles.reread(1, s) > 0 {
                    continue;
                }
                let mut h = if no_reread && roles.reread(2, s) > 0 {
                    h_max
                } else {
                    1
                };
                if roles.reread_weights > 0 {
                    h = h.max(h_max.div_ceil(MAX_WEIGHT_TILES));
                }
                keep(self.tiles(v, &roles, sliced, h));
            }
        }
        out
    }

    /// The largest power-of-two block (elements along a streamed or blocked axis) that fits
    /// at `h` rows.
    pub(super) fn block(
        &self,
        v: &mut View,
        roles: &Roles,
        sliced: bool,
        h: u64,
        config: &CostConfig,
    ) -> u64 {
        let mut block = 1u64;
        while block < (1 << 20) {
            let c = self.tiles_with(v, roles, sliced, h, block * 2);
            if !config.fits(c.weights, c.activations) {
                break;
            }
            block *= 2;
        }
        block
    }
}

thread_local! {
    /// The [`Roles`] a thread's searches reuse.
    static ROLES: std::cell::Cell<Roles> = std::cell::Cell::new(Roles::default());
}

/// The subsets of `operands` tried: all of them up to [`EXACT_OPERANDS`]; beyond, all, all
/// weights, all right operands, and all but one.
///
/// Largest subsets first: with all rows in one tile, streaming reads nothing again, and the
/// more that streams the likelier the group fits, so the search usually stops at the first.
pub(super) fn subsets(operands: &[Operand]) -> Vec<u64> {
    let k = operands.len();
    if k <= EXACT_OPERANDS {
        let mut all: Vec<u64> = (1..(1u64 << k)).collect();
        all.sort_by_key(|m| (std::cmp::Reverse(m.count_ones()), *m));
        return all;
    }
    let k = k.min(63);
    let all = (1u64 << k) - 1;
    let pick = |f: &dyn Fn(&Operand) -> bool| {
        operands[..k]
            .iter()
            .enumerate()
            .filter(|(_, o)| f(o))
            .fold(0u64, |m, (b, _)| m | 1 << b)
    };
    let mut out = vec![
        all,
        pick(&|o| matches!(o, Operand::Weights(_))),
        pick(&|o| matches!(o, Operand::Right(_))),
    ];
    out.extend((0..k).map(|b| all & !(1 << b)));
    out.retain(|&m| m != 0);
    out.sort_by_key(|m| (std::cmp::Reverse(m.count_ones()), *m));
    out.dedup();
    out
}
