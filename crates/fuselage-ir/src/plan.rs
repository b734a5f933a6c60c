//! Groups and plans, and the two checks every other crate relies on.
//!
//! - A **group** is a non-empty, weakly connected [`NodeSet`].
//! - A **plan** is a partition of all nodes into groups whose graph of groups (an edge A→B when
//!   B reads a tensor of A) is acyclic, so that the groups can run one after another.
//!
//! Failures name the group (by its index in the plan) and its nodes (by ONNX name). The graph
//! of groups itself, with each node's owner, is a [`PlanGraph`].

use crate::error::{IrError, Result};
use crate::graph::Graph;
use crate::id::NodeId;
use crate::nodeset::NodeSet;
use crate::plan_graph::{GroupId, PlanGraph};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A partition of a graph's nodes into fusion groups.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Plan {
    /// The groups.
    pub groups: Vec<NodeSet>,
}

impl Plan {
    /// A plan from its groups.
    pub fn new(groups: Vec<NodeSet>) -> Self {
        Plan { groups }
    }

    /// The layer-by-layer plan: every node alone.
    pub fn singletons(g: &Graph) -> Self {
        Plan {
            groups: g
                .node_ids()
                .map(|n| NodeSet::singleton(g.len(), n))
                .collect(),
        }
    }

    /// Number of groups.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether the plan has no group.
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The graph of the plan's groups on `g`: [`PlanGraph::new`] of [`groups`](Self::groups).
    pub fn graph(&self, g: &Graph) -> PlanGraph {
        PlanGraph::new(g, &self.groups)
    }
}

impl Graph {
    /// The ONNX names of a set's nodes, in id order.
    pub fn names(&self, set: &NodeSet) -> Vec<String> {
        set.iter().map(|n| self.node(n).name.clone()).collect()
    }

    /// The set of the nodes called `names`.
    ///
    /// # Errors
    /// [`IrError::UnknownNode`] for the first name not in the graph;
    /// [`IrError::RepeatedNode`] for a name given twice.
    pub fn set_of<S: AsRef<str>>(&self, names: &[S]) -> Result<NodeSet> {
        let mut s = NodeSet::new(self.len());
        for name in names {
            if !s.insert(self.require(name.as_ref())?) {
                return Err(IrError::RepeatedNode(name.as_ref().to_string()));
            }
        }
        Ok(s)
    }

    /// The group `spec` names: comma-separated node names (`A,B,C`), or `FIRST..LAST` for
    /// every node from FIRST to LAST in node order; checked to be a group ([`Graph::check_group`]).
    /// This is the syntax of the program's `--group`. A listed name of a node with several
    /// outputs (an ONNX `Split`, imported as `X`, `X:1`, `X:2`, …) takes all of them: ONNX
    /// users name nodes, not outputs. (`X:1` alone still names one output.)
    ///
    /// # Errors
    /// [`IrError::UnknownNode`] (with the closest names), [`IrError::RepeatedNode`],
    /// [`IrError::EmptySpec`], [`IrError::ReversedRange`], a [`Graph::check_group`] error, or
    /// [`IrError::NotConvex`] for a list a path leaves and comes back to (no plan could hold
    /// it without a cycle between groups).
    ///
    /// # Example
    /// ```
    /// use fuselage_ir::{GraphBuilder, Op, TensorShape};
    /// let mut b = GraphBuilder::new("chain");
    /// let x = b.input("x", TensorShape::nchw(4, 8, 8))?;
    /// let a = b.node("a", Op::Relu, &[x])?;
    /// let c = b.node("b", Op::Relu, &[a])?;
    /// b.node("c", Op::Relu, &[c])?;
    /// let g = b.finish()?;
    /// assert_eq!(g.parse_group("a..c")?.len(), 3);
    /// assert_eq!(g.parse_group("a, b")?.len(), 2);
    /// assert!(g.parse_group("a,c").is_err()); // not connected
    /// assert!(g.parse_group("c..a").is_err());
    /// // A skip around `b`: {a, d} is connected by the skip, but the path through `b` leaves it.
    /// let mut b = GraphBuilder::new("skip");
    /// let x = b.input("x", TensorShape::nchw(4, 8, 8))?;
    /// let a = b.node("a", Op::Relu, &[x])?;
    /// let m = b.node("b", Op::Relu, &[a])?;
    /// b.node("d", Op::Add, &[m, a])?;
    /// let g = b.finish()?;
    /// let err = g.parse_group("a,d").unwrap_err();
    /// assert!(err.to_string().contains("`b` lies on a path from `a` to `d`"), "{err}");
    /// assert_eq!(g.parse_group("a,b,d")?.len(), 3);
    /// # Ok::<(), fuselage_ir::IrError>(())
    /// ```
    pub fn parse_group(&self, spec: &str) -> Result<NodeSet> {
        let set = if let Some((first, last)) = spec.split_once("..")
            && !spec.contains(',')
        {
            let (a, b) = (self.require(first.trim())?, self.require(last.trim())?);
            if a > b {
                return Err(IrError::ReversedRange {
                    first: first.trim().to_string(),
                    last: last.trim().to_string(),
                });
            }
            // A range of node ids is convex: ids are topological.
            let set = NodeSet::from_ids(self.len(), self.node_ids().filter(|&v| v >= a && v <= b));
            self.check_group(&set, 0)?;
            set
        } else {
            let names: Vec<&str> = spec
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            if names.is_empty() {
                return Err(IrError::EmptySpec);
            }
            let mut set = self.set_of(&names)?;
            for name in &names {
                for k in 1.. {
                    match self.id_of(&format!("{name}:{k}")) {
                        Some(v) => set.insert(v),
                        None => break,
                    };
                }
            }
            self.check_group(&set, 0)?;
            if let Some((from, outside, to)) = self.leaves_and_returns(&set) {
                return Err(IrError::NotConvex {
                    from: self.node(from).name.clone(),
                    outside: self.node(outside).name.clone(),
                    to: self.node(to).name.clone(),
                });
            }
            set
        };
        Ok(set)
    }

