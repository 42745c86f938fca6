//! The split route's finisher stage: segments back in input order, each
//! made final once the one before it is (its patches applied with the
//! bytes before it and the repeat offsets it inherits, its errors placed
//! in order), then handed to the hasher and the writer without a copy.

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use crossbeam::channel::{Receiver, Sender};

use super::segment::{Halt, Segment};
use super::sink::{Chunk, ToHasher, ToWriter};
use super::{Credit, Unit, UnitKind};
use crate::error::Error;
use crate::frame::Block;
use crate::offsets::INITIAL_REPEATS;

/// The finisher's state within a frame.
struct Current {
    window: u64,
    content_size: Option<u64>,
    has_checksum: bool,
    /// Bytes of the frame made final.
    produced: u64,
    repeats: [u32; 3],
    /// The frame's last bytes made final, at least the window's worth (or
    /// all the frame's) and at most twice that and a segment: where a
    /// patch copies from before its segment. Copied out of the segments,
    /// not held in them, so the history is the window whatever the
    /// segments' sizes (blocks of a byte each would hold a segment's
    /// buffer a byte).
    history: Vec<u8>,
}

/// The finisher's channels and what it holds between units.
struct Finisher {
    done: Receiver<Unit>,
    credits: Sender<Credit>,
    hasher: Sender<ToHasher>,
    writer: Sender<ToWriter>,
    pending: BTreeMap<u64, Unit>,
    next: u64,
    current: Option<Current>,
}

/// One unit's outcome: go on (`Ok(true)`), stop quietly because a later
/// stage is gone (`Ok(false)`), or stop and tell the writer why.
type Step = Result<bool, ToWriter>;

/// The finisher: units back in order, segments made final.
pub(super) fn finish(
    done: Receiver<Unit>,
    credits: Sender<Credit>,
    hasher: Sender<ToHasher>,
    writer: Sender<ToWriter>,
) {
    let mut f = Finisher {
        done,
        credits,
        hasher,
        writer,
        pending: BTreeMap::new(),
        next: 0,
        current: None,
    };
    while let Some(mut unit) = f.next_unit() {
        let step = f.step(&mut unit);
        match step {
            Ok(true) => {}
            Ok(false) => break,
            Err(stop) => {
                let _ = f.writer.send(stop);
                break;
            }
        }
        let _ = f.credits.send((unit.decoded, unit.input));
    }
}

impl Finisher {
    /// The next unit in input order; `None` once the workers are done.
    fn next_unit(&mut self) -> Option<Unit> {
        loop {
            if let Some(unit) = self.pending.remove(&self.next) {
                self.next += 1;
                return Some(unit);
            }
            let unit = self.done.recv().ok()?;
            self.pending.insert(unit.seq, unit);
        }
    }

