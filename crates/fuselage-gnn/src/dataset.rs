//! The labelled data set: fusion groups from random search, labelled by the exact cost models.
//!
//! ## How it is made
//!
//! For each network, random plans ([`fuselage_ir::sample::random_plan`]) are drawn with segment
//! lengths cycling through [`DatasetConfig::max_lens`]; every group of every plan is kept once
//! (deduplicated per network) until the network's quota is reached. Each group is then costed
//! by LBDF and BRR at every β of [`DatasetConfig::betas_kib`]: one group gives one labelled
//! sample per β per cost model.
//!
//! Networks are processed in parallel (rayon), each with its own ChaCha8 stream derived from
//! the seed, so the result does not depend on the thread count. Labelling is parallel over
//! groups, order preserving.
//!
//! ## File format
//!
//! JSON lines: the first line is the [`DatasetConfig`], then one [`GroupRecord`] per line
//! (`{"network":"vgg16","nodes":[3,4,5],"lbdf":[false,true,true,true,true],"brr":[...]}`,
//! labels are `valid` per β, in the order of `betas_kib`).

use crate::error::{GnnError, Result};
use crate::features::{FeatureSet, GroupGraph};
use fuselage_cost::{CostConfig, CostKind, CostModel};
use fuselage_ir::{Graph, NodeId, NodeSet, sample};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, Write};
use std::path::Path;

/// The buffer sizes of the paper's data set, in KiB.
pub const BETAS_KIB: [u64; 5] = [128, 256, 512, 1024, 2048];

/// The training networks and the paper's group counts for each.
pub const PAPER_NETWORKS: [(&str, usize); 9] = [
    ("vgg16", 715),
    ("squeezenet1_1", 795),
    ("mobilenet_v2", 1100),
    ("mobilenet_v3_small", 203),
    ("mobilenet_v3_large", 251),
    ("resnet18", 715),
    ("resnet101", 3476),
    ("efficientnet_b0", 1364),
    ("efficientnet_b3", 2247),
];

/// Networks never seen in training, for the generalisation check.
pub const HELD_OUT_NETWORKS: [&str; 2] = ["resnet50", "resnet152"];

/// The zoo's transformers and post-2020 CNNs in the broad data set ([`DatasetConfig::broad`]),
/// two sizes of each family (GhostNet has one, Llama one), and the groups taken from each.
pub const MODERN_NETWORKS: [(&str, usize); 10] = [
    ("vit_tiny_patch16_224", 700),
    ("vit_small_patch16_224", 700),
    ("bert_l4_h256", 700),
    ("bert_base_uncased", 700),
    ("gpt2_l4_h256", 700),
    ("gpt2", 700),
    ("convnext_atto", 700),
    ("convnext_nano", 700),
    ("ghostnet_100", 700),
    ("llama_3_2_1b", 700),
];

/// The families of the generalisation check on modern networks, with their networks of
/// [`MODERN_NETWORKS`]: a classifier trained without some families is scored on their groups
/// ([`KEPT_OUT`]).
pub const FAMILIES: [(&str, [&str; 2]); 4] = [
    ("ViT", ["vit_tiny_patch16_224", "vit_small_patch16_224"]),
    ("BERT", ["bert_l4_h256", "bert_base_uncased"]),
    ("GPT-2", ["gpt2_l4_h256", "gpt2"]),
    ("ConvNeXt", ["convnext_atto", "convnext_nano"]),
];

/// The two kept-out runs: train on the broad data set without these families, test on them.
/// Trained on ViT and BERT, tested on GPT-2 and ConvNeXt, and the converse.
pub const KEPT_OUT: [[&str; 2]; 2] = [["GPT-2", "ConvNeXt"], ["ViT", "BERT"]];

/// The networks of the named [`FAMILIES`] (unknown names have none).
pub fn family_networks(families: &[&str]) -> Vec<&'static str> {
    FAMILIES
        .iter()
        .filter(|(f, _)| families.contains(f))
        .flat_map(|(_, nets)| nets.iter().copied())
        .collect()
}

/// How to generate a data set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetConfig {
    /// The seed every random choice flows from.
    pub seed: u64,
    /// Networks (zoo names) and how many distinct groups to collect from each.
    pub networks: Vec<(String, usize)>,
    /// Segment lengths of the random plans, one drawn uniformly per plan.
    pub max_lens: Vec<usize>,
    /// Buffer sizes, KiB.
    pub betas_kib: Vec<u64>,
    /// At most this many random plans per network (small networks run out of new groups).
    pub max_plans: usize,
}

