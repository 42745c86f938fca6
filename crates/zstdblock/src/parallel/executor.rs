//! The executor stage: units back in input order, their blocks executed
//! through the window, and the output handed on a buffer at a time to
//! the writer, which hashes it (each frame's XXH64) and checks each
//! frame's checksum before the frame's last bytes go on (see `sink`).
//!
//! The executor is the pipeline's bound: the one stage that cannot run
//! on two cores. So what can go elsewhere does: the hashing (5 ms of a
//! 64 MiB output, an eighth of the executor's time on a `-19` file) and
//! the first faults of the ring's pages (see [`RingOutput::ahead`]) are
//! the writer's.

use std::collections::BTreeMap;
use std::io;

use crossbeam::channel::{Receiver, Sender, TryRecvError};

use super::ring::{CHUNK, RingOutput};
use super::sink::{Released, ToWriter};
use super::stages::{Clock, Stretch, timed, timed_with_cpu};
use super::{Credit, Unit, UnitKind, entropy};
use crate::StoredChecksum;
use crate::entropy::DecodedBlock;
use crate::error::Error;
use crate::frame::{BLOCK_SIZE_MAX, Block, BlockKind};
use crate::offsets::INITIAL_REPEATS;
use crate::source::Bytes;

/// The executor's state within a frame.
struct Current {
    content_size: Option<u64>,
    repeats: [u32; 3],
}

/// Where the executor's output goes: the writer, and word from it of
/// the chunks it let go of.
struct Downstream {
    writer: Sender<ToWriter>,
    released: Receiver<Released>,
}

impl Downstream {
    /// Hands the bytes of `out` not yet handed on but the last `hold` to
    /// the writer, if there are at least `min` of them (see
    /// [`RingOutput::take`]). The writer reads them in place. False when
    /// the writer is gone.
    fn hand_on(&self, out: &mut RingOutput, min: usize, hold: usize) -> bool {
        self.take_released(out)
            && out
                .take(min, hold)
                .is_none_or(|chunk| self.writer.send(ToWriter::Data(chunk)).is_ok())
    }

    /// Asks the writer to fault in the ring ahead of `out`, if the
    /// stretch asked before runs out soon (see [`RingOutput::ahead`]).
    /// False when the writer is gone.
    fn warm(&self, out: &mut RingOutput) -> bool {
        out.ahead()
            .is_none_or(|ahead| self.writer.send(ToWriter::Ahead(ahead)).is_ok())
    }

    /// Counts the chunks released since last asked, without waiting, so
    /// the record of chunks in flight stays short when the executor never
    /// has to wait (many small frames). False when the writer stopped.
    fn take_released(&self, out: &mut RingOutput) -> bool {
        loop {
            match self.released.try_recv() {
                Ok(Released::Chunk) => out.release_oldest(),
                Ok(Released::Stopped) => return false,
                Err(_) => return true,
            }
        }
    }

    /// Waits until `size` more bytes can be written without reaching a
    /// chunk the writer still holds. This is what keeps the executor at
    /// most the ring's lag ahead of the writer. False when the writer
    /// stopped.
    fn wait_for_room(&self, out: &mut RingOutput, size: usize) -> bool {
        while out.blocked(size) {
            match self.released.recv() {
                Ok(Released::Chunk) => out.release_oldest(),
                Ok(Released::Stopped) | Err(_) => return false,
            }
        }
        true
    }
}

/// What one unit's step says: go on (`Ok(true)`), stop quietly because a
/// later stage is gone (`Ok(false)`), or stop and tell the writer why.
type Step = Result<bool, ToWriter>;

/// The executor and what it holds between units.
struct Executor<'a, 'c> {
    jobs: Receiver<Unit<'a>>,
    done: Receiver<Unit<'a>>,
    credits: Sender<Credit>,
    /// Sets of decoded blocks' buffers: put back here, taken from there
    /// (see `super::shelf`).
    shelf: (Sender<Vec<DecodedBlock>>, Receiver<Vec<DecodedBlock>>),
    downstream: Downstream,
    /// Made at the first frame's start, for its window; it grows when a
    /// frame's history outgrows it.
    out: Option<RingOutput>,
    /// Units back from the workers before their turn, by number.
    pending: BTreeMap<u64, Unit<'a>>,
    next: u64,
    current: Option<Current>,
    /// Times the stages, if the decode is timed.
    clock: Option<&'c Clock>,
}

