//! The coding of each input: [`Coder`] holds the inputs' shared settings
//! (flags, dictionary, patch reference, planned outputs) and takes one input
//! from its source to its sink; a unit of its own beside the run's
//! bookkeeping in the parent module.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use zstdkit::job::JobError;
use zstdkit::job::inputs::Opened;
use zstdkit::job::settings::{Direction, Settings};

use super::outputs::{Ledger, Plan, Sink, same_file, stdout_sink};
use super::{Format, Mode, Options, display, o_pass, os_words, outputs, sentence, with_hint};
use zstdkit::job::blockwise::{Blockwise, BlockwiseError, Route};

/// One input done: bytes read and written, and where they went (`None`:
/// stdout, which zstd's lines leave out).
pub(super) struct Done {
    pub(super) read: u64,
    pub(super) written: u64,
    pub(super) output: Option<String>,
    /// It was copied through, not decoded (pass-through).
    pub(super) passed_through: bool,
}

/// The inputs' shared settings: the flags, and the dictionary and the
/// patch's reference, read once.
pub(super) struct Coder<'a> {
    pub(super) options: &'a Options,
    /// Stdin is one of the inputs: the overwrite prompt cannot read an
    /// answer from it.
    pub(super) stdin_is_input: bool,
    /// The last input coded was copied through, not decoded.
    pub(super) passed_through: std::cell::Cell<bool>,
    pub(super) dict: Option<&'a [u8]>,
    pub(super) reference: Option<&'a [u8]>,
    /// `-o FILE` with several inputs: the one file they all go into.
    pub(super) joined: Option<RefCell<landing::Output>>,
    /// Every input's output, planned before the first is written.
    pub(super) plan: Option<Plan>,
    /// The outputs committed so far, and the inputs `--rm` removes at
    /// the end.
    pub(super) ledger: RefCell<Ledger>,
}

