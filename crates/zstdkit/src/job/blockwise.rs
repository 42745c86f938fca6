//! Which decoder takes an input, and perfkit's own ([`zstdblock`]) when it
//! does: one ordinary zstd frame decoded on several threads, its blocks'
//! entropy stage in parallel and their execution in order.
//!
//! By default ([`Decoder::Auto`]) the block decoder takes one large frame
//! on two threads or more, where its pipeline measured no slower than
//! libzstd's one thread on any kind of data tried ([`Blockwise::pays`]:
//! a regular file whose first frame declares at least
//! [`AUTO_MIN_CONTENT`] bytes with [`AUTO_MIN_COMPRESSED_DECLARED`] of
//! compressed blocks, or declares none and has
//! [`AUTO_MIN_COMPRESSED_UNDECLARED`], found by [`zstdblock::survey`]);
//! on one thread, on smaller frames and into a pipe, where it measured
//! slower, libzstd keeps them, a file of one frame on one thread whatever `-T` says
//! ([`Route::Libzstd`]'s `one_thread`). Asked for by name
//! ([`Decoder::Perfkit`]) it takes every input it can, on one thread too,
//! whatever its size.
//!
//! On several threads, a regular file is mapped and read in place (or, if
//! it cannot be mapped, read as the block decoder goes), so the memory it
//! takes is the window and the blocks in flight, whatever the file's
//! size, and reading overlaps decoding. On one thread, an input of up to
//! [`MAX_HELD_TO_DECIDE`] bytes is read whole to walk its frames first,
//! and a larger one is read as it goes.
//!
//! libzstd (through [`crate::job`]) keeps what the block decoder cannot
//! do: an input of unknown size (stdin), gzip and pass-through, a
//! dictionary and frames that name one, patches (the caller routes those
//! to libzstd), and anything whose headers do not walk (a window over the
//! limit, a bad magic number), so those are answered as libzstd answers
//! them. A decode that fails on what libzstd may accept
//! ([`zstdblock::Error::libzstd_may_accept`], or a wrong checksum when
//! checksums are not checked) is run again by libzstd, whose output past
//! the bytes already written continues the output: both decoders agree on
//! every block before the failing one.
//!
//! ```
//! use zstdkit::job::WindowLimit;
//! use zstdkit::job::blockwise::{Blockwise, Decoder, Route};
//!
//! let data = b"a line of text\n".repeat(1000);
//! let frame = zstdkit::compress(&data, zstdkit::Recipe::Text)?;
//! let blockwise = Blockwise {
//!     decoder: Decoder::Perfkit,
//!     threads: 2,
//!     window: WindowLimit::Default,
//!     verify_checksums: true,
//! };
//! let size = frame.len() as u64;
//! let input = Box::new(std::io::Cursor::new(frame));
//! let Route::Blocks { input } = blockwise.route(false, input, Some(size), None, false)? else {
//!     return Err("one frame, the block decoder asked for by name, takes it".into());
//! };
//! let mut notes = Vec::new();
//! // Decoded and discarded (no output), as a test of the input.
//! let (read, written) = blockwise.decode(
//!     input,
//!     None,
//!     &mut || Err(std::io::ErrorKind::NotFound.into()),
//!     &mut |_| {},
//!     &mut |note| notes.push(note.to_string()),
//! )?;
//! assert_eq!((read, written), (size, data.len() as u64));
//! assert!(notes.len() == 1 && notes[0].starts_with("decoded by perfkit's block decoder"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Read, Write};

use super::{Decompress, Job, JobError, WindowLimit};

/// Which zstd decoder decompresses (a zstd-like tool's `--decoder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decoder {
    /// The decoder that measured faster: the block decoder's pipeline for
    /// one large frame in a regular file on two threads or more, not
    /// written into a pipe ([`Blockwise::pays`]), libzstd for everything
    /// else (on two cores
    /// the pipeline was slower than libzstd's one thread on frames below
    /// 64 MiB of some kinds, docs/compress.md, and `-T2` must never be
    /// slower than `-T1`).
    #[default]
    Auto,
    /// perfkit's block decoder wherever it applies, on one thread too
    /// (for tests and benchmarks).
    Perfkit,
    /// libzstd always, as before the block decoder.
    Libzstd,
}

/// The most of an input read to decide, before the rest is read: enough
/// for a frame header.
const HEAD: usize = 64 << 10;

