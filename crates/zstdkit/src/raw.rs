//! The sans-I/O decoding step: [`RawDecoder`] decodes from a byte slice
//! into a byte slice and leaves reading and writing to its caller. The
//! sync [`Decoder`](crate::Decoder), the tokio
//! [`AsyncDecoder`](crate::AsyncDecoder) and the one-shot decoder's
//! streaming path all run on the same step, so each of them checks every
//! frame's window against the memory limit, refuses truncated input and
//! reports errors at the same positions.

use zstd_safe::{InBuffer, OutBuffer, WriteBuf};

use crate::context::Decompressor;
use crate::error::{Error, Result};
use crate::ffi::{self, FrameHeader};

/// A zstd decoder that does no I/O: each [`decode`](RawDecoder::decode)
/// call takes some input bytes and an output buffer, and says how much of
/// the input it consumed, how much output it produced and whether a frame
/// ended. It decodes concatenated and skippable frames, as `zstd -d` does.
///
/// Before zstd sees a frame, its header is read and the window it asks for
/// is checked against the [`Decompressor`]'s memory limit: a frame that
/// needs more is refused with [`Error::WindowTooLarge`] before any of its
/// output is produced, whatever the size of the output buffer (zstd's own
/// check is skipped when the whole frame fits the output). Errors carry the
/// input position, counted from the first byte given to this decoder. Once a
/// call has failed, every later call fails too, until [`reset`](Self::reset).
///
/// ```
/// use zstdkit::{RawDecoder, Recipe};
/// let frame = zstdkit::compress(b"hello, hello, hello", Recipe::Fast)?;
/// let mut decoder = RawDecoder::new()?;
/// let (mut input, mut out, mut text) = (&frame[..], [0u8; 8], Vec::new());
/// loop {
///     let step = decoder.decode(input, &mut out)?;
///     input = &input[step.consumed..];
///     text.extend_from_slice(&out[..step.produced]);
///     // With no input left, a step that produces nothing has nothing more
///     // to give: the stream is drained.
///     if input.is_empty() && step.produced == 0 {
///         break;
///     }
/// }
/// decoder.finish()?; // Error::Truncated had the input ended inside a frame
/// assert_eq!(text, b"hello, hello, hello");
/// # Ok::<(), zstdkit::Error>(())
/// ```
#[derive(Debug)]
pub struct RawDecoder {
    decompressor: Decompressor,
    progress: DecodeProgress,
    /// Where a call failed, if one did: zstd's context is then in an
    /// unknown state mid-frame, so nothing more is decoded until a reset.
    failed_at: Option<u64>,
}

/// What one [`RawDecoder::decode`] call did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeStep {
    /// Input bytes consumed, from the start of the slice given. The rest
    /// must be given again (zstd keeps what it consumed but cannot use yet).
    pub consumed: usize,
    /// Output bytes written, from the start of the output buffer.
    pub produced: usize,
    /// A frame (a skippable one included) ended in this call and all of its
    /// output has been produced: the next input byte starts a frame. A call
    /// ends at most one frame.
    pub frame_ended: bool,
}

impl RawDecoder {
    /// A decoder with a new context and the default memory limit
    /// ([`DEFAULT_WINDOW_LOG_MAX`](crate::DEFAULT_WINDOW_LOG_MAX)).
    pub fn new() -> Result<Self> {
        Ok(RawDecoder::with_decompressor(Decompressor::new()?))
    }

    /// A decoder that reuses `decompressor`, whose memory limit and
    /// dictionary apply; any frame it was in the middle of is abandoned.
    pub fn with_decompressor(mut decompressor: Decompressor) -> Self {
        decompressor.reset();
        RawDecoder {
            decompressor,
            progress: DecodeProgress::default(),
            failed_at: None,
        }
    }

    /// The bytes of a frame header gathered so far, when it arrived in
    /// pieces (empty when none is pending).
    pub(crate) fn held_header(&self) -> &[u8] {
        &self.progress.header
    }

    /// Decodes from `input` into `output`.
    ///
    /// A call makes progress whenever it can: given input and room for
    /// output, it consumes or produces at least one byte (or fails). It
    /// stops at the end of each frame, so a frame boundary is never
    /// crossed within one call. Output may lag input (zstd holds decoded
    /// bytes that did not fit): call again with no new input until a call
    /// produces nothing to drain it.
    pub fn decode(&mut self, input: &[u8], output: &mut [u8]) -> Result<DecodeStep> {
        if let Some(offset) = self.failed_at {
            return Err(Error::Corrupt {
                offset,
                detail: "an earlier call failed; reset the decoder to start a new stream",
            });
        }
        // The position recorded is the start of the failing call's input:
        // everything before it was accepted.
        self.progress
            .step(&mut self.decompressor, input, output)
            .inspect_err(|_| self.failed_at = Some(self.progress.consumed))
    }

