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

use std::collections::HashSet;
use std::fs;
use std::io::{Read, Seek, Write};
use std::path::{Component, Path, PathBuf};

use crate::entry::{Entry, EntryKind};
use crate::error::{Error, Result};
use crate::read::archive::ZipArchive;
use crate::read::stream::ZipStreamReader;

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
    /// Told of each temporary file before it is created; see
    /// [`TemporaryHook`].
    pub on_temporary: Option<TemporaryHook>,
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
            on_temporary: None,
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

/// The one limit policy (entry count, total uncompressed size, ratio),
/// applied as data is decoded by every reading path: extraction, and the
/// [`read_archive_data`]/[`read_stream_data`] front ends behind `unzip -p`
/// and `unzip -t`.
struct Limiter<'a> {
    opts: &'a ExtractOptions,
    entries: u64,
    /// Uncompressed bytes of the entries finished so far.
    bytes: u64,
}

impl<'a> Limiter<'a> {
    fn new(opts: &'a ExtractOptions) -> Limiter<'a> {
        Limiter {
            opts,
            entries: 0,
            bytes: 0,
        }
    }

    /// Counts one more entry, and refuses it early if its declared size
    /// alone would exceed the budget (declared sizes are not trusted
    /// otherwise: [`Limiter::data`] checks what is really decoded).
    fn entry(&mut self, e: &Entry, declared: bool) -> Result<()> {
        self.entries += 1;
        if self.entries > self.opts.max_entries {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "entry count",
                limit: self.opts.max_entries,
                actual: self.entries,
            });
        }
        if declared && e.size > self.opts.max_total_bytes.saturating_sub(self.bytes) {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "total uncompressed size",
                limit: self.opts.max_total_bytes,
                actual: self.bytes.saturating_add(e.size),
            });
        }
        Ok(())
    }

    /// Checks an entry in progress: `n` bytes of it decoded so far, from
    /// `consumed` compressed bytes producing `produced`.
    fn data(&self, e: &Entry, n: u64, consumed: u64, produced: u64) -> Result<()> {
        let total = self.bytes.saturating_add(n);
        if total > self.opts.max_total_bytes {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "total uncompressed size",
                limit: self.opts.max_total_bytes,
                actual: total,
            });
        }
        if produced > self.opts.ratio_floor && produced / consumed.max(1) > self.opts.max_ratio {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "compression ratio",
                limit: self.opts.max_ratio,
                actual: produced / consumed.max(1),
            });
        }
        Ok(())
    }

    /// Records a finished entry of `n` bytes.
    fn done(&mut self, n: u64) {
        self.bytes = self.bytes.saturating_add(n);
    }
}

/// Extraction state shared by the archive and stream front ends.
struct Extractor<'a> {
    dest: PathBuf,
    opts: &'a ExtractOptions,
    limits: Limiter<'a>,
    seen: HashSet<PathBuf>,
    links: Vec<(String, PathBuf, String)>,
    report: ExtractReport,
    tmp_counter: u64,
    buf: Vec<u8>,
    /// Directories known to exist as real directories (relative to `dest`),
    /// so each is checked and created once, not once per file.
    dirs: HashSet<PathBuf>,
    /// What this run created, in order, so a failed run can remove it.
    created: Vec<(PathBuf, bool)>,
    /// This process's id, for temporary names (asked once, not per file).
    pid: u32,
    /// Regular files this run wrote, by entry name: a stream learns which
    /// were really symlinks only from the central directory at its end.
    files: std::collections::HashMap<String, PathBuf>,
}

