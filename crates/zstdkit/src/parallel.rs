//! Independent frames coded on several threads, in order: the decoding
//! that `pzstd` does and `zstd -d` does not, for any input made of several
//! frames (seekable files, `pzstd` output, concatenated `.zst` files).
//!
//! [`decode`] walks the input frame by frame ([`crate::frame`]) on the
//! calling thread, hands each frame to one of `N` workers, and writes
//! their output in input order. Memory is bounded: at most `2N` frames are
//! in flight (compressed and decompressed), and a frame is handed out only
//! when its header says it decompresses to at most
//! [`MAX_PARALLEL_FRAME`] bytes. A larger frame, or one that does not say,
//! is streamed in order on the calling thread once the frames before it
//! are written, exactly as a single-threaded decoder would.
//!
//! ```
//! let mut input = Vec::new();
//! for part in [&b"first "[..], b"second ", b"third"] {
//!     input.extend(zstdkit::compress(part, zstdkit::Recipe::Fast)?);
//! }
//! let mut out = Vec::new();
//! let done = zstdkit::parallel::decode(&input[..], &mut out, 2, zstdkit::Decompressor::new, |_| {})?;
//! assert_eq!(out, b"first second third");
//! assert_eq!(done.frames, 3);
//! # Ok::<(), zstdkit::Error>(())
//! ```

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam::channel::{Receiver, Sender};

use crate::context::Decompressor;
use crate::error::{Error, Result};
use crate::frame::{FrameWalker, Taken, Unit};
use crate::raw::RawDecoder;

/// The largest frame (by its declared decompressed size) handed to a
/// worker; larger ones stream on the calling thread. pzstd's frames at
/// level 19 are 32 MiB, the seekable format's default 1 MiB.
pub const MAX_PARALLEL_FRAME: u64 = 32 << 20;

/// Jobs numbered in submission order, worked on by one thread per state,
/// their results taken back in that same order.
pub(crate) struct Pool<In: Send + 'static, Out: Send + 'static> {
    jobs: Option<Sender<(u64, In)>>,
    done: Receiver<(u64, Out)>,
    /// Results that came back before an earlier one.
    waiting: BTreeMap<u64, Out>,
    submitted: u64,
    delivered: u64,
    threads: Vec<JoinHandle<()>>,
}

impl<In: Send + 'static, Out: Send + 'static> Pool<In, Out> {
    /// One worker thread per state, each running `work` on its state.
    pub(crate) fn new<S, F>(states: Vec<S>, work: F) -> Result<Self>
    where
        S: Send + 'static,
        F: Fn(&mut S, In) -> Out + Send + Sync + 'static,
    {
        let (jobs, queue) = crossbeam::channel::bounded::<(u64, In)>(states.len());
        let (results, done) = crossbeam::channel::unbounded();
        let work = Arc::new(work);
        let mut threads = Vec::with_capacity(states.len());
        for mut state in states {
            let (queue, results, work) = (queue.clone(), results.clone(), Arc::clone(&work));
            let t = std::thread::Builder::new()
                .name("zstdkit-frames".into())
                .spawn(move || {
                    for (i, job) in queue {
                        if results.send((i, work(&mut state, job))).is_err() {
                            break;
                        }
                    }
                })
                .map_err(Error::Io)?;
            threads.push(t);
        }
        Ok(Pool {
            jobs: Some(jobs),
            done,
            waiting: BTreeMap::new(),
            submitted: 0,
            delivered: 0,
            threads,
        })
    }

    /// The number of workers.
    pub(crate) fn workers(&self) -> usize {
        self.threads.len()
    }

    /// Queues a job (blocking while every worker is busy and the queue is
    /// full).
    pub(crate) fn submit(&mut self, job: In) -> Result<()> {
        let jobs = self
            .jobs
            .as_ref()
            .ok_or(Error::Zstd("a frame worker stopped"))?;
        jobs.send((self.submitted, job))
            .map_err(|_| Error::Zstd("a frame worker stopped"))?;
        self.submitted += 1;
        Ok(())
    }

    /// Jobs submitted whose results were not taken yet.
    pub(crate) fn in_flight(&self) -> u64 {
        self.submitted - self.delivered
    }

    /// The result of the oldest job not yet taken, waiting for it; `None`
    /// when nothing is in flight.
    pub(crate) fn next(&mut self) -> Result<Option<Out>> {
        if self.in_flight() == 0 {
            return Ok(None);
        }
        loop {
            if let Some(out) = self.waiting.remove(&self.delivered) {
                self.delivered += 1;
                return Ok(Some(out));
            }
            let (i, out) = self
                .done
                .recv()
                .map_err(|_| Error::Zstd("a frame worker stopped"))?;
            self.waiting.insert(i, out);
        }
    }
}

