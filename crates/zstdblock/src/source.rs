//! The pipeline's input, read as its walker goes: a buffer holding the
//! input from some byte on, filled from a [`Read`] only as far as the
//! next header or block needs, and handed off a range of blocks at a
//! time, so the input held is the blocks in flight and never the file.
//!
//! The header parsers ([`frame_start`], [`block_header`], [`frame_end`])
//! index a slice from 0; here they parse the buffer, and what they return
//! is moved by the buffer's start to name input
//! offsets. Before each parse the buffer is filled as far as the parsed
//! item can reach, so a parser finds it short only at the input's end,
//! and its "the input ends here" names the input's length, as on a slice.

use std::io::{self, Read};

use crate::error::Error;
use crate::frame::{Block, Frame, block_header, frame_end, frame_start, is_skippable};

/// Bytes asked of the reader at least at a time, so a walk of small
/// blocks is not a read call each.
const READ_AHEAD: usize = 64 << 10;
/// The largest zstd frame header: magic, descriptor, window, dictionary
/// ID and content size.
const FRAME_HEADER_MAX: usize = 18;

/// Why the walker stopped early.
pub(crate) enum Stop {
    /// The input is not valid.
    Decode(Error),
    /// Reading it failed.
    Read(io::Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Stop::Decode(e)
    }
}

/// Bytes `base..base + buf.len()` of the input, and the reader of the rest.
pub(crate) struct Source<R> {
    reader: R,
    buf: Vec<u8>,
    base: usize,
    /// The reader is at its end: `base + buf.len()` is the input's length.
    eof: bool,
}

impl<R: Read> Source<R> {
    /// The input: `head` (its first bytes, already read), then `reader`.
    pub(crate) fn new(head: Vec<u8>, reader: R) -> Self {
        Source {
            reader,
            buf: head,
            base: 0,
            eof: false,
        }
    }

    /// Whether the input has no byte at `at` (input offsets throughout).
    pub(crate) fn ends_at(&mut self, at: usize) -> Result<bool, Stop> {
        self.fill_to(at + 1)?;
        Ok(self.base + self.buf.len() <= at)
    }

    /// Reads until the buffer holds the input up to `end`, or the input
    /// ends first.
    fn fill_to(&mut self, end: usize) -> Result<(), Stop> {
        while self.base + self.buf.len() < end && !self.eof {
            let len = self.buf.len();
            let want = (end - self.base).max(len + READ_AHEAD);
            self.buf.resize(want, 0);
            match self.reader.read(&mut self.buf[len..]) {
                Ok(0) => {
                    self.buf.truncate(len);
                    self.eof = true;
                }
                Ok(n) => self.buf.truncate(len + n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.buf.truncate(len),
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(Stop::Read(e));
                }
            }
        }
        Ok(())
    }

    /// The frame at `offset` up to its first block, as [`frame_start`]
    /// reads it; a skippable frame is read past (its bytes discarded as
    /// they come, however long it is).
    pub(crate) fn frame_start(
        &mut self,
        offset: usize,
        index: usize,
        window_limit: u64,
    ) -> Result<Frame, Stop> {
        self.fill_to(offset + FRAME_HEADER_MAX)?;
        let at = offset - self.base;
        let magic = self
            .buf
            .get(at..at + 8)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        if let Some(magic) = magic.filter(|&m| is_skippable(m)) {
            let size = u32::from_le_bytes(self.buf[at + 4..at + 8].try_into().expect("4 bytes"));
            let end = offset + 8 + size as usize;
            self.skip_to(end)?;
            if self.base + self.buf.len() < end {
                return Err(Stop::Decode(Error::Truncated {
                    frame: index,
                    offset: self.base + self.buf.len(),
                }));
            }
            return Ok(Frame::skippable(index, offset..end, magic, size));
        }
        let mut frame =
            frame_start(&self.buf, at, index, window_limit).map_err(|e| e.rebased(self.base))?;
        frame.range = frame.range.start + self.base..frame.range.end + self.base;
        Ok(frame)
    }

    /// Drops the input before `end`, reading (and discarding) up to it.
    fn skip_to(&mut self, end: usize) -> Result<(), Stop> {
        let held_end = self.base + self.buf.len();
        if end <= held_end {
            self.buf.drain(..end - self.base);
            self.base = end;
            return Ok(());
        }
        self.buf.clear();
        self.base = held_end;
        let wanted = (end - held_end) as u64;
        let skipped =
            io::copy(&mut (&mut self.reader).take(wanted), &mut io::sink()).map_err(Stop::Read)?;
        self.base += skipped as usize;
        if skipped < wanted {
            self.eof = true;
        }
        Ok(())
    }

    /// The block header at `at` of frame `index`, its content held.
    pub(crate) fn block(
        &mut self,
        at: usize,
        index: usize,
        block_max: usize,
    ) -> Result<Block, Stop> {
        self.fill_to(at + 3)?;
        let local = at - self.base;
        if let Some(b) = self.buf.get(local..local + 3) {
            let word = u32::from_le_bytes([b[0], b[1], b[2], 0]);
            let stored = match (word >> 1) & 3 {
                1 => 1,
                _ => ((word >> 3) as usize).min(block_max),
            };
            self.fill_to(at + 3 + stored)?;
        }
        let mut block =
            block_header(&self.buf, local, index, block_max).map_err(|e| e.rebased(self.base))?;
        block.header += self.base;
        block.content = block.content.start + self.base..block.content.end + self.base;
        Ok(block)
    }

    /// The bytes of `block` (from [`Source::block`]), still held.
    pub(crate) fn content(&self, block: &Block) -> &[u8] {
        &self.buf[block.content.start - self.base..block.content.end - self.base]
    }

    /// Completes `frame` once its last block ends at `at`, as
    /// [`frame_end`] does.
    pub(crate) fn frame_end(&mut self, frame: &mut Frame, at: usize) -> Result<(), Stop> {
        self.fill_to(at + 4)?;
        let base = self.base;
        // frame_end sets the range's end only; its start may be in bytes
        // handed off already.
        let start = frame.range.start;
        frame_end(&self.buf, frame, at - base).map_err(|e| e.rebased(base))?;
        frame.range = start..frame.range.end + base;
        Ok(())
    }

    /// Hands over the bytes held before `at` (with the input offset of
    /// their first byte), keeping the rest in `spare`'s allocation: a
    /// range of blocks goes to a worker with its own bytes, and at most a
    /// read-ahead is copied.
    pub(crate) fn split_off(&mut self, at: usize, mut spare: Vec<u8>) -> (Vec<u8>, usize) {
        spare.clear();
        spare.extend_from_slice(&self.buf[at - self.base..]);
        let before = std::mem::replace(&mut self.buf, spare);
        let base = std::mem::replace(&mut self.base, at);
        (before, base)
    }
}
