//! Walking a zstd stream frame by frame without decompressing it: each
//! frame's header (RFC 8878 §3.1.1) and the length of its blocks, so a
//! caller can list a file (`--list`), cut it into independent frames to
//! decode in parallel, or stream one frame in order.
//!
//! A zstd frame is a magic number, a header (descriptor, optional window
//! descriptor, dictionary id and content size), blocks each led by a
//! 3-byte header that gives its length, and an optional 4-byte checksum;
//! a skippable frame is a magic number and a length. Only headers are
//! read; block contents are passed over, so memory stays one buffer
//! whatever the frame's size.
//!
//! ```
//! let mut two = zstdkit::compress(b"one", zstdkit::Recipe::Fast)?;
//! two.extend(zstdkit::compress(b"two", zstdkit::Recipe::Fast)?);
//! let mut walker = zstdkit::frame::FrameWalker::new(&two[..]);
//! let mut sizes = Vec::new();
//! while let Some(unit) = walker.peek()? {
//!     sizes.push(unit.content_size());
//!     walker.take(None)?;
//! }
//! assert_eq!(sizes, [Some(3), Some(3)]);
//! # Ok::<(), zstdkit::Error>(())
//! ```

use std::io::{self, Read};

use crate::error::{Error, Result};

mod summary;

pub use summary::Summary;

/// The magic number of a zstd frame.
pub const ZSTD_MAGIC: u32 = 0xFD2F_B528;
/// The first of the sixteen skippable-frame magic numbers.
pub const SKIPPABLE_MAGIC: u32 = 0x184D_2A50;
/// The bits a skippable-frame magic number shares with
/// [`SKIPPABLE_MAGIC`].
pub const SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
/// The longest frame header: magic, descriptor, window descriptor,
/// dictionary id and content size.
const MAX_HEADER: usize = 4 + 1 + 1 + 4 + 8;

/// A zstd frame's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// The header's length, its magic number included.
    pub header_len: usize,
    /// The size the frame decompresses to, when the header records it.
    pub content_size: Option<u64>,
    /// The window the frame needs to be decoded.
    pub window: u64,
    /// The dictionary it was made with (0: none).
    pub dict_id: u32,
    /// Whether a 4-byte content checksum follows the last block.
    pub checksum: bool,
}

/// What starts at a position of a zstd stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A zstd frame.
    Frame(FrameHeader),
    /// A skippable frame of `len` bytes after its 8-byte header.
    Skippable {
        /// The length of its contents.
        len: u32,
    },
}

impl Unit {
    /// What a zstd frame's header says it decompresses to (`None` when it
    /// does not say); a skippable frame decompresses to nothing.
    pub fn content_size(&self) -> Option<u64> {
        match self {
            Unit::Frame(h) => h.content_size,
            Unit::Skippable { .. } => Some(0),
        }
    }

    /// Reads the unit at the start of `b`, found at `offset` in the
    /// stream: `Ok(None)` when `b` is too short to tell (give more, or it
    /// is truncated).
    pub fn parse(b: &[u8], offset: u64) -> Result<Option<Unit>> {
        if b.len() < 4 {
            return Ok(None);
        }
        let magic = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC {
            if b.len() < 8 {
                return Ok(None);
            }
            let len = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
            return Ok(Some(Unit::Skippable { len }));
        }
        if magic != ZSTD_MAGIC {
            return Err(Error::UnknownFormat { offset });
        }
        let Some(&fhd) = b.get(4) else {
            return Ok(None);
        };
        if fhd & 0x08 != 0 {
            return Err(Error::Corrupt {
                offset: offset + 4,
                detail: "reserved bit set in a frame header",
            });
        }
        let single_segment = fhd & 0x20 != 0;
        let dict_len = [0, 1, 2, 4][usize::from(fhd & 3)];
        let fcs_len = match (fhd >> 6, single_segment) {
            (0, false) => 0,
            (0, true) => 1,
            (1, _) => 2,
            (2, _) => 4,
            _ => 8,
        };
        let window_len = usize::from(!single_segment);
        let header_len = 5 + window_len + dict_len + fcs_len;
        if b.len() < header_len {
            return Ok(None);
        }
        let mut at = 5 + window_len;
        let mut dict = [0u8; 4];
        dict[..dict_len].copy_from_slice(&b[at..at + dict_len]);
        at += dict_len;
        let mut fcs = [0u8; 8];
        fcs[..fcs_len].copy_from_slice(&b[at..at + fcs_len]);
        let content_size = match fcs_len {
            0 => None,
            // A 2-byte field stores the size less 256.
            2 => Some(u64::from(u16::from_le_bytes([fcs[0], fcs[1]])) + 256),
            _ => Some(u64::from_le_bytes(fcs)),
        };
        let window = if single_segment {
            content_size.unwrap_or(0)
        } else {
            let d = b[5];
            let base = 1u64 << (10 + (d >> 3));
            base + (base / 8) * u64::from(d & 7)
        };
        Ok(Some(Unit::Frame(FrameHeader {
            header_len,
            content_size,
            window,
            dict_id: u32::from_le_bytes(dict),
            checksum: fhd & 0x04 != 0,
        })))
    }
}

