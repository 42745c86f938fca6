//! The files Info-ZIP's zip adds: paths given walked into [`Item`]s
//! (sorted, under `-r`), filtered by `-R`, `-i` and `-x` patterns, links
//! stored as links (`-y`) or followed, and each item's data opened for its
//! entry ([`open_as_is`]). Warnings (a name not matched, a FIFO skipped)
//! go to a callback the caller gives, which prints them as it likes.
//!
//! ```
//! use zipstream::gather::{Settings, Warning, gather};
//!
//! let dir = std::env::temp_dir().join(format!("gather-doc-{}", std::process::id()));
//! std::fs::create_dir_all(dir.join("sub"))?;
//! std::fs::write(dir.join("sub/a.txt"), "a")?;
//! std::fs::write(dir.join("sub/b.log"), "b")?;
//! let settings = Settings {
//!     paths: vec![dir.join("sub"), dir.join("missing")],
//!     recurse: true,
//!     exclude: vec!["*.log".into()],
//!     ..Settings::default()
//! };
//! let mut unmatched = Vec::new();
//! let found = gather(&settings, |w| {
//!     if let Warning::NotMatched(p) = w {
//!         unmatched.push(p.to_path_buf());
//!     }
//! })?;
//! let names: Vec<&str> = found.items.iter().map(|i| i.name.rsplit('/').next().unwrap()).collect();
//! assert_eq!(names, ["sub", "a.txt"]);
//! assert_eq!((found.unmatched, unmatched), (1, vec![dir.join("missing")]));
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use crate::names::archive_name;
use crate::pattern::{self, Pattern};
use crate::update::Candidate;

/// A file system item to add: where it is, the name it is stored under
/// (a directory's without its `/`), and what `lstat` said when it was
/// listed (`stat` for a link followed).
pub struct Item {
    /// The path it is read from (`-` for stdin).
    pub path: PathBuf,
    /// The entry name it is stored under.
    pub name: String,
    /// What the file system said of it when it was listed.
    pub meta: fs::Metadata,
}

/// A file's modification time in Unix seconds, 0 when unknown or before
/// 1970.
pub fn mtime(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64)
}

impl Candidate for Item {
    fn name(&self) -> &str {
        &self.name
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn mtime(&self) -> i64 {
        mtime(&self.meta)
    }

    fn is_dir(&self) -> bool {
        self.meta.is_dir()
    }

    fn size(&self) -> Option<u64> {
        self.meta.is_file().then_some(self.meta.len())
    }

    /// The same device and inode, unless read from stdin.
    fn same_file(&self, first: &Self) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.path.as_os_str() != "-"
            && (self.meta.dev(), self.meta.ino()) == (first.meta.dev(), first.meta.ino())
    }
}

/// What [`gather`] found.
pub struct Found {
    /// The items to store, in order.
    pub items: Vec<Item>,
    /// How many names were skipped with "name not matched".
    pub unmatched: usize,
}

impl Found {
    /// Leaves out the item that is the file at `path` (the same device and
    /// inode), if it is there: the archive being written, which `zip -r .`
    /// from its folder never stores.
    pub fn without_file(&mut self, path: &Path) {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = fs::metadata(path) {
            self.items
                .retain(|i| !(i.meta.dev() == m.dev() && i.meta.ino() == m.ino()));
        }
    }
}

/// The longest line [`names_from`] takes as a name: Linux's PATH_MAX. A
/// longer one (a device or a binary file read as a list) names no file,
/// and reading it whole would take memory without bound.
pub const MAX_NAME_LINE: u64 = 4096;

/// Why a list of names could not be read.
#[derive(Debug, thiserror::Error)]
pub enum NamesError {
    /// Reading the list failed (the system's error is the source, said
    /// once in a chain of causes).
    #[error("reading the list of names")]
    Read(#[source] io::Error),
    /// A line is longer than [`MAX_NAME_LINE`].
    #[error(
        "a line is longer than {MAX_NAME_LINE} bytes, which names no file (is stdin a file list?)"
    )]
    LineTooLong,
}

