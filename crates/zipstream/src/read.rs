//! Archive readers. Both decode entry data with the same sans-I/O machine
//! (`data::DataState`) that consumes bytes from an `InBuf` and reports
//! when it needs more, so the sync and async streaming readers and the
//! random-access reader verify CRC, sizes and AES codes identically.

pub mod archive;
pub(crate) mod data;
pub(crate) mod directory;
pub(crate) mod header;
pub mod stream;
pub mod walked;

use std::io::{Read, Seek};

use crate::entry::Entry;
use crate::error::Result;

/// A random-access archive whose entries can be visited in central
/// directory order and opened as they come: [`archive::ZipArchive`] (its
/// directory held) and [`walked::WalkedArchive`] (its directory read as
/// the walk goes). Extraction and `unzip -t` take either.
pub trait EntryWalk<R: Read + Seek>: sealed::Sealed {
    /// Calls `f` with each entry, in central directory order, and the
    /// archive's source to open it from ([`archive::Source::open`]); stops
    /// at the first error `f` returns.
    fn walk(
        &mut self,
        f: &mut dyn FnMut(&Entry, &mut archive::Source<R>) -> Result<()>,
    ) -> Result<()>;
}

/// Keeps [`EntryWalk`] to this crate's archives.
pub(crate) mod sealed {
    /// Implemented by this crate's random-access archives only.
    pub trait Sealed {}
}

/// Read-ahead buffer shared by the decoders.
pub(crate) struct InBuf {
    pub buf: Vec<u8>,
    pub start: usize,
    pub end: usize,
    /// Stream offset of `buf[start]`, for error messages.
    pub offset: u64,
    pub eof: bool,
}

/// Read-ahead size: one large read per refill.
pub(crate) const INBUF: usize = 64 * 1024;

impl InBuf {
    pub(crate) fn new(offset: u64) -> InBuf {
        InBuf::with_buffer(Vec::new(), offset)
    }

    /// An empty read-ahead over `buf`, a buffer an earlier reader used (its
    /// bytes are stale, never read: `start..end` is empty), grown to
    /// [`INBUF`] if smaller.
    pub(crate) fn with_buffer(mut buf: Vec<u8>, offset: u64) -> InBuf {
        if buf.len() < INBUF {
            buf.resize(INBUF, 0);
        }
        InBuf {
            buf,
            start: 0,
            end: 0,
            offset,
            eof: false,
        }
    }

    pub(crate) fn data(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    pub(crate) fn len(&self) -> usize {
        self.end - self.start
    }

    pub(crate) fn consume(&mut self, n: usize) {
        debug_assert!(n <= self.len());
        self.start += n;
        self.offset += n as u64;
    }

    /// Makes room at the end and returns it for the next read.
    pub(crate) fn spare(&mut self) -> &mut [u8] {
        if self.start > 0 && (self.start == self.end || self.buf.len() - self.end < INBUF / 4) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            // A record longer than the buffer (names, extras up to 64 KiB each).
            let n = self.buf.len();
            self.buf.resize(n * 2, 0);
        }
        &mut self.buf[self.end..]
    }

    /// Records `n` bytes read into `spare()`; 0 marks end of input.
    pub(crate) fn filled(&mut self, n: usize) {
        if n == 0 {
            self.eof = true;
        }
        self.end += n;
    }

    pub(crate) fn fill_from<R: std::io::Read>(&mut self, r: &mut R) -> std::io::Result<()> {
        loop {
            match r.read(self.spare()) {
                Ok(n) => {
                    self.filled(n);
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
