//! Every file the program reads or writes on a user's word goes through here.
//!
//! **Reading.** [`read`] takes regular files only, of at most the cap of their [`Kind`]: the
//! metadata is checked before the file is opened, the file is opened non-blocking (so that a
//! FIFO swapped in after the check cannot hang the open) and checked again on the open handle,
//! and no more than the cap and one byte is read. Errors are one line naming the argument and
//! the path: `--hw /tmp/fifo: not a regular file (a FIFO)`.
//!
//! **Writing.** A command lists the files it reads and writes in a [`Files`] and checks them
//! before any work: an existing output that is not a regular file (a device, a FIFO, a folder,
//! a socket) is refused, never replaced; an output that is the same file as an input or as
//! another output is refused (same canonical path, or same device and inode); and a file is
//! created and removed in each output's folder, so that a folder the program cannot write in
//! fails at once, not after the search. [`write`] then writes into a temporary file beside the
//! target and renames it over the target, checked once more to be a regular file or absent,
//! so that no output is ever partial. `-` is standard output, and only where a user writes it:
//! the command's own summary then goes to standard error.

use anyhow::{Context, anyhow, bail};
use fuselage::cost::{Accelerator, CostError, PlanFile};
use fuselage::ir::fs::{self, Refused};
use fuselage::ir::human_size;
use std::fs::{File, Metadata, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

/// What a file argument holds; each kind has a size cap (docs/reliability.md lists them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An accelerator description (`--hw`, `hw show`): 1 MiB (the presets are about 1 KiB).
    Hardware,
    /// A plan file (`--plan`, `diff`'s files): 256 MiB (ResNet-152's is about 72 KiB).
    Plan,
    /// A classifier checkpoint's metadata (`--checkpoint STEM`, `STEM.json`): 16 MiB (the
    /// shipped ones are about 2 KiB).
    CheckpointMeta,
    /// A classifier checkpoint's weights (`STEM.bpk`): 256 MiB (the shipped ones are about
    /// 0.5 MiB).
    CheckpointWeights,
    /// A data set of labelled groups (`train --dataset`): 256 MiB (the broad one is 2.4
    /// MB).
    Dataset,
    /// An ONNX model read whole (`export`, `cost --plan-from-metadata`): the importer's own cap,
    /// [`fuselage::onnx::MAX_FILE_BYTES`] (2 GiB).
    Model,
}

/// The importer's own cap on an ONNX file (2 GiB); the same without the `onnx` feature, where
/// no model file is read.
#[cfg(feature = "onnx")]
const MODEL_CAP: u64 = fuselage::onnx::MAX_FILE_BYTES;
#[cfg(not(feature = "onnx"))]
const MODEL_CAP: u64 = 2 << 30;

impl Kind {
    /// The most bytes a file of this kind may have.
    pub const fn cap(self) -> u64 {
        match self {
            Kind::Hardware => 1 << 20,
            Kind::Plan => 256 << 20,
            Kind::CheckpointMeta => 16 << 20,
            Kind::CheckpointWeights => 256 << 20,
            Kind::Dataset => 256 << 20,
            Kind::Model => MODEL_CAP,
        }
    }

    /// The kind in words, for errors.
    fn what(self) -> &'static str {
        match self {
            Kind::Hardware => "an accelerator file",
            Kind::Plan => "a plan file",
            Kind::CheckpointMeta => "a checkpoint's metadata",
            Kind::CheckpointWeights => "a checkpoint's weights",
            Kind::Dataset => "a data set",
            Kind::Model => "an ONNX model",
        }
    }
}

/// Whether `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// `path` as the summary names it: `standard output` for `-`.
pub fn shown(path: &Path) -> String {
    if is_stdout(path) {
        "standard output".to_string()
    } else {
        fuselage::ir::escape(&path.display().to_string()).into_owned()
    }
}

