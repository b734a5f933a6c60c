//! The graph: one node per primitive op, each producing one tensor, on a petgraph `DiGraph`.
//!
//! Design:
//! - Node ids are dense and topological (a node's producers have smaller ids), so per-node
//!   tables are plain vectors and a forward scan is a topological sweep.
//! - Graph inputs are tensors, not nodes: they are in no group and always come from DRAM.
//! - A node keeps its input *ports* in order ([`Node::inputs`]); the petgraph edge carries the
//!   port index, so algorithms written against petgraph's traits see the same structure.
//! - Graphs are built through [`GraphBuilder`], which checks names, arity and shapes as it goes;
//!   a finished [`Graph`] is immutable.

use crate::error::{IrError, Result};
use crate::id::{InputId, NodeId, Source};
use crate::op::{Op, OpKind};
use crate::rows::{RowFlow, RowInput, RowRead, default_row_axis, rows_along};
use crate::shape::TensorShape;
use petgraph::Direction;
use petgraph::graph::DiGraph;
use petgraph::visit::EdgeRef;
use std::collections::{BTreeMap, HashMap};

/// One op of the graph and the tensor it produces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    /// The ONNX node name (for example `/layer1/layer1.0/conv1/Conv`).
    pub name: String,
    /// The op and its shape-relevant attributes.
    pub op: Op,
    /// Data inputs, in port order.
    pub inputs: Vec<Source>,
    /// Shape of the output tensor.
    pub shape: TensorShape,
    /// Constant float elements the node reads (weights and bias).
    pub weights: u64,
}

/// A graph input tensor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphInput {
    /// Its ONNX name (for example `input`).
    pub name: String,
    /// Its shape.
    pub shape: TensorShape,
}

/// A network as a DAG of ops. Build one with [`GraphBuilder`].
#[derive(Clone, Debug)]
pub struct Graph {
    name: String,
    inputs: Vec<GraphInput>,
    dag: DiGraph<Node, u32>,
    outputs: Vec<NodeId>,
    by_name: HashMap<String, Source>,
    /// Consumers of each node, `(consumer, port)`, sorted.
    consumers: Vec<Vec<(NodeId, u32)>>,
    /// Consumers of each graph input.
    input_consumers: Vec<Vec<(NodeId, u32)>>,
    is_output: Vec<bool>,
    /// Each node's row axis and port reads ([`Op::rows`]).
    rows: Vec<RowFlow>,
    /// `(H_t, row elements)` of every node's tensor, then of every graph input's: the cost
    /// models read them for every tensor of every group they cost.
    geometry: Vec<(u64, u64)>,
    /// [`Graph::identity`], computed on first use.
    pub(crate) identity: std::sync::OnceLock<u64>,
}

impl Graph {
    /// The row axis of a node's or input's tensor (see [`crate::rows`]).
    pub fn row_axis(&self, s: Source) -> Option<usize> {
        row_axis_of(&self.rows, &self.inputs, s)
    }

    /// `H_t`: the rows of a tensor along its row axis (1 without one).
    pub fn rows_of(&self, s: Source) -> u64 {
        self.geometry[self.geometry_slot(s)].0
    }

    /// Elements of one row of a tensor (`row(t)` at one byte per element).
    pub fn row_elements(&self, s: Source) -> u64 {
        self.geometry[self.geometry_slot(s)].1
    }

    fn geometry_slot(&self, s: Source) -> usize {
        match s {
            Source::Node(n) => n.index(),
            Source::Input(i) => self.len() + i.index(),
        }
    }

    /// How an output row of `node` reads the rows of its input `port`.
    ///
    /// # Panics
    /// If the node or port is not of this graph.
    pub fn row_read(&self, node: NodeId, port: usize) -> RowRead {
        self.rows[node.index()].reads[port]
    }

