//! # fuselage-reproduce
//!
//! The paper's experiments, rerun: Tables II–V of Mills et al. and the budget curves; and,
//! beyond the paper, the table of where explanations should win ([`Table::Wins`]). This is the
//! harness behind `fuselage reproduce` (the crate `fuselage-cli`) and the `reproduce` example;
//! it writes `docs/results.md` and the curves, numbers and plans beside it.
//!
//! ## Why a crate of its own
//!
//! The harness is a user of the library, not a part of it: it reaches the planner, the cost
//! models and the learned explainers only through the facade `fuselage`, as any program would.
//! It lives apart so that a compiler that depends on `fuselage` to plan its fusion does not
//! build the experiments, their parallel schedule (rayon) or their SVG curves (plotters), and
//! so that the facade's API is not shaped by one program's needs. It turns on the facade's
//! `learned` feature, which its explainers need.
//!
//! ## Design
//!
//! [`run`] has two phases. The [`screen`] runs LS and NSGA-II with the random splitter on every
//! setting of [`wins_candidates`] (the settings of `docs/searches.md` and the Inception CNNs');
//! each setting where one of them stays more than [`WINS_THRESHOLD`] above the optimum becomes
//! a [`Table::Wins`] row. Then the paper's rows and those rows run as below. The paper's rows
//! use the paper's classifiers (trained on its nine CNNs, as the paper's were); the
//! [`Table::Wins`] rows use the broad ones, trained on CNNs, transformers and post-2020 CNNs
//! ([`FeatureSet`](fuselage::gnn::FeatureSet)).
//!
//! A reproduction is a list of [`Row`]s (a network, a cost model, β and a budget, and the
//! searches the paper ran on it) and, for each row, one *job* per search, splitter and seed:
//! the random splitter, and [`ExplainedSplitter`](fuselage::split::ExplainedSplitter) over each
//! explainer of [`EXPLAINERS`]. Every job is one [`Planner`](fuselage::pipeline::Planner) run,
//! the same pipeline `fuselage optimize` runs, and every row also gets the exact optimum
//! ([`Optimal`](fuselage::search::Optimal)) and the lower bound.
//!
//! Jobs run in parallel on rayon's pool, longest first. The jobs of one row share the row's
//! [`Cached`](fuselage::cost::Cached) cost model and, per explainer, one
//! [`SplitMemo`](fuselage::split::SplitMemo): an explanation-guided split of a group is a pure
//! function of the group (the splitter seeds the explainer from the group, not from the
//! search), so sharing it between seeds and searches changes only the time spent, never a
//! result. A reproduction is therefore the same byte for byte whatever the number of threads,
//! apart from the timing columns, which [`Reproduction::timings_json`] keeps apart.
//!
//! The crate is a tree, one concern a file:
//!
//! - `lib.rs`: the tables' rows, runs and scales, typed;
//! - `error.rs`: [`ReproduceError`], the crate's one error;
//! - `jobs.rs`: the rows' shared state, the jobs and their schedule ([`run`], [`run_rows`]);
//! - `stats.rs`: medians, best explainers, rectify rates, the acceptance bar;
//! - `paper.rs`: the paper's own numbers, for the columns beside ours;
//! - `markdown.rs`: `docs/results.md` ([`Reproduction::markdown`]);
//! - `plots.rs`: the budget curves as SVG;
//! - `output.rs`: everything written to disk ([`Reproduction::write`]): the markdown, the
//!   curves, the per-run numbers as JSON and every plan as a plan file that
//!   `fuselage cost --plan` reads.
//!
//! ## Example
//!
//! One row of Table III at a budget of 40: LS with the random splitter and with each
//! explainer, one seed, and the row's optimum. [`run`] does the same for every row of the
//! paper and of the screen; `fuselage reproduce` then [writes](Reproduction::write) the result.
//!
//! ```
//! use fuselage::cost::CostKind;
//! use fuselage::search::SearchKind;
//! use fuselage_reproduce::{EXPLAINERS, Row, Scale, Table, run_rows};
//! let row = Row {
//!     table: Table::IIIandIV,
//!     network: "resnet18".into(),
//!     resolution: Some(224),
//!     fusion: CostKind::Lbdf,
//!     buffer_kib: 128,
//!     budget: 40,
//!     searches: vec![SearchKind::Local],
//! };
//! let r = run_rows(vec![row], &Scale::quick(), &|_, _| {})?;
//! assert_eq!(r.runs.len(), 1 + EXPLAINERS.len());
//! assert_eq!(r.plan_problems(), 0);
//! let optimal = r.references[0].optimal_bytes;
//! assert!(r.runs.iter().all(|run| run.dram_bytes >= optimal));
//! assert!(r.markdown().contains("## Table III"));
//! # Ok::<(), fuselage_reproduce::ReproduceError>(())
//! ```

