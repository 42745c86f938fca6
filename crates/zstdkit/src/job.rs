//! A whole input coded into an output, whatever the format: the one entry
//! point behind a zstd-like file tool's `compress` and `decompress`.
//!
//! A [`Job`] says what to do: compress into zstd frames, zstd's seekable
//! format, a patch against a reference or gzip ([`Compress`]); decompress
//! zstd frames or gzip members, or a patch ([`Decompress`]). [`Job::run`]
//! does it from a reader to a writer and picks how the work overlaps the
//! I/O, which depends on the format:
//!
//! - zstd, compressing: in place on a [`Runway`] when the calling thread
//!   compresses and the address space is granted, else through zstd's
//!   streaming buffer with the input [read ahead](ReadAhead);
//! - seekable and gzip: the input read ahead, seekable frames compressed on
//!   `threads` threads;
//! - decompressing: gzip's magic picks gzip, as zstd's CLI does; with
//!   `threads > 1` a look at the first frame header decides whether the
//!   frames go to [`parallel::decode`], written straight to the output,
//!   else they stream on the calling thread, read ahead;
//! - patches: the reference whole in memory, as zstd's CLI holds it;
//!   compressing holds the input too (at most [`crate::patch::MAX_SIZE`]),
//!   decompressing streams it.
//!
//! Every output but the parallel decoder's is [written behind](WriteBehind)
//! by a thread. Errors say which side failed ([`JobError`]).
//!
//! ```
//! use zstdkit::job::{Compress, Job};
//! use zstdkit::Recipe;
//!
//! let data = b"a line of text\n".repeat(1000);
//! let path = std::env::temp_dir().join(format!("zstdkit-job-{}.zst", std::process::id()));
//! let job = Job::Compress(Compress::Zstd { params: Recipe::Text.params(), dictionary: None });
//! let input = Box::new(std::io::Cursor::new(data.clone()));
//! let output = Box::new(std::fs::File::create(&path)?);
//! let done = job.run(input, Some(data.len() as u64), Some(output), &mut |_| {})?;
//! let frame = std::fs::read(&path)?;
//! std::fs::remove_file(&path)?;
//! assert_eq!((done.read, done.written), (data.len() as u64, frame.len() as u64));
//! assert_eq!(zstdkit::decompress(&frame)?, data);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, BufRead, Read, Write};

use crate::context::{Compressor, Decompressor};
pub use crate::error::JobError;

use crate::error::Error;
use crate::parallel::{self, Decoded};
use crate::pipeline::{ReadAhead, WriteBehind};
use crate::recipe::Params;
use crate::runway::{Runway, RunwayEncoder};
use crate::seekable::SeekableWriter;
use crate::stream::{Decoder, Encoder, FlushMode};

#[cfg(feature = "blockwise")]
pub mod blockwise;
mod gzip;
pub mod inputs;
pub mod listing;
pub mod names;
pub mod outputs;
pub mod range;
pub mod settings;
pub mod summary;
mod threads;
#[cfg(feature = "blockwise")]
pub mod tool;

/// The first bytes of every gzip member: an input that starts with them
/// is decoded as gzip.
pub const GZIP_MAGIC: [u8; 2] = gzip::MAGIC;

/// Buffers in each of the read-ahead and write-behind pools.
const PIPE_BUFFERS: usize = 4;

/// Size of each read-ahead buffer when compressing.
const READ_SIZE: usize = 512 << 10;

/// Size of each read-ahead buffer when decompressing: the kernel's copy
/// into 512 KiB buffers cost the read-ahead thread three times what it
/// did into 64 KiB ones (`perf record`, 10 runs of a 16 MiB frame of
/// `.gz` files: 3,789 samples of `_copy_to_iter` against 1,040; 128 KiB
/// buffers 3,720). A whole decode took 0.73-0.88x the CPU with 64 KiB
/// buffers on four kinds of files found here, where a second run of the
/// same binary gave 0.95-1.03x (see the commit).
const DECODE_READ_SIZE: usize = 64 << 10;

/// Size of each write-behind buffer.
const WRITE_SIZE: usize = 512 << 10;

/// What decompressing on several threads reads before it decides how to
/// decode: enough for a frame header behind pzstd's skippable frame, and
/// below the frame walker's reads, which then bypass it.
const HEAD_SIZE: usize = 64 << 10;