    /// Checks that the stream may end here: the input has ended and the
    /// last call, given no input, produced nothing. Fails with
    /// [`Error::Truncated`] when the stream ends inside a frame (or holds no
    /// frame at all), so a cut stream is never mistaken for a short one.
    pub fn finish(&self) -> Result<()> {
        self.progress.at_eof()
    }

    /// Compressed bytes consumed since the decoder was made or reset.
    pub fn consumed(&self) -> u64 {
        self.progress.consumed
    }

    /// Abandons the current stream (and any error), so the next call
    /// starts a new one at input position 0; the context is kept.
    pub fn reset(&mut self) {
        self.decompressor.reset();
        self.progress = DecodeProgress::default();
        self.failed_at = None;
    }

    /// The context, for reuse.
    pub fn into_decompressor(self) -> Decompressor {
        self.decompressor
    }
}

/// The state of a decoder between calls: [`RawDecoder`]'s, and the one-shot
/// decoder's streaming path's (which decodes into a `Vec`'s spare capacity).
///
/// Every frame header passes [`Decompressor::admit`] before zstd sees it:
/// zstd enforces the window limit only when it decodes through its own
/// window buffer, and skips that buffer (and the check) whenever the
/// caller's output has room for a frame's declared size, so the limit would
/// otherwise depend on how large the caller's buffer happens to be.
#[derive(Debug)]
pub(crate) struct DecodeProgress {
    /// Input bytes consumed so far (for error positions).
    consumed: u64,
    /// zstd's last hint: 0 when the last frame is complete.
    hint: usize,
    /// Whether any input was seen at all.
    started: bool,
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
    /// Decodes from `input` into `out`.
    pub(crate) fn step(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut [u8],
    ) -> Result<DecodeStep> {
        self.step_into(dec, input, &mut OutBuffer::around(out))
    }

