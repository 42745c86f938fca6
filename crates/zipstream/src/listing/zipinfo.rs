//! zipinfo's listings (unzip's `-Z`) line for line: `-1` and `-2`
//! (names), `-s` (the default), `-m` (with the compression ratio) and `-l`
//! (with the compressed size), the header (`-h`) and the totals (`-t`).
//! Times are UTC; zipinfo prints local time, so the two agree under
//! `TZ=UTC`.

use std::io::{self, Write};

use super::{permille, printable_name, stored_size};
use crate::Entry;

/// A zipinfo option letter this listing does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("zipinfo option -{0} is not supported (1, 2, s, m, l, h and t are)")]
pub struct UnsupportedOption(pub char);

/// How each entry is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `-1`: names alone, never a header or totals.
    Names,
    /// `-2`: names alone, the header and totals only when asked for.
    NamesWithExtras,
    /// `-s`: permissions, version, host, size, flags, method, time, name.
    Short,
    /// `-m`: `-s` with the compression ratio.
    Medium,
    /// `-l`: `-s` with the compressed size.
    Long,
}

/// What zipinfo (`unzip -Z`) was asked to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zipinfo {
    /// `None`: only `-h`/`-t` were given, so no entry lines.
    format: Option<Format>,
    header: bool,
    totals: bool,
}

impl Zipinfo {
    /// Reads zipinfo's option letters as given after `-Z` (`1`, `2`, `s`,
    /// `m`, `l`, `h`, `t`, in any order); with none, `-s` and both the
    /// header and the totals.
    pub fn parse(letters: &str) -> Result<Zipinfo, UnsupportedOption> {
        let mut format = None;
        let (mut header, mut totals) = (false, false);
        for c in letters.chars() {
            match c {
                '1' => format = Some(Format::Names),
                '2' => format = Some(Format::NamesWithExtras),
                's' => format = Some(Format::Short),
                'm' => format = Some(Format::Medium),
                'l' => format = Some(Format::Long),
                'h' => header = true,
                't' => totals = true,
                _ => return Err(UnsupportedOption(c)),
            }
        }
        if format.is_none() && !header && !totals {
            format = Some(Format::Short);
        }
        Ok(Zipinfo {
            format,
            header,
            totals,
        })
    }

    /// Whether the header and the totals are printed, given whether
    /// members were named: `-s`, `-m` and `-l` print both for a whole
    /// archive, as asked otherwise; `-1` neither.
    fn extras(&self, members: bool) -> (bool, bool) {
        match self.format {
            Some(Format::Names) => (false, false),
            Some(Format::Short | Format::Medium | Format::Long) if !members => (true, true),
            _ => (self.header, self.totals),
        }
    }

    /// Lists `entries` (those chosen) of the archive named `archive`
    /// (printable), `size` bytes long and holding `count` entries in all;
    /// `members`: the command named some.
    pub fn list<'a>(
        &self,
        archive: &str,
        size: u64,
        count: usize,
        members: bool,
        entries: impl Iterator<Item = &'a Entry>,
        out: &mut impl Write,
    ) -> io::Result<()> {
        let (header, totals) = self.extras(members);
        if header {
            writeln!(out, "Archive:  {archive}")?;
            writeln!(
                out,
                "Zip file size: {size} bytes, number of entries: {count}"
            )?;
        }
        let (mut files, mut plain, mut packed) = (0u64, 0u64, 0u64);
        for e in entries {
            files += 1;
            // An archive's sizes may add up past u64::MAX: the totals
            // wrap, as zipinfo's unsigned ones do.
            plain = plain.wrapping_add(e.size);
            packed = packed.wrapping_add(stored_size(e));
            if let Some(f) = self.format {
                writeln!(out, "{}", line(f, e))?;
            }
        }
        if totals {
            let r = permille(plain, packed);
            writeln!(
                out,
                "{files} file{}, {plain} bytes uncompressed, {packed} bytes compressed:  {}{}.{}%",
                if files == 1 { "" } else { "s" },
                if r < 0 { "-" } else { "" },
                r.unsigned_abs() / 10,
                r.unsigned_abs() % 10
            )?;
        }
        Ok(())
    }
}

/// One entry's line in format `f` (not `Names*`, which are the name).
fn line(f: Format, e: &Entry) -> String {
    let name = printable_name(&e.name);
    if matches!(f, Format::Names | Format::NamesWithExtras) {
        return name.into_owned();
    }
    let host = usize::from(e.made_by >> 8);
    let version = e.made_by & 0xff;
    let text = e.internal_attrs & 1 != 0;
    let flag = match (e.encrypted, text) {
        (true, true) => 'T',
        (true, false) => 'B',
        (false, true) => 't',
        (false, false) => 'b',
    };
    let descriptor = e.flags & 8 != 0;
    // A local-only "UX" extra field counts on Unix, HPFS and NTFS hosts.
    let extra = e.extra_len > 0 || (e.external_attrs & 0x8000 != 0 && matches!(host, 3 | 6 | 11));
    let extra = match (extra, descriptor) {
        (true, true) => 'X',
        (true, false) => 'x',
        (false, true) => 'l',
        (false, false) => '-',
    };
    let middle = match f {
        Format::Medium => format!("{:3}%", (permille(e.size, stored_size(e)) + 5) / 10),
        Format::Long => format!(" {:8}", e.compressed_size),
        _ => String::new(),
    };
    format!(
        "{:<12}{}.{} {} {:8} {flag}{extra}{middle} {} {} {name}",
        attributes(e, host),
        version / 10,
        version % 10,
        HOSTS.get(host).copied().unwrap_or("???"),
        e.size,
        method(e),
        time(e.mtime),
    )
}

