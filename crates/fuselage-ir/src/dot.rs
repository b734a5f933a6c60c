//! Graphviz DOT export, optionally with a plan's groups drawn as clusters.

use crate::graph::Graph;
use crate::id::Source;
use crate::plan::Plan;
use std::fmt::Write;

fn quote(s: &str) -> String {
    let escaped = s
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n");
    format!("\"{escaped}\"")
}

impl Graph {
    /// The graph in DOT. With a plan, each group is a cluster labelled with its index.
    pub fn to_dot(&self, plan: Option<&Plan>) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "digraph {} {{", quote(self.name()));
        let _ = writeln!(
            out,
            "  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];"
        );
        for (i, input) in self.inputs().iter().enumerate() {
            let _ = writeln!(
                out,
                "  i{i} [label={}, shape=ellipse];",
                quote(&format!("{}\n{}", input.name, input.shape))
            );
        }
        let node_line = |id: crate::NodeId| {
            let n = self.node(id);
            format!(
                "n{} [label={}];",
                id.0,
                quote(&format!("{}\n{} {}", n.name, n.op.kind().name(), n.shape))
            )
        };
        match plan {
            Some(plan) => {
                for (gi, grp) in plan.groups.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "  subgraph cluster_{gi} {{\n    label=\"group {gi}\";\n    style=rounded;"
                    );
                    for id in grp.iter().filter(|id| id.index() < self.len()) {
                        let _ = writeln!(out, "    {}", node_line(id));
                    }
                    let _ = writeln!(out, "  }}");
                }
            }
            None => {
                for id in self.node_ids() {
                    let _ = writeln!(out, "  {}", node_line(id));
                }
            }
        }
        for (id, n) in self.nodes() {
            for s in &n.inputs {
                let from = match s {
                    Source::Node(p) => format!("n{}", p.0),
                    Source::Input(i) => format!("i{}", i.0),
                };
                let _ = writeln!(out, "  {from} -> n{};", id.0);
            }
        }
        out.push_str("}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::tests::residual;
    use crate::{NodeSet, Plan};

    #[test]
    fn dot_has_every_node_and_edge() {
        let g = residual();
        let dot = g.to_dot(None);
        assert!(dot.starts_with("digraph \"residual\" {"));
        assert_eq!(dot.matches(" -> ").count(), g.edge_count() + 1);
        assert!(dot.contains("\"c1\\nConv [1, 8, 16, 16]\""));
        let plan = Plan::new(vec![NodeSet::full(g.len())]);
        let dot = g.to_dot(Some(&plan));
        assert!(dot.contains("subgraph cluster_0"));
    }
}
