//! `perfkit zip` and `perfkit unzip`: a ZIP tool over the zipstream library.
//!
//! `zip` writes to a temporary sibling renamed on success, streams to stdout
//! with `-`, or uploads to `s3://bucket/key` by multipart upload, aborted on
//! failure; so a failure never leaves an archive behind. `unzip`
//! extracts safely (no traversal, no escaping symlinks, size and ratio
//! limits) and never overwrites without `--overwrite`.

use std::fs;
use std::io::{self, BufRead, BufWriter, IsTerminal, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::ExitCode;
use std::time::UNIX_EPOCH;

use anyhow::{Context, Result, anyhow, bail};
use tokio::io::AsyncWriteExt;
use zipstream::object::ObjectUrl;
use zipstream::{
    AesStrength, AsyncZipWriter, EntryKind, EntryOptions, ExtractOptions, Method, ParallelOptions,
    ParallelZipWriter, TemporaryHook, Written, ZipArchive, ZipStreamReader, ZipWriter,
};

mod announce;
mod args;
mod listing;
mod object;
mod pattern;
mod unzip;

use announce::Announcer;
use pattern::Pattern;

use args::usage_error;
pub use args::{UnzipArgs, ZipArgs, info_zip_level_flags};
use object::zip_to_object;
pub use unzip::run_unzip;

/// What `perfkit zip` was asked to do, the flags resolved.
#[derive(Debug)]
pub enum Task {
    /// Write (or update) an archive.
    Write(Options),
}

/// How to write an archive.
#[derive(Debug)]
pub struct Options {
    /// A file, `-` for stdout, or `s3://bucket/key`; none is a usage error
    /// reported when the command runs.
    pub archive: Option<PathBuf>,
    /// Files and directories to add; `-` adds stdin as an entry.
    pub paths: Vec<PathBuf>,
    /// Recurse into directories.
    pub recurse: bool,
    /// No progress bar.
    pub quiet: bool,
    /// Read more paths from stdin, one per line.
    pub names_stdin: bool,
    /// `deflate`, `store` or `zstd`.
    pub method: String,
    /// The method's level (deflate 0 stores).
    pub level: u32,
    /// Store each file under its name alone, without directory entries.
    pub junk_paths: bool,
    /// Compression threads; 1 compresses inline.
    pub jobs: usize,
    /// `aes256`, `aes192` or `aes128`: encrypt with WinZip AES.
    pub encrypt: Option<String>,
    /// Where the password comes from.
    pub password: Password,
    /// Globs of paths to leave out.
    pub exclude: Vec<String>,
    /// Globs of the only paths to add (all when empty).
    pub include: Vec<String>,
    /// Add, update, freshen, or delete entries.
    pub mode: Mode,
    /// Delete the originals once the archive is written (and tested).
    pub move_files: bool,
    /// Test the new archive before it replaces anything.
    pub test: bool,
    /// Part size of an `s3://` multipart upload.
    pub part_size: u64,
}

/// What `perfkit zip` does with the archive's entries (Info-ZIP's modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Add the paths; entries of the same names are replaced.
    Add,
    /// `-u`: add new paths, replace entries only by newer files.
    Update,
    /// `-f`: replace entries by newer files, add nothing.
    Freshen,
    /// `-d`: delete the entries the paths (patterns) match.
    Delete,
}

/// Where a password comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Password {
    /// Given on the command line (`-P`).
    Given(Vec<u8>),
    /// The first line of this file.
    File(PathBuf),
    /// This environment variable.
    Env(String),
    /// A prompt on the terminal, when one is needed.
    Prompt,
}

