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
use zipstream::object::{ObjectSink, ObjectUrl, UploadOptions};
use zipstream::{
    AesStrength, AsyncZipWriter, EntryKind, EntryOptions, ExtractOptions, Method, ParallelOptions,
    ParallelZipWriter, ZipArchive, ZipStreamReader, ZipWriter,
};

use super::zip_bench::ZipBenchArgs;

/// Arguments of `perfkit zip`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ZipArgs {
    #[command(subcommand)]
    sub: Option<ZipSub>,
    /// The archive to write: a file, `-` for stdout, or `s3://bucket/key`
    /// (S3-compatible storage configured by AWS_ENDPOINT_URL, AWS_REGION,
    /// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ALLOW_HTTP).
    archive: Option<PathBuf>,
    /// Files and directories to add; `-` adds stdin as an entry named `-`.
    paths: Vec<PathBuf>,
    /// Recurse into directories.
    #[arg(short = 'r', long)]
    recurse: bool,
    /// Read more paths from stdin, one per line (like Info-ZIP's `-@`).
    #[arg(short = '@', long = "names-stdin")]
    names_stdin: bool,
    /// Compression method.
    #[arg(long, default_value = "deflate", value_parser = ["deflate", "store", "zstd"])]
    method: String,
    /// Level: deflate 0-9, zstd 1-22.
    #[arg(short = 'l', long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(0..=22))]
    level: u32,
    /// Compression threads (entries and 1 MiB blocks in parallel); 1 compresses inline.
    #[arg(short = 'j', long, default_value_t = 1)]
    jobs: usize,
    /// Encrypt entries with WinZip AES.
    #[arg(long, value_parser = ["aes256", "aes192", "aes128"])]
    encrypt: Option<String>,
    #[command(flatten)]
    password: PasswordArgs,
    /// Leave out paths matching this glob (`*`, `?`; repeatable).
    #[arg(short = 'x', long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Part size of an s3:// multipart upload (5MiB to 5GiB; S3 allows
    /// 10,000 parts, so this bounds the archive size at 10,000 × SIZE).
    #[arg(long, value_name = "SIZE", default_value = "8MiB", value_parser = perfkit::units::parse_size)]
    part_size: u64,
}

#[derive(Debug, clap::Subcommand)]
enum ZipSub {
    /// Measure sync vs async vs parallel writing, AES cost, and the ratio.
    Bench(ZipBenchArgs),
}

/// Where a password comes from.
#[derive(Debug, Clone, clap::Args)]
pub struct PasswordArgs {
    /// Read the password from the first line of FILE.
    #[arg(long, value_name = "FILE")]
    password_file: Option<PathBuf>,
    /// Read the password from environment variable VAR.
    #[arg(long, value_name = "VAR", conflicts_with = "password_file")]
    password_env: Option<String>,
}

impl PasswordArgs {
    /// The password if one was given, else a prompt when stdin is a terminal
    /// and `needed`; otherwise None.
    fn get(&self, needed: bool, confirm: bool) -> Result<Option<Vec<u8>>> {
        if let Some(f) = &self.password_file {
            let s = fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
            return Ok(Some(s.lines().next().unwrap_or("").as_bytes().to_vec()));
        }
        if let Some(v) = &self.password_env {
            let s =
                std::env::var(v).with_context(|| format!("environment variable {v} is not set"))?;
            return Ok(Some(s.into_bytes()));
        }
        if !needed {
            return Ok(None);
        }
        if !io::stderr().is_terminal() {
            bail!(
                "a password is needed: use --password-file or --password-env (no terminal to prompt on)"
            );
        }
        let p = rpassword::prompt_password("password: ").context("reading the password")?;
        if confirm && rpassword::prompt_password("again: ").context("reading the password")? != p {
            bail!("the passwords differ");
        }
        Ok(Some(p.into_bytes()))
    }
}

