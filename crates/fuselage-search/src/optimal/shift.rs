//! Groups that are each other's shift: the same structure one repeated layer further on,
//! node for node ([`alike`]). The repeated regions are planned once on it
//! (`regions.rs`), and the joins, the down-set programme's extensions and the order
//! programmes reuse a group's answer for its shifts ([`ShiftMemo`], [`SharedMemo`]).
//!
//! A cost model reads a group through what [`alike`] compares: each member's op, shape,
//! weights, row geometry and row reads, which of its consumers are members and whether any
//! is not, and the shapes and rows of what it reads from outside. So a group and its shift
//! have the same `F_D`, `F_β` and validity, under every model of this workspace and every
//! objective (multiply–accumulates are compared too). The optimiser assumes it of any model
//! it is given, as it does for the repeated regions.
//!
//! The memos keep answers only for a model that says it is
//! [costly](fuselage_cost::CostModel::costly) (`tiled`): LBDF answers a group faster than
//! the memo can look it up, and Inception-v3 at 2 MiB under LBDF took 1.5 times as long
//! with them.
//!
//! `tests::a_group_costs_what_every_shift_alike_costs` holds the assumption to the models:
//! on GPT-2 at four layers, every random group and each shift of it found alike cost the
//! same under `tiled` (256 KiB and 2 MiB), LBDF and BRR.

use super::common::FxMap;
use crate::problem::Problem;
use crate::repeat::Classes;
use fuselage_ir::{NodeId, NodeSet, Source};

/// Whether the set `a` moved by `d` (`v ↦ v + d`) is the set `b`, node for node alike in
/// everything a group's value, validity and floors depend on (see the module docs), with
/// `also(v, w, map)` for what the caller adds (`map` takes each tensor `v` reads to the
/// one `w` reads in its place).
///
/// Checked for each node: op, shape, weights, multiply–accumulates, whether it is a graph
/// output or unfusable, its rows, row elements and row axis, the row read of every port, its
/// consumers inside the set (shifted) and whether it has any outside, its inputs (inside:
/// shifted; outside: a one-to-one correspondence of tensors of equal shape, rows and row
/// axis).
///
/// Complexity: O(Σ ports + consumers of `a`'s nodes, times the tensors read from outside).
pub(super) fn alike(
    p: &Problem<'_>,
    a: &NodeSet,
    b: &NodeSet,
    d: i64,
    mut also: impl FnMut(NodeId, NodeId, &dyn Fn(Source) -> Option<Source>) -> bool,
) -> bool {
    let g = p.graph();
    if a.len() != b.len() {
        return false;
    }
    let n = g.len() as i64;
    let at = |v: NodeId| {
        let w = i64::from(v.0) + d;
        (0..n).contains(&w).then_some(NodeId(w as u32))
    };
    // A tensor of `a`'s, as `b` reads it.
    let inside = |s: Source| match s {
        Source::Node(u) if a.contains(u) => at(u).map(Source::Node),
        _ => None,
    };
    // Tensors from outside the sets, `a`'s with `b`'s: a one-to-one correspondence.
    let mut pairs: Vec<(Source, Source)> = Vec::new();
    let unfusable = p.unfusable();
    for v in a.iter() {
        let Some(w) = at(v).filter(|&w| b.contains(w)) else {
            return false;
        };
        let (x, y) = (g.node(v), g.node(w));
        let (sv, sw) = (Source::Node(v), Source::Node(w));
        if x.op != y.op
            || x.shape != y.shape
            || x.weights != y.weights
            || x.inputs.len() != y.inputs.len()
            || g.node_macs(v) != g.node_macs(w)
            || g.is_output(v) != g.is_output(w)
            || unfusable.contains(v) != unfusable.contains(w)
            || g.rows_of(sv) != g.rows_of(sw)
            || g.row_elements(sv) != g.row_elements(sw)
            || g.row_axis(sv) != g.row_axis(sw)
        {
            return false;
        }
        for (port, (&s, &t)) in x.inputs.iter().zip(&y.inputs).enumerate() {
            let same = match inside(s) {
                Some(shifted) => shifted == t,
                None => {
                    !matches!(t, Source::Node(u) if b.contains(u))
                        && g.shape_of(s) == g.shape_of(t)
                        && g.rows_of(s) == g.rows_of(t)
                        && g.row_elements(s) == g.row_elements(t)
                        && g.row_axis(s) == g.row_axis(t)
                        && match pairs.iter().find(|&&(x, y)| x == s || y == t) {
                            Some(&pair) => pair == (s, t),
                            None => {
                                pairs.push((s, t));
                                true
                            }
                        }
                }
            };
            if !same || g.row_read(v, port) != g.row_read(w, port) {
                return false;
            }
        }
        // Consumers inside the sets (shifted) alike, and either both or neither outside.
        let (cv, cw) = (g.consumers(v), g.consumers(w));
        let within = |cs: &[(NodeId, u32)], set: &NodeSet| {
            cs.iter().filter(|&&(c, _)| set.contains(c)).count()
        };
        let count = within(cv, a);
        if count != within(cw, b)
            || (count < cv.len()) != (within(cw, b) < cw.len())
            || cv
                .iter()
                .filter(|&&(c, _)| a.contains(c))
                .any(|&(c, port)| at(c).is_none_or(|c| !cw.contains(&(c, port))))
        {
            return false;
        }
        let map =
            |s: Source| inside(s).or_else(|| pairs.iter().find(|&&(x, _)| x == s).map(|&(_, y)| y));
        if !also(v, w, &map) {
            return false;
        }
    }
    true
}

