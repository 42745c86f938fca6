//! The flags of `perfkit compress` and `perfkit decompress` (and `compress
//! bench`), and their conversion into a [`Task`]: clap's types end here.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args as _;
use clap::error::ErrorKind;
use perfkit_bench::zstd::levels::Levels;
use zstdkit::job::{Seekable, WindowLimit};
use zstdkit::{Params, Recipe};

use super::{Decoder, Format, Mode, Options, OutputDir, Task, Train};
use crate::flags::ReportArgs;

/// zstd's lowest fast level (`ZSTD_minCLevel()`, -(1 << 17)).
const MIN_LEVEL: i32 = -(1 << 17);

/// Arguments of `perfkit compress` and `perfkit decompress`.
#[derive(Debug, clap::Args)]
#[command(
    // zstd takes a flag given twice (`-c ... -c`, `-qq`): the last wins.
    args_override_self = true,
    after_help = "zstd habits that work: -c, -o, -z, -d, -f, -k, --rm, -t (the last of -z, -d, -t \
wins), -q, -v, -l/--list (-lv), -H, -1..-19, --ultra -20..-22, --fast[=N], -T, --single-thread, \
--auto-threads=physical|logical, --long[=WLOG], -M/--memory, -D, --train, --maxdict, -r, \
--filelist=FILE, --exclude-compressed, --format=zstd|gzip, --patch-from, -b#/-e#/-i# (-e#, -i# \
ignored without -b), `-` for stdin, --zstd=PARAMS, --show-default-cparams, -C/--[no-]check, \
--[no-]content-size, -B#, --rsyncable, --output-dir-flat, --output-dir-mirror, --[no-]pass-through \
(on by default with -f when the output is stdout: `perfkit decompress -cf` is zstdcat -f), \
short flags in clusters and repeated as zstd reads them (-19c, -c19, -3fc, -19T2, -19fo FILE, \
-qq, -c ... -c), --[no-]progress, --[no-]sparse (accepted; outputs have no holes), zstd's \
question before overwriting an output without -f (the answer read from stdin), the input's \
mode and times kept on the file made from it, and zstd's ratio lines on stderr.

Differences from zstd: the level's long form is --level N (out of range is a usage error, \
exit 2, where zstd clamps with a warning); -v adds a line of sizes, ratio and speed per \
input (zstd's -v also prints its banner; -vv adds nothing); --list reads files, not stdin; \
--stats is another name for -v; SIGINT, SIGTERM and SIGHUP all delete the partial output and \
exit 128 + the signal's number (zstd handles SIGINT alone, exiting 2); -b# prints a report \
(--json and the other report flags apply) rather than zstd's lines; --format takes no xz, \
lzma or lz4; --adapt does not exist; --progress draws perfkit's bar on a terminal only; \
perfkit is not installed as zstdcat or unzstd (they are `perfkit decompress -cf` and \
`perfkit decompress`). The recipe benchmark is \
`perfkit bench --only zstd`."
)]
pub struct CompressArgs {
    #[command(flatten)]
    io: FileArgs,
    #[command(flatten)]
    enc: EncodeArgs,
}

/// Arguments of `perfkit decompress`: the file flags alone, which are
/// all that apply to decoding.
#[derive(Debug, clap::Args)]
#[command(
    args_override_self = true,
    after_help = "The same as perfkit compress -d; see perfkit compress --help for the zstd habits \
that work and the differences from zstd."
)]
pub struct DecompressArgs {
    #[command(flatten)]
    io: FileArgs,
}

