//! Where each input's output goes: the name zstd derives from the input,
//! `--output-dir-flat`/`-mirror`, several inputs joined into one `-o`
//! file, stdout; the outputs planned and `--rm` settled by
//! [`zstdkit::job::outputs`], its findings said here.

use std::fs::File;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
pub use zstdkit::job::names::OutputDir;
use zstdkit::job::names::{self, Naming};
pub(super) use zstdkit::job::outputs::{Ledger, Sink, plan, same_file};

use super::{Format, Mode, Options};

/// Every input's output, planned before any is written; an input without
/// one fails with the reason when its turn comes.
pub(super) type Plan = zstdkit::job::outputs::Plan<anyhow::Error>;

/// `--rm` at the end of the run, said on stderr.
pub(super) trait Finish {
    /// Removes each input asked for whose output still holds its data
    /// ([`Ledger::settle`]); one whose output a later input replaced
    /// stays, said unless `quiet`. Returns whether a removal (or the sync
    /// before it) failed, said on stderr.
    fn finish(self, plan: &Plan, quiet: bool) -> bool;
}

impl Finish for Ledger {
    fn finish(self, plan: &Plan, quiet: bool) -> bool {
        let settled = self.settle(plan);
        let mut err = io::stderr();
        for (i, h) in settled.kept {
            if !quiet {
                let _ = writeln!(
                    err,
                    "perfkit: {}: kept: its output {} was then overwritten by {}'s",
                    plan.input(i).display(),
                    plan.output(i)
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                    plan.input(h).display()
                );
            }
        }
        let failed = match settled.removed {
            Ok(failed) => failed,
            Err(e) => {
                let _ = writeln!(
                    err,
                    "perfkit: --rm removed no input: the outputs could not be synced to disk: {}",
                    super::os_words(&e)
                );
                return true;
            }
        };
        for (i, e) in &failed {
            let _ = writeln!(
                err,
                "perfkit: {}: removing input after success: {}",
                plan.input(*i).display(),
                super::os_words(e)
            );
        }
        !failed.is_empty()
    }
}

/// The output named from `input` as zstd names it
/// ([`zstdkit::job::names::derived_name`]), or why it cannot be.
pub(super) fn derived_name(input: &Path, mode: Mode, format: Format) -> Result<PathBuf> {
    let naming = match (mode, format) {
        (Mode::Compress, Format::Zstd) => Naming::Zstd,
        (Mode::Compress, Format::Gzip(_)) => Naming::Gzip,
        _ => Naming::Decoded,
    };
    names::derived_name(input, naming).map_err(|e| anyhow::anyhow!("{e}; use -o FILE or -c"))
}

/// Where the output `derived` (named from `input`) goes below `dir`
/// ([`OutputDir::place`]), or why it cannot, naming the flag. Nothing is
/// made here: outputs are planned before any is written ([`plan`]);
/// [`make_parent`] makes the folders when one is.
pub(super) fn place(dir: &OutputDir, input: &Path, derived: PathBuf) -> Result<PathBuf> {
    dir.place(input, derived)
        .map_err(|e| anyhow::anyhow!("--output-dir-mirror {e}"))
}

/// Makes the folders `path` (an output placed by [`OutputDir::place`])
/// needs.
pub(super) fn make_parent(path: &Path) -> Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("creating {}", parent.display()))?;
    }
    Ok(())
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
        } else if inputs.iter().any(|f| f == Path::new("-")) {
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
    // Then, as zstd, the file itself, if it is there.
    let stdin_is_input = inputs.iter().any(|f| f == Path::new("-"));
    let force = options.force
        || match may_overwrite(&path, &options, stdin_is_input) {
            Ok(yes) => yes,
            Err(e) => {
                // A no: said already, or to say as it is; nothing written.
                match e.downcast_ref::<super::Said>() {
                    Some(said) if !said.0.is_empty() && !options.silent => {
                        let _ = writeln!(err, "{}", said.0);
                    }
                    Some(_) => {}
                    None => return Err(e),
                }
                return Ok(None);
            }
        };
    let out = landing::Output::create(&path, force)?;
    Ok(Some((options, Some(out))))
}

/// Whether an existing `path` may be replaced though `-f` was not
/// given, asked as zstd asks: on stderr, the answer read from stdin
/// (`y` or `Y` first is yes; anything else, or the end of input, no,
/// with zstd's `Not overwritten`). Under `-q` no one is asked (zstd's
/// `not overwritten`), nor when stdin is an input. `Ok(false)`: `path`
/// is not there (or is a device, written in place); a no is an error
/// already said.
pub(super) fn may_overwrite(path: &Path, options: &Options, stdin_is_input: bool) -> Result<bool> {
    if landing::is_special_file(path) || path.symlink_metadata().is_err() {
        return Ok(false);
    }
    let name = path.display();
    if options.quiet {
        return Err(
            super::Said(format!("perfkit: {name} already exists; not overwritten  ")).into(),
        );
    }
    let mut err = io::stderr();
    if stdin_is_input {
        let _ = writeln!(
            err,
            "perfkit: {name} already exists; stdin is an input - not proceeding."
        );
        return Err(super::Said(String::new()).into());
    }
    let _ = write!(err, "perfkit: {name} already exists; overwrite (y/n) ? ");
    let _ = err.flush();
    let mut answer = String::new();
    let _ = io::stdin().lock().read_line(&mut answer);
    if answer.starts_with(['y', 'Y']) {
        return Ok(true);
    }
    let _ = write!(err, "Not overwritten  \n \n");
    Err(super::Said(String::new()).into())
}

/// Standard output for the writer thread: its own handle on descriptor 1,
/// written without std's line buffering (which splits a block at its last
/// newline). With descriptor 1 closed, std's stdout, which discards.
pub(super) fn stdout_sink() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(File::from(fd)),
        Err(_) => Box::new(io::stdout()),
    }
}
