//! The sans-I/O writer core. It turns entry options and data into archive
//! bytes in an output buffer; the sync and async writers only move that buffer
//! to their sink, which is why both produce identical archives.
//!
//! Layout decisions:
//! - The first [`SAMPLE`] bytes of every entry are held back before the local
//!   header is written. An entry that ends within them gets a header with its
//!   real sizes and CRC (no data descriptor, no ZIP64), whatever the sink, and
//!   is stored when deflating it saves nothing. A longer entry keeps its
//!   method to the end, judged on the whole entry as Info-ZIP's `zip` judges
//!   it: Info-ZIP stores a file only when all of it fits its first deflate
//!   block, and otherwise keeps deflate even where it grew (on any sink). An
//!   incompressible stretch inside an entry costs little either way: the
//!   deflater writes it as stored blocks ([`crate::codec`]).
//! - Longer entries on a non-seekable sink use a data descriptor. Without a
//!   size hint below 4 GiB the local header carries a ZIP64 extra field with
//!   zero sizes and 0xFFFFFFFF in the 32-bit fields, and the descriptor holds
//!   64-bit sizes: the layout Info-ZIP `zip` writes when reading stdin, which
//!   streaming readers (bsdtar, unzip, Java) understand.
//! - On a seekable sink the same header is written and later patched in
//!   place, with no data descriptor.

use crc32fast::Hasher;

use crate::codec::Encoder;
use crate::crypto::{self, AesEncryptor, AesStrength, MAC_LEN};
use crate::entry::{EntryKind, EntryOptions, Method};
use crate::error::{Error, Result};
use crate::format::*;

mod header;

use self::header::{central_header, entry_flags, local_header, version_needed};

/// Raw bytes held back per entry before its header is committed.
pub const SAMPLE: usize = 64 * 1024;
/// A hint at or above this stays ZIP64: deflate can expand incompressible
/// data slightly and AES adds up to 28 bytes.
const HINT_ZIP64_AT: u64 = 0xFFFF_FFFF - 0x0100_0000;

/// A byte range of already-emitted output to overwrite (seekable sinks).
#[derive(Debug)]
pub(crate) struct Patch {
    pub offset: u64,
    pub bytes: Vec<u8>,
}

/// What a writer tells about an entry it finished, for a caller that
/// reports each entry as Info-ZIP's `zip` does (`adding: a.txt (deflated 62%)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The entry's name as stored.
    pub name: String,
    /// The compression method's id (0 stored, 8 deflate, 93 zstd), the real
    /// one under AES (whose header says 99).
    pub method: u16,
    /// Bytes stored for the data, AES salt and MAC included.
    pub compressed_size: u64,
    /// Bytes of data before compression.
    pub size: u64,
    /// The WinZip AES strength, if the entry is encrypted.
    pub aes: Option<AesStrength>,
}

/// What the central directory needs about a finished entry.
struct Record {
    name: Vec<u8>,
    comment: Vec<u8>,
    flags: u16,
    method: u16,
    version_needed: u16,
    time: u16,
    date: u16,
    crc: u32,
    csize: u64,
    usize: u64,
    offset: u64,
    external: u32,
    /// "Version made by": its host and spec version.
    made_by: u16,
    /// The time of the extended-timestamp extra field; none without one.
    mtime: Option<i64>,
    aes: Option<(AesStrength, u16)>,
    /// The central record of an entry copied from another archive, as it
    /// was there: written back with only its offset changed.
    copied: Option<Vec<u8>>,
}

/// An entry being copied from another archive ([`Core::start_copy`]).
struct Copying {
    entry: crate::entry::Entry,
    central: Vec<u8>,
    local_zip64: bool,
    offset: u64,
    /// Compressed bytes still to come.
    left: u64,
}

