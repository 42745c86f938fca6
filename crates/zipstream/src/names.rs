//! Entry names as Info-ZIP's zip makes them from paths: relative and
//! `/`-separated ([`archive_name`]), and `zip -k`'s DOS names
//! ([`dos_name`]).
//!
//! ```
//! use std::path::Path;
//! use zipstream::names::{archive_name, dos_name};
//!
//! assert_eq!(archive_name(Path::new("/abs/../x/./y")), "abs/x/y");
//! assert_eq!(dos_name("docs/a b+c.txt"), "DOCS/ABC.TXT");
//! ```

use std::path::{Component, Path};

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
