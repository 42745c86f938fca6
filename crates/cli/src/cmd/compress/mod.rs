//! `perfkit compress` / `perfkit decompress`: a zstd-compatible file tool.
//!
//! Every output goes through a temporary sibling renamed on success, so a
//! failure (corrupt input, full disk, broken pipe) never leaves a file that
//! looks complete.
//!
//! The coding itself, every format and how it overlaps its I/O, is
//! [`zstdkit::job`]'s; here are the files: inputs (`-r`, stdin), sinks,
//! `--rm`, `--train` and what is said on stderr, with output names and
//! places in `outputs`, `--range` in `range` and `--list` in `frames`.

use std::cell::RefCell;
use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use perfkit_report::ReportOptions;
use zstdkit::Params;
use zstdkit::job::{Seekable, WindowLimit};

mod args;
mod bench;
mod coder;
mod frames;
mod outputs;
mod range;
mod zstd_argv;

pub use args::{CompressArgs, DecompressArgs};
use coder::{Coder, Done};
pub use outputs::OutputDir;
use outputs::{Finish, Ledger, Sink, join_outputs};
pub use zstd_argv::zstd_level_flags;
pub use zstdkit::job::blockwise::Decoder;
use zstdkit::job::summary;

/// What `compress`/`decompress` were asked to do, the flags resolved.
#[derive(Debug)]
pub enum Task {
    /// `-b#`/`-e#`/`-i#`: zstd's benchmark mode, a row per level.
    Levels {
        /// What to measure.
        levels: perfkit_bench::zstd::levels::Levels,
        /// How to render it.
        report: ReportOptions,
    },
    /// `--list`: what the frames of these files hold (`verbose`: `-lv`).
    List {
        /// The `.zst` files.
        files: Vec<PathBuf>,
        /// Each file's details, as `zstd -lv`.
        verbose: bool,
    },
    /// `--train`: a dictionary from sample files.
    Train(Train),
    /// Compress, decompress or test every input.
    Code(Box<Options>),
}

/// Whether inputs are compressed, decompressed, or only checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `FILE` → `FILE.zst`.
    Compress,
    /// `FILE.zst` → `FILE`.
    Decompress,
    /// Decompress and discard, to check integrity (`-t`).
    Test,
}

/// What compressing writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Zstandard frames, `.zst`.
    Zstd,
    /// gzip at this level (1..=9), `.gz`.
    Gzip(u32),
}

/// How to code the inputs.
#[derive(Debug)]
pub struct Options {
    /// The inputs, `-` for stdin; never empty.
    pub files: Vec<PathBuf>,
    /// What to do with them.
    pub mode: Mode,
    /// What compressing writes.
    pub format: Format,
    /// Threads: `--seekable`'s frames are compressed, and an input of
    /// several frames decoded, on this many (zstd's own workers are in
    /// `params`).
    pub threads: usize,
    /// Expand directories into the files under them (`-r`).
    pub recursive: bool,
    /// Leave out inputs already compressed, when compressing.
    pub exclude_compressed: bool,
    /// Write every output to stdout.
    pub stdout: bool,
    /// Write the (one) output here; `-` is stdout.
    pub output: Option<PathBuf>,
    /// Replace existing outputs.
    pub force: bool,
    /// Remove each input once its output is safely in a regular file.
    pub remove_input: bool,
    /// The compression parameters (level, strategy, window, workers).
    pub params: Params,
    /// The decompression window limit.
    pub window: WindowLimit,
    /// Which zstd decoder decompresses (`--decoder`).
    pub decoder: Decoder,
    /// A dictionary file for both directions.
    pub dict: Option<PathBuf>,
    /// The reference each input is a patch against (`--patch-from`).
    pub patch_from: Option<PathBuf>,
    /// Write zstd's seekable format (`--seekable`).
    pub seekable: Option<Seekable>,
    /// Decompress only these bytes of a seekable file's data (`--range`).
    pub range: Option<(u64, u64)>,
    /// No notes on stderr.
    pub quiet: bool,
    /// Not even the notes zstd prints under `-q` (its display level 0,
    /// `-qq`).
    pub silent: bool,
    /// No progress bar (`--no-progress`).
    pub no_progress: bool,
    /// A progress bar whatever the input's size (`--progress`).
    pub progress: bool,
    /// Copy a non-zstd input through when decompressing: `Some` as
    /// `--[no-]pass-through` says, `None` for zstd's default (on with `-f`
    /// when the output is stdout).
    pub pass_through: Option<bool>,
    /// Check frames' checksums when decoding (off with `--no-check`).
    pub verify_checksums: bool,
    /// Print the parameters zstd's level picks for each input
    /// (`--show-default-cparams`).
    pub show_cparams: bool,
    /// Files naming more inputs, one a line (`--filelist`).
    pub filelists: Vec<PathBuf>,
    /// One line of sizes, ratio and speed per input on stderr.
    pub verbose: bool,
    /// Where derived output names go (`--output-dir-flat`/`-mirror`).
    pub output_dir: Option<OutputDir>,
}

