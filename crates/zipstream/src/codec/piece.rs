//! Deflate in independent pieces chained into one stream (issue 64).
//!
//! libdeflate compresses a whole buffer into a complete deflate stream whose
//! last block has BFINAL set; it has no streaming and no preset dictionary.
//! A piece that is not an entry's last is made non-final the way pigz ends a
//! block with a sync flush: its last block's BFINAL bit is cleared and an
//! empty stored block (header bits `000`, padding to the byte, `00 00 FF FF`)
//! follows that block's end-of-block code, so the next piece starts on a byte
//! boundary and inflate reads the pieces as one stream.
//!
//! Where the last block starts and ends is known only by decoding the piece:
//! zlib's `inflate(Z_BLOCK)` stops at every block boundary and reports it in
//! `data_type` (+128 at a boundary, +64 once in the last block, the low 3
//! bits the unused bits of the last byte read). flate2 does not expose
//! `data_type`, so this module calls zlib's C API of zlib-rs (flate2's own
//! backend) through `libz-rs-sys`: the only `unsafe` of the crate, kept here.
//! The same pass checks the piece: it must inflate to exactly its input, or
//! the piece is written as stored blocks instead (never a wrong archive).
//! Measured on 32 MiB of shared libraries, docs and this repository's
//! sources, the pass costs 15-20 % of libdeflate's level-6 compression.
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::ffi::c_int;

use libdeflater::{CompressionLvl, Compressor};
use libz_rs_sys::{
    Z_BLOCK, Z_OK, Z_STREAM_END, inflate, inflateEnd, inflateInit2_, z_stream, zlibVersion,
};

use super::put_stored;

/// Input bytes per piece of the one-thread writer. Each piece starts
/// without the previous 32 KiB as a dictionary (libdeflate takes none):
/// against one whole-buffer call, measured at zip -6 (libdeflate 7), 1 MiB
/// pieces cost +0.5 % on 16 MiB of C headers (+0.2 % over Info-ZIP's
/// archive), 2 MiB pieces +0.2 % (-0.1 % under it), and +0.04-0.4 % on
/// binaries, docs and sources; the writer holds about three pieces'
/// worth (input, output, the check's scratch) whatever the entry's size.
pub(crate) const PIECE: usize = 2 << 20;

/// An empty final stored block: BFINAL=1, BTYPE=00, LEN=0, NLEN=0xFFFF.
pub(crate) const FINAL_EMPTY_STORED: [u8; 5] = [0x01, 0x00, 0x00, 0xFF, 0xFF];

thread_local! {
    /// Compressors of entries that ended on this thread, one per libdeflate
    /// level, for the next entry: a level-6 compressor is about half a MiB,
    /// and a folder of small files would otherwise allocate one per file.
    static SPARE: RefCell<Vec<(i32, Compressor)>> = const { RefCell::new(Vec::new()) };
}

/// A compressor at libdeflate's `level`, this thread's spare one if any.
fn take_compressor(level: i32) -> Compressor {
    let spare = SPARE.with(|s| {
        let mut s = s.borrow_mut();
        let at = s.iter().position(|(l, _)| *l == level)?;
        Some(s.swap_remove(at).1)
    });
    spare.unwrap_or_else(|| Compressor::new(ld_level(level)))
}

/// Gives `c` (at libdeflate's `level`) back to this thread's spares.
fn keep_compressor(level: i32, c: Compressor) {
    // A thread being torn down has no pool left; the compressor is then
    // simply freed.
    let _ = SPARE.try_with(|s| {
        let mut s = s.borrow_mut();
        if !s.iter().any(|(l, _)| *l == level) {
            s.push((level, c));
        }
    });
}

fn ld_level(level: i32) -> CompressionLvl {
    // Only 1..=9 are asked for, all valid libdeflate levels.
    CompressionLvl::new(level).unwrap_or_default()
}

/// The lighter libdeflate level a piece may be compressed at instead of
/// its level's own (6 or 7: zip's -5 and -6), when a sample of it says the
/// extra search buys little there. libdeflate's 7 searches 100 candidates
/// for a match up to 130 bytes long; on log lines that differ in a few
/// digits it walks all of them almost everywhere and is slower than
/// Info-ZIP (1.44x zlib's -6 CPU on 37.7 MB of request lines, where its 5,
/// searching 16, takes 0.54x and is 1.3 % larger than its 7, still 9 %
/// under zlib's). On generated source and C headers 5 is 1.1-1.7 % larger
/// than 7 on the sample and 3-8 % larger than Info-ZIP over the file, so
/// the sample keeps 7 there.
const LIGHTER: i32 = 5;

