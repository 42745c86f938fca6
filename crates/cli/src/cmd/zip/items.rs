//! The files `perfkit zip` adds: the paths given walked into [`Item`]s,
//! and each item's data opened for its entry.

use std::fs;
use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result, bail};
use zipstream::pattern::{self, Pattern};
use zipstream::update::Candidate;

use zipstream::line_ends::Converting;
pub(super) use zipstream::line_ends::LineEnds;
pub(super) use zipstream::names::{archive_name, dos_name};

use super::Options;

/// A file system item to add: where it is, the name it is stored under
/// (a directory's without its `/`), and what `lstat` said when it was
/// listed (`stat` for a link followed).
pub(super) struct Item {
    pub(super) path: PathBuf,
    pub(super) name: String,
    pub(super) meta: fs::Metadata,
}

/// A file's modification time in Unix seconds, 0 when unknown or before
/// 1970.
pub(super) fn mtime(meta: &fs::Metadata) -> i64 {
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

    /// The same device and inode, unless read from stdin.
    fn same_file(&self, first: &Self) -> bool {
        use std::os::unix::fs::MetadataExt;
        self.path.as_os_str() != "-"
            && (self.meta.dev(), self.meta.ino()) == (first.meta.dev(), first.meta.ino())
    }
}

/// An [`Item`] looked at through a reference (`-sf` asks which items an
/// update would take, keeping them).
pub(super) struct Shown<'a>(pub(super) &'a Item);

impl Candidate for Shown<'_> {
    fn name(&self) -> &str {
        &self.0.name
    }

    fn path(&self) -> &Path {
        &self.0.path
    }

    fn mtime(&self) -> i64 {
        self.0.mtime()
    }

    fn is_dir(&self) -> bool {
        self.0.is_dir()
    }

    fn same_file(&self, first: &Self) -> bool {
        self.0.same_file(first.0)
    }
}

/// What [`collect`] found.
pub(super) struct Found {
    /// The items to store, in order.
    pub(super) items: Vec<Item>,
    /// How many names were skipped with "name not matched".
    pub(super) unmatched: usize,
}

/// The longest line `-@` takes as a name: Linux's PATH_MAX. A longer one
/// (a device or a binary file on stdin) names no file, and reading it
/// whole would take memory without bound.
const MAX_NAME_LINE: u64 = 4096;

/// The names `-@` reads from stdin, one a line; a line longer than
/// [`MAX_NAME_LINE`] is refused.
fn names_from_stdin() -> Result<Vec<PathBuf>> {
    use std::os::unix::ffi::OsStringExt;
    let mut stdin = io::stdin().lock();
    let mut names = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = (&mut stdin)
            .take(MAX_NAME_LINE + 1)
            .read_until(b'\n', &mut line)
            .context("reading names from stdin (-@)")?;
        if n == 0 {
            return Ok(names);
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            // A list written on Windows: its names end before the CR.
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        } else if n as u64 > MAX_NAME_LINE {
            bail!(
                "reading names from stdin (-@): a line is longer than {MAX_NAME_LINE} bytes, \
                 which names no file (is stdin a file list?)"
            );
        }
        if !line.is_empty() {
            names.push(PathBuf::from(std::ffi::OsString::from_vec(line.clone())));
        }
    }
}

