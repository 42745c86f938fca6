//! A compression context in zstd's stable-input mode, the one context
//! `zstd-safe` cannot offer, for compressing in place (the `runway` module).

use std::os::raw::c_int;
use std::ptr::NonNull;

use zstd_safe::CParameter;
use zstd_safe::zstd_sys::{self, ZSTD_EndDirective, ZSTD_ErrorCode, ZSTD_cParameter};

use crate::error::{Error, Result};
use crate::ffi;
use crate::recipe::Params;

/// A compression context in zstd's stable-input mode
/// (`ZSTD_c_stableInBuffer`), which `zstd-safe` refuses to enable because a
/// borrowed slice cannot promise it: zstd then compresses straight from the
/// caller's memory, whole blocks at a time, instead of copying the input
/// into its own ring of one window plus one block. That ring wraps every
/// window, so almost every block of a long stream is compressed in zstd's
/// slower two-segment ("extDict") mode; from one contiguous range none is.
pub(crate) struct StableCCtx {
    ptr: NonNull<zstd_sys::ZSTD_CCtx>,
}

// SAFETY: a ZSTD_CCtx has no thread affinity; it is owned here and only
// used through `&mut self`.
unsafe impl Send for StableCCtx {}

impl StableCCtx {
    /// A context with `params` applied (which must ask for no worker
    /// threads: zstd's workers copy their input anyway) and, optionally, a
    /// dictionary, which zstd copies.
    pub(crate) fn new(params: &Params, dictionary: Option<&[u8]>) -> Result<Self> {
        // SAFETY: plain allocation; a null result is handled below.
        let raw = unsafe { zstd_sys::ZSTD_createCCtx() };
        let mut cctx = StableCCtx {
            ptr: NonNull::new(raw).ok_or(Error::Zstd("cannot allocate a context"))?,
        };
        for (name, p) in params.settings() {
            let (param, value) = raw_parameter(p).ok_or(Error::Parameter {
                name,
                detail: "not settable in stable-input mode",
            })?;
            cctx.set(name, param, value)?;
        }
        cctx.set(
            "stable input",
            ZSTD_cParameter::ZSTD_c_experimentalParam9,
            1,
        )?;
        if let Some(d) = dictionary {
            // SAFETY: the context is live; zstd copies `d` (its default
            // load method) and reads at most `d.len()` bytes of it.
            let code = unsafe {
                zstd_sys::ZSTD_CCtx_loadDictionary(cctx.ptr.as_ptr(), d.as_ptr().cast(), d.len())
            };
            check(code)?;
        }
        Ok(cctx)
    }

    fn set(&mut self, name: &'static str, param: ZSTD_cParameter, value: c_int) -> Result<()> {
        // SAFETY: the context is live; zstd validates the value.
        let code = unsafe { zstd_sys::ZSTD_CCtx_setParameter(self.ptr.as_ptr(), param, value) };
        check(code).map_err(|_| Error::Parameter {
            name,
            detail: zstd_safe::get_error_name(code),
        })
    }

    /// Declares the exact size of the next frame (`None`: unknown).
    pub(crate) fn pledge(&mut self, size: Option<u64>) -> Result<()> {
        // zstd's ZSTD_CONTENTSIZE_UNKNOWN is (0ULL - 1).
        let size = size.unwrap_or(u64::MAX);
        // SAFETY: the context is live; any size is accepted before a frame.
        check(unsafe { zstd_sys::ZSTD_CCtx_setPledgedSrcSize(self.ptr.as_ptr(), size) })
    }

    /// Compresses from `src[..size]`, starting at `*pos`, into `out`; with
    /// `end`, closes the frame once all of it is in. Returns the bytes
    /// written to `out` and zstd's count of bytes still to flush (0 with
    /// `end`: the frame is complete). zstd sets `*pos` to `size` once it
    /// holds fewer than a block's bytes back, which it compresses later
    /// from the same memory.
    ///
    /// # Safety
    /// From the first call of a frame to its end, every call passes the
    /// same `src`, a `size` no smaller than the last, and the `*pos` the
    /// last call left; `src[..size]` is readable; and the bytes zstd may
    /// still read are not changed: everything from the frame window's
    /// length (plus two blocks) before `*pos` onwards.
    pub(crate) unsafe fn compress(
        &mut self,
        out: &mut [u8],
        src: *const u8,
        size: usize,
        pos: &mut usize,
        end: bool,
    ) -> Result<(usize, usize)> {
        let mut input = zstd_sys::ZSTD_inBuffer {
            src: src.cast(),
            size,
            pos: *pos,
        };
        let mut output = zstd_sys::ZSTD_outBuffer {
            dst: out.as_mut_ptr().cast(),
            size: out.len(),
            pos: 0,
        };
        let directive = if end {
            ZSTD_EndDirective::ZSTD_e_end
        } else {
            ZSTD_EndDirective::ZSTD_e_continue
        };
        // SAFETY: the context is live; `output` covers `out`, which is
        // exclusively borrowed; the input's promises are the caller's.
        let code = unsafe {
            zstd_sys::ZSTD_compressStream2(self.ptr.as_ptr(), &mut output, &mut input, directive)
        };
        *pos = input.pos;
        check(code)?;
        Ok((output.pos, code))
    }