/// The executor: units back in order, executed through the window.
pub(super) fn execute<'a>(
    jobs: Receiver<Unit<'a>>,
    done: Receiver<Unit<'a>>,
    credits: Sender<Credit>,
    shelf: (Sender<Vec<DecodedBlock>>, Receiver<Vec<DecodedBlock>>),
    writer: Sender<ToWriter>,
    released: Receiver<Released>,
    clock: Option<&Clock>,
) {
    Executor {
        jobs,
        done,
        credits,
        shelf,
        downstream: Downstream { writer, released },
        out: None,
        pending: BTreeMap::new(),
        next: 0,
        current: None,
        clock,
    }
    .run();
}

impl<'a> Executor<'a, '_> {
    fn run(mut self) {
        while let Some(mut unit) = self.next_unit() {
            let input = std::mem::replace(&mut unit.input, Bytes::spare(Vec::new()));
            match self.step(&mut unit, &input) {
                Ok(true) => {}
                Ok(false) => return,
                Err(stop) => {
                    let _ = self.downstream.writer.send(stop);
                    return;
                }
            }
            // The input buffer goes back to the walker as its next
            // credit (the walker may be gone already, which is fine), the
            // decoded blocks' to the shelf, which has room for every set.
            let _ = self.credits.send(input.into_spare());
            let _ = self.shelf.0.send(unit.decoded);
        }
    }

    /// The next unit in input order; `None` once every worker and the
    /// walker are done.
    fn next_unit(&mut self) -> Option<Unit<'a>> {
        loop {
            if let Some(unit) = self.pending.remove(&self.next) {
                self.next += 1;
                return Some(unit);
            }
            // The next unit is not back: take a result, or else a range no
            // worker has started and decode it here, rather than sleep
            // while work waits (on a busy machine a worker may wait long
            // for a time slice); sleep only when every unit is taken.
            let clock = self.clock;
            let wait = || {
                timed(clock, Stretch::ExecutorWaitingForRanges, || {
                    self.done.recv()
                })
            };
            let unit = match self.done.try_recv() {
                Ok(unit) => unit,
                Err(TryRecvError::Disconnected) => return None,
                // A set of buffers first, as a worker takes them.
                Err(TryRecvError::Empty) => match self.shelf.1.try_recv() {
                    Ok(decoded) => match self.jobs.try_recv() {
                        Ok(mut unit) => {
                            unit.decoded = decoded;
                            timed(clock, Stretch::ExecutorDecoding, || entropy(&mut unit));
                            unit
                        }
                        Err(_) => {
                            let _ = self.shelf.0.send(decoded);
                            wait().ok()?
                        }
                    },
                    Err(_) => wait().ok()?,
                },
            };
            self.pending.insert(unit.seq, unit);
        }
    }

    fn step(&mut self, unit: &mut Unit<'a>, input: &[u8]) -> Step {
        let Unit {
            decoded,
            base,
            kind,
            ..
        } = unit;
        match kind {
            UnitKind::FrameStart {
                window,
                content_size,
                has_checksum,
            } => self.frame_start(*window, *content_size, *has_checksum),
            UnitKind::Blocks {
                blocks,
                done: decoded_count,
                error,
                ..
            } => {
                let blocks = blocks.iter().zip(decoded.iter_mut()).take(*decoded_count);
                if let Some(clock) = self.clock {
                    clock.first_execution();
                }
                let clock = self.clock;
                let executed =
                    timed_with_cpu(clock, Stretch::Executing, Stretch::ExecutingCpu, || {
                        self.blocks(blocks, input, *base)
                    });
                match (executed, error.take()) {
                    (Ok(true), Some(e)) => Err(ToWriter::Fail(e)),
                    (other, _) => other,
                }
            }
            UnitKind::FrameEnd {
                index,
                end,
                checksum,
            } => self.frame_end(*index, *end, *checksum),
            UnitKind::Fail(e) => Err(ToWriter::Fail(e.clone())),
            UnitKind::Abandoned => Ok(false),
            UnitKind::Unreadable(e) => {
                Err(ToWriter::Unreadable(e.take().unwrap_or_else(|| {
                    io::Error::other("reading the input failed")
                })))
            }
        }
    }

    /// A frame starts: the output made at the first frame, for its
    /// window and size, serves every later one (growing as a frame's
    /// history needs; see `ring` for the first frame's own memory).
    fn frame_start(&mut self, window: u64, content_size: Option<u64>, has_checksum: bool) -> Step {
        let window = usize::try_from(window).unwrap_or(usize::MAX);
        let out = match &mut self.out {
            Some(out) => {
                out.start_frame(window, content_size)
                    .map_err(ToWriter::Memory)?;
                out
            }
            held => held.insert(RingOutput::new(window, content_size).map_err(ToWriter::Memory)?),
        };
        self.current = Some(Current {
            content_size,
            repeats: INITIAL_REPEATS,
        });
        // The writer, idle until the first chunk, faults a new ring in
        // while the first ranges decode.
        let down = &self.downstream;
        Ok(down.warm(out)
            && down
                .writer
                .send(ToWriter::FrameStart { has_checksum })
                .is_ok())
    }

    /// Executes the blocks a worker decoded, in order; `Ok(false)` when a
    /// later stage is gone.
    fn blocks<'b>(
        &mut self,
        blocks: impl Iterator<Item = (&'b Block, &'b mut DecodedBlock)>,
        input: &[u8],
        base: usize,
    ) -> Result<bool, ToWriter> {
        let content = |block: &Block| &input[block.content.start - base..block.content.end - base];
        let frame = self.current.as_mut().expect("blocks come inside a frame");
        let out = self.out.as_mut().expect("a frame has a ring");
        for (block, decoded) in blocks {
            let size = match block.kind {
                BlockKind::Raw => block.content.len(),
                BlockKind::Rle => block.known_size.unwrap_or(0),
                BlockKind::Compressed => decoded.output_size().min(BLOCK_SIZE_MAX),
            };
            let room = timed(self.clock, Stretch::ExecutorWaitingForWriter, || {
                self.downstream.wait_for_room(out, size)
            });
            if !room {
                return Ok(false);
            }
            out.room(size).map_err(ToWriter::Memory)?;
            if !self.downstream.warm(out) {
                return Ok(false);
            }
            match block.kind {
                BlockKind::Raw => out.push_raw(content(block)),
                BlockKind::Rle => out.push_rle(content(block)[0], size),
                BlockKind::Compressed => {
                    out.execute_resolving(decoded, &mut frame.repeats, block)
                        .map_err(ToWriter::Fail)?;
                }
            }
            if !self.downstream.hand_on(out, CHUNK, 1) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn frame_end(&mut self, index: usize, end: usize, checksum: Option<u32>) -> Step {
        let frame = self.current.take().expect("a frame ends after it starts");
        let out = self.out.as_mut().expect("a frame has a ring");
        let produced = out.frame_produced();
        if let Some(declared) = frame.content_size.filter(|&d| d != produced) {
            return Err(ToWriter::Fail(Error::ContentSize {
                frame: index,
                offset: end,
                declared,
                produced,
            }));
        }
        // The frame's last byte (held back until now) goes with its
        // checksum: the writer writes it only if the checksum holds, so a
        // wrong checksum leaves the sink without the whole frame.
        let down = &self.downstream;
        if !down.take_released(out) {
            return Ok(false);
        }
        let end = ToWriter::FrameEnd {
            last: out.take(0, 0),
            check: checksum.map(|stored| StoredChecksum {
                frame: index,
                end,
                stored,
            }),
        };
        Ok(down.writer.send(end).is_ok())
    }
}