struct Open {
    opts: EntryOptions,
    method: Method,
    offset: u64,
    header_written: bool,
    zip64_local: bool,
    descriptor: bool,
    /// The local header already holds the final sizes and CRC.
    sized_header: bool,
    sample: Vec<u8>,
    encoder: Encoder,
    /// The running CRC of the raw data; `None` for an AE-2 entry, which
    /// stores no CRC (the HMAC authenticates the data instead), so nothing
    /// is hashed for it.
    crc: Option<Hasher>,
    raw: u64,
    comp: u64,
    aes: Option<AesEncryptor>,
}

impl Open {
    /// Feeds the CRC, if the entry keeps one.
    fn hash_crc(&mut self, data: &[u8]) {
        if let Some(crc) = self.crc.as_mut() {
            crc.update(data);
        }
    }

    /// The CRC the headers and the central directory record: 0 under AE-2.
    fn stored_crc(&self) -> u32 {
        self.crc.as_ref().map_or(0, |crc| crc.clone().finalize())
    }
}

/// The writer state machine.
pub(crate) struct Core {
    /// Bytes produced and not yet handed to the sink.
    pub out: Vec<u8>,
    /// Archive offset of the byte after the last one produced.
    pos: u64,
    /// Where the archive starts in the file (after a preamble).
    base: u64,
    seekable: bool,
    records: Vec<Record>,
    open: Option<Open>,
    copying: Option<Copying>,
    finished: bool,
    comment: Vec<u8>,
}

impl Core {
    pub(crate) fn new(seekable: bool) -> Core {
        Core {
            out: Vec::with_capacity(SAMPLE + 1024),
            pos: 0,
            base: 0,
            seekable,
            records: Vec::new(),
            open: None,
            copying: None,
            finished: false,
            comment: Vec::new(),
        }
    }

    /// Starts writing at a non-zero offset (appending after other data).
    pub(crate) fn set_base_offset(&mut self, pos: u64) {
        self.pos = pos;
        self.base = pos;
    }

    pub(crate) fn set_comment(&mut self, comment: &str) -> Result<()> {
        self.set_comment_bytes(comment.as_bytes())
    }

    /// Sets the archive comment to `comment` as it is (another archive's,
    /// kept byte for byte whatever its encoding).
    pub(crate) fn set_comment_bytes(&mut self, comment: &[u8]) -> Result<()> {
        if comment.len() > 0xFFFF {
            return Err(Error::InvalidOptions(
                "archive comment longer than 65,535 bytes".into(),
            ));
        }
        self.comment = comment.to_vec();
        Ok(())
    }

    pub(crate) fn entries(&self) -> usize {
        self.records.len()
    }

    pub(crate) fn written(&self, index: usize) -> Option<Written> {
        let r = self.records.get(index)?;
        Some(Written {
            name: String::from_utf8_lossy(&r.name).into_owned(),
            method: r.aes.map_or(r.method, |(_, m)| m),
            compressed_size: r.csize,
            size: r.usize,
            aes: r.aes.map(|(strength, _)| strength),
        })
    }

    fn emit(&mut self, bytes: &[u8]) {
        self.out.extend_from_slice(bytes);
        self.pos += bytes.len() as u64;
    }

