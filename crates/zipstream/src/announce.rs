//! Info-ZIP zip's per-entry lines (`  adding: a.txt (deflated 62%)`,
//! `updating:`, `freshening:`, `deleting:`), with its `-v` sizes and
//! totals and its `-d?` display options, written as the writer finishes
//! each entry to the caller's writer, and whether an archive holds what
//! Info-ZIP's unzip cannot read.
//!
//! ```
//! use zipstream::Written;
//! use zipstream::announce::{Announcer, line, size_string};
//!
//! let w = Written { name: "a.txt".into(), method: 8, compressed_size: 4200, size: 8893, aes: None };
//! assert_eq!(line("adding", &w), "  adding: a.txt (deflated 53%)");
//! assert_eq!(size_string(5000), "4.8K");
//!
//! let mut announcer = Announcer::new(vec![Some("adding")], false, Vec::new());
//! announcer.catch_up(|i| (i == 0).then(|| w.clone())).unwrap();
//! assert_eq!(announcer.done(), (1, 8893));
//! assert_eq!(announcer.into_inner(), b"  adding: a.txt (deflated 53%)\n");
//! ```

use std::io::{self, Write};

use crate::Written;
use crate::listing::printable_name;

/// Writes one line per entry the user added to `W`, in the order the
/// writer finishes them; kept entries of an updated archive are silent,
/// as in Info-ZIP. Also remembers whether any entry is AES or zstd.
pub struct Announcer<W: Write> {
    /// Per entry in writing order: the verb to print, or None (kept).
    labels: Vec<Option<&'static str>>,
    /// The next entry to look at.
    next: usize,
    /// Print nothing (`-q`).
    quiet: bool,
    /// Where the lines go, each in one `write_all`.
    out: W,
    /// Whether an entry was AES encrypted / zstd compressed.
    aes: bool,
    zstd: bool,
    /// `-v`: sizes on each line (Info-ZIP's `(in=N) (out=M)`), and the
    /// totals of the entries announced.
    verbose: bool,
    totals: (u64, u64),
    /// `-dc`, `-db`, `-du`, `-dv`.
    display: Display,
    /// Entries announced so far, and their bytes (`-dc`, `-db`).
    done: (u64, u64),
    /// Entries and bytes to announce in all (`-dc`, `-db`).
    to_do: (u64, u64),
    /// Every entry's line, plain, for `-li`'s log.
    printed: Vec<String>,
    /// `-dg`'s line has been ended.
    dots_ended: bool,
    /// `-sd`: the entry before which Info-ZIP's `sd: Zipping up new
    /// entries` comes (the first one added), until it is printed.
    debug_new_at: Option<usize>,
}

/// What Info-ZIP's `-d?` display options add to each entry's line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Display {
    /// `-dc`: `  0/  3 ` entries done and to go, before the line.
    pub counts: bool,
    /// `-db`: `[   0/ 34K] ` bytes done and to go, before the line.
    pub bytes: bool,
    /// `-du`: ` (4.8K)` the entry's size, after its name.
    pub usize: bool,
    /// `-dv`: `1>1: ` the disks read and written, before the line.
    pub volume: bool,
    /// `-dg`: Info-ZIP's dots for the whole archive; the lines draw none,
    /// but keep the space before them (after the first entry's name)
    /// and the line end after them.
    pub global_dots: bool,
    /// `-dd`: Info-ZIP's dots as each file is compressed; the lines draw
    /// none, but keep the space before them (see [`DOTS_FROM`]).
    pub dots: bool,
}

/// The size from which Info-ZIP's zip, showing dots (`-dd`, `-v`), puts a
/// space after a deflated file's name where its dots would start: its
/// deflate has read past its first window then (64 KiB less deflate's
/// 262-byte lookahead); measured with zip 3.0 on files of 65,273 and
/// 65,274 bytes.
pub const DOTS_FROM: u64 = 65_274;

impl<W: Write> Announcer<W> {
    /// An announcer for entries labelled `labels` in writing order (the
    /// verb of each entry's line, `None` for an entry kept silently),
    /// writing to `out`; `quiet` (`-q`) writes no entry lines.
    pub fn new(labels: Vec<Option<&'static str>>, quiet: bool, out: W) -> Self {
        Announcer {
            labels,
            next: 0,
            quiet,
            out,
            aes: false,
            zstd: false,
            verbose: false,
            totals: (0, 0),
            display: Display::default(),
            done: (0, 0),
            to_do: (0, 0),
            printed: Vec::new(),
            dots_ended: false,
            debug_new_at: None,
        }
    }