/// What to do with an input.
#[derive(Debug, Clone, Copy)]
pub enum Job<'a> {
    /// Compress it.
    Compress(Compress<'a>),
    /// Decompress it (or check it, into no output).
    Decompress(Decompress<'a>),
}

/// What compressing writes.
#[derive(Debug, Clone, Copy)]
pub enum Compress<'a> {
    /// One zstd frame, the input's size in its header when given.
    Zstd {
        /// Level, window, workers and the rest.
        params: Params,
        /// A dictionary both sides hold.
        dictionary: Option<&'a [u8]>,
    },
    /// zstd's seekable format: independent frames, then the seek table.
    Seekable {
        /// Each frame's parameters.
        params: Params,
        /// How the frames are cut.
        frames: Seekable,
        /// Frames compressed on this many threads (1: the calling one).
        threads: usize,
    },
    /// One frame against a reference, an earlier version of the input
    /// (zstd's `--patch-from`); see [`crate::patch`].
    Patch {
        /// The frame's parameters (the window is the patch's own).
        params: Params,
        /// The reference, whole.
        reference: &'a [u8],
    },
    /// One gzip member.
    Gzip {
        /// gzip's level, 0 to 9.
        level: u32,
    },
}

/// What decompressing reads.
#[derive(Debug, Clone, Copy)]
pub enum Decompress<'a> {
    /// zstd frames (concatenated, skippable ones among them), or gzip
    /// members, told apart by gzip's magic at the start.
    Frames {
        /// The largest window a zstd frame may ask for.
        window: WindowLimit,
        /// The dictionary the frames were compressed with.
        dictionary: Option<&'a [u8]>,
        /// Threads for an input of several frames (1: the calling one).
        threads: usize,
        /// Check each frame's content checksum (zstd's default; its
        /// `--no-check` leaves it unchecked).
        verify_checksums: bool,
        /// An input that is neither zstd frames nor gzip is copied through
        /// unchanged, as zstd's `--pass-through` (and `zstdcat -f`) does.
        pass_through: bool,
    },
    /// A patch made against `reference` (zstd's `--patch-from`).
    Patch {
        /// The reference the patch was made from, whole.
        reference: &'a [u8],
    },
}

/// How the seekable format cuts its frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seekable {
    /// Input bytes per frame (1 to [`crate::seekable::MAX_FRAME_SIZE`]).
    pub frame_size: usize,
    /// Per-frame checksums in the seek table.
    pub checksums: bool,
}

/// The largest window decompression accepts, by zstd's precedence: a
/// memory limit wins over a window log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowLimit {
    /// zstdkit's default, [`crate::DEFAULT_WINDOW_LOG_MAX`].
    Default,
    /// At most this many bytes (zstd's `--memory`).
    Bytes(u64),
    /// At most 2^log bytes (zstd's `--long=log`).
    Log(u32),
}

/// What a job did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Input bytes read.
    pub read: u64,
    /// Output bytes written (or, with no output, decoded and discarded).
    pub written: u64,
    /// The frames and how they were spread, when several threads decoded
    /// them.
    pub parallel: Option<Decoded>,
    /// The input was no zstd or gzip data and was copied through
    /// (`pass_through`).
    pub passed_through: bool,
}

impl Job<'_> {
    /// Codes `input` (`size`: its exact length, when known; a compressed
    /// frame records it, and an input of another length is an error) into
    /// `output` (`None`: decoded and discarded, to check an input).
    /// `progress` hears the input bytes consumed so far, now and then.
    pub fn run(
        &self,
        input: Box<dyn Read + Send>,
        size: Option<u64>,
        output: Option<Box<dyn Write + Send>>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Outcome, JobError> {
        match *self {
            Job::Compress(how) => how.run(input, size, output, progress),
            Job::Decompress(how) => how.run(input, size, output, progress),
        }
    }
}