impl<In: Send + 'static, Out: Send + 'static> Drop for Pool<In, Out> {
    fn drop(&mut self) {
        // Closing the queue ends each worker's loop once it has drained.
        self.jobs = None;
        while self.done.try_recv().is_ok() {}
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// What [`decode`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Decoded {
    /// Compressed bytes read.
    pub read: u64,
    /// Decompressed bytes written.
    pub written: u64,
    /// Frames, skippable ones included.
    pub frames: u64,
    /// Frames streamed on the calling thread (too large, or of unknown
    /// size, to hand out).
    pub streamed: u64,
}

/// Whether `head`, the first bytes of a stream, begins (past any skippable
/// frames it holds whole) with a zstd frame [`decode`] may hand to a
/// worker: one that declares at most [`MAX_PARALLEL_FRAME`] bytes, or no
/// size. A stream that does not is better decoded the ordinary way: its
/// first frame would stream on one thread anyway.
pub fn splits(head: &[u8]) -> bool {
    let mut at = 0usize;
    loop {
        match Unit::parse(&head[at..], at as u64) {
            Ok(Some(Unit::Skippable { len })) => {
                at = match at.checked_add(8 + len as usize) {
                    Some(n) if n < head.len() => n,
                    _ => return true,
                }
            }
            // A frame that does not declare its size (pzstd's) is bounded
            // by its block headers once walked.
            Ok(Some(Unit::Frame(h))) => {
                return h.content_size.is_none_or(|n| n <= MAX_PARALLEL_FRAME);
            }
            // Too short to tell, or not zstd: the ordinary path says why.
            Ok(None) | Err(_) => return false,
        }
    }
}

/// One frame's work: its compressed bytes in, its output buffer (reused),
/// the most it can decode to when its header does not say, and its number
/// and offset (for an error).
type Job = (Vec<u8>, Vec<u8>, Option<u64>, (u64, u64));

/// A written frame's compressed and output buffers, for the next frame.
type Buffers = (Vec<u8>, Vec<u8>);

/// A worker's answer: the decoded size (or why not), the job's buffers and
/// the frame's number and offset.
type JobDone = (Result<usize>, Vec<u8>, Vec<u8>, (u64, u64));

/// A worker's task: one frame into its buffer.
fn decode_job(d: &mut Decompressor, (frame, mut buf, bound, at): Job) -> JobDone {
    let r = match bound {
        Some(b) => d.decompress_frame_within(&frame, &mut buf, b),
        None => d.decompress_into(&frame, &mut buf),
    };
    (r, frame, buf, at)
}

/// Decodes the frames of `input` on `workers` threads (each with a
/// decompressor from `make`, whose memory limit and dictionary apply) into
/// `out`, in order; `progress` hears the compressed bytes read so far
/// after each frame. An error names the frame and where it starts
/// ([`Error::InFrame`]); output before the failing frame has been written.
pub fn decode<R: Read, W: Write + ?Sized>(
    input: R,
    out: &mut W,
    workers: usize,
    make: impl Fn() -> Result<Decompressor>,
    progress: impl FnMut(u64),
) -> Result<Decoded> {
    decode_rest(FrameWalker::new(input), out, workers, make, progress)
}

/// [`decode`] of the rest of a stream, from where `walker` is: the units
/// it passed over already count in the result, the offsets and the
/// frames' numbers.
pub(crate) fn decode_rest<R: Read, W: Write + ?Sized>(
    mut walker: FrameWalker<R>,
    out: &mut W,
    workers: usize,
    make: impl Fn() -> Result<Decompressor>,
    mut progress: impl FnMut(u64),
) -> Result<Decoded> {
    let states = (0..workers.max(1))
        .map(|_| make())
        .collect::<Result<Vec<_>>>()?;
    let mut pool = Pool::new(states, decode_job)?;
    // The decompressor for frames too large to hand out, made at the first.
    let mut streamer: Option<Decompressor> = None;
    let mut spare: Vec<Buffers> = Vec::new();
    let mut done = Decoded::default();
    let limit_in_flight = 2 * pool.workers() as u64;

    // Writes the oldest frame in flight.
    let write_next = |pool: &mut Pool<Job, JobDone>,
                      spare: &mut Vec<Buffers>,
                      out: &mut W,
                      done: &mut Decoded|
     -> Result<()> {
        let Some((r, frame, buf, (index, offset))) = pool.next()? else {
            return Ok(());
        };
        let n = r.map_err(|e| in_frame(index, offset, e))?;
        // In pieces: a frame is up to 32 MiB (see `hugepages`).
        hugepages::write_all_in_pieces(out, &buf[..n]).map_err(Error::Io)?;
        done.written += n as u64;
        spare.push((frame, buf));
        Ok(())
    };

    loop {
        let (index, offset) = (walker.taken(), walker.offset());
        let unit = walker.peek().map_err(|e| in_frame(index, offset, e))?;
        match unit {
            None => break,
            Some(Unit::Frame(h)) => {
                let (mut frame, buf) = spare.pop().unwrap_or_default();
                frame.clear();
                // The block headers bound what a frame can decode to,
                // whatever its header declares: a header declaring a few
                // bytes before gigabytes of raw blocks must not be held
                // whole (zstd refuses it while streaming).
                let limit = match h.content_size {
                    Some(n) if n > MAX_PARALLEL_FRAME => 0,
                    _ => MAX_PARALLEL_FRAME,
                };
                let taken = if limit == 0 {
                    None
                } else {
                    walker
                        .take_within(&mut frame, limit)
                        .map_err(|e| in_frame(index, offset, e))?
                };
                if let Some(Taken::Whole(w)) = taken {
                    let bound = h.content_size.is_none().then_some(w.max_output);
                    pool.submit((frame, buf, bound, (index, offset)))?;
                    while pool.in_flight() >= limit_in_flight {
                        write_next(&mut pool, &mut spare, out, &mut done)?;
                    }
                } else {
                    // Too large to hold: in order, on this thread, from
                    // what was passed over so far on.
                    while pool.in_flight() > 0 {
                        write_next(&mut pool, &mut spare, out, &mut done)?;
                    }
                    let d = match streamer.take() {
                        Some(d) => d,
                        None => make()?,
                    };
                    let mut copied = Copied::new(&mut *out);
                    let (d, n) = stream_frame(&mut walker, &frame, d, &mut copied, &mut progress)
                        .map_err(|e| in_frame(index, offset, e))?;
                    streamer = Some(d);
                    done.written += n;
                    done.streamed += 1;
                    spare.push((frame, buf));
                }
            }
            Some(Unit::Skippable { .. }) => {
                walker.take(None).map_err(|e| in_frame(index, offset, e))?;
            }
        }
        progress(walker.offset());
    }
    while pool.in_flight() > 0 {
        write_next(&mut pool, &mut spare, out, &mut done)?;
    }
    if walker.taken() == 0 {
        // As every decoder here: an input with no frame is not an empty one.
        return Err(Error::Truncated { offset: 0 });
    }
    done.read = walker.offset();
    done.frames = walker.taken();
    Ok(done)
}

/// `e`, said to have happened in frame `index` at `offset`.
fn in_frame(index: u64, offset: u64, e: Error) -> Error {
    match e {
        // The writer's errors are the output's, not the frame's.
        Error::Io(e) => Error::Io(e),
        e => Error::InFrame {
            index,
            offset,
            source: Box::new(e),
        },
    }
}

/// Where [`stream_frame`] decodes to: room lent by the output itself (a
/// write-behind's buffer, so no byte is copied again), or a buffer of
/// this thread's copied into a writer ([`Copied`]).
pub(crate) trait Room {
    /// Room to decode into, never empty.
    fn room(&mut self) -> std::io::Result<&mut [u8]>;
    /// The first `n` bytes of the last room hold output.
    fn filled(&mut self, n: usize) -> std::io::Result<()>;
}

impl Room for crate::pipeline::WriteBehind {
    fn room(&mut self) -> std::io::Result<&mut [u8]> {
        self.spare()
    }