/// How to train a dictionary.
#[derive(Debug)]
pub struct Train {
    /// The sample files.
    pub samples: Vec<PathBuf>,
    /// The largest dictionary to write, in bytes.
    pub max_size: usize,
    /// Where to write it.
    pub output: PathBuf,
    /// Replace an existing output.
    pub force: bool,
    /// Say what was trained on stderr.
    pub verbose: bool,
    /// Not even zstd's warnings about the samples (`-q`).
    pub quiet: bool,
}

/// Runs what the flags asked for: measure, list, train, or code every
/// input (a failed input is reported and the rest still run; the exit
/// code says whether any failed). A failure that ends the run is one
/// sentence, I/O errors in the operating system's words.
pub fn run(task: Task) -> Result<ExitCode> {
    run_task(task).map_err(|e| {
        if super::is_broken_pipe(&e) {
            e
        } else {
            anyhow::anyhow!("{}", sentence(&e))
        }
    })
}

fn run_task(task: Task) -> Result<ExitCode> {
    let options = match task {
        Task::Levels { levels, report } => return bench::levels(&levels, &report),
        Task::List { files, verbose } => return frames::list(&files, verbose),
        Task::Train(t) => return train(&t),
        Task::Code(o) => *o,
    };
    // Both held whole, so read only as regular files within zstd's
    // limits (a device or FIFO would be read until memory runs out).
    let dict = match &options.dict {
        Some(p) => Some(read_whole(
            "-D",
            p,
            zstdkit::dict::MAX_READ_SIZE,
            "the largest dictionary zstd reads (32M)",
        )?),
        None => None,
    };
    let reference = match &options.patch_from {
        Some(p) => Some(read_whole(
            "--patch-from",
            p,
            zstdkit::patch::MAX_SIZE,
            "the largest reference a patch takes (zstd's largest window)",
        )?),
        None => None,
    };
    if let Some(range) = options.range {
        return range::ranged(&options, range);
    }
    let files = match inputs(&options) {
        Ok(files) => files,
        Err(line) => {
            let _ = writeln!(io::stderr(), "perfkit: {line}");
            return Ok(ExitCode::FAILURE);
        }
    };
    if let Some(line) = console_refusal(&options, &files) {
        let _ = writeln!(io::stderr(), "perfkit: {line}");
        return Ok(ExitCode::FAILURE);
    }
    if let (Mode::Compress, Some(reference), false) =
        (options.mode, &options.patch_from, options.silent)
    {
        patch_notes(reference, &files, options.params);
    }
    if options.show_cparams && options.mode == Mode::Compress {
        show_cparams(&files, options.params, dict.as_deref());
    }
    code(options, &files, dict.as_deref(), reference.as_deref())
}

