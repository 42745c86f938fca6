//! One frame (or several in a row) decoded on several threads, into a
//! [`std::io::Write`], in a pipeline of stages joined by bounded channels:
//!
//! 1. the **walker** reads the input as it goes (from a slice, a
//!    [`MappedFile`] or a [`Read`]), the frame and block headers in
//!    order, groups the blocks into ranges of at most [`RANGE_BLOCKS`]
//!    (fewer where their decoded blocks pass [`RANGE_DECODED`]), hands
//!    each range its own bytes of the input and the [`EntropyState`] it
//!    inherits, found by running [`skip_block`](crate::skip_block)
//!    (tables only) over every compressed block as it passes;
//! 2. **workers** (as many as the threads asked for) run the entropy stage
//!    of whole ranges at once, each from its own copy of the state;
//! 3. the **executor** takes the ranges back in order, resolves repeat
//!    offsets and executes them through the window (while the next range
//!    is not back it decodes one no worker has started, so it never sleeps
//!    while work waits), into a ring mapped twice in a row (`ring`), so the
//!    window behind it is always contiguous and never copied, and hands
//!    its output on a MiB at a time, read in place;
//! 4. the **writer**, which runs on the caller's thread (so the writer
//!    need not be `Send`): it computes each frame's XXH64 and checks it
//!    before a frame's last bytes go on, and faults the ring's pages in
//!    ahead of the executor (see `executor` for why those are not the
//!    executor's).
//!
//! Why the walker skips rather than hands off: a range's starting tables
//! are those its predecessor ended with, so handing them from worker to
//! worker would run the entropy stage one range at a time. Reading only
//! the tables costs a few microseconds a block (the bitstreams, tens of
//! kilobytes, are what the workers decode), so the walker keeps ahead.
//!
//! **Memory** is the window and the blocks in flight, independent of the
//! input's length and the output's: the executor's ring, the window +
//! 2 MiB + 128 KiB (a first frame whose whole output fits in that, or of
//! unknown size with a window over 16 MiB until it outgrows it, takes
//! memory mapped once instead, no larger; a later frame's window over
//! 16 MiB is reached by growing the ring as the frame's history does); and
//! at most [`IN_FLIGHT_PER_WORKER`] × workers ranges between walker and
//! executor, each with its input (the [`RANGE_BLOCKS`] blocks' bytes, at
//! most 1 MiB, and 64 KiB read ahead) and, once a worker or the executor
//! has started its entropy stage, its decoded blocks (at most 128 KiB of
//! literals and 128 Ki/3 sequences of 12 bytes a block, typically a
//! tenth of that, in sets of buffers made once, one per worker and
//! [`DECODED_AHEAD`] more, which the executor hands back for the next
//! range to start). With two workers and an 8 MiB window
//! (`zstd -19`) that is at most 10.1 + 6 × 1.1 MiB of buffers plus
//! the decoded blocks; [`Parallel::decode_reader`] reads its input so,
//! and [`Parallel::decode`] lends the caller's slice to the ranges, not
//! copied. `tests/streamed.rs` checks that the peak does not grow
//! from a 64 MiB to a 512 MiB input; `examples/pipeline.rs --rss`
//! measures it on a file.
//!
//! **Errors** are the one-thread path's, naming frame and byte offset, and
//! come in input order: a worker's error waits until every block before
//! it is executed. Any stage that stops drops its channels, which stops
//! the others; nothing waits on a stage that is gone. A worker that
//! panics (a bug) first tells the executor which range it dropped, so
//! the pipeline stops and the panic reaches the caller. The caller's
//! writer receives only bytes executed in order from valid blocks; a
//! frame's checksum is known only at the frame's end, after most of its
//! bytes went on, so a checksum error means the bytes written for that
//! frame are suspect. Its last bytes (at least one), and the next frame,
//! are written only once the checksum is verified, so on any error the
//! caller's writer holds less than the whole output.
//!
//! **Timing** ([`Parallel::decode_timed`], `examples/pipeline.rs
//! --stages`): what each stage spent working and waiting for another
//! ([`StageTimes`]), the way to tell which stage bounds a decode.
//!
//! Small inputs (less than [`MIN_PARALLEL_INPUT`] bytes of compressed
//! blocks) and inputs of stored blocks stay on the caller's thread
//! through [`crate::decode_to`]: no thread is started where threads
//! cannot pay.

