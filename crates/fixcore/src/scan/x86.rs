//! x86-64 SIMD scan kernels. All `unsafe` of the scanner lives here.
//!
//! Each public function checks the CPU features and the output slack itself
//! and returns `None` when the path cannot run, so callers stay safe code.
//! `SUM` asks for the byte sum too (0 without); `TAG` for
//! [`SOH_FLAG`](super::SOH_FLAG) on SOH positions (the caller keeps
//! positions below 2^31). Both are const generics, passed straight to the
//! kernels, so each combination compiles to its own loop.

use std::mem::MaybeUninit;

#[cfg(target_arch = "x86_64")]
pub use imp::*;

#[cfg(not(target_arch = "x86_64"))]
mod imp_none {
    use std::mem::MaybeUninit;
    pub fn has_avx2() -> bool {
        false
    }
    pub fn bars_to_soh(_: &mut [u8], _: usize, _: &mut Vec<usize>) -> bool {
        false
    }
    pub fn count_byte(_: &[u8], _: u8) -> Option<usize> {
        None
    }
    pub fn has_avx512() -> bool {
        false
    }
    pub fn has_avx512_vbmi2() -> bool {
        false
    }
    pub fn avx2<const SUM: bool, const TAG: bool>(
        _: &[u8],
        _: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, u64)> {
        None
    }
    pub fn avx512<const SUM: bool, const TAG: bool>(
        _: &[u8],
        _: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, u64)> {
        None
    }
    pub fn avx512_vbmi2<const SUM: bool, const TAG: bool>(
        _: &[u8],
        _: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, u64)> {
        None
    }
}
#[cfg(not(target_arch = "x86_64"))]
pub use imp_none::*;

/// Elements the kernels may write past `msg.len()`.
const WRITE_SLACK: usize = 64;

fn has_room(msg: &[u8], out: &[MaybeUninit<u32>]) -> bool {
    out.len() >= msg.len() + WRITE_SLACK
}

#[cfg(target_arch = "x86_64")]
mod imp {
    use super::has_room;
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;
    use std::sync::atomic::{AtomicU8, Ordering};

    /// Which paths the CPU can run, as bits below, plus [`KNOWN`] once
    /// detected: one load per scan instead of four feature checks and a call
    /// (~20 instructions, a tenth of a 200-byte scan).
    static PATHS: AtomicU8 = AtomicU8::new(0);
    const KNOWN: u8 = 1;
    const AVX2: u8 = 2;
    const AVX512: u8 = 4;
    const VBMI2: u8 = 8;

    #[inline]
    fn paths() -> u8 {
        match PATHS.load(Ordering::Relaxed) {
            0 => detect_paths(),
            p => p,
        }
    }

    #[cold]
    fn detect_paths() -> u8 {
        let avx2 = is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("bmi1")
            && is_x86_feature_detected!("popcnt");
        let avx512 = is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("popcnt");
        let vbmi2 = avx512 && is_x86_feature_detected!("avx512vbmi2");
        let p = KNOWN
            | if avx2 { AVX2 } else { 0 }
            | if avx512 { AVX512 } else { 0 }
            | if vbmi2 { VBMI2 } else { 0 };
        PATHS.store(p, Ordering::Relaxed);
        p
    }

    /// AVX2 plus the bit-manipulation instructions the mask walk uses.
    #[inline]
    pub fn has_avx2() -> bool {
        paths() & AVX2 != 0
    }

    /// [`super::super::bars_to_soh`] 32 bytes at a time; `false`, with
    /// nothing done, when the CPU lacks AVX2.
    #[inline]
    pub fn bars_to_soh(block: &mut [u8], base: usize, breaks: &mut Vec<usize>) -> bool {
        if !has_avx2() {
            return false;
        }
        // SAFETY: AVX2 checked just above.
        unsafe { bars_to_soh_avx2(block, base, breaks) };
        true
    }

    /// Each vector's `|` selected to SOH and its line breaks taken from a
    /// compare's mask (a block of lines holds one every few vectors); the
    /// tail goes a byte at a time.
    #[target_feature(enable = "avx2,bmi1")]
    unsafe fn bars_to_soh_avx2(block: &mut [u8], base: usize, breaks: &mut Vec<usize>) {
        let bar = _mm256_set1_epi8(b'|' as i8);
        let soh = _mm256_set1_epi8(super::super::SOH as i8);
        let lf = _mm256_set1_epi8(b'\n' as i8);
        let mut vectors = block.chunks_exact_mut(32);
        let mut at = base;
        for v in &mut vectors {
            let p = v.as_mut_ptr().cast::<__m256i>();
            // SAFETY: `v` is 32 bytes, read and written whole; unaligned
            // loads and stores are allowed.
            let x = unsafe { _mm256_loadu_si256(p) };
            let mapped = _mm256_blendv_epi8(x, soh, _mm256_cmpeq_epi8(x, bar));
            // SAFETY: as above.
            unsafe { _mm256_storeu_si256(p, mapped) };
            let mut m = _mm256_movemask_epi8(_mm256_cmpeq_epi8(x, lf)) as u32;
            while m != 0 {
                breaks.push(at + m.trailing_zeros() as usize);
                m &= m - 1;
            }
            at += 32;
        }
        super::super::bars_to_soh_portable(vectors.into_remainder(), at, breaks);
    }

