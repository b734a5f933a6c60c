//! [`RgExplainer`] (Shan et al. 2021): a seed locator and a policy that grows a connected
//! subgraph, trained by policy gradient.

use super::checkpoint::{self, Trained};
use super::pg::{HostEmbeddings, linear_bias, relu_f32};
use super::{ExplainSet, device_batch, host, logit_temperature};
use crate::ExplainerKind;
use crate::error::{ExplainError, Result};
use crate::explanation::Selection;
use burn::nn::{Linear, LinearConfig};
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::{log_softmax, relu};
use fuselage_gnn::{ExplainableModel, GnnClassifier, GroupGraph};
use fuselage_ir::{NodeId, NodeSet};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::path::Path;
use std::time::Instant;

/// RG-Explainer's settings. Epochs as in the paper (10).
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RgConfig {
    /// Hidden width of the locator and policy MLPs.
    pub hidden: usize,
    /// Passes over the training groups (one episode per group per epoch).
    pub epochs: usize,
    /// Episodes per optimiser step.
    pub batch_size: usize,
    /// Adam's learning rate.
    pub learning_rate: f64,
    /// Largest subgraph grown (nodes).
    pub max_nodes: usize,
    /// Penalty per share of the group's nodes in the subgraph.
    pub size_weight: f32,
    /// Penalty per share of the group's nodes in the subgraph's radius around its seed.
    pub radius_weight: f32,
    /// Seed of the initial weights, the shuffles and the sampled episodes.
    pub seed: u64,
    /// How many edges are selected.
    pub selection: Selection,
}

impl Default for RgConfig {
    fn default() -> Self {
        RgConfig {
            hidden: 64,
            epochs: 10,
            batch_size: 16,
            learning_rate: 0.003,
            max_nodes: 24,
            size_weight: 1.0,
            radius_weight: 0.5,
            seed: 0,
            selection: Selection::default(),
        }
    }
}

/// The seed locator and the growth policy.
#[derive(Module, Debug)]
pub struct RgPolicy {
    loc_node: Linear,
    loc_graph: Linear,
    loc_out: Linear,
    cand_node: Linear,
    cand_set: Linear,
    cand_graph: Linear,
    cand_out: Linear,
    stop_set: Linear,
    stop_graph: Linear,
    stop_out: Linear,
}

impl RgPolicy {
    fn init(embed: usize, hidden: usize, device: &Device) -> Self {
        let lin = |i, o| LinearConfig::new(i, o).init(device);
        let nob = |i, o| LinearConfig::new(i, o).with_bias(false).init(device);
        RgPolicy {
            loc_node: lin(embed, hidden),
            loc_graph: nob(embed, hidden),
            loc_out: lin(hidden, 1),
            cand_node: lin(embed, hidden),
            cand_set: nob(embed, hidden),
            cand_graph: nob(embed, hidden),
            cand_out: lin(hidden, 1),
            stop_set: lin(embed, hidden),
            stop_graph: nob(embed, hidden),
            stop_out: lin(hidden, 1),
        }
    }
}

/// What one rollout produced.
struct Rollout {
    /// Local node indices in the order they joined.
    nodes: Vec<usize>,
    /// Log-probability of every action taken (seed, growths, stop).
    logp: Option<Tensor<1>>,
    /// Locator scores of every node (softmax), for the node scores outside the subgraph.
    locator: Vec<f32>,
    /// Radius of the subgraph around its seed (hops inside it).
    radius: usize,
}

/// One group's embeddings on the host and as tensors.
struct Embedded {
    /// `[n, H]`.
    nodes: Tensor<2>,
    /// `[1, H]`.
    graph: Tensor<2>,
    /// Row-major copy of `nodes`.
    host_nodes: Vec<f32>,
    width: usize,
    /// Undirected neighbours by local index.
    adj: Vec<Vec<usize>>,
}

impl Embedded {
    fn set_mean(&self, set: &[usize], device: &Device) -> Tensor<2> {
        let mut m = vec![0.0f32; self.width];
        for &v in set {
            for (a, b) in m
                .iter_mut()
                .zip(&self.host_nodes[v * self.width..(v + 1) * self.width])
            {
                *a += b;
            }
        }
        let k = set.len().max(1) as f32;
        m.iter_mut().for_each(|a| *a /= k);
        Tensor::<2>::from_data(TensorData::new(m, [1, self.width]), device)
    }
}

