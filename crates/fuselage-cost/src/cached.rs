//! [`Cached`]: a memoising decorator over any cost model.
//!
//! Searches cost the same groups again and again (the paper's Algorithm 1 caches `F_β` and
//! `F_D` per group). `Cached<C>` is itself a [`CostModel`]: it answers from a map keyed by the
//! group's [`NodeSet`] and asks the inner model on a miss.
//!
//! Design:
//! - **One graph per cache.** The key is the node set alone, so a cache must only ever see one
//!   graph. The first call binds the cache to that graph's [identity](Graph::identity) (its
//!   structure in node order, shapes included), and a call with another graph is refused
//!   ([`CostError::GraphMismatch`]), even one with the same name and node count, such as the
//!   same zoo network at another resolution; [`Cached::clear`] unbinds.
//! - **Thread-safe, low contention.** The map is split into 16 shards, each behind its own
//!   `RwLock`; hits take a read lock only. Hit and miss counters are relaxed atomics.
//! - **Cheap hashing.** Node sets are a few machine words; they are hashed with an FxHash-style
//!   multiply-rotate hasher rather than SipHash, which keeps a hit well under 100 ns.
//! - **Bounded.** The memo holds at most [`Cached::DEFAULT_BYTES`] (256 MiB) of entries, or
//!   the budget given to [`Cached::with_budget`]; past it answers are computed and not kept,
//!   so an exhaustive search over millions of distinct groups (the exact optimiser on
//!   Inception-v3 at 2 MiB) keeps a bounded footprint. Answers never depend on it.
//! - Errors are not cached; breakdowns are not cached (they are for reports).

use crate::config::CostConfig;
use crate::error::{CostError, Result};
use crate::model::{CostModel, GroupCost, OnChipBytes, TensorCost};
use crate::tiles::TileFloor;
use fuselage_ir::{Graph, NodeSet};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

const SHARDS: usize = 16;

/// A small, fast, non-cryptographic hasher (FxHash's multiply-rotate) for node sets.
#[derive(Default, Clone, Copy, Debug)]
pub struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes([
                c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7],
            ]));
        }
        for &b in chunks.remainder() {
            self.add(b as u64);
        }
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        self.hash
    }
}

type Map = HashMap<NodeSet, GroupCost, BuildHasherDefault<FxHasher>>;

/// Hit and miss counts of a [`Cached`] model.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Answers from the memo.
    pub hits: u64,
    /// Answers from the inner model.
    pub misses: u64,
    /// Groups held.
    pub entries: u64,
}

impl CacheStats {
    /// `hits / (hits + misses)`, 0 before the first call.
    pub fn hit_rate(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// A memo of another cost model's answers, for one graph. See the module docs.
///
/// # Example
/// ```
/// use fuselage_cost::{Cached, CostConfig, CostModel, Lbdf};
/// use fuselage_ir::{GraphBuilder, NodeSet, Op, TensorShape};
/// let mut b = GraphBuilder::new("g");
/// let x = b.input("input", TensorShape::nchw(4, 8, 8))?;
/// b.node("r", Op::Relu, &[x])?;
/// let g = b.finish()?;
/// let model = Cached::new(Lbdf::new(CostConfig::kib(1)?));
/// let all = NodeSet::full(g.len());
/// let first = model.evaluate(&g, &all)?;
/// assert_eq!(model.evaluate(&g, &all)?, first);
/// let s = model.stats();
/// assert_eq!((s.hits, s.misses, s.entries), (1, 1, 1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Cached<C> {
    inner: C,
    shards: Vec<RwLock<Map>>,
    hits: AtomicU64,
    misses: AtomicU64,
    /// The bound graph's identity (low bit set), 0 while unbound.
    bound: AtomicU64,
    /// The bound graph's name and size, for error messages.
    bound_name: Mutex<Option<(String, usize)>>,
    /// Bytes of entries each shard may hold.
    shard_bytes: usize,
}

impl<C: CostModel> Cached<C> {
    /// The default budget of a memo: 256 MiB of entries.
    pub const DEFAULT_BYTES: usize = 256 << 20;

    /// An empty memo over `inner`, of at most [`Cached::DEFAULT_BYTES`].
    pub fn new(inner: C) -> Self {
        Self::with_budget(inner, Self::DEFAULT_BYTES)
    }