impl Password {
    /// The password if one was given, else a prompt when stdin is a terminal
    /// and `needed`; otherwise None.
    fn get(&self, needed: bool, confirm: bool) -> Result<Option<Vec<u8>>> {
        match self {
            Password::File(f) => {
                let s =
                    fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
                return Ok(Some(s.lines().next().unwrap_or("").as_bytes().to_vec()));
            }
            Password::Env(v) => {
                let s = std::env::var(v)
                    .with_context(|| format!("environment variable {v} is not set"))?;
                return Ok(Some(s.into_bytes()));
            }
            Password::Given(p) => return Ok(Some(p.clone())),
            Password::Prompt => {}
        }
        if !needed {
            return Ok(None);
        }
        if !io::stderr().is_terminal() {
            bail!(
                "a password is needed: use --password-file or --password-env (no terminal to prompt on)"
            );
        }
        // Info-ZIP zip's prompts when writing (confirm), a plain one when reading.
        let first = if confirm {
            "Enter password: "
        } else {
            "password: "
        };
        let p = rpassword::prompt_password(first).context("reading the password")?;
        if confirm
            && rpassword::prompt_password("Verify password: ").context("reading the password")? != p
        {
            bail!("password verification failed (the two entries differ); nothing written");
        }
        Ok(Some(p.into_bytes()))
    }
}

/// The archive name of a path: relative, `/`-separated, without leading
/// `/`, `./` or `../` (as Info-ZIP stores them).
fn archive_name(p: &Path) -> String {
    let parts: Vec<String> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    parts.join("/")
}

struct Item {
    path: PathBuf,
    name: String,
    meta: fs::Metadata,
}

