//! A zstd-like file tool's run over its inputs, as zstd's CLI runs them:
//! the flags resolved ([`Options`]), every output planned before any is
//! written ([`super::outputs`]), each input opened, coded into its output
//! by the decoder asked for ([`super::blockwise`], [`Job::run`]) and its
//! output landed, the failed ones reported and the rest still run; then
//! the joined `-o` file kept only if every input went in, `--rm`
//! ([`Ledger`]), and the totals.
//!
//! What the user sees and answers goes through the caller's [`Console`]:
//! zstd's lines, the tool's own notes, the overwrite prompt, a progress
//! bar, standard output and each failure, which the caller words; this
//! module prints nothing itself.
//!
//! ```
//! use std::path::{Path, PathBuf};
//! use zstdkit::job::tool::{Console, Declined, Finished, InputError, Mode, Options, Run};
//!
//! /// Says nothing, answers no, keeps the failures.
//! #[derive(Default)]
//! struct Quiet(Vec<String>);
//!
//! impl Console for Quiet {
//!     fn say(&mut self, _: &str) {}
//!     fn note(&mut self, _: &str, _: Option<&std::io::Error>) {}
//!     fn may_overwrite(&mut self, _: &Path, _: bool) -> Result<(), Declined> {
//!         Err(Declined(String::new()))
//!     }
//!     fn progress(&mut self, _: &Path, _: Option<u64>) -> Box<dyn FnMut(Option<u64>)> {
//!         Box::new(|_| {})
//!     }
//!     fn stdout(&mut self) -> Box<dyn std::io::Write + Send> {
//!         Box::new(std::io::sink())
//!     }
//!     fn failed(&mut self, input: &Path, error: InputError) -> bool {
//!         self.0.push(format!("{}: {error}", input.display()));
//!         true
//!     }
//! }
//!
//! let dir = std::env::temp_dir().join(format!("zstdkit-tool-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let input = dir.join("a.txt");
//! std::fs::write(&input, b"a line of text\n".repeat(100))?;
//! let files = [input.clone(), dir.join("missing")];
//! let options = Options::new(files.to_vec(), Mode::Compress);
//! let mut console = Quiet::default();
//! let finished = Run::new(&options, &files, None, None, None).code(&mut console)?;
//! assert_eq!(finished, Finished::Done { failed: true });
//! assert_eq!(console.0.len(), 1, "the missing input failed, the other was coded");
//! let frame = std::fs::read(dir.join("a.txt.zst"))?;
//! assert_eq!(zstdkit::decompress(&frame)?, b"a line of text\n".repeat(100));
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::blockwise::{BlockInput, Blockwise, BlockwiseError, Decoder, Route};
use super::inputs::{OpenError, Opened};
use super::names::{self, ClimbsOut, Naming, OutputDir, UnknownSuffix};
use super::outputs::{Ledger, Plan, Refusal, Sink, same_file};
use super::settings::{Direction, Settings};
use super::{Job, JobError, Seekable, summary};
use crate::recipe::Params;

mod options;

pub use options::{Format, Mode, Options};

/// What the user sees and answers, for a [`Run`]: a file tool's stderr,
/// stdin's answers, its progress bar and its standard output.
pub trait Console {
    /// One of zstd's lines, said as it is (a summary, a warning).
    fn say(&mut self, line: &str);
    /// One of the tool's own notes, about `text` and, if given, the
    /// system error `cause` (the caller names the tool and words the
    /// error).
    fn note(&mut self, text: &str, cause: Option<&io::Error>);
    /// Whether `path`, which is there, may be replaced though `-f` was
    /// not given (zstd's prompt); `stdin_is_input`: stdin is one of the
    /// inputs, so no answer can be read from it. A no is [`Declined`].
    fn may_overwrite(&mut self, path: &Path, stdin_is_input: bool) -> Result<(), Declined>;
    /// The progress of the input `path` of `size` bytes (if known):
    /// called with the input's bytes done now and then, and `None` once
    /// it is coded (an input that failed drops it without `None`).
    fn progress(&mut self, path: &Path, size: Option<u64>) -> Box<dyn FnMut(Option<u64>)>;
    /// Standard output, for an input whose output goes there.
    fn stdout(&mut self) -> Box<dyn Write + Send>;
    /// Input `input` failed with `error` (the rest still run); returns
    /// whether to go on (false: the run stops at once, as when the reader
    /// of standard output went away).
    fn failed(&mut self, input: &Path, error: InputError) -> bool;
}

