//! `fuselage dataset`, `fuselage train` and `fuselage classify`: the GNN validity classifier.

use crate::common::GroupArgs;
use crate::files::{
    Files, Kind, check_output_folder, read, read_text, shown, with_ext, write, write_stem_with,
    write_with,
};
use crate::registry::Registry;
use anyhow::Context;
use clap::Args;
use fuselage::cost::CostKind;
use fuselage::gnn::{
    Checkpoint, CheckpointMeta, Dataset, DatasetConfig, FeatureSet, GnnClassifier, MAX_EPOCHS,
    TrainConfig, ValidityModel, classifier_from_bytes, curve_csv, default_device, generate_dataset,
    plot_curve, save_checkpoint, shipped, train,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::path::PathBuf;

/// Arguments of `fuselage dataset`.
#[derive(Debug, Args)]
pub struct DatasetCmd {
    /// Seed of the random searches that collect the groups.
    #[arg(long, allow_hyphen_values = true, default_value = "0")]
    seed: u64,
    /// Fraction of the group counts per network (1 = about 10,800 groups for the paper's
    /// data set, 17,900 for the broad one).
    #[arg(long, default_value = "1.0")]
    scale: f64,
    /// Whose data set: the `broad` classifiers' (the paper's nine CNNs, then transformers and
    /// post-2020 CNNs) or the `paper` ones' (the nine CNNs alone).
    #[arg(long, value_name = "SET", default_value = "broad")]
    features: FeatureSet,
    /// Where to write the data set (JSON lines; `-`: standard output).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

pub fn dataset(a: DatasetCmd) -> anyhow::Result<()> {
    if a.scale.is_nan() || a.scale <= 0.0 {
        anyhow::bail!("--scale must be above 0, got {}", a.scale);
    }
    Files::new().output("--out", Some(&a.out)).check()?;
    let cfg = DatasetConfig::of(a.features, a.seed).times(a.scale);
    let ds = generate_dataset(&cfg)?;
    write_with("--out", &a.out, |tmp| Ok(ds.save(tmp)?))?;
    outln!(
        "wrote {}: {} groups, {} labelled samples per cost model (β = 128 ... 2048 KiB)",
        shown(&a.out),
        ds.groups.len(),
        ds.samples_per_model()
    )?;
    Ok(())
}

/// Arguments of `fuselage train`.
#[derive(Debug, Args)]
pub struct TrainCmd {
    /// Cost model whose validity labels are learnt: lbdf or brr (not tiled).
    #[arg(long, value_name = "MODEL")]
    fusion: CostKind,
    /// A data set written by `fuselage dataset` (default: generate the one of `--features`).
    #[arg(long, value_name = "FILE")]
    dataset: Option<PathBuf>,
    /// Node features: `broad` (op classes and row-axis sizes too, what the default shipped
    /// classifiers read) or `paper`.
    #[arg(long, value_name = "SET", default_value = "broad")]
    features: FeatureSet,
    /// Epochs, 1 to 100000 (`fuselage::gnn::MAX_EPOCHS`).
    #[arg(long, default_value = "50", value_parser = clap::value_parser!(u64).range(1..=MAX_EPOCHS as u64))]
    epochs: u64,
    /// Seed of the split, the initialisation and the batch order.
    #[arg(long, allow_hyphen_values = true, default_value = "0")]
    seed: u64,
    /// Folder for the checkpoint (`<fusion>.bpk`, `<fusion>.json`) and the learning curve
    /// (`<fusion>_curve.csv`, `<fusion>_curve.svg`).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub fn train_cmd(a: TrainCmd) -> anyhow::Result<()> {
    if a.fusion == CostKind::Tiled {
        anyhow::bail!(
            "--fusion tiled: the classifier learns lbdf and brr only (tiled has no labels)"
        );
    }
    let k = a.fusion;
    let stem = a.out.join(k.name());
    let csv = a.out.join(format!("{}_curve.csv", k.name()));
    let svg = a.out.join(format!("{}_curve.svg", k.name()));
    let outputs = [with_ext(&stem, "bpk"), with_ext(&stem, "json"), csv, svg];
    // The folder and the files it will hold, before any training.
    check_output_folder("--out", &a.out, &outputs)?;
    let files = outputs
        .iter()
        .fold(Files::new(), |f, o| f.output_in_folder("--out", o.clone()));
    files.input("--dataset", a.dataset.as_deref()).check()?;
    let [_, _, csv, svg] = outputs;
    let ds = match &a.dataset {
        // Read once through the guarded reader (a regular file within the cap), and parsed
        // from the very bytes that were checked: a file swapped in after the check is never
        // opened.
        Some(p) => Dataset::read(&read("--dataset", p, Kind::Dataset)?[..], p)?,
        None => generate_dataset(&DatasetConfig::of(a.features, a.seed))?,
    };
    let mut cfg = TrainConfig::of(a.features, k);
    cfg.epochs = usize::try_from(a.epochs)?;
    cfg.seed = a.seed;
    let bar = ProgressBar::new(a.epochs);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} training {msg} [{bar:40}] epoch {pos}/{len} (eta {eta})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_message(k.name());
    let (clf, report) = train(&cfg, &ds, &default_device(), |e| {
        bar.set_position(e.epoch as u64);
        bar.println(format!(
            "epoch {:>3}  loss {:.4}  acc {:.4}  val acc {:.4}  val F1 {:.4}",
            e.epoch, e.train_loss, e.train_accuracy, e.val_accuracy, e.val_f1
        ));
    })
    .with_context(|| match &a.dataset {
        Some(p) => format!("--dataset {}", p.display()),
        None => "training".into(),
    })?;
    bar.finish_and_clear();
    std::fs::create_dir_all(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
    let mut metrics = serde_json::Map::new();
    metrics.insert("test".into(), serde_json::to_value(report.test)?);
    metrics.insert("test_accuracy".into(), report.test.accuracy().into());
    metrics.insert("test_f1".into(), report.test.f1().into());
    metrics.insert("seconds".into(), report.seconds.into());
    write_stem_with("--out", &stem, &["bpk", "json"], |tmp| {
        Ok(save_checkpoint(&clf, tmp, metrics)?)
    })?;
    write("--out", &csv, curve_csv(&report.curve))?;
    let title = format!("{} validity classifier", k.name());
    write_with("--out", &svg, |tmp| {
        Ok(plot_curve(&report.curve, &title, tmp)?)
    })?;
    outln!(
        "{}: test accuracy {:.4}, F1 {:.4} in {:.0} s; wrote {}.bpk/.json, {} and {}",
        k.name(),
        report.test.accuracy(),
        report.test.f1(),
        report.seconds,
        stem.display(),
        csv.display(),
        svg.display()
    )?;
    Ok(())
}

/// Arguments of `fuselage classify`.
#[derive(Debug, Args)]
pub struct ClassifyCmd {
    #[command(flatten)]
    group: GroupArgs,
    /// A checkpoint stem written by `fuselage train` (default: the shipped one).
    #[arg(long, value_name = "STEM")]
    checkpoint: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn classify(a: ClassifyCmd, registry: &Registry) -> anyhow::Result<()> {
    let (g, cost, set) = a.group.load(registry)?;
    let model = cost.model;
    let device = default_device();
    let clf: GnnClassifier = match &a.checkpoint {
        Some(stem) => {
            let meta = with_ext(stem, "json");
            let json = read_text("--checkpoint", &meta, Kind::CheckpointMeta)?;
            let meta =
                Checkpoint::<CheckpointMeta>::from_parts(&[], &json, &meta.display().to_string())?
                    .meta;
            let kind = a.group.cost.kind()?;
            if meta.cost_model != kind {
                anyhow::bail!(
                    "--checkpoint {}: a classifier of {}, and --fusion asks for {kind}",
                    stem.display(),
                    meta.cost_model
                );
            }
            let weights = read(
                "--checkpoint",
                &with_ext(stem, "bpk"),
                Kind::CheckpointWeights,
            )?;
            classifier_from_bytes(&weights, &meta, &device)
                .with_context(|| format!("--checkpoint {}", stem.display()))?
        }
        None => shipped(a.group.cost.kind()?, &device)?,
    };
    if let fuselage::cost::OnChipBuffer::Split { .. } = model.config().buffer() {
        anyhow::bail!(
            "the classifier was trained on one unified buffer; it has no answer for split buffers"
        );
    }
    let beta = model.config().buffer_bytes();
    let p = clf.invalid_probability(&g, &set, model.config())?;
    let exact = model.evaluate(&g, &set)?;
    if a.json {
        let v = json!({
            "model": g.name(), "cost_model": model.name(), "buffer_bytes": beta, "nodes": g.names(&set),
            "probability_invalid": p, "predicted_valid": p <= 0.5,
            "exact_valid": exact.valid, "exact_buffer_bytes": exact.buffer_bytes,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        outln!(
            "{} group of {} nodes, {} at β = {} bytes",
            fuselage::ir::escape(g.name()),
            set.len(),
            model.name(),
            beta
        )?;
        outln!(
            "GNN     P(invalid) = {p:.4} -> {}",
            if p > 0.5 { "invalid" } else { "valid" }
        )?;
        outln!(
            "exact   F_β = {} bytes -> {}",
            exact.buffer_bytes,
            if exact.valid { "valid" } else { "invalid" }
        )?;
    }
    Ok(())
}