/// The flags both directions take: inputs, outputs and what is said.
#[derive(Debug, clap::Args)]
struct FileArgs {
    /// Files to process; none or `-` means stdin to stdout.
    files: Vec<PathBuf>,
    /// Write to stdout (of -c and -o, the last given wins, as in zstd).
    #[arg(short = 'c', long = "stdout", overrides_with = "output")]
    stdout: bool,
    /// Write to FILE; with several inputs, one after the other into FILE
    /// (zstd's concatenation, with its warning).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        overrides_with = "stdout"
    )]
    output: Option<PathBuf>,
    /// Put each output named from its input in DIR, without the input's
    /// folders (DIR is made if missing).
    #[arg(long, value_name = "DIR", conflicts_with = "output_dir_mirror")]
    output_dir_flat: Option<PathBuf>,
    /// Put each output named from its input in DIR, below the input's
    /// own path (its folders made; an input path with `..` is refused).
    #[arg(long, value_name = "DIR")]
    output_dir_mirror: Option<PathBuf>,
    /// Overwrite existing outputs.
    #[arg(short = 'f', long)]
    force: bool,
    /// Remove each input after it was written successfully to a regular
    /// file (never after writing to stdout, a device or a FIFO). Of --rm
    /// and -k, the last given wins, as in zstd.
    #[arg(long, overrides_with = "keep")]
    rm: bool,
    /// Keep inputs (the default).
    #[arg(short = 'k', long, overrides_with = "rm")]
    keep: bool,
    /// No progress bar (it shows only on a terminal, for inputs over 16 MiB).
    #[arg(long, overrides_with = "progress")]
    no_progress: bool,
    /// A progress bar for every input, whatever its size (still only on a
    /// terminal).
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// Test the integrity of compressed inputs; write nothing. The last of
    /// -z, -d and -t wins, as in zstd.
    #[arg(short = 't', long, overrides_with_all = ["decompress", "compress"])]
    test: bool,
    /// Decompress (what `perfkit decompress` does already); the last of
    /// -z, -d and -t wins.
    #[arg(short = 'd', long, overrides_with_all = ["compress", "test"])]
    decompress: bool,
    /// Compress (what `perfkit compress` does already); the last of -z,
    /// -d and -t wins, so `perfkit decompress -z` compresses, as `unzstd -z`.
    #[arg(short = 'z', long, overrides_with_all = ["decompress", "test"])]
    compress: bool,
    /// Print the long help (zstd's -H), as --help.
    #[arg(short = 'H', action = clap::ArgAction::HelpLong)]
    long_help: Option<bool>,
    /// Decompressing, copy an input that is not zstd or gzip data through
    /// unchanged, as zstd does. The default is on with -f when the output is
    /// stdout (`-dcf`, zstdcat's habit), off otherwise.
    #[arg(long, overrides_with = "no_pass_through")]
    pass_through: bool,
    /// Never copy a non-zstd input through, even with -c -f.
    #[arg(long, overrides_with = "pass_through")]
    no_pass_through: bool,
    /// Read more input names from FILE, one a line, after those given
    /// (FILE: a regular file of at most 128M; may be given again).
    #[arg(long, value_name = "FILE")]
    filelist: Vec<PathBuf>,
    /// Accepted for zstd's sake: outputs are written whole, with no holes
    /// (see the differences).
    #[arg(long, overrides_with = "no_sparse")]
    sparse: bool,
    /// Write outputs whole, with no holes (what perfkit always does).
    #[arg(long, overrides_with = "sparse")]
    no_sparse: bool,
    /// One thread for everything (wins over -T): compressing, no zstd
    /// worker beside the reading and writing; decompressing, one thread.
    #[arg(long)]
    single_thread: bool,
    /// Leave the content checksum out of each frame (with --seekable, out
    /// of the seek table too); decompressing, do not check checksums.
    #[arg(long, overrides_with = "check")]
    no_check: bool,
    /// Write a content checksum in each frame, and check it when
    /// decompressing (the default).
    #[arg(short = 'C', long, overrides_with = "no_check")]
    check: bool,
    /// What -T0 counts: physical cores (zstd's default) or logical ones.
    #[arg(
        long,
        value_enum,
        value_name = "physical|logical",
        default_value = "physical",
        require_equals = true
    )]
    auto_threads: AutoThreads,
    /// Process every file under the directories given, recursively;
    /// symbolic links met on the way are skipped, as zstd skips them.
    #[arg(short = 'r', long)]
    recursive: bool,
    /// Long-distance matching with a window of 2^WLOG (default 27); when
    /// decompressing, allow windows up to 2^WLOG (as --memory=2^WLOG).
    #[arg(long, value_name = "WLOG", num_args = 0..=1, require_equals = true, default_missing_value = "27",
          value_parser = clap::value_parser!(u32).range(10..=31))]
    long: Option<u32>,
    /// When decompressing, refuse frames whose window exceeds LIMIT bytes
    /// (64K, 256M, 2G; 1K..=2G; default 128M); wins over --long, as in zstd.
    #[arg(short = 'M', long, value_name = "LIMIT", value_parser = parse_memory)]
    memory: Option<u64>,
    /// Which zstd decoder decompresses: auto (the one that measured
    /// faster: the block decoder's pipeline for one frame of 64 MiB or
    /// more in a file on -T2 and up, not into a pipe; libzstd otherwise),
    /// perfkit (the
    /// block decoder wherever it applies, one frame on -T threads, one
    /// thread too), libzstd.
    #[arg(long, value_enum, default_value = "auto", value_name = "DECODER")]
    decoder: DecoderArg,
    /// Threads (0: one per core; 1, the default: the calling thread).
    /// Compressing, zstd's workers; with --seekable, frames compressed in
    /// parallel. Decompressing, the frames of an input made of several
    /// (seekable, pzstd's, concatenated) decoded in parallel, as pzstd -p.
    #[arg(short = 'T', long, default_value_t = 1)]
    threads: u32,
    /// Use a dictionary (a regular file of at most 32M, as zstd reads).
    #[arg(short = 'D', long = "dict", value_name = "FILE")]
    dict: Option<PathBuf>,
    /// Compress each input as a patch against FILE (an earlier version of
    /// it), or decompress such a patch; as zstd's, FILE (a regular file of
    /// at most 2G) is held in memory, and so is an input compressed
    /// against it.
    #[arg(long, value_name = "FILE", conflicts_with = "dict")]
    patch_from: Option<PathBuf>,
    /// Quiet: no ratio lines and no notes on stderr (such as inputs --rm
    /// kept); errors still print. Twice (`-qq`), not even the notes zstd
    /// prints under `-q` (`--patch-from`'s "long mode automatically
    /// triggered"). As in zstd, each -q takes a -v back (`-qqv` is `-q`).
    #[arg(short = 'q', long, action = clap::ArgAction::Count)]
    quiet: u8,
    /// Verbose: each input's ratio line even among several, and a line of
    /// sizes, ratio and speed (`--stats` too); with `--list`, each file's
    /// details as `zstd -lv` prints them.
    #[arg(short = 'v', long = "verbose", visible_alias = "stats", action = clap::ArgAction::Count)]
    verbose: u8,
    /// Decompress only the bytes START..END of a seekable file's data
    /// (offsets in the decompressed data, with K, M or G: `1G..1G+1M` is
    /// not taken, `1024M..1025M` is), reading only the frames that hold
    /// them; to -o FILE or stdout. Needs a regular file.
    #[arg(long, value_name = "START..END", value_parser = parse_range,
          conflicts_with_all = ["recursive", "patch_from", "list", "test", "dict"])]
    range: Option<(u64, u64)>,
    /// List what the frames of `.zst` files hold (frames, sizes, ratio,
    /// checksum) from their headers, as `zstd -l`; writes nothing.
    #[arg(short = 'l', long)]
    list: bool,
}

