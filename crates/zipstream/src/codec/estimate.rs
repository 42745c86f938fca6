//! What Info-ZIP zip 3.0 would write for a stretch of data at a level, so
//! that a piece can be made as cheaply as that size allows (issue 64: equal
//! work beside Info-ZIP).
//!
//! Info-ZIP's `deflate.c` is zlib's lazy ("slow") match search with zlib's
//! table of parameters (at `-6`: a match this long or more searches a
//! quarter of the chain, 8; no lazy search past 16; stop at 128; follow 128
//! candidates). zlib-rs's level 7 and up run the same lazy search, so
//! zlib-rs at level 7 re-tuned by `deflateTune` to the level's row makes
//! nearly the archive Info-ZIP makes: measured on whole files against
//! `zip -6`, 0.4-3 % smaller on JSON, logs and generated source, about as
//! large on C headers, docs and sources (-1 to +0.4 % a 2 MiB piece). flate2
//! does not expose `deflateTune`, so this calls zlib's C API of zlib-rs
//! through `libz-rs-sys`, as `piece` does for `inflate(Z_BLOCK)`.
//!
//! On shared libraries it is 1.8 % larger than Info-ZIP's on average and up
//! to 8 % on a 2 MiB piece (a 4-byte hash misses the 3-byte matches machine
//! code is full of; zlib-rs's 3-byte rolling hash, which it takes only for
//! chains over 1,024, was 0.2-1.9 % over Info-ZIP on text and cost 0.85x
//! its CPU on the libraries). So a piece steps down only with a margin
//! under the estimate, and what the pieces saved is counted from their real
//! sizes (see `piece`).
#![allow(unsafe_code)]

use std::ffi::c_int;

use libz_rs_sys::{
    Z_DEFAULT_STRATEGY, Z_DEFLATED, Z_FINISH, Z_OK, Z_STREAM_END, deflate, deflateEnd,
    deflateInit2_, deflateReset, deflateTune, z_stream, zlibVersion,
};

/// zlib's (and Info-ZIP's) parameters for the levels that run the lazy
/// search, 4-9: good length, lazy bound, nice length, chain.
const LAZY_ROWS: [[c_int; 4]; 6] = [
    [4, 4, 16, 16],
    [8, 16, 32, 32],
    [8, 16, 128, 128],
    [8, 32, 128, 256],
    [32, 128, 258, 1024],
    [32, 258, 258, 4096],
];

/// zlib-rs's first level with zlib's lazy search (its 2-6 are zlib-ng's
/// "fast" and "medium", which choose matches differently).
const LAZY_LEVEL: c_int = 7;

/// A raw deflate stream of zlib-rs tuned to Info-ZIP's parameters at one
/// level, reset for every stretch it measures.
pub(crate) struct InfoZipEstimate {
    strm: Box<z_stream>,
    /// `deflateTune`'s parameters, applied after every reset (a reset
    /// takes the level's own).
    row: [c_int; 4],
    /// The compressed bytes, thrown away: only their count is wanted.
    out: Vec<u8>,
}

impl InfoZipEstimate {
    /// The estimate for zip's `level` (4-9, the levels where Info-ZIP runs
    /// the lazy search), or None for another level or when zlib-rs cannot
    /// allocate its state.
    pub(crate) fn for_level(level: u32) -> Option<InfoZipEstimate> {
        let row = *LAZY_ROWS.get(usize::try_from(level.checked_sub(4)?).ok()?)?;
        let mut strm = Box::new(z_stream::default());
        // SAFETY: `strm` is a zeroed z_stream (no allocator set, so zlib-rs
        // uses its own), boxed so that it does not move while initialised;
        // the version and size are this library's own.
        let r = unsafe {
            deflateInit2_(
                &mut *strm,
                LAZY_LEVEL,
                Z_DEFLATED,
                -15,
                8,
                Z_DEFAULT_STRATEGY,
                zlibVersion(),
                std::mem::size_of::<z_stream>() as c_int,
            )
        };
        if r != Z_OK {
            return None;
        }
        Some(InfoZipEstimate {
            strm,
            row,
            out: Vec::new(),
        })
    }

    /// Resets the stream for new data and applies the parameters.
    fn reset(&mut self) -> bool {
        let strm = &mut *self.strm;
        let [good, lazy, nice, chain] = self.row;
        // SAFETY: `strm` was initialised by deflateInit2_ and not ended;
        // reset and tune only write its own state.
        unsafe { deflateReset(strm) == Z_OK && deflateTune(strm, good, lazy, nice, chain) == Z_OK }
    }

    /// Deflates all of `data` in one call into `out`, which has room for
    /// its worst case, as a whole stream; the bytes made, or None if
    /// zlib-rs did not end it.
    fn run(&mut self, data: &[u8], out: &mut [u8]) -> Option<usize> {
        if !self.reset() {
            return None;
        }
        let strm = &mut *self.strm;
        strm.next_in = data.as_ptr();
        strm.avail_in = u32::try_from(data.len()).ok()?;
        strm.next_out = out.as_mut_ptr();
        strm.avail_out = u32::try_from(out.len()).ok()?;
        // SAFETY: next_in and avail_in describe `data`, which deflate only
        // reads, next_out and avail_out `out`, borrowed mutably here; both
        // outlive the call, and the stream is reset before its next use.
        let r = unsafe { deflate(strm, Z_FINISH) };
        let made = out.len() - strm.avail_out as usize;
        // Leave no pointers into borrowed buffers behind.
        strm.next_in = std::ptr::null();
        strm.next_out = std::ptr::null_mut();
        (r == Z_STREAM_END).then_some(made)
    }

    /// Room for `len` bytes deflated at worst: stored blocks, with their
    /// headers.
    fn room(len: usize) -> usize {
        len + len / 8 + 64
    }

    /// The size of `data` deflated on its own as Info-ZIP would, near
    /// enough (see the module's doc), or None if zlib-rs failed.
    pub(crate) fn size(&mut self, data: &[u8]) -> Option<usize> {
        let mut out = std::mem::take(&mut self.out);
        out.clear();
        out.resize(InfoZipEstimate::room(data.len()), 0);
        let made = self.run(data, &mut out);
        self.out = out;
        made
    }
}

impl Drop for InfoZipEstimate {
    fn drop(&mut self) {
        // SAFETY: `strm` was initialised by deflateInit2_ and is ended once.
        unsafe { deflateEnd(&mut *self.strm) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_lazy_levels_are_estimated() {
        for level in [0, 1, 2, 3, 10] {
            assert!(InfoZipEstimate::for_level(level).is_none(), "{level}");
        }
        for level in 4..=9 {
            assert!(InfoZipEstimate::for_level(level).is_some(), "{level}");
        }
    }

    #[test]
    fn the_estimate_is_a_stream_that_inflates_and_repeats() {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("line {} of {}\n", i % 977, i % 13).into_bytes())
            .collect();
        let mut e = InfoZipEstimate::for_level(6).unwrap();
        let a = e.size(&text).unwrap();
        assert_eq!(e.size(&text), Some(a), "a reset stream measures the same");
        let mut d = flate2::Decompress::new(false);
        let mut back = vec![0u8; text.len() + 1];
        d.decompress(&e.out[..a], &mut back, flate2::FlushDecompress::Finish)
            .unwrap();
        assert_eq!(&back[..d.total_out() as usize], &text[..]);
        assert_eq!(e.size(&[]).map(|n| n > 0), Some(true));
    }
}
