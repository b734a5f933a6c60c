//! [`Nsga2`]: our own NSGA-II (Deb et al. 2002) over plans, objectives DRAM and MBU.

use crate::error::Result;
use crate::mutate::{crossover, random_mutation};
use crate::problem::{Problem, Score};
use crate::random::random_plan;
use crate::strategy::{Budget, SearchResult, SearchStrategy, StopReason, Tracker};
use fuselage_ir::Plan;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// NSGA-II with population 10, minimising the problem's [`pair`](Problem::pair): total DRAM
/// and MBU by default, latency and energy for `--pareto latency,energy` and EDP.
///
/// Each generation makes `population` children: two parents by binary tournament (lower
/// non-domination rank, then larger crowding distance), one-point crossover along node order
/// with probability `crossover`, then one mutation with probability `mutation`; children are
/// repaired and evaluated; parents and children together are sorted into non-dominated fronts
/// and the next population is filled front by front, the last front by crowding distance. The
/// result is the evaluated plan of least [`Score::cost`] (the objective; EDP is the product
/// of the pair), and the front: every evaluated plan that no other evaluated plan dominates,
/// one per distinct pair, not only the last population's first front.
#[derive(Clone, Debug)]
pub struct Nsga2 {
    /// Population size (default 10).
    pub population: usize,
    /// Crossover probability (default 0.9).
    pub crossover: f64,
    /// Mutation probability (default 0.5).
    pub mutation: f64,
    /// Segment-length bound of the random initial plans (default 64).
    pub max_segment: usize,
}

impl Default for Nsga2 {
    fn default() -> Self {
        Nsga2 {
            population: 10,
            crossover: 0.9,
            mutation: 0.5,
            max_segment: 64,
        }
    }
}

/// Non-dominated fronts of `scores`, as index lists, best first.
pub fn non_dominated_sort(scores: &[Score]) -> Vec<Vec<usize>> {
    let n = scores.len();
    let mut dominated_by = vec![0usize; n];
    let mut dominates: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for j in 0..n {
            if scores[i].dominates(&scores[j]) {
                dominates[i].push(j);
            } else if scores[j].dominates(&scores[i]) {
                dominated_by[i] += 1;
            }
        }
    }
    let mut fronts = Vec::new();
    let mut current: Vec<usize> = (0..n).filter(|&i| dominated_by[i] == 0).collect();
    while !current.is_empty() {
        let mut next = Vec::new();
        for &i in &current {
            for &j in &dominates[i] {
                dominated_by[j] -= 1;
                if dominated_by[j] == 0 {
                    next.push(j);
                }
            }
        }
        fronts.push(current);
        current = next;
    }
    fronts
}

/// Crowding distance of each member of one front (infinite at the extremes).
pub fn crowding_distance(scores: &[Score], front: &[usize]) -> Vec<f64> {
    let mut dist = vec![0.0; front.len()];
    let objectives: [fn(&Score) -> u64; 2] = [|s| s.pair[0], |s| s.pair[1]];
    for obj in objectives {
        let mut idx: Vec<usize> = (0..front.len()).collect();
        idx.sort_by_key(|&k| (obj(&scores[front[k]]), front[k]));
        let (lo, hi) = (
            obj(&scores[front[idx[0]]]),
            obj(&scores[front[idx[idx.len() - 1]]]),
        );
        dist[idx[0]] = f64::INFINITY;
        dist[idx[idx.len() - 1]] = f64::INFINITY;
        if hi == lo {
            continue;
        }
        for w in 1..idx.len().saturating_sub(1) {
            let gap = obj(&scores[front[idx[w + 1]]]) - obj(&scores[front[idx[w - 1]]]);
            dist[idx[w]] += gap as f64 / (hi - lo) as f64;
        }
    }
    dist
}

/// Rank and crowding of every member.
fn rank_and_crowding(scores: &[Score]) -> (Vec<usize>, Vec<f64>) {
    let mut rank = vec![0; scores.len()];
    let mut crowd = vec![0.0; scores.len()];
    for (r, front) in non_dominated_sort(scores).iter().enumerate() {
        for (k, d) in front.iter().zip(crowding_distance(scores, front)) {
            rank[*k] = r;
            crowd[*k] = d;
        }
    }
    (rank, crowd)
}

impl SearchStrategy for Nsga2 {
    fn name(&self) -> &str {
        "nsga2"
    }

