//! A structural fingerprint of a graph.
//!
//! Two graphs have the same fingerprint when they have the same structure, whatever their node
//! names and node order: the zoo's ResNet-18 and the imported `resnet18.onnx` match.
//!
//! Each node gets a digest of its op kind, its shape-changing attributes, its output shape, its
//! weight count and, port by port, the digests of what it reads (a graph input contributes its
//! shape). A node's digest therefore covers everything upstream of it, edges included. The graph's
//! fingerprint is the digest of the sorted multiset of node digests and of which nodes are graph
//! outputs, so it is invariant to names and order and sensitive to any change of op, attribute,
//! shape, weight size or edge.
//!
//! [`Graph::identity`] is the same digests taken in node order: it is what a memo keyed by
//! [`NodeSet`](crate::NodeSet)s binds to, since a node set means the same tensors in two graphs
//! exactly when their nodes agree id by id. (The same zoo network at two resolutions has the
//! same name and node count, and another identity.)

use crate::graph::Graph;
use crate::id::Source;
use sha2::{Digest, Sha256};

type Hash = [u8; 32];

fn digest(parts: impl FnOnce(&mut Sha256)) -> Hash {
    let mut h = Sha256::new();
    parts(&mut h);
    h.finalize().into()
}

impl Graph {
    /// The structural fingerprint, as 32 hex digits.
    pub fn fingerprint(&self) -> String {
        let node_hashes = self.node_digests();
        let mut all: Vec<(Hash, bool)> = self
            .node_ids()
            .map(|n| (node_hashes[n.index()], self.is_output(n)))
            .collect();
        all.sort_unstable();
        let top = digest(|h| {
            for (hash, out) in &all {
                h.update(hash);
                h.update([*out as u8]);
            }
        });
        top[..16].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// A 64-bit digest of the graph's structure in node order (see the module docs): equal for
    /// two builds of the same network, different when any op, attribute, shape, weight size,
    /// edge, output or the node numbering differs. Computed once and kept.
    pub fn identity(&self) -> u64 {
        *self.identity.get_or_init(|| {
            let top = digest(|h| {
                for (n, hash) in self.node_digests().iter().enumerate() {
                    h.update(hash);
                    h.update([self.is_output(crate::NodeId(n as u32)) as u8]);
                }
            });
            let mut word = [0u8; 8];
            word.copy_from_slice(&top[..8]);
            u64::from_le_bytes(word)
        })
    }

    /// Each node's digest (op, attributes, shape, weights, and what it reads), by node index.
    fn node_digests(&self) -> Vec<Hash> {
        let input_hashes: Vec<Hash> = self
            .inputs()
            .iter()
            .map(|i| {
                digest(|h| {
                    h.update(b"input");
                    h.update(serde_json::to_vec(&i.shape).unwrap_or_default());
                })
            })
            .collect();
        let mut node_hashes: Vec<Hash> = Vec::with_capacity(self.len());
        for (_, node) in self.nodes() {
            let hash = digest(|h| {
                // The op's JSON holds its kind and every attribute the IR keeps.
                h.update(serde_json::to_vec(&node.op).unwrap_or_default());
                h.update(serde_json::to_vec(&node.shape).unwrap_or_default());
                h.update(node.weights.to_le_bytes());
                for (port, s) in node.inputs.iter().enumerate() {
                    h.update((port as u64).to_le_bytes());
                    match s {
                        Source::Node(p) => h.update(node_hashes[p.index()]),
                        Source::Input(i) => h.update(input_hashes[i.index()]),
                    }
                }
            });
            node_hashes.push(hash);
        }
        node_hashes
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::tests::residual;
    use crate::{ConvAttrs, GraphBuilder, Op, TensorShape};

    fn variant(swap_order: bool, names: &str, pad: u64) -> crate::Graph {
        let mut b = GraphBuilder::new("v");
        let x = b.input("input", TensorShape::nchw(4, 8, 8)).unwrap();
        let conv = Op::Conv(ConvAttrs {
            pads: [pad; 4],
            kernel: [2 * pad + 1; 2],
            ..ConvAttrs::square(4, 1, 1, 1, 1)
        });
        let (a, c) = if swap_order {
            let c = b.node(format!("{names}c"), conv, &[x]).unwrap();
            let a = b.node(format!("{names}a"), Op::Relu, &[x]).unwrap();
            (a, c)
        } else {
            let a = b.node(format!("{names}a"), Op::Relu, &[x]).unwrap();
            let c = b.node(format!("{names}c"), conv, &[x]).unwrap();
            (a, c)
        };
        b.node(format!("{names}add"), Op::Add, &[a, c]).unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn invariant_to_names_and_order_sensitive_to_structure() {
        let base = variant(false, "x", 1).fingerprint();
        assert_eq!(base.len(), 32);
        assert_eq!(variant(true, "y", 1).fingerprint(), base);
        assert_ne!(variant(false, "x", 0).fingerprint(), base);
        assert_ne!(residual().fingerprint(), base);
    }

    #[test]
    fn identity_is_invariant_to_names_and_sensitive_to_order() {
        let base = variant(false, "x", 1).identity();
        assert_eq!(variant(false, "y", 1).identity(), base);
        // Same fingerprint, other node numbering: node sets would mean other nodes.
        assert_ne!(variant(true, "x", 1).identity(), base);
        assert_ne!(variant(false, "x", 0).identity(), base);
        // Kept: a clone answers the same.
        let g = variant(false, "x", 1);
        assert_eq!(g.clone().identity(), g.identity());
    }
}
