//! What Info-ZIP's unzip prints while it passes entries through without
//! writing files: `-p` (the data alone), `-c` (each entry's data under its
//! `inflating:` line) and `-t` (a `testing: NAME   OK` line for each entry
//! that passed its checks, and a last line for the archive). [`Passing`]
//! is the `sink` of [`read_archive_data`](crate::read_archive_data) and
//! [`read_stream_data`](crate::read_stream_data).
//!
//! ```
//! use zipstream::extract::passing::{Pass, Passing};
//! use zipstream::{EntryOptions, ExtractOptions, ZipArchive, ZipWriter, read_archive_data};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut zip = ZipWriter::new(Vec::new());
//! zip.add_bytes(EntryOptions::file("a.txt"), b"hello")?;
//! let mut archive = ZipArchive::new(std::io::Cursor::new(zip.finish()?))?;
//!
//! let mut out = Vec::new();
//! let settings = Pass { test: true, ..Pass::default() };
//! settings.header("a.zip", &mut out)?;
//! let mut pass = Passing::new(settings);
//! let res = read_archive_data(&mut archive, &ExtractOptions::default(), &|_| true, &mut |e, b| {
//!     pass.piece(e, b, &mut out)
//! });
//! let tested = pass.check(res)??;
//! settings.footer("a.zip", false, tested, &mut out)?;
//! assert_eq!(
//!     String::from_utf8(out)?,
//!     "Archive:  a.zip\n    testing: a.txt                    OK\n\
//!      No errors detected in compressed data of a.zip.\n"
//! );
//! # Ok(())
//! # }
//! ```

use std::io::{self, Write};

use super::lines::pad;
use crate::entry::{Entry, EntryKind};
use crate::error::{Error, Result};
use crate::listing::printable_name;
use crate::names::Lowering;

/// What is passed through, and how much is said.
#[derive(Debug, Clone, Copy, Default)]
pub struct Pass {
    /// `-p`: the entries' data.
    pub pipe: bool,
    /// `-c`: the entries' data, each under its `inflating:` line.
    pub to_screen: bool,
    /// `-t`: a line for each entry that passed its checks.
    pub test: bool,
    /// `-q` (1): only `-t`'s last line; `-qq` (2): nothing said.
    pub quiet: u8,
    /// `-L`: the names shown lowered as the files would be named.
    pub lowering: Lowering,
}

impl Pass {
    /// `-t`'s and `-c`'s first line, `Archive:  NAME` (not under `-q`);
    /// `heading` is the archive's printable name, with its comment if any.
    pub fn header(&self, heading: &str, out: &mut impl Write) -> io::Result<()> {
        if (self.test || self.to_screen) && self.quiet == 0 {
            writeln!(out, "Archive:  {heading}")?;
        }
        Ok(())
    }

    /// `-t`'s last line (not under `-qq`) for the archive named `name`,
    /// counting the `tested` entries when MEMBER or `-x` chose some
    /// (`selected`).
    pub fn footer(
        &self,
        name: &str,
        selected: bool,
        tested: u64,
        out: &mut impl Write,
    ) -> io::Result<()> {
        if !self.test || self.quiet >= 2 {
            return Ok(());
        }
        if !selected {
            writeln!(out, "No errors detected in compressed data of {name}.")
        } else {
            let files = if tested == 1 { "file" } else { "files" };
            writeln!(
                out,
                "No errors detected in {name} for the {tested} {files} tested."
            )
        }
    }
}

/// Where `-p`, `-c` and `-t` are in the entries they pass through, and
/// the first failure to write the output (told apart from reading the
/// archive: `-p > /dev/full` is a failed write).
#[derive(Debug)]
pub struct Passing {
    pass: Pass,
    /// Inside an entry whose `-c` header is printed.
    mid: bool,
    /// Writing the output failed with this.
    write_failed: Option<io::Error>,
    /// Entries passed through whole (and so checked).
    entries: u64,
}

impl Passing {
    /// Nothing passed yet.
    pub fn new(pass: Pass) -> Passing {
        Passing {
            pass,
            mid: false,
            write_failed: None,
            entries: 0,
        }
    }