impl DatasetConfig {
    /// The paper's data set: [`PAPER_NETWORKS`] with their counts, β of [`BETAS_KIB`],
    /// segment lengths 2 to 64.
    pub fn paper(seed: u64) -> Self {
        DatasetConfig {
            seed,
            networks: PAPER_NETWORKS
                .iter()
                .map(|&(n, c)| (n.to_string(), c))
                .collect(),
            max_lens: vec![2, 4, 8, 16, 32, 64],
            betas_kib: BETAS_KIB.to_vec(),
            max_plans: 20_000,
        }
    }

    /// The broad data set: the paper's networks and counts, then [`MODERN_NETWORKS`], same
    /// plans and β. What the [`FeatureSet::Broad`](crate::FeatureSet) checkpoints learn from.
    pub fn broad(seed: u64) -> Self {
        let mut c = DatasetConfig::paper(seed);
        c.networks
            .extend(MODERN_NETWORKS.iter().map(|&(n, k)| (n.to_string(), k)));
        c
    }

    /// The data set the classifiers over features `set` learn from: [`DatasetConfig::paper`]
    /// or [`DatasetConfig::broad`].
    pub fn of(set: FeatureSet, seed: u64) -> Self {
        match set {
            FeatureSet::Paper => DatasetConfig::paper(seed),
            FeatureSet::Broad => DatasetConfig::broad(seed),
        }
    }

    /// The same data set with every network's count multiplied by `scale` (rounded, at least
    /// 1 group each).
    pub fn times(mut self, scale: f64) -> Self {
        for (_, n) in &mut self.networks {
            *n = ((*n as f64 * scale).round() as usize).max(1);
        }
        self
    }

    /// The paper's networks with every count multiplied by `scale` (at least 1 group each):
    /// small data sets for tests and benches.
    pub fn scaled(seed: u64, scale: f64) -> Self {
        DatasetConfig::paper(seed).times(scale)
    }

    /// The held-out networks, `per_network` groups each, same plans and β.
    pub fn held_out(seed: u64, per_network: usize) -> Self {
        DatasetConfig {
            networks: HELD_OUT_NETWORKS
                .iter()
                .map(|n| (n.to_string(), per_network))
                .collect(),
            ..DatasetConfig::paper(seed)
        }
    }
}

/// One distinct group and its labels.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupRecord {
    /// The zoo network.
    pub network: String,
    /// Node ids of the group, increasing.
    pub nodes: Vec<u32>,
    /// LBDF validity at each β of the data set's `betas_kib`.
    pub lbdf: Vec<bool>,
    /// BRR validity at each β.
    pub brr: Vec<bool>,
}

impl GroupRecord {
    /// The labels of one cost model (none for `tiled`, which the classifier does not learn).
    pub fn valid(&self, kind: CostKind) -> &[bool] {
        match kind {
            CostKind::Lbdf => &self.lbdf,
            CostKind::Brr => &self.brr,
            CostKind::Tiled => &[],
        }
    }
}

/// The largest β a data set may label, in KiB: 1 TiB, the largest buffer a
/// [`CostConfig`] takes.
pub const MAX_BETA_KIB: u64 = 1 << 30;

impl DatasetConfig {
    /// Checks the β the labels are for: at least one, each 1 KiB to [`MAX_BETA_KIB`].
    fn check_betas(&self) -> std::result::Result<(), String> {
        if self.betas_kib.is_empty() {
            return Err("betas_kib is empty: the labels are for no buffer size".into());
        }
        match self.betas_kib.iter().find(|&&b| b == 0 || b > MAX_BETA_KIB) {
            Some(b) => Err(format!(
                "betas_kib has {b}, not a buffer size in 1..={MAX_BETA_KIB} KiB"
            )),
            None => Ok(()),
        }
    }
}

impl GroupRecord {
    /// Checks what the record says of itself: at least one node, node ids increasing (so
    /// none twice), and one label per β of each cost model (`betas` of them).
    fn check(&self, betas: usize) -> std::result::Result<(), String> {
        if self.nodes.is_empty() {
            return Err(format!("the group of `{}` has no node", self.network));
        }
        if let Some(w) = self.nodes.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!(
                "the group of `{}` lists node {} {}: node ids must increase, each once",
                self.network,
                w[1],
                if w[0] == w[1] {
                    "twice"
                } else {
                    "out of order"
                }
            ));
        }
        for (kind, labels) in [("lbdf", &self.lbdf), ("brr", &self.brr)] {
            if labels.len() != betas {
                return Err(format!(
                    "{} {kind} labels for {betas} buffer sizes (betas_kib)",
                    labels.len()
                ));
            }
        }
        Ok(())
    }
}

/// A generated (or loaded) data set.
#[derive(Clone, Debug, PartialEq)]
pub struct Dataset {
    /// How it was made.
    pub config: DatasetConfig,
    /// The groups, network by network in config order.
    pub groups: Vec<GroupRecord>,
}

