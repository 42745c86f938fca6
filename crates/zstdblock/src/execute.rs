//! Stage 4, execution: literals and matches copied through the window
//! into the output, every match checked against what the frame has
//! produced and against its window.

use crate::entropy::DecodedBlock;
use crate::error::Error;
use crate::frame::Block;
use crate::offsets::resolve_one;
use crate::sequences::Sequence;

/// Zeroed bytes kept past the output's end, so literals and matches can
/// be copied in fixed 16-byte pieces that may run past their length.
pub(crate) const SLACK: usize = 32;

/// The decoded output: the bytes produced so far (or, after
/// [`Output::drain`], the most recent of them), followed by slack.
#[derive(Clone, Debug, Default)]
pub struct Output {
    buf: Vec<u8>,
    filled: usize,
    /// Bytes produced and drained: `buf[0]` is output byte `drained`.
    drained: u64,
}

impl Output {
    /// An empty output.
    pub fn new() -> Self {
        Output::default()
    }

    /// An empty output with room for `capacity` bytes before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        Output {
            // Zeroed in one allocation: the pages are only touched when written.
            buf: zeroed(capacity + SLACK),
            filled: 0,
            drained: 0,
        }
    }

    /// Bytes held (produced and not drained).
    pub fn len(&self) -> usize {
        self.filled
    }

    /// Nothing held.
    pub fn is_empty(&self) -> bool {
        self.filled == 0
    }

    /// Bytes produced since the output was made, drained ones included.
    pub fn position(&self) -> u64 {
        self.drained + self.filled as u64
    }

    /// The bytes held.
    pub fn as_slice(&self) -> &[u8] {
        &self.buf[..self.filled]
    }

    /// Hands `sink` every byte held but the last `keep` and forgets them,
    /// so a decoder holds a window, not the whole output. `keep` should be
    /// the frame's window (0 between frames): matches reach no further.
    pub fn drain<E>(
        &mut self,
        keep: usize,
        sink: impl FnOnce(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let keep = keep.min(self.filled);
        let old = self.filled - keep;
        if old == 0 {
            return Ok(());
        }
        sink(&self.buf[..old])?;
        self.buf.copy_within(old..self.filled, 0);
        self.filled = keep;
        self.drained += old as u64;
        Ok(())
    }

    /// The bytes produced, as a vector.
    pub fn into_vec(mut self) -> Vec<u8> {
        self.buf.truncate(self.filled);
        self.buf
    }

    /// Makes room for `additional` more bytes before the output grows.
    pub fn reserve(&mut self, additional: usize) {
        self.room(additional);
    }

    /// Makes room for `size` more bytes plus the slack.
    fn room(&mut self, size: usize) {
        let need = self.filled + size + SLACK;
        if self.buf.len() < need {
            let grown = need.max(self.buf.len().saturating_mul(2));
            // A zeroed allocation, its pages touched only when written,
            // and the bytes held copied over: resizing in place would write
            // every new byte, and a doubled buffer's pages would all be
            // faulted in though the output never reaches most of them.
            let mut bigger = zeroed(grown);
            bigger[..self.filled].copy_from_slice(&self.buf[..self.filled]);
            self.buf = bigger;
        }
    }

    /// Appends a raw block's bytes.
    pub fn push_raw(&mut self, bytes: &[u8]) {
        self.room(bytes.len());
        self.buf[self.filled..self.filled + bytes.len()].copy_from_slice(bytes);
        self.filled += bytes.len();
    }

    /// Appends an RLE block: `byte`, `count` times.
    pub fn push_rle(&mut self, byte: u8, count: usize) {
        self.room(count);
        self.buf[self.filled..self.filled + count].fill(byte);
        self.filled += count;
    }

    /// Executes `decoded` (its offsets resolved, see
    /// [`DecodedBlock::resolve_offsets`]), the compressed `block` of a
    /// frame whose output starts at [`Output::position`] `frame_start` and
    /// whose window is `window` bytes. A match may reach back over the
    /// bytes the frame produced, the window and the bytes held, whichever
    /// is least.
    pub fn execute(
        &mut self,
        decoded: &DecodedBlock,
        block: &Block,
        frame_start: u64,
        window: u64,
    ) -> Result<(), Error> {
        self.run(decoded, block, frame_start, window, |s| s.offset)
    }

    /// [`Output::execute`] for a block whose offsets are not resolved:
    /// resolves them as it goes, from and into `repeats`, as
    /// [`DecodedBlock::resolve_offsets`] would before it, in the same pass
    /// over the sequences (which keep their offset values). The decoders
    /// of this crate execute so; a second pass cost a tenth of execution.
    pub fn execute_resolving(
        &mut self,
        decoded: &DecodedBlock,
        repeats: &mut [u32; 3],
        block: &Block,
        frame_start: u64,
        window: u64,
    ) -> Result<(), Error> {
        let mut r = *repeats;
        let done = self.run(decoded, block, frame_start, window, |s| {
            resolve_one(&mut r, s.offset, s.literal_length)
        });
        *repeats = r;
        done
    }

    /// Executes `decoded`, `distance` giving each sequence's distance, in
    /// order, once each.
    #[inline(always)]
    #[allow(unsafe_code)]
    fn run(
        &mut self,
        decoded: &DecodedBlock,
        block: &Block,
        frame_start: u64,
        window: u64,
        distance_of: impl FnMut(&Sequence) -> u32,
    ) -> Result<(), Error> {
        // Refused before room is made for it: a block that failed its
        // entropy stage may carry any size.
        if !decoded.valid {
            return Err(refused(block));
        }
        self.room(decoded.output_size);
        // A match reaches back over the frame's bytes that are held (its
        // start, or the first byte held if older ones were drained), and
        // no further than the window.
        let produced = self.position().saturating_sub(frame_start);
        let floor = self
            .filled
            .saturating_sub(usize::try_from(produced).unwrap_or(usize::MAX));
        let window = usize::try_from(window).unwrap_or(usize::MAX);
        // SAFETY: `buf` is borrowed mutably for the call, so no other
        // reference to it exists; `execute_raw` checks that the block and
        // the slack fit in it (`room` made them fit).
        self.filled = unsafe {
            execute_raw(
                self.buf.as_mut_ptr(),
                self.buf.len(),
                self.filled,
                floor,
                window,
                decoded,
                block,
                distance_of,
            )
        }?;
        Ok(())
    }
}