#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod error;
mod jobs;
mod markdown;
mod output;
mod paper;
mod plots;
mod stats;

pub use error::{ReproduceError, Result};
pub use jobs::{run, run_rows, screen};

use fuselage::cost::CostKind;
use fuselage::explain::ExplainerKind;
use fuselage::explain::learned::GnnExplainerConfig;
use fuselage::ir::Plan;
use fuselage::search::SearchKind;
use serde::Serialize;

/// The explainers every explanation-guided row is run with.
pub const EXPLAINERS: [ExplainerKind; 4] = [
    ExplainerKind::Gnne,
    ExplainerKind::Pg,
    ExplainerKind::Rg,
    ExplainerKind::Cost,
];

/// The searches of the paper's tables.
pub const SEARCHES: [SearchKind; 3] = [SearchKind::Random, SearchKind::Local, SearchKind::Nsga2];

/// Budgets at which the curves are read.
pub const CURVE_BUDGETS: [u64; 4] = [1000, 2000, 3000, 4000];

fuselage::ir::kinds! {
    /// Which of the paper's tables a row feeds.
    pub enum Table: "table" {
        /// Table II: three networks, LBDF at 256 KiB, every search.
        II = "II",
        /// Tables III (LS) and IV (RS): five networks, both cost models at 128 KiB.
        IIIandIV = "III/IV",
        /// Beyond the paper: every setting of `docs/searches.md` (and the Inception CNNs')
        /// where LS or NSGA-II with the random splitter stays more than
        /// [`WINS_THRESHOLD`] above the optimum ([`wins_candidates`], [`screen`]).
        Wins = "wins",
    }
}

/// One setting of the paper's tables.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The tables the row feeds.
    pub table: Table,
    /// Zoo network.
    pub network: String,
    /// Input resolution; `None` for the network's default input (a text model's preset
    /// sequence length).
    pub resolution: Option<u64>,
    /// The cost model.
    pub fusion: CostKind,
    /// β, KiB.
    pub buffer_kib: u64,
    /// Plan evaluations per search.
    pub budget: u64,
    /// Searches run (of [`SEARCHES`]).
    pub searches: Vec<SearchKind>,
}

/// How big a reproduction is.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scale {
    /// Seeds of every search.
    pub seeds: Vec<u64>,
    /// GNNExplainer's settings inside the splitter (see [`Scale::full`]).
    pub gnne: GnnExplainerConfig,
    /// Budget of the Table II rows.
    pub table2_budget: u64,
    /// Budget of the Table III/IV rows.
    pub table34_budget: u64,
    /// Budget of the screening runs and of the [`Table::Wins`] rows.
    pub wins_budget: u64,
}

impl Scale {
    /// The paper's: seeds 1–3, budgets 5,000 and 2,000; the screen and the
    /// [`Table::Wins`] rows at 2,000, as `docs/searches.md`.
    ///
    /// GNNExplainer runs 25 gradient steps inside the splitter, not its default 100: the
    /// random searches meet thousands of invalid groups per run, and at 100 steps the
    /// reproduction would take hours on two cores. The ranking of the edges is set by the
    /// first steps' gradients, so 25 steps lose little (`docs/explainers.md` scores both).
    pub fn full() -> Self {
        Scale {
            seeds: vec![1, 2, 3],
            gnne: GnnExplainerConfig {
                epochs: 25,
                ..GnnExplainerConfig::default()
            },
            table2_budget: 5000,
            table34_budget: 2000,
            wins_budget: 2000,
        }
    }

    /// A smoke run of every table: one seed, budgets 300 and 150 (150 for the screen too),
    /// GNNExplainer at 10 steps.
    pub fn quick() -> Self {
        Scale {
            seeds: vec![1],
            gnne: GnnExplainerConfig {
                epochs: 10,
                ..GnnExplainerConfig::default()
            },
            table2_budget: 300,
            table34_budget: 150,
            wins_budget: 150,
        }
    }
}