mod executor;
mod ring;
mod sink;
mod stages;
mod walker;

use std::io::{self, Read, Write};

use crossbeam::channel::{Receiver, Sender, bounded, unbounded};

use crate::entropy::{DecodedBlock, EntropyState, decode_content};
use crate::error::Error;
use crate::frame::{Block, BlockKind, FrameKind, block_header, frame_end, frame_start};
use crate::mapped::{MappedFile, shrank_error};
use crate::source::{Bytes, Checked, Source};
use crate::{StreamError, decode_to};
use executor::execute;
use sink::{Released, ToWriter, write};
pub use stages::StageTimes;
use stages::{Clock, Stretch, timed};
use walker::{Stock, walk};

/// Blocks in one worker's range at most: enough that a range is about a
/// millisecond of work, so handing it over (a wake-up, which on a busy
/// machine can wait for a time slice) is rare.
pub const RANGE_BLOCKS: usize = 8;
/// Bytes of literals and sequences (12 bytes each) at which a range ends
/// before [`RANGE_BLOCKS`], as the block headers give them (the walker
/// reads them anyway). Eight blocks of a `zstd -3` file hold 0.5-1 MiB
/// of them, most of a core's L2, and each buffer of a set grows to the
/// largest block it ever held, so the sets were faulted in at up to
/// three times what a range holds and written on one core while read on
/// the other. Capped here, a range of heavy blocks is two to four blocks
/// and one of light ones (most blocks at `-19`) still eight: a fresh
/// `-T2` took 8-17 % fewer page faults on three `-3` tars (sources,
/// libraries, docs), and about as many as before on the `-19` ones.
/// Its wall moved 0.91-1.06x over three interleaved runs, beside a copy
/// of the build at 0.95-1.03x: a lean, not a gain past the spread.
pub const RANGE_DECODED: usize = 256 << 10;
/// Ranges in flight (walked and not yet executed) per worker: enough to
/// keep every worker busy while the executor waits for the oldest.
pub const IN_FLIGHT_PER_WORKER: usize = 3;
/// Sets of decoded blocks' buffers beyond one per worker (see `shelf`):
/// one, which the executor, the slowest stage, executes while each
/// worker decodes the next range. A set (a range's blocks, up to 1.5 MiB
/// of literals and sequences, typically a tenth of that) for every range
/// in flight, as before, was 6 sets on two workers, most of them
/// decoded and waiting: 1,000-2,000 more page faults a 64 MiB file and
/// 2-5 % more CPU, for no gain in wall time (see the commit).
pub const DECODED_AHEAD: usize = 1;
/// Bytes of compressed blocks below which the input is decoded on the
/// caller's thread: a bound below which threads cannot pay, not where
/// they start to. Starting the pipeline (its threads, its ring, its
/// buffers) costs at least a millisecond on this project's two-core host
/// (`perfkit decompress --decoder=perfkit` of a frame of 3 bytes of
/// content, whose ring and buffers are the smallest: 3.8 ms at `-T2`,
/// 2.9 ms at `-T1`, medians of 21 runs); the entropy stage of this much
/// input takes 1-2 ms (docs/compress.md's entropy-stage figures).
pub const MIN_PARALLEL_INPUT: usize = 512 << 10;
/// How to decode: threads, window limit, and when threads pay.
#[derive(Clone, Debug)]
pub struct Parallel {
    /// Entropy workers; below 2 everything stays on the caller's thread.
    pub threads: usize,
    /// A frame whose window is larger is refused (zstd's `--memory`).
    pub window_limit: u64,
    /// Bytes of compressed blocks below which the input is decoded on the
    /// caller's thread ([`MIN_PARALLEL_INPUT`]; tests set 0).
    pub min_input: usize,
}

/// What [`Parallel::decode`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decoded {
    /// Bytes written.
    pub bytes: u64,
    /// Whether the pipeline ran (threads were started).
    pub pipelined: bool,
}

