//! Trains the shipped PG and RG explainers and scores every explainer on held-out groups.
//!
//! ```text
//! cargo run -p fuselage-explain --example explainers -- train [lbdf|brr]...   # writes checkpoints/
//! cargo run -p fuselage-explain --example explainers -- train-pg [lbdf|brr]... # PG only (train-rg: RG)
//! cargo run -p fuselage-explain --example explainers -- evaluate [lbdf|brr]... # prints the table
//! ```
//!
//! `evaluate` prints the Markdown tables of `docs/explainers.md`. Each command works on the
//! explainers of the paper classifiers (`pg_lbdf`, ...) unless `--broad` is given: then on
//! those of the broad classifiers (`pg_lbdf_broad`, ...), trained on groups of the broad
//! data set's networks, and `evaluate` adds a table of transformer groups.

use anyhow::{Context, bail};
use fuselage_cost::CostModel;
use fuselage_explain::learned::{
    ExplainSet, ExplainSetConfig, GnnExplainer, GnnExplainerConfig, MaskOptimizer, PgConfig,
    PgExplainer, RgConfig, RgExplainer, evaluate_explainer, shipped_pg, shipped_rg,
};
use fuselage_explain::{CostExplainer, ExplainError, Explainer, Explanation, RandomExplainer};
use fuselage_gnn::{CostKind, FeatureSet, default_device, shipped_from, shipped_stem};
use fuselage_ir::{Graph, NodeSet};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// Training groups per network (nine networks).
const TRAIN_PER_NETWORK: usize = 64;
/// Held-out groups per network (resnet50, resnet152).
const HELD_OUT_PER_NETWORK: usize = 100;
/// Transformer groups per network (`ExplainSetConfig::transformers`, four networks).
const TRANSFORMER_PER_NETWORK: usize = 50;

/// Occlusion: an edge scores the fall of the classifier's logit when its messages alone are
/// removed (one batch of E + 1 copies of the group).
struct Occlusion(fuselage_gnn::GnnClassifier);