/// One labelled sample: a group, a β and whether the cost model calls it invalid.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Index into the data set's groups (and into [`EncodedDataset::graphs`]).
    pub group: usize,
    /// β in bytes.
    pub beta_bytes: u64,
    /// `true` when the group does not fit (the positive class).
    pub invalid: bool,
}

/// A data set with every group encoded for the classifier, and its samples for one cost model.
#[derive(Clone, Debug)]
pub struct EncodedDataset {
    /// Encoded groups, aligned with [`Dataset::groups`].
    pub graphs: Vec<GroupGraph>,
    /// The network of each group.
    pub networks: Vec<String>,
    /// All samples (groups × β).
    pub samples: Vec<Sample>,
}

/// Builds every network of `names` once.
fn build_graphs<'a>(names: impl Iterator<Item = &'a str>) -> Result<BTreeMap<String, Graph>> {
    let mut m = BTreeMap::new();
    for n in names {
        if !m.contains_key(n) {
            m.insert(n.to_string(), fuselage_zoo::build(n)?);
        }
    }
    Ok(m)
}

fn collect_groups(g: &Graph, quota: usize, cfg: &DatasetConfig, stream: u64) -> Vec<NodeSet> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    rng.set_stream(stream);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let lens = if cfg.max_lens.is_empty() {
        vec![8]
    } else {
        cfg.max_lens.clone()
    };
    'plans: for _ in 0..cfg.max_plans {
        let len = lens[rng.random_range(0..lens.len())].max(1);
        let plan = sample::random_plan(g, len, &mut rng);
        for grp in plan.groups {
            if seen.insert(grp.clone()) {
                out.push(grp);
                if out.len() >= quota {
                    break 'plans;
                }
            }
        }
    }
    out
}