    fn filled(&mut self, n: usize) -> std::io::Result<()> {
        self.advance(n);
        Ok(())
    }
}

/// A writer that lends no room: output is decoded into a buffer here and
/// written from it.
pub(crate) struct Copied<'w, W: ?Sized> {
    buf: Vec<u8>,
    out: &'w mut W,
}

impl<'w, W: Write + ?Sized> Copied<'w, W> {
    /// `out`, behind a buffer of zstd's block size.
    pub(crate) fn new(out: &'w mut W) -> Self {
        Copied {
            buf: vec![0u8; 1 << 17],
            out,
        }
    }
}

impl<W: Write + ?Sized> Room for Copied<'_, W> {
    fn room(&mut self) -> std::io::Result<&mut [u8]> {
        Ok(&mut self.buf)
    }

    fn filled(&mut self, n: usize) -> std::io::Result<()> {
        self.out.write_all(&self.buf[..n])
    }
}

/// Decodes the zstd frame whose first bytes are `passed` (already taken
/// from the walker) and whose rest is at the walker's position, on this
/// thread, into `out`; `progress` hears the walker's offset as it reads
/// on. Returns the decompressor for reuse and the bytes written.
pub(crate) fn stream_frame<R: Read>(
    walker: &mut FrameWalker<R>,
    passed: &[u8],
    d: Decompressor,
    out: &mut impl Room,
    progress: &mut dyn FnMut(u64),
) -> Result<(Decompressor, u64)> {
    let mut raw = RawDecoder::with_decompressor(d);
    let mut written = 0u64;
    let mut passed = passed;
    loop {
        let buf = out.room().map_err(Error::Io)?;
        let (step, ended_input) = if passed.is_empty() {
            let data = walker.buffered()?;
            let step = raw.decode(data, buf)?;
            let ended = data.is_empty();
            walker.consume(step.consumed);
            progress(walker.offset());
            (step, ended)
        } else {
            let step = raw.decode(passed, buf)?;
            passed = &passed[step.consumed..];
            (step, false)
        };
        out.filled(step.produced).map_err(Error::Io)?;
        written += step.produced as u64;
        if step.frame_ended {
            break;
        }
        if ended_input && step.produced == 0 {
            return Err(Error::Truncated {
                offset: raw.consumed(),
            });
        }
    }
    walker.count_streamed();
    Ok((raw.into_decompressor(), written))
}

#[cfg(test)]
mod tests;
