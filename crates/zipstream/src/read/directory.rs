//! The central directory: finding it from the end record (ZIP64 aware),
//! reading its records a piece at a time, and checking that the entries it
//! describes do not share bytes.
//!
//! Records are read in pieces of at most [`PIECE`] bytes, never the whole
//! directory at once (its size comes from the file), so a reader can walk
//! a directory of any length in bounded memory: [`super::walked`] does,
//! and [`super::archive`] keeps what the walk finds.

use std::io::{Read, Seek};

use super::archive::Source;
use super::header::parse_central;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::format::*;

/// Bytes read from the directory at a time. The longest record (46 fixed
/// bytes and three 16-bit lengths: 196,651 bytes) fits in one piece, so
/// each piece holds at least one whole record.
const PIECE: usize = 256 * 1024;

/// Where the central directory is, as the end record (and its ZIP64
/// counterpart) says.
#[derive(Debug, Clone)]
pub(crate) struct Directory {
    /// Offset of the first record in the file (data prepended counted).
    pub start: u64,
    /// The directory's declared size.
    pub size: u64,
    /// Length of data prepended to the archive (self-extractors): every
    /// offset the records give is shifted by it.
    pub shift: u64,
    /// The entry count the end record gives (modulo 65,536 without ZIP64).
    pub count: u64,
    pub zip64: bool,
    /// The archive comment.
    pub comment: String,
    /// The archive comment's bytes as stored, for a writer that keeps it.
    pub raw_comment: Vec<u8>,
}

impl Directory {
    /// Finds the end record and reads where the directory is.
    pub fn find<R: Read + Seek>(src: &mut Source<R>) -> Result<Directory> {
        let len = src.len()?;
        let tail_len = len.min((EOCD_LEN + 0xFFFF) as u64) as usize;
        let tail_at = len - tail_len as u64;
        let mut tail = vec![0u8; tail_len];
        src.read_at(tail_at, &mut tail)?;
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
        let mut size = u64::from(le32(e, 12));
        let mut off = u64::from(le32(e, 16));
        let comment_len = usize::from(le16(e, 20));
        let raw_comment = e[EOCD_LEN..EOCD_LEN + comment_len].to_vec();
        let comment = crate::entry::decode_name(&raw_comment, true);
        let mut end = eocd_at;
        let mut zip64 = false;
        if eocd_at >= ZIP64_LOCATOR_LEN as u64 {
            let mut loc = [0u8; ZIP64_LOCATOR_LEN];
            src.read_at(eocd_at - ZIP64_LOCATOR_LEN as u64, &mut loc)?;
            if le32(&loc, 0) == ZIP64_LOCATOR_SIG {
                let mut z_at = le64(&loc, 8);
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
                src.read_at(z_at, &mut z)?;
                // Data prepended without adjusting the offsets (`cat stub
                // a.zip`, no `zip -A`) leaves the locator counting from the
                // archive's own start: the record is then where writers
                // put it, just before the locator, and the directory's
                // shift follows from there as for the end record.
                let locator_at = eocd_at - ZIP64_LOCATOR_LEN as u64;
                if le32(&z, 0) != ZIP64_EOCD_SIG
                    && let Some(before) = locator_at.checked_sub(ZIP64_EOCD_LEN as u64)
                    && before > z_at
                {
                    src.read_at(before, &mut z)?;
                    z_at = before;
                }
                if le32(&z, 0) != ZIP64_EOCD_SIG {
                    return Err(Error::Malformed {
                        offset: z_at,
                        what: "bad ZIP64 end of central directory signature".into(),
                    });
                }
                count = le64(&z, 32);
                size = le64(&z, 40);
                off = le64(&z, 48);
                end = z_at;
                zip64 = true;
            }
        }
        let shift = end
            .checked_sub(size)
            .and_then(|s| s.checked_sub(off))
            .ok_or_else(|| Error::Malformed {
                offset: eocd_at,
                what: format!(
                    "central directory ({size} bytes at {off}) does not fit before its end record"
                ),
            })?;
        Ok(Directory {
            start: off + shift,
            size,
            shift,
            count,
            zip64,
            comment,
            raw_comment,
        })
    }

    /// Reads every record, checks them as [`Records::finish`] does and
    /// that the entries do not overlap, and gives each entry with where its
    /// record starts.
    pub fn read_all<R: Read + Seek>(&self, src: &mut Source<R>) -> Result<(Vec<Entry>, Vec<u64>)> {
        let mut entries =
            Vec::with_capacity(self.count.min(self.size / CENTRAL_LEN as u64) as usize);
        let mut starts = Vec::with_capacity(entries.capacity());
        let mut records = Records::default();
        while records.more(self) {
            records.next_piece(self, src, &mut |e, at| {
                entries.push(e);
                starts.push(at);
                Ok(())
            })?;
        }
        records.finish(self)?;
        let mut spans: Vec<Span> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| Span::of(i, e))
            .collect();
        check_spans(&mut spans, self.start).map_err(|c| c.error(&entries[c.index], self.start))?;
        Ok((entries, starts))
    }
}

/// A walk through the directory's records, a piece at a time.
///
/// The size and offset are trusted over the entry count: a writer that put
/// more than 65,535 entries in an archive without ZIP64 records stores the
/// count modulo 65,536, and Info-ZIP and Python read every entry of such
/// an archive, so this does too. Any other disagreement between the count
/// and the records found is an error ([`Records::finish`]), never a
/// subset.
#[derive(Default)]
pub(crate) struct Records {
    /// Directory bytes walked.
    pos: u64,
    /// Records found.
    found: u64,
    piece: Vec<u8>,
}