    /// Opens an entry. Nothing is emitted until the sample is full.
    pub(crate) fn start(&mut self, opts: EntryOptions) -> Result<()> {
        if self.finished {
            return Err(Error::State("archive already finished"));
        }
        if self.open.is_some() || self.copying.is_some() {
            return Err(Error::State("previous entry not finished"));
        }
        if opts.name.is_empty() || opts.name.len() > 0xFFFF || opts.name.contains('\0') {
            return Err(Error::InvalidOptions(format!(
                "entry name {:?} is empty, contains NUL or is over 65,535 bytes",
                opts.name
            )));
        }
        if opts.comment.len() > 0xFFFF {
            return Err(Error::InvalidOptions(format!(
                "entry {:?}: comment over 65,535 bytes",
                opts.name
            )));
        }
        if opts.level > 9 && opts.method != Method::Zstd || opts.level > 22 {
            return Err(Error::InvalidOptions(format!(
                "entry {:?}: deflate level {} not in 0-9",
                opts.name, opts.level
            )));
        }
        let method = if opts.kind == EntryKind::File {
            opts.method
        } else {
            Method::Stored
        };
        let aes = match &opts.encryption {
            None => None,
            Some((strength, pw)) => {
                let mut salt = vec![0u8; strength.salt_len()];
                match &opts.fixed_salt {
                    Some(s) if s.len() == salt.len() => salt.copy_from_slice(s),
                    Some(_) => {
                        return Err(Error::InvalidOptions(
                            "fixed salt has the wrong length".into(),
                        ));
                    }
                    None => crypto::random_salt(&mut salt)?,
                }
                Some(AesEncryptor::new(*strength, pw, &salt))
            }
        };
        self.open = Some(Open {
            encoder: Encoder::with_zstd(method, opts.level, opts.zstd)
                .map_err(|e| Error::InvalidOptions(format!("zstd parameters: {e}")))?,
            method,
            offset: self.pos,
            header_written: false,
            zip64_local: false,
            descriptor: false,
            sized_header: false,
            sample: Vec::new(),
            crc: opts.keeps_crc().then(Hasher::new),
            raw: 0,
            comp: 0,
            aes,
            opts,
        });
        Ok(())
    }

    /// Adds entry data.
    pub(crate) fn write(&mut self, mut data: &[u8]) -> Result<()> {
        let Some(open) = self.open.as_mut() else {
            return Err(Error::State("write with no open entry"));
        };
        if !open.header_written {
            let take = (SAMPLE - open.sample.len()).min(data.len());
            if open.sample.capacity() == 0 {
                open.sample.reserve_exact(SAMPLE);
            }
            open.sample.extend_from_slice(&data[..take]);
            data = &data[take..];
            if open.sample.len() < SAMPLE {
                return Ok(());
            }
            self.commit_sample(false)?;
        }
        if !data.is_empty() {
            self.compress(data);
        }
        Ok(())
    }

    /// Compresses (and encrypts) `data` straight into the output buffer.
    fn compress(&mut self, data: &[u8]) {
        let open = self.open.as_mut().expect("caller checked");
        open.hash_crc(data);
        open.raw += data.len() as u64;
        let start = self.out.len();
        open.encoder.encode(data, &mut self.out);
        Self::seal(open, &mut self.out, start, &mut self.pos);
    }

    /// Encrypts the output produced since `start` and accounts for it.
    fn seal(open: &mut Open, out: &mut [u8], start: usize, pos: &mut u64) {
        if let Some(aes) = open.aes.as_mut() {
            aes.encrypt(&mut out[start..]);
        }
        let n = (out.len() - start) as u64;
        open.comp += n;
        *pos += n;
    }

    /// Decides the method from the sample, writes the header and the sample.
    /// `complete` means the entry ends with the sample.
    fn commit_sample(&mut self, complete: bool) -> Result<()> {
        let mut open = self.open.take().expect("caller checked");
        let sample = std::mem::take(&mut open.sample);
        open.hash_crc(&sample);
        open.raw = sample.len() as u64;
        let mut body = Vec::with_capacity(sample.len() / 2 + 64);
        if complete {
            open.encoder.encode(&sample, &mut body);
            open.encoder.finish(&mut body);
        } else {
            // The sample joins what follows: a deflate piece is then a whole
            // piece long, not cut at the sample (each piece starts without
            // the previous one's window).
            open.encoder.encode(&sample, &mut body);
        }
        // Only a whole entry is judged: a head that does not compress says
        // nothing of what follows (random bytes before megabytes of text).
        let may_switch = complete
            && open.method != Method::Stored
            && open.opts.detect_incompressible
            && open.opts.level > 0;
        if may_switch && body.len() >= sample.len() {
            open.method = Method::Stored;
            open.encoder = Encoder::Store;
            body.clear();
            body.extend_from_slice(&sample);
        }
        self.commit_header(open, body, complete)
    }

