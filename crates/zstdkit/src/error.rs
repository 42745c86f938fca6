//! The one error type of zstdkit, and the mapping from zstd's numeric error
//! codes to variants a caller can act on.

use zstd_safe::zstd_sys::ZSTD_ErrorCode;

use crate::ffi::error_code;

/// Everything that can go wrong in zstdkit.
///
/// Decoding errors carry `offset`: how many input bytes had been consumed
/// when the problem was detected, so a message can point into the input.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input does not start with a zstd (or skippable) frame header.
    #[error("not zstd data: unknown frame header at byte {offset}")]
    UnknownFormat {
        /// Input position of the unrecognised header.
        offset: u64,
    },
    /// A seekable file's seek table is absent, cut short or lies.
    #[error("seek table at byte {offset}: {why}")]
    SeekTable {
        /// Where the table starts in the file (0 when not found).
        offset: u64,
        /// What is wrong.
        why: String,
    },
    /// The input is a zstd frame but its contents are invalid.
    #[error("corrupt zstd data near byte {offset}: {detail}")]
    Corrupt {
        /// Input position where decoding stopped.
        offset: u64,
        /// zstd's own description of the problem.
        detail: &'static str,
    },
    /// The frame decoded, but its content checksum does not match.
    #[error("checksum mismatch in frame ending near byte {offset}")]
    Checksum {
        /// Input position where the mismatch was detected.
        offset: u64,
    },
    /// The input ended inside a frame.
    #[error("truncated zstd data: input ends inside a frame after {offset} bytes")]
    Truncated {
        /// Total bytes consumed before the input ran out.
        offset: u64,
    },
    /// The frame was compressed with a dictionary that was not supplied, or
    /// with a different one.
    #[error("dictionary mismatch near byte {offset}: the frame needs a different dictionary")]
    WrongDictionary {
        /// Input position where the mismatch was detected.
        offset: u64,
    },
    /// The frame's window is larger than the configured memory limit
    /// ([`Decompressor::set_memory_limit`](crate::Decompressor::set_memory_limit)).
    #[error(
        "frame window{} exceeds the memory limit of {limit} bytes at byte {offset}",
        .window.map(|w| format!(" of {w} bytes")).unwrap_or_default()
    )]
    WindowTooLarge {
        /// Input position of the frame header.
        offset: u64,
        /// The window the frame asks for, in bytes; `None` when it is beyond
        /// anything zstd decodes (over 2 GiB).
        window: Option<u64>,
        /// The configured memory limit, in bytes.
        limit: u64,
    },
    /// A compression parameter was rejected by zstd.
    #[error("invalid zstd parameter {name}: {detail}")]
    Parameter {
        /// Which parameter.
        name: &'static str,
        /// zstd's description.
        detail: &'static str,
    },
    /// A `--zstd=` list of advanced parameters that zstd would not read.
    #[error(
        "invalid advanced parameters '{text}' (expected name=value pairs such as \
         wlog=23,clog=23,hlog=22,slog=6,mml=3,tlen=48,strat=6)"
    )]
    Tuning {
        /// The list as written.
        text: String,
    },
    /// A recipe or strategy name that does not exist.
    #[error("unknown {kind} '{name}' (expected one of: {expected})")]
    UnknownName {
        /// "recipe" or "strategy".
        kind: &'static str,
        /// What was given.
        name: String,
        /// The accepted names, comma separated.
        expected: String,
    },
    /// Dictionary training failed (too few or too small samples, usually).
    #[error(
        "dictionary training failed on {samples} sample(s), {bytes} bytes in all: {why} \
         (zstd's trainer wants many samples, one file each, together about 100 times \
         the dictionary's size)"
    )]
    Train {
        /// zstd's reason.
        why: &'static str,
        /// How many samples were given.
        samples: usize,
        /// Their total size.
        bytes: usize,
    },
    /// A stream that ends before its first frame's magic number: empty,
    /// or all of it skipped as nothing.
    #[error("truncated zstd data: the input holds no frame")]
    NoFrame,
    /// Any other error reported by zstd.
    #[error("zstd error: {0}")]
    Zstd(&'static str),
    /// A frame of a multi-frame input failed to decode: which one (counted
    /// from 0, skippable frames included) and where it starts, around
    /// what went wrong in it (whose offsets count from the frame's start).
    #[error("frame {index} at byte {offset}: {source}")]
    InFrame {
        /// The frame's number in the input.
        index: u64,
        /// Where it starts in the input.
        offset: u64,
        /// What went wrong.
        source: Box<Error>,
    },
    /// An I/O error from the underlying reader or writer.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// What can go wrong in a [`Job`](crate::job::Job), by where it happened:
/// a side's I/O (its own error, whole, so its kind still tells a broken
/// pipe), or the coding itself.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// The read-ahead thread could not be started.
    #[error("starting the input reader")]
    ReaderThread(#[source] std::io::Error),
    /// The write-behind thread could not be started.
    #[error("starting the output writer")]
    WriterThread(#[source] std::io::Error),
    /// Reading the input failed.
    #[error("reading input")]
    Input(#[source] std::io::Error),
    /// Writing the output failed.
    #[error("writing output")]
    Output(#[source] std::io::Error),
    /// Reading or writing failed while several threads decoded, which
    /// share one error for both sides.
    #[error("reading input or writing output")]
    InputOrOutput(#[source] std::io::Error),
    /// The input starts as gzip but does not decode as gzip (reading it
    /// failing included: gzip's decoder does the reading).
    #[error("not a valid gzip stream")]
    Gzip(#[source] std::io::Error),
    /// The input to a patch is larger than a patch takes.
    #[error(
        "the input is larger than {limit} bytes, the most a patch takes (zstd's largest window)"
    )]
    PatchTooLarge {
        /// The limit, [`crate::patch::MAX_SIZE`].
        limit: u64,
    },
    /// A patch did not decode against the reference given.
    #[error("the patch does not decode against this reference")]
    Patch(#[source] Error),
    /// zstd refused the parameters or the data (the reader's errors too,
    /// when they came through the decoder, as [`Error::Io`]).
    #[error(transparent)]
    Codec(#[from] Error),
}

/// Shorthand for `Result<T, zstdkit::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The hint zstd's file tool gives with a refused window (this error,
    /// or it inside a frame of several) that a larger memory limit
    /// admits: `allow it with --memory=NMiB or --long=LOG`, the flags that
    /// would decode it; `None` for any other error and for a window beyond
    /// [`MEMORY_LIMIT_RANGE`](crate::context::MEMORY_LIMIT_RANGE).
    ///
    /// ```
    /// let refused = zstdkit::Error::WindowTooLarge { offset: 0, window: Some(3 << 20), limit: 1 << 20 };
    /// assert_eq!(refused.window_hint().as_deref(), Some("allow it with --memory=3MiB or --long=22"));
    /// ```
    pub fn window_hint(&self) -> Option<String> {
        let window = match self {
            Error::WindowTooLarge { window, .. } => *window,
            Error::InFrame { source, .. } => match **source {
                Error::WindowTooLarge { window, .. } => window,
                _ => None,
            },
            _ => None,
        }
        .filter(|w| crate::context::MEMORY_LIMIT_RANGE.contains(w))?;
        let mib = window.div_ceil(1 << 20);
        let log = 64 - (window - 1).leading_zeros();
        Some(format!("allow it with --memory={mib}MiB or --long={log}"))
    }

    /// Classifies a zstd error code returned while decoding, `offset` bytes
    /// into the input.
    pub(crate) fn decoding(code: usize, offset: u64, memory_limit: u64) -> Error {
        let detail = zstd_safe::get_error_name(code);
        match error_code(code) {
            ZSTD_ErrorCode::ZSTD_error_prefix_unknown => Error::UnknownFormat { offset },
            ZSTD_ErrorCode::ZSTD_error_checksum_wrong => Error::Checksum { offset },
            // Frames within the limit were admitted before zstd saw them,
            // so zstd only reports windows beyond the 2 GiB it supports.
            ZSTD_ErrorCode::ZSTD_error_frameParameter_windowTooLarge => Error::WindowTooLarge {
                offset,
                window: None,
                limit: memory_limit,
            },
            ZSTD_ErrorCode::ZSTD_error_dictionary_wrong
            | ZSTD_ErrorCode::ZSTD_error_dictionary_corrupted => Error::WrongDictionary { offset },
            ZSTD_ErrorCode::ZSTD_error_srcSize_wrong => Error::Truncated { offset },
            ZSTD_ErrorCode::ZSTD_error_memory_allocation => Error::Zstd(detail),
            _ => Error::Corrupt { offset, detail },
        }
    }

    /// Wraps a zstd error code returned while compressing or configuring.
    pub(crate) fn zstd(code: usize) -> Error {
        Error::Zstd(zstd_safe::get_error_name(code))
    }

    /// Recovers a zstdkit error that travelled through `std::io` (the
    /// `Read`/`Write` adapters wrap errors that way), or wraps the I/O error.
    pub fn from_io(err: std::io::Error) -> Error {
        match err.downcast::<Error>() {
            Ok(ours) => ours,
            Err(err) => Error::Io(err),
        }
    }

    /// Wraps this error in a `std::io::Error` of the closest kind, so that
    /// [`Error::from_io`] can take it back out.
    pub fn into_io(self) -> std::io::Error {
        match self {
            Error::Io(e) => e,
            Error::Truncated { .. } => std::io::Error::new(std::io::ErrorKind::UnexpectedEof, self),
            other => std::io::Error::new(std::io::ErrorKind::InvalidData, other),
        }
    }
}