/// What every growth step of a rollout reads and no step changes: the candidate and stop
/// terms of the nodes and of the group, as tensors and (for the host path) on the host.
struct Step {
    cand_node: Tensor<2>,
    cand_graph: Tensor<2>,
    stop_graph: Tensor<2>,
    /// `cand_node`, `[n, hidden]` row-major.
    cand_node_host: Vec<f32>,
    /// `cand_graph`, `[hidden]`.
    cand_graph_host: Vec<f32>,
    /// `stop_graph`, `[hidden]`.
    stop_graph_host: Vec<f32>,
    /// The biases of `cand_out`, `stop_set` and `stop_out` (`cand_set` has none).
    cand_out_bias: Vec<f32>,
    stop_set_bias: Vec<f32>,
    stop_out_bias: Vec<f32>,
}

impl Step {
    fn new(policy: &RgPolicy, emb: &Embedded) -> Result<Self> {
        let cand_node = policy.cand_node.forward(emb.nodes.clone());
        let cand_graph = policy.cand_graph.forward(emb.graph.clone());
        let stop_graph = policy.stop_graph.forward(emb.graph.clone());
        Ok(Step {
            cand_node_host: host(cand_node.clone())?,
            cand_graph_host: host(cand_graph.clone())?,
            stop_graph_host: host(stop_graph.clone())?,
            cand_out_bias: linear_bias(&policy.cand_out)?,
            stop_set_bias: linear_bias(&policy.stop_set)?,
            stop_out_bias: linear_bias(&policy.stop_out)?,
            cand_node,
            cand_graph,
            stop_graph,
        })
    }

    /// The log-probabilities of adding each node (`-1e9` added to non-candidates) and of
    /// stopping (last), `[n + 1]`, given the set's mean embedding `z_set`.
    fn log_probs(
        &self,
        policy: &RgPolicy,
        z_set: Tensor<2>,
        is_cand: &[bool],
        device: &Device,
    ) -> Tensor<1> {
        let n = is_cand.len();
        let cand = policy.cand_out.forward(relu(
            self.cand_node.clone()
                + policy.cand_set.forward(z_set.clone())
                + self.cand_graph.clone(),
        ));
        let stop = policy.stop_out.forward(relu(
            policy.stop_set.forward(z_set) + self.stop_graph.clone(),
        ));
        let penalty: Vec<f32> = is_cand
            .iter()
            .map(|&c| if c { 0.0 } else { -1e9 })
            .chain([0.0])
            .collect();
        let penalty = Tensor::<1>::from_data(TensorData::new(penalty, [n + 1]), device);
        let scores = Tensor::cat(vec![cand.reshape([n]), stop.reshape([1])], 0) + penalty;
        log_softmax(scores, 0)
    }

    /// [`log_probs`](Self::log_probs) on the host, to the bit. The matrix products run on
    /// `device`, as the linear layers run them (a layer is its weight's product, then its
    /// bias added); everything else (the biases, the sums with the node and group terms, the
    /// ReLUs, the penalty, the log-softmax) is the backend's `f32` operation in its order,
    /// without a tensor, an allocation and a dispatch each (the candidates' `[n, hidden]`
    /// sums alone were two broadcasting adds and a ReLU per step).
    fn log_probs_host(
        &self,
        policy: &RgPolicy,
        z_set: Tensor<2>,
        is_cand: &[bool],
        device: &Device,
    ) -> Result<Vec<f32>> {
        let n = is_cand.len();
        // cand_out(ReLU(cand_node + cand_set(z) + cand_graph)); cand_set has no bias.
        let set = host(z_set.clone().matmul(policy.cand_set.weight.val()))?;
        let hidden = set.len();
        let mut pre = Vec::with_capacity(n * hidden);
        for row in self.cand_node_host.chunks_exact(hidden.max(1)) {
            pre.extend(
                row.iter()
                    .zip(&set)
                    .zip(&self.cand_graph_host)
                    .map(|((&a, &b), &c)| relu_f32((a + b) + c)),
            );
        }
        let pre = Tensor::<2>::from_data(TensorData::new(pre, [n, hidden]), device);
        let cand = host(pre.matmul(policy.cand_out.weight.val()))?;
        // stop_out(ReLU(stop_set(z) + stop_graph)).
        let stop_set = host(z_set.matmul(policy.stop_set.weight.val()))?;
        let stop_pre: Vec<f32> = stop_set
            .iter()
            .zip(&self.stop_set_bias)
            .zip(&self.stop_graph_host)
            .map(|((&a, &b), &c)| relu_f32((a + b) + c))
            .collect();
        let stop_pre = Tensor::<2>::from_data(TensorData::new(stop_pre, [1, hidden]), device);
        let stop = host(stop_pre.matmul(policy.stop_out.weight.val()))?[0] + self.stop_out_bias[0];
        let scores: Vec<f32> = cand
            .iter()
            .zip(is_cand)
            .map(|(&c, &ok)| (c + self.cand_out_bias[0]) + if ok { 0.0 } else { -1e9 })
            .chain([stop + 0.0])
            .collect();
        Ok(log_softmax_host(&scores))
    }
}

