//! Statistics over a reproduction's runs: medians over seeds, the best explainer of a row,
//! rectify rates, and the acceptance bar of Table II.

use super::{EXPLAINERS, Method, Repair, Reproduction, Row, Run, Table};
use fuselage::explain::ExplainerKind;
use fuselage::search::SearchKind;

impl Reproduction {
    /// The rows of `table`, with their indices.
    pub fn rows_of(&self, table: Table) -> impl Iterator<Item = (usize, &Row)> + '_ {
        self.rows
            .iter()
            .enumerate()
            .filter(move |(_, r)| r.table == table)
    }

    /// The paper's-method runs of (row, search, splitter).
    fn runs_of<'a>(
        &'a self,
        row: usize,
        search: SearchKind,
        explainer: Repair,
    ) -> impl Iterator<Item = (usize, &'a Run)> + 'a {
        self.runs_by(row, search, explainer, Method::Paper)
    }

    fn runs_by<'a>(
        &'a self,
        row: usize,
        search: SearchKind,
        explainer: Repair,
        method: Method,
    ) -> impl Iterator<Item = (usize, &'a Run)> + 'a {
        self.runs.iter().enumerate().filter(move |(_, r)| {
            r.row == row && r.search == search && r.explainer == explainer && r.method == method
        })
    }

    /// Median best DRAM over the seeds of one (row, search, splitter) by the paper's method,
    /// bytes.
    pub fn median_dram(&self, row: usize, search: SearchKind, explainer: Repair) -> u64 {
        self.median_dram_by(row, search, explainer, Method::Paper)
    }

    /// Median best DRAM over the seeds of one (row, search, splitter, method), bytes (0 when
    /// it has no runs).
    pub fn median_dram_by(
        &self,
        row: usize,
        search: SearchKind,
        explainer: Repair,
        method: Method,
    ) -> u64 {
        median(
            self.runs_by(row, search, explainer, method)
                .map(|(_, r)| r.dram_bytes)
                .collect(),
        )
    }

    /// Median over the seeds of the evaluations one (row, search, splitter, method) took to
    /// come within `within` (a fraction, 0.05 for 5%) of the row's optimum; `None` where the
    /// median seed never did within its budget.
    pub fn evaluations_to_within(
        &self,
        row: usize,
        search: SearchKind,
        explainer: Repair,
        method: Method,
        within: f64,
    ) -> Option<u64> {
        let bar = self.references[row].optimal_bytes as f64 * (1.0 + within);
        let v: Vec<u64> = self
            .runs_by(row, search, explainer, method)
            .map(|(_, r)| {
                r.history
                    .iter()
                    .position(|&b| b as f64 <= bar)
                    .map_or(u64::MAX, |i| i as u64 + 1)
            })
            .collect();
        Some(median(v)).filter(|&m| m != u64::MAX && m != 0)
    }

    /// Median best DRAM after `budget` evaluations, bytes.
    pub fn median_dram_at(
        &self,
        row: usize,
        search: SearchKind,
        explainer: Repair,
        budget: u64,
    ) -> u64 {
        median(
            self.runs_of(row, search, explainer)
                .map(|(_, r)| {
                    let i = (budget as usize).min(r.history.len()).saturating_sub(1);
                    r.history.get(i).copied().unwrap_or(u64::MAX)
                })
                .collect(),
        )
    }

    /// The explainer with the least median DRAM on (row, search), and that DRAM.
    #[allow(clippy::expect_used)] // EXPLAINERS is a non-empty constant
    pub fn best_explainer(&self, row: usize, search: SearchKind) -> (ExplainerKind, u64) {
        EXPLAINERS
            .iter()
            .map(|&e| (e, self.median_dram(row, search, Some(e))))
            .min_by_key(|&(_, d)| d)
            .expect("explainers")
    }

    /// Rectify rate over all seeds of (row, search, explainer): rectified over met.
    pub fn rectify_rate(&self, row: usize, search: SearchKind, explainer: Repair) -> f64 {
        let (mut met, mut ok) = (0, 0);
        for (_, r) in self.runs_of(row, search, explainer) {
            met += r.invalid_groups_met;
            ok += r.rectified;
        }
        if met == 0 {
            1.0
        } else {
            ok as f64 / met as f64
        }
    }

    /// Mean invalid groups met per run of (row, search, splitter).
    pub fn invalid_met_per_run(&self, row: usize, search: SearchKind, explainer: Repair) -> f64 {
        let v: Vec<u64> = self
            .runs_of(row, search, explainer)
            .map(|(_, r)| r.invalid_groups_met)
            .collect();
        v.iter().sum::<u64>() as f64 / v.len().max(1) as f64
    }

    pub(super) fn seconds_of(&self, row: usize, search: SearchKind, explainer: Repair) -> f64 {
        let v: Vec<f64> = self
            .runs_of(row, search, explainer)
            .map(|(i, _)| self.timings.get(i).map_or(0.0, |t| t.seconds))
            .collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    }

    /// Plans whose re-evaluation found a problem (0 expected).
    pub fn plan_problems(&self) -> usize {
        self.runs.iter().map(|r| r.plan_problems).sum()
    }

    /// Whether the best-explainer variant of (row, search) meets the acceptance bar: at least
    /// 10% less median DRAM than the random splitter, or, where that already lies within 10%
    /// of the optimum, at least half of its remaining gap closed.
    pub fn meets_bar(&self, row: usize, search: SearchKind) -> bool {
        let base = self.median_dram(row, search, None) as f64;
        let (_, best) = self.best_explainer(row, search);
        let opt = self.references[row].optimal_bytes as f64;
        if base <= opt * 1.1 {
            let gap = base - opt;
            gap <= 0.0 || base - best as f64 >= gap / 2.0
        } else {
            best as f64 <= 0.9 * base
        }
    }

    /// The per-run numbers that do not depend on timing, as JSON: what two runs with the same
    /// seeds agree on byte for byte.
    #[allow(clippy::expect_used)] // numbers, strings and enums always serialise
    pub fn runs_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("serialises") + "\n"
    }

    /// The timing of every run, as JSON.
    #[allow(clippy::expect_used)] // numbers and strings always serialise
    pub fn timings_json(&self) -> String {
        serde_json::to_string_pretty(&self.timings).expect("serialises") + "\n"
    }
}

/// The lower median (0 of nothing).
pub(super) fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    if v.is_empty() {
        0
    } else {
        v[(v.len() - 1) / 2]
    }
}