/// The error for executing a block whose entropy stage failed (or one
/// the region has no room for, which the callers never ask).
fn refused(block: &Block) -> Error {
    Error::Corrupt {
        frame: block.frame,
        offset: block.header,
        what: "executing a block whose entropy stage failed",
    }
}

/// Executes `decoded` into the `cap` bytes at `base`, its output starting
/// at `pos`, its matches reaching back no further than `floor` nor the
/// window; returns where the output ends. Raw, not a slice: the
/// pipeline's ring (`parallel::ring`) is read by other threads in the
/// bytes before `pos`, which this only reads, and a `&mut` over them
/// would claim them all.
///
/// # Safety
///
/// `base..base + cap` is valid for reads and writes for the call, and no
/// reference to the bytes it writes, `pos..pos + output_size + SLACK`
/// (nor, in a ring mapped twice, to their other image), exists during
/// it; other bytes, which it only reads, may be read through shared
/// references elsewhere.
#[inline(always)]
#[allow(unsafe_code, clippy::too_many_arguments)]
pub(crate) unsafe fn execute_raw(
    base: *mut u8,
    cap: usize,
    pos: usize,
    floor: usize,
    window: usize,
    decoded: &DecodedBlock,
    block: &Block,
    mut distance_of: impl FnMut(&Sequence) -> u32,
) -> Result<usize, Error> {
    // Only a valid block's literals, sequences and output size agree
    // (`entropy::decode_content`): the sums of the literal lengths and
    // the match lengths are within its literal count and output size,
    // which every write below relies on.
    if !decoded.valid || floor > pos || cap.saturating_sub(pos) < decoded.output_size + SLACK {
        return Err(refused(block));
    }
    let literals = decoded.padded_literals();
    let literal_count = decoded.literals().len();
    let mut pos = pos;
    let mut lit = 0usize;
    let sequences = decoded.sequences();
    // The distances of the sequences from the one executed on, found
    // PREFETCH_AHEAD sequences early so that their match sources can be
    // prefetched (see `prefetch`); `ahead` is where the output is at
    // the start of the next sequence to look at.
    let mut distances = [0u32; RING];
    let mut ahead = pos;
    let mut look = |i: usize, ahead: &mut usize, distances: &mut [u32; RING]| {
        let s = &sequences[i];
        let distance = distance_of(s);
        distances[i % RING] = distance;
        let at = *ahead + s.literal_length as usize;
        prefetch(base, cap, at.wrapping_sub(distance as usize));
        *ahead = at + s.match_length as usize;
    };
    for i in 0..sequences.len().min(PREFETCH_AHEAD) {
        look(i, &mut ahead, &mut distances);
    }
    for (i, sequence) in sequences.iter().enumerate() {
        if i + PREFETCH_AHEAD < sequences.len() {
            look(i + PREFETCH_AHEAD, &mut ahead, &mut distances);
        }
        let ll = sequence.literal_length as usize;
        // SAFETY: the literal lengths so far sum to at most the block's
        // literal count and the output to at most its output size, which
        // fits with the slack after the starting `pos` (checked above).
        unsafe { copy_literals(base, pos, literals, lit, ll) };
        pos += ll;
        lit += ll;
        let ml = sequence.match_length as usize;
        let distance = distances[i % RING] as usize;
        let available = (pos - floor).min(window);
        // One compare: a distance of 0 wraps to the largest value.
        if distance.wrapping_sub(1) >= available {
            return Err(Error::OffsetOutOfRange {
                frame: block.frame,
                offset: block.header,
                sequence: i,
                distance: distance as u64,
                available: available as u64,
            });
        }
        // SAFETY: the source is at or after `floor` (the check above) and
        // the match's output, with its scratch, inside the output size
        // and the slack (as for the literals).
        unsafe { copy_match(base, pos, distance, ml) };
        pos += ml;
    }
    let rest = &literals[lit..literal_count];
    // SAFETY: the rest of the literals end the block's output.
    unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), base.add(pos), rest.len()) };
    Ok(pos + rest.len())
}

