//! Writing output files safely: a temporary sibling renamed into place,
//! or in place for a device, FIFO or socket; never over a file the user
//! did not name. Every file the binary writes goes through here, report
//! or not, so the rules hold for all of them.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::reserve::Reserving;
use crate::temporaries;

/// Why an output file could not be opened or put in place. The path is
/// the one the caller gave, never the hidden temporary.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A device, FIFO or socket could not be opened for writing.
    #[error("opening {}", path.display())]
    Open {
        /// The path given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A symlink that cannot be resolved (dangling, a loop): it is never
    /// replaced.
    #[error("{} is a symlink that cannot be resolved; refusing to replace it", path.display())]
    Unresolvable {
        /// The path given.
        path: PathBuf,
        /// Why it did not resolve.
        #[source]
        source: std::io::Error,
    },
    /// A file is there and overwriting was not asked for.
    #[error("{} already exists; use -f to overwrite", path.display())]
    Exists {
        /// The path given.
        path: PathBuf,
    },
    /// The temporary sibling could not be made, or renamed into place.
    #[error("writing {}", path.display())]
    Write {
        /// The path given (or, for a symlink, the file it names).
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Writing the data failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// For callers whose writing is plain I/O: the error keeps its message and
/// causes (an `io::Error` made from another error shows that error's).
impl From<OutputError> for std::io::Error {
    fn from(e: OutputError) -> std::io::Error {
        match e {
            OutputError::Io(e) => e,
            e => std::io::Error::other(e),
        }
    }
}

/// Writes a file through [`Output`]: a temporary sibling renamed into place
/// on success, or in place for a device, FIFO or socket. `f`'s error is
/// returned as it is (the file is then left as it was); the caller's error
/// type takes [`OutputError`] too, so writing that is plain I/O returns an
/// `io::Error` and writing that fails in other ways its own type.
pub fn write_atomically<E: From<OutputError>>(
    path: &Path,
    f: impl FnOnce(&mut std::fs::File) -> Result<(), E>,
) -> Result<(), E> {
    write_atomically_with(path, true, f)
}

/// [`write_atomically`], refusing an existing regular file (or a symlink to
/// one) unless `clobber`, as [`Output::create`] does.
pub fn write_atomically_with<E: From<OutputError>>(
    path: &Path,
    clobber: bool,
    f: impl FnOnce(&mut std::fs::File) -> Result<(), E>,
) -> Result<(), E> {
    let mut out = Output::create(path, clobber)?;
    f(out.file_mut())?;
    Ok(out.commit()?)
}

/// Whether `path` names, through any symlinks, an existing device, FIFO or
/// socket (`/dev/null`, a named pipe, `/dev/stdout` when stdout is a pipe):
/// output to it is written in place. Renaming a temporary file over it
/// would replace the node itself, and as root that turns `/dev/null` into
/// a regular file for every program on the machine.
pub fn is_special_file(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// An output file being written; every command opens its output files
/// here, so the rules below hold for all of them.
///
/// - A path that is, or is a symlink to, a device, FIFO or socket is
///   opened and written **in place**: nothing is renamed, and a failure
///   may leave partial data in the pipe or device (there is nothing else
///   to do with one).
/// - Anything else is written to a temporary file that [`Output::commit`]
///   renames into place; dropping an uncommitted `Output` deletes it, so a
///   failure leaves the directory as it was.
/// - A symlink is never replaced. A path that is a symlink to a regular
///   file is resolved first, and the temporary file is created beside the
///   *resolved* target and renamed over that: the link stays a link and
///   names the new data, and a failure leaves the old file as it was. `-o /dev/stdout` with stdout redirected to a file is this case:
///   `/dev/stdout` → `/proc/self/fd/1` → that file, which is replaced.
///   A symlink that cannot be resolved (dangling, a loop) is refused.
#[derive(Debug)]
pub struct Output {
    kind: OutputKind,
}

#[derive(Debug)]
enum OutputKind {
    InPlace(std::fs::File),
    Temp {
        tmp: tempfile::NamedTempFile,
        target: PathBuf,
        clobber: bool,
        /// Lists `tmp` for deletion on a fatal signal until it is renamed
        /// or deleted (declared after `tmp`, so unlisted after it goes).
        _listed: temporaries::Registration,
    },
}

impl Output {
    /// Opens `path` for writing as the type doc describes. With `clobber`
    /// false an existing regular file (or a symlink to one) is refused,
    /// here and again, atomically, at [`Output::commit`]; devices and FIFOs
    /// are written whatever `clobber` says.
    pub fn create(path: &Path, clobber: bool) -> Result<Output, OutputError> {
        if is_special_file(path) {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|source| OutputError::Open {
                    path: path.to_path_buf(),
                    source,
                })?;
            return Ok(Output {
                kind: OutputKind::InPlace(file),
            });
        }
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        let target = if is_link {
            std::fs::canonicalize(path).map_err(|source| OutputError::Unresolvable {
                path: path.to_path_buf(),
                source,
            })?
        } else {
            path.to_path_buf()
        };
        if !clobber && target.exists() {
            return Err(OutputError::Exists {
                path: path.to_path_buf(),
            });
        }
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        // The signal thread that deletes the temporary runs before it
        // exists; it starts with the first output (see `cleanup`).
        crate::cleanup::start().map_err(|source| OutputError::Write {
            path: path.to_path_buf(),
            source,
        })?;
        // The error names the path the user gave, never the hidden
        // temporary (which tempfile's own message would).
        let tmp = temp_sibling(dir).map_err(|e| OutputError::Write {
            path: path.to_path_buf(),
            source: without_path(e),
        })?;
        let _listed = temporaries::register(tmp.path().to_path_buf());
        Ok(Output {
            kind: OutputKind::Temp {
                tmp,
                target,
                clobber,
                _listed,
            },
        })
    }

    /// Whether this output is written in place (a device, FIFO or socket):
    /// it cannot be seeked, renamed, or given permissions.
    pub fn is_in_place(&self) -> bool {
        matches!(self.kind, OutputKind::InPlace(_))
    }

    /// The file to write to.
    pub fn file_mut(&mut self) -> &mut std::fs::File {
        match &mut self.kind {
            OutputKind::InPlace(f) => f,
            OutputKind::Temp { tmp, .. } => tmp.as_file_mut(),
        }
    }

    /// A writer of its own over the file (a second handle on the same open
    /// file, so it shares the offset), for a thread that writes while this
    /// `Output` keeps the file's fate. A file renamed into place gets its
    /// blocks reserved ahead of the writes, and what was not used released
    /// when the writer is dropped ([`Reserving`]): drop it before stamping
    /// the file's times or mode, and before the commit.
    pub fn writer(&mut self) -> std::io::Result<Reserving> {
        match &mut self.kind {
            OutputKind::InPlace(f) => Reserving::new(f.try_clone()?, false),
            OutputKind::Temp { tmp, .. } => Reserving::new(tmp.as_file().try_clone()?, true),
        }
    }

    /// As [`Output::commit`], but durable: the data reaches the disk
    /// before the rename, and the rename before this returns (the
    /// directory is synced too). For a caller about to delete what the
    /// output holds a copy of (`zip -m`): a crash after it must not lose
    /// both.
    pub fn commit_durably(mut self) -> Result<(), OutputError> {
        let target = match &mut self.kind {
            OutputKind::InPlace(_) => return self.commit(),
            OutputKind::Temp { tmp, target, .. } => {
                tmp.as_file_mut().flush()?;
                tmp.as_file().sync_all()?;
                target.clone()
            }
        };
        self.commit()?;
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|source| OutputError::Write {
                path: target,
                source,
            })
    }

    /// Flushes, and renames a temporary file into place (refusing an
    /// existing target when created with `clobber` false).
    pub fn commit(self) -> Result<(), OutputError> {
        match self.kind {
            OutputKind::InPlace(mut f) => Ok(f.flush()?),
            OutputKind::Temp {
                mut tmp,
                target,
                clobber,
                _listed,
            } => {
                tmp.as_file_mut().flush()?;
                let persisted = if clobber {
                    tmp.persist(&target)
                } else {
                    tmp.persist_noclobber(&target)
                };
                persisted.map_err(|e| OutputError::Write {
                    path: target,
                    source: e.error,
                })?;
                Ok(())
            }
        }
    }
}

/// `e` without the path tempfile adds to its message ("… at path
/// ro/.perfkit-5HTrCP.partial"): the OS error alone, for a context that
/// names the output the user asked for.
fn without_path(e: std::io::Error) -> std::io::Error {
    // tempfile wraps the OS error in a private one of its own, whose kind
    // alone would print as Rust's words ("entity not found"); the OS's
    // code is in its text ("… (os error 2) at path …").
    let os = e.raw_os_error().or_else(|| {
        let text = e.get_ref()?.to_string();
        let (_, rest) = text.split_once("(os error ")?;
        rest.split_once(')')?.0.parse().ok()
    });
    match os {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => std::io::Error::from(e.kind()),
    }
}

/// A temporary file in `dir` for output that is renamed into place on
/// success. It is created with mode 0666 less the umask (open(2) applies
/// it), as a plain `File::create` would be, not tempfile's private 0600.
fn temp_sibling(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    b.prefix(".perfkit-").suffix(".partial");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o666));
    }
    b.tempfile_in(dir)
}
