//! Single-producer single-consumer ring of fixed-size byte slots. All the
//! `unsafe` of the deferred processor lives here.
//!
//! Head and tail sit on their own cache lines (`OwnLine`), and each side
//! keeps a private copy of the other's index so it only touches the shared
//! line when the ring looks full (producer) or empty (consumer).
//!
//! [`DeferredProcessor`](super::DeferredProcessor) is a worker thread over
//! one; a caller with a consumer loop of its own takes the ends directly:
//!
//! ```
//! use fixcore::deferred::spsc;
//!
//! // Four slots of up to 64 bytes: the producer copies into a slot, the
//! // consumer reads it in place and frees it.
//! let (mut tx, mut rx) = spsc::channel(4, 64);
//! let reader = std::thread::spawn(move || {
//!     let mut got = Vec::new();
//!     while got.len() < 10 {
//!         match rx.try_pop(|m| m.len()) {
//!             Some(len) => got.push(len),
//!             None => std::thread::yield_now(),
//!         }
//!     }
//!     got
//! });
//! for n in 0..10 {
//!     // Full: the consumer has not caught up yet.
//!     while !tx.try_push(&vec![b'x'; n]) {
//!         std::thread::yield_now();
//!     }
//! }
//! assert_eq!(reader.join().unwrap(), (0..10).collect::<Vec<_>>());
//! assert!(!tx.try_push(&[0; 65]), "longer than a slot");
//! ```

use crate::scan::ScanPath;
use std::cell::UnsafeCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

#[repr(C, align(64))]
struct Line([u8; 64]);

struct Ring {
    /// `cap * lines_per_slot` cache lines; a slot is a u32 length followed by
    /// the bytes.
    buf: Box<[UnsafeCell<Line>]>,
    lines_per_slot: usize,
    max_len: usize,
    /// Fill slots with [`fill_slot_avx512`]; true only where AVX-512 F+BW
    /// are available.
    avx512_fill: bool,
    mask: usize,
    head: OwnLine<AtomicUsize>,
    tail: OwnLine<AtomicUsize>,
}

// SAFETY: slots are only written by the single producer while not visible to
// the consumer (index >= published head) and only read by the single
// consumer while not writable by the producer (index < head, >= tail); the
// Release/Acquire pairs on head and tail order the byte accesses.
unsafe impl Sync for Ring {}
// SAFETY: the ring owns plain bytes and atomics.
unsafe impl Send for Ring {}

/// A value alone on its cache lines: 128 bytes, because x86's adjacent-line
/// prefetcher pulls lines in pairs, so two hot indices 64 bytes apart would
/// still contend. (fixcore keeps crossbeam out of its dependencies; this is
/// the one thing it used from it.)
#[repr(align(128))]
struct OwnLine<T>(T);

impl<T> std::ops::Deref for OwnLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl Ring {
    /// Start of slot `idx`: `lines_per_slot` consecutive lines.
    ///
    /// The pointer is derived from the whole buffer (`as_ptr` of the boxed
    /// slice), not from a reference to the slot's first line: a pointer made
    /// from `&buf[i]` may only touch that one 64-byte line, and a slot spans
    /// several, so reading or writing the rest through it would be undefined
    /// behaviour (Miri reports it under Stacked Borrows).
    fn slot_ptr(&self, idx: usize) -> *mut u8 {
        let line = (idx & self.mask) * self.lines_per_slot;
        // UnsafeCell<Line> is repr(transparent) over Line, so the cell
        // pointer is the byte pointer, and writing through it from a shared
        // borrow is what UnsafeCell permits.
        let base = UnsafeCell::raw_get(self.buf.as_ptr()).cast::<u8>();
        // SAFETY: `line + lines_per_slot <= buf.len()` because
        // `idx & mask < cap` and the buffer holds `cap * lines_per_slot`
        // lines, so the offset stays inside the allocation.
        unsafe { base.add(line * std::mem::size_of::<Line>()) }
    }
}

/// Writing end; exactly one exists per ring.
pub struct Producer {
    ring: Arc<Ring>,
    head: usize,
    cached_tail: usize,
}

/// Reading end; exactly one exists per ring.
pub struct Consumer {
    ring: Arc<Ring>,
    tail: usize,
    cached_head: usize,
}