/// The flags of compressing alone (and of benchmark mode).
#[derive(Debug, clap::Args)]
struct EncodeArgs {
    /// The format written when compressing: zstd (`.zst`) or gzip (`.gz`,
    /// at gzip's level nearest the zstd level: 3 by default, 9 at most).
    /// Decompression reads both whatever this says.
    #[arg(long, value_enum, default_value = "zstd", value_name = "FORMAT",
          conflicts_with_all = ["patch_from", "seekable", "dict"])]
    format: FormatArg,
    /// Write zstd's seekable format: independent frames of --frame-size
    /// input bytes each and a seek table at the end, which every zstd
    /// decoder reads as plain zstd.
    #[arg(long, conflicts_with_all = ["patch_from", "dict"])]
    seekable: bool,
    /// With --seekable, the input bytes per frame (1 to 1G; default 1M).
    #[arg(long, value_name = "SIZE", requires = "seekable", value_parser = parse_frame_size)]
    frame_size: Option<usize>,
    /// Print, for each input, the parameters zstd's level picks for its
    /// size (on stderr, as zstd prints them), then compress.
    #[arg(long)]
    show_default_cparams: bool,
    /// When compressing, skip inputs that already are (.zst, .tzst, .gz,
    /// .tgz, .lzma, .xz, .txz, .lz4, .tlz4), as zstd does.
    #[arg(long)]
    exclude_compressed: bool,
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
    /// zstd's advanced parameters over the level, as zstd's `--zstd=`
    /// takes them: `wlog=23,clog=23,hlog=22,slog=6,mml=3,tlen=48,strat=6`
    /// (long names too: windowLog, chainLog, hashLog, searchLog, minMatch,
    /// targetLength, strategy, overlapLog, ldmHashLog, ldmMinMatch,
    /// ldmBucketSizeLog, ldmHashRateLog).
    #[arg(long = "zstd", value_name = "PARAMS", value_parser = parse_tuning)]
    tuning: Option<zstdkit::tuning::Tuning>,
    /// Leave the decompressed size out of each frame's header.
    #[arg(long, overrides_with = "content_size")]
    no_content_size: bool,
    /// Write the decompressed size in each frame's header (the default).
    #[arg(long, overrides_with = "no_content_size")]
    content_size: bool,
    /// The input bytes of each compression job (`-B1M`, at most 1G;
    /// zstd's workers compress jobs side by side; with -T1 one worker
    /// runs, as zstd's default does).
    #[arg(short = 'B', value_name = "#", value_parser = parse_job_size)]
    job_size: Option<u32>,
    /// Compress so that a small change to the input changes little of
    /// the output, as zstd's --rsyncable (with -T1, on one worker, as
    /// zstd's default).
    #[arg(long)]
    rsyncable: bool,
    /// Train a dictionary from the input files (write it with -o, default `dictionary`).
    #[arg(long, conflicts_with = "patch_from")]
    train: bool,
    /// Largest dictionary --train may write (bytes, or 64K / 1M; at most 4G - 1).
    #[arg(long, default_value_t = zstdkit::dict::DEFAULT_DICT_SIZE, value_parser = parse_maxdict)]
    maxdict: usize,
    /// Benchmark mode, from level # (zstd's default 3 when # is left out;
    /// `-b1`): compress and decompress the files (or the built-in corpus)
    /// at each level up to -e#, one report row per level.
    #[arg(short = 'b', value_name = "#", num_args = 0..=1, default_missing_value = "3",
          allow_negative_numbers = true,
          value_parser = clap::value_parser!(i32).range(MIN_LEVEL as i64..=22))]
    bench_first: Option<i32>,
    /// Benchmark mode's last level (`-e19`; default: the first); without
    /// -b, ignored, as zstd ignores it.
    #[arg(short = 'e', value_name = "#", allow_negative_numbers = true,
          value_parser = clap::value_parser!(i32).range(MIN_LEVEL as i64..=22))]
    bench_last: Option<i32>,
    /// Benchmark mode's least time per level, in seconds, for compression
    /// and again for decompression (`-i1`; zstd's default 3; 0: once);
    /// without -b, ignored, as zstd ignores it.
    #[arg(short = 'i', value_name = "#", default_value_t = 3)]
    bench_seconds: u64,
    #[command(flatten)]
    bench_report: ReportArgs,
}