impl Compress<'_> {
    fn run(
        self,
        input: Box<dyn Read + Send>,
        size: Option<u64>,
        output: Option<Box<dyn Write + Send>>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Outcome, JobError> {
        let sink = output.unwrap_or_else(|| Box::new(io::sink()));
        let mut out =
            WriteBehind::new(sink, PIPE_BUFFERS, WRITE_SIZE).map_err(JobError::WriterThread)?;
        let read = match self {
            Compress::Patch { params, reference } => {
                return patch(input, size, Some(out), |data| {
                    Ok(crate::patch::diff(reference, data, params)?)
                });
            }
            Compress::Seekable {
                params,
                frames,
                threads,
            } => {
                let mut w =
                    SeekableWriter::new(&mut out, params, frames.frame_size, frames.checksums)?
                        .workers(threads)?;
                let read = pump(input, &mut w, progress)?;
                w.finish().map_err(JobError::Output)?;
                read
            }
            Compress::Gzip { level } => gzip::encode(level, input, &mut out, progress)?,
            // In place when the calling thread compresses and address
            // space for a runway is granted.
            // An input of unknown size (stdin, a FIFO) that ends within
            // a block streams through zstd's own buffer, as the zstd CLI
            // codes it: the runway's stable input would let zstd see the
            // whole input at the frame's end and write its size in the
            // header, where the CLI's frame has none.
            Compress::Zstd { params, dictionary } => {
                let (input, short) = match size {
                    None => head(input)?,
                    Some(_) => (input, false),
                };
                match Runway::reserve_for(&params, size).filter(|_| !short) {
                    Some(runway) => {
                        let enc = RunwayEncoder::new(runway, params, dictionary, size, input)?;
                        in_place(enc, &mut out, progress)?
                    }
                    None => streaming(params, dictionary, input, &mut out, size, progress)?,
                }
            }
        };
        let written = out.finish().map_err(JobError::Output)?;
        Ok(Outcome {
            read,
            written,
            parallel: None,
            passed_through: false,
        })
    }
}

impl Decompress<'_> {
    fn run(
        self,
        input: Box<dyn Read + Send>,
        size: Option<u64>,
        output: Option<Box<dyn Write + Send>>,
        progress: &mut dyn FnMut(u64),
    ) -> Result<Outcome, JobError> {
        let frames = match self {
            Decompress::Patch { reference } => {
                return apply_patch(reference, input, behind(output)?, progress);
            }
            Decompress::Frames {
                window,
                dictionary,
                threads,
                verify_checksums,
                pass_through,
            } => (window, dictionary, threads, verify_checksums, pass_through),
        };
        let (window, dictionary, threads, verify_checksums, pass_through) = frames;
        let make = || decompressor(window, dictionary, verify_checksums);
        let mut input = input;
        // Pass-through decodes on one thread: the frame walker stops at
        // what is not a frame, where pass-through copies the rest.
        if threads > 1 && !pass_through {
            // A look at the first frame header decides. Past it, the frame
            // walker's large reads bypass this small buffer: the frames go
            // from the kernel to the walker with no reader thread's copy
            // between.
            let mut head = io::BufReader::with_capacity(HEAD_SIZE, input);
            let first = head.fill_buf().map_err(JobError::Input)?;
            if parallel::splits(first) {
                // A file of one frame was routed to one thread already
                // (`blockwise`); one from a pipe is known only at its end.
                if size.is_none() && first.starts_with(&crate::frame::ZSTD_MAGIC.to_le_bytes()) {
                    return threads::first_alone(head, output, threads, make, progress);
                }
                return threads::frames(head, output, threads, make, progress);
            }
            input = Box::new(head);
        }
        let mut input = ReadAhead::new(input, PIPE_BUFFERS, DECODE_READ_SIZE)
            .map_err(JobError::ReaderThread)?;
        let out = behind(output)?;
        // gzip's magic, as zstd checks it: a .gz decodes whatever the
        // caller expected.
        let head = input.fill_buf().map_err(JobError::Input)?;
        if head.starts_with(&gzip::MAGIC) {
            return gzip::decode(input, out, pass_through, progress);
        }
        // As zstd decides it: not a zstd or skippable frame's magic (a
        // file shorter than one included), but something, is copied.
        if pass_through && !head.is_empty() && !is_frame_magic(head) {
            return copy_through(input, Vec::new(), 0, out, progress);
        }
        decode_streaming(
            Decoder::with_decompressor(input, make()?),
            out,
            pass_through,
            progress,
        )
    }
}

