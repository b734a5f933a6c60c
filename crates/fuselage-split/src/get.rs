//! [`ExplainedSplitter`]: the explanation-guided splitter of Mills et al. (Algorithm 1, "recursive
//! greedy tree-based splitting", section 3 of `method.md`).
//!
//! ## Design
//!
//! An invalid group is handed to an [`Explainer`], which selects the edges most responsible for
//! the group not fitting β. Each selected edge, best first, is a candidate cut.
//!
//! - **Candidates.** The group's nodes are numbered in id order, a topological order
//!   ([`GroupOrder`]). An edge `u → v` is severed by the head/tail cuts after `k` nodes for every
//!   `k` in [`GroupOrder::cuts_of`]`(u, v)`; each such cut also severs every other edge spanning
//!   it, which is the paper's expansion rule (a skip edge takes the edges joining its two sides,
//!   an edge under a skip takes the enclosing skips, recursively for nested skips). Each `k`
//!   gives one bipartition (head, tail); candidates are deduplicated by `k`, in the order of the
//!   explanation, and kept only when both parts are weakly connected.
//! - **Acyclicity by construction.** A head is a prefix of a topological order of the group, so
//!   the only edges between the parts run head → tail, and on a group of an acyclic plan no path
//!   runs tail → outside → head (see the crate docs). Every part this splitter returns is made
//!   of such cuts, so replacing a group by its parts keeps an acyclic plan acyclic.
//! - **Choosing** (a part is *fine* when it is valid, or a single node, which is then unfusable
//!   and stays alone):
//!   1. *Category 1*, both parts fine: the candidate with the least `F_D(head) + F_D(tail)`.
//!   2. *Category 2*, only when no category 1 exists, exactly one part fine: candidates by the
//!      fine part's node count (most first, ties by lower `F_D`); the fine part is kept and the
//!      other split recursively. If that recursion fails, the next candidate is tried.
//!   3. *Category 3*, only when neither exists, both parts invalid: the `max_branch` candidates
//!      with the least `F_D(head) + F_D(tail)` (default 2: explainer calls can cost tens of
//!      milliseconds each) are split recursively on both sides, and the combination with the
//!      least total `F_D` is kept.
//!
//!   Remaining ties go to the candidate the explanation ranks first. Algorithm 1 *fails* on a
//!   group when no candidate of the category that applies succeeds (in particular when the
//!   explanation yields no connected bipartition). The categories are exclusive, as in the
//!   paper: a group with a category 2 candidate is never tried under category 3.
//! - **Fallback.** When Algorithm 1 fails on the group it was called on, the group is split by
//!   [`RandomSplitter`] with the caller's rng, and [`Split::fell_back`] is set. The rectify rate
//!   ([`SplitStats::rectify_rate`]) is the share of invalid groups split without falling back.
//! - **Memoisation.** The result of Algorithm 1 on every group it meets (the top group and every
//!   recursive part, success or failure) is kept in a [`SplitMemo`]. The cost model's answers
//!   are memoised by wrapping it in [`Cached`](fuselage_cost::Cached), which is the caller's
//!   job (the command line does it, and shares the one cache between the search, the splitter
//!   and a `CostExplainer`, which explains with the model the splitter hands it).
//! - **Purity, hence sharing.** The explainer's rng is seeded from the splitter's seed and the
//!   group's node ids, never from the search's rng (which only the random fallback uses). So the
//!   result of Algorithm 1 on a group is a function of the group, for a given graph, cost model,
//!   β, explainer, seed and `max_branch`, and a memo can be shared between splitter instances
//!   ([`ExplainedSplitter::with_memo`]), across threads, without changing any result. A memo binds to
//!   that setting on first use, the graph by its [identity](fuselage_ir::Graph::identity)
//!   (so not the same network at another resolution), and refuses another one
//!   ([`SplitError::MemoMismatch`]).
//!
//! Complexity: every part Algorithm 1 recurses on is a contiguous range of the group's id
//! order, so a group of n nodes meets at most n(n+1)/2 distinct parts, each explained once
//! thanks to the memo; per part, O(n) candidate cuts, two cost-model calls each. In practice
//! category 1 or 2 ends the recursion after a few explanations.

