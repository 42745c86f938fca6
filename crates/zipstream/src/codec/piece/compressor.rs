//! libdeflate's compressors, every level made in one block of memory per
//! thread.
//!
//! A libdeflate compressor is one allocation: its level's parameters and
//! the search state (at the lazy levels 2-9 hash tables of 192 KiB, a
//! 64 KiB chain and the sequences of a block, about 660 KiB in all).
//! Compressing clears the tables it reads before it reads them, so the
//! memory carries nothing from one call to the next, and compressors of
//! different levels need not each have their own. A piece's level is
//! chosen by compressing its sample at libdeflate's fastest level (the
//! probe) and at one to three levels of the ladder before the piece itself
//! (`PieceDeflater::choose`); with a compressor of its own per level, each
//! level faulted its tables' pages in afresh, and a short entry pays that
//! once per level: on the corpus's 500 kB JSON (probe, 6 and 5 on the
//! sample, the piece at 6) `zip -6` took 919 page faults, 813 so (a
//! 1-byte file takes 435), at about 1.2-1.7 µs each on this machine.
//!
//! Here a thread keeps one block and one compressor made in it: asked for
//! another level, the compressor is freed back into the block and the new
//! one made there (libdeflate sets the level's parameters and its static
//! Huffman codes: microseconds). The block is as large as a level-9
//! compressor, the largest zip asks for (its 9; libdeflate's 10-12 take
//! more and would grow it), so the pages are faulted once per thread
//! whatever the levels, and a folder of files at one level makes its
//! compressor once.

use std::cell::Cell;
use std::ffi::c_void;
use std::ptr::{self, NonNull};

use libdeflate_sys::{
    libdeflate_alloc_compressor_ex, libdeflate_compressor, libdeflate_deflate_compress,
    libdeflate_deflate_compress_bound, libdeflate_free_compressor, libdeflate_options,
};

/// The level whose compressor is the largest of those zip's levels map to
/// (lazy2's search state, the same as the lazy levels'); the block is made
/// this large at first, so that no lighter level grows it.
const LARGEST: i32 = 9;

/// A thread's block and the compressor made in it.
struct Shelf {
    /// The block (from libc's malloc, uninitialised), or null.
    block: Cell<*mut c_void>,
    /// Its bytes.
    size: Cell<usize>,
    /// Whether a compressor lives in the block.
    lent: Cell<bool>,
    /// The compressor kept for the next call, and its level.
    live: Cell<Option<(i32, NonNull<libdeflate_compressor>)>>,
}

thread_local! {
    static SHELF: Shelf = const {
        Shelf {
            block: Cell::new(ptr::null_mut()),
            size: Cell::new(0),
            lent: Cell::new(false),
            live: Cell::new(None),
        }
    };
}

/// libdeflate's options: its allocations go through the thread's block.
const OPTIONS: libdeflate_options = libdeflate_options {
    sizeof_options: std::mem::size_of::<libdeflate_options>(),
    malloc_func: Some(lend),
    free_func: Some(give_back),
};

/// libdeflate's allocator: the thread's block when it is free (grown to
/// `size` if smaller), else libc's malloc (a compressor made while the
/// thread's shelf is gone, at its teardown).
unsafe extern "C" fn lend(size: usize) -> *mut c_void {
    let lent = SHELF.try_with(|s| s.lend(size)).unwrap_or(ptr::null_mut());
    if lent.is_null() {
        // SAFETY: malloc takes any size; libdeflate checks for null.
        unsafe { libc::malloc(size) }
    } else {
        lent
    }
}

/// libdeflate's free: the block goes back to the shelf, anything else to
/// libc.
unsafe extern "C" fn give_back(p: *mut c_void) {
    let kept = SHELF.try_with(|s| s.take_back(p)).unwrap_or(false);
    if !kept {
        // SAFETY: `p` came from `lend`'s libc::malloc, or is the block of a
        // shelf already gone (which then left it to be freed here); freed
        // once, by libdeflate's free of its compressor.
        unsafe { libc::free(p) }
    }
}