/// A minimal glob: `*` any run (including `/`), `?` one character.
fn glob(pat: &[u8], s: &[u8]) -> bool {
    match (pat.first(), s.first()) {
        (None, None) => true,
        (Some(b'*'), _) => glob(&pat[1..], s) || (!s.is_empty() && glob(pat, &s[1..])),
        (Some(b'?'), Some(_)) => glob(&pat[1..], &s[1..]),
        (Some(a), Some(b)) if a == b => glob(&pat[1..], &s[1..]),
        _ => false,
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

fn collect(args: &ZipArgs) -> Result<Vec<Item>> {
    let mut roots = args.paths.clone();
    if args.names_stdin {
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
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = roots.into_iter().rev().collect();
    while let Some(p) = stack.pop() {
        if p.as_os_str() == "-" {
            // Data from stdin, stored as "-" like Info-ZIP; its size is
            // unknown, so a large stream gets the ZIP64 streaming layout.
            if args.names_stdin {
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
        if !name.is_empty()
            && args
                .exclude
                .iter()
                .any(|g| glob(g.as_bytes(), name.as_bytes()))
        {
            continue;
        }
        if meta.is_dir() {
            if args.recurse {
                let mut kids: Vec<PathBuf> = fs::read_dir(&p)
                    .with_context(|| format!("listing {}", p.display()))?
                    .map(|e| e.map(|e| e.path()))
                    .collect::<io::Result<_>>()
                    .with_context(|| format!("listing {}", p.display()))?;
                kids.sort();
                stack.extend(kids.into_iter().rev());
            }
            if name.is_empty() {
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

fn entry_options(item: &Item, args: &ZipArgs, password: &Option<Vec<u8>>) -> Result<EntryOptions> {
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
        .level(args.level);
    o = match args.method.as_str() {
        "store" => o.method(Method::Stored),
        "zstd" => o.method(Method::Zstd),
        _ => o,
    };
    if let (Some(enc), Some(pw)) = (&args.encrypt, password)
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
    fn add(&mut self, opts: EntryOptions, item: &Item, bar: &indicatif::ProgressBar) -> Result<()>;
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
    let f =
        fs::File::open(&item.path).with_context(|| format!("opening {}", item.path.display()))?;
    Ok(Box::new(f))
}

impl<W: Write> Sink for ZipWriter<W> {
    fn add(&mut self, opts: EntryOptions, item: &Item, bar: &indicatif::ProgressBar) -> Result<()> {
        let mut r = Counting {
            inner: open_item(item)?,
            bar,
        };
        self.add_reader(opts, &mut r)
            .with_context(|| format!("adding {}", item.path.display()))?;
        Ok(())
    }
}

impl<W: Write> Sink for ParallelZipWriter<W> {
    fn add(&mut self, opts: EntryOptions, item: &Item, bar: &indicatif::ProgressBar) -> Result<()> {
        let mut r = Counting {
            inner: open_item(item)?,
            bar,
        };
        self.add_reader(opts, &mut r)
            .with_context(|| format!("adding {}", item.path.display()))?;
        Ok(())
    }
}

fn write_all_items(
    sink: &mut dyn Sink,
    items: &[Item],
    args: &ZipArgs,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    for item in items {
        let opts = entry_options(item, args, pw)?;
        sink.add(opts, item, bar)?;
    }
    Ok(())
}

/// Runs `perfkit zip`.
pub fn run_zip(args: ZipArgs) -> Result<ExitCode> {
    if let Some(ZipSub::Bench(b)) = args.sub {
        return super::zip_bench::run(b);
    }
    let Some(archive) = args.archive.clone() else {
        bail!("usage: perfkit zip ARCHIVE|-|s3://BUCKET/KEY PATH... (see --help)");
    };
    // Anything starting with `s3:` is meant as an object URL (a local file of
    // that name is `./s3:…`), so a mistyped URL is an error, not a file.
    let object_url = match archive.to_str() {
        Some(s) if s.starts_with("s3:") => Some(ObjectUrl::parse(s)?),
        _ => None,
    };
    let pw = args.password.get(args.encrypt.is_some(), true)?;
    let items = collect(&args)?;
    let total: u64 = items
        .iter()
        .filter(|i| i.meta.is_file())
        .map(|i| i.meta.len())
        .sum();
    let bar = super::progress(Some(total), false);
    bar.set_message("zip");
    let popts = ParallelOptions::new(args.jobs);
    if let Some(url) = object_url {
        zip_to_object(&url, &items, &args, &pw, &bar)?;
    } else if archive.as_os_str() == "-" {
        stream_archive(io::stdout().lock(), &items, &args, &pw, &bar, popts)?;
    } else {
        let mut out = perfkit::report::Output::create(&archive, true)?;
        if out.is_in_place() {
            // A device or FIFO (`/dev/null`, a named pipe): streamed like
            // stdout.
            stream_archive(out.file_mut(), &items, &args, &pw, &bar, popts)?;
        } else {
            let file = BufWriter::with_capacity(128 << 10, out.file_mut());
            write_archive(
                ZipWriter::new_seekable(file)?,
                &items,
                &args,
                &pw,
                &bar,
                popts,
            )?
            .flush()?;
        }
        out.commit()
            .with_context(|| format!("writing {}", archive.display()))?;
    }
    bar.finish_and_clear();
    Ok(ExitCode::SUCCESS)
}

/// Writes the archive as a stream (data descriptors, no seeking) to `out`:
/// stdout, or a device or FIFO written in place.
fn stream_archive(
    out: impl Write,
    items: &[Item],
    args: &ZipArgs,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    popts: ParallelOptions,
) -> Result<()> {
    let out = BufWriter::with_capacity(128 << 10, out);
    write_archive(ZipWriter::new(out), items, args, pw, bar, popts)?.flush()?;
    Ok(())
}

/// Adds every item to `w` (streamed or seekable), through a
/// [`ParallelZipWriter`] when `--jobs` is above 1, and finishes the
/// archive; returns the sink, for the caller to flush.
fn write_archive<W: Write>(
    w: ZipWriter<W>,
    items: &[Item],
    args: &ZipArgs,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
    popts: ParallelOptions,
) -> Result<W> {
    if args.jobs > 1 {
        let mut w = ParallelZipWriter::new(w, popts);
        write_all_items(&mut w, items, args, pw, bar)?;
        Ok(w.finish()?)
    } else {
        let mut w = w;
        write_all_items(&mut w, items, args, pw, bar)?;
        Ok(w.finish()?)
    }
}

/// `perfkit zip s3://bucket/key`: the archive is uploaded as it is written
/// (multipart past one part, memory bounded by the part size), and any
/// failure aborts the upload, so no object appears. The error is one line
/// naming the URL.
fn zip_to_object(
    url: &ObjectUrl,
    items: &[Item],
    args: &ZipArgs,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    // The chain down to the library's error, whose message is already
    // complete (object storage errors repeat their causes), on one line.
    let one_line = |e: anyhow::Error| {
        let mut msg = url.to_string();
        for cause in e.chain() {
            let part = cause.to_string();
            if !msg.contains(&part) {
                msg.push_str(": ");
                msg.push_str(&part);
            }
            if cause.is::<zipstream::Error>() {
                break;
            }
        }
        anyhow!(msg.split_whitespace().collect::<Vec<_>>().join(" "))
    };
    let part_size = usize::try_from(args.part_size).unwrap_or(usize::MAX);
    let opts = UploadOptions::default().part_size(part_size);
    let mut sink = ObjectSink::s3_from_env(url, opts).map_err(|e| one_line(e.into()))?;
    // Part uploads run on the worker threads while this thread compresses.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let written = if args.jobs > 1 {
        // The parallel writer is synchronous: it writes through a bridge
        // that runs each write on the runtime.
        let bridge = BlockingSink {
            rt: &rt,
            sink: &mut sink,
        };
        let mut w = ParallelZipWriter::new(ZipWriter::new(bridge), ParallelOptions::new(args.jobs));
        write_all_items(&mut w, items, args, pw, bar)
            .and_then(|()| Ok(w.finish()?.flush()?))
            .and_then(|()| Ok(rt.block_on(sink.finish())?))
    } else {
        rt.block_on(async {
            let mut w = AsyncZipWriter::new(&mut sink);
            add_items_async(&mut w, items, args, pw, bar).await?;
            w.finish().await?;
            sink.finish().await?;
            Ok(())
        })
    };
    if let Err(e) = written {
        return Err(match rt.block_on(sink.abort()) {
            Ok(()) => one_line(e),
            Err(a) => one_line(e.context(format!(
                "the multipart upload could not be aborted ({a}); its parts remain"
            ))),
        });
    }
    Ok(())
}

/// A blocking `Write` over the object sink, for the synchronous writers.
struct BlockingSink<'a> {
    rt: &'a tokio::runtime::Runtime,
    sink: &'a mut ObjectSink,
}

impl Write for BlockingSink<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.rt.block_on(self.sink.write(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.rt.block_on(self.sink.flush())
    }
}

/// Adds every item through the async writer; files are read in 64 KiB
/// slices on this thread.
async fn add_items_async<W: tokio::io::AsyncWrite + Unpin>(
    w: &mut AsyncZipWriter<W>,
    items: &[Item],
    args: &ZipArgs,
    pw: &Option<Vec<u8>>,
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    let mut buf = vec![0u8; 64 << 10];
    for item in items {
        let adding = || format!("adding {}", item.path.display());
        let opts = entry_options(item, args, pw)?;
        let mut r = Counting {
            inner: open_item(item)?,
            bar,
        };
        w.start_entry(opts).await.with_context(adding)?;
        loop {
            let n = r.read(&mut buf).with_context(adding)?;
            if n == 0 {
                break;
            }
            w.write_data(&buf[..n]).await.with_context(adding)?;
        }
        w.finish_entry().await.with_context(adding)?;
    }
    Ok(())
}

/// Arguments of `perfkit unzip`.
#[derive(Debug, clap::Args)]
pub struct UnzipArgs {
    /// The archive, or `-` for stdin (streamed: local headers only).
    archive: PathBuf,
    /// Extract into DIR.
    #[arg(short = 'd', long, default_value = ".")]
    dir: PathBuf,
    /// List entries instead of extracting.
    #[arg(short = 'l', long)]
    list: bool,
    /// Test entries (decode and verify CRC/MAC) instead of extracting.
    #[arg(short = 't', long)]
    test: bool,
    /// Extract file data to stdout.
    #[arg(short = 'p', long)]
    pipe: bool,
    /// Replace existing files.
    #[arg(short = 'o', long)]
    overwrite: bool,
    /// Largest total uncompressed size to accept (zip bomb limit).
    #[arg(long, default_value = "64GiB", value_parser = perfkit::units::parse_size)]
    max_size: u64,
    #[command(flatten)]
    password: PasswordArgs,
}

fn fmt_time(unix: i64) -> String {
    let days = unix.div_euclid(86_400);
    let secs = unix.rem_euclid(86_400);
    // civil_from_days (Howard Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// Runs `perfkit unzip`.
pub fn run_unzip(args: UnzipArgs) -> Result<ExitCode> {
    let stdin = args.archive.as_os_str() == "-";
    let name = args.archive.display().to_string();
    let opts_for = |pw: Option<Vec<u8>>| ExtractOptions {
        overwrite: args.overwrite,
        password: pw,
        max_total_bytes: args.max_size,
        ..ExtractOptions::default()
    };
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    if stdin {
        let pw = args.password.get(false, false)?;
        let mut r =
            ZipStreamReader::new(io::BufReader::with_capacity(128 << 10, io::stdin().lock()));
        r.set_password(pw.as_deref());
        if args.list || args.test || args.pipe {
            let mut buf = vec![0u8; 64 << 10];
            let mut n = 0u64;
            while let Some(e) = r.next_entry().with_context(|| format!("reading {name}"))? {
                n += 1;
                if args.list {
                    writeln!(out, "{:>12}  {}  {}", e.size, fmt_time(e.mtime), e.name)?;
                }
                loop {
                    let k = r
                        .read_data(&mut buf)
                        .with_context(|| format!("{name}: entry {:?}", e.name))?;
                    if k == 0 {
                        break;
                    }
                    if args.pipe && e.kind() == EntryKind::File {
                        out.write_all(&buf[..k])?;
                    }
                }
            }
            if args.test {
                writeln!(out, "No errors detected in {name} ({n} entries).")?;
            }
        } else {
            zipstream::extract_stream(&mut r, &args.dir, &opts_for(pw))
                .with_context(|| format!("extracting {name}"))?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let f = fs::File::open(&args.archive).with_context(|| format!("opening {name}"))?;
    let mut a = ZipArchive::new(io::BufReader::with_capacity(64 << 10, f))
        .with_context(|| format!("reading {name}"))?;
    let encrypted = a.entries().iter().any(|e| e.encrypted);
    if args.list {
        writeln!(
            out,
            "{:>12}  {:>12}  {:<7}  {:<16}  name",
            "size", "compressed", "method", "modified"
        )?;
        for e in a.entries() {
            let method = match (e.method, e.aes) {
                (0, None) => "store".to_string(),
                (8, None) => "deflate".to_string(),
                (93, None) => "zstd".to_string(),
                (m, Some(_)) => format!(
                    "{}+aes",
                    if m == 8 {
                        "deflate"
                    } else if m == 0 {
                        "store"
                    } else {
                        "?"
                    }
                ),
                (m, None) => format!("m{m}"),
            };
            writeln!(
                out,
                "{:>12}  {:>12}  {:<7}  {:<16}  {}",
                e.size,
                e.compressed_size,
                method,
                fmt_time(e.mtime),
                e.name
            )?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    let pw = args.password.get(encrypted, false)?;
    if args.test || args.pipe {
        let mut buf = vec![0u8; 64 << 10];
        for i in 0..a.entries().len() {
            let e = a.entries()[i].clone();
            let pwd = if e.encrypted { pw.as_deref() } else { None };
            let mut r = a
                .open(i, pwd)
                .with_context(|| format!("{name}: entry {:?}", e.name))?;
            loop {
                let k = r
                    .read_data(&mut buf)
                    .with_context(|| format!("{name}: entry {:?}", e.name))?;
                if k == 0 {
                    break;
                }
                if args.pipe && e.kind() == EntryKind::File {
                    out.write_all(&buf[..k])?;
                }
            }
        }
        if args.test {
            writeln!(
                out,
                "No errors detected in {name} ({} entries).",
                a.entries().len()
            )?;
        }
        out.flush()?;
        return Ok(ExitCode::SUCCESS);
    }
    zipstream::extract_archive(&mut a, &args.dir, &opts_for(pw))
        .with_context(|| format!("extracting {name}"))?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob(b"*.txt", b"a/b.txt"));
        assert!(glob(b"a?c", b"abc"));
        assert!(!glob(b"*.txt", b"a.rs"));
        assert_eq!(archive_name(Path::new("/abs/../x/./y")), "abs/x/y");
        assert_eq!(fmt_time(1_582_983_462), "2020-02-29 13:37");
    }
}
