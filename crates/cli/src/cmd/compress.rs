//! `perfkit compress` / `perfkit decompress`: a zstd-compatible file tool.
//!
//! Every output goes through a temporary sibling renamed on success, so a
//! failure (corrupt input, full disk, broken pipe) never leaves a file that
//! looks complete.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args as _;
use clap::error::ErrorKind;
use perfkit::pipeline::{ReadAhead, WriteBehind};
use zstdkit::{
    Compressor, Decoder, Decompressor, Encoder, FlushMode, Params, Recipe, Runway, RunwayEncoder,
};

use super::compress_bench::CompressBenchArgs;

/// Buffers in each of the read-ahead and write-behind pools.
const PIPE_BUFFERS: usize = 4;

/// Size of each read-ahead buffer.
const READ_SIZE: usize = 512 << 10;

/// Size of each write-behind buffer.
const WRITE_SIZE: usize = 512 << 10;

/// zstd's lowest fast level (`ZSTD_minCLevel()`, -(1 << 17)).
const MIN_LEVEL: i32 = -(1 << 17);

/// Arguments of `perfkit compress` and `perfkit decompress`.
#[derive(Debug, clap::Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "zstd habits that work: -c, -o, -d, -f, -k, --rm, -t, -q, -v, -l/--list (-lv), \
-1..-19, --ultra -20..-22, --fast[=N], -T, --long[=WLOG], -M/--memory, -D, --train, --maxdict, \
`-` for stdin.

Differences from zstd: the level's long form is --level N (out of range is a usage error, \
exit 2, where zstd clamps with a warning); -v prints one line of sizes, ratio and speed per \
input (zstd's -v also prints its banner; -vv adds nothing); --list reads files, not stdin; \
--stats is another name for -v; SIGINT, SIGTERM and SIGHUP all delete the partial output and \
exit 128 + the signal's number (zstd handles SIGINT alone, exiting 2); -r, --format, --adapt, --rsyncable, -B, --patch-from, and \
benchmark mode -b do not exist (`perfkit compress bench` measures recipes instead)."
)]
pub struct CompressArgs {
    #[command(subcommand)]
    sub: Option<CompressSub>,
    /// Files to process; none or `-` means stdin to stdout.
    files: Vec<PathBuf>,
    /// Write to stdout.
    #[arg(short = 'c', long = "stdout")]
    stdout: bool,
    /// Write to FILE (one input only).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    output: Option<PathBuf>,
    /// Decompress.
    #[arg(short = 'd', long)]
    decompress: bool,
    /// Overwrite existing outputs.
    #[arg(short = 'f', long)]
    force: bool,
    /// Remove each input after it was written successfully to a regular
    /// file (never after writing to stdout, a device or a FIFO).
    #[arg(long)]
    rm: bool,
    /// Keep inputs (the default).
    #[arg(short = 'k', long, conflicts_with = "rm")]
    keep: bool,
    /// Test the integrity of compressed inputs; write nothing.
    #[arg(short = 't', long)]
    test: bool,
    /// A named recipe: fast, balanced (default), binary, text, structured_data, maximum.
    #[arg(long, value_parser = parse_recipe)]
    recipe: Option<Recipe>,
    /// Compression level (1..=22, negative for zstd's fast levels down to
    /// -131072, 0 for zstd's default 3); with --recipe, overrides the
    /// recipe's level and keeps its strategy. Out of range is a usage error
    /// (zstd's CLI clamps with a warning instead). zstd's `-1`..`-19`,
    /// `--ultra -20`..`-22` and `--fast[=N]` are accepted too. Long only:
    /// `-l` lists, as in zstd.
    #[arg(long, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i32).range(MIN_LEVEL as i64..=22))]
    level: Option<i32>,
    /// Compression threads (0: one per core). 1, the default, compresses in
    /// the calling thread.
    #[arg(short = 'T', long, default_value_t = 1)]
    threads: u32,
    /// Long-distance matching with a window of 2^WLOG (default 27); when
    /// decompressing, allow windows up to 2^WLOG (as --memory=2^WLOG).
    #[arg(long, value_name = "WLOG", num_args = 0..=1, require_equals = true, default_missing_value = "27",
          value_parser = clap::value_parser!(u32).range(10..=31))]
    long: Option<u32>,
    /// When decompressing, refuse frames whose window exceeds LIMIT bytes
    /// (64K, 256M, 2G; 1K..=2G; default 128M); wins over --long, as in zstd.
    #[arg(short = 'M', long, value_name = "LIMIT", value_parser = parse_memory)]
    memory: Option<u64>,
    /// Use a dictionary.
    #[arg(short = 'D', long = "dict", value_name = "FILE")]
    dict: Option<PathBuf>,
    /// Train a dictionary from the input files (write it with -o, default `dictionary`).
    #[arg(long)]
    train: bool,
    /// Largest dictionary --train may write (bytes, or 64K / 1M; at most 4G - 1).
    #[arg(long, default_value_t = zstdkit::dict::DEFAULT_DICT_SIZE, value_parser = parse_maxdict)]
    maxdict: usize,
    /// Quiet: no notes on stderr (such as inputs --rm kept); errors still
    /// print.
    #[arg(short = 'q', long)]
    quiet: bool,
    /// Verbose: sizes, ratio and speed on stderr (`--stats` too); with
    /// `--list`, each file's details as `zstd -lv` prints them.
    #[arg(short = 'v', long = "verbose", visible_alias = "stats", action = clap::ArgAction::Count)]
    verbose: u8,
    /// List what the frames of `.zst` files hold (frames, sizes, ratio,
    /// checksum) from their headers, as `zstd -l`; writes nothing.
    #[arg(short = 'l', long)]
    list: bool,
}