/// Generates the data set `cfg` describes: collect groups by random search, deduplicate,
/// label with LBDF and BRR at every β.
///
/// # Errors
/// [`GnnError::Zoo`] for an unknown network, [`GnnError::Cost`] if a cost model refuses a
/// group (a bug), [`GnnError::Config`] for an empty β list.
///
/// # Example
/// ```
/// use fuselage_gnn::{DatasetConfig, generate_dataset};
/// let mut cfg = DatasetConfig::scaled(1, 0.01);
/// cfg.networks.truncate(2);
/// let ds = generate_dataset(&cfg)?;
/// assert_eq!(ds.groups.len(), 7 + 8);
/// assert_eq!(ds, generate_dataset(&cfg)?); // reproducible
/// # Ok::<(), fuselage_gnn::GnnError>(())
/// ```
pub fn generate_dataset(cfg: &DatasetConfig) -> Result<Dataset> {
    if cfg.betas_kib.is_empty() {
        return Err(GnnError::Config("no buffer size".into()));
    }
    let graphs = build_graphs(cfg.networks.iter().map(|(n, _)| n.as_str()))?;
    let per_net: Vec<(String, Vec<NodeSet>)> = cfg
        .networks
        .par_iter()
        .enumerate()
        .map(|(i, (name, quota))| {
            let g = &graphs[name];
            (name.clone(), collect_groups(g, *quota, cfg, i as u64))
        })
        .collect();
    let configs = cfg
        .betas_kib
        .iter()
        .map(|&b| CostConfig::kib(b))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let models: Vec<(Box<dyn CostModel>, Box<dyn CostModel>)> = configs
        .iter()
        .map(|&c| (CostKind::Lbdf.model(c), CostKind::Brr.model(c)))
        .collect();
    let mut groups = Vec::new();
    for (name, sets) in per_net {
        let g = &graphs[&name];
        let labelled = sets
            .par_iter()
            .map(|s| {
                let mut lbdf = Vec::with_capacity(models.len());
                let mut brr = Vec::with_capacity(models.len());
                for (l, b) in &models {
                    lbdf.push(l.evaluate(g, s)?.valid);
                    brr.push(b.evaluate(g, s)?.valid);
                }
                Ok(GroupRecord {
                    network: name.clone(),
                    nodes: s.iter().map(|n| n.0).collect(),
                    lbdf,
                    brr,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        groups.extend(labelled);
    }
    Ok(Dataset {
        config: cfg.clone(),
        groups,
    })
}

impl Dataset {
    /// The groups of `networks` and the rest, as two data sets of the same config: how a
    /// family is kept out of training.
    pub fn partition(&self, networks: &[&str]) -> (Dataset, Dataset) {
        let (inside, outside) = self
            .groups
            .iter()
            .cloned()
            .partition(|g| networks.contains(&g.network.as_str()));
        let with = |groups| Dataset {
            config: self.config.clone(),
            groups,
        };
        (with(inside), with(outside))
    }

    /// Number of labelled samples per cost model (groups × β).
    pub fn samples_per_model(&self) -> usize {
        self.groups.len() * self.config.betas_kib.len()
    }

    /// Writes the data set as JSON lines.
    ///
    /// # Errors
    /// [`GnnError::Io`].
    #[allow(
        clippy::expect_used,
        reason = "serde_json serialises these plain structs and floats (NaN becomes null) without error"
    )]
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let f = std::fs::File::create(path).map_err(|e| GnnError::io(path, e))?;
        let mut w = std::io::BufWriter::new(f);
        let mut write = |v: String| writeln!(w, "{v}").map_err(|e| GnnError::io(path, e));
        write(serde_json::to_string(&self.config).expect("config serialises"))?;
        for g in &self.groups {
            write(serde_json::to_string(g).expect("record serialises"))?;
        }
        w.flush().map_err(|e| GnnError::io(path, e))
    }

    /// Reads a data set written by [`Dataset::save`].
    ///
    /// # Errors
    /// [`GnnError::Io`], or [`GnnError::Parse`] naming the line: for text that is not a data
    /// set, a β of 0 or past [`MAX_BETA_KIB`], a group with no node or a node twice, or a
    /// record whose label count is not the number of β.
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let f = std::fs::File::open(path).map_err(|e| GnnError::io(path, e))?;
        Self::read(std::io::BufReader::new(f), path)
    }

    /// Reads a data set written by [`Dataset::save`] from `reader`, which read it from `path`
    /// (named in errors). For a caller that has the bytes already, read through its own
    /// guards (a program checks that a file is regular and within a cap, then parses the
    /// very bytes it checked: `Dataset::read(&bytes[..], path)`).
    ///
    /// # Errors
    /// As [`Dataset::load`].
    pub fn read(reader: impl BufRead, path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let parse = |line: usize, message: String| GnnError::Parse {
            path: path.display().to_string(),
            line,
            message,
        };
        let mut config: Option<DatasetConfig> = None;
        let mut groups = Vec::new();
        for (i, line) in reader.lines().enumerate() {
            let line = line.map_err(|e| GnnError::io(path, e))?;
            if line.trim().is_empty() {
                continue;
            }
            match &config {
                None => {
                    let c: DatasetConfig =
                        serde_json::from_str(&line).map_err(|e| parse(i + 1, e.to_string()))?;
                    c.check_betas().map_err(|m| parse(i + 1, m))?;
                    config = Some(c);
                }
                Some(c) => {
                    let r: GroupRecord =
                        serde_json::from_str(&line).map_err(|e| parse(i + 1, e.to_string()))?;
                    r.check(c.betas_kib.len()).map_err(|m| parse(i + 1, m))?;
                    groups.push(r);
                }
            }
        }
        let config = config.ok_or_else(|| parse(1, "empty file".into()))?;
        Ok(Dataset { config, groups })
    }

    /// Encodes every group and lists the samples of cost model `kind`.
    ///
    /// # Errors
    /// [`GnnError::Zoo`] for an unknown network, [`GnnError::BadGroup`] for a record whose
    /// nodes do not fit its network or are not connected in it.
    pub fn encode(&self, kind: CostKind) -> Result<EncodedDataset> {
        let graphs = build_graphs(self.groups.iter().map(|r| r.network.as_str()))?;
        let encoded = self
            .groups
            .par_iter()
            .map(|r| {
                let g = &graphs[&r.network];
                if let Some(&bad) = r.nodes.iter().find(|&&n| n as usize >= g.len()) {
                    return Err(GnnError::BadGroup {
                        graph: r.network.clone(),
                        reason: format!("node {bad} out of range"),
                    });
                }
                let set = NodeSet::from_ids(g.len(), r.nodes.iter().map(|&n| NodeId(n)));
                if !g.is_connected_set(&set) {
                    return Err(GnnError::BadGroup {
                        graph: r.network.clone(),
                        reason: format!("nodes {:?} are not connected: a fusion group is", r.nodes),
                    });
                }
                GroupGraph::new(g, &set)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut samples = Vec::with_capacity(self.samples_per_model());
        for (gi, r) in self.groups.iter().enumerate() {
            for (bi, &kib) in self.config.betas_kib.iter().enumerate() {
                let valid = r
                    .valid(kind)
                    .get(bi)
                    .copied()
                    .ok_or_else(|| GnnError::Parse {
                        path: "<memory>".into(),
                        line: gi + 2,
                        message: format!("{} labels missing", kind.name()),
                    })?;
                samples.push(Sample {
                    group: gi,
                    beta_bytes: kib * 1024,
                    invalid: !valid,
                });
            }
        }
        Ok(EncodedDataset {
            graphs: encoded,
            networks: self.groups.iter().map(|r| r.network.clone()).collect(),
            samples,
        })
    }
}
