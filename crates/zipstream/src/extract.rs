//! Safe extraction into a directory.
//!
//! Refuses absolute paths, `..` traversal, paths through symlinks, symlinks
//! whose target leaves the destination, and duplicate names; enforces limits
//! on entry count, total size and compression ratio while data is decoded
//! (declared sizes are not trusted). Each file is written to a temporary
//! sibling and renamed into place only after its CRC/MAC verified, so a
//! corrupt entry never leaves a complete-looking file. Symlinks are created
//! last, so no entry is ever written through one the archive made, and
//! their targets are resolved against the disk, through every link already
//! there: a lexical check cannot see where `k/l/..` goes when `k/l` is a link.
//!
//! Streaming extraction sees only local headers, which carry no file type:
//! there, symlink entries are written as regular files holding the target
//! path (harmless), as other streaming extractors do.

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

/// Extraction state shared by the archive and stream front ends.
struct Extractor<'a> {
    dest: PathBuf,
    opts: &'a ExtractOptions,
    seen: HashSet<PathBuf>,
    links: Vec<(String, PathBuf, String)>,
    report: ExtractReport,
    entries: u64,
    tmp_counter: u64,
    buf: Vec<u8>,
}

impl<'a> Extractor<'a> {
    fn new(dest: &Path, opts: &'a ExtractOptions) -> Result<Extractor<'a>> {
        fs::create_dir_all(dest)?;
        Ok(Extractor {
            dest: dest.canonicalize()?,
            opts,
            seen: HashSet::new(),
            links: Vec::new(),
            report: ExtractReport::default(),
            entries: 0,
            tmp_counter: 0,
            buf: vec![0; 64 * 1024],
        })
    }

    /// Checks limits and path rules; returns the relative path.
    fn admit(&mut self, e: &Entry) -> Result<PathBuf> {
        self.entries += 1;
        if self.entries > self.opts.max_entries {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "entry count",
                limit: self.opts.max_entries,
                actual: self.entries,
            });
        }
        let rel = safe_path(&e.name)?;
        let kind = e.kind();
        if !self.seen.insert(rel.clone()) && kind != EntryKind::Directory {
            return Err(Error::Duplicate {
                name: e.name.clone(),
            });
        }
        self.check_no_symlink_parents(&e.name, &rel)?;
        Ok(rel)
    }

    /// Refuses to write through any symlink already on disk inside `dest`.
    fn check_no_symlink_parents(&self, name: &str, rel: &Path) -> Result<()> {
        let mut p = self.dest.clone();
        let mut comps = rel.components().peekable();
        while let Some(c) = comps.next() {
            p.push(c);
            if comps.peek().is_none() {
                break;
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

    fn budget(&self) -> u64 {
        self.opts.max_total_bytes.saturating_sub(self.report.bytes)
    }

    fn check_declared(&self, e: &Entry) -> Result<()> {
        if e.size > self.budget() {
            return Err(Error::Limit {
                name: e.name.clone(),
                what: "total uncompressed size",
                limit: self.opts.max_total_bytes,
                actual: self.report.bytes.saturating_add(e.size),
            });
        }
        Ok(())
    }

    fn ratio_check(&self, e: &Entry, produced: u64, consumed: u64) -> Result<()> {
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
                // create_dir_all and chmod would follow a link left here.
                if fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err(Error::UnsafePath {
                        name: e.name.clone(),
                        reason: "directory is a symlink on disk",
                    });
                }
                fs::create_dir_all(&target)?;
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
                if let Some(parent) = target.parent() {
                    fs::create_dir_all(parent)?;
                }
                if !self.opts.overwrite && fs::symlink_metadata(&target).is_ok() {
                    return Err(Error::Exists { path: target });
                }
                self.tmp_counter += 1;
                let tmp = target.with_file_name(format!(
                    ".{}.zipstream-{}-{}",
                    target
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                        .unwrap_or_default(),
                    std::process::id(),
                    self.tmp_counter
                ));
                let res = self.write_file(e, &tmp, read, counts);
                match res {
                    Ok(n) => {
                        if self.opts.permissions
                            && let Some(m) = e.unix_mode
                        {
                            set_mode(&tmp, m & 0o777)?;
                        }
                        let mtime = std::time::UNIX_EPOCH
                            + std::time::Duration::from_secs(e.mtime.max(0) as u64);
                        if let Ok(f) = fs::File::options().write(true).open(&tmp) {
                            let _ = f.set_modified(mtime);
                        }
                        fs::rename(&tmp, &target)?;
                        self.report.files += 1;
                        self.report.bytes += n;
                    }
                    Err(err) => {
                        let _ = fs::remove_file(&tmp);
                        return Err(err);
                    }
                }
            }
        }
        Ok(())
    }

    fn write_file(
        &mut self,
        e: &Entry,
        tmp: &Path,
        read: &mut dyn FnMut(&mut [u8]) -> Result<usize>,
        counts: &dyn Fn() -> (u64, u64),
    ) -> Result<u64> {
        let mut f = fs::File::options().write(true).create_new(true).open(tmp)?;
        let budget = self.budget();
        let mut n = 0u64;
        loop {
            let k = read(&mut self.buf)?;
            if k == 0 {
                break;
            }
            n += k as u64;
            if n > budget {
                return Err(Error::Limit {
                    name: e.name.clone(),
                    what: "total uncompressed size",
                    limit: self.opts.max_total_bytes,
                    actual: self.report.bytes + n,
                });
            }
            let (c, p) = counts();
            self.ratio_check(e, p, c)?;
            f.write_all(&self.buf[..k])?;
        }
        f.flush()?;
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
                if let Some(parent) = at.parent() {
                    fs::create_dir_all(parent)?;
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
    let mut x = Extractor::new(dest, opts)?;
    // Validate every name before writing anything.
    for e in archive.entries() {
        safe_path(&e.name)?;
    }
    for i in 0..archive.entries().len() {
        let e = archive.entries()[i].clone();
        let rel = x.admit(&e)?;
        x.check_declared(&e)?;
        let r = std::cell::RefCell::new(archive.open(i, opts.password.as_deref())?);
        let counts = || r.borrow().counts();
        let mut read = |b: &mut [u8]| r.borrow_mut().read_data(b);
        x.place(&e, rel, &mut read, &counts)?;
    }
    x.finish()
}

/// Extracts a stream (e.g. stdin) into `dest`, entry by entry.
pub fn extract_stream<R: Read>(
    reader: &mut ZipStreamReader<R>,
    dest: &Path,
    opts: &ExtractOptions,
) -> Result<ExtractReport> {
    let mut x = Extractor::new(dest, opts)?;
    reader.set_password(opts.password.as_deref());
    while let Some(e) = reader.next_entry()? {
        let rel = x.admit(&e)?;
        let cell = std::cell::RefCell::new(&mut *reader);
        let counts = || cell.borrow().current_counts().unwrap_or((0, 0));
        let mut read = |b: &mut [u8]| cell.borrow_mut().read_data(b);
        x.place(&e, rel, &mut read, &counts)?;
    }
    x.finish()
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