/// `log_softmax` of a vector as burn's CPU backend computes it: the maximum (NaN wins), the
/// shifted values, the sum of their exponentials in order, its logarithm subtracted.
fn log_softmax_host(x: &[f32]) -> Vec<f32> {
    let mut max = x.first().copied().unwrap_or(0.0);
    for &v in x {
        if v.is_nan() {
            max = f32::NAN;
            break;
        }
        if v > max {
            max = v;
        }
    }
    let shifted: Vec<f32> = x.iter().map(|&v| v - max).collect();
    let sum: f32 = shifted.iter().map(|&v| v.exp()).sum();
    let log_sum = sum.ln();
    shifted.iter().map(|&v| v - log_sum).collect()
}

/// How a rollout picks its actions.
enum Pick<'r> {
    Sample(&'r mut ChaCha8Rng),
    Greedy,
}

impl Pick<'_> {
    fn choose(&mut self, logp: &[f32]) -> usize {
        match self {
            Pick::Greedy => {
                logp.iter()
                    .enumerate()
                    .fold(
                        (0, f32::NEG_INFINITY),
                        |b, (i, &x)| if x > b.1 { (i, x) } else { b },
                    )
                    .0
            }
            Pick::Sample(rng) => {
                let u: f32 = rng.random();
                let mut acc = 0.0;
                let mut last = 0;
                for (i, &x) in logp.iter().enumerate() {
                    let p = x.exp();
                    if p > 0.0 {
                        last = i;
                    }
                    acc += p;
                    if u < acc {
                        return i;
                    }
                }
                last
            }
        }
    }
}

/// Radius of `set` around `seed`, in hops inside the set.
fn radius(adj: &[Vec<usize>], set: &[usize], seed: usize) -> usize {
    let mut inside = vec![false; adj.len()];
    set.iter().for_each(|&v| inside[v] = true);
    let mut dist = vec![usize::MAX; adj.len()];
    dist[seed] = 0;
    let mut q = VecDeque::from([seed]);
    let mut far = 0;
    while let Some(v) = q.pop_front() {
        far = far.max(dist[v]);
        for &w in &adj[v] {
            if inside[w] && dist[w] == usize::MAX {
                dist[w] = dist[v] + 1;
                q.push_back(w);
            }
        }
    }
    far
}

/// One epoch of RG-Explainer training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RgEpoch {
    /// 1-based.
    pub epoch: usize,
    /// Mean reward of the sampled episodes.
    pub reward: f64,
    /// Mean subgraph size (nodes).
    pub nodes: f64,
    /// Share of episodes whose subgraph the classifier still calls invalid.
    pub kept_verdict: f64,
    /// Seconds since training started.
    pub seconds: f64,
}

/// What RG-Explainer training did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RgReport {
    /// Groups trained on.
    pub instances: usize,
    /// Every epoch.
    pub epochs: Vec<RgEpoch>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// RG-Explainer over a classifier (any [`ExplainableModel`], by default the shipped
/// [`GnnClassifier`]). A seed locator scores every node of the group from the
/// classifier's embeddings; from the best seed a policy adds one neighbouring node at a time,
/// or stops, so the explanation is a connected subgraph. Trained by REINFORCE
/// ([`RgExplainer::train`]) with the reward
///
/// `log σ(z(S)/T) − λ_size·|S|/n − λ_radius·radius(S)/n`,
///
/// where `z(S)` is the classifier's "invalid" logit on the subgraph as a group of its own: the
/// explanation is the smallest, tightest part of the group that is still too big. Explaining
/// is a greedy rollout. Edges inside the subgraph score highest (earlier joined, higher), the
/// rest by the locator.
pub struct RgExplainer<M = GnnClassifier> {
    clf: M,
    policy: RgPolicy,
    config: RgConfig,
}

