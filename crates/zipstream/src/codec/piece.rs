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

use std::ffi::c_int;

use libz_rs_sys::{
    Z_BLOCK, Z_OK, Z_STREAM_END, inflate, inflateEnd, inflateInit2_, z_stream, zlibVersion,
};

use super::estimate::InfoZipEstimate;
use super::put_stored;

mod compressor;

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

/// The libdeflate levels a piece of zip's `level` may be made at,
/// cheapest first, the last its level's own ([`libdeflate_level`]): zip's
/// -5 and -6, where a piece takes the cheapest whose sample comes out under
/// what Info-ZIP would write for it ([`PieceDeflater::choose`]). Measured
/// on whole files against `zip -6` (2 MiB pieces): JSON and JSON-lines logs
/// are 1.2-1.7 % under Info-ZIP at libdeflate's 6 (0.4x its CPU), syslog
/// and access logs 0.1-1.2 % under it at 5 (0.3x), where the 7 of every
/// piece spends 0.6-0.7x and is 4-9 % under; generated source is 2.4 %
/// over at 6 and 7.9 % at 5, and C headers 1.2 % over at 6, so they keep
/// 7. (zlib-rs's "medium" search, 0.9 % under on generated source at 0.5x,
/// was not under the estimate less its margin there, and 1.1 % over on C
/// headers: as a rung it only cost its sample.) Other levels keep their
/// own.
fn ladder(level: u32) -> &'static [i32] {
    match level {
        5 => &[5, 6],
        6 => &[5, 6, 7],
        _ => &[],
    }
}

/// Bytes of the sample: one stretch from a piece's middle, measured by the
/// estimate and at one to three levels (3 % of a 2 MiB piece each).
///
/// A sample starts cold, where the piece's data has up to 32 KiB of
/// history behind it, and libdeflate's 6 (35 candidates) loses less to
/// Info-ZIP's search (128) without history than with it: on generated
/// source its 32 KiB sample came out 2.9 % nearer Info-ZIP's size for the
/// sample than its 2 MiB piece came to Info-ZIP's size for the piece
/// (zlib 1.2.13's -6, which Info-ZIP's matches within 0.1 %), where 64 KiB
/// came out 2.0 % nearer, 96 KiB 1.5 % and 128 KiB 1.4 % (means over the
/// pieces; libdeflate's 7, with 100 candidates, 0.6-0.8 % at every size).
/// That error is what [`MARGIN`] must cover; 64 KiB takes a third off it
/// for one more 32 KiB of each level's work per piece.
const SAMPLE: usize = 64 << 10;

/// Pieces shorter than this take the short sample ([`SHORT_SAMPLE`]): a
/// sample is at most a sixteenth of its piece.
const SAMPLE_FROM: usize = 16 * SAMPLE;

/// Bytes of the sample of a piece shorter than [`SAMPLE_FROM`] (a short
/// entry, or an entry's last piece), judged with [`SHORT_MARGIN`]. The
/// estimate costs about what Info-ZIP spends on the sample, so a 64 KiB
/// sample of a 500 kB entry was 12 % of Info-ZIP's work on it, where
/// libdeflate's 6 in place of its 7 saves 30 % on JSON (the corpus's 500 kB
/// JSON: zlib's -6 5.5 ms, libdeflate's 7 4.3 ms, 6 2.7 ms, zlib on 64 KiB
/// 0.64 ms, on 32 KiB 0.25 ms; hot, in one process) and nothing on text or
/// sources, whose 7 is all that passes. 32 KiB is the shortest sample
/// whose error the margin covers: on 156 slices of 500 kB (and as many of
/// 256 KiB) cut from 29 inputs (logs, JSON, CSV, XML, sources, headers,
/// docs, libraries, binaries, compressed and repeated data), each judged on
/// its middle 32 KiB alone as one entry's only piece, the worst came out
/// 0.06 % over zlib's -6 of the slice (C headers, at libdeflate's 6) with a
/// 1.5 % margin and 0.55 % over with 1 %; 16 KiB samples needed 2.5 %, and
/// were 1.4-2.6 % over with less.
const SHORT_SAMPLE: usize = 32 << 10;

