//! The split route's worker stage: a segment (a run of consecutive
//! blocks, several windows of output long) decoded and executed without
//! the bytes before it or the repeat offsets it inherits, so that two
//! threads can each execute their own segments at once.
//!
//! A match that cannot be executed yet becomes a [`Patch`] and leaves its
//! bytes unknown: one whose source lies before the segment, and one whose
//! repeat offset is still one of the incoming three. A match whose source
//! holds unknown bytes is copied now and only the bytes it copies from
//! unknown ones are patched, unknown bytes being tracked one by one (a
//! bitmap): tracked a match at a time, 95 % of each 4 MiB segment of a
//! `-3` tar of sources became unknown. Even so the unknown bytes do not
//! die out: text copied from a copy of a copy (a licence header in every
//! crate) never meets a literal, and a segment's last bytes are as often
//! unknown as its first (see the parallel module's doc for the figures).
//! The finisher (`finish.rs`) applies a segment's patches in order once
//! everything before it is final.

use crate::entropy::{DecodedBlock, decode_content};
use crate::error::Error;
use crate::execute::{PREFETCH_AHEAD, RING, SLACK, copy_literals, copy_match, prefetch, zeroed};
use crate::frame::{Block, BlockKind};
use crate::offsets::{INITIAL_REPEATS, resolve_one};
use crate::sequences::Sequence;

/// A repeat offset as a segment knows it: a distance, or one of the
/// three offsets the segment inherits less some amount (the repeat code
/// that names "the first minus one" may apply more than once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rep {
    Known(u32),
    Incoming { index: u8, minus: u32 },
}

impl Rep {
    /// This offset less one, as the one-thread path computes it
    /// (wrapping: a 0 is refused where it is used).
    fn minus_one(self) -> Rep {
        match self {
            Rep::Known(d) => Rep::Known(d.wrapping_sub(1)),
            Rep::Incoming { index, minus } => Rep::Incoming {
                index,
                minus: minus.wrapping_add(1),
            },
        }
    }

    /// The distance, given the offsets the segment inherited.
    pub(super) fn resolve(self, incoming: &[u32; 3]) -> u32 {
        match self {
            Rep::Known(d) => d,
            Rep::Incoming { index, minus } => incoming[usize::from(index)].wrapping_sub(minus),
        }
    }
}

/// [`resolve_one`] over offsets that may be unknown: the same codes, the
/// same updates.
fn resolve_symbolic(repeats: &mut [Rep; 3], value: u32, literal_length: u32) -> Rep {
    let [r0, r1, r2] = *repeats;
    if value > 3 {
        let d = Rep::Known(value - 3);
        *repeats = [d, r0, r1];
        return d;
    }
    let index = (value.wrapping_sub(1) + u32::from(literal_length == 0)) & 3;
    match index {
        0 => r0,
        1 => {
            *repeats = [r1, r0, r2];
            r1
        }
        2 => {
            *repeats = [r2, r0, r1];
            r2
        }
        _ => {
            let d = r0.minus_one();
            *repeats = [d, r0, r1];
            d
        }
    }
}

/// A match executed late: `len` bytes at `dst` (in the segment), copied
/// from `distance` back once the bytes before the segment are known.
#[derive(Clone, Copy, Debug)]
pub(super) struct Patch {
    pub(super) dst: usize,
    pub(super) len: usize,
    pub(super) distance: Rep,
    /// The block (its index in the segment) and sequence, for errors.
    pub(super) block: usize,
    pub(super) sequence: usize,
}

/// Why a segment stopped before its end.
#[derive(Debug)]
pub(super) enum Halt {
    /// An error the one-thread path reports as it is.
    Error(Error),
    /// A match reaching past the window or of distance 0, at `at` in the
    /// segment: the error's `available` needs the segment's position in
    /// the frame, which only the finisher knows.
    Offset {
        block: usize,
        sequence: usize,
        distance: u32,
        at: usize,
    },
}

/// A segment executed by a worker, waiting for the finisher.
#[derive(Debug)]
pub(super) struct Segment {
    /// The output, bytes `..len` (unknown where a patch will write),
    /// followed by slack.
    pub(super) buf: Vec<u8>,
    pub(super) len: usize,
    /// In order of `dst`, which is the order they must be applied in.
    pub(super) patches: Vec<Patch>,
    /// The repeat offsets after the segment's last sequence.
    pub(super) repeats: [Rep; 3],
    /// Set when the segment stopped early; patches before it still apply.
    pub(super) halt: Option<Halt>,
}

