//! Info-ZIP's listings of an archive's entries, column for column and
//! totals included, so that scripts reading one read the other: unzip
//! 6.0's `-l` and `-v` ([`Listing`]) and zipinfo's ([`Zipinfo`], unzip's
//! `-Z`). Times are printed in UTC (Info-ZIP prints local time; the two
//! agree under `TZ=UTC`). Names are printed through [`printable_name`].
//!
//! ```
//! use zipstream::listing::{Kind, Listing};
//! use zipstream::{EntryOptions, ZipArchive, ZipWriter};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut zip = ZipWriter::new(Vec::new());
//! zip.add_bytes(EntryOptions::file("hello.txt").mtime(1_700_000_000), b"hello, world")?;
//! let archive = ZipArchive::new(std::io::Cursor::new(zip.finish()?))?;
//!
//! let mut out = Vec::new();
//! let mut listing = Listing::start(Kind::Short, "hello.zip", 0, &mut out)?;
//! for e in archive.entries() {
//!     listing.entry(e, &mut out)?;
//! }
//! listing.finish(&mut out)?;
//! assert_eq!(
//!     String::from_utf8(out)?,
//!     "Archive:  hello.zip\n\
//!      \x20 Length      Date    Time    Name\n\
//!      ---------  ---------- -----   ----\n\
//!      \x20      12  2023-11-14 22:13   hello.txt\n\
//!      ---------                     -------\n\
//!      \x20      12                     1 file\n"
//! );
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;
use std::io::{self, Write};

use crate::Entry;

mod zipinfo;

pub use zipinfo::{UnsupportedOption, Zipinfo};

/// Which listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `-l`: length, date, time, name.
    Short,
    /// `-v`: length, method, size, ratio, date, time, CRC-32, name.
    Verbose,
}

/// A listing being printed: its header on creation, a line per entry,
/// the totals at the end.
pub struct Listing {
    kind: Kind,
    /// Info-ZIP's `-q` (no `Archive:` line and comment) and `-qq` (no
    /// headers and totals either).
    quiet: u8,
    files: u64,
    size: u64,
    compressed: u64,
}

impl Listing {
    /// Starts the listing of the archive named `archive` (printable).
    pub fn start(
        kind: Kind,
        archive: &str,
        quiet: u8,
        out: &mut impl Write,
    ) -> io::Result<Listing> {
        if quiet == 0 {
            writeln!(out, "Archive:  {archive}")?;
        }
        match kind {
            _ if quiet >= 2 => {}
            Kind::Short => {
                writeln!(out, "  Length      Date    Time    Name")?;
                writeln!(out, "---------  ---------- -----   ----")?;
            }
            Kind::Verbose => {
                writeln!(
                    out,
                    " Length   Method    Size  Cmpr    Date    Time   CRC-32   Name"
                )?;
                writeln!(
                    out,
                    "--------  ------  ------- ---- ---------- ----- --------  ----"
                )?;
            }
        }
        Ok(Listing {
            kind,
            quiet,
            files: 0,
            size: 0,
            compressed: 0,
        })
    }

    /// Prints one entry's line.
    pub fn entry(&mut self, e: &Entry, out: &mut impl Write) -> io::Result<()> {
        let compressed = stored_size(e);
        self.files += 1;
        // Sizes come from the archive's directory and may add up past
        // u64::MAX: the total wraps, as Info-ZIP's unsigned one does.
        self.size = self.size.wrapping_add(e.size);
        self.compressed = self.compressed.wrapping_add(compressed);
        let name = printable_name(&e.name);
        let when = listing_time(e.mtime);
        match self.kind {
            Kind::Short => writeln!(out, "{:>9}  {when}   {name}", e.size),
            Kind::Verbose => {
                // A longer method name takes its room from the size
                // column, as in Info-ZIP (`Unk:099    4071`).
                let method = method(e);
                let width = 15usize.saturating_sub(method.len()).max(1);
                writeln!(
                    out,
                    "{:>8}  {method}{compressed:>width$} {} {when} {:08x}  {name}",
                    e.size,
                    ratio(e.size, compressed),
                    e.crc32
                )
            }
        }
    }