#[derive(Debug, clap::Subcommand)]
enum CompressSub {
    /// Measure every recipe: reused vs fresh context, streaming, decompression,
    /// the inline budget, and (with --vs-zstd) the zstd CLI side by side.
    Bench(CompressBenchArgs),
}

fn parse_recipe(s: &str) -> Result<Recipe, String> {
    s.parse().map_err(|e: zstdkit::Error| e.to_string())
}

fn parse_memory(s: &str) -> Result<u64, String> {
    let n = perfkit::units::parse_size(s)?;
    if zstdkit::context::MEMORY_LIMIT_RANGE.contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "{s} is outside 1K..=2G, the windows zstd can decode"
        ))
    }
}

fn parse_maxdict(s: &str) -> Result<usize, String> {
    let n = perfkit::units::parse_size(s)?;
    usize::try_from(n)
        .ok()
        .filter(|&n| n <= zstdkit::dict::MAX_DICT_SIZE)
        .ok_or_else(|| {
            format!(
                "{s} is above {}, the largest dictionary zstd can train",
                zstdkit::dict::MAX_DICT_SIZE
            )
        })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Compress,
    Decompress,
    Test,
}

/// The options of `compress`/`decompress` written with their value as the
/// next argument; [`zstd_level_flags`] leaves that argument alone.
const TAKES_VALUE: &[&str] = &[
    "--level",
    "-o",
    "--output",
    "-D",
    "--dict",
    "-T",
    "--threads",
    "-M",
    "--memory",
    "--maxdict",
    "--recipe",
];

/// Rewrites zstd's level habits in a `compress`/`decompress` command line
/// into `--level=N` before clap sees them, since clap cannot parse `-#`
/// flags: `-1`..`-19` (and `-20`..`-22` after `--ultra`, else reduced to 19
/// with zstd's warning), `--fast` (level -1) and `--fast=N` (level -N).
/// `--ultra` itself is consumed. Anything after `--` is left alone.
pub fn zstd_level_flags(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let args: Vec<OsString> = args.into_iter().collect();
    let is_compress = matches!(
        args.get(1).and_then(|a| a.to_str()),
        Some("compress" | "decompress")
    );
    if !is_compress {
        return args;
    }
    let ultra = args.iter().any(|a| a == "--ultra");
    // The token after an option that takes a value is that value, never a
    // level flag: `-l -5` is level -5, as clap reads it.
    super::rewrite_options(args, TAKES_VALUE, |s, out| {
        if s == "--ultra" {
        } else if s == "--fast" {
            out.push("--level=-1".into());
        } else if let Some(n) = s
            .strip_prefix("--fast=")
            .filter(|n| n.parse::<u32>().is_ok_and(|n| n > 0))
        {
            // --fast=0 (rejected by zstd too) stays as is, so clap refuses it.
            out.push(format!("--level=-{n}").into());
        } else if let Some(n) = s
            .strip_prefix('-')
            .filter(|n| !n.is_empty() && n.len() <= 2 && n.bytes().all(|b| b.is_ascii_digit()))
        {
            let level: i32 = n.parse().unwrap_or(0);
            let level = if level > 19 && !ultra {
                let _ = writeln!(
                    io::stderr(),
                    "Warning : compression level higher than max, reduced to 19"
                );
                19
            } else {
                level
            };
            out.push(format!("--level={level}").into());
        } else {
            out.push(s.into());
        }
    })
}