/// Zstd's refusals of a terminal (a line to say), as zstd makes them:
/// stdin as an input when it is a console (waiting on one looks like a
/// hang), and compressed data to a console stdout unless `-c` or `-f` ask
/// for it (its manual: "even if it is the console"); stdin to stdout by
/// default, or `-o -`, is refused.
fn console_refusal(options: &Options, files: &[PathBuf]) -> Option<&'static str> {
    if files.iter().any(|f| f == Path::new("-")) && io::stdin().is_terminal() {
        return Some("stdin is a console, aborting");
    }
    let to_stdout = options
        .output
        .as_deref()
        .is_none_or(|o| o == Path::new("-"));
    let refused = options.mode == Mode::Compress
        && files.first().is_some_and(|f| f == Path::new("-"))
        && to_stdout
        && !options.stdout
        && !options.force
        && io::stdout().is_terminal();
    refused.then_some("stdout is a console, aborting")
}

/// Codes every input of `files` (found and checked) with the dictionary
/// and patch reference read: outputs planned first, each input coded and
/// its line said, a failed one reported and the rest still run; then the
/// joined `-o` file kept only if all went in, `--rm`, and the totals.
fn code(
    options: Options,
    files: &[PathBuf],
    dict: Option<&[u8]>,
    reference: Option<&[u8]>,
) -> Result<ExitCode> {
    let Some((options, joined)) = join_outputs(options, files)? else {
        return Ok(ExitCode::FAILURE);
    };
    let mut coder = Coder {
        stdin_is_input: files.iter().any(|f| f == Path::new("-")),
        passed_through: Default::default(),
        options: &options,
        dict,
        reference,
        joined: joined.map(RefCell::new),
        plan: None,
        ledger: RefCell::new(Ledger::new(files.len())),
    };
    // Every output is planned before any is written: two inputs bound
    // for one file are known (and warned of, as zstd warns) up front.
    let plan = outputs::plan(files, |f| coder.sink_for(f));
    if !options.quiet {
        for line in plan.warnings() {
            let _ = writeln!(io::stderr(), "{line}");
        }
    }
    coder.plan = Some(plan);
    let mut failed = false;
    // zstd's lines: each input's when there is one (or with -v), the
    // totals when there are several; never for what went to stdout.
    let several = files.len() > 1;
    let (mut done, mut read, mut written) = (0usize, 0u64, 0u64);
    for (i, file) in files.iter().enumerate() {
        match coder.one(i, file) {
            Ok(Done {
                read: r,
                written: w,
                output,
                passed_through,
            }) => {
                let Some(output) = output else { continue };
                done += 1;
                read += r;
                written += w;
                // zstd says nothing of an input it copied through.
                if options.quiet || (several && !options.verbose) || passed_through {
                    continue;
                }
                let name = summary::name(file);
                let line = match options.mode {
                    Mode::Compress => summary::compressed(&name, r, w, &output),
                    Mode::Decompress | Mode::Test => summary::decompressed(&name, w),
                };
                let _ = writeln!(io::stderr(), "{line}");
            }
            Err(err) => {
                if super::is_broken_pipe(&err) {
                    return Ok(ExitCode::from(super::EXIT_BROKEN_PIPE));
                }
                // What was said already (the prompt's answer, zstd's
                // words for a missing input) is not said again.
                if let Some(said) = err.downcast_ref::<Said>() {
                    if !said.0.is_empty() && !options.silent {
                        let _ = writeln!(io::stderr(), "{}", said.0);
                    }
                } else {
                    let _ = writeln!(
                        io::stderr(),
                        "perfkit: {}: {}",
                        display(file),
                        sentence(&err)
                    );
                }
                failed = true;
            }
        }
    }
    if let Some(out) = coder.joined {
        // One input that failed would leave a frame cut short among whole
        // ones: the joined file is kept only when every input is in it.
        let path = options.output.as_deref().unwrap_or(Path::new("-"));
        if failed {
            let _ = writeln!(
                io::stderr(),
                "perfkit: {}: not written: an input failed",
                path.display()
            );
        } else {
            out.into_inner()
                .commit()
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    // `--rm` last: only inputs whose output still holds their data.
    let plan = coder.plan.take().expect("planned above");
    if coder.ledger.into_inner().finish(&plan, options.quiet) {
        failed = true;
    }
    if several && done > 0 && !options.quiet {
        let line = match options.mode {
            Mode::Compress => summary::compressed_total(done, read, written),
            Mode::Decompress | Mode::Test => summary::decompressed_total(done, written),
        };
        let _ = writeln!(io::stderr(), "{line}");
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Whether decoding into `sink` copies a non-zstd input through: as
/// `--[no-]pass-through` says, else zstd's default, with `-f` when the
/// output is stdout.
fn o_pass(o: &Options, sink: &Sink) -> bool {
    o.pass_through
        .unwrap_or(o.force && matches!(sink, Sink::Stdout))
}

/// A failure already put in its own words, to print as it is (empty:
/// already printed).
#[derive(Debug)]
pub(super) struct Said(pub(super) String);

impl std::fmt::Display for Said {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Said {}

/// `err` and its causes in one line, each I/O error in the operating
/// system's words (`No such file or directory`), never Rust's names for
/// its kinds (`entity not found`) nor its `(os error 2)`.
pub(super) fn sentence(err: &anyhow::Error) -> String {
    if !err.chain().any(|c| as_io(c).is_some()) {
        return super::one_line(err);
    }
    let mut line = String::new();
    for cause in err.chain() {
        let text = match as_io(cause) {
            Some(e) => os_words(e),
            None => cause.to_string(),
        };
        if line.ends_with(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// The I/O error `cause` is, or shows as its own text (zstdkit's
/// transparent `Error::Io`).
fn as_io<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a io::Error> {
    match cause.downcast_ref::<zstdkit::Error>() {
        Some(zstdkit::Error::Io(e)) => Some(e),
        _ => cause.downcast_ref::<io::Error>(),
    }
}

/// A file read whole that could not be, in the operating system's words.
fn whole_file_words(e: &zstdkit::whole::WholeFileError) -> String {
    use zstdkit::whole::WholeFileError;
    match e {
        WholeFileError::Open(io) => os_words(io),
        WholeFileError::Read(io) => format!("reading: {}", os_words(io)),
        other => other.to_string(),
    }
}

pub(super) use perfkit_report::os_words;

/// zstd's `--show-default-cparams` lines for each input, on stderr
/// ([`zstdkit::tuning::LevelParams::shown_for`]).
fn show_cparams(files: &[PathBuf], params: Params, dict: Option<&[u8]>) {
    let mut err = io::stderr();
    for f in files {
        let dict_size = dict.map_or(0, |d| d.len() as u64);
        let level = params.compression_level();
        for line in zstdkit::tuning::LevelParams::shown_for(f, level, dict_size) {
            let _ = writeln!(err, "{line}");
        }
    }
}

/// zstd's notes on a patch, printed before any input is read and under
/// `-q` too, as zstd 1.5.4 prints them: from the reference's size and the
/// largest input's (zstd plans every patch of a run for that one). Inputs
/// of unknown size (stdin, which zstd refuses without `--stream-size`)
/// get none; each patch is still planned from its own size when read.
fn patch_notes(reference: &Path, files: &[PathBuf], params: zstdkit::Params) {
    let size = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len())
    };
    let (Some(reference), Some(largest)) = (
        size(reference),
        files
            .iter()
            .filter(|f| *f != Path::new("-"))
            .filter_map(|f| size(f))
            .max(),
    ) else {
        return;
    };
    let plan = zstdkit::patch::plan(reference, largest, params.compression_level());
    let mut err = io::stderr();
    for note in plan.notes(params.long_distance()) {
        let _ = writeln!(err, "{note}");
    }
}

/// The inputs to process, found as zstd finds them
/// ([`zstdkit::job::inputs::expand`]: `-r`, `--filelist`,
/// `--exclude-compressed` when compressing), zstd's warning said for each
/// symbolic link skipped unless `-q`; or the line saying why a
/// `--filelist` could not be read.
fn inputs(options: &Options) -> Result<Vec<PathBuf>, String> {
    use zstdkit::job::inputs::{FilelistError, expand};
    use zstdkit::whole::WholeFileError;
    let found = expand(
        &options.files,
        &options.filelists,
        options.recursive,
        options.exclude_compressed && options.mode == Mode::Compress,
    )
    .map_err(|FilelistError { path, source: e }| {
        let name = path.display();
        match e {
            WholeFileError::NotRegular { .. } => {
                format!("--filelist {name}: {e}; only a regular file is read")
            }
            WholeFileError::TooLarge { .. } => format!("--filelist {name}: {e}, 128M at most"),
            e => format!("--filelist {name}: {}", whole_file_words(&e)),
        }
    })?;
    if !options.quiet {
        for link in &found.links {
            let _ = writeln!(
                io::stderr(),
                "Warning : {} is a symbolic link, ignoring",
                link.display()
            );
        }
    }
    Ok(found.files)
}

fn display(p: &Path) -> String {
    if p == Path::new("-") {
        "stdin".into()
    } else {
        p.display().to_string()
    }
}

/// `path` (given to `flag`) read whole, as [`zstdkit::whole::read`] reads
/// it: a regular file of at most `limit` bytes (`limit_is` says what
/// the limit is), or a one-line error naming the file and why.
fn read_whole(flag: &str, path: &Path, limit: u64, limit_is: &str) -> Result<Vec<u8>> {
    use zstdkit::whole::WholeFileError;
    zstdkit::whole::read(path, limit).map_err(|e| {
        let name = path.display();
        match e {
            WholeFileError::NotRegular { .. } => anyhow::anyhow!(
                "{flag} {name}: {e}; it is held in memory whole, so only a regular file is read"
            ),
            WholeFileError::TooLarge { .. } => {
                anyhow::anyhow!("{flag} {name}: {e}, {limit_is}")
            }
            e => anyhow::anyhow!("{flag} {name}: {}", whole_file_words(&e)),
        }
    })
}

/// A refused window gets the flags that would admit it, as zstd's message
/// has ([`zstdkit::Error::window_hint`]).
fn with_hint(err: zstdkit::Error) -> anyhow::Error {
    match err.window_hint() {
        Some(hint) => anyhow::anyhow!("{err}; {hint}"),
        None => err.into(),
    }
}

fn train(t: &Train) -> Result<ExitCode> {
    let mut samples = Vec::with_capacity(t.samples.len());
    // zstd's trainer takes at most 4 GiB - 1 of samples in all.
    let mut room = zstdkit::dict::MAX_SAMPLES_SIZE;
    for f in &t.samples {
        let sample = read_whole(
            "--train sample",
            f,
            room,
            "what is left of the most zstd's trainer takes in all, 4294967295",
        )?;
        room -= sample.len() as u64;
        samples.push(sample);
    }
    // zstd's checks of the samples (zstdkit::dict::check_samples), its
    // warnings said at its default verbosity.
    let mut err = io::stderr();
    let warning = zstdkit::dict::check_samples(&samples, t.max_size).inspect_err(|_| {
        if !t.quiet {
            let _ = write!(err, "{}", zstdkit::dict::TOO_FEW_SAMPLES_WARNING);
        }
    })?;
    if let (Some(warning), false) = (warning, t.quiet) {
        let _ = write!(err, "{warning}");
    }
    let dict = zstdkit::dict::train(&samples, t.max_size)?;
    let out = &t.output;
    landing::write_atomically_with(out, t.force, |f| f.write_all(&dict))
        .with_context(|| format!("writing dictionary {}", out.display()))?;
    if t.verbose {
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