    /// Prints the totals.
    pub fn finish(self, out: &mut impl Write) -> io::Result<()> {
        let files = format!(
            "{} file{}",
            self.files,
            if self.files == 1 { "" } else { "s" }
        );
        match self.kind {
            _ if self.quiet >= 2 => Ok(()),
            Kind::Short => {
                writeln!(out, "---------                     -------")?;
                writeln!(out, "{:>9}{:21}{files}", self.size, "")
            }
            Kind::Verbose => {
                writeln!(
                    out,
                    "--------          -------  ---                            -------"
                )?;
                writeln!(
                    out,
                    "{:>8}{:>17} {}{:28}{files}",
                    self.size,
                    self.compressed,
                    ratio(self.size, self.compressed),
                    ""
                )
            }
        }
    }
}

/// The method as Info-ZIP names it: `Stored`, `Defl:N` (with the level
/// class the flags give: X maximum, F fast, S super fast), and `Unk:093`
/// for what it does not know, zstd and AES (whose header says 99) among them.
fn method(e: &Entry) -> String {
    if e.aes.is_some() {
        return "Unk:099".into();
    }
    match e.method {
        0 => "Stored".into(),
        8 => format!(
            "Defl:{}",
            ['N', 'X', 'F', 'S'][usize::from((e.flags >> 1) & 3)]
        ),
        m => format!("Unk:{m:03}"),
    }
}

/// An entry's compressed size as Info-ZIP's listings count it: less
/// ZipCrypto's 12-byte header for any encrypted entry, AES ones too (it
/// knows no other encryption).
pub(crate) fn stored_size(e: &Entry) -> u64 {
    if e.encrypted {
        e.compressed_size.saturating_sub(12)
    } else {
        e.compressed_size
    }
}

/// Info-ZIP's `ratio()`: the space saved in tenths of a percent, rounded
/// half up (on sizes divided by 1,000 past 2,000,000 bytes), negative
/// when the data grew; 0 for an empty entry.
pub(crate) fn permille(size: u64, compressed: u64) -> i64 {
    if size == 0 {
        return 0;
    }
    let (grew, diff) = if size >= compressed {
        (false, size - compressed)
    } else {
        (true, compressed - size)
    };
    let p = if size > 2_000_000 {
        let denom = size / 1000;
        (diff + denom / 2) / denom
    } else {
        (1000 * diff + size / 2) / size
    } as i64;
    if grew { -p } else { p }
}

/// The compression ratio as Info-ZIP's `-v` listing prints it: whole
/// percent rounded half up, in four columns.
fn ratio(size: u64, compressed: u64) -> String {
    let p = permille(size, compressed);
    let percent = (p.unsigned_abs() + 5) / 10;
    // Info-ZIP computes a signed number: growth that rounds to nothing
    // is plain 0, never -0.
    if p < 0 && percent > 0 {
        format!("{:>3}%", format!("-{percent}"))
    } else {
        format!("{percent:>3}%")
    }
}

/// What follows `Archive:  ` in Info-ZIP unzip's first lines: the
/// archive's (printable) name, and on the lines after it the archive
/// comment, if there is one, as [`comment_lines`] shows it.
pub fn heading(name: &str, comment: &str) -> String {
    if comment.is_empty() {
        name.to_string()
    } else {
        format!("{name}\n{}", comment_lines(comment.as_bytes()))
    }
}

/// An archive comment as Info-ZIP's unzip prints it on Unix: its DOS
/// line ends (`zip -z` joins lines with CR LF) as `\n`.
pub fn comment_lines(comment: &[u8]) -> String {
    String::from_utf8_lossy(comment).replace("\r\n", "\n")
}

/// How the archives of one `unzip` run went, when a wildcard named more
/// than one: Info-ZIP's tally at the end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Archives processed without an error.
    pub good: usize,
    /// Archives that failed.
    pub failed: usize,
    /// Files that were not ZIP archives.
    pub not_zip: usize,
}

