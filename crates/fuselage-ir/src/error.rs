//! The one error type of `fuselage-ir`.

use thiserror::Error;

/// Everything that can go wrong while building, checking or (de)serialising a graph, a group or
/// a plan. Each variant names the nodes and groups involved, by their ONNX node names.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum IrError {
    /// Two nodes (or a node and a graph input) share a name.
    #[error("duplicate node name `{0}`")]
    DuplicateName(String),
    /// A node reads a tensor that nothing defines.
    #[error("node `{node}` reads `{input}`, which is neither a node nor a graph input")]
    UnknownInput {
        /// The reading node.
        node: String,
        /// The missing producer.
        input: String,
    },
    /// A name that is not in the graph, with the graph's closest names (by edit distance).
    #[error("unknown node `{name}`{}", closest_hint(.closest))]
    UnknownNode {
        /// The name given.
        name: String,
        /// Up to three of the graph's names closest to it.
        closest: Vec<String>,
    },
    /// A node named twice in one group.
    #[error("node `{0}` is named twice in one group")]
    RepeatedNode(String),
    /// A tensor or a weight count too large for any accelerator (more than 2^48 elements), or
    /// one whose size overflows.
    #[error("node `{node}`: {what} of {size} is absurd (at most 2^48 elements)")]
    AbsurdSize {
        /// The node or input.
        node: String,
        /// What is too large (`shape [..]`, `weights`).
        what: String,
        /// The size, as given.
        size: String,
    },
    /// A node's inputs do not fit its op.
    #[error("node `{node}` ({op}): {reason}")]
    BadNode {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// What is wrong.
        reason: String,
    },
    /// A node's recorded output shape differs from what its op and inputs imply.
    #[error("node `{node}` ({op}): recorded shape {recorded} but its inputs imply {inferred}")]
    ShapeMismatch {
        /// The node.
        node: String,
        /// Its op.
        op: String,
        /// The shape stored on the node.
        recorded: String,
        /// The shape the op computes.
        inferred: String,
    },
    /// A group spec ([`Graph::parse_group`](crate::Graph::parse_group)) that names no node.
    #[error("the group names no node")]
    EmptySpec,
    /// A `FIRST..LAST` group spec whose FIRST comes after LAST.
    #[error("`{first}` comes after `{last}` in node order")]
    ReversedRange {
        /// The range's first name.
        first: String,
        /// Its last name.
        last: String,
    },
    /// A group with no node.
    #[error("group {group} is empty")]
    EmptyGroup {
        /// Index of the group in its plan (or 0 for a lone group).
        group: usize,
    },
    /// A group that is not weakly connected.
    #[error("group {group} is not connected: {{{}}} is cut off from {{{}}}", .apart.join(", "), .rest.join(", "))]
    Disconnected {
        /// Index of the group in its plan (or 0 for a lone group).
        group: usize,
        /// The nodes reachable from the group's first node.
        rest: Vec<String>,
        /// The nodes that are not.
        apart: Vec<String>,
    },
    /// A group that is not convex: a path leaves it and comes back, so a plan holding it would
    /// have a cycle between groups (its outside node would have to run both before and
    /// after it).
    #[error(
        "the group is not convex: `{outside}` lies on a path from `{from}` to `{to}` outside it, so a plan holding it would have a cycle; add `{outside}` or cut the group there"
    )]
    NotConvex {
        /// The member the path leaves.
        from: String,
        /// The first node outside the group on the path.
        outside: String,
        /// The member it comes back to.
        to: String,
    },
    /// A node that belongs to two groups of a plan.
    #[error("node `{node}` is in group {first} and in group {second}")]
    Overlap {
        /// The node.
        node: String,
        /// The first group holding it.
        first: usize,
        /// The second group holding it.
        second: usize,
    },
    /// Nodes that no group of a plan covers.
    #[error("the plan leaves {} node(s) in no group: {}", .nodes.len(), first_names(.nodes))]
    Uncovered {
        /// The uncovered nodes.
        nodes: Vec<String>,
    },
    /// The graph of groups has a cycle.
    #[error("the plan's groups form a cycle: {}", .cycle.iter().map(|g| format!("group {g}")).collect::<Vec<_>>().join(" -> "))]
    CyclicPlan {
        /// Group indices along the cycle, first repeated at the end.
        cycle: Vec<usize>,
    },
    /// A graph whose node graph has a cycle (never produced by the builder).
    #[error("the graph has a cycle through `{0}`")]
    CyclicGraph(String),
    /// JSON that does not describe a graph or a plan.
    #[error("invalid JSON: {0}")]
    Json(String),
}

/// `Result` with [`IrError`].
pub type Result<T, E = IrError> = std::result::Result<T, E>;

/// `; did you mean `a`, `b` or `c`?`, or nothing.
pub fn closest_hint(closest: &[String]) -> String {
    match closest {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|n| format!("`{n}`")).collect();
            format!("; did you mean {} or `{last}`?", init.join(", "))
        }
    }
}

/// At most the first ten of `names`, and how many more: an error about a plan of a graph of
/// tens of thousands of nodes stays a line.
fn first_names(names: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut out = names
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        out.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    out
}
