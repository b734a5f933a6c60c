//! Opening a file the user named, for reading, without hanging.
//!
//! A program that reads a file argument checks its metadata first (a regular file, within a
//! cap), so that a FIFO or a device is never opened. Between that check and the open, the path
//! can be swapped for a FIFO, and a plain open of a FIFO for reading waits for a writer for
//! ever. [`open_nonblocking`] opens with `O_NONBLOCK`, which returns at once on a FIFO and is
//! ignored by regular files; the caller then checks the metadata of the open handle
//! ([`File::metadata`]), which is what it reads. Both the program's reader and the ONNX
//! importer open through here.

use std::fs::{File, OpenOptions};
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
        let plain = dir.join("plain");
        std::fs::write(&plain, b"bytes").unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut open_nonblocking(&plain).unwrap(), &mut text).unwrap();
        assert_eq!(text, "bytes");
        std::fs::remove_dir_all(&dir).ok();
    }
}
