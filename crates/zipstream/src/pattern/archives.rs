//! The archives `unzip NAME` means, as Info-ZIP's unzip finds them: the
//! file NAME, NAME.zip or NAME.ZIP, or, when NAME's last part holds a
//! wildcard and no file has that name, each file of its folder the
//! wildcard matches.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::Pattern;

/// The folder of a wildcard archive name could not be read through.
#[derive(Debug, thiserror::Error)]
#[error("reading the folder {}", folder.display())]
pub struct FolderUnreadable {
    /// The folder.
    pub folder: PathBuf,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// Whether an archive name holds Info-ZIP's wildcards (`*`, `?`, `[`).
pub fn is_wildcard(name: &str) -> bool {
    name.contains(['*', '?', '['])
}

/// The archive `given` names as Info-ZIP's unzip looks for it: the name
/// as it is, then with `.zip`, then with `.ZIP` added; none when there is
/// no such file.
pub fn find_archive(given: &Path) -> Option<PathBuf> {
    if fs::metadata(given).is_ok() {
        return Some(given.to_path_buf());
    }
    for ext in [".zip", ".ZIP"] {
        let mut p = given.as_os_str().to_os_string();
        p.push(ext);
        let p = PathBuf::from(p);
        if fs::metadata(&p).is_ok() {
            return Some(p);
        }
    }
    None
}

/// The files a wildcard archive name (`'*.zip'`, `'dir/a?.zip'`) matches,
/// in name order: its last component is a pattern over the files of its
/// folder (Info-ZIP's unzip expands it itself, when no file has the name
/// as it is). None for a name without a wildcard or a folder that cannot
/// be listed; a shell's `*` does not match hidden files, nor does this.
pub fn archives_matching(given: &Path) -> Result<Vec<PathBuf>, FolderUnreadable> {
    let Some(last) = given.file_name().and_then(|f| f.to_str()) else {
        return Ok(Vec::new());
    };
    if !is_wildcard(last) {
        return Ok(Vec::new());
    }
    let dir = match given.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let pattern = Pattern::new(last);
    let Ok(listing) = fs::read_dir(&dir) else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    for entry in listing {
        let entry = entry.map_err(|source| FolderUnreadable {
            folder: dir.clone(),
            source,
        })?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.starts_with('.') && !last.starts_with('.') {
            continue;
        }
        if pattern.matches(name) && entry.path().is_file() {
            found.push(given.with_file_name(name));
        }
    }
    found.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_found_as_given_then_with_zip_and_wildcards_match_visible_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in ["b.zip", "a.ZIP", ".h.zip", "c.zip.txt"] {
            fs::write(d.join(f), "").unwrap();
        }
        fs::create_dir(d.join("dir.zip")).unwrap();
        assert_eq!(find_archive(&d.join("b")), Some(d.join("b.zip")));
        assert_eq!(find_archive(&d.join("a")), Some(d.join("a.ZIP")));
        assert_eq!(find_archive(&d.join("b.zip")), Some(d.join("b.zip")));
        assert_eq!(find_archive(&d.join("z")), None);
        // As the shell's `*`: hidden files only for a pattern starting
        // with a dot; folders never.
        let any = archives_matching(&d.join("*.zip")).unwrap();
        assert_eq!(any, [d.join("b.zip")]);
        let hidden = archives_matching(&d.join(".*.zip")).unwrap();
        assert_eq!(hidden, [d.join(".h.zip")]);
        assert!(archives_matching(&d.join("b.zip")).unwrap().is_empty());
        assert!(
            archives_matching(&d.join("nowhere/*.zip"))
                .unwrap()
                .is_empty()
        );
        assert!(is_wildcard("[ab].zip") && !is_wildcard("ab.zip"));
    }
}