/// The least content a first frame declares for [`Decoder::Auto`] to
/// take the pipeline: below it, on two cores, the pipeline was slower than
/// libzstd's one thread on some kinds of data. The least paying kind tried
/// is this machine's `/usr/share/doc` at `-3` (2:1) to a new file: 0.89x
/// `-T1` at 32 MiB, 0.94-0.97x at 40, 0.91-0.94x at 48, 1.01-1.03x at
/// 64; sources, libraries and logs gained 1.03-1.37x from 32 MiB
/// (docs/compress.md, "The default's gate").
pub const AUTO_MIN_CONTENT: u64 = 64 << 20;

/// The least compressed blocks (neither stored nor RLE) a first frame
/// declaring [`AUTO_MIN_CONTENT`] bytes or more must have: the work
/// threads share. Stored blocks stay on one thread, and a frame that
/// compresses more than 16 to 1 is mostly execution, which is not shared
/// (the most compressed kind measured paying is the sources at `-19`,
/// 10.8 to 1).
pub const AUTO_MIN_COMPRESSED_DECLARED: u64 = 4 << 20;

/// The least compressed blocks a first frame declaring no size (`tar |
/// zstd`) must have for [`Decoder::Auto`] to take the pipeline: with no
/// size to go by, enough that its output is [`AUTO_MIN_CONTENT`] at 2 to
/// 1, the least compressed kind measured paying.
pub const AUTO_MIN_COMPRESSED_UNDECLARED: u64 = 32 << 20;

/// The largest input read whole only to learn whether it is one frame
/// (zstdkit's frame-parallel path holds as much in flight).
pub const MAX_HELD_TO_DECIDE: u64 = crate::parallel::MAX_PARALLEL_FRAME;

/// Where one input goes.
pub enum Route {
    /// To libzstd, as before, with a line for `-v` saying why when the
    /// block decoder was asked for and could not take it.
    Libzstd {
        /// The input, what was read to decide included.
        input: Box<dyn Read + Send>,
        /// Why not the block decoder, when that is worth saying.
        note: Option<String>,
        /// Whether libzstd's path should keep to one thread whatever `-T`
        /// says: by default, for a file found to be one frame, which
        /// zstdkit's frame-parallel decoding would read whole, decode on
        /// one worker and write only then (on two cores 0.39-0.90x `-T1`'s
        /// read-ahead, decode and write-behind on 4-32 MiB frames of
        /// sources, libraries, docs and logs; docs/compress.md).
        one_thread: bool,
    },
    /// To the block decoder ([`Blockwise::decode`]).
    Blocks {
        /// The input, held or to read.
        input: BlockInput,
    },
}

/// An input the block decoder takes.
pub enum BlockInput {
    /// Whole, in memory: at most [`MAX_HELD_TO_DECIDE`] bytes, decoded on
    /// one thread.
    Held(Vec<u8>),
    /// Mapped: a regular file decoded on several threads, read in place
    /// rather than copied ([`zstdblock::MappedFile`]), at the size it had
    /// when opened.
    Mapped(zstdblock::MappedFile),
    /// Read as it goes: a regular file of `size` bytes decoded on several
    /// threads that could not be mapped, or one larger than
    /// [`MAX_HELD_TO_DECIDE`]; never read past the size it had when
    /// opened.
    Streamed {
        /// The rest of the input, what was read to decide first.
        input: Box<dyn Read + Send>,
        /// Its size.
        size: u64,
    },
}

/// The largest window a frame may have under `window`, as zstdkit's
/// decompressor enforces it.
pub fn window_bytes(window: WindowLimit) -> u64 {
    match window {
        WindowLimit::Default => 1 << crate::DEFAULT_WINDOW_LOG_MAX,
        WindowLimit::Bytes(n) => n,
        WindowLimit::Log(w) => 1u64 << w.min(63),
    }
}

/// How inputs are decompressed: the decoder asked for, and what it is
/// given.
#[derive(Debug, Clone, Copy)]
pub struct Blockwise {
    /// The decoder asked for.
    pub decoder: Decoder,
    /// Threads to decode on (0 counts as several, as zstd's `-T0`).
    pub threads: usize,
    /// The largest window a frame may have.
    pub window: WindowLimit,
    /// Frames' checksums are checked (else a wrong one is libzstd's to
    /// decide).
    pub verify_checksums: bool,
}

/// What went wrong in [`Blockwise::decode`].
#[derive(Debug, thiserror::Error)]
pub enum BlockwiseError {
    /// The block decoder refused the input, and libzstd would too.
    #[error(transparent)]
    Blocks(zstdblock::Error),
    /// Reading the input or writing the output failed, or libzstd's
    /// second run did.
    #[error(transparent)]
    Job(JobError),
}