/// A ring of `capacity` (rounded up to a power of two) slots of up to
/// `max_len` bytes each.
pub fn channel(capacity: usize, max_len: usize) -> (Producer, Consumer) {
    // Chosen by the scan path, not by what the CPU has, so that a
    // FIXCORE_SCAN cap below avx512 (the suite's scalar and avx2 runs)
    // takes the portable copy too.
    let avx512_fill =
        cfg!(all(target_arch = "x86_64", not(miri))) && ScanPath::detect() >= ScanPath::Avx512;
    channel_with(capacity, max_len, avx512_fill)
}

/// [`channel`] with the slot copy given: the AVX-512 one if `avx512_fill`.
fn channel_with(capacity: usize, max_len: usize, avx512_fill: bool) -> (Producer, Consumer) {
    // `try_push` relies on this to run `fill_slot_avx512`.
    assert!(!avx512_fill || ScanPath::Avx512.is_available());
    let cap = capacity.max(2).next_power_of_two();
    let lines_per_slot = (4 + max_len).div_ceil(64);
    let ring = Arc::new(Ring {
        buf: (0..cap * lines_per_slot)
            .map(|_| UnsafeCell::new(Line([0; 64])))
            .collect(),
        lines_per_slot,
        max_len,
        avx512_fill,
        mask: cap - 1,
        head: OwnLine(AtomicUsize::new(0)),
        tail: OwnLine(AtomicUsize::new(0)),
    });
    (
        Producer {
            ring: ring.clone(),
            head: 0,
            cached_tail: 0,
        },
        Consumer {
            ring,
            tail: 0,
            cached_head: 0,
        },
    )
}

impl Producer {
    /// Largest message a slot holds.
    pub fn max_len(&self) -> usize {
        self.ring.max_len
    }

    /// Copies `msg` into the next slot. Returns `false` (and copies nothing)
    /// if the ring is full or `msg` is longer than a slot.
    #[inline]
    pub fn try_push(&mut self, msg: &[u8]) -> bool {
        let r = &*self.ring;
        if msg.len() > r.max_len {
            return false;
        }
        if self.head - self.cached_tail > r.mask {
            self.cached_tail = r.tail.load(Ordering::Acquire);
            if self.head - self.cached_tail > r.mask {
                return false;
            }
        }
        let p = r.slot_ptr(self.head);
        // Only a slot the consumer has already released (by our possibly
        // stale view of tail, which only errs towards not prefetching): a
        // slot still pending is one the consumer is reading or about to, and
        // taking its lines for writing would steal them from it. A ring of
        // PREFETCH_AHEAD slots or fewer never prefetches.
        if self.head + PREFETCH_AHEAD - self.cached_tail <= r.mask {
            // Messages on one stream tend to be alike in size, so this one's
            // length says how many lines the next ones will touch (at most
            // `lines_per_slot`, as `msg.len() <= max_len`).
            let lines = (4 + msg.len()).div_ceil(64);
            prefetch_for_write(r, self.head + PREFETCH_AHEAD, lines);
        }
        // SAFETY: `p` covers the slot's `lines_per_slot * 64 >= 4 + max_len`
        // bytes (derived from the whole buffer, see `slot_ptr`), is 64-byte
        // aligned for the u32, and `msg.len() <= max_len` (checked above).
        // No one else touches the slot: the consumer has released it (tail
        // has passed it, checked above) and cannot see it before the Release
        // store of `head` below. `avx512_fill` implies AVX-512 F+BW
        // (asserted in `channel_with`).
        unsafe { fill_slot(p, msg, r.avx512_fill) };
        self.head += 1;
        r.head.store(self.head, Ordering::Release);
        true
    }

    /// Messages pushed but not yet consumed (approximate from this side).
    pub fn pending(&self) -> usize {
        self.head - self.ring.tail.load(Ordering::Relaxed)
    }
}

/// Writes the slot at `p`: the length as a `u32`, then the bytes; with
/// [`fill_slot_avx512`] if `avx512`, else [`fill_slot_portable`].
///
/// # Safety
/// `p` must be 64-byte aligned and valid for writes of `4 + msg.len()`
/// bytes rounded up to a whole 64-byte line, and no one else may access
/// those lines meanwhile. If `avx512`, AVX-512 F and BW must be available.
#[inline(always)]
unsafe fn fill_slot(p: *mut u8, msg: &[u8], avx512: bool) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    if avx512 {
        // SAFETY: the caller guarantees AVX-512 F+BW when `avx512`, and the
        // rest of `fill_slot_avx512`'s contract is this function's.
        unsafe { fill_slot_avx512(p, msg) };
        return;
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = avx512;
    // SAFETY: `fill_slot_portable`'s contract is this function's.
    unsafe { fill_slot_portable(p, msg) };
}