/// The rows of Tables II, III and IV (Table V reads the mobilenet_v2 LBDF row).
pub fn rows(scale: &Scale) -> Vec<Row> {
    let mut out = Vec::new();
    for (net, res) in [
        ("efficientnet_b3", 300),
        ("resnet152", 224),
        ("deeplabv3_mobilenet_v3_large", 512),
    ] {
        out.push(Row {
            table: Table::II,
            network: net.into(),
            resolution: Some(res),
            fusion: CostKind::Lbdf,
            buffer_kib: 256,
            budget: scale.table2_budget,
            searches: SEARCHES.to_vec(),
        });
    }
    for fusion in [CostKind::Brr, CostKind::Lbdf] {
        for net in [
            "mobilenet_v2",
            "vgg16",
            "resnet50",
            "resnet18",
            "squeezenet1_1",
        ] {
            out.push(Row {
                table: Table::IIIandIV,
                network: net.into(),
                resolution: Some(224),
                fusion,
                buffer_kib: 128,
                budget: scale.table34_budget,
                searches: vec![SearchKind::Local, SearchKind::Random],
            });
        }
    }
    out
}

/// The searches of the [`Table::Wins`] rows: the two whose random-splitter runs
/// `docs/searches.md` shows stalling above the optimum.
pub const WINS_SEARCHES: [SearchKind; 2] = [SearchKind::Local, SearchKind::Nsga2];

/// How far above the optimum (as a fraction of it) the median random-splitter LS or NSGA-II
/// run must stay for a setting to get a [`Table::Wins`] row: 5%.
pub const WINS_THRESHOLD: f64 = 0.05;

/// Whether `bytes` stays more than [`WINS_THRESHOLD`] above `optimal_bytes`.
pub fn above_threshold(bytes: u64, optimal_bytes: u64) -> bool {
    bytes as f64 > optimal_bytes as f64 * (1.0 + WINS_THRESHOLD)
}

/// The settings the [`Table::Wins`] rows are screened from: every setting of
/// `docs/searches.md` (the twelve CNNs at 128 and 256 KiB, the five modern presets at 256 KiB
/// and 2 MiB) and the Inception CNNs (`inception_v3`, `googlenet`) at 128 and 256 KiB, under
/// both cost models, with [`WINS_SEARCHES`] at [`Scale::wins_budget`]. 76 settings.
pub fn wins_candidates(scale: &Scale) -> Vec<Row> {
    let cnns = fuselage::zoo::NAMES
        .iter()
        .chain(&fuselage::zoo::WIDE_NAMES)
        .map(|&n| (n, [128, 256]));
    let modern = fuselage::zoo::EXPORT_PRESETS
        .iter()
        .map(|&n| (n, [256, 2048]));
    let mut out = Vec::new();
    for (network, sizes) in cnns.chain(modern) {
        for buffer_kib in sizes {
            for fusion in CostKind::PAPER {
                out.push(Row {
                    table: Table::Wins,
                    network: network.into(),
                    resolution: None,
                    fusion,
                    buffer_kib,
                    budget: scale.wins_budget,
                    searches: WINS_SEARCHES.to_vec(),
                });
            }
        }
    }
    out
}

impl Row {
    /// The row's network: [`fuselage::zoo::build_at`] its resolution, or
    /// [`fuselage::zoo::build`] at its default input.
    ///
    /// # Errors
    /// The zoo's, for an unknown name or a resolution it cannot take.
    pub fn graph(&self) -> Result<fuselage::ir::Graph> {
        Ok(match self.resolution {
            Some(r) => fuselage::zoo::build_at(&self.network, r)?,
            None => fuselage::zoo::build(&self.network)?,
        })
    }
}

/// The splitter of a run: `None` for the random splitter, else the explainer that
/// [`ExplainedSplitter`](fuselage::split::ExplainedSplitter) asks.
pub type Repair = Option<ExplainerKind>;

/// The column name of a [`Repair`]: `random`, or the explainer's name.
pub fn repair_name(repair: Repair) -> &'static str {
    repair.map_or("random", ExplainerKind::name)
}