    /// `-sd`: prints `sd: Zipping up new entries` before the first entry
    /// added (or at the end, when none is).
    pub fn debug(mut self, on: bool) -> Self {
        if on {
            let first = self.labels.iter().position(|l| *l == Some("adding"));
            self.debug_new_at = Some(first.unwrap_or(self.labels.len()));
        }
        self
    }

    /// Prints `-sd`'s line for the new entries when entry `next` is the
    /// first of them, or `end`.
    fn debug_line(&mut self, end: bool) -> io::Result<()> {
        if let Some(at) = self.debug_new_at
            && (at == self.next || end)
        {
            self.debug_new_at = None;
            self.print("sd: Zipping up new entries")?;
        }
        Ok(())
    }

    /// Prints `line` where the entries' lines go, in one write so that a
    /// writer drawing a progress bar can clear it around the line.
    fn print(&mut self, line: &str) -> io::Result<()> {
        self.out.write_all(format!("{line}\n").as_bytes())
    }

    /// The end of the entries: `-sd`'s line if it is still owed.
    pub fn finish(&mut self) -> io::Result<()> {
        self.debug_line(true)
    }

    /// `-dg`: ends the line its dots were on (Info-ZIP's space before
    /// them came after the first entry's name, or alone under `-q`), as
    /// the central directory is written.
    pub fn end_dots(&mut self) -> io::Result<()> {
        if self.display.global_dots && !self.dots_ended && self.done.0 > 0 {
            self.dots_ended = true;
            self.print(if self.quiet { " " } else { "" })?;
        }
        Ok(())
    }

    /// The writer, once the announcing is over.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// Adds `display`'s parts to each line; `bytes` is the size of all
    /// the entries to be announced (`-db`'s first "to go").
    pub fn display(mut self, display: Display, bytes: u64) -> Self {
        self.display = display;
        let entries = self.labels.iter().filter(|l| l.is_some()).count() as u64;
        self.to_do = (entries, bytes);
        self
    }

    /// Each entry's line announced so far, plain (for `-li`'s log).
    pub fn printed(&self) -> &[String] {
        &self.printed
    }

    /// The entries announced and their uncompressed bytes.
    pub fn done(&self) -> (u64, u64) {
        self.done
    }

    /// `-dv`, `-dc` and `-db`'s parts before an entry's line.
    fn prefix(&self) -> String {
        let mut p = String::new();
        if self.display.volume {
            p.push_str("1>1: ");
        }
        if self.display.counts {
            let left = self.to_do.0.saturating_sub(self.done.0);
            p.push_str(&format!("{:>3}/{left:>3} ", self.done.0));
        }
        if self.display.bytes {
            let left = self.to_do.1.saturating_sub(self.done.1);
            p.push_str(&format!(
                "[{:>4}/{:>4}] ",
                size_string(self.done.1),
                size_string(left)
            ));
        }
        p
    }

    /// Announces with sizes, as Info-ZIP's `zip -v` does.
    pub fn verbose(mut self, on: bool) -> Self {
        self.verbose = on;
        self
    }

    /// `-v`'s last line: `total bytes=N, compressed=M -> P% savings`, of
    /// `whole` (the archive's entries) or else of the entries announced.
    pub fn print_totals(&mut self, whole: Option<(u64, u64)>) -> io::Result<()> {
        let line = self.totals_line(whole);
        self.print(&line)
    }

    /// `-v`'s last line (see [`Announcer::print_totals`]), which `-li`
    /// logs too.
    pub fn totals_line(&self, whole: Option<(u64, u64)>) -> String {
        let (size, compressed) = whole.unwrap_or(self.totals);
        format!(
            "total bytes={size}, compressed={compressed} -> {}% savings",
            percent(size, compressed)
        )
    }