impl Parallel {
    /// `threads` workers, windows up to `window_limit` bytes.
    pub fn new(threads: usize, window_limit: u64) -> Self {
        Parallel {
            threads,
            window_limit,
            min_input: MIN_PARALLEL_INPUT,
        }
    }

    /// Whether [`Parallel::decode`] would start threads for `input`: two
    /// or more threads and at least `min_input` bytes of compressed
    /// blocks. It reads block headers only, and stops once it knows.
    pub fn pipelines(&self, input: &[u8]) -> bool {
        self.threads >= 2
            && compressed_bytes(input, self.window_limit, self.min_input) >= self.min_input
    }

    /// Decodes every frame of `input` into `writer`, skippable frames
    /// skipped. On an error the writer holds a prefix of the output, never
    /// all of it (see the module doc for which bytes).
    pub fn decode<W: Write>(
        &self,
        input: &[u8],
        writer: &mut W,
    ) -> Result<Decoded, StreamError<std::io::Error>> {
        self.decode_lent(Source::slice(input), writer, None)
    }

    /// [`Parallel::decode`], timing the pipeline's stages: where each
    /// spent its time working and waiting (see [`StageTimes`]), if the
    /// pipeline ran. For measuring the pipeline (`examples/pipeline.rs
    /// --stages`); the times cost a clock read at each hand-over.
    pub fn decode_timed<W: Write>(
        &self,
        input: &[u8],
        writer: &mut W,
    ) -> Result<(Decoded, Option<StageTimes>), StreamError<std::io::Error>> {
        let clock = Clock::new();
        let decoded = self.decode_lent(Source::slice(input), writer, Some(&clock))?;
        Ok((decoded, decoded.pipelined.then(|| clock.read())))
    }

    /// [`Parallel::decode`] of an input held whole by `source` (a slice
    /// or a mapped file): on this thread where threads would not pay,
    /// else through the pipeline.
    fn decode_lent<W: Write>(
        &self,
        source: Source<'_, io::Empty>,
        writer: &mut W,
        clock: Option<&Clock>,
    ) -> Result<Decoded, StreamError<std::io::Error>> {
        let input = source.lent();
        if !self.pipelines(input) {
            let bytes = decode_to(input, self.window_limit, |b| writer.write_all(b))?;
            return Ok(Decoded {
                bytes,
                pipelined: false,
            });
        }
        let bytes = pipeline(source, self.window_limit, self.threads, writer, clock)?;
        Ok(Decoded {
            bytes,
            pipelined: true,
        })
    }

    /// Decodes every frame of the mapped file `map` into `writer`, as
    /// [`Parallel::decode`] does a slice. On threads its pages are handed
    /// back as the walk leaves them behind, so that the memory they count
    /// for stays the ranges in flight whatever the file's size (decoded
    /// on this thread, where threads would not pay, it stays mapped
    /// whole). If the file shrank while it was read, nothing read from
    /// past its new end is written, and the decode fails with
    /// [`StreamError::Input`] (of kind `UnexpectedEof`).
    pub fn decode_mapped<W: Write>(
        &self,
        map: &MappedFile,
        writer: &mut W,
    ) -> Result<Decoded, StreamError<io::Error>> {
        // Every write asks first: bytes derived from a page of zeros
        // reach the writer only after the fault that mapped it marked the
        // mapping, or (the rest of a page the file was cut inside, which
        // does not fault) after the cut, which the file's size shows (the
        // stages hand on through channels).
        let decoded = self.decode_lent(
            Source::mapped(map),
            &mut ShrinkChecked { map, writer },
            None,
        );
        if map.shrank() {
            return Err(StreamError::Input(shrank_error()));
        }
        decoded
    }

