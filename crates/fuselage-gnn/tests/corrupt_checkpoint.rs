//! A checkpoint whose weights decode but are not finite is refused when loaded; it used to
//! answer `P(invalid) = NaN -> valid`.

use fuselage_gnn::checkpoint::{classifier_from_bytes, shipped_meta};
use fuselage_gnn::{CostKind, FeatureSet, GnnError, default_device};

#[test]
fn non_finite_weights_are_an_error() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/checkpoints/lbdf.bpk");
    let bytes = std::fs::read(path).unwrap();
    let meta = shipped_meta(CostKind::Lbdf, FeatureSet::Paper).unwrap();
    let device = default_device();
    assert!(classifier_from_bytes(&bytes, &meta, &device).is_ok());
    // Overwrite aligned 4-byte words from the end (where the tensors' data lies) with NaN
    // until one of them lands in a weight: a flip that keeps the file decodable.
    let mut refused = 0;
    for k in 1..=64 {
        let mut bad = bytes.clone();
        let at = bad.len() - 4 * k;
        bad[at..at + 4].copy_from_slice(&f32::NAN.to_le_bytes());
        match classifier_from_bytes(&bad, &meta, &device) {
            Err(GnnError::Checkpoint(m)) if m.contains("not finite") => {
                assert!(m.starts_with("1 of the lbdf classifier's "), "{m}");
                refused += 1;
            }
            Err(_) => {}
            Ok(_) => panic!("a NaN written at byte {at} loaded"),
        }
    }
    assert!(refused > 0);
}

#[test]
fn a_feature_set_that_does_not_match_the_width_is_an_error() {
    // A paper checkpoint (50 features) whose metadata claims the broad set (64).
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/checkpoints/lbdf.bpk");
    let bytes = std::fs::read(path).unwrap();
    let mut meta = shipped_meta(CostKind::Lbdf, FeatureSet::Paper).unwrap();
    meta.config.feature_set = FeatureSet::Broad;
    let err = classifier_from_bytes(&bytes, &meta, &default_device())
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "checkpoint: the lbdf classifier reads 50 features, but its feature set `broad` has 64"
    );
}

/// The parameter count a checkpoint's config implies, which its weights file must be able to
/// hold, is the network's; absurd configs saturate instead of overflowing.
#[test]
fn a_configs_parameter_count_is_the_networks() {
    use burn::module::Module;
    use fuselage_gnn::GnnConfig;
    for set in [FeatureSet::Paper, FeatureSet::Broad] {
        let config = GnnConfig::over(set);
        let net = config.init(&default_device());
        assert_eq!(config.parameters(), net.num_params() as u64);
    }
    let absurd = GnnConfig {
        layers: 4_611_686_018_427_387_904,
        hidden: usize::MAX,
        ..GnnConfig::over(FeatureSet::Broad)
    };
    assert_eq!(absurd.parameters(), u64::MAX);
    assert!(absurd.check().is_err());
}