    /// A piece of an entry's data: to `out` under `-p` and `-c` (`-c`
    /// heads each entry with Info-ZIP's `inflating:` line and ends it with
    /// a line end, not under `-q`); under `-t`, the end of an entry that
    /// passed its checks (an empty piece) is Info-ZIP's `testing:` line.
    /// A failed write stops the run, and is kept for [`Passing::check`].
    pub fn piece(&mut self, e: &Entry, b: &[u8], out: &mut impl Write) -> Result<()> {
        if b.is_empty() {
            self.entries += 1;
        }
        if let Err(err) = self.write(e, b, out) {
            let kind = err.kind();
            self.write_failed = Some(err);
            return Err(Error::Io(io::Error::from(kind)));
        }
        Ok(())
    }

    fn write(&mut self, e: &Entry, b: &[u8], out: &mut impl Write) -> io::Result<()> {
        let p = self.pass;
        let shown = || printable_name(&p.lowering.shown(e)).into_owned();
        let headed = p.to_screen && p.quiet == 0;
        if headed && !self.mid {
            self.mid = true;
            let verb = if matches!(e.method, 8 | 9) {
                "  inflating"
            } else {
                " extracting"
            };
            writeln!(out, "{verb}: {}  ", pad(&shown(), 22))?;
        }
        if (p.pipe || p.to_screen) && e.kind() == EntryKind::File {
            out.write_all(b)?;
        }
        if b.is_empty() && headed {
            self.mid = false;
            writeln!(out)?;
        }
        if p.test && p.quiet == 0 && b.is_empty() {
            writeln!(out, "    testing: {}   OK", pad(&shown(), 22))?;
        }
        Ok(())
    }

    /// The outcome of a run through the entries: the failed write to the
    /// output if there was one (the outer error), else the run's own
    /// outcome, with how many entries passed whole.
    pub fn check<T>(self, res: Result<T>) -> io::Result<Result<u64>> {
        if let Some(err) = self.write_failed {
            return Err(err);
        }
        Ok(res.map(|_| self.entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EntryOptions, ExtractOptions, ZipArchive, ZipWriter, read_archive_data};

    /// An archive of a stored file, a deflated one, and a folder.
    fn archive() -> ZipArchive<io::Cursor<Vec<u8>>> {
        let mut w = ZipWriter::new(Vec::new());
        w.add_bytes(EntryOptions::file("S.TXT").made_on_dos().level(0), b"s")
            .unwrap();
        w.add_directory(EntryOptions::directory("d")).unwrap();
        w.add_bytes(EntryOptions::file("d/z"), b"zz").unwrap();
        ZipArchive::new(io::Cursor::new(w.finish().unwrap())).unwrap()
    }

    fn run(pass: Pass, out: &mut impl Write) -> io::Result<Result<u64>> {
        let mut p = Passing::new(pass);
        let res = read_archive_data(
            &mut archive(),
            &ExtractOptions::default(),
            &|_| true,
            &mut |e, b| p.piece(e, b, out),
        );
        p.check(res)
    }

    #[test]
    fn c_heads_each_file_as_info_zip_unzip_does_and_p_gives_the_data_alone() {
        if !perfkit_testkit::interop::have("unzip", "-v", "apt-get install unzip") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.zip"),
            archive().into_inner().into_inner(),
        )
        .unwrap();
        // The oracle: Info-ZIP unzip's -c, -L lowering the MS-DOS name.
        let mut unzip = std::process::Command::new("unzip");
        unzip.args(["-c", "-L", "a.zip"]).current_dir(dir.path());
        let theirs = perfkit_testkit::interop::ok(&mut unzip).stdout;
        let c = Pass {
            to_screen: true,
            lowering: Lowering::UpperCaseSystems,
            ..Pass::default()
        };
        let mut ours = Vec::new();
        c.header("a.zip", &mut ours).unwrap();
        assert_eq!(run(c, &mut ours).unwrap().unwrap(), 3);
        assert_eq!(
            String::from_utf8(ours).unwrap(),
            String::from_utf8(theirs).unwrap()
        );
        let mut out = Vec::new();
        let p = Pass {
            pipe: true,
            ..Pass::default()
        };
        run(p, &mut out).unwrap().unwrap();
        assert_eq!(out, b"szz");
    }

    #[test]
    fn a_failed_write_is_told_apart_from_the_archive() {
        let p = Pass {
            pipe: true,
            ..Pass::default()
        };
        let mut full = io::Cursor::new([0u8; 0]);
        let err = run(p, &mut full).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WriteZero);
    }
}
