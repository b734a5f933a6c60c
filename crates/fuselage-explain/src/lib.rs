//! # fuselage-explain
//!
//! Why is a fusion group too big for the buffer, and where should it be cut? An
//! [`Explainer`] scores every internal edge of a group for its share in the "invalid" verdict
//! and selects the most responsible edges ([`Explanation`]); the explanation-guided splitter of
//! `fuselage-split` cuts there.
//!
//! - [`Explainer`]: the trait (a group and the cost model it is judged by in, scores and a
//!   selection out, seeded).
//! - Baselines, always compiled: [`RandomExplainer`] (the floor) and [`CostExplainer`] (reads
//!   the exact cost model: how much the buffer requirement falls when an edge is cut).
//! - [`ExplainerKind`]: the built-in explainers by name, typed.
//! - [`explain_cost`]: the requirement as an inequality of named terms (weights, each
//!   tensor's rows × row bytes and why it keeps them) and the levers: the smallest buffer
//!   that fits, the cheapest split into fitting parts, the dominating tensor.
//!   [`rank_agreement`] compares an explainer's ranking with the exact one.
//! - [`render`]: an explanation drawn as DOT or SVG, edges weighted by importance.
//! - With the default `learned` feature, the explainers of Mills et al. over the GNN validity
//!   classifier of `fuselage-gnn`, on burn: `GnnExplainer` (Ying et al. 2019, a soft edge mask
//!   per instance), `PgExplainer` (Luo et al. 2020, an edge MLP trained across groups) and
//!   `RgExplainer` (Shan et al. 2021, a seed locator and a policy that grows a connected
//!   subgraph), with their training, shipped checkpoints and the fidelity metrics.
//!
//! ## Design
//!
//! Edges are numbered as [`fuselage_ir::order::GroupOrder::edges`] lists them, the order the
//! classifier's edge weights follow, so a learned mask is an explanation without translation.
//! The trait takes the group and the [`CostModel`](fuselage_cost::CostModel) the group is
//! judged by. The model's config is the one carrier of β and the element sizes: no explainer
//! holds a β of its own, so none can be asked about one buffer while judging at another (there
//! is no mismatch left to report at run time), and [`CostExplainer`] explains with the caller's
//! model, sharing its cached answers. What else an explainer reads (a classifier, a learned
//! network) is fixed when it is built, so a splitter can be generic over any explainer. The crate without
//! `learned` has no burn in its tree, which keeps `fuselage-split` and `fuselage-search` light.
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod cost;
mod error;
mod explainer;
mod explanation;
mod kind;
#[cfg(feature = "learned")]
pub mod learned;
mod limit;
mod random;
pub mod render;
mod terms;

pub use cost::CostExplainer;
pub use error::{ExplainError, Result};
pub use explainer::Explainer;
pub use explanation::{Explanation, Selection, group_edges};
pub use kind::ExplainerKind;
#[cfg(feature = "learned")]
pub use learned::{GnnExplainer, PgExplainer, RgExplainer};
pub use limit::MAX_EXPLAINED_NODES;
pub use random::RandomExplainer;
pub use terms::{CostTerms, Split, explain_cost, rank_agreement};
