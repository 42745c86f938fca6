//! The crate's one error type.

use std::path::PathBuf;

/// Everything that can go wrong while writing, reading, extracting or
/// planning an update of an archive.
///
/// Variants carry the entry name or the byte offset so that a one-line message
/// tells the user where the problem is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The underlying reader or writer failed.
    #[error("I/O error: {0}")]
    Io(#[source] std::io::Error),
    /// No end-of-central-directory record: the input is not a ZIP archive (or is truncated).
    #[error("not a ZIP archive: no end of central directory record in the last 64 KiB")]
    NotZip,
    /// A record is structurally invalid.
    #[error("malformed archive at offset {offset}: {what}")]
    Malformed {
        /// Byte offset of the bad record.
        offset: u64,
        /// What is wrong with it.
        what: String,
    },
    /// The input ended in the middle of a record or of entry data.
    #[error("truncated archive: unexpected end of input at offset {offset}")]
    Truncated {
        /// Offset at which more bytes were expected.
        offset: u64,
    },
    /// The decompressed data does not match the stored CRC-32.
    #[error("entry {name:?}: CRC-32 mismatch (stored {expected:#010x}, computed {actual:#010x})")]
    Crc {
        /// Entry name.
        name: String,
        /// CRC recorded in the archive.
        expected: u32,
        /// CRC of the data actually read.
        actual: u32,
    },
    /// The entry's data length does not match the recorded size.
    #[error("entry {name:?}: {which} size mismatch (recorded {expected}, found {actual})")]
    Size {
        /// Entry name.
        name: String,
        /// "compressed" or "uncompressed".
        which: &'static str,
        /// Size recorded in the archive.
        expected: u64,
        /// Size actually found.
        actual: u64,
    },
    /// The compressed stream is corrupt (deflate data, or any method's data
    /// ending early; zstd's own failures are [`Error::Zstd`]).
    #[error("entry {name:?}: corrupt compressed data: {detail}")]
    Corrupt {
        /// Entry name.
        name: String,
        /// Decoder message.
        detail: String,
    },
    /// The entry's zstd data cannot be decoded: it is corrupt or cut short,
    /// or a frame needs a larger window than the decoder's memory limit
    /// (128 MiB, the `zstd` CLI's default). Positions in `source` count
    /// from the start of the entry's compressed data (after any AES header).
    #[error("entry {name:?}: compressed data: {source}")]
    Zstd {
        /// Entry name.
        name: String,
        /// What zstdkit found, and where.
        #[source]
        source: zstdkit::Error,
    },
    /// The entry uses a compression or encryption method this crate does not implement.
    #[error("entry {name:?}: unsupported {what} {id}")]
    Unsupported {
        /// Entry name.
        name: String,
        /// "compression method", "AES strength", "encryption" ...
        what: &'static str,
        /// The numeric identifier found.
        id: u32,
    },
    /// The entry is encrypted and no password was supplied.
    #[error("entry {name:?} is encrypted: a password is required")]
    PasswordRequired {
        /// Entry name.
        name: String,
    },
    /// The password verifier does not match: the password is wrong.
    #[error("entry {name:?}: wrong password")]
    WrongPassword {
        /// Entry name.
        name: String,
    },
    /// The WinZip AES authentication code does not match: the data was altered.
    #[error(
        "entry {name:?}: authentication code mismatch, the encrypted data was tampered with or corrupted"
    )]
    AuthFailed {
        /// Entry name.
        name: String,
    },
    /// Extraction refused a name that would land outside the target directory.
    #[error("entry {name:?}: unsafe path ({reason}); refusing to extract")]
    UnsafePath {
        /// Entry name.
        name: String,
        /// Why it is unsafe.
        reason: &'static str,
    },
    /// Extraction refused a symlink whose target leaves the target directory.
    #[error(
        "entry {name:?}: symlink target {target:?} escapes the destination; refusing to extract"
    )]
    SymlinkEscape {
        /// Entry name.
        name: String,
        /// The link target.
        target: String,
    },
    /// Two entries map to the same output path.
    #[error("entry {name:?}: duplicate of an earlier entry; refusing to overwrite it")]
    Duplicate {
        /// Entry name.
        name: String,
    },
    /// The output file already exists and overwriting was not requested.
    #[error("{}: already exists", path.display())]
    Exists {
        /// Existing path.
        path: PathBuf,
    },
    /// Extraction could not create, write or put in place an entry's
    /// file or directory (a directory or file in the way, a full disk, no
    /// permission).
    #[error("{}: {source}", path.display())]
    Output {
        /// The file the entry was to become.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// The extraction's destination directory could not be created.
    #[error("cannot create extraction directory {}: {source}", path.display())]
    Destination {
        /// The directory asked for.
        path: PathBuf,
        /// What the file system said.
        #[source]
        source: std::io::Error,
    },
    /// An extraction limit (total size, entry count, compression ratio) was exceeded.
    #[error("entry {name:?}: {what} limit exceeded ({actual} > {limit}); possible zip bomb")]
    Limit {
        /// Entry name.
        name: String,
        /// Which limit.
        what: &'static str,
        /// The limit.
        limit: u64,
        /// The value that exceeded it.
        actual: u64,
    },
    /// Entries share bytes in the archive (the overlapping-entry zip bomb construction).
    #[error(
        "entry {name:?} at offset {offset} overlaps the previous entry's data; possible zip bomb"
    )]
    Overlap {
        /// Entry name.
        name: String,
        /// Its local header offset.
        offset: u64,
    },
    /// An entry grew past the size the caller promised, after the header was committed.
    #[error(
        "entry {name:?}: {actual} bytes written but the size hint promised at most {hint}; the header cannot describe it"
    )]
    SizeHintExceeded {
        /// Entry name.
        name: String,
        /// The hint given.
        hint: u64,
        /// Bytes actually written.
        actual: u64,
    },
    /// Two different files would be stored under one name in an archive
    /// being written or updated ([`crate::update::dedupe`]): an archive with
    /// duplicate names cannot be extracted faithfully.
    #[error(
        "cannot repeat names in zip file: {} and {} would both be stored as {name:?}",
        first.display(),
        second.display()
    )]
    RepeatedName {
        /// The name both would be stored under.
        name: String,
        /// The file that took the name first.
        first: PathBuf,
        /// The other file.
        second: PathBuf,
    },
    /// The caller passed invalid options (name too long, bad level ...).
    #[error("invalid options: {0}")]
    InvalidOptions(String),
    /// A method was called in the wrong state (write with no open entry, after finish ...).
    #[error("writer misuse: {0}")]
    State(&'static str),
    /// An object storage URL is not of the form `s3://bucket/key`.
    #[error("{url}: malformed object URL: {reason}")]
    ObjectUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The object store refused or failed a request (configuration,
    /// credentials, network, or the service's answer).
    #[cfg(feature = "s3")]
    #[error("object storage: {}", describe(.0))]
    ObjectStore(#[from] object_store::Error),
}

/// Result with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Every `io::Error` becomes a crate error here, so one of ours that
/// travelled through `Read`/`Write` (the object sink's, a reader's) comes back
/// as itself in the sync and async writers alike, never nested under
/// "I/O error".
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        match e.downcast::<Error>() {
            Ok(ours) => ours,
            Err(e) => Error::Io(e),
        }
    }
}