use crate::error::{Result, SplitError};
use crate::explore::CutChoice;
use crate::random::RandomSplitter;
use crate::splitter::{Split, SplitStats, Splitter};
use fuselage_cost::{CostModel, FxHasher};
use fuselage_explain::{Explainer, Explanation};
use fuselage_ir::order::GroupOrder;
use fuselage_ir::{Graph, NodeSet};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type Memo = HashMap<NodeSet, Option<Vec<NodeSet>>, BuildHasherDefault<FxHasher>>;

/// Hit and miss counts of a [`SplitMemo`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoStats {
    /// Groups answered from the memo.
    pub hits: u64,
    /// Groups Algorithm 1 had to work out (one explanation each, unless the group was fine).
    pub misses: u64,
    /// Groups held (successes and failures).
    pub entries: u64,
}

/// The results of Algorithm 1 per group, shareable between [`ExplainedSplitter`]s that agree on the
/// graph, cost model, β, explainer, seed and branching (see the module docs).
///
/// `None` records a group on which Algorithm 1 fails. Thread-safe; clone the `Arc` to share.
#[derive(Debug, Default)]
pub struct SplitMemo {
    map: Mutex<Memo>,
    bound: Mutex<Option<String>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl SplitMemo {
    /// An empty memo, bound to nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Hits, misses and entries so far.
    pub fn stats(&self) -> MemoStats {
        MemoStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            entries: self.lock_map().len() as u64,
        }
    }

    /// Forgets every entry and the binding, and zeroes the counters.
    pub fn clear(&self) {
        self.lock_map().clear();
        *self.bound.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.hits.store(0, Ordering::Relaxed);
        self.misses.store(0, Ordering::Relaxed);
    }

    fn lock_map(&self) -> std::sync::MutexGuard<'_, Memo> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Binds the memo to `key` on first use; refuses another key afterwards.
    fn bind(&self, key: String) -> Result<()> {
        let mut bound = self.bound.lock().unwrap_or_else(|e| e.into_inner());
        match bound.as_ref() {
            None => {
                *bound = Some(key);
                Ok(())
            }
            Some(b) if *b == key => Ok(()),
            Some(b) => Err(SplitError::MemoMismatch {
                bound: b.clone(),
                found: key,
            }),
        }
    }

    fn get(&self, group: &NodeSet) -> Option<Option<Vec<NodeSet>>> {
        let hit = self.lock_map().get(group).cloned();
        if hit.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        hit
    }

    fn insert(&self, group: NodeSet, parts: Option<Vec<NodeSet>>) {
        self.misses.fetch_add(1, Ordering::Relaxed);
        self.lock_map().insert(group, parts);
    }
}

/// The explanation-guided splitter: Algorithm 1 of Mills et al. over any [`Explainer`] and
/// [`CostModel`], falling back to random cuts where it fails. See the module docs for the
/// algorithm, memoisation and determinism.
///
/// The explainer is handed the splitter's cost model with every group
/// ([`Explainer::explain`]), so it explains at that model's β and element sizes, the one
/// carrier of both: an explainer and a splitter cannot disagree on β. Wrap the model in
/// [`Cached`](fuselage_cost::Cached) and the explainer's cost-model calls share its answers.
///
/// # Example
/// ```
/// use fuselage_cost::{Cached, CostConfig, CostModel, Lbdf};
/// use fuselage_explain::CostExplainer;
/// use fuselage_ir::{NodeSet, Plan};
/// use fuselage_split::{ExplainedSplitter, Splitter};
/// use rand::SeedableRng;
/// let g = fuselage_zoo::build("resnet18").unwrap();
/// let model = Cached::new(Lbdf::new(CostConfig::kib(128)?));
/// let splitter = ExplainedSplitter::new(CostExplainer::new(), &model).with_seed(7);
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let all = NodeSet::full(g.len());
/// let split = splitter.split(&g, &all, &mut rng)?;
/// for part in &split.groups {
///     let c = model.evaluate(&g, part)?;
///     assert!(c.valid || (c.unfusable && part.len() == 1));
/// }
/// g.check_plan(&Plan::new(split.groups.clone()))?; // a partition, acyclic
/// let stats = splitter.stats().unwrap();
/// assert_eq!(stats.invalid_groups, 1);
/// assert_eq!(stats.rectified, u64::from(!split.fell_back));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ExplainedSplitter<E, C> {
    explainer: E,
    model: C,
    seed: u64,
    max_branch: usize,
    memo: Arc<SplitMemo>,
    stats: Mutex<SplitStats>,
    choice: CutChoice,
    /// Explanations by group, kept when cuts are sampled (the split memo is not used then).
    explained: Mutex<HashMap<NodeSet, Explanation, BuildHasherDefault<FxHasher>>>,
}

