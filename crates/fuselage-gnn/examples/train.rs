//! Generates the data set, trains the LBDF and BRR classifiers and writes checkpoints, learning
//! curves and a metrics summary.
//!
//! ```text
//! cargo run -p fuselage-gnn --example train -- [OUT_DIR] [EPOCHS] [lbdf|brr|both] [SCALE]
//!     [--broad] [--keep-out FAMILY,FAMILY]
//! ```
//!
//! - By default: the paper's data set and features (the paper checkpoints), scored on the
//!   held-out ResNet-50 and ResNet-152.
//! - `--broad`: the broad data set (`DatasetConfig::broad`) and features (the broad
//!   checkpoints), scored per network on the test split as well.
//! - `--broad --keep-out GPT-2,ConvNeXt`: the broad data set without those families
//!   (`FAMILIES`); the model is scored on every group of theirs, per family and per β.

use anyhow::{Result, bail};
use fuselage_gnn::*;
use std::io::Write;

/// Positional arguments and flags.
struct Args {
    out: std::path::PathBuf,
    epochs: usize,
    which: String,
    scale: f64,
    features: FeatureSet,
    keep_out: Vec<String>,
}

fn args() -> Result<Args> {
    let mut pos = Vec::new();
    let (mut broad, mut keep_out) = (false, Vec::new());
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--broad" => broad = true,
            "--keep-out" => {
                let Some(list) = it.next() else {
                    bail!("--keep-out needs a list of families, e.g. GPT-2,ConvNeXt");
                };
                keep_out = list.split(',').map(str::to_string).collect();
            }
            _ => pos.push(a),
        }
    }
    for f in &keep_out {
        if !FAMILIES.iter().any(|(name, _)| name == f) {
            let known: Vec<_> = FAMILIES.iter().map(|(n, _)| *n).collect();
            bail!(
                "--keep-out: unknown family `{f}` (known: {})",
                known.join(", ")
            );
        }
    }
    if !keep_out.is_empty() && !broad {
        bail!("--keep-out needs --broad (the families are in the broad data set)");
    }
    Ok(Args {
        out: pos.first().map_or("target/gnn-train".into(), Into::into),
        epochs: pos.get(1).map_or(Ok(50), |s| s.parse())?,
        which: pos.get(2).cloned().unwrap_or_else(|| "both".into()),
        scale: pos.get(3).map_or(Ok(1.0), |s| s.parse())?,
        features: if broad {
            FeatureSet::Broad
        } else {
            FeatureSet::Paper
        },
        keep_out,
    })
}

/// `groups` of `data` at each β, and all together, as confusion matrices.
fn by_beta(
    clf: &GnnClassifier,
    data: &EncodedDataset,
    keep: impl Fn(&Sample) -> bool,
) -> Result<Vec<(String, Confusion)>> {
    let mut out = Vec::new();
    for kib in std::iter::once(None).chain(BETAS_KIB.map(Some)) {
        let sub = EncodedDataset {
            samples: data
                .samples
                .iter()
                .filter(|s| keep(s) && kib.is_none_or(|k| s.beta_bytes == k * 1024))
                .cloned()
                .collect(),
            ..data.clone()
        };
        let label = kib.map_or("all".to_string(), |k| format!("{k}KiB"));
        out.push((label, evaluate(clf, &sub)?));
    }
    Ok(out)
}