fn collect(opts: &Options) -> Result<Vec<Item>> {
    let mut roots = opts.paths.clone();
    if opts.names_stdin {
        for line in io::stdin().lock().lines() {
            let line = line.context("reading names from stdin")?;
            if !line.is_empty() {
                roots.push(PathBuf::from(line));
            }
        }
    }
    if roots.is_empty() {
        bail!("nothing to add: give paths or -@");
    }
    let compile = |v: &[String]| v.iter().map(|p| Pattern::new(p)).collect::<Vec<_>>();
    let (include, exclude) = (compile(&opts.include), compile(&opts.exclude));
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = roots.into_iter().rev().collect();
    while let Some(p) = stack.pop() {
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
        let meta = fs::symlink_metadata(&p).with_context(|| format!("reading {}", p.display()))?;
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
        let wanted = (include.is_empty() || pattern::any(&include, &shown))
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
            if opts.recurse {
                let mut kids: Vec<PathBuf> = fs::read_dir(&p)
                    .with_context(|| format!("listing {}", p.display()))?
                    .map(|e| e.map(|e| e.path()))
                    .collect::<io::Result<_>>()
                    .with_context(|| format!("listing {}", p.display()))?;
                kids.sort();
                stack.extend(kids.into_iter().rev());
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
    Ok(out)
}

fn entry_options(item: &Item, opts: &Options, password: &Option<Vec<u8>>) -> Result<EntryOptions> {
    use std::os::unix::fs::MetadataExt;
    let m = &item.meta;
    let mtime = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs() as i64);
    let mut o = if item.path.as_os_str() == "-" {
        EntryOptions::file("-")
    } else if m.is_dir() {
        EntryOptions::directory(&item.name)
    } else if m.file_type().is_symlink() {
        EntryOptions::symlink(&item.name)
    } else {
        EntryOptions::file(&item.name).size_hint(m.len())
    };
    o = o
        .mtime(mtime)
        .unix_mode(if m.is_file() || m.is_dir() || m.file_type().is_symlink() {
            m.mode() & 0o7777
        } else {
            0o644
        })
        .level(opts.level);
    o = match opts.method.as_str() {
        "store" => o.method(Method::Stored),
        // Info-ZIP's -0 stores; a deflate stream at level 0 would only
        // wrap the same bytes in block headers.
        "deflate" if opts.level == 0 => o.method(Method::Stored),
        "zstd" => o.method(Method::Zstd),
        _ => o,
    };
    if let (Some(enc), Some(pw)) = (&opts.encrypt, password)
        && !m.is_dir()
    {
        let s = match enc.as_str() {
            "aes128" => AesStrength::Aes128,
            "aes192" => AesStrength::Aes192,
            _ => AesStrength::Aes256,
        };
        o = o.encrypt(s, pw.clone());
    }
    Ok(o)
}

/// What the entry writers have in common for the tool.
trait Sink {
    fn add(&mut self, opts: EntryOptions, r: &mut dyn Read) -> Result<()>;
    /// What the writer knows of finished entry `index`.
    fn written(&self, index: usize) -> Option<Written>;
    /// Waits until every entry added is finished.
    fn settle(&mut self) -> Result<()>;
}

struct Counting<'a, R> {
    inner: R,
    bar: &'a indicatif::ProgressBar,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
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

fn open_item(item: &Item) -> Result<Box<dyn Read>> {
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

impl<W: Write> Sink for ZipWriter<W> {
    fn add(&mut self, opts: EntryOptions, r: &mut dyn Read) -> Result<()> {
        self.add_reader(opts, &mut { r })?;
        Ok(())
    }

    fn written(&self, index: usize) -> Option<Written> {
        ZipWriter::written(self, index)
    }

    fn settle(&mut self) -> Result<()> {
        Ok(())
    }
}

impl<W: Write> Sink for ParallelZipWriter<W> {
    fn add(&mut self, opts: EntryOptions, r: &mut dyn Read) -> Result<()> {
        self.add_reader(opts, &mut { r })?;
        Ok(())
    }

    fn written(&self, index: usize) -> Option<Written> {
        ParallelZipWriter::written(self, index)
    }

    fn settle(&mut self) -> Result<()> {
        Ok(ParallelZipWriter::settle(self)?)
    }
}

/// An existing archive being updated: its entries that no new item
/// replaces are written again, in their places, ahead of the new ones.
struct Update {
    archive: ZipArchive<io::BufReader<fs::File>>,
    /// Where the archive lives, for messages.
    path: PathBuf,
}

/// One entry of the archive being written, in order.
enum Step<'a> {
    /// An entry of the archive being updated, kept as it was.
    Kept(usize),
    /// A file system item (new, or replacing a kept entry of its name).
    Item(&'a Item),
}

/// The entries to write: an updated archive's entries in their order, each
/// replaced in place by the item of the same name if there is one, then
/// the remaining items (as Info-ZIP updates).
fn plan<'a>(update: Option<&Update>, items: &'a [Item]) -> Vec<Step<'a>> {
    let Some(u) = update else {
        return items.iter().map(Step::Item).collect();
    };
    let by_name: std::collections::HashMap<&str, &Item> =
        items.iter().map(|i| (i.name.as_str(), i)).collect();
    let mut placed = std::collections::HashSet::new();
    let mut steps = Vec::with_capacity(u.archive.entries().len() + items.len());
    for (i, e) in u.archive.entries().iter().enumerate() {
        let name = e.name.trim_end_matches('/');
        match by_name.get(name) {
            Some(item) if placed.insert(name.to_string()) => steps.push(Step::Item(item)),
            // A second kept entry of a replaced name (an archive that
            // already held duplicates) is dropped, not duplicated again.
            Some(_) => {}
            None => steps.push(Step::Kept(i)),
        }
    }
    steps.extend(
        items
            .iter()
            .filter(|i| !placed.contains(&i.name))
            .map(Step::Item),
    );
    steps
}

/// The options that write a kept entry back as it was: name, kind, time,
/// mode and method (the data is decompressed, its CRC checked, and
/// compressed again, because zipstream's writers have no raw copy).
fn kept_options(e: &zipstream::Entry, opts: &Options) -> EntryOptions {
    let o = match e.kind() {
        EntryKind::Directory => EntryOptions::directory(e.name.trim_end_matches('/')),
        EntryKind::Symlink => EntryOptions::symlink(&e.name),
        EntryKind::File => EntryOptions::file(&e.name).size_hint(e.size),
    };
    let o = o
        .mtime(e.mtime)
        .unix_mode(e.unix_mode.map_or(0o644, |m| m & 0o7777))
        .level(opts.level);
    match e.method {
        0 => o.method(Method::Stored),
        93 => o.method(Method::Zstd),
        _ => o,
    }
}

