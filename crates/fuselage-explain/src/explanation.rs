//! [`Explanation`]: a score for every edge and node of a group, and the selected edges.

use crate::error::{ExplainError, Result};
use fuselage_ir::order::GroupOrder;
use fuselage_ir::{Graph, NodeId, NodeSet};
use serde::{Deserialize, Serialize};

/// How many edges an explainer selects: the top `share` of the group's edges by score (at least
/// `min`, at most `max`, never more than the group has).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// Share of the edges selected, in (0, 1].
    pub share: f32,
    /// Fewest edges selected (when the group has that many).
    pub min: usize,
    /// Most edges selected.
    pub max: usize,
}

impl Default for Selection {
    /// A quarter of the edges, at least one and at most 16: sparsity 0.75, the level at which
    /// `docs/explainers.md` compares explainers.
    fn default() -> Self {
        Selection {
            share: 0.25,
            min: 1,
            max: 16,
        }
    }
}

impl Selection {
    /// Checks the setting.
    ///
    /// # Errors
    /// [`ExplainError::Config`] for a share outside (0, 1] or `min > max`.
    pub fn check(&self) -> Result<()> {
        if !(self.share > 0.0 && self.share <= 1.0) || self.min > self.max {
            return Err(ExplainError::Config(format!(
                "selection share {} (must be in (0, 1]), min {} max {}",
                self.share, self.min, self.max
            )));
        }
        Ok(())
    }

    /// The number of edges selected from `edges`.
    pub fn count(&self, edges: usize) -> usize {
        let k = (self.share * edges as f32).ceil() as usize;
        k.clamp(self.min, self.max).min(edges)
    }
}

/// Why a group is predicted invalid, edge by edge.
///
/// `edges` are the group's internal edges in the order of [`GroupOrder::edges`] (the order the
/// classifier's edge weights follow); `edge_scores[i]` scores `edges[i]`, higher meaning more
/// responsible for the "invalid" prediction. `selected` lists the explanation's edges, most
/// important first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Explanation {
    /// The explainer's name.
    pub explainer: String,
    /// The group's nodes, by id.
    pub nodes: Vec<NodeId>,
    /// The group's internal edges `(producer, consumer)`.
    pub edges: Vec<(NodeId, NodeId)>,
    /// One score per edge.
    pub edge_scores: Vec<f32>,
    /// One score per node (aligned with `nodes`).
    pub node_scores: Vec<f32>,
    /// Indices into `edges` of the explanation, most important first.
    pub selected: Vec<usize>,
}

impl Explanation {
    /// An explanation from edge scores: node scores default to the best score of an incident
    /// edge, and the selection is the top of the ranking.
    ///
    /// # Errors
    /// [`ExplainError::BadGroup`] when the scores do not match the edges or are not finite.
    pub fn from_scores(
        explainer: &str,
        order: &GroupOrder,
        edges: Vec<(NodeId, NodeId)>,
        edge_scores: Vec<f32>,
        node_scores: Option<Vec<f32>>,
        selection: &Selection,
    ) -> Result<Self> {
        if edge_scores.len() != edges.len() || edge_scores.iter().any(|s| !s.is_finite()) {
            return Err(ExplainError::BadGroup {
                graph: explainer.to_string(),
                reason: format!(
                    "{} edge scores for {} edges, or a score that is not finite",
                    edge_scores.len(),
                    edges.len()
                ),
            });
        }
        let node_scores = match node_scores {
            Some(s) => s,
            None => {
                let mut s = vec![0.0f32; order.len()];
                for (&(u, v), &x) in edges.iter().zip(&edge_scores) {
                    for w in [u, v] {
                        #[allow(clippy::expect_used, reason = "internal edges join members")]
                        let i = order.position(w).expect("edge inside the group");
                        s[i] = s[i].max(x);
                    }
                }
                s
            }
        };
        let mut e = Explanation {
            explainer: explainer.to_string(),
            nodes: order.nodes().to_vec(),
            edges,
            edge_scores,
            node_scores,
            selected: Vec::new(),
        };
        let k = selection.count(e.edges.len());
        e.selected = e.ranking().into_iter().take(k).collect();
        Ok(e)
    }

    /// Every edge index, best first (score descending, ties by edge order).
    pub fn ranking(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.edges.len()).collect();
        idx.sort_by(|&a, &b| {
            self.edge_scores[b]
                .total_cmp(&self.edge_scores[a])
                .then(a.cmp(&b))
        });
        idx
    }

    /// 1 for a selected edge, 0 for the others, in edge order: the mask that keeps only the
    /// explanation.
    pub fn selection_mask(&self) -> Vec<f32> {
        let mut m = vec![0.0; self.edges.len()];
        for &i in &self.selected {
            m[i] = 1.0;
        }
        m
    }

    /// Share of the edges left out of the explanation (1 for an empty one).
    pub fn sparsity(&self) -> f64 {
        if self.edges.is_empty() {
            1.0
        } else {
            1.0 - self.selected.len() as f64 / self.edges.len() as f64
        }
    }
}

/// Checks that `group` is a non-empty set of `g`'s nodes and returns its order and edges.
///
/// # Errors
/// [`ExplainError::BadGroup`] for an empty set or one sized for another graph.
pub fn group_edges(g: &Graph, group: &NodeSet) -> Result<(GroupOrder, Vec<(NodeId, NodeId)>)> {
    if group.capacity() != g.len() || group.is_empty() {
        return Err(ExplainError::BadGroup {
            graph: g.name().to_string(),
            reason: format!(
                "a set of {} nodes sized for {} (the graph has {})",
                group.len(),
                group.capacity(),
                g.len()
            ),
        });
    }
    let order = GroupOrder::new(g, group);
    let edges = order.edges(g);
    Ok((order, edges))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selection_counts_clamp() {
        let s = Selection::default();
        assert_eq!(s.count(0), 0);
        assert_eq!(s.count(1), 1);
        assert_eq!(s.count(10), 3);
        assert_eq!(s.count(200), 16);
        assert!(Selection { share: 0.0, ..s }.check().is_err());
    }
}