/// `--auto-threads`' values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AutoThreads {
    /// One thread per physical core.
    Physical,
    /// One thread per logical core (hyper-threads counted).
    Logical,
}

/// `--decoder`'s values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum DecoderArg {
    /// The decoder that measured faster on one frame: the block
    /// decoder's pipeline for one large frame in a file on two threads or
    /// more, libzstd otherwise.
    Auto,
    /// perfkit's block decoder wherever it applies, on one thread too
    /// (for tests and benchmarks).
    Perfkit,
    /// libzstd always, as before the block decoder.
    Libzstd,
}

/// `--format`'s values.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FormatArg {
    /// Zstandard frames.
    Zstd,
    /// gzip members (RFC 1952), which gzip reads.
    Gzip,
}

fn parse_range(s: &str) -> Result<(u64, u64), String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("{s} is not START..END (e.g. 10M..11M)"))?;
    let (start, end) = (
        perfkit::units::parse_size(a)?,
        perfkit::units::parse_size(b)?,
    );
    if start > end {
        return Err(format!("{s}: START is after END"));
    }
    Ok((start, end))
}

fn parse_frame_size(s: &str) -> Result<usize, String> {
    let max = zstdkit::seekable::MAX_FRAME_SIZE;
    let n = perfkit::units::parse_size_up_to(s, max as u64, "the largest seekable frame")?;
    match usize::try_from(n) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("{s} is not a frame size from 1 byte to 1G")),
    }
}

