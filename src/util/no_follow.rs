//! Reading an indexed file without following a symbolic link at its last component. The
//! walker never indexes a symbolic link, so a path the index lists that is one now was
//! swapped in after the build, and may point anywhere (`src/a.py -> ~/.ssh/id_rsa`): reads of
//! indexed paths refuse it in the same `open`, with no window between a check and the read.
//!
//! Only regular files are read: every open here is non-blocking (a FIFO opens at once instead
//! of waiting for a writer forever) and what was opened is checked with `fstat` before a byte
//! is read, so a FIFO, socket or device swapped in after the walk is an error, not a hang.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for reading; fails (`ELOOP`) when its last component is a symbolic link, and
/// when it is not a regular file.
pub fn open_no_follow(path: &Path) -> std::io::Result<File> {
    open_regular_with(path, nix::fcntl::OFlag::O_NOFOLLOW.bits())
}

/// Opens `path` (following links) for reading; fails when it is not a regular file.
pub fn open_regular(path: &Path) -> std::io::Result<File> {
    open_regular_with(path, 0)
}

/// The bytes of `path` (following links), which must be a regular file.
pub fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn open_regular_with(path: &Path, flags: i32) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags | nix::fcntl::OFlag::O_NONBLOCK.bits())
        .open(path)?;
    let kind = file.metadata()?.file_type();
    match kind.is_file() {
        true => Ok(file),
        false => Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("not a regular file ({})", special_kind(&kind)),
        )),
    }
}

/// What a file that is not a regular file is, in words.
pub fn special_kind(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_fifo() {
        "a named pipe"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_dir() {
        "a folder"
    } else if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_file() {
        "a file"
    } else {
        "not a regular file"
    }
}

/// The bytes of `path`, read as [`open_no_follow`] opens it.
pub fn read_no_follow(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_no_follow(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symbolic_link_is_not_followed_and_a_file_is_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "hi").unwrap();
        std::os::unix::fs::symlink(dir.path().join("a.txt"), dir.path().join("b.txt")).unwrap();
        assert_eq!(read_no_follow(&dir.path().join("a.txt")).unwrap(), b"hi");
        assert!(read_no_follow(&dir.path().join("b.txt")).is_err());
    }

    #[test]
    fn a_named_pipe_is_refused_at_once_not_waited_on() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.py");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = read_regular(&fifo).unwrap_err();
        assert!(err.to_string().contains("named pipe"), "{err}");
        assert!(read_no_follow(&fifo).is_err());
    }
}
