//! Reading an indexed file without following a symbolic link at its last component. The
//! walker never indexes a symbolic link, so a path the index lists that is one now was
//! swapped in after the build, and may point anywhere (`src/a.py -> ~/.ssh/id_rsa`): reads of
//! indexed paths refuse it in the same `open`, with no window between a check and the read.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` for reading; fails (`ELOOP`) when its last component is a symbolic link.
pub fn open_no_follow(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits())
        .open(path)
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
}
