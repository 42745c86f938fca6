//! The executor stage: units back in input order, their blocks executed
//! through the window, the output handed on a buffer at a time.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use crossbeam::channel::{Receiver, Sender, TryRecvError};

use super::sink::{Chunk, ToHasher, ToWriter};
use super::{Credit, MIN_DRAIN, Unit, UnitKind, entropy};
use crate::entropy::DecodedBlock;
use crate::error::Error;
use crate::execute::Output;
use crate::frame::{BLOCK_SIZE_MAX, Block, BlockKind};
use crate::offsets::INITIAL_REPEATS;
use crate::source::Bytes;

/// The output the executor holds when it hands a buffer on, for a frame
/// of this window: the window, and as much again (at least
/// [`MIN_DRAIN`]) and a block, so the window copied across is at most
/// the bytes handed on.
fn hand_off_at(window: u64) -> usize {
    let keep = usize::try_from(window).unwrap_or(usize::MAX);
    keep.saturating_add(keep.max(MIN_DRAIN))
        .saturating_add(BLOCK_SIZE_MAX)
}

/// The largest output buffer allocated at a frame's start: windows up to
/// 128 MiB (`--long=27`, zstd's default limit) are reserved for at once.
const MAX_RESERVED: usize = 512 << 20;

/// The executor's state within a frame.
struct Current {
    start: u64,
    window: u64,
    content_size: Option<u64>,
    has_checksum: bool,
    repeats: [u32; 3],
}

/// Where the executor's output goes: the hasher, the writer, and the
/// pool the two give its buffers back through.
struct Downstream {
    hasher: Sender<ToHasher>,
    writer: Sender<ToWriter>,
    pool: Receiver<Vec<u8>>,
}

impl Downstream {
    /// Hands `out`'s bytes but the last `keep` downstream without copying
    /// them: the buffer they are in goes to the hasher and the writer, and
    /// the executor carries on in the other buffer, back from them, with
    /// only the window copied over. Two buffers in all, so waiting for the
    /// other one is what keeps the executor at most a buffer ahead of the
    /// writer. False when the hasher or the writer is gone.
    fn hand_on(&self, out: &mut Output, keep: usize, hashed: bool) -> bool {
        if out.len() <= keep {
            return true;
        }
        // An empty buffer is the writer's word that it stopped (see
        // `sink::write`): the buffers handed round are never empty (the
        // spare has a byte at least, and a buffer handed on held output).
        let Ok(fresh) = self.pool.recv() else {
            return false;
        };
        if fresh.is_empty() {
            return false;
        }
        let (buf, len) = out.hand_off(keep, fresh);
        let chunk = Arc::new(Chunk { buf, len });
        if hashed && self.hasher.send(ToHasher::Data(chunk.clone())).is_err() {
            return false;
        }
        self.writer.send(ToWriter::Data(chunk)).is_ok()
    }
}

/// What one unit's step says: go on (`Ok(true)`), stop quietly because a
/// later stage is gone (`Ok(false)`), or stop and tell the writer why.
type Step = Result<bool, ToWriter>;

/// The executor and what it holds between units.
struct Executor<'a> {
    jobs: Receiver<Unit<'a>>,
    done: Receiver<Unit<'a>>,
    credits: Sender<Credit>,
    /// Sets of decoded blocks' buffers: put back here, taken from there
    /// (see `super::shelf`).
    shelf: (Sender<Vec<DecodedBlock>>, Receiver<Vec<DecodedBlock>>),
    downstream: Downstream,
    out: Output,
    /// Units back from the workers before their turn, by number.
    pending: BTreeMap<u64, Unit<'a>>,
    next: u64,
    current: Option<Current>,
    /// The hasher was asked for the second output buffer.
    spare_asked: bool,
}

/// The executor: units back in order, executed through the window.
pub(super) fn execute<'a>(
    jobs: Receiver<Unit<'a>>,
    done: Receiver<Unit<'a>>,
    credits: Sender<Credit>,
    shelf: (Sender<Vec<DecodedBlock>>, Receiver<Vec<DecodedBlock>>),
    hasher: Sender<ToHasher>,
    writer: Sender<ToWriter>,
    pool: Receiver<Vec<u8>>,
) {
    Executor {
        jobs,
        done,
        credits,
        shelf,
        downstream: Downstream {
            hasher,
            writer,
            pool,
        },
        out: Output::new(),
        pending: BTreeMap::new(),
        next: 0,
        current: None,
        spare_asked: false,
    }
    .run();
}

