//! Safe extraction into a directory.
//!
//! Refuses absolute paths, `..` traversal, paths through symlinks, symlinks
//! whose target leaves the destination, and duplicate names; enforces limits
//! on entry count, total size and compression ratio while data is decoded
//! (declared sizes are not trusted). A file that fits the 64 KiB buffer is
//! decoded and verified whole, then created exclusively under its own name
//! and written in one call (removed if that write fails); a larger one is
//! written to a temporary sibling and renamed into place only after its
//! CRC/MAC verified. Either way a corrupt entry never leaves a
//! complete-looking file, and a link already at the name is never followed. Symlinks are created
//! last, so no entry is ever written through one the archive made, and
//! their targets are resolved against the disk, through every link already
//! there: a lexical check cannot see where `k/l/..` goes when `k/l` is a link.
//!
//! Streaming extraction sees only local headers, which carry no file type:
//! symlink entries are first written as regular files holding the target,
//! and once the central directory at the stream's end says which entries
//! were links, those files become links, confined like all the others.
//!
//! Around it, Info-ZIP unzip's habits for a tool to use: [`lines`] (what it
//! prints while it extracts), [`prompt`] (its question about a file in the
//! way), [`passing`] (`-p`, `-c` and `-t`, over [`read_archive_data`] and
//! [`read_stream_data`]) and [`on_disk`] (`-u`, `-f` and `-B`).

use std::io::{Read, Seek};
use std::path::{Component, Path, PathBuf};

use crate::entry::{Entry, EntryKind};
use crate::error::{Error, Result};
use crate::read::EntryWalk;
use crate::read::stream::ZipStreamReader;

mod confine;
mod extractor;
mod limits;
pub mod lines;
pub mod on_disk;
pub mod passing;
pub mod prompt;

use extractor::Extractor;
use limits::Limiter;

/// Extraction policy.
#[derive(Debug, Clone)]
pub struct ExtractOptions {
    /// Replace existing files (default: refuse with [`Error::Exists`]).
    pub overwrite: bool,
    /// Password for AES entries.
    pub password: Option<Vec<u8>>,
    /// Maximum total uncompressed bytes (default 64 GiB).
    pub max_total_bytes: u64,
    /// Maximum number of entries (default 1,000,000).
    pub max_entries: u64,
    /// Maximum uncompressed/compressed ratio of an entry once it is past
    /// `ratio_floor` bytes (default 1,100: deflate's own limit is ~1,032).
    pub max_ratio: u64,
    /// Entries smaller than this are not ratio-checked (default 1 MiB).
    pub ratio_floor: u64,
    /// Create symlinks (after validation); when false they are skipped.
    pub symlinks: bool,
    /// Apply Unix permission bits from the archive (never setuid/setgid/sticky).
    pub permissions: bool,
    /// Leave existing files as they are and go on (`unzip -n`); takes
    /// precedence over `overwrite`.
    pub skip_existing: bool,
    /// Write every file into the destination itself, dropping the
    /// directories of its name (`unzip -j`); directory entries are skipped.
    pub junk_paths: bool,
    /// Give each file the modification time its entry records (default;
    /// off: the time of extraction, `unzip -DD`).
    pub file_times: bool,
    /// Give each directory entry's directory its recorded time once
    /// everything is in it (default, as Info-ZIP does; off: `unzip -D`).
    pub dir_times: bool,
    /// Told of each temporary file before it is created; see
    /// [`TemporaryHook`].
    pub on_temporary: Option<TemporaryHook>,
    /// Told of each thing written, as it is written; see [`PlacedHook`].
    pub on_placed: Option<PlacedHook>,
    /// Asked what to do about a file that is already there (neither
    /// `overwrite` nor `skip_existing` set): Info-ZIP's `replace?` prompt;
    /// see [`ExistsHook`]. Without one, an existing file is
    /// [`Error::Exists`].
    pub on_exists: Option<ExistsHook>,
    /// Gives each entry the name it is extracted under, in place of its
    /// own (`unzip -L`'s lower case); see [`NameHook`]. The name given
    /// follows an entry name's rules (confined, no `..`).
    pub rename: Option<NameHook>,
}

/// A caller's name for an entry on disk, given the entry (a tool's case
/// conversion); `None` keeps the entry's own name.
#[derive(Clone)]
pub struct NameHook(std::sync::Arc<NameFn>);

/// What a [`NameHook`] calls.
type NameFn = dyn Fn(&Entry) -> Option<String> + Send + Sync;

impl NameHook {
    /// A hook that names entries with `f`.
    pub fn new(f: impl Fn(&Entry) -> Option<String> + Send + Sync + 'static) -> Self {
        NameHook(std::sync::Arc::new(f))
    }

    pub(crate) fn name(&self, e: &Entry) -> Option<String> {
        (self.0)(e)
    }
}

