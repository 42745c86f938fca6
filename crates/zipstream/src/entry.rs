//! What an entry is: the options a writer takes and the metadata a reader returns.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::crypto::AesStrength;

/// Compression method for an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// No compression (method 0).
    Stored,
    /// Deflate (method 8), levels 0-9.
    Deflate,
    /// Zstandard (method 93) through zstdkit, levels 1-22 or a recipe.
    Zstd,
}

impl Method {
    /// The ZIP method id.
    pub fn id(self) -> u16 {
        match self {
            Method::Stored => crate::format::METHOD_STORED,
            Method::Deflate => crate::format::METHOD_DEFLATE,
            Method::Zstd => crate::format::METHOD_ZSTD,
        }
    }
}

/// What kind of file system object an entry is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory (name ends with `/`).
    Directory,
    /// A symbolic link; the entry data is the link target.
    Symlink,
}

/// Options for one entry written by [`crate::ZipWriter`] or [`crate::AsyncZipWriter`].
///
/// Build with [`EntryOptions::file`], [`EntryOptions::directory`] or
/// [`EntryOptions::symlink`], then chain setters.
#[derive(Debug, Clone)]
pub struct EntryOptions {
    pub(crate) name: String,
    pub(crate) kind: EntryKind,
    pub(crate) method: Method,
    pub(crate) level: u32,
    pub(crate) mtime: i64,
    pub(crate) mode: Option<u32>,
    pub(crate) comment: String,
    pub(crate) size_hint: Option<u64>,
    pub(crate) encryption: Option<(AesStrength, Vec<u8>)>,
    pub(crate) detect_incompressible: bool,
    pub(crate) fixed_salt: Option<Vec<u8>>,
    pub(crate) zstd: Option<zstdkit::Params>,
    /// Whether the extended-timestamp extra field (0x5455) is written.
    pub(crate) timestamp_extra: bool,
    /// Marked as made on MS-DOS, with DOS attributes alone (`zip -k`).
    pub(crate) dos_host: bool,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

impl EntryOptions {
    /// A regular file entry, deflate level 6, modified now, mode 0644.
    pub fn file(name: impl Into<String>) -> EntryOptions {
        EntryOptions {
            name: name.into(),
            kind: EntryKind::File,
            method: Method::Deflate,
            level: 6,
            mtime: now(),
            mode: None,
            comment: String::new(),
            size_hint: None,
            encryption: None,
            detect_incompressible: true,
            fixed_salt: None,
            zstd: None,
            timestamp_extra: true,
            dos_host: false,
        }
    }

    /// A directory entry; a trailing `/` is added to the name if missing.
    pub fn directory(name: impl Into<String>) -> EntryOptions {
        let mut name = name.into();
        if !name.ends_with('/') {
            name.push('/');
        }
        EntryOptions {
            kind: EntryKind::Directory,
            method: Method::Stored,
            ..EntryOptions::file(name)
        }
    }

    /// A symbolic link entry; write the target with [`crate::ZipWriter::add_symlink`].
    pub fn symlink(name: impl Into<String>) -> EntryOptions {
        EntryOptions {
            kind: EntryKind::Symlink,
            method: Method::Stored,
            ..EntryOptions::file(name)
        }
    }

    /// Sets the compression method.
    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }
    /// Compresses with zstd (method 93) using a zstdkit recipe or parameters.
    pub fn zstd(mut self, params: impl Into<zstdkit::Params>) -> Self {
        self.method = Method::Zstd;
        self.zstd = Some(params.into());
        self
    }
    /// Sets the compression level (deflate: 0-9; zstd: 1-22).
    pub fn level(mut self, level: u32) -> Self {
        self.level = level;
        self
    }
    /// Sets the modification time in Unix seconds.
    pub fn mtime(mut self, unix_seconds: i64) -> Self {
        self.mtime = unix_seconds;
        self
    }
    /// Sets Unix permission bits (e.g. `0o755`); the file type bits come from the kind.
    pub fn unix_mode(mut self, mode: u32) -> Self {
        self.mode = Some(mode & 0o7777);
        self
    }
    /// Writes no extended-timestamp extra field (Info-ZIP's `zip -X`): the
    /// time is the DOS one alone, local fields stay only where they are
    /// needed (ZIP64 sizes, AES).
    pub fn no_timestamp_extra(mut self) -> Self {
        self.timestamp_extra = false;
        self
    }
    /// Marks the entry as made on MS-DOS (host 0), its attributes DOS's
    /// alone: read-only when the Unix mode has no owner write bit, the
    /// directory bit (Info-ZIP's `zip -k`). Unix permissions are not kept.
    pub fn made_on_dos(mut self) -> Self {
        self.dos_host = true;
        self
    }
    /// Sets the entry comment.
    pub fn comment(mut self, comment: impl Into<String>) -> Self {
        self.comment = comment.into();
        self
    }
    /// Declares the uncompressed size in advance. A hint below 4 GiB keeps a
    /// streamed entry out of ZIP64; exceeding the hint later is an error.
    pub fn size_hint(mut self, bytes: u64) -> Self {
        self.size_hint = Some(bytes);
        self
    }
    /// The hint an entry of `len` bytes held in memory gets when its
    /// caller gave none: its exact size, so that an entry under 4 GiB
    /// written whole from memory is never ZIP64 (its local header then has
    /// no ZIP64 field and its descriptor 32-bit sizes, 28 bytes fewer, and
    /// readers without ZIP64 read it).
    pub(crate) fn sized(mut self, len: usize) -> Self {
        self.size_hint = self.size_hint.or(Some(len as u64));
        self
    }
    /// Encrypts the entry with WinZip AES (AE-2) under `password`.
    pub fn encrypt(mut self, strength: AesStrength, password: impl Into<Vec<u8>>) -> Self {
        self.encryption = Some((strength, password.into()));
        self
    }
    /// Keeps the method even for an entry of at most 64 KiB that it does
    /// not shrink (such an entry is otherwise stored).
    pub fn keep_method(mut self) -> Self {
        self.detect_incompressible = false;
        self
    }
    /// Uses a fixed AES salt instead of a random one. Only for reproducible
    /// tests: reusing a salt with the same password weakens the encryption.
    #[doc(hidden)]
    pub fn insecure_fixed_salt(mut self, salt: Vec<u8>) -> Self {
        self.fixed_salt = Some(salt);
        self
    }

