//! Entry names as Info-ZIP's zip makes them from paths: relative and
//! `/`-separated ([`archive_name`]), and `zip -k`'s DOS names
//! ([`dos_name`]); and as its unzip `-L` lowers them ([`Lowering`]).
//!
//! ```
//! use std::path::Path;
//! use zipstream::names::{archive_name, dos_name};
//!
//! assert_eq!(archive_name(Path::new("/abs/../x/./y")), "abs/x/y");
//! assert_eq!(dos_name("docs/a b+c.txt"), "DOCS/ABC.TXT");
//! ```

use std::path::{Component, Path};

use crate::entry::Entry;
use crate::extract::NameHook;

/// The hosts of "version made by" whose names Info-ZIP's `unzip -L`
/// lowers: systems that keep names in upper case only (MS-DOS's FAT,
/// OpenVMS, VM/CMS, CP/M, TOPS-20, MVS, Tandem).
const UPPER_CASE_HOSTS: &[u16] = &[0, 2, 4, 9, 10, 15, 17];

/// Which entry names Info-ZIP's `unzip -L` writes (and shows) in lower
/// case: ASCII letters only, as it lowers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lowering {
    /// None (no `-L`).
    #[default]
    None,
    /// `-L`: the names of entries made on a system that keeps names in
    /// upper case only.
    UpperCaseSystems,
    /// `-LL`: every name.
    Every,
}

impl Lowering {
    /// The lowering `-L` given `count` times asks for.
    pub fn from_count(count: u8) -> Lowering {
        match count {
            0 => Lowering::None,
            1 => Lowering::UpperCaseSystems,
            _ => Lowering::Every,
        }
    }

    /// `e`'s name in lower case, if this lowers it.
    pub fn lowered(self, e: &Entry) -> Option<String> {
        let lowers = match self {
            Lowering::None => false,
            Lowering::UpperCaseSystems => UPPER_CASE_HOSTS.contains(&(e.made_by >> 8)),
            Lowering::Every => true,
        };
        lowers.then(|| e.name.to_ascii_lowercase())
    }

    /// The name shown for `e` (by `unzip -c` and `-t`, say): lowered as
    /// its file would be named.
    pub fn shown(self, e: &Entry) -> String {
        self.lowered(e).unwrap_or_else(|| e.name.clone())
    }

    /// The hook that renames extracted files so, for
    /// [`ExtractOptions::rename`](crate::ExtractOptions); none when
    /// nothing is lowered.
    pub fn hook(self) -> Option<NameHook> {
        (self != Lowering::None).then(|| NameHook::new(move |e| self.lowered(e)))
    }
}

/// The archive name of a path: relative, `/`-separated, without leading
/// `/`, `./` or `../` (as Info-ZIP stores them).
pub fn archive_name(p: &Path) -> String {
    let parts: Vec<String> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

/// `name` as Info-ZIP's `zip -k` makes it a DOS name: in each part, the
/// characters DOS refuses (space `:"*+,;<=>?[]|`) and any leading dot
/// dropped, ASCII letters in upper case, at most 8 bytes before the first
/// dot and 3 after it, and nothing after a second dot (`a b+c.txt` is
/// `ABC.TXT`, `x.toolong` `X.TOO`, `a.b.c` `A.B`, `.hidden` `HIDDEN`).
pub fn dos_name(name: &str) -> String {
    name.split('/').map(dos_part).collect::<Vec<_>>().join("/")
}

/// One part of [`dos_name`]: a file or folder name.
fn dos_part(part: &str) -> String {
    const REFUSED: &str = " :\"*+,;<=>?[]|";
    let mut out = String::new();
    let (mut extension, mut used) = (false, 0usize);
    for c in part.chars() {
        if REFUSED.contains(c) {
            continue;
        }
        if c == '.' {
            if out.is_empty() {
                continue;
            }
            if extension {
                break;
            }
            out.push('.');
            (extension, used) = (true, 0);
            continue;
        }
        // Bytes count, as in Info-ZIP; a character that does not fit
        // whole is left out rather than cut.
        let room = if extension { 3 } else { 8 };
        if used + c.len_utf8() <= room {
            out.push(c.to_ascii_uppercase());
            used += c.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowering_takes_upper_case_systems_or_every_name() {
        // Info-ZIP unzip 6.00's -L lowers the names of `zip -k`'s entries
        // (made on MS-DOS), not those made on Unix; -LL lowers both.
        let mut w = crate::ZipWriter::new(Vec::new());
        let dos = crate::EntryOptions::file("DOS/ÄB.TXT").made_on_dos();
        w.add_bytes(dos, b"").unwrap();
        w.add_bytes(crate::EntryOptions::file("Unix/AB.txt"), b"")
            .unwrap();
        let bytes = w.finish().unwrap();
        let a = crate::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let [dos, unix] = a.entries() else {
            panic!("two entries")
        };
        let l = Lowering::from_count(1);
        assert_eq!(l.lowered(dos).as_deref(), Some("dos/Äb.txt"));
        assert_eq!(
            (l.lowered(unix), l.shown(unix)),
            (None, "Unix/AB.txt".into())
        );
        let every = Lowering::from_count(2);
        assert_eq!(every.shown(unix), "unix/ab.txt");
        assert!(Lowering::from_count(0).hook().is_none());
        assert_eq!(Lowering::from_count(0).shown(dos), "DOS/ÄB.TXT");
    }

    #[test]
    fn archive_names_are_relative() {
        assert_eq!(archive_name(Path::new("/abs/../x/./y")), "abs/x/y");
    }

    #[test]
    fn dos_names_are_info_zips() {
        // Info-ZIP zip 3.0's `zip -k -r` of files with these names.
        for (name, dos) in [
            (".hidden", "HIDDEN"),
            ("a.b.c", "A.B"),
            ("a b+c.txt", "ABC.TXT"),
            ("abcdefghijk", "ABCDEFGH"),
            ("x.toolong", "X.TOO"),
            ("lower.Txt", "LOWER.TXT"),
            ("a..b", "A."),
            ("trail.", "TRAIL."),
            ("x;y=z[1].c", "XYZ1.C"),
            ("long directory.name/f", "LONGDIRE.NAM/F"),
            ("d/LongFileName.text", "D/LONGFILE.TEX"),
        ] {
            assert_eq!(dos_name(name), dos, "{name}");
        }
    }
}
