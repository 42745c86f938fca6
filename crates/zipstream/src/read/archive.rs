//! The random-access reader: holds the central directory
//! (`super::directory` finds and reads it) and opens entries by index.
//!
//! Opening checks that entries do not overlap (the overlapping-entry zip bomb
//! shares one compressed stream between many entries). For AES entries the
//! authentication code is verified over the whole ciphertext *before* any
//! plaintext is returned, so tampered data is never handed out.

use std::io::{Read, Seek, SeekFrom};

use super::InBuf;
use super::data::{DataState, Plan, Progress};
use super::directory::Directory;
use super::header::parse_local;
use crate::crypto::{AesDecryptor, MAC_LEN, VERIFIER_LEN};
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::format::*;

/// Random access to a ZIP archive over `Read + Seek`, its central
/// directory held in memory (about 200 bytes an entry; [`WalkedArchive`]
/// reads it as it goes instead).
///
/// [`WalkedArchive`]: super::walked::WalkedArchive
pub struct ZipArchive<R: Read + Seek> {
    source: Source<R>,
    entries: Vec<Entry>,
    /// Where each entry's central directory record starts, for
    /// [`ZipArchive::copy_source`], which copies it as it is.
    central_at: Vec<u64>,
    comment: String,
    /// The comment's bytes as stored.
    raw_comment: Vec<u8>,
    /// Bytes before the first local header (see [`ZipArchive::preamble_len`]).
    preamble: u64,
    /// How far the recorded offsets fall short of the real ones.
    shift: u64,
}

/// An archive's bytes, and what reading its entries in order carries from
/// one entry to the next: where the source is, the read-ahead buffer and
/// the deflate state. [`EntryWalk::walk`] hands it out to open each entry.
///
/// [`EntryWalk::walk`]: super::EntryWalk::walk
pub struct Source<R: Read + Seek> {
    src: R,
    /// Where `src` is, when known. Seeking is skipped when the next read
    /// starts there: reading entries in order then never seeks, which
    /// matters because a `BufReader` drops its buffer on every seek (one
    /// 64 KiB refill per header and per entry, 13 GB of copying for 100,000
    /// tiny files).
    pos: Option<u64>,
    /// The read-ahead buffer of the last entry reader, handed to the next
    /// one: allocating and zeroing 64 KiB per entry was most of the CPU time
    /// of extracting many tiny files.
    spare: Vec<u8>,
    /// The deflate state of the last entry read, handed to the next (see
    /// `Decoder::for_method`).
    spare_inflater: Option<Box<flate2::Decompress>>,
}

impl<R: Read + Seek> ZipArchive<R> {
    /// Reads the central directory.
    pub fn new(src: R) -> Result<ZipArchive<R>> {
        let mut source = Source::new(src);
        let dir = Directory::find(&mut source)?;
        let (entries, central_at) = dir.read_all(&mut source)?;
        let preamble = entries
            .iter()
            .map(|e| e.header_offset)
            .fold(dir.start, u64::min);
        Ok(ZipArchive {
            source,
            entries,
            central_at,
            comment: dir.comment,
            raw_comment: dir.raw_comment,
            preamble,
            shift: dir.shift,
        })
    }

    /// The number of bytes before the first local header (or before the
    /// central directory, with no entries): a self-extractor's stub, or
    /// whatever else was put in front of the archive. 0 for a plain one.
    pub fn preamble_len(&self) -> u64 {
        self.preamble
    }

    /// How many bytes the offsets the archive records fall short of where
    /// its entries are: 0 for a plain archive and for a self-extractor
    /// whose offsets count its stub (`zip -A`); the stub's length for one
    /// made by prepending it alone (`cat stub a.zip`). Reading allows for
    /// it either way.
    pub fn offsets_shift(&self) -> u64 {
        self.shift
    }

    /// The [shift](ZipArchive::offsets_shift) an update corrects, as
    /// Info-ZIP's `zip -A` does ("Zip entry offsets appear off by N bytes"):
    /// none when there is no shift, or no entry whose offset it would
    /// change (an empty archive records none).
    pub fn offsets_off(&self) -> Option<u64> {
        (self.shift > 0 && !self.entries.is_empty()).then_some(self.shift)
    }