impl Records {
    /// Whether records are left.
    pub fn more(&self, dir: &Directory) -> bool {
        self.pos < dir.size
    }

    /// Reads the next piece of the directory and hands each whole record
    /// in it to `f` with the offset where it starts.
    pub fn next_piece<R: Read + Seek>(
        &mut self,
        dir: &Directory,
        src: &mut Source<R>,
        f: &mut dyn FnMut(Entry, u64) -> Result<()>,
    ) -> Result<()> {
        let left = dir.size - self.pos;
        let want = left.min(PIECE as u64) as usize;
        let last = want as u64 == left;
        self.piece.resize(want, 0);
        let piece_at = dir.start + self.pos;
        src.read_at(piece_at, &mut self.piece)?;
        let mut i = 0usize;
        while i < want {
            let at = piece_at + i as u64;
            let runs_past = || Error::Malformed {
                offset: at,
                what: format!(
                    "central directory record runs past the directory's declared size ({} bytes)",
                    dir.size
                ),
            };
            let rec = &self.piece[i..];
            if rec.len() < CENTRAL_LEN {
                if last {
                    return Err(runs_past());
                }
                break;
            }
            if le32(rec, 0) != CENTRAL_SIG {
                return Err(Error::Malformed {
                    offset: at,
                    what: format!(
                        "expected a central directory header signature ({} of {} directory bytes read, {} entries found)",
                        self.pos + i as u64,
                        dir.size,
                        self.found
                    ),
                });
            }
            let var = usize::from(le16(rec, 28))
                + usize::from(le16(rec, 30))
                + usize::from(le16(rec, 32));
            if rec.len() < CENTRAL_LEN + var {
                if last {
                    return Err(runs_past());
                }
                break;
            }
            let (mut entry, n) = parse_central(&rec[..CENTRAL_LEN + var], at)?;
            entry.header_offset = entry.header_offset.saturating_add(dir.shift);
            f(entry, at)?;
            self.found += 1;
            i += n;
        }
        self.pos += i as u64;
        Ok(())
    }

    /// Checks, once every record is read, that their number agrees with
    /// the end record's count.
    pub fn finish(&self, dir: &Directory) -> Result<()> {
        let agrees = if dir.zip64 {
            self.found == dir.count
        } else {
            self.found % 0x1_0000 == dir.count
        };
        if !agrees {
            return Err(Error::Malformed {
                offset: dir.start,
                what: format!(
                    "the end record lists {} entries but its central directory ({} bytes) holds {}",
                    dir.count, dir.size, self.found
                ),
            });
        }
        Ok(())
    }
}

/// The bytes an entry occupies, as far as its directory record tells:
/// from its local header past its name and data (a lower bound: the local
/// extra field is not counted). 24 bytes an entry, so an archive of
/// 100,000 entries is checked in 2.4 MB.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    start: u64,
    end: u64,
    /// The entry's place in the directory.
    index: usize,
}

impl Span {
    /// Entry `index`'s span.
    pub fn of(index: usize, e: &Entry) -> Span {
        Span {
            start: e.header_offset,
            end: e
                .header_offset
                .saturating_add(LOCAL_LEN as u64 + e.raw_name().len() as u64)
                .saturating_add(e.compressed_size),
            index,
        }
    }
}

/// Fails when `e`'s span runs into the directory at `cd_start`, as
/// [`check_spans`] would: what a walk checks again of each entry, in case
/// the file changed since it was opened.
pub(crate) fn check_inside(e: &Entry, cd_start: u64) -> Result<()> {
    if Span::of(0, e).end > cd_start {
        return Err(past_directory(e, cd_start));
    }
    Ok(())
}

/// The error for an entry whose data runs into the directory at
/// `cd_start`. It shares no bytes with another entry: its data is cut
/// short or its size is wrong.
fn past_directory(e: &Entry, cd_start: u64) -> Error {
    Error::Malformed {
        offset: e.header_offset,
        what: format!(
            "entry {:?}: its {} compressed bytes run past the start of the central directory at offset {cd_start}: the entry is truncated or its size is wrong",
            e.name, e.compressed_size
        ),
    }
}

/// What [`check_spans`] found wrong, and with which entry.
#[derive(Debug)]
pub(crate) struct Clash {
    /// The entry's place in the directory.
    pub index: usize,
    /// It starts inside the one before it (false: it runs into the
    /// directory).
    overlaps: bool,
}

impl Clash {
    /// The error, for the entry the clash names.
    pub fn error(&self, e: &Entry, cd_start: u64) -> Error {
        if self.overlaps {
            Error::Overlap {
                name: e.name.clone(),
                offset: e.header_offset,
            }
        } else {
            past_directory(e, cd_start)
        }
    }
}

/// Checks that no two entries share bytes (the overlapping-entry zip bomb
/// shares one compressed stream between many) and that none runs into the
/// directory. Sorts `spans`.
pub(crate) fn check_spans(spans: &mut [Span], cd_start: u64) -> std::result::Result<(), Clash> {
    spans.sort_by_key(|s| (s.start, s.index));
    let mut prev_end = 0u64;
    for s in spans.iter() {
        if s.start < prev_end {
            return Err(Clash {
                index: s.index,
                overlaps: true,
            });
        }
        prev_end = s.end;
        if prev_end > cd_start {
            return Err(Clash {
                index: s.index,
                overlaps: false,
            });
        }
    }
    Ok(())
}
