//! Reusable compression and decompression contexts, and the fresh-context
//! one-shot calls they are measured against.

use zstd_safe::{CCtx, DCtx, DParameter, InBuffer, OutBuffer};

use crate::error::{Error, Result};
use crate::recipe::Params;

/// The default decoder memory limit: a window of 2^27 bytes (128 MiB), the
/// same limit the `zstd` CLI applies unless told `--long=31` or `--memory`.
pub const DEFAULT_WINDOW_LOG_MAX: u32 = 27;

/// Above this declared size the one-shot decoder does not trust the frame
/// header enough to allocate it up front; it streams instead, so a forged
/// header cannot make us reserve terabytes.
const ONE_SHOT_ALLOCATION_LIMIT: u64 = 256 << 20;

/// A compression context with its parameters applied once, reused for every
/// call. Reuse saves the context allocation and table initialisation that a
/// fresh context pays on each call (see `perfkit compress bench`).
pub struct Compressor {
    cctx: CCtx<'static>,
    params: Params,
}

impl std::fmt::Debug for Compressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressor")
            .field("params", &self.params)
            .finish()
    }
}

impl Compressor {
    /// A context for `params` (or a [`Recipe`](crate::Recipe)).
    pub fn new(params: impl Into<Params>) -> Result<Self> {
        let params = params.into();
        let mut cctx = CCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
        params.apply(&mut cctx)?;
        Ok(Compressor { cctx, params })
    }

    /// A context that compresses every frame with `dictionary` (raw content
    /// or a trained zstd dictionary).
    pub fn with_dictionary(params: impl Into<Params>, dictionary: &[u8]) -> Result<Self> {
        let mut c = Compressor::new(params)?;
        c.cctx.load_dictionary(dictionary).map_err(Error::zstd)?;
        Ok(c)
    }

    /// The parameters this context applies.
    pub fn params(&self) -> Params {
        self.params
    }

    /// Compresses `src` into one complete frame.
    pub fn compress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.compress_into(src, &mut out)?;
        Ok(out)
    }

    /// Compresses `src` into one complete frame written to `dst`, replacing
    /// its contents; returns the compressed size. Reusing `dst` as well as
    /// the context makes the steady state allocation-free.
    pub fn compress_into(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Result<usize> {
        dst.clear();
        dst.reserve(zstd_safe::compress_bound(src.len()));
        self.cctx.compress2(dst, src).map_err(Error::zstd)
    }

    /// Declares the exact size of the next frame fed through streaming, so
    /// it is recorded in the frame header (as the `zstd` CLI does for files).
    pub fn pledge_size(&mut self, size: Option<u64>) -> Result<()> {
        self.cctx
            .set_pledged_src_size(size)
            .map(drop)
            .map_err(Error::zstd)
    }

    /// Abandons any half-written frame so the next call starts clean.
    pub fn reset(&mut self) {
        // Resetting a session only is infallible in practice; an error would
        // mean zstd refused to forget state, which the next call reports.
        let _ = self.cctx.reset(zstd_safe::ResetDirective::SessionOnly);
    }

    pub(crate) fn cctx(&mut self) -> &mut CCtx<'static> {
        &mut self.cctx
    }
}

/// Compresses `src` with a context created for this call only: the path a
/// reused [`Compressor`] is compared with.
pub fn compress(src: &[u8], params: impl Into<Params>) -> Result<Vec<u8>> {
    Compressor::new(params)?.compress(src)
}

/// Decompresses every frame in `src` with a context created for this call.
pub fn decompress(src: &[u8]) -> Result<Vec<u8>> {
    Decompressor::new()?.decompress(src)
}

/// A reusable decompression context with a memory limit and, optionally, a
/// dictionary.
pub struct Decompressor {
    dctx: DCtx<'static>,
    window_log_max: u32,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor")
            .field("window_log_max", &self.window_log_max)
            .finish()
    }
}