/// One unit passed over by [`FrameWalker::take`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walked {
    /// What it was.
    pub unit: Unit,
    /// Where it starts in the stream.
    pub offset: u64,
    /// Its length in the stream, headers included.
    pub len: u64,
    /// A zstd frame's content checksum (the low 32 bits of its XXH64).
    pub checksum: Option<u32>,
    /// The most its blocks can decode to, from their headers (what a
    /// frame that does not declare its size is bounded by).
    pub max_output: u64,
}

/// Reads a zstd stream unit by unit: [`peek`](Self::peek) says what comes
/// next, [`take`](Self::take) passes over it (keeping its bytes if asked),
/// and [`buffered`](Self::buffered)/[`consume`](Self::consume) let a
/// decoder stream it instead.
#[derive(Debug)]
pub struct FrameWalker<R> {
    source: R,
    buf: Vec<u8>,
    /// `buf[start..end]` is read and not yet consumed.
    start: usize,
    end: usize,
    eof: bool,
    /// Stream offset of `buf[start]`.
    at: u64,
    /// Units taken so far.
    taken: u64,
}

/// How much the walker reads at a time.
const READ_SIZE: usize = 1 << 17;

impl<R: Read> FrameWalker<R> {
    /// A walker over `source`.
    pub fn new(source: R) -> Self {
        FrameWalker {
            source,
            buf: vec![0; READ_SIZE],
            start: 0,
            end: 0,
            eof: false,
            at: 0,
            taken: 0,
        }
    }

    /// The stream offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.at
    }

    /// Units taken so far: the index the next one gets.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Reads until at least `n` bytes are buffered or the source ends;
    /// returns how many are.
    fn ensure(&mut self, n: usize) -> Result<usize> {
        while self.end - self.start < n && !self.eof {
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                self.buf.resize(self.buf.len().max(n), 0);
            }
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::Io(e)),
            }
        }
        Ok(self.end - self.start)
    }

    /// What comes next, without consuming it; `None` at the end of the
    /// stream. A stream that ends inside a header is [`Error::Truncated`];
    /// an empty stream is `None` (the caller decides whether that is an
    /// error).
    pub fn peek(&mut self) -> Result<Option<Unit>> {
        let have = self.ensure(MAX_HEADER)?;
        if have == 0 {
            return Ok(None);
        }
        match Unit::parse(&self.buf[self.start..self.end], self.at)? {
            Some(u) => Ok(Some(u)),
            None => Err(Error::Truncated {
                offset: self.at + have as u64,
            }),
        }
    }

    /// The bytes read ahead and not yet consumed, reading more when none
    /// are (empty at the end of the stream).
    pub fn buffered(&mut self) -> Result<&[u8]> {
        if self.start == self.end {
            self.ensure(1)?;
        }
        Ok(&self.buf[self.start..self.end])
    }

    /// Marks `n` bytes of [`buffered`](Self::buffered) as consumed, by a
    /// decoder that streamed them; after a whole unit, call
    /// [`count_streamed`](Self::count_streamed).
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.at += n as u64;
    }

    /// Counts a unit a caller streamed through [`consume`](Self::consume).
    pub fn count_streamed(&mut self) {
        self.taken += 1;
    }

    /// Moves `n` bytes past, appending them to `keep` when given.
    fn pass(&mut self, mut n: u64, mut keep: Option<&mut Vec<u8>>) -> Result<()> {
        while n > 0 {
            if self.ensure(1)? == 0 {
                return Err(Error::Truncated { offset: self.at });
            }
            let k = (self.end - self.start).min(usize::try_from(n).unwrap_or(usize::MAX));
            if let Some(v) = keep.as_deref_mut() {
                v.extend_from_slice(&self.buf[self.start..self.start + k]);
            }
            self.consume(k);
            n -= k as u64;
        }
        Ok(())
    }

    /// Reads `N` bytes, appending them to `keep` too.
    fn array<const N: usize>(&mut self, keep: Option<&mut Vec<u8>>) -> Result<[u8; N]> {
        if self.ensure(N)? < N {
            return Err(Error::Truncated {
                offset: self.at + (self.end - self.start) as u64,
            });
        }
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.start..self.start + N]);
        if let Some(v) = keep {
            v.extend_from_slice(&a);
        }
        self.consume(N);
        Ok(a)
    }

    /// Passes over the next unit, appending its bytes to `keep` when
    /// given; `None` at the end of the stream.
    pub fn take(&mut self, keep: Option<&mut Vec<u8>>) -> Result<Option<Walked>> {
        Ok(self.walk(keep, u64::MAX)?.map(|(w, _)| w))
    }

    /// As [`take`](Self::take), but stops inside a zstd frame as soon as
    /// its blocks could decode to more than `limit` bytes: then the bytes
    /// passed so far are in `keep`, the rest of the frame is still to be
    /// read, and the answer is [`Taken::Partial`].
    pub fn take_within(&mut self, keep: &mut Vec<u8>, limit: u64) -> Result<Option<Taken>> {
        Ok(self.walk(Some(keep), limit)?.map(|(w, whole)| {
            if whole {
                Taken::Whole(w)
            } else {
                Taken::Partial(w)
            }
        }))
    }

    /// Passes over the next unit, or over a zstd frame's first blocks
    /// until their most output passes `limit`; says whether it passed
    /// over the whole unit.
    fn walk(
        &mut self,
        mut keep: Option<&mut Vec<u8>>,
        limit: u64,
    ) -> Result<Option<(Walked, bool)>> {
        let Some(unit) = self.peek()? else {
            return Ok(None);
        };
        let offset = self.at;
        let mut checksum = None;
        let mut max_output = 0u64;
        match unit {
            Unit::Skippable { len } => self.pass(8 + u64::from(len), keep)?,
            Unit::Frame(h) => {
                // A compressed block decodes to at most this (RFC 8878
                // §3.1.1.2.3); raw and RLE blocks say their size.
                let block_max = h.window.min(128 << 10);
                self.pass(h.header_len as u64, keep.as_deref_mut())?;
                loop {
                    let b = self.array::<3>(keep.as_deref_mut())?;
                    let b = u32::from(b[0]) | u32::from(b[1]) << 8 | u32::from(b[2]) << 16;
                    let size = u64::from(b >> 3);
                    let (payload, output) = match (b >> 1) & 3 {
                        0 => (size, size),
                        1 => (1, size), // RLE: one byte, repeated
                        2 => (size, block_max),
                        _ => {
                            return Err(Error::Corrupt {
                                offset: self.at - 3,
                                detail: "reserved block type",
                            });
                        }
                    };
                    self.pass(payload, keep.as_deref_mut())?;
                    max_output = max_output.saturating_add(output);
                    if b & 1 != 0 {
                        break;
                    }
                    if max_output > limit {
                        let w = Walked {
                            unit,
                            offset,
                            len: self.at - offset,
                            checksum: None,
                            max_output,
                        };
                        return Ok(Some((w, false)));
                    }
                }
                if h.checksum {
                    checksum = Some(u32::from_le_bytes(self.array::<4>(keep)?));
                }
            }
        }
        self.taken += 1;
        let w = Walked {
            unit,
            offset,
            len: self.at - offset,
            checksum,
            max_output,
        };
        Ok(Some((w, true)))
    }
}