/// The items `opts` names: its paths (and with `-@` those read from
/// stdin), walked in sorted order under `-r`, filtered by `-i`/`-x`;
/// FIFOs, devices and sockets are skipped with a warning, and so are
/// names with nothing to store (missing, a link to nothing, a loop of
/// links), with Info-ZIP's "name not matched".
pub(super) fn collect(opts: &Options) -> Result<Found> {
    let mut roots = opts.paths.clone();
    if opts.names_stdin {
        roots.extend(names_from_stdin()?);
    }
    let mut unmatched = 0usize;
    if roots.is_empty() {
        bail!("nothing to add: give paths or -@");
    }
    let compile = |v: &[String]| v.iter().map(|p| Pattern::new(p)).collect::<Vec<_>>();
    let (include, exclude) = (compile(&opts.include), compile(&opts.exclude));
    let recurse_patterns: Vec<Pattern> = opts
        .recurse_patterns
        .iter()
        .map(|p| Pattern::within_folders(p))
        .collect();
    let mut out = Vec::new();
    // Each path with its depth below its root, and the folders (device,
    // inode) being walked above the one popped: a followed link back to
    // one of them would be walked for ever.
    let mut stack: Vec<(PathBuf, usize)> = roots.into_iter().rev().map(|p| (p, 0)).collect();
    let mut walking: Vec<(u64, u64)> = Vec::new();
    while let Some((p, depth)) = stack.pop() {
        walking.truncate(depth);
        if p.as_os_str() == "-" {
            // Data from stdin, stored as "-" like Info-ZIP; its size is
            // unknown, so a large stream gets the ZIP64 streaming layout.
            if opts.names_stdin {
                bail!("`-` (data from stdin) cannot be combined with -@ (names from stdin)");
            }
            let meta = fs::metadata("/dev/stdin").context("reading stdin")?;
            out.push(Item {
                path: p,
                name: "-".into(),
                meta,
            });
            continue;
        }
        let Some(meta) = listed(&p, opts.symlinks)? else {
            warn_not_matched(opts, &p.to_string_lossy());
            if opts.must_match {
                // -MM: Info-ZIP stops at the first name not matched,
                // with its lines (-q or not), writing nothing.
                let name = perfkit::printable::name(&p.to_string_lossy()).into_owned();
                info_zip_line(opts, "zip I/O error: No such file or directory");
                info_zip_line(
                    opts,
                    &format!("zip error: File not found or no read permission ({name})"),
                );
                return Err(MustMatch(name).into());
            }
            unmatched += 1;
            continue;
        };
        let name = archive_name(&p);
        let name = if opts.junk_paths {
            name.rsplit('/').next().unwrap_or_default().to_owned()
        } else {
            name
        };
        // Patterns see directories with their trailing `/`, and a
        // directory left out is still walked, as in Info-ZIP.
        let shown = if meta.is_dir() {
            format!("{name}/")
        } else {
            name.clone()
        };
        // -R: the whole name or its last part (`*.c` finds `a/b.c`; a
        // folder's last part without its `/`, so `*` finds folders too,
        // as in Info-ZIP).
        let last = shown
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string();
        let found = recurse_patterns.is_empty()
            || (!name.is_empty()
                && (pattern::any(&recurse_patterns, &shown)
                    || pattern::any(&recurse_patterns, &last)));
        let wanted = found
            && (include.is_empty() || pattern::any(&include, &shown))
            && !pattern::any(&exclude, &shown);
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
            eprintln!("perfkit zip: skipping {} ({what})", p.display());
            continue;
        }
        if meta.is_dir() {
            use std::os::unix::fs::MetadataExt;
            let id = (meta.dev(), meta.ino());
            if walking.contains(&id) {
                eprintln!(
                    "perfkit zip: skipping {} (a link back to a folder being added)",
                    p.display()
                );
                continue;
            }
            walking.push(id);
            if opts.recurse {
                let mut kids: Vec<PathBuf> = fs::read_dir(&p)
                    .with_context(|| format!("listing {}", p.display()))?
                    .map(|e| e.map(|e| e.path()))
                    .collect::<io::Result<_>>()
                    .with_context(|| format!("listing {}", p.display()))?;
                kids.sort();
                stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
            }
            // -j stores files only, as Info-ZIP's does.
            if name.is_empty() || opts.junk_paths || !wanted {
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

/// `-MM` met a name that is not there: the run stops, its lines already
/// printed (as Info-ZIP prints them).
#[derive(Debug)]
pub(super) struct MustMatch(pub(super) String);

impl std::fmt::Display for MustMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "-MM: {} is not there; nothing written", self.0)
    }
}

impl std::error::Error for MustMatch {}

