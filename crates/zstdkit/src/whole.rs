//! Files a coder holds whole: a dictionary, a patch's reference. Each is
//! read only when it is a regular file no larger than the caller's limit,
//! and never past the size it had when opened: a device (`/dev/zero`), a
//! FIFO or a file that grows can cost no more memory than that limit.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

pub use crate::error::WholeFileError;

/// Reads `path` whole when it is a regular file of at most `limit` bytes.
/// Anything else is refused before a byte is read, a FIFO without waiting
/// for a writer; a file that grows while read is refused too (what was
/// measured is what is held).
pub fn read(path: &Path, limit: u64) -> Result<Vec<u8>, WholeFileError> {
    // stat first: opening a FIFO for reading would wait for a writer.
    let meta = std::fs::metadata(path).map_err(WholeFileError::Open)?;
    refuse_special(&meta)?;
    // O_NONBLOCK: should the path turn into a FIFO between the stat and
    // the open, the open still returns at once; on a regular file it
    // changes nothing.
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(WholeFileError::Open)?;
    let meta = file.metadata().map_err(WholeFileError::Open)?;
    refuse_special(&meta)?;
    let size = meta.len();
    if size > limit {
        return Err(WholeFileError::TooLarge { size, limit });
    }
    let mut data = Vec::new();
    data.try_reserve_exact(size as usize)
        .map_err(|_| WholeFileError::TooLarge { size, limit })?;
    file.take(size + 1)
        .read_to_end(&mut data)
        .map_err(WholeFileError::Read)?;
    if data.len() as u64 > size {
        return Err(WholeFileError::Grew { size });
    }
    Ok(data)
}

/// Refuses anything but a regular file, naming what it is.
fn refuse_special(meta: &std::fs::Metadata) -> Result<(), WholeFileError> {
    let t = meta.file_type();
    let kind = if t.is_file() {
        return Ok(());
    } else if t.is_dir() {
        "a directory"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a file"
    };
    Err(WholeFileError::NotRegular { kind })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_within_the_limit_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        assert_eq!(read(&f, 10).unwrap(), b"0123456789");
        assert!(matches!(
            read(&f, 9),
            Err(WholeFileError::TooLarge { size: 10, limit: 9 })
        ));
        for (path, kind) in [
            (Path::new("/dev/zero"), "a character device"),
            (dir.path(), "a directory"),
        ] {
            match read(path, u64::MAX) {
                Err(WholeFileError::NotRegular { kind: k }) => assert_eq!(k, kind),
                other => panic!("{path:?}: {other:?}"),
            }
        }
        // A FIFO with no writer: refused at once, not waited on.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        assert!(matches!(
            read(&fifo, u64::MAX),
            Err(WholeFileError::NotRegular { kind: "a FIFO" })
        ));
        assert!(matches!(
            read(&dir.path().join("missing"), 1),
            Err(WholeFileError::Open(_))
        ));
    }
}
