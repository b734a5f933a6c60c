//! Opening a file the user named, for reading, without hanging.
//!
//! A program that reads a file argument checks its metadata first (a regular file, within a
//! cap), so that a FIFO or a device is never opened. Between that check and the open, the path
//! can be swapped for a FIFO, and a plain open of a FIFO for reading waits for a writer for
//! ever. [`open_nonblocking`] opens with `O_NONBLOCK`, which returns at once on a FIFO and is
//! ignored by regular files. [`open_regular`] is the whole sequence: the metadata checked by
//! path, the non-blocking open, and the same check again on the open handle ([`File::metadata`]),
//! which is what is read. Both the program's reader and the ONNX importer open through it, and
//! word its refusals ([`Refused`]) their own way.

use std::fs::{File, Metadata, OpenOptions};
use std::path::Path;

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
///
/// # Errors
/// The operating system's.
pub fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(O_NONBLOCK);
    }
    options.open(path)
}

/// What a file that is not a regular file is, in words: `a folder`, `a FIFO`, `a character
/// device`, `a block device`, `a socket`, or `not a file`.
pub fn described(meta: &Metadata) -> &'static str {
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

/// Why [`open_regular`] did not open a path.
#[derive(Debug)]
pub enum Refused {
    /// The operating system's error (no such file, no permission, ...).
    Io(std::io::Error),
    /// Not a regular file: what it is instead ([`described`]).
    NotAFile(&'static str),
    /// A regular file of this many bytes, more than the cap.
    TooLarge(u64),
}

/// Opens `path` for reading if it is a regular file of at most `cap` bytes, and returns it
/// with its size. The metadata is checked before the open, so that a FIFO or a device is never
/// opened; the open is non-blocking ([`open_nonblocking`]), so that a FIFO swapped in after the
/// check cannot hang it; and the open handle is checked again, since it is what is read.
///
/// # Errors
/// [`Refused`]: the operating system's error, a path that is not a regular file, or one past
/// `cap`.
pub fn open_regular(path: &Path, cap: u64) -> Result<(File, u64), Refused> {
    let regular = |meta: &Metadata| {
        if !meta.is_file() {
            return Err(Refused::NotAFile(described(meta)));
        }
        if meta.len() > cap {
            return Err(Refused::TooLarge(meta.len()));
        }
        Ok(())
    };
    regular(&std::fs::metadata(path).map_err(Refused::Io)?)?;
    let file = open_nonblocking(path).map_err(Refused::Io)?;
    let meta = file.metadata().map_err(Refused::Io)?;
    regular(&meta)?;
    Ok((file, meta.len()))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    /// What a check-then-open race relies on: a FIFO swapped in after the check opens at once
    /// (a plain `File::open` would wait for a writer for ever), and its handle says what it is.
    #[test]
    fn a_fifo_opens_at_once_and_its_handle_says_so() {
        let dir = std::env::temp_dir().join(format!("fuselage-ir-fs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: mkfifo is not available");
            return;
        }
        let file = open_nonblocking(&fifo).unwrap();
        assert!(file.metadata().unwrap().file_type().is_fifo());
        assert!(matches!(
            open_regular(&fifo, 100),
            Err(Refused::NotAFile("a FIFO"))
        ));
        let plain = dir.join("plain");
        std::fs::write(&plain, b"bytes").unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut open_nonblocking(&plain).unwrap(), &mut text).unwrap();
        assert_eq!(text, "bytes");
        assert_eq!(open_regular(&plain, 5).unwrap().1, 5);
        assert!(matches!(open_regular(&plain, 4), Err(Refused::TooLarge(5))));
        std::fs::remove_dir_all(&dir).ok();
    }
}
