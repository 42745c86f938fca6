//! The two calls into zstd's C API that `zstd-safe` does not wrap. Both are
//! pure functions of their arguments.

use zstd_safe::zstd_sys::{self, ZSTD_ErrorCode, ZSTD_FrameHeader, ZSTD_FrameType_e};

/// What the start of a frame says, as zstd's own header parser reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameHeader {
    /// A zstd frame header, complete.
    Frame {
        /// The window the frame needs, in bytes (for a single-segment frame,
        /// its content size).
        window_size: u64,
        /// The declared content size, if any.
        content_size: Option<u64>,
    },
    /// A skippable frame: no window, nothing to decode.
    Skippable,
    /// The header is longer than the bytes given: `need` bytes, counted from
    /// the frame's start, are enough to read it.
    Incomplete {
        /// Bytes needed from the frame's start.
        need: usize,
    },
    /// Not a header zstd's parser accepts; decoding reports why.
    Invalid,
}

/// Reads the frame header at the start of `src` without consuming anything.
pub(crate) fn frame_header(src: &[u8]) -> FrameHeader {
    let mut h = ZSTD_FrameHeader {
        frameContentSize: 0,
        windowSize: 0,
        blockSizeMax: 0,
        frameType: ZSTD_FrameType_e::ZSTD_frame,
        headerSize: 0,
        dictID: 0,
        checksumFlag: 0,
        _reserved1: 0,
        _reserved2: 0,
    };
    // SAFETY: `h` is a valid, initialised header struct that zstd may
    // overwrite (it only stores 0 or 1 into the enum field); `src` is a live
    // slice and zstd reads at most `src.len()` bytes of it.
    let code = unsafe { zstd_sys::ZSTD_getFrameHeader(&mut h, src.as_ptr().cast(), src.len()) };
    if error_code(code) != ZSTD_ErrorCode::ZSTD_error_no_error {
        return FrameHeader::Invalid;
    }
    if code > 0 {
        return FrameHeader::Incomplete { need: code };
    }
    match h.frameType {
        ZSTD_FrameType_e::ZSTD_skippableFrame => FrameHeader::Skippable,
        ZSTD_FrameType_e::ZSTD_frame => FrameHeader::Frame {
            window_size: h.windowSize,
            // zstd's ZSTD_CONTENTSIZE_UNKNOWN is (0ULL - 1).
            content_size: (h.frameContentSize != u64::MAX).then_some(h.frameContentSize),
        },
    }
}

/// The error enum behind one of zstd's numeric result codes.
pub(crate) fn error_code(code: usize) -> ZSTD_ErrorCode {
    // SAFETY: ZSTD_getErrorCode is a pure function of an integer; it reads no
    // memory and accepts any value.
    unsafe { zstd_sys::ZSTD_getErrorCode(code) }
}

/// The match finder of zstd's own parameters for `level` on `src_size`
/// bytes after a `dict_size`-byte dictionary or prefix
/// (`ZSTD_getCParams`): its chain log and its strategy (1 fast … 9
/// btultra2).
pub(crate) fn level_match_finder(level: i32, src_size: u64, dict_size: u64) -> (u32, u32) {
    // SAFETY: ZSTD_getCParams is a pure function of its integer arguments;
    // it reads no memory and returns its struct by value.
    let p = unsafe {
        zstd_sys::ZSTD_getCParams(
            level,
            src_size,
            usize::try_from(dict_size).unwrap_or(usize::MAX),
        )
    };
    (p.chainLog, p.strategy as u32)
}

/// zstd's own parameters for `level` on `src_size` bytes (`None`:
/// unknown) after a `dict_size`-byte dictionary (`ZSTD_getCParams`), in
/// zstd's order: window, chain, hash and search logs, minimum match,
/// target length, strategy (1 fast … 9 btultra2).
pub(crate) fn level_params(level: i32, src_size: Option<u64>, dict_size: u64) -> [u32; 7] {
    // zstd's ZSTD_CONTENTSIZE_UNKNOWN is (0ULL - 1).
    let size = src_size.unwrap_or(u64::MAX);
    // SAFETY: ZSTD_getCParams is a pure function of its integer arguments;
    // it reads no memory and returns its struct by value.
    let p = unsafe {
        zstd_sys::ZSTD_getCParams(
            level,
            size,
            usize::try_from(dict_size).unwrap_or(usize::MAX),
        )
    };
    [
        p.windowLog,
        p.chainLog,
        p.hashLog,
        p.searchLog,
        p.minMatch,
        p.targetLength,
        p.strategy as u32,
    ]
}
