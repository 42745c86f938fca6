//! `perfkit compress --list` (zstd's `-l`): what the frames of `.zst` files
//! hold, read from their headers and block headers without decompressing.
//!
//! The walk and the sums are zstdkit's ([`zstdkit::frame::Summary`]): only
//! headers are read and block contents are skipped, so memory stays
//! constant whatever the file's size. This module only lays the rows out.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use zstdkit::frame::Summary;

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
fn seekable_line(t: &zstdkit::seekable::SeekTable) -> String {
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

/// Lists `files` as `zstd -l` does (with `verbose`, as `zstd -lv`): one
/// row per file and a total when there are several. A file that cannot be
/// read is reported on stderr and the rest are still listed. A
/// seekable file gets a line of what its seek table says.
pub fn list(files: &[PathBuf], verbose: bool) -> Result<ExitCode> {
    if files.iter().any(|f| f == Path::new("-")) || files.is_empty() {
        bail!("--list reads files, not stdin (it needs to know where the input ends)");
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut failed = false;
    let mut total = Summary {
        decompressed: Some(0),
        ..Summary::default()
    };
    let mut listed = 0u64;
    let mut checks = Vec::new();
    if !verbose {
        writeln!(
            out,
            "Frames  Skips  Compressed  Uncompressed  Ratio  Check  Filename"
        )?;
    }
    for path in files {
        let name = perfkit::printable::name(&path.to_string_lossy()).into_owned();
        let s = File::open(path)
            .with_context(|| format!("opening {name}"))
            .and_then(|f| Ok(Summary::read(BufReader::with_capacity(1 << 16, f))?));
        let s = match s {
            Ok(s) => s,
            Err(e) => {
                out.flush()?;
                let _ = writeln!(io::stderr(), "perfkit: {name}: {}", super::sentence(&e));
                failed = true;
                continue;
            }
        };
        // A seekable file's table says what zstd's listing does not.
        let seekable = File::open(path)
            .ok()
            .and_then(|f| zstdkit::seekable::SeekableReader::new(f).ok())
            .map(|r| r.table().clone());
        if verbose {
            write_verbose(&mut out, &name, &s)?;
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
                    &name
                )
            )?;
        }
        if let Some(t) = seekable {
            writeln!(out, "{}", seekable_line(&t))?;
        }
        listed += 1;
        total.frames += s.frames;
        total.skips += s.skips;
        total.compressed += s.compressed;
        total.decompressed = match (total.decompressed, s.decompressed) {
            (Some(a), Some(b)) => a.checked_add(b),
            _ => None,
        };
        checks.push(s.check());
    }
    if listed > 1 && !verbose {
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
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
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