    /// The newest modification time of the entries that are not folders,
    /// in Unix seconds (what `zip -o` and `unzip -T` give the archive
    /// file, as Info-ZIP's do); none when there is no such entry.
    pub fn newest_file_time(&self) -> Option<i64> {
        self.entries
            .iter()
            .filter(|e| e.kind() != crate::EntryKind::Directory)
            .map(|e| e.mtime)
            .max()
    }

    /// The archive comment's bytes as stored (the [`comment`] decoded
    /// them, replacing what is not UTF-8).
    ///
    /// [`comment`]: ZipArchive::comment
    pub fn raw_comment(&self) -> &[u8] {
        &self.raw_comment
    }

    /// Copies the [preamble](ZipArchive::preamble_len) to `out`, byte for
    /// byte; returns its length.
    pub fn copy_preamble<W: std::io::Write>(&mut self, out: &mut W) -> Result<u64> {
        let s = &mut self.source;
        s.src.seek(SeekFrom::Start(0))?;
        s.pos = None;
        let n = std::io::copy(&mut (&mut s.src).take(self.preamble), out)?;
        if n != self.preamble {
            return Err(Error::Truncated { offset: n });
        }
        Ok(n)
    }

    /// The entries in central directory order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The archive comment.
    pub fn comment(&self) -> &str {
        &self.comment
    }

    /// Index of the entry named `name`.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.entries.iter().position(|e| e.name == name)
    }

    /// Opens entry `index` for reading. AES entries need `password`; their
    /// authentication code is checked before this returns.
    pub fn open(&mut self, index: usize, password: Option<&[u8]>) -> Result<EntryReader<'_, R>> {
        let entry = self
            .entries
            .get(index)
            .ok_or(Error::State("entry index out of range"))?;
        self.source.open(entry, password)
    }

    /// Entry `index` as it is stored, for another archive's writer to copy
    /// without decoding it ([`crate::ZipWriter::copy_entry`]): its local
    /// header and central directory record, byte for byte, and a reader
    /// of its compressed (and encrypted) data. Nothing is decoded or
    /// checked beyond the headers: the copy is what the original was.
    pub fn copy_source(&mut self, index: usize) -> Result<CopySource<'_, R>> {
        let entry = self
            .entries
            .get(index)
            .ok_or(Error::State("entry index out of range"))?
            .clone();
        let s = &mut self.source;
        let mut central = vec![0u8; CENTRAL_LEN];
        s.read_at(self.central_at[index], &mut central)?;
        let var = usize::from(le16(&central, 28))
            + usize::from(le16(&central, 30))
            + usize::from(le16(&central, 32));
        central.resize(CENTRAL_LEN + var, 0);
        s.read_at(
            self.central_at[index] + CENTRAL_LEN as u64,
            &mut central[CENTRAL_LEN..],
        )?;
        let (local, parsed) = s.local_header(&entry)?;
        // read_at left the source just past the local header: the data.
        s.pos = None;
        Ok(CopySource {
            data: (&mut s.src).take(entry.compressed_size),
            local_zip64: parsed.zip64,
            entry,
            local,
            central,
        })
    }

    /// Reads a whole entry into memory.
    pub fn read_to_vec(&mut self, index: usize, password: Option<&[u8]>) -> Result<Vec<u8>> {
        let mut r = self.open(index, password)?;
        let mut v = Vec::with_capacity(r.entry().size.min(1 << 24) as usize);
        r.read_to_end(&mut v)?;
        Ok(v)
    }

    /// Returns the underlying reader.
    pub fn into_inner(self) -> R {
        self.source.src
    }
}

impl<R: Read + Seek> super::EntryWalk<R> for ZipArchive<R> {
    fn walk(&mut self, f: &mut dyn FnMut(&Entry, &mut Source<R>) -> Result<()>) -> Result<()> {
        for e in &self.entries {
            f(e, &mut self.source)?;
        }
        Ok(())
    }
}

