//! Scores the shipped checkpoints: test split (same seed as training) and held-out networks,
//! overall and per β, printed as Markdown tables.
//!
//! `cargo run -p fuselage-gnn --example evaluate [-- --broad]`: the paper checkpoints, or the
//! broad ones (their test split of the broad data set, per β and per network family).

use anyhow::Result;
use fuselage_gnn::*;

fn row(label: &str, c: &Confusion) {
    println!(
        "| {label} | {} | {:.4} | {:.4} | {:.4} | {:.4} | {} | {} | {} | {} |",
        c.total(),
        c.accuracy(),
        c.precision(),
        c.recall(),
        c.f1(),
        c.true_invalid,
        c.false_invalid,
        c.true_valid,
        c.false_valid
    );
}

fn table(
    clf: &GnnClassifier,
    data: &EncodedDataset,
    samples: &[Sample],
    title: &str,
) -> Result<()> {
    println!("\n**{title}**\n");
    println!("| subset | samples | accuracy | precision | recall | F1 | TI | FI | TV | FV |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let score = |s: Vec<Sample>| -> Result<Confusion> {
        let sub = EncodedDataset {
            samples: s,
            ..data.clone()
        };
        Ok(evaluate(clf, &sub)?)
    };
    row("all", &score(samples.to_vec())?);
    for kib in BETAS_KIB {
        let s: Vec<Sample> = samples
            .iter()
            .filter(|s| s.beta_bytes == kib * 1024)
            .cloned()
            .collect();
        row(&format!("β = {kib} KiB"), &score(s)?);
    }
    Ok(())
}

/// Accuracy of `clf` on the samples of `samples` whose network is in `nets`, as a table row.
fn family_row(
    clf: &GnnClassifier,
    data: &EncodedDataset,
    samples: &[Sample],
    label: &str,
    nets: &[&str],
) -> Result<()> {
    let sub = EncodedDataset {
        samples: samples
            .iter()
            .filter(|s| nets.contains(&data.networks[s.group].as_str()))
            .cloned()
            .collect(),
        ..data.clone()
    };
    row(label, &evaluate(clf, &sub)?);
    Ok(())
}

fn main() -> Result<()> {
    let broad = std::env::args().any(|a| a == "--broad");
    let set = if broad {
        FeatureSet::Broad
    } else {
        FeatureSet::Paper
    };
    let device = default_device();
    let ds = generate_dataset(&DatasetConfig::of(set, 0))?;
    let held = generate_dataset(&DatasetConfig::held_out(1, 1500))?;
    for kind in CostKind::PAPER {
        let clf = shipped_from(kind, set, &device)?;
        println!("\n### {} ({set})\n", kind.name().to_uppercase());
        let data = ds.encode(kind)?;
        let split = split_samples(&data, (0.8, 0.1), TrainConfig::paper(kind).seed);
        table(&clf, &data, &split.test, "test split")?;
        if broad {
            println!("\n**test split by family**\n");
            println!(
                "| family | samples | accuracy | precision | recall | F1 | TI | FI | TV | FV |"
            );
            println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
            let cnns: Vec<&str> = PAPER_NETWORKS.iter().map(|(n, _)| *n).collect();
            family_row(&clf, &data, &split.test, "paper CNNs", &cnns)?;
            for (family, nets) in FAMILIES {
                family_row(&clf, &data, &split.test, family, &nets)?;
            }
            family_row(&clf, &data, &split.test, "GhostNet", &["ghostnet_100"])?;
            family_row(&clf, &data, &split.test, "Llama", &["llama_3_2_1b"])?;
        }
        let h = held.encode(kind)?;
        for net in HELD_OUT_NETWORKS {
            let s: Vec<Sample> = h
                .samples
                .iter()
                .filter(|s| h.networks[s.group] == net)
                .cloned()
                .collect();
            table(&clf, &h, &s, &format!("held out: {net}"))?;
        }
    }
    Ok(())
}