fn write_all_items(
    sink: &mut dyn Sink,
    steps: &[Step<'_>],
    update: Option<&mut Update>,
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    announcer: &mut Announcer,
) -> Result<()> {
    let mut update = update;
    for step in steps {
        announcer.catch_up(bar, |i| sink.written(i));
        match step {
            Step::Item(item) => {
                let entry = entry_options(item, opts, pw)?;
                let mut r = Counting {
                    inner: open_item(item)?,
                    bar,
                };
                sink.add(entry, &mut r)
                    .with_context(|| format!("adding {}", item.path.display()))?;
            }
            Step::Kept(i) => {
                let u = update.as_deref_mut().ok_or_else(|| {
                    anyhow!("internal: a kept entry without an archive to update")
                })?;
                let e = u.archive.entries()[*i].clone();
                let what = || format!("{}: keeping entry {:?}", u.path.display(), e.name);
                let entry = kept_options(&e, opts);
                let mut r = u.archive.open(*i, None).with_context(what)?;
                let mut data = KeptReader(&mut r);
                sink.add(entry, &mut data).with_context(what)?;
            }
        }
    }
    sink.settle()?;
    announcer.catch_up(bar, |i| sink.written(i));
    Ok(())
}

/// A kept entry's decoded data as a `Read`.
struct KeptReader<'a, 'b>(&'a mut zipstream::EntryReader<'b, io::BufReader<fs::File>>);

impl Read for KeptReader<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read_data(buf).map_err(io::Error::other)
    }
}

/// Opens `archive` for update if it is an existing regular file: a ZIP
/// archive is updated; anything else (arguments swapped, a typo) is
/// refused and left untouched, as Info-ZIP refuses it.
fn open_for_update(archive: &Path) -> Result<Option<Update>> {
    let Ok(meta) = fs::metadata(archive) else {
        return Ok(None);
    };
    if !meta.is_file() {
        return Ok(None);
    }
    let name = archive.display();
    let f = fs::File::open(archive).with_context(|| format!("opening {name}"))?;
    let a = ZipArchive::new(io::BufReader::with_capacity(64 << 10, f))
        .map_err(|e| anyhow!("{name} exists and is not a ZIP archive ({e}); not replacing it"))?;
    if let Some(e) = a.entries().iter().find(|e| e.encrypted) {
        bail!(
            "{name}: entry {:?} is encrypted; updating an archive with encrypted entries is not supported (write a new archive)",
            e.name
        );
    }
    Ok(Some(Update {
        archive: a,
        path: archive.to_path_buf(),
    }))
}

/// Drops repeated items and refuses two different files under one name: an
/// archive with duplicate names cannot be extracted faithfully. The same
/// file named twice (`w/h1 ./w/h1`) is kept once, as Info-ZIP does.
fn dedupe(items: Vec<Item>) -> Result<Vec<Item>, String> {
    use std::os::unix::fs::MetadataExt;
    let mut seen: std::collections::HashMap<String, (PathBuf, u64, u64)> =
        std::collections::HashMap::new();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let id = (item.meta.dev(), item.meta.ino());
        match seen.get(&item.name) {
            Some((_, dev, ino)) if (*dev, *ino) == id && item.path.as_os_str() != "-" => {}
            Some((first, ..)) => {
                return Err(format!(
                    "cannot repeat names in zip file: {} and {} would both be stored as {:?}",
                    first.display(),
                    item.path.display(),
                    item.name
                ));
            }
            None => {
                seen.insert(item.name.clone(), (item.path.clone(), id.0, id.1));
                out.push(item);
            }
        }
    }
    Ok(out)
}

/// The most compression threads `--jobs` gets, whatever the core count.
const MAX_JOBS: usize = 256;