    /// The model's name (`resnet18`, or the file stem of an import).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.dag.node_count()
    }

    /// Whether the graph has no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of node-to-node edges (one per data input port that reads a node).
    pub fn edge_count(&self) -> usize {
        self.dag.edge_count()
    }

    /// The node with this id.
    ///
    /// # Panics
    /// If the id is not of this graph.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.dag[petgraph::graph::NodeIndex::from(id)]
    }

    /// All node ids, in topological order.
    pub fn node_ids(&self) -> impl DoubleEndedIterator<Item = NodeId> + ExactSizeIterator + '_ {
        (0..self.len() as u32).map(NodeId)
    }

    /// All nodes with their ids, in topological order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.node_ids().map(move |id| (id, self.node(id)))
    }

    /// The node called `name`.
    pub fn id_of(&self, name: &str) -> Option<NodeId> {
        self.source_of(name).and_then(|s| s.node())
    }

    /// The node called `name`, or [`IrError::UnknownNode`] with the closest names.
    pub fn require(&self, name: &str) -> Result<NodeId> {
        self.id_of(name).ok_or_else(|| IrError::UnknownNode {
            name: name.to_string(),
            closest: self.closest_names(name, 3),
        })
    }

    /// Up to `k` node names closest to `name` by edit distance (ties in node order), for
    /// "did you mean" hints. Names further than half their length away are left out.
    ///
    /// ```
    /// use fuselage_ir::{GraphBuilder, Op, TensorShape};
    /// let mut b = GraphBuilder::new("g");
    /// let x = b.input("input", TensorShape::nchw(1, 4, 4))?;
    /// let r = b.node("/layer1/relu/Relu", Op::Relu, &[x])?;
    /// b.node("/layer2/relu/Relu", Op::Relu, &[r])?;
    /// let g = b.finish()?;
    /// assert_eq!(g.closest_names("/layer2/Relu", 1), vec!["/layer2/relu/Relu".to_string()]);
    /// let e = g.require("/layer1/relu/relu").unwrap_err().to_string();
    /// assert!(e.ends_with("did you mean `/layer1/relu/Relu` or `/layer2/relu/Relu`?"), "{e}");
    /// assert!(g.closest_names("something else entirely", 3).is_empty());
    /// # Ok::<(), fuselage_ir::IrError>(())
    /// ```
    pub fn closest_names(&self, name: &str, k: usize) -> Vec<String> {
        let target: Vec<char> = name.chars().collect();
        let mut scored: Vec<(usize, usize, &str)> = self
            .nodes()
            .map(|(id, n)| (edit_distance(&target, &n.name), id.index(), n.name.as_str()))
            .filter(|&(d, _, n)| d * 2 <= n.chars().count().max(target.len()))
            .collect();
        scored.sort_unstable();
        scored
            .into_iter()
            .take(k)
            .map(|(_, _, n)| n.to_string())
            .collect()
    }

    /// The node or input called `name` (the node, where a node and an input share it).
    pub fn source_of(&self, name: &str) -> Option<Source> {
        self.by_name.get(name).copied()
    }

    /// Graph inputs.
    pub fn inputs(&self) -> &[GraphInput] {
        &self.inputs
    }

    /// One graph input.
    pub fn input(&self, id: InputId) -> &GraphInput {
        &self.inputs[id.index()]
    }

    /// Nodes whose tensors are graph outputs.
    pub fn outputs(&self) -> &[NodeId] {
        &self.outputs
    }

    /// Whether the node's tensor is a graph output.
    pub fn is_output(&self, id: NodeId) -> bool {
        self.is_output[id.index()]
    }

    /// The nodes reading `id`'s tensor, with the port they read it on, sorted.
    pub fn consumers(&self, id: NodeId) -> &[(NodeId, u32)] {
        &self.consumers[id.index()]
    }

    /// The nodes reading a source (node or graph input).
    pub fn consumers_of(&self, s: Source) -> &[(NodeId, u32)] {
        match s {
            Source::Node(n) => self.consumers(n),
            Source::Input(i) => &self.input_consumers[i.index()],
        }
    }

    /// Shape of a source's tensor.
    pub fn shape_of(&self, s: Source) -> &TensorShape {
        match s {
            Source::Node(n) => &self.node(n).shape,
            Source::Input(i) => &self.inputs[i.index()].shape,
        }
    }

    /// Name of a source.
    pub fn name_of(&self, s: Source) -> &str {
        match s {
            Source::Node(n) => &self.node(n).name,
            Source::Input(i) => &self.inputs[i.index()].name,
        }
    }

    /// The nodes `id` reads, one per input port that reads a node (graph inputs left out).
    pub fn producers(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.node(id).inputs.iter().filter_map(|s| s.node())
    }

    /// For every node, how many of its input ports read another node (its in-degree in the
    /// node graph): the starting point of Kahn's algorithm.
    pub fn in_degrees(&self) -> Vec<usize> {
        self.node_ids().map(|v| self.producers(v).count()).collect()
    }

    /// Node-to-node neighbours of `id`, both directions, without duplicates.
    pub fn neighbours(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let ins = self.producers(id);
        let outs = self.consumers(id).iter().map(|&(c, _)| c);
        let mut all: Vec<NodeId> = ins.chain(outs).collect();
        all.sort_unstable();
        all.dedup();
        all.into_iter()
    }

    /// The underlying petgraph graph (node weights are [`Node`]s, edge weights input ports), for
    /// petgraph's algorithms. Its `NodeIndex` converts to and from [`NodeId`].
    pub fn dag(&self) -> &DiGraph<Node, u32> {
        &self.dag
    }

    /// Weight elements over all nodes (the `params` of `fuselage inspect`).
    pub fn params(&self) -> u64 {
        self.nodes().map(|(_, n)| n.weights).sum()
    }

    /// Multiply-accumulates of the Conv, Gemm and MatMul nodes.
    pub fn macs(&self) -> u64 {
        self.node_ids().map(|id| self.node_macs(id)).sum()
    }

    /// Multiply-accumulates of one node (0 for ops other than Conv, Gemm and MatMul).
    pub fn node_macs(&self, id: NodeId) -> u64 {
        let node = self.node(id);
        let x = self.shape_of(node.inputs[0]);
        match &node.op {
            Op::Conv(a) => {
                let cin = x.0.get(1).copied().unwrap_or(0);
                node.shape.elements() * (cin / a.group.max(1)) * a.kernel[0] * a.kernel[1]
            }
            Op::Gemm { .. } => node.shape.elements() * x.0.last().copied().unwrap_or(0),
            Op::MatMul => node.shape.elements() * x.0.last().copied().unwrap_or(0),
            _ => 0,
        }
    }

    /// Bytes of every node's output tensor at `element_bytes` per element (graph inputs not
    /// included).
    pub fn activation_bytes(&self, element_bytes: u64) -> u64 {
        self.nodes()
            .map(|(_, n)| n.shape.elements() * element_bytes)
            .sum()
    }

    /// How many nodes of each op kind, by ONNX op name.
    pub fn op_counts(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for (_, n) in self.nodes() {
            *m.entry(n.op.kind().name()).or_insert(0) += 1;
        }
        m
    }

    /// Checks that every node's recorded shape is what its op computes from its inputs (for a
    /// broadcasting element-wise op, widened by its constant operands where they can:
    /// [`Op::widened_by_constants`]), and that ops whose shape the IR cannot compute keep their
    /// element count where they must.
    ///
    /// # Errors
    /// [`IrError::ShapeMismatch`] or [`IrError::BadNode`] naming the first offending node.
    pub fn check_shapes(&self) -> Result<()> {
        for (_, n) in self.nodes() {
            let ins: Vec<&TensorShape> = n.inputs.iter().map(|&s| self.shape_of(s)).collect();
            match n.op.infer_shape(&ins) {
                Err(reason) => return Err(bad_node(n, reason)),
                Ok(Some(s))
                    if s != n.shape && !n.op.widened_by_constants(&s, &n.shape, n.weights) =>
                {
                    return Err(IrError::ShapeMismatch {
                        node: n.name.clone(),
                        op: n.op.kind().name().to_string(),
                        recorded: n.shape.to_string(),
                        inferred: s.to_string(),
                    });
                }
                Ok(_) => {}
            }
            if n.op.kind() == OpKind::Reshape && ins[0].elements() != n.shape.elements() {
                return Err(bad_node(
                    n,
                    format!("reshapes {} elements into {}", ins[0].elements(), n.shape),
                ));
            }
        }
        Ok(())
    }

    /// Whether every node is reachable from every other along edges in either direction.
    pub fn is_connected(&self) -> bool {
        petgraph::algo::connected_components(&self.dag) <= 1
    }

    /// Whether the node graph is acyclic (always true for a built graph; a check for tests).
    pub fn is_acyclic(&self) -> bool {
        !petgraph::algo::is_cyclic_directed(&self.dag)
    }
}