    /// Writes the local header (with exact sizes when `complete`), the AES
    /// header and `body` (compressed, not yet encrypted).
    fn commit_header(&mut self, mut open: Open, mut body: Vec<u8>, complete: bool) -> Result<()> {
        if let Some(aes) = open.aes.as_mut() {
            aes.encrypt(&mut body);
        }
        let aes_extra = open.aes.as_ref().map_or(0, |_| MAC_LEN as u64);
        let aes_header = open
            .aes
            .as_ref()
            .map(|a| a.header().to_vec())
            .unwrap_or_default();
        open.comp = (aes_header.len() + body.len()) as u64;
        if complete {
            open.sized_header = true;
            let sizes = Some((open.stored_crc(), open.comp + aes_extra, open.raw));
            open.zip64_local = open.raw >= U32_SENTINEL || open.comp + aes_extra >= U32_SENTINEL;
            let header = local_header(&open, sizes);
            self.emit(&header);
        } else {
            let hinted_small = open.opts.size_hint.is_some_and(|h| h < HINT_ZIP64_AT);
            open.zip64_local = !hinted_small;
            open.descriptor = !self.seekable;
            let header = local_header(&open, None);
            self.emit(&header);
        }
        self.emit(&aes_header);
        self.emit(&body);
        open.header_written = true;
        self.open = Some(open);
        Ok(())
    }

    /// Opens an entry whose data arrives already compressed with `method`
    /// (the parallel writer's blocks): no sampling, no encoder.
    pub(crate) fn start_raw(&mut self, opts: EntryOptions, method: Method) -> Result<()> {
        self.start(opts)?;
        let open = self.open.as_mut().expect("just opened");
        open.method = method;
        open.encoder = Encoder::Store;
        Ok(())
    }

    /// Appends compressed bytes for `raw_len` input bytes whose CRC is `crc`.
    /// `crc` is `None` exactly when the entry keeps no CRC
    /// ([`EntryOptions::keeps_crc`]), so the caller need not hash the block.
    /// `whole` says this is the entire entry, so the header gets exact sizes.
    ///
    /// Crate-internal: the only caller (the parallel writer) decides whether
    /// to hash a block by the same `keeps_crc` that decided `open.crc`, so
    /// the two always agree; a mismatch is a bug here, not a caller's error.
    pub(crate) fn write_raw(
        &mut self,
        comp: &[u8],
        raw_len: u64,
        crc: Option<u32>,
        whole: bool,
    ) -> Result<()> {
        let Some(open) = self.open.as_mut() else {
            return Err(Error::State("write with no open entry"));
        };
        debug_assert_eq!(
            open.crc.is_some(),
            crc.is_some(),
            "a raw block carries a CRC exactly when its entry keeps one"
        );
        if let (Some(running), Some(crc)) = (open.crc.as_mut(), crc) {
            running.combine(&Hasher::new_with_initial_len(crc, raw_len));
        }
        if !open.header_written {
            let mut open = self.open.take().expect("checked");
            open.raw = raw_len;
            return self.commit_header(open, comp.to_vec(), whole);
        }
        open.raw += raw_len;
        let start = self.out.len();
        self.out.extend_from_slice(comp);
        Self::seal(open, &mut self.out, start, &mut self.pos);
        Ok(())
    }

