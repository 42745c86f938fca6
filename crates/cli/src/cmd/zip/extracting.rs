//! What `unzip` prints while it extracts, as Info-ZIP's unzip prints it:
//! `Archive:`, then `   creating:`, `  inflating:`, ` extracting:` and
//! `    linking:` lines as each thing is put on disk, and the links made
//! at the end under `finishing deferred symbolic links:`. Names carry the
//! `-d` directory as it was written, as Info-ZIP's do.

use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};

use zipstream::{Placed, PlacedHook};

/// The lines of one extraction, written to stdout through one buffer
/// (flushed when the last holder of it is dropped).
pub struct Lines {
    out: Arc<Mutex<Progress>>,
}

struct Progress {
    out: BufWriter<io::Stdout>,
    /// The `-d` directory as written, with a `/`, or nothing for `.`.
    prefix: String,
    /// Whether `finishing deferred symbolic links:` was printed.
    finishing: bool,
}

impl Lines {
    /// Prints `Archive:  NAME` and returns the hook that prints the rest;
    /// `dir` is the `-d` destination.
    pub fn start(archive: &str, dir: &Path) -> io::Result<(Lines, PlacedHook)> {
        let dir = dir.display().to_string();
        let prefix = if dir == "." {
            String::new()
        } else {
            format!("{}/", dir.trim_end_matches('/'))
        };
        let mut out = BufWriter::new(io::stdout());
        writeln!(out, "Archive:  {archive}")?;
        let shared = Arc::new(Mutex::new(Progress {
            out,
            prefix,
            finishing: false,
        }));
        let hook_side = Arc::clone(&shared);
        let hook = PlacedHook::new(move |p| {
            if let Ok(mut g) = hook_side.lock() {
                // A closed stdout stops the lines, not the extraction.
                let _ = g.line(p);
            }
        });
        Ok((Lines { out: shared }, hook))
    }

    /// Writes out what is buffered (before an error is printed, say).
    pub fn flush(&self) {
        if let Ok(mut g) = self.out.lock() {
            let _ = g.out.flush();
        }
    }
}

impl Drop for Lines {
    fn drop(&mut self) {
        self.flush();
    }
}

impl Progress {
    fn line(&mut self, p: Placed<'_>) -> io::Result<()> {
        let shown = |rel: &Path| {
            perfkit::printable::name(&format!("{}{}", self.prefix, rel.display())).into_owned()
        };
        match p {
            Placed::Directory(rel) => writeln!(self.out, "   creating: {}/", shown(rel)),
            Placed::File(rel, method) => {
                let verb = if matches!(method, 8 | 9) {
                    "  inflating"
                } else {
                    " extracting"
                };
                writeln!(self.out, "{verb}: {:<22}  ", shown(rel))
            }
            Placed::LinkDeferred(rel, target) => {
                writeln!(self.out, "    linking: {:<22}  -> {target} ", shown(rel))
            }
            Placed::LinkMade(rel, target) => {
                if !self.finishing {
                    self.finishing = true;
                    writeln!(self.out, "finishing deferred symbolic links:")?;
                }
                writeln!(self.out, "  {:<22} -> {target}", shown(rel))
            }
        }
    }
}
