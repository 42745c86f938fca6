//! `perfkit compress` / `perfkit decompress`: a zstd-compatible file tool.
//!
//! Every output goes through a temporary sibling renamed on success, so a
//! failure (corrupt input, full disk, broken pipe) never leaves a file that
//! looks complete.
//!
//! The run over the inputs, every format and how it overlaps its I/O, is
//! [`zstdkit::job`]'s ([`zstdkit::job::tool::Run`]: outputs planned and
//! named, each input coded, `--rm`); here are the flags' files read
//! (`-D`, `--patch-from`, `-r`, `--filelist`), `--train`, and what is said
//! and asked on the terminal (`outputs`: the run's console and the joined
//! `-o` file's prompt), with `--range` in `range` and `--list` in `frames`.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use perfkit_report::ReportOptions;

mod args;
mod bench;
mod frames;
mod outputs;
mod range;
mod zstd_argv;

pub use args::{CompressArgs, DecompressArgs};
pub use outputs::OutputDir;
use outputs::{Terminal, join_outputs};
pub use zstd_argv::zstd_level_flags;
pub use zstdkit::job::blockwise::Decoder;
use zstdkit::job::inputs::{HeldWholeError, read_whole};
use zstdkit::job::tool::{Finished, Run};
pub use zstdkit::job::tool::{Format, Mode, Options};

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
    let terminals = (io::stdin().is_terminal(), io::stdout().is_terminal());
    if let Some(line) = options.console_refusal(&files, terminals.0, terminals.1) {
        let _ = writeln!(io::stderr(), "perfkit: {line}");
        return Ok(ExitCode::FAILURE);
    }
    let dict_size = dict.as_ref().map_or(0, |d| d.len() as u64);
    for line in options.preamble(&files, dict_size) {
        let _ = writeln!(io::stderr(), "{line}");
    }
    code(options, &files, dict.as_deref(), reference.as_deref())
}

/// Codes every input of `files` (found and checked) with the dictionary
/// and patch reference read ([`Run::code`]): a failed input is reported
/// and the rest still run; a broken pipe ends the run quietly.
fn code(
    options: Options,
    files: &[PathBuf],
    dict: Option<&[u8]>,
    reference: Option<&[u8]>,
) -> Result<ExitCode> {
    let Some((options, joined)) = join_outputs(options, files)? else {
        return Ok(ExitCode::FAILURE);
    };
    let run = Run::new(&options, files, dict, reference, joined);
    let finished = run
        .code(&mut Terminal::new(&options))
        .map_err(outputs::unwrapped)?;
    Ok(match finished {
        Finished::Stopped => ExitCode::from(super::EXIT_BROKEN_PIPE),
        Finished::Done { failed: true } => ExitCode::FAILURE,
        Finished::Done { failed: false } => ExitCode::SUCCESS,
    })
}

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

pub(super) use perfkit_report::os_words;

/// The inputs to process, found as zstd finds them
/// ([`zstdkit::job::inputs::expand`]: `-r`, `--filelist`,
/// `--exclude-compressed` when compressing), zstd's warning said for each
/// symbolic link skipped unless `-q`; or the line saying why a
/// `--filelist` could not be read.
fn inputs(options: &Options) -> Result<Vec<PathBuf>, String> {
    let found = zstdkit::job::inputs::expand(
        &options.files,
        &options.filelists,
        options.recursive,
        options.exclude_compressed && options.mode == Mode::Compress,
    )
    .map_err(|e| sentence(&HeldWholeError::from(e).into()))?;
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