    /// Prints a line for every entry `written` knows (by its index in
    /// writing order) that has not been announced yet. A line that cannot
    /// be written does not stop the others: every entry is counted, and
    /// the first error is returned at the end.
    pub fn catch_up(&mut self, written: impl Fn(usize) -> Option<Written>) -> io::Result<()> {
        let mut failed = Ok(());
        while let Some(w) = written(self.next) {
            let debug = self.debug_line(false);
            if failed.is_ok() {
                failed = debug;
            }
            self.aes |= w.aes.is_some();
            self.zstd |= w.method == 93;
            let label = self.labels.get(self.next).copied().flatten();
            if label.is_some() && self.quiet {
                // Not shown, but counted for the log's total.
                self.done.0 += 1;
                self.done.1 += w.size;
            }
            if let (Some(verb), false) = (label, self.quiet) {
                let line = if self.verbose {
                    let compressed = w
                        .compressed_size
                        .saturating_sub(w.aes.map_or(0, |a| a.overhead()));
                    self.totals.0 += w.size;
                    self.totals.1 += compressed;
                    let plain = line(verb, &w);
                    // Info-ZIP's `-v` puts the sizes between name and method.
                    let name = printable_name(&w.name);
                    let head = format!("{verb:>8}: {name}");
                    let tail = plain[head.len()..].trim_start();
                    format!("{head}\t(in={}) (out={compressed}) {tail}", w.size)
                } else {
                    line(verb, &w)
                };
                let line = self.decorate(line, verb, &w);
                self.done.0 += 1;
                self.done.1 += w.size;
                // The log has the plain line, without -v's sizes or the
                // displays.
                self.printed.push(self::line(verb, &w));
                let printed = self.print(&line);
                if failed.is_ok() {
                    failed = printed;
                }
            }
            self.next += 1;
        }
        failed
    }

    /// `line` with the `-d?` display parts Info-ZIP adds: `-du`'s size
    /// after the name, the others before the line.
    fn decorate(&self, line: String, verb: &str, w: &Written) -> String {
        let mut line = line;
        let head = format!("{verb:>8}: {}", printable_name(&w.name));
        if self.display.usize
            && let Some(tail) = line.strip_prefix(&head)
        {
            line = format!("{head} ({}){tail}", size_string(w.size));
        }
        // -dd and -v: the space before a large deflated file's dots.
        if (self.display.dots || self.verbose)
            && !self.display.global_dots
            && w.method == 8
            && w.size >= DOTS_FROM
            && let Some(tail) = line.strip_prefix(&head)
        {
            line = format!("{head} {tail}");
        }
        // -dg: the space before the archive's dots, after the first name
        // added, or before the first line of an entry replaced in place
        // (Info-ZIP prints those as it goes through the old archive).
        if self.display.global_dots && self.done.0 == 0 {
            if verb != "adding" {
                line.insert(0, ' ');
            } else if let Some(tail) = line.strip_prefix(&head) {
                line = format!("{head} {tail}");
            }
        }
        format!("{}{line}", self.prefix())
    }

    /// Why Info-ZIP's unzip 6.0 cannot read the archive, if it cannot.
    pub fn unreadable_by_info_zip(&self) -> Option<&'static str> {
        match (self.aes, self.zstd) {
            (true, true) => Some("AES encryption, zstd compression"),
            (true, false) => Some("AES encryption"),
            (false, true) => Some("zstd compression"),
            (false, false) => None,
        }
    }
}

/// One entry's line, as Info-ZIP's zip prints it (`verb` is `adding`,
/// `updating` or `freshening`), its name through [`printable_name`].
pub fn line(verb: &str, w: &Written) -> String {
    let name = printable_name(&w.name);
    let how = match w.method {
        // Info-ZIP says 0% of anything stored.
        0 => return format!("{verb:>8}: {name} (stored 0%)"),
        8 => "deflated",
        93 => "zstd",
        _ => "compressed",
    };
    // The saving of the compression alone, without AES's salt and MAC.
    let compressed = w
        .compressed_size
        .saturating_sub(w.aes.map_or(0, |a| a.overhead()));
    format!("{verb:>8}: {name} ({how} {}%)", percent(w.size, compressed))
}