impl<M: ExplainableModel> RgExplainer<M> {
    fn embed(clf: &M, gg: &GroupGraph, beta: u64) -> Result<Embedded> {
        let batch = device_batch(clf, &[(gg, beta)])?;
        // `pg::embeddings` of this one group, computed on the host (the same bits).
        let emb = HostEmbeddings::new(clf, &batch)?;
        let (n, width) = (gg.len(), emb.width);
        let device = clf.device();
        let nodes = Tensor::<2>::from_data(TensorData::new(emb.nodes.clone(), [n, width]), device);
        let graph = Tensor::<2>::from_data(TensorData::new(emb.graph, [1, width]), device);
        let host_nodes = emb.nodes;
        let mut adj = vec![Vec::new(); gg.len()];
        for &(u, v) in &gg.edges {
            adj[u as usize].push(v as usize);
            adj[v as usize].push(u as usize);
        }
        Ok(Embedded {
            nodes,
            graph,
            host_nodes,
            width,
            adj,
        })
    }

    fn rollout(
        policy: &RgPolicy,
        emb: &Embedded,
        max_nodes: usize,
        mut pick: Pick<'_>,
        device: &Device,
    ) -> Result<Rollout> {
        let n = emb.adj.len();
        let track = matches!(pick, Pick::Sample(_));
        let loc = policy.loc_out.forward(relu(
            policy.loc_node.forward(emb.nodes.clone())
                + policy.loc_graph.forward(emb.graph.clone()),
        ));
        let loc_logp = log_softmax(loc.reshape([n]), 0);
        let loc_host = host(loc_logp.clone())?;
        let seed = pick.choose(&loc_host);
        let mut logp = track.then(|| loc_logp.clone().narrow(0, seed, 1));
        let step = Step::new(policy, emb)?;
        let mut set = vec![seed];
        let mut inside = vec![false; n];
        inside[seed] = true;
        while set.len() < max_nodes.min(n) {
            let mut is_cand = vec![false; n];
            for &v in &set {
                for &w in &emb.adj[v] {
                    is_cand[w] = !inside[w];
                }
            }
            if !is_cand.iter().any(|&c| c) {
                break;
            }
            let z_set = emb.set_mean(&set, device);
            let a = match logp.as_mut() {
                // Training: the log-probabilities as tensors, to back-propagate through.
                Some(l) => {
                    let step_logp = step.log_probs(policy, z_set, &is_cand, device);
                    let a = pick.choose(&host(step_logp.clone())?);
                    *l = l.clone() + step_logp.narrow(0, a, 1);
                    a
                }
                // Explaining: the same values, with the small ops on the host.
                None => pick.choose(&step.log_probs_host(policy, z_set, &is_cand, device)?),
            };
            if a == n {
                break;
            }
            set.push(a);
            inside[a] = true;
        }
        let locator = loc_host.iter().map(|x| x.exp()).collect();
        let radius = radius(&emb.adj, &set, seed);
        Ok(Rollout {
            nodes: set,
            logp,
            locator,
            radius,
        })
    }

