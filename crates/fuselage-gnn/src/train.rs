//! Training and evaluation.
//!
//! ## Recipe (recorded in `docs/classifier.md`)
//!
//! - Split the *groups* 80/10/10 (seeded shuffle), so that the five β samples of a group are in
//!   the same split and no test group was seen in training at another β.
//! - Binary cross-entropy on the "invalid" logit, Adam (β₁ 0.9, β₂ 0.999), learning rate
//!   [`TrainConfig::learning_rate`] with cosine decay to 5% over the epochs, mini-batches of
//!   [`TrainConfig::batch_size`] samples (each a group at one β), reshuffled every epoch.
//! - After each epoch the validation split is scored; the model of the best validation
//!   accuracy is kept (the learning curve records every epoch).

use crate::dataset::{Dataset, EncodedDataset, Sample};
use crate::error::{GnnError, Result};
use crate::features::{FeatureSet, GraphBatch};
use crate::model::{Gnn, GnnClassifier, GnnConfig, to_vec};
use burn::optim::{AdamConfig, GradientsParams};
use burn::prelude::*;
use burn::tensor::activation::{relu, sigmoid};
use fuselage_cost::CostKind;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
#[cfg(feature = "plot")]
use std::path::Path;
use std::time::Instant;

/// The most epochs [`train`] runs: a bound on the learning curve it keeps, and far more than
/// the 50 the shipped classifiers were trained for.
pub const MAX_EPOCHS: usize = 100_000;

/// How to train a classifier.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainConfig {
    /// The cost model whose labels are learnt.
    pub cost: CostKind,
    /// The network's shape.
    pub model: GnnConfig,
    /// Passes over the training split.
    pub epochs: usize,
    /// Samples per optimiser step.
    pub batch_size: usize,
    /// Adam's initial learning rate.
    pub learning_rate: f64,
    /// Seed of the split, the shuffles and the initial weights.
    pub seed: u64,
    /// Shares of the groups in the training and validation splits (the rest is the test split).
    pub split: (f64, f64),
}

impl TrainConfig {
    /// The recipe of the paper checkpoints for `cost`: [`FeatureSet::Paper`], 50 epochs,
    /// batches of 256, Adam at 2·10⁻³, split 80/10/10, seed 0.
    pub fn paper(cost: CostKind) -> Self {
        TrainConfig {
            cost,
            model: GnnConfig::over(FeatureSet::Paper),
            epochs: 50,
            batch_size: 256,
            learning_rate: 2e-3,
            seed: 0,
            split: (0.8, 0.1),
        }
    }

    /// The recipe of the checkpoints over features `set`: [`TrainConfig::paper`] or
    /// [`TrainConfig::broad`].
    pub fn of(set: FeatureSet, cost: CostKind) -> Self {
        match set {
            FeatureSet::Paper => TrainConfig::paper(cost),
            FeatureSet::Broad => TrainConfig::broad(cost),
        }
    }

    /// The same recipe over the [`FeatureSet::Broad`] features: the broad checkpoints'.
    pub fn broad(cost: CostKind) -> Self {
        TrainConfig {
            model: GnnConfig::over(FeatureSet::Broad),
            ..TrainConfig::paper(cost)
        }
    }
}

/// Binary classification counts, with "invalid" as the positive class.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confusion {
    /// Invalid groups predicted invalid.
    pub true_invalid: usize,
    /// Valid groups predicted invalid.
    pub false_invalid: usize,
    /// Valid groups predicted valid.
    pub true_valid: usize,
    /// Invalid groups predicted valid.
    pub false_valid: usize,
}

impl Confusion {
    /// Counts `(predicted invalid, actually invalid)` pairs.
    pub fn from_pairs(pairs: impl IntoIterator<Item = (bool, bool)>) -> Self {
        let mut c = Confusion::default();
        for (p, t) in pairs {
            match (p, t) {
                (true, true) => c.true_invalid += 1,
                (true, false) => c.false_invalid += 1,
                (false, false) => c.true_valid += 1,
                (false, true) => c.false_valid += 1,
            }
        }
        c
    }

    /// Number of samples.
    pub fn total(&self) -> usize {
        self.true_invalid + self.false_invalid + self.true_valid + self.false_valid
    }

    /// Share of correct predictions (0 for no sample).
    pub fn accuracy(&self) -> f64 {
        ratio(self.true_invalid + self.true_valid, self.total())
    }

    /// Precision of "invalid".
    pub fn precision(&self) -> f64 {
        ratio(self.true_invalid, self.true_invalid + self.false_invalid)
    }

    /// Recall of "invalid".
    pub fn recall(&self) -> f64 {
        ratio(self.true_invalid, self.true_invalid + self.false_valid)
    }