/// Opens the file argument `arg` at `path` for reading: a regular file of at most `kind`'s
/// cap. Its metadata is checked before it is opened, so a FIFO or a device is never opened;
/// then the open file itself, which is what is read. Returns it with its size.
fn open_regular(arg: &str, path: &Path, kind: Kind) -> anyhow::Result<(File, u64)> {
    let fail = |why: &dyn std::fmt::Display| anyhow!("{arg} {}: {why}", path.display());
    fs::open_regular(path, kind.cap()).map_err(|refused| match refused {
        Refused::Io(e) => fail(&e),
        Refused::NotAFile(what) => fail(&format!("not a regular file ({what})")),
        Refused::TooLarge(bytes) => too_large(arg, path, kind, Some(bytes)),
    })
}

/// Reads the file argument `arg` (`--plan`, `<A>`) at `path`: a regular file of at most
/// `kind`'s cap. Nothing else is opened, and no more than the cap and one byte is read.
///
/// # Errors
/// One line naming `arg` and `path`: not a regular file, larger than the cap, or the
/// operating system's reason.
pub fn read(arg: &str, path: &Path, kind: Kind) -> anyhow::Result<Vec<u8>> {
    let (file, len) = open_regular(arg, path, kind)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(kind.cap() + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow!("{arg} {}: {e}", path.display()))?;
    if bytes.len() as u64 > kind.cap() {
        bail!(too_large(arg, path, kind, None));
    }
    Ok(bytes)
}

/// The error of a file past its cap; `bytes` is its size, or `None` when only the read
/// found it larger than the cap (it grew after the check).
fn too_large(arg: &str, path: &Path, kind: Kind, bytes: Option<u64>) -> anyhow::Error {
    anyhow!(
        "{arg} {}: {}more than the {} {} may have",
        path.display(),
        bytes.map_or(String::new(), |b| format!("{b} bytes, ")),
        human_size(kind.cap()),
        kind.what()
    )
}

/// [`read`], as UTF-8 text.
///
/// # Errors
/// As [`read`], and for bytes that are not UTF-8.
pub fn read_text(arg: &str, path: &Path, kind: Kind) -> anyhow::Result<String> {
    String::from_utf8(read(arg, path, kind)?)
        .map_err(|e| anyhow!("{arg} {}: not UTF-8 text ({e})", path.display()))
}

/// Reads the plan file `arg` at `path`; errors name the argument or the file.
pub fn read_plan(arg: &str, path: &Path) -> anyhow::Result<PlanFile> {
    let text = read_text(arg, path, Kind::Plan)?;
    PlanFile::from_json(&text).with_context(|| format!("{}", path.display()))
}

/// The accelerator file `spec` names, or `None` for a preset: what [`hardware`] reads.
pub fn hardware_file(spec: &str) -> Option<&Path> {
    Accelerator::preset(spec)
        .is_none()
        .then_some(Path::new(spec))
}

/// The accelerator `arg` (`--hw`) names: a preset, or an accelerator file read through
/// [`read`].
///
/// # Errors
/// As [`read`] for a file; as [`Accelerator::from_toml`] for its text; the presets listed
/// when `spec` is neither a preset nor a file.
pub fn hardware(arg: &str, spec: &str) -> anyhow::Result<Accelerator> {
    Ok(hardware_and_text(arg, spec)?.0)
}

/// [`hardware`], with its TOML: the preset's as shipped, or the file's text.
pub fn hardware_and_text(
    arg: &str,
    spec: &str,
) -> anyhow::Result<(Accelerator, std::borrow::Cow<'static, str>)> {
    if let (Some(hw), Some(text)) = (Accelerator::preset(spec), Accelerator::preset_toml(spec)) {
        return Ok((hw, text.into()));
    }
    let path = Path::new(spec);
    if std::fs::symlink_metadata(path).is_err() && !spec.ends_with(".toml") {
        return Err(CostError::UnknownHardware {
            given: spec.to_string(),
            presets: Accelerator::preset_names()
                .into_iter()
                .map(str::to_string)
                .collect(),
        }
        .into());
    }
    let text = read_text(arg, path, Kind::Hardware)?;
    let hw = Accelerator::from_toml(&text, &path.display().to_string())?;
    Ok((hw, text.into()))
}

/// Who a file is: its canonical path, and its device and inode when it exists.
#[derive(Debug, PartialEq, Eq)]
struct FileId {
    canonical: Option<PathBuf>,
    inode: Option<(u64, u64)>,
}