impl Explainer for Occlusion {
    fn name(&self) -> &str {
        "occlusion"
    }
    fn explain(
        &self,
        g: &Graph,
        group: &NodeSet,
        model: &dyn CostModel,
        _rng: &mut ChaCha8Rng,
    ) -> Result<Explanation, ExplainError> {
        let beta = model.config().buffer_bytes();
        let (order, edges) = fuselage_explain::group_edges(g, group)?;
        let gg = fuselage_gnn::GroupGraph::new(g, group)?;
        let e = edges.len();
        let masks: Vec<Vec<f32>> = (0..e)
            .map(|i| (0..e).map(|j| if i == j { 0.0 } else { 1.0 }).collect())
            .collect();
        let mut items = vec![(&gg, beta, None)];
        items.extend(masks.iter().map(|m| (&gg, beta, Some(m.as_slice()))));
        let z = self.0.logits(&items)?;
        let scores = z[1..].iter().map(|&zi| z[0] - zi).collect();
        Explanation::from_scores(
            "occlusion",
            &order,
            edges,
            scores,
            None,
            &fuselage_explain::Selection::default(),
        )
    }
}

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let features = if let Some(i) = args.iter().position(|a| a == "--broad") {
        args.remove(i);
        FeatureSet::Broad
    } else {
        FeatureSet::Paper
    };
    let Some(cmd) = args.first() else {
        bail!("usage: explainers train|train-pg|train-rg|evaluate [lbdf|brr]...");
    };
    let kinds: Vec<CostKind> = if args.len() > 1 {
        args[1..]
            .iter()
            .map(|a| {
                a.parse::<CostKind>()
                    .with_context(|| format!("no cost model {a}"))
            })
            .collect::<anyhow::Result<_>>()?
    } else {
        vec![CostKind::Lbdf, CostKind::Brr]
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("checkpoints");
    let device = default_device();
    for kind in kinds {
        let clf = shipped_from(kind, features, &device)?;
        let stem = shipped_stem(kind, features);
        match cmd.as_str() {
            "train" | "train-pg" | "train-rg" => {
                let set = ExplainSet::collect(
                    &ExplainSetConfig::training_for(features, 11, TRAIN_PER_NETWORK),
                    &clf,
                )?;
                eprintln!("{}: {} training groups", kind.name(), set.instances.len());
                if cmd != "train-rg" {
                    let (pg, report) =
                        PgExplainer::train(clf.clone(), &set, PgConfig::default(), |e| {
                            eprintln!(
                                "pg epoch {:2} loss {:.4} τ {:.2} {:.1} s",
                                e.epoch, e.loss, e.temperature, e.seconds
                            )
                        })?;
                    pg.save(dir.join(format!("pg_{stem}")), &report)?;
                }
                if cmd != "train-pg" {
                    let (rg, report) =
                        RgExplainer::train(clf.clone(), &set, RgConfig::default(), |e| {
                            eprintln!(
                                "rg epoch {:2} reward {:.4} nodes {:.1} kept {:.3} {:.1} s",
                                e.epoch, e.reward, e.nodes, e.kept_verdict, e.seconds
                            )
                        })?;
                    rg.save(dir.join(format!("rg_{stem}")), &report)?;
                }
            }
            "evaluate" => {
                let held = ExplainSet::collect(
                    &ExplainSetConfig::held_out(23, HELD_OUT_PER_NETWORK),
                    &clf,
                )?;
                let mut sets = vec![(
                    format!(
                        "{} classifier ({features}), {} held-out invalid groups (resnet50, resnet152)",
                        kind.name().to_uppercase(),
                        held.instances.len()
                    ),
                    held,
                )];
                if features == FeatureSet::Broad {
                    let t = ExplainSet::collect(
                        &ExplainSetConfig::transformers(29, TRANSFORMER_PER_NETWORK),
                        &clf,
                    )?;
                    sets.push((
                        format!(
                            "{} classifier ({features}), {} invalid transformer groups (vit_base_patch16_224, tinyllama_1_1b, bert_l4_h256, gpt2_l4_h256)",
                            kind.name().to_uppercase(),
                            t.instances.len()
                        ),
                        t,
                    ));
                }
                for (title, set) in &sets {
                    println!("\n### {title}\n");
                    println!(
                        "| explainer | fidelity+ ↑ | fidelity− ↓ | logit fidelity+ ↑ | logit fidelity− ↓ | sparsity | top cut lowers F_β | top cut valid | ms / group |"
                    );
                    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
                    let gnne = |config: GnnExplainerConfig| -> Box<dyn Explainer> {
                        Box::new(GnnExplainer::with_config(clf.clone(), config))
                    };
                    let default = GnnExplainerConfig::default();
                    let explainers: Vec<(&str, Box<dyn Explainer>)> = vec![
                        ("random", Box::new(RandomExplainer::default())),
                        ("cost", Box::new(CostExplainer::new())),
                        ("gnne (default: 100 epochs, SGD at 10)", gnne(default)),
                        (
                            "gnne (25 epochs, SGD at 10: the reproduction's)",
                            gnne(GnnExplainerConfig {
                                epochs: 25,
                                ..default
                            }),
                        ),
                        (
                            "gnne (100 epochs, SGD at 1)",
                            gnne(GnnExplainerConfig {
                                learning_rate: 1.0,
                                ..default
                            }),
                        ),
                        (
                            "gnne (100 epochs, Adam at 0.01: PyG's)",
                            gnne(GnnExplainerConfig {
                                optimizer: MaskOptimizer::Adam,
                                learning_rate: 0.01,
                                ..default
                            }),
                        ),
                        (
                            "gnne (100 epochs, Adam at 0.01, init 0, counterfactual 1)",
                            gnne(GnnExplainerConfig {
                                optimizer: MaskOptimizer::Adam,
                                learning_rate: 0.01,
                                init_mean: 0.0,
                                counterfactual_weight: 1.0,
                                ..default
                            }),
                        ),
                        ("occlusion", Box::new(Occlusion(clf.clone()))),
                        ("pg", Box::new(shipped_pg(clf.clone())?)),
                        ("rg", Box::new(shipped_rg(clf.clone())?)),
                    ];
                    // `ONLY=substring` evaluates just the explainers whose label contains it.
                    let only = std::env::var("ONLY").unwrap_or_default();
                    for (label, e) in explainers.iter().filter(|(l, _)| l.contains(&only)) {
                        let m = evaluate_explainer(e.as_ref(), &clf, set, 5)?;
                        println!(
                            "| {label} | {:.4} | {:.4} | {:.4} | {:.4} | {:.3} | {:.3} | {:.3} | {:.2} |",
                            m.fidelity_plus,
                            m.fidelity_minus,
                            m.logit_fidelity_plus,
                            m.logit_fidelity_minus,
                            m.sparsity,
                            m.top_cut_lowers,
                            m.top_cut_valid,
                            m.seconds_per_group * 1e3
                        );
                    }
                }
            }
            other => bail!("unknown command {other}: train, train-pg, train-rg or evaluate"),
        }
    }
    Ok(())
}