    /// F1 of "invalid".
    pub fn f1(&self) -> f64 {
        ratio(
            2 * self.true_invalid,
            2 * self.true_invalid + self.false_invalid + self.false_valid,
        )
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// One point of the learning curve.
#[derive(Copy, Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EpochStats {
    /// 1-based epoch.
    pub epoch: usize,
    /// Mean training loss over the epoch.
    pub train_loss: f64,
    /// Training accuracy over the epoch (on the fly, while the weights move).
    pub train_accuracy: f64,
    /// Validation loss after the epoch.
    pub val_loss: f64,
    /// Validation accuracy after the epoch.
    pub val_accuracy: f64,
    /// Validation F1 after the epoch.
    pub val_f1: f64,
    /// Learning rate used in the epoch.
    pub learning_rate: f64,
    /// Seconds since training started.
    pub seconds: f64,
}

/// What [`train`] returns besides the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainReport {
    /// The configuration trained with.
    pub config: TrainConfig,
    /// Samples per split (train, validation, test).
    pub sizes: (usize, usize, usize),
    /// Test-split confusion of the kept model.
    pub test: Confusion,
    /// Validation-split confusion of the kept model.
    pub val: Confusion,
    /// The epoch whose model was kept.
    pub best_epoch: usize,
    /// Wall-clock seconds of training.
    pub seconds: f64,
    /// The learning curve.
    pub curve: Vec<EpochStats>,
}

/// The samples of each split.
#[derive(Clone, Debug)]
pub struct Split {
    /// Training samples.
    pub train: Vec<Sample>,
    /// Validation samples.
    pub val: Vec<Sample>,
    /// Test samples.
    pub test: Vec<Sample>,
}

/// Splits the groups of `data` (seeded shuffle) into train/validation/test shares, and their
/// samples with them.
pub fn split_samples(data: &EncodedDataset, shares: (f64, f64), seed: u64) -> Split {
    let n = data.graphs.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.shuffle(&mut ChaCha8Rng::seed_from_u64(seed));
    let n_train = (n as f64 * shares.0).round() as usize;
    let n_val = (n as f64 * shares.1).round() as usize;
    let mut which = vec![2u8; n];
    for (i, &g) in order.iter().enumerate() {
        which[g] = if i < n_train {
            0
        } else if i < n_train + n_val {
            1
        } else {
            2
        };
    }
    let mut s = Split {
        train: Vec::new(),
        val: Vec::new(),
        test: Vec::new(),
    };
    for x in &data.samples {
        match which[x.group] {
            0 => s.train.push(x.clone()),
            1 => s.val.push(x.clone()),
            _ => s.test.push(x.clone()),
        }
    }
    s
}

fn batch_of(set: FeatureSet, data: &EncodedDataset, samples: &[Sample]) -> GraphBatch {
    let mut b = GraphBatch::new(set);
    for s in samples {
        #[allow(clippy::expect_used, reason = "without edge weights push cannot fail")]
        b.push(&data.graphs[s.group], s.beta_bytes as f64, None)
            .expect("no edge weights");
    }
    b
}

/// Mean binary cross-entropy of logits `z` against 0/1 targets `y`, computed stably.
pub fn bce_with_logits(z: Tensor<1>, y: Tensor<1>) -> Tensor<1> {
    let softplus = relu(z.clone()) + z.clone().abs().neg().exp().log1p();
    (softplus - z * y).mean()
}

/// Scores `model` on `samples`: the confusion matrix and the mean loss.
///
/// # Errors
/// [`GnnError::Checkpoint`] if a tensor cannot be read back.
pub fn evaluate_samples(
    model: &Gnn,
    set: FeatureSet,
    device: &Device,
    data: &EncodedDataset,
    samples: &[Sample],
    batch_size: usize,
) -> Result<(Confusion, f64)> {
    let mut pairs = Vec::with_capacity(samples.len());
    let mut loss = 0.0;
    for chunk in samples.chunks(batch_size.max(1)) {
        let b = batch_of(set, data, chunk).to_device(device);
        let z = model.forward(&b);
        let y: Vec<f32> = chunk
            .iter()
            .map(|s| f32::from(u8::from(s.invalid)))
            .collect();
        let yt = Tensor::<1>::from_data(TensorData::new(y, [chunk.len()]), device);
        let l = to_vec(bce_with_logits(z.clone(), yt))?[0];
        loss += f64::from(l) * chunk.len() as f64;
        let p = to_vec(sigmoid(z))?;
        pairs.extend(p.iter().zip(chunk).map(|(&p, s)| (p > 0.5, s.invalid)));
    }
    Ok((
        Confusion::from_pairs(pairs),
        loss / samples.len().max(1) as f64,
    ))
}