    /// [`super::super::count_byte`] 32 bytes at a time; `None` when the
    /// CPU lacks AVX2.
    #[inline]
    pub fn count_byte(bytes: &[u8], byte: u8) -> Option<usize> {
        if !has_avx2() {
            return None;
        }
        // SAFETY: AVX2 checked just above.
        Some(unsafe { count_byte_avx2(bytes, byte) })
    }

    /// The portable count, compiled for AVX2.
    #[target_feature(enable = "avx2")]
    unsafe fn count_byte_avx2(bytes: &[u8], byte: u8) -> usize {
        super::super::count_byte_portable(bytes, byte)
    }

    /// AVX-512 F + BW (byte compares into mask registers, dword compress).
    #[inline]
    pub fn has_avx512() -> bool {
        paths() & AVX512 != 0
    }

    /// AVX-512 VBMI2 (byte compress) on top of [`has_avx512`].
    #[inline]
    pub fn has_avx512_vbmi2() -> bool {
        paths() & VBMI2 != 0
    }

    /// AVX2 scan; `None` if unavailable or `out` lacks slack.
    #[inline]
    pub fn avx2<const SUM: bool, const TAG: bool>(
        msg: &[u8],
        out: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, u64)> {
        if !has_avx2() || !has_room(msg, out) {
            return None;
        }
        let out = out.as_mut_ptr().cast::<u32>();
        // SAFETY: features checked just above; `out` has `msg.len() + 64`
        // elements and the kernel writes at most 32 past `msg.len()`.
        Some(unsafe { avx2_kernel::<SUM, TAG>(msg, out) })
    }

    /// AVX-512 dword-compress scan; `None` if unavailable or short of slack.
    #[inline]
    pub fn avx512<const SUM: bool, const TAG: bool>(
        msg: &[u8],
        out: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, u64)> {
        if !has_avx512() || !has_room(msg, out) {
            return None;
        }
        let out = out.as_mut_ptr().cast::<u32>();
        // SAFETY: features checked; the kernel writes at most 16 past len.
        Some(unsafe { avx512_kernel::<SUM, TAG>(msg, out) })
    }

    /// AVX-512 VBMI2 byte-compress scan; `None` if unavailable.
    #[inline]
    pub fn avx512_vbmi2<const SUM: bool, const TAG: bool>(
        msg: &[u8],
        out: &mut [MaybeUninit<u32>],
    ) -> Option<(usize, u64)> {
        if !has_avx512_vbmi2() || !has_room(msg, out) {
            return None;
        }
        let out = out.as_mut_ptr().cast::<u32>();
        // SAFETY: features checked; the kernel writes at most 16 past len.
        Some(unsafe { vbmi2_kernel::<SUM, TAG>(msg, out) })
    }

    /// Turns a 32-bit block mask into positions. The first 8 (then 16) are
    /// written unconditionally so the common block (3–8 delimiters) takes no
    /// mispredicted loop exit; extra writes land beyond the count. With
    /// `TAG`, the bit of `soh` at each position goes to bit 31.
    ///
    /// # Safety
    /// `out` must be valid for writes of `n + max(16, popcnt(m))` elements.
    #[inline(always)]
    unsafe fn emit32<const TAG: bool>(
        mut m: u32,
        soh: u32,
        base: u32,
        out: *mut u32,
        n: usize,
    ) -> usize {
        let at = |m: u32| {
            let z = m.trailing_zeros();
            // Past the last delimiter z is 32, the shift wraps and the value
            // is junk, but it lands beyond the count.
            let flag = if TAG { soh.wrapping_shr(z) << 31 } else { 0 };
            base.wrapping_add(z) | flag
        };
        let cnt = m.count_ones() as usize;
        // SAFETY: caller guarantees room for 16 elements from `n`, and for
        // `cnt` elements from `n` when the slow tail loop runs.
        unsafe {
            let o = out.add(n);
            for k in 0..8 {
                *o.add(k) = at(m);
                m &= m.wrapping_sub(1);
            }
            if cnt > 8 {
                for k in 8..16 {
                    *o.add(k) = at(m);
                    m &= m.wrapping_sub(1);
                }
                let mut k = 16;
                while m != 0 {
                    *o.add(k) = at(m);
                    m &= m.wrapping_sub(1);
                    k += 1;
                }
            }
        }
        n + cnt
    }

