//! [`Positions`]: the scan's output, a growable `u32` buffer that starts
//! in the middle of a 4 KiB page.
//!
//! The SIMD kernels write whole 64-byte vectors at arbitrary element
//! offsets, and where those stores land relative to page boundaries
//! decides much of a short scan's cost. Measured on this project's Xeon
//! (VBMI2 kernel, the 211-byte NewOrderSingle, every placement of input
//! and output within a page, 8-byte steps): 7.0–7.7 ns wherever the output
//! stays inside one page and the input's loads do not cross a page, but
//! 10–37 ns when the output's stores straddle a page boundary, and 12–15
//! ns when an input load straddles one while the output's pending stores
//! sit at the same offsets of a page as that load's second half (the
//! first bytes of a page), which a `Vec<u32>` from the allocator often
//! does. Starting the positions at byte 2048 of a page-aligned allocation
//! avoids both for every message with fewer than 512 delimiters (about
//! 2.5 KiB of FIX): the stores stay inside the page, away from its first
//! bytes.

use std::alloc::{self, Layout};
use std::fmt;
use std::mem::MaybeUninit;
use std::ops::Deref;
use std::ptr::NonNull;

/// Alignment of the storage, and the unit its capacity grows in (bytes).
const PAGE: usize = 4096;

/// Elements per page.
const PAGE_ELEMS: usize = PAGE / std::mem::size_of::<u32>();

/// Elements of the allocation before the first position: half a page.
const LEAD: usize = PAGE_ELEMS / 2;

/// Offsets of the `=` and SOH bytes of the last scanned message, ascending
/// (see [`scan_into`](super::scan_into)). Dereferences to `&[u32]`.
///
/// Reuse one per thread: it keeps its capacity, so scans after the first
/// allocate nothing.
pub struct Positions {
    /// The first position: [`LEAD`] elements into a page-aligned
    /// allocation, or dangling when nothing is allocated.
    ptr: NonNull<u32>,
    len: usize,
    /// Elements usable from `ptr`: 0 when nothing is allocated, else the
    /// allocation (a multiple of [`PAGE_ELEMS`]) less [`LEAD`].
    cap: usize,
}

// SAFETY: `Positions` owns its buffer exclusively, as `Vec<u32>` does, and
// `u32` is `Send + Sync`.
unsafe impl Send for Positions {}
// SAFETY: as above; `&Positions` only reads.
unsafe impl Sync for Positions {}

impl Positions {
    /// An empty buffer; the first scan allocates.
    pub const fn new() -> Positions {
        Positions {
            ptr: NonNull::dangling(),
            len: 0,
            cap: 0,
        }
    }

    /// An empty buffer with room for the positions of a message of
    /// `msg_len` bytes (which the first scan of such a message then does
    /// not allocate).
    pub fn for_messages_up_to(msg_len: usize) -> Positions {
        let mut p = Positions::new();
        p.clear_for(msg_len.saturating_add(super::SLACK));
        p
    }

    /// The positions as a slice.
    pub fn as_slice(&self) -> &[u32] {
        // SAFETY: the first `len` elements are initialised (`set_len`'s
        // contract) and `ptr` is valid for `cap >= len` of them, or
        // dangling and well aligned with `len == 0`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Empties the buffer and returns its whole storage, at least `n`
    /// elements, for a kernel to write; [`Positions::set_len`] then says
    /// how many it filled.
    #[inline]
    pub(crate) fn clear_for(&mut self, n: usize) -> &mut [MaybeUninit<u32>] {
        self.len = 0;
        if self.cap < n {
            self.grow(n);
        }
        // SAFETY: `ptr` is valid for `cap` elements (or dangling with
        // `cap == 0`); uninitialised `u32`s are valid `MaybeUninit`s, and
        // `&mut self` makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast(), self.cap) }
    }

    /// Marks the first `n` elements as the contents.
    ///
    /// # Safety
    /// The first `n` elements must have been initialised (through the
    /// slice [`Positions::clear_for`] returned), and `n <= capacity`.
    #[inline]
    pub(crate) unsafe fn set_len(&mut self, n: usize) {
        debug_assert!(n <= self.cap);
        self.len = n;
    }

    #[cold]
    fn grow(&mut self, n: usize) {
        let total = n
            .checked_add(LEAD)
            .expect("position buffer larger than the address space")
            .div_ceil(PAGE_ELEMS)
            * PAGE_ELEMS;
        let layout = Positions::layout(total);
        // SAFETY: the layout has a non-zero size (total >= PAGE_ELEMS).
        let start = unsafe { alloc::alloc(layout) }.cast::<u32>();
        if start.is_null() {
            alloc::handle_alloc_error(layout);
        }
        self.release();
        // SAFETY: `LEAD < total`, so the offset stays inside the allocation,
        // and the result is not null (nor is `start`).
        self.ptr = unsafe { NonNull::new_unchecked(start.add(LEAD)) };
        self.cap = total - LEAD;
    }

    /// Frees the storage (contents are dropped: callers refill it).
    fn release(&mut self) {
        if self.cap > 0 {
            // SAFETY: `ptr` is `LEAD` elements into an allocation made by
            // `grow` with this very layout.
            unsafe {
                let start = self.ptr.as_ptr().sub(LEAD);
                alloc::dealloc(start.cast(), Positions::layout(self.cap + LEAD));
            }
        }
        self.ptr = NonNull::dangling();
        self.cap = 0;
        self.len = 0;
    }

    /// The layout of an allocation of `total` elements.
    fn layout(total: usize) -> Layout {
        total
            .checked_mul(std::mem::size_of::<u32>())
            .and_then(|size| Layout::from_size_align(size, PAGE).ok())
            .expect("position buffer larger than the address space")
    }
}

impl Drop for Positions {
    fn drop(&mut self) {
        self.release();
    }
}

impl Default for Positions {
    fn default() -> Self {
        Positions::new()
    }
}

impl Clone for Positions {
    fn clone(&self) -> Self {
        let mut p = Positions::new();
        let spare = p.clear_for(self.len);
        for (dst, &src) in spare.iter_mut().zip(self.as_slice()) {
            dst.write(src);
        }
        // SAFETY: the loop initialised the first `self.len` elements, and
        // `clear_for` made the capacity at least that.
        unsafe { p.set_len(self.len) };
        p
    }
}

impl Deref for Positions {
    type Target = [u32];
    fn deref(&self) -> &[u32] {
        self.as_slice()
    }
}

impl fmt::Debug for Positions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl PartialEq for Positions {
    fn eq(&self, other: &Positions) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Positions {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_starts_mid_page_and_grows_by_pages() {
        let mut p = Positions::new();
        assert!(p.is_empty());
        for n in [1, 80, 512, 513, 1024, 1025, 5000] {
            let spare = p.clear_for(n);
            assert!(spare.len() >= n && (spare.len() + LEAD).is_multiple_of(PAGE_ELEMS));
            assert_eq!(spare.as_ptr() as usize % PAGE, PAGE / 2);
            for (i, s) in spare.iter_mut().take(n).enumerate() {
                s.write(i as u32);
            }
            // SAFETY: the loop above wrote the first n.
            unsafe { p.set_len(n) };
            assert_eq!(p.len(), n);
            assert!(p.iter().copied().eq(0..n as u32));
        }
        let q = p.clone();
        assert_eq!(q, p);
        assert_eq!(q.as_ptr() as usize % PAGE, PAGE / 2);
        assert_eq!(format!("{:?}", Positions::new()), "[]");
    }
}