/// Pieces shorter than this are compressed at their level without a
/// sample: the estimate of even the short sample would be a large part of
/// the work (on the corpus's 100 kB binary zlib's -6 of 32 KiB costs a
/// quarter of what Info-ZIP spends on the file, where libdeflate's lighter
/// levels save a tenth of its 7). Twelve short samples: the corpus's
/// 500 kB files (488 KiB) are sampled, at 1/15 of their bytes.
const SHORT_FROM: usize = 12 * SHORT_SAMPLE;

/// [`MARGIN`] for a piece judged by the short sample ([`SHORT_SAMPLE`]),
/// thousandths.
const SHORT_MARGIN: i64 = 15;

/// libdeflate's level that tells data that hardly shrinks before a sample
/// is estimated ([`SHRINKS_DIV`]).
const PROBE_LEVEL: i32 = 1;

/// A sample whose middle half libdeflate's fastest level shrinks by less
/// than a `SHRINKS_DIV`th (12.5 %) is not estimated: its piece goes at
/// its level's own, as before the ladder. On 16 MiB of `.gz`/`.xz`/`.zst`
/// files the estimate and the samples took 0.08x Info-ZIP's CPU for
/// nothing.
const SHRINKS_DIV: usize = 8;

/// A level is taken for a piece only if the entry, that piece included,
/// stays `MARGIN` thousandths (1 %) under the estimate of Info-ZIP's
/// size. The estimate is Info-ZIP's size for the sample itself; the margin
/// covers what the sample misses about its piece, that a cold sample is
/// kinder to a lighter level (see [`SAMPLE`]). Measured on every 2 MiB
/// piece of 25 inputs (generated data, logs, CSV and XML, tars of sources,
/// headers, docs, man pages, images, compressed files and libraries),
/// libdeflate 6's ratio to the estimate on its 64 KiB sample was on
/// average 2.0 % under its piece's ratio to Info-ZIP's size on the
/// corpus's generated source, 0.5-1.7 % under on JSON, CSV, C headers and
/// Perl's library, and within 1.2 % either way elsewhere but on repeated
/// data, which goes on in the dense stream (`codec`) (its 5: 3.5 %
/// under on the source, where it is 7.6 % over Info-ZIP's size and never
/// passes). So an entry of such pieces lands at most that error less the
/// margin over Info-ZIP's archive: the generated source +0.45 %, the only
/// input over it but the C headers (+0.23 %, every piece at 7).
const MARGIN: i64 = 10;

/// At most this many pieces in a row go at the level's own without a
/// sample ([`PieceDeflater::plan_skip`]): an entry is sampled at least
/// every 8 MiB, so data that changes is judged again within 6 MiB.
const MAX_SKIP: u32 = 3;

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