impl<R: Read + Seek> super::sealed::Sealed for ZipArchive<R> {}

impl<R: Read + Seek> Source<R> {
    pub(crate) fn new(src: R) -> Source<R> {
        Source {
            src,
            pos: None,
            spare: Vec::new(),
            spare_inflater: None,
        }
    }

    /// The archive's length.
    pub(crate) fn len(&mut self) -> Result<u64> {
        self.pos = None;
        Ok(self.src.seek(SeekFrom::End(0))?)
    }

    /// Opens `entry`, one of this archive's, for reading. AES entries need
    /// `password`; their authentication code is checked before this
    /// returns.
    pub fn open(&mut self, entry: &Entry, password: Option<&[u8]>) -> Result<EntryReader<'_, R>> {
        let entry = entry.clone();
        let (_, local) = self.local_header(&entry)?;
        let data_at = entry.header_offset.saturating_add(local.len as u64);
        let state = DataState::new(Plan {
            entry: &entry,
            sizes_known: true,
            local_zip64: local.zip64,
            password,
            // Kept through stored and zstd entries for the next deflated one.
            spare_inflater: if entry.method == METHOD_DEFLATE {
                self.spare_inflater.take()
            } else {
                None
            },
        })?;
        if let (Some((strength, _)), Some(pw)) = (entry.aes, password) {
            self.authenticate(&entry, data_at, strength, pw)?;
        }
        if self.pos != Some(data_at) {
            self.src.seek(SeekFrom::Start(data_at))?;
        }
        // Known again once the reader is dropped (see its Drop).
        self.pos = None;
        let inb = InBuf::with_buffer(std::mem::take(&mut self.spare), data_at);
        Ok(EntryReader {
            pos: &mut self.pos,
            spare: &mut self.spare,
            spare_inflater: &mut self.spare_inflater,
            data_end: data_at.saturating_add(entry.compressed_size),
            src: (&mut self.src).take(entry.compressed_size),
            inb,
            state,
            entry,
        })
    }

    /// Reads `entry`'s local header (its bytes, and parsed), which must
    /// name the entry as the central directory does; leaves the source
    /// just past it, at the entry's data.
    fn local_header(&mut self, entry: &Entry) -> Result<(Vec<u8>, super::header::Local)> {
        let mut head = vec![0u8; LOCAL_LEN];
        self.read_at(entry.header_offset, &mut head)?;
        let var = usize::from(le16(&head, 26)) + usize::from(le16(&head, 28));
        head.resize(LOCAL_LEN + var, 0);
        self.read_at(
            entry.header_offset + LOCAL_LEN as u64,
            &mut head[LOCAL_LEN..],
        )?;
        let local = parse_local(&head, entry.header_offset)?.ok_or(Error::Truncated {
            offset: entry.header_offset,
        })?;
        if local.entry.raw_name() != entry.raw_name() {
            return Err(Error::Malformed {
                offset: entry.header_offset,
                what: format!(
                    "local header name {:?} differs from central directory name {:?}",
                    local.entry.name, entry.name
                ),
            });
        }
        Ok((head, local))
    }

    fn authenticate(
        &mut self,
        e: &Entry,
        data_at: u64,
        strength: crate::AesStrength,
        pw: &[u8],
    ) -> Result<()> {
        let hl = strength.salt_len() + VERIFIER_LEN;
        if e.compressed_size < strength.overhead() {
            return Err(Error::Malformed {
                offset: e.header_offset,
                what: format!("entry {:?}: too short for AES", e.name),
            });
        }
        let mut h = vec![0u8; hl];
        self.read_at(data_at, &mut h)?;
        // The MAC pass below reads on without tracking; seek again after.
        self.pos = None;
        let mut d = AesDecryptor::new(
            strength,
            pw,
            &h[..strength.salt_len()],
            &h[strength.salt_len()..],
        )
        .ok_or_else(|| Error::WrongPassword {
            name: e.name.clone(),
        })?;
        let mut left = e.compressed_size - strength.overhead();
        let mut buf = vec![0u8; 64 * 1024];
        while left > 0 {
            let n = left.min(buf.len() as u64) as usize;
            self.src
                .read_exact(&mut buf[..n])
                .map_err(|_| Error::Truncated { offset: data_at })?;
            d.authenticate(&buf[..n]);
            left -= n as u64;
        }
        let mut mac = [0u8; MAC_LEN];
        self.src
            .read_exact(&mut mac)
            .map_err(|_| Error::Truncated { offset: data_at })?;
        if !d.verify(&mac) {
            return Err(Error::AuthFailed {
                name: e.name.clone(),
            });
        }
        Ok(())
    }

    /// Reads `buf.len()` bytes at `at`, seeking only if not already there.
    pub(crate) fn read_at(&mut self, at: u64, buf: &mut [u8]) -> Result<()> {
        if self.pos.take() != Some(at) {
            self.src.seek(SeekFrom::Start(at))?;
        }
        self.src.read_exact(buf).map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::Truncated {
                offset: at + buf.len() as u64,
            },
            _ => e.into(),
        })?;
        self.pos = Some(at + buf.len() as u64);
        Ok(())
    }
}