fn parse_tuning(s: &str) -> Result<zstdkit::tuning::Tuning, String> {
    s.parse().map_err(|e: zstdkit::Error| e.to_string())
}

/// The largest `-B#`: zstd's `ZSTDMT_JOBSIZE_MAX` (on 64 bits), the
/// largest job its workers take.
const MAX_JOB_SIZE: u32 = 1 << 30;

/// `-B#`: a size as zstd's number reader takes it (`512K`, `1MiB`), at
/// most [`MAX_JOB_SIZE`] (zstd would cut a larger one down silently).
fn parse_job_size(s: &str) -> Result<u32, String> {
    use zstdkit::tuning::NumberError;
    let too_large = || perfkit::units::too_large(s, MAX_JOB_SIZE.into(), "the largest job size");
    match zstdkit::tuning::number_checked(s) {
        Ok(n) if n <= MAX_JOB_SIZE => Ok(n),
        Ok(_) | Err(NumberError::TooLarge) => Err(too_large()),
        Err(NumberError::Invalid) => Err(format!("{s} is not a size (such as 512K or 4M)")),
    }
}

fn parse_recipe(s: &str) -> Result<Recipe, String> {
    s.parse().map_err(|e: zstdkit::Error| e.to_string())
}

fn parse_memory(s: &str) -> Result<u64, String> {
    let range = zstdkit::context::MEMORY_LIMIT_RANGE;
    let n =
        perfkit::units::parse_size_up_to(s, *range.end(), "the largest window zstd can decode")?;
    if n < *range.start() {
        return Err(format!(
            "{s} is below the smallest window zstd decodes, {}",
            perfkit::units::show_size(*range.start())
        ));
    }
    Ok(n)
}

fn parse_maxdict(s: &str) -> Result<usize, String> {
    let max = zstdkit::dict::MAX_DICT_SIZE;
    let n =
        perfkit::units::parse_size_up_to(s, max as u64, "the largest dictionary zstd can train")?;
    usize::try_from(n).map_err(|_| {
        perfkit::units::too_large(s, max as u64, "the largest dictionary zstd can train")
    })
}

impl CompressArgs {
    /// The task these flags ask for. A combination parsing cannot refuse
    /// (it depends on how many inputs there are) is a usage error, printed
    /// as clap prints its own; the `Err` is the exit code to leave with.
    pub fn into_task(self) -> Result<Task, ExitCode> {
        let (io, enc) = (self.io, self.enc);
        io.no_bench_subcommand(false)?;
        if let Some(first) = enc.bench_first {
            return Ok(Task::Levels {
                levels: Levels {
                    files: io.files,
                    first,
                    last: enc.bench_last.unwrap_or(first),
                    min_time: Duration::from_secs(enc.bench_seconds),
                },
                report: enc.bench_report.options(),
            });
        }
        if let Some(flag) = enc.bench_report.first_given() {
            return Err(usage_error(
                false,
                ErrorKind::ArgumentConflict,
                &format!("{flag} applies to benchmark mode (-b#) only"),
            ));
        }
        if io.list {
            return Ok(io.list_task());
        }
        if enc.train {
            if io.files.is_empty() {
                return Err(usage_error(
                    false,
                    ErrorKind::MissingRequiredArgument,
                    "--train needs sample files",
                ));
            }
            let level = io.level();
            return Ok(Task::Train(Train {
                samples: io.files,
                max_size: enc.maxdict,
                output: io.output.unwrap_or_else(|| PathBuf::from("dictionary")),
                force: io.force,
                verbose: level > 2,
                quiet: level < 2,
            }));
        }
        let mode = io.mode(Mode::Compress);
        if enc.show_default_cparams && mode == Mode::Decompress {
            // zstd's refusal (exit 1; `-t` ignores the flag, as zstd).
            let _ = writeln!(
                io::stderr(),
                "perfkit: can't use --show-default-cparams in decompression mode"
            );
            return Err(ExitCode::FAILURE);
        }
        let format = match enc.format {
            FormatArg::Zstd => Format::Zstd,
            // zstd's mapping: its level, up to gzip's highest; its fast
            // levels and 0 mean its default, 3.
            FormatArg::Gzip => Format::Gzip(match enc.level {
                Some(l) if l > 0 => l.min(9) as u32,
                _ => 3,
            }),
        };
        let how = Encoding {
            params: enc
                .params(io.long, io.threads(), io.single_thread)
                .checksum(!io.no_check),
            format,
            exclude_compressed: enc.exclude_compressed,
            seekable: enc.seekable.then(|| Seekable {
                frame_size: enc.frame_size.unwrap_or(1 << 20),
                checksums: !io.no_check,
            }),
            verify_checksums: !io.no_check,
            show_cparams: enc.show_default_cparams,
        };
        Ok(io.code(mode, how))
    }
}