/// The answers of groups costed so far, each found again for any of its shifts (see the
/// module docs): keyed by the group moved to start at node 0 and the classes of its nodes,
/// each key holding the groups of that form with their answers, each checked to be alike
/// before it is used ([`Classes::shifted`], else [`alike`]).
///
/// The joins of a transformer's repeated layers cost the same (tail, head) pairs one layer
/// further on each time, and an order's segments repeat from layer to layer; with the
/// memo, the first layer's costs serve the others.
pub(super) struct ShiftMemo<T> {
    /// `None` where the problem's model is not [costly](fuselage_cost::CostModel::costly):
    /// the memo then keeps nothing and answers nothing, at no cost.
    classes: Option<Classes>,
    map: FxMap<(NodeSet, u64), Vec<(NodeId, T)>>,
    entries: usize,
}

/// The most groups a [`ShiftMemo`] keeps (about 100 bytes each on the zoo's largest
/// graphs, so tens of MiB at most); past it, answers are not kept.
pub(super) const MAX_SHIFT_ENTRIES: usize = 1 << 20;

/// Forms kept per key: the same form may be taken by unlike groups (a first layer and the
/// others).
const FORMS_PER_KEY: usize = 4;

impl<T: Copy> ShiftMemo<T> {
    /// An empty memo for `p`'s graph.
    /// An empty memo for `p`'s graph; one that keeps nothing unless `p`'s model is
    /// [costly](fuselage_cost::CostModel::costly) (looking a group up would cost more than
    /// asking the model again).
    pub(super) fn new(p: &Problem<'_>) -> Self {
        ShiftMemo {
            classes: p.model().costly().then(|| Classes::of(p)),
            map: FxMap::default(),
            entries: 0,
        }
    }

    /// Whether it keeps answers at all.
    pub(super) fn keeps(&self) -> bool {
        self.classes.is_some()
    }

    /// The answer of a group that `group` is the shift of (or `group` itself), if one was
    /// kept.
    pub(super) fn get(&self, p: &Problem<'_>, group: &NodeSet) -> Option<T> {
        let classes = self.classes.as_ref()?;
        let first = group.first()?;
        let key = (
            group.shifted(-i64::from(first.0))?,
            classes.signature(group),
        );
        let found = self.map.get(&key)?;
        found.iter().find_map(|&(at, answer)| {
            let d = i64::from(first.0) - i64::from(at.0);
            if d == 0 || classes.shifted(p, group, d) {
                return Some(answer);
            }
            let kept = group.shifted(-d)?;
            alike(p, &kept, group, d, |_, _, _| true).then_some(answer)
        })
    }

    /// Keeps `answer` for `group` (not past [`MAX_SHIFT_ENTRIES`]); where `group` itself is
    /// kept already, the first answer stays.
    #[cfg(test)]
    pub(super) fn insert(&mut self, group: &NodeSet, answer: T) {
        self.insert_with(group, answer, |_, _| {});
    }

