//! Info-ZIP zip's per-entry lines (`  adding: a.txt (deflated 62%)`,
//! `updating:`, `freshening:`), printed as the writer finishes each entry,
//! and the note that an archive holds what Info-ZIP's unzip cannot read.

use std::io::Write;

use zipstream::Written;

/// Prints one line per entry the user added, in the order the writer
/// finishes them; kept entries of an updated archive are silent, as in
/// Info-ZIP. Also remembers whether any entry is AES or zstd.
pub(super) struct Announcer {
    /// Per entry in writing order: the verb to print, or None (kept).
    labels: Vec<Option<&'static str>>,
    /// The next entry to look at.
    next: usize,
    /// Print nothing (`-q`).
    quiet: bool,
    /// Print on stderr: stdout carries the archive.
    to_stderr: bool,
    /// Whether an entry was AES encrypted / zstd compressed.
    aes: bool,
    zstd: bool,
    /// `-v`: sizes on each line (Info-ZIP's `(in=N) (out=M)`), and the
    /// totals of the entries announced.
    verbose: bool,
    totals: (u64, u64),
}

impl Announcer {
    /// An announcer for entries labelled `labels` in writing order.
    pub(super) fn new(labels: Vec<Option<&'static str>>, quiet: bool, to_stderr: bool) -> Self {
        Announcer {
            labels,
            next: 0,
            quiet,
            to_stderr,
            aes: false,
            zstd: false,
            verbose: false,
            totals: (0, 0),
        }
    }

    /// Announces with sizes, as Info-ZIP's `zip -v` does.
    pub(super) fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    /// `-v`'s last line: `total bytes=N, compressed=M -> P% savings`, of
    /// `whole` (the archive's entries) or else of the entries announced.
    pub(super) fn print_totals(&self, whole: Option<(u64, u64)>) {
        let (size, compressed) = whole.unwrap_or(self.totals);
        let line = format!(
            "total bytes={size}, compressed={compressed} -> {}% savings",
            percent(size, compressed)
        );
        if self.to_stderr {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }

    /// Prints a line for every entry `written` knows that has not been
    /// announced yet.
    pub(super) fn catch_up(
        &mut self,
        bar: &indicatif::ProgressBar,
        written: impl Fn(usize) -> Option<Written>,
    ) {
        while let Some(w) = written(self.next) {
            self.aes |= w.aes.is_some();
            self.zstd |= w.method == 93;
            if let (Some(Some(verb)), false) = (self.labels.get(self.next), self.quiet) {
                let line = if self.verbose {
                    let compressed = w.compressed_size - w.aes.map_or(0, |a| a.overhead());
                    self.totals.0 += w.size;
                    self.totals.1 += compressed;
                    let plain = line(verb, &w);
                    // Info-ZIP's `-v` puts the sizes between name and method.
                    let name = perfkit::printable::name(&w.name);
                    let head = format!("{verb:>8}: {name}");
                    let tail = plain[head.len()..].trim_start();
                    format!("{head}\t(in={}) (out={compressed}) {tail}", w.size)
                } else {
                    line(verb, &w)
                };
                // Output errors (a closed pipe) surface when the archive
                // itself is written; a lost message line must not fail it.
                bar.suspend(|| {
                    if self.to_stderr {
                        let _ = writeln!(std::io::stderr(), "{line}");
                    } else {
                        let _ = writeln!(std::io::stdout(), "{line}");
                    }
                });
            }
            self.next += 1;
        }
    }

    /// Why Info-ZIP's unzip 6.0 cannot read the archive, if it cannot.
    pub(super) fn unreadable_by_info_zip(&self) -> Option<&'static str> {
        match (self.aes, self.zstd) {
            (true, true) => Some("AES encryption, zstd compression"),
            (true, false) => Some("AES encryption"),
            (false, true) => Some("zstd compression"),
            (false, false) => None,
        }
    }
}

/// One entry's line, as Info-ZIP's zip prints it.
pub(super) fn line(verb: &str, w: &Written) -> String {
    let name = perfkit::printable::name(&w.name);
    let how = match w.method {
        // Info-ZIP says 0% of anything stored.
        0 => return format!("{verb:>8}: {name} (stored 0%)"),
        8 => "deflated",
        93 => "zstd",
        _ => "compressed",
    };
    // The saving of the compression alone, without AES's salt and MAC.
    let compressed = w.compressed_size - w.aes.map_or(0, |a| a.overhead());
    format!("{verb:>8}: {name} ({how} {}%)", percent(w.size, compressed))
}

/// The saving from `size` to `compressed` in whole percent, rounded half
/// up and negative when the data grew (`deflated -66%`): Info-ZIP's
/// figure, including its scaling of sizes above 16 MiB by 256 first
/// (which keeps its arithmetic in range and can move the last digit).
pub(super) fn percent(size: u64, compressed: u64) -> i128 {
    let (mut n, mut m) = (i128::from(size), i128::from(compressed));
    if n > 0xff_ffff {
        n = (n + 0x80) >> 8;
        m = (m + 0x80) >> 8;
    }
    if n == 0 {
        return 0;
    }
    // Rust's division truncates toward zero, as C's does.
    (200 * (n - m) / n + 1) / 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_info_zips() {
        // `adding: a.txt (deflated 53%)` for 8,893 bytes into 4,200, and
        // `d/x1 (deflated 47%)` for 141 into 75, from Info-ZIP zip 3.0.
        assert_eq!(percent(8893, 4200), 53);
        assert_eq!(percent(141, 75), 47);
        assert_eq!(percent(0, 0), 0);
        assert_eq!(percent(3, 3), 0);
        // Info-ZIP zip - tiny.txt: `adding: tiny.txt (deflated -66%)`.
        assert_eq!(percent(3, 5), -66);
    }
}