/// What [`FrameWalker::take_within`] passed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// The whole unit.
    Whole(Walked),
    /// A zstd frame's header and first blocks (`len` bytes): the rest may
    /// decode to more than the limit.
    Partial(Walked),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_skippables_and_their_lengths() {
        let a = crate::compress(&b"a".repeat(5000), crate::Recipe::Fast).unwrap();
        let mut stream = a.clone();
        stream.extend(0x184D_2A53u32.to_le_bytes());
        stream.extend(3u32.to_le_bytes());
        stream.extend(b"abc");
        stream.extend(&a);
        let mut w = FrameWalker::new(&stream[..]);
        let mut kept = Vec::new();
        let first = w.take(Some(&mut kept)).unwrap().unwrap();
        assert_eq!(kept, a);
        assert_eq!((first.offset, first.len), (0, a.len() as u64));
        assert_eq!(first.unit.content_size(), Some(5000));
        let skip = w.take(None).unwrap().unwrap();
        assert_eq!(skip.unit, Unit::Skippable { len: 3 });
        assert_eq!((skip.offset, skip.len), (a.len() as u64, 11));
        assert!(w.take(None).unwrap().is_some());
        assert!(w.take(None).unwrap().is_none());
        assert_eq!(w.taken(), 3);
    }

    #[test]
    fn cut_and_foreign_streams_are_errors() {
        let a = crate::compress(b"hello hello hello", crate::Recipe::Fast).unwrap();
        for cut in [2, 5, a.len() - 1] {
            let mut w = FrameWalker::new(&a[..cut]);
            assert!(
                matches!(w.take(None), Err(Error::Truncated { .. })),
                "cut at {cut}"
            );
        }
        let mut w = FrameWalker::new(&b"PK\x03\x04 and more"[..]);
        assert!(matches!(w.peek(), Err(Error::UnknownFormat { offset: 0 })));
        assert!(FrameWalker::new(&b""[..]).peek().unwrap().is_none());
    }
}