impl FileId {
    fn of(path: &Path) -> FileId {
        match std::fs::metadata(path) {
            Ok(meta) => FileId {
                canonical: std::fs::canonicalize(path).ok(),
                inode: inode(&meta),
            },
            // Not there yet: its folder's canonical path and its name.
            Err(_) => FileId {
                canonical: path
                    .file_name()
                    .and_then(|name| Some(std::fs::canonicalize(folder(path)).ok()?.join(name))),
                inode: None,
            },
        }
    }

    fn same(&self, other: &FileId) -> bool {
        (self.inode.is_some() && self.inode == other.inode)
            || (self.canonical.is_some() && self.canonical == other.canonical)
    }
}

#[cfg(unix)]
fn inode(meta: &Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn inode(_: &Metadata) -> Option<(u64, u64)> {
    None
}

/// The folder `path` is in (`.` for a bare name).
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The temporary file a write of `target` goes through: hidden, beside it, named by the
/// process, so that a rename within the folder puts it in place atomically.
fn temp_path(target: &Path, name: &std::ffi::OsStr) -> PathBuf {
    let mut tmp = std::ffi::OsString::from(format!(".fuselage-{}.", std::process::id()));
    tmp.push(name);
    folder(target).join(tmp)
}

/// A temporary file, created empty and exclusively (never an existing file, never through a
/// link), removed when dropped unless it was renamed into place.
struct Temp {
    path: PathBuf,
    kept: bool,
}

impl Temp {
    fn create(path: PathBuf) -> std::io::Result<Temp> {
        let create = || OpenOptions::new().write(true).create_new(true).open(&path);
        match create() {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Left by an earlier process of the same id: ours to replace, if it is a
                // regular file.
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
                    std::fs::remove_file(&path)?;
                }
                create()?;
            }
            r => {
                r?;
            }
        }
        Ok(Temp { path, kept: false })
    }

    fn rename_to(mut self, target: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, target)?;
        self.kept = true;
        Ok(())
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Refuses an existing `path` that is not a regular file: outputs replace regular files only.
fn replaceable(arg: &str, path: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => bail!(
            "{arg} {}: not a regular file ({}); an output replaces only a regular file (- writes to standard output)",
            path.display(),
            fs::described(&meta)
        ),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => bail!("{arg} {}: {e}", path.display()),
    }
}

/// Checks that a file can be created in `dir`: creates one and removes it.
fn probe(arg: &str, path: &Path, dir: &Path) -> anyhow::Result<()> {
    let name = path.file_name().unwrap_or(std::ffi::OsStr::new("probe"));
    Temp::create(temp_path(&dir.join(name), name)).map_err(|e| {
        anyhow!(
            "{arg} {}: cannot write in the folder {}: {e}",
            path.display(),
            dir.display()
        )
    })?;
    Ok(())
}

/// Checks the output file `arg` at `path` before any work: it names a file, in a folder that
/// exists and can be written in, and is absent or a regular file.
fn check_output(arg: &str, path: &Path) -> anyhow::Result<()> {
    if path.file_name().is_none() {
        bail!("{arg} {}: names no file", path.display());
    }
    let dir = folder(path);
    if !dir.is_dir() {
        bail!(
            "{arg} {}: the folder {} does not exist",
            path.display(),
            dir.display()
        );
    }
    replaceable(arg, path)?;
    probe(arg, path, dir)
}

/// Checks the output folder `arg` at `dir` before any work: it is a folder, or can be made
/// in its nearest existing ancestor; a file can be created there; and each of `files` (paths
/// in it) that exists is a regular file.
pub fn check_output_folder(arg: &str, dir: &Path, files: &[PathBuf]) -> anyhow::Result<()> {
    let mut existing = dir;
    loop {
        match std::fs::metadata(existing) {
            Ok(meta) if meta.is_dir() => break,
            Ok(meta) => bail!(
                "{arg} {}: {} is not a folder ({})",
                dir.display(),
                existing.display(),
                fs::described(&meta)
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                existing = match existing.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
            }
            Err(e) => bail!("{arg} {}: {e}", dir.display()),
        }
    }
    probe(arg, dir, existing)?;
    for f in files {
        replaceable(arg, f)?;
    }
    Ok(())
}

