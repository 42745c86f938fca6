//! What the user sees and answers while [`zstdkit::job::tool::Run`] codes
//! the inputs ([`Terminal`]: stderr, the prompts on stdin, the progress
//! bar, stdout), and several inputs joined into one `-o` file, as zstd
//! asks for it.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
pub use zstdkit::job::names::OutputDir;
use zstdkit::job::tool::{Console, Declined, InputError, input_name};

use super::{Mode, Options, os_words, sentence};

/// The run's console: zstd's lines and the tool's notes on stderr, the
/// overwrite prompt, a progress bar on a terminal, stdout; a failed
/// input's line, unless the reader of stdout went away.
pub(super) struct Terminal<'a> {
    options: &'a Options,
}

impl<'a> Terminal<'a> {
    /// The console for a run of `options`.
    pub(super) fn new(options: &'a Options) -> Self {
        Terminal { options }
    }
}

impl Console for Terminal<'_> {
    fn say(&mut self, line: &str) {
        let _ = writeln!(io::stderr(), "{line}");
    }

    fn note(&mut self, text: &str, cause: Option<&io::Error>) {
        let _ = match cause {
            Some(e) => writeln!(io::stderr(), "perfkit: {text}: {}", os_words(e)),
            None => writeln!(io::stderr(), "perfkit: {text}"),
        };
    }

    fn may_overwrite(&mut self, path: &Path, stdin_is_input: bool) -> Result<(), Declined> {
        may_overwrite(path, self.options, stdin_is_input)
    }

    fn progress(&mut self, path: &Path, size: Option<u64>) -> Box<dyn FnMut(Option<u64>)> {
        // The bar is for inputs over 16 MiB, as the help says, or any
        // with --progress; never with --no-progress.
        let o = self.options;
        let bar = match size {
            _ if o.no_progress => indicatif::ProgressBar::hidden(),
            Some(n) if n > crate::cmd::PROGRESS_FROM || o.progress => {
                crate::cmd::progress(Some(n), false)
            }
            None if o.progress => crate::cmd::progress(None, false),
            _ => indicatif::ProgressBar::hidden(),
        };
        bar.set_message(input_name(path));
        Box::new(move |at| match at {
            Some(n) => bar.set_position(n),
            None => bar.finish_and_clear(),
        })
    }

    fn stdout(&mut self) -> Box<dyn Write + Send> {
        stdout_sink()
    }

    fn failed(&mut self, input: &Path, error: InputError) -> bool {
        let err = unwrapped(error);
        if crate::cmd::is_broken_pipe(&err) {
            return false;
        }
        let _ = writeln!(
            io::stderr(),
            "perfkit: {}: {}",
            input_name(input),
            sentence(&err)
        );
        true
    }
}

/// `error` as the error it holds, so that its causes read (and a broken
/// pipe is found) as they were before the run moved into zstdkit.
pub(super) fn unwrapped(error: InputError) -> anyhow::Error {
    match error {
        InputError::Open(e) => e.into(),
        InputError::NoOutput(e) => e.into(),
        InputError::Refused(e) => e.into(),
        InputError::Land(e) => e.into(),
        InputError::Codec(e) => e.into(),
        InputError::Job(e) => e.into(),
        InputError::Blocks(e) => e.into(),
        e => e.into(),
    }
}

/// With `-o FILE` and several inputs, as zstd: every output goes into
/// FILE, one after the other (zstd's warning says so, unless `-q`), and
/// `--rm` removes nothing. Without `-f` a file output needs a yes, as
/// zstd asks ("Proceed? (y/n): "; under `-q`, or with stdin among the
/// inputs, the answer is no). Returns the options to code with and FILE,
/// created (`None` with one input, `-o -`, or `-t`); `None` when the
/// answer was no.
pub(super) fn join_outputs(
    mut options: Options,
    inputs: &[PathBuf],
) -> Result<Option<(Options, Option<landing::Output>)>> {
    let Some(path) = options.output.clone().filter(|_| inputs.len() > 1) else {
        return Ok(Some((options, None)));
    };
    if options.mode == Mode::Test {
        return Ok(Some((options, None)));
    }
    let mut err = io::stderr();
    if !options.quiet {
        let _ = writeln!(
            err,
            "perfkit: WARNING: all input files will be processed and concatenated into a \
             single output file: {}\nThe concatenated output CANNOT regenerate original file \
             names nor directory structure.{}",
            path.display(),
            if options.remove_input {
                "\nSince it's a destructive operation, input files will not be removed."
            } else {
                ""
            }
        );
    }
    options.remove_input = false;
    if path == Path::new("-") {
        return Ok(Some((options, None)));
    }
    let stdin_is_input = inputs.iter().any(|f| f == Path::new("-"));
    if !options.force {
        let yes = if options.quiet {
            if !options.silent {
                let _ = writeln!(
                    err,
                    "Concatenating multiple processed inputs into a single output loses file \
                     metadata.\nAborting."
                );
            }
            false
        } else if stdin_is_input {
            let _ = writeln!(err, "Proceed? (y/n): stdin is an input - not proceeding.");
            false
        } else {
            let _ = write!(err, "Proceed? (y/n): ");
            let mut answer = String::new();
            let _ = io::stdin().read_line(&mut answer);
            let yes = answer.starts_with(['y', 'Y']);
            if !yes {
                let _ = writeln!(err, "Aborting...");
            }
            yes
        };
        if !yes {
            return Ok(None);
        }
    }
    // Then, as zstd, the file itself, if it is there (a device is written
    // in place).
    let there = !landing::is_special_file(&path) && path.symlink_metadata().is_ok();
    let force = options.force || there;
    if there
        && !options.force
        && let Err(Declined(line)) = may_overwrite(&path, &options, stdin_is_input)
    {
        // A no: said already, or to say as it is; nothing written.
        if !line.is_empty() && !options.silent {
            let _ = writeln!(err, "{line}");
        }
        return Ok(None);
    }
    let out = landing::Output::create(&path, force)?;
    Ok(Some((options, Some(out))))
}

/// Whether the existing `path` may be replaced though `-f` was not
/// given, asked as zstd asks: on stderr, the answer read from stdin
/// (`y` or `Y` first is yes; anything else, or the end of input, no,
/// with zstd's `Not overwritten`). Under `-q` no one is asked (zstd's
/// `not overwritten`), nor when stdin is an input. A no is the line to
/// say (empty: said already).
fn may_overwrite(path: &Path, options: &Options, stdin_is_input: bool) -> Result<(), Declined> {
    let name = path.display();
    if options.quiet {
        return Err(Declined(format!(
            "perfkit: {name} already exists; not overwritten  "
        )));
    }
    let mut err = io::stderr();
    if stdin_is_input {
        let _ = writeln!(
            err,
            "perfkit: {name} already exists; stdin is an input - not proceeding."
        );
        return Err(Declined(String::new()));
    }
    let _ = write!(err, "perfkit: {name} already exists; overwrite (y/n) ? ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = io::stdin().lock().read_line(&mut answer);
    if answer.starts_with(['y', 'Y']) {
        return Ok(());
    }
    let _ = write!(err, "Not overwritten  \n \n");
    Err(Declined(String::new()))
}

/// Standard output for the writer thread: its own handle on descriptor 1,
/// written without std's line buffering (which splits a block at its last
/// newline), reserving a regular file's blocks ahead of the writes as a
/// file output does (`landing::Reserving::shared`). With descriptor 1
/// closed, std's stdout, which discards.
fn stdout_sink() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(landing::Reserving::shared(File::from(fd))),
        Err(_) => Box::new(io::stdout()),
    }
}