impl std::fmt::Debug for NameHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NameHook")
    }
}

/// What to do with a file that is already where an entry goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Existing {
    /// Replace it.
    Replace,
    /// Leave it, and go on with the next entry (the entry is still read,
    /// so checked against the limits).
    Keep,
    /// Write the entry under this name instead, a path relative to the
    /// destination that follows the same rules as an entry's name (a name
    /// that is there too is asked about in its turn).
    Rename(String),
}

/// A caller's answer to a file in the way, given the path relative to
/// the destination (a tool's overwrite prompt).
#[derive(Clone)]
pub struct ExistsHook(std::sync::Arc<dyn Fn(&Path) -> Existing + Send + Sync>);

impl ExistsHook {
    /// A hook that answers with `f`.
    pub fn new(f: impl Fn(&Path) -> Existing + Send + Sync + 'static) -> Self {
        ExistsHook(std::sync::Arc::new(f))
    }

    /// The answer for a file in the way at `rel` (relative to the
    /// destination), as extraction asks for it.
    pub fn answer(&self, rel: &Path) -> Existing {
        (self.0)(rel)
    }
}

impl std::fmt::Debug for ExistsHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExistsHook")
    }
}

/// Something an extraction has just put on disk, by its path relative to
/// the destination: what Info-ZIP's unzip prints a line for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placed<'a> {
    /// A directory entry made (not told for one already there, nor for the
    /// parents made for a file).
    Directory(&'a Path),
    /// A file written from an entry of this method (0 stored, 8 deflated).
    File(&'a Path, u16),
    /// A symlink entry read: it is made at the end, once every file is in
    /// place.
    LinkDeferred(&'a Path, &'a str),
    /// A deferred symlink made, pointing at this target.
    LinkMade(&'a Path, &'a str),
    /// A symlink entry's path is taken by a link already on disk, which
    /// is kept (`skip_existing`) or asked about next ([`ExistsHook`]).
    LinkInTheWay(&'a Path),
}

/// A caller's view of an extraction as it goes (a tool's per-entry lines).
#[derive(Clone)]
pub struct PlacedHook(std::sync::Arc<dyn Fn(Placed<'_>) + Send + Sync>);

impl PlacedHook {
    /// A hook calling `f` with each thing placed.
    pub fn new(f: impl Fn(Placed<'_>) + Send + Sync + 'static) -> Self {
        PlacedHook(std::sync::Arc::new(f))
    }

    pub(crate) fn tell(&self, p: Placed<'_>) {
        (self.0)(p)
    }
}

impl std::fmt::Debug for PlacedHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlacedHook")
    }
}

/// A caller's list of the temporary files an extraction has alive.
///
/// An entry too large for the buffer, or one replacing an existing file, is
/// written to a hidden sibling and renamed into place. The extraction
/// deletes that temporary on every error, but a signal that ends the
/// process runs no destructor: a caller that must leave nothing behind
/// then (a command-line tool on Ctrl-C) lists each path this hook is given
/// and deletes the listed ones from its signal handling. The hook is
/// called before the file is created; the value it returns is dropped once
/// the temporary is renamed or deleted, which is when to unlist it.
#[derive(Clone)]
pub struct TemporaryHook(std::sync::Arc<TemporaryFn>);

/// What a [`TemporaryHook`] calls.
type TemporaryFn = dyn Fn(&Path) -> Box<dyn Send> + Send + Sync;

impl TemporaryHook {
    /// A hook calling `list` with each temporary's path; what `list`
    /// returns is dropped when the temporary is gone.
    pub fn new<G: Send + 'static>(list: impl Fn(&Path) -> G + Send + Sync + 'static) -> Self {
        TemporaryHook(std::sync::Arc::new(move |p: &Path| -> Box<dyn Send> {
            Box::new(list(p))
        }))
    }

    fn listed(&self, path: &Path) -> Box<dyn Send> {
        (self.0)(path)
    }
}

impl std::fmt::Debug for TemporaryHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TemporaryHook")
    }
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            overwrite: false,
            password: None,
            max_total_bytes: 64 << 30,
            max_entries: 1_000_000,
            max_ratio: 1_100,
            ratio_floor: 1 << 20,
            symlinks: true,
            permissions: true,
            skip_existing: false,
            junk_paths: false,
            file_times: true,
            dir_times: true,
            on_temporary: None,
            on_placed: None,
            on_exists: None,
            rename: None,
        }
    }
}

/// What an extraction did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtractReport {
    /// Regular files written.
    pub files: u64,
    /// Directories created.
    pub dirs: u64,
    /// Symlinks created.
    pub symlinks: u64,
    /// Uncompressed bytes written.
    pub bytes: u64,
}

