//! Files read whole within a bound.
//!
//! A dictionary, a patch's reference, a settings file, a certificate: the
//! commands hold such files in memory whole, so a path naming `/dev/zero`,
//! a FIFO that never ends or a file larger than memory must cost no more
//! than a limit the caller chose. [`read`] takes a regular file only when
//! its size is within the limit (refused before a byte is read), never
//! reads past the size it had when opened, and treats anything else (a
//! device, a FIFO, `<(...)`) as the caller's [`Special`] says: refused
//! before a byte is read, or read up to the limit and refused past it. A
//! FIFO is never waited on when it is to be refused.
//!
//! ```
//! use wholefile::{Error, Special};
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("dict");
//! std::fs::write(&path, b"zstd dictionary bytes")?;
//! assert_eq!(wholefile::read(&path, 1 << 20, Special::Refuse)?.len(), 21);
//! assert!(matches!(
//!     wholefile::read("/dev/zero".as_ref(), 1 << 20, Special::Refuse),
//!     Err(Error::NotRegular { kind: "a character device" })
//! ));
//! assert!(matches!(
//!     wholefile::read("/dev/zero".as_ref(), 1 << 20, Special::UpToLimit),
//!     Err(Error::Endless { kind: "a character device", limit: 1048576 })
//! ));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// What to do with a path that is not a regular file (a device, a FIFO, a
/// socket), whose size says nothing of what it will give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// Refuse it before a byte is read: for files whose size must be known
    /// first (a patch reference sizes the window).
    Refuse,
    /// Read it up to the limit, and refuse it when it gives more: for files
    /// a user may hand over as `<(...)` (settings, templates).
    UpToLimit,
}

/// Why a file was not read whole. Each says what went wrong with the file;
/// the caller names the file (and the flag or key that named it).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// It could not be looked at or opened.
    #[error(transparent)]
    Open(io::Error),
    /// A directory, or (under [`Special::Refuse`]) a device, FIFO or
    /// socket.
    #[error("is {kind}, not a regular file")]
    NotRegular {
        /// What it is instead: "a directory", "a character device", ...
        kind: &'static str,
    },
    /// A regular file larger than the limit.
    #[error("is {size} bytes, larger than {limit}")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// Under [`Special::UpToLimit`], a device, FIFO or socket that gave
    /// more than the limit.
    #[error("is {kind}, not a regular file, and gave more than {limit} bytes")]
    Endless {
        /// What it is: "a character device", "a FIFO", ...
        kind: &'static str,
        /// The limit.
        limit: u64,
    },
    /// A regular file that grew past the size it had when opened.
    #[error("grew past its size ({size} bytes) while read")]
    Grew {
        /// Its size when opened.
        size: u64,
    },
    /// Reading it failed.
    #[error("reading: {0}")]
    Read(io::Error),
    /// Under [`read_text`], bytes that are not UTF-8.
    #[error("is not UTF-8 text (byte {at} is not)")]
    NotText {
        /// The offset of the first byte that is not.
        at: usize,
    },
}

/// The bytes of `path`, read whole within `limit` (see the crate docs).
pub fn read(path: &Path, limit: u64, special: Special) -> Result<Vec<u8>, Error> {
    // Looked at before it is opened: opening a FIFO for reading would wait
    // for a writer, and a refused one must not be waited on.
    let before = std::fs::metadata(path).map_err(Error::Open)?;
    screen(&before, special)?;
    // Under Refuse, O_NONBLOCK: should the path become a FIFO between the
    // look and the open, the open still returns at once (it changes nothing
    // for a regular file). A FIFO to be read waits for its writer, as `cat`
    // does.
    let mut options = File::options();
    options.read(true);
    if special == Special::Refuse {
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(Error::Open)?;
    let meta = file.metadata().map_err(Error::Open)?;
    screen(&meta, special)?;
    if meta.file_type().is_file() {
        let size = meta.len();
        if size > limit {
            return Err(Error::TooLarge { size, limit });
        }
        let mut data = Vec::new();
        data.try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX))
            .map_err(|_| Error::TooLarge { size, limit })?;
        // One byte past the size tells a file that grew.
        file.take(size.saturating_add(1))
            .read_to_end(&mut data)
            .map_err(Error::Read)?;
        if data.len() as u64 > size {
            return Err(Error::Grew { size });
        }
        return Ok(data);
    }
    // A device or FIFO under UpToLimit.
    let kind = kind_of(&meta);
    let mut data = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut data)
        .map_err(Error::Read)?;
    if data.len() as u64 > limit {
        return Err(Error::Endless { kind, limit });
    }
    Ok(data)
}