    /// [`insert`](Self::insert), with `merge` of the kept answer and `answer` where `group`
    /// itself is kept already.
    pub(super) fn insert_with(&mut self, group: &NodeSet, answer: T, merge: impl Fn(&mut T, T)) {
        let (Some(classes), Some(first)) = (self.classes.as_ref(), group.first()) else {
            return;
        };
        if self.entries >= MAX_SHIFT_ENTRIES {
            return;
        }
        let Some(at_zero) = group.shifted(-i64::from(first.0)) else {
            return;
        };
        let forms = self
            .map
            .entry((at_zero, classes.signature(group)))
            .or_default();
        if let Some((_, kept)) = forms.iter_mut().find(|(at, _)| *at == first) {
            merge(kept, answer);
        } else if forms.len() < FORMS_PER_KEY {
            forms.push((first, answer));
            self.entries += 1;
        }
    }
}

/// A [`ShiftMemo`] that threads share: the candidate orders, which run in parallel, find
/// each other's answers. What it answers is the same whatever the threads (a group's answer
/// does not depend on who costed it), only how often the model is asked.
pub(super) struct SharedMemo<T> {
    /// [`ShiftMemo::keeps`], read without the lock.
    keeps: bool,
    memo: std::sync::RwLock<ShiftMemo<T>>,
}

impl<T: Copy> SharedMemo<T> {
    /// An empty memo for `p`'s graph ([`ShiftMemo::new`]).
    pub(super) fn new(p: &Problem<'_>) -> Self {
        let memo = ShiftMemo::new(p);
        SharedMemo {
            keeps: memo.keeps(),
            memo: std::sync::RwLock::new(memo),
        }
    }

    /// [`ShiftMemo::get`] (nothing, should a thread have panicked holding it).
    pub(super) fn get(&self, p: &Problem<'_>, group: &NodeSet) -> Option<T> {
        if !self.keeps {
            return None;
        }
        self.memo.read().ok()?.get(p, group)
    }
}

/// A group's answer from one evaluation: valid, its `F_D`, and its value in the problem's
/// objective when admissible ([`Problem::admissible_cost`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Answer {
    pub(super) valid: bool,
    pub(super) dram: u64,
    pub(super) value: Option<u64>,
}

/// What the optimiser has learnt of a group from its model: its [`Answer`], and whether a
/// group containing it might fit ([`Problem::fits_somewhere`]); each once asked.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Known {
    pub(super) answer: Option<Answer>,
    pub(super) fits: Option<bool>,
}

impl Known {
    /// Whether nothing is known.
    pub(super) fn is_empty(&self) -> bool {
        self.answer.is_none() && self.fits.is_none()
    }
}

/// The memo of one run of the optimiser: the orders, the joins and the down-set
/// programme's extensions find each other's answers (a segment of an order is often a
/// join's pair or an extension, a layer on).
pub(super) type Memo = SharedMemo<Known>;

impl SharedMemo<Known> {
    /// `group`'s answer: the memo's, else the model's, which `fresh` then holds.
    ///
    /// # Errors
    /// When the cost model fails.
    pub(super) fn answer(
        &self,
        p: &Problem<'_>,
        group: &NodeSet,
        fresh: &mut Known,
    ) -> crate::error::Result<Answer> {
        if let Some(answer) = fresh.answer {
            return Ok(answer);
        }
        if let Some(answer) = self.get(p, group).and_then(|k| k.answer) {
            return Ok(answer);
        }
        let (c, value) = p.admissible_cost(group)?;
        let answer = Answer {
            valid: c.valid,
            dram: c.dram_bytes,
            value,
        };
        fresh.answer = Some(answer);
        Ok(answer)
    }

    /// Whether a group containing `group` might fit: the memo's, else the problem's
    /// ([`Problem::fits_somewhere`]), which `fresh` then holds.
    ///
    /// # Errors
    /// When the cost model fails.
    pub(super) fn fits(
        &self,
        p: &Problem<'_>,
        group: &NodeSet,
        fresh: &mut Known,
    ) -> crate::error::Result<bool> {
        if let Some(fits) = fresh.fits {
            return Ok(fits);
        }
        if let Some(fits) = self.get(p, group).and_then(|k| k.fits) {
            return Ok(fits);
        }
        let fits = p.fits_somewhere(group)?;
        fresh.fits = Some(fits);
        Ok(fits)
    }

