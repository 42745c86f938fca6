//! Reusable compression and decompression contexts, and the fresh-context
//! one-shot calls they are measured against.

use zstd_safe::{CCtx, DCtx, DParameter, OutBuffer};

use crate::error::{Error, Result};
use crate::ffi::{self, FrameHeader};
use crate::raw::DecodeProgress;
use crate::recipe::{Params, Strategy};

/// The default decoder memory limit: a window of 2^27 bytes (128 MiB), the
/// same limit the `zstd` CLI applies unless told `--long=31` or `--memory`.
pub const DEFAULT_WINDOW_LOG_MAX: u32 = 27;

/// How many times its compressed size the one-shot decoder will reserve
/// for output before any exists. Real data rarely expands more than this
/// (text ~3-10x, logs and JSON tens); what does is decoded by streaming
/// into a buffer that grows with the output, so a forged size field in a
/// tiny input cannot make us reserve hundreds of megabytes.
pub const MAX_RESERVED_EXPANSION: u64 = 128;

/// The reservation the one-shot decoder always allows, whatever the input
/// size, so small messages keep the exact one-call path.
pub const MIN_RESERVATION: u64 = 1 << 20;

/// A compression context with its parameters applied once, reused for every
/// call. Reuse saves the context allocation and table initialisation that a
/// fresh context pays on each call (see `perfkit bench --only zstd`).
///
/// Except where clean tables pay: libzstd reuses a context's match tables
/// as the last frame left them (its indices go on, so old entries only
/// fail their checks), where a new context's are zeroed first. Zeroed
/// just before use, they are in the cache and hold nothing to reject; left
/// dirty, they were cold and full. Zeroing costs about what compressing
/// zeros costs, so it pays only where the frame works its tables: a
/// one-shot frame at the `dfast` to `lazy2` strategies (levels 3 to 10,
/// and 0, zstd's default) starts on a new libzstd context when it is
/// [`CLEAN_TABLES_FROM`] bytes
/// or more and the last frame shrank as text does (1.05 to 16 times), or
/// 1 MiB or more and the last frame hardly shrank. Other frames,
/// dictionaries, workers and streams keep the context. The frames are the
/// same byte for byte either way.
pub struct Compressor {
    cctx: CCtx<'static>,
    params: Params,
    /// A dictionary is loaded: the context is never replaced.
    dictionary: bool,
    /// How the last one-shot frame worked its tables; `None` before the
    /// first, when the context is new anyway.
    last: Option<Worked>,
}

/// How a frame worked its match tables, judged by how much it shrank: the
/// next frame of a context is likely to shrink alike. Measured (a reused
/// libzstd context against zstdkit's, levels 3 and 6, 8 MiB read between
/// calls, 128 kB to 1 MB): on text, sources and libraries clean tables
/// took 0.67-0.97x the time; on random and `.gz` data 1.24-2.06x under
/// 1 MiB but 0.44-0.97x from it; on zeros 1.09-2.68x at every size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Worked {
    /// Shrank 16 times or more (zeros, one line repeated): long matches,
    /// few lookups. Its tables are kept.
    Dense,
    /// Shrank by less than a twentieth (random or compressed data, which
    /// libzstd gives up on soon): clean tables pay from 1 MiB. The
    /// corpus's binary, which shrinks by a fifth, searches its tables as
    /// text does.
    Incompressible,
    /// Anything between (text, sources, binaries, logs): clean tables pay
    /// from [`CLEAN_TABLES_FROM`].
    Searched,
}

impl Worked {
    fn judge(input: usize, frame: usize) -> Worked {
        if frame.saturating_mul(16) <= input {
            Worked::Dense
        } else if frame.saturating_mul(20) >= input.saturating_mul(19) {
            Worked::Incompressible
        } else {
            Worked::Searched
        }
    }
}

/// Input bytes from which a frame after incompressible ones starts on
/// clean tables (see [`Worked`]).
const CLEAN_INCOMPRESSIBLE_FROM: usize = 1 << 20;

