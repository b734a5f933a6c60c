//! # fuselage-split
//!
//! A search proposes fusion groups; many are too big for the buffer. A [`Splitter`] turns such
//! an invalid group into valid groups, keeping the plan acyclic.
//!
//! - [`Splitter`]: the trait (an invalid group in, valid groups out, or a reason it cannot).
//! - [`RandomSplitter`]: the paper's baseline, random cuts along a topological order,
//!   recursively, until every part is valid, ignoring DRAM.
//! - [`ExplainedSplitter`]: the paper's Algorithm 1, cuts where an
//!   [`Explainer`](fuselage_explain::Explainer) says the group breaks β, choosing by DRAM,
//!   memoised per group ([`SplitMemo`]), with the random splitter as its fallback (module
//!   [`get`](mod@get)); [`CutChoice::Sampled`] has it draw its cuts from the explanation's
//!   scores, so that a group met again may be cut elsewhere.
//! - [`Contested`]: a decorator that puts any splitter's answer against random splits and
//!   keeps the cheapest, so that a repair explores and is never worse than the inner one's.
//! - [`SplitterKind`]: the built-in splitters by name, typed.
//! - [`cut`]: the cut primitives every splitter and search mutation shares.
//!
//! ## Why a topological cut keeps the plan acyclic
//!
//! A group of an acyclic plan has no path that leaves it and comes back (that would be a cycle
//! of groups). Cutting it into a *head* (a prefix of a topological order of its nodes) and a
//! *tail* leaves only head→tail edges inside it, and any outside path between the two parts runs
//! head→outside→tail as well, never back. Splitting each part into its weakly connected
//! components adds no edge at all. So every split made of topological cuts keeps the plan
//! acyclic, and each part is a connected group.
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod contest;
pub mod cut;
mod error;
mod explore;
pub mod get;
mod kind;
mod random;
mod splitter;

pub use contest::Contested;
pub use error::{Result, SplitError};
pub use explore::{CutChoice, MAX_TEMPERATURE};
#[allow(deprecated)]
pub use get::GetSplitter;
pub use get::{ExplainedSplitter, MemoStats, SplitMemo};
pub use kind::SplitterKind;
pub use random::RandomSplitter;
pub use splitter::{Split, SplitStats, Splitter};
