//! Generates the data set, trains the LBDF and BRR classifiers and writes checkpoints, learning
//! curves and a metrics summary.
//!
//! `cargo run -p fuselage-gnn --example train -- [OUT_DIR] [EPOCHS] [lbdf|brr|both] [SCALE]`

use anyhow::Result;
use fuselage_gnn::*;
use std::io::Write;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out = std::path::PathBuf::from(args.get(1).map_or("target/gnn-train", |s| s.as_str()));
    let epochs: usize = args.get(2).map_or(Ok(50), |s| s.parse())?;
    let which = args.get(3).map_or("both", |s| s.as_str());
    let scale: f64 = args.get(4).map_or(Ok(1.0), |s| s.parse())?;
    std::fs::create_dir_all(&out)?;
    let t = std::time::Instant::now();
    let ds_path = out.join("dataset.jsonl");
    let ds = if ds_path.exists() && scale == 1.0 {
        Dataset::load(&ds_path)?
    } else {
        let ds = generate_dataset(&DatasetConfig::scaled(0, scale))?;
        ds.save(&ds_path)?;
        ds
    };
    let nodes: usize = ds.groups.iter().map(|g| g.nodes.len()).sum();
    println!(
        "dataset: {} groups, {} samples per model, mean {:.1} nodes, {:.1}s",
        ds.groups.len(),
        ds.samples_per_model(),
        nodes as f64 / ds.groups.len() as f64,
        t.elapsed().as_secs_f64()
    );
    for kind in CostKind::ALL {
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
    held.save(out.join("held_out.jsonl"))?;
    let device = default_device();
    for kind in CostKind::ALL {
        if which != "both" && which != kind.name() {
            continue;
        }
        let mut cfg = TrainConfig::paper(kind);
        cfg.epochs = epochs;
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
        let held_enc = held.encode(kind)?;
        let mut metrics = serde_json::Map::new();
        metrics.insert("test".into(), serde_json::to_value(report.test)?);
        metrics.insert("test_accuracy".into(), report.test.accuracy().into());
        metrics.insert("test_f1".into(), report.test.f1().into());
        metrics.insert("val".into(), serde_json::to_value(report.val)?);
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
        save_checkpoint(&clf, out.join(kind.name()), metrics)?;
        std::fs::write(
            out.join(format!("{}_curve.csv", kind.name())),
            curve_csv(&report.curve),
        )?;
        plot_curve(
            &report.curve,
            &format!("{} classifier", kind.name()),
            out.join(format!("{}_curve.svg", kind.name())),
        )?;
    }
    Ok(())
}