/// Input bytes from which a one-shot frame at `dfast` to `lazy2`, after a
/// frame that shrank as text does, starts on clean tables (see
/// [`Compressor`]). A reused libzstd context against zstdkit's, level 3,
/// slices of a tar of crate sources, a log, a tar of shared libraries and
/// a mix of `.gz` data and text (medians of 15-300 calls): with 8 MiB read
/// between calls, clean tables took 0.72-0.94x the time at 128 KiB and
/// 0.74-0.87x at 256 KiB; back to back, with the tables still warm, they
/// took up to 1.19x at 128 KiB and 1.07x at 256 KiB (the mix, which
/// compresses fast) and 0.85-1.01x from 384 KiB. So from 384 KiB, where
/// both ways gain or break even.
pub const CLEAN_TABLES_FROM: usize = 384 << 10;

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
        Ok(Compressor {
            cctx: Self::context(params)?,
            params,
            dictionary: false,
            last: None,
        })
    }

    /// A new libzstd context with `params` applied.
    fn context(params: Params) -> Result<CCtx<'static>> {
        let mut cctx = CCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
        params.apply(&mut cctx)?;
        Ok(cctx)
    }

    /// Whether a one-shot frame of `len` bytes starts on clean tables (see
    /// [`Compressor`]).
    fn clean_tables_pay(&self, len: usize) -> bool {
        let p = &self.params;
        let middling = match p.strategy_override() {
            Some(s) => matches!(
                s,
                Strategy::Dfast | Strategy::Greedy | Strategy::Lazy | Strategy::Lazy2
            ),
            // Level 0 is zstd's default, 3.
            None => matches!(p.compression_level(), 0 | 3..=10),
        };
        let from = match self.last {
            None | Some(Worked::Dense) => return false,
            Some(Worked::Incompressible) => CLEAN_INCOMPRESSIBLE_FROM,
            Some(Worked::Searched) => CLEAN_TABLES_FROM,
        };
        middling && len >= from && !self.dictionary && p.worker_count() == 0 && !p.long_distance()
    }

    /// A context that compresses every frame with `dictionary` (raw content
    /// or a trained zstd dictionary).
    pub fn with_dictionary(params: impl Into<Params>, dictionary: &[u8]) -> Result<Self> {
        let mut c = Compressor::new(params)?;
        c.cctx.load_dictionary(dictionary).map_err(Error::zstd)?;
        c.dictionary = true;
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
        if self.clean_tables_pay(src.len()) {
            // The old context (and its tables) is freed before the new one
            // allocates its own, in the frame's first call.
            self.cctx = Self::context(self.params)?;
        }
        dst.clear();
        dst.reserve(zstd_safe::compress_bound(src.len()));
        let made = self.cctx.compress2(dst, src).map_err(Error::zstd)?;
        self.last = Some(Worked::judge(src.len(), made));
        Ok(made)
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
    /// The largest window a frame may ask for, in bytes.
    memory_limit: u64,
}

impl std::fmt::Debug for Decompressor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decompressor")
            .field("memory_limit", &self.memory_limit)
            .finish()
    }
}

/// The range [`Decompressor::set_memory_limit`] accepts: zstd's smallest
/// window (1 KiB) to its largest on 64-bit machines (2 GiB).
pub const MEMORY_LIMIT_RANGE: std::ops::RangeInclusive<u64> = (1 << 10)..=(1 << 31);