/// The libdeflate levels of a zip level, the estimate of Info-ZIP's size
/// that chooses among them, and the scratch their check decodes into.
pub(crate) struct PieceDeflater {
    /// libdeflate's level for the zip level.
    level: i32,
    /// The zip level, for the estimate.
    zip_level: u32,
    /// The levels the pieces may be made at ([`ladder`]; empty for the
    /// level's own alone).
    ladder: &'static [i32],
    /// The libdeflate levels this deflater has compressed at, a bit each:
    /// what its choices cost (the compressors themselves are the thread's,
    /// `compressor`).
    made_at: u16,
    /// Info-ZIP's size at the zip level, made for the first sampled piece.
    estimate: Option<InfoZipEstimate>,
    /// The stream's pieces so far: what Info-ZIP would have written for
    /// them, less the margin, less what they came to (bytes; may be below
    /// zero, when even the level's own came out over).
    credit: i64,
    /// Where on the ladder the last piece went: the next walk starts there.
    rung: usize,
    /// Sampled pieces in a row that went at the level's own because the
    /// rung below missed (pieces skipped between them not counted).
    streak: u32,
    /// Pieces still to be made at the level's own without a sample
    /// ([`PieceDeflater::plan_skip`]).
    skip: u32,
    /// The sample the skipped pieces are counted by (at the level's own),
    /// or None when they are not counted.
    skip_counted: Option<Chosen>,
    /// The probe of the next piece, made by [`PieceDeflater::dense`] for
    /// [`PieceDeflater::choose`] to use rather than make again.
    probed: Option<Probe>,
    scratch: Vec<u8>,
    /// What libdeflate writes a piece or a sample into, kept for the next:
    /// writing into the end of the output at the bound of its worst case
    /// zeroed and touched the whole bound (a fresh page fault every 4 KiB
    /// for a short entry's 500 kB, where 74 kB were written); pieces are
    /// copied out at the size they came to.
    comp: Vec<u8>,
}

impl PieceDeflater {
    /// A deflater for zip's `level` (1-9, mapped by `libdeflate_level`);
    /// its compressors are the thread's ([`compressor`]), kept from an
    /// earlier entry.
    pub(crate) fn new(level: u32) -> PieceDeflater {
        let level = level.clamp(1, 9);
        PieceDeflater {
            level: libdeflate_level(level),
            zip_level: level,
            ladder: ladder(level),
            made_at: 0,
            estimate: None,
            credit: 0,
            rung: usize::MAX,
            streak: 0,
            skip: 0,
            skip_counted: None,
            probed: None,
            scratch: Vec::new(),
            comp: Vec::new(),
        }
    }

    /// Starts a new stream (or a stretch compressed apart from the rest):
    /// the pieces before it no longer count for the ones after.
    pub(crate) fn new_stream(&mut self) {
        self.credit = 0;
        self.rung = usize::MAX;
        self.streak = 0;
        self.skip = 0;
        self.skip_counted = None;
    }

    /// Whether a piece or a sample was made at a libdeflate level other
    /// than the probe's: whether the ladder ran.
    #[cfg(test)]
    pub(crate) fn made_beyond_probes(&self) -> bool {
        self.made_at & !(1 << PROBE_LEVEL) != 0
    }

    /// Compresses `input` at libdeflate's `level` (the thread's compressor,
    /// [`compressor`]) into [`PieceDeflater::comp`]: the bytes made, or
    /// None if libdeflate refused (never, at its own bound, but for want
    /// of memory).
    fn compress(&mut self, level: i32, input: &[u8]) -> Option<usize> {
        self.made_at |= 1 << level.clamp(0, 15);
        let bound = compressor::bound(input.len());
        if self.comp.len() < bound {
            // Made anew, not resized: fresh zeroed memory comes from the
            // allocator already zero (calloc), so the pages libdeflate does
            // not write are never touched.
            self.comp = vec![0u8; bound];
        }
        compressor::deflate(level, input, &mut self.comp[..bound])
    }

    /// Appends `data` to `out` as one piece of a deflate stream: the
    /// stream's end when `last`, else ending on a byte boundary with the
    /// stream still open. A piece libdeflate did not make exactly (its
    /// check failed) goes out as stored blocks.
    pub(crate) fn piece(&mut self, data: &[u8], last: bool, out: &mut Vec<u8>) {
        let chosen = self.choose(data, last);
        let start = out.len();
        self.libdeflate_piece(chosen.map_or(self.level, |c| c.level), data, last, out);
        if let Some(c) = chosen {
            // What Info-ZIP would have made of the piece: the piece's size
            // scaled by the two sizes of its sample.
            let made = (out.len() - start) as i64;
            let theirs = made * c.theirs as i64 / c.ours.max(1) as i64;
            self.credit += theirs - theirs * c.margin / 1000 - made;
        }
    }