    /// Trains an explainer for `clf` on `set`'s groups, calling `progress` after each epoch.
    ///
    /// # Errors
    /// [`ExplainError::Config`] for an empty set or zero epochs, batch size or subgraph size;
    /// classifier errors.
    pub fn train(
        clf: M,
        set: &ExplainSet,
        config: RgConfig,
        mut progress: impl FnMut(&RgEpoch),
    ) -> Result<(Self, RgReport)> {
        config.selection.check()?;
        if set.instances.is_empty()
            || config.epochs == 0
            || config.batch_size == 0
            || config.max_nodes == 0
        {
            return Err(ExplainError::Config(
                "RG-Explainer training needs groups, epochs, a batch size and a subgraph size"
                    .into(),
            ));
        }
        let start = Instant::now();
        let ad = clf.device().clone().autodiff();
        ad.seed(config.seed);
        let mut policy = Self::init_net(&clf, &config, &ad);
        let mut optim = AdamConfig::new().init();
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ 0x76);
        let embedded: Vec<Embedded> = set
            .instances
            .iter()
            .map(|i| Self::embed(&clf, &i.encoded, i.config.buffer_bytes()))
            .collect::<Result<_>>()?;
        let mut order: Vec<usize> = (0..set.instances.len()).collect();
        let mut baseline: Option<f64> = None;
        let mut epochs = Vec::with_capacity(config.epochs);
        for epoch in 1..=config.epochs {
            order.shuffle(&mut rng);
            let (mut r_sum, mut n_sum, mut kept) = (0.0, 0.0, 0usize);
            for chunk in order.chunks(config.batch_size) {
                let mut rolls = Vec::with_capacity(chunk.len());
                for &i in chunk {
                    let r = Self::rollout(
                        &policy,
                        &embedded[i],
                        config.max_nodes,
                        Pick::Sample(&mut rng),
                        &ad,
                    )?;
                    rolls.push(r);
                }
                let subs: Vec<GroupGraph> = chunk
                    .iter()
                    .zip(&rolls)
                    .map(|(&i, r)| subgraph(set, i, &r.nodes))
                    .collect::<Result<_>>()?;
                let items: Vec<_> = chunk
                    .iter()
                    .zip(&subs)
                    .map(|(&i, s)| (s, set.instances[i].config.buffer_bytes(), None))
                    .collect();
                let z = clf.logits(&items)?;
                let mut loss: Option<Tensor<1>> = None;
                for ((&i, r), &zs) in chunk.iter().zip(&rolls).zip(&z) {
                    let inst = &set.instances[i];
                    let n = inst.encoded.len() as f32;
                    let t = logit_temperature(inst.logit);
                    let keep = -softplus_host(-zs / t);
                    let reward = f64::from(
                        keep - config.size_weight * r.nodes.len() as f32 / n
                            - config.radius_weight * r.radius as f32 / n,
                    );
                    r_sum += reward;
                    n_sum += r.nodes.len() as f64;
                    kept += usize::from(zs > 0.0);
                    let adv = reward - baseline.unwrap_or(reward);
                    if let Some(l) = &r.logp {
                        let term = l.clone().mul_scalar(-adv as f32);
                        loss = Some(match loss {
                            None => term,
                            Some(acc) => acc + term,
                        });
                    }
                    baseline = Some(match baseline {
                        None => reward,
                        Some(b) => 0.95 * b + 0.05 * reward,
                    });
                }
                if let Some(l) = loss {
                    let l = l.div_scalar(chunk.len() as f32);
                    let grads = GradientsParams::from_grads(l.backward(), &policy);
                    policy = optim.step(config.learning_rate, policy, grads);
                }
            }
            let m = set.instances.len() as f64;
            let stats = RgEpoch {
                epoch,
                reward: r_sum / m,
                nodes: n_sum / m,
                kept_verdict: kept as f64 / m,
                seconds: start.elapsed().as_secs_f64(),
            };
            progress(&stats);
            epochs.push(stats);
        }
        let report = RgReport {
            instances: set.instances.len(),
            epochs,
            seconds: start.elapsed().as_secs_f64(),
        };
        Ok((
            RgExplainer {
                clf,
                policy: policy.valid(),
                config,
            },
            report,
        ))
    }

    /// The settings.
    pub fn config(&self) -> &RgConfig {
        &self.config
    }

    /// The greedy subgraph (local node indices, in the order they joined) and the node scores
    /// of an encoded group at `beta_bytes`.
    ///
    /// # Errors
    /// Classifier errors.
    pub fn grow(&self, gg: &GroupGraph, beta_bytes: u64) -> Result<(Vec<usize>, Vec<f32>)> {
        let emb = Self::embed(&self.clf, gg, beta_bytes)?;
        let r = Self::rollout(
            &self.policy,
            &emb,
            self.config.max_nodes,
            Pick::Greedy,
            self.clf.device(),
        )?;
        let top = r.locator.iter().copied().fold(f32::MIN_POSITIVE, f32::max);
        let mut scores: Vec<f32> = r.locator.iter().map(|p| 0.5 * p / top).collect();
        let k = r.nodes.len() as f32;
        for (rank, &v) in r.nodes.iter().enumerate() {
            scores[v] = 1.0 - 0.5 * rank as f32 / k;
        }
        Ok((r.nodes, scores))
    }

    /// Edge scores (edge order) of an encoded group: the mean score of the two ends.
    ///
    /// # Errors
    /// Classifier errors.
    pub fn scores(&self, gg: &GroupGraph, beta_bytes: u64) -> Result<Vec<f32>> {
        let (_, nodes) = self.grow(gg, beta_bytes)?;
        Ok(edge_means(gg, &nodes))
    }

    /// Saves the explainer as `<stem>.bpk` and `<stem>.json` with its training report.
    ///
    /// # Errors
    /// [`ExplainError::Checkpoint`].
    pub fn save(&self, stem: impl AsRef<Path>, report: &RgReport) -> Result<()> {
        checkpoint::save(self, stem.as_ref(), report)
    }

    /// Loads a checkpoint written by [`save`](Self::save) for `clf`.
    ///
    /// # Errors
    /// [`ExplainError::Checkpoint`] for missing or mismatched files.
    pub fn load(stem: impl AsRef<Path>, clf: M) -> Result<Self> {
        checkpoint::load(stem.as_ref(), clf)
    }
}