    /// Abandons the current frame, so the next call may start a new one
    /// from any memory; parameters and the dictionary are kept.
    pub(crate) fn reset_session(&mut self) {
        // SAFETY: the context is live. A session-only reset cannot fail.
        unsafe {
            zstd_sys::ZSTD_CCtx_reset(
                self.ptr.as_ptr(),
                zstd_sys::ZSTD_ResetDirective::ZSTD_reset_session_only,
            )
        };
    }
}

impl Drop for StableCCtx {
    fn drop(&mut self) {
        // SAFETY: the context was created by ZSTD_createCCtx and is freed
        // once, here.
        unsafe { zstd_sys::ZSTD_freeCCtx(self.ptr.as_ptr()) };
    }
}

/// zstd's numeric identity of a parameter `Params` sets, as `zstd-safe`
/// maps it; `None` for one it does not.
fn raw_parameter(p: CParameter) -> Option<(ZSTD_cParameter, c_int)> {
    use ZSTD_cParameter as P;
    Some(match p {
        CParameter::CompressionLevel(level) => (P::ZSTD_c_compressionLevel, level),
        CParameter::Strategy(s) => (P::ZSTD_c_strategy, s as c_int),
        CParameter::WindowLog(w) => (P::ZSTD_c_windowLog, c_int::try_from(w).ok()?),
        CParameter::EnableLongDistanceMatching(on) => {
            (P::ZSTD_c_enableLongDistanceMatching, c_int::from(on))
        }
        CParameter::ChecksumFlag(on) => (P::ZSTD_c_checksumFlag, c_int::from(on)),
        CParameter::NbWorkers(n) => (P::ZSTD_c_nbWorkers, c_int::try_from(n).ok()?),
        CParameter::ContentSizeFlag(on) => (P::ZSTD_c_contentSizeFlag, c_int::from(on)),
        CParameter::ChainLog(v) => (P::ZSTD_c_chainLog, c_int::try_from(v).ok()?),
        CParameter::HashLog(v) => (P::ZSTD_c_hashLog, c_int::try_from(v).ok()?),
        CParameter::SearchLog(v) => (P::ZSTD_c_searchLog, c_int::try_from(v).ok()?),
        CParameter::MinMatch(v) => (P::ZSTD_c_minMatch, c_int::try_from(v).ok()?),
        CParameter::TargetLength(v) => (P::ZSTD_c_targetLength, c_int::try_from(v).ok()?),
        CParameter::LdmHashLog(v) => (P::ZSTD_c_ldmHashLog, c_int::try_from(v).ok()?),
        CParameter::LdmMinMatch(v) => (P::ZSTD_c_ldmMinMatch, c_int::try_from(v).ok()?),
        CParameter::LdmBucketSizeLog(v) => (P::ZSTD_c_ldmBucketSizeLog, c_int::try_from(v).ok()?),
        CParameter::LdmHashRateLog(v) => (P::ZSTD_c_ldmHashRateLog, c_int::try_from(v).ok()?),
        // Worker-only parameters: stable input runs without workers, and
        // zstd keeps them unused.
        CParameter::JobSize(v) => (P::ZSTD_c_jobSize, c_int::try_from(v).ok()?),
        CParameter::OverlapSizeLog(v) => (P::ZSTD_c_overlapLog, c_int::try_from(v).ok()?),
        CParameter::RSyncable(on) => (P::ZSTD_c_experimentalParam1, c_int::from(on)),
        _ => return None,
    })
}

fn check(code: usize) -> Result<()> {
    if ffi::error_code(code) == ZSTD_ErrorCode::ZSTD_error_no_error {
        Ok(())
    } else {
        Err(Error::zstd(code))
    }
}