    /// Keeps what was learnt of each group, in order (one lock for all).
    pub(super) fn learn<'a>(&self, found: impl IntoIterator<Item = (&'a NodeSet, Known)>) {
        if !self.keeps {
            return;
        }
        if let Ok(mut memo) = self.memo.write() {
            for (group, known) in found {
                if !known.is_empty() {
                    memo.insert_with(group, known, |kept, new| {
                        kept.answer = kept.answer.or(new.answer);
                        kept.fits = kept.fits.or(new.fits);
                    });
                }
            }
        }
    }

    /// [`ShiftMemo::keeps`].
    pub(super) fn keeps(&self) -> bool {
        self.keeps
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{chain, set, with_problem};
    use super::*;
    use fuselage_cost::CostKind;
    use fuselage_ir::sample::random_group;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_group_costs_what_every_shift_alike_costs() {
        // Four layers of GPT-2 alike: every random group and each shift of it that is
        // alike cost the same under every model, valid or not, with the same floor; the
        // fast test of the classes never says alike where the full one does not.
        let g = fuselage_zoo::build("gpt2_l4_h256").unwrap();
        let n = g.len() as i64;
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let groups: Vec<NodeSet> = (0..60)
            .map(|k| random_group(&g, 1 + k % 24, &mut rng))
            .collect();
        for (kind, bytes) in [
            (CostKind::Tiled, 256 << 10),
            (CostKind::Tiled, 2 << 20),
            (CostKind::Lbdf, 256 << 10),
            (CostKind::Brr, 2 << 20),
        ] {
            with_problem(&g, kind, bytes, |p| {
                let classes = Classes::of(p);
                let (mut shifts, mut fast) = (0, 0);
                for a in &groups {
                    for d in -n..n {
                        let Some(b) = a.shifted(d).filter(|_| d != 0) else {
                            continue;
                        };
                        let quick = classes.shifted(p, &b, d);
                        if !alike(p, a, &b, d, |_, _, _| true) {
                            assert!(!quick, "{kind} {d} {:?}", a.iter().collect::<Vec<_>>());
                            continue;
                        }
                        shifts += 1;
                        fast += usize::from(quick);
                        let model = p.model();
                        let (x, y) = (
                            model.evaluate(&g, a).unwrap(),
                            model.evaluate(&g, &b).unwrap(),
                        );
                        assert_eq!(x, y, "{kind} {d} {:?}", a.iter().collect::<Vec<_>>());
                        assert_eq!(
                            p.admissible_value(a).unwrap(),
                            p.admissible_value(&b).unwrap()
                        );
                        assert_eq!(p.fits_somewhere(a).unwrap(), p.fits_somewhere(&b).unwrap());
                    }
                }
                assert!(
                    shifts > 100 && fast > 50,
                    "{kind}: {shifts} shifts, {fast} fast"
                );
            });
        }
    }

    #[test]
    fn the_memo_answers_for_a_shift_and_not_for_an_unlike_group() {
        // A chain of Relus: {4, 5} is {1, 2} moved by 3, and so is {0, 1}, though it reads
        // the graph input where {1, 2} reads a node (both read one tensor of one shape from
        // outside). The last pair writes the graph output: unlike.
        let g = chain(8);
        // LBDF is cheaper to ask than a memo: its memo keeps nothing.
        with_problem(&g, CostKind::Lbdf, 1 << 16, |p| {
            let mut memo = ShiftMemo::new(p);
            memo.insert(&set(&g, &[1, 2]), 7u64);
            assert!(!memo.keeps());
            assert_eq!(memo.get(p, &set(&g, &[1, 2])), None);
        });
        with_problem(&g, CostKind::Tiled, 1 << 16, |p| {
            let mut memo = ShiftMemo::new(p);
            memo.insert(&set(&g, &[1, 2]), 7u64);
            assert_eq!(memo.get(p, &set(&g, &[1, 2])), Some(7));
            assert_eq!(memo.get(p, &set(&g, &[4, 5])), Some(7));
            assert_eq!(memo.get(p, &set(&g, &[6, 7])), None);
            assert_eq!(memo.get(p, &set(&g, &[4, 5, 6])), None);
            assert_eq!(memo.get(p, &set(&g, &[0, 1])), Some(7));
            // Kept once per place.
            memo.insert(&set(&g, &[1, 2]), 8);
            assert_eq!(memo.entries, 1);
            assert!(memo.keeps());
        });
    }
}
