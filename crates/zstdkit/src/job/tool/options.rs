//! What a file tool's flags ask of a run, resolved: which way, in which
//! format, where the outputs go, and what is said.

use std::path::{Path, PathBuf};

use super::{Blockwise, Decoder, Naming, OutputDir, Params, Seekable, Sink, SinkError, names};
use crate::job::WindowLimit;
use crate::tuning::LevelParams;

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
#[derive(Debug, Clone)]
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

impl Options {
    /// `files` coded in `mode` as zstd's CLI does without other flags:
    /// zstd frames at level 3 on one thread, outputs named from the
    /// inputs, nothing replaced or removed.
    pub fn new(files: Vec<PathBuf>, mode: Mode) -> Options {
        Options {
            files,
            mode,
            format: Format::Zstd,
            threads: 1,
            recursive: false,
            exclude_compressed: false,
            stdout: false,
            output: None,
            force: false,
            remove_input: false,
            params: Params::for_level(3),
            window: WindowLimit::Default,
            decoder: Decoder::default(),
            dict: None,
            patch_from: None,
            seekable: None,
            range: None,
            quiet: false,
            silent: false,
            no_progress: false,
            progress: false,
            pass_through: None,
            verify_checksums: true,
            show_cparams: false,
            filelists: Vec::new(),
            verbose: false,
            output_dir: None,
        }
    }

    /// Where `input`'s output goes: nowhere with `-t`, `-o` (the
    /// `joined` file when several inputs go into it), stdout, or a name
    /// derived from the input's ([`names::derived_name`]), placed by
    /// `--output-dir-*`; or why it has none.
    pub fn sink_for(&self, input: &Path, joined: bool) -> Result<Sink, SinkError> {
        if self.mode == Mode::Test {
            return Ok(Sink::Discard);
        }
        if let Some(o) = &self.output {
            return Ok(if o == Path::new("-") {
                Sink::Stdout
            } else if joined {
                Sink::Joined(o.clone())
            } else {
                Sink::File(o.clone())
            });
        }
        if self.stdout || input == Path::new("-") {
            return Ok(Sink::Stdout);
        }
        let derived = names::derived_name(input, self.naming()).map_err(SinkError::Name)?;
        Ok(Sink::File(match &self.output_dir {
            Some(dir) => dir.place(input, derived).map_err(SinkError::Place)?,
            None => derived,
        }))
    }

    /// How an output's name is derived from its input's.
    pub fn naming(&self) -> Naming {
        match (self.mode, self.format) {
            (Mode::Compress, Format::Zstd) => Naming::Zstd,
            (Mode::Compress, Format::Gzip(_)) => Naming::Gzip,
            _ => Naming::Decoded,
        }
    }

    /// The decoder `--decoder` asks for, with `-T`, the window limit and
    /// `--no-check`.
    pub fn blockwise(&self) -> Blockwise {
        Blockwise {
            decoder: self.decoder,
            threads: self.threads,
            window: self.window,
            verify_checksums: self.verify_checksums,
        }
    }

    /// zstd's refusals of a terminal, as zstd makes them (the line to
    /// say): stdin as an input when it is a console (waiting on one looks
    /// like a hang), and compressed data to a console stdout unless `-c`
    /// or `-f` ask for it (its manual: "even if it is the console"); stdin
    /// to stdout by default, or `-o -`, is refused. `files`: the inputs
    /// found; the terminals as the caller sees them.
    pub fn console_refusal(
        &self,
        files: &[PathBuf],
        stdin_is_terminal: bool,
        stdout_is_terminal: bool,
    ) -> Option<&'static str> {
        let stdin = Path::new("-");
        if stdin_is_terminal && files.iter().any(|f| f == stdin) {
            return Some("stdin is a console, aborting");
        }
        let to_stdout = self.output.as_deref().is_none_or(|o| o == stdin);
        let refused = self.mode == Mode::Compress
            && files.first().is_some_and(|f| f == stdin)
            && to_stdout
            && !self.stdout
            && !self.force
            && stdout_is_terminal;
        refused.then_some("stdout is a console, aborting")
    }

    /// The lines zstd says before it reads an input, when compressing: a
    /// patch's notes (under `-q` too, not `-qq`), planned from the
    /// reference's size and the largest input's, as zstd 1.5.4 plans every
    /// patch of a run for that one (inputs of unknown size, stdin, get
    /// none; each patch is still planned from its own size when read);
    /// then `--show-default-cparams`' lines for each input, with a
    /// dictionary of `dict_size` bytes ([`LevelParams::shown_for`]).
    pub fn preamble(&self, files: &[PathBuf], dict_size: u64) -> Vec<String> {
        let mut lines = Vec::new();
        if self.mode != Mode::Compress {
            return lines;
        }
        let level = self.params.compression_level();
        let size = |p: &Path| {
            std::fs::metadata(p)
                .ok()
                .filter(|m| m.is_file())
                .map(|m| m.len())
        };
        let inputs = files.iter().filter(|f| *f != Path::new("-"));
        if let (Some(reference), Some(largest), false) = (
            self.patch_from.as_deref().and_then(size),
            inputs.filter_map(|f| size(f)).max(),
            self.silent,
        ) {
            let plan = crate::patch::plan(reference, largest, level);
            let notes = plan.notes(self.params.long_distance());
            lines.extend(notes.into_iter().map(|n| n.to_string()));
        }
        if self.show_cparams {
            for f in files {
                lines.extend(LevelParams::shown_for(f, level, dict_size));
            }
        }
        lines
    }

    /// Whether decoding into `sink` copies a non-zstd input through: as
    /// `--[no-]pass-through` says, else zstd's default, with `-f` when the
    /// output is stdout (`zstdcat -f`, `zstd -df < f`).
    pub fn passes_through(&self, sink: &Sink) -> bool {
        self.pass_through
            .unwrap_or(self.force && matches!(sink, Sink::Stdout))
    }
}