    /// Appends `data` as a piece made by libdeflate at `level`, checked and
    /// chained (see [`PieceDeflater::piece`]).
    fn libdeflate_piece(&mut self, level: i32, data: &[u8], last: bool, out: &mut Vec<u8>) {
        let start = out.len();
        // The bound is libdeflate's own worst case, so it always fits; were
        // it ever refused, the stored fallback below keeps the stream valid.
        let made = self.compress(level, data);
        out.extend_from_slice(&self.comp[..made.unwrap_or(0)]);
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

    /// The sample's probe for a piece of `data`: libdeflate's fastest
    /// level ([`PROBE_LEVEL`]) on the middle half of the sample
    /// [`PieceDeflater::choose`] would take. None for a level without a
    /// ladder or a piece too short to sample, which are not probed.
    fn probe(&mut self, data: &[u8]) -> Option<Probe> {
        let (sample_len, margin) = match data.len() {
            n if n >= SAMPLE_FROM => (SAMPLE, MARGIN),
            n if n >= SHORT_FROM => (SHORT_SAMPLE, SHORT_MARGIN),
            _ => return None,
        };
        if self.ladder.len() < 2 {
            return None;
        }
        let at = (data.len() - sample_len) / 2 + sample_len / 4;
        let probe = &data[at..at + sample_len / 2];
        Some(Probe {
            sample_len,
            margin,
            len: probe.len(),
            made: self.compress(PROBE_LEVEL, probe),
        })
    }

    /// Whether the probe finds `data`, the next piece, at least `times`
    /// times smaller (false for a piece that is not probed). A piece found
    /// not so keeps its probe for [`PieceDeflater::choose`]; one found so
    /// is the caller's to write another way.
    pub(crate) fn dense(&mut self, data: &[u8], times: usize) -> bool {
        let Some(probed) = self.probe(data) else {
            return false;
        };
        let dense = probed.made.is_some_and(|n| n * times <= probed.len);
        if !dense {
            self.probed = Some(probed);
        }
        dense
    }

    /// The cheapest level of the ladder that keeps the stream under the
    /// estimate of Info-ZIP's size with the piece made at it, as its
    /// sample predicts, or the level's own when none does; None for a
    /// level without a ladder, a piece too short to sample, data that
    /// hardly shrinks, an estimate that failed, or a skipped piece not
    /// counted (the piece then goes at its level's own, uncounted).
    /// The walk starts at the previous piece's level (the rung below the
    /// level's own after that or at first), goes down while the next level
    /// passes, else up: a stretch of like pieces costs the estimate and one
    /// to three sample compressions each.
    ///
    /// When a piece went up to the level's own because the rung below
    /// missed, the next pieces skip their samples for as long as a like
    /// piece could not pass either ([`PieceDeflater::plan_skip`]).
    fn choose(&mut self, data: &[u8], last: bool) -> Option<Chosen> {
        let ladder = self.ladder;
        let probed = match self.probed.take() {
            Some(probed) => probed,
            None => self.probe(data)?,
        };
        let (sample_len, margin) = (probed.sample_len, probed.margin);
        let at = (data.len() - sample_len) / 2;
        let sample = &data[at..at + sample_len];
        let own = ladder.len() - 1;
        let mut i = self.rung.min(own - 1);
        // Data that hardly shrinks (compressed files, media) comes out
        // about as large at every level: the estimate would be most of
        // the cost of choosing, so the piece goes at its level's own. It
        // is told by the probe, a few hundredths of the sample's cost:
        // judged at the ladder's level on the whole 64 KiB, 32 MiB of
        // packages' docs (mostly `.gz`) took 0.48x Info-ZIP's CPU, 0.46x
        // so. (The fastest level shrinks less than the ladder's, so a
        // little more data goes at the level's own, unestimated.) A
        // skipped piece is probed too, so that such data is never counted
        // by a sample of other data.
        if probed
            .made
            .is_none_or(|n| n * SHRINKS_DIV > probed.len * (SHRINKS_DIV - 1))
        {
            return None;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return self.skip_counted;
        }
        let size_at = |this: &mut Self, i: usize| this.compress(ladder[i], sample);
        let mut ours = size_at(self, i);
        if self.estimate.is_none() {
            self.estimate = InfoZipEstimate::for_level(self.zip_level);
        }
        let theirs = self.estimate.as_mut().and_then(|e| e.size(sample))?;
        // Piece sizes predicted from the sample's: in bytes of the piece.
        let scale = |n: usize| (n as i64) * data.len() as i64 / sample_len as i64;
        let budget = self.credit + scale(theirs) - scale(theirs) * margin / 1000;
        let passes = |n: Option<usize>| n.is_some_and(|n| scale(n) <= budget);
        // The rung below the level's own, when sampled and missed.
        let mut missed = None;
        if passes(ours) {
            while i > 0 {
                let lower = size_at(self, i - 1);
                if !passes(lower) {
                    break;
                }
                i -= 1;
                ours = lower;
            }
        } else {
            // Up to the level's own, which is taken even if it fails:
            // sampled all the same, so that its piece is counted at its
            // own ratio to Info-ZIP's (counted at the rung below's, 2-4 %
            // larger, JSON's pieces at 7 left too little for the next to
            // go at 6 and all stayed at 7). Not the stream's last piece:
            // no piece after it would spend what it earns, so it goes at
            // the level's own uncounted, its sample spared.
            while i < own {
                missed = ours;
                i += 1;
                if i == own && last {
                    ours = None;
                    break;
                }
                ours = size_at(self, i);
                if passes(ours) {
                    break;
                }
            }
        }
        self.rung = i;
        let ours = ours?;
        match missed {
            Some(missed) if i == own => {
                self.streak += 1;
                let earns = scale(theirs) - scale(theirs) * margin / 1000 - scale(ours);
                let counted = Chosen {
                    level: ladder[own],
                    ours,
                    theirs,
                    margin,
                };
                self.plan_skip(scale(missed) - budget, earns, counted);
            }
            _ => self.streak = 0,
        }
        Some(Chosen {
            level: ladder[i],
            ours,
            theirs,
            margin,
        })
    }

    /// After a piece went at the level's own because the rung below missed
    /// its budget by `deficit` bytes, skips the samples of some of the next
    /// pieces, betting they are like this one: none until three pieces in
    /// a row went so ([`PieceDeflater::streak`]), then one, two, and at
    /// most [`MAX_SKIP`]. A wrong bet costs a piece at libdeflate's 7 where
    /// 6 or 5 would have done (0.2-0.3x Info-ZIP's CPU for that piece),
    /// a right one saves its sample (the estimate and two libdeflate levels
    /// of 64 KiB, 0.05x), so it is made only where the level's own has held
    /// for a while: after one or two such pieces, a build log's next piece
    /// went at 6, and a tar of Python's library alternated. A piece at the
    /// level's own earns `earns` bytes of credit (its sample's prediction
    /// against the estimate less the margin). While that is nothing or less
    /// (C headers, man pages: libdeflate's 7 within the margin of Info-ZIP's
    /// size) no like piece below the level's own could pass however many
    /// follow, and the skipped pieces go uncounted, as a piece too short to
    /// sample does. Else only as many as the deficit takes to earn are
    /// skipped, counted by this sample (`counted`), so that the next sampled
    /// piece may pass with what they earned.
    fn plan_skip(&mut self, deficit: i64, earns: i64, counted: Chosen) {
        let most = self.streak.saturating_sub(2).min(MAX_SKIP);
        if earns <= 0 {
            self.skip = most;
            self.skip_counted = None;
        } else {
            let pieces = (deficit / earns).clamp(0, i64::from(most));
            self.skip = pieces as u32;
            self.skip_counted = Some(counted);
        }
    }
}

/// A piece's probe ([`PieceDeflater::probe`]) and the sample it was
/// taken from.
#[derive(Debug, Clone, Copy)]
struct Probe {
    /// Bytes of the sample, and its margin.
    sample_len: usize,
    margin: i64,
    /// Bytes probed, and what they came to (None: libdeflate refused).
    len: usize,
    made: Option<usize>,
}

/// A piece's level as [`PieceDeflater::choose`] chose it, with its
/// sample's size at that level, Info-ZIP's estimated size for it and the
/// margin (thousandths) its sample is judged with.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Chosen {
    level: i32,
    ours: usize,
    theirs: usize,
    margin: i64,
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

/// Bytes the check inflates into at a time: each stretch is compared with
/// its input and the scratch reused, so the check touches 64 KiB whatever
/// the piece's size. Inflating a whole piece into scratch of its size
/// touched 2 MiB, and a short entry's check faulted in fresh pages for all
/// of it (on the corpus's 500 kB JSON, 122 of the 525 page faults `zip -6`
/// takes beyond a 1-byte file's, at about 1.7 µs each on this machine).
const CHECK_STRETCH: usize = 64 << 10;

/// Decodes the complete raw deflate stream `comp` block by block: returns
/// where its last block starts and ends if it inflates to exactly `data`
/// and ends at `comp`'s last byte, else None.
pub(crate) fn block_ends(comp: &[u8], data: &[u8], scratch: &mut Vec<u8>) -> Option<BlockEnds> {
    // One byte of room past the data: a stream that makes more than it
    // should is seen, not cut short. Made once, never cleared: inflate
    // writes what is compared below, and no more than it wrote is read.
    if scratch.len() < CHECK_STRETCH + 1 {
        *scratch = vec![0u8; CHECK_STRETCH + 1];
    }
    let avail_in = u32::try_from(comp.len()).ok()?;
    // Room for the next stretch: up to one byte past the data's end.
    let room = |checked: usize| (data.len() - checked + 1).min(CHECK_STRETCH + 1);
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
    let mut checked = 0usize;
    let mut window = room(0);
    strm.next_in = comp.as_ptr();
    strm.avail_in = avail_in;
    strm.next_out = scratch.as_mut_ptr();
    // At most CHECK_STRETCH + 1, which fits.
    strm.avail_out = window as u32;
    let mut last_start = 0u64;
    let mut end = None;
    let result = loop {
        // SAFETY: `strm` was initialised above and not ended; next_in and
        // avail_in describe the rest of `comp`, which inflate only reads,
        // next_out and avail_out the first `window` bytes of `scratch`
        // (at most its length), which this function borrows mutably until
        // the stream is ended below; inflate advances them together.
        let r = unsafe { inflate(&mut *strm, Z_BLOCK) };
        let bit = strm.total_in * 8 - (strm.data_type & 7) as u64;
        // What this call made must be the next bytes of the data; the
        // stretch is then free for the next call.
        let made = window - strm.avail_out as usize;
        let full = strm.avail_out == 0;
        if made > data.len() - checked || scratch[..made] != data[checked..checked + made] {
            break None;
        }
        checked += made;
        window = room(checked);
        strm.next_out = scratch.as_mut_ptr();
        strm.avail_out = window as u32;
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
        } else if !full {
            // Z_OK inside a block with room left: the input ran out short
            // of the stream's end (a truncated stream).
            break None;
        }
    };
    let consumed = strm.total_in as usize;
    // SAFETY: `strm` was initialised by inflateInit2_ and is ended once.
    unsafe { inflateEnd(&mut *strm) };
    let ends = result?;
    let whole = checked == data.len()
        && consumed == comp.len()
        && ends.end.div_ceil(8) == comp.len() as u64;
    whole.then_some(ends)
}

#[cfg(test)]
mod tests;