impl DecompressArgs {
    /// The task these flags ask for, as [`CompressArgs::into_task`] with
    /// `-d`.
    pub fn into_task(self) -> Result<Task, ExitCode> {
        let io = self.io;
        io.no_bench_subcommand(true)?;
        if io.list {
            return Ok(io.list_task());
        }
        let mode = io.mode(Mode::Decompress);
        let how = Encoding {
            params: Recipe::default().params().checksum(!io.no_check),
            format: Format::Zstd,
            exclude_compressed: false,
            seekable: None,
            verify_checksums: !io.no_check,
            show_cparams: false,
        };
        Ok(io.code(mode, how))
    }
}

/// How compressing encodes, from the compress-only flags (decompression's
/// task carries the defaults).
struct Encoding {
    params: Params,
    format: Format,
    exclude_compressed: bool,
    seekable: Option<Seekable>,
    /// Check frames' checksums when decoding (`--no-check` turns it off).
    verify_checksums: bool,
    /// `--show-default-cparams`.
    show_cparams: bool,
}

impl FileArgs {
    /// `-T`, with 0 read as one per core (physical or logical, as
    /// `--auto-threads` says); 1 with `--single-thread`.
    fn threads(&self) -> u32 {
        if self.single_thread {
            1
        } else if self.threads == 0 {
            let logical = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
            match self.auto_threads {
                AutoThreads::Logical => logical,
                AutoThreads::Physical => physical_cores().unwrap_or(logical),
            }
        } else {
            self.threads
        }
    }

    /// zstd's display level: 2 by default, one up for each -v and one
    /// down for each -q (1: quiet, 0: silent, 3: verbose).
    fn level(&self) -> i32 {
        2 + i32::from(self.verbose) - i32::from(self.quiet)
    }

    /// What the last of `-z`, `-d` and `-t` asks for (clap keeps only the
    /// last), or `default`, the command's own.
    fn mode(&self, default: Mode) -> Mode {
        if self.test {
            Mode::Test
        } else if self.decompress {
            Mode::Decompress
        } else if self.compress {
            Mode::Compress
        } else {
            default
        }
    }

    /// `compress bench` was a subcommand; the file tools take none now, so
    /// `bench` names a file, and when there is none the new spellings are
    /// what the user wants to hear.
    fn no_bench_subcommand(&self, decompress: bool) -> Result<(), ExitCode> {
        if self.files.first().is_some_and(|f| f == Path::new("bench"))
            && !Path::new("bench").exists()
        {
            return Err(usage_error(
                decompress,
                ErrorKind::InvalidSubcommand,
                "no file named bench; the recipe benchmark is `perfkit bench --only zstd`, \
                 zstd's level benchmark `perfkit compress -b#`",
            ));
        }
        Ok(())
    }

    fn list_task(self) -> Task {
        let level = self.level();
        Task::List {
            files: self.files,
            verbose: level > 2,
        }
    }