/// The text of `path`: [`read`], and UTF-8.
pub fn read_text(path: &Path, limit: u64, special: Special) -> Result<String, Error> {
    String::from_utf8(read(path, limit, special)?).map_err(|e| Error::NotText {
        at: e.utf8_error().valid_up_to(),
    })
}

/// Refuses a directory always, and anything else but a regular file under
/// [`Special::Refuse`].
fn screen(meta: &Metadata, special: Special) -> Result<(), Error> {
    let t = meta.file_type();
    if t.is_file() || (special == Special::UpToLimit && !t.is_dir()) {
        return Ok(());
    }
    Err(Error::NotRegular {
        kind: kind_of(meta),
    })
}

/// What a file is, with its article, as the messages say it.
fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_read_only_within_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"0123456789").unwrap();
        for special in [Special::Refuse, Special::UpToLimit] {
            assert_eq!(read(&f, 10, special).unwrap(), b"0123456789");
            assert!(matches!(
                read(&f, 9, special),
                Err(Error::TooLarge { size: 10, limit: 9 })
            ));
            assert!(matches!(
                read(dir.path(), u64::MAX, special),
                Err(Error::NotRegular {
                    kind: "a directory"
                })
            ));
            assert!(matches!(
                read(&dir.path().join("missing"), 1, special),
                Err(Error::Open(_))
            ));
        }
        std::fs::write(&f, b"a\xffb").unwrap();
        assert_eq!(
            read_text(&f, 10, Special::Refuse).unwrap_err().to_string(),
            "is not UTF-8 text (byte 1 is not)"
        );
    }

    #[test]
    fn a_device_is_refused_or_read_to_the_limit() {
        let zero = Path::new("/dev/zero");
        assert!(matches!(
            read(zero, u64::MAX, Special::Refuse),
            Err(Error::NotRegular {
                kind: "a character device"
            })
        ));
        let e = read(zero, 4096, Special::UpToLimit).unwrap_err();
        assert_eq!(
            e.to_string(),
            "is a character device, not a regular file, and gave more than 4096 bytes"
        );
        // A device that ends within the limit is read.
        assert_eq!(
            read(Path::new("/dev/null"), 10, Special::UpToLimit).unwrap(),
            b""
        );
    }

    #[test]
    fn a_fifo_is_refused_unwaited_or_read_from_its_writer() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success());
        // No writer: refused at once, not waited on.
        assert!(matches!(
            read(&fifo, u64::MAX, Special::Refuse),
            Err(Error::NotRegular { kind: "a FIFO" })
        ));
        // A writer of a few bytes, then one that never stops.
        for (len, ok) in [(5usize, true), (1 << 20, false)] {
            let writer = {
                let fifo = fifo.clone();
                std::thread::spawn(move || {
                    use std::io::Write;
                    let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
                    // The reader may stop reading (and close) first.
                    let _ = w.write_all(&vec![b'x'; len]);
                })
            };
            let got = read(&fifo, 1000, Special::UpToLimit);
            writer.join().unwrap();
            match got {
                Ok(data) => assert!(ok && data.len() == len),
                Err(Error::Endless {
                    kind: "a FIFO",
                    limit: 1000,
                }) => assert!(!ok),
                other => panic!("{other:?}"),
            }
        }
    }
}