/// The row axis of `s`: a node's from its row flow, a graph input's the default of its rank
/// (shared by the finished graph and its builder).
fn row_axis_of(rows: &[RowFlow], inputs: &[GraphInput], s: Source) -> Option<usize> {
    match s {
        Source::Node(n) => rows[n.index()].axis,
        Source::Input(i) => default_row_axis(&inputs[i.index()].shape),
    }
}

/// The most elements a tensor, or a node's weights, may have: 2^48 (281 T), so that every
/// byte count at up to 16 bytes per element, and every sum of them, fits in `u64`.
pub const MAX_ELEMENTS: u64 = 1 << 48;

/// Refuses a shape or weight count past [`MAX_ELEMENTS`] (a corrupt file, an absurd
/// resolution).
fn check_size(name: &str, shape: &TensorShape, weights: u64) -> Result<()> {
    if shape.checked_elements().is_none_or(|e| e > MAX_ELEMENTS) {
        return Err(IrError::AbsurdSize {
            node: name.to_string(),
            what: "shape".into(),
            size: shape.to_string(),
        });
    }
    if weights > MAX_ELEMENTS {
        return Err(IrError::AbsurdSize {
            node: name.to_string(),
            what: "weights".into(),
            size: weights.to_string(),
        });
    }
    Ok(())
}