/// Bytes of the sample: one stretch from a piece's middle, compressed at
/// both levels (about 3 % of a 2 MiB piece's work).
const SAMPLE: usize = 64 << 10;

/// Pieces shorter than this are compressed at their level without a
/// sample: the sample would be a large part of the work.
const SAMPLE_FROM: usize = 8 * SAMPLE;

/// The lighter level is taken when the sample comes out at least
/// [`LIGHTER_RATIO`] times smaller at the level, and at most a
/// [`LIGHTER_SLACK`]th (2 %) larger at [`LIGHTER`]. Measured on 2 MiB
/// pieces and their 64 KiB samples (`zip -6`): on 37.7 MB of request lines
/// the samples' gap is 0.5-1.3 % (the pieces' 1.3 %, all 9 % under
/// Info-ZIP's archive); where the ratio bound lets a sample through
/// elsewhere, the gap is 4-7 % on other logs and 6-9 % on the few such
/// pieces of C headers and a cargo source tree (3.5-6 % over the piece).
/// Generated source and JSON, and most C headers and sources, are under
/// 8:1 and keep their level; shared libraries and docs would otherwise
/// step down too, and they are not slow at 7.
const LIGHTER_SLACK: usize = 50;

/// See [`LIGHTER_SLACK`]: only data this many times smaller or more at
/// the level (highly compressible, where a long search walks many
/// candidates) steps down.
const LIGHTER_RATIO: usize = 8;

/// libdeflate's level for zip's `level` (1-9): the fastest whose archives
/// were no larger than Info-ZIP zip 3.0's at that level, measured on this
/// repository's sources, generated source, JSON and text (the corpus) and
/// shared libraries (docs/zip.md#deflate-engine). libdeflate's own level 6
/// is 1.8 % larger than zip -6 on generated source, its 7 smaller on all;
/// its 9 is within 0.1 % of zip -9 on text (its 10 is near-optimal parsing,
/// slower than Info-ZIP -9 on docs).
fn libdeflate_level(level: u32) -> i32 {
    match level {
        0..=4 => level.max(1) as i32,
        5 => 6,
        6 => 7,
        7 => 8,
        _ => 9,
    }
}

/// libdeflate compressors for a zip level and the scratch their check
/// decodes into.
pub(crate) struct PieceDeflater {
    /// libdeflate's level for the zip level.
    level: i32,
    compressor: Option<Compressor>,
    /// At [`LIGHTER`], for levels that may step down to it.
    lighter: Option<Compressor>,
    scratch: Vec<u8>,
}

impl PieceDeflater {
    /// A deflater for zip's `level` (1-9, mapped by `libdeflate_level`),
    /// reusing compressors this thread kept from an earlier entry.
    pub(crate) fn new(level: u32) -> PieceDeflater {
        PieceDeflater {
            level: libdeflate_level(level.clamp(1, 9)),
            compressor: None,
            lighter: None,
            scratch: Vec::new(),
        }
    }

    /// Appends `data` to `out` as one piece of a deflate stream: the
    /// stream's end when `last`, else ending on a byte boundary with the
    /// stream still open. A piece libdeflate did not make exactly (its
    /// check failed) goes out as stored blocks.
    pub(crate) fn piece(&mut self, data: &[u8], last: bool, out: &mut Vec<u8>) {
        let lighter = self.lighter_will_do(data, out);
        let level = self.level;
        let c = if lighter {
            self.lighter.get_or_insert_with(|| take_compressor(LIGHTER))
        } else {
            self.compressor
                .get_or_insert_with(|| take_compressor(level))
        };
        let start = out.len();
        let bound = c.deflate_compress_bound(data.len());
        out.resize(start + bound, 0);
        // The bound is libdeflate's own worst case, so it always fits; were
        // it ever refused, the stored fallback below keeps the stream valid.
        let made = c.deflate_compress(data, &mut out[start..]).ok();
        out.truncate(start + made.unwrap_or(0));
        let ends = made.and_then(|_| block_ends(&out[start..], data, &mut self.scratch));
        match ends {
            Some(ends) if !last => chain(out, start, ends),
            Some(_) => {}
            None => {
                out.truncate(start);
                put_stored(data, out);
                if last {
                    out.extend_from_slice(&FINAL_EMPTY_STORED);
                }
            }
        }
    }