/// Sequences between the one executed and the one whose match source is
/// prefetched: far enough that the load (a miss to memory when the match
/// reaches megabytes back, as at `-19`) is done by the time the copy
/// needs it, near enough that the line is still in cache.
const PREFETCH_AHEAD: usize = 32;
/// The distances found ahead and not yet executed, in a ring: a power of
/// two above [`PREFETCH_AHEAD`], so indexing it is a mask.
const RING: usize = 64;

/// Asks the CPU to load the cache line of byte `index` of the `cap`
/// bytes at `base`, without waiting for it. An index past them (a corrupt
/// offset, refused when its sequence is executed) prefetches nothing
/// useful and does no harm.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch(base: *const u8, cap: usize, index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let line = base.wrapping_add(index.min(cap)).cast::<i8>();
        // SAFETY: a prefetch is a hint: it reads nothing the program can
        // observe, never faults, and any address may be given; SSE, which
        // it needs, is part of every x86_64 CPU.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(line) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (base, cap, index);
}

/// Bytes every literal run and every far enough match is copied in at
/// first, whatever its length: nine sequences in ten need no more, so the
/// length decides a well-predicted branch rather than which of several
/// copies to take.
const WILD: usize = 32;
// The output's slack and the literals' padding take the scratch.
const _: () = assert!(WILD <= SLACK && WILD <= crate::literals::LITERAL_SLACK);