    fn step(&mut self, unit: &mut Unit) -> Step {
        match &mut unit.kind {
            UnitKind::FrameStart {
                window,
                content_size,
                has_checksum,
            } => {
                self.current = Some(Current {
                    window: *window,
                    content_size: *content_size,
                    has_checksum: *has_checksum,
                    produced: 0,
                    repeats: INITIAL_REPEATS,
                    history: Vec::new(),
                });
                Ok(true)
            }
            UnitKind::Blocks {
                blocks, segment, ..
            } => {
                let segment = segment.take().expect("a worker ran every range");
                self.segment(blocks, *segment)
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

    /// Makes `segment` final and hands it on.
    fn segment(&mut self, blocks: &[Block], mut segment: Segment) -> Step {
        let frame = self.current.as_mut().expect("blocks come inside a frame");
        let (window, produced) = (frame.window, frame.produced);
        let offset_error = |block: usize, sequence: usize, distance: u32, at: usize| {
            let available = (produced + at as u64).min(window);
            ToWriter::Fail(Error::OffsetOutOfRange {
                frame: blocks[block].frame,
                offset: blocks[block].header,
                sequence,
                distance: u64::from(distance),
                available,
            })
        };
        for patch in &segment.patches {
            let distance = patch.distance.resolve(&frame.repeats);
            let available = (frame.produced + patch.dst as u64).min(window);
            if u64::from(distance).wrapping_sub(1) >= available {
                return Err(offset_error(
                    patch.block,
                    patch.sequence,
                    distance,
                    patch.dst,
                ));
            }
            copy_patch(
                &mut segment.buf,
                patch.dst,
                patch.len,
                distance as usize,
                &frame.history,
            );
        }
        match segment.halt.take() {
            None => {}
            Some(Halt::Error(e)) => return Err(ToWriter::Fail(e)),
            Some(Halt::Offset {
                block,
                sequence,
                distance,
                at,
            }) => return Err(offset_error(block, sequence, distance, at)),
        }
        frame.repeats = segment.repeats.map(|r| r.resolve(&frame.repeats));
        frame.produced += segment.len as u64;
        keep_last(
            &mut frame.history,
            &segment.buf[..segment.len],
            usize::try_from(window).unwrap_or(usize::MAX),
        );
        let chunk = Arc::new(Chunk {
            buf: segment.buf,
            len: segment.len,
        });
        if frame.has_checksum && self.hasher.send(ToHasher::Data(chunk.clone())).is_err() {
            return Ok(false);
        }
        if self.writer.send(ToWriter::Data(chunk)).is_err() {
            return Ok(false);
        }
        Ok(true)
    }

    fn frame_end(&mut self, index: usize, end: usize, checksum: Option<u32>) -> Step {
        let frame = self.current.as_ref().expect("a frame ends after it starts");
        let (produced, has_checksum) = (frame.produced, frame.has_checksum);
        if let Some(declared) = frame.content_size.filter(|&d| d != produced) {
            return Err(ToWriter::Fail(Error::ContentSize {
                frame: index,
                offset: end,
                declared,
                produced,
            }));
        }
        self.current = None;
        if let (true, Some(stored)) = (has_checksum, checksum) {
            let told = self
                .hasher
                .send(ToHasher::End {
                    index,
                    offset: end - 4,
                    stored,
                })
                .is_ok()
                && self.writer.send(ToWriter::Verify).is_ok();
            return Ok(told);
        }
        Ok(true)
    }
}

/// Appends `bytes` to `history`, which keeps at least the last `window`
/// bytes: it is cut back to the window once it holds the window twice
/// (or the window and [`MIN_KEPT`]), so each byte kept is moved at most
/// once per window appended.
fn keep_last(history: &mut Vec<u8>, bytes: &[u8], window: usize) {
    if bytes.len() >= window {
        history.clear();
        history.extend_from_slice(&bytes[bytes.len() - window..]);
        return;
    }
    history.extend_from_slice(bytes);
    if history.len() > window && history.len() - window >= window.max(MIN_KEPT) {
        history.drain(..history.len() - window);
    }
}

/// See [`keep_last`]: a small window is not cut back at every segment.
const MIN_KEPT: usize = 1 << 20;

/// Executes one deferred match: `len` bytes at `dst` in `buf` (a segment)
/// copied from `distance` back, from `history` (the bytes just before the
/// segment) where the source lies before the segment and from `buf`
/// itself after, overlapping as a match does (a distance under the length
/// repeats a pattern). Exact: nothing past the match is written, since
/// the bytes after it are final already. The caller checked that the
/// distance reaches no further than the history.
fn copy_patch(buf: &mut [u8], dst: usize, len: usize, distance: usize, history: &[u8]) {
    let mut done = 0;
    if distance > dst {
        // The part before the segment: `back` bytes before its start.
        let back = distance - dst;
        let n = len.min(back);
        let from = history.len() - back;
        buf[dst..dst + n].copy_from_slice(&history[from..from + n]);
        done = n;
    }
    // The rest from the segment, in pieces no longer than the distance
    // so each reads only bytes already written; the pieces double once
    // a whole period is in place.
    let to = dst + done;
    let n = len - done;
    if n == 0 {
        return;
    }
    let src = to - distance;
    let mut copied = 0;
    let mut piece = distance;
    while copied < n {
        let k = piece.min(n - copied);
        buf.copy_within(src..src + k, to + copied);
        copied += k;
        piece = to + copied - src;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format's match, a byte at a time, over the history and `buf`
    /// as one output.
    fn reference(before: &[u8], buf: &[u8], dst: usize, len: usize, distance: usize) -> Vec<u8> {
        let mut all = before.to_vec();
        all.extend_from_slice(&buf[..dst]);
        for _ in 0..len {
            all.push(all[all.len() - distance]);
        }
        all.extend_from_slice(&buf[dst + len..]);
        all[before.len()..].to_vec()
    }

    #[test]
    fn patches_copy_as_a_byte_loop_does_from_the_history_and_the_segment() {
        let before = b"abcdefghijklm";
        let segment: Vec<u8> = (0..40u8).map(|i| b'A' + i).collect();
        for dst in 0..20 {
            for len in 0..20 {
                for distance in 1..=(dst + before.len()) {
                    let mut buf = segment.clone();
                    copy_patch(&mut buf, dst, len, distance, before);
                    assert_eq!(
                        buf,
                        reference(before, &segment, dst, len, distance),
                        "dst {dst} len {len} distance {distance}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_history_keeps_the_last_window_and_at_most_twice_it() {
        let window = 3 << 20;
        let mut history = Vec::new();
        let mut all = Vec::new();
        // Segments of a byte, of a few KiB and longer than the window.
        let sizes = [1, 5000, 1, 1 << 20, 7, window + 5, 3, 1 << 21, 1 << 21, 1];
        for (i, &n) in sizes.iter().enumerate() {
            let bytes: Vec<u8> = (0..n).map(|j| (i * 31 + j * 7) as u8).collect();
            all.extend_from_slice(&bytes);
            keep_last(&mut history, &bytes, window);
            let kept = all.len().min(window);
            assert!(history.len() >= kept && history.len() <= 2 * window);
            assert_eq!(history[history.len() - kept..], all[all.len() - kept..]);
        }
    }
}
