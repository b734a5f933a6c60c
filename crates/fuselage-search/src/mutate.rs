//! Plan edits shared by the local search and NSGA-II: one-edit mutations, crossover, and the
//! acyclicity repair that makes any set of connected groups a plan.
//!
//! Every function takes and returns a plain list of groups; an edit that would make the graph
//! of groups cyclic is rejected (mutations) or repaired by topological cuts (crossover). Edits
//! are checked on a relabelled owner table ([`PlanGraph::owners`]) through
//! [`PlanGraph::from_owners`], before any group is built.

use crate::problem::Problem;
use fuselage_ir::sample::components;
use fuselage_ir::{GroupId, NodeId, NodeSet, Plan, PlanGraph};
use fuselage_split::cut::random_cut;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The one-edit mutations of the local search and NSGA-II: the paper's three (move, merge,
/// split) and a larger neighbourhood of our own (absorb).
///
/// Every edit starts at a group boundary drawn by the bytes of the tensor that crosses it:
/// boundaries that move the most DRAM are the ones worth removing, and a uniform draw spends
/// most of the budget on boundaries that any good plan keeps.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// Move a node to a neighbouring group.
    Move,
    /// Merge two neighbouring groups.
    Merge,
    /// Split one group in two (a random topological cut).
    Split,
    /// Merge a group with every neighbouring group, for the splitter to cut the region anew.
    ///
    /// A merge of two groups that comes out invalid is usually cut by the splitter back where
    /// it was; moving a boundary that sits between two other boundaries takes several
    /// coordinated edits, each of which alone costs DRAM. Handing the splitter the whole
    /// neighbourhood lets it place every boundary of the region at once.
    ///
    /// Measured together with the byte-weighted draw (December 2026): with
    /// [`ExplainedSplitter`](fuselage_split::ExplainedSplitter) the two let LS (over GNNExplainer) and
    /// NSGA-II (over the cost explainer) reach the optimum of resnet152 at 256 KiB, where both
    /// had stalled one to five 200 KB tensors above it (`docs/results.md`, Table II). With the
    /// random splitter they are a trade: over the 48 rows of `docs/searches.md` (budget 2,000)
    /// the mean gap of LS to the optimum went from 1.83% to 2.16% and that of NSGA-II from
    /// 3.15% to 3.29%, since random cuts seldom repair a large region well.
    Absorb,
    /// Copy the groups around one group onto a twin of that stretch of the graph, or onto
    /// all its twins (the same ops wired the same way, found by
    /// [`Motifs`](crate::repeat::Motifs)): a grouping found for one block of a network is
    /// tried on its repeats. Drawn only under [`Moves::Repeating`].
    ///
    /// ResNet-152 repeats one bottleneck 36 times in its third stage, and the optimum groups
    /// every copy alike; LS and NSGA-II with the paper's edits find that grouping block by
    /// block, if at all, and stall 9–35% above the optimum under BRR (`docs/explainers.md`).
    Repeat,
}

/// How the local search and NSGA-II edit plans: the paper's edits, those and copies of a
/// grouping onto repeated blocks ([`Moves::Repeating`], part of the improved guided search),
/// or merges and moves that fit first ([`Moves::Fitting`]).
///
/// A search stalls on *which valid groups it merges* (`docs/explainers.md`): a merge whose
/// result does not fit is cut again by the splitter, often where the two groups met, and the
/// evaluation is spent on a plan the search already had. [`Moves::Fitting`] draws up to
/// [`FITTING_TRIES`] edits of the kind asked for and takes the first whose new group fits the
/// buffer, judged by the problem's cost model (one group evaluation, answered from its cache
/// when it is [`Cached`](fuselage_cost::Cached)), or the first edit drawn when none fits; a
/// model that fails on a group counts it as not fitting. Only merges and moves are guided:
/// a split always fits better, and an absorb is meant to hand the splitter a region to cut.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moves {
    /// The paper's: each edit drawn once, by the bytes that cross the boundary it removes.
    #[default]
    Random,
    /// Merges and moves that fit the buffer first (see the type's docs).
    Fitting,
    /// The paper's four edits and [`Mutation::Repeat`], each with probability 1/5: what a
    /// run with an explainer uses unless told otherwise
    /// (`fuselage_pipeline::IMPROVED_MOVES`).
    Repeating,
}

/// How many edits [`Moves::Fitting`] draws before it takes the first.
pub const FITTING_TRIES: usize = 4;