/// One file argument of a command.
struct Arg {
    name: String,
    path: PathBuf,
    /// Whether [`Files::check`] checks it as an output ([`check_output`]); a file in an
    /// output folder is checked by [`check_output_folder`].
    check: bool,
}

impl Arg {
    fn new(name: &str, path: &Path, check: bool) -> Self {
        Arg {
            name: name.to_string(),
            path: path.to_path_buf(),
            check,
        }
    }
}

/// The files a command reads and writes, checked together before any work ([`Files::check`]).
#[derive(Default)]
pub struct Files {
    inputs: Vec<Arg>,
    outputs: Vec<Arg>,
}

impl Files {
    /// No files yet.
    pub fn new() -> Self {
        Files::default()
    }

    /// An input file `arg` at `path`.
    pub fn input(mut self, arg: &str, path: Option<&Path>) -> Self {
        self.inputs.extend(path.map(|p| Arg::new(arg, p, false)));
        self
    }

    /// The model argument: an input when it names a file rather than a zoo network.
    pub fn model(self, spec: &str) -> Self {
        let path = fuselage::is_path(spec).then_some(Path::new(spec));
        self.input("<MODEL>", path)
    }

    /// `--hw`: an input when it names a file rather than a preset.
    pub fn hardware(self, spec: Option<&str>) -> Self {
        self.input("--hw", spec.and_then(hardware_file))
    }

    /// An output file `arg` at `path` (`-` for standard output).
    pub fn output(mut self, arg: &str, path: Option<&Path>) -> Self {
        self.outputs.extend(path.map(|p| Arg::new(arg, p, true)));
        self
    }

    /// An output file in a folder that [`check_output_folder`] checks (the folder may not
    /// exist yet): only compared with the other files here.
    pub fn output_in_folder(mut self, arg: &str, path: PathBuf) -> Self {
        self.outputs.push(Arg::new(arg, &path, false));
        self
    }

