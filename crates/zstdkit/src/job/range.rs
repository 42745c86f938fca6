//! A slice of a seekable file's data (a zstd-like tool's `--range
//! START..END`), read through its seek table: only the frames that hold it
//! are decoded, and the frame it ends in is decoded to its end and checked
//! against the table before the copy counts as done.
//!
//! ```
//! use std::io::{Cursor, Write};
//! use zstdkit::job::range;
//! use zstdkit::seekable::{SeekableReader, SeekableWriter};
//!
//! let data = b"0123456789".repeat(1000);
//! let mut w = SeekableWriter::new(Vec::new(), zstdkit::Recipe::Fast.params(), 4096, true)?;
//! w.write_all(&data)?;
//! let file = w.finish()?;
//! let mut reader = SeekableReader::new(Cursor::new(file))?;
//! let mut out = Vec::new();
//! assert_eq!(range::copy(&mut reader, (5000, 5012), &mut out)?, 12);
//! assert_eq!(out, &data[5000..5012]);
//! assert!(matches!(range::copy(&mut reader, (0, 10_001), &mut out), Err(range::RangeError::PastEnd { .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Read, Seek, Write};

use crate::seekable::SeekableReader;

/// Why a range could not be copied.
#[derive(Debug, thiserror::Error)]
pub enum RangeError {
    /// The range ends past the data's end.
    #[error("the range ends at {end}, past the data's end ({len} bytes)")]
    PastEnd {
        /// Where the range ends.
        end: u64,
        /// The data's length.
        len: u64,
    },
    /// Seeking to the range's first frame failed.
    #[error("seeking")]
    Seek(#[source] io::Error),
    /// The frames holding the range did not read or decode: said as the
    /// reader said it (the error its `io::Error` carries).
    #[error("{}", .0.get_ref().map_or_else(|| .0.to_string(), |inner| inner.to_string()))]
    Data(io::Error),
    /// Writing the output failed.
    #[error("writing output")]
    Write(#[source] io::Error),
    /// The last frame did not decode to its end as the table says.
    #[error(transparent)]
    Verify(crate::Error),
}

/// Whether a range ending at `end` lies within `reader`'s data: a caller
/// asks before it creates an output, [`copy`] asks again.
pub fn within<R: Read + Seek>(reader: &SeekableReader<R>, end: u64) -> Result<(), RangeError> {
    if end > reader.len() {
        return Err(RangeError::PastEnd {
            end,
            len: reader.len(),
        });
    }
    Ok(())
}

/// Copies bytes `start..end` of `reader`'s data into `out`, then checks
/// the frame the range ends in against the seek table. `out` has had the
/// bytes before the check: a caller writing a file keeps it only on `Ok`.
/// Returns the bytes written.
pub fn copy<R: Read + Seek>(
    reader: &mut SeekableReader<R>,
    (start, end): (u64, u64),
    out: &mut dyn Write,
) -> Result<u64, RangeError> {
    within(reader, end)?;
    reader
        .seek(io::SeekFrom::Start(start))
        .map_err(RangeError::Seek)?;
    let mut part = reader.by_ref().take(end.saturating_sub(start));
    // The reader's errors come wrapped in an io::Error around its own;
    // the writer's are plain ones.
    let n = io::copy(&mut part, out).map_err(|e| match e.get_ref() {
        Some(_) => RangeError::Data(e),
        None => RangeError::Write(e),
    })?;
    reader.verify().map_err(RangeError::Verify)?;
    Ok(n)
}