/// An edge between two different groups, neither end unfusable, drawn with probability
/// proportional to the bytes of the tensor it carries (two passes: sum, then walk to the drawn
/// byte, without collecting the edges).
fn crossing_edge(
    p: &Problem<'_>,
    owner: &[GroupId],
    rng: &mut ChaCha8Rng,
) -> Option<(NodeId, NodeId)> {
    let g = p.graph();
    let crossing = || {
        g.node_ids()
            .flat_map(move |v| g.consumers(v).iter().map(move |&(c, _)| (v, c)))
            .filter(|&(v, c)| {
                owner[v.index()] != owner[c.index()]
                    && !p.unfusable().contains(v)
                    && !p.unfusable().contains(c)
            })
    };
    let weight = |v: NodeId| g.node(v).shape.elements().max(1);
    let total: u64 = crossing().map(|(v, _)| weight(v)).sum();
    if total == 0 {
        return None;
    }
    let mut at = rng.random_range(0..total);
    crossing().find(|&(v, _)| {
        let w = weight(v);
        if at < w {
            true
        } else {
            at -= w;
            false
        }
    })
}

/// A group drawn by the bytes of a boundary it has ([`crossing_edge`]), and which groups of
/// `plan` are it or a fusable neighbour of it: the region an absorb merges and a repeat copies.
fn neighbourhood(
    p: &Problem<'_>,
    plan: &Plan,
    owner: &[GroupId],
    rng: &mut ChaCha8Rng,
) -> Option<(GroupId, Vec<bool>)> {
    let g = p.graph();
    let (u, _) = crossing_edge(p, owner, rng)?;
    let a = owner[u.index()];
    let mut inside = vec![false; plan.len()];
    inside[a.index()] = true;
    for v in plan.groups[a.index()].iter() {
        for w in g.neighbours(v) {
            if !p.unfusable().contains(w) {
                inside[owner[w.index()].index()] = true;
            }
        }
    }
    Some((a, inside))
}

/// Applies one random mutation of kind `kind` to `plan`. Returns `None` when the edit is not
/// possible or would make the plan cyclic.
pub fn mutate(p: &Problem<'_>, plan: &Plan, kind: Mutation, rng: &mut ChaCha8Rng) -> Option<Plan> {
    let owner = PlanGraph::owners(p.graph().len(), &plan.groups);
    mutate_with(p, plan, &owner, kind, rng)
}

/// [`mutate`] with the plan's owner table already computed. The edit is checked for
/// acyclicity on a relabelled copy of the table, and the new groups are only built when it
/// passes.
fn mutate_with(
    p: &Problem<'_>,
    plan: &Plan,
    owner: &[GroupId],
    kind: Mutation,
    rng: &mut ChaCha8Rng,
) -> Option<Plan> {
    if p.moves() == Moves::Fitting && matches!(kind, Mutation::Merge | Mutation::Move) {
        let fits = |plan: &Plan, new: usize| {
            p.model()
                .is_valid(p.graph(), &plan.groups[new])
                .is_ok_and(|valid| valid)
        };
        let mut first = None;
        for _ in 0..FITTING_TRIES {
            let Some((edited, new)) = edit(p, plan, owner, kind, rng) else {
                continue;
            };
            if fits(&edited, new) {
                return Some(edited);
            }
            first.get_or_insert(edited);
        }
        return first;
    }
    edit(p, plan, owner, kind, rng).map(|(edited, _)| edited)
}