impl Blockwise {
    /// Whether [`Blockwise::route`] maps a regular file it is given a
    /// handle on: the block decoder asked for, or by default, on threads.
    /// (A caller need not make the handle otherwise.)
    pub fn maps_files(&self) -> bool {
        self.decoder != Decoder::Libzstd && self.threads >= 2
    }

    /// Whether the pipeline pays for a file by [`Decoder::Auto`]'s
    /// measure ([`zstdblock::survey`] of it, counting to
    /// [`Blockwise::enough`]): its first frame declares at least
    /// [`AUTO_MIN_CONTENT`] bytes and has [`AUTO_MIN_COMPRESSED_DECLARED`]
    /// bytes of compressed blocks, or declares no size and has
    /// [`AUTO_MIN_COMPRESSED_UNDECLARED`].
    pub fn pays(survey: &zstdblock::Survey) -> bool {
        survey.compressed >= Self::enough(survey.declared)
    }

    /// The compressed blocks that settle [`Blockwise::pays`] for a first
    /// frame declaring `declared` bytes: counting stops there. A frame
    /// declaring less than [`AUTO_MIN_CONTENT`] never pays, and is walked
    /// to its end, to tell one frame from several.
    pub fn enough(declared: Option<u64>) -> u64 {
        match declared {
            Some(n) if n < AUTO_MIN_CONTENT => u64::MAX,
            Some(_) => AUTO_MIN_COMPRESSED_DECLARED,
            None => AUTO_MIN_COMPRESSED_UNDECLARED,
        }
    }

    /// [`Decoder::Auto`]'s answer for a regular file of `size` bytes on
    /// threads, from its survey (`file`, a handle on it; none: not
    /// surveyed): `None` when the pipeline takes it, else whether libzstd
    /// keeps to one thread (the file is one frame). `barred`: the
    /// pipeline may not take it (output into a pipe, as
    /// [`Blockwise::route`]'s `piped`; a dictionary).
    fn by_default(
        file: Option<&std::fs::File>,
        size: u64,
        window_limit: u64,
        barred: bool,
    ) -> io::Result<Option<bool>> {
        // Where the pipeline never pays, the survey goes on to tell one
        // frame from several.
        let enough = |declared| {
            if barred {
                u64::MAX
            } else {
                Self::enough(declared)
            }
        };
        let survey = match file {
            Some(f) => zstdblock::survey(f, size, window_limit, enough)?,
            None => None,
        };
        Ok(match survey {
            Some(s) if !barred && Self::pays(&s) => None,
            other => Some(other.is_some_and(|s| s.after == zstdblock::After::Nothing)),
        })
    }

