//! The walker: the pipeline's first stage, on its own thread. It reads
//! the frames' headers and block headers in order, skips each compressed
//! block's content but for its tables, and hands the blocks on in ranges,
//! each with the tables its first block inherits and the input it spans.

use std::io::Read;

use crossbeam::channel::{Receiver, Sender};

use super::{Credit, RANGE_BLOCKS, RANGE_DECODED, Unit, UnitKind};
use crate::entropy::{DecodedBlock, EntropyState, skip_content};
use crate::error::Error;
use crate::frame::{BlockKind, FrameKind};
use crate::source::{Bytes, Source, Stop};

/// The walker's duty to stock the shelf once: at the first frame's
/// header, or, if it stops before one, when it is dropped (with sets
/// reserved for no block), so no worker or executor waits for a set that
/// never comes. Until then no stage can end on its own: the workers and
/// the executor wait for the walker's first unit.
pub(super) struct Stock {
    shelf: Option<Sender<Vec<DecodedBlock>>>,
    sets: usize,
}

impl Stock {
    /// A duty to stock `shelf` with `sets` sets.
    pub(super) fn new(shelf: Sender<Vec<DecodedBlock>>, sets: usize) -> Self {
        Stock {
            shelf: Some(shelf),
            sets,
        }
    }

    /// Puts the sets on the shelf, each block's buffers reserved for
    /// `block_max` bytes, unless that was done.
    fn fill(&mut self, block_max: usize) {
        let Some(shelf) = self.shelf.take() else {
            return;
        };
        for _ in 0..self.sets {
            let set = (0..RANGE_BLOCKS)
                .map(|_| {
                    let mut decoded = DecodedBlock::default();
                    decoded.make_room(block_max);
                    decoded
                })
                .collect();
            // The shelf has room for every set; a stage gone is not the
            // walker's to report.
            let _ = shelf.send(set);
        }
    }
}

impl Drop for Stock {
    fn drop(&mut self) {
        self.fill(0);
    }
}

/// The walker: headers in order, ranges of blocks with their inherited
/// tables and their bytes, read from `source` as it goes. Stops when it
/// fails or when the executor is gone.
pub(super) fn walk<'a, R: Read>(
    mut source: Source<'a, R>,
    window_limit: u64,
    credits: Receiver<Credit>,
    jobs: Sender<Unit<'a>>,
    mut stock: Stock,
) {
    let mut seq = 0;
    // Sends a unit once a credit is free, with the input held before
    // `upto` if given; false when downstream is gone.
    let mut send = |source: &mut Source<'a, R>, kind: UnitKind, upto: Option<usize>| -> bool {
        let Ok(spare) = credits.recv() else {
            return false;
        };
        let (input, base) = match upto {
            Some(at) => source.split_off(at, spare),
            None => (Bytes::spare(spare), 0),
        };
        let unit = Unit {
            seq,
            decoded: Vec::new(),
            input,
            base,
            kind,
        };
        seq += 1;
        jobs.send(unit).is_ok()
    };
    let fail = |stop: Stop| match stop {
        Stop::Decode(e) => UnitKind::Fail(e),
        Stop::Read(e) => UnitKind::Unreadable(Some(e)),
    };
    let mut offset = 0;
    let mut index = 0;
    loop {
        match source.ends_at(offset) {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                send(&mut source, fail(e), None);
                return;
            }
        }
        let mut frame = match source.frame_start(offset, index, window_limit) {
            Ok(frame) => frame,
            Err(e) => {
                send(&mut source, fail(e), None);
                return;
            }
        };
        if let FrameKind::Zstd(header) = frame.kind.clone() {
            if header.dictionary_id != 0 {
                let e = Error::NeedsDictionary {
                    frame: index,
                    offset,
                    dictionary_id: header.dictionary_id,
                };
                send(&mut source, UnitKind::Fail(e), None);
                return;
            }
            // Before the frame goes on, so that these reservations do not
            // wait for the writer faulting in the ring the executor makes
            // for it (see [`super::shelf`]).
            stock.fill(header.block_max());
            let start = UnitKind::FrameStart {
                window: header.window_size,
                content_size: header.content_size,
                has_checksum: header.has_checksum,
            };
            if !send(&mut source, start, None) {
                return;
            }
            let mut state = EntropyState::default();
            let mut at = frame.range.end;
            let mut last = false;
            while !last {
                let mut blocks = Vec::with_capacity(RANGE_BLOCKS);
                let inherited = state.clone();
                let mut stop = None;
                let mut decoded = 0usize;
                while blocks.len() < RANGE_BLOCKS && decoded < RANGE_DECODED && !last {
                    let block = match source.block(at, index, header.block_max()) {
                        Ok(block) => block,
                        Err(e) => {
                            stop = Some(e);
                            break;
                        }
                    };
                    at = block.content.end;
                    last = block.last;
                    // Only the tables: the worker decodes the rest.
                    let skipped = match block.kind {
                        BlockKind::Compressed => {
                            skip_content(source.content(&block), &block, &mut state)
                        }
                        _ => Ok(0),
                    };
                    if let Ok(bytes) = &skipped {
                        decoded = decoded.saturating_add(*bytes);
                    }
                    blocks.push(block);
                    if let Err(e) = skipped {
                        stop = Some(Stop::Decode(e));
                        break;
                    }
                }
                // A read that fails goes after the blocks read whole.
                let (fail, unreadable) = match stop {
                    None => (None, None),
                    Some(Stop::Decode(e)) => (Some(e), None),
                    Some(Stop::Read(e)) => (None, Some(e)),
                };
                let failed = fail.is_some();
                let range = UnitKind::Blocks {
                    blocks,
                    state: inherited,
                    fail,
                    done: 0,
                    error: None,
                };
                if !send(&mut source, range, Some(at)) || failed {
                    return;
                }
                if let Some(e) = unreadable {
                    send(&mut source, UnitKind::Unreadable(Some(e)), None);
                    return;
                }
            }
            if let Err(e) = source.frame_end(&mut frame, at) {
                send(&mut source, fail(e), None);
                return;
            }
            let end = UnitKind::FrameEnd {
                index,
                end: frame.range.end,
                checksum: frame.checksum,
            };
            if !send(&mut source, end, None) {
                return;
            }
        }
        offset = frame.range.end;
        index += 1;
    }
}