/// Trains a classifier on `dataset` for the cost model of `cfg`, on `device` (a plain device:
/// autodiff is enabled on it for training). `progress` is called after every epoch.
///
/// Returns the classifier (the model of the best validation accuracy) and its report (test and
/// validation confusions, learning curve, time).
///
/// # Errors
/// [`GnnError::Config`] for a data set too small to split or a zero batch size; errors of
/// [`Dataset::encode`].
///
/// # Example
/// ```no_run
/// use fuselage_gnn::{CostKind, DatasetConfig, TrainConfig, generate_dataset, train};
/// let ds = generate_dataset(&DatasetConfig::paper(0))?;
/// let (clf, report) = train(&TrainConfig::paper(CostKind::Lbdf), &ds, &fuselage_gnn::default_device(), |e| {
///     eprintln!("epoch {} val acc {:.3}", e.epoch, e.val_accuracy)
/// })?;
/// println!("test accuracy {:.3}", report.test.accuracy());
/// # Ok::<(), fuselage_gnn::GnnError>(())
/// ```
pub fn train(
    cfg: &TrainConfig,
    dataset: &Dataset,
    device: &Device,
    progress: impl FnMut(&EpochStats),
) -> Result<(GnnClassifier, TrainReport)> {
    let data = dataset.encode(cfg.cost)?;
    train_encoded(cfg, &data, device, progress)
}

/// [`train`] on an already encoded data set.
///
/// # Errors
/// As [`train`].
pub fn train_encoded(
    cfg: &TrainConfig,
    data: &EncodedDataset,
    device: &Device,
    mut progress: impl FnMut(&EpochStats),
) -> Result<(GnnClassifier, TrainReport)> {
    if cfg.batch_size == 0 {
        return Err(GnnError::Config("batch size 0".into()));
    }
    if !(1..=MAX_EPOCHS).contains(&cfg.epochs) {
        return Err(GnnError::Config(format!(
            "{} epochs, not in 1..={MAX_EPOCHS}",
            cfg.epochs
        )));
    }
    cfg.model.check()?;
    let split = split_samples(data, cfg.split, cfg.seed);
    if split.train.is_empty() || split.val.is_empty() {
        return Err(GnnError::Config(format!(
            "{} groups are too few to split",
            data.graphs.len()
        )));
    }
    let start = Instant::now();
    let base = device.clone();
    let ad = base.clone().autodiff();
    ad.seed(cfg.seed);
    let mut model = cfg.model.init(&ad);
    let mut optim = AdamConfig::new().init();
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x5eed);
    let mut train_samples = split.train.clone();
    let mut curve = Vec::with_capacity(cfg.epochs);
    let mut best: Option<(f64, usize, Gnn)> = None;
    for epoch in 1..=cfg.epochs {
        let t = (epoch - 1) as f64 / cfg.epochs.max(1) as f64;
        let lr = cfg.learning_rate * (0.05 + 0.95 * 0.5 * (1.0 + (std::f64::consts::PI * t).cos()));
        train_samples.shuffle(&mut rng);
        let mut loss_sum = 0.0;
        let mut pairs = Vec::with_capacity(train_samples.len());
        for chunk in train_samples.chunks(cfg.batch_size) {
            let b = batch_of(cfg.model.feature_set, data, chunk).to_device(&ad);
            let y: Vec<f32> = chunk
                .iter()
                .map(|s| f32::from(u8::from(s.invalid)))
                .collect();
            let yt = Tensor::<1>::from_data(TensorData::new(y, [chunk.len()]), &ad);
            let z = model.forward(&b);
            let loss = bce_with_logits(z.clone(), yt);
            let grads = GradientsParams::from_grads(loss.backward(), &model);
            model = optim.step(lr, model, grads);
            loss_sum += f64::from(to_vec(loss.detach())?[0]) * chunk.len() as f64;
            let p = to_vec(z.detach())?;
            pairs.extend(p.iter().zip(chunk).map(|(&z, s)| (z > 0.0, s.invalid)));
        }
        let eval = model.valid();
        let (val, val_loss) = evaluate_samples(
            &eval,
            cfg.model.feature_set,
            &base,
            data,
            &split.val,
            cfg.batch_size.max(512),
        )?;
        let stats = EpochStats {
            epoch,
            train_loss: loss_sum / train_samples.len() as f64,
            train_accuracy: Confusion::from_pairs(pairs).accuracy(),
            val_loss,
            val_accuracy: val.accuracy(),
            val_f1: val.f1(),
            learning_rate: lr,
            seconds: start.elapsed().as_secs_f64(),
        };
        progress(&stats);
        curve.push(stats);
        if best.as_ref().is_none_or(|(a, _, _)| val.accuracy() > *a) {
            best = Some((val.accuracy(), epoch, eval));
        }
    }
    let (_, best_epoch, kept) = match best {
        Some(b) => b,
        None => (0.0, 0, model.valid()),
    };
    let bs = cfg.batch_size.max(512);
    let set = cfg.model.feature_set;
    let (val, _) = evaluate_samples(&kept, set, &base, data, &split.val, bs)?;
    let (test, _) = evaluate_samples(&kept, set, &base, data, &split.test, bs)?;
    let report = TrainReport {
        config: cfg.clone(),
        sizes: (split.train.len(), split.val.len(), split.test.len()),
        test,
        val,
        best_epoch,
        seconds: start.elapsed().as_secs_f64(),
        curve,
    };
    Ok((GnnClassifier::new(cfg.model, kept, base, cfg.cost), report))
}