    /// Decodes every frame read from `reader` into `writer`, as
    /// [`Parallel::decode`] does a slice, reading the input as the walk
    /// goes: it holds the blocks in flight and the window, whatever the
    /// input's length (see the module doc). An input that ends within
    /// [`Parallel::probe`] bytes is read whole and goes as
    /// [`Parallel::decode`] decides; a longer one always takes the
    /// pipeline, on at least one worker (a caller that wants it only
    /// where threads pay asks [`Parallel::pipelines`] about its first
    /// `probe` bytes). A read that fails stops it with
    /// [`StreamError::Input`].
    pub fn decode_reader<R: Read + Send, W: Write>(
        &self,
        reader: R,
        writer: &mut W,
    ) -> Result<Decoded, StreamError<io::Error>> {
        // Held to `Read`'s contract before the probe's read, the first.
        let mut reader = Checked(reader);
        let probe = self.probe();
        // At its size at once (the default's MiB): grown by doubling as it
        // was read, the buffers it went through were faulted in too. A
        // larger probe (a caller's `min_input`) grows as it is read, so a
        // short input never reserves it.
        let mut head = Vec::with_capacity(probe.min(1 << 20));
        (&mut reader)
            .take(probe as u64)
            .read_to_end(&mut head)
            .map_err(StreamError::Input)?;
        if head.len() < probe {
            return self.decode(&head, writer);
        }
        // The head is read again through the source, a read-ahead at a
        // time, rather than held as its first buffer: each of the first
        // ranges then copied the rest of it (most of a MiB) into a fresh
        // buffer, 3 MiB in all before the pipeline was under way, and
        // 200-700 more page faults a 64 MiB output.
        let bytes = pipeline(
            Source::new(Vec::new(), io::Cursor::new(head).chain(reader)),
            self.window_limit,
            self.threads.max(1),
            writer,
            None,
        )?;
        Ok(Decoded {
            bytes,
            pipelined: true,
        })
    }

    /// The first bytes [`Parallel::decode_reader`] reads before it
    /// decides: twice [`Parallel::min_input`], and at least 1 MiB; none on
    /// two threads or more with `min_input` 0, where there is nothing to
    /// decide (every input takes the pipeline), and reading a MiB first
    /// only delayed the pipeline's start (the copy and about 250 page
    /// faults, about a millisecond here).
    pub fn probe(&self) -> usize {
        if self.threads >= 2 && self.min_input == 0 {
            return 0;
        }
        self.min_input.saturating_mul(2).max(1 << 20)
    }
}

/// A writer that writes nothing once the mapped input shrank.
struct ShrinkChecked<'m, W> {
    map: &'m MappedFile,
    writer: &'m mut W,
}

impl<W: Write> Write for ShrinkChecked<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.map.shrank() {
            return Err(shrank_error());
        }
        self.writer.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// Bytes of compressed blocks in `input`, counted up to `enough`; a
/// header that does not parse ends the count (the decode will report it).
fn compressed_bytes(input: &[u8], window_limit: u64, enough: usize) -> usize {
    let mut total = 0;
    let mut offset = 0;
    let mut index = 0;
    while offset < input.len() && total < enough {
        let Ok(mut frame) = frame_start(input, offset, index, window_limit) else {
            break;
        };
        if let FrameKind::Zstd(header) = &frame.kind {
            let mut at = frame.range.end;
            loop {
                let Ok(block) = block_header(input, at, index, header.block_max()) else {
                    return total;
                };
                if block.kind == BlockKind::Compressed {
                    total += block.content.len();
                }
                at = block.content.end;
                if block.last || total >= enough {
                    break;
                }
            }
            if total >= enough || frame_end(input, &mut frame, at).is_err() {
                break;
            }
        }
        offset = frame.range.end;
        index += 1;
    }
    total
}

/// A unit of work, numbered in input order so the executor can put the
/// workers' results back in order.
struct Unit<'a> {
    seq: u64,
    /// The decoded blocks' buffers, taken from the shelf (see [`shelf`])
    /// when the entropy stage starts and put back once the blocks are
    /// executed.
    decoded: Vec<DecodedBlock>,
    /// The input from byte `base` on, at least to the end of the unit's
    /// last block (empty for units that are not blocks, unless lent). Its
    /// buffer, recycled, is the walker's credit: holding one is the
    /// walker's licence to send a unit, which bounds the units (and so
    /// the input and the decoded blocks) in flight.
    input: Bytes<'a>,
    base: usize,
    kind: UnitKind,
}