impl<'a> Extractor<'a> {
    fn new(dest: &Path, opts: &'a ExtractOptions) -> Result<Extractor<'a>> {
        let mut created = Vec::new();
        // Remember which of dest's own ancestors this run makes.
        let mut missing = Vec::new();
        let mut p = dest.to_path_buf();
        while !p.as_os_str().is_empty() && fs::symlink_metadata(&p).is_err() {
            missing.push(p.clone());
            match p.parent() {
                Some(q) => p = q.to_path_buf(),
                None => break,
            }
        }
        fs::create_dir_all(dest)?;
        for m in missing.into_iter().rev() {
            created.push((m, true));
        }
        Ok(Extractor {
            dest: dest.canonicalize()?,
            opts,
            limits: Limiter::new(opts),
            seen: HashSet::new(),
            links: Vec::new(),
            report: ExtractReport::default(),
            tmp_counter: 0,
            buf: vec![0; 64 * 1024],
            dirs: HashSet::new(),
            created,
            pid: std::process::id(),
            files: std::collections::HashMap::new(),
        })
    }

    /// Checks limits and path rules; returns the relative path, or `None`
    /// for an entry this extraction leaves out (a directory under
    /// `junk_paths`).
    fn admit(&mut self, e: &Entry, declared: bool) -> Result<Option<PathBuf>> {
        self.limits.entry(e, declared)?;
        let mut rel = safe_path(&e.name)?;
        let kind = e.kind();
        if self.opts.junk_paths {
            if kind == EntryKind::Directory {
                return Ok(None);
            }
            rel = PathBuf::from(rel.file_name().unwrap_or_default());
        }
        if !self.seen.insert(rel.clone()) && kind != EntryKind::Directory {
            return Err(Error::Duplicate {
                name: e.name.clone(),
            });
        }
        self.check_no_symlink_parents(&e.name, &rel)?;
        Ok(Some(rel))
    }

    /// Refuses to write through any symlink already on disk inside `dest`.
    fn check_no_symlink_parents(&self, name: &str, rel: &Path) -> Result<()> {
        let mut p = self.dest.clone();
        let mut sub = PathBuf::new();
        let mut comps = rel.components().peekable();
        while let Some(c) = comps.next() {
            p.push(c);
            sub.push(c);
            if comps.peek().is_none() {
                break;
            }
            if self.dirs.contains(&sub) {
                continue;
            }
            if fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                return Err(Error::UnsafePath {
                    name: name.to_owned(),
                    reason: "path passes through a symlink",
                });
            }
        }
        Ok(())
    }