/// The names of a list, one a line, as `zip -@` reads them from stdin:
/// a line's CR before its LF is dropped (a list written on Windows), empty
/// lines are skipped, and a line longer than [`MAX_NAME_LINE`] is refused.
pub fn names_from(mut list: impl io::BufRead) -> Result<Vec<PathBuf>, NamesError> {
    use std::io::BufRead;
    use std::os::unix::ffi::OsStringExt;
    let mut names = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut list)
            .take(MAX_NAME_LINE + 1)
            .read_until(b'\n', &mut line)
            .map_err(NamesError::Read)?;
        if n == 0 {
            return Ok(names);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        } else if n as u64 > MAX_NAME_LINE {
            return Err(NamesError::LineTooLong);
        }
        if !line.is_empty() {
            names.push(PathBuf::from(std::ffi::OsString::from_vec(line.clone())));
        }
    }
}

/// What [`gather`] walks and keeps: the caller's options, as Info-ZIP's
/// zip flags name them.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// The paths given, in order (`-` is data from stdin).
    pub paths: Vec<PathBuf>,
    /// `-r`: folders are walked, their entries in sorted order.
    pub recurse: bool,
    /// `-R`: patterns matched against the whole name or its last part.
    pub recurse_patterns: Vec<String>,
    /// `-i`: only names matching one of these are stored.
    pub include: Vec<String>,
    /// `-x`: names matching one of these are left out.
    pub exclude: Vec<String>,
    /// `-y`: links are stored as links, not followed.
    pub symlinks: bool,
    /// `-j`: names without their folders, and no folder entries.
    pub junk_paths: bool,
    /// `-MM`: the first name not matched stops the walk
    /// ([`GatherError::MustMatch`]).
    pub must_match: bool,
    /// `-@`: the names came from stdin, which `-` cannot read as data then.
    pub names_stdin: bool,
}

