//! The inputs a zstd-like file tool codes, found as zstd finds them: the
//! files named and those its file lists name (one a line), each directory
//! expanded into the regular files under it when asked (a symbolic link
//! met on the way is skipped, as zstd skips it), less the files already
//! compressed when asked.
//!
//! ```
//! use std::path::PathBuf;
//! use zstdkit::job::inputs;
//!
//! let dir = std::env::temp_dir().join(format!("zstdkit-inputs-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join("sub"))?;
//! std::fs::write(dir.join("sub/b.txt"), "b")?;
//! std::fs::write(dir.join("a.txt"), "a")?;
//! std::fs::write(dir.join("a.txt.zst"), "")?;
//! let found = inputs::expand(&[dir.clone()], &[], true, true)?;
//! std::fs::remove_dir_all(&dir)?;
//! assert_eq!(found.files, [dir.join("a.txt"), dir.join("sub/b.txt")]);
//! assert!(found.links.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, Metadata};
use std::io::{self, Read};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use crate::whole::WholeFileError;

/// The suffixes zstd counts as compressed already (`--exclude-compressed`).
pub const COMPRESSED: &[&str] = &[
    ".zst", ".tzst", ".gz", ".tgz", ".lzma", ".xz", ".txz", ".lz4", ".tlz4",
];

/// The largest file list read: a list of a million long paths.
pub const MAX_FILELIST: u64 = 128 << 20;

/// The inputs found, and the symbolic links skipped on the way.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Inputs {
    /// The inputs, in order: each named file, or the files under a
    /// directory sorted by name.
    pub files: Vec<PathBuf>,
    /// The symbolic links met under a directory and skipped (zstd warns of
    /// each).
    pub links: Vec<PathBuf>,
}

/// A file list that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("file list {}: {source}", path.display())]
pub struct FilelistError {
    /// The file list.
    pub path: PathBuf,
    /// Why it could not be read.
    #[source]
    pub source: WholeFileError,
}

/// A file a run holds whole (a dictionary, a patch's reference, a training
/// sample, a file list) that could not be read, as a file tool says it:
/// the flag that named the file, the file, why, and for a file too large
/// what the limit is. The I/O error of a file that could not be opened or
/// read is the source, for the caller to word.
#[derive(Debug)]
pub struct HeldWholeError {
    /// The flag that named the file (`-D`, `--patch-from`, `--filelist`).
    pub flag: String,
    /// The file.
    pub path: PathBuf,
    /// What the limit is, said of a file over it.
    pub limit_is: String,
    /// Why only a regular file is read, said of one that is not.
    pub regular_only: &'static str,
    /// Why it was not read.
    pub why: WholeFileError,
}

impl std::fmt::Display for HeldWholeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (flag, name) = (&self.flag, self.path.display());
        match &self.why {
            WholeFileError::Open(_) => write!(f, "{flag} {name}"),
            WholeFileError::Read(_) => write!(f, "{flag} {name}: reading"),
            e @ WholeFileError::NotRegular { .. } => {
                write!(f, "{flag} {name}: {e}; {}", self.regular_only)
            }
            e @ WholeFileError::TooLarge { .. } => {
                write!(f, "{flag} {name}: {e}, {}", self.limit_is)
            }
            e => write!(f, "{flag} {name}: {e}"),
        }
    }
}

impl std::error::Error for HeldWholeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.why {
            WholeFileError::Open(e) | WholeFileError::Read(e) => Some(e),
            _ => None,
        }
    }
}

/// A `--filelist` that could not be read, in those words: 128M at most,
/// a regular file only.
impl From<FilelistError> for HeldWholeError {
    fn from(e: FilelistError) -> HeldWholeError {
        HeldWholeError {
            flag: "--filelist".into(),
            path: e.path,
            limit_is: "128M at most".into(),
            regular_only: "only a regular file is read",
            why: e.source,
        }
    }
}