impl<'a> Executor<'a> {
    fn run(mut self) {
        while let Some(mut unit) = self.next_unit() {
            let input = std::mem::replace(&mut unit.input, Bytes::Read(Vec::new()));
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
            let unit = match self.done.try_recv() {
                Ok(unit) => unit,
                Err(TryRecvError::Disconnected) => return None,
                // A set of buffers first, as a worker takes them.
                Err(TryRecvError::Empty) => match self.shelf.1.try_recv() {
                    Ok(decoded) => match self.jobs.try_recv() {
                        Ok(mut unit) => {
                            unit.decoded = decoded;
                            entropy(&mut unit);
                            unit
                        }
                        Err(_) => {
                            let _ = self.shelf.0.send(decoded);
                            self.done.recv().ok()?
                        }
                    },
                    Err(_) => self.done.recv().ok()?,
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
            } => Ok(self.frame_start(*window, *content_size, *has_checksum)),
            UnitKind::Blocks {
                blocks,
                done: decoded_count,
                error,
                ..
            } => {
                let blocks = blocks.iter().zip(decoded.iter_mut()).take(*decoded_count);
                match (self.blocks(blocks, input, *base), error.take()) {
                    (Ok(true), Some(e)) => Err(e),
                    (other, _) => other,
                }
                .map_err(ToWriter::Fail)
            }
            UnitKind::FrameEnd {
                index,
                end,
                checksum,
            } => self.frame_end(*index, *end, *checksum),
            UnitKind::Fail(e) => Err(ToWriter::Fail(e.clone())),
            UnitKind::Unreadable(e) => {
                Err(ToWriter::Unreadable(e.take().unwrap_or_else(|| {
                    io::Error::other("reading the input failed")
                })))
            }
        }
    }

    /// False when the hasher is gone.
    fn frame_start(&mut self, window: u64, content_size: Option<u64>, has_checksum: bool) -> bool {
        // The most the buffer holds before it is handed on, allocated
        // once (zeroed, so its pages are touched only as written), rather
        // than grown by doubling, each copy faulting its pages in afresh;
        // a window so large that this would be gigabytes grows instead.
        let most = hand_off_at(window).saturating_add(BLOCK_SIZE_MAX);
        if most <= MAX_RESERVED {
            self.out.reserve(most);
        }
        // The second buffer is made once, as large as the first is now,
        // off this thread (a later frame's larger window grows it here).
        if !self.spare_asked {
            self.spare_asked = true;
            let size = self.out.hand_off_size();
            if self.downstream.hasher.send(ToHasher::Spare(size)).is_err() {
                return false;
            }
        }
        self.current = Some(Current {
            start: self.out.position(),
            window,
            content_size,
            has_checksum,
            repeats: INITIAL_REPEATS,
        });
        true
    }

    /// Executes the blocks a worker decoded, in order; `Ok(false)` when a
    /// later stage is gone.
    fn blocks<'b>(
        &mut self,
        blocks: impl Iterator<Item = (&'b Block, &'b mut DecodedBlock)>,
        input: &[u8],
        base: usize,
    ) -> Result<bool, Error> {
        let content = |block: &Block| &input[block.content.start - base..block.content.end - base];
        let frame = self.current.as_mut().expect("blocks come inside a frame");
        let keep = usize::try_from(frame.window).unwrap_or(usize::MAX);
        let threshold = hand_off_at(frame.window);
        for (block, decoded) in blocks {
            match block.kind {
                BlockKind::Raw => self.out.push_raw(content(block)),
                BlockKind::Rle => self
                    .out
                    .push_rle(content(block)[0], block.known_size.unwrap_or(0)),
                BlockKind::Compressed => {
                    self.out.execute_resolving(
                        decoded,
                        &mut frame.repeats,
                        block,
                        frame.start,
                        frame.window,
                    )?;
                }
            }
            if self.out.len() >= threshold
                && !self
                    .downstream
                    .hand_on(&mut self.out, keep, frame.has_checksum)
            {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn frame_end(&mut self, index: usize, end: usize, checksum: Option<u32>) -> Step {
        let frame = self.current.take().expect("a frame ends after it starts");
        let produced = self.out.position() - frame.start;
        if let Some(declared) = frame.content_size.filter(|&d| d != produced) {
            return Err(ToWriter::Fail(Error::ContentSize {
                frame: index,
                offset: end,
                declared,
                produced,
            }));
        }
        let down = &self.downstream;
        let mut alive = down.hand_on(&mut self.out, 0, frame.has_checksum);
        if let (true, Some(stored)) = (alive, checksum) {
            alive = down
                .hasher
                .send(ToHasher::End {
                    index,
                    offset: end - 4,
                    stored,
                })
                .is_ok()
                && down.writer.send(ToWriter::Verify).is_ok();
        }
        Ok(alive)
    }
}
