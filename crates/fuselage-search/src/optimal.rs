//! [`Optimal`]: an exact dynamic programme over contiguous plans of candidate orders.
//!
//! ## The family of plans it is optimal over
//!
//! Every valid plan is contiguous in *some* topological order: sort its (acyclic) graph of
//! groups topologically and list each group's nodes in order. Conversely, for one topological
//! order π, cutting π into consecutive segments and splitting each segment into its weakly
//! connected components always gives a plan (acyclic by construction). For a fixed π the best
//! such plan is found exactly by a dynamic programme over prefixes:
//!
//! ```text
//! best[0] = 0
//! best[j] = min over i < j of best[i] + Σ F_D(c) over the components c of π[i..j],
//!           provided every component is valid or an unfusable singleton
//! ```
//!
//! `Optimal` returns the best plan over the union of two families.
//!
//! **1. Every plan whose groups have at most `max_group` nodes (default 64).** Take the groups of
//! any valid plan in a topological order of its graph of groups: the nodes covered so far always
//! form a *down-set* (a set closed under predecessors). So the programme's states are the
//! down-sets reached so far, and a step adds any extension `E` of at most `max_group` nodes that
//! keeps a down-set, its components becoming groups (each valid or an unfusable singleton):
//!
//! ```text
//! best[∅] = 0
//! best[D ∪ E] = min over D, E of best[D] + Σ F_D(c) over the components c of E
//! ```
//!
//! This is exact over that whole family; CNNs are narrow (a residual block has two branches, an
//! ASPP head five), so the down-sets within `max_group` nodes of a state stay few.
//!
//! **2. Larger groups, along candidate orders.** For one topological order π, the best plan whose
//! groups are the components of consecutive segments of π (at most `max_segment` nodes, default
//! 160) comes from the prefix programme above, run over:
//! - the graph's own node order (the ONNX file's order for an import);
//! - two depth-first orders (Kahn's algorithm with a stack, consumers pushed in order and in
//!   reverse), which finish one branch before starting the next;
//! - `random_orders` random topological orders from the seed;
//! - any orders given with [`Optimal::with_orders`] (for instance [`order_of_plan`] of a plan).
//!
//! A segment starting at `π[i]` is extended while it is at most `max_segment` long and has not
//! been inadmissible for `patience` consecutive lengths.
//!
//! So, exactly: no plan whose groups all have at most `max_group` nodes, and no plan contiguous
//! in a candidate order within the segment limits above, moves less DRAM than the result.
//!
//! Complexity: family 1 costs O(states · extensions) cost-model calls, family 2
//! O(orders · n · max_segment); both go through the problem's (cached) model.

use crate::error::Result;
use crate::problem::Problem;
use crate::strategy::{Budget, SearchResult, SearchStrategy, StopReason};
use fuselage_ir::sample::{components, random_topological_order};
use fuselage_ir::{Graph, NodeId, NodeSet, Plan};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The exact optimiser over contiguous plans (see the module docs for the family).
#[derive(Clone, Debug)]
pub struct Optimal {
    /// Largest group of the exact down-set programme (default 64).
    pub max_group: usize,
    /// Longest segment of the order programmes (default 160).
    pub max_segment: usize,
    /// Consecutive inadmissible segment lengths after which a start gives up (default 48).
    pub patience: usize,
    /// Random topological orders tried besides the structured ones (default 4).
    pub random_orders: usize,
    extra: Vec<Vec<NodeId>>,
}

impl Default for Optimal {
    fn default() -> Self {
        Optimal {
            max_group: 64,
            max_segment: 160,
            patience: 48,
            random_orders: 4,
            extra: Vec::new(),
        }
    }
}

/// Kahn's algorithm with a stack: the most recently enabled node goes next, so one branch is
/// finished before the next starts. `reverse` pushes consumers in reverse order.
pub fn depth_first_order(g: &Graph, reverse: bool) -> Vec<NodeId> {
    let mut indeg = g.in_degrees();
    let mut stack: Vec<NodeId> = g
        .node_ids()
        .rev()
        .filter(|v| indeg[v.index()] == 0)
        .collect();
    let mut order = Vec::with_capacity(g.len());
    while let Some(v) = stack.pop() {
        order.push(v);
        let mut ready: Vec<NodeId> = Vec::new();
        for &(c, _) in g.consumers(v) {
            indeg[c.index()] -= 1;
            if indeg[c.index()] == 0 {
                ready.push(c);
            }
        }
        ready.dedup();
        if !reverse {
            ready.reverse();
        }
        stack.extend(ready);
    }
    order
}

