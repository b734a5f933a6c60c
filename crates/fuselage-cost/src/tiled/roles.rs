//! What streaming a subset of operands makes of each tensor and member ([`Roles`]): which
//! tensors are *blocked* along a contraction's free axis (a fixpoint of a forward candidacy
//! and a backward check that every reader is pointwise or sums the block, and that no block
//! loop waits on itself: [`Prep::split_waits`]); which members stream; the *chains* a streamed
//! right operand is recomputed from, block by block, and what they read from DRAM; and which
//! tensors keep a tile's rows.

use super::prep::{Operand, Prep, one_to_one};
use crate::model::TensorKind;
use crate::view::View;

/// What a subset of streamed operands makes of the group.
#[derive(Debug, Default)]
pub(super) struct Roles {
    /// Per member: its weights stream.
    pub(super) weights: Vec<bool>,
    /// Per member: its right operand streams.
    pub(super) right: Vec<bool>,
    /// Per member: it streams an operand or reads a blocked tensor (it runs block by block
    /// over a whole tile).
    pub(super) streaming: Vec<bool>,
    /// Per member: a chain member, recomputed per block (its reads ask no rows).
    pub(super) recomputed: Vec<bool>,
    /// Per tensor: made or read by a streaming member (it keeps the tile's rows).
    pub(super) resident: Vec<bool>,
    /// Per tensor: members that read it, chain members apart.
    pub(super) readers: Vec<u32>,
    /// Per tensor: blocked along a contraction's free axis.
    pub(super) blocked: Vec<bool>,
    /// Per tensor: the blocked axis's extent.
    pub(super) extent: Vec<u64>,
    /// Per tensor: recomputed per tile as part of a streamed operand's chain.
    pub(super) chain: Vec<bool>,
    /// Per tensor: a chain starts from it, made by a member that cannot be recomputed: held.
    pub(super) source: Vec<bool>,
    pub(super) weights_streamed: u32,
    pub(super) operands_streamed: u32,
    /// Bytes of streamed weights (read `T·s` times).
    pub(super) reread_weights: u64,
    /// Bytes of the chains' DRAM inputs and row constants (read `T` times).
    pub(super) reread_chain: u64,
    /// Per member: the bytes of its streamed operand's chain, read once per tile it runs in.
    pub(super) chain_bytes: Vec<u64>,
    /// Per member: made only block by block inside a chain (see [`chain_only`]).
    pub(super) chain_only: Vec<bool>,
    /// Per chain tensor: the keys its streamed operand runs over (a block is
    /// `bytes / keys` per key).
    pub(super) keys: Vec<u64>,
    /// Scratch of [`chain_only`]: per member, read as rows by a member that is not.
    pub(super) needed: Vec<bool>,
    /// Scratch of [`roles_into`](Prep::roles_into) and [`split_waits`](Prep::split_waits),
    /// kept so that costing a group allocates nothing once it has grown.
    pub(super) scratch: Scratch,
}

/// Reused buffers of [`Prep::roles_into`] and [`Prep::split_waits`].
#[derive(Debug, Default)]
pub(super) struct Scratch {
    /// Per tensor: it may still be blocked.
    allowed: Vec<bool>,
    /// The tensors of a chain still to visit.
    stack: Vec<usize>,
    /// Union-find forest over members, their roots, loop sizes and loop numbers.
    root: Vec<usize>,
    roots: Vec<usize>,
    size: Vec<u32>,
    id: Vec<usize>,
    /// Per member, bit sets over loops.
    reach: Vec<u64>,
    crossed: Vec<u64>,
}

impl Roles {
    /// Bytes read beyond `I + O + W` with `tiles` tiles and `slices` slices.
    pub(super) fn reread(&self, tiles: u64, slices: u64) -> u64 {
        let w = tiles.saturating_mul(slices).saturating_sub(1);
        self.reread_weights
            .saturating_mul(w)
            .saturating_add(self.reread_chain.saturating_mul(tiles - 1))
    }
}

impl Prep {
    /// What streaming the operands in `mask` makes of each tensor and member.
    pub(super) fn roles(&self, v: &View, mask: u64) -> Roles {
        let mut r = Roles::default();
        self.roles_into(v, mask, &mut r);
        r
    }