impl From<Error> for std::io::Error {
    fn from(e: Error) -> Self {
        match e {
            Error::Io(io) => io,
            other => std::io::Error::other(other),
        }
    }
}

/// One line for an object_store error: its message, then any cause deeper
/// in the chain that the message does not already repeat (the actionable
/// part is often last), with an S3 XML error document shortened to its
/// `Code: Message`.
#[cfg(feature = "s3")]
fn describe(e: &object_store::Error) -> String {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let part = s.to_string();
        if !msg.contains(&part) {
            msg.push_str(": ");
            msg.push_str(&part);
        }
        source = s.source();
    }
    let mut msg = shorten_xml_error(&msg);
    if msg.contains("URL scheme is not allowed") {
        msg.push_str(" (set AWS_ALLOW_HTTP=true for an http:// endpoint)");
    }
    msg.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Replaces each `<?xml …><Error><Code>C</Code><Message>M</Message>…</Error>`
/// in `msg` with `C: M`.
#[cfg(feature = "s3")]
fn shorten_xml_error(msg: &str) -> String {
    let field = |doc: &str, tag: &str| -> Option<String> {
        let start = doc.find(&format!("<{tag}>"))? + tag.len() + 2;
        let len = doc[start..].find(&format!("</{tag}>"))?;
        Some(doc[start..start + len].to_string())
    };
    let mut out = String::new();
    let mut rest = msg;
    while let Some(start) = rest.find("<?xml").or_else(|| rest.find("<Error>")) {
        let Some(end) = rest[start..]
            .find("</Error>")
            .map(|e| start + e + "</Error>".len())
        else {
            break;
        };
        let doc = &rest[start..end];
        out.push_str(&rest[..start]);
        match (field(doc, "Code"), field(doc, "Message")) {
            (Some(c), Some(m)) => out.push_str(&format!("{c}: {m}")),
            (Some(c), None) => out.push_str(&c),
            _ => out.push_str(doc),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(all(test, feature = "s3"))]
mod tests {
    use super::*;

    #[test]
    fn shortens_s3_error_documents() {
        let m = "PUT failed: 404 Not Found: <?xml version=\"1.0\"?>\n<Error><Code>NoSuchBucket</Code>\
                 <Message>The specified bucket does not exist</Message><HostId>x</HostId></Error>";
        assert_eq!(
            shorten_xml_error(m),
            "PUT failed: 404 Not Found: NoSuchBucket: The specified bucket does not exist"
        );
        assert_eq!(
            shorten_xml_error("plain <Error> text"),
            "plain <Error> text"
        );
    }
}