/// A no to the overwrite prompt: the line to say (empty: already said).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined(pub String);

/// Why one input has no output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinkError {
    /// No name can be derived from the input's.
    #[error("{0}; use -o FILE or -c")]
    Name(UnknownSuffix),
    /// `--output-dir-mirror` would place the output outside its folder.
    #[error("--output-dir-mirror {0}")]
    Place(ClimbsOut),
}

/// Why one input failed.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// It could not be opened.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// It has no output.
    #[error(transparent)]
    NoOutput(SinkError),
    /// Its output may not be written ([`Ledger::may_write`]).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// Its output is the input itself.
    #[error("input and output are the same file")]
    SameFile,
    /// The output's file could not be opened again for the writer.
    #[error("opening {}", path.display())]
    Reopen {
        /// The output.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A folder `--output-dir-mirror` places the output in could not be
    /// made.
    #[error("creating {}", path.display())]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The user declined to replace the output: the line to say (empty:
    /// said already).
    #[error("{}", (.0).0)]
    Declined(Declined),
    /// The output file could not be created.
    #[error(transparent)]
    Land(#[from] landing::OutputError),
    /// The output file could not be put in place.
    #[error("writing {}", path.display())]
    Commit {
        /// The output.
        path: PathBuf,
        /// Why.
        #[source]
        source: landing::OutputError,
    },
    /// Writing the output failed (not a broken pipe, which is
    /// [`InputError::Job`]); `to` names it: its path, `to standard
    /// output`, or `output`.
    #[error("writing {to}")]
    Write {
        /// The output, as the message names it.
        to: String,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// A window over the limit, with the flags that admit it
    /// ([`crate::Error::window_hint`]).
    #[error("{error}; {hint}")]
    Window {
        /// zstd's refusal.
        error: crate::Error,
        /// The flags.
        hint: String,
    },
    /// zstd refused the parameters or the data.
    #[error(transparent)]
    Codec(crate::Error),
    /// A patch did not decode against the reference given.
    #[error("is {} the file this patch was made from?", reference.display())]
    Patch {
        /// The reference's path.
        reference: PathBuf,
        /// Why.
        #[source]
        source: crate::Error,
    },
    /// The job failed otherwise.
    #[error(transparent)]
    Job(JobError),
    /// The block decoder refused the input, and libzstd would too.
    #[error(transparent)]
    Blocks(zstdblock::Error),
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// Every input was tried; `failed`: one or more failed (or `--rm`
    /// could not remove one).
    Done {
        /// Whether any failed.
        failed: bool,
    },
    /// [`Console::failed`] stopped the run: nothing more was written or
    /// removed, and the joined file, if any, was not kept.
    Stopped,
}

/// One input coded: bytes read and written, where they went (`None`:
/// stdout, which zstd's lines leave out), whether it was copied through.
struct Done {
    read: u64,
    written: u64,
    output: Option<String>,
    passed_through: bool,
}

/// A run over its inputs: the options, the dictionary and the patch's
/// reference read once, every output planned.
pub struct Run<'a> {
    options: &'a Options,
    dictionary: Option<&'a [u8]>,
    reference: Option<&'a [u8]>,
    files: &'a [PathBuf],
    /// Stdin is one of the inputs: the prompt cannot read an answer.
    stdin_is_input: bool,
    /// `-o FILE` with several inputs: the one file they all go into.
    joined: Option<landing::Output>,
    plan: Plan<SinkError>,
    /// The outputs committed so far, and the inputs `--rm` removes.
    ledger: Ledger,
}

impl<'a> Run<'a> {
    /// A run of `options` over `files` (found and checked), with the
    /// `dictionary` and the patch's `reference` read, and `joined`, the
    /// file every output goes into when `-o FILE` names one for several
    /// inputs. Every output is planned here, before any is written: two
    /// inputs bound for one file are known up front.
    pub fn new(
        options: &'a Options,
        files: &'a [PathBuf],
        dictionary: Option<&'a [u8]>,
        reference: Option<&'a [u8]>,
        joined: Option<landing::Output>,
    ) -> Run<'a> {
        let joins = joined.is_some();
        Run {
            options,
            dictionary,
            reference,
            files,
            stdin_is_input: files.iter().any(|f| f == Path::new("-")),
            joined,
            plan: super::outputs::plan(files, |f| options.sink_for(f, joins)),
            ledger: Ledger::new(files.len()),
        }
    }

    /// Codes every input, saying zstd's lines as it goes; a failed input
    /// is handed to [`Console::failed`] and the rest still run. Then the
    /// joined file is kept if every input went into it (else said), the
    /// inputs `--rm` asked for are removed, and the totals said. An error
    /// is the joined file's, which could not be put in place.
    pub fn code(mut self, console: &mut dyn Console) -> Result<Finished, InputError> {
        let o = self.options;
        if !o.quiet {
            for line in self.plan.warnings() {
                console.say(&line);
            }
        }
        let mut failed = false;
        // zstd's lines: each input's when there is one (or with -v), the
        // totals when there are several; never for what went to stdout.
        let several = self.files.len() > 1;
        let (mut done, mut read, mut written) = (0usize, 0u64, 0u64);
        for (i, file) in self.files.iter().enumerate() {
            match self.one(i, file, console) {
                Ok(d) => {
                    let Some(output) = d.output else { continue };
                    done += 1;
                    read += d.read;
                    written += d.written;
                    // zstd says nothing of an input it copied through.
                    if o.quiet || (several && !o.verbose) || d.passed_through {
                        continue;
                    }
                    let name = summary::name(file);
                    console.say(&match o.mode {
                        Mode::Compress => summary::compressed(&name, d.read, d.written, &output),
                        Mode::Decompress | Mode::Test => summary::decompressed(&name, d.written),
                    });
                }
                // What was said already (the prompt's answer) is not said
                // again.
                Err(InputError::Declined(Declined(line))) => {
                    if !line.is_empty() && !o.silent {
                        console.say(&line);
                    }
                    failed = true;
                }
                Err(e) => {
                    if !console.failed(file, e) {
                        return Ok(Finished::Stopped);
                    }
                    failed = true;
                }
            }
        }
        if let Some(out) = self.joined.take() {
            // One input that failed would leave a frame cut short among
            // whole ones: the joined file is kept only when all are in it.
            let path = o.output.clone().unwrap_or_else(|| PathBuf::from("-"));
            if failed {
                let text = format!("{}: not written: an input failed", path.display());
                console.note(&text, None);
            } else {
                out.commit()
                    .map_err(|source| InputError::Commit { path, source })?;
            }
        }
        // `--rm` last: only inputs whose output still holds their data.
        failed |= self.remove_inputs(console);
        if several && done > 0 && !o.quiet {
            console.say(&match o.mode {
                Mode::Compress => summary::compressed_total(done, read, written),
                Mode::Decompress | Mode::Test => summary::decompressed_total(done, written),
            });
        }
        Ok(Finished::Done { failed })
    }

    /// `--rm` at the end of the run: removes each input asked for whose
    /// output still holds its data ([`Ledger::settle`]); one whose output
    /// a later input replaced stays, said unless `quiet`. Returns whether
    /// a removal (or the sync before it) failed, said.
    fn remove_inputs(&mut self, console: &mut dyn Console) -> bool {
        let ledger = std::mem::replace(&mut self.ledger, Ledger::new(0));
        let plan = &self.plan;
        let settled = ledger.settle(plan);
        for (i, h) in settled.kept {
            if !self.options.quiet {
                let output = plan.output(i).map(|p| p.display().to_string());
                let text = format!(
                    "{}: kept: its output {} was then overwritten by {}'s",
                    plan.input(i).display(),
                    output.unwrap_or_default(),
                    plan.input(h).display()
                );
                console.note(&text, None);
            }
        }
        let failed = match settled.removed {
            Ok(failed) => failed,
            Err(e) => {
                let text = "--rm removed no input: the outputs could not be synced to disk";
                console.note(text, Some(&e));
                return true;
            }
        };
        for (i, e) in &failed {
            let text = format!("{}: removing input after success", plan.input(*i).display());
            console.note(&text, Some(e));
        }
        !failed.is_empty()
    }

    /// Codes input `i` (`input`) into its planned output.
    fn one(
        &mut self,
        i: usize,
        input: &Path,
        console: &mut dyn Console,
    ) -> Result<Done, InputError> {
        let o = self.options;
        let from_stdin = input == Path::new("-");
        // A device or directory gives no name to derive an output from
        // (zstd: "is not a regular file -- ignored"), but with -c or -o it
        // is read like a pipe; FIFOs are accepted either way, as zstd does.
        let derives_name = !from_stdin && o.output.is_none() && !o.stdout && o.mode != Mode::Test;
        // A second handle only for a decoder that maps it.
        let handle = o.mode != Mode::Compress && o.blockwise().maps_files();
        let opened = super::inputs::open(input, derives_name, handle)?;
        let sink = match &self.plan.sinks[i] {
            Ok(sink) => sink.clone(),
            Err(e) => return Err(InputError::NoOutput(e.clone())),
        };
        if let Sink::File(path) = &sink {
            self.ledger.may_write(&self.plan, i, path, o.force)?;
        }
        let start = Instant::now();
        let mut progress = console.progress(input, opened.size);
        let regular = opened.regular;
        let (outcome, wrote_file) =
            self.code_to(i, input, &sink, opened, console, &mut *progress)?;
        progress(None);
        if o.verbose {
            let (plain, packed) = match o.mode {
                Mode::Compress => (outcome.read, outcome.written),
                Mode::Decompress | Mode::Test => (outcome.written, outcome.read),
            };
            let name = input_name(input);
            console.say(&summary::verbose(&name, plain, packed, start.elapsed()));
        }
        if o.remove_input && !from_stdin {
            self.remove_input(i, input, regular, wrote_file, &sink, console);
        }
        Ok(Done {
            passed_through: outcome.passed_through,
            read: outcome.read,
            written: outcome.written,
            output: match &sink {
                Sink::Stdout => None,
                Sink::Discard => Some(String::new()),
                Sink::File(p) | Sink::Joined(p) => Some(p.display().to_string()),
            },
        })
    }

    /// Codes `opened` (input `i`, `input`) into `sink`: nowhere, stdout,
    /// the joined file, or a file of its own landed whole (given the
    /// input's mode and times) and counted in the ledger. Returns what the
    /// coding did and whether a regular file now holds the output, the
    /// only case in which `--rm` may delete the input.
    fn code_to(
        &mut self,
        i: usize,
        input: &Path,
        sink: &Sink,
        opened: Opened,
        console: &mut dyn Console,
        progress: &mut dyn FnMut(Option<u64>),
    ) -> Result<(Coded, bool), InputError> {
        let from_stdin = input == Path::new("-");
        let refuse_same = |path: &Path| {
            let same = !from_stdin && !landing::is_special_file(path) && same_file(input, path);
            if same {
                Err(InputError::SameFile)
            } else {
                Ok(())
            }
        };
        let reopen = |out: &mut landing::Output, path: &Path| {
            // The writer thread writes through its own handle on the same
            // open file; `out` still owns the file's fate (renamed on
            // commit, removed on drop). It reserves the file's blocks ahead
            // of the writes (a long output takes less CPU to write) and
            // releases the rest when the coding drops it, before the stamp.
            let handle = out.writer();
            handle.map_err(|source| InputError::Reopen {
                path: path.to_owned(),
                source,
            })
        };
        let Opened {
            reader,
            size,
            meta,
            regular,
            file,
        } = opened;
        let coding = Coding {
            name: input,
            sink,
            reader,
            size,
            file,
            progress,
        };
        match sink {
            Sink::Discard => Ok((self.transform(coding, None, console)?, false)),
            Sink::Stdout => {
                let out = console.stdout();
                Ok((self.transform(coding, Some(out), console)?, false))
            }
            Sink::Joined(path) => {
                refuse_same(path)?;
                let joined = self.joined.as_mut().expect("a joined sink has its file");
                let handle = reopen(joined, path)?;
                Ok((
                    self.transform(coding, Some(Box::new(handle)), console)?,
                    false,
                ))
            }
            Sink::File(path) => {
                refuse_same(path)?;
                let o = self.options;
                if o.output_dir.is_some() {
                    make_parent(path)?;
                }
                let force = o.force || self.may_overwrite(path, console)?;
                let mut out = landing::Output::create(path, force)?;
                let handle = reopen(&mut out, path)?;
                let coded = self.transform(coding, Some(Box::new(handle)), console)?;
                let in_place = out.is_in_place();
                if let (Some(m), false) = (&meta, in_place) {
                    super::outputs::copy_stat(out.file_mut(), m, regular);
                }
                // Not synced here: `--rm` syncs every output it relies on
                // at the end of the run, at once (`Ledger::settle`).
                out.commit().map_err(|source| InputError::Commit {
                    path: path.clone(),
                    source,
                })?;
                self.ledger.committed(&self.plan, i);
                Ok((coded, !in_place))
            }
        }
    }

    /// Whether an existing `path` may be replaced though `-f` was not
    /// given: `false` when it is not there (or is a device, written in
    /// place), else the user's answer ([`Console::may_overwrite`]).
    fn may_overwrite(&self, path: &Path, console: &mut dyn Console) -> Result<bool, InputError> {
        if landing::is_special_file(path) || path.symlink_metadata().is_err() {
            return Ok(false);
        }
        console
            .may_overwrite(path, self.stdin_is_input)
            .map_err(InputError::Declined)?;
        Ok(true)
    }

    /// `--rm` after input `i` was coded into `sink`: the input goes only
    /// when it is a regular file and `wrote_file` (the output is a
    /// regular file that now holds the data), and only at the end of the
    /// run, if no later input replaced that output ([`Ledger`]); what
    /// stays now is said, unless `-q`.
    fn remove_input(
        &mut self,
        i: usize,
        input: &Path,
        regular: bool,
        wrote_file: bool,
        sink: &Sink,
        console: &mut dyn Console,
    ) {
        let name = input_name(input);
        if regular && wrote_file {
            self.ledger.remove_later(i);
        } else if self.options.quiet {
        } else if !regular {
            // Deleting a device node or FIFO would break whatever else
            // uses it (as root, `--rm /dev/null` removed /dev/null).
            let text = format!("{name}: kept: --rm refuses to remove a non-regular file");
            console.note(&text, None);
        } else if matches!(sink, Sink::File(_)) {
            // A device or FIFO (`-o /dev/null`) keeps nothing: the input
            // stays, as it does with stdout.
            let text =
                format!("{name}: kept: --rm removes an input only after writing a regular file");
            console.note(&text, None);
        }
    }

    /// Codes the input into `out` (`None`: decode and discard, for `-t`)
    /// through [`Job::run`], which overlaps the reading, the coding and the
    /// writing, or through perfkit's block decoder when the decoder asked
    /// for takes the input ([`Blockwise::route`]).
    fn transform(
        &self,
        coding: Coding<'_>,
        out: Option<Box<dyn Write + Send>>,
        console: &mut dyn Console,
    ) -> Result<Coded, InputError> {
        let o = self.options;
        let Coding {
            name,
            sink,
            reader,
            size,
            file,
            progress,
        } = coding;
        // Compressing and patches are libzstd's; decoding, the flags say.
        let route = if o.mode == Mode::Compress || self.reference.is_some() {
            Route::Libzstd {
                input: reader,
                note: None,
                one_thread: false,
            }
        } else {
            o.blockwise()
                .route(self.dictionary.is_some(), reader, size, file, sink.piped())
                .map_err(|e| self.job_error(JobError::Input(e), sink))?
        };
        let (input, threads) = match route {
            Route::Blocks { input } => {
                return self.blocks(name, sink, input, out, progress, console);
            }
            Route::Libzstd {
                input,
                note,
                one_thread,
            } => {
                if let (Some(note), true) = (note, o.verbose) {
                    console.note(&format!("{}: {note}", input_name(name)), None);
                }
                (input, if one_thread { 1 } else { o.threads })
            }
        };
        let done = self
            .job(o.passes_through(sink), threads)
            .run(input, size, out, &mut |at| progress(Some(at)))
            .map_err(|e| self.job_error(e, sink))?;
        if let (Some(p), true) = (done.parallel, o.verbose) {
            console.say(&format!(
                "{} frames decoded on {} threads, {} of them in order on one (too large to hold, or first from a pipe)",
                p.frames, o.threads, p.streamed
            ));
        }
        Ok(Coded {
            read: done.read,
            written: done.written,
            passed_through: done.passed_through,
        })
    }

    /// Decodes `input` with perfkit's block decoder on the threads `-T`
    /// asks for into `out` (`None`: discarded), libzstd deciding what it
    /// refuses ([`Blockwise::decode`]; a streamed input read again from
    /// its file); says which decoder did it with `-v`.
    fn blocks(
        &self,
        name: &Path,
        sink: &Sink,
        input: BlockInput,
        out: Option<Box<dyn Write + Send>>,
        progress: &mut dyn FnMut(Option<u64>),
        console: &mut dyn Console,
    ) -> Result<Coded, InputError> {
        let verbose = self.options.verbose;
        let (read, written) = self
            .options
            .blockwise()
            .decode(
                input,
                out,
                &mut || Ok(Box::new(File::open(name)?) as Box<dyn Read + Send>),
                &mut |at| progress(Some(at)),
                &mut |note| {
                    if verbose {
                        console.note(&format!("{}: {note}", input_name(name)), None);
                    }
                },
            )
            .map_err(|e| match e {
                BlockwiseError::Job(e) => self.job_error(e, sink),
                BlockwiseError::Blocks(e) => InputError::Blocks(e),
            })?;
        Ok(Coded {
            read,
            written,
            passed_through: false,
        })
    }

    /// What the options ask of each input, in zstdkit's terms
    /// ([`Settings::job`]); `pass_through`: a non-zstd input is copied
    /// when decoding; `threads`: `-T`'s, or fewer where the route says.
    fn job(&self, pass_through: bool, threads: usize) -> Job<'a> {
        let o = self.options;
        let direction = match o.mode {
            Mode::Compress => Direction::Compress {
                gzip: match o.format {
                    Format::Gzip(level) => Some(level),
                    Format::Zstd => None,
                },
                seekable: o.seekable,
            },
            Mode::Decompress | Mode::Test => Direction::Decompress,
        };
        Settings {
            direction,
            params: o.params,
            threads,
            window: o.window,
            verify_checksums: o.verify_checksums,
            dictionary: self.dictionary,
            reference: self.reference,
        }
        .job(pass_through)
    }

    /// A job's error in a file tool's words: the side that failed (the
    /// output `sink` named), the flags that admit a refused window, the
    /// reference a patch needs.
    fn job_error(&self, err: JobError, sink: &Sink) -> InputError {
        match (err, &self.options.patch_from) {
            (JobError::Codec(error), _) => match error.window_hint() {
                Some(hint) => InputError::Window { error, hint },
                None => InputError::Codec(error),
            },
            // The output named, as the input is at the line's start (a
            // broken pipe stays itself: it is an exit code, not a line).
            (JobError::Output(source), _) if source.kind() != io::ErrorKind::BrokenPipe => {
                let to = match sink {
                    Sink::File(p) | Sink::Joined(p) => p.display().to_string(),
                    Sink::Stdout => "to standard output".into(),
                    Sink::Discard => "output".into(),
                };
                InputError::Write { to, source }
            }
            (JobError::Patch(source), Some(reference)) => InputError::Patch {
                reference: reference.clone(),
                source,
            },
            (other, _) => InputError::Job(other),
        }
    }
}

/// One input on its way to its sink.
struct Coding<'c> {
    /// The input's path.
    name: &'c Path,
    sink: &'c Sink,
    reader: Box<dyn Read + Send>,
    /// Its size, when a regular file.
    size: Option<u64>,
    /// The regular file `reader` reads, when it is one.
    file: Option<File>,
    progress: &'c mut dyn FnMut(Option<u64>),
}

/// What coding one input did.
struct Coded {
    read: u64,
    written: u64,
    /// It was copied through, not decoded (pass-through).
    passed_through: bool,
}

/// Makes the folders `path` (an output placed by [`OutputDir::place`])
/// needs.
fn make_parent(path: &Path) -> Result<(), InputError> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| InputError::Folder {
            path: parent.to_owned(),
            source,
        })?;
    }
    Ok(())
}

/// An input as the tool's notes name it: `stdin` for `-`.
pub fn input_name(path: &Path) -> String {
    if path == Path::new("-") {
        "stdin".into()
    } else {
        path.display().to_string()
    }
}

#[cfg(test)]
mod tests;