/// [`fill_slot`] for any CPU.
///
/// # Safety
/// `p` must be 4-byte aligned and valid for writes of `4 + msg.len()`
/// bytes, and no one else may access them meanwhile.
#[inline(always)]
unsafe fn fill_slot_portable(p: *mut u8, msg: &[u8]) {
    // SAFETY: the caller guarantees `4 + msg.len()` writable bytes at the
    // u32-aligned `p`.
    unsafe {
        p.cast::<u32>().write(msg.len() as u32);
        std::ptr::copy_nonoverlapping(msg.as_ptr(), p.add(4), msg.len());
    }
}

/// [`fill_slot`] in whole aligned lines: the first line is the length and
/// the message's first 60 bytes, each later one 64 bytes of message (the
/// last zero-padded). A `memcpy` to `p + 4` spends longer choosing its
/// strategy than an NewOrderSingle's four stores take, and its unaligned
/// stores split every line in two.
///
/// # Safety
/// AVX-512 F and BW must be available, plus [`fill_slot`]'s contract.
#[cfg(all(target_arch = "x86_64", not(miri)))]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn fill_slot_avx512(p: *mut u8, msg: &[u8]) {
    use std::arch::x86_64::*;
    let len = msg.len();
    let src = msg.as_ptr();
    // Lanes 4.. of the first line take msg[0..60]; the load's base is 4
    // bytes before the message, but the masked-off lanes 0..4 are never
    // read (AVX-512 masked loads do not touch them, nor fault on them).
    let head_mask = ((1u64 << len.min(60)) - 1) << 4;
    // SAFETY: only the lanes in `head_mask` are read: bytes
    // `src[0..min(len, 60)]`, inside the message.
    let first = unsafe { _mm512_maskz_loadu_epi8(head_mask, src.wrapping_sub(4).cast()) };
    let first = _mm512_mask_set1_epi32(first, 1, len as i32);
    // SAFETY: `p` is 64-byte aligned and its first line is writable.
    unsafe { _mm512_store_si512(p.cast(), first) };
    let mut off = 60;
    while off < len {
        let rem = len - off;
        // SAFETY: full loads read `src[off..off + 64]` with `off + 64 <=
        // len`; the masked one only `src[off..len]`.
        let v = unsafe {
            if rem >= 64 {
                _mm512_loadu_si512(src.add(off).cast())
            } else {
                _mm512_maskz_loadu_epi8((1u64 << rem) - 1, src.add(off).cast())
            }
        };
        // SAFETY: `p + 4 + off` is line-aligned (`off ≡ 60 mod 64`), and
        // the line starts before `p + 4 + len`, inside the slot's
        // writable lines.
        unsafe { _mm512_store_si512(p.add(4 + off).cast(), v) };
        off += 64;
    }
}

/// How many slots ahead the producer asks for write ownership. The consumer
/// read every slot line one lap ago, so each write needs the line back from
/// the consumer's core; asking early overlaps those transfers instead of
/// stalling on them one by one.
const PREFETCH_AHEAD: usize = 8;

