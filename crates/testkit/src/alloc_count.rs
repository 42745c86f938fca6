//! A counting global allocator, the oracle of the no-allocation tests. A
//! test binary installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: perfkit_testkit::alloc_count::Counting = perfkit_testkit::alloc_count::Counting;
//! ```
//!
//! and measures a closure with [`allocations`]. Counts are per thread, so
//! tests running in parallel (and the harness's own threads) do not disturb
//! each other. Without the allocator installed, [`allocations`] is always 0:
//! [`installed`] tells a test which case it is in.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

/// The system allocator, counting the allocations and reallocations each
/// thread makes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

thread_local! {
    // Const-initialised and without a destructor: touching it from inside
    // the allocator neither allocates nor registers anything.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn bump() {
    // `try_with` because the allocator may run while the thread's locals
    // are being torn down.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; counting has no effect on the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded contract of `GlobalAlloc::alloc`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        bump();
        // SAFETY: forwarded contract of `GlobalAlloc::alloc_zeroed`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        bump();
        // SAFETY: forwarded contract of `GlobalAlloc::realloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded contract of `GlobalAlloc::dealloc`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations (and reallocations) made by this thread while running `f`.
pub fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

/// Whether [`Counting`] is this process's allocator: one allocation is seen
/// as one. A no-allocation test asserts this first, so a zero it reads
/// means something.
pub fn installed() -> bool {
    allocations(|| drop(black_box(Vec::<u8>::with_capacity(64)))) == 1
}