    /// Whether `data` is a piece to compress at [`LIGHTER`]: its level is
    /// 6 or 7, the piece is long enough to sample, and the sample from its
    /// middle is highly compressible and comes out at most a
    /// [`LIGHTER_SLACK`]th larger at [`LIGHTER`] than at the level. The
    /// spare room of `room` is the scratch.
    fn lighter_will_do(&mut self, data: &[u8], room: &mut Vec<u8>) -> bool {
        if !(6..=7).contains(&self.level) || data.len() < SAMPLE_FROM {
            return false;
        }
        let at = (data.len() - SAMPLE) / 2;
        let sample = &data[at..at + SAMPLE];
        // The lighter level first: a sample it does not shrink 8:1 (with
        // the slack) cannot pass, and is spared the slower compression.
        let light = self.lighter.get_or_insert_with(|| take_compressor(LIGHTER));
        let start = room.len();
        room.resize(start + light.deflate_compress_bound(SAMPLE), 0);
        let at_lighter = light.deflate_compress(sample, &mut room[start..]).ok();
        let mut pass = false;
        if let Some(b) = at_lighter
            && b * LIGHTER_RATIO * LIGHTER_SLACK <= SAMPLE * (LIGHTER_SLACK + 1)
        {
            let level = self.level;
            let own = self
                .compressor
                .get_or_insert_with(|| take_compressor(level));
            if let Ok(a) = own.deflate_compress(sample, &mut room[start..]) {
                pass = a * LIGHTER_RATIO <= SAMPLE && b * LIGHTER_SLACK <= a * (LIGHTER_SLACK + 1);
            }
        }
        room.truncate(start);
        pass
    }
}

impl Drop for PieceDeflater {
    fn drop(&mut self) {
        if let Some(c) = self.compressor.take() {
            keep_compressor(self.level, c);
        }
        if let Some(c) = self.lighter.take() {
            keep_compressor(LIGHTER, c);
        }
    }
}

/// Where a complete deflate stream's last block starts and where its
/// end-of-block code ends, in bits from the stream's first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BlockEnds {
    last_start: u64,
    end: u64,
}

/// Makes the complete stream at `out[start..]` (with `ends`) non-final and
/// byte-aligned: BFINAL cleared, an empty stored block appended.
fn chain(out: &mut Vec<u8>, start: usize, ends: BlockEnds) {
    let at = |bit: u64| start + (bit / 8) as usize;
    out[at(ends.last_start)] &= !(1u8 << (ends.last_start % 8));
    // Past the end-of-block code: only padding, zero bits, then the stream
    // ends; the stored block's header bits 000 go right there.
    out.truncate(at(ends.end.div_ceil(8) * 8));
    let used = (ends.end % 8) as u32;
    if used != 0 {
        let last = out.len() - 1;
        out[last] &= (1u8 << used) - 1;
    }
    // The three header bits fit in this byte's free bits (used 1-5), or
    // begin a new one.
    if used == 0 || used > 5 {
        out.push(0);
    }
    out.extend_from_slice(&[0x00, 0x00, 0xFF, 0xFF]);
}

