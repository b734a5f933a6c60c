//! Invalid groups to train explainers on and to score them with ([`ExplainSet`]).

use crate::error::{ExplainError, Result};
use fuselage_cost::CostConfig;
use fuselage_gnn::{
    BETAS_KIB, ExplainableModel, FeatureSet, GroupGraph, HELD_OUT_NETWORKS, PAPER_NETWORKS,
};
use fuselage_ir::{Graph, NodeSet, sample};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Which groups an [`ExplainSet`] holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExplainSetConfig {
    /// Zoo networks the groups come from.
    pub networks: Vec<String>,
    /// Groups kept per network.
    pub per_network: usize,
    /// Smallest group kept (nodes).
    pub min_nodes: usize,
    /// Longest group a random plan may draw.
    pub max_nodes: usize,
    /// Buffer sizes drawn from, KiB: each one unified buffer.
    pub betas_kib: Vec<u64>,
    /// Bytes of one weight element at which groups are judged (1, what the shipped
    /// classifiers were trained at, when absent from a file).
    #[serde(default = "one_byte")]
    pub weight_element_bytes: u64,
    /// Bytes of one activation element (1 when absent).
    #[serde(default = "one_byte")]
    pub activation_element_bytes: u64,
    /// Seed of every draw.
    pub seed: u64,
}

impl ExplainSetConfig {
    /// Groups of the classifier's nine training networks: what PG and RG train on.
    pub fn training(seed: u64, per_network: usize) -> Self {
        ExplainSetConfig {
            networks: PAPER_NETWORKS.iter().map(|(n, _)| n.to_string()).collect(),
            per_network,
            min_nodes: 6,
            max_nodes: 64,
            betas_kib: BETAS_KIB.to_vec(),
            weight_element_bytes: 1,
            activation_element_bytes: 1,
            seed,
        }
    }

    /// Groups of the training networks of the classifiers over features `set`: the paper's
    /// nine CNNs, and for [`FeatureSet::Broad`] also the transformers and post-2020 CNNs of
    /// [`MODERN_NETWORKS`](fuselage_gnn::MODERN_NETWORKS).
    pub fn training_for(set: FeatureSet, seed: u64, per_network: usize) -> Self {
        let mut c = Self::training(seed, per_network);
        if set == FeatureSet::Broad {
            c.networks.extend(
                fuselage_gnn::MODERN_NETWORKS
                    .iter()
                    .map(|(n, _)| n.to_string()),
            );
        }
        c
    }

    /// Transformer groups for `docs/explainers.md`: ViT-Base and TinyLlama, which neither the
    /// classifiers nor the explainers saw, and BERT and GPT-2 at 4 layers, whose networks the
    /// broad ones trained on (other groups of them, drawn with another seed).
    pub fn transformers(seed: u64, per_network: usize) -> Self {
        ExplainSetConfig {
            networks: [
                "vit_base_patch16_224",
                "tinyllama_1_1b",
                "bert_l4_h256",
                "gpt2_l4_h256",
            ]
            .map(String::from)
            .to_vec(),
            ..Self::training(seed, per_network)
        }
    }

    /// Groups of resnet50 and resnet152, which neither the classifier nor the explainers saw:
    /// what `docs/explainers.md` scores on.
    pub fn held_out(seed: u64, per_network: usize) -> Self {
        ExplainSetConfig {
            networks: HELD_OUT_NETWORKS.iter().map(|n| n.to_string()).collect(),
            ..Self::training(seed, per_network)
        }
    }
}

/// One invalid group at one cost configuration.
#[derive(Clone, Debug)]
pub struct Instance {
    /// Index of its graph in [`ExplainSet::graphs`].
    pub graph: usize,
    /// The group.
    pub group: NodeSet,
    /// The cost configuration it is invalid at: β (one unified buffer) and the element sizes
    /// of the set. The exact model is the classifier's cost kind at it; the classifier reads
    /// its β ([`buffer_bytes`](CostConfig::buffer_bytes)).
    pub config: CostConfig,
    /// The group encoded for the classifier.
    pub encoded: GroupGraph,
    /// The classifier's "invalid" logit on the whole group.
    pub logit: f32,
}