impl Decompressor {
    /// A context with the default memory limit ([`DEFAULT_WINDOW_LOG_MAX`]).
    pub fn new() -> Result<Self> {
        let dctx = DCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
        let mut d = Decompressor {
            dctx,
            window_log_max: 0,
        };
        d.set_window_log_max(DEFAULT_WINDOW_LOG_MAX)?;
        Ok(d)
    }

    /// A context that decodes frames made with `dictionary`.
    pub fn with_dictionary(dictionary: &[u8]) -> Result<Self> {
        let mut d = Decompressor::new()?;
        d.dctx.load_dictionary(dictionary).map_err(Error::zstd)?;
        Ok(d)
    }

    /// Refuses frames whose window is larger than 2^`log` bytes (10..=31).
    pub fn set_window_log_max(&mut self, log: u32) -> Result<()> {
        // Parameters can only change between frames; a failed decode may
        // have left the context mid-frame.
        self.reset();
        self.dctx
            .set_parameter(DParameter::WindowLogMax(log))
            .map_err(|code| Error::Parameter {
                name: "window_log_max",
                detail: zstd_safe::get_error_name(code),
            })?;
        self.window_log_max = log;
        Ok(())
    }

    /// The configured window limit.
    pub fn window_log_max(&self) -> u32 {
        self.window_log_max
    }

    /// Decompresses every frame of `src` (concatenated frames and skippable
    /// frames included, as `zstd -d` accepts them).
    pub fn decompress(&mut self, src: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.decompress_into(src, &mut out)?;
        Ok(out)
    }

    /// Like [`decompress`](Self::decompress), into `dst` (replacing its
    /// contents); returns the decompressed size.
    ///
    /// When every frame declares its size (and the total is plausible), this
    /// decodes in one call into an exactly sized buffer; otherwise it streams.
    /// Both paths reject truncated input rather than return short output.
    pub fn decompress_into(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Result<usize> {
        dst.clear();
        if src.is_empty() {
            return Err(Error::Truncated { offset: 0 });
        }
        if let Ok(Some(size)) = zstd_safe::find_decompressed_size(src)
            && size <= ONE_SHOT_ALLOCATION_LIMIT
        {
            dst.reserve_exact(size as usize);
            return match self.dctx.decompress(dst, src) {
                Ok(n) => Ok(n),
                // The one-shot call cannot say where it failed; the
                // streaming path can, so rerun it there for the report.
                Err(_) => self.decompress_streaming(src, dst),
            };
        }
        self.decompress_streaming(src, dst)
    }

    fn decompress_streaming(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Result<usize> {
        self.reset();
        dst.clear();
        let step = DCtx::out_size();
        let mut input = InBuffer::around(src);
        let mut hint = 1;
        loop {
            if dst.capacity() - dst.len() < step {
                dst.reserve(step);
            }
            let start = dst.len();
            let mut out = OutBuffer::around_pos(dst, start);
            let before = input.pos();
            let step_hint = self
                .dctx
                .decompress_stream(&mut out, &mut input)
                .map_err(|c| Error::decoding(c, input.pos() as u64, self.window_log_max))?;
            let filled = out.pos() == out.capacity();
            // As in `DecodeProgress::step`: only a call that made progress
            // tells whether we are inside a frame.
            if input.pos() > before || out.pos() > start {
                hint = step_hint;
            }
            if input.pos() == src.len() && !filled {
                if hint != 0 {
                    return Err(Error::Truncated {
                        offset: src.len() as u64,
                    });
                }
                return Ok(dst.len());
            }
        }
    }

    /// Abandons any half-decoded frame so the next call starts clean.
    pub fn reset(&mut self) {
        // A session-only reset cannot fail for a valid context.
        let _ = self.dctx.reset(zstd_safe::ResetDirective::SessionOnly);
    }

    pub(crate) fn dctx(&mut self) -> &mut DCtx<'static> {
        &mut self.dctx
    }
}
