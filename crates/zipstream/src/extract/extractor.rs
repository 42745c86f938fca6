//! Writing entries to disk: the [`Extractor`] admits each entry (limits,
//! path rules, duplicates), creates directories, writes files (whole
//! and exclusive when small, through a temporary and a rename
//! otherwise), defers symlinks to the end, and removes what it created
//! when the run fails.

use std::collections::HashSet;
use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::confine::{Unconfined, check_link_target, resolve_inside};
use super::limits::Limiter;
use super::{Existing, ExtractOptions, ExtractReport, Placed, safe_path};
use crate::entry::{Entry, EntryKind};
use crate::error::{Error, Result};

/// Extraction state shared by the archive and stream front ends.
pub(super) struct Extractor<'a> {
    dest: PathBuf,
    opts: &'a ExtractOptions,
    pub(super) limits: Limiter<'a>,
    /// The relative paths admitted so far, by a 128-bit hash (16 bytes
    /// an entry, where the paths took a hundred): two names that differ
    /// collide with odds of one in 2^64 even among billions.
    seen: HashSet<u128>,
    links: Vec<(String, PathBuf, String)>,
    /// Links whose path was in use when their entry was read, and the
    /// caller said to replace what is there.
    replace: HashSet<PathBuf>,
    /// Directory entries and their times, set at the end (what is written
    /// into a directory moves its time).
    dir_times: Vec<(PathBuf, i64)>,
    report: ExtractReport,
    tmp_counter: u64,
    pub(super) buf: Vec<u8>,
    /// Directories known to exist as real directories (relative to `dest`),
    /// so each is checked and created once, not once per file.
    /// (`true`: this run made it, so everything in it is this run's too.)
    dirs: std::collections::HashMap<PathBuf, bool>,
    /// What this run created, in order, so a failed run can remove it.
    created: Created,
    /// This process's id, for temporary names (asked once, not per file).
    pid: u32,
    /// Regular files this run wrote, by entry name: a stream learns which
    /// were really symlinks only from the central directory at its end.
    /// `None` for an archive, whose central directory said so first.
    files: Option<std::collections::HashMap<String, PathBuf>>,
}

/// The paths a run created, newest last, packed in one buffer (a path
/// each, and whether it is a directory): the undo list of a 100,000-file
/// extraction in a few megabytes rather than tens.
#[derive(Default)]
struct Created {
    bytes: Vec<u8>,
    /// Where each path ends in `bytes`, and whether it is a directory.
    ends: Vec<(usize, bool)>,
}

impl Created {
    fn push(&mut self, p: &Path, is_dir: bool) {
        use std::os::unix::ffi::OsStrExt;
        self.bytes.extend_from_slice(p.as_os_str().as_bytes());
        self.ends.push((self.bytes.len(), is_dir));
    }

    /// Every path, newest first.
    fn newest_first(&self) -> impl Iterator<Item = (&Path, bool)> {
        use std::os::unix::ffi::OsStrExt;
        (0..self.ends.len()).rev().map(|i| {
            let start = if i == 0 { 0 } else { self.ends[i - 1].0 };
            let (end, is_dir) = self.ends[i];
            let p = Path::new(std::ffi::OsStr::from_bytes(&self.bytes[start..end]));
            (p, is_dir)
        })
    }
}

/// The hash `seen` keeps of a relative path: two SipHashes of it, with
/// std's fixed keys and a different first word each (the set only needs
/// the names of one run told apart, not a secret seed).
fn path_hash(rel: &Path) -> u128 {
    use std::hash::{Hash, Hasher};
    let half = |k: u64| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write_u64(k);
        rel.hash(&mut h);
        h.finish()
    };
    (u128::from(half(0x9e37_79b9_7f4a_7c15)) << 64) | u128::from(half(0x6a09_e667_f3bc_c908))
}