/// The input buffer a unit recycles (see [`Unit::input`]).
type Credit = Vec<u8>;

/// Decoded blocks' buffers, a range's each, made once for the pipeline:
/// one per worker and [`DECODED_AHEAD`] more. The entropy stage of a range
/// takes a set as it starts and the executor puts it back once the range
/// is executed, so a range waiting for a worker holds none, and the
/// buffers in use (their pages touched, warm in the cache) are used again
/// rather than new ones faulted in. Workers wait for a set before they
/// take a range, never with a range in hand: ranges are taken in order,
/// each with its set, so the range the executor waits for has one.
///
/// The walker stocks the shelf ([`Stock`]), with the buffers reserved for
/// the first frame's largest block, before it hands that frame on and
/// so before any other stage has work (pages reserved and not written
/// cost no memory). Reserved by the workers as each set was first used,
/// each of the 48 on two workers was a call that changes the process's
/// mappings: it waited for, and held up, every thread faulting pages in
/// while the writer faulted the ring in, and the stages slept at the
/// start. A later frame with larger blocks than the first (a short frame
/// first, then a long one) still grows them in the workers, as before.
fn shelf(sets: usize) -> (Sender<Vec<DecodedBlock>>, Receiver<Vec<DecodedBlock>>) {
    bounded(sets)
}

enum UnitKind {
    /// A zstd frame starts.
    FrameStart {
        window: u64,
        content_size: Option<u64>,
        has_checksum: bool,
    },
    /// Blocks of the current frame, in order, and the tables the first
    /// inherits. `fail` is the walker's error at the last block, reported
    /// if the worker's decode of it does not find one first.
    Blocks {
        blocks: Vec<Block>,
        state: EntropyState,
        fail: Option<Error>,
        /// After the worker: how many blocks decoded, and the error that
        /// stopped it.
        done: usize,
        error: Option<Error>,
    },
    /// The current frame ends: its stored checksum and where it is.
    FrameEnd {
        index: usize,
        end: usize,
        checksum: Option<u32>,
    },
    /// The walker stopped here.
    Fail(Error),
    /// A worker panicked on this unit: the executor stops quietly, and
    /// the panic reaches the caller (see [`Abandoned`]).
    Abandoned,
    /// Reading the input failed (taken once, by the executor).
    Unreadable(Option<io::Error>),
}

/// Runs the stages; the writer on this thread. `clock`, if given, times
/// them.
fn pipeline<R: Read + Send, W: Write>(
    mut source: Source<'_, R>,
    window_limit: u64,
    workers: usize,
    writer: &mut W,
    clock: Option<&Clock>,
) -> Result<u64, StreamError<std::io::Error>> {
    let in_flight = IN_FLIGHT_PER_WORKER * workers;
    let (credit_tx, credit_rx) = bounded::<Credit>(in_flight);
    // The input's buffers reserved now, for the largest range: grown as
    // ranges came, they were moved while the other stages faulted pages
    // in (see [`shelf`] for what that cost). A lent input needs none.
    source.make_room();
    source.in_flight(in_flight);
    for _ in 0..in_flight {
        credit_tx
            .send(Vec::with_capacity(source.range_room()))
            .expect("the receiver is here");
    }
    let (job_tx, job_rx) = bounded::<Unit>(in_flight);
    let (done_tx, done_rx) = unbounded::<Unit>();
    // Unbounded: the chunks in flight are bounded by the executor's ring
    // (it waits for their release before it writes over them).
    let (write_tx, write_rx) = unbounded::<ToWriter>();
    // Word of each chunk the writer let go of.
    let (released_tx, released_rx) = unbounded::<Released>();
    let sets = workers + DECODED_AHEAD;
    let (shelf_back, shelf) = shelf(sets);
    let stock = Stock::new(shelf_back.clone(), sets);
    // The caller's fault point, armed for its own pipelines only (tests
    // run side by side in one process).
    #[cfg(test)]
    let fault_from = tests::FAULT_FROM.get();
    std::thread::scope(|scope| {
        let mut stages =
            vec![scope.spawn(move || walk(source, window_limit, credit_rx, job_tx, stock))];
        for _ in 0..workers {
            let (jobs, done, shelf) = (job_rx.clone(), done_tx.clone(), shelf.clone());
            stages.push(scope.spawn(move || {
                #[cfg(test)]
                tests::FAULT_FROM.set(fault_from);
                work(jobs, done, shelf, clock)
            }));
        }
        drop(done_tx);
        stages.push(scope.spawn(move || {
            let shelf = (shelf_back, shelf);
            execute(
                job_rx,
                done_rx,
                credit_tx,
                shelf,
                write_tx,
                released_rx,
                clock,
            )
        }));
        // Returning drops the writer's receivers, which stops the others.
        let written = write(writer, write_rx, released_tx, clock);
        // Joined one by one, not left to the scope, whose wait ends when
        // each stage's function returns, before its thread has freed its
        // thread-locals and exited: joined, no thread of the pipeline
        // outlives the call (a leak check at the fuzz target's exit saw
        // those thread-locals). A stage's panic goes on as the scope's
        // would.
        for stage in stages {
            if let Err(panic) = stage.join() {
                std::panic::resume_unwind(panic);
            }
        }
        written
    })
}