/// How a run's search edits plans and repairs them.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The paper's: its four edits ([`Moves::Random`](fuselage::search::mutate::Moves)), and
    /// each invalid group repaired by the splitter alone. Tables II–V.
    #[default]
    Paper,
    /// The improved guided search of issue 32 (`docs/explainers.md`): the planner's defaults
    /// for a run with an explainer, [`IMPROVED_MOVES`](fuselage::pipeline::IMPROVED_MOVES) and
    /// [`IMPROVED_RIVALS`](fuselage::pipeline::IMPROVED_RIVALS) random splits contesting each
    /// repair. With the random splitter, the same edits and rivals: what the explainer adds
    /// is the difference.
    Improved,
}

impl Method {
    /// Whether this is [`Method::Paper`] (which the per-run JSON leaves out, so that the
    /// paper's runs read as they always did).
    pub fn is_paper(&self) -> bool {
        *self == Method::Paper
    }
}

/// What one search run gave.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Run {
    /// Index into [`Reproduction::rows`].
    pub row: usize,
    /// Of [`SEARCHES`].
    pub search: SearchKind,
    /// The explainer of the explanation-guided splitter; `None` for the random splitter.
    pub explainer: Repair,
    /// The paper's method or the improved one (only [`Table::Wins`] rows run both).
    #[serde(skip_serializing_if = "Method::is_paper")]
    pub method: Method,
    /// The search's seed.
    pub seed: u64,
    /// Total DRAM of the best plan, bytes.
    pub dram_bytes: u64,
    /// Its MBU, bytes.
    pub mbu_bytes: u64,
    /// Groups of the best plan.
    pub groups: usize,
    /// Best DRAM after each evaluation.
    pub history: Vec<u64>,
    /// Invalid groups met by the splitter.
    pub invalid_groups_met: u64,
    /// Of those, split without a random fallback.
    pub rectified: u64,
    /// Problems `evaluate_plan` found in the best plan (0 expected).
    pub plan_problems: usize,
    /// The best plan.
    #[serde(skip)]
    pub plan: Plan,
}

impl Run {
    /// Rectified over invalid groups met (1 when none was met).
    pub fn rectify_rate(&self) -> f64 {
        if self.invalid_groups_met == 0 {
            1.0
        } else {
            self.rectified as f64 / self.invalid_groups_met as f64
        }
    }
}

/// Seconds of one run (kept apart: they vary between runs).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Timing {
    /// Wall-clock seconds of the search.
    pub seconds: f64,
    /// Seconds in the explainer.
    pub explainer_seconds: f64,
    /// Seconds in the cost model (search and splitter).
    pub cost_seconds: f64,
    /// Explainer calls this run made (the shared memo answered the others).
    pub explanations: u64,
}

/// The exact optimum and the lower bound of a row.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reference {
    /// `Optimal`'s DRAM, bytes.
    pub optimal_bytes: u64,
    /// Compulsory traffic, bytes.
    pub lower_bound_bytes: u64,
}

/// One setting of the screen for [`Table::Wins`]: the random splitter's median DRAM per search
/// and the optimum.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Screened {
    /// The setting, as it becomes a [`Table::Wins`] row when selected.
    pub row: Row,
    /// Median DRAM over the seeds with the random splitter, bytes, aligned with
    /// `row.searches`.
    pub random_bytes: Vec<u64>,
    /// The improved method's median DRAM, the better of PGExplainer's and RG-Explainer's,
    /// bytes, aligned with `row.searches`.
    pub improved_bytes: Vec<u64>,
    /// `Optimal`'s DRAM, bytes.
    pub optimal_bytes: u64,
}

impl Screened {
    /// Whether some search stays more than [`WINS_THRESHOLD`] above the optimum.
    pub fn selected(&self) -> bool {
        self.random_bytes
            .iter()
            .any(|&b| above_threshold(b, self.optimal_bytes))
    }
}

/// A finished reproduction.
#[derive(Clone, Debug, Serialize)]
pub struct Reproduction {
    /// Its scale.
    pub scale: Scale,
    /// The rows.
    pub rows: Vec<Row>,
    /// One per row.
    pub references: Vec<Reference>,
    /// Every run, in job order.
    pub runs: Vec<Run>,
    /// The screen the [`Table::Wins`] rows were chosen by (empty for [`run_rows`]).
    pub screen: Vec<Screened>,
    /// Aligned with `runs`.
    #[serde(skip)]
    pub timings: Vec<Timing>,
    /// Wall-clock seconds of the whole reproduction.
    #[serde(skip)]
    pub seconds: f64,
}

/// Bytes as the paper's MB (10^6 bytes).
fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}
