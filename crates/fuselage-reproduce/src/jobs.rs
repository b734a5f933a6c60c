//! The jobs of a reproduction and their schedule: one [`Planner`] run per (row, search,
//! splitter, seed), sharing each row's cached cost model and split memos.

use super::{
    EXPLAINERS, Method, Reference, Repair, Reproduction, Row, Run, Scale, Screened, Table, Timing,
    repair_name,
};
use crate::{ReproduceError, Result};
use fuselage::Explainers;
use fuselage::cost::{Cached, CostConfig, CostModel};
use fuselage::explain::ExplainerKind;
use fuselage::gnn::FeatureSet;
use fuselage::ir::Graph;
use fuselage::pipeline::{IMPROVED_MOVES, IMPROVED_RIVALS, Outcome, Planner, Reference as Optimum};
use fuselage::search::SearchKind;
use fuselage::split::SplitMemo;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// One row's shared state.
struct RowCtx {
    graph: Graph,
    model: Arc<dyn CostModel>,
    memos: BTreeMap<ExplainerKind, Arc<SplitMemo>>,
}

impl RowCtx {
    fn new(r: &Row) -> Result<Self> {
        let graph = r.graph()?;
        let config = CostConfig::kib(r.buffer_kib)?;
        let model: Arc<dyn CostModel> = Arc::new(Cached::new(r.fusion.model(config)));
        let memos = EXPLAINERS
            .iter()
            .map(|&e| (e, Arc::new(SplitMemo::new())))
            .collect();
        Ok(RowCtx {
            graph,
            model,
            memos,
        })
    }

    /// A planner over the row's graph and shared cost model, without a reference optimum.
    fn planner<'a>(&'a self, r: &Row, explainers: &'a Explainers) -> Planner<'a> {
        Planner::with_model(&self.graph, self.model.clone())
            .cost_kind(r.fusion)
            .explainers(explainers)
            .reference(Optimum::Off)
    }
}

#[derive(Clone)]
struct Job {
    row: usize,
    search: SearchKind,
    explainer: Repair,
    method: Method,
    seed: u64,
}

/// A run's splitter and method.
type Variant = (Repair, Method);

/// The learned explainers the screen runs the improved method with (cheap enough for every
/// setting; GNNExplainer is not).
const SCREEN_EXPLAINERS: [ExplainerKind; 2] = [ExplainerKind::Pg, ExplainerKind::Rg];