/// Copies `length` literals from `literals[from..]` to `base + to`: the
/// first [`WILD`] bytes at once, then 16-byte pieces. Writes up to
/// [`WILD`] bytes of scratch past the end and reads into the literals'
/// padding (a slice: its bounds are checked).
///
/// # Safety
///
/// `base + to` is writable for `length` bytes and the slack past them.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn copy_literals(base: *mut u8, to: usize, literals: &[u8], from: usize, length: usize) {
    let first = &literals[from..from + WILD];
    // SAFETY: the caller's; `first` is WILD bytes.
    unsafe { std::ptr::copy_nonoverlapping(first.as_ptr(), base.add(to), WILD) };
    if length > WILD {
        // SAFETY: the caller's.
        unsafe { copy_rest_literals(base, to, literals, from, length) };
    }
}

/// The part of [`copy_literals`] past its first [`WILD`] bytes; out of
/// line, as one run in a thousand needs it.
///
/// # Safety
///
/// As for [`copy_literals`].
#[inline(never)]
#[allow(unsafe_code)]
unsafe fn copy_rest_literals(
    base: *mut u8,
    to: usize,
    literals: &[u8],
    from: usize,
    length: usize,
) {
    if length <= 128 {
        let mut done = WILD;
        while done < length {
            let piece = &literals[from + done..from + done + 16];
            // SAFETY: the caller's: 16-byte pieces end within the slack.
            unsafe { std::ptr::copy_nonoverlapping(piece.as_ptr(), base.add(to + done), 16) };
            done += 16;
        }
    } else {
        let rest = &literals[from + WILD..from + length];
        // SAFETY: the caller's.
        unsafe { std::ptr::copy_nonoverlapping(rest.as_ptr(), base.add(to + WILD), rest.len()) };
    }
}

/// `ptr::copy` of `n` bytes from `base + from` to `base + to` (the two
/// may overlap: a memmove).
///
/// # Safety
///
/// Both ranges are inside the region the caller may read and write.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn within(base: *mut u8, from: usize, to: usize, n: usize) {
    // SAFETY: the caller's.
    unsafe { std::ptr::copy(base.add(from), base.add(to), n) };
}

/// Copies `length` bytes from `distance` back to `pos`; the copy may
/// overlap itself (a distance shorter than the length repeats a pattern)
/// and may write up to [`WILD`] bytes of scratch past its end.
///
/// # Safety
///
/// `base + pos - distance .. base + pos + length` and the slack past it
/// are inside the region the caller may read and write.
#[inline(always)]
#[allow(unsafe_code)]
unsafe fn copy_match(base: *mut u8, pos: usize, distance: usize, length: usize) {
    if distance >= 16 {
        let src = pos - distance;
        // Two 16-byte pieces, in order: each reads bytes already final
        // (the second's may be the first's, at a distance under 32),
        // and whatever they write past `length` is scratch.
        // SAFETY: the caller's; the reads end before `pos + 16`.
        unsafe {
            within(base, src, pos, 16);
            within(base, src + 16, pos + 16, 16);
        }
        if length > WILD {
            // SAFETY: the caller's.
            unsafe { copy_rest_far(base, pos, distance, length) };
        }
    } else {
        // SAFETY: the caller's.
        unsafe { copy_near(base, pos, distance, length) };
    }
}

/// The part of a match at a distance of 16 or more past its first
/// [`WILD`] bytes.
///
/// # Safety
///
/// As for [`copy_match`].
#[inline(never)]
#[allow(unsafe_code)]
unsafe fn copy_rest_far(base: *mut u8, pos: usize, distance: usize, length: usize) {
    let src = pos - distance;
    if length <= 128 || distance < length {
        // Each 16-byte piece reads bytes already final.
        let mut done = WILD;
        while done < length {
            // SAFETY: the caller's: pieces end within the slack.
            unsafe { within(base, src + done, pos + done, 16) };
            done += 16;
        }
    } else {
        // SAFETY: the caller's; source and target do not overlap.
        unsafe { within(base, src + WILD, pos + WILD, length - WILD) };
    }
}

