//! A random-access reader that never holds the central directory: it reads
//! the records a piece at a time each time it walks them, so its memory
//! does not grow with the number of entries (what `unzip` needs for an
//! archive of 100,000 files).
//!
//! Opening walks the directory once, checking every record and that no
//! two entries share bytes; for that it keeps 24 bytes an entry
//! (`super::directory::Span`), only while it opens.

use std::io::{Read, Seek};

use super::archive::Source;
use super::directory::{Directory, Records, Span, check_inside, check_spans};
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
            // Named by reading the records again (rare: only for a bad
            // archive), without the walk's own checks, which would name
            // another fault first.
            let mut i = 0usize;
            let mut named = None;
            let mut records = Records::default();
            while named.is_none() && records.more(&dir) {
                records.next_piece(&dir, &mut source, &mut |e, _| {
                    if i == clash.index {
                        named = Some(clash.error(&e, dir.start));
                    }
                    i += 1;
                    Ok(())
                })?;
            }
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

/// The walk reads a piece of the directory (`Records::next_piece`: at
/// most 256 KiB, so at most 5,698 records, about 1 MB as entries), then
/// visits those entries' data, then reads the next piece. The directory is
/// read from the file again, so each entry is checked again to lie before
/// it, and the count again at the end: a file changed since
/// [`WalkedArchive::new`] checked it cannot hand out an entry whose data
/// runs into the directory (or past the end of the offsets).
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
                check_inside(&e, self.dir.start)?;
                f(&e, &mut self.source)?;
            }
        }
        records.finish(&self.dir)
    }
}

impl<R: Read + Seek> sealed::Sealed for WalkedArchive<R> {}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::io::{Cursor, Read, Seek, SeekFrom};
    use std::rc::Rc;

    use super::*;
    use crate::{EntryOptions, Error, ZipWriter};

    /// An archive's bytes that the test can change while a reader has them
    /// open.
    struct Shared(Rc<RefCell<Vec<u8>>>, u64);

    impl Read for Shared {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let bytes = self.0.borrow();
            let mut c = Cursor::new(&bytes[..]);
            c.set_position(self.1);
            let n = c.read(buf)?;
            self.1 += n as u64;
            Ok(n)
        }
    }

    impl Seek for Shared {
        fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
            let len = self.0.borrow().len() as u64;
            self.1 = match to {
                SeekFrom::Start(n) => n,
                SeekFrom::End(d) => len.saturating_add_signed(d),
                SeekFrom::Current(d) => self.1.saturating_add_signed(d),
            };
            Ok(self.1)
        }
    }

    /// The walk reads the directory from the file again: a record changed
    /// after opening to claim more data than lies before the directory is
    /// refused as opening would refuse it, before its data is read.
    #[test]
    fn a_directory_changed_after_opening_is_checked_again() {
        let mut w = ZipWriter::new(Cursor::new(Vec::new()));
        w.add_bytes(EntryOptions::file("a.txt"), b"hello, hello, hello")
            .unwrap();
        let bytes = w.finish().unwrap().into_inner();
        let cd = bytes
            .windows(4)
            .position(|b| b == b"PK\x01\x02")
            .expect("a central record");
        let shared = Rc::new(RefCell::new(bytes));
        let mut a = WalkedArchive::new(Shared(Rc::clone(&shared), 0)).unwrap();
        let mut seen = 0;
        a.walk(&mut |_, _| {
            seen += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, 1);
        // The record's compressed size (offset 20) now runs far past the
        // directory.
        shared.borrow_mut()[cd + 20..cd + 24].copy_from_slice(&u32::MAX.to_le_bytes());
        let mut opened = false;
        let err = a
            .walk(&mut |e, s| {
                opened = s.open(e, None).is_ok();
                Ok(())
            })
            .unwrap_err();
        assert!(!opened, "the changed entry was handed out");
        assert!(
            matches!(&err, Error::Malformed { what, .. } if what.contains("run past the start of the central directory")),
            "{err}"
        );
    }
}
