//! What Info-ZIP's unzip prints while it extracts: `Archive:`, then
//! `   creating:`, `  inflating:`, ` extracting:` and `    linking:` lines
//! as each thing is put on disk, and the links made at the end under
//! `finishing deferred symbolic links:`. Names carry the `-d` directory as
//! it was written, as Info-ZIP's do.
//!
//! ```
//! use std::io::{self, Write};
//! use std::sync::{Arc, Mutex};
//! use zipstream::extract::lines::Lines;
//! use zipstream::{EntryOptions, ExtractOptions, ZipArchive, ZipWriter, extract_archive};
//!
//! /// A buffer the test reads once the extraction is over.
//! #[derive(Clone, Default)]
//! struct Shared(Arc<Mutex<Vec<u8>>>);
//! impl Write for Shared {
//!     fn write(&mut self, b: &[u8]) -> io::Result<usize> {
//!         self.0.lock().unwrap().write(b)
//!     }
//!     fn flush(&mut self) -> io::Result<()> {
//!         Ok(())
//!     }
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut zip = ZipWriter::new(Vec::new());
//! zip.add_directory(EntryOptions::directory("d"))?;
//! zip.add_bytes(EntryOptions::file("d/a.txt"), b"hello")?;
//! let mut archive = ZipArchive::new(io::Cursor::new(zip.finish()?))?;
//!
//! let dest = tempfile::tempdir()?;
//! let shown = Shared::default();
//! let (lines, hook) = Lines::start("a.zip", dest.path(), shown.clone())?;
//! let opts = ExtractOptions { on_placed: Some(hook), ..ExtractOptions::default() };
//! extract_archive(&mut archive, dest.path(), &opts)?;
//! drop((lines, opts));
//! let text = String::from_utf8(shown.0.lock().unwrap().clone())?;
//! let dir = dest.path().display();
//! assert_eq!(
//!     text,
//!     format!("Archive:  a.zip\n   creating: {dir}/d/\n extracting: {dir}/d/a.txt  \n")
//! );
//! # Ok(())
//! # }
//! ```

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::listing::printable_name;
use crate::{Placed, PlacedHook};

/// The lines of one extraction, written to `W` through one buffer
/// (flushed when the last holder of it is dropped).
pub struct Lines<W: Write> {
    out: Arc<Mutex<Progress<W>>>,
}

struct Progress<W: Write> {
    out: BufWriter<W>,
    /// What goes before each name (see [`dir_prefix`]).
    prefix: String,
    /// Whether `finishing deferred symbolic links:` was printed.
    finishing: bool,
}

impl<W: Write + Send + 'static> Lines<W> {
    /// Writes `Archive:  NAME` to `out` and returns the hook that writes
    /// the rest, for [`ExtractOptions::on_placed`](crate::ExtractOptions);
    /// `dir` is the `-d` destination as the user wrote it, or the empty
    /// path without one.
    pub fn start(archive: &str, dir: &Path, out: W) -> io::Result<(Lines<W>, PlacedHook)> {
        let prefix = dir_prefix(dir);
        let mut out = BufWriter::new(out);
        writeln!(out, "Archive:  {archive}")?;
        let shared = Arc::new(Mutex::new(Progress {
            out,
            prefix,
            finishing: false,
        }));
        let hook_side = Arc::clone(&shared);
        let hook = PlacedHook::new(move |p| {
            if let Ok(mut g) = hook_side.lock() {
                // A closed output stops the lines, not the extraction.
                let _ = g.line(p);
            }
        });
        Ok((Lines { out: shared }, hook))
    }

    /// Writes `line` among the extraction lines, and writes them out (a
    /// warning about a name typed at a prompt, say).
    pub fn say(&self, line: &str) {
        if let Ok(mut g) = self.out.lock() {
            let _ = writeln!(g.out, "{line}");
            let _ = g.out.flush();
        }
    }

    /// Writes out what is buffered (before an error is printed, say).
    pub fn flush(&self) {
        if let Ok(mut g) = self.out.lock() {
            let _ = g.out.flush();
        }
    }
}

/// What goes before a file's name in Info-ZIP unzip's lines and questions:
/// the `-d` destination `dir` as the user wrote it, with a `/` unless it
/// ends with one (`-d .` shows `./a.txt`, `-d out//` shows `out//a.txt`),
/// and nothing for the empty path, which stands for no `-d` at all.
pub(super) fn dir_prefix(dir: &Path) -> String {
    let dir = dir.display().to_string();
    if dir.is_empty() || dir.ends_with('/') {
        dir
    } else {
        format!("{dir}/")
    }
}

/// Another handle on the same lines (one that asks a question can flush
/// them first); each flushes them when dropped.
impl<W: Write> Clone for Lines<W> {
    fn clone(&self) -> Self {
        Lines {
            out: Arc::clone(&self.out),
        }
    }
}

impl<W: Write> Drop for Lines<W> {
    fn drop(&mut self) {
        if let Ok(mut g) = self.out.lock() {
            let _ = g.out.flush();
        }
    }
}

impl<W: Write> Progress<W> {
    fn line(&mut self, p: Placed<'_>) -> io::Result<()> {
        let shown =
            |rel: &Path| printable_name(&format!("{}{}", self.prefix, rel.display())).into_owned();
        match p {
            Placed::Directory(rel) => writeln!(self.out, "   creating: {}/", shown(rel)),
            Placed::File(rel, method) => {
                let verb = if matches!(method, 8 | 9) {
                    "  inflating"
                } else {
                    " extracting"
                };
                writeln!(self.out, "{verb}: {}  ", pad(&shown(rel), 22))
            }
            // A link's target is the archive's data, as hostile as its
            // names: shown the same way.
            Placed::LinkDeferred(rel, target) => {
                writeln!(
                    self.out,
                    "    linking: {}  -> {} ",
                    pad(&shown(rel), 22),
                    printable_name(target)
                )
            }
            Placed::LinkInTheWay(rel) => {
                writeln!(self.out, "{} exists and is a symbolic link.", shown(rel))
            }
            Placed::LinkMade(rel, target) => {
                if !self.finishing {
                    self.finishing = true;
                    writeln!(self.out, "finishing deferred symbolic links:")?;
                }
                writeln!(
                    self.out,
                    "  {} -> {}",
                    pad(&shown(rel), 22),
                    printable_name(target)
                )
            }
        }
    }
}

/// `name` with spaces after it up to `width` bytes, as C's `%-22s` pads
/// Info-ZIP's columns: bytes, not characters, so a name in UTF-8 gets
/// fewer spaces than its characters would.
pub fn pad(name: &str, width: usize) -> String {
    format!("{name}{}", " ".repeat(width.saturating_sub(name.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Info-ZIP unzip 6.00's names for `a.txt` under each `-d` (checked
    /// beside it in perfkit's `extraction_lines_match_info_zip`).
    #[test]
    fn the_prefix_is_the_destination_as_written_with_one_slash_added_at_most() {
        for (dir, shown) in [
            ("", ""),
            (".", "./"),
            ("./", "./"),
            ("out", "out/"),
            ("out/", "out/"),
            ("out//", "out//"),
            ("././out", "././out/"),
            ("/tmp/x", "/tmp/x/"),
        ] {
            assert_eq!(dir_prefix(Path::new(dir)), shown, "-d {dir:?}");
        }
    }
}
