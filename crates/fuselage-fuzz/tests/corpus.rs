//! Replays the fuzz corpus on the stable toolchain: every seed in `fuzz/corpus/TARGET/`, and
//! every input a fuzzing run saved under `fuzz/artifacts/TARGET/` (a crash once found stays a
//! test), through its target. A panic fails the test and names the file.

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_input_runs_through_its_target() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    for (name, target) in fuselage_fuzz::TARGETS {
        let seeds = files(&fuzz.join("corpus").join(name));
        assert!(
            seeds.len() >= 3,
            "fuzz/corpus/{name} has {} seeds; each target keeps at least three",
            seeds.len()
        );
        for path in seeds
            .iter()
            .chain(&files(&fuzz.join("artifacts").join(name)))
        {
            let data = std::fs::read(path).unwrap();
            if std::panic::catch_unwind(|| target(&data)).is_err() {
                panic!("{name} panicked on {}", path.display());
            }
        }
    }
}
