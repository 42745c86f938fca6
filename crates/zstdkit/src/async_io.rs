//! tokio adapters: [`AsyncEncoder`] over `AsyncWrite` and [`AsyncDecoder`]
//! over `AsyncBufRead`.
//!
//! They run zstd inline in `poll_*`: each poll compresses or decompresses at
//! most one caller-sized chunk, so the time a poll holds the executor is that
//! chunk's cost, which [`Budget`](crate::Budget) can predict. Feed chunks that
//! fit your budget (a 128 KiB chunk at the `fast` recipe takes well under a
//! millisecond) or move whole-buffer work to [`Budget::compress`](crate::Budget::compress).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncBufRead, AsyncRead, AsyncWrite, ReadBuf};
use zstd_safe::{CCtx, InBuffer};

use crate::context::{Compressor, Decompressor};
use crate::error::{Error, Result};
use crate::raw::RawDecoder;
use crate::recipe::Params;
use crate::stream::{FlushMode, compress_step, step_done};

/// An `AsyncWrite` that compresses into another `AsyncWrite`. Shut it down
/// (`AsyncWriteExt::shutdown`) to end the frame; `flush` emits complete
/// blocks, as [`FlushMode::Flush`] does.
pub struct AsyncEncoder<W> {
    inner: W,
    compressor: Compressor,
    buf: Vec<u8>,
    /// How much of `buf` has been written to `inner`.
    drained: usize,
    /// Set once the frame epilogue is fully produced during shutdown.
    ended: bool,
}

impl<W: AsyncWrite + Unpin> AsyncEncoder<W> {
    /// An encoder with a new context for `params`.
    pub fn new(inner: W, params: impl Into<Params>) -> Result<Self> {
        Ok(AsyncEncoder::with_compressor(
            inner,
            Compressor::new(params)?,
        ))
    }

    /// An encoder reusing a context.
    pub fn with_compressor(inner: W, mut compressor: Compressor) -> Self {
        compressor.reset();
        AsyncEncoder {
            inner,
            compressor,
            buf: Vec::with_capacity(CCtx::out_size()),
            drained: 0,
            ended: false,
        }
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.inner
    }

    fn poll_drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.drained < self.buf.len() {
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &self.buf[self.drained..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.drained += n;
        }
        self.buf.clear();
        self.drained = 0;
        Poll::Ready(Ok(()))
    }

    /// Drives `mode` with no new input until zstd has nothing left to emit.
    fn poll_finish_mode(&mut self, cx: &mut Context<'_>, mode: FlushMode) -> Poll<io::Result<()>> {
        loop {
            ready!(self.poll_drain(cx))?;
            if mode == FlushMode::End && self.ended {
                return Poll::Ready(Ok(()));
            }
            let mut input = InBuffer::around(&[]);
            let remaining = compress_step(self.compressor.cctx(), &mut input, &mut self.buf, mode)
                .map_err(Error::into_io)?;
            if step_done(mode, &input, 0, remaining) {
                if mode == FlushMode::End {
                    self.ended = true;
                    continue;
                }
                return self.poll_drain(cx);
            }
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for AsyncEncoder<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        this.ended = false;
        loop {
            ready!(this.poll_drain(cx))?;
            if data.is_empty() {
                return Poll::Ready(Ok(0));
            }
            let mut input = InBuffer::around(data);
            compress_step(
                this.compressor.cctx(),
                &mut input,
                &mut this.buf,
                FlushMode::Continue,
            )
            .map_err(Error::into_io)?;
            if input.pos() > 0 {
                // Output left in `buf` is drained by the next call, flush
                // or shutdown.
                return Poll::Ready(Ok(input.pos()));
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_finish_mode(cx, FlushMode::Flush))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_finish_mode(cx, FlushMode::End))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// An `AsyncRead` that decompresses an `AsyncBufRead`, with the same
/// guarantees as the sync [`Decoder`](crate::Decoder).
pub struct AsyncDecoder<R> {
    inner: R,
    raw: RawDecoder,
}

impl<R: AsyncBufRead + Unpin> AsyncDecoder<R> {
    /// A decoder with a new context and the default memory limit.
    pub fn new(inner: R) -> Result<Self> {
        Ok(AsyncDecoder::with_decompressor(inner, Decompressor::new()?))
    }

    /// A decoder reusing a context.
    pub fn with_decompressor(inner: R, decompressor: Decompressor) -> Self {
        AsyncDecoder {
            inner,
            raw: RawDecoder::with_decompressor(decompressor),
        }
    }
}

impl<R: AsyncBufRead + Unpin> AsyncRead for AsyncDecoder<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        loop {
            let input = ready!(Pin::new(&mut this.inner).poll_fill_buf(cx))?;
            let eof = input.is_empty();
            let out = buf.initialize_unfilled();
            let step = this.raw.decode(input, out).map_err(Error::into_io)?;
            Pin::new(&mut this.inner).consume(step.consumed);
            if step.produced > 0 {
                buf.advance(step.produced);
                return Poll::Ready(Ok(()));
            }
            if eof {
                this.raw.finish().map_err(Error::into_io)?;
                return Poll::Ready(Ok(()));
            }
        }
    }
}