    /// Decodes from `input` into whatever room `out` has left; `produced`
    /// counts from the position `out` had.
    ///
    /// Every decoding loop ([`RawDecoder`], so the sync and async decoders,
    /// and the one-shot decoder's streaming path) goes through here, so
    /// this is where a step that cannot make progress is refused: given
    /// input and room for output, a step that neither consumes nor produces
    /// would be repeated for ever by a loop that waits for one or the
    /// other, or would drop the input by one that takes it as the end.
    pub(crate) fn step_into<C: WriteBuf + ?Sized>(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut OutBuffer<'_, C>,
    ) -> Result<DecodeStep> {
        let (before, room) = (out.pos(), out.pos() < out.capacity());
        let (consumed, frame_ended) = self.step_once(dec, input, out)?;
        let produced = out.pos() - before;
        self.made_progress(input.len(), consumed, produced, room)?;
        Ok(DecodeStep {
            consumed,
            produced,
            frame_ended,
        })
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

    /// One step of [`DecodeProgress::step_into`], unchecked; returns the
    /// input bytes consumed and whether a frame ended.
    fn step_once<C: WriteBuf + ?Sized>(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut OutBuffer<'_, C>,
    ) -> Result<(usize, bool)> {
        self.started |= !input.is_empty();
        if self.at_frame_start
            && !input.is_empty()
            && let Some(taken) = self.frame_start(dec, input, out)?
        {
            return Ok(taken);
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
        let progressed = ib.pos() > 0 || out.pos() > before;
        if progressed {
            self.hint = hint;
            // zstd stops at the end of each frame, so the next byte is a
            // header.
            self.at_frame_start = hint == 0;
        }
        Ok((ib.pos(), progressed && hint == 0))
    }

    /// At a frame boundary: checks the header about to be decoded. Returns
    /// `None` when the header is whole in `input` and admitted (decoding
    /// proceeds as usual), or, for a header that arrives in pieces, the
    /// bytes consumed while assembling it and whether that ended a frame
    /// (an empty skippable one).
    fn frame_start<C: WriteBuf + ?Sized>(
        &mut self,
        dec: &mut Decompressor,
        input: &[u8],
        out: &mut OutBuffer<'_, C>,
    ) -> Result<Option<(usize, bool)>> {
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
                    return Ok(Some((used, false)));
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
        Ok(Some((used, self.at_frame_start)))
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

#[cfg(test)]
mod tests {
    //! The oracle is libzstd itself, driven through `zstd-safe` rather than
    //! through any zstdkit code: its one-shot compressor makes the frames,
    //! and the inputs' bytes are known beforehand. (`tests/seeds_vs_zstd_cli.rs`
    //! checks the same decoder against the `zstd` CLI's output.)

    use super::*;

    fn text(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| b"the window limit is a property of the frame "[i % 44] ^ (i / 4099) as u8)
            .collect()
    }

    /// A frame made by libzstd's one-shot compressor at `level`.
    fn libzstd_frame(data: &[u8], level: i32) -> Vec<u8> {
        let mut frame = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
        zstd_safe::compress(&mut frame, data, level).expect("libzstd compresses");
        frame
    }

    /// A hand-built frame with a 2^`window_log` window, a declared content
    /// size and one RLE block of `content` (at most 128 KiB) bytes `b'a'`.
    fn rle_frame(window_log: u8, content: u32) -> Vec<u8> {
        let mut f = vec![0x28, 0xb5, 0x2f, 0xfd, 0x80, (window_log - 10) << 3];
        f.extend_from_slice(&content.to_le_bytes());
        // Block header: last block, type 1 (RLE), regenerated size.
        f.extend_from_slice(&((content << 3) | (1 << 1) | 1).to_le_bytes()[..3]);
        f.push(b'a');
        f
    }

    /// An empty skippable frame (magic 0x184D2A50, length 0).
    const SKIPPABLE: [u8; 8] = [0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0];

    /// What a caller loop sees: the output, and the total input consumed
    /// at each frame end.
    struct Decoded {
        out: Vec<u8>,
        frame_ends: Vec<u64>,
    }

    /// Feeds `src` in pieces of at most `input` bytes through an output
    /// buffer of `output` bytes until the stream is drained, then finishes.
    fn decode_with(
        dec: &mut RawDecoder,
        src: &[u8],
        input: usize,
        output: usize,
    ) -> Result<Decoded> {
        let mut buf = vec![0u8; output];
        let (mut rest, mut got) = (
            src,
            Decoded {
                out: Vec::new(),
                frame_ends: Vec::new(),
            },
        );
        loop {
            let piece = &rest[..rest.len().min(input)];
            let step = dec.decode(piece, &mut buf)?;
            assert!(step.consumed <= piece.len() && step.produced <= output);
            rest = &rest[step.consumed..];
            got.out.extend_from_slice(&buf[..step.produced]);
            if step.frame_ended {
                got.frame_ends.push(dec.consumed());
            }
            if rest.is_empty() && step.produced == 0 {
                dec.finish()?;
                assert_eq!(dec.consumed(), src.len() as u64);
                return Ok(got);
            }
        }
    }

    #[test]
    fn decodes_libzstd_frames_with_any_buffer_sizes() {
        let data = text(300_000);
        for level in [1, 19] {
            let frame = libzstd_frame(&data, level);
            for (input, output) in [(usize::MAX, 1 << 20), (1, 4096), (4096, 1), (7, 13)] {
                let mut dec = RawDecoder::new().unwrap();
                let got = decode_with(&mut dec, &frame, input, output).unwrap();
                assert!(got.out == data, "level {level}, {input}/{output}");
                assert_eq!(got.frame_ends, [frame.len() as u64]);
            }
        }
    }

    /// A 1-byte output buffer: every call produces at most a byte, and the
    /// frame is reported ended only once its last byte is out.
    #[test]
    fn one_byte_of_output_at_a_time() {
        let data = text(5000);
        let frame = libzstd_frame(&data, 3);
        let mut dec = RawDecoder::new().unwrap();
        let (mut rest, mut out, mut byte) = (&frame[..], Vec::new(), [0u8; 1]);
        loop {
            let step = dec.decode(rest, &mut byte).unwrap();
            rest = &rest[step.consumed..];
            out.extend_from_slice(&byte[..step.produced]);
            if step.frame_ended {
                break;
            }
            assert!(step.consumed + step.produced > 0, "a call made no progress");
        }
        assert!(out == data && rest.is_empty());
        dec.finish().unwrap();
    }

    /// Frames, a skippable frame between them, then more frames: all the
    /// content, and one frame end per frame at each frame's last byte.
    #[test]
    fn concatenated_and_skippable_frames() {
        let (a, b) = (text(70_000), b"second frame".to_vec());
        let mut src = libzstd_frame(&a, 5);
        let ends = |parts: &[&[u8]]| {
            let mut at = 0;
            parts
                .iter()
                .map(|p| {
                    at += p.len() as u64;
                    at
                })
                .collect::<Vec<_>>()
        };
        let fb = libzstd_frame(&b, 1);
        let fa = src.clone();
        src.extend_from_slice(&SKIPPABLE);
        src.extend_from_slice(&fb);
        for (input, output) in [(usize::MAX, 1 << 20), (1, 1), (3, 100)] {
            let got = decode_with(&mut RawDecoder::new().unwrap(), &src, input, output).unwrap();
            assert!(got.out == [&a[..], &b[..]].concat(), "{input}/{output}");
            assert_eq!(got.frame_ends, ends(&[&fa, &SKIPPABLE, &fb]));
        }
    }

    /// A frame asking for a window beyond the limit is refused at its
    /// header, with nothing written, even when the output would hold all of
    /// it (where zstd itself skips the check), and after a good frame.
    #[test]
    fn a_window_beyond_the_limit_is_refused_before_any_output() {
        let too_wide = rle_frame(28, 300);
        let good = libzstd_frame(b"fits", 1);
        let mut two = good.clone();
        two.extend_from_slice(&too_wide);
        for (src, at) in [(&too_wide, 0), (&two, good.len() as u64)] {
            for output in [1 << 20, 300, 1] {
                let mut dec = RawDecoder::new().unwrap();
                let mut buf = vec![0xEE; output];
                let (mut rest, mut before) = (&src[..], Vec::new());
                let e = loop {
                    match dec.decode(rest, &mut buf) {
                        Ok(step) => {
                            rest = &rest[step.consumed..];
                            before.extend_from_slice(&buf[..step.produced]);
                            buf.fill(0xEE);
                        }
                        Err(e) => break e,
                    }
                };
                assert_eq!(before, &b"fits"[..if at == 0 { 0 } else { 4 }]);
                assert!(
                    matches!(
                        e,
                        Error::WindowTooLarge {
                            offset,
                            window: Some(0x1000_0000),
                            limit: 0x800_0000,
                        } if offset == at
                    ),
                    "{output}: {e}"
                );
                assert!(buf.iter().all(|&b| b == 0xEE), "output written");
            }
        }
        // Raised limit: the same frame decodes.
        let mut wide = Decompressor::new().unwrap();
        wide.set_window_log_max(28).unwrap();
        let got = decode_with(&mut RawDecoder::with_decompressor(wide), &too_wide, 5, 64).unwrap();
        assert_eq!(got.out, vec![b'a'; 300]);
    }

    /// A stream cut anywhere (a byte at a time, so inside a held-back
    /// header too) ends in `Truncated` at the cut, never in short output.
    #[test]
    fn truncated_input_is_reported() {
        let frame = libzstd_frame(&text(20_000), 3);
        let mut two = frame.clone();
        two.extend_from_slice(&frame);
        for cut in [
            0,
            1,
            4,
            5,
            6,
            frame.len() / 2,
            frame.len() - 1,
            frame.len() + 3,
        ] {
            for input in [1, usize::MAX] {
                let mut dec = RawDecoder::new().unwrap();
                let e = decode_with(&mut dec, &two[..cut], input, 4096).map(|d| d.out.len());
                assert!(
                    matches!(e, Err(Error::Truncated { offset }) if offset == cut as u64),
                    "cut {cut}, input {input}: {e:?}"
                );
            }
        }
    }

    #[test]
    fn errors_stay_until_reset() {
        let mut dec = RawDecoder::new().unwrap();
        let mut buf = [0u8; 64];
        let e = dec.decode(b"not zstd at all", &mut buf).unwrap_err();
        assert!(matches!(e, Error::UnknownFormat { offset: 0 }), "{e}");
        // Even good input fails now: the context is mid-nothing-known.
        let good = libzstd_frame(b"good", 1);
        let e = dec.decode(&good, &mut buf).unwrap_err();
        assert!(matches!(e, Error::Corrupt { offset: 0, .. }), "{e}");
        dec.reset();
        assert_eq!(decode_with(&mut dec, &good, 2, 2).unwrap().out, b"good");
    }

    /// A call with nothing to do does nothing and ends no frame: a caller
    /// may poll after a frame ended without seeing a second end.
    #[test]
    fn empty_calls_report_nothing() {
        let good = libzstd_frame(b"good", 1);
        let mut dec = RawDecoder::new().unwrap();
        let mut buf = [0u8; 64];
        let none = DecodeStep {
            consumed: 0,
            produced: 0,
            frame_ended: false,
        };
        assert_eq!(dec.decode(&[], &mut buf).unwrap(), none);
        let step = dec.decode(&good, &mut buf).unwrap();
        assert!(step.frame_ended && step.consumed == good.len());
        assert_eq!(dec.decode(&[], &mut buf).unwrap(), none);
        dec.finish().unwrap();
    }
}