/// `path`, named by `flag`, read whole ([`crate::whole::read`]): a
/// regular file of at most `limit` bytes (`limit_is` says what the limit
/// is), as a dictionary or a reference is held in memory.
pub fn read_whole(
    flag: &str,
    path: &Path,
    limit: u64,
    limit_is: &str,
) -> Result<Vec<u8>, HeldWholeError> {
    crate::whole::read(path, limit).map_err(|why| HeldWholeError {
        flag: flag.to_owned(),
        path: path.to_owned(),
        limit_is: limit_is.to_owned(),
        regular_only: "it is held in memory whole, so only a regular file is read",
        why,
    })
}

/// The inputs to process: `named`, then the names each of `filelists`
/// gives, each directory expanded into the regular files under it when
/// `recursive` (a symbolic link met on the way is skipped, and listed in
/// [`Inputs::links`]), less those already compressed when
/// `exclude_compressed` ([`COMPRESSED`]). An entry under a directory that
/// cannot be read is kept as an input, so its error is reported like any
/// other input's.
pub fn expand(
    named: &[PathBuf],
    filelists: &[PathBuf],
    recursive: bool,
    exclude_compressed: bool,
) -> Result<Inputs, FilelistError> {
    let mut named = named.to_vec();
    for list in filelists {
        named.extend(filelist(list)?);
    }
    let mut found = Inputs {
        files: Vec::with_capacity(named.len()),
        links: Vec::new(),
    };
    let out = &mut found.files;
    for f in &named {
        if !(recursive && f.is_dir()) {
            out.push(f.clone());
            continue;
        }
        let walk = walkdir::WalkDir::new(f).sort_by_file_name();
        for entry in walk.into_iter() {
            match entry {
                Ok(e) if e.file_type().is_symlink() => found.links.push(e.into_path()),
                Ok(e) if e.file_type().is_dir() => {}
                Ok(e) => out.push(e.into_path()),
                // Unreadable: named as an input, so its error is reported
                // like any other input's.
                Err(e) => out.push(e.path().map(Path::to_path_buf).unwrap_or_else(|| f.clone())),
            }
        }
    }
    if exclude_compressed {
        out.retain(|f| {
            let name = f.as_os_str().to_string_lossy();
            !COMPRESSED.iter().any(|s| name.ends_with(s))
        });
    }
    Ok(found)
}

/// The names the file list `path` gives, one a line as zstd reads them
/// (nothing trimmed but the newline; an empty line names the empty path,
/// which fails as a missing input, as in zstd). Read whole, so only a
/// regular file within [`MAX_FILELIST`] is.
pub fn filelist(path: &Path) -> Result<Vec<PathBuf>, FilelistError> {
    use std::os::unix::ffi::OsStrExt;
    let bytes = crate::whole::read(path, MAX_FILELIST).map_err(|source| FilelistError {
        path: path.to_path_buf(),
        source,
    })?;
    let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
    if body.is_empty() {
        return Ok(Vec::new());
    }
    Ok(body
        .split(|&b| b == b'\n')
        .map(|l| PathBuf::from(std::ffi::OsStr::from_bytes(l)))
        .collect())
}

/// One input opened for coding.
pub struct Opened {
    /// Its bytes.
    pub reader: Box<dyn Read + Send>,
    /// Its size, for a regular file only: a FIFO or device reports 0 (or
    /// anything), and pledging that size makes zstd fail with "Src size
    /// is incorrect".
    pub size: Option<u64>,
    /// Its metadata, but for stdin (to give the output its mode and
    /// times).
    pub meta: Option<Metadata>,
    /// It is a regular file.
    pub regular: bool,
    /// The regular file `reader` reads (another handle on the same open
    /// file), for a decoder that maps it, when asked for.
    pub file: Option<File>,
}

