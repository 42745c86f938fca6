//! `-m`: the files and folders stored, removed once the archive is on
//! disk, unless they changed after they were listed.

use std::fs;
use std::path::Path;

use anyhow::{Context, Result};

use super::items::Item;

/// `-m`: deletes what was stored, once the archive is on disk: files and
/// links first, then the directories stored, deepest first, where they
/// are empty now (Info-ZIP leaves a directory that still holds something).
/// A file or link that changed since it was listed (before it was read) is
/// kept, with a warning: what the archive holds is not what it is now
/// (Info-ZIP 3.0 deletes it, and the change is lost).
pub(super) fn remove_originals(items: &[Item]) -> Result<()> {
    let mut dirs = Vec::new();
    for i in items {
        if i.path.as_os_str() == "-" {
            continue;
        }
        if i.meta.is_dir() {
            dirs.push(&i.path);
            continue;
        }
        if !unchanged(&i.path, &i.meta) {
            eprintln!(
                "perfkit zip: -m: kept {}: it changed after it was listed, so the archive may \
                 hold an older copy",
                i.path.display()
            );
            continue;
        }
        fs::remove_file(&i.path)
            .with_context(|| format!("-m: removing {} (it is in the archive)", i.path.display()))?;
    }
    dirs.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for d in dirs {
        let _ = fs::remove_dir(d);
    }
    Ok(())
}

/// Whether `path` is still what `listed` says: the same inode on the same
/// device, with the same size, modification and change times to the
/// nanosecond. Anything that wrote to it, replaced it or changed its
/// attributes since moves one of them. `listed` is what the entry stored:
/// a link's own `lstat` under `-y`, otherwise what it named (`stat`), so
/// a followed link is looked at through the link again; removing `path`
/// then removes the link and leaves what it named, as Info-ZIP does.
fn unchanged(path: &Path, listed: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let now = if listed.file_type().is_symlink() {
        fs::symlink_metadata(path)
    } else {
        fs::metadata(path)
    };
    let Ok(now) = now else {
        return false;
    };
    (now.dev(), now.ino(), now.len()) == (listed.dev(), listed.ino(), listed.len())
        && (now.mtime(), now.mtime_nsec()) == (listed.mtime(), listed.mtime_nsec())
        && (now.ctime(), now.ctime_nsec()) == (listed.ctime(), listed.ctime_nsec())
}
