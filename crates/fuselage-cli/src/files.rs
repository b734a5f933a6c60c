//! Every file the program reads on a user's word goes through here.
//!
//! [`read`] takes regular files only, of at most the cap of their [`Kind`]: the metadata is
//! checked before the file is opened, the file is opened non-blocking (so that a FIFO swapped
//! in after the check cannot hang the open) and checked again on the open handle, and no more
//! than the cap and one byte is read. Errors are one line naming the argument and the path:
//! `--hw /tmp/fifo: not a regular file (a FIFO)`.

use crate::common::human_size;
use anyhow::{Context, anyhow, bail};
use fuselage::cost::{Accelerator, CostError, PlanFile};
use std::fs::{File, Metadata, OpenOptions};
use std::io::Read;
use std::path::{Path, PathBuf};

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

impl Kind {
    /// The most bytes a file of this kind may have.
    pub const fn cap(self) -> u64 {
        match self {
            Kind::Hardware => 1 << 20,
            Kind::Plan => 256 << 20,
            Kind::CheckpointMeta => 16 << 20,
            Kind::CheckpointWeights => 256 << 20,
            Kind::Dataset => 256 << 20,
            Kind::Model => fuselage::onnx::MAX_FILE_BYTES,
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

/// What a file that is not a regular file is, in words.
fn file_type(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a file"
}

/// `O_NONBLOCK`, without a dependency on `libc`: opening a FIFO for reading with it returns
/// at once instead of waiting for a writer. Regular files ignore it. Where it is not known
/// (0), only the check of the metadata before the open stands between a FIFO and a hang.
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    not(any(target_arch = "mips", target_arch = "mips64", target_arch = "sparc64"))
))]
const O_NONBLOCK: i32 = 0o4000;
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    any(target_arch = "mips", target_arch = "mips64")
))]
const O_NONBLOCK: i32 = 0o200;
#[cfg(all(
    any(target_os = "linux", target_os = "android"),
    target_arch = "sparc64"
))]
const O_NONBLOCK: i32 = 0x4000;
#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
))]
const O_NONBLOCK: i32 = 0x4;
#[cfg(all(
    unix,
    not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))
))]
const O_NONBLOCK: i32 = 0;

/// Opens `path` for reading without blocking on a FIFO.
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(O_NONBLOCK);
    }
    options.open(path)
}

/// Opens the file argument `arg` at `path` for reading: a regular file of at most `kind`'s
/// cap. Its metadata is checked before it is opened, so a FIFO or a device is never opened;
/// then the open file itself, which is what is read. Returns it with its size.
fn open_regular(arg: &str, path: &Path, kind: Kind) -> anyhow::Result<(File, u64)> {
    let fail = |why: &dyn std::fmt::Display| anyhow!("{arg} {}: {why}", path.display());
    let regular = |meta: &Metadata| -> anyhow::Result<()> {
        if !meta.is_file() {
            bail!(fail(&format!("not a regular file ({})", file_type(meta))));
        }
        if meta.len() > kind.cap() {
            bail!(too_large(arg, path, kind, Some(meta.len())));
        }
        Ok(())
    };
    regular(&std::fs::metadata(path).map_err(|e| fail(&e))?)?;
    let file = open_nonblocking(path).map_err(|e| fail(&e))?;
    let meta = file.metadata().map_err(|e| fail(&e))?;
    regular(&meta)?;
    Ok((file, meta.len()))
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

/// Checks the file argument `arg` as [`read`] would, without reading it: for a file a library
/// function reads by its path.
///
/// # Errors
/// As [`read`].
pub fn check_input(arg: &str, path: &Path, kind: Kind) -> anyhow::Result<()> {
    open_regular(arg, path, kind).map(|_| ())
}

/// Reads the plan file `arg` at `path`; errors name the argument or the file.
pub fn read_plan(arg: &str, path: &Path) -> anyhow::Result<PlanFile> {
    let text = read_text(arg, path, Kind::Plan)?;
    PlanFile::from_json(&text).with_context(|| format!("{}", path.display()))
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

/// `path` with `.ext` added (`lbdf` and `bpk`: `lbdf.bpk`).
pub fn with_ext(path: &Path, ext: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
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
            let opened = open_nonblocking(&path).and_then(|f| f.metadata());
            let _ = tx.send(opened.map(|m| file_type(&m)));
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
}