    /// [`roles`](Self::roles) into `r`, reusing its vectors.
    pub(super) fn roles_into(&self, v: &View, mask: u64, r: &mut Roles) {
        let n = v.tensors.len();
        let m = v.len();
        refill(&mut r.weights, m, false);
        refill(&mut r.right, m, false);
        refill(&mut r.streaming, m, false);
        refill(&mut r.recomputed, m, false);
        refill(&mut r.resident, n, false);
        refill(&mut r.blocked, n, false);
        refill(&mut r.chain, n, false);
        refill(&mut r.source, n, false);
        refill(&mut r.readers, n, 0);
        refill(&mut r.extent, n, 1);
        refill(&mut r.chain_bytes, m, 0);
        refill(&mut r.keys, n, 1);
        r.weights_streamed = 0;
        r.operands_streamed = 0;
        r.reread_weights = 0;
        r.reread_chain = 0;
        for (b, op) in self.operands.iter().enumerate() {
            if mask >> b & 1 == 1 {
                match *op {
                    Operand::Weights(i) => {
                        r.weights[i] = true;
                        r.weights_streamed += 1;
                        r.reread_weights += self.weights[i];
                    }
                    Operand::Right(i) => {
                        r.right[i] = true;
                        r.operands_streamed += 1;
                    }
                }
            }
        }
        // Blocked tensors: a fixpoint of a forward candidacy and a backward check that every
        // reader is pointwise or sums the block.
        let mut scratch = std::mem::take(&mut r.scratch);
        let mut allowed = std::mem::take(&mut scratch.allowed);
        refill(&mut allowed, n, true);
        loop {
            for (i, &mem) in self.members.iter().enumerate() {
                let ports = v.ports_of(i);
                let first = ports.first().map(|p| p.tensor as usize);
                let blocked_in = first.is_some_and(|t| r.blocked[t]);
                let (cand, ext) = if mem.linear {
                    let streams = r.weights[i] || r.right[i];
                    (streams && !blocked_in, mem.out_extent)
                } else if mem.preserver {
                    let src = ports
                        .iter()
                        .map(|p| p.tensor as usize)
                        .find(|&t| r.blocked[t] && (!mem.relayout || r.extent[t] == self.last[t]));
                    (src.is_some(), src.map_or(1, |t| r.extent[t]))
                } else {
                    (false, 1)
                };
                r.blocked[i] = cand && allowed[i];
                r.extent[i] = if r.blocked[i] { ext.max(1) } else { 1 };
            }
            let mut changed = false;
            for i in 0..m {
                let mem = self.members[i];
                for (port, p) in v.ports_of(i).iter().enumerate() {
                    let t = p.tensor as usize;
                    // A relayout carries only a block of the last axis.
                    let carried = !mem.relayout || r.extent[t] == self.last[t];
                    let ok = (mem.preserver && carried) || (mem.linear && port == 0);
                    if r.blocked[t] && !ok {
                        allowed[t] = false;
                        changed = true;
                    }
                }
            }
            if !changed {
                changed = self.split_waits(v, r, &mut allowed, &mut scratch);
            }
            if !changed {
                break;
            }
        }
        for i in 0..m {
            r.streaming[i] = r.weights[i]
                || r.right[i]
                || v.ports_of(i).iter().any(|p| r.blocked[p.tensor as usize]);
        }
        // Chains of streamed right operands: what each is made of, recomputed per tile.
        for i in 0..m {
            if !r.right[i] {
                continue;
            }
            let Some(p) = v.ports_of(i).get(1) else {
                continue;
            };
            // The keys: the blocked axis, or the rows of the operand summed into accumulators.
            let first = v.ports_of(i).first().map(|q| q.tensor as usize);
            let keys = if r.blocked[i] {
                self.members[i].out_extent
            } else {
                match first {
                    Some(t) if r.blocked[t] => r.extent[t],
                    Some(t) => self.last[t],
                    None => 1,
                }
            }
            .max(1);
            let stack = &mut scratch.stack;
            stack.clear();
            stack.push(p.tensor as usize);
            let mut seen_in = 0u64;
            while let Some(t) = stack.pop() {
                if r.chain[t] {
                    continue;
                }
                r.keys[t] = keys;
                if t >= m {
                    r.chain[t] = true;
                    seen_in = seen_in.saturating_add(self.bytes[t]);
                } else if self.members[t].chain && !self.held[t] {
                    r.chain[t] = true;
                    seen_in = seen_in.saturating_add(self.constant_bytes[t]);
                    for q in v.ports_of(t) {
                        if one_to_one(q.window) {
                            stack.push(q.tensor as usize);
                        } else {
                            // Read whole beside the blocks: held once.
                            r.source[q.tensor as usize] = true;
                        }
                    }
                } else {
                    r.source[t] = true;
                }
            }
            r.reread_chain = r.reread_chain.saturating_add(seen_in);
            r.chain_bytes[i] = seen_in;
        }
        for i in 0..m {
            r.recomputed[i] = r.chain[i] && self.members[i].chain;
            let streaming = r.streaming[i];
            r.resident[i] |= streaming;
            for (port, p) in v.ports_of(i).iter().enumerate() {
                if port == 1 && r.right[i] {
                    continue;
                }
                let t = p.tensor as usize;
                r.resident[t] |= streaming;
                if !r.recomputed[i] {
                    r.readers[t] += 1;
                }
            }
        }
        scratch.allowed = allowed;
        r.scratch = scratch;
        chain_only(v, r);
    }

