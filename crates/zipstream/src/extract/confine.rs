//! Where a symlink leads: lexically, for the archive's own link targets
//! ([`check_link_target`]), and physically, through every link already
//! on disk ([`resolve_inside`]), so no link the extraction makes points
//! outside the destination.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Why a physical resolution failed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unconfined {
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
pub(super) fn resolve_inside(
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
pub(super) fn check_link_target(
    name: &str,
    rel: &Path,
    target: &str,
    links: &HashSet<PathBuf>,
) -> Result<()> {
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
