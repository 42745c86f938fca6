//! The sans-I/O decoding step that every zstdkit decoder runs on.

use zstd_safe::{InBuffer, OutBuffer, WriteBuf};

use crate::context::Decompressor;
use crate::error::{Error, Result};
use crate::ffi::{self, FrameHeader};

/// The state of a decoder between calls, shared by the sync and async
/// decoders and by the one-shot decoder's streaming path.
///
/// Every frame header passes [`Decompressor::admit`] before zstd sees it:
/// zstd enforces the window limit only when it decodes through its own
/// window buffer, and skips that buffer (and the check) whenever the
/// caller's output has room for a frame's declared size, so the limit would
/// otherwise depend on how large the caller's buffer happens to be.
#[derive(Debug)]
pub(crate) struct DecodeProgress {
    /// Input bytes consumed so far (for error positions).
    pub consumed: u64,
    /// zstd's last hint: 0 when the last frame is complete.
    pub hint: usize,
    /// Whether any input was seen at all.
    pub started: bool,
    /// The next input byte starts a frame.
    at_frame_start: bool,
    /// A frame header that arrived in pieces, held back until it is whole
    /// (at most 18 bytes).
    header: Vec<u8>,
}

impl Default for DecodeProgress {
    fn default() -> Self {
        DecodeProgress {
            consumed: 0,
            hint: 0,
            started: false,
            at_frame_start: true,
            header: Vec::new(),
        }
    }
}

impl DecodeProgress {
    /// Decodes from `input` into `out`; returns (consumed, produced).
    pub(crate) fn step(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<(usize, usize)> {
        let mut ob = OutBuffer::around(out);
        let used = self.step_into(dec, input, &mut ob)?;
        Ok((used, ob.pos()))
    }

    /// Decodes from `input` into whatever room `out` has left; returns the
    /// input bytes consumed.
    ///
    /// Every decoding loop (the sync and async decoders, the one-shot
    /// decoder's streaming path) goes through here, so this is where a step
    /// that cannot make progress is refused: given input and room for
    /// output, a step that neither consumes nor produces would be repeated
    /// for ever by a loop that waits for one or the other, or would drop
    /// the input by one that takes it as the end.
    pub(crate) fn step_into<C: WriteBuf + ?Sized>(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut OutBuffer<'_, C>,
    ) -> Result<usize> {
        let (before, room) = (out.pos(), out.pos() < out.capacity());
        let used = self.step_once(dec, input, out)?;
        self.made_progress(input.len(), used, out.pos() - before, room)?;
        Ok(used)
    }

    /// Refuses a step on `input` bytes, with `room` in the output, that
    /// consumed `used` and produced `produced` bytes, when it did neither.
    ///
    /// Defensive: no input is known to reach it, so no test drives it. The
    /// bundled zstd (1.5.7) `ZSTD_decompressStream` always takes available
    /// input (into its own buffers if need be) or flushes into available
    /// room, and stops at a frame's end only after the call that consumed
    /// it, so the next call starts on a header; `frame_start` takes at least
    /// one byte whenever it answers. Seeds, the fuzz corpus, their cuts and
    /// byte flips, and concatenated, flushed and skippable frames read with
    /// 1-byte to 128 KiB input and output buffers never tripped it. It stays
    /// so that a zstd that stalls fails as Corrupt instead of looping.
    fn made_progress(&self, input: usize, used: usize, produced: usize, room: bool) -> Result<()> {
        if input > 0 && room && used == 0 && produced == 0 {
            return Err(Error::Corrupt {
                offset: self.consumed,
                detail: "the decoder stopped before the end of the input",
            });
        }
        Ok(())
    }

    /// One step of [`DecodeProgress::step_into`], unchecked.
    fn step_once<C: WriteBuf + ?Sized>(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut OutBuffer<'_, C>,
    ) -> Result<usize> {
        self.started |= !input.is_empty();
        if self.at_frame_start
            && !input.is_empty()
            && let Some(used) = self.frame_start(dec, input, out)?
        {
            return Ok(used);
        }
        let limit = dec.memory_limit();
        let before = out.pos();
        let mut ib = InBuffer::around(input);
        let hint = dec
            .dctx()
            .decompress_stream(out, &mut ib)
            .map_err(|c| Error::decoding(c, self.consumed + ib.pos() as u64, limit))?;
        self.consumed += ib.pos() as u64;
        // A call that neither reads nor writes (after the last frame ended)
        // returns the size of the next header it wants, not "mid-frame":
        // only a call that made progress says where the frame stands.
        if ib.pos() > 0 || out.pos() > before {
            self.hint = hint;
            // zstd stops at the end of each frame, so the next byte is a
            // header.
            self.at_frame_start = hint == 0;
        }
        Ok(ib.pos())
    }

    /// At a frame boundary: checks the header about to be decoded. Returns
    /// `None` when the header is whole in `input` and admitted (decoding
    /// proceeds as usual), or the bytes consumed while assembling a header
    /// that arrives in pieces.
    fn frame_start<C: WriteBuf + ?Sized>(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut OutBuffer<'_, C>,
    ) -> Result<Option<usize>> {
        let frame_offset = self.consumed - self.header.len() as u64;
        if self.header.is_empty() {
            match ffi::frame_header(input) {
                FrameHeader::Incomplete { .. } => {}
                header => {
                    dec.admit(header, frame_offset)?;
                    self.at_frame_start = false;
                    return Ok(None);
                }
            }
        }
        let mut used = 0;
        let header = loop {
            match ffi::frame_header(&self.header) {
                FrameHeader::Incomplete { need } if used < input.len() => {
                    let take = need
                        .saturating_sub(self.header.len())
                        .min(input.len() - used);
                    self.header.extend_from_slice(&input[used..used + take]);
                    used += take;
                }
                FrameHeader::Incomplete { .. } => {
                    // Input ran out inside the header: hold on to it.
                    self.consumed += used as u64;
                    self.hint = 1;
                    return Ok(Some(used));
                }
                header => break header,
            }
        };
        self.consumed += used as u64;
        dec.admit(header, frame_offset)?;
        // Hand the whole header to zstd (which reports an invalid one).
        let limit = dec.memory_limit();
        let mut ib = InBuffer::around(&self.header[..]);
        let hint = dec
            .dctx()
            .decompress_stream(out, &mut ib)
            .map_err(|c| Error::decoding(c, frame_offset + ib.pos() as u64, limit))?;
        if ib.pos() != self.header.len() {
            return Err(Error::Corrupt {
                offset: frame_offset,
                detail: "unsupported frame header",
            });
        }
        self.header.clear();
        self.hint = hint;
        // An empty skippable frame ends with its header: the next byte then
        // starts another frame, whose header must be admitted in turn.
        self.at_frame_start = hint == 0;
        Ok(Some(used))
    }

    /// Called when the input has ended and a step produced nothing: decides
    /// between a clean end and truncation.
    pub(crate) fn at_eof(&self) -> Result<()> {
        if !self.started || self.hint != 0 || !self.header.is_empty() {
            Err(Error::Truncated {
                offset: self.consumed,
            })
        } else {
            Ok(())
        }
    }
}
