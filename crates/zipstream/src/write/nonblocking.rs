//! The async writer over `tokio::io::AsyncWrite`: a thin adapter over the same
//! core as the sync writer. Compression runs inline in the calling task (one
//! `write` compresses at most the caller's buffer, so the executor is held for
//! microseconds per 64 KiB); there is no hop to a worker thread per write.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::DRAIN_AT;
use super::core::{Core, Written};
use crate::entry::EntryOptions;
use crate::error::{Error, Result};

/// Writes a ZIP archive to a tokio [`AsyncWrite`] sink, streaming (data
/// descriptors for large entries). Produces byte-for-byte the archive that
/// [`crate::ZipWriter::new`] produces from the same calls.
pub struct AsyncZipWriter<W: AsyncWrite + Unpin> {
    sink: W,
    core: Core,
    sent: usize,
    chunk: Vec<u8>,
}

impl<W: AsyncWrite + Unpin> AsyncZipWriter<W> {
    /// A streaming writer.
    pub fn new(sink: W) -> AsyncZipWriter<W> {
        AsyncZipWriter {
            sink,
            core: Core::new(false),
            sent: 0,
            chunk: Vec::new(),
        }
    }

    /// Sets the archive comment.
    pub fn set_comment(&mut self, comment: &str) -> Result<()> {
        self.core.set_comment(comment)
    }

    /// Opens a new entry.
    pub async fn start_entry(&mut self, opts: EntryOptions) -> Result<()> {
        self.core.start(opts)
    }

    /// Adds data to the open entry.
    pub async fn write_data(&mut self, data: &[u8]) -> Result<()> {
        self.drain(false).await?;
        self.core.write(data)?;
        self.drain(false).await
    }

    /// Closes the open entry.
    pub async fn finish_entry(&mut self) -> Result<()> {
        // A non-seekable core never asks for a patch.
        let _ = self.core.finish_entry()?;
        self.drain(false).await
    }

    /// Writes a whole entry from memory, its length the size hint unless
    /// `opts` gives one ([`EntryOptions::size_hint`]).
    pub async fn add_bytes(&mut self, opts: EntryOptions, data: &[u8]) -> Result<()> {
        self.start_entry(opts.sized(data.len())).await?;
        self.write_data(data).await?;
        self.finish_entry().await
    }

    /// Writes a whole entry from an async reader; returns the bytes read.
    pub async fn add_reader<R: AsyncRead + Unpin>(
        &mut self,
        opts: EntryOptions,
        reader: &mut R,
    ) -> Result<u64> {
        self.start_entry(opts).await?;
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.resize(DRAIN_AT, 0);
        let mut total = 0;
        let res: Result<()> = async {
            loop {
                let n = reader.read(&mut chunk).await?;
                if n == 0 {
                    return Ok(());
                }
                total += n as u64;
                self.write_data(&chunk[..n]).await?;
            }
        }
        .await;
        self.chunk = chunk;
        res?;
        self.finish_entry().await?;
        Ok(total)
    }

    /// Writes a directory entry.
    pub async fn add_directory(&mut self, opts: EntryOptions) -> Result<()> {
        self.add_bytes(opts, &[]).await
    }

    /// Writes a symlink entry pointing at `target`.
    pub async fn add_symlink(&mut self, opts: EntryOptions, target: &str) -> Result<()> {
        self.add_bytes(opts, target.as_bytes()).await
    }

    /// Number of finished entries.
    pub fn entries(&self) -> usize {
        self.core.entries()
    }

    /// The finished entry number `index` (from 0, in the order written),
    /// or None if it is not finished yet.
    pub fn written(&self, index: usize) -> Option<Written> {
        self.core.written(index)
    }

    /// Writes the central directory, flushes, and returns the sink.
    pub async fn finish(mut self) -> Result<W> {
        self.core.finish()?;
        self.drain(true).await?;
        self.sink.flush().await?;
        Ok(self.sink)
    }

    async fn drain(&mut self, all: bool) -> Result<()> {
        std::future::poll_fn(|cx| self.poll_drain(cx, all))
            .await
            .map_err(Error::from)
    }

    fn poll_drain(&mut self, cx: &mut Context<'_>, all: bool) -> Poll<io::Result<()>> {
        if !all && self.core.out.len() < DRAIN_AT {
            return Poll::Ready(Ok(()));
        }
        while self.sent < self.core.out.len() {
            let n = ready!(Pin::new(&mut self.sink).poll_write(cx, &self.core.out[self.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.sent += n;
        }
        self.core.out.clear();
        self.sent = 0;
        Poll::Ready(Ok(()))
    }
}

/// Entry data can also be written with `AsyncWriteExt` (e.g. `tokio::io::copy`)
/// between `start_entry` and `finish_entry`.
impl<W: AsyncWrite + Unpin> AsyncWrite for AsyncZipWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx, false))?;
        this.core.write(buf)?;
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx, true))?;
        Pin::new(&mut this.sink).poll_flush(cx)
    }
    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_drain(cx, true))?;
        Pin::new(&mut this.sink).poll_shutdown(cx)
    }
}
