//! # fuselage-search
//!
//! Searches for fusion plans that minimise DRAM traffic, after Mills et al. (section 4 of
//! `method.md`), and an exact optimiser that says how far any search is from the best plan.
//!
//! - [`SearchStrategy`]: the trait; a run takes a [`Problem`] (graph, cost model, splitter), a
//!   [`Budget`] of plan evaluations and a seed, and returns a [`SearchResult`] (best plan, score,
//!   history of the best DRAM after each evaluation, [`StopReason`]).
//! - [`RandomSearch`] (RS), [`LocalSearch`] (LS, K = 10), [`Nsga2`] (population 10, objectives
//!   DRAM and MBU): every invalid group they meet is repaired by the problem's
//!   [`Splitter`](fuselage_split::Splitter).
//! - [`Optimal`]: a dynamic programme over plans contiguous in candidate topological orders,
//!   exact over that family (documented in [`optimal`](mod@optimal)).
//! - [`lower_bound`]: the compulsory traffic (inputs, outputs, weights once) no plan beats;
//!   [`RestFloor`] (in [`bound`](mod@bound)): what the rest of a plan must move beyond it,
//!   with which [`Optimal`] prunes.
//! - [`SearchKind`]: the built-in strategies by name, typed ([`SearchKind::strategy`]).
//!
//! Determinism: every random choice flows from the seed through `rand_chacha`; the same seed,
//! graph, cost model and splitter give the same plan.
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod bound;
mod error;
mod kind;
mod local;
pub mod mutate;
mod nsga2;
pub mod optimal;
mod problem;
mod random;
pub mod repeat;
mod strategy;

pub use bound::{MAX_FLOOR_NODES, RestFloor};
pub use error::{Result, SearchError};
pub use kind::SearchKind;
pub use local::LocalSearch;
pub use nsga2::{Nsga2, crowding_distance, non_dominated_sort};
pub use optimal::{FLOOR_GRACE, Optimal, depth_first_order, order_of_plan};
pub use problem::{Pair, Problem, Score, lower_bound, remaining_lower_bound};
pub use random::RandomSearch;
pub use strategy::{Budget, SearchResult, SearchStrategy, StopReason, Tracker};