/// Scores a classifier on every sample of `data`.
///
/// # Errors
/// [`GnnError::Checkpoint`] if a tensor cannot be read back.
pub fn evaluate(clf: &GnnClassifier, data: &EncodedDataset) -> Result<Confusion> {
    Ok(evaluate_samples(
        &clf.model,
        clf.config.feature_set,
        &clf.device,
        data,
        &data.samples,
        1024,
    )?
    .0)
}

/// The learning curve as CSV (`epoch,train_loss,train_accuracy,val_loss,val_accuracy,val_f1,learning_rate,seconds`).
pub fn curve_csv(curve: &[EpochStats]) -> String {
    let mut s = String::from(
        "epoch,train_loss,train_accuracy,val_loss,val_accuracy,val_f1,learning_rate,seconds\n",
    );
    for e in curve {
        s.push_str(&format!(
            "{},{:.6},{:.6},{:.6},{:.6},{:.6},{:.6e},{:.2}\n",
            e.epoch,
            e.train_loss,
            e.train_accuracy,
            e.val_loss,
            e.val_accuracy,
            e.val_f1,
            e.learning_rate,
            e.seconds
        ));
    }
    s
}

/// Draws the learning curve (losses and accuracies per epoch) as an SVG file with plotters
/// (feature `plot`).
///
/// # Errors
/// [`GnnError::Plot`].
#[cfg(feature = "plot")]
pub fn plot_curve(curve: &[EpochStats], title: &str, path: impl AsRef<Path>) -> Result<()> {
    use plotters::prelude::*;
    let perr = |e: &dyn std::fmt::Display| GnnError::Plot(e.to_string());
    let root = SVGBackend::new(path.as_ref(), (800, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| perr(&e))?;
    let epochs = curve.len().max(1) as f64;
    let top = curve
        .iter()
        .map(|e| e.train_loss.max(e.val_loss))
        .fold(1.0_f64, f64::max)
        .min(2.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(1.0..epochs, 0.0..top)
        .map_err(|e| perr(&e))?;
    chart
        .configure_mesh()
        .x_desc("epoch")
        .y_desc("loss / accuracy")
        .draw()
        .map_err(|e| perr(&e))?;
    type Series<'a> = (&'a str, RGBColor, fn(&EpochStats) -> f64);
    let series: [Series<'_>; 4] = [
        ("train loss", BLUE, |e| e.train_loss),
        ("val loss", RED, |e| e.val_loss),
        ("train accuracy", GREEN, |e| e.train_accuracy),
        ("val accuracy", BLACK, |e| e.val_accuracy),
    ];
    for (name, color, f) in series {
        chart
            .draw_series(LineSeries::new(
                curve.iter().map(|e| (e.epoch as f64, f(e).min(top))),
                color,
            ))
            .map_err(|e| perr(&e))?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| perr(&e))?;
    root.present().map_err(|e| perr(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confusion_metrics() {
        let c = Confusion::from_pairs([(true, true), (true, false), (false, false), (false, true)]);
        assert_eq!(c.total(), 4);
        assert_eq!(c.accuracy(), 0.5);
        assert_eq!(c.precision(), 0.5);
        assert_eq!(c.recall(), 0.5);
        assert_eq!(c.f1(), 0.5);
        assert_eq!(Confusion::default().f1(), 0.0);
    }

    #[test]
    fn bce_matches_the_formula() {
        let d = crate::default_device();
        let z = Tensor::<1>::from_floats([0.0, 2.0, -3.0], &d);
        let y = Tensor::<1>::from_floats([1.0, 0.0, 0.0], &d);
        let got = to_vec(bce_with_logits(z, y)).unwrap()[0];
        let want = ((2.0f32).ln() + (1.0 + 2.0f32.exp()).ln() + (1.0 + (-3.0f32).exp()).ln()) / 3.0;
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }
}