/// Hints the CPU to fetch the first `lines` lines of slot `idx` for
/// writing. Only a hint: it never faults and changes no memory, so any
/// address would do; we pass ones inside the buffer anyway.
#[inline(always)]
fn prefetch_for_write(r: &Ring, idx: usize, lines: usize) {
    debug_assert!(lines <= r.lines_per_slot);
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
        let p = r.slot_ptr(idx);
        for line in 0..lines {
            // Wrapping, so that even a `lines` past the slot (which the
            // debug_assert rules out) computes an address without undefined
            // behaviour.
            let a = p.wrapping_add(line * 64);
            // SAFETY: prefetch is a hint with no architectural effect that
            // never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(a.cast::<i8>()) };
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (r, idx, lines);
}

/// Hints the CPU to move the `len` bytes at `p` (a slot just read) out of
/// this core's private caches into the shared last-level cache. The
/// producer rewrites the slot one lap later; without the hint its write has
/// to snoop the line out of this core's L1/L2, a cross-core round trip on
/// every line of every message, which is what bounds back-to-back submits.
/// From the shared cache the line comes back much faster, and the producer's
/// prefetch can overlap it. CLDEMOTE sits in the hint-NOP encoding space, so
/// CPUs without it execute a NOP and nothing needs detecting.
#[inline(always)]
fn demote(p: *const u8, len: usize) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    for off in (0..len).step_by(64) {
        // SAFETY: CLDEMOTE is a hint: it never faults, and changes no
        // memory or architectural state; the address is inside the slot
        // (`off < len <= 4 + max_len`, see `slot_ptr`).
        unsafe {
            std::arch::asm!(
                "cldemote byte ptr [{}]",
                in(reg) p.add(off),
                options(nostack, preserves_flags, readonly)
            )
        };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = (p, len);
}

impl Consumer {
    /// Calls `f` with the oldest message and frees its slot; `None` if empty.
    #[inline]
    pub fn try_pop<R>(&mut self, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        let r = &*self.ring;
        if self.tail == self.cached_head {
            self.cached_head = r.head.load(Ordering::Acquire);
            if self.tail == self.cached_head {
                return None;
            }
        }
        let p = r.slot_ptr(self.tail);
        // SAFETY: `tail < head` (Acquire-loaded), so the producer finished
        // writing this slot and will not touch it until tail moves past it.
        // `p` covers the slot's `4 + max_len` bytes (see `slot_ptr`) and is
        // aligned for the u32; the length was written by `try_push` and is
        // clamped to `max_len` anyway, so the slice stays inside the slot.
        let (out, len) = unsafe {
            let len = (p.cast::<u32>().read() as usize).min(r.max_len);
            (f(std::slice::from_raw_parts(p.add(4), len)), len)
        };
        demote(p, 4 + len);
        self.tail += 1;
        r.tail.store(self.tail, Ordering::Release);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_across_threads_nothing_lost_or_corrupted() {
        // 8 slots: never prefetches; 32 slots of several lines: prefetches
        // whenever the consumer keeps up.
        fifo_across_threads(8, 100);
        fifo_across_threads(32, 512);
    }

    fn fifo_across_threads(capacity: usize, max_len: usize) {
        let (mut p, mut c) = channel(capacity, max_len);
        // Miri interprets every access; a few hundred still wrap the ring
        // many times.
        let n = if cfg!(miri) { 300 } else { 100_000u32 };
        let t = std::thread::spawn(move || {
            for i in 0..n {
                let m = i.to_le_bytes().repeat(1 + (i % 20) as usize);
                while !p.try_push(&m) {
                    std::thread::yield_now();
                }
            }
        });
        let mut next = 0u32;
        while next < n {
            if let Some(ok) = c.try_pop(|m| m == i_bytes(next).as_slice()) {
                assert!(ok, "message {next} corrupted");
                next += 1;
            } else {
                std::thread::yield_now();
            }
        }
        t.join().unwrap();
        assert!(c.try_pop(|_| ()).is_none());
    }

    fn i_bytes(i: u32) -> Vec<u8> {
        i.to_le_bytes().repeat(1 + (i % 20) as usize)
    }

    /// Every length up to a few lines, through each slot copy this CPU
    /// can run whatever FIXCORE_SCAN says, so the portable copy and the
    /// line-wise one's first line, full lines and masked tails all meet the
    /// consumer's byte-wise read.
    #[test]
    fn every_length_round_trips() {
        let max = if cfg!(miri) { 70 } else { 300 };
        let avx512 =
            cfg!(all(target_arch = "x86_64", not(miri))) && ScanPath::Avx512.is_available();
        for fill in [false, true] {
            if fill && !avx512 {
                continue;
            }
            let (mut p, mut c) = channel_with(4, max, fill);
            for len in 0..=max {
                let m: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
                assert!(p.try_push(&m));
                assert_eq!(
                    c.try_pop(<[u8]>::to_vec),
                    Some(m),
                    "length {len}, avx512 fill {fill}"
                );
            }
        }
    }

    /// A FIXCORE_SCAN cap below avx512 must reach the slot copy too, or the
    /// capped suite runs never test the portable one.
    #[test]
    fn channel_fill_follows_the_scan_path() {
        let (p, _c) = channel(4, 100);
        assert_eq!(
            p.ring.avx512_fill,
            cfg!(all(target_arch = "x86_64", not(miri))) && ScanPath::detect() >= ScanPath::Avx512
        );
    }

    #[test]
    fn full_and_oversize() {
        let (mut p, mut c) = channel(4, 8);
        assert!(!p.try_push(&[0; 9]));
        for _ in 0..4 {
            assert!(p.try_push(b"12345678"));
        }
        assert!(!p.try_push(b"x"));
        assert_eq!(c.try_pop(<[u8]>::len), Some(8));
        assert!(p.try_push(b"x"));
    }
}
