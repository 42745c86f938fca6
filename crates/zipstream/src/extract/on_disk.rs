//! Info-ZIP unzip's choices against what is already on disk: `-u` and
//! `-f` extract only what is newer than the file there ([`Freshening`]),
//! and `-B` backs up a file in the way before replacing it
//! ([`backup_hook`]).
//!
//! ```
//! use zipstream::extract::on_disk::Freshening;
//! use zipstream::{EntryOptions, ZipArchive, ZipWriter};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dest = tempfile::tempdir()?;
//! std::fs::write(dest.path().join("old.txt"), "on disk")?;
//! let mut zip = ZipWriter::new(Vec::new());
//! zip.add_bytes(EntryOptions::file("old.txt").mtime(0), b"older")?;
//! zip.add_bytes(EntryOptions::file("new.txt").mtime(0), b"not there")?;
//! let archive = ZipArchive::new(std::io::Cursor::new(zip.finish()?))?;
//! let [old, new] = archive.entries() else { unreachable!() };
//!
//! let freshen = Freshening { freshen: true, ..Freshening::default() };
//! assert!(!freshen.wants(old, dest.path()) && !freshen.wants(new, dest.path()));
//! let update = Freshening { update: true, ..Freshening::default() };
//! assert!(!update.wants(old, dest.path()) && update.wants(new, dest.path()));
//! # Ok(())
//! # }
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::lines::dir_prefix;
use super::{Existing, ExistsHook, safe_path};
use crate::entry::{Entry, EntryKind};
use crate::gather::mtime;

/// Unzip's `-u` and `-f`, and `-j`, which decides where an entry's file
/// is on disk.
#[derive(Debug, Clone, Copy, Default)]
pub struct Freshening {
    /// `-u`: extract files newer than those on disk, and new ones.
    pub update: bool,
    /// `-f`: extract only files newer than those on disk.
    pub freshen: bool,
    /// `-j`: each file goes into the destination itself.
    pub junk_paths: bool,
}

impl Freshening {
    /// Whether entry `e` is to be extracted into `dir` over what is on
    /// disk: with `-f` only over an older file, with `-u` over an older
    /// file or where there is none. Always, without them.
    pub fn wants(&self, e: &Entry, dir: &Path) -> bool {
        if !(self.update || self.freshen) || e.kind() == EntryKind::Directory {
            // Info-ZIP's -f leaves folders alone; -u makes missing ones.
            return !self.freshen || e.kind() != EntryKind::Directory;
        }
        let Ok(rel) = safe_path(&e.name) else {
            // Extraction refuses it, with its reason.
            return true;
        };
        let rel = if self.junk_paths {
            PathBuf::from(rel.file_name().unwrap_or_default())
        } else {
            rel
        };
        match fs::symlink_metadata(dir.join(rel)) {
            Ok(m) => mtime(&m) < e.mtime,
            Err(_) => self.update,
        }
    }
}

/// `-B`: a file in the way in `dir` is renamed to NAME~ (NAME~1,
/// NAME~2... when that is taken; with `overwrite`, `-o`, an older NAME~ is
/// replaced instead), as Info-ZIP backs it up, and then replaced. A backup
/// that cannot be made keeps the file, and is told to `failed` with the
/// file's name as the extraction's lines show it and why. `dir` is the
/// `-d` destination as the user wrote it, or the empty path without one
/// (the current directory), as for [`lines`](super::lines).
pub fn backup_hook(
    dir: &Path,
    overwrite: bool,
    failed: impl Fn(&str, &io::Error) + Send + Sync + 'static,
) -> ExistsHook {
    let dir = dir.to_path_buf();
    let prefix = dir_prefix(&dir);
    ExistsHook::new(move |rel| {
        let at = dir.join(rel);
        let mut name = at.as_os_str().to_os_string();
        name.push("~");
        let mut backup = PathBuf::from(&name);
        let mut k = 1u32;
        while !overwrite && fs::symlink_metadata(&backup).is_ok() && k < 100_000 {
            let mut n = name.clone();
            n.push(k.to_string());
            backup = PathBuf::from(n);
            k += 1;
        }
        match fs::rename(&at, &backup) {
            Ok(()) => Existing::Replace,
            Err(e) => {
                failed(&format!("{prefix}{}", rel.display()), &e);
                Existing::Keep
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backups_take_the_first_free_name_or_replace_under_o() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("a"), "1").unwrap();
        fs::write(d.join("a~"), "0").unwrap();
        let hook = backup_hook(d, false, |_, _| panic!("no failure"));
        assert_eq!(hook.answer(Path::new("a")), Existing::Replace);
        assert_eq!(fs::read_to_string(d.join("a~1")).unwrap(), "1");
        assert_eq!(fs::read_to_string(d.join("a~")).unwrap(), "0");
        fs::write(d.join("a"), "2").unwrap();
        let hook = backup_hook(d, true, |_, _| panic!("no failure"));
        assert_eq!(hook.answer(Path::new("a")), Existing::Replace);
        assert_eq!(fs::read_to_string(d.join("a~")).unwrap(), "2");
        assert!(!d.join("a").exists());
    }

    /// The file is kept and named as the extraction's lines name it: the
    /// `-d` folder as written, then the entry's path; nothing before it
    /// without `-d`.
    #[test]
    fn a_backup_that_cannot_be_made_keeps_the_file_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        for (d, shown) in [
            (
                dir.path().to_path_buf(),
                format!("{}/sub/gone", dir.path().display()),
            ),
            (PathBuf::from("."), "./sub/gone".to_string()),
            (PathBuf::new(), "sub/gone".to_string()),
        ] {
            let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let t = told.clone();
            let hook = backup_hook(&d, false, move |name, _| {
                t.lock().unwrap().push(name.to_string())
            });
            // Nothing there to rename: the backup fails.
            assert_eq!(hook.answer(Path::new("sub/gone")), Existing::Keep);
            assert_eq!(*told.lock().unwrap(), [shown]);
        }
    }
}
