//! JSON for graphs: a flat, human-readable form that names nodes and their inputs by ONNX name.
//!
//! ```json
//! {"name": "tiny", "inputs": [{"name": "input", "shape": [1, 3, 32, 32]}],
//!  "nodes": [{"name": "/conv/Conv", "op": "Conv", "out_channels": 8, ..., "inputs": ["input"],
//!             "shape": [1, 8, 32, 32], "weights": 224}],
//!  "outputs": ["/conv/Conv"]}
//! ```
//!
//! Reading goes through [`GraphBuilder`], so a JSON graph gets the same checks as a built one.

use crate::error::{IrError, Result};
use crate::graph::{Graph, GraphBuilder};
use crate::op::Op;
use crate::shape::TensorShape;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct InputJson {
    name: String,
    shape: TensorShape,
}

#[derive(Serialize, Deserialize)]
struct NodeJson {
    name: String,
    #[serde(flatten)]
    op: Op,
    inputs: Vec<String>,
    shape: TensorShape,
    weights: u64,
}

#[derive(Serialize, Deserialize)]
struct GraphJson {
    name: String,
    inputs: Vec<InputJson>,
    nodes: Vec<NodeJson>,
    outputs: Vec<String>,
}

impl Graph {
    /// The graph as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        let j = GraphJson {
            name: self.name().to_string(),
            inputs: self
                .inputs()
                .iter()
                .map(|i| InputJson {
                    name: i.name.clone(),
                    shape: i.shape.clone(),
                })
                .collect(),
            nodes: self
                .nodes()
                .map(|(_, n)| NodeJson {
                    name: n.name.clone(),
                    op: n.op.clone(),
                    inputs: n
                        .inputs
                        .iter()
                        .map(|&s| self.name_of(s).to_string())
                        .collect(),
                    shape: n.shape.clone(),
                    weights: n.weights,
                })
                .collect(),
            outputs: self
                .outputs()
                .iter()
                .map(|&o| self.node(o).name.clone())
                .collect(),
        };
        serde_json::to_string_pretty(&j).unwrap_or_default()
    }

    /// Reads a graph written by [`to_json`](Self::to_json). Nodes must come in topological
    /// order.
    ///
    /// # Errors
    /// [`IrError::Json`] for malformed JSON, [`IrError::UnknownInput`] for an input that names
    /// no earlier node or graph input, and the builder's errors.
    pub fn from_json(text: &str) -> Result<Graph> {
        let j: GraphJson = serde_json::from_str(text).map_err(|e| IrError::Json(e.to_string()))?;
        let mut b = GraphBuilder::new(j.name);
        for i in j.inputs {
            b.input(i.name, i.shape)?;
        }
        for n in j.nodes {
            let inputs = n
                .inputs
                .iter()
                .map(|name| {
                    b.source(name).ok_or_else(|| IrError::UnknownInput {
                        node: n.name.clone(),
                        input: name.clone(),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            b.node_with(n.name, n.op, &inputs, n.shape, n.weights)?;
        }
        for o in &j.outputs {
            let s = b.source(o).ok_or_else(|| IrError::UnknownNode {
                name: o.clone(),
                closest: Vec::new(),
            })?;
            b.output(s);
        }
        b.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::residual;

    #[test]
    fn json_round_trips() {
        let g = residual();
        let text = g.to_json();
        assert!(text.contains("\"op\": \"Conv\""));
        let back = Graph::from_json(&text).unwrap();
        assert_eq!(back.to_json(), text);
        assert_eq!(back.fingerprint(), g.fingerprint());
    }

    #[test]
    fn json_errors_name_the_problem() {
        let text = residual().to_json().replace("\"r1\"\n", "\"ghost\"\n");
        let err = Graph::from_json(&text).unwrap_err();
        assert_eq!(
            err.to_string(),
            "node `c2` reads `ghost`, which is neither a node nor a graph input"
        );
        assert!(matches!(Graph::from_json("{"), Err(IrError::Json(_))));
    }
}