/// The name [`ExplainedSplitter`] had until 0.1 (it read like a getter). Kept for one release.
#[deprecated(since = "0.1.0", note = "renamed `ExplainedSplitter`")]
pub type GetSplitter<E, C> = ExplainedSplitter<E, C>;

/// One bipartition of a group and what the cost model says of its parts.
struct Candidate {
    head: NodeSet,
    tail: NodeSet,
    head_fine: bool,
    tail_fine: bool,
    head_dram: u64,
    tail_dram: u64,
}

impl Candidate {
    fn dram(&self) -> u64 {
        self.head_dram + self.tail_dram
    }
}

/// What one top-level call accumulates.
struct Run<'g> {
    g: &'g Graph,
    /// Where sampled cuts are drawn from (seeded from the search's rng once per call).
    draw: ChaCha8Rng,
    explanations: u64,
    explain_time: Duration,
    cost_time: Duration,
}

impl<E: Explainer, C: CostModel> ExplainedSplitter<E, C> {
    /// A splitter asking `explainer` where to cut and judging parts with `model`; seed 0,
    /// branching 2, a memo of its own.
    pub fn new(explainer: E, model: C) -> Self {
        ExplainedSplitter {
            explainer,
            model,
            seed: 0,
            max_branch: 2,
            memo: Arc::new(SplitMemo::new()),
            stats: Mutex::new(SplitStats::default()),
            choice: CutChoice::Selected,
            explained: Mutex::new(HashMap::default()),
        }
    }

    /// Which edges of each explanation to try ([`CutChoice`]; default the selection, as
    /// published).
    pub fn with_cut_choice(mut self, choice: CutChoice) -> Self {
        self.choice = choice;
        self
    }

    /// Which edges of each explanation it tries.
    pub fn cut_choice(&self) -> CutChoice {
        self.choice
    }

    /// Seeds the explainer's rng (per group, mixed with the group's node ids).
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// At most `max_branch` category 3 candidates are split recursively (0: category 3 always
    /// fails).
    pub fn with_max_branch(mut self, max_branch: usize) -> Self {
        self.max_branch = max_branch;
        self
    }

    /// Uses `memo`, which other splitters of the same setting may share.
    pub fn with_memo(mut self, memo: Arc<SplitMemo>) -> Self {
        self.memo = memo;
        self
    }

    /// The explainer.
    pub fn explainer(&self) -> &E {
        &self.explainer
    }

    /// The cost model.
    pub fn model(&self) -> &C {
        &self.model
    }

    /// The explainer seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The category 3 branching.
    pub fn max_branch(&self) -> usize {
        self.max_branch
    }

    /// The memo (clone it to share).
    pub fn memo(&self) -> &Arc<SplitMemo> {
        &self.memo
    }

    /// What the memo's answers depend on.
    fn memo_key(&self, g: &Graph) -> String {
        let cfg = self.model.config();
        format!(
            "graph {} ({} nodes, identity {:016x}), cost model {} at {:?}, explainer {}, seed {}, branching {}",
            g.name(),
            g.len(),
            g.identity(),
            self.model.name(),
            cfg,
            self.explainer.name(),
            self.seed,
            self.max_branch
        )
    }

    /// Whether `part` is fine (valid, or a single node) and its `F_D`.
    fn judge(&self, run: &mut Run<'_>, part: &NodeSet) -> Result<(bool, u64)> {
        let start = Instant::now();
        let c = self.model.evaluate(run.g, part);
        run.cost_time += start.elapsed();
        let c = c?;
        Ok((c.valid || part.is_singleton(), c.dram_bytes))
    }