    /// Checks every output ([`check_output`]) and that no output is an input or another
    /// output; with an output to standard output, the summary goes to standard error.
    ///
    /// # Errors
    /// The first file that fails, in one line naming its argument and path.
    pub fn check(self) -> anyhow::Result<()> {
        let mut stdout: Option<&Arg> = None;
        for out in &self.outputs {
            if is_stdout(&out.path) {
                if let Some(first) = stdout {
                    bail!(
                        "{} -: standard output is {}'s already",
                        out.name,
                        first.name
                    );
                }
                stdout = Some(out);
            } else if out.check {
                check_output(&out.name, &out.path)?;
            }
        }
        let files: Vec<(&Arg, FileId)> = self
            .outputs
            .iter()
            .filter(|o| !is_stdout(&o.path))
            .map(|o| (o, FileId::of(&o.path)))
            .collect();
        for input in &self.inputs {
            let id = FileId::of(&input.path);
            if let Some((out, _)) = files.iter().find(|(_, o)| o.same(&id)) {
                bail!(
                    "{} {} would overwrite {} {} (the same file)",
                    out.name,
                    out.path.display(),
                    input.name,
                    input.path.display()
                );
            }
        }
        for (i, (a, a_id)) in files.iter().enumerate() {
            if let Some((b, _)) = files[i + 1..].iter().find(|(_, b_id)| a_id.same(b_id)) {
                bail!(
                    "{} {} and {} {} are the same file",
                    a.name,
                    a.path.display(),
                    b.name,
                    b.path.display()
                );
            }
        }
        if stdout.is_some() {
            crate::SUMMARY_TO_STDERR.store(true, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// Writes `bytes` to the output `arg` at `path` whole or not at all (standard output for
/// `-`): into a temporary file beside it, then renamed over it, so that an interrupted or
/// failed run never leaves a partial file (a rename within one folder is atomic).
///
/// # Errors
/// One line naming `arg` and `path`: a target that became something other than a regular
/// file, or the operating system's reason.
pub fn write(arg: &str, path: &Path, bytes: impl AsRef<[u8]>) -> anyhow::Result<()> {
    if is_stdout(path) {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes.as_ref())
            .and_then(|()| out.flush())
            .context("writing to standard output");
    }
    write_with(arg, path, |tmp| {
        std::fs::write(tmp, bytes.as_ref()).map_err(anyhow::Error::from)
    })
}

/// [`write`] for a library function that writes a file by its path: `make` writes the
/// temporary file it is given, which is then renamed over `path` (or copied to standard
/// output for `-`).
///
/// # Errors
/// As [`write`], and whatever `make` returns.
pub fn write_with(
    arg: &str,
    path: &Path,
    make: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if is_stdout(path) {
        let tmp = Temp::create(std::env::temp_dir().join(format!(
            "fuselage-{}-{}",
            std::process::id(),
            arg.trim_start_matches('-')
        )))
        .context("a temporary file for standard output")?;
        make(&tmp.path)?;
        let mut file = File::open(&tmp.path).context("a temporary file for standard output")?;
        let mut out = std::io::stdout().lock();
        std::io::copy(&mut file, &mut out)
            .and_then(|_| out.flush())
            .context("writing to standard output")?;
        return Ok(());
    }
    let fail = |e: &dyn std::fmt::Display| anyhow!("{arg} {}: {e}", path.display());
    let name = path.file_name().ok_or_else(|| fail(&"names no file"))?;
    let tmp = Temp::create(temp_path(path, name)).map_err(|e| fail(&e))?;
    make(&tmp.path).map_err(|e| fail(&format!("{e:#}")))?;
    // Checked before the work, and again now: a device is never replaced.
    replaceable(arg, path)?;
    tmp.rename_to(path).map_err(|e| fail(&e))
}

/// `path` with `.ext` added (`lbdf` and `bpk`: `lbdf.bpk`).
pub fn with_ext(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// [`write_with`] for a library function that writes several files by one stem
/// (`<stem>.bpk` and `<stem>.json`): `make` writes them at the temporary stem it is given,
/// and each is then renamed into place.
///
/// # Errors
/// As [`write_with`].
pub fn write_stem_with(
    arg: &str,
    stem: &Path,
    exts: &[&str],
    make: impl FnOnce(&Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let fail = |e: &dyn std::fmt::Display| anyhow!("{arg} {}: {e}", stem.display());
    let name = stem.file_name().ok_or_else(|| fail(&"names no file"))?;
    let tmp = temp_path(stem, name);
    let temps = exts
        .iter()
        .map(|ext| Temp::create(with_ext(&tmp, ext)))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| fail(&e))?;
    make(&tmp).map_err(|e| fail(&format!("{e:#}")))?;
    for (t, ext) in temps.into_iter().zip(exts) {
        let target = with_ext(stem, ext);
        replaceable(arg, &target)?;
        t.rename_to(&target)
            .map_err(|e| anyhow!("{arg} {}: {e}", target.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("fuselage-files-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The open itself never waits for a writer of a FIFO: the flag is right for this
    /// platform, so a FIFO swapped in after the metadata check cannot hang the program.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_fifo_opens_without_blocking_and_is_refused_on_the_handle() {
        let dir = scratch("fifo");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("note: mkfifo failed; skipped");
            return;
        }
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let opened = fs::open_nonblocking(&path).and_then(|f| f.metadata());
            let _ = tx.send(opened.map(|m| fs::described(&m)));
        });
        let kind = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("the open of a FIFO returns at once");
        assert_eq!(kind.unwrap(), "a FIFO");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_cap_refuses_a_larger_file_and_reads_a_smaller_one() {
        let dir = scratch("cap");
        let path = dir.join("plan.json");
        std::fs::write(&path, vec![b' '; 2 << 20]).unwrap();
        let err = read("--hw", &path, Kind::Hardware).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "--hw {}: 2097152 bytes, more than the 1 MiB an accelerator file may have",
                path.display()
            )
        );
        assert_eq!(read("--plan", &path, Kind::Plan).unwrap().len(), 2 << 20);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_write_leaves_no_temporary_file() {
        let dir = scratch("write");
        let path = dir.join("out.json");
        Files::new().output("--out", Some(&path)).check().unwrap();
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        write("--out", &path, "{}").unwrap();
        let err = write_with("--out", &path, |_| bail!("no")).unwrap_err();
        assert_eq!(err.to_string(), format!("--out {}: no", path.display()));
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.json"]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