/// Groups of random fusion plans that are invalid by the exact cost model and that the
/// classifier also calls invalid: the verdicts an explainer is asked to explain.
#[derive(Clone, Debug)]
pub struct ExplainSet {
    /// The networks, in [`ExplainSetConfig::networks`] order.
    pub graphs: Vec<Graph>,
    /// The instances, network by network.
    pub instances: Vec<Instance>,
}

impl ExplainSet {
    /// Draws groups from random plans (a random topological order cut into runs of up to
    /// `max_nodes`), each at a random β of the list (at the set's element sizes), until
    /// `per_network` invalid ones per network are kept (or 200 plans per network were drawn).
    ///
    /// # Errors
    /// [`ExplainError::Config`] for an unknown network; [`ExplainError::Cost`] for a β or an
    /// element size out of range; classifier errors.
    pub fn collect<M: ExplainableModel + ?Sized>(cfg: &ExplainSetConfig, clf: &M) -> Result<Self> {
        let kind = clf.cost_kind();
        if cfg.betas_kib.is_empty() || cfg.max_nodes < cfg.min_nodes.max(2) {
            return Err(ExplainError::Config(
                "an explain set needs a β and max_nodes ≥ min_nodes ≥ 2".into(),
            ));
        }
        // One configuration per β of the list, each with the set's element sizes.
        let configs = cfg
            .betas_kib
            .iter()
            .map(|&kib| {
                CostConfig::kib(kib)?
                    .with_element_sizes(cfg.weight_element_bytes, cfg.activation_element_bytes)
            })
            .collect::<fuselage_cost::Result<Vec<_>>>()?;
        let mut graphs = Vec::new();
        let mut instances = Vec::new();
        for (gi, name) in cfg.networks.iter().enumerate() {
            let g = fuselage_zoo_build(name)?;
            let mut rng =
                ChaCha8Rng::seed_from_u64(cfg.seed ^ (gi as u64).wrapping_mul(0x9e37_79b9));
            let mut kept = 0;
            for _ in 0..200 {
                if kept >= cfg.per_network {
                    break;
                }
                let max_len = rng.random_range(cfg.min_nodes..=cfg.max_nodes);
                let plan = sample::random_plan(&g, max_len, &mut rng);
                let config = configs[rng.random_range(0..configs.len())];
                let model = kind.model(config);
                let mut cands = Vec::new();
                for grp in plan.groups {
                    if grp.len() >= cfg.min_nodes && !model.evaluate(&g, &grp)?.valid {
                        cands.push(grp);
                    }
                }
                if cands.is_empty() {
                    continue;
                }
                let encoded: Vec<GroupGraph> = cands
                    .iter()
                    .map(|s| GroupGraph::new(&g, s))
                    .collect::<fuselage_gnn::Result<_>>()?;
                let beta = config.buffer_bytes();
                let items: Vec<_> = encoded.iter().map(|e| (e, beta, None)).collect();
                let logits = clf.logits(&items)?;
                for ((grp, enc), z) in cands.into_iter().zip(encoded).zip(logits) {
                    if z > 0.0 && kept < cfg.per_network {
                        instances.push(Instance {
                            graph: gi,
                            group: grp,
                            config,
                            encoded: enc,
                            logit: z,
                        });
                        kept += 1;
                    }
                }
            }
            graphs.push(g);
        }
        Ok(ExplainSet { graphs, instances })
    }

    /// The graph of an instance.
    pub fn graph_of(&self, inst: &Instance) -> &Graph {
        &self.graphs[inst.graph]
    }
}

/// The element size an [`ExplainSetConfig`] read without one has.
fn one_byte() -> u64 {
    1
}

fn fuselage_zoo_build(name: &str) -> Result<Graph> {
    fuselage_zoo::build(name).map_err(|e| ExplainError::Config(e.to_string()))
}