fn bad_node(n: &Node, reason: String) -> IrError {
    IrError::BadNode {
        node: n.name.clone(),
        op: n.op.kind().name().to_string(),
        reason,
    }
}

/// Levenshtein distance between `a` and the characters of `b` (one row of memory).
fn edit_distance(a: &[char], b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &ca) in a.iter().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb)).min(up + 1).min(row[j] + 1);
            diag = up;
        }
    }
    row[b.len()]
}

/// Builds a [`Graph`] node by node, in topological order.
///
/// # Example
/// ```
/// use fuselage_ir::{ConvAttrs, GraphBuilder, Op, TensorShape};
/// let mut b = GraphBuilder::new("tiny");
/// let x = b.input("input", TensorShape::nchw(3, 32, 32))?;
/// let c = b.node("/conv/Conv", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[x])?;
/// let r = b.node("/relu/Relu", Op::Relu, &[c])?;
/// let g = b.finish()?;
/// assert_eq!(g.len(), 2);
/// assert_eq!(g.node(r.node().unwrap()).shape, TensorShape::nchw(8, 32, 32));
/// assert_eq!(g.params(), 8 * 3 * 9 + 8);
/// # Ok::<(), fuselage_ir::IrError>(())
/// ```
#[derive(Debug, Default)]
pub struct GraphBuilder {
    name: String,
    inputs: Vec<GraphInput>,
    dag: DiGraph<Node, u32>,
    by_name: HashMap<String, Source>,
    outputs: Vec<NodeId>,
    rows: Vec<RowFlow>,
}