    /// Decides where `input` (`size` bytes when a regular file) goes, reading
    /// as much of it as that takes; what was read stays part of the input
    /// whichever way it goes. `dictionary`: the frames are decoded with a
    /// dictionary. `file`: the regular file `input` reads from its start
    /// (another handle on it), when there is one, for threads to map.
    /// `piped`: the output goes to another process through a pipe or a
    /// socket, whose reader needs a core the pipeline would take (on two
    /// cores the pipeline then ran at 0.73-0.96x `-T1`), so by default
    /// libzstd keeps it. Asked of plain decompression only: compressing
    /// and patches are libzstd's.
    pub fn route(
        &self,
        dictionary: bool,
        mut input: Box<dyn Read + Send>,
        size: Option<u64>,
        file: Option<std::fs::File>,
        piped: bool,
    ) -> io::Result<Route> {
        let o = self;
        // Why libzstd takes an input is said only when the block decoder
        // was asked for by name.
        let asked = o.decoder == Decoder::Perfkit;
        let libzstd = |input, note: Option<String>| {
            Ok(Route::Libzstd {
                input,
                note: note.filter(|_| asked),
                one_thread: false,
            })
        };
        let by_default = o.decoder == Decoder::Auto && o.threads >= 2;
        if !asked && !by_default {
            return libzstd(input, None);
        }
        if dictionary {
            // By default a file of one frame goes to one thread here too:
            // the frame-parallel path would hold it whole for one worker.
            if !asked
                && let Some(size) = size
                && Self::by_default(file.as_ref(), size, window_bytes(o.window), true)?
                    == Some(true)
            {
                return Ok(Route::Libzstd {
                    input,
                    note: None,
                    one_thread: true,
                });
            }
            let note = "-D: decoded by libzstd, which holds the dictionary";
            return libzstd(input, Some(note.into()));
        }
        let Some(size) = size else {
            let note = "not a regular file: decoded by libzstd".to_string();
            return libzstd(input, Some(note));
        };
        let mut head = Vec::with_capacity(HEAD);
        (&mut input).take(HEAD as u64).read_to_end(&mut head)?;
        let rest = |head: Vec<u8>, input| -> Box<dyn Read + Send> {
            Box::new(io::Cursor::new(head).chain(input))
        };
        match zstdblock::frame_start(&head, 0, 0, u64::MAX) {
            Ok(frame) => {
                if let zstdblock::FrameKind::Zstd(h) = frame.kind
                    && h.dictionary_id != 0
                {
                    let id = h.dictionary_id;
                    let note = format!("frame 0 needs dictionary {id}: decoded by libzstd");
                    return libzstd(rest(head, input), Some(note));
                }
            }
            // gzip, pass-through, a bad header: libzstd's path says it.
            Err(_) => return libzstd(rest(head, input), None),
        }
        let limit = window_bytes(o.window);
        // On threads, the pipeline reads the input while it decodes, so
        // reading all of it first would only delay the first block: 6 ms
        // of a 25 MB file's 55 (`pipeline --rss` against `--rss-stream`,
        // docs/compress.md). On one thread, a file that fits is held
        // whole and its frames walked first.
        if size > MAX_HELD_TO_DECIDE || o.threads >= 2 {
            // The first frame's header decides, and the block decoder
            // reads the rest as it goes.
            if let Err(e) = zstdblock::frame_start(&head, 0, 0, limit) {
                let note = Some(format!("{e}: decoded by libzstd"));
                return libzstd(rest(head, input), note);
            }
            // By default, a file the survey finds to pay goes to the
            // pipeline, one frame that does not to libzstd's one thread.
            if !asked && let Some(one_thread) = Self::by_default(file.as_ref(), size, limit, piped)?
            {
                return Ok(Route::Libzstd {
                    input: rest(head, input),
                    note: None,
                    one_thread,
                });
            }
            // Threads read a file in place: a read copied each byte once
            // more and faulted in a buffer per range in flight. One thread
            // reads it as it goes, holding no more than its window.
            let mapped = file.filter(|_| o.maps_files()).map(|f| {
                // SAFETY: the map goes only to zstdblock's decoder, which
                // reads it as untrusted bytes (as `map` requires), so a
                // process writing the file meanwhile changes the output or
                // the error, as it would change what a read returned.
                #[allow(unsafe_code)]
                unsafe {
                    zstdblock::MappedFile::map(f, size)
                }
            });
            match mapped {
                Some(Ok(map)) => {
                    return Ok(Route::Blocks {
                        input: BlockInput::Mapped(map),
                    });
                }
                // By default only a file read in place.
                _ if !asked => return libzstd(rest(head, input), None),
                _ => {}
            }
            let left = size.saturating_sub(head.len() as u64);
            let input = rest(head, Box::new(input.take(left)));
            return Ok(Route::Blocks {
                input: BlockInput::Streamed { input, size },
            });
        }
        let mut whole = Vec::new();
        whole
            .try_reserve_exact(usize::try_from(size).unwrap_or(usize::MAX))
            .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        whole.extend_from_slice(&head);
        // Never past the size it had when opened: a growing file is read as
        // it was.
        input
            .take(size.saturating_sub(head.len() as u64))
            .read_to_end(&mut whole)?;
        let frames = match zstdblock::walk(&whole, limit) {
            Ok(frames) => frames,
            Err(e) => {
                // libzstd words every refusal as before (a window over
                // --memory with the flags that admit it).
                let note = Some(format!("{e}: decoded by libzstd"));
                return libzstd(Box::new(io::Cursor::new(whole)), note);
            }
        };
        if let Some((index, id)) = frames.iter().find_map(|f| match &f.kind {
            zstdblock::FrameKind::Zstd(h) if h.dictionary_id != 0 => {
                Some((f.index, h.dictionary_id))
            }
            _ => None,
        }) {
            let note = format!("frame {index} needs dictionary {id}: decoded by libzstd");
            return libzstd(Box::new(io::Cursor::new(whole)), Some(note));
        }
        Ok(Route::Blocks {
            input: BlockInput::Held(whole),
        })
    }