/// Decodes the complete raw deflate stream `comp` block by block: returns
/// where its last block starts and ends if it inflates to exactly `data`
/// and ends at `comp`'s last byte, else None.
pub(crate) fn block_ends(comp: &[u8], data: &[u8], scratch: &mut Vec<u8>) -> Option<BlockEnds> {
    // One byte of room past the data: a stream that makes more than it
    // should is seen, not cut short.
    scratch.clear();
    scratch.resize(data.len() + 1, 0);
    let avail_in = u32::try_from(comp.len()).ok()?;
    let avail_out = u32::try_from(scratch.len()).ok()?;
    let mut strm = Box::new(z_stream::default());
    // SAFETY: `strm` is a zeroed z_stream (no allocator set, so zlib-rs uses
    // its own), boxed so that it does not move while initialised; the
    // version and size are this library's own.
    let r = unsafe {
        inflateInit2_(
            &mut *strm,
            -15,
            zlibVersion(),
            std::mem::size_of::<z_stream>() as c_int,
        )
    };
    if r != Z_OK {
        return None;
    }
    strm.next_in = comp.as_ptr();
    strm.avail_in = avail_in;
    strm.next_out = scratch.as_mut_ptr();
    strm.avail_out = avail_out;
    let mut last_start = 0u64;
    let mut end = None;
    let result = loop {
        // SAFETY: `strm` was initialised above and not ended; next_in and
        // avail_in describe `comp`, which inflate only reads, next_out and
        // avail_out the rest of `scratch`, which this function borrows
        // mutably until the stream is ended below; inflate advances them
        // together.
        let r = unsafe { inflate(&mut *strm, Z_BLOCK) };
        let bit = strm.total_in * 8 - (strm.data_type & 7) as u64;
        if r == Z_STREAM_END {
            break end.map(|end| BlockEnds { last_start, end });
        }
        if r != Z_OK {
            break None;
        }
        if strm.data_type & 128 != 0 {
            // A boundary before a block's header (the last block's start
            // when the next one read is final), or, once in the last block,
            // right after its end-of-block code; inflate forgets the
            // unused bits when it then reports the stream's end.
            if strm.data_type & 64 == 0 {
                last_start = bit;
            } else {
                end = Some(bit);
            }
        } else if strm.avail_in == 0 || strm.avail_out == 0 {
            // Z_OK with no input or room left short of the stream's end:
            // a truncated stream, or one making more than `data`.
            break None;
        }
    };
    let produced = strm.total_out as usize;
    let consumed = strm.total_in as usize;
    // SAFETY: `strm` was initialised by inflateInit2_ and is ended once.
    unsafe { inflateEnd(&mut *strm) };
    let ends = result?;
    let whole = produced == data.len()
        && consumed == comp.len()
        && ends.end.div_ceil(8) == comp.len() as u64
        && scratch[..produced] == *data;
    whole.then_some(ends)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Decoder;
    use crate::codec::tests::noise;

    fn text(n: usize, seed: u64) -> Vec<u8> {
        let words = [
            "deflate ", "piece ", "block ", "final ", "stored ", "window ", "entry\n", "zip ",
        ];
        let mut x = seed | 1;
        let mut v = Vec::with_capacity(n + 8);
        while v.len() < n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(words[(x % 8) as usize].as_bytes());
        }
        v.truncate(n);
        v
    }

    /// Inflates with flate2 (zlib-rs's streaming API, not the Z_BLOCK walk
    /// under test), requiring the stream to end exactly at `comp`'s end.
    fn inflate_all(comp: &[u8], max: usize) -> Vec<u8> {
        let mut d = Decoder::for_method(8, None).unwrap();
        let mut out = vec![0u8; max + 1];
        let (mut pos, mut inp) = (0, comp);
        loop {
            let s = d.step(inp, &mut out[pos..]).unwrap();
            inp = &inp[s.consumed..];
            pos += s.produced;
            if s.done {
                break;
            }
            assert!(s.consumed + s.produced > 0, "no progress");
        }
        assert!(inp.is_empty(), "{} bytes after the stream's end", inp.len());
        out.truncate(pos);
        out
    }

    /// Pieces cut at `cuts` chain into one stream that inflates to the
    /// whole input, whatever the bit where each piece's last block ends.
    fn chained(data: &[u8], cuts: &[usize], level: u32) -> Vec<u8> {
        let mut d = PieceDeflater::new(level);
        let mut out = Vec::new();
        let mut from = 0;
        for (i, &to) in cuts.iter().chain([&data.len()]).enumerate() {
            d.piece(&data[from..to], i == cuts.len(), &mut out);
            from = to;
        }
        out
    }

    #[test]
    fn pieces_of_random_text_and_incompressible_data_chain_at_every_small_offset() {
        let mut data = text(40_000, 3);
        data.extend_from_slice(&noise(20_000, 5));
        data.extend_from_slice(&text(30_000, 9));
        data.extend_from_slice(&[7u8; 5000]);
        for first in 0..64 {
            for level in [1, 6, 9] {
                let cuts = [first, first + 1 + first % 7, 41_000 + first * 13, 61_000];
                let out = chained(&data, &cuts, level);
                assert!(
                    inflate_all(&out, data.len()) == data,
                    "cut {first} level {level}"
                );
            }
        }
    }

    #[test]
    fn the_last_block_ends_on_every_bit_of_a_byte() {
        // Sizes 1..400 of text end their streams on all eight bit offsets;
        // each is chained before a second piece.
        let mut seen = [false; 8];
        let mut scratch = Vec::new();
        for n in 1..400 {
            let head = text(n, n as u64);
            let mut c = Compressor::new(ld_level(libdeflate_level(6)));
            let mut one = vec![0u8; c.deflate_compress_bound(n)];
            let made = c.deflate_compress(&head, &mut one).unwrap();
            let ends = block_ends(&one[..made], &head, &mut scratch).unwrap();
            seen[(ends.end % 8) as usize] = true;
            let mut data = head.clone();
            data.extend_from_slice(&text(1000, 77));
            let out = chained(&data, &[n], 6);
            assert!(inflate_all(&out, data.len()) == data, "head of {n}");
        }
        assert_eq!(seen, [true; 8], "end bits seen");
    }

    #[test]
    fn a_piece_that_does_not_decode_to_its_input_is_refused() {
        let data = text(10_000, 1);
        let mut c = Compressor::new(ld_level(libdeflate_level(6)));
        let mut comp = vec![0u8; c.deflate_compress_bound(data.len())];
        let made = c.deflate_compress(&data, &mut comp).unwrap();
        comp.truncate(made);
        let mut scratch = Vec::new();
        assert!(block_ends(&comp, &data, &mut scratch).is_some());
        // Another input, a stream cut short, one with a byte after it.
        assert!(block_ends(&comp, &text(10_000, 2), &mut scratch).is_none());
        assert!(block_ends(&comp[..made - 1], &data, &mut scratch).is_none());
        let mut longer = comp.clone();
        longer.push(0);
        assert!(block_ends(&longer, &data, &mut scratch).is_none());
        assert!(block_ends(&comp, &data[..9_999], &mut scratch).is_none());
        // Stored and empty streams are walked too (no fallback for them).
        for data in [noise(100_000, 3), Vec::new()] {
            let mut comp = vec![0u8; c.deflate_compress_bound(data.len())];
            let made = c.deflate_compress(&data, &mut comp).unwrap();
            assert!(block_ends(&comp[..made], &data, &mut scratch).is_some());
        }
    }

    /// Request log lines that differ in a few digits, as a web server
    /// writes them.
    fn request_lines(n: usize) -> Vec<u8> {
        let mut x = 7u64;
        let mut v = Vec::with_capacity(n + 200);
        let mut i = 0u64;
        while v.len() < n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.extend_from_slice(
                format!(
                    "2026-11-28 05:{:02}:{:02} INFO server.request id={i} path=/api/v1/items/{} status=200 bytes={}\n",
                    i / 60 % 60,
                    i % 60,
                    x % 500,
                    x % 9000 + 100
                )
                .as_bytes(),
            );
            i += 1;
        }
        v.truncate(n);
        v
    }

    /// Code-like lines: identifiers from a vocabulary of thousands, in
    /// recurring statement shapes, where a deeper search finds longer
    /// matches among many candidates.
    fn code_lines(n: usize) -> Vec<u8> {
        let mut x = 99u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let names: Vec<String> = (0..3000)
            .map(|i| {
                format!(
                    "{}_{}",
                    ["count", "total", "index", "buffer", "offset", "state"][i % 6],
                    i * 37 % 1000
                )
            })
            .collect();
        let mut v = Vec::with_capacity(n + 200);
        while v.len() < n {
            let a = &names[(next() % 3000) as usize];
            let b = &names[(next() % 3000) as usize];
            let line = match next() % 4 {
                0 => format!("    let {a} = {b}.len() + {};\n", next() % 100),
                1 => format!("    if {a} > {b} {{ return Err(Error::Range({a})); }}\n"),
                2 => format!("    {a}.push({b}[{}]);\n", next() % 16),
                _ => format!("fn {a}(&mut self, {b}: usize) -> Result<usize> {{\n"),
            };
            v.extend_from_slice(line.as_bytes());
        }
        v.truncate(n);
        v
    }

    #[test]
    fn request_lines_step_down_and_code_and_words_keep_their_level() {
        // zip -6 (libdeflate 7) and -5 (6) on 2 MiB pieces. Request lines:
        // libdeflate's 5 is within 1.3 % of 7 on the whole piece; code and
        // word salad gain 8-17 % from the deeper search.
        let cases = [
            ("request lines", request_lines(2 << 20), true),
            ("code", code_lines(2 << 20), false),
            ("words", text(2 << 20, 5), false),
        ];
        for (what, data, lighter) in cases {
            for level in [5, 6] {
                let mut d = PieceDeflater::new(level);
                let mut room = Vec::new();
                assert_eq!(
                    d.lighter_will_do(&data, &mut room),
                    lighter,
                    "{what} at {level}"
                );
                assert!(room.is_empty());
            }
            // zip -4 and -7 keep their own level.
            for level in [4, 7] {
                let mut d = PieceDeflater::new(level);
                assert!(
                    !d.lighter_will_do(&data, &mut Vec::new()),
                    "{what} at {level}"
                );
            }
            // Short pieces are not sampled.
            let mut d = PieceDeflater::new(6);
            assert!(!d.lighter_will_do(&data[..SAMPLE_FROM - 1], &mut Vec::new()));
            let out = chained(&data, &[1 << 20], 6);
            assert!(inflate_all(&out, data.len()) == data, "{what}");
        }
    }

    #[test]
    fn an_empty_last_piece_ends_the_stream() {
        let data = text(5000, 4);
        let out = chained(&data, &[5000], 6);
        assert_eq!(inflate_all(&out, data.len()), data);
        assert_eq!(inflate_all(&chained(&[], &[], 6), 0), b"");
    }
}