    /// A block loop runs the members its blocked tensors link all at once, block by block,
    /// so none of them may wait for another's finished output. Where a path from one member
    /// of a loop to another leaves the blocks (passes through a tensor that is not blocked,
    /// such as the output of the contraction that sums them), the blocked tensors the later
    /// member reads are made whole instead (a residual stream read by both a convolution and
    /// the `Add` after it). Returns whether anything changed.
    pub(super) fn split_waits(
        &self,
        v: &View,
        r: &Roles,
        allowed: &mut [bool],
        scratch: &mut Scratch,
    ) -> bool {
        let m = v.len();
        if !r.blocked[..m].iter().any(|&b| b) {
            return false;
        }
        let Scratch {
            root,
            roots,
            size,
            id,
            reach,
            crossed,
            ..
        } = scratch;
        // Loops: members linked by the blocked tensors they make and read.
        root.clear();
        root.extend(0..m);
        for i in 0..m {
            for p in v.ports_of(i) {
                let t = p.tensor as usize;
                if t < m && r.blocked[t] {
                    let (a, b) = (find(root, i), find(root, t));
                    root[a.max(b)] = a.min(b);
                }
            }
        }
        // Loops of two members or more, numbered, as bits.
        roots.clear();
        for i in 0..m {
            let x = find(root, i);
            roots.push(x);
        }
        refill(size, m, 0);
        for &x in roots.iter() {
            size[x] += 1;
        }
        refill(id, m, usize::MAX);
        let mut loops = 0usize;
        for x in 0..m {
            if size[x] >= 2 {
                id[x] = loops;
                loops += 1;
            }
        }
        if loops == 0 {
            return false;
        }
        // Per member, as bit sets over loops: the loops that reach it through blocked
        // tensors only (itself included), and those that reach it through a whole tensor.
        let words = loops.div_ceil(64);
        refill(reach, m * words, 0);
        refill(crossed, m * words, 0);
        let mut changed = false;
        for i in 0..m {
            for p in v.ports_of(i) {
                let t = p.tensor as usize;
                if t >= m {
                    continue;
                }
                for w in 0..words {
                    let (rt, ct) = (reach[t * words + w], crossed[t * words + w]);
                    if r.blocked[t] {
                        reach[i * words + w] |= rt;
                        crossed[i * words + w] |= ct;
                    } else {
                        crossed[i * words + w] |= rt | ct;
                    }
                }
            }
            let own = id[roots[i]];
            if own == usize::MAX {
                continue;
            }
            reach[i * words + own / 64] |= 1 << (own % 64);
            if crossed[i * words + own / 64] >> (own % 64) & 1 == 1 {
                for p in v.ports_of(i) {
                    let t = p.tensor as usize;
                    if r.blocked[t] && allowed[t] {
                        allowed[t] = false;
                        changed = true;
                    }
                }
            }
        }
        changed
    }
}

/// `x` made `len` copies of `value`, in the memory it has (costing a group's many subsets
/// then writes each buffer once).
pub(super) fn refill<T: Copy>(x: &mut Vec<T>, len: usize, value: T) {
    x.truncate(len);
    x.fill(value);
    x.resize(len, value);
}

/// The representative of `x` in a union-find forest (`root[x] == x` at a root), halving the
/// path as it goes.
pub(super) fn find(root: &mut [usize], mut x: usize) -> usize {
    while root[x] != x {
        root[x] = root[root[x]];
        x = root[x];
    }
    x
}

/// Chain members that nothing needs as rows (not a group output, read only by other such
/// members or as a streamed operand): they are made block by block, per tile, and never
/// row by row.
pub(super) fn chain_only(v: &View, roles: &mut Roles) {
    let m = v.len();
    let only = &mut roles.chain_only;
    refill(only, m, false);
    // Readers come after what they read: deciding members last to first, every reader of a
    // member is decided before it.
    let mut read = std::mem::take(&mut roles.needed);
    refill(&mut read, m, false);
    for i in (0..m).rev() {
        only[i] = roles.recomputed[i] && !read[i] && v.tensors[i].kind != TensorKind::Out;
        if only[i] {
            continue;
        }
        for (port, q) in v.ports_of(i).iter().enumerate() {
            let t = q.tensor as usize;
            if t < m && !(port == 1 && roles.right[i]) {
                read[t] = true;
            }
        }
    }
    roles.needed = read;
}