    /// Algorithm 1 on `group`, through the memo: its parts, or `None` where it fails.
    /// Sampled cuts are not a function of the group, so they bypass the memo.
    fn solve(&self, run: &mut Run<'_>, group: &NodeSet) -> Result<Option<Vec<NodeSet>>> {
        if self.choice != CutChoice::Selected {
            return self.solve_uncached(run, group);
        }
        if let Some(known) = self.memo.get(group) {
            return Ok(known);
        }
        let parts = self.solve_uncached(run, group)?;
        self.memo.insert(group.clone(), parts.clone());
        Ok(parts)
    }

    /// The explanation of `group` (kept per group when cuts are sampled).
    fn explanation(&self, run: &mut Run<'_>, group: &NodeSet) -> Result<Explanation> {
        let sampled = self.choice != CutChoice::Selected;
        if sampled {
            let known = self.explained.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(e) = known.get(group) {
                return Ok(e.clone());
            }
        }
        let mut rng = ChaCha8Rng::seed_from_u64(group_seed(self.seed, group));
        let start = Instant::now();
        let explained = self.explainer.explain(run.g, group, &self.model, &mut rng);
        run.explain_time += start.elapsed();
        run.explanations += 1;
        let e = explained?;
        if sampled {
            let mut known = self.explained.lock().unwrap_or_else(|e| e.into_inner());
            known.insert(group.clone(), e.clone());
        }
        Ok(e)
    }

    fn solve_uncached(&self, run: &mut Run<'_>, group: &NodeSet) -> Result<Option<Vec<NodeSet>>> {
        if self.judge(run, group)?.0 {
            return Ok(Some(vec![group.clone()]));
        }
        let candidates = self.candidates(run, group)?;

        // Category 1: both parts fine, least F_D.
        if let Some(c) = candidates
            .iter()
            .filter(|c| c.head_fine && c.tail_fine)
            .min_by_key(|c| c.dram())
        {
            return Ok(Some(vec![c.head.clone(), c.tail.clone()]));
        }

        // Category 2: one part fine; the biggest fine part, then the lower F_D.
        let mut one: Vec<&Candidate> = candidates
            .iter()
            .filter(|c| c.head_fine != c.tail_fine)
            .collect();
        if !one.is_empty() {
            one.sort_by_key(|c| {
                let (part, dram) = if c.head_fine {
                    (&c.head, c.head_dram)
                } else {
                    (&c.tail, c.tail_dram)
                };
                (std::cmp::Reverse(part.len()), dram)
            });
            for c in one {
                if c.head_fine {
                    if let Some(rest) = self.solve(run, &c.tail)? {
                        let mut out = vec![c.head.clone()];
                        out.extend(rest);
                        return Ok(Some(out));
                    }
                } else if let Some(mut out) = self.solve(run, &c.head)? {
                    out.push(c.tail.clone());
                    return Ok(Some(out));
                }
            }
            return Ok(None);
        }

        // Category 3: both parts invalid; the best few by F_D, split on both sides.
        let mut both: Vec<&Candidate> = candidates.iter().collect();
        both.sort_by_key(|c| c.dram());
        let mut best: Option<(u64, Vec<NodeSet>)> = None;
        for c in both.into_iter().take(self.max_branch) {
            let Some(mut out) = self.solve(run, &c.head)? else {
                continue;
            };
            let Some(tail) = self.solve(run, &c.tail)? else {
                continue;
            };
            out.extend(tail);
            let mut total = 0;
            for p in &out {
                total += self.judge(run, p)?.1;
            }
            if best.as_ref().is_none_or(|(b, _)| total < *b) {
                best = Some((total, out));
            }
        }
        Ok(best.map(|(_, parts)| parts))
    }