    /// The entry name.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn file_mode(&self) -> u32 {
        match self.kind {
            EntryKind::File => 0o100000 | self.mode.unwrap_or(0o644),
            EntryKind::Directory => 0o040000 | self.mode.unwrap_or(0o755),
            EntryKind::Symlink => 0o120000 | self.mode.unwrap_or(0o777),
        }
    }

    /// Whether the entry records a CRC of its data: not under WinZip AE-2,
    /// where the HMAC authenticates the data and the CRC field is 0.
    pub(crate) fn keeps_crc(&self) -> bool {
        self.encryption.is_none()
    }
}

/// Metadata of an entry as a reader found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Name as stored (UTF-8 when flagged, otherwise decoded as CP437 best effort).
    pub name: String,
    /// The name's bytes as stored, when they are not `name`'s own (a
    /// name that is not UTF-8, decoded as CP437): [`Entry::raw_name`].
    /// Kept apart only then, so an archive of 100,000 entries does not
    /// hold every name twice.
    pub(crate) raw: Option<Box<[u8]>>,
    /// Compression method id of the data (the real one for AES entries).
    pub method: u16,
    /// General purpose flags.
    pub flags: u16,
    /// CRC-32 of the uncompressed data (0 for AE-2).
    pub crc32: u32,
    /// Compressed size including encryption overhead.
    pub compressed_size: u64,
    /// Uncompressed size.
    pub size: u64,
    /// Local header offset (random-access reader only; 0 otherwise).
    pub header_offset: u64,
    /// Modification time in Unix seconds (extended timestamp if present, else DOS time as UTC).
    pub mtime: i64,
    /// The header's MS-DOS time field as stored (ZipCrypto's check byte
    /// is its high byte when a data descriptor follows the data).
    pub dos_time: u16,
    /// Unix mode including type bits, if the archive was made on Unix.
    pub unix_mode: Option<u32>,
    /// Entry comment.
    pub comment: String,
    /// AES parameters if the entry is WinZip AES encrypted.
    pub aes: Option<(AesStrength, u16)>,
    /// Whether the entry is encrypted (AES or legacy).
    pub encrypted: bool,
    /// MS-DOS external attributes (low byte).
    pub dos_attrs: u8,
    /// "Version made by" from the central directory: the host system in
    /// the high byte (3 Unix, 0 MS-DOS), the spec version times ten in the
    /// low one; 0 when only a local header was read.
    pub made_by: u16,
    /// The internal attributes (bit 0: the writer judged it text); 0 from
    /// a local header.
    pub internal_attrs: u16,
    /// How long the central directory's extra field is (0 from a local
    /// header).
    pub extra_len: u16,
    /// The external attributes as stored (`unix_mode` and `dos_attrs` are
    /// read from them); 0 from a local header.
    pub external_attrs: u32,
}

impl Entry {
    /// An entry named by `raw` as stored, decoded as `name`.
    pub(crate) fn named(raw: &[u8], name: String) -> (String, Option<Box<[u8]>>) {
        let raw = (raw != name.as_bytes()).then(|| raw.into());
        (name, raw)
    }

    /// The name's bytes exactly as the archive stores them.
    pub fn raw_name(&self) -> &[u8] {
        self.raw.as_deref().unwrap_or(self.name.as_bytes())
    }

    /// The kind of object, from the Unix mode if present, else the name/DOS bits.
    pub fn kind(&self) -> EntryKind {
        if let Some(m) = self.unix_mode {
            match m & 0o170000 {
                0o040000 => return EntryKind::Directory,
                0o120000 => return EntryKind::Symlink,
                0o100000 => return EntryKind::File,
                _ => {}
            }
        }
        if self.name.ends_with('/') || self.dos_attrs & 0x10 != 0 {
            EntryKind::Directory
        } else {
            EntryKind::File
        }
    }
}

/// Decodes a name: UTF-8 when flagged or valid, else CP437 for the ASCII range
/// and U+FFFD for the rest (enough to make names printable and comparable).
pub(crate) fn decode_name(raw: &[u8], utf8_flag: bool) -> String {
    match std::str::from_utf8(raw) {
        Ok(s) => s.to_owned(),
        Err(_) if utf8_flag => String::from_utf8_lossy(raw).into_owned(),
        Err(_) => raw
            .iter()
            .map(|&b| if b < 0x80 { b as char } else { cp437_high(b) })
            .collect(),
    }
}

fn cp437_high(b: u8) -> char {
    const HIGH: &str = "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}";
    HIGH.chars()
        .nth(usize::from(b - 0x80))
        .unwrap_or('\u{fffd}')
}
