//! The pipeline's input, read as its walker goes: a buffer holding the
//! input from some byte on, filled from a [`Read`] only as far as the
//! next header or block needs, and handed off a range of blocks at a
//! time, so the input held is the blocks in flight and never the file.
//! An input already in memory (a caller's slice) is lent to the ranges
//! as it is, never copied ([`Source::slice`]).
//!
//! The header parsers ([`frame_start`], [`block_header`], [`frame_end`])
//! index a slice from 0; here they parse the buffer, and what they return
//! is moved by the buffer's start to name input
//! offsets. Before each parse the buffer is filled as far as the parsed
//! item can reach, so a parser finds it short only at the input's end,
//! and its "the input ends here" names the input's length, as on a slice.

use std::io::{self, Read};
use std::ops::Deref;

use crate::error::Error;
use crate::frame::{Block, Frame, block_header, frame_end, frame_start, is_skippable};
use crate::mapped::{MappedFile, shrank_error};

/// Bytes asked of the reader at least at a time, so a walk of small
/// blocks is not a read call each.
const READ_AHEAD: usize = 64 << 10;
/// The largest zstd frame header: magic, descriptor, window, dictionary
/// ID and content size.
const FRAME_HEADER_MAX: usize = 18;
/// The most a buffer of a read input holds: a range's blocks and their
/// headers, the previous frame's checksum and this frame's header (a
/// frame's first range holds them, as its start and the previous end
/// are handed on without bytes of their own), and the read-ahead past
/// them.
const RANGE_INPUT: usize = crate::parallel::RANGE_BLOCKS * (crate::frame::BLOCK_SIZE_MAX + 3)
    + 4
    + FRAME_HEADER_MAX
    + READ_AHEAD;

/// A caller's reader, held to `Read`'s contract: a read that claims more
/// bytes than the buffer it was given fails with
/// [`io::ErrorKind::InvalidData`] rather than reaching code that trusts
/// the count (the walker's buffer, and std's `Take` and `read_to_end`,
/// which assert it). [`crate::parallel::Parallel::decode_reader`] wraps
/// its reader once, before it reads anything.
pub(crate) struct Checked<R>(pub(crate) R);

impl<R: Read> Read for Checked<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        if n > buf.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the reader claimed more bytes than it was asked for",
            ));
        }
        Ok(n)
    }
}

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

/// The input bytes a range of blocks is handed: read into a buffer of
/// its own, or lent from the caller's slice (the whole input, from byte
/// 0), which copying would cost a pass over the input and a buffer's page
/// faults per range in flight.
pub(crate) enum Bytes<'a> {
    /// Read from a reader: the first `len` bytes of `buf`; recycled once
    /// the range is executed. The bytes past `len` are a recycled
    /// buffer's earlier input, kept so that they are not zeroed again
    /// (see [`Source::fill_to`]).
    Read { buf: Vec<u8>, len: usize },
    /// The caller's whole input.
    Lent(&'a [u8]),
}

impl Bytes<'_> {
    /// A spare buffer carried by a unit that holds no input, so that it
    /// goes back to the walker with the unit.
    pub(crate) fn spare(buf: Vec<u8>) -> Self {
        Bytes::Read { buf, len: 0 }
    }

    /// The buffer to reuse for a later range (none for a lent slice),
    /// its length every byte it ever held.
    pub(crate) fn into_spare(self) -> Vec<u8> {
        match self {
            Bytes::Read { buf, .. } => buf,
            Bytes::Lent(_) => Vec::new(),
        }
    }
}

impl Deref for Bytes<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read { buf, len } => &buf[..*len],
            Bytes::Lent(slice) => slice,
        }
    }
}