    /// Ends the current entry. Returns a header patch for seekable sinks.
    pub(crate) fn finish_entry(&mut self) -> Result<Option<Patch>> {
        let Some(open) = self.open.as_ref() else {
            return Err(Error::State("finish_entry with no open entry"));
        };
        let mut patch = None;
        if !open.header_written {
            self.commit_sample(true)?;
        } else {
            let open = self.open.as_mut().expect("checked above");
            let start = self.out.len();
            open.encoder.finish(&mut self.out);
            Self::seal(open, &mut self.out, start, &mut self.pos);
        }
        let open = self.open.as_mut().expect("still open");
        if let Some(aes) = open.aes.take() {
            let code = aes.finish();
            self.out.extend_from_slice(&code);
            self.pos += MAC_LEN as u64;
            open.comp += MAC_LEN as u64;
        }
        let open = self.open.as_ref().expect("still open");
        let crc = open.stored_crc();
        if !open.sized_header {
            if let Some(hint) = open.opts.size_hint
                && !open.zip64_local
                && (open.raw >= U32_SENTINEL || open.comp >= U32_SENTINEL)
            {
                return Err(Error::SizeHintExceeded {
                    name: open.opts.name.clone(),
                    hint,
                    actual: open.raw,
                });
            }
            if self.seekable {
                let bytes = local_header(open, Some((crc, open.comp, open.raw)));
                patch = Some(Patch {
                    offset: open.offset,
                    bytes,
                });
            } else {
                let mut d = Vec::with_capacity(24);
                d.put32(DESCRIPTOR_SIG);
                d.put32(crc);
                if open.zip64_local {
                    d.put64(open.comp);
                    d.put64(open.raw);
                } else {
                    d.put32(open.comp as u32);
                    d.put32(open.raw as u32);
                }
                self.emit(&d);
            }
        }
        let open = self.open.take().expect("still open");
        let (time, date) = dos_datetime(open.opts.mtime);
        let flags = entry_flags(&open);
        let mode = open.opts.file_mode();
        let mut dos = if open.opts.kind == EntryKind::Directory {
            0x10
        } else {
            0
        };
        // Made on MS-DOS (zip -k): DOS's attributes alone, the owner's
        // write bit read as DOS's read-only one's opposite.
        let (mode, made_by) = if open.opts.dos_host {
            if mode & 0o200 == 0 {
                dos |= 0x01;
            }
            (0, VERSION_MADE_BY_DOS)
        } else {
            (mode, VERSION_MADE_BY)
        };
        self.records.push(Record {
            name: open.opts.name.as_bytes().to_vec(),
            comment: open.opts.comment.as_bytes().to_vec(),
            flags,
            method: if open.opts.encryption.is_some() {
                METHOD_AES
            } else {
                open.method.id()
            },
            version_needed: version_needed(&open),
            time,
            date,
            crc,
            csize: open.comp,
            usize: open.raw,
            offset: open.offset,
            external: (mode << 16) | dos,
            made_by,
            mtime: open.opts.timestamp_extra.then_some(open.opts.mtime),
            aes: open
                .opts
                .encryption
                .as_ref()
                .map(|(s, _)| (*s, open.method.id())),
            copied: None,
        });
        Ok(patch)
    }

    /// Starts copying `entry` from another archive as it is: its local
    /// header `local` goes out now, byte for byte; its compressed data
    /// follows through [`Core::copied`]; `central` is its central
    /// record there. `local_zip64`: the local header has a ZIP64 field.
    pub(crate) fn start_copy(
        &mut self,
        entry: crate::entry::Entry,
        local: &[u8],
        central: Vec<u8>,
        local_zip64: bool,
    ) -> Result<()> {
        if self.finished {
            return Err(Error::State("archive already finished"));
        }
        if self.open.is_some() || self.copying.is_some() {
            return Err(Error::State("previous entry not finished"));
        }
        let offset = self.pos;
        self.emit(local);
        self.copying = Some(Copying {
            left: entry.compressed_size,
            entry,
            central,
            local_zip64,
            offset,
        });
        Ok(())
    }

    /// Accounts for `n` compressed bytes of the entry being copied that
    /// the driver moved to the sink itself, after draining [`Core::out`]
    /// (the data never passes through this buffer: the sync writer hands
    /// it from file to file with `std::io::copy`, which the kernel does
    /// without a trip through user space where it can).
    pub(crate) fn copied(&mut self, n: u64) -> Result<()> {
        let Some(c) = self.copying.as_mut() else {
            return Err(Error::State("copied with no entry being copied"));
        };
        c.left = c
            .left
            .checked_sub(n)
            .ok_or(Error::State("more data copied than the entry holds"))?;
        self.pos += n;
        Ok(())
    }

