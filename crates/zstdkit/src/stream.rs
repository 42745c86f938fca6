//! Streaming over `std::io`: an [`Encoder`] with explicit flush modes and a
//! [`Decoder`] that reads concatenated frames and refuses truncated ones.

use std::io::{self, BufRead, BufReader, Read, Write};

use zstd_safe::zstd_sys::ZSTD_EndDirective;
use zstd_safe::{CCtx, InBuffer, OutBuffer};

use crate::context::{Compressor, Decompressor};
use crate::error::{Error, Result};
use crate::raw::RawDecoder;
use crate::recipe::Params;

/// What an [`Encoder`] does with the data it has after a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlushMode {
    /// Keep buffering: zstd emits blocks when it has enough data.
    Continue,
    /// Emit everything written so far as complete blocks now, so the reader
    /// can decode it, keeping the frame open (costs a little ratio).
    Flush,
    /// Close the frame (epilogue and checksum); the next write starts a new
    /// frame.
    End,
}

impl FlushMode {
    pub(crate) fn directive(self) -> ZSTD_EndDirective {
        match self {
            FlushMode::Continue => ZSTD_EndDirective::ZSTD_e_continue,
            FlushMode::Flush => ZSTD_EndDirective::ZSTD_e_flush,
            FlushMode::End => ZSTD_EndDirective::ZSTD_e_end,
        }
    }
}

/// Runs one compression step over `input`, appending output to `out`
/// (which is cleared first). Returns zstd's "bytes still to flush" hint.
/// Shared by the sync and async encoders so that both make the same bytes.
pub(crate) fn compress_step(
    cctx: &mut CCtx<'static>,
    input: &mut InBuffer<'_>,
    out: &mut Vec<u8>,
    mode: FlushMode,
) -> Result<usize> {
    out.clear();
    let mut ob = OutBuffer::around(out);
    cctx.compress_stream2(&mut ob, input, mode.directive())
        .map_err(Error::zstd)
}

/// True when a compression step with `mode` has nothing more to do.
pub(crate) fn step_done(
    mode: FlushMode,
    input: &InBuffer<'_>,
    len: usize,
    remaining: usize,
) -> bool {
    match mode {
        FlushMode::Continue => input.pos() == len,
        FlushMode::Flush | FlushMode::End => input.pos() == len && remaining == 0,
    }
}

/// A zstd stream encoder over any writer.
///
/// Call [`finish`](Encoder::finish) at the end: dropping an encoder leaves the
/// last frame unterminated, which every decoder reports as truncated.
///
/// ```
/// use std::io::Write;
/// use zstdkit::{Encoder, FlushMode, Recipe};
/// let mut enc = Encoder::new(Vec::new(), Recipe::Fast)?;
/// enc.write_all(b"hello ")?;
/// enc.write_with(b"world", FlushMode::Flush)?; // decodable up to here
/// let frame = enc.finish()?;
/// assert_eq!(zstdkit::decompress(&frame)?, b"hello world");
/// # Ok::<(), zstdkit::Error>(())
/// ```
pub struct Encoder<W: Write> {
    compressor: Compressor,
    writer: W,
    buf: Vec<u8>,
}

impl<W: Write> Encoder<W> {
    /// An encoder with a new context for `params`.
    pub fn new(writer: W, params: impl Into<Params>) -> Result<Self> {
        Ok(Encoder::with_compressor(writer, Compressor::new(params)?))
    }

    /// An encoder that reuses an existing context (and its dictionary).
    pub fn with_compressor(writer: W, mut compressor: Compressor) -> Self {
        compressor.reset();
        Encoder {
            compressor,
            writer,
            buf: Vec::with_capacity(CCtx::out_size()),
        }
    }

    /// Records the total size of the frame in its header; must be called
    /// before the first write.
    pub fn pledge_size(&mut self, size: u64) -> Result<()> {
        self.compressor.pledge_size(Some(size))
    }

    /// Compresses `data` and then applies `mode`.
    pub fn write_with(&mut self, data: &[u8], mode: FlushMode) -> Result<()> {
        let mut input = InBuffer::around(data);
        loop {
            let remaining = compress_step(self.compressor.cctx(), &mut input, &mut self.buf, mode)?;
            self.writer.write_all(&self.buf)?;
            if step_done(mode, &input, data.len(), remaining) {
                return Ok(());
            }
        }
    }

    /// Emits all buffered data as complete blocks (see [`FlushMode::Flush`]).
    pub fn flush_block(&mut self) -> Result<()> {
        self.write_with(&[], FlushMode::Flush)
    }

    /// Ends the frame and returns the writer (not flushed).
    pub fn finish(self) -> Result<W> {
        self.finish_parts().map(|(w, _)| w)
    }

    /// Ends the frame and returns the writer and the context for reuse.
    pub fn finish_parts(mut self) -> Result<(W, Compressor)> {
        self.write_with(&[], FlushMode::End)?;
        Ok((self.writer, self.compressor))
    }

    /// The underlying writer.
    pub fn get_ref(&self) -> &W {
        &self.writer
    }
}

impl<W: Write> Write for Encoder<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_with(data, FlushMode::Continue)
            .map_err(Error::into_io)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flush_block().map_err(Error::into_io)?;
        self.writer.flush()
    }
}

/// A zstd stream decoder over any reader: decodes concatenated and skippable
/// frames, and fails with [`Error::Truncated`] (as an `UnexpectedEof` I/O
/// error) when the input ends inside a frame, or holds no frame at all.
pub struct Decoder<R: BufRead> {
    reader: R,
    raw: RawDecoder,
    /// Bytes taken from `reader` (consumed from its buffer) so far.
    taken: u64,
}

impl<R: Read> Decoder<BufReader<R>> {
    /// A decoder over an unbuffered reader (buffered with zstd's preferred
    /// input size).
    pub fn new(reader: R) -> Result<Self> {
        let buffered = BufReader::with_capacity(zstd_safe::DCtx::in_size(), reader);
        Ok(Decoder::with_decompressor(buffered, Decompressor::new()?))
    }
}

impl<R: BufRead> Decoder<R> {
    /// A decoder over a buffered reader, reusing a context (its memory limit
    /// and dictionary apply).
    pub fn with_decompressor(reader: R, decompressor: Decompressor) -> Self {
        Decoder {
            reader,
            raw: RawDecoder::with_decompressor(decompressor),
            taken: 0,
        }
    }

    /// Compressed bytes consumed so far.
    pub fn consumed(&self) -> u64 {
        self.raw.consumed()
    }

    /// After a failure at input byte `offset` (a frame boundary, where an
    /// unknown header was met), the bytes from `offset` that were taken
    /// from the reader already, held as a header in pieces: with what the
    /// reader still has, they are the input from `offset` on. `None` when
    /// the reader was taken past what is held.
    pub(crate) fn taken_since(&self, offset: u64) -> Option<&[u8]> {
        let n = usize::try_from(self.taken.checked_sub(offset)?).ok()?;
        self.raw.held_header().get(..n)
    }

    /// Returns the reader and the context.
    pub fn into_parts(self) -> (R, Decompressor) {
        (self.reader, self.raw.into_decompressor())
    }
}

impl<R: BufRead> Read for Decoder<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let input = self.reader.fill_buf()?;
            let eof = input.is_empty();
            let step = self.raw.decode(input, out).map_err(Error::into_io)?;
            self.reader.consume(step.consumed);
            self.taken += step.consumed as u64;
            if step.produced > 0 {
                return Ok(step.produced);
            }
            if eof {
                self.raw.finish().map_err(Error::into_io)?;
                return Ok(0);
            }
        }
    }
}