impl GraphBuilder {
    /// An empty graph called `name`.
    pub fn new(name: impl Into<String>) -> Self {
        GraphBuilder {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Adds a graph input.
    ///
    /// # Errors
    /// [`IrError::DuplicateName`].
    pub fn input(&mut self, name: impl Into<String>, shape: TensorShape) -> Result<Source> {
        let name = name.into();
        check_size(&name, &shape, 0)?;
        let s = Source::Input(InputId(self.inputs.len() as u32));
        self.claim(&name, s)?;
        self.inputs.push(GraphInput { name, shape });
        Ok(s)
    }

    /// Records `name` for `s`. Graph inputs and nodes have names of their own, as in ONNX,
    /// where a node may be called like a graph input: two inputs or two nodes of one name
    /// are an error, a node and an input are not, and the name then looks up the node.
    fn claim(&mut self, name: &str, s: Source) -> Result<()> {
        match self.by_name.get(name) {
            Some(Source::Node(_)) if s.node().is_none() => Ok(()),
            Some(old) if old.node().is_some() == s.node().is_some() => {
                Err(IrError::DuplicateName(name.to_string()))
            }
            _ => {
                self.by_name.insert(name.to_string(), s);
                Ok(())
            }
        }
    }

    /// The shape of a source added so far.
    pub fn shape(&self, s: Source) -> &TensorShape {
        match s {
            Source::Node(n) => &self.dag[petgraph::graph::NodeIndex::from(n)].shape,
            Source::Input(i) => &self.inputs[i.index()].shape,
        }
    }

    /// Adds a node whose shape the op infers and whose weights are the op's default
    /// ([`Op::default_weights`]).
    ///
    /// # Errors
    /// [`IrError::BadNode`] when the inputs do not fit the op or the op cannot infer its shape;
    /// [`IrError::DuplicateName`].
    pub fn node(&mut self, name: impl Into<String>, op: Op, inputs: &[Source]) -> Result<Source> {
        let name = name.into();
        let shapes: Vec<&TensorShape> = inputs.iter().map(|&s| self.shape(s)).collect();
        let shape = match op.infer_shape(&shapes) {
            Ok(Some(s)) => s,
            Ok(None) => {
                return Err(IrError::BadNode {
                    node: name,
                    op: op.kind().name().to_string(),
                    reason: "the output shape cannot be inferred: use `node_with`".into(),
                });
            }
            Err(reason) => {
                return Err(IrError::BadNode {
                    node: name,
                    op: op.kind().name().to_string(),
                    reason,
                });
            }
        };
        let weights = op.default_weights(shapes[0]);
        self.node_with(name, op, inputs, shape, weights)
    }

    /// Adds a node with an explicit output shape and weight count (the importer's way in).
    ///
    /// # Errors
    /// [`IrError::BadNode`] for a wrong number of inputs; [`IrError::DuplicateName`].
    pub fn node_with(
        &mut self,
        name: impl Into<String>,
        op: Op,
        inputs: &[Source],
        shape: TensorShape,
        weights: u64,
    ) -> Result<Source> {
        let name = name.into();
        check_size(&name, &shape, weights)?;
        let (lo, hi) = op.arity();
        if inputs.len() < lo || inputs.len() > hi {
            return Err(IrError::BadNode {
                node: name,
                op: op.kind().name().to_string(),
                reason: format!("takes {lo} to {hi} data inputs, got {}", inputs.len()),
            });
        }
        let id = NodeId(self.dag.node_count() as u32);
        self.claim(&name, Source::Node(id))?;
        let ins: Vec<RowInput<'_>> = inputs
            .iter()
            .map(|&s| RowInput {
                shape: self.shape(s),
                axis: row_axis_of(&self.rows, &self.inputs, s),
            })
            .collect();
        let mut flow = op.rows(&ins, &shape);
        // A shape that contradicts its op (check_shapes reports it) must not leave an axis
        // outside the tensor.
        if flow.axis.is_some_and(|a| a >= shape.rank()) {
            flow.axis = default_row_axis(&shape);
        }
        self.rows.push(flow);
        let idx = self.dag.add_node(Node {
            name,
            op,
            inputs: inputs.to_vec(),
            shape,
            weights,
        });
        debug_assert_eq!(NodeId::from(idx), id);
        for (port, s) in inputs.iter().enumerate() {
            if let Source::Node(p) = s {
                self.dag.add_edge((*p).into(), idx, port as u32);
            }
        }
        Ok(Source::Node(id))
    }

    /// Marks a node's tensor as a graph output. Without any, [`finish`](Self::finish) takes the
    /// nodes that nothing reads.
    pub fn output(&mut self, s: Source) -> &mut Self {
        if let Source::Node(n) = s
            && !self.outputs.contains(&n)
        {
            self.outputs.push(n);
        }
        self
    }

    /// The source called `name` (the node, where a node and an input share it).
    pub fn source(&self, name: &str) -> Option<Source> {
        self.by_name.get(name).copied()
    }

    /// Finishes the graph.
    ///
    /// # Errors
    /// [`IrError::BadNode`] when the graph has no node.
    pub fn finish(self) -> Result<Graph> {
        let GraphBuilder {
            name,
            inputs,
            dag,
            by_name,
            mut outputs,
            rows,
        } = self;
        let n = dag.node_count();
        let mut consumers = vec![Vec::new(); n];
        let mut input_consumers = vec![Vec::new(); inputs.len()];
        for idx in dag.node_indices() {
            for (port, s) in dag[idx].inputs.iter().enumerate() {
                let entry = (NodeId::from(idx), port as u32);
                match s {
                    Source::Node(p) => consumers[p.index()].push(entry),
                    Source::Input(i) => input_consumers[i.index()].push(entry),
                }
            }
        }
        debug_assert!(dag.edge_references().all(|e| e.source() < e.target()));
        if outputs.is_empty() {
            outputs = dag
                .node_indices()
                .filter(|&i| {
                    dag.neighbors_directed(i, Direction::Outgoing)
                        .next()
                        .is_none()
                })
                .map(NodeId::from)
                .collect();
        }
        let mut is_output = vec![false; n];
        for o in &outputs {
            is_output[o.index()] = true;
        }
        let geometry = {
            let of = |shape: &TensorShape, axis: Option<usize>| {
                let h = rows_along(shape, axis);
                (h, shape.elements() / h.max(1))
            };
            let nodes = dag
                .node_indices()
                .map(|i| of(&dag[i].shape, rows[i.index()].axis));
            let ins = inputs
                .iter()
                .map(|x| of(&x.shape, default_row_axis(&x.shape)));
            nodes.chain(ins).collect()
        };
        Ok(Graph {
            name,
            inputs,
            dag,
            outputs,
            by_name,
            consumers,
            input_consumers,
            is_output,
            rows,
            geometry,
            identity: std::sync::OnceLock::new(),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::op::ConvAttrs;

    /// A residual block: conv -> relu -> conv -> add(skip) -> relu.
    pub(crate) fn residual() -> Graph {
        let mut b = GraphBuilder::new("residual");
        let x = b.input("input", TensorShape::nchw(8, 16, 16)).unwrap();
        let c1 = b
            .node("c1", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[x])
            .unwrap();
        let r1 = b.node("r1", Op::Relu, &[c1]).unwrap();
        let c2 = b
            .node("c2", Op::Conv(ConvAttrs::square(8, 3, 1, 1, 1)), &[r1])
            .unwrap();
        let a = b.node("add", Op::Add, &[c2, c1]).unwrap();
        b.node("r2", Op::Relu, &[a]).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn builder_records_structure() {
        let g = residual();
        assert_eq!(g.len(), 5);
        assert_eq!(g.edge_count(), 5);
        let c1 = g.require("c1").unwrap();
        assert_eq!(g.consumers(c1), &[(NodeId(1), 0), (NodeId(3), 1)]);
        assert_eq!(g.outputs(), &[NodeId(4)]);
        assert!(g.is_output(NodeId(4)));
        assert!(g.check_shapes().is_ok());
        assert!(g.is_connected() && g.is_acyclic());
        assert_eq!(g.macs(), 2 * 8 * 16 * 16 * 8 * 9);
        assert_eq!(g.op_counts()["Conv"], 2);
        assert_eq!(
            g.neighbours(c1).collect::<Vec<_>>(),
            vec![NodeId(1), NodeId(3)]
        );
    }

    #[test]
    fn builder_rejects_bad_nodes() {
        let mut b = GraphBuilder::new("bad");
        let x = b.input("input", TensorShape::nchw(8, 16, 16)).unwrap();
        let y = b.input("other", TensorShape::nchw(4, 16, 16)).unwrap();
        assert!(matches!(
            b.input("input", TensorShape::nchw(1, 1, 1)),
            Err(IrError::DuplicateName(_))
        ));
        let err = b.node("add", Op::Add, &[x, y]).unwrap_err();
        assert!(err.to_string().contains("`add` (Add)"), "{err}");
        assert!(matches!(
            b.node("r", Op::Relu, &[]),
            Err(IrError::BadNode { .. })
        ));
        assert!(matches!(
            b.node("m", Op::MatMul, &[x]),
            Err(IrError::BadNode { .. })
        ));
    }

    #[test]
    fn absurd_sizes_are_refused_by_name() {
        let mut b = GraphBuilder::new("absurd");
        let err = b
            .input("x", TensorShape::nchw(1 << 20, 1 << 20, 1 << 20))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "node `x`: shape of [1, 1048576, 1048576, 1048576] is absurd (at most 2^48 elements)"
        );
        let x = b.input("y", TensorShape::nchw(8, 16, 16)).unwrap();
        let err = b
            .node_with("r", Op::Relu, &[x], TensorShape::nchw(8, 16, 16), u64::MAX)
            .unwrap_err();
        assert!(matches!(err, IrError::AbsurdSize { ref what, .. } if what == "weights"));
    }

    #[test]
    fn a_constant_operand_may_widen_a_broadcast_and_no_more() {
        // Rotary frequencies: position ids [1, 1, 1] times inv_freq [8].
        let build = |shape: Vec<u64>, weights: u64| {
            let mut b = GraphBuilder::new("rotary");
            let ids = b
                .input("position_ids", TensorShape::new(vec![1, 1, 1]))
                .unwrap();
            b.node_with(
                "/rotary_emb/Mul",
                Op::Mul,
                &[ids],
                TensorShape::new(shape),
                weights,
            )
            .unwrap();
            b.finish().unwrap().check_shapes()
        };
        build(vec![1, 1, 8], 8).unwrap();
        // A constant of rank 4 adds a leading axis.
        build(vec![2, 1, 1, 8], 16).unwrap();
        // 4 elements cannot make 8 frequencies; [1, 2, 8] is no broadcast of [1, 1, 1] by 8.
        let err = build(vec![1, 1, 8], 4).unwrap_err().to_string();
        assert_eq!(
            err,
            "node `/rotary_emb/Mul` (Mul): recorded shape [1, 1, 8] but its inputs imply [1, 1, 1]"
        );
        assert!(build(vec![1, 2, 8], 8).is_err());
        // A unary op has no constant to widen it.
        let mut b = GraphBuilder::new("relu");
        let x = b.input("x", TensorShape::new(vec![1, 1, 1])).unwrap();
        b.node_with("r", Op::Relu, &[x], TensorShape::new(vec![1, 1, 8]), 8)
            .unwrap();
        assert!(b.finish().unwrap().check_shapes().is_err());
    }

    #[test]
    fn check_shapes_names_the_node() {
        let mut b = GraphBuilder::new("bad");
        let x = b.input("input", TensorShape::nchw(8, 16, 16)).unwrap();
        b.node_with("r", Op::Relu, &[x], TensorShape::nchw(8, 16, 15), 0)
            .unwrap();
        let err = b.finish().unwrap().check_shapes().unwrap_err();
        assert!(
            matches!(err, IrError::ShapeMismatch { ref node, .. } if node == "r"),
            "{err}"
        );
    }
}
