//! # fuselage-ir
//!
//! The graph IR every other fuselage crate speaks.
//!
//! - [`Graph`]: a DAG of primitive ONNX-level ops on petgraph, one output tensor per node,
//!   dense topological [`NodeId`]s, graph inputs as separate tensors ([`InputId`]).
//! - [`Op`] / [`OpKind`]: ops with the attributes that decide shapes, and the one shape rule
//!   ([`Op::infer_shape`]).
//! - [`TensorShape`]: shapes, with the C/H/W reading of the cost-model contract.
//! - [`rows`]: every tensor's row axis and how each op's output rows read its inputs' rows
//!   ([`Op::rows`]), the one row rule of the cost models and the simulator.
//! - [`NodeSet`]: a bitset of nodes, the representation of a fusion group.
//! - [`Plan`]: a partition into groups, checked by [`Graph::check_plan`] (partition, weakly
//!   connected groups, acyclic graph of groups); a lone group by [`Graph::check_group`].
//! - [`PlanGraph`] ([`plan_graph`]): the graph of groups of a plan with typed [`GroupId`]s,
//!   built once: each node's owner, the edges between groups in compressed rows, acyclicity,
//!   a topological order, a cycle; petgraph's visit traits, so that its algorithms run on it.
//! - [`order`]: a group's nodes in id order, its internal edges, and the head/tail cuts that
//!   sever an edge (with its enclosing skips).
//! - [`sample`]: seeded random topological orders, plans and connected groups.
//! - [`kind`]: the [`kinds!`] macro that declares the typed kinds of components (cost models,
//!   searches, splitters, explainers) of the other crates, with one spelling each.
//! - JSON ([`Graph::to_json`] / [`Graph::from_json`]), DOT ([`Graph::to_dot`]) and a structural
//!   [`Graph::fingerprint`].
//! - [`fs`]: opening a file argument for reading without hanging on a FIFO swapped in after
//!   its check.
//! - [`escape`]: names from files with their control and bidirectional characters escaped,
//!   for terminals and errors.
//!
//! This crate depends on no other crate of ours, nor on burn or tract.
#![warn(missing_docs)]
// No panic on a path user input can reach: each remaining expect names its invariant.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod dot;
mod error;
mod fingerprint;
pub mod fs;
mod graph;
mod id;
mod json;
pub mod kind;
mod nodeset;
mod op;
pub mod order;
mod plan;
pub mod plan_graph;
pub mod rows;
pub mod sample;
mod shape;
mod text;

pub use error::{IrError, Result, closest_hint};
pub use graph::{Graph, GraphBuilder, GraphInput, MAX_ELEMENTS, Node};
pub use id::{InputId, NodeId, Source};
pub use kind::UnknownKind;
pub use nodeset::NodeSet;
pub use op::{ConvAttrs, GatherIndex, Op, OpClass, OpKind, PoolAttrs};
pub use plan::Plan;
pub use plan_graph::{GroupId, PlanGraph};
pub use rows::{POINTWISE, RowInput, RowRead};
pub use shape::TensorShape;
pub use text::{escape, human_size, is_unprintable};

#[doc(hidden)]
pub use serde as __serde;