    /// A path that leaves `set` and comes back, if one does: the member it leaves, the
    /// first node outside on it, and the member it reaches. `O(V + E)`.
    pub fn leaves_and_returns(&self, set: &NodeSet) -> Option<(NodeId, NodeId, NodeId)> {
        // Each outside node reached: (the member the path left, the first node outside).
        let mut origin: Vec<Option<(NodeId, NodeId)>> = vec![None; self.len()];
        let mut queue = VecDeque::new();
        for v in set.iter() {
            for &(c, _) in self.consumers(v) {
                if !set.contains(c) && origin[c.index()].is_none() {
                    origin[c.index()] = Some((v, c));
                    queue.push_back(c);
                }
            }
        }
        while let Some(u) = queue.pop_front() {
            let start = origin[u.index()]?;
            for &(c, _) in self.consumers(u) {
                if set.contains(c) {
                    return Some((start.0, start.1, c));
                }
                if origin[c.index()].is_none() {
                    origin[c.index()] = Some(start);
                    queue.push_back(c);
                }
            }
        }
        None
    }

    /// The nodes of `set` reachable from `start` inside `set`, along edges in either direction.
    pub fn component(&self, set: &NodeSet, start: NodeId) -> NodeSet {
        let mut seen = NodeSet::new(self.len());
        let mut queue = VecDeque::from([start]);
        seen.insert(start);
        while let Some(v) = queue.pop_front() {
            let ins = self.producers(v);
            let outs = self.consumers(v).iter().map(|&(c, _)| c);
            for u in ins.chain(outs) {
                if set.contains(u) && seen.insert(u) {
                    queue.push_back(u);
                }
            }
        }
        seen
    }

    /// Whether `set` is non-empty and weakly connected.
    pub fn is_connected_set(&self, set: &NodeSet) -> bool {
        match set.first() {
            None => false,
            Some(f) => self.component(set, f).len() == set.len(),
        }
    }

    /// Checks that `set` is a group: non-empty and weakly connected. `index` names it in errors.
    ///
    /// # Errors
    /// [`IrError::EmptyGroup`] or [`IrError::Disconnected`].
    pub fn check_group(&self, set: &NodeSet, index: usize) -> Result<()> {
        let first = set.first().ok_or(IrError::EmptyGroup { group: index })?;
        if set.capacity() != self.len() {
            return Err(IrError::Json(format!(
                "group {index} is sized for {} nodes, the graph has {}",
                set.capacity(),
                self.len()
            )));
        }
        let reached = self.component(set, first);
        if reached.len() != set.len() {
            return Err(IrError::Disconnected {
                group: index,
                rest: self.names(&reached),
                apart: self.names(&set.difference(&reached)),
            });
        }
        Ok(())
    }