impl Tally {
    /// Info-ZIP's lines (`2 archives were successfully processed.`,
    /// `1 archive had fatal errors.`, `1 file had no zipfile directory.`),
    /// those with a count, joined by line ends.
    pub fn lines(&self) -> String {
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("{n} {one}")
            } else {
                format!("{n} {many}")
            }
        };
        let mut tally = Vec::new();
        if self.good > 0 {
            let n = plural(self.good, "archive was", "archives were");
            tally.push(format!("{n} successfully processed."));
        }
        if self.failed > 0 {
            let n = plural(self.failed, "archive had", "archives had");
            tally.push(format!("{n} fatal errors."));
        }
        if self.not_zip > 0 {
            let n = plural(self.not_zip, "file had", "files had");
            tally.push(format!("{n} no zipfile directory."));
        }
        tally.join("\n")
    }
}

/// `2020-02-29 13:37`: a Unix time as unzip's `-l` and `-v` show it (UTC).
pub fn listing_time(unix: i64) -> String {
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil::civil_from_days(unix.div_euclid(86_400));
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// `s` with control characters made visible, as Info-ZIP shows them (a
/// newline, carriage return or ESC in a name from an archive or a file
/// system would spoof a listing or send codes to the terminal): C0
/// controls and DEL in caret notation (`^J` for a newline, `^[` for ESC,
/// `^?` for DEL), C1 controls (U+0080..U+009F, which some terminals obey
/// as escape sequences) as `\u{9b}`. Anything else is unchanged, and a
/// name with nothing to escape is borrowed, not copied.
pub fn printable_name(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\u{0}'..='\u{1f}' => {
                out.push('^');
                out.push(char::from(c as u8 + 0x40));
            }
            '\u{7f}' => out.push_str("^?"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_and_tallies_are_info_zips() {
        // Info-ZIP unzip 6.00's lines (unzip_cli runs it beside ours).
        assert_eq!(heading("a.zip", ""), "a.zip");
        assert_eq!(heading("a.zip", "one\r\ntwo"), "a.zip\none\ntwo");
        let t = Tally {
            good: 1,
            failed: 2,
            not_zip: 1,
        };
        assert_eq!(
            t.lines(),
            "1 archive was successfully processed.\n2 archives had fatal errors.\n\
             1 file had no zipfile directory."
        );
        let t = Tally {
            good: 3,
            ..Tally::default()
        };
        assert_eq!(t.lines(), "3 archives were successfully processed.");
    }

    #[test]
    fn ratios_are_info_zips() {
        // From `unzip -v` (Info-ZIP 6.00) on archives of these sizes.
        assert_eq!(ratio(8893, 4200), " 53%");
        assert_eq!(ratio(141, 75), " 47%");
        assert_eq!(ratio(20_971_520, 20_362), "100%");
        assert_eq!(ratio(2, 2), "  0%");
        assert_eq!(ratio(0, 0), "  0%");
        // 100,000 random bytes that deflate to 100,020 (and 12 more for
        // ZipCrypto's header): Info-ZIP says 0%.
        assert_eq!(ratio(100_000, 100_020), "  0%");
        assert_eq!(ratio(1000, 1010), " -1%");
        // zipinfo's totals line, from `unzip -Z` on an archive of these.
        assert_eq!(permille(208_917, 145_029), 306);
        assert_eq!(permille(100, 110), -100);
    }

    #[test]
    fn control_characters_are_made_visible() {
        assert_eq!(printable_name("plain/ü.txt"), "plain/ü.txt");
        assert!(matches!(
            printable_name("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(printable_name("a\nb"), "a^Jb");
        assert_eq!(printable_name("\r\u{1b}[2J\t"), "^M^[[2J^I");
        assert_eq!(printable_name("\0\u{7f}"), "^@^?");
        assert_eq!(printable_name("x\u{9b}31m"), "x\\u{9b}31m");
        // Nothing printed contains a control character any more.
        let all: String = (0u32..0x200).filter_map(char::from_u32).collect();
        assert!(!printable_name(&all).chars().any(char::is_control));
    }

    #[test]
    fn listing_times_are_utc_minutes() {
        assert_eq!(listing_time(1_582_983_462), "2020-02-29 13:37");
    }
}