impl Coder<'_> {
    pub(super) fn sink_for(&self, input: &Path) -> Result<Sink> {
        if self.options.mode == Mode::Test {
            return Ok(Sink::Discard);
        }
        if let Some(o) = &self.options.output {
            return Ok(if o == Path::new("-") {
                Sink::Stdout
            } else if self.joined.is_some() {
                Sink::Joined(o.clone())
            } else {
                Sink::File(o.clone())
            });
        }
        if self.options.stdout || input == Path::new("-") {
            return Ok(Sink::Stdout);
        }
        let derived = outputs::derived_name(input, self.options.mode, self.options.format)?;
        Ok(Sink::File(match &self.options.output_dir {
            Some(dir) => outputs::place(dir, input, derived)?,
            None => derived,
        }))
    }

    /// Codes input `i` (`input`) into its planned output.
    pub(super) fn one(&self, i: usize, input: &Path) -> Result<Done> {
        let plan = self.plan.as_ref().expect("outputs are planned first");
        let from_stdin = input == Path::new("-");
        // A device or directory gives no name to derive an output from (zstd:
        // "is not a regular file -- ignored"), but with -c or -o it is read
        // like a pipe; FIFOs are accepted either way, as zstd does.
        let derives_name = !from_stdin
            && self.options.output.is_none()
            && !self.options.stdout
            && self.options.mode != Mode::Test;
        let Opened {
            reader,
            size,
            meta,
            regular,
        } = zstdkit::job::inputs::open(input, derives_name)?;
        let sink = match &plan.sinks[i] {
            Ok(sink) => sink.clone(),
            Err(e) => bail!("{}", sentence(e)),
        };
        if let Sink::File(path) = &sink {
            self.ledger
                .borrow()
                .may_write(plan, i, path, self.options.force)?;
        }
        let start = Instant::now();
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
        bar.set_message(display(input));
        // `wrote_file`: the output is a regular file that now holds the
        // data, the only case in which `--rm` may delete the input.
        let (counts, wrote_file) = match &sink {
            Sink::Discard => (
                self.transform(input, &sink, reader, None, size, &bar)?,
                false,
            ),
            Sink::Stdout => (
                self.transform(input, &sink, reader, Some(stdout_sink()), size, &bar)?,
                false,
            ),
            Sink::Joined(path) => {
                if !from_stdin && !landing::is_special_file(path) && same_file(input, path) {
                    bail!("input and output are the same file");
                }
                let joined = self.joined.as_ref().expect("a joined sink has its file");
                let handle = joined
                    .borrow_mut()
                    .file_mut()
                    .try_clone()
                    .with_context(|| format!("opening {}", path.display()))?;
                (
                    self.transform(input, &sink, reader, Some(Box::new(handle)), size, &bar)?,
                    false,
                )
            }
            Sink::File(path) => {
                if !from_stdin && !landing::is_special_file(path) && same_file(input, path) {
                    bail!("input and output are the same file");
                }
                if self.options.output_dir.is_some() {
                    outputs::make_parent(path)?;
                }
                let force = self.options.force
                    || outputs::may_overwrite(path, self.options, self.stdin_is_input)?;
                let mut out = landing::Output::create(path, force)?;
                // The writer thread writes through its own handle on the
                // same open file; `out` still owns the file's fate
                // (renamed on commit, removed on drop).
                let handle = out
                    .file_mut()
                    .try_clone()
                    .with_context(|| format!("opening {}", path.display()))?;
                let c = self.transform(input, &sink, reader, Some(Box::new(handle)), size, &bar)?;
                let in_place = out.is_in_place();
                if let (Some(m), false) = (&meta, in_place) {
                    zstdkit::job::outputs::copy_stat(out.file_mut(), m, regular);
                }
                // Not synced here: `--rm` syncs every output it relies on
                // at the end of the run, at once (`Ledger::finish`).
                out.commit()
                    .with_context(|| format!("writing {}", path.display()))?;
                self.ledger.borrow_mut().committed(plan, i);
                (c, !in_place)
            }
        };
        bar.finish_and_clear();
        if self.options.verbose {
            let secs = start.elapsed().as_secs_f64();
            let (plain, packed) = if self.options.mode == Mode::Compress {
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
        let done = Done {
            passed_through: self.passed_through.get(),
            read: counts.0,
            written: counts.1,
            output: match &sink {
                Sink::Stdout => None,
                Sink::Discard => Some(String::new()),
                Sink::File(p) | Sink::Joined(p) => Some(p.display().to_string()),
            },
        };
        if self.options.remove_input && !from_stdin {
            self.remove_input(i, input, regular, wrote_file, &sink);
        }
        Ok(done)
    }

    /// `--rm` after input `i` was coded into `sink`: the input goes only
    /// when it is a regular file and `wrote_file` (the output is a
    /// regular file that now holds the data), and only at the end of the
    /// run, if no later input replaced that output ([`Ledger`]); what
    /// stays now is said, unless `-q`.
    fn remove_input(&self, i: usize, input: &Path, regular: bool, wrote_file: bool, sink: &Sink) {
        if regular && wrote_file {
            self.ledger.borrow_mut().remove_later(i);
        } else if self.options.quiet {
        } else if !regular {
            // Deleting a device node or FIFO would break whatever else
            // uses it (as root, `--rm /dev/null` removed /dev/null).
            let _ = writeln!(
                io::stderr(),
                "perfkit: {}: kept: --rm refuses to remove a non-regular file",
                display(input)
            );
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

    /// Codes input into output (`None`: decode and discard, for --test)
    /// through zstdkit's one entry point, [`zstdkit::job::Job::run`], which
    /// overlaps the reading, the coding and the writing; returns (bytes
    /// read, bytes written).
    fn transform(
        &self,
        name: &Path,
        sink: &Sink,
        input: Box<dyn Read + Send>,
        out: Option<Box<dyn Write + Send>>,
        size: Option<u64>,
        bar: &indicatif::ProgressBar,
    ) -> Result<(u64, u64)> {
        let o = self.options;
        // Compressing and patches are libzstd's; decoding, the flags say.
        let route = if o.mode == Mode::Compress || self.reference.is_some() {
            Route::Libzstd { input, note: None }
        } else {
            self.blockwise()
                .route(self.dict.is_some(), input, size)
                .map_err(JobError::Input)
                .map_err(|e| self.job_error(e, sink))?
        };
        let input = match route {
            Route::Blocks { input } => return self.blocks(name, sink, input, out, bar),
            Route::Libzstd { input, note } => {
                if let (Some(note), true) = (note, o.verbose) {
                    let _ = writeln!(io::stderr(), "perfkit: {}: {note}", display(name));
                }
                input
            }
        };
        let done = self
            // zstd's rule: --[no-]pass-through as given, else on with -f
            // when the output is stdout (`zstdcat -f`, `zstd -df < f`).
            .job(o_pass(self.options, sink))
            .run(input, size, out, &mut |at| bar.set_position(at))
            .map_err(|e| self.job_error(e, sink))?;
        self.passed_through.set(done.passed_through);
        if let (Some(p), true) = (done.parallel, self.options.verbose) {
            let _ = writeln!(
                io::stderr(),
                "{} frames decoded on {} threads, {} of them in order on one (too large to hold)",
                p.frames,
                self.options.threads,
                p.streamed
            );
        }
        Ok((done.read, done.written))
    }

    /// Decodes `input` with perfkit's block decoder on the threads `-T`
    /// asks for into `out` (`None`: discarded), libzstd deciding what it
    /// refuses ([`Blockwise::decode`]; a streamed input read again from
    /// its file); says which decoder did it with `-v`.
    fn blocks(
        &self,
        name: &Path,
        sink: &Sink,
        input: zstdkit::job::blockwise::BlockInput,
        out: Option<Box<dyn Write + Send>>,
        bar: &indicatif::ProgressBar,
    ) -> Result<(u64, u64)> {
        let verbose = self.options.verbose;
        self.blockwise()
            .decode(
                input,
                out,
                &mut || Ok(Box::new(File::open(name)?)),
                &mut |at| bar.set_position(at),
                &mut |note| {
                    if verbose {
                        let _ = writeln!(io::stderr(), "perfkit: {}: {note}", display(name));
                    }
                },
            )
            .map_err(|e| match e {
                BlockwiseError::Job(e) => self.job_error(e, sink),
                BlockwiseError::Blocks(e) => anyhow::Error::new(e),
            })
    }

    /// The decoder `--decoder` asks for, with `-T`, the window limit and
    /// `--no-check`.
    fn blockwise(&self) -> Blockwise {
        let o = self.options;
        Blockwise {
            decoder: o.decoder,
            threads: o.threads,
            window: o.window,
            verify_checksums: o.verify_checksums,
        }
    }

    /// What the flags ask of each input, in zstdkit's terms
    /// ([`Settings::job`]); `pass_through`: a non-zstd input is copied when
    /// decoding.
    fn job(&self, pass_through: bool) -> zstdkit::job::Job<'_> {
        let o = self.options;
        let gzip = match o.format {
            Format::Gzip(level) => Some(level),
            Format::Zstd => None,
        };
        let direction = match o.mode {
            Mode::Compress => Direction::Compress {
                gzip,
                seekable: o.seekable,
            },
            Mode::Decompress | Mode::Test => Direction::Decompress,
        };
        Settings {
            direction,
            params: o.params,
            threads: o.threads,
            window: o.window,
            verify_checksums: o.verify_checksums,
            dictionary: self.dict,
            reference: self.reference,
        }
        .job(pass_through)
    }

    /// A job's error in this tool's words: the side that failed (the
    /// output `sink` named), the flags that admit a refused window, the
    /// reference a patch needs.
    fn job_error(&self, err: JobError, sink: &Sink) -> anyhow::Error {
        match (err, &self.options.patch_from) {
            (JobError::Codec(e), _) => with_hint(e),
            // The output named, as the input is at the line's start (a
            // broken pipe stays itself: it is an exit code, not a line).
            (JobError::Output(e), _) if e.kind() != io::ErrorKind::BrokenPipe => match sink {
                Sink::File(p) | Sink::Joined(p) => {
                    anyhow::anyhow!("writing {}: {}", p.display(), os_words(&e))
                }
                Sink::Stdout => anyhow::anyhow!("writing to standard output: {}", os_words(&e)),
                Sink::Discard => anyhow::anyhow!("writing output: {}", os_words(&e)),
            },
            (JobError::Patch(e), Some(reference)) => anyhow::Error::new(e).context(format!(
                "is {} the file this patch was made from?",
                reference.display()
            )),
            (other, _) => other.into(),
        }
    }
}