    /// Checks that `plan` is a partition of the nodes into groups, with an acyclic graph of
    /// groups ([`PlanGraph`]; a cycle is reported as [`PlanGraph::cycle`] finds it).
    ///
    /// # Errors
    /// [`IrError::Overlap`], [`IrError::Uncovered`], [`IrError::EmptyGroup`],
    /// [`IrError::Disconnected`] or [`IrError::CyclicPlan`], naming groups and nodes.
    pub fn check_plan(&self, plan: &Plan) -> Result<()> {
        let mut owner = vec![GroupId::NONE; self.len()];
        for (gi, grp) in plan.groups.iter().enumerate() {
            self.check_group(grp, gi)?;
            for v in grp.iter() {
                let first = owner[v.index()];
                if first != GroupId::NONE {
                    return Err(IrError::Overlap {
                        node: self.node(v).name.clone(),
                        first: first.index(),
                        second: gi,
                    });
                }
                owner[v.index()] = GroupId(gi as u32);
            }
        }
        let uncovered: Vec<String> = self
            .node_ids()
            .filter(|v| owner[v.index()] == GroupId::NONE)
            .map(|v| self.node(v).name.clone())
            .collect();
        if !uncovered.is_empty() {
            return Err(IrError::Uncovered { nodes: uncovered });
        }
        if let Some(cycle) = PlanGraph::from_owners(self, owner, plan.len()).cycle() {
            return Err(IrError::CyclicPlan {
                cycle: cycle.into_iter().map(GroupId::index).collect(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::residual;

    fn set(g: &Graph, names: &[&str]) -> NodeSet {
        g.set_of(names).unwrap()
    }

    /// `--group` with the name of an ONNX `Split` takes all its outputs (issue 34).
    #[test]
    fn a_split_named_in_a_group_brings_all_its_outputs() {
        use crate::{GraphBuilder, Op, TensorShape};
        let mut b = GraphBuilder::new("split");
        let x = b.input("x", TensorShape::nchw(4, 8, 8)).unwrap();
        let split = |start| Op::Split {
            axis: 1,
            start,
            len: 2,
        };
        let s0 = b.node("s", split(0), &[x]).unwrap();
        let s1 = b.node("s:1", split(2), &[x]).unwrap();
        b.node("a", Op::Add, &[s0, s1]).unwrap();
        let g = b.finish().unwrap();
        assert_eq!(g.names(&g.parse_group("s, a").unwrap()), ["s", "s:1", "a"]);
        // One output by its own name stays one output.
        assert_eq!(g.names(&g.parse_group("s:1, a").unwrap()), ["s:1", "a"]);
        // Naming both is not naming one twice.
        assert_eq!(g.parse_group("s, s:1, a").unwrap().len(), 3);
    }

    #[test]
    fn groups_must_be_connected() {
        let g = residual();
        assert!(g.check_group(&set(&g, &["c1", "r1", "c2"]), 0).is_ok());
        let err = g.check_group(&set(&g, &["r1", "r2"]), 4).unwrap_err();
        assert_eq!(
            err.to_string(),
            "group 4 is not connected: {r2} is cut off from {r1}"
        );
        assert!(matches!(
            g.check_group(&NodeSet::new(g.len()), 2),
            Err(IrError::EmptyGroup { group: 2 })
        ));
        assert!(matches!(
            g.set_of(&["nope"]),
            Err(IrError::UnknownNode { .. })
        ));
    }

    #[test]
    fn plans_must_partition_and_be_acyclic() {
        let g = residual();
        assert!(g.check_plan(&Plan::singletons(&g)).is_ok());
        let ok = Plan::new(vec![set(&g, &["c1", "r1", "c2", "add"]), set(&g, &["r2"])]);
        assert!(g.check_plan(&ok).is_ok());
        let overlap = Plan::new(vec![
            set(&g, &["c1", "r1"]),
            set(&g, &["r1", "c2", "add", "r2"]),
        ]);
        assert!(
            matches!(g.check_plan(&overlap), Err(IrError::Overlap { ref node, .. }) if node == "r1")
        );
        let missing = Plan::new(vec![set(&g, &["c1", "r1"])]);
        let err = g.check_plan(&missing).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the plan leaves 3 node(s) in no group: c2, add, r2"
        );
        // c1 and add together, r1 -> c2 apart: c1 -> r1 -> c2 -> add is a cycle of groups.
        let cyclic = Plan::new(vec![set(&g, &["c1", "add", "r2"]), set(&g, &["r1", "c2"])]);
        let err = g.check_plan(&cyclic).unwrap_err();
        assert_eq!(
            err,
            IrError::CyclicPlan {
                cycle: vec![0, 1, 0]
            }
        );
        assert_eq!(
            err.to_string(),
            "the plan's groups form a cycle: group 0 -> group 1 -> group 0"
        );
    }

    /// A plan that leaves most of a large graph out used to list every node in one error.
    #[test]
    fn an_error_about_many_uncovered_nodes_names_ten() {
        use crate::{GraphBuilder, Op, TensorShape};
        let mut b = GraphBuilder::new("chain");
        let mut prev = b.input("x", TensorShape::nchw(1, 2, 2)).unwrap();
        for i in 0..30 {
            prev = b.node(format!("n{i}"), Op::Relu, &[prev]).unwrap();
        }
        let g = b.finish().unwrap();
        let plan = Plan::new(vec![NodeSet::singleton(g.len(), NodeId(0))]);
        assert_eq!(
            g.check_plan(&plan).unwrap_err().to_string(),
            "the plan leaves 29 node(s) in no group: n1, n2, n3, n4, n5, n6, n7, n8, n9, n10 and 19 more"
        );
    }
}