    /// Decodes `input` (whole in memory, or read as it goes) with perfkit's
    /// block decoder on the threads asked for into `out` (`None`:
    /// discarded); what it refuses and libzstd may accept, libzstd decodes
    /// again (a streamed input read again from the start, through `again`),
    /// its output continuing from where the block decoder's stopped. Returns
    /// (bytes read, bytes written); `progress` is given the input's bytes
    /// done, `note` the line a verbose tool prints (which decoder did it).
    pub fn decode(
        &self,
        input: BlockInput,
        out: Option<Box<dyn Write + Send>>,
        again: &mut dyn FnMut() -> io::Result<Box<dyn Read + Send>>,
        progress: &mut dyn FnMut(u64),
        note: &mut dyn FnMut(&str),
    ) -> Result<(u64, u64), BlockwiseError> {
        let o = self;
        let discard = out.is_none();
        let mut parallel = zstdblock::parallel::Parallel::new(o.threads, window_bytes(o.window));
        // Asked for by name, the pipeline runs whatever the input's size,
        // so tests reach it with small files.
        if o.decoder == Decoder::Perfkit {
            parallel.min_input = 0;
        }
        let mut out = Counting {
            inner: out.unwrap_or_else(|| Box::new(io::sink())),
            written: 0,
        };
        let (decoded, held, size) = match input {
            BlockInput::Held(input) => {
                let size = input.len() as u64;
                (parallel.decode(&input, &mut out), Some(input), size)
            }
            BlockInput::Mapped(map) => {
                let size = map.bytes().len() as u64;
                (parallel.decode_mapped(&map, &mut out), None, size)
            }
            BlockInput::Streamed { input, size } => {
                (parallel.decode_reader(input, &mut out), None, size)
            }
        };
        let e = match decoded {
            Ok(done) => {
                out.flush()
                    .map_err(|e| BlockwiseError::Job(JobError::Output(e)))?;
                progress(size);
                let how = if done.pipelined {
                    format!("on {} threads", o.threads)
                } else {
                    "on one thread".to_string()
                };
                note(&format!("decoded by perfkit's block decoder {how}"));
                return Ok((size, done.bytes));
            }
            Err(zstdblock::StreamError::Sink(e)) => {
                return Err(BlockwiseError::Job(JobError::Output(e)));
            }
            Err(zstdblock::StreamError::Input(e)) => {
                return Err(BlockwiseError::Job(JobError::Input(e)));
            }
            Err(zstdblock::StreamError::Decode(e)) => e,
        };
        if !libzstd_decides(&e, o.verify_checksums) {
            return Err(BlockwiseError::Blocks(e));
        }
        note(&format!(
            "{e}, which libzstd may accept: decoded again by libzstd"
        ));
        let Counting { inner, written } = out;
        let rest = Skipping {
            inner,
            skip: written,
        };
        let output: Option<Box<dyn Write + Send>> =
            if discard { None } else { Some(Box::new(rest)) };
        let again: Box<dyn Read + Send> = match held {
            Some(input) => Box::new(io::Cursor::new(input)),
            None => Box::new(
                again()
                    .map_err(|e| BlockwiseError::Job(JobError::Input(e)))?
                    .take(size),
            ),
        };
        let job = Job::Decompress(Decompress::Frames {
            window: o.window,
            dictionary: None,
            threads: o.threads,
            verify_checksums: o.verify_checksums,
            pass_through: false,
        });
        let done = job
            .run(again, Some(size), output, progress)
            .map_err(BlockwiseError::Job)?;
        Ok((done.read, done.written))
    }
}

/// Whether libzstd decides about an input the block decoder refused with
/// `e`: libzstd may accept it, or it is only a checksum and checksums are
/// not checked (`--no-check`).
pub fn libzstd_decides(e: &zstdblock::Error, verify_checksums: bool) -> bool {
    e.libzstd_may_accept() || (!verify_checksums && matches!(e, zstdblock::Error::Checksum { .. }))
}

/// A writer that counts what it passes on.
struct Counting<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A writer that drops the first `skip` bytes written to it: libzstd's
/// run again over an input whose first bytes are written already.
struct Skipping<W> {
    inner: W,
    skip: u64,
}

impl<W: Write> Write for Skipping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let dropped = usize::try_from(self.skip)
            .unwrap_or(usize::MAX)
            .min(buf.len());
        if dropped == buf.len() {
            self.skip -= dropped as u64;
            return Ok(buf.len());
        }
        // The skip is counted only once the write succeeds: a write that
        // fails consumed nothing, and a retry (`write_all` retries an
        // interrupted one) offers the same bytes again.
        let n = self.inner.write(&buf[dropped..])?;
        self.skip -= dropped as u64;
        Ok(n + dropped)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests;