impl<M: ExplainableModel> Trained<M> for RgExplainer<M> {
    const KIND: ExplainerKind = ExplainerKind::Rg;
    type Config = RgConfig;
    type Net = RgPolicy;

    fn hidden(config: &RgConfig) -> usize {
        config.hidden
    }

    fn init_net(clf: &M, config: &RgConfig, device: &Device) -> RgPolicy {
        RgPolicy::init(clf.embedding_dim(), config.hidden, device)
    }

    fn assemble(clf: M, policy: RgPolicy, config: RgConfig) -> Self {
        RgExplainer {
            clf,
            policy,
            config,
        }
    }

    fn parts(&self) -> (&M, &RgPolicy, &RgConfig) {
        (&self.clf, &self.policy, &self.config)
    }

    fn edge_scores(&self, gg: &GroupGraph, beta_bytes: u64) -> Result<Vec<f32>> {
        self.scores(gg, beta_bytes)
    }
}

fn softplus_host(x: f32) -> f32 {
    if x > 20.0 { x } else { x.exp().ln_1p() }
}

/// The subgraph of instance `i` on local nodes `nodes`, encoded as a group of its own.
fn subgraph(set: &ExplainSet, i: usize, nodes: &[usize]) -> Result<GroupGraph> {
    let inst = &set.instances[i];
    let g = set.graph_of(inst);
    let ids: Vec<NodeId> = nodes.iter().map(|&v| inst.encoded.nodes[v]).collect();
    Ok(GroupGraph::new(g, &NodeSet::from_ids(g.len(), ids))?)
}

/// The RG-Explainer shipped for `clf`'s cost model.
///
/// # Errors
/// [`ExplainError::Checkpoint`] if none was shipped or it does not fit `clf`.
pub fn shipped_rg<M: ExplainableModel>(clf: M) -> Result<RgExplainer<M>> {
    checkpoint::shipped(clf)
}

/// Edge scores (edge order) from node scores: the mean score of the two ends.
fn edge_means(gg: &GroupGraph, nodes: &[f32]) -> Vec<f32> {
    gg.edges
        .iter()
        .map(|&(u, v)| 0.5 * (nodes[u as usize] + nodes[v as usize]))
        .collect()
}

learned_explainer!(RgExplainer = "rg", |x, gg, beta, _rng| {
    let (_, nodes) = x.grow(gg, beta)?;
    Ok((edge_means(gg, &nodes), Some(nodes)))
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_step_is_the_tensor_step_to_the_bit() {
        let device = fuselage_gnn::default_device();
        let (g, groups) = fuselage_gnn::probe_groups().unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        for kind in [fuselage_gnn::CostKind::Lbdf, fuselage_gnn::CostKind::Brr] {
            let x = shipped_rg(fuselage_gnn::shipped(kind, &device).unwrap()).unwrap();
            for s in &groups {
                let gg = GroupGraph::new(&g, s).unwrap();
                let emb = RgExplainer::embed(&x.clf, &gg, fuselage_gnn::PROBE_BETA).unwrap();
                let step = Step::new(&x.policy, &emb).unwrap();
                let n = gg.len();
                for _ in 0..4 {
                    let set: Vec<usize> = (0..n).filter(|_| rng.random_bool(0.4)).collect();
                    let set = if set.is_empty() { vec![0] } else { set };
                    let is_cand: Vec<bool> = (0..n)
                        .map(|v| !set.contains(&v) && rng.random_bool(0.7))
                        .collect();
                    let z = emb.set_mean(&set, &device);
                    let tensor = host(step.log_probs(&x.policy, z.clone(), &is_cand, &device));
                    let ours = step.log_probs_host(&x.policy, z, &is_cand, &device);
                    let bits = |v: Vec<f32>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(ours.unwrap()), bits(tensor.unwrap()), "{kind:?}");
                }
            }
        }
    }
}