    /// An empty memo over `inner` that keeps at most about `bytes` of entries (each counted
    /// as its key's words, its answer and a map's overhead).
    pub fn with_budget(inner: C, bytes: usize) -> Self {
        Cached {
            inner,
            shards: (0..SHARDS).map(|_| RwLock::new(Map::default())).collect(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            bound: AtomicU64::new(0),
            bound_name: Mutex::new(None),
            shard_bytes: bytes / SHARDS,
        }
    }

    /// About how many bytes one entry takes, from the size of its key.
    fn entry_bytes(group: &NodeSet) -> usize {
        // The key's bit blocks on the heap, the key and the answer in the table, a control
        // byte and the allocator's header.
        group.capacity().div_ceil(64) * 8
            + std::mem::size_of::<NodeSet>()
            + std::mem::size_of::<GroupCost>()
            + 24
    }

    /// The wrapped model.
    pub fn inner(&self) -> &C {
        &self.inner
    }

    /// Hits, misses and entries so far.
    pub fn stats(&self) -> CacheStats {
        let entries = self
            .shards
            .iter()
            .map(|s| s.read().map_or(0, |m| m.len() as u64))
            .sum();
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries,
        }
    }

    /// Forgets every entry and the graph binding, and zeroes the counters.
    pub fn clear(&self) {
        for s in &self.shards {
            if let Ok(mut m) = s.write() {
                m.clear();
            }
        }
        *self.bound_name.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.bound.store(0, Ordering::Release);
        self.hits.store(0, Ordering::Relaxed);
        self.misses.store(0, Ordering::Relaxed);
    }

    fn check_graph(&self, g: &Graph) -> Result<()> {
        let digest = g.identity() | 1;
        let bound = self.bound.load(Ordering::Acquire);
        if bound == digest {
            return Ok(());
        }
        let mut name = self.bound_name.lock().unwrap_or_else(|e| e.into_inner());
        if bound == 0
            && self
                .bound
                .compare_exchange(0, digest, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            *name = Some((g.name().to_string(), g.len()));
            return Ok(());
        }
        if self.bound.load(Ordering::Acquire) == digest {
            return Ok(());
        }
        let (expected, expected_len) = name.clone().unwrap_or_default();
        Err(CostError::GraphMismatch {
            expected,
            expected_len,
            found: g.name().to_string(),
            found_len: g.len(),
        })
    }

    #[inline]
    fn shard(&self, group: &NodeSet) -> &RwLock<Map> {
        let mut h = FxHasher::default();
        group.hash(&mut h);
        // Middle bits: each shard's map hashes the same way and takes its tag from the top
        // seven bits and its bucket from the bottom ones, so sharding by either would leave
        // every key of a shard sharing them (and lookups comparing many more keys).
        &self.shards[(h.finish() >> 32) as usize % SHARDS]
    }
}

impl<C: CostModel> CostModel for Cached<C> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn config(&self) -> &CostConfig {
        self.inner.config()
    }

    fn evaluate(&self, g: &Graph, group: &NodeSet) -> Result<GroupCost> {
        self.check_graph(g)?;
        let shard = self.shard(group);
        if let Some(&c) = shard.read().unwrap_or_else(|e| e.into_inner()).get(group) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(c);
        }
        let c = self.inner.evaluate(g, group)?;
        self.misses.fetch_add(1, Ordering::Relaxed);
        let mut map = shard.write().unwrap_or_else(|e| e.into_inner());
        if (map.len() + 1) * Self::entry_bytes(group) <= self.shard_bytes {
            map.insert(group.clone(), c);
        }
        Ok(c)
    }

    fn breakdown(&self, g: &Graph, group: &NodeSet) -> Result<Option<Vec<TensorCost>>> {
        self.check_graph(g)?;
        self.inner.breakdown(g, group)
    }

    /// Not memoised: the optimiser asks it once per invalid group it considers growing.
    fn buffer_floor(&self, g: &Graph, group: &NodeSet) -> Result<OnChipBytes> {
        self.check_graph(g)?;
        self.inner.buffer_floor(g, group)
    }

    fn tile_floor(&self, g: &Graph) -> Result<Option<TileFloor>> {
        self.check_graph(g)?;
        self.inner.tile_floor(g)
    }

    fn steady_above(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
        self.inner.steady_above(g, group)
    }

    fn smallest_buffer(&self, g: &Graph, group: &NodeSet) -> Result<u64> {
        self.inner.smallest_buffer(g, group)
    }

    fn costly(&self) -> bool {
        self.inner.costly()
    }
}
