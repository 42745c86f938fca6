//! A random-access reader that never holds the central directory: it reads
//! the records a piece at a time each time it walks them, so its memory
//! does not grow with the number of entries (what `unzip` needs for an
//! archive of 100,000 files).
//!
//! Opening walks the directory once, checking every record and that no
//! two entries share bytes; for that it keeps 24 bytes an entry
//! ([`super::directory::Span`]), only while it opens.

use std::io::{Read, Seek};

use super::archive::Source;
use super::directory::{Directory, Records, Span, check_spans};
use super::{EntryWalk, sealed};
use crate::entry::Entry;
use crate::error::Result;

/// Random access to a ZIP archive over `Read + Seek`, walking its central
/// directory instead of holding it ([`super::archive::ZipArchive`] holds
/// it, about 200 bytes an entry).
///
/// ```
/// # fn main() -> zipstream::Result<()> {
/// use std::io::Cursor;
/// use zipstream::{EntryOptions, WalkedArchive, ZipWriter};
///
/// let mut w = ZipWriter::new(Cursor::new(Vec::new()));
/// w.add_bytes(EntryOptions::file("a.txt"), b"hello")?;
/// let bytes = w.finish()?.into_inner();
///
/// let mut a = WalkedArchive::new(Cursor::new(bytes))?;
/// let mut names = Vec::new();
/// a.for_each(&mut |e| {
///     names.push(e.name.clone());
///     Ok(())
/// })?;
/// assert_eq!(names, ["a.txt"]);
/// # Ok(())
/// # }
/// ```
pub struct WalkedArchive<R: Read + Seek> {
    source: Source<R>,
    dir: Directory,
    /// Entries in the directory.
    len: u64,
}

impl<R: Read + Seek> WalkedArchive<R> {
    /// Finds the central directory and walks it once, checking its records
    /// and that no entries overlap, as [`super::archive::ZipArchive::new`]
    /// does.
    pub fn new(src: R) -> Result<WalkedArchive<R>> {
        let mut source = Source::new(src);
        let dir = Directory::find(&mut source)?;
        let mut spans = Vec::new();
        let mut records = Records::default();
        while records.more(&dir) {
            records.next_piece(&dir, &mut source, &mut |e, _| {
                spans.push(Span::of(spans.len(), &e));
                Ok(())
            })?;
        }
        records.finish(&dir)?;
        let len = spans.len() as u64;
        if let Err(clash) = check_spans(&mut spans, dir.start) {
            drop(spans);
            // Named by walking again (rare: only for a bad archive).
            let cd_start = dir.start;
            let mut a = WalkedArchive { source, dir, len };
            let mut i = 0usize;
            let mut named = None;
            a.for_each(&mut |e| {
                if i == clash.index {
                    named = Some(clash.error(e, cd_start));
                }
                i += 1;
                Ok(())
            })?;
            return Err(named.unwrap_or(crate::Error::State(
                "an overlapping entry is not found again in the directory",
            )));
        }
        Ok(WalkedArchive { source, dir, len })
    }

    /// How many entries the directory holds.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the archive holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The archive comment.
    pub fn comment(&self) -> &str {
        &self.dir.comment
    }

    /// Calls `f` with each entry in central directory order, reading the
    /// directory again; stops at the first error `f` returns.
    pub fn for_each(&mut self, f: &mut dyn FnMut(&Entry) -> Result<()>) -> Result<()> {
        self.walk(&mut |e, _| f(e))
    }
}

/// The walk reads a piece of the directory ([`Records::next_piece`]: at
/// most 256 KiB, so at most 5,698 records, about 1 MB as entries), then
/// visits those entries' data, then reads the next piece.
impl<R: Read + Seek> EntryWalk<R> for WalkedArchive<R> {
    fn walk(&mut self, f: &mut dyn FnMut(&Entry, &mut Source<R>) -> Result<()>) -> Result<()> {
        let mut records = Records::default();
        let mut batch = Vec::new();
        while records.more(&self.dir) {
            records.next_piece(&self.dir, &mut self.source, &mut |e, _| {
                batch.push(e);
                Ok(())
            })?;
            for e in batch.drain(..) {
                f(&e, &mut self.source)?;
            }
        }
        Ok(())
    }
}

impl<R: Read + Seek> sealed::Sealed for WalkedArchive<R> {}