    /// Creates `dest/rel` and its missing parents as real directories,
    /// recording each one made; refuses a link or file in the way.
    fn make_dirs(&mut self, name: &str, rel: &Path) -> Result<()> {
        if rel.as_os_str().is_empty() || self.dirs.contains(rel) {
            return Ok(());
        }
        if let Some(parent) = rel.parent() {
            self.make_dirs(name, parent)?;
        }
        let p = self.dest.join(rel);
        match fs::create_dir(&p) {
            Ok(()) => self.created.push((p, true)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {
                let m = fs::symlink_metadata(&p).map_err(output(&p))?;
                if m.file_type().is_symlink() {
                    return Err(Error::UnsafePath {
                        name: name.to_owned(),
                        reason: "directory is a symlink on disk",
                    });
                }
                // Never replaced, not even with overwriting allowed: it
                // is not one of the archive's files (Info-ZIP refuses too).
                if !m.is_dir() {
                    return Err(output(&p)(std::io::Error::new(
                        std::io::ErrorKind::AlreadyExists,
                        "exists and is not a directory",
                    )));
                }
            }
            Err(err) => return Err(output(&p)(err)),
        }
        self.dirs.insert(rel.to_path_buf());
        Ok(())
    }

    /// Turns the files written for `names` (entries a stream's central
    /// directory marks as symlinks) into deferred links; [`Self::finish`]
    /// then confines and creates them like any other link.
    fn relink(&mut self, names: &[String]) -> Result<()> {
        for name in names {
            let Some(rel) = self.files.remove(name) else {
                continue;
            };
            let at = self.dest.join(&rel);
            let t = fs::read(&at)?;
            if t.len() > 4096 {
                return Err(Error::UnsafePath {
                    name: name.clone(),
                    reason: "symlink target over 4 KiB",
                });
            }
            let t = String::from_utf8(t).map_err(|_| Error::UnsafePath {
                name: name.clone(),
                reason: "symlink target is not UTF-8",
            })?;
            fs::remove_file(&at)?;
            self.report.files -= 1;
            self.report.bytes -= t.len() as u64;
            self.links.push((name.clone(), rel, t));
        }
        Ok(())
    }

    /// Removes, newest first, what this run created: its files, then its
    /// directories if they are empty. Called when the run fails.
    fn undo(&mut self) {
        for (p, is_dir) in std::mem::take(&mut self.created).into_iter().rev() {
            let _ = if is_dir {
                fs::remove_dir(&p)
            } else {
                fs::remove_file(&p)
            };
        }
    }

    /// Writes one entry whose data comes from `read`. `counts` reports
    /// (compressed consumed, produced) for the ratio check.
    fn place(
        &mut self,
        e: &Entry,
        rel: PathBuf,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
    ) -> Result<()> {
        let target = self.dest.join(&rel);
        match e.kind() {
            EntryKind::Directory => {
                // make_dirs refuses a link here: creating or chmodding
                // through one would act outside the destination.
                self.make_dirs(&e.name, &rel)?;
                self.report.dirs += 1;
                if self.opts.permissions
                    && let Some(m) = e.unix_mode
                {
                    set_mode(&target, (m & 0o777) | 0o700)?;
                }
                drain(read, &mut self.buf)?;
            }
            EntryKind::Symlink => {
                let mut t = Vec::new();
                loop {
                    let n = read(&mut self.buf)?;
                    if n == 0 {
                        break;
                    }
                    t.extend_from_slice(&self.buf[..n]);
                    if t.len() > 4096 {
                        return Err(Error::UnsafePath {
                            name: e.name.clone(),
                            reason: "symlink target over 4 KiB",
                        });
                    }
                }
                let t = String::from_utf8(t).map_err(|_| Error::UnsafePath {
                    name: e.name.clone(),
                    reason: "symlink target is not UTF-8",
                })?;
                self.links.push((e.name.clone(), rel, t));
            }
            EntryKind::File => {
                if let Some(parent) = rel.parent() {
                    self.make_dirs(&e.name, parent)?;
                }
                // A file that fits the buffer is decoded and verified whole
                // before anything is created, then written under its own
                // name, created exclusively (so an existing file or link is
                // never followed or replaced, and no stat is needed to find
                // it): a corrupt entry never reaches the disk, and a failed
                // write is removed. A temporary and a rename per file were a
                // third of the system calls of extracting tiny files.
                let (head, whole) = self.read_head(e, read, counts)?;
                let existed = if whole {
                    match create_whole(self.opts, e, &target, &self.buf[..head]) {
                        Ok(()) => {
                            self.placed(e, rel, target, false, head as u64);
                            return Ok(());
                        }
                        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => true,
                        Err(err) => return Err(output(&target)(err)),
                    }
                } else {
                    fs::symlink_metadata(&target).is_ok()
                };
                if existed && self.opts.skip_existing {
                    // `unzip -n`: leave it, but still read (and so verify
                    // and count against the limits) what the archive holds.
                    let n = self.rest_of_entry(e, head as u64, whole, read, counts, |_| Ok(()))?;
                    self.limits.done(n);
                    return Ok(());
                }
                if existed && !self.opts.overwrite {
                    return Err(Error::Exists { path: target });
                }
                self.tmp_counter += 1;
                let tmp = target.with_file_name(format!(
                    ".{}.zipstream-{}-{}",
                    target
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    self.pid,
                    self.tmp_counter
                ));
                // Whatever fails (data, chmod, rename over a directory),
                // the temporary goes; the caller's listing of it lasts
                // until then.
                let _listed = self.opts.on_temporary.as_ref().map(|h| h.listed(&tmp));
                match self.write_file(e, &tmp, &target, head, whole, read, counts) {
                    Ok(n) => self.placed(e, rel, target, existed, n),
                    Err(err) => {
                        let _ = fs::remove_file(&tmp);
                        return Err(err);
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads the start of an entry into the buffer, checking the limits;
    /// returns how many bytes it holds and whether that is the whole entry
    /// (verified: the reader has returned its end).
    fn read_head(
        &mut self,
        e: &Entry,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
    ) -> Result<(usize, bool)> {
        let mut n = 0usize;
        while n < self.buf.len() {
            let k = read(&mut self.buf[n..])?;
            if k == 0 {
                return Ok((n, true));
            }
            n += k;
            let (c, p) = counts();
            self.limits.data(e, n as u64, c, p)?;
        }
        Ok((n, false))
    }

    /// Records a file written at `target` (`existed`: it replaced one).
    fn placed(&mut self, e: &Entry, rel: PathBuf, target: PathBuf, existed: bool, n: u64) {
        if !existed {
            self.created.push((target, false));
        }
        self.files.insert(e.name.clone(), rel);
        self.report.files += 1;
        self.report.bytes += n;
        self.limits.done(n);
    }

    /// Reads the rest of entry `e` (past the `n` bytes already read; none
    /// when `whole` says those were all of it) through the buffer, checking
    /// the limits as it goes, and hands each piece to `sink`; returns the
    /// entry's size.
    fn rest_of_entry(
        &mut self,
        e: &Entry,
        mut n: u64,
        whole: bool,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
        mut sink: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<u64> {
        if whole {
            return Ok(n);
        }
        loop {
            let k = read(&mut self.buf)?;
            if k == 0 {
                return Ok(n);
            }
            n += k as u64;
            let (c, p) = counts();
            self.limits.data(e, n, c, p)?;
            sink(&self.buf[..k])?;
        }
    }

    /// Writes `tmp` (the `head` bytes already in the buffer, then, unless
    /// they are the `whole` entry, the rest), sets its mode and time through
    /// the open handle, and renames it to `target`; returns the bytes
    /// written.
    #[allow(clippy::too_many_arguments)]
    fn write_file(
        &mut self,
        e: &Entry,
        tmp: &Path,
        target: &Path,
        head: usize,
        whole: bool,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
    ) -> Result<u64> {
        // File system errors name the file the user will look for; errors
        // from reading the archive stay as they are.
        let mut f = fs::File::options()
            .write(true)
            .create_new(true)
            .open(tmp)
            .map_err(output(target))?;
        f.write_all(&self.buf[..head]).map_err(output(target))?;
        let n = self.rest_of_entry(e, head as u64, whole, read, counts, |b| {
            f.write_all(b).map_err(output(target))
        })?;
        set_mode_and_time(self.opts, e, &f)?;
        drop(f);
        fs::rename(tmp, target).map_err(output(target))?;
        Ok(n)
    }

    /// Validates and creates the deferred symlinks, then checks every link
    /// this run made against what is really on disk.
    fn finish(mut self) -> Result<ExtractReport> {
        let link_set: HashSet<PathBuf> = self.links.iter().map(|(_, r, _)| r.clone()).collect();
        let links = std::mem::take(&mut self.links);
        let mut made: Vec<(String, PathBuf, String)> = Vec::new();
        let res = (|| -> Result<()> {
            for (name, rel, target) in links {
                check_link_target(&name, &rel, &target, &link_set)?;
                if !self.opts.symlinks {
                    continue;
                }
                let at = self.dest.join(&rel);
                self.check_no_symlink_parents(&name, &rel)?;
                // The lexical check cannot see links already on disk (an
                // earlier run's, or this run's): resolve through them.
                if resolve_inside(&self.dest, &rel, &target) == Err(Unconfined::Leaves) {
                    return Err(Error::SymlinkEscape { name, target });
                }
                if let Some(parent) = rel.parent() {
                    self.make_dirs(&name, parent)?;
                }
                if fs::symlink_metadata(&at).is_ok() {
                    if !self.opts.overwrite {
                        return Err(Error::Exists { path: at });
                    }
                    fs::remove_file(&at)?;
                }
                make_symlink(&target, &at)?;
                made.push((name, rel, target));
                self.report.symlinks += 1;
            }
            // A link made later can change where an earlier one leads
            // (`a -> x/y/../..` before `x -> .`): re-resolve them all now
            // that the tree is final.
            for (name, rel, target) in &made {
                if resolve_inside(&self.dest, rel, target) == Err(Unconfined::Leaves) {
                    return Err(Error::SymlinkEscape {
                        name: name.clone(),
                        target: target.clone(),
                    });
                }
            }
            Ok(())
        })();
        if let Err(e) = res {
            // Never leave a link behind from a run that refused one.
            for (_, rel, _) in &made {
                let _ = fs::remove_file(self.dest.join(rel));
            }
            self.undo();
            return Err(e);
        }
        Ok(self.report)
    }
}

/// Why a physical resolution failed.
#[derive(Debug, PartialEq, Eq)]
enum Unconfined {
    /// The path leaves the root (`..` above it, or an absolute link).
    Leaves,
    /// More than [`MAX_HOPS`] links were followed: the kernel refuses to
    /// resolve such a path too (ELOOP), so it reaches nothing.
    Loop,
}

/// Links followed before a resolution is called a loop (Linux's own limit).
const MAX_HOPS: usize = 40;

/// Resolves the target of a link at `root/rel` the way the kernel would,
/// following every link that exists on disk under `root`, and fails if the
/// walk ever leaves `root`. Components that do not exist yet are taken
/// lexically. Returns the resolved path relative to `root`.
fn resolve_inside(
    root: &Path,
    rel: &Path,
    target: &str,
) -> std::result::Result<PathBuf, Unconfined> {
    let mut at: Vec<std::ffi::OsString> = rel
        .parent()
        .map(|p| p.components().map(|c| c.as_os_str().to_owned()).collect())
        .unwrap_or_default();
    let mut todo: std::collections::VecDeque<std::ffi::OsString> =
        std::collections::VecDeque::new();
    push_front_target(&mut todo, target.as_ref())?;
    let mut hops = 0usize;
    while let Some(part) = todo.pop_front() {
        if part == ".." {
            at.pop().ok_or(Unconfined::Leaves)?;
            continue;
        }
        at.push(part);
        let here: PathBuf = std::iter::once(root.as_os_str())
            .chain(at.iter().map(|s| s.as_os_str()))
            .collect();
        if let Ok(m) = fs::symlink_metadata(&here)
            && m.file_type().is_symlink()
        {
            hops += 1;
            if hops > MAX_HOPS {
                return Err(Unconfined::Loop);
            }
            let t = fs::read_link(&here).map_err(|_| Unconfined::Leaves)?;
            at.pop();
            push_front_target(&mut todo, t.as_os_str())?;
        }
    }
    Ok(at.iter().collect())
}

/// Queues a link target's components ahead of what is left to resolve;
/// absolute targets leave the root by definition.
fn push_front_target(
    todo: &mut std::collections::VecDeque<std::ffi::OsString>,
    target: &std::ffi::OsStr,
) -> std::result::Result<(), Unconfined> {
    use std::os::unix::ffi::OsStrExt;
    let b = target.as_bytes();
    if b.is_empty() || b[0] == b'/' || b[0] == b'\\' || b.contains(&0) {
        return Err(Unconfined::Leaves);
    }
    let parts: Vec<&[u8]> = b
        .split(|&c| c == b'/' || c == b'\\')
        .filter(|p| !p.is_empty() && *p != b".")
        .collect();
    for p in parts.into_iter().rev() {
        todo.push_front(std::ffi::OsStr::from_bytes(p).to_owned());
    }
    Ok(())
}

/// A link target must resolve, lexically, inside the destination, and may
/// not step `..` out of another link the archive creates (whose real target
/// lexical resolution cannot see). [`resolve_inside`] then checks it against
/// the disk.
fn check_link_target(name: &str, rel: &Path, target: &str, links: &HashSet<PathBuf>) -> Result<()> {
    let escape = || Error::SymlinkEscape {
        name: name.to_owned(),
        target: target.to_owned(),
    };
    if target.is_empty()
        || target.starts_with('/')
        || target.starts_with('\\')
        || target.contains('\0')
    {
        return Err(escape());
    }
    let b = target.as_bytes();
    if b.len() >= 2 && b[1] == b':' {
        return Err(escape());
    }
    let mut cur: Vec<String> = rel
        .parent()
        .map(|p| {
            p.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for part in target.replace('\\', "/").split('/') {
        match part {
            "" | "." => {}
            ".." => {
                let here: PathBuf = cur.iter().collect();
                if links.contains(&here) {
                    return Err(escape());
                }
                if cur.pop().is_none() {
                    return Err(escape());
                }
            }
            p => cur.push(p.to_owned()),
        }
    }
    Ok(())
}

/// Creates `target` exclusively and writes `data`, an entry's whole
/// verified contents, into it with the entry's mode and time; a failure
/// after creating it removes it. `AlreadyExists` when something (a file, a
/// link, dangling or not) has the name.
fn create_whole(
    opts: &ExtractOptions,
    e: &Entry,
    target: &Path,
    data: &[u8],
) -> std::io::Result<()> {
    let mut f = fs::File::options()
        .write(true)
        .create_new(true)
        .open(target)?;
    let res = f
        .write_all(data)
        .and_then(|()| set_mode_and_time(opts, e, &f).map_err(std::io::Error::other));
    drop(f);
    if res.is_err() {
        let _ = fs::remove_file(target);
    }
    res
}

/// Names `path` in a file system error met while writing it.
fn output(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |source| Error::Output {
        path: path.to_path_buf(),
        source,
    }
}

/// Applies the entry's permission bits (if asked) and modification time
/// through an open handle.
fn set_mode_and_time(opts: &ExtractOptions, e: &Entry, f: &fs::File) -> Result<()> {
    if opts.permissions
        && let Some(m) = e.unix_mode
    {
        set_file_mode(f, m & 0o777)?;
    }
    let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_secs(e.mtime.max(0) as u64);
    // A time the file system cannot store is not worth failing over.
    let _ = f.set_modified(mtime);
    Ok(())
}

fn drain(read: &mut dyn FnMut(&mut [u8]) -> Result<usize>, buf: &mut [u8]) -> Result<()> {
    while read(buf)? > 0 {}
    Ok(())
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(p, fs::Permissions::from_mode(mode))?;
    Ok(())
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> Result<()> {
    Ok(())
}

#[cfg(unix)]
fn set_file_mode(f: &fs::File, mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    f.set_permissions(fs::Permissions::from_mode(mode))?;
    Ok(())
}

#[cfg(not(unix))]
fn set_file_mode(_: &fs::File, _: u32) -> Result<()> {
    Ok(())
}

#[cfg(unix)]
fn make_symlink(target: &str, at: &Path) -> Result<()> {
    std::os::unix::fs::symlink(target, at)?;
    Ok(())
}

#[cfg(not(unix))]
fn make_symlink(_: &str, _: &Path) -> Result<()> {
    Ok(())
}

/// Extracts every entry of a random-access archive into `dest`.
pub fn extract_archive<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    dest: &Path,
    opts: &ExtractOptions,
) -> Result<ExtractReport> {
    extract_archive_selected(archive, dest, opts, &|_| true)
}

/// Extracts the entries of a random-access archive for which `select` is
/// true (`unzip a.zip 'pattern'`) into `dest`. A run that fails removes
/// the files, links and directories it created.
pub fn extract_archive_selected<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    dest: &Path,
    opts: &ExtractOptions,
    select: &dyn Fn(&Entry) -> bool,
) -> Result<ExtractReport> {
    // Validate every name before writing anything.
    for e in archive.entries().iter().filter(|e| select(e)) {
        safe_path(&e.name)?;
    }
    let mut x = Extractor::new(dest, opts)?;
    let res = (|| -> Result<()> {
        for i in 0..archive.entries().len() {
            let e = archive.entries()[i].clone();
            if !select(&e) {
                continue;
            }
            let Some(rel) = x.admit(&e, true)? else {
                continue;
            };
            let pw = if e.encrypted {
                opts.password.as_deref()
            } else {
                None
            };
            let r = std::cell::RefCell::new(archive.open(i, pw)?);
            let counts = || r.borrow().counts();
            let mut read = |b: &mut [u8]| r.borrow_mut().read_data(b);
            x.place(&e, rel, &mut read, &counts)?;
        }
        Ok(())
    })();
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
    let mut x = Extractor::new(dest, opts)?;
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
/// returned after the entry's last piece. This is `unzip -p` and `-t`.
pub fn read_archive_data<R: Read + Seek>(
    archive: &mut ZipArchive<R>,
    opts: &ExtractOptions,
    select: &dyn Fn(&Entry) -> bool,
    sink: &mut dyn FnMut(&Entry, &[u8]) -> Result<()>,
) -> Result<ExtractReport> {
    let mut limits = Limiter::new(opts);
    let mut report = ExtractReport::default();
    let mut buf = vec![0u8; 64 * 1024];
    for i in 0..archive.entries().len() {
        let e = archive.entries()[i].clone();
        if !select(&e) {
            continue;
        }
        limits.entry(&e, true)?;
        let pw = if e.encrypted {
            opts.password.as_deref()
        } else {
            None
        };
        let r = std::cell::RefCell::new(archive.open(i, pw)?);
        let n = pass_data(
            &e,
            &mut limits,
            &mut buf,
            sink,
            &mut |b| r.borrow_mut().read_data(b),
            &|| r.borrow().counts(),
        )?;
        tally(&mut report, &e, n);
        limits.done(n);
    }
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
    use super::*;

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