/// zipinfo's three-letter host names, by "version made by" host number.
const HOSTS: [&str; 32] = [
    "fat", "ami", "vms", "unx", "cms", "atr", "hpf", "mac", "zzz", "cpm", "t20", "ntf", "qds",
    "aco", "vft", "mvs", "be ", "nsk", "ths", "osx", "???", "???", "???", "???", "???", "???",
    "???", "???", "???", "???", "ath", "???",
];

/// The permissions column: MS-DOS attributes for the FAT family (unless
/// a FAT entry's high bits hold a Unix mode, as Info-ZIP's zip writes on
/// such systems), else a Unix mode string.
fn attributes(e: &Entry, host: usize) -> String {
    let xattr = e.external_attrs >> 16;
    let dos = e.external_attrs & 0xff;
    let fat_family = matches!(host, 0 | 4 | 6 | 11 | 13 | 15);
    let unix_in_fat =
        host == 0 && xattr & 0o700 == 0o400 | (u32::from(dos & 1 == 0) << 7) | ((dos & 0x10) << 2);
    if fat_family && !unix_in_fat {
        let mut a: Vec<char> = ".r.-...".chars().collect();
        a[2] = if dos & 0x01 != 0 { '-' } else { 'w' };
        a[5] = if dos & 0x02 != 0 { 'h' } else { '-' };
        a[6] = if dos & 0x04 != 0 { 's' } else { '-' };
        a[4] = if dos & 0x20 != 0 { 'a' } else { '-' };
        if dos & 0x10 != 0 {
            a[0] = 'd';
            a[3] = 'x';
        } else {
            a[0] = '-';
        }
        if dos & 0x08 != 0 && dos & 0x10 == 0 {
            a[0] = 'V';
        } else if let Some((_, ext)) = e.name.rsplit_once('.') {
            let ext = ext.get(..3).unwrap_or(ext).to_ascii_lowercase();
            if ["com", "exe", "btm", "cmd", "bat"].contains(&ext.as_str()) {
                a[3] = 'x';
            }
        }
        return a.into_iter().collect();
    }
    let kind = match xattr & 0o170000 {
        0o040000 => 'd',
        0o100000 => '-',
        0o120000 => 'l',
        0o060000 => 'b',
        0o020000 => 'c',
        0o010000 => 'p',
        0o140000 => 's',
        _ => '?',
    };
    let bit = |m: u32, c: char| if xattr & m != 0 { c } else { '-' };
    let special = |x: u32, s: u32, on: char, off: char| match (xattr & x != 0, xattr & s != 0) {
        (true, true) => on,
        (true, false) => 'x',
        (false, true) => off,
        (false, false) => '-',
    };
    [
        kind,
        bit(0o400, 'r'),
        bit(0o200, 'w'),
        special(0o100, 0o4000, 's', 'S'),
        bit(0o040, 'r'),
        bit(0o020, 'w'),
        special(0o010, 0o2000, 's', 'S'),
        bit(0o004, 'r'),
        bit(0o002, 'w'),
        special(0o001, 0o1000, 't', 'T'),
    ]
    .into_iter()
    .collect()
}

/// zipinfo's four-letter method: `stor`, `defN` (with deflate's level
/// class: N normal, X maximum, F fast, S super fast), `u093` for one it
/// does not know (zstd; AES's 99).
fn method(e: &Entry) -> String {
    let method = if e.aes.is_some() { 99 } else { e.method };
    let class = ['N', 'X', 'F', 'S'][usize::from((e.flags >> 1) & 3)];
    match method {
        0 => "stor".into(),
        1 => "shrk".into(),
        2..=5 => format!("re:{}", method - 1),
        6 => format!(
            "i{}:{}",
            if e.flags & 2 != 0 { '8' } else { '4' },
            if e.flags & 4 != 0 { '3' } else { '2' }
        ),
        7 => "tokn".into(),
        8 => format!("def{class}"),
        9 => format!("d64{class}"),
        10 => "dcli".into(),
        12 => "bzp2".into(),
        14 => "lzma".into(),
        18 => "ters".into(),
        19 => "lz77".into(),
        97 => "wavp".into(),
        98 => "ppmd".into(),
        m => format!("u{m:03}"),
    }
}

/// `80-Jan-01 22:51`: two-digit year, month, day, hours and minutes (UTC).
fn time(unix: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = unix.rem_euclid(86_400);
    let (y, m, d) = civil::civil_from_days(unix.div_euclid(86_400));
    format!(
        "{:02}-{}-{d:02} {:02}:{:02}",
        y.rem_euclid(100),
        MONTHS[(m as usize).clamp(1, 12) - 1],
        secs / 3600,
        secs % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_letters_read_as_zipinfo_reads_them() {
        let z = |s: &str| Zipinfo::parse(s).unwrap();
        assert_eq!(z("").format, Some(Format::Short));
        assert_eq!(z("1").extras(false), (false, false));
        assert_eq!(z("2t").extras(false), (false, true));
        assert_eq!(z("m").extras(false), (true, true));
        assert_eq!(z("m").extras(true), (false, false));
        assert_eq!(z("h").format, None);
        assert_eq!(
            Zipinfo::parse("v").unwrap_err().to_string(),
            "zipinfo option -v is not supported (1, 2, s, m, l, h and t are)"
        );
    }

    #[test]
    fn times_print_as_zipinfo_prints_them() {
        assert_eq!(time(1_795_696_260), "26-Nov-26 12:31");
        assert_eq!(time(315_532_800), "80-Jan-01 00:00");
    }
}