/// Info-ZIP's `deleting: NAME` lines for `entries` (`-d`, `-FS`), with
/// the `-d?` displays as its zip adds them there: `-dv`, `-dc` and `-db`
/// before each line (`-db` counting compressed bytes), `-du`'s size
/// after the name, and, under `-dc` or `-db`, a blank line between two.
/// `-FS` (`sync`) leaves `-dc`'s and `-db`'s numbers blank, and no blank
/// lines, as Info-ZIP's file sync prints them.
pub fn deleting_lines(display: Display, entries: &[&crate::Entry], sync: bool) -> Vec<String> {
    let compressed: u64 = entries.iter().map(|e| e.compressed_size).sum();
    let (mut done, mut bytes) = (0u64, 0u64);
    let mut lines = Vec::new();
    for e in entries {
        if (display.counts || display.bytes) && done > 0 && !sync {
            lines.push(String::new());
        }
        let mut line = String::new();
        if display.volume {
            line.push_str("1>1: ");
        }
        if display.counts && sync {
            line.push_str("   /    ");
        } else if display.counts {
            line.push_str(&format!("{done:>3}/{:>3} ", entries.len() as u64 - done));
        }
        if display.bytes && sync {
            line.push_str("     /      ");
        } else if display.bytes {
            line.push_str(&format!(
                "[{:>4}/{:>4}] ",
                size_string(bytes),
                size_string(compressed - bytes)
            ));
        }
        // -dg: Info-ZIP's space before the dots that would follow.
        if display.global_dots && done == 0 {
            line.push(' ');
        }
        line.push_str(&format!("deleting: {}", printable_name(&e.name)));
        if display.usize {
            line.push_str(&format!(" ({})", size_string(e.size)));
        }
        lines.push(line);
        done += 1;
        bytes += e.compressed_size;
    }
    if display.global_dots && !lines.is_empty() {
        lines.push(String::new());
    }
    lines
}

/// A size as Info-ZIP's zip shows it in `-db`, `-du` and its log: bytes
/// below 1,000, else in the first unit (K, M, G, T, P: powers of 1,024)
/// that brings it under 1,000, with one decimal under 10, truncated
/// (1,000 bytes is `0.9K`, 5,000 `4.8K`, 30,000 `29K`).
pub fn size_string(n: u64) -> String {
    const UNITS: &[&str] = &["K", "M", "G", "T", "P", "E"];
    if n < 1000 {
        return n.to_string();
    }
    let mut div: u128 = 1;
    let mut unit = 0;
    while u128::from(n) / (div * 1024) >= 1000 {
        div *= 1024;
        unit += 1;
    }
    div *= 1024;
    let tenths = u128::from(n) * 10 / div;
    let u = UNITS[unit.min(UNITS.len() - 1)];
    if tenths < 100 {
        format!("{}.{}{u}", tenths / 10, tenths % 10)
    } else {
        format!("{}{u}", tenths / 10)
    }
}

/// The saving from `size` to `compressed` in whole percent, rounded half
/// up and negative when the data grew (`deflated -66%`): Info-ZIP's
/// figure, including its scaling of sizes above 16 MiB by 256 first
/// (which keeps its arithmetic in range and can move the last digit).
pub fn percent(size: u64, compressed: u64) -> i128 {
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

    /// An AES entry copied from an archive that claims fewer bytes than
    /// AES's own salt, verifier and MAC (a hostile or broken archive) is
    /// told as a size of its own, never an underflow.
    #[test]
    fn an_aes_entry_smaller_than_its_overhead_is_told_without_underflow() {
        let w = Written {
            name: "a".into(),
            method: 8,
            compressed_size: 5,
            size: 100,
            aes: Some(crate::crypto::AesStrength::Aes256),
        };
        assert_eq!(line("updating", &w), "updating: a (deflated 100%)");
    }

    #[test]
    fn sizes_are_shown_as_info_zips_du_shows_them() {
        // zip 3.0's `-du` on files of these sizes.
        for (n, shown) in [
            (0, "0"),
            (999, "999"),
            (1000, "0.9K"),
            (1024, "1.0K"),
            (10_239, "9.9K"),
            (10_240, "10K"),
            (102_400, "100K"),
            (1_048_575, "0.9M"),
            (5_000_000, "4.7M"),
            (10_485_760, "10M"),
            (123_456_789, "117M"),
        ] {
            assert_eq!(size_string(n), shown, "{n}");
        }
    }
}