/// A worker: the entropy stage of each range it is given.
fn work<'a>(
    jobs: Receiver<Unit<'a>>,
    done: Sender<Unit<'a>>,
    shelf: Receiver<Vec<DecodedBlock>>,
    clock: Option<&Clock>,
) {
    #[cfg(test)]
    tests::IN_WORKER.set(true);
    // A set of buffers first, then a range (see `shelf`); the shelf is
    // gone once the executor is and the walker has stocked it (which it
    // does before any stage can end, see `Stock`).
    while let Ok(decoded) = timed(clock, Stretch::WorkersWaitingForBuffers, || shelf.recv()) {
        let Ok(mut unit) = timed(clock, Stretch::WorkersWaitingForRanges, || jobs.recv()) else {
            return;
        };
        unit.decoded = decoded;
        let _abandoned = Abandoned {
            seq: unit.seq,
            done: &done,
        };
        timed(clock, Stretch::WorkersDecoding, || entropy(&mut unit));
        if done.send(unit).is_err() {
            return;
        }
    }
}

/// Word for the executor if a worker's entropy stage panics (a bug):
/// without it the executor would wait for that range for ever, and the
/// walker (for a credit) and the other workers (for a range) with it.
/// Told, the executor stops, the others stop with it, and the panic goes
/// on to the caller when the pipeline joins its threads.
struct Abandoned<'s, 'a> {
    seq: u64,
    done: &'s Sender<Unit<'a>>,
}

impl Drop for Abandoned<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = self.done.send(Unit {
                seq: self.seq,
                decoded: Vec::new(),
                input: Bytes::spare(Vec::new()),
                base: 0,
                kind: UnitKind::Abandoned,
            });
        }
    }
}

/// The entropy stage of `unit`'s blocks, if it has any.
fn entropy(unit: &mut Unit<'_>) {
    #[cfg(test)]
    tests::fault_point(unit.seq);
    let Unit {
        decoded,
        input,
        base,
        kind,
        ..
    } = unit;
    if let UnitKind::Blocks {
        blocks,
        state,
        fail,
        done: decoded_count,
        error,
    } = kind
    {
        // Grown, never shrunk: a shorter range (a frame's last) keeps the
        // buffers it does not use for the next range that needs them,
        // rather than freeing them and making them again.
        if decoded.len() < blocks.len() {
            decoded.resize_with(blocks.len(), DecodedBlock::default);
        }
        for (block, out) in blocks.iter().zip(decoded.iter_mut()) {
            let content = &input[block.content.start - *base..block.content.end - *base];
            if block.kind == BlockKind::Compressed
                && let Err(e) = decode_content(content, block, state, out)
            {
                *error = Some(e);
                break;
            }
            *decoded_count += 1;
        }
        // The walker's error applies only if every block decoded: an
        // error inside the block is the one a single thread reports.
        if error.is_none() {
            *error = fail.take();
        }
    }
}

#[cfg(test)]
mod tests;