/// A match at a distance under 16, which repeats a pattern; out of line,
/// as three matches in a hundred are so near.
///
/// # Safety
///
/// As for [`copy_match`].
#[inline(never)]
#[allow(unsafe_code)]
unsafe fn copy_near(base: *mut u8, pos: usize, distance: usize, length: usize) {
    let src = pos - distance;
    if distance >= 8 {
        let mut done = 0;
        while done < length {
            // SAFETY: the caller's: pieces end within the slack.
            unsafe { within(base, src + done, pos + done, 8) };
            done += 8;
        }
    } else {
        // A short period: build 16 bytes of the pattern once, then write
        // them every `step` bytes, the largest multiple of the period that
        // fits, so each write starts at the pattern's phase.
        let mut pattern = [0u8; 16];
        // SAFETY: the caller's: `distance` bytes before `pos`.
        unsafe { std::ptr::copy_nonoverlapping(base.add(src), pattern.as_mut_ptr(), distance) };
        for i in distance..16 {
            pattern[i] = pattern[i - distance];
        }
        let step = 16 - 16 % distance;
        let mut done = 0;
        while done < length {
            // SAFETY: the caller's: writes end within the slack.
            unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), base.add(pos + done), 16) };
            done += step;
        }
    }
}

/// A zeroed buffer of `size` bytes, its 2 MiB-aligned part asked to be
/// backed by huge pages before any of it is touched, where that pays
/// ([`hugepages::policy`]). Kernels set to give huge pages only on request
/// (`transparent_hugepage=madvise`) otherwise fault the pipeline's output
/// buffers in 4 KiB at a time, and matches reaching megabytes back miss
/// the TLB: with the advice the pipeline took 7 % less CPU on a `-19` file
/// run back to back (see the commit). Smaller buffers hold at most one
/// aligned huge page and are left as they are.
pub(crate) fn zeroed(size: usize) -> Vec<u8> {
    let buf = vec![0u8; size];
    if size >= 2 * hugepages::HUGE_PAGE {
        hugepages::advise(&buf);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::BlockKind;

    /// The format's definition of execution, a byte at a time: the oracle
    /// for the piecewise copies above.
    fn reference(history: &[u8], literals: &[u8], sequences: &[Sequence]) -> Vec<u8> {
        let mut out = history.to_vec();
        let mut lit = 0;
        for s in sequences {
            let ll = s.literal_length as usize;
            out.extend_from_slice(&literals[lit..lit + ll]);
            lit += ll;
            for _ in 0..s.match_length {
                out.push(out[out.len() - s.offset as usize]);
            }
        }
        out.extend_from_slice(&literals[lit..]);
        out
    }

    fn block() -> Block {
        Block {
            frame: 0,
            header: 0,
            content: 0..0,
            kind: BlockKind::Compressed,
            last: false,
            known_size: None,
            block_max: 1 << 17,
        }
    }

    /// Executes `sequences` after `history` into an output whose buffer
    /// is first filled with a byte no input holds, so that a copy reading
    /// scratch, or scratch left in the output, shows.
    fn executed(history: &[u8], literals: &[u8], sequences: Vec<Sequence>) -> Vec<u8> {
        let decoded = DecodedBlock::from_parts(literals, sequences);
        let mut out = Output::new();
        out.buf = vec![0xEE; history.len() + decoded.output_size + SLACK];
        out.push_raw(history);
        out.execute(&decoded, &block(), 0, 1 << 20).unwrap();
        out.into_vec()
    }

    /// A small generator, so the test needs no crate and is repeatable.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % u64::from(n)) as u32
        }
    }

    #[test]
    fn every_distance_and_length_near_the_copy_sizes_matches_the_byte_loop() {
        let history: Vec<u8> = (0..300u32).map(|i| (i * 7 + i / 13) as u8).collect();
        let literals: Vec<u8> = (0..201u32).map(|i| (i * 11 + 3) as u8).collect();
        for distance in 1..=80 {
            for match_length in 3..=100 {
                for literal_length in [0, 1, 15, 16, 17, 31, 32, 33, 48, 129, 200] {
                    let sequences = vec![
                        Sequence {
                            literal_length,
                            match_length,
                            offset: distance,
                        },
                        // A second sequence reads what the first wrote.
                        Sequence {
                            literal_length: 0,
                            match_length: 40,
                            offset: distance + 1,
                        },
                    ];
                    let lits = &literals[..literal_length as usize + 1];
                    assert_eq!(
                        executed(&history, lits, sequences.clone()),
                        reference(&history, lits, &sequences),
                        "distance {distance}, match {match_length}, literals {literal_length}"
                    );
                }
            }
        }
    }

    /// A block's content of `n` sequences whose tables are all RLE:
    /// literal length 0, offset code 0, match length code 52 with its 16
    /// extra bits all ones, so every match is 131,074 bytes long.
    fn huge_matches(n: usize) -> Vec<u8> {
        let mut b = vec![0x00, 255];
        b.extend_from_slice(&((n - 0x7F00) as u16).to_le_bytes());
        b.push(0x54);
        b.extend_from_slice(&[0, 0, 52]);
        b.extend(std::iter::repeat_n(0xFF, 2 * n));
        b.push(0x01);
        b
    }

    #[test]
    fn a_block_refused_for_its_size_is_refused_before_room_is_made_for_it() {
        // 32,769 matches of 131,074 bytes: 2^32 + 196,610 bytes, refused
        // by the entropy stage (and wrapped to 196,610 in 32 bits).
        let content = huge_matches(32_769);
        let block = Block {
            content: 0..content.len(),
            last: true,
            ..block()
        };
        let mut decoded = DecodedBlock::default();
        let e = crate::entropy::decode_block(
            &content,
            &block,
            &mut crate::entropy::EntropyState::default(),
            &mut decoded,
        );
        assert!(matches!(e, Err(Error::BlockTooLarge { .. })), "{e:?}");
        assert_eq!(decoded.output_size(), 0, "a refused block has no size");
        let mut out = Output::new();
        assert!(out.execute(&decoded, &block, 0, 1 << 20).is_err());
        assert!(
            out.buf.len() < 1 << 20,
            "a refused block grew the output to {} bytes",
            out.buf.len()
        );
    }

    #[test]
    fn random_blocks_of_many_sequences_match_the_byte_loop() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let history: Vec<u8> = (0..70_000).map(|_| rng.below(256) as u8).collect();
        for _ in 0..200 {
            let literals: Vec<u8> = (0..rng.below(3000)).map(|_| rng.below(256) as u8).collect();
            let mut sequences = Vec::new();
            let (mut lit, mut produced) = (0, history.len() as u32);
            while lit < literals.len() as u32 && sequences.len() < 300 {
                let literal_length = rng.below(40).min(literals.len() as u32 - lit);
                produced += literal_length;
                // Mostly near, sometimes far, sometimes a short period.
                let offset = match rng.below(4) {
                    0 => 1 + rng.below(16),
                    1 => 1 + rng.below(64),
                    2 => 1 + rng.below(produced.min(4096)),
                    _ => 1 + rng.below(produced),
                };
                let match_length = 3 + match rng.below(3) {
                    0 => rng.below(14),
                    1 => rng.below(40),
                    _ => rng.below(600),
                };
                produced += match_length;
                lit += literal_length;
                sequences.push(Sequence {
                    literal_length,
                    match_length,
                    offset,
                });
            }
            assert_eq!(
                executed(&history, &literals, sequences.clone()),
                reference(&history, &literals, &sequences)
            );
        }
    }
}