/// A topological order in which every group of `plan` (an acyclic plan) is contiguous: groups
/// in topological order of the graph of groups, each group's nodes in id order.
pub fn order_of_plan(g: &Graph, plan: &Plan) -> Vec<NodeId> {
    let owner = crate::problem::owners(g.len(), &plan.groups);
    let n = plan.len();
    let mut indeg = vec![0usize; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for v in g.node_ids() {
        for &(c, _) in g.consumers(v) {
            let (a, b) = (owner[v.index()] as usize, owner[c.index()] as usize);
            if a != b && !succ[a].contains(&b) {
                succ[a].push(b);
                indeg[b] += 1;
            }
        }
    }
    let mut ready: std::collections::BTreeSet<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
    let mut order = Vec::with_capacity(g.len());
    while let Some(x) = ready.pop_first() {
        order.extend(plan.groups[x].iter());
        for &y in &succ[x] {
            indeg[y] -= 1;
            if indeg[y] == 0 {
                ready.insert(y);
            }
        }
    }
    order
}

impl Optimal {
    /// Adds candidate orders (each must be a topological order of the graph).
    pub fn with_orders(mut self, orders: impl IntoIterator<Item = Vec<NodeId>>) -> Self {
        self.extra.extend(orders);
        self
    }

    /// The exact best contiguous plan of one order, and the number of segments costed.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn best_for_order(&self, p: &Problem<'_>, order: &[NodeId]) -> Result<(Plan, u64, u64)> {
        let g = p.graph();
        let n = order.len();
        let mut best = vec![u64::MAX; n + 1];
        let mut from = vec![0usize; n + 1];
        best[0] = 0;
        let mut costed = 0u64;
        for i in 0..n {
            if best[i] == u64::MAX {
                continue;
            }
            let mut segment = NodeSet::new(g.len());
            let mut misses = 0;
            for j in i..n.min(i + self.max_segment.max(1)) {
                segment.insert(order[j]);
                costed += 1;
                match segment_cost(p, &segment)? {
                    Some(c) => {
                        misses = 0;
                        if best[i] + c < best[j + 1] {
                            best[j + 1] = best[i] + c;
                            from[j + 1] = i;
                        }
                    }
                    None => {
                        misses += 1;
                        if misses >= self.patience.max(1) {
                            break;
                        }
                    }
                }
            }
        }
        let mut groups = Vec::new();
        let mut j = n;
        while j > 0 {
            let i = from[j];
            let seg = NodeSet::from_ids(g.len(), order[i..j].iter().copied());
            groups.extend(components(g, &seg));
            j = i;
        }
        groups.reverse();
        Ok((Plan::new(groups), best[n], costed))
    }

    /// The candidate orders for `g`, in the order they are tried.
    pub fn candidate_orders(&self, g: &Graph, seed: u64) -> Vec<Vec<NodeId>> {
        let mut orders = vec![
            g.node_ids().collect::<Vec<_>>(),
            depth_first_order(g, false),
            depth_first_order(g, true),
        ];
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..self.random_orders {
            orders.push(random_topological_order(g, &mut rng));
        }
        orders.extend(self.extra.iter().cloned());
        orders.dedup();
        orders
    }
}

impl Optimal {
    /// The exact best plan over all plans whose groups have at most `max_group` nodes (family 1
    /// of the module docs): a dynamic programme whose states are down-sets. Returns the plan,
    /// its DRAM and the number of extensions costed.
    ///
    /// # Errors
    /// When the cost model fails.
    pub fn best_over_downsets(&self, p: &Problem<'_>) -> Result<(Plan, u64, u64)> {
        // Without a deadline the programme always completes.
        Ok(self
            .downsets_until(p, None)?
            .unwrap_or((Plan::default(), u64::MAX, 0)))
    }

