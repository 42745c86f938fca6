//! Files the FIX commands read whole before they start: settings files,
//! data dictionaries, order templates and the TLS keys' PEM files. Each
//! kind has a limit ([`Kind::limit`], in docs/fix.md): a regular file
//! larger than it is refused before a byte is read, and anything else (a
//! FIFO, `<(...)`, a device such as `/dev/zero`) is read up to the limit
//! and refused past it, so no file can make the process read without
//! end. The error says which limit and why; the caller names the file.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

/// What a file read whole is, for its limit and its errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A QuickFIX settings file (`fix acceptor`, `initiator`, `load`).
    Settings,
    /// A QuickFIX data dictionary (XML).
    Dictionary,
    /// An order template (`--order-template`).
    OrderTemplate,
    /// A PEM file of certificates, a private key or CRLs.
    Pem,
}

impl Kind {
    /// The most bytes a file of this kind may hold: far above any real
    /// one (QuickFIX's largest dictionary, FIX50SP2.xml, is under 4 MiB;
    /// a settings file of 10,000 sessions under 4 MiB), and small enough
    /// to hold in memory.
    pub const fn limit(self) -> u64 {
        match self {
            Kind::Settings => 16 << 20,
            Kind::Dictionary => 64 << 20,
            Kind::OrderTemplate => 1 << 20,
            Kind::Pem => 16 << 20,
        }
    }

    /// The kind, with its article, as the messages name it.
    fn name(self) -> &'static str {
        match self {
            Kind::Settings => "a settings file",
            Kind::Dictionary => "a data dictionary",
            Kind::OrderTemplate => "an order template",
            Kind::Pem => "a PEM file",
        }
    }
}

/// Why a file could not be read whole.
#[derive(Debug, thiserror::Error)]
pub enum WholeFileError {
    /// Opening or reading it failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A regular file larger than its kind's limit.
    #[error("it is {size} bytes, more than the {} {} may be", Mib(kind.limit()), kind.name())]
    TooLarge {
        /// What the file was read as.
        kind: Kind,
        /// Its size.
        size: u64,
    },
    /// Not a regular file (a device, a FIFO), and it gave more than its
    /// kind's limit.
    #[error(
        "it is a {what}, not a regular file, and it gave more than the {} {} may be",
        Mib(kind.limit()),
        kind.name()
    )]
    Endless {
        /// What the file was read as.
        kind: Kind,
        /// `character device`, `FIFO`...
        what: &'static str,
    },
    /// A text file (settings, dictionary) that is not UTF-8.
    #[error("it is not UTF-8 text (byte {at} is not)")]
    NotText {
        /// The offset of the first byte that is not.
        at: usize,
    },
}

/// A limit in MiB, as the messages give it.
struct Mib(u64);

impl fmt::Display for Mib {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} MiB", self.0 >> 20)
    }
}

/// The bytes of `path`, read as a file of `kind` (see the [module
/// docs](self)).
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, WholeFileError> {
    use std::os::unix::fs::FileTypeExt;
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let limit = kind.limit();
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR).into());
    }
    if ft.is_file() && meta.len() > limit {
        return Err(WholeFileError::TooLarge {
            kind,
            size: meta.len(),
        });
    }
    let mut out = Vec::new();
    // One byte past the limit tells a file at it from one beyond it.
    file.take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        let what = if ft.is_char_device() {
            "character device"
        } else if ft.is_block_device() {
            "block device"
        } else if ft.is_fifo() {
            "FIFO"
        } else if ft.is_socket() {
            "socket"
        } else {
            // A regular file that grew while it was read.
            return Err(WholeFileError::TooLarge {
                kind,
                size: out.len() as u64,
            });
        };
        return Err(WholeFileError::Endless { kind, what });
    }
    Ok(out)
}

/// The text of `path`, read as a file of `kind`: [`read`], and UTF-8.
pub fn read_text(path: &Path, kind: Kind) -> Result<String, WholeFileError> {
    String::from_utf8(read(path, kind)?).map_err(|e| WholeFileError::NotText {
        at: e.utf8_error().valid_up_to(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_read_to_the_limit_and_refused() {
        let e = read(Path::new("/dev/zero"), Kind::OrderTemplate).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is a character device, not a regular file, and it gave more than the 1 MiB \
             an order template may be"
        );
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; (1 << 20) + 1]).unwrap();
        let e = read(&big, Kind::OrderTemplate).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("it is 1048577 bytes, more than the 1 MiB"),
            "{e}"
        );
        std::fs::write(&big, vec![b'x'; 1 << 20]).unwrap();
        assert_eq!(read(&big, Kind::OrderTemplate).unwrap().len(), 1 << 20);
        std::fs::write(&big, b"a\xffb").unwrap();
        assert_eq!(
            read_text(&big, Kind::Settings).unwrap_err().to_string(),
            "it is not UTF-8 text (byte 1 is not)"
        );
        let e = read(dir.path(), Kind::Settings).unwrap_err();
        assert!(e.to_string().starts_with("Is a directory"), "{e}");
    }
}