impl<'a> Extractor<'a> {
    /// An extractor into `dest`; `stream`: the entries come from a stream,
    /// whose files may turn out to be links (see [`Self::relink`]).
    pub(super) fn new(
        dest: &Path,
        opts: &'a ExtractOptions,
        stream: bool,
    ) -> Result<Extractor<'a>> {
        let mut created = Created::default();
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
        fs::create_dir_all(dest).map_err(|source| Error::Destination {
            path: dest.to_path_buf(),
            source,
        })?;
        for m in missing.into_iter().rev() {
            created.push(&m, true);
        }
        Ok(Extractor {
            dest: dest.canonicalize()?,
            opts,
            limits: Limiter::new(opts),
            seen: HashSet::new(),
            links: Vec::new(),
            replace: HashSet::new(),
            dir_times: Vec::new(),
            report: ExtractReport::default(),
            tmp_counter: 0,
            buf: vec![0; 64 * 1024],
            dirs: std::collections::HashMap::new(),
            created,
            pid: std::process::id(),
            files: stream.then(std::collections::HashMap::new),
        })
    }

    /// Checks limits and path rules; returns the relative path, or `None`
    /// for an entry this extraction leaves out (a directory under
    /// `junk_paths`).
    pub(super) fn admit(&mut self, e: &Entry, declared: bool) -> Result<Option<PathBuf>> {
        self.limits.entry(e, declared)?;
        let renamed = self.opts.rename.as_ref().and_then(|h| h.name(e));
        let mut rel = safe_path(renamed.as_deref().unwrap_or(&e.name))?;
        let kind = e.kind();
        if self.opts.junk_paths {
            if kind == EntryKind::Directory {
                return Ok(None);
            }
            rel = PathBuf::from(rel.file_name().unwrap_or_default());
        }
        if !self.seen.insert(path_hash(&rel)) && kind != EntryKind::Directory {
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
            if self.dirs.contains_key(&sub) {
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
        if rel.as_os_str().is_empty() || self.dirs.contains_key(rel) {
            return Ok(());
        }
        if let Some(parent) = rel.parent() {
            self.make_dirs(name, parent)?;
        }
        let p = self.dest.join(rel);
        let made = match fs::create_dir(&p) {
            Ok(()) => {
                self.created.push(&p, true);
                true
            }
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
                false
            }
            Err(err) => return Err(output(&p)(err)),
        };
        self.dirs.insert(rel.to_path_buf(), made);
        Ok(())
    }

    /// Turns the files written for `names` (entries a stream's central
    /// directory marks as symlinks) into deferred links; [`Self::finish`]
    /// then confines and creates them like any other link.
    pub(super) fn relink(&mut self, names: &[String]) -> Result<()> {
        for name in names {
            let Some(rel) = self.files.as_mut().and_then(|f| f.remove(name)) else {
                continue;
            };
            let at = self.dest.join(&rel);
            // At most one byte past the limit: the entry may be of any
            // size, and a link target is never more than 4 KiB.
            let mut t = Vec::new();
            fs::File::open(&at)?.take(4097).read_to_end(&mut t)?;
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

    /// Tells the caller's hook, if any, of `p`.
    fn tell(&self, p: Placed<'_>) {
        if let Some(h) = &self.opts.on_placed {
            h.tell(p);
        }
    }

    /// Removes, newest first, what this run created: its files in folders
    /// that were there before, and the folders it made with all they hold
    /// (all of it this run's). Called when the run fails.
    pub(super) fn undo(&mut self) {
        let created = std::mem::take(&mut self.created);
        for (p, is_dir) in created.newest_first() {
            let _ = if is_dir {
                fs::remove_dir_all(p)
            } else {
                fs::remove_file(p)
            };
        }
    }

    /// Writes one entry whose data comes from `read`. `counts` reports
    /// (compressed consumed, produced) for the ratio check.
    pub(super) fn place(
        &mut self,
        e: &Entry,
        rel: PathBuf,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
    ) -> Result<()> {
        let target = self.dest.join(&rel);
        match e.kind() {
            EntryKind::Directory => self.place_directory(e, &rel, &target, read),
            EntryKind::Symlink => self.place_symlink(e, rel, read),
            EntryKind::File => self.place_file(e, rel, target, read, counts),
        }
    }

    /// A directory entry: made (never through a link), its time and mode
    /// noted, its data (normally none) read past.
    fn place_directory(
        &mut self,
        e: &Entry,
        rel: &Path,
        target: &Path,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
    ) -> Result<()> {
        // make_dirs refuses a link here: creating or chmodding
        // through one would act outside the destination.
        let there = fs::symlink_metadata(target).is_ok();
        self.make_dirs(&e.name, rel)?;
        self.report.dirs += 1;
        // Told for a directory entry this run creates only, as
        // Info-ZIP prints `creating:`: the parents made for a file,
        // and a folder already there, go unsaid.
        if !there {
            self.tell(Placed::Directory(rel));
        }
        if self.opts.dir_times {
            self.dir_times.push((rel.to_path_buf(), e.mtime));
        }
        if self.opts.permissions
            && let Some(m) = e.unix_mode
        {
            set_mode(target, (m & 0o777) | 0o700)?;
        }
        drain(read, &mut self.buf)?;
        Ok(())
    }

    /// A link entry: its target read (at most 4 KiB of UTF-8), and the
    /// link made at the end of the run, after every file.
    fn place_symlink(
        &mut self,
        e: &Entry,
        rel: PathBuf,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
    ) -> Result<()> {
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
        // Something already where the link goes is asked about
        // now, in the entry's turn (as Info-ZIP asks), though the
        // link is made at the end.
        let in_way = fs::symlink_metadata(self.dest.join(&rel)).ok();
        if !self.opts.overwrite && in_way.as_ref().is_some_and(|m| m.is_symlink()) {
            self.tell(Placed::LinkInTheWay(&rel));
        }
        if self.opts.skip_existing && in_way.is_some() {
            // `unzip -n`: what is there stays; the link is not made.
            return Ok(());
        }
        let mut rel = rel;
        while !self.opts.overwrite && fs::symlink_metadata(self.dest.join(&rel)).is_ok() {
            let Some(hook) = &self.opts.on_exists else {
                break;
            };
            match hook.answer(&rel) {
                Existing::Replace => {
                    self.replace.insert(rel.clone());
                    break;
                }
                Existing::Keep => return Ok(()),
                Existing::Rename(new) => rel = safe_path(&new)?,
            }
        }
        self.tell(Placed::LinkDeferred(&rel, &t));
        self.links.push((e.name.clone(), rel, t));
        Ok(())
    }

    /// A file entry: decoded and verified, then written under its name
    /// or through a temporary, as the options and what is there say.
    fn place_file(
        &mut self,
        e: &Entry,
        mut rel: PathBuf,
        mut target: PathBuf,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
    ) -> Result<()> {
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
        let existed = loop {
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
            if !existed || self.opts.skip_existing || self.opts.overwrite {
                break existed;
            }
            let Some(hook) = &self.opts.on_exists else {
                return Err(Error::Exists { path: target });
            };
            match hook.answer(&rel) {
                Existing::Replace => break true,
                Existing::Keep => {
                    self.keep_existing(e, head, whole, read, counts)?;
                    return Ok(());
                }
                Existing::Rename(name) => {
                    // The new name follows an entry's rules: it
                    // stays inside the destination.
                    rel = safe_path(&name)?;
                    self.check_no_symlink_parents(&name, &rel)?;
                    if let Some(parent) = rel.parent() {
                        self.make_dirs(&name, parent)?;
                    }
                    target = self.dest.join(&rel);
                }
            }
        };
        if existed && self.opts.skip_existing {
            return self.keep_existing(e, head, whole, read, counts);
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
        Ok(())
    }

    /// `unzip -n`, or a "no" to the prompt: leaves the file on disk, but
    /// still reads (and so verifies and counts against the limits) what
    /// the archive holds.
    fn keep_existing(
        &mut self,
        e: &Entry,
        head: usize,
        whole: bool,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
    ) -> Result<()> {
        let n = self.rest_of_entry(e, head as u64, whole, read, counts, |_| Ok(()))?;
        self.limits.done(n);
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
        // A file in a folder this run made goes with the folder.
        let in_new_folder = rel
            .parent()
            .is_some_and(|p| self.dirs.get(p).copied().unwrap_or(false));
        if !existed && !in_new_folder {
            self.created.push(&target, false);
        }
        self.tell(Placed::File(&rel, e.method));
        if let Some(files) = &mut self.files {
            files.insert(e.name.clone(), rel);
        }
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

    /// Gives the directory entries' directories their recorded times,
    /// deepest last-listed first, once nothing more is written into them;
    /// only real directories (never through a link), and a time the file
    /// system refuses is left as it is.
    fn set_dir_times(&self) {
        for (rel, t) in self.dir_times.iter().rev() {
            let p = self.dest.join(rel);
            let real_dir = fs::symlink_metadata(&p).is_ok_and(|m| m.is_dir());
            if !real_dir || self.check_no_symlink_parents("", rel).is_err() {
                continue;
            }
            let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs((*t).max(0) as u64);
            if let Ok(d) = fs::File::open(&p) {
                let _ = d.set_modified(at);
            }
        }
    }

    /// Validates and creates the deferred symlinks, then checks every link
    /// this run made against what is really on disk.
    pub(super) fn finish(mut self) -> Result<ExtractReport> {
        let link_set: HashSet<PathBuf> = self.links.iter().map(|(_, r, _)| r.clone()).collect();
        let links = std::mem::take(&mut self.links);
        let mut made: Vec<(String, PathBuf, String)> = Vec::new();
        let res = (|| -> Result<()> {
            'links: for (name, rel, target) in links {
                check_link_target(&name, &rel, &target, &link_set)?;
                if !self.opts.symlinks {
                    continue;
                }
                let mut rel = rel;
                loop {
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
                        if self.opts.skip_existing {
                            continue 'links;
                        }
                        if !self.opts.overwrite && !self.replace.contains(&rel) {
                            let Some(hook) = &self.opts.on_exists else {
                                return Err(Error::Exists { path: at });
                            };
                            match hook.answer(&rel) {
                                Existing::Replace => {}
                                Existing::Keep => continue 'links,
                                Existing::Rename(new) => {
                                    // Confined as an entry's name; the
                                    // target is checked again from there.
                                    rel = safe_path(&new)?;
                                    continue;
                                }
                            }
                        }
                        fs::remove_file(&at)?;
                    }
                    make_symlink(&target, &at)?;
                    self.tell(Placed::LinkMade(&rel, &target));
                    made.push((name, rel, target));
                    self.report.symlinks += 1;
                    break;
                }
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
        if res.is_ok() {
            self.set_dir_times();
        }
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
    if opts.file_times {
        let mtime = std::time::UNIX_EPOCH + std::time::Duration::from_secs(e.mtime.max(0) as u64);
        // A time the file system cannot store is not worth failing over.
        let _ = f.set_modified(mtime);
    }
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