    /// Explains `group` and returns its connected bipartitions, in explanation order, with
    /// their parts judged.
    fn candidates(&self, run: &mut Run<'_>, group: &NodeSet) -> Result<Vec<Candidate>> {
        let g = run.g;
        let e = self.explanation(run, group)?;
        let tried = self.choice.edges(&e, &mut run.draw);

        let order = GroupOrder::new(g, group);
        let bad = |reason: String| SplitError::BadExplanation {
            explainer: self.explainer.name().to_string(),
            group: g.names(group),
            reason,
        };
        let mut seen = vec![false; order.len()];
        let mut out = Vec::new();
        for &i in &tried {
            let &(u, v) = e
                .edges
                .get(i)
                .ok_or_else(|| bad(format!("selected edge {i} of {}", e.edges.len())))?;
            match (order.position(u), order.position(v)) {
                (Some(pu), Some(pv)) if pu < pv => {}
                _ => {
                    return Err(bad(format!(
                        "edge {} -> {}, which is not an edge inside the group",
                        g.node(u).name,
                        g.node(v).name
                    )));
                }
            }
            for k in order.cuts_of(u, v) {
                if std::mem::replace(&mut seen[k], true) {
                    continue;
                }
                let (head, tail) = order.cut(k);
                if !(g.is_connected_set(&head) && g.is_connected_set(&tail)) {
                    continue;
                }
                let (head_fine, head_dram) = self.judge(run, &head)?;
                let (tail_fine, tail_dram) = self.judge(run, &tail)?;
                out.push(Candidate {
                    head,
                    tail,
                    head_fine,
                    tail_fine,
                    head_dram,
                    tail_dram,
                });
            }
        }
        Ok(out)
    }
}

/// The explainer's seed for `group`: the splitter's seed mixed with the group's node ids
/// (splitmix64), stable across platforms and runs.
fn group_seed(seed: u64, group: &NodeSet) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let mut h = mix(seed ^ group.capacity() as u64);
    for v in group.iter() {
        h = mix(h ^ v.index() as u64);
    }
    h
}

impl<E: Explainer, C: CostModel> Splitter for ExplainedSplitter<E, C> {
    fn name(&self) -> &str {
        "get"
    }

    fn split(&self, g: &Graph, group: &NodeSet, rng: &mut ChaCha8Rng) -> Result<Split> {
        g.check_group(group, 0)?;
        let start = Instant::now();
        // One draw from the search's rng, and only where cuts are sampled: Algorithm 1 as
        // published leaves the search's stream as it was.
        let draw = match self.choice {
            CutChoice::Selected => 0,
            CutChoice::Sampled { .. } => rng.random(),
        };
        let mut run = Run {
            g,
            draw: ChaCha8Rng::seed_from_u64(draw),
            explanations: 0,
            explain_time: Duration::ZERO,
            cost_time: Duration::ZERO,
        };
        if self.judge(&mut run, group)?.0 {
            return Ok(Split {
                groups: vec![group.clone()],
                fell_back: false,
            });
        }
        self.memo.bind(self.memo_key(g))?;
        let solved = self.solve(&mut run, group);
        let (split, fallback_cost) = match solved {
            Ok(Some(groups)) => (
                Ok(Split {
                    groups,
                    fell_back: false,
                }),
                0.0,
            ),
            Ok(None) => {
                let random = RandomSplitter::new(&self.model);
                let split = random.split(g, group, rng).map(|s| Split {
                    groups: s.groups,
                    fell_back: true,
                });
                (split, random.stats().map_or(0.0, |s| s.cost_seconds))
            }
            Err(e) => (Err(e), 0.0),
        };
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        s.invalid_groups += 1;
        if matches!(&split, Ok(sp) if !sp.fell_back) {
            s.rectified += 1;
        }
        s.seconds += start.elapsed().as_secs_f64();
        s.explanations += run.explanations;
        s.explainer_seconds += run.explain_time.as_secs_f64();
        s.cost_seconds += run.cost_time.as_secs_f64() + fallback_cost;
        split
    }

