//! The random-access reader: finds the end of central directory record
//! (ZIP64 aware), reads the central directory, and opens entries by index.
//!
//! Opening checks that entries do not overlap (the overlapping-entry zip bomb
//! shares one compressed stream between many entries). For AES entries the
//! authentication code is verified over the whole ciphertext *before* any
//! plaintext is returned, so tampered data is never handed out.

use std::io::{Read, Seek, SeekFrom};

use super::InBuf;
use super::data::{DataState, Plan, Progress};
use super::header::{parse_central, parse_local};
use crate::crypto::{AesDecryptor, MAC_LEN, VERIFIER_LEN};
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::format::*;

/// Random access to a ZIP archive over `Read + Seek`.
pub struct ZipArchive<R: Read + Seek> {
    src: R,
    entries: Vec<Entry>,
    /// Where each entry's central directory record starts, for
    /// [`ZipArchive::copy_source`], which copies it as it is.
    central_at: Vec<u64>,
    comment: String,
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

fn read_exact_at<R: Read + Seek>(r: &mut R, at: u64, buf: &mut [u8]) -> Result<()> {
    r.seek(SeekFrom::Start(at))?;
    r.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => Error::Truncated {
            offset: at + buf.len() as u64,
        },
        _ => e.into(),
    })
}

impl<R: Read + Seek> ZipArchive<R> {
    /// Reads the central directory.
    pub fn new(mut src: R) -> Result<ZipArchive<R>> {
        let len = src.seek(SeekFrom::End(0))?;
        let tail_len = len.min((EOCD_LEN + 0xFFFF) as u64) as usize;
        let tail_at = len - tail_len as u64;
        let mut tail = vec![0u8; tail_len];
        read_exact_at(&mut src, tail_at, &mut tail)?;
        let eocd_rel = (0..tail_len.saturating_sub(EOCD_LEN - 1))
            .rev()
            .find(|&i| {
                le32(&tail, i) == EOCD_SIG
                    && i + EOCD_LEN + usize::from(le16(&tail, i + 20)) <= tail_len
            })
            .ok_or(Error::NotZip)?;
        let eocd_at = tail_at + eocd_rel as u64;
        let e = &tail[eocd_rel..];
        let mut count = u64::from(le16(e, 10));
        let mut cd_size = u64::from(le32(e, 12));
        let mut cd_off = u64::from(le32(e, 16));
        let comment_len = usize::from(le16(e, 20));
        let comment = crate::entry::decode_name(&e[EOCD_LEN..EOCD_LEN + comment_len], true);
        let mut cd_end = eocd_at;
        let mut zip64 = false;
        if eocd_at >= ZIP64_LOCATOR_LEN as u64 {
            let mut loc = [0u8; ZIP64_LOCATOR_LEN];
            read_exact_at(&mut src, eocd_at - ZIP64_LOCATOR_LEN as u64, &mut loc)?;
            if le32(&loc, 0) == ZIP64_LOCATOR_SIG {
                let z_at = le64(&loc, 8);
                let mut z = [0u8; ZIP64_EOCD_LEN];
                if z_at
                    .checked_add(ZIP64_EOCD_LEN as u64)
                    .is_none_or(|end| end > eocd_at)
                {
                    return Err(Error::Malformed {
                        offset: eocd_at - 20,
                        what: "ZIP64 locator points outside the archive".into(),
                    });
                }
                read_exact_at(&mut src, z_at, &mut z)?;
                if le32(&z, 0) != ZIP64_EOCD_SIG {
                    return Err(Error::Malformed {
                        offset: z_at,
                        what: "bad ZIP64 end of central directory signature".into(),
                    });
                }
                count = le64(&z, 32);
                cd_size = le64(&z, 40);
                cd_off = le64(&z, 48);
                cd_end = z_at;
                zip64 = true;
            }
        }
        // Data prepended to the archive (self-extractors) shifts every offset.
        let shift = cd_end.checked_sub(cd_size).and_then(|s| s.checked_sub(cd_off)).ok_or_else(|| Error::Malformed {
            offset: eocd_at,
            what: format!("central directory ({cd_size} bytes at {cd_off}) does not fit before its end record"),
        })?;
        let cd_start = cd_off + shift;
        let (entries, central_at) = read_central(&mut src, cd_start, cd_size, shift, count, zip64)?;
        check_overlap(&entries, cd_start)?;
        Ok(ZipArchive {
            src,
            entries,
            central_at,
            comment,
            pos: None,
            spare: Vec::new(),
            spare_inflater: None,
        })
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
            .ok_or(Error::State("entry index out of range"))?
            .clone();
        let (_, local) = self.local_header(&entry)?;
        let data_at = entry.header_offset + local.len as u64;
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
            data_end: data_at + entry.compressed_size,
            src: (&mut self.src).take(entry.compressed_size),
            inb,
            state,
            entry,
        })
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
        let mut central = vec![0u8; CENTRAL_LEN];
        self.read_at(self.central_at[index], &mut central)?;
        let var = usize::from(le16(&central, 28))
            + usize::from(le16(&central, 30))
            + usize::from(le16(&central, 32));
        central.resize(CENTRAL_LEN + var, 0);
        self.read_at(
            self.central_at[index] + CENTRAL_LEN as u64,
            &mut central[CENTRAL_LEN..],
        )?;
        let (local, parsed) = self.local_header(&entry)?;
        // read_at left the source just past the local header: the data.
        self.pos = None;
        Ok(CopySource {
            data: (&mut self.src).take(entry.compressed_size),
            local_zip64: parsed.zip64,
            entry,
            local,
            central,
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

    /// Reads a whole entry into memory.
    pub fn read_to_vec(&mut self, index: usize, password: Option<&[u8]>) -> Result<Vec<u8>> {
        let mut r = self.open(index, password)?;
        let mut v = Vec::with_capacity(r.entry().size.min(1 << 24) as usize);
        r.read_to_end(&mut v)?;
        Ok(v)
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
    fn read_at(&mut self, at: u64, buf: &mut [u8]) -> Result<()> {
        if self.pos == Some(at) {
            self.pos = None;
            self.src.read_exact(buf).map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => Error::Truncated {
                    offset: at + buf.len() as u64,
                },
                _ => e.into(),
            })?;
        } else {
            self.pos = None;
            read_exact_at(&mut self.src, at, buf)?;
        }
        self.pos = Some(at + buf.len() as u64);
        Ok(())
    }

    /// Returns the underlying reader.
    pub fn into_inner(self) -> R {
        self.src
    }
}