/// What [`gather`] tells the caller while walking; nothing stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Warning<'a> {
    /// A name with nothing to store (missing, a link to nothing, a loop
    /// of links): Info-ZIP's "name not matched".
    NotMatched(&'a Path),
    /// A FIFO, socket or device, skipped: `what` says which ("a FIFO").
    Skipped {
        /// The path skipped.
        path: &'a Path,
        /// What it is, with its article.
        what: &'static str,
    },
    /// A followed link back to a folder being walked, skipped.
    LinkBack(&'a Path),
}

/// Why [`gather`] or [`open_as_is`] stopped.
#[derive(Debug, thiserror::Error)]
pub enum GatherError {
    /// `-` (data from stdin) given with names read from stdin.
    #[error("`-` (data from stdin) cannot be combined with -@ (names from stdin)")]
    StdinTwice,
    /// Stdin could not be looked at.
    #[error("reading stdin")]
    Stdin(#[source] io::Error),
    /// `-MM` met a name not there ([`Warning::NotMatched`] already given).
    #[error("{} is not there", .0.display())]
    MustMatch(PathBuf),
    /// A path could not be looked up (permissions, I/O).
    #[error("reading {}", path.display())]
    Reading {
        /// The path.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// A link could not be followed.
    #[error("following {}", path.display())]
    Following {
        /// The link.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// A folder could not be listed under `-r`.
    #[error("listing {}", path.display())]
    Listing {
        /// The folder.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// A link's target could not be read.
    #[error("reading link {}", path.display())]
    ReadingLink {
        /// The link.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
    /// A file could not be opened.
    #[error("opening {}", path.display())]
    Opening {
        /// The file.
        path: PathBuf,
        /// What failed.
        #[source]
        source: io::Error,
    },
}

/// The items `settings` names: its paths walked in sorted order under
/// `-r`, filtered by `-R`/`-i`/`-x` (a folder left out is still walked,
/// as in Info-ZIP); FIFOs, devices and sockets are skipped with a
/// [`Warning`], and so are names with nothing to store (missing, a link
/// to nothing, a loop of links).
pub fn gather(settings: &Settings, mut warn: impl FnMut(Warning)) -> Result<Found, GatherError> {
    let compile = |v: &[String]| v.iter().map(|p| Pattern::new(p)).collect::<Vec<_>>();
    let (include, exclude) = (compile(&settings.include), compile(&settings.exclude));
    let recurse_patterns: Vec<Pattern> = settings
        .recurse_patterns
        .iter()
        .map(|p| Pattern::within_folders(p))
        .collect();
    let mut out = Vec::new();
    let mut unmatched = 0usize;
    // Each path with its depth below its root, and the folders (device,
    // inode) being walked above the one popped: a followed link back to
    // one of them would be walked for ever.
    let mut stack: Vec<(PathBuf, usize)> = settings
        .paths
        .iter()
        .rev()
        .map(|p| (p.clone(), 0))
        .collect();
    let mut walking: Vec<(u64, u64)> = Vec::new();
    while let Some((p, depth)) = stack.pop() {
        walking.truncate(depth);
        if p.as_os_str() == "-" {
            // Data from stdin, stored as "-" like Info-ZIP; its size is
            // unknown, so a large stream gets the ZIP64 streaming layout.
            if settings.names_stdin {
                return Err(GatherError::StdinTwice);
            }
            let meta = fs::metadata("/dev/stdin").map_err(GatherError::Stdin)?;
            out.push(Item {
                path: p,
                name: "-".into(),
                meta,
            });
            continue;
        }
        let Some(meta) = listed(&p, settings.symlinks)? else {
            warn(Warning::NotMatched(&p));
            if settings.must_match {
                return Err(GatherError::MustMatch(p));
            }
            unmatched += 1;
            continue;
        };
        let name = archive_name(&p);
        let name = if settings.junk_paths {
            name.rsplit('/').next().unwrap_or_default().to_owned()
        } else {
            name
        };
        let shown = if meta.is_dir() {
            format!("{name}/")
        } else {
            name.clone()
        };
        let wanted = wanted(&name, &shown, &recurse_patterns, &include, &exclude);
        if !meta.is_dir() && !wanted {
            continue;
        }
        let ft = meta.file_type();
        if !(ft.is_file() || ft.is_dir() || ft.is_symlink()) {
            // Reading a FIFO blocks until a writer comes (forever, in a
            // tree walk), and a device or socket has no file data: Info-ZIP
            // skips them with a warning, named or found by -r.
            use std::os::unix::fs::FileTypeExt;
            let what = if ft.is_fifo() {
                "a FIFO"
            } else if ft.is_socket() {
                "a socket"
            } else {
                "a device"
            };
            warn(Warning::Skipped { path: &p, what });
            continue;
        }
        if meta.is_dir() {
            use std::os::unix::fs::MetadataExt;
            let id = (meta.dev(), meta.ino());
            if walking.contains(&id) {
                warn(Warning::LinkBack(&p));
                continue;
            }
            walking.push(id);
            if settings.recurse {
                let listing = |source| GatherError::Listing {
                    path: p.clone(),
                    source,
                };
                let mut kids: Vec<PathBuf> = fs::read_dir(&p)
                    .map_err(listing)?
                    .map(|e| e.map(|e| e.path()))
                    .collect::<io::Result<_>>()
                    .map_err(listing)?;
                kids.sort();
                stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
            }
            // -j stores files only, as Info-ZIP's does.
            if name.is_empty() || settings.junk_paths || !wanted {
                continue;
            }
        }
        out.push(Item {
            path: p,
            name,
            meta,
        });
    }
    Ok(Found {
        items: out,
        unmatched,
    })
}

/// Whether the patterns keep `name` (`shown` is the name patterns see: a
/// directory's with its trailing `/`).
fn wanted(
    name: &str,
    shown: &str,
    recurse_patterns: &[Pattern],
    include: &[Pattern],
    exclude: &[Pattern],
) -> bool {
    // -R: the whole name or its last part (`*.c` finds `a/b.c`; a
    // folder's last part without its `/`, so `*` finds folders too,
    // as in Info-ZIP).
    let last = shown
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let found = recurse_patterns.is_empty()
        || (!name.is_empty()
            && (pattern::any(recurse_patterns, shown) || pattern::any(recurse_patterns, last)));
    found && (include.is_empty() || pattern::any(include, shown)) && !pattern::any(exclude, shown)
}

/// What `p` is, as an entry will store it: the link itself with
/// `links` (`lstat`), else what the link names (`stat`); `None` for a
/// name with nothing to store, which Info-ZIP warns of and skips: one
/// that is not there, or, followed, a link to nothing or into a loop of
/// links (a→b, b→a: "Too many levels of symbolic links").
fn listed(p: &Path, links: bool) -> Result<Option<fs::Metadata>, GatherError> {
    let own = match fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if names_nothing(&e) => return Ok(None),
        Err(source) => {
            return Err(GatherError::Reading {
                path: p.to_path_buf(),
                source,
            });
        }
    };
    if links || !own.file_type().is_symlink() {
        return Ok(Some(own));
    }
    match fs::metadata(p) {
        Ok(m) => Ok(Some(m)),
        Err(e) if names_nothing(&e) => Ok(None),
        Err(source) => Err(GatherError::Following {
            path: p.to_path_buf(),
            source,
        }),
    }
}

/// Whether looking a path up failed because it leads to nothing: a
/// missing name, a file used as a folder, or a loop of links. Other
/// failures (permissions, I/O) stop the run: what is there cannot be read.
fn names_nothing(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    ) || e.raw_os_error() == Some(libc::ELOOP)
}

/// A regular file read for an entry, checked at its end against the size
/// and modification time seen when it was listed: a file that shrank, grew
/// or was rewritten meanwhile would otherwise be stored as whatever part of
/// it was read, under an archive that reports success.
struct Unchanged {
    file: fs::File,
    listed_len: u64,
    listed_mtime: Option<std::time::SystemTime>,
    read: u64,
}

impl Read for Unchanged {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        self.read += n as u64;
        if n == 0 && !buf.is_empty() {
            let now = self.file.metadata()?;
            if self.read != self.listed_len || now.len() != self.listed_len {
                return Err(io::Error::other(format!(
                    "file size changed while zipping ({} bytes when listed, {} read, {} now); not stored",
                    self.listed_len,
                    self.read,
                    now.len()
                )));
            }
            if now.modified().ok() != self.listed_mtime {
                return Err(io::Error::other(
                    "file modified while zipping (its modification time moved); not stored",
                ));
            }
        }
        Ok(n)
    }
}

/// The data of `item` as it is: stdin, a link's target, nothing for a
/// directory, or the file, whose read fails at its end if it changed
/// since it was listed (size or modification time).
pub fn open_as_is(item: &Item) -> Result<Box<dyn Read>, GatherError> {
    if item.path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin().lock()));
    }
    if item.meta.file_type().is_symlink() {
        let t = fs::read_link(&item.path).map_err(|source| GatherError::ReadingLink {
            path: item.path.clone(),
            source,
        })?;
        return Ok(Box::new(io::Cursor::new(
            t.to_string_lossy().into_owned().into_bytes(),
        )));
    }
    if item.meta.is_dir() {
        return Ok(Box::new(io::empty()));
    }
    let file = fs::File::open(&item.path).map_err(|source| GatherError::Opening {
        path: item.path.clone(),
        source,
    })?;
    Ok(Box::new(Unchanged {
        file,
        listed_len: item.meta.len(),
        listed_mtime: item.meta.modified().ok(),
        read: 0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_a_line_each_and_a_line_past_path_max_is_refused() {
        let list = b"a b\r\n\nc/d\nlast".as_slice();
        let names = names_from(list).unwrap();
        assert_eq!(
            names,
            [Path::new("a b"), Path::new("c/d"), Path::new("last")]
        );
        let mut long = vec![b'x'; MAX_NAME_LINE as usize];
        assert_eq!(names_from(&long[..]).unwrap().len(), 1);
        long.push(b'x');
        let err = names_from(&long[..]).unwrap_err();
        assert!(matches!(err, NamesError::LineTooLong), "{err}");
    }

    #[test]
    fn a_list_that_cannot_be_read_says_the_system_error_once() {
        /// A list whose reading fails.
        struct Failing;
        impl io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("the disk went away"))
            }
        }
        let err = names_from(io::BufReader::new(Failing)).unwrap_err();
        let mut said = vec![err.to_string()];
        let mut cause = std::error::Error::source(&err);
        while let Some(c) = cause {
            said.push(c.to_string());
            cause = c.source();
        }
        assert_eq!(
            said.join(": "),
            "reading the list of names: the disk went away"
        );
    }

    #[test]
    fn the_archive_itself_is_left_out_by_identity_not_name() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("a.zip"), "").unwrap();
        std::fs::write(d.join("b"), "").unwrap();
        let settings = Settings {
            paths: vec![d.to_path_buf()],
            recurse: true,
            ..Settings::default()
        };
        let mut found = gather(&settings, |_| {}).unwrap();
        assert_eq!(found.items.len(), 3);
        // Named another way: `./a.zip` from inside, say.
        found.without_file(&d.join(".").join("a.zip"));
        assert_eq!(found.items.len(), 2);
        assert!(found.items.iter().all(|i| !i.name.ends_with("a.zip")));
    }
}