    fn run(&self, p: &Problem<'_>, budget: &Budget<'_>, seed: u64) -> Result<SearchResult> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut t = Tracker::new(budget);
        let size = self.population.max(2);
        let mut pop: Vec<(Plan, Score)> = Vec::with_capacity(2 * size);
        let mut archive = Archive::default();
        while pop.len() < size && !t.done() {
            let plan = p.repair(random_plan(p, self.max_segment, &mut rng), &mut rng)?;
            let score = p.score(&plan)?;
            t.record(&plan, score);
            archive.offer(score);
            pop.push((plan, score));
        }
        while !t.done() {
            let scores: Vec<Score> = pop.iter().map(|(_, s)| *s).collect();
            let (rank, crowd) = rank_and_crowding(&scores);
            let better = |a: usize, b: usize| {
                (rank[a], std::cmp::Reverse(crowd[a].to_bits()))
                    <= (rank[b], std::cmp::Reverse(crowd[b].to_bits()))
            };
            let tournament = |rng: &mut ChaCha8Rng| {
                let (a, b) = (
                    rng.random_range(0..pop.len()),
                    rng.random_range(0..pop.len()),
                );
                if better(a, b) { a } else { b }
            };
            let mut children = Vec::with_capacity(size);
            for _ in 0..size {
                if t.done() {
                    break;
                }
                let (a, b) = (tournament(&mut rng), tournament(&mut rng));
                let mut child = if rng.random_bool(self.crossover) {
                    crossover(p, &pop[a].0, &pop[b].0, &mut rng)
                } else {
                    pop[a].0.clone()
                };
                if rng.random_bool(self.mutation)
                    && let Some(m) = random_mutation(p, &child, &mut rng)
                {
                    child = m;
                }
                let child = p.repair(child, &mut rng)?;
                let score = p.score(&child)?;
                t.record(&child, score);
                archive.offer(score);
                children.push((child, score));
            }
            pop.extend(children);
            pop.dedup_by(|x, y| x.0 == y.0);
            // Environmental selection.
            let scores: Vec<Score> = pop.iter().map(|(_, s)| *s).collect();
            let mut keep = Vec::with_capacity(size);
            for front in non_dominated_sort(&scores) {
                if keep.len() + front.len() <= size {
                    keep.extend(front);
                } else {
                    let d = crowding_distance(&scores, &front);
                    let mut order: Vec<usize> = (0..front.len()).collect();
                    order.sort_by(|&x, &y| d[y].total_cmp(&d[x]).then(front[x].cmp(&front[y])));
                    keep.extend(order.into_iter().take(size - keep.len()).map(|k| front[k]));
                }
                if keep.len() >= size {
                    break;
                }
            }
            keep.sort_unstable();
            let mut old: Vec<Option<(Plan, Score)>> = pop.into_iter().map(Some).collect();
            pop = keep.into_iter().filter_map(|i| old[i].take()).collect();
        }
        let mut front = archive.0;
        front.sort_by_key(|s| s.pair);
        Ok(t.finish(StopReason::Budget, front))
    }
}

/// The plans evaluated so far that no other evaluated plan dominates, one per distinct pair
/// (the first found): the front a run returns, so that no plan it ever evaluated — not only
/// the last population — beats a point of it.
#[derive(Default)]
struct Archive(Vec<Score>);

impl Archive {
    fn offer(&mut self, s: Score) {
        if self.0.iter().any(|a| a.pair == s.pair || a.dominates(&s)) {
            return;
        }
        self.0.retain(|a| !s.dominates(a));
        self.0.push(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(d: u64, m: u64) -> Score {
        Score {
            dram_bytes: d,
            fusable_dram_bytes: d,
            max_buffer_bytes: m,
            groups: 1,
            latency_cycles: 0,
            energy_fj: 0,
            cost: u128::from(d),
            pair: [d, m],
        }
    }

    #[test]
    fn the_archive_keeps_what_nothing_dominates() {
        let mut a = Archive::default();
        for x in [
            s(5, 5),
            s(3, 6),
            s(4, 4),
            s(4, 4),
            s(6, 3),
            s(2, 7),
            s(3, 3),
        ] {
            a.offer(x);
        }
        let mut pairs: Vec<[u64; 2]> = a.0.iter().map(|x| x.pair).collect();
        pairs.sort();
        assert_eq!(pairs, vec![[2, 7], [3, 3]]);
    }

    #[test]
    fn fronts_and_crowding() {
        let scores = [s(1, 5), s(2, 2), s(5, 1), s(3, 3), s(6, 6)];
        assert_eq!(
            non_dominated_sort(&scores),
            vec![vec![0, 1, 2], vec![3], vec![4]]
        );
        let d = crowding_distance(&scores, &[0, 1, 2]);
        assert!(d[0].is_infinite() && d[2].is_infinite());
        assert!((d[1] - (4.0 / 4.0 + 4.0 / 4.0)).abs() < 1e-12);
    }
}