impl Shelf {
    /// The block for a compressor of `size` bytes, or null when it is lent
    /// already or cannot be had.
    fn lend(&self, size: usize) -> *mut c_void {
        if self.lent.get() {
            return ptr::null_mut();
        }
        if self.size.get() < size {
            // SAFETY: the block is not lent, so nothing points into it;
            // free takes null too.
            unsafe { libc::free(self.block.get()) };
            // SAFETY: malloc takes any size; null is handled below.
            let block = unsafe { libc::malloc(size) };
            self.block.set(block);
            self.size.set(if block.is_null() { 0 } else { size });
            if block.is_null() {
                return ptr::null_mut();
            }
        }
        self.lent.set(true);
        self.block.get()
    }

    /// Takes `p` back if it is the block: whether it was.
    fn take_back(&self, p: *mut c_void) -> bool {
        let ours = !p.is_null() && p == self.block.get() && self.lent.get();
        if ours {
            self.lent.set(false);
        }
        ours
    }

    /// The compressor at `level`, kept from the last call or made in the
    /// block in place of the one there; None if libdeflate could not make
    /// it (no memory).
    fn compressor(&self, level: i32) -> Option<NonNull<libdeflate_compressor>> {
        match self.live.get() {
            Some((l, c)) if l == level => return Some(c),
            Some((_, c)) => {
                self.live.set(None);
                // SAFETY: `c` was made by libdeflate_alloc_compressor_ex and
                // is freed once: it is no longer live.
                unsafe { libdeflate_free_compressor(c.as_ptr()) };
            }
            None => {}
        }
        if self.block.get().is_null() && level != LARGEST {
            // Size the block for every level first (see LARGEST).
            let _ = self.compressor(LARGEST)?;
            return self.compressor(level);
        }
        // SAFETY: OPTIONS is a valid libdeflate_options of this binding's
        // size; the level is checked by libdeflate (null if out of range).
        let c = NonNull::new(unsafe { libdeflate_alloc_compressor_ex(level, &OPTIONS) })?;
        self.live.set(Some((level, c)));
        Some(c)
    }
}

impl Drop for Shelf {
    fn drop(&mut self) {
        // A compressor is one allocation: when it lives in the block,
        // freeing the block frees it; one made elsewhere is freed through
        // libdeflate (whose free reaches libc's, this shelf being gone).
        if let Some((_, c)) = self.live.take()
            && !self.lent.get()
        {
            // SAFETY: made by libdeflate_alloc_compressor_ex, freed once.
            unsafe { libdeflate_free_compressor(c.as_ptr()) };
        }
        // SAFETY: the block came from libc::malloc (or is null), and no
        // compressor is left to use it.
        unsafe { libc::free(self.block.get()) };
    }
}

/// The most bytes libdeflate can make of `len` bytes at any level.
pub(super) fn bound(len: usize) -> usize {
    // SAFETY: libdeflate's bound reads no compressor (null is documented
    // as accepted): it is the size of stored blocks for `len` bytes.
    unsafe { libdeflate_deflate_compress_bound(ptr::null_mut(), len) }
}

/// Deflates `input` at libdeflate's `level` (1-9) into `out` as one whole
/// raw deflate stream: the bytes made, or None if they did not fit in
/// `out` (never at [`bound`]) or no compressor could be made.
pub(super) fn deflate(level: i32, input: &[u8], out: &mut [u8]) -> Option<usize> {
    let run = |c: NonNull<libdeflate_compressor>, out: &mut [u8]| {
        // SAFETY: `c` is a live compressor used by this thread only, for
        // this call; `input` is read and `out` written within their
        // lengths, both borrowed for the call.
        let made = unsafe {
            libdeflate_deflate_compress(
                c.as_ptr(),
                input.as_ptr().cast(),
                input.len(),
                out.as_mut_ptr().cast(),
                out.len(),
            )
        };
        (made > 0).then_some(made)
    };
    match SHELF.try_with(|s| s.compressor(level)) {
        Ok(c) => run(c?, out),
        Err(_) => {
            // The thread is being torn down: a compressor for this call
            // alone, from libc's memory.
            // SAFETY: as in Shelf::compressor; `lend` falls back to libc.
            let c = NonNull::new(unsafe { libdeflate_alloc_compressor_ex(level, &OPTIONS) })?;
            let made = run(c, out);
            // SAFETY: made just above, freed once.
            unsafe { libdeflate_free_compressor(c.as_ptr()) };
            made
        }
    }
}