    /// Code every input in `mode`, compressing as `how` says.
    fn code(self, mode: Mode, how: Encoding) -> Task {
        let threads = self.threads() as usize;
        let level = self.level();
        let files = if self.files.is_empty() && self.filelist.is_empty() {
            vec![PathBuf::from("-")]
        } else {
            self.files
        };
        Task::Code(Box::new(Options {
            files,
            mode,
            params: how.params,
            window: match (self.memory, self.long) {
                (Some(limit), _) => WindowLimit::Bytes(limit),
                (None, Some(w)) => WindowLimit::Log(w),
                (None, None) => WindowLimit::Default,
            },
            decoder: match self.decoder {
                DecoderArg::Auto => Decoder::Auto,
                DecoderArg::Perfkit => Decoder::Perfkit,
                DecoderArg::Libzstd => Decoder::Libzstd,
            },
            format: how.format,
            threads,
            recursive: self.recursive,
            exclude_compressed: how.exclude_compressed,
            stdout: self.stdout,
            output: self.output,
            force: self.force,
            remove_input: self.rm,
            dict: self.dict,
            patch_from: self.patch_from,
            seekable: how.seekable,
            range: self.range,
            quiet: level < 2,
            silent: level < 1,
            no_progress: self.no_progress,
            progress: self.progress,
            pass_through: match (self.pass_through, self.no_pass_through) {
                (true, _) => Some(true),
                (_, true) => Some(false),
                _ => None,
            },
            verify_checksums: how.verify_checksums,
            show_cparams: how.show_cparams,
            filelists: self.filelist,
            output_dir: match (self.output_dir_flat, self.output_dir_mirror) {
                (Some(d), _) => Some(OutputDir::Flat(d)),
                (None, Some(d)) => Some(OutputDir::Mirror(d)),
                (None, None) => None,
            },
            verbose: level > 2,
        }))
    }
}

impl EncodeArgs {
    /// The compression parameters: the recipe, the level over it, the
    /// long window, and the workers.
    fn params(&self, long: Option<u32>, threads: u32, single_thread: bool) -> Params {
        let mut p = match (self.recipe, self.level) {
            (Some(r), Some(l)) => r.params().level(l),
            (Some(r), None) => r.params(),
            (None, Some(l)) => Params::for_level(l),
            (None, None) => Recipe::default().params(),
        };
        if let Some(w) = long {
            p = p.long(Some(w));
        }
        if let Some(t) = self.tuning {
            p = p.tune(t);
        }
        // Jobs exist only with workers: -B and --rsyncable on one thread
        // get zstd's default of one worker, so they act as in zstd.
        let jobs = !single_thread && (self.job_size.is_some_and(|b| b > 0) || self.rsyncable);
        p.content_size(!self.no_content_size)
            .job_size(self.job_size.filter(|&b| b > 0))
            .rsyncable(self.rsyncable)
            // One thread means "in the calling thread": zstd's single
            // worker would add a hand-off without adding parallelism.
            .workers(match threads {
                0 | 1 if jobs => 1,
                0 | 1 => 0,
                n => n,
            })
    }
}

/// The physical cores of this machine, as zstd's `--auto-threads=physical`
/// counts them: the distinct sets of hyper-threads sharing a core, from
/// Linux's CPU topology (`None` where it cannot be read).
fn physical_cores() -> Option<u32> {
    let mut cores = std::collections::HashSet::new();
    for entry in std::fs::read_dir("/sys/devices/system/cpu").ok()? {
        let entry = entry.ok()?;
        let name = entry.file_name();
        let name = name.to_str().unwrap_or("");
        if !name
            .strip_prefix("cpu")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        {
            continue;
        }
        // An offline CPU has no topology: it runs nothing.
        let Ok(siblings) =
            std::fs::read_to_string(entry.path().join("topology/thread_siblings_list"))
        else {
            continue;
        };
        cores.insert(siblings.trim().to_string());
    }
    u32::try_from(cores.len()).ok().filter(|&n| n > 0)
}

/// Reports a usage error that parsing cannot see (it depends on how many
/// inputs there are) exactly as clap reports its own: `error: …`, the usage
/// line, exit code 2.
fn usage_error(decompress: bool, kind: ErrorKind, message: &str) -> ExitCode {
    let name = if decompress { "decompress" } else { "compress" };
    let cmd = clap::Command::new(name).bin_name(format!("perfkit {name}"));
    let mut cmd = if decompress {
        DecompressArgs::augment_args(cmd)
    } else {
        CompressArgs::augment_args(cmd)
    };
    let err = cmd.error(kind, message);
    let _ = err.print();
    ExitCode::from(err.exit_code().clamp(0, 255) as u8)
}
