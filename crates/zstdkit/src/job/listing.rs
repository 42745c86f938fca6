//! zstd's `--list` (`-l`) and `-lv` layout: what the frames of `.zst`
//! files hold, one row per file and a total when there are several, from
//! [`Summary`] (headers and block headers only, nothing decompressed). A
//! seekable file gets a line of what its seek table says.
//!
//! A [`Listing`] writes to any writer; which files, and what to say of one
//! that cannot be read, are the caller's.
//!
//! ```
//! use zstdkit::frame::Summary;
//! use zstdkit::job::listing::Listing;
//!
//! let frame = zstdkit::compress(&b"a line of text\n".repeat(100), zstdkit::Recipe::Text)?;
//! let summary = Summary::read(&frame[..])?;
//! let mut listing = Listing::new(Vec::new(), false)?;
//! listing.file("a.zst", &summary, None)?;
//! let text = String::from_utf8(listing.finish()?)?;
//! let mut lines = text.lines();
//! assert_eq!(lines.next(), Some("Frames  Skips  Compressed  Uncompressed  Ratio  Check  Filename"));
//! assert!(lines.next().is_some_and(|row| row.contains("1.46 KiB") && row.ends_with("a.zst")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Write};

use crate::frame::Summary;
use crate::seekable::SeekTable;

/// A size as zstd's `--list` writes it: binary units, three significant
/// digits (`72.3 KiB`, `575 KiB`, `1.12 MiB`), bytes as `34   B`.
pub fn human(size: u64) -> String {
    const UNITS: [(u32, &str); 6] = [
        (60, "EiB"),
        (50, "PiB"),
        (40, "TiB"),
        (30, "GiB"),
        (20, "MiB"),
        (10, "KiB"),
    ];
    for (shift, unit) in UNITS {
        if size >= 1u64 << shift {
            let v = size as f64 / (1u64 << shift) as f64;
            let digits = if v >= 100.0 {
                0
            } else if v >= 10.0 {
                1
            } else {
                2
            };
            return format!("{v:.digits$} {unit}");
        }
    }
    format!("{size}   B")
}

fn row(
    frames: u64,
    skips: u64,
    compressed: u64,
    decompressed: Option<u64>,
    check: &str,
    name: &str,
) -> String {
    let (unc, ratio) = match decompressed {
        Some(d) if compressed > 0 => (human(d), format!("{:5.3}", d as f64 / compressed as f64)),
        _ => (String::new(), String::new()),
    };
    format!(
        "{frames:6}  {skips:5}  {:>10}  {unc:>12}  {ratio:>5}  {check:>5}  {name}",
        human(compressed)
    )
}

/// The line under a seekable file: its frame count and the input each
/// frame holds (the last may hold less).
fn seekable_line(t: &SeekTable) -> String {
    let size = t.entries.first().map_or(0, |e| e.decompressed);
    format!(
        "  seekable: {} frames of {} bytes{}",
        t.entries.len(),
        size,
        if t.checksums {
            ", checksums in the seek table"
        } else {
            ""
        }
    )
}

/// Files listed as `zstd -l` lists them (with `verbose`, as `zstd -lv`),
/// written to `W` as each is given, the total at [`Listing::finish`].
#[derive(Debug)]
pub struct Listing<W: Write> {
    out: W,
    verbose: bool,
    total: Summary,
    listed: u64,
    checks: Vec<&'static str>,
}

impl<W: Write> Listing<W> {
    /// A listing into `out`; without `verbose`, its header row is written
    /// now.
    pub fn new(mut out: W, verbose: bool) -> io::Result<Self> {
        if !verbose {
            writeln!(
                out,
                "Frames  Skips  Compressed  Uncompressed  Ratio  Check  Filename"
            )?;
        }
        Ok(Listing {
            out,
            verbose,
            total: Summary {
                decompressed: Some(0),
                ..Summary::default()
            },
            listed: 0,
            checks: Vec::new(),
        })
    }

    /// Writes the file `name`'s row (its block with `verbose`) from its
    /// frames' summary `s`, then, for a seekable file, the line of what
    /// its seek `table` says.
    pub fn file(&mut self, name: &str, s: &Summary, table: Option<&SeekTable>) -> io::Result<()> {
        let out = &mut self.out;
        if self.verbose {
            write_verbose(out, name, s)?;
        } else {
            writeln!(
                out,
                "{}",
                row(
                    s.frames + s.skips, // zstd counts skippable frames here too
                    s.skips,
                    s.compressed,
                    s.decompressed,
                    s.check(),
                    name
                )
            )?;
        }
        if let Some(t) = table {
            writeln!(out, "{}", seekable_line(t))?;
        }
        let total = &mut self.total;
        self.listed += 1;
        total.frames += s.frames;
        total.skips += s.skips;
        total.compressed += s.compressed;
        total.decompressed = match (total.decompressed, s.decompressed) {
            (Some(a), Some(b)) => a.checked_add(b),
            _ => None,
        };
        self.checks.push(s.check());
        Ok(())
    }

    /// Flushes what is written so far: before the caller says something
    /// elsewhere (a file that could not be read) in between two rows.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Writes the total row when more than one file was listed (not with
    /// `verbose`, as zstd), flushes, and gives the writer back.
    pub fn finish(mut self) -> io::Result<W> {
        let (out, checks, total, listed) = (&mut self.out, &self.checks, &self.total, self.listed);
        if listed > 1 && !self.verbose {
            let check = if checks.iter().all(|c| *c == checks[0]) {
                checks[0]
            } else {
                ""
            };
            writeln!(out, "{} ", "-".repeat(65))?;
            writeln!(
                out,
                "{}",
                row(
                    total.frames + total.skips,
                    total.skips,
                    total.compressed,
                    total.decompressed,
                    check,
                    &format!("{listed} files")
                )
            )?;
        }
        out.flush()?;
        Ok(self.out)
    }
}

fn write_verbose(out: &mut impl Write, name: &str, s: &Summary) -> io::Result<()> {
    let exact = |n: u64| format!("{} ({n} B)", human(n));
    writeln!(out, "{name} ")?;
    writeln!(out, "# Zstandard Frames: {}", s.frames)?;
    if s.skips > 0 {
        writeln!(out, "# Skippable Frames: {}", s.skips)?;
    }
    writeln!(out, "DictID: {}", s.dict_id)?;
    if s.frames > 0 {
        writeln!(out, "Window Size: {}", exact(s.window))?;
    }
    writeln!(out, "Compressed Size: {}", exact(s.compressed))?;
    if let Some(d) = s.decompressed {
        writeln!(out, "Decompressed Size: {}", exact(d))?;
        if s.compressed > 0 {
            writeln!(out, "Ratio: {:.4}", d as f64 / s.compressed as f64)?;
        }
    }
    match (s.check(), s.last_checksum) {
        ("XXH64", Some(c)) if s.frames == 1 => writeln!(out, "Check: XXH64 {c:08x}")?,
        (check, _) => writeln!(out, "Check: {check}")?,
    }
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes_read_as_zstd_prints_them() {
        assert_eq!(human(34), "34   B");
        assert_eq!(human(74081), "72.3 KiB");
        assert_eq!(human(588_895), "575 KiB");
        assert_eq!(human(148_162), "145 KiB");
        assert_eq!(human(1_177_790), "1.12 MiB");
    }
}