    fn stats(&self) -> Option<SplitStats> {
        Some(*self.stats.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuselage_cost::{Cached, CostConfig, Lbdf};
    use fuselage_explain::{
        CostExplainer, ExplainError, Explanation, RandomExplainer, group_edges,
    };
    use fuselage_ir::{ConvAttrs, GraphBuilder, NodeId, Op, Plan, TensorShape};

    /// x → stem → reduce → c1 … c8 → expand → add ← stem (the skip) → out; c4 is the waist.
    fn hourglass() -> Graph {
        let mut b = GraphBuilder::new("hourglass");
        let x = b.input("x", TensorShape::nchw(64, 16, 16)).unwrap();
        let stem = b.node("stem", Op::Relu, &[x]).unwrap();
        let mut t = b
            .node(
                "reduce",
                Op::Conv(ConvAttrs::square(4, 1, 1, 1, 1)),
                &[stem],
            )
            .unwrap();
        for (i, c) in [4, 4, 4, 2, 4, 4, 4, 4].into_iter().enumerate() {
            t = b
                .node(
                    format!("c{}", i + 1),
                    Op::Conv(ConvAttrs::square(c, 3, 1, 1, 1)),
                    &[t],
                )
                .unwrap();
        }
        let e = b
            .node("expand", Op::Conv(ConvAttrs::square(64, 1, 1, 1, 1)), &[t])
            .unwrap();
        let a = b.node("add", Op::Add, &[e, stem]).unwrap();
        b.node("out", Op::Relu, &[a]).unwrap();
        b.finish().unwrap()
    }

    /// A test explainer from a name and a function of the graph and the group.
    struct ByFn<F>(&'static str, F);

    impl<F> Explainer for ByFn<F>
    where
        F: Fn(&Graph, &NodeSet) -> fuselage_explain::Result<Explanation> + Send + Sync,
    {
        fn name(&self) -> &str {
            self.0
        }
        fn explain(
            &self,
            g: &Graph,
            group: &NodeSet,
            _model: &dyn CostModel,
            _rng: &mut ChaCha8Rng,
        ) -> fuselage_explain::Result<Explanation> {
            (self.1)(g, group)
        }
    }

    /// Selects, of `edges` (by node names), those inside the group; only the first present
    /// when `first_only`.
    fn fixed(edges: Vec<(&'static str, &'static str)>, first_only: bool) -> impl Explainer {
        ByFn("fixed", move |g: &Graph, group: &NodeSet| {
            let (order, group_edges) = group_edges(g, group)?;
            let mut selected = Vec::new();
            for (u, v) in &edges {
                let e = (g.require(u)?, g.require(v)?);
                if let Some(i) = group_edges.iter().position(|x| *x == e) {
                    selected.push(i);
                    if first_only {
                        break;
                    }
                }
            }
            Ok(Explanation {
                explainer: "fixed".into(),
                nodes: order.nodes().to_vec(),
                edge_scores: vec![0.0; group_edges.len()],
                node_scores: vec![0.0; order.len()],
                edges: group_edges,
                selected,
            })
        })
    }

    fn names(g: &Graph, parts: &[NodeSet]) -> Vec<Vec<String>> {
        parts.iter().map(|p| g.names(p)).collect()
    }

    fn range(g: &Graph, first: &str, last: &str) -> NodeSet {
        let (a, b) = (g.require(first).unwrap(), g.require(last).unwrap());
        NodeSet::from_ids(g.len(), (a.0..=b.0).map(NodeId))
    }

    fn assert_fine<C: CostModel>(g: &Graph, model: &C, whole: &NodeSet, parts: &[NodeSet]) {
        let mut all = NodeSet::new(g.len());
        for p in parts {
            assert!(g.is_connected_set(p), "{:?}", g.names(p));
            assert!(all.is_disjoint(p));
            all.union_with(p);
            let c = model.evaluate(g, p).unwrap();
            assert!(c.valid || (c.unfusable && p.len() == 1), "{:?}", g.names(p));
        }
        assert_eq!(&all, whole);
    }

    fn rng(seed: u64) -> ChaCha8Rng {
        ChaCha8Rng::seed_from_u64(seed)
    }

    #[test]
    fn category_2_keeps_the_fine_part_and_splits_the_rest() {
        let g = hourglass();
        let model = Cached::new(Lbdf::new(CostConfig::kib(12).unwrap()));
        // The only candidate at the top is the cut after `stem`: {stem} fits, the rest still
        // holds the skip; inside the rest, the cut at the waist is category 1.
        let fixed = fixed(vec![("stem", "reduce"), ("c4", "c5")], true);
        let s = ExplainedSplitter::new(fixed, &model);
        let all = NodeSet::full(g.len());
        let split = s.split(&g, &all, &mut rng(0)).unwrap();
        assert!(!split.fell_back);
        assert_eq!(
            split.groups,
            vec![
                range(&g, "stem", "stem"),
                range(&g, "reduce", "c4"),
                range(&g, "c5", "out")
            ]
        );
        assert_fine(&g, &model, &all, &split.groups);
        let st = s.stats().unwrap();
        assert_eq!(
            (st.invalid_groups, st.rectified, st.explanations),
            (1, 1, 2)
        );
        // Both explained groups are memoised, the top one and the rest after `stem`.
        assert_eq!(s.memo().stats().entries, 2);
    }

    #[test]
    fn category_3_splits_both_sides_and_branching_bounds_it() {
        let g = hourglass();
        // At 3 KiB both sides of the waist are too big (3,626 and 5,672 bytes).
        let model = Cached::new(Lbdf::new(CostConfig::kib(3).unwrap()));
        let fixed = || {
            fixed(
                vec![
                    ("c4", "c5"),
                    ("c2", "c3"),
                    ("c6", "c7"),
                    ("expand", "add"),
                    ("add", "out"),
                ],
                true,
            )
        };
        let all = NodeSet::full(g.len());
        let s = ExplainedSplitter::new(fixed(), &model);
        let split = s.split(&g, &all, &mut rng(0)).unwrap();
        assert!(!split.fell_back, "{:?}", names(&g, &split.groups));
        assert_fine(&g, &model, &all, &split.groups);
        g.check_plan(&Plan::new(split.groups.clone())).unwrap();
        // Top: the waist, both sides too big. Head: cut after c2 (category 1). Tail: {c5, c6}
        // fits, the rest is cut after expand, then {add, out} into two nodes (add alone
        // needs 3 KiB: unfusable).
        assert_eq!(
            split.groups,
            vec![
                range(&g, "stem", "c2"),
                range(&g, "c3", "c4"),
                range(&g, "c5", "c6"),
                range(&g, "c7", "expand"),
                range(&g, "add", "add"),
                range(&g, "out", "out"),
            ]
        );
        assert!(
            model
                .evaluate(&g, &range(&g, "add", "add"))
                .unwrap()
                .unfusable
        );
        assert_eq!(s.stats().unwrap().explanations, 5);
        // Without category 3 branching, Algorithm 1 fails and the random split takes over.
        let s0 = ExplainedSplitter::new(fixed(), &model).with_max_branch(0);
        let split = s0.split(&g, &all, &mut rng(0)).unwrap();
        assert!(split.fell_back);
        assert_fine(&g, &model, &all, &split.groups);
        let st = s0.stats().unwrap();
        assert_eq!(
            (st.invalid_groups, st.rectified, st.explanations),
            (1, 0, 1)
        );
        assert_eq!(st.rectify_rate(), 0.0);
    }

    #[test]
    fn an_empty_explanation_falls_back_to_random_cuts() {
        let g = hourglass();
        let model = Lbdf::new(CostConfig::kib(12).unwrap());
        let none = fixed(vec![], false);
        let s = ExplainedSplitter::new(none, model);
        let all = NodeSet::full(g.len());
        let a = s.split(&g, &all, &mut rng(4)).unwrap();
        assert!(a.fell_back);
        assert_fine(&g, &model, &all, &a.groups);
        // The fallback follows the caller's rng, as the random splitter does.
        let b = RandomSplitter::new(model)
            .split(&g, &all, &mut rng(4))
            .unwrap();
        assert_eq!(a.groups, b.groups);
        // A memo hit on a failed group falls back again, and counts again.
        let c = s.split(&g, &all, &mut rng(4)).unwrap();
        assert_eq!(a, c);
        let st = s.stats().unwrap();
        assert_eq!(
            (st.invalid_groups, st.rectified, st.explanations),
            (2, 0, 1)
        );
        assert!(st.cost_seconds > 0.0);
        assert_eq!(
            s.memo().stats(),
            MemoStats {
                hits: 1,
                misses: 1,
                entries: 1
            }
        );
    }

    #[test]
    fn valid_groups_come_back_whole_uncounted() {
        let g = hourglass();
        let model = Lbdf::new(CostConfig::kib(64).unwrap());
        let s = ExplainedSplitter::new(RandomExplainer::default(), model);
        let all = NodeSet::full(g.len());
        let split = s.split(&g, &all, &mut rng(0)).unwrap();
        assert_eq!(split.groups, vec![all]);
        assert_eq!(s.stats().unwrap(), SplitStats::default());
        let bad = NodeSet::from_ids(g.len(), [NodeId(0), NodeId(5)]);
        assert!(matches!(
            s.split(&g, &bad, &mut rng(0)),
            Err(SplitError::Ir(_))
        ));
    }

    #[test]
    fn explanations_depend_on_the_group_and_seed_not_the_search_rng() {
        let g = fuselage_zoo::build("resnet18").unwrap();
        let model = Cached::new(Lbdf::new(CostConfig::kib(128).unwrap()));
        let all = NodeSet::full(g.len());
        let run = |seed: u64, search_seed: u64| {
            ExplainedSplitter::new(RandomExplainer::default(), &model)
                .with_seed(seed)
                .split(&g, &all, &mut rng(search_seed))
                .unwrap()
        };
        let a = run(1, 10);
        assert!(!a.fell_back);
        assert_eq!(a, run(1, 11));
        assert_eq!(a, run(1, 10));
        assert_fine(&g, &model, &all, &a.groups);
        assert_ne!(group_seed(1, &all), group_seed(2, &all));
        assert_ne!(
            group_seed(1, &all),
            group_seed(1, &range(&g, "/conv1/Conv", "/relu/Relu"))
        );
    }

    #[test]
    fn a_shared_memo_answers_for_every_sharer_and_refuses_another_setting() {
        let g = fuselage_zoo::build("mobilenet_v2").unwrap();
        let model = Cached::new(Lbdf::new(CostConfig::kib(128).unwrap()));
        let memo = Arc::new(SplitMemo::new());
        let all = NodeSet::full(g.len());
        let first = ExplainedSplitter::new(CostExplainer::new(), &model).with_memo(memo.clone());
        let a = first.split(&g, &all, &mut rng(0)).unwrap();
        let (misses, hits) = (memo.stats().misses, memo.stats().hits);
        assert!(misses >= 1);
        let second = ExplainedSplitter::new(CostExplainer::new(), &model).with_memo(memo.clone());
        let b = second.split(&g, &all, &mut rng(99)).unwrap();
        assert_eq!(a, b);
        assert_eq!(memo.stats().misses, misses);
        assert_eq!(memo.stats().hits, hits + 1);
        let st = second.stats().unwrap();
        assert_eq!((st.invalid_groups, st.explanations), (1, 0));
        assert_eq!(st.rectified, u64::from(!b.fell_back));
        // Another seed would give other answers: refused.
        let other = ExplainedSplitter::new(CostExplainer::new(), &model)
            .with_seed(5)
            .with_memo(memo.clone());
        assert!(matches!(
            other.split(&g, &all, &mut rng(0)),
            Err(SplitError::MemoMismatch { .. })
        ));
        memo.clear();
        assert!(other.split(&g, &all, &mut rng(0)).is_ok());
    }

    #[test]
    fn explainer_errors_and_bad_explanations_are_reported() {
        let g = hourglass();
        let model = Lbdf::new(CostConfig::kib(12).unwrap());
        let all = NodeSet::full(g.len());
        // An explainer that fails: its error comes back as the split's.
        let failing = ByFn("failing", |_: &Graph, _: &NodeSet| {
            Err(ExplainError::Config("no answer".into()))
        });
        let err = ExplainedSplitter::new(failing, model)
            .split(&g, &all, &mut rng(0))
            .unwrap_err();
        assert!(
            matches!(err, SplitError::Explain(ExplainError::Config(ref m)) if m == "no answer"),
            "{err}"
        );
        // An explanation whose edge is not in the group.
        let outside = ByFn("outside", |g: &Graph, group: &NodeSet| {
            let (order, _) = group_edges(g, group)?;
            Ok(Explanation {
                explainer: "outside".into(),
                nodes: order.nodes().to_vec(),
                edges: vec![(NodeId(5), NodeId(1))],
                edge_scores: vec![1.0],
                node_scores: vec![0.0; order.len()],
                selected: vec![0],
            })
        });
        let err = ExplainedSplitter::new(outside, model)
            .split(&g, &all, &mut rng(0))
            .unwrap_err();
        assert!(
            matches!(err, SplitError::BadExplanation { ref explainer, .. } if explainer == "outside"),
            "{err}"
        );
    }
}