/// Walks the central directory record by record until its declared size is
/// used up, reading it in small pieces (never all at once: its size comes
/// from the file). The size and offset are trusted over the entry count: a
/// writer that put more than 65,535 entries in an archive without ZIP64
/// records stores the count modulo 65,536, and Info-ZIP and Python read
/// every entry of such an archive, so this does too. Any other disagreement
/// between the count and the records found is an error, never a subset.
/// `shift` is the length of data prepended to the archive (self-extractors).
fn read_central<R: Read + Seek>(
    src: &mut R,
    cd_start: u64,
    cd_size: u64,
    shift: u64,
    count: u64,
    zip64: bool,
) -> Result<(Vec<Entry>, Vec<u64>)> {
    src.seek(SeekFrom::Start(cd_start))?;
    let mut r = std::io::BufReader::with_capacity(64 * 1024, src.by_ref().take(cd_size));
    let mut entries = Vec::with_capacity(count.min(cd_size / CENTRAL_LEN as u64) as usize);
    let mut starts = Vec::with_capacity(entries.capacity());
    let mut rec = vec![0u8; CENTRAL_LEN];
    let mut pos = 0u64;
    while pos < cd_size {
        let at = cd_start + pos;
        let short = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => Error::Malformed {
                offset: at,
                what: format!(
                    "central directory record runs past the directory's declared size ({cd_size} bytes)"
                ),
            },
            _ => e.into(),
        };
        rec.resize(CENTRAL_LEN, 0);
        r.read_exact(&mut rec).map_err(short)?;
        if le32(&rec, 0) != CENTRAL_SIG {
            return Err(Error::Malformed {
                offset: at,
                what: format!(
                    "expected a central directory header signature ({} of {cd_size} directory bytes read, {} entries found)",
                    pos,
                    entries.len()
                ),
            });
        }
        let var =
            usize::from(le16(&rec, 28)) + usize::from(le16(&rec, 30)) + usize::from(le16(&rec, 32));
        rec.resize(CENTRAL_LEN + var, 0);
        r.read_exact(&mut rec[CENTRAL_LEN..]).map_err(short)?;
        let (mut entry, n) = parse_central(&rec, at)?;
        entry.header_offset = entry.header_offset.saturating_add(shift);
        entries.push(entry);
        starts.push(at);
        pos += n as u64;
    }
    let found = entries.len() as u64;
    let agrees = if zip64 {
        found == count
    } else {
        found % 0x1_0000 == count
    };
    if !agrees {
        return Err(Error::Malformed {
            offset: cd_start,
            what: format!(
                "the end record lists {count} entries but its central directory ({cd_size} bytes) holds {found}"
            ),
        });
    }
    Ok((entries, starts))
}

/// Rejects archives whose entries share bytes.
fn check_overlap(entries: &[Entry], cd_start: u64) -> Result<()> {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| entries[i].header_offset);
    let mut prev_end = 0u64;
    for &i in &order {
        let e = &entries[i];
        if e.header_offset < prev_end {
            return Err(Error::Overlap {
                name: e.name.clone(),
                offset: e.header_offset,
            });
        }
        // Lower bound of the entry's extent: fixed header, name, data.
        prev_end = e
            .header_offset
            .saturating_add(LOCAL_LEN as u64 + e.raw_name().len() as u64)
            .saturating_add(e.compressed_size);
        if prev_end > cd_start {
            // One entry running into the directory shares no bytes with
            // another: its data is cut short or its size is wrong.
            return Err(Error::Malformed {
                offset: e.header_offset,
                what: format!(
                    "entry {:?}: its {} compressed bytes run past the start of the central directory at offset {cd_start}: the entry is truncated or its size is wrong",
                    e.name, e.compressed_size
                ),
            });
        }
    }
    Ok(())
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
