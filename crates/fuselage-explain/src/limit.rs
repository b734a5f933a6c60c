//! How large a group a program explains on a user's word.

/// The most nodes of a group that a program explains on a user's word (`fuselage explain`,
/// the report's panels); a larger group is refused, or left unexplained with a note.
///
/// Explaining is quadratic in the group: the exact [`CostExplainer`](crate::CostExplainer)
/// costs both parts of each of its n − 1 cuts, the cheapest split into fitting parts
/// ([`explain_cost`](crate::explain_cost)) grows segments from every node, and a program that
/// prints the best cut of every edge does as much again. On chains of ReLUs (debug build, two
/// cores), `fuselage explain --explainer cost` takes 3.9 s at 1,024 nodes and 13.5 s at 2,048
/// when long segments of the chain fit the buffer (64 KiB), 0.3 s and 0.9 s when they do not
/// (12 KiB); at 30,000 nodes every explainer took more than a minute. The zoo's largest graph
/// has 1,328 nodes, and real groups tens.
pub const MAX_EXPLAINED_NODES: usize = 2048;