/// An entry as it is stored in an archive, to be copied into another
/// ([`ZipArchive::copy_source`]).
pub struct CopySource<'a, R: Read + Seek> {
    pub(crate) entry: Entry,
    /// The local header, name and extra fields included.
    pub(crate) local: Vec<u8>,
    /// The central directory record, name, extra and comment included.
    pub(crate) central: Vec<u8>,
    /// The local header has a ZIP64 extra field, so a data descriptor
    /// after the data holds 64-bit sizes.
    pub(crate) local_zip64: bool,
    /// The compressed data.
    pub(crate) data: std::io::Take<&'a mut R>,
}

impl<R: Read + Seek> CopySource<'_, R> {
    /// The entry's metadata.
    pub fn entry(&self) -> &Entry {
        &self.entry
    }
}

/// Reads one entry's data, verifying CRC-32 and sizes at the end.
pub struct EntryReader<'a, R: Read + Seek> {
    /// The archive's position slot, updated on drop.
    pos: &'a mut Option<u64>,
    /// The archive's spare read-ahead buffer, given back on drop.
    spare: &'a mut Vec<u8>,
    /// The archive's spare deflate state, given back on drop.
    spare_inflater: &'a mut Option<Box<flate2::Decompress>>,
    /// Offset just past this entry's data.
    data_end: u64,
    src: std::io::Take<&'a mut R>,
    inb: InBuf,
    state: DataState,
    entry: Entry,
}

impl<R: Read + Seek> EntryReader<'_, R> {
    /// The entry's metadata.
    pub fn entry(&self) -> &Entry {
        &self.entry
    }

    /// Compressed bytes consumed and uncompressed bytes produced so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.state.consumed(), self.state.produced())
    }

    /// Fails once the output passes `max` bytes (bomb defence).
    pub fn limit(&mut self, max: u64) {
        self.state.max_output = max;
    }

    /// Reads data; 0 at the end (after verification succeeded).
    pub fn read_data(&mut self, out: &mut [u8]) -> Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            match self.state.step(&mut self.inb, out)? {
                Progress::Data(0) => {}
                Progress::Data(n) => return Ok(n),
                Progress::NeedInput => self.inb.fill_from(&mut self.src)?,
                Progress::Done => return Ok(0),
            }
        }
    }
}

impl<R: Read + Seek> Drop for EntryReader<'_, R> {
    fn drop(&mut self) {
        // Take's limit is what it has not yet read from the source, so the
        // source sits that far short of the data's end.
        *self.pos = self.data_end.checked_sub(self.src.limit());
        *self.spare = std::mem::take(&mut self.inb.buf);
        if let Some(d) = self.state.take_inflater() {
            *self.spare_inflater = Some(d);
        }
    }
}

impl<R: Read + Seek> Read for EntryReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        Ok(self.read_data(buf)?)
    }
}
