//! Where each input's output goes: the name zstd derives from the input,
//! `--output-dir-flat`/`-mirror`, several inputs joined into one `-o`
//! file, stdout, and what the output keeps of its input (mode, times).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::{Format, Mode, Options};

/// The output named from `input` as zstd names it: `NAME.zst` (`.gz`)
/// when compressing; the suffix taken off (`.tzst` and `.tgz` become
/// `.tar`) when decoding.
pub(super) fn derived_name(input: &Path, mode: Mode, format: Format) -> Result<PathBuf> {
    let name = input.as_os_str().to_string_lossy();
    Ok(match (mode, format) {
        (Mode::Compress, Format::Zstd) => PathBuf::from(format!("{name}.zst")),
        (Mode::Compress, Format::Gzip(_)) => PathBuf::from(format!("{name}.gz")),
        _ => {
            if let Some(stem) = [".zst", ".zstd", ".gz"]
                .iter()
                .find_map(|s| name.strip_suffix(s))
            {
                PathBuf::from(stem)
            } else if let Some(stem) = name
                .strip_suffix(".tzst")
                .or_else(|| name.strip_suffix(".tgz"))
            {
                PathBuf::from(format!("{stem}.tar"))
            } else {
                bail!("unknown suffix (expected .zst or .gz); use -o FILE or -c")
            }
        }
    })
}

/// A directory for the outputs whose names are derived from their
/// inputs' (`-o` and `-c` win over it, as in zstd).
#[derive(Debug, Clone)]
pub enum OutputDir {
    /// `--output-dir-flat DIR`: `DIR/NAME.zst`, the input's folders
    /// dropped.
    Flat(PathBuf),
    /// `--output-dir-mirror DIR`: `DIR/PATH.zst`, the input's path
    /// (its root dropped) kept below DIR.
    Mirror(PathBuf),
}

impl OutputDir {
    /// Where the output `derived` (named from `input`) goes; the folders
    /// it needs are made. As zstd, a mirrored input whose path climbs
    /// (`..`) has no place below DIR.
    pub(super) fn place(&self, input: &Path, derived: PathBuf) -> Result<PathBuf> {
        let path = match self {
            OutputDir::Flat(dir) => dir.join(derived.file_name().unwrap_or_default()),
            OutputDir::Mirror(dir) => {
                use std::path::Component;
                if input.components().any(|c| c == Component::ParentDir) {
                    bail!(
                        "--output-dir-mirror cannot place it into '{}' (its path goes up, ..)",
                        dir.display()
                    );
                }
                let below: PathBuf = derived
                    .components()
                    .filter(|c| matches!(c, Component::Normal(_)))
                    .collect();
                dir.join(below)
            }
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        Ok(path)
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
) -> Result<Option<(Options, Option<perfkit_report::Output>)>> {
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
    let out = perfkit_report::Output::create(&path, options.force)?;
    Ok(Some((options, Some(out))))
}

/// An input's access and modification times, for its output.
pub(super) fn input_times(m: &std::fs::Metadata) -> std::fs::FileTimes {
    let mut t = std::fs::FileTimes::new();
    if let Ok(a) = m.accessed() {
        t = t.set_accessed(a);
    }
    if let Ok(w) = m.modified() {
        t = t.set_modified(w);
    }
    t
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

pub(super) fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
