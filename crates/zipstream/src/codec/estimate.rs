//! What Info-ZIP zip 3.0 would write for a stretch of data at a level, so
//! that a piece can be made as cheaply as that size allows (issue 64: equal
//! work beside Info-ZIP).
//!
//! Info-ZIP's `deflate.c` is zlib's deflate: the same hash of 3 bytes into
//! 2^15 chains, the same table of parameters per level (at `-6`: a quarter
//! of the chain once a match is 8 long, no lazy search past 16, stop at 128,
//! 128 candidates) and the same lazy ("slow") match choice. So the estimate
//! is zlib itself (1.3.2, built from the source `libz-sys` bundles) at the
//! same level, whose raw deflate of a stretch is Info-ZIP's for it: on 2 MiB
//! pieces of 14 inputs (text, logs, sources, headers, docs, binaries),
//! zlib 1.2.13's `-6` is within 0.1 % of Info-ZIP's archive of the piece.
//!
//! zlib-rs at its level 7 tuned to the same parameters (`deflateTune`) was
//! the estimate until then, at 0.56x zlib's CPU, but its 4-byte hash chains
//! reach further back in 128 candidates and miss the 3-byte matches machine
//! code is full of: on 64 KiB samples it was 1.3-2.3 % under Info-ZIP's
//! size on JSON and logs (so pieces that could go cheaper were kept at
//! libdeflate's 7) and 6-9 % over it on shared libraries and binaries.
//! What a sample still misses about its piece (it starts cold) is left to
//! `piece`'s margin.
//!
//! flate2 runs on zlib-rs here, so this calls zlib's C API through
//! `libz-sys` directly: the stream is made, reset and ended below.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void};

use libz_sys::{
    Z_DEFAULT_STRATEGY, Z_DEFLATED, Z_FINISH, Z_OK, Z_STREAM_END, deflate, deflateEnd,
    deflateInit2_, deflateReset, uInt, voidpf, z_stream, zlibVersion,
};

/// zlib's allocator for this stream: `libz-sys`'s `z_stream` takes
/// function pointers, not zlib's `Z_NULL` for its default.
unsafe extern "C" fn zalloc(_opaque: voidpf, items: uInt, size: uInt) -> voidpf {
    // SAFETY: calloc takes any counts; zlib checks the result for null.
    unsafe { libc::calloc(items as usize, size as usize) }
}

/// Frees what [`zalloc`] gave.
unsafe extern "C" fn zfree(_opaque: voidpf, address: voidpf) {
    // SAFETY: zlib frees only what zalloc returned, each once.
    unsafe { libc::free(address) }
}

/// A raw deflate stream of zlib at one level, reset for every stretch it
/// measures.
pub(crate) struct InfoZipEstimate {
    strm: Box<z_stream>,
    /// The compressed bytes, thrown away: only their count is wanted.
    out: Vec<u8>,
}

impl InfoZipEstimate {
    /// The estimate for zip's `level` (1-9), or None for another level or
    /// when zlib cannot allocate its state.
    pub(crate) fn for_level(level: u32) -> Option<InfoZipEstimate> {
        if !(1..=9).contains(&level) {
            return None;
        }
        let mut strm = Box::new(z_stream {
            next_in: std::ptr::null_mut(),
            avail_in: 0,
            total_in: 0,
            next_out: std::ptr::null_mut(),
            avail_out: 0,
            total_out: 0,
            msg: std::ptr::null_mut(),
            state: std::ptr::null_mut(),
            zalloc,
            zfree,
            opaque: std::ptr::null_mut::<c_void>(),
            data_type: 0,
            adler: 0,
            reserved: 0,
        });
        // SAFETY: `strm` is boxed, so it does not move while initialised,
        // with this module's allocator and no buffers; the version and size
        // are this library's own. Raw deflate (-15) with memLevel 8: zlib's
        // and Info-ZIP's 2^15 hash chains.
        let r = unsafe {
            deflateInit2_(
                &mut *strm,
                level as c_int,
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
            out: Vec::new(),
        })
    }