/// The worker's state while it executes a segment.
struct Executing {
    segment: Segment,
    /// The segment is its frame's first: the offsets are the frame's
    /// initial ones and nothing lies before it.
    first: bool,
    /// The repeat offsets while all are distances (see `symbolic`).
    known: [u32; 3],
    /// Some repeat offset is still an incoming one: `segment.repeats`
    /// holds them and `known` is not used.
    symbolic: bool,
    /// A bit per byte of the segment, set where the byte is unknown.
    unknown: Vec<u64>,
    /// Past the last unknown byte: a source at or past it is known, the
    /// one compare most matches pay.
    known_from: usize,
    window: usize,
}

/// The blocks of a segment as the walker sends them.
pub(super) struct Blocks<'a> {
    pub(super) blocks: &'a [Block],
    /// The input from byte `base` on, to the end of the last block.
    pub(super) input: &'a [u8],
    pub(super) base: usize,
    /// The frame's window, and whether the segment starts the frame.
    pub(super) window: u64,
    pub(super) first: bool,
    /// The walker's error after the last block.
    pub(super) fail: Option<Error>,
}

/// Decodes (from the tables in `state`, into `decoded`) and executes the
/// blocks of a segment. `buf` is a buffer to reuse (any content).
pub(super) fn run(
    segment: Blocks<'_>,
    state: &mut crate::entropy::EntropyState,
    decoded: &mut DecodedBlock,
    buf: Option<Vec<u8>>,
) -> Segment {
    let Blocks {
        blocks,
        input,
        base,
        window,
        first,
        fail,
    } = segment;
    let need = blocks
        .iter()
        .map(|b| match b.kind {
            BlockKind::Compressed => b.block_max,
            BlockKind::Raw => b.content.len(),
            BlockKind::Rle => b.known_size.unwrap_or(0),
        })
        .sum::<usize>()
        + SLACK;
    let buf = match buf {
        Some(buf) if buf.len() >= need => buf,
        _ => zeroed(need),
    };
    let mut ex = Executing {
        segment: Segment {
            buf,
            len: 0,
            patches: Vec::new(),
            repeats: if first {
                INITIAL_REPEATS.map(Rep::Known)
            } else {
                [0u8, 1, 2].map(|index| Rep::Incoming { index, minus: 0 })
            },
            halt: None,
        },
        first,
        known: INITIAL_REPEATS,
        symbolic: !first,
        unknown: vec![0; need / 64 + 1],
        known_from: 0,
        window: usize::try_from(window).unwrap_or(usize::MAX),
    };
    for (i, block) in blocks.iter().enumerate() {
        let content = &input[block.content.start - base..block.content.end - base];
        let s = &mut ex.segment;
        match block.kind {
            BlockKind::Raw => {
                s.buf[s.len..s.len + content.len()].copy_from_slice(content);
                s.len += content.len();
            }
            BlockKind::Rle => {
                let n = block.known_size.unwrap_or(0);
                s.buf[s.len..s.len + n].fill(content[0]);
                s.len += n;
            }
            BlockKind::Compressed => {
                if let Err(e) = decode_content(content, block, state, decoded) {
                    ex.segment.halt = Some(Halt::Error(e));
                    break;
                }
                let done = if ex.symbolic {
                    ex.symbolic_block(decoded, i)
                } else {
                    ex.known_block(decoded, i)
                };
                if let Err(halt) = done {
                    ex.segment.halt = Some(halt);
                    break;
                }
            }
        }
    }
    if ex.segment.halt.is_none() {
        ex.segment.halt = fail.map(Halt::Error);
    }
    if !ex.symbolic {
        ex.segment.repeats = ex.known.map(Rep::Known);
    }
    ex.segment
}

impl Executing {
    /// Marks `len` bytes at `dst` unknown and records their patch.
    fn defer(&mut self, dst: usize, len: usize, distance: Rep, block: usize, sequence: usize) {
        self.segment.patches.push(Patch {
            dst,
            len,
            distance,
            block,
            sequence,
        });
        set_bits(&mut self.unknown, dst, dst + len);
        self.known_from = self.known_from.max(dst + len);
    }

