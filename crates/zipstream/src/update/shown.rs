//! Info-ZIP zip's `-sf` lists, which show what a run would do and write
//! nothing: `Archive contains:` (an archive alone), `Would Add/Update:`
//! and `Would Delete:` (with `-d`), each with its total. Sizes add up
//! with wrapping, as Info-ZIP's unsigned totals do (a hostile directory
//! may claim sizes past `u64::MAX`).

use std::io::{self, Write};

use super::Candidate;
use crate::entry::Entry;
use crate::listing::printable_name;

/// The uncompressed sizes of the `entries` at `indexes`, added with
/// wrapping as Info-ZIP adds them. The indexes are the entries' own (as
/// [`deletion`](super::deletion) gives them); one past the end panics.
pub fn total_size(entries: &[Entry], indexes: &[usize]) -> u64 {
    indexes
        .iter()
        .fold(0u64, |sum, &i| sum.wrapping_add(entries[i].size))
}

/// `zip -sf ARCHIVE`: what the archive holds.
pub fn write_contains(entries: &[Entry], out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "Archive contains:")?;
    for e in entries {
        writeln!(out, "  {}", printable_name(&e.name))?;
    }
    let all: Vec<usize> = (0..entries.len()).collect();
    let bytes = total_size(entries, &all);
    writeln!(out, "Total {} entries ({bytes} bytes)", entries.len())
}

/// `zip -sf -d`: the entries at `deleted` that would go (indexes into
/// `entries`, as [`total_size`] takes them).
pub fn write_would_delete(
    entries: &[Entry],
    deleted: &[usize],
    out: &mut impl Write,
) -> io::Result<()> {
    writeln!(out, "Would Delete:")?;
    for &i in deleted {
        writeln!(out, "  {}", printable_name(&entries[i].name))?;
    }
    let bytes = total_size(entries, deleted);
    writeln!(out, "Total {} entries ({bytes} bytes)", deleted.len())
}

/// `zip -sf`: the items that would be added or updated (a folder with
/// its `/`), and the files' total size.
pub fn write_would_add<T: Candidate>(chosen: &[&T], out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "Would Add/Update:")?;
    let mut total = 0u64;
    for i in chosen {
        let name = if i.is_dir() {
            format!("{}/", i.name())
        } else {
            i.name().to_string()
        };
        writeln!(out, "  {}", printable_name(&name))?;
        total = total.wrapping_add(i.size().unwrap_or(0));
    }
    writeln!(out, "Total {} entries ({total} bytes)", chosen.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfkit_testkit::interop;
    use std::process::Command;

    #[test]
    fn the_lists_are_info_zips() {
        if !interop::have("zip", "-v", "apt-get install zip") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // Deflated, so that a total of compressed sizes would show.
        std::fs::write(d.join("a.txt"), "hello\n".repeat(100)).unwrap();
        std::fs::create_dir(d.join("d")).unwrap();
        std::fs::write(d.join("d/b"), "x\n").unwrap();
        let zip = |args: &[&str]| {
            let mut c = Command::new("zip");
            c.args(args).current_dir(d);
            String::from_utf8(interop::ok(&mut c).stdout).unwrap()
        };
        zip(&["-qr", "t.zip", "a.txt", "d"]);
        let bytes = std::fs::read(d.join("t.zip")).unwrap();
        let a = crate::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut ours = Vec::new();
        write_contains(a.entries(), &mut ours).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), zip(&["-sf", "t.zip"]));
        let mut ours = Vec::new();
        write_would_delete(a.entries(), &[0, 2], &mut ours).unwrap();
        let theirs = zip(&["-sf", "t.zip", "-d", "a.txt", "d/b"]);
        assert_eq!(String::from_utf8(ours).unwrap(), theirs);
    }

    #[test]
    fn totals_wrap_as_info_zips_unsigned_ones() {
        let mut w = crate::ZipWriter::new(Vec::new());
        w.add_bytes(crate::EntryOptions::file("a"), b"ab").unwrap();
        let bytes = w.finish().unwrap();
        let a = crate::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
        let mut entries = vec![a.entries()[0].clone(), a.entries()[0].clone()];
        entries[0].size = u64::MAX;
        assert_eq!(total_size(&entries, &[0, 1]), 1);
    }
}