    #[target_feature(enable = "avx2,bmi1,popcnt")]
    unsafe fn avx2_kernel<const SUM: bool, const TAG: bool>(
        msg: &[u8],
        out: *mut u32,
    ) -> (usize, u64) {
        let zero = _mm256_setzero_si256();
        let mut acc = zero;
        let eq = _mm256_set1_epi8(b'=' as i8);
        let soh = _mm256_set1_epi8(super::super::SOH as i8);
        let len = msg.len();
        let p = msg.as_ptr();
        let mut i = 0;
        let mut n = 0;
        while i + 32 <= len {
            // SAFETY: `i + 32 <= len`, unaligned load is allowed.
            let v = unsafe { _mm256_loadu_si256(p.add(i).cast()) };
            if SUM {
                acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
            }
            let vs = _mm256_cmpeq_epi8(v, soh);
            let m = _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v, eq), vs)) as u32;
            let s = if TAG {
                _mm256_movemask_epi8(vs) as u32
            } else {
                0
            };
            // SAFETY: n <= i, so n + 32 <= len + 32 is within the slack.
            n = unsafe { emit32::<TAG>(m, s, i as u32, out, n) };
            i += 32;
        }
        if i < len {
            // Zero padding never matches `=` or SOH, so the tail block can be
            // classified like a full one without reading past the slice.
            let mut tail = [0u8; 32];
            tail[..len - i].copy_from_slice(&msg[i..]);
            // SAFETY: `tail` is 32 readable bytes.
            let v = unsafe { _mm256_loadu_si256(tail.as_ptr().cast()) };
            if SUM {
                acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero));
            }
            let vs = _mm256_cmpeq_epi8(v, soh);
            let m = _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v, eq), vs)) as u32;
            let s = if TAG {
                _mm256_movemask_epi8(vs) as u32
            } else {
                0
            };
            // SAFETY: as above, n <= i < len.
            n = unsafe { emit32::<TAG>(m, s, i as u32, out, n) };
        }
        let mut lanes = [0u64; 4];
        // SAFETY: `lanes` is 32 writable bytes.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), acc) };
        (n, lanes.iter().sum())
    }

    /// Loads up to 64 bytes at `i` (masked load for the tail: masked-off
    /// bytes are not read, cannot fault, and read as zero).
    #[inline(always)]
    unsafe fn load_block(p: *const u8, i: usize, len: usize) -> __m512i {
        let rem = len - i;
        if rem >= 64 {
            // SAFETY: 64 bytes from `i` are inside the slice.
            unsafe { _mm512_loadu_si512(p.add(i).cast()) }
        } else {
            let k: u64 = (1u64 << rem) - 1;
            // SAFETY: only the first `rem` bytes are loaded; AVX-512 masked
            // loads suppress faults on masked-off lanes.
            unsafe { _mm512_maskz_loadu_epi8(k, p.add(i).cast()) }
        }
    }

    #[target_feature(enable = "avx512f,avx512bw,popcnt")]
    unsafe fn avx512_kernel<const SUM: bool, const TAG: bool>(
        msg: &[u8],
        out: *mut u32,
    ) -> (usize, u64) {
        let mut acc = _mm512_setzero_si512();
        let flag = _mm512_set1_epi32(super::super::SOH_FLAG as i32);
        let eq = _mm512_set1_epi8(b'=' as i8);
        let soh = _mm512_set1_epi8(super::super::SOH as i8);
        let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        let len = msg.len();
        let p = msg.as_ptr();
        let mut i = 0;
        let mut n = 0;
        while i < len {
            // SAFETY: i < len; load_block never reads past len.
            let v = unsafe { load_block(p, i, len) };
            let ms = _mm512_cmpeq_epi8_mask(v, soh);
            let m = _mm512_cmpeq_epi8_mask(v, eq) | ms;
            if SUM {
                acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, _mm512_setzero_si512()));
            }
            for q in 0..4 {
                let kq = (m >> (16 * q)) as u16;
                let mut idx = _mm512_add_epi32(iota, _mm512_set1_epi32((i + 16 * q) as i32));
                if TAG {
                    idx = _mm512_mask_or_epi32(idx, (ms >> (16 * q)) as u16, idx, flag);
                }
                let c = _mm512_maskz_compress_epi32(kq, idx);
                // SAFETY: n <= i + 16q <= len, 16 elements fit in the slack.
                unsafe { _mm512_storeu_si512(out.add(n).cast(), c) };
                n += kq.count_ones() as usize;
            }
            i += 64;
        }
        (n, _mm512_reduce_add_epi64(acc) as u64)
    }

    static IOTA8: [u8; 64] = {
        let mut a = [0u8; 64];
        let mut k = 0;
        while k < 64 {
            a[k] = k as u8;
            k += 1;
        }
        a
    };

    /// With `TAG`, SOH offsets are compressed with bit 7 set; sign-extending
    /// the bytes and keeping bits 31 and 0..6 turns that into
    /// [`SOH_FLAG`](super::super::SOH_FLAG) plus the offset, to which the
    /// block base (below 2^31 - 64) adds without carrying into bit 31.
    ///
    /// A block is mostly shuffle-port work (two compares, the compress, the
    /// widen), so the block base lives in a vector stepped by 64 rather than
    /// being broadcast from `i` each block (one more such µop), and full blocks
    /// loop without the tail's length test: the masked tail runs once after.
    /// Together 8–15 % fewer ns a message than one loop with a broadcast
    /// (`perfkit fix bench --only scan`: 211 B 10 → 9 ns, 1,078 B 36 → 33).
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
    unsafe fn vbmi2_kernel<const SUM: bool, const TAG: bool>(
        msg: &[u8],
        out: *mut u32,
    ) -> (usize, u64) {
        let mut acc = _mm512_setzero_si512();
        let eq = _mm512_set1_epi8(b'=' as i8);
        let soh = _mm512_set1_epi8(super::super::SOH as i8);
        let step = _mm512_set1_epi32(64);
        // SAFETY: IOTA8 is 64 readable bytes.
        let iota8 = unsafe { _mm512_loadu_si512(IOTA8.as_ptr().cast()) };
        let iota8_soh = _mm512_or_si512(iota8, _mm512_set1_epi8(0x80u8 as i8));
        let keep = _mm512_set1_epi32(0x8000_007F_u32 as i32);
        let widen = |b: __m128i| {
            if TAG {
                _mm512_and_si512(_mm512_cvtepi8_epi32(b), keep)
            } else {
                _mm512_cvtepu8_epi32(b)
            }
        };
        // One block `v` whose first byte is at offset `base` (in every
        // lane): writes its delimiters' positions at `n`, returns the new
        // count. Zero bytes (the tail's masked-off lanes) match nothing.
        //
        // SAFETY (for callers): `n` is at most the block's offset, which is
        // below `msg.len()`, and each 16-element store at `n + 16j` happens
        // only when the block holds more than `16j` delimiters, so it starts
        // below `n + cnt <= msg.len()`; the slack covers the 16 it writes.
        let mut block = |v: __m512i, base: __m512i, n: usize| -> usize {
            if SUM {
                acc = _mm512_add_epi64(acc, _mm512_sad_epu8(v, _mm512_setzero_si512()));
            }
            let ms = _mm512_cmpeq_epi8_mask(v, soh);
            let m = _mm512_cmpeq_epi8_mask(v, eq) | ms;
            let cnt = m.count_ones() as usize;
            // One compress gives the in-block offsets of every delimiter,
            // in order; widening 16 at a time adds the block base.
            let src = if TAG {
                _mm512_mask_blend_epi8(ms, iota8, iota8_soh)
            } else {
                iota8
            };
            let c = _mm512_maskz_compress_epi8(m, src);
            let w0 = _mm512_add_epi32(widen(_mm512_castsi512_si128(c)), base);
            // SAFETY: see above; the caller keeps `n` and the slack so.
            unsafe {
                _mm512_storeu_si512(out.add(n).cast(), w0);
                if cnt > 16 {
                    let w = widen(_mm512_extracti32x4_epi32::<1>(c));
                    _mm512_storeu_si512(out.add(n + 16).cast(), _mm512_add_epi32(w, base));
                    if cnt > 32 {
                        let w = widen(_mm512_extracti32x4_epi32::<2>(c));
                        _mm512_storeu_si512(out.add(n + 32).cast(), _mm512_add_epi32(w, base));
                        if cnt > 48 {
                            let w = widen(_mm512_extracti32x4_epi32::<3>(c));
                            _mm512_storeu_si512(out.add(n + 48).cast(), _mm512_add_epi32(w, base));
                        }
                    }
                }
            }
            n + cnt
        };
        let len = msg.len();
        let p = msg.as_ptr();
        let mut base = _mm512_setzero_si512();
        let mut i = 0;
        let mut n = 0;
        while i + 64 <= len {
            // SAFETY: `i + 64 <= len`, unaligned load is allowed.
            let v = unsafe { _mm512_loadu_si512(p.add(i).cast()) };
            n = block(v, base, n);
            base = _mm512_add_epi32(base, step);
            i += 64;
        }
        if i < len {
            // SAFETY: i < len; load_block reads only the `len - i` bytes left.
            let v = unsafe { load_block(p, i, len) };
            n = block(v, base, n);
        }
        (n, _mm512_reduce_add_epi64(acc) as u64)
    }
}
