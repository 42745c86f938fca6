//! Files the FIX commands read whole before they start: settings files,
//! data dictionaries, order templates and the TLS keys' PEM files. Each
//! kind has a limit ([`Kind::limit`], in docs/fix.md): a regular file
//! larger than it is refused before a byte is read, and anything else (a
//! FIFO, `<(...)`, a device such as `/dev/zero`) is read up to the limit
//! and refused past it, so no file can make the process read without
//! end ([`wholefile`] reads them). The error says which limit and why;
//! the caller names the file.

use std::fmt;
use std::io;
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
    wholefile::read(path, kind.limit(), wholefile::Special::UpToLimit).map_err(|e| of(e, kind))
}

/// The text of `path`, read as a file of `kind`: [`read`], and UTF-8.
pub fn read_text(path: &Path, kind: Kind) -> Result<String, WholeFileError> {
    String::from_utf8(read(path, kind)?).map_err(|e| WholeFileError::NotText {
        at: e.utf8_error().valid_up_to(),
    })
}

/// [`wholefile`]'s refusal in the words of a file of `kind`.
fn of(e: wholefile::Error, kind: Kind) -> WholeFileError {
    use wholefile::Error as E;
    match e {
        E::Open(io) | E::Read(io) => WholeFileError::Io(io),
        E::NotRegular { .. } => io::Error::from_raw_os_error(libc::EISDIR).into(),
        E::TooLarge { size, .. } => WholeFileError::TooLarge { kind, size },
        E::Grew { .. } => io::Error::other("it grew while it was read").into(),
        E::Endless { kind: what, .. } => WholeFileError::Endless {
            kind,
            what: what.trim_start_matches("an ").trim_start_matches("a "),
        },
        E::NotText { at } => WholeFileError::NotText { at },
    }
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
