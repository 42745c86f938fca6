//! Cache hints for the search's random reads: an intrinsic with no effect
//! but on timing (the crate's other `unsafe` is `batch`'s call of its
//! AVX-512 compilation, on CPUs that have it).

/// Asks the CPU to bring the cache line holding `x` into its caches.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: a prefetch is a hint with no architectural effect and
        // never faults; `x` is a live reference besides.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = x;
}

/// [`prefetch`] of `items[i]`, if there is one.
#[inline(always)]
pub(crate) fn prefetch_at<T>(items: &[T], i: usize) {
    if let Some(x) = items.get(i) {
        prefetch(x);
    }
}