/// One of Info-ZIP's lines, on the stream its warnings go to, `-q` or not.
fn info_zip_line(opts: &Options, line: &str) {
    if opts.archive.as_deref() == Some(Path::new("-")) {
        let _ = writeln!(io::stderr(), "{line}");
    } else {
        let _ = writeln!(io::stdout(), "{line}");
    }
}

/// Info-ZIP's warning for a name that is not there to store (missing, a
/// link to nothing, a loop of links) or, under `-d`, a pattern that
/// matches no entry, after which the rest is done:
/// printed where Info-ZIP prints it, on stdout beside the `adding:` lines
/// (stderr when stdout carries the archive), and silenced by `-q`.
pub(super) fn warn_not_matched(opts: &Options, name: &str) {
    let line = format!(
        "\tzip warning: name not matched: {}",
        perfkit::printable::name(name)
    );
    super::log::warning(&line);
    if opts.quiet {
        return;
    }
    // A lost warning line (a closed pipe) must not fail the archive.
    if opts.archive.as_deref() == Some(Path::new("-")) {
        let _ = writeln!(io::stderr(), "{line}");
    } else {
        let _ = writeln!(io::stdout(), "{line}");
    }
}

/// What `p` is, as an entry will store it: the link itself with
/// `links` (`lstat`), else what the link names (`stat`); `None` for a
/// name with nothing to store, which Info-ZIP warns of and skips: one
/// that is not there, or, followed, a link to nothing or into a loop of
/// links (a→b, b→a: "Too many levels of symbolic links").
fn listed(p: &Path, links: bool) -> Result<Option<fs::Metadata>> {
    let own = match fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if names_nothing(&e) => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", p.display())),
    };
    if links || !own.file_type().is_symlink() {
        return Ok(Some(own));
    }
    match fs::metadata(p) {
        Ok(m) => Ok(Some(m)),
        Err(e) if names_nothing(&e) => Ok(None),
        Err(e) => Err(e).with_context(|| format!("following {}", p.display())),
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

/// The data of `item`: stdin, a link's target, nothing for a directory,
/// or the file, checked to be [`Unchanged`] when read to its end, its
/// line ends converted under `-l`/`-ll`.
pub(super) fn open_item(item: &Item, opts: &Options) -> Result<Box<dyn Read>> {
    let data = open_item_as_is(item)?;
    match opts.line_ends {
        Some(to) if item.meta.is_file() => {
            let name = perfkit::printable::name(&item.name).into_owned();
            let to_stderr = opts.archive.as_deref() == Some(Path::new("-"));
            let quiet = opts.quiet;
            let flag = if to == LineEnds::ToDos { "-l" } else { "-ll" };
            Ok(Box::new(Converting::new(data, to, move || {
                if quiet {
                    return;
                }
                // Info-ZIP's warning (it prints it inside the
                // `adding:` line; here on a line of its own, before).
                let line = format!("\tzip warning: {name} has binary so {flag} ignored");
                if to_stderr {
                    let _ = writeln!(io::stderr(), "{line}");
                } else {
                    let _ = writeln!(io::stdout(), "{line}");
                }
            })))
        }
        _ => Ok(data),
    }
}

/// The data of `item` as it is.
pub(super) fn open_item_as_is(item: &Item) -> Result<Box<dyn Read>> {
    if item.path.as_os_str() == "-" {
        return Ok(Box::new(io::stdin().lock()));
    }
    if item.meta.file_type().is_symlink() {
        let t = fs::read_link(&item.path)
            .with_context(|| format!("reading link {}", item.path.display()))?;
        return Ok(Box::new(io::Cursor::new(
            t.to_string_lossy().into_owned().into_bytes(),
        )));
    }
    if item.meta.is_dir() {
        return Ok(Box::new(io::empty()));
    }
    let file =
        fs::File::open(&item.path).with_context(|| format!("opening {}", item.path.display()))?;
    Ok(Box::new(Unchanged {
        file,
        listed_len: item.meta.len(),
        listed_mtime: item.meta.modified().ok(),
        read: 0,
    }))
}