/// Runs `perfkit zip`.
pub fn run_zip(task: Task) -> Result<ExitCode> {
    let Task::Write(mut opts) = task;
    let Some(archive) = opts.archive.clone() else {
        bail!("usage: perfkit zip ARCHIVE|-|s3://BUCKET/KEY PATH... (see --help)");
    };
    // Thousands of threads gain nothing over a few per core and exhaust
    // memory for their stacks (`--jobs 20000` aborted on a guard page).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max_jobs = (4 * cores).min(MAX_JOBS);
    if opts.jobs > max_jobs {
        eprintln!(
            "perfkit zip: --jobs {} is more than {max_jobs} (4 per core, at most {MAX_JOBS}); using {max_jobs}",
            opts.jobs
        );
        opts.jobs = max_jobs;
    }
    // Anything starting with `s3:` is meant as an object URL (a local file of
    // that name is `./s3:…`), so a mistyped URL is an error, not a file.
    let object_url = match archive.to_str() {
        Some(s) if s.starts_with("s3:") => Some(ObjectUrl::parse(s)?),
        _ => None,
    };
    let local = object_url.is_none() && archive.as_os_str() != "-";
    if !local && (opts.mode != Mode::Add || opts.test) {
        return Ok(usage_error(
            "-u, -f, -d and -T need a local archive file (an upload or stdout cannot be read back)",
        ));
    }
    // Info-ZIP appends `.zip` to an archive name without an extension
    // (`zip backup dir` writes backup.zip, even beside a file `backup`);
    // a device or FIFO (`/dev/null`) is written as named.
    let special = fs::metadata(&archive).is_ok_and(|m| !m.is_file());
    let archive = if local && archive.extension().is_none() && !special {
        let mut s = archive.into_os_string();
        s.push(".zip");
        PathBuf::from(s)
    } else {
        archive
    };
    let shown = perfkit::printable::name(&archive.display().to_string()).into_owned();
    // Before any input is read or output created: a non-ZIP file in the
    // archive's place is refused untouched.
    let mut update = if local {
        open_for_update(&archive)?
    } else {
        None
    };
    if update.is_none() && matches!(opts.mode, Mode::Freshen | Mode::Delete) {
        bail!("{shown}: no such archive (-f and -d change an existing one)");
    }
    let (steps, labels, items);
    if opts.mode == Mode::Delete {
        let u = update.as_ref().expect("checked above");
        let (kept, deleted) = deletion(u, &opts)?;
        if !opts.quiet {
            for name in &deleted {
                println!("deleting: {}", perfkit::printable::name(name));
            }
        }
        items = Vec::new();
        labels = vec![None; kept.len()];
        steps = kept.into_iter().map(Step::Kept).collect::<Vec<_>>();
    } else {
        let mut found = collect(&opts)?;
        if local {
            // The archive never stores itself (`zip -r . ` from its directory).
            use std::os::unix::fs::MetadataExt;
            if let Ok(m) = fs::metadata(&archive) {
                found.retain(|i| !(i.meta.dev() == m.dev() && i.meta.ino() == m.ino()));
            }
        }
        items = match dedupe(found) {
            Ok(items) => newer_only(items, update.as_ref(), opts.mode),
            Err(msg) => return Ok(usage_error(&msg)),
        };
        if items.is_empty() && opts.mode != Mode::Add {
            bail!(
                "nothing to do: {shown} is up to date (no newer files for -u/-f); left as it was"
            );
        }
        steps = plan(update.as_ref(), &items);
        labels = step_labels(&steps, update.as_ref(), opts.mode);
    }
    let pw = opts.password.get(opts.encrypt.is_some(), true)?;
    // An empty password (an empty --password-file or first line, an empty
    // --password-env variable, Enter at the prompt) encrypts with a key
    // anyone derives at once: the archive would only look protected.
    if opts.encrypt.is_some() && pw.as_ref().is_some_and(|p| p.is_empty()) {
        return Ok(usage_error(
            "--encrypt needs a non-empty password (the one given by --password-file, --password-env or the prompt is empty)",
        ));
    }
    let total: u64 = items
        .iter()
        .filter(|i| i.meta.is_file())
        .map(|i| i.meta.len())
        .sum();
    let bar = super::progress(Some(total), opts.quiet);
    bar.set_message("zip");
    let mut announcer = Announcer::new(labels, opts.quiet, archive.as_os_str() == "-");
    let popts = ParallelOptions::new(opts.jobs);
    if let Some(url) = object_url {
        zip_to_object(&url, &steps, &opts, &pw, &bar, &mut announcer)?;
    } else if archive.as_os_str() == "-" {
        stream_archive(
            io::stdout().lock(),
            &steps,
            &opts,
            &pw,
            &bar,
            popts,
            &mut announcer,
        )?;
    } else {
        let mut out = perfkit_report::Output::create(&archive, true)?;
        if out.is_in_place() {
            if opts.test || opts.move_files {
                return Ok(usage_error(
                    "-T and -m need an archive file (a device or FIFO cannot be read back)",
                ));
            }
            // A device or FIFO (`/dev/null`, a named pipe): streamed like
            // stdout.
            stream_archive(
                out.file_mut(),
                &steps,
                &opts,
                &pw,
                &bar,
                popts,
                &mut announcer,
            )?;
        } else {
            let file = BufWriter::with_capacity(128 << 10, out.file_mut());
            write_archive(
                ZipWriter::new_seekable(file)?,
                &steps,
                update.as_mut(),
                &opts,
                &pw,
                &bar,
                popts,
                &mut announcer,
            )?
            .flush()?;
            if opts.test {
                // Before the rename: a failed test leaves the old archive
                // (or none) and every original in place.
                test_written(out.file_mut(), &pw)
                    .with_context(|| format!("test of {shown} FAILED; nothing was changed"))?;
                if !opts.quiet {
                    println!("test of {shown} OK");
                }
            }
        }
        out.commit()?;
    }
    bar.finish_and_clear();
    if let Some(what) = announcer.unreadable_by_info_zip() {
        let name = if archive.as_os_str() == "-" {
            "the archive on stdout"
        } else {
            &shown
        };
        eprintln!(
            "perfkit zip: Info-ZIP unzip 6.0 cannot read {name} ({what}); 7-Zip and perfkit can"
        );
    }
    if opts.move_files {
        remove_originals(&items)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `-d`: the indexes of the entries kept and the names of those deleted;
/// fails, changing nothing, when no pattern matches (Info-ZIP's "Nothing
/// to do!"), and warns of each pattern that matches nothing.
fn deletion(u: &Update, opts: &Options) -> Result<(Vec<usize>, Vec<String>)> {
    if opts.paths.is_empty() {
        bail!("-d needs the names (or patterns) of the entries to delete");
    }
    let patterns: Vec<Pattern> = opts
        .paths
        .iter()
        .map(|p| Pattern::new(&p.to_string_lossy()))
        .collect();
    let mut hit = vec![false; patterns.len()];
    let (mut kept, mut deleted) = (Vec::new(), Vec::new());
    for (i, e) in u.archive.entries().iter().enumerate() {
        let mut matched = false;
        for (k, p) in patterns.iter().enumerate() {
            if p.matches(&e.name) {
                hit[k] = true;
                matched = true;
            }
        }
        if matched {
            deleted.push(e.name.clone());
        } else {
            kept.push(i);
        }
    }
    for (p, _) in patterns.iter().zip(&hit).filter(|(_, h)| !**h) {
        eprintln!(
            "perfkit zip: warning: name not matched: {}",
            perfkit::printable::name(&p.text())
        );
    }
    if deleted.is_empty() {
        bail!(
            "nothing to do: no entry of {} matches; left as it was",
            perfkit::printable::name(&u.path.display().to_string())
        );
    }
    Ok((kept, deleted))
}

/// The items `-u` and `-f` write: a file whose entry is not older (in the
/// 2-second steps of a ZIP's DOS time, as Info-ZIP compares) is left out,
/// as is an existing directory; `-f` also leaves out what is new.
fn newer_only(items: Vec<Item>, update: Option<&Update>, mode: Mode) -> Vec<Item> {
    if !matches!(mode, Mode::Update | Mode::Freshen) {
        return items;
    }
    let existing: std::collections::HashMap<&str, &zipstream::Entry> = update
        .map(|u| {
            u.archive
                .entries()
                .iter()
                .map(|e| (e.name.trim_end_matches('/'), e))
                .collect()
        })
        .unwrap_or_default();
    items
        .into_iter()
        .filter(|i| match existing.get(i.name.as_str()) {
            None => mode == Mode::Update,
            Some(_) if i.meta.is_dir() => false,
            Some(e) => {
                let mtime = i
                    .meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_secs() as i64);
                mtime.div_euclid(2) > e.mtime.div_euclid(2)
            }
        })
        .collect()
}

/// Info-ZIP's verb for each entry written: `adding` for a new name,
/// `updating` (or `freshening` under `-f`) for a replaced one; kept
/// entries print nothing.
fn step_labels(
    steps: &[Step<'_>],
    update: Option<&Update>,
    mode: Mode,
) -> Vec<Option<&'static str>> {
    let existing: std::collections::HashSet<&str> = update
        .map(|u| {
            u.archive
                .entries()
                .iter()
                .map(|e| e.name.trim_end_matches('/'))
                .collect()
        })
        .unwrap_or_default();
    steps
        .iter()
        .map(|s| match s {
            Step::Kept(_) => None,
            Step::Item(i) if !existing.contains(i.name.as_str()) => Some("adding"),
            Step::Item(_) if mode == Mode::Freshen => Some("freshening"),
            Step::Item(_) => Some("updating"),
        })
        .collect()
}

/// `-T`: reads the archive just written back from its start and checks
/// every entry (CRC, AES authentication), as `unzip -t` would.
fn test_written(file: &mut fs::File, pw: &Option<Vec<u8>>) -> Result<()> {
    use std::io::Seek;
    let mut f = file.try_clone()?;
    f.seek(io::SeekFrom::Start(0))?;
    let mut a = ZipArchive::new(io::BufReader::with_capacity(64 << 10, f))?;
    let opts = ExtractOptions {
        password: pw.clone(),
        // Our own archive, just written from these files: the zip-bomb
        // limits guard against strangers' archives, not this one.
        max_total_bytes: u64::MAX,
        max_entries: u64::MAX,
        max_ratio: u64::MAX,
        ..ExtractOptions::default()
    };
    zipstream::read_archive_data(&mut a, &opts, &|_| true, &mut |_, _| Ok(()))?;
    Ok(())
}

/// `-m`: deletes what was stored, once the archive is in place: files and
/// links first, then the directories stored, deepest first, where they
/// are empty now (Info-ZIP leaves a directory that still holds something).
fn remove_originals(items: &[Item]) -> Result<()> {
    let mut dirs = Vec::new();
    for i in items {
        if i.path.as_os_str() == "-" {
            continue;
        }
        if i.meta.is_dir() {
            dirs.push(&i.path);
        } else {
            fs::remove_file(&i.path).with_context(|| {
                format!("-m: removing {} (it is in the archive)", i.path.display())
            })?;
        }
    }
    dirs.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    for d in dirs {
        let _ = fs::remove_dir(d);
    }
    Ok(())
}

/// Writes the archive as a stream (data descriptors, no seeking) to `out`:
/// stdout, or a device or FIFO written in place.
fn stream_archive(
    out: impl Write,
    steps: &[Step<'_>],
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    popts: ParallelOptions,
    announcer: &mut Announcer,
) -> Result<()> {
    let out = BufWriter::with_capacity(128 << 10, out);
    write_archive(
        ZipWriter::new(out),
        steps,
        None,
        opts,
        pw,
        bar,
        popts,
        announcer,
    )?
    .flush()?;
    Ok(())
}

/// Adds every step to `w` (streamed or seekable), through a
/// [`ParallelZipWriter`] when `--jobs` is above 1, and finishes the
/// archive; returns the sink, for the caller to flush.
#[allow(clippy::too_many_arguments)] // one call site each, all of them needed
fn write_archive<W: Write>(
    w: ZipWriter<W>,
    steps: &[Step<'_>],
    update: Option<&mut Update>,
    opts: &Options,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    popts: ParallelOptions,
    announcer: &mut Announcer,
) -> Result<W> {
    if opts.jobs > 1 {
        let mut w = ParallelZipWriter::new(w, popts);
        write_all_items(&mut w, steps, update, opts, pw, bar, announcer)?;
        Ok(w.finish()?)
    } else {
        let mut w = w;
        write_all_items(&mut w, steps, update, opts, pw, bar, announcer)?;
        Ok(w.finish()?)
    }
}

#[cfg(test)]
mod tests;
