//! zipstream: a streaming ZIP writer and reader, sync and async, in constant
//! memory — stored and deflate entries (zlib-rs), automatic ZIP64, WinZip AES
//! (AE-2 written, AE-1/AE-2 read), and safe extraction.
//!
//! The writers share one format core ([`ZipWriter`] over `std::io::Write`,
//! [`AsyncZipWriter`] over tokio's `AsyncWrite`), so the same calls give the
//! same bytes. Non-seekable sinks get data descriptors; seekable sinks get
//! patched local headers.
//!
//! Modules: [`mod@write`] (format core, sync and async writers), [`parallel`]
//! (worker-thread compression, pigz-style blocks), [`read`] (streaming and
//! random-access readers sharing one sans-I/O decoder; [`ZipArchive`] holds
//! the central directory, [`WalkedArchive`] walks it in bounded memory
//! however many entries there are), [`extract`] (safe
//! extraction), [`crypto`] (WinZip AES), [`mod@format`] (records and fields),
//! [`pattern`] (Info-ZIP's wildcards), [`update`] (Info-ZIP's update
//! planning: `zip -u`, `-f`, `-d`), [`listing`] (Info-ZIP's listings:
//! `unzip -l`, `-v`, zipinfo), [`announce`] (Info-ZIP zip's
//! `adding:` lines and their `-v` and `-d?` forms), [`names`] (entry names
//! from paths, `zip -k`'s DOS names), [`line_ends`] (`zip -l`, `-ll`), and
//! with feature `s3`, `object` (an
//! async sink that uploads the archive to S3-compatible object storage by
//! multipart upload).
//!
//! **Async budget.** The async writer and reader do their CPU work inline in
//! the calling task — there is no hop to a blocking pool. One call costs
//! about the time to deflate the buffer it is given (≈ 1 ms per 64 KiB at
//! level 6 on realistic data), so a caller with a latency budget bounds its
//! write size; `add_reader` feeds 64 KiB at a time. Use the sync
//! [`ParallelZipWriter`] under `spawn_blocking` for large CPU-bound archives.
//!
//! **Limits.** Legacy ZipCrypto is read (with the archive's password)
//! but never written; PKWARE strong encryption is refused (typed error). The streaming reader sees only local headers, which carry
//! no Unix mode: streamed extraction applies no permission bits, and learns
//! which entries are symlinks only from the central directory at the end
//! (it then turns those files into links, confined as usual).
//!
//! ```
//! use zipstream::{EntryOptions, ZipArchive, ZipWriter};
//!
//! # fn main() -> zipstream::Result<()> {
//! let mut zip = ZipWriter::new(Vec::new());
//! zip.add_bytes(EntryOptions::file("hello.txt").mtime(1_700_000_000), b"hello, world")?;
//! zip.add_directory(EntryOptions::directory("docs"))?;
//! let bytes = zip.finish()?;
//!
//! let mut archive = ZipArchive::new(std::io::Cursor::new(bytes))?;
//! assert_eq!(archive.entries()[0].name, "hello.txt");
//! assert_eq!(archive.read_to_vec(0, None)?, b"hello, world");
//! # Ok(())
//! # }
//! ```

// `unsafe` only in `codec::piece`: zlib's C API, for the block boundaries
// flate2 does not expose (issue 64).
#![deny(unsafe_code)]

pub mod announce;
pub(crate) mod codec;
pub mod crypto;
pub mod entry;
pub mod error;
pub mod extract;
pub mod format;
#[doc(hidden)]
pub mod fuzzing;
pub mod gather;
pub mod line_ends;
pub mod listing;
pub mod names;
#[cfg(feature = "s3")]
pub mod object;
pub mod parallel;
pub mod pattern;
pub mod read;
pub mod update;
pub mod write;

pub use crypto::AesStrength;
pub use entry::{Entry, EntryKind, EntryOptions, Method};
pub use error::{Error, Result};
pub use extract::{
    Existing, ExistsHook, ExtractOptions, ExtractReport, NameHook, Placed, PlacedHook,
    TemporaryHook, extract_archive, extract_archive_selected, extract_stream,
    extract_stream_selected, read_archive_data, read_stream_data,
};
pub use parallel::{ParallelOptions, ParallelZipWriter};
pub use read::EntryWalk;
pub use read::archive::{CopySource, EntryReader, Source, ZipArchive};
#[cfg(feature = "tokio")]
pub use read::stream::AsyncZipStreamReader;
pub use read::stream::ZipStreamReader;
pub use read::walked::WalkedArchive;
pub use write::Written;
#[cfg(feature = "tokio")]
pub use write::nonblocking::AsyncZipWriter;
pub use write::sync::ZipWriter;