/// Runs the command over every input; a failed input is reported and the
/// rest still run, and the exit code says whether any failed.
pub fn run(args: CompressArgs, decompress: bool) -> Result<ExitCode> {
    if let Some(CompressSub::Bench(b)) = args.sub {
        return super::compress_bench::run(b);
    }
    if args.list {
        return super::frames::list(&args.files, args.verbose > 0);
    }
    if args.train {
        if args.files.is_empty() {
            return Ok(usage_error(
                decompress,
                ErrorKind::MissingRequiredArgument,
                "--train needs sample files",
            ));
        }
        return train(&args);
    }
    let mode = if args.test {
        Mode::Test
    } else if args.decompress || decompress {
        Mode::Decompress
    } else {
        Mode::Compress
    };
    let files = if args.files.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.files.clone()
    };
    if args.output.is_some() && files.len() > 1 {
        return Ok(usage_error(
            decompress,
            ErrorKind::ArgumentConflict,
            &format!("-o takes exactly one input, {} given", files.len()),
        ));
    }
    let dict = match &args.dict {
        Some(p) => {
            Some(std::fs::read(p).with_context(|| format!("reading dictionary {}", p.display()))?)
        }
        None => None,
    };
    let job = Job {
        args: &args,
        mode,
        dict: dict.as_deref(),
    };
    let mut failed = false;
    for file in &files {
        if let Err(err) = job.one(file) {
            if super::is_broken_pipe(&err) {
                return Ok(ExitCode::from(super::EXIT_BROKEN_PIPE));
            }
            let _ = writeln!(
                io::stderr(),
                "perfkit: {}: {}",
                display(file),
                super::one_line(&err)
            );
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Reports a usage error that parsing cannot see (it depends on how many
/// inputs there are) exactly as clap reports its own: `error: …`, the usage
/// line, exit code 2.
fn usage_error(decompress: bool, kind: ErrorKind, message: &str) -> ExitCode {
    let name = if decompress { "decompress" } else { "compress" };
    let mut cmd =
        CompressArgs::augment_args(clap::Command::new(name).bin_name(format!("perfkit {name}")));
    let err = cmd.error(kind, message);
    let _ = err.print();
    ExitCode::from(err.exit_code().clamp(0, 255) as u8)
}

fn display(p: &Path) -> String {
    if p == Path::new("-") {
        "stdin".into()
    } else {
        p.display().to_string()
    }
}

struct Job<'a> {
    args: &'a CompressArgs,
    mode: Mode,
    dict: Option<&'a [u8]>,
}

enum Sink {
    Stdout,
    Discard,
    File(PathBuf),
}

impl Job<'_> {
    fn params(&self) -> Params {
        let a = self.args;
        let mut p = match (a.recipe, a.level) {
            (Some(r), Some(l)) => r.params().level(l),
            (Some(r), None) => r.params(),
            (None, Some(l)) => Params::for_level(l),
            (None, None) => Recipe::default().params(),
        };
        if let Some(w) = a.long {
            p = p.long(Some(w));
        }
        let threads = if a.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
        } else {
            a.threads
        };
        // One thread means "in the calling thread": zstd's single worker
        // would add a hand-off without adding parallelism.
        p.workers(if threads <= 1 { 0 } else { threads })
    }

    fn sink_for(&self, input: &Path) -> Result<Sink> {
        if self.mode == Mode::Test {
            return Ok(Sink::Discard);
        }
        if let Some(o) = &self.args.output {
            return Ok(if o == Path::new("-") {
                Sink::Stdout
            } else {
                Sink::File(o.clone())
            });
        }
        if self.args.stdout || input == Path::new("-") {
            return Ok(Sink::Stdout);
        }
        let name = input.as_os_str().to_string_lossy();
        Ok(Sink::File(match self.mode {
            Mode::Compress => PathBuf::from(format!("{name}.zst")),
            _ => {
                if let Some(stem) = name
                    .strip_suffix(".zst")
                    .or_else(|| name.strip_suffix(".zstd"))
                {
                    PathBuf::from(stem)
                } else if let Some(stem) = name.strip_suffix(".tzst") {
                    PathBuf::from(format!("{stem}.tar"))
                } else {
                    bail!("unknown suffix (expected .zst); use -o FILE or -c")
                }
            }
        }))
    }

    fn one(&self, input: &Path) -> Result<()> {
        let from_stdin = input == Path::new("-");
        // A device or directory gives no name to derive an output from (zstd:
        // "is not a regular file -- ignored"), but with -c or -o it is read
        // like a pipe; FIFOs are accepted either way, as zstd does.
        let derives_name = !from_stdin && self.args.output.is_none() && !self.args.stdout;
        if derives_name && self.mode != Mode::Test {
            let meta = std::fs::metadata(input).context("opening input")?;
            let ft = meta.file_type();
            if !(ft.is_file() || ft.is_fifo()) {
                bail!("is not a regular file -- ignored");
            }
        }
        let (reader, size, perms, regular): (
            Box<dyn Read + Send>,
            Option<u64>,
            Option<std::fs::Permissions>,
            bool,
        ) = if from_stdin {
            (Box::new(io::stdin()), None, None, false)
        } else {
            let f = File::open(input).context("opening input")?;
            let meta = f.metadata().context("reading input metadata")?;
            if meta.is_dir() {
                bail!("is a directory");
            }
            // Only a regular file's length is its content's length: a FIFO
            // or device reports 0 (or anything), and pledging that size
            // makes zstd fail with "Src size is incorrect".
            let regular = meta.is_file();
            let size = regular.then_some(meta.len());
            (Box::new(f), size, Some(meta.permissions()), regular)
        };
        let sink = self.sink_for(input)?;
        let start = Instant::now();
        let bar = super::progress(size.filter(|&n| n > 16 << 20), false);
        bar.set_message(display(input));
        // `wrote_file`: the output is a regular file that now holds the
        // data, the only case in which `--rm` may delete the input.
        let (counts, wrote_file) = match &sink {
            Sink::Discard => (self.transform(reader, None, size, &bar)?, false),
            Sink::Stdout => {
                if self.mode == Mode::Compress && io::stdout().is_terminal() {
                    bail!(
                        "refusing to write compressed data to a terminal; use -o FILE or redirect stdout"
                    );
                }
                (
                    self.transform(reader, Some(stdout_sink()), size, &bar)?,
                    false,
                )
            }
            Sink::File(path) => {
                if !from_stdin && !perfkit::report::is_special_file(path) && same_file(input, path)
                {
                    bail!("input and output are the same file");
                }
                let mut out = perfkit::report::Output::create(path, self.args.force)?;
                // The writer thread writes through its own handle on the
                // same open file; `out` still owns the file's fate
                // (renamed on commit, removed on drop).
                let handle = out
                    .file_mut()
                    .try_clone()
                    .with_context(|| format!("opening {}", path.display()))?;
                let c = self.transform(reader, Some(Box::new(handle)), size, &bar)?;
                let in_place = out.is_in_place();
                if let (Some(p), false) = (perms, in_place) {
                    let _ = out.file_mut().set_permissions(p);
                }
                out.commit()
                    .with_context(|| format!("writing {}", path.display()))?;
                (c, !in_place)
            }
        };
        bar.finish_and_clear();
        if self.args.verbose > 0 {
            let secs = start.elapsed().as_secs_f64();
            let (plain, packed) = if self.mode == Mode::Compress {
                counts
            } else {
                (counts.1, counts.0)
            };
            let _ = writeln!(
                io::stderr(),
                "{}: {plain} → {packed} bytes ({:.2}%, ratio {:.3}), {:.1} MB/s",
                display(input),
                100.0 * packed as f64 / plain.max(1) as f64,
                plain as f64 / packed.max(1) as f64,
                plain as f64 / 1e6 / secs.max(1e-9),
            );
        }
        if self.args.rm && !from_stdin && self.args.quiet {
            if regular && wrote_file {
                std::fs::remove_file(input).context("removing input after success")?;
            }
        } else if self.args.rm && !from_stdin {
            if !regular {
                // Deleting a device node or FIFO would break whatever else
                // uses it (as root, `--rm /dev/null` removed /dev/null).
                let _ = writeln!(
                    io::stderr(),
                    "perfkit: {}: kept: --rm refuses to remove a non-regular file",
                    display(input)
                );
            } else if wrote_file {
                std::fs::remove_file(input).context("removing input after success")?;
            } else if matches!(sink, Sink::File(_)) {
                // A device or FIFO (`-o /dev/null`) keeps nothing: the
                // input stays, as it does with stdout.
                let _ = writeln!(
                    io::stderr(),
                    "perfkit: {}: kept: --rm removes an input only after writing a regular file",
                    display(input)
                );
            }
        }
        Ok(())
    }

    /// Streams input to output (`None`: decode and discard, for --test)
    /// with the input read ahead and the output written behind by their own
    /// threads (see [`perfkit::pipeline`]), so that reading, the zstd work
    /// and writing overlap; returns (bytes read, bytes written).
    fn transform(
        &self,
        input: Box<dyn Read + Send>,
        out: Option<Box<dyn Write + Send>>,
        size: Option<u64>,
        bar: &indicatif::ProgressBar,
    ) -> Result<(u64, u64)> {
        let mut out = match out {
            Some(sink) => Some(
                WriteBehind::new(sink, PIPE_BUFFERS, WRITE_SIZE)
                    .context("starting the output writer")?,
            ),
            None => None,
        };
        let (read, discarded) = match self.mode {
            Mode::Compress => {
                let out = out.as_mut().context("compressing needs an output")?;
                let params = self.params();
                // In place when the calling thread compresses and address
                // space for a runway is granted.
                let read = match Runway::reserve_for(&params, size) {
                    Some(runway) => {
                        self.compress_in_place(params, runway, input, out, size, bar)?
                    }
                    None => self.compress_streaming(params, input, out, size, bar)?,
                };
                (read, 0)
            }
            Mode::Decompress | Mode::Test => {
                let mut dec = match self.dict {
                    Some(d) => Decompressor::with_dictionary(d)?,
                    None => Decompressor::new()?,
                };
                // zstd's precedence: --memory, else --long's window, else
                // the default.
                match (self.args.memory, self.args.long) {
                    (Some(limit), _) => dec.set_memory_limit(limit)?,
                    (None, Some(w)) => dec.set_window_log_max(w)?,
                    (None, None) => {}
                }
                let input = ReadAhead::new(input, PIPE_BUFFERS, READ_SIZE)
                    .context("starting the input reader")?;
                let mut decoder = Decoder::with_decompressor(input, dec);
                let mut scratch = Vec::new();
                let mut discarded = 0u64;
                loop {
                    // Decode straight into the writer's buffer: no copy.
                    let room = match out.as_mut() {
                        Some(w) => w.spare().context("writing output")?,
                        None => {
                            scratch.resize(WRITE_SIZE, 0);
                            &mut scratch[..]
                        }
                    };
                    let n = match decoder.read(room) {
                        Ok(n) => n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => return Err(with_hint(zstdkit::Error::from_io(e))),
                    };
                    if n == 0 {
                        break;
                    }
                    match out.as_mut() {
                        Some(w) => w.advance(n),
                        None => discarded += n as u64,
                    }
                    bar.set_position(decoder.consumed());
                }
                (decoder.consumed(), discarded)
            }
        };
        let written = match out {
            Some(w) => w.finish().context("writing output")?,
            None => discarded,
        };
        Ok((read, written))
    }

    /// Compresses on a runway (see [`zstdkit::runway`]): a thread lays the
    /// input down in one contiguous range and zstd compresses it there,
    /// straight into the writer's buffers; returns the bytes read.
    fn compress_in_place(
        &self,
        params: Params,
        runway: Runway,
        input: Box<dyn Read + Send>,
        out: &mut WriteBehind,
        size: Option<u64>,
        bar: &indicatif::ProgressBar,
    ) -> Result<u64> {
        let mut enc = RunwayEncoder::new(runway, params, self.dict, size, input)?;
        loop {
            let room = out.spare().context("writing output")?;
            let n = enc.compress(room).map_err(input_error)?;
            if n == 0 {
                return Ok(enc.consumed());
            }
            out.advance(n);
            bar.set_position(enc.consumed());
        }
    }

    /// Compresses through zstd's own streaming buffer, the input read
    /// ahead by a thread; returns the bytes read.
    fn compress_streaming(
        &self,
        params: Params,
        input: Box<dyn Read + Send>,
        out: &mut WriteBehind,
        size: Option<u64>,
        bar: &indicatif::ProgressBar,
    ) -> Result<u64> {
        let mut input =
            ReadAhead::new(input, PIPE_BUFFERS, READ_SIZE).context("starting the input reader")?;
        let comp = match self.dict {
            Some(d) => Compressor::with_dictionary(params, d)?,
            None => Compressor::new(params)?,
        };
        let mut enc = Encoder::with_compressor(out, comp);
        if let Some(n) = size {
            enc.pledge_size(n)?;
        }
        let mut read = 0u64;
        loop {
            let data = input.fill_buf().context("reading input")?;
            if data.is_empty() {
                break;
            }
            let n = data.len();
            enc.write_with(data, FlushMode::Continue)
                .map_err(output_error)?;
            input.consume(n);
            read += n as u64;
            bar.inc(n as u64);
        }
        enc.finish().map_err(output_error)?;
        Ok(read)
    }
}