    /// Deflates all of `data` in one call into `out`, which has room for
    /// its worst case, as a whole stream; the bytes made, or None if zlib
    /// did not end it.
    fn run(&mut self, data: &[u8], out: &mut [u8]) -> Option<usize> {
        let strm = &mut *self.strm;
        // SAFETY: `strm` was initialised by deflateInit2_ and not ended;
        // reset only writes its own state.
        if unsafe { deflateReset(strm) } != Z_OK {
            return None;
        }
        // zlib only reads through next_in; its type is not const.
        strm.next_in = data.as_ptr().cast_mut();
        strm.avail_in = uInt::try_from(data.len()).ok()?;
        strm.next_out = out.as_mut_ptr();
        strm.avail_out = uInt::try_from(out.len()).ok()?;
        // SAFETY: next_in and avail_in describe `data`, which deflate only
        // reads, next_out and avail_out `out`, borrowed mutably here; both
        // outlive the call, and the stream is reset before its next use.
        let r = unsafe { deflate(strm, Z_FINISH) };
        let made = out.len() - strm.avail_out as usize;
        // Leave no pointers into borrowed buffers behind.
        strm.next_in = std::ptr::null_mut();
        strm.next_out = std::ptr::null_mut();
        (r == Z_STREAM_END).then_some(made)
    }

    /// Room for `len` bytes deflated at worst: stored blocks, with their
    /// headers.
    fn room(len: usize) -> usize {
        len + len / 8 + 64
    }

    /// The size of `data` deflated on its own as Info-ZIP would, or None
    /// if zlib failed.
    pub(crate) fn size(&mut self, data: &[u8]) -> Option<usize> {
        let mut out = std::mem::take(&mut self.out);
        // Grown once, never cleared: zlib writes before anything is read.
        if out.len() < InfoZipEstimate::room(data.len()) {
            out.resize(InfoZipEstimate::room(data.len()), 0);
        }
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
    use crate::codec::tests::xorshift;

    #[test]
    fn only_zip_levels_are_estimated() {
        for level in [0, 10] {
            assert!(InfoZipEstimate::for_level(level).is_none(), "{level}");
        }
        for level in 1..=9 {
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

    /// `n` bytes of JSON records, one a line, as a service logs them.
    fn json_records(n: usize) -> Vec<u8> {
        let names = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut out = Vec::with_capacity(n + 200);
        let mut i = 0u64;
        while out.len() < n {
            xorshift(&mut x);
            out.extend_from_slice(
                format!(
                    "{{\"id\":{i},\"user\":\"{}{}\",\"score\":{}.{},\"tags\":[\"{}\"],\"ok\":{}}}\n",
                    names[(x % 6) as usize],
                    x % 97,
                    (x >> 8) % 1000,
                    (x >> 20) % 100,
                    names[((x >> 30) % 6) as usize],
                    x >> 40 & 1 == 1
                )
                .as_bytes(),
            );
            i += 1;
        }
        out.truncate(n);
        out
    }

    /// `n` bytes shaped like machine code: short opcodes from a small
    /// set, registers, and displacements that recur, where most matches
    /// are 3 bytes long.
    fn machine_code(n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut out = Vec::with_capacity(n + 8);
        while out.len() < n {
            xorshift(&mut x);
            let op = [0x48u8, 0x89, 0x8b, 0xe8, 0x0f, 0x83, 0xc7, 0x85][(x % 8) as usize];
            out.push(op);
            out.push((x >> 8) as u8 & 0x3f);
            if x >> 16 & 1 == 0 {
                out.extend_from_slice(&((x >> 20) as u16 % 600).to_le_bytes());
            }
        }
        out.truncate(n);
        out
    }

    /// Info-ZIP's own archive is the oracle: the estimate of 64 KiB (a
    /// sample's size) is the compressed size `zip -6` writes for it.
    /// zlib-rs's tuned search, the estimate before, was 1.3-2.3 % under
    /// it on JSON and logs and 6-9 % over on machine code.
    #[test]
    fn the_estimate_is_what_info_zip_writes() {
        if !perfkit_testkit::interop::have("zip", "-v", "apt-get install zip") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        for (what, data) in [
            ("JSON records", json_records(64 << 10)),
            ("machine code", machine_code(64 << 10)),
        ] {
            let input = dir.path().join("input");
            std::fs::write(&input, &data).unwrap();
            let archive = dir.path().join("a.zip");
            let _ = std::fs::remove_file(&archive);
            perfkit_testkit::interop::ok(
                std::process::Command::new("zip")
                    .args(["-q", "-6", "-j"])
                    .arg(&archive)
                    .arg(&input),
            );
            let zip = std::fs::read(&archive).unwrap();
            // The local header: method at 8 (deflate), compressed size at 18.
            assert_eq!(zip[8..10], [8, 0], "{what}: not deflated");
            let theirs = u32::from_le_bytes(zip[18..22].try_into().unwrap()) as usize;
            let ours = InfoZipEstimate::for_level(6).unwrap().size(&data).unwrap();
            assert!(
                ours.abs_diff(theirs) * 1000 <= theirs,
                "{what}: estimate {ours} bytes, Info-ZIP's {theirs}"
            );
        }
    }
}