impl Decompressor {
    /// A context with the default memory limit ([`DEFAULT_WINDOW_LOG_MAX`]).
    pub fn new() -> Result<Self> {
        let dctx = DCtx::try_create().ok_or(Error::Zstd("cannot allocate a context"))?;
        let mut d = Decompressor {
            dctx,
            memory_limit: 0,
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

    /// Refuses frames whose window is larger than 2^`log` bytes (10..=31),
    /// as `zstd -d --long=LOG` does.
    pub fn set_window_log_max(&mut self, log: u32) -> Result<()> {
        if !(10..=31).contains(&log) {
            return Err(Error::Parameter {
                name: "window_log_max",
                detail: "outside 10..=31",
            });
        }
        self.set_memory_limit(1 << log)
    }

    /// Refuses frames whose window is larger than `bytes` (any size in
    /// [`MEMORY_LIMIT_RANGE`]), as `zstd -d --memory=BYTES` does. The window
    /// is what a streaming decoder must keep in memory besides its buffers.
    pub fn set_memory_limit(&mut self, bytes: u64) -> Result<()> {
        if !MEMORY_LIMIT_RANGE.contains(&bytes) {
            return Err(Error::Parameter {
                name: "memory_limit",
                detail: "outside 1 KiB..=2 GiB",
            });
        }
        // Parameters can only change between frames; a failed decode may
        // have left the context mid-frame.
        self.reset();
        // `admit` enforces the exact limit on every frame; zstd's own check
        // takes a power of two, so give it the one at or above the limit and
        // it never refuses what `admit` accepted.
        let log = 64 - (bytes - 1).leading_zeros();
        self.dctx
            .set_parameter(DParameter::WindowLogMax(log))
            .map_err(|code| Error::Parameter {
                name: "memory_limit",
                detail: zstd_safe::get_error_name(code),
            })?;
        self.memory_limit = bytes;
        Ok(())
    }

    /// Leaves frames' content checksums unchecked, as `zstd -d --no-check`
    /// does (a frame whose data is damaged then decodes to damaged data).
    pub fn ignore_checksums(&mut self) -> Result<()> {
        self.reset();
        self.dctx
            .set_parameter(DParameter::ForceIgnoreChecksum(true))
            .map_err(|code| Error::Parameter {
                name: "ignore_checksums",
                detail: zstd_safe::get_error_name(code),
            })?;
        Ok(())
    }

    /// The configured memory limit: the largest window a frame may need, in
    /// bytes.
    pub fn memory_limit(&self) -> u64 {
        self.memory_limit
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
    /// When every frame declares its size and the total is within
    /// [`reservation_limit`](Self::reservation_limit), this decodes in one
    /// call into an exactly sized buffer; otherwise it streams, reserving at
    /// most that limit up front and growing only as output arrives. Both
    /// paths apply the window limit to every frame and reject truncated
    /// input rather than return short output.
    pub fn decompress_into(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Result<usize> {
        dst.clear();
        if src.is_empty() {
            return Err(Error::Truncated { offset: 0 });
        }
        let bound = self.reservation_limit(src.len());
        match self.declared_size(src) {
            Some(size) if size <= bound => {
                dst.reserve_exact(size as usize);
                match self.dctx.decompress(dst, src) {
                    Ok(n) => Ok(n),
                    // The one-shot call cannot say where it failed; the
                    // streaming path can, so rerun it there for the report.
                    Err(_) => self.decompress_streaming(src, dst),
                }
            }
            declared => {
                dst.reserve(declared.unwrap_or(0).min(bound) as usize);
                self.decompress_streaming(src, dst)
            }
        }
    }

    /// Decodes `src`, one frame that need not declare its size but that
    /// decodes to at most `bound` bytes (what its block headers allow, see
    /// [`crate::frame::Walked::max_output`]), into `dst` in one call: the
    /// window is checked first, and `dst` holds `bound` bytes of capacity
    /// (kept for the next call). zstd's streaming path, which a frame
    /// without a declared size otherwise takes, decodes through its window
    /// buffer and copies out (pzstd's frames decoded 6 % slower).
    pub fn decompress_frame_within(
        &mut self,
        src: &[u8],
        dst: &mut Vec<u8>,
        bound: u64,
    ) -> Result<usize> {
        dst.clear();
        self.admit(ffi::frame_header(src), 0)?;
        let bound = usize::try_from(bound).map_err(|_| Error::Zstd("a frame too large to hold"))?;
        dst.reserve(bound);
        match self.dctx.decompress(dst, src) {
            Ok(n) => Ok(n),
            // As in decompress_into: the streaming path says where.
            Err(_) => self.decompress_streaming(src, dst),
        }
    }

    /// The most [`decompress_into`](Self::decompress_into) reserves before
    /// any output exists for `input_len` compressed bytes: a frame header
    /// may declare any size, so the reservation is bounded by the window
    /// limit and by [`MAX_RESERVED_EXPANSION`] times the input (at least
    /// [`MIN_RESERVATION`]), whichever is smaller.
    pub fn reservation_limit(&self, input_len: usize) -> u64 {
        let by_input = (input_len as u64)
            .saturating_mul(MAX_RESERVED_EXPANSION)
            .max(MIN_RESERVATION);
        by_input.min(self.memory_limit)
    }

    /// The total size every frame of `src` declares, when all of them
    /// declare one and pass the window limit; `None` sends the input to the
    /// streaming path, which reports whatever is wrong at its position.
    fn declared_size(&self, src: &[u8]) -> Option<u64> {
        let mut total = 0u64;
        let mut rest = src;
        while !rest.is_empty() {
            match ffi::frame_header(rest) {
                FrameHeader::Frame {
                    window_size,
                    content_size: Some(n),
                } if self.window_fits(window_size) => total = total.checked_add(n)?,
                FrameHeader::Skippable => {}
                _ => return None,
            }
            let len = zstd_safe::find_frame_compressed_size(rest).ok()?;
            rest = rest.get(len..).filter(|_| len > 0)?;
        }
        Some(total)
    }

    fn window_fits(&self, window_size: u64) -> bool {
        // zstd raises windows below 1 KiB to 1 KiB before it compares.
        window_size.max(1 << 10) <= self.memory_limit
    }

    /// Refuses a frame whose header, read at input position `offset`,
    /// needs a larger window than this context allows.
    pub(crate) fn admit(&self, header: FrameHeader, offset: u64) -> Result<()> {
        match header {
            FrameHeader::Frame { window_size, .. } if !self.window_fits(window_size) => {
                Err(Error::WindowTooLarge {
                    offset,
                    window: Some(window_size),
                    limit: self.memory_limit,
                })
            }
            _ => Ok(()),
        }
    }

    fn decompress_streaming(&mut self, src: &[u8], dst: &mut Vec<u8>) -> Result<usize> {
        self.reset();
        dst.clear();
        let step = DCtx::out_size();
        let mut progress = DecodeProgress::default();
        let mut pos = 0;
        loop {
            if dst.capacity() - dst.len() < step {
                dst.reserve(step);
            }
            let start = dst.len();
            let mut out = OutBuffer::around_pos(dst, start);
            let step = progress.step_into(self, &src[pos..], &mut out)?;
            let (used, produced) = (step.consumed, step.produced);
            let filled = out.pos() == out.capacity();
            pos += used;
            // With room left in the output, a call that neither reads nor
            // writes has nothing more to give: the input is exhausted
            // (`step_into` refuses such a call on input it did not take).
            if used == 0 && produced == 0 && !filled {
                debug_assert_eq!(pos, src.len());
                progress.at_eof()?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Recipe;

    #[test]
    fn frames_start_on_clean_tables_at_dfast_to_lazy2_after_frames_that_searched() {
        let after = |params: Params, last| {
            let mut c = Compressor::new(params).unwrap();
            c.last = last;
            c
        };
        let searched = Some(Worked::Searched);
        let balanced = after(Recipe::Balanced.into(), searched);
        assert!(balanced.clean_tables_pay(CLEAN_TABLES_FROM));
        assert!(!balanced.clean_tables_pay(CLEAN_TABLES_FROM - 1));
        assert!(after(Recipe::Binary.into(), searched).clean_tables_pay(1 << 20));
        assert!(after(Params::for_level(9), searched).clean_tables_pay(1 << 20));
        assert!(after(Params::for_level(0), searched).clean_tables_pay(1 << 20));
        let lazy2_at_19 = Params::for_level(19).strategy(Some(Strategy::Lazy2));
        assert!(after(lazy2_at_19, searched).clean_tables_pay(1 << 20));
        for keeps in [
            Params::from(Recipe::Fast),
            Params::from(Recipe::Text),
            Params::from(Recipe::Maximum),
            Params::for_level(19),
            Params::for_level(-5),
            Params::from(Recipe::Balanced).workers(2),
            Params::from(Recipe::Balanced).long(Some(27)),
        ] {
            assert!(
                !after(keeps, searched).clean_tables_pay(1 << 20),
                "{keeps:?}"
            );
        }
        let mut dict = Compressor::with_dictionary(Recipe::Balanced, b"a dictionary").unwrap();
        dict.last = searched;
        assert!(!dict.clean_tables_pay(1 << 20));
        // What the last frame did: a new context, a dense frame, an
        // incompressible one (clean only from 1 MiB).
        assert!(!after(Recipe::Balanced.into(), None).clean_tables_pay(8 << 20));
        assert!(!after(Recipe::Balanced.into(), Some(Worked::Dense)).clean_tables_pay(8 << 20));
        let incompressible = after(Recipe::Balanced.into(), Some(Worked::Incompressible));
        assert!(!incompressible.clean_tables_pay(CLEAN_INCOMPRESSIBLE_FROM - 1));
        assert!(incompressible.clean_tables_pay(CLEAN_INCOMPRESSIBLE_FROM));
    }

    #[test]
    fn a_frame_is_judged_by_how_much_it_shrank() {
        assert_eq!(Worked::judge(1600, 100), Worked::Dense);
        assert_eq!(Worked::judge(1600, 101), Worked::Searched);
        assert_eq!(Worked::judge(1000, 949), Worked::Searched);
        assert_eq!(Worked::judge(1000, 950), Worked::Incompressible);
        assert_eq!(Worked::judge(1000, 1013), Worked::Incompressible);
        assert_eq!(Worked::judge(0, 9), Worked::Incompressible);
    }
}