/// A runway encoder's only I/O is its source's, so an I/O error out of it
/// is the input's; zstd's own errors (a size that changed) pass as they are.
fn input_error(err: zstdkit::Error) -> anyhow::Error {
    match err {
        zstdkit::Error::Io(e) => anyhow::Error::new(e).context("reading input"),
        other => other.into(),
    }
}

/// The encoder's only I/O is its writer's, so an I/O error out of it is
/// the output's (a full disk, a broken pipe), named as such.
fn output_error(err: zstdkit::Error) -> anyhow::Error {
    match err {
        zstdkit::Error::Io(e) => anyhow::Error::new(e).context("writing output"),
        other => other.into(),
    }
}

/// A refused window gets the flags that would admit it, as zstd's message
/// has.
fn with_hint(err: zstdkit::Error) -> anyhow::Error {
    match err {
        zstdkit::Error::WindowTooLarge {
            window: Some(w), ..
        } if zstdkit::context::MEMORY_LIMIT_RANGE.contains(&w) => {
            let mib = w.div_ceil(1 << 20);
            let log = 64 - (w - 1).leading_zeros();
            anyhow::anyhow!("{err}; allow it with --memory={mib}MiB or --long={log}")
        }
        other => other.into(),
    }
}

/// Standard output for the writer thread: its own handle on descriptor 1,
/// written without std's line buffering (which splits a block at its last
/// newline). With descriptor 1 closed, std's stdout, which discards.
fn stdout_sink() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(File::from(fd)),
        Err(_) => Box::new(io::stdout()),
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

fn train(args: &CompressArgs) -> Result<ExitCode> {
    let mut samples = Vec::with_capacity(args.files.len());
    for f in &args.files {
        samples.push(std::fs::read(f).with_context(|| format!("reading sample {}", f.display()))?);
    }
    let dict = zstdkit::dict::train(&samples, args.maxdict)?;
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| PathBuf::from("dictionary"));
    perfkit::report::write_atomically_with(&out, args.force, |f| Ok(f.write_all(&dict)?))
        .with_context(|| format!("writing dictionary {}", out.display()))?;
    if args.verbose > 0 {
        let _ = writeln!(
            io::stderr(),
            "trained {} bytes from {} samples → {}",
            dict.len(),
            samples.len(),
            out.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