/// One edit of kind `kind`, drawn once: the new plan and the index of the group it grew (or
/// made), or `None` when the edit is not possible or would make the plan cyclic.
fn edit(
    p: &Problem<'_>,
    plan: &Plan,
    owner: &[GroupId],
    kind: Mutation,
    rng: &mut ChaCha8Rng,
) -> Option<(Plan, usize)> {
    let g = p.graph();
    let n = plan.len();
    match kind {
        Mutation::Split => {
            let splittable: Vec<usize> = (0..n).filter(|&i| plan.groups[i].len() > 1).collect();
            if splittable.is_empty() {
                return None;
            }
            let i = splittable[rng.random_range(0..splittable.len())];
            let parts = random_cut(g, &plan.groups[i], rng);
            let mut groups = plan.groups.clone();
            groups.swap_remove(i);
            groups.extend(parts);
            let last = groups.len() - 1;
            // A topological cut of a group keeps the plan acyclic (see fuselage-split).
            Some((Plan::new(groups), last))
        }
        Mutation::Merge => {
            let (u, v) = crossing_edge(p, owner, rng)?;
            let (a, b) = (owner[u.index()], owner[v.index()]);
            // Group b's label goes to a; b stays as an empty group, which the check ignores.
            let relabelled: Vec<GroupId> =
                owner.iter().map(|&o| if o == b { a } else { o }).collect();
            if !PlanGraph::from_owners(g, relabelled, n).is_acyclic() {
                return None;
            }
            let (a, b) = (a.index(), b.index());
            let mut groups = plan.groups.clone();
            let merged = groups[a].union(&groups[b]);
            let (hi, lo) = (a.max(b), a.min(b));
            groups.swap_remove(hi);
            groups[lo] = merged;
            Some((Plan::new(groups), lo))
        }
        Mutation::Absorb => {
            let (a, absorbed) = neighbourhood(p, plan, owner, rng)?;
            let relabelled: Vec<GroupId> = owner
                .iter()
                .map(|&o| if absorbed[o.index()] { a } else { o })
                .collect();
            if !PlanGraph::from_owners(g, relabelled, n).is_acyclic() {
                return None;
            }
            let mut merged = NodeSet::new(g.len());
            let mut groups = Vec::with_capacity(n);
            for (i, grp) in plan.groups.iter().enumerate() {
                if absorbed[i] {
                    merged.union_with(grp);
                } else {
                    groups.push(grp.clone());
                }
            }
            groups.push(merged);
            let last = groups.len() - 1;
            Some((Plan::new(groups), last))
        }
        Mutation::Repeat => repeat(p, plan, owner, rng).map(|plan| (plan, 0)),
        Mutation::Move => {
            let (u, v) = crossing_edge(p, owner, rng)?;
            // Move one end into the other's group, either way round.
            let (node, to) = if rng.random_bool(0.5) { (u, v) } else { (v, u) };
            let (from, to) = (owner[node.index()], owner[to.index()]);
            let mut rest = plan.groups[from.index()].clone();
            rest.remove(node);
            let pieces = if rest.is_empty() {
                Vec::new()
            } else {
                components(g, &rest)
            };
            let mut relabelled = owner.to_vec();
            relabelled[node.index()] = to;
            for (k, piece) in pieces.iter().enumerate().skip(1) {
                for w in piece.iter() {
                    relabelled[w.index()] = GroupId((n + k - 1) as u32);
                }
            }
            let count = n + pieces.len().saturating_sub(1);
            if !PlanGraph::from_owners(g, relabelled, count).is_acyclic() {
                return None;
            }
            let (from, to) = (from.index(), to.index());
            let mut groups = plan.groups.clone();
            groups[to].insert(node);
            groups.swap_remove(from);
            // `swap_remove` moved the last group into `from`'s place.
            let grown = if to == groups.len() { from } else { to };
            groups.extend(pieces);
            Some((Plan::new(groups), grown))
        }
    }
}

/// A random mutation: each of the paper's four kinds with probability 1/4 (and under
/// [`Moves::Repeating`] each of those and [`Mutation::Repeat`] with 1/5), retried a few times
/// when an edit is rejected.
pub fn random_mutation(p: &Problem<'_>, plan: &Plan, rng: &mut ChaCha8Rng) -> Option<Plan> {
    const KINDS: [Mutation; 4] = [
        Mutation::Move,
        Mutation::Merge,
        Mutation::Split,
        Mutation::Absorb,
    ];
    const REPEATING: [Mutation; 5] = [
        Mutation::Move,
        Mutation::Merge,
        Mutation::Split,
        Mutation::Absorb,
        Mutation::Repeat,
    ];
    let kinds: &[Mutation] = if p.moves() == Moves::Repeating {
        &REPEATING
    } else {
        &KINDS
    };
    let owner = PlanGraph::owners(p.graph().len(), &plan.groups);
    (0..8).find_map(|_| {
        let kind = kinds[rng.random_range(0..kinds.len())];
        mutate_with(p, plan, &owner, kind, rng)
    })
}