/// Runs a reproduction at `scale`: the paper's rows, then the [`screen`], then the
/// [`Table::Wins`](super::Table::Wins) rows it selects, calling `progress(done, total)` after
/// each job of each phase.
///
/// # Errors
/// The first failure of a model, a search or a splitter, named by its row.
pub fn run(scale: &Scale, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Reproduction> {
    let start = Instant::now();
    let screened = screen(scale, progress)?;
    let mut rows = super::rows(scale);
    rows.extend(
        screened
            .iter()
            .filter(|s| s.selected())
            .map(|s| s.row.clone()),
    );
    let mut out = run_rows(rows, scale, progress)?;
    out.screen = screened;
    out.seconds = start.elapsed().as_secs_f64();
    Ok(out)
}

/// The screen for the [`Table::Wins`](super::Table::Wins) rows: every setting of
/// [`wins_candidates`](super::wins_candidates) with the random splitter alone (each search,
/// each seed) and the optimum. [`Screened::selected`] says which become rows.
///
/// # Errors
/// As [`run`].
pub fn screen(scale: &Scale, progress: &(dyn Fn(usize, usize) + Sync)) -> Result<Vec<Screened>> {
    let candidates = super::wins_candidates(scale);
    let mut variants: Vec<Variant> = vec![(None, Method::Paper)];
    variants.extend(SCREEN_EXPLAINERS.map(|e| (Some(e), Method::Improved)));
    let r = run_jobs(candidates, scale, &|_| variants.clone(), progress)?;
    Ok(r.rows
        .iter()
        .enumerate()
        .map(|(ri, row)| Screened {
            row: row.clone(),
            random_bytes: row
                .searches
                .iter()
                .map(|&s| r.median_dram(ri, s, None))
                .collect(),
            improved_bytes: row
                .searches
                .iter()
                .map(|&s| {
                    SCREEN_EXPLAINERS
                        .iter()
                        .map(|&e| r.median_dram_by(ri, s, Some(e), Method::Improved))
                        .min()
                        .unwrap_or(u64::MAX)
                })
                .collect(),
            optimal_bytes: r.references[ri].optimal_bytes,
        })
        .collect())
}

/// [`run`] on chosen rows, without a screen: each search with the random splitter and with
/// every explainer of [`EXPLAINERS`], by the paper's method; [`Table::Wins`] rows also by the
/// improved one ([`Method::Improved`]).
///
/// # Errors
/// As [`run`].
pub fn run_rows(
    rows: Vec<Row>,
    scale: &Scale,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Reproduction> {
    let splitters: Vec<Repair> = std::iter::once(None).chain(EXPLAINERS.map(Some)).collect();
    let variants = |r: &Row| -> Vec<Variant> {
        let methods: &[Method] = if r.table == Table::Wins {
            &[Method::Paper, Method::Improved]
        } else {
            &[Method::Paper]
        };
        methods
            .iter()
            .flat_map(|&m| splitters.iter().map(move |&e| (e, m)))
            .collect()
    };
    run_jobs(rows, scale, &variants, progress)
}

/// Every (row, search, variant of the row's `variants`, seed) job, and each row's optimum.
fn run_jobs(
    rows: Vec<Row>,
    scale: &Scale,
    variants: &dyn Fn(&Row) -> Vec<Variant>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Reproduction> {
    let start = Instant::now();
    // The paper's tables run the paper's classifiers (trained on its nine CNNs, as the
    // paper's); the rows beyond the paper run the broad ones, trained on every family.
    let paper = Explainers {
        gnne: scale.gnne,
        features: FeatureSet::Paper,
    };
    let broad = Explainers {
        gnne: scale.gnne,
        features: FeatureSet::Broad,
    };
    let explainers_of = |r: &Row| {
        if r.table == Table::Wins {
            &broad
        } else {
            &paper
        }
    };
    let ctxs: Vec<RowCtx> = rows.iter().map(RowCtx::new).collect::<Result<_, _>>()?;
    let mut jobs = Vec::new();
    for (ri, r) in rows.iter().enumerate() {
        let variants = variants(r);
        for &search in &r.searches {
            for &(explainer, method) in &variants {
                for &seed in &scale.seeds {
                    jobs.push(Job {
                        row: ri,
                        search,
                        explainer,
                        method,
                        seed,
                    });
                }
            }
        }
    }
    // Longest first: GNNExplainer jobs, then by graph size and budget.
    let weight = |j: &Job| {
        let r = &rows[j.row];
        let per = if j.explainer == Some(ExplainerKind::Gnne) {
            50
        } else {
            1
        };
        per * ctxs[j.row].graph.len() as u64 * r.budget
    };
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(weight(&jobs[i])));
    let total = jobs.len() + rows.len();
    let done = AtomicUsize::new(0);
    let tick = || progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
    let references: Vec<Reference> = ctxs
        .par_iter()
        .zip(&rows)
        .map(|(c, r)| {
            let opt = c
                .planner(r, explainers_of(r))
                .search(SearchKind::Optimal)
                .budget(1)
                .run()?;
            tick();
            Ok(Reference {
                optimal_bytes: opt.result.score.dram_bytes,
                lower_bound_bytes: opt.lower_bound,
            })
        })
        .collect::<Result<_>>()?;
    let finished: Vec<(usize, Run, Timing)> = order
        .par_iter()
        .map(|&ji| {
            let j = &jobs[ji];
            let (c, r) = (&ctxs[j.row], &rows[j.row]);
            let mut planner = c
                .planner(r, explainers_of(r))
                .search(j.search)
                .budget(r.budget)
                .seed(j.seed);
            if let Some(e) = j.explainer {
                planner = planner.explainer(e).split_memo(c.memos[&e].clone());
            }
            planner = match j.method {
                Method::Paper => planner.paper(),
                Method::Improved => planner.moves(IMPROVED_MOVES).rivals(IMPROVED_RIVALS),
            };
            let out = planner.run().map_err(|error| ReproduceError::Run {
                run: format!(
                    "{} {} {} KiB, {} with the {} splitter{}, seed {}",
                    r.network,
                    r.fusion,
                    r.buffer_kib,
                    j.search.table_name(),
                    repair_name(j.explainer),
                    if j.method.is_paper() {
                        ""
                    } else {
                        ", improved"
                    },
                    j.seed
                ),
                error: Box::new(error),
            })?;
            tick();
            let (run, timing) = record(j, out);
            Ok((ji, run, timing))
        })
        .collect::<Result<_>>()?;
    let mut slots: Vec<Option<(Run, Timing)>> = vec![None; jobs.len()];
    for (ji, run, t) in finished {
        slots[ji] = Some((run, t));
    }
    let (runs, timings) = slots.into_iter().flatten().unzip();
    Ok(Reproduction {
        scale: scale.clone(),
        rows,
        references,
        runs,
        screen: Vec::new(),
        timings,
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// A job's outcome as the reproduction keeps it.
fn record(j: &Job, out: Outcome) -> (Run, Timing) {
    (
        Run {
            row: j.row,
            search: j.search,
            explainer: j.explainer,
            method: j.method,
            seed: j.seed,
            dram_bytes: out.result.score.dram_bytes,
            mbu_bytes: out.result.score.max_buffer_bytes,
            groups: out.result.plan.len(),
            history: out.result.history,
            invalid_groups_met: out.split.invalid_groups,
            rectified: out.split.rectified,
            plan_problems: out.report.problems.len(),
            plan: out.result.plan,
        },
        Timing {
            seconds: out.seconds,
            explainer_seconds: out.split.explainer_seconds,
            cost_seconds: out.cost_seconds,
            explanations: out.split.explanations,
        },
    )
}