    /// Places a match of a known `distance` at `pos`: refuses a distance
    /// past the window (or before the frame, in its first segment),
    /// copies it, and defers what cannot be copied yet.
    #[inline(always)]
    fn place(
        &mut self,
        pos: usize,
        distance: usize,
        length: usize,
        block: usize,
        sequence: usize,
    ) -> Result<(), Halt> {
        if distance.wrapping_sub(1) < self.window
            && distance <= pos
            && pos - distance >= self.known_from
        {
            copy_match(&mut self.segment.buf, pos, distance, length);
            Ok(())
        } else {
            self.place_slow(pos, distance, length, block, sequence)
        }
    }

    /// [`Executing::place`] where the source is not plainly known.
    #[inline(never)]
    fn place_slow(
        &mut self,
        pos: usize,
        distance: usize,
        length: usize,
        block: usize,
        sequence: usize,
    ) -> Result<(), Halt> {
        if distance.wrapping_sub(1) >= self.window || (self.first && distance > pos) {
            return Err(Halt::Offset {
                block,
                sequence,
                distance: distance as u32,
                at: pos,
            });
        }
        let rep = Rep::Known(distance as u32);
        if distance > pos {
            self.defer(pos, length, rep, block, sequence);
            return Ok(());
        }
        let src = pos - distance;
        if distance < length {
            // Overlapping itself: the period's unknown bytes recur all
            // along, so the whole match waits (a short distance is rare
            // among the matches that reach unknown bytes).
            if next_bit(&self.unknown, src, pos, true) < pos {
                self.defer(pos, length, rep, block, sequence);
            } else {
                copy_match(&mut self.segment.buf, pos, distance, length);
            }
            return Ok(());
        }
        copy_match(&mut self.segment.buf, pos, distance, length);
        // Each run of unknown bytes in the source is a patch of the same
        // distance; the bytes between are final now.
        let end = src + length;
        let mut at = next_bit(&self.unknown, src, end, true);
        while at < end {
            let stop = next_bit(&self.unknown, at, end, false);
            self.defer(at + distance, stop - at, rep, block, sequence);
            at = next_bit(&self.unknown, stop, end, true);
        }
        Ok(())
    }

    /// Executes a block while every repeat offset is a distance, as
    /// [`crate::Output::execute_resolving`] does (match sources prefetched
    /// ahead), deferring the matches that read unknown bytes.
    fn known_block(&mut self, decoded: &DecodedBlock, block: usize) -> Result<(), Halt> {
        let literals = decoded.padded_literals();
        let literal_count = decoded.literals().len();
        let sequences: &[Sequence] = &decoded.sequences;
        let mut pos = self.segment.len;
        let mut lit = 0usize;
        let mut r = self.known;
        let mut distances = [0u32; RING];
        let mut ahead = pos;
        let look = |buf: &[u8],
                    i: usize,
                    ahead: &mut usize,
                    r: &mut [u32; 3],
                    distances: &mut [u32; RING]| {
            let s = &sequences[i];
            let distance = resolve_one(r, s.offset, s.literal_length);
            distances[i % RING] = distance;
            let at = *ahead + s.literal_length as usize;
            prefetch(buf, at.wrapping_sub(distance as usize));
            *ahead = at + s.match_length as usize;
        };
        for i in 0..sequences.len().min(PREFETCH_AHEAD) {
            look(&self.segment.buf, i, &mut ahead, &mut r, &mut distances);
        }
        for (i, sequence) in sequences.iter().enumerate() {
            if i + PREFETCH_AHEAD < sequences.len() {
                look(
                    &self.segment.buf,
                    i + PREFETCH_AHEAD,
                    &mut ahead,
                    &mut r,
                    &mut distances,
                );
            }
            let ll = sequence.literal_length as usize;
            copy_literals(&mut self.segment.buf, pos, literals, lit, ll);
            pos += ll;
            lit += ll;
            let ml = sequence.match_length as usize;
            let distance = distances[i % RING] as usize;
            self.place(pos, distance, ml, block, i)?;
            pos += ml;
        }
        let rest = literal_count - lit;
        self.segment.buf[pos..pos + rest].copy_from_slice(&literals[lit..literal_count]);
        self.segment.len = pos + rest;
        self.known = r;
        Ok(())
    }

