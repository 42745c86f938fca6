//! The split route's finisher stage: segments back in input order, each
//! made final once the one before it is (its patches applied with the
//! bytes before it and the repeat offsets it inherits, its errors placed
//! in order), then handed to the hasher and the writer without a copy.

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::sync::Arc;

use crossbeam::channel::{Receiver, Sender};

use super::segment::{Halt, Segment};
use super::sink::{Chunk, ToHasher, ToWriter, recycle};
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
    /// The frame's final segments that a match may still reach, oldest
    /// first, each with its offset in the frame.
    history: VecDeque<(u64, Arc<Chunk>)>,
}

/// Where the finisher's output goes, and where spent buffers go back.
struct Finisher {
    done: Receiver<Unit>,
    credits: Sender<Credit>,
    hasher: Sender<ToHasher>,
    writer: Sender<ToWriter>,
    pool: Sender<Vec<u8>>,
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
    pool: Sender<Vec<u8>>,
) {
    let mut f = Finisher {
        done,
        credits,
        hasher,
        writer,
        pool,
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
    f.end_frame();
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

    /// Lets go of the frame's history, its buffers back to the workers
    /// once the hasher and the writer are done with them.
    fn end_frame(&mut self) {
        if let Some(current) = self.current.take() {
            for (_, chunk) in current.history {
                recycle(chunk, &self.pool);
            }
        }
    }

    fn step(&mut self, unit: &mut Unit) -> Step {
        match &mut unit.kind {
            UnitKind::FrameStart {
                window,
                content_size,
                has_checksum,
            } => {
                self.end_frame();
                self.current = Some(Current {
                    window: *window,
                    content_size: *content_size,
                    has_checksum: *has_checksum,
                    produced: 0,
                    repeats: INITIAL_REPEATS,
                    history: VecDeque::new(),
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
                frame.produced,
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
        let start = frame.produced;
        frame.produced += segment.len as u64;
        let chunk = Arc::new(Chunk {
            buf: segment.buf,
            len: segment.len,
        });
        if frame.has_checksum && self.hasher.send(ToHasher::Data(chunk.clone())).is_err() {
            return Ok(false);
        }
        if self.writer.send(ToWriter::Data(chunk.clone())).is_err() {
            return Ok(false);
        }
        frame.history.push_back((start, chunk));
        // A segment wholly a window or more behind the frame's end is
        // reached by no later match.
        while let Some((at, front)) = frame.history.front()
            && at + front.len as u64 + window <= frame.produced
        {
            let (_, chunk) = frame.history.pop_front().expect("just seen");
            recycle(chunk, &self.pool);
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
        self.end_frame();
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

/// Executes one deferred match: `len` bytes at `dst` in `buf` (a segment
/// that starts at `start` in its frame) copied from `distance` back, from
/// the frame's earlier segments in `history` where the source lies before
/// the segment and from `buf` itself after, overlapping as a match does
/// (a distance under the length repeats a pattern). Exact: nothing past
/// the match is written, since the bytes after it are final already.
fn copy_patch(
    buf: &mut [u8],
    dst: usize,
    len: usize,
    distance: usize,
    start: u64,
    history: &VecDeque<(u64, Arc<Chunk>)>,
) {
    let mut done = 0;
    // The part before the segment: `distance > dst` there.
    while done < len && distance > dst + done {
        // Bytes before the segment's start, the frame's offset of the
        // source (the caller checked it is inside the frame's window).
        let at = start + (dst + done) as u64 - distance as u64;
        let i = history.partition_point(|(s, c)| s + c.len as u64 <= at);
        let (from, chunk) = &history[i];
        let off = (at - from) as usize;
        let n = (len - done).min(chunk.len - off).min(distance - dst - done);
        buf[dst + done..dst + done + n].copy_from_slice(&chunk.buf[off..off + n]);
        done += n;
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
    fn patches_copy_as_a_byte_loop_does_across_earlier_segments() {
        // Three earlier segments of 5, 1 and 7 bytes.
        let pieces: [&[u8]; 3] = [b"abcde", b"f", b"ghijklm"];
        let mut history = VecDeque::new();
        let mut before = Vec::new();
        for p in pieces {
            history.push_back((
                before.len() as u64,
                Arc::new(Chunk {
                    buf: p.to_vec(),
                    len: p.len(),
                }),
            ));
            before.extend_from_slice(p);
        }
        let start = before.len() as u64;
        let segment: Vec<u8> = (0..40u8).map(|i| b'A' + i).collect();
        for dst in 0..20 {
            for len in 0..20 {
                for distance in 1..=(dst + before.len()) {
                    let mut buf = segment.clone();
                    copy_patch(&mut buf, dst, len, distance, start, &history);
                    assert_eq!(
                        buf,
                        reference(&before, &segment, dst, len, distance),
                        "dst {dst} len {len} distance {distance}"
                    );
                }
            }
        }
    }
}