/// Bytes `base..base + held().len()` of the input, and the reader of the
/// rest.
pub(crate) struct Source<'a, R> {
    reader: R,
    /// The input held is `buf[..filled]`. The bytes after it, up to
    /// `buf.len()`, are stale (a recycled buffer's earlier input), kept
    /// initialised so that a read can go into them without zeroing them
    /// first: zeroing every read's room was a second pass over the
    /// input, 7 % of the pipeline's CPU on stored blocks.
    buf: Vec<u8>,
    filled: usize,
    /// The whole input, when it was given as a slice: then `buf` stays
    /// empty, `base` 0 and the reader unused.
    whole: Option<&'a [u8]>,
    base: usize,
    /// The reader is at its end: `base + held().len()` is the input's length.
    eof: bool,
    /// The mapped file `whole` is, when it is one: its pages behind the
    /// ranges in flight are handed back, and a read past its end (it
    /// shrank) stops the walk.
    map: Option<&'a MappedFile>,
    /// How far behind a range's start the ranges in flight may start:
    /// a mapped file's pages further back are handed back.
    behind: usize,
}

impl<'a> Source<'a, io::Empty> {
    /// The input, all of it in `input`: lent to the ranges, not copied.
    pub(crate) fn slice(input: &'a [u8]) -> Self {
        Source {
            reader: io::empty(),
            buf: Vec::new(),
            filled: 0,
            whole: Some(input),
            base: 0,
            eof: true,
            map: None,
            behind: usize::MAX,
        }
    }

    /// The whole input, lent.
    pub(crate) fn lent(&self) -> &'a [u8] {
        self.whole.unwrap_or_default()
    }

    /// The input, a mapped file: lent as a slice is, its pages handed
    /// back once the ranges in flight are past them.
    pub(crate) fn mapped(map: &'a MappedFile) -> Self {
        Source {
            map: Some(map),
            ..Source::slice(map.bytes())
        }
    }
}

impl<'a, R: Read> Source<'a, R> {
    /// The input: `head` (its first bytes, already read), then `reader`,
    /// which keeps `Read`'s contract (a caller's reader comes [`Checked`]).
    pub(crate) fn new(head: Vec<u8>, reader: R) -> Self {
        Source {
            reader,
            filled: head.len(),
            buf: head,
            whole: None,
            base: 0,
            eof: false,
            map: None,
            behind: usize::MAX,
        }
    }

    /// `ranges` ranges may be in flight besides the one being walked: a
    /// mapped file's pages before the oldest of them are handed back
    /// (without this call, none are).
    pub(crate) fn in_flight(&mut self, ranges: usize) {
        self.behind = ranges.saturating_add(1).saturating_mul(RANGE_INPUT);
    }

    /// The room each buffer of this input needs to hold a range at once
    /// ([`RANGE_INPUT`]); none when the input is lent whole (a slice),
    /// whose ranges need no buffers of their own.
    pub(crate) fn range_room(&self) -> usize {
        if self.whole.is_some() { 0 } else { RANGE_INPUT }
    }

    /// Gives the buffer being filled its [`Source::range_room`] now,
    /// rather than as the ranges grow it.
    pub(crate) fn make_room(&mut self) {
        let room = self.range_room();
        self.buf.reserve(room.saturating_sub(self.buf.len()));
    }

    /// The input held, from byte `base` on.
    fn held(&self) -> &[u8] {
        self.whole.unwrap_or(&self.buf[..self.filled])
    }

    /// Whether the input has no byte at `at` (input offsets throughout).
    pub(crate) fn ends_at(&mut self, at: usize) -> Result<bool, Stop> {
        self.fill_to(at + 1)?;
        Ok(self.base + self.held().len() <= at)
    }