    /// [`Optimal::best_over_downsets`], given up (`None`) when `deadline` passes.
    fn downsets_until(
        &self,
        p: &Problem<'_>,
        deadline: Option<std::time::Instant>,
    ) -> Result<Option<(Plan, u64, u64)>> {
        use std::collections::{BTreeMap, HashMap, HashSet};
        let g = p.graph();
        let n = g.len();
        let preds: Vec<Vec<NodeId>> = g.node_ids().map(|v| g.producers(v).collect()).collect();
        // best[D] = (cost of covering D, the down-set D came from).
        let mut best: HashMap<NodeSet, (u64, NodeSet)> = HashMap::new();
        let empty = NodeSet::new(n);
        best.insert(empty.clone(), (0, empty.clone()));
        let mut by_size: BTreeMap<usize, Vec<NodeSet>> = BTreeMap::new();
        by_size.entry(0).or_default().push(empty);
        let mut costed = 0u64;
        let full = NodeSet::full(n);
        while let Some((&size, _)) = by_size.iter().next() {
            let layer = by_size.remove(&size).unwrap_or_default();
            for d in layer {
                if deadline.is_some_and(|t| std::time::Instant::now() >= t) {
                    return Ok(None);
                }
                let base = best[&d].0;
                // Every down-set extension E of D with |E| <= max_segment, depth first.
                let mut seen: HashSet<NodeSet> = HashSet::new();
                let mut stack = vec![NodeSet::new(n)];
                while let Some(e) = stack.pop() {
                    if !e.is_empty() {
                        costed += 1;
                        if let Some(c) = segment_cost(p, &e)? {
                            let next = d.union(&e);
                            let total = base + c;
                            let entry = best.entry(next.clone());
                            match entry {
                                std::collections::hash_map::Entry::Occupied(mut o) => {
                                    if total < o.get().0 {
                                        o.insert((total, d.clone()));
                                    }
                                }
                                std::collections::hash_map::Entry::Vacant(v) => {
                                    v.insert((total, d.clone()));
                                    by_size.entry(next.len()).or_default().push(next);
                                }
                            }
                        }
                    }
                    if e.len() >= self.max_group.max(1) {
                        continue;
                    }
                    let done = d.union(&e);
                    for v in full.difference(&done).iter() {
                        if preds[v.index()].iter().all(|u| done.contains(*u)) {
                            let mut bigger = e.clone();
                            bigger.insert(v);
                            if seen.insert(bigger.clone()) {
                                stack.push(bigger);
                            }
                        }
                    }
                }
            }
        }
        let (cost, _) = best
            .get(&NodeSet::full(n))
            .cloned()
            .unwrap_or((u64::MAX, NodeSet::new(n)));
        let mut groups = Vec::new();
        let mut cur = NodeSet::full(n);
        while !cur.is_empty() {
            let prev = best[&cur].1.clone();
            groups.extend(components(g, &cur.difference(&prev)));
            cur = prev;
        }
        groups.reverse();
        Ok(Some((Plan::new(groups), cost, costed)))
    }
}

/// `Σ F_D` of the segment's components, or `None` when one is inadmissible.
fn segment_cost(p: &Problem<'_>, segment: &NodeSet) -> Result<Option<u64>> {
    let mut total = 0;
    for c in components(p.graph(), segment) {
        if !p.admissible(&c)? {
            return Ok(None);
        }
        total += p.model().dram(p.graph(), &c)?;
    }
    Ok(Some(total))
}

impl SearchStrategy for Optimal {
    fn name(&self) -> &str {
        "optimal"
    }

    /// Runs both programmes (see the module docs) and returns the better plan. The budget's
    /// evaluations are not consumed (the work is fixed by the families); `evaluations` counts
    /// the candidate sets costed, and the history holds the best DRAM after the down-set
    /// programme and after each order.
    ///
    /// With a time limit ([`Budget::with_time_limit`]) it is an anytime solver: the down-set
    /// programme is given up when the limit passes, the order programmes stop between orders,
    /// and the best plan so far comes back with [`StopReason::TimeLimit`] (not proven). The
    /// first order (the graph's own) always runs, so a plan always comes back.
    fn run(&self, p: &Problem<'_>, budget: &Budget<'_>, seed: u64) -> Result<SearchResult> {
        let g = p.graph();
        let orders = self.candidate_orders(g, seed);
        let steps = orders.len() as u64 + 1;
        let mut stop = StopReason::Exhausted;
        let mut evaluations = 0;
        let mut best = None;
        let mut history = Vec::new();
        match self.downsets_until(p, budget.deadline())? {
            Some((plan, _, costed)) => {
                evaluations += costed;
                let score = p.score(&plan)?;
                history.push(score.dram_bytes);
                best = Some((plan, score));
            }
            None => stop = StopReason::TimeLimit,
        }
        budget.report(budget.evaluations() / steps);
        for (k, order) in orders.iter().enumerate() {
            if best.is_some() && budget.expired() {
                stop = StopReason::TimeLimit;
                break;
            }
            let (plan, _, costed) = self.best_for_order(p, order)?;
            evaluations += costed;
            let score = p.score(&plan)?;
            let better = best
                .as_ref()
                .is_none_or(|(_, s): &(Plan, crate::problem::Score)| {
                    score.dram_bytes < s.dram_bytes
                });
            if better {
                best = Some((plan, score));
            }
            if let Some((_, s)) = &best {
                history.push(s.dram_bytes);
            }
            budget.report(((k as u64 + 2) * budget.evaluations()) / steps);
        }
        let (plan, score) = match best {
            Some(best) => best,
            // No order at all (an empty graph): the empty plan.
            None => {
                let plan = Plan::default();
                let score = p.score(&plan)?;
                (plan, score)
            }
        };
        Ok(SearchResult {
            plan,
            score,
            evaluations,
            history,
            stop,
            front: Vec::new(),
        })
    }
}