fn main() -> Result<()> {
    let a = args()?;
    std::fs::create_dir_all(&a.out)?;
    let t = std::time::Instant::now();
    let ds_path = a.out.join("dataset.jsonl");
    let config = DatasetConfig::of(a.features, 0).times(a.scale);
    let full = match Dataset::load(&ds_path) {
        Ok(ds) if ds.config == config => ds,
        _ => {
            let ds = generate_dataset(&config)?;
            ds.save(&ds_path)?;
            ds
        }
    };
    let kept_nets = family_networks(&a.keep_out.iter().map(String::as_str).collect::<Vec<_>>());
    let (kept, ds) = full.partition(&kept_nets);
    let nodes: usize = ds.groups.iter().map(|g| g.nodes.len()).sum();
    println!(
        "dataset: {} groups for training ({} kept out), {} samples per model, mean {:.1} nodes, {:.1}s",
        ds.groups.len(),
        kept.groups.len(),
        ds.samples_per_model(),
        nodes as f64 / ds.groups.len().max(1) as f64,
        t.elapsed().as_secs_f64()
    );
    for kind in CostKind::PAPER {
        let inv = ds
            .groups
            .iter()
            .flat_map(|g| g.valid(kind).iter())
            .filter(|v| !**v)
            .count();
        println!(
            "{}: {inv} invalid of {}",
            kind.name(),
            ds.samples_per_model()
        );
    }
    let held = generate_dataset(&DatasetConfig::held_out(1, 1500))?;
    held.save(a.out.join("held_out.jsonl"))?;
    let device = default_device();
    for kind in CostKind::PAPER {
        if a.which != "both" && a.which != kind.name() {
            continue;
        }
        let mut cfg = TrainConfig::of(a.features, kind);
        cfg.epochs = a.epochs;
        let (clf, report) = train(&cfg, &ds, &device, |e| {
            println!(
                "{} epoch {:>2} loss {:.4} acc {:.4} | val loss {:.4} acc {:.4} f1 {:.4} | lr {:.2e} {:.0}s",
                kind.name(),
                e.epoch,
                e.train_loss,
                e.train_accuracy,
                e.val_loss,
                e.val_accuracy,
                e.val_f1,
                e.learning_rate,
                e.seconds
            );
            std::io::stdout().flush().ok();
        })?;
        let mut metrics = serde_json::Map::new();
        metrics.insert("test".into(), serde_json::to_value(report.test)?);
        metrics.insert("test_accuracy".into(), report.test.accuracy().into());
        metrics.insert("test_f1".into(), report.test.f1().into());
        metrics.insert("val".into(), serde_json::to_value(report.val)?);
        let held_enc = held.encode(kind)?;
        for net in HELD_OUT_NETWORKS {
            let mut sub = held_enc.clone();
            sub.samples.retain(|s| held_enc.networks[s.group] == net);
            let c = evaluate(&clf, &sub)?;
            println!(
                "{} held-out {net}: acc {:.4} f1 {:.4} {:?}",
                kind.name(),
                c.accuracy(),
                c.f1(),
                c
            );
            metrics.insert(net.to_string(), serde_json::to_value(c)?);
            metrics.insert(format!("{net}_accuracy"), c.accuracy().into());
        }
        if !kept.groups.is_empty() {
            let enc = kept.encode(kind)?;
            for (family, nets) in FAMILIES
                .iter()
                .filter(|(f, _)| a.keep_out.iter().any(|k| k == f))
            {
                for (label, c) in by_beta(&clf, &enc, |s| {
                    nets.contains(&enc.networks[s.group].as_str())
                })? {
                    println!(
                        "{} kept out {family} {label}: acc {:.4} f1 {:.4} {:?}",
                        kind.name(),
                        c.accuracy(),
                        c.f1(),
                        c
                    );
                    metrics.insert(
                        format!("kept_out_{family}_{label}"),
                        serde_json::to_value(c)?,
                    );
                }
            }
        }
        metrics.insert("best_epoch".into(), report.best_epoch.into());
        metrics.insert("seconds".into(), report.seconds.into());
        metrics.insert("sizes".into(), serde_json::to_value(report.sizes)?);
        metrics.insert("train_config".into(), serde_json::to_value(&report.config)?);
        println!(
            "{} test: acc {:.4} f1 {:.4} {:?} best epoch {} in {:.0}s",
            kind.name(),
            report.test.accuracy(),
            report.test.f1(),
            report.test,
            report.best_epoch,
            report.seconds
        );
        save_checkpoint(&clf, a.out.join(kind.name()), metrics)?;
        std::fs::write(
            a.out.join(format!("{}_curve.csv", kind.name())),
            curve_csv(&report.curve),
        )?;
        plot_curve(
            &report.curve,
            &format!("{} classifier", kind.name()),
            a.out.join(format!("{}_curve.svg", kind.name())),
        )?;
    }
    Ok(())
}