    /// Reads until the buffer holds the input up to `end`, or the input
    /// ends first.
    fn fill_to(&mut self, end: usize) -> Result<(), Stop> {
        while self.base + self.filled < end && !self.eof {
            let len = self.filled;
            let want = (end - self.base).max(len + READ_AHEAD);
            // Only bytes this buffer never held are zeroed.
            if self.buf.len() < want {
                self.buf.resize(want, 0);
            }
            match self.reader.read(&mut self.buf[len..want]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.filled = len + n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Stop::Read(e)),
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
            .held()
            .get(at..at + 8)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        if let Some(magic) = magic.filter(|&m| is_skippable(m)) {
            let size = u32::from_le_bytes(self.held()[at + 4..at + 8].try_into().expect("4 bytes"));
            let end = offset + 8 + size as usize;
            self.skip_to(end)?;
            let held_end = self.base + self.held().len();
            if held_end < end {
                return Err(Stop::Decode(Error::Truncated {
                    frame: index,
                    offset: held_end,
                }));
            }
            return Ok(Frame::skippable(index, offset..end, magic, size));
        }
        let mut frame =
            frame_start(self.held(), at, index, window_limit).map_err(|e| e.rebased(self.base))?;
        frame.range = frame.range.start + self.base..frame.range.end + self.base;
        Ok(frame)
    }

    /// Drops the input before `end`, reading (and discarding) up to it.
    fn skip_to(&mut self, end: usize) -> Result<(), Stop> {
        // A lent input is all held, and nothing of it is dropped.
        if self.whole.is_some() {
            return Ok(());
        }
        let held_end = self.base + self.filled;
        if end <= held_end {
            self.buf.copy_within(end - self.base..self.filled, 0);
            self.filled = held_end - end;
            self.base = end;
            return Ok(());
        }
        self.filled = 0;
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
        // Past the end of a file that shrank, its bytes read as zeros,
        // each three an empty block: stopped here, not walked.
        if self.map.is_some_and(|m| m.faulted()) {
            return Err(Stop::Read(shrank_error()));
        }
        self.fill_to(at + 3)?;
        let local = at - self.base;
        if let Some(b) = self.held().get(local..local + 3) {
            let word = u32::from_le_bytes([b[0], b[1], b[2], 0]);
            let stored = match (word >> 1) & 3 {
                1 => 1,
                _ => ((word >> 3) as usize).min(block_max),
            };
            self.fill_to(at + 3 + stored)?;
        }
        let mut block =
            block_header(self.held(), local, index, block_max).map_err(|e| e.rebased(self.base))?;
        block.header += self.base;
        block.content = block.content.start + self.base..block.content.end + self.base;
        Ok(block)
    }

    /// The bytes of `block` (from [`Source::block`]), still held.
    pub(crate) fn content(&self, block: &Block) -> &[u8] {
        &self.held()[block.content.start - self.base..block.content.end - self.base]
    }

    /// Completes `frame` once its last block ends at `at`, as
    /// [`frame_end`] does.
    pub(crate) fn frame_end(&mut self, frame: &mut Frame, at: usize) -> Result<(), Stop> {
        self.fill_to(at + 4)?;
        let base = self.base;
        // frame_end sets the range's end only; its start may be in bytes
        // handed off already.
        let start = frame.range.start;
        frame_end(self.held(), frame, at - base).map_err(|e| e.rebased(base))?;
        frame.range = start..frame.range.end + base;
        Ok(())
    }

    /// Hands over the bytes held before `at` (with the input offset of
    /// their first byte), keeping the rest in `spare`'s allocation: a
    /// range of blocks goes to a worker with its own bytes, and at most a
    /// read-ahead is copied. A lent input is lent whole, from byte 0.
    pub(crate) fn split_off(&mut self, at: usize, mut spare: Vec<u8>) -> (Bytes<'a>, usize) {
        if let Some(whole) = self.whole {
            if let Some(map) = self.map {
                // The ranges in flight and this one start after this; a
                // page handed back and read again maps again from the
                // file.
                map.release_before(at.saturating_sub(self.behind));
            }
            return (Bytes::Lent(whole), 0);
        }
        let handed = at - self.base;
        let kept = self.filled - handed;
        // Room for a range like this one at once: grown a read at a time
        // by doubling, each buffer in flight was copied and its pages
        // touched twice before it reached a range's size.
        spare.reserve((handed + READ_AHEAD).saturating_sub(spare.len()));
        // The bytes kept go over the spare's stale ones, and past them
        // onto its end: written once, never zeroed first.
        let over = spare.len().min(kept);
        spare[..over].copy_from_slice(&self.buf[handed..handed + over]);
        spare.extend_from_slice(&self.buf[handed + over..self.filled]);
        let before = std::mem::replace(&mut self.buf, spare);
        self.filled = kept;
        let base = std::mem::replace(&mut self.base, at);
        (
            Bytes::Read {
                buf: before,
                len: handed,
            },
            base,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One frame of two raw blocks, "hello" and "world".
    fn frame() -> Vec<u8> {
        // Single segment, content size 10.
        let mut frame = vec![0x28, 0xB5, 0x2F, 0xFD, 0x20, 10];
        frame.extend_from_slice(&[5 << 3, 0, 0]);
        frame.extend_from_slice(b"hello");
        frame.extend_from_slice(&[(5 << 3) | 1, 0, 0]);
        frame.extend_from_slice(b"world");
        frame
    }

    /// Walks `source` over the frame, handing each block off on its own,
    /// as the walker hands off ranges: the bytes each hand-off gives and
    /// where they start.
    fn hand_offs<'a, R: Read>(source: Source<'a, R>) -> Vec<(Bytes<'a>, usize)> {
        hand_offs_with(source, Vec::new)
    }

    /// [`hand_offs`], each hand-off given the buffer `spare` makes.
    fn hand_offs_with<'a, R: Read>(
        mut source: Source<'a, R>,
        spare: impl Fn() -> Vec<u8>,
    ) -> Vec<(Bytes<'a>, usize)> {
        let Ok(frame) = source.frame_start(0, 0, 1 << 20) else {
            panic!("the frame header does not parse");
        };
        let mut at = frame.range.end;
        let mut handed = Vec::new();
        loop {
            let Ok(block) = source.block(at, 0, 1 << 17) else {
                panic!("the block at {at} does not parse");
            };
            at = block.content.end;
            assert_eq!(source.content(&block).len(), 5);
            handed.push(source.split_off(at, spare()));
            if block.last {
                return handed;
            }
        }
    }

    #[test]
    fn a_slice_is_lent_to_every_range_and_never_copied() {
        let input = frame();
        for (bytes, base) in hand_offs(Source::slice(&input)) {
            assert!(matches!(bytes, Bytes::Lent(_)));
            assert_eq!(
                (bytes.as_ptr(), bytes.len(), base),
                (input.as_ptr(), input.len(), 0)
            );
        }
        // Read from a reader, each range gets its own bytes (to its last
        // block's end at least): the same input offsets name the same
        // bytes either way.
        let read = hand_offs(Source::new(Vec::new(), &input[..]));
        assert!(matches!(read[0].0, Bytes::Read { .. }));
        assert_eq!((&read[0].0[..14], read[0].1), (&input[..14], 0));
        assert_eq!((&read[1].0[..], read[1].1), (&input[14..], 14));
    }

    #[test]
    fn a_recycled_buffer_hands_on_only_the_bytes_read_into_it() {
        let input = frame();
        // Buffers that held other input before, longer than a range:
        // their old bytes are not zeroed again, and must never show.
        for stale in [0usize, 3, 14, 100] {
            let spare = || vec![0xEE; stale];
            // A reader that gives a byte at a time reaches the bytes past
            // what it filled with every read.
            struct Trickle<'a>(&'a [u8]);
            impl Read for Trickle<'_> {
                fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                    let n = out.len().min(self.0.len()).min(1);
                    out[..n].copy_from_slice(&self.0[..n]);
                    self.0 = &self.0[n..];
                    Ok(n)
                }
            }
            // The first buffer too holds stale bytes and no input.
            let mut source = Source::new(vec![0xEE; stale], Trickle(&input));
            source.filled = 0;
            let read = hand_offs_with(source, spare);
            assert_eq!(read.len(), 2, "stale {stale}");
            assert_eq!(
                (&read[0].0[..], read[0].1),
                (&input[..14], 0),
                "stale {stale}"
            );
            assert_eq!(
                (&read[1].0[..], read[1].1),
                (&input[14..], 14),
                "stale {stale}"
            );
        }
    }
}