    /// Executes a block while some repeat offset is an incoming one, a
    /// sequence at a time: the matches that use one are deferred. Once
    /// all three are distances the next block takes
    /// [`Executing::known_block`].
    fn symbolic_block(&mut self, decoded: &DecodedBlock, block: usize) -> Result<(), Halt> {
        let literals = decoded.padded_literals();
        let literal_count = decoded.literals().len();
        let mut pos = self.segment.len;
        let mut lit = 0usize;
        for (i, sequence) in decoded.sequences.iter().enumerate() {
            let ll = sequence.literal_length as usize;
            copy_literals(&mut self.segment.buf, pos, literals, lit, ll);
            pos += ll;
            lit += ll;
            let ml = sequence.match_length as usize;
            let rep = resolve_symbolic(
                &mut self.segment.repeats,
                sequence.offset,
                sequence.literal_length,
            );
            match rep {
                Rep::Known(d) => self.place(pos, d as usize, ml, block, i)?,
                Rep::Incoming { .. } => self.defer(pos, ml, rep, block, i),
            }
            pos += ml;
        }
        let rest = literal_count - lit;
        self.segment.buf[pos..pos + rest].copy_from_slice(&literals[lit..literal_count]);
        self.segment.len = pos + rest;
        if let [Rep::Known(a), Rep::Known(b), Rep::Known(c)] = self.segment.repeats {
            self.known = [a, b, c];
            self.symbolic = false;
        }
        Ok(())
    }
}

/// Sets bits `from..to` of `bits`.
fn set_bits(bits: &mut [u64], from: usize, to: usize) {
    let mut at = from;
    while at < to {
        let bit = at % 64;
        let n = (64 - bit).min(to - at);
        let mask = if n == 64 {
            u64::MAX
        } else {
            ((1u64 << n) - 1) << bit
        };
        bits[at / 64] |= mask;
        at += n;
    }
}

/// The first bit in `from..to` of `bits` that is `set` (set or clear), or
/// `to` if none is.
fn next_bit(bits: &[u64], from: usize, to: usize, set: bool) -> usize {
    let mut at = from;
    while at < to {
        let word = if set { bits[at / 64] } else { !bits[at / 64] } >> (at % 64);
        if word != 0 {
            return (at + word.trailing_zeros() as usize).min(to);
        }
        at = (at / 64 + 1) * 64;
    }
    to
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_runs_are_found_as_a_byte_map_finds_them() {
        let mut bits = vec![0u64; 5];
        let mut map = vec![false; 320];
        for (a, b) in [(3, 5), (60, 70), (128, 192), (200, 201), (255, 319)] {
            set_bits(&mut bits, a, b);
            map[a..b].iter_mut().for_each(|m| *m = true);
        }
        for from in 0..320 {
            for to in from..=320 {
                for set in [true, false] {
                    let want = (from..to).find(|&i| map[i] == set).unwrap_or(to);
                    assert_eq!(next_bit(&bits, from, to, set), want, "{from}..{to} {set}");
                }
            }
        }
    }

    #[test]
    fn symbolic_resolution_matches_the_concrete_one() {
        // Every code sequence of length 4 over values 1..=3 and one new
        // offset, with and without literals, from arbitrary incoming
        // offsets: resolving symbolically then substituting gives what
        // resolving the concrete offsets gives.
        let incoming = [17u32, 5, 1];
        let codes: Vec<(u32, u32)> = [1, 2, 3, 40]
            .into_iter()
            .flat_map(|v| [(v, 0), (v, 1)])
            .collect();
        for a in &codes {
            for b in &codes {
                for c in &codes {
                    for d in &codes {
                        let mut concrete = incoming;
                        let mut symbolic =
                            [0u8, 1, 2].map(|index| Rep::Incoming { index, minus: 0 });
                        for &(value, ll) in [a, b, c, d] {
                            let want = resolve_one(&mut concrete, value, ll);
                            let got = resolve_symbolic(&mut symbolic, value, ll);
                            assert_eq!(got.resolve(&incoming), want, "{a:?} {b:?} {c:?} {d:?}");
                        }
                        assert_eq!(symbolic.map(|r| r.resolve(&incoming)), concrete);
                    }
                }
            }
        }
    }
}