    /// Ends the entry being copied: its data descriptor when its local
    /// header promised one, and its central record for later.
    pub(crate) fn finish_copy(&mut self) -> Result<()> {
        let Some(c) = self.copying.take() else {
            return Err(Error::State("finish_copy with no entry being copied"));
        };
        if c.left != 0 {
            return Err(Error::Truncated {
                offset: self.pos + c.left,
            });
        }
        let e = c.entry;
        if e.flags & FLAG_DESCRIPTOR != 0 {
            let d = super::copy::descriptor(e.crc32, e.compressed_size, e.size, c.local_zip64);
            self.emit(&d);
        }
        let (time, date) = (le16(&c.central, 12), le16(&c.central, 14));
        self.records.push(Record {
            name: e.raw_name().to_vec(),
            comment: e.comment.into_bytes(),
            flags: e.flags,
            method: e.method,
            version_needed: le16(&c.central, 6),
            time,
            date,
            crc: e.crc32,
            csize: e.compressed_size,
            usize: e.size,
            offset: c.offset,
            external: le32(&c.central, 38),
            made_by: le16(&c.central, 4),
            mtime: Some(e.mtime),
            aes: e.aes.map(|(strength, _)| (strength, e.method)),
            copied: Some(c.central),
        });
        Ok(())
    }

    /// Writes the central directory and end records.
    pub(crate) fn finish(&mut self) -> Result<()> {
        if self.finished {
            return Err(Error::State("archive already finished"));
        }
        if self.open.is_some() || self.copying.is_some() {
            return Err(Error::State("finish with an entry still open"));
        }
        self.finished = true;
        let cd_start = self.pos;
        let mut buf = Vec::with_capacity(256);
        for i in 0..self.records.len() {
            buf.clear();
            central_header(&self.records[i], &mut buf)?;
            self.emit(&buf);
        }
        let cd_size = self.pos - cd_start;
        let count = self.records.len() as u64;
        // With no entries, the directory's offset is written as if the
        // archive began the file, as Info-ZIP writes it after a preamble:
        // unzip 6.0 looks for a directory record at the offset given, and
        // calls an empty archive whose offset counts the preamble corrupt
        // ("start of central directory not found"), while this one it
        // reads as empty. Readers find the preamble from the difference.
        let recorded_start = if count == 0 {
            cd_start - self.base
        } else {
            cd_start
        };
        let need64 = count >= 0xFFFF || cd_size >= U32_SENTINEL || recorded_start >= U32_SENTINEL;
        buf.clear();
        if need64 {
            let eocd64 = self.pos;
            buf.put32(ZIP64_EOCD_SIG);
            buf.put64((ZIP64_EOCD_LEN - 12) as u64);
            buf.put16(VERSION_MADE_BY);
            buf.put16(VERSION_ZIP64);
            buf.put32(0); // this disk
            buf.put32(0); // disk with the central directory
            buf.put64(count);
            buf.put64(count);
            buf.put64(cd_size);
            buf.put64(recorded_start);
            buf.put32(ZIP64_LOCATOR_SIG);
            buf.put32(0); // disk with the ZIP64 EOCD
            buf.put64(eocd64);
            buf.put32(1); // total number of disks: one
        }
        buf.put32(EOCD_SIG);
        buf.put16(0);
        buf.put16(0);
        buf.put16(count.min(0xFFFF) as u16);
        buf.put16(count.min(0xFFFF) as u16);
        buf.put32(cd_size.min(U32_SENTINEL) as u32);
        buf.put32(recorded_start.min(U32_SENTINEL) as u32);
        buf.put16(self.comment.len() as u16);
        buf.extend_from_slice(&self.comment);
        self.emit(&buf);
        Ok(())
    }
}