/// Whether `head`, an input's first bytes, starts with a zstd frame's or
/// a skippable frame's magic number.
fn is_frame_magic(head: &[u8]) -> bool {
    use crate::frame::{SKIPPABLE_MAGIC, SKIPPABLE_MASK, ZSTD_MAGIC};
    match head.first_chunk::<4>() {
        Some(m) => {
            let magic = u32::from_le_bytes(*m);
            magic == ZSTD_MAGIC || magic & SKIPPABLE_MASK == SKIPPABLE_MAGIC
        }
        None => false,
    }
}

/// The rest of an input copied to `out` unchanged (pass-through):
/// `held`, bytes already taken from `input`, then what `input` still has;
/// `read` bytes of the input came before them. The count written is
/// `out`'s whole count (or, with no `out`, the bytes copied).
fn copy_through(
    mut input: ReadAhead,
    held: Vec<u8>,
    mut read: u64,
    mut out: Option<WriteBehind>,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, JobError> {
    let start = read;
    if let Some(w) = out.as_mut() {
        w.write_all(&held).map_err(JobError::Output)?;
    }
    read += held.len() as u64;
    loop {
        let chunk = input.fill_buf().map_err(JobError::Input)?;
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len();
        if let Some(w) = out.as_mut() {
            w.write_all(chunk).map_err(JobError::Output)?;
        }
        input.consume(n);
        read += n as u64;
        progress(read);
    }
    let written = match out {
        Some(w) => w.finish().map_err(JobError::Output)?,
        None => read - start,
    };
    Ok(Outcome {
        read,
        written,
        parallel: None,
        passed_through: true,
    })
}

/// A decompressor with `dictionary`, by zstd's precedence the window
/// limit, and checksums checked unless `verify_checksums` is off.
fn decompressor(
    window: WindowLimit,
    dictionary: Option<&[u8]>,
    verify_checksums: bool,
) -> Result<Decompressor, Error> {
    let mut dec = match dictionary {
        Some(d) => Decompressor::with_dictionary(d)?,
        None => Decompressor::new()?,
    };
    if !verify_checksums {
        dec.ignore_checksums()?;
    }
    match window {
        WindowLimit::Bytes(limit) => dec.set_memory_limit(limit)?,
        WindowLimit::Log(w) => dec.set_window_log_max(w)?,
        WindowLimit::Default => {}
    }
    Ok(dec)
}

/// A write-behind thread in front of `sink`, if there is one.
fn behind(sink: Option<Box<dyn Write + Send>>) -> Result<Option<WriteBehind>, JobError> {
    sink.map(|s| WriteBehind::new(s, PIPE_BUFFERS, WRITE_SIZE).map_err(JobError::WriterThread))
        .transpose()
}

/// The whole input against a reference, both in memory, into one frame
/// (`code` makes it). The input is read up to [`crate::patch::MAX_SIZE`]
/// and refused past it, so a device or an endless pipe costs no more.
fn patch(
    input: Box<dyn Read + Send>,
    size: Option<u64>,
    out: Option<WriteBehind>,
    code: impl FnOnce(&[u8]) -> Result<Vec<u8>, JobError>,
) -> Result<Outcome, JobError> {
    let limit = crate::patch::MAX_SIZE;
    if size.is_some_and(|n| n > limit) {
        return Err(JobError::PatchTooLarge { limit });
    }
    let data = read_up_to(input, limit, size)?;
    let result = code(&data)?;
    let written = match out {
        Some(mut w) => {
            w.write_all(&result).map_err(JobError::Output)?;
            w.finish().map_err(JobError::Output)?
        }
        None => result.len() as u64,
    };
    Ok(Outcome {
        read: data.len() as u64,
        written,
        parallel: None,
        passed_through: false,
    })
}

/// All of `input`, or [`JobError::PatchTooLarge`] once it passes `limit`
/// bytes. The buffer grows to `size` (the input's length, when known) at
/// once, else by doubling, capped at `limit + 1`: an endless input costs
/// at most that, not the next power of two past it.
fn read_up_to(
    mut input: Box<dyn Read + Send>,
    limit: u64,
    size: Option<u64>,
) -> Result<Vec<u8>, JobError> {
    let cap = usize::try_from(limit + 1).unwrap_or(usize::MAX);
    let first = size.map_or(1 << 20, |n| n as usize + 1).min(cap);
    let mut data: Vec<u8> = Vec::new();
    let oom = |_| JobError::Input(io::Error::from(io::ErrorKind::OutOfMemory));
    data.try_reserve_exact(first).map_err(oom)?;
    loop {
        if data.len() == data.capacity() {
            if data.len() >= cap {
                return Err(JobError::PatchTooLarge { limit });
            }
            let more = data.len().min(cap - data.len());
            data.try_reserve_exact(more).map_err(oom)?;
        }
        let len = data.len();
        let spare = data.capacity() - len;
        data.resize(len + spare, 0);
        let n = loop {
            match input.read(&mut data[len..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other,
            }
        };
        match n {
            Ok(n) => data.truncate(len + n),
            Err(e) => return Err(JobError::Input(e)),
        }
        if data.len() == len {
            if data.len() as u64 > limit {
                return Err(JobError::PatchTooLarge { limit });
            }
            return Ok(data);
        }
    }
}

/// Decodes a patch made against `reference` as it streams: the patch read
/// ahead, what it decodes to written behind (`None`: discarded), neither
/// held whole.
fn apply_patch(
    reference: &[u8],
    input: Box<dyn Read + Send>,
    mut out: Option<WriteBehind>,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, JobError> {
    use crate::patch::Applier;
    let mut input =
        ReadAhead::new(input, PIPE_BUFFERS, READ_SIZE).map_err(JobError::ReaderThread)?;
    let mut applier = Applier::new(reference).map_err(JobError::Patch)?;
    let mut scratch = Vec::new();
    let (mut read, mut discarded) = (0u64, 0u64);
    loop {
        let data = input.fill_buf().map_err(JobError::Input)?;
        let at_end = data.is_empty();
        let room = match out.as_mut() {
            Some(w) => w.spare().map_err(JobError::Output)?,
            None => {
                scratch.resize(WRITE_SIZE, 0);
                &mut scratch[..]
            }
        };
        let (used, made, done) = applier.step(data, room).map_err(JobError::Patch)?;
        input.consume(used);
        read += used as u64;
        match out.as_mut() {
            Some(w) => w.advance(made),
            None => discarded += made as u64,
        }
        progress(read);
        if done {
            if !input.fill_buf().map_err(JobError::Input)?.is_empty() {
                return Err(JobError::Patch(Applier::trailing()));
            }
            break;
        }
        if at_end && made == 0 {
            return Err(JobError::Patch(Applier::cut_short()));
        }
    }
    let written = match out {
        Some(w) => w.finish().map_err(JobError::Output)?,
        None => discarded,
    };
    Ok(Outcome {
        read,
        written,
        parallel: None,
        passed_through: false,
    })
}

/// Compresses on a runway (see [`crate::runway`]): a thread lays the input
/// down in one contiguous range and zstd compresses it there, straight into
/// the writer's buffers; returns the bytes read.
fn in_place(
    mut enc: RunwayEncoder,
    out: &mut WriteBehind,
    progress: &mut dyn FnMut(u64),
) -> Result<u64, JobError> {
    loop {
        let room = out.spare().map_err(JobError::Output)?;
        // The encoder's only I/O is its source's.
        let n = enc.compress(room).map_err(|e| match e {
            Error::Io(e) => JobError::Input(e),
            other => JobError::Codec(other),
        })?;
        if n == 0 {
            return Ok(enc.consumed());
        }
        out.advance(n);
        progress(enc.consumed());
    }
}

/// The longest input of unknown size that [`head`] reads ahead: zstd's
/// block, the most its stable-input mode holds back before it starts.
const HEAD_OF_UNKNOWN: usize = 128 << 10;

/// Reads up to [`HEAD_OF_UNKNOWN`] bytes of `input` ahead; returns a
/// reader giving everything `input` gives, and whether the input ended
/// within those bytes.
fn head(mut input: Box<dyn Read + Send>) -> Result<(Box<dyn Read + Send>, bool), JobError> {
    let mut head = Vec::new();
    (&mut input)
        .take(HEAD_OF_UNKNOWN as u64 + 1)
        .read_to_end(&mut head)
        .map_err(JobError::Input)?;
    let ended = head.len() <= HEAD_OF_UNKNOWN;
    Ok((Box::new(io::Cursor::new(head).chain(input)), ended))
}

/// Compresses through zstd's own streaming buffer, the input read ahead by
/// a thread; returns the bytes read.
fn streaming(
    params: Params,
    dictionary: Option<&[u8]>,
    input: Box<dyn Read + Send>,
    out: &mut WriteBehind,
    size: Option<u64>,
    progress: &mut dyn FnMut(u64),
) -> Result<u64, JobError> {
    let mut input =
        ReadAhead::new(input, PIPE_BUFFERS, READ_SIZE).map_err(JobError::ReaderThread)?;
    let comp = match dictionary {
        Some(d) => Compressor::with_dictionary(params, d)?,
        None => Compressor::new(params)?,
    };
    let mut enc = Encoder::with_compressor(out, comp);
    if let Some(n) = size {
        enc.pledge_size(n)?;
    }
    // The encoder's only I/O is its writer's.
    let output_error = |e| match e {
        Error::Io(e) => JobError::Output(e),
        other => JobError::Codec(other),
    };
    let mut read = 0u64;
    loop {
        let data = input.fill_buf().map_err(JobError::Input)?;
        if data.is_empty() {
            break;
        }
        let n = data.len();
        enc.write_with(data, FlushMode::Continue)
            .map_err(output_error)?;
        input.consume(n);
        read += n as u64;
        progress(read);
    }
    enc.finish().map_err(output_error)?;
    Ok(read)
}

/// Copies everything `input` gives into `out`, read ahead by a thread;
/// returns the bytes read.
fn pump(
    input: Box<dyn Read + Send>,
    out: &mut dyn Write,
    progress: &mut dyn FnMut(u64),
) -> Result<u64, JobError> {
    let mut input =
        ReadAhead::new(input, PIPE_BUFFERS, READ_SIZE).map_err(JobError::ReaderThread)?;
    let mut read = 0u64;
    loop {
        let data = input.fill_buf().map_err(JobError::Input)?;
        if data.is_empty() {
            return Ok(read);
        }
        let n = data.len();
        out.write_all(data).map_err(JobError::Output)?;
        input.consume(n);
        read += n as u64;
        progress(read);
    }
}

/// Decodes zstd frames into `out` (`None`: discard) on this thread,
/// straight into the writer's buffers.
fn decode_streaming(
    mut decoder: Decoder<ReadAhead>,
    mut out: Option<WriteBehind>,
    pass_through: bool,
    progress: &mut dyn FnMut(u64),
) -> Result<Outcome, JobError> {
    let mut scratch = Vec::new();
    let mut discarded = 0u64;
    loop {
        // Decode straight into the writer's buffer: no copy.
        let room = match out.as_mut() {
            Some(w) => w.spare().map_err(JobError::Output)?,
            None => {
                scratch.resize(WRITE_SIZE, 0);
                &mut scratch[..]
            }
        };
        let n = match decoder.read(room) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // The reader's errors too: they come out of the decoder.
            Err(e) => match Error::from_io(e) {
                // Not a frame where one could start: with pass-through,
                // zstd copies the rest of the input as it is.
                Error::UnknownFormat { offset } if pass_through => {
                    let Some(held) = decoder.taken_since(offset).map(<[u8]>::to_vec) else {
                        return Err(JobError::Codec(Error::UnknownFormat { offset }));
                    };
                    let (rest, _) = decoder.into_parts();
                    let mut tail = copy_through(rest, held, offset, out, progress)?;
                    tail.written += discarded;
                    return Ok(tail);
                }
                e => return Err(JobError::Codec(e)),
            },
        };
        if n == 0 {
            break;
        }
        match out.as_mut() {
            Some(w) => w.advance(n),
            None => discarded += n as u64,
        }
        progress(decoder.consumed());
    }
    let read = decoder.consumed();
    Ok(Outcome {
        read,
        written: finish(out, discarded)?,
        parallel: None,
        passed_through: false,
    })
}

/// What `out` wrote once flushed, or `discarded` when there is none.
fn finish(out: Option<WriteBehind>, discarded: u64) -> Result<u64, JobError> {
    match out {
        Some(w) => w.finish().map_err(JobError::Output),
        None => Ok(discarded),
    }
}

#[cfg(test)]
mod tests;