/// Why an input could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// It could not be opened (or, to name its output, looked at).
    #[error("opening input")]
    Open(#[source] io::Error),
    /// Its metadata could not be read.
    #[error("reading input metadata")]
    Metadata(#[source] io::Error),
    /// Its output's name is derived from it, and it is neither a regular
    /// file nor a FIFO (zstd's words).
    #[error("is not a regular file -- ignored")]
    NotRegular,
    /// It is a directory.
    #[error("is a directory")]
    Directory,
}

/// Opens the input `path` (`-`: stdin) as zstd does. When
/// `derives_name` (its output is named from it), only a regular file or a
/// FIFO is taken: a device or directory gives no name to derive an output
/// from, though read like a pipe when its output is named otherwise.
/// A directory is never read. `handle`: a regular file's [`Opened::file`]
/// is made.
pub fn open(path: &Path, derives_name: bool, handle: bool) -> Result<Opened, OpenError> {
    if path == Path::new("-") {
        return Ok(Opened {
            reader: Box::new(io::stdin()),
            size: None,
            meta: None,
            regular: false,
            file: None,
        });
    }
    if derives_name {
        let meta = std::fs::metadata(path).map_err(OpenError::Open)?;
        let ft = meta.file_type();
        if !(ft.is_file() || ft.is_fifo()) {
            return Err(OpenError::NotRegular);
        }
    }
    let f = File::open(path).map_err(OpenError::Open)?;
    let meta = f.metadata().map_err(OpenError::Metadata)?;
    if meta.is_dir() {
        return Err(OpenError::Directory);
    }
    let regular = meta.is_file();
    let size = regular.then_some(meta.len());
    // A handle that cannot be made costs only the mapping.
    let file = (regular && handle).then(|| f.try_clone().ok()).flatten();
    Ok(Opened {
        reader: Box::new(f),
        size,
        meta: Some(meta),
        regular,
        file,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error and its causes, as a user reads them.
    fn line(e: &dyn std::error::Error) -> String {
        let mut parts = vec![e.to_string()];
        let mut cause = e.source();
        while let Some(c) = cause {
            parts.push(c.to_string());
            cause = c.source();
        }
        parts.join(": ")
    }

    #[test]
    fn a_file_held_whole_is_refused_in_one_line_naming_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, [0u8; 10]).unwrap();
        assert_eq!(read_whole("-D", &big, 10, "ten").unwrap().len(), 10);
        let e = read_whole("-D", &big, 9, "nine at most").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "-D {}: is 10 bytes, larger than 9, nine at most",
                big.display()
            )
        );
        let e = read_whole("-D", dir.path(), 9, "").unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "-D {}: is a directory, not a regular file; it is held in memory whole, \
                 so only a regular file is read",
                dir.path().display()
            )
        );
        // Not there: the system's error is the cause, for the caller to word.
        let none = dir.path().join("none");
        let e = read_whole("--patch-from", &none, 9, "").unwrap_err();
        assert!(line(&e).starts_with(&format!("--patch-from {}: No such file", none.display())));
        let e = HeldWholeError::from(filelist(dir.path()).unwrap_err());
        assert_eq!(
            e.to_string(),
            format!(
                "--filelist {}: is a directory, not a regular file; only a regular file is read",
                dir.path().display()
            )
        );
    }

    #[test]
    fn an_input_is_opened_as_zstd_takes_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a");
        std::fs::write(&file, b"abc").unwrap();
        let opened = open(&file, true, false).unwrap();
        assert_eq!((opened.size, opened.regular), (Some(3), true));
        assert!(opened.file.is_none(), "a handle not asked for");
        // Asked for, the handle reads the file from its start, whatever
        // the reader has read.
        let mut opened = open(&file, true, true).unwrap();
        let mut first = [0u8; 1];
        opened.reader.read_exact(&mut first).unwrap();
        let mut handle = opened.file.expect("a regular file's handle");
        let mut all = Vec::new();
        std::io::Seek::rewind(&mut handle).unwrap();
        handle.read_to_end(&mut all).unwrap();
        assert_eq!((&first, &all[..]), (b"a", &b"abc"[..]));
        // A folder names no output, and is never read.
        assert!(matches!(
            open(dir.path(), true, true),
            Err(OpenError::NotRegular)
        ));
        assert!(matches!(
            open(dir.path(), false, true),
            Err(OpenError::Directory)
        ));
        // A device is read like a pipe when its output is named otherwise,
        // its size unknown.
        let null = open(Path::new("/dev/null"), false, true).unwrap();
        assert_eq!((null.size, null.regular), (None, false));
        assert!(null.file.is_none(), "no handle on a device");
        assert!(matches!(
            open(Path::new("/dev/null"), true, true),
            Err(OpenError::NotRegular)
        ));
        assert!(matches!(
            open(&dir.path().join("none"), false, true),
            Err(OpenError::Open(_))
        ));
    }
}