/// Turns an entry name into a safe relative path, or says why not.
pub fn safe_path(name: &str) -> Result<PathBuf> {
    let bad = |reason| {
        Err(Error::UnsafePath {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() || name.contains('\0') {
        return bad("empty name or NUL byte");
    }
    // Archives from Windows tools may use backslashes; treat them as separators.
    let unified = name.replace('\\', "/");
    if unified.starts_with('/') {
        return bad("absolute path");
    }
    let b = unified.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        return bad("drive letter");
    }
    let mut out = PathBuf::new();
    for part in unified.split('/') {
        match part {
            "" | "." => {}
            ".." => return bad("`..` component"),
            p => out.push(p),
        }
    }
    if out.as_os_str().is_empty() {
        return bad("name has no path components");
    }
    // Defence in depth: the result must be purely normal components.
    if out.components().any(|c| !matches!(c, Component::Normal(_))) {
        return bad("non-normal path component");
    }
    Ok(out)
}

/// Extracts every entry of a random-access archive into `dest`.
pub fn extract_archive<R: Read + Seek>(
    archive: &mut impl EntryWalk<R>,
    dest: &Path,
    opts: &ExtractOptions,
) -> Result<ExtractReport> {
    extract_archive_selected(archive, dest, opts, &|_| true)
}

/// Extracts the entries of a random-access archive for which `select` is
/// true (`unzip a.zip 'pattern'`) into `dest`. A run that fails removes
/// the files, links and directories it created. Over a
/// [`crate::WalkedArchive`] its memory does not grow with the number of
/// entries: the directory is walked twice (names first, then data), and
/// the extraction keeps 16 bytes a name (its duplicate check).
pub fn extract_archive_selected<R: Read + Seek>(
    archive: &mut impl EntryWalk<R>,
    dest: &Path,
    opts: &ExtractOptions,
    select: &dyn Fn(&Entry) -> bool,
) -> Result<ExtractReport> {
    // Validate every name before writing anything.
    archive.walk(&mut |e, _| {
        if select(e) {
            safe_path(&e.name)?;
        }
        Ok(())
    })?;
    let mut x = Extractor::new(dest, opts, false)?;
    let res = archive.walk(&mut |e, source| {
        if !select(e) {
            return Ok(());
        }
        let Some(rel) = x.admit(e, true)? else {
            return Ok(());
        };
        let pw = if e.encrypted {
            opts.password.as_deref()
        } else {
            None
        };
        let r = std::cell::RefCell::new(source.open(e, pw)?);
        let counts = || r.borrow().counts();
        let mut read = |b: &mut [u8]| r.borrow_mut().read_data(b);
        x.place(e, rel, &mut read, &counts)
    });
    match res {
        Ok(()) => x.finish(),
        Err(e) => {
            x.undo();
            Err(e)
        }
    }
}

/// Extracts a stream (e.g. stdin) into `dest`, entry by entry.
pub fn extract_stream<R: Read>(
    reader: &mut ZipStreamReader<R>,
    dest: &Path,
    opts: &ExtractOptions,
) -> Result<ExtractReport> {
    extract_stream_selected(reader, dest, opts, &|_| true)
}

/// Extracts the entries of a stream for which `select` is true; entries
/// left out are still read through (and verified), since a stream cannot
/// skip. A run that fails removes what it created.
pub fn extract_stream_selected<R: Read>(
    reader: &mut ZipStreamReader<R>,
    dest: &Path,
    opts: &ExtractOptions,
    select: &dyn Fn(&Entry) -> bool,
) -> Result<ExtractReport> {
    let mut x = Extractor::new(dest, opts, true)?;
    reader.set_password(opts.password.as_deref());
    let res = (|| -> Result<()> {
        while let Some(e) = reader.next_entry()? {
            let rel = if select(&e) {
                x.admit(&e, false)?
            } else {
                None
            };
            let cell = std::cell::RefCell::new(&mut *reader);
            let counts = || cell.borrow().current_counts().unwrap_or((0, 0));
            let mut read = |b: &mut [u8]| cell.borrow_mut().read_data(b);
            match rel {
                Some(rel) => x.place(&e, rel, &mut read, &counts)?,
                None => {
                    // Read through under the same limits, writing nothing.
                    let mut buf = std::mem::take(&mut x.buf);
                    let r = pass_data(
                        &e,
                        &mut x.limits,
                        &mut buf,
                        &mut |_, _| Ok(()),
                        &mut read,
                        &counts,
                    );
                    x.buf = buf;
                    let n = r?;
                    x.limits.done(n);
                }
            }
        }
        x.relink(reader.directory_symlinks())
    })();
    match res {
        Ok(()) => x.finish(),
        Err(e) => {
            x.undo();
            Err(e)
        }
    }
}

/// Decodes every entry of a random-access archive under the same limits
/// as extraction (`opts`: password, size, ratio, count), handing each piece
/// of data to `sink` with its entry; a failed check (CRC, MAC, size) is
/// returned after the entry's last piece. Once an entry's data has all
/// passed its checks, `sink` gets it once more with an empty piece (so an
/// empty file or a directory is seen too). This is `unzip -p` and `-t`.
pub fn read_archive_data<R: Read + Seek>(
    archive: &mut impl EntryWalk<R>,
    opts: &ExtractOptions,
    select: &dyn Fn(&Entry) -> bool,
    sink: &mut dyn FnMut(&Entry, &[u8]) -> Result<()>,
) -> Result<ExtractReport> {
    let mut limits = Limiter::new(opts);
    let mut report = ExtractReport::default();
    let mut buf = vec![0u8; 64 * 1024];
    archive.walk(&mut |e, source| {
        if !select(e) {
            return Ok(());
        }
        limits.entry(e, true)?;
        let pw = if e.encrypted {
            opts.password.as_deref()
        } else {
            None
        };
        let r = std::cell::RefCell::new(source.open(e, pw)?);
        let n = pass_data(
            e,
            &mut limits,
            &mut buf,
            sink,
            &mut |b| r.borrow_mut().read_data(b),
            &|| r.borrow().counts(),
        )?;
        tally(&mut report, e, n);
        limits.done(n);
        Ok(())
    })?;
    Ok(report)
}

/// The streaming counterpart of [`read_archive_data`] (`unzip -p -`):
/// entries `select` leaves out are still read through, under the limits.
pub fn read_stream_data<R: Read>(
    reader: &mut ZipStreamReader<R>,
    opts: &ExtractOptions,
    select: &dyn Fn(&Entry) -> bool,
    sink: &mut dyn FnMut(&Entry, &[u8]) -> Result<()>,
) -> Result<ExtractReport> {
    let mut limits = Limiter::new(opts);
    let mut report = ExtractReport::default();
    let mut buf = vec![0u8; 64 * 1024];
    reader.set_password(opts.password.as_deref());
    while let Some(e) = reader.next_entry()? {
        limits.entry(&e, false)?;
        let chosen = select(&e);
        let cell = std::cell::RefCell::new(&mut *reader);
        let n = pass_data(
            &e,
            &mut limits,
            &mut buf,
            &mut |e, b| if chosen { sink(e, b) } else { Ok(()) },
            &mut |b| cell.borrow_mut().read_data(b),
            &|| cell.borrow().current_counts().unwrap_or((0, 0)),
        )?;
        if chosen {
            tally(&mut report, &e, n);
        }
        limits.done(n);
    }
    Ok(report)
}

fn tally(report: &mut ExtractReport, e: &Entry, n: u64) {
    match e.kind() {
        EntryKind::File => report.files += 1,
        EntryKind::Directory => report.dirs += 1,
        EntryKind::Symlink => report.symlinks += 1,
    }
    report.bytes += n;
}

/// Reads one entry to its end through the limits, handing data to `sink`.
fn pass_data(
    e: &Entry,
    limits: &mut Limiter<'_>,
    buf: &mut [u8],
    sink: &mut dyn FnMut(&Entry, &[u8]) -> Result<()>,
    read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
    counts: &dyn Fn() -> (u64, u64),
) -> Result<u64> {
    let mut n = 0u64;
    loop {
        let k = read(buf)?;
        if k == 0 {
            // The reader checks CRC, MAC and size at the end of the data:
            // the entry is good.
            sink(e, &[])?;
            return Ok(n);
        }
        n += k as u64;
        let (c, p) = counts();
        limits.data(e, n, c, p)?;
        sink(e, &buf[..k])?;
    }
}

#[cfg(test)]
mod tests {
    use super::confine::check_link_target;
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn path_rules() {
        assert_eq!(safe_path("a/b/c.txt").unwrap(), PathBuf::from("a/b/c.txt"));
        assert_eq!(safe_path("./a//b/").unwrap(), PathBuf::from("a/b"));
        for bad in [
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a/..",
            "C:/x",
            "\\\\server\\x",
            "..\\x",
            "",
            ".",
        ] {
            assert!(safe_path(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn link_targets() {
        let none = HashSet::new();
        assert!(check_link_target("l", Path::new("a/l"), "../b", &none).is_ok());
        assert!(check_link_target("l", Path::new("a/l"), "../../b", &none).is_err());
        assert!(check_link_target("l", Path::new("l"), "/etc", &none).is_err());
        let links: HashSet<PathBuf> = [PathBuf::from("c")].into_iter().collect();
        // c might point anywhere inside; c/.. is not lexically predictable.
        assert!(check_link_target("l", Path::new("l"), "c/../x", &links).is_err());
    }
}