/// [`Mutation::Repeat`]: the groups of a window (a group drawn by the bytes of a boundary, with
/// its neighbouring groups) copied onto one random twin of the window or, half the time, onto
/// every twin (each shifted copy clear of the window and of the others). The twins' old groups
/// keep their other nodes, each connected part a group. `None` when the window has no twin
/// apart from itself or the copy would make the plan cyclic.
fn repeat(p: &Problem<'_>, plan: &Plan, owner: &[GroupId], rng: &mut ChaCha8Rng) -> Option<Plan> {
    let g = p.graph();
    let n = plan.len();
    let (_, inside) = neighbourhood(p, plan, owner, rng)?;
    let window: Vec<NodeId> = g
        .node_ids()
        .filter(|v| owner[v.index()].index() < n && inside[owner[v.index()].index()])
        .collect();
    let span = i64::from(window.last()?.0) - i64::from(window.first()?.0);
    let offsets: Vec<i64> = p
        .motifs()
        .offsets(p, &window)
        .into_iter()
        .filter(|d| d.abs() > span)
        .collect();
    if offsets.is_empty() {
        return None;
    }
    // One twin, or (as often) every twin that overlaps neither the window nor another:
    // a grouping good for one block is then tried on all its repeats in one evaluation.
    let chosen: Vec<i64> = if rng.random_bool(0.5) {
        vec![offsets[rng.random_range(0..offsets.len())]]
    } else {
        let mut taken: Vec<i64> = Vec::new();
        for &d in &offsets {
            if taken.iter().all(|&t| (d - t).abs() > span) {
                taken.push(d);
            }
        }
        taken
    };
    let mut relabelled = owner.to_vec();
    let mut count = n;
    let mut touched = vec![false; n];
    for d in chosen {
        let twin = |v: NodeId| NodeId((i64::from(v.0) + d) as u32);
        let mut label: Vec<Option<GroupId>> = vec![None; n];
        for &v in &window {
            let l = *label[owner[v.index()].index()].get_or_insert_with(|| {
                count += 1;
                GroupId((count - 1) as u32)
            });
            let t = twin(v);
            if let Some(old) = owner.get(t.index()).filter(|o| o.index() < n) {
                touched[old.index()] = true;
            }
            relabelled[t.index()] = l;
        }
    }
    for (i, grp) in plan.groups.iter().enumerate().filter(|&(i, _)| touched[i]) {
        let rest = NodeSet::from_ids(
            g.len(),
            grp.iter()
                .filter(|v| relabelled[v.index()] == GroupId(i as u32)),
        );
        for piece in components(g, &rest) {
            for v in piece.iter() {
                relabelled[v.index()] = GroupId(count as u32);
            }
            count += 1;
        }
    }
    if !PlanGraph::from_owners(g, relabelled.clone(), count).is_acyclic() {
        return None;
    }
    let mut groups = vec![NodeSet::new(g.len()); count];
    for v in g.node_ids() {
        if let Some(grp) = groups.get_mut(relabelled[v.index()].index()) {
            grp.insert(v);
        }
    }
    groups.retain(|grp| !grp.is_empty());
    Some(Plan::new(groups))
}

/// One-point crossover of two plans along node order: nodes before a random point take their
/// edges' "fused or cut" state from `a`, the rest from `b`. The child's groups are the connected
/// components of the fused edges (unfusable nodes alone), made acyclic by [`make_acyclic`].
pub fn crossover(p: &Problem<'_>, a: &Plan, b: &Plan, rng: &mut ChaCha8Rng) -> Plan {
    let g = p.graph();
    let (oa, ob) = (
        PlanGraph::owners(g.len(), &a.groups),
        PlanGraph::owners(g.len(), &b.groups),
    );
    let point = rng.random_range(0..=g.len());
    // Union-find over fused edges.
    let mut parent: Vec<u32> = (0..g.len() as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            parent[x as usize] = parent[parent[x as usize] as usize];
            x = parent[x as usize];
        }
        x
    }
    for v in g.node_ids() {
        if p.unfusable().contains(v) {
            continue;
        }
        let o = if v.index() < point { &oa } else { &ob };
        for &(c, _) in g.consumers(v) {
            if !p.unfusable().contains(c) && o[v.index()] == o[c.index()] {
                let (x, y) = (find(&mut parent, v.0), find(&mut parent, c.0));
                if x != y {
                    parent[x as usize] = y;
                }
            }
        }
    }
    let mut by_root: Vec<Option<usize>> = vec![None; g.len()];
    let mut groups: Vec<NodeSet> = Vec::new();
    for v in g.node_ids() {
        let r = find(&mut parent, v.0) as usize;
        let gi = *by_root[r].get_or_insert_with(|| {
            groups.push(NodeSet::new(g.len()));
            groups.len() - 1
        });
        groups[gi].insert(v);
    }
    make_acyclic(p, groups, rng)
}

/// Cuts groups until the graph of groups is acyclic: while there is a cycle, the largest group
/// of a strongly connected component ([`PlanGraph::cyclic_component`]) is cut at a random
/// topological point. Terminates (singletons are acyclic).
pub fn make_acyclic(p: &Problem<'_>, mut groups: Vec<NodeSet>, rng: &mut ChaCha8Rng) -> Plan {
    let g = p.graph();
    loop {
        match PlanGraph::new(g, &groups).cyclic_component() {
            None => return Plan::new(groups),
            Some(scc) => {
                let i = scc
                    .into_iter()
                    .map(GroupId::index)
                    .max_by_key(|&i| (groups[i].len(), usize::MAX - i))
                    .unwrap_or(0);
                let parts = random_cut(g, &groups[i], rng);
                groups.swap_remove(i);
                groups.extend(parts);
            }
        }
    }
}
