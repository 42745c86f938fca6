//! The executor's output: one ring of memory mapped twice in a row, so
//! that any stretch of it up to its size is contiguous in the address
//! space, whichever way it wraps.
//!
//! Why a ring: the executor needs the window behind it and room for a
//! block ahead, and hands what it made to the writer.
//! With plain buffers it had two of twice the window each (32 MiB at
//! `zstd -19`) and copied the window from one to the other at each hand
//! off: every page of both faulted in once per run (8,000 faults, a
//! fifth of the executor's time on this machine, whose VM hands free
//! memory back to its host) and the window copied once per window of
//! output. The ring is the window, a block and [`LAG`] bytes, faulted
//! in once; the window in it is never copied (but when a frame's history
//! outgrows the ring, once, into a larger one: `RingOutput::grow`). Bytes handed on are read in place: a
//! [`Chunk`] is a stretch of the ring, and the executor does not write
//! over a chunk until the writer has let go of it
//! ([`RingOutput::blocked`]).
//!
//! A first frame that declares its size, and whose whole output fits in
//! what its ring would hold (its size at most the window and [`LAG`]:
//! every `--long` file up to its window, most files of a few MiB), needs
//! no ring: it never wraps. Its output goes into private memory mapped
//! once ([`Ring::linear`]), whose pages cost the kernel half of what the
//! shared object's do to fault in and a third to free (10 MiB on this
//! project's host: 3.3-3.9 ms and 0.6-0.7 ms, against 6.2-7.4 ms and
//! 2.0-2.5 ms). So does a first frame of unknown size whose window is
//! over [`FIRST_HISTORY`] (`tar | zstd --long`), with room for its window
//! and lag: its pages are faulted in only as it reaches them, where a
//! ring grew into such a window in steps, each copying the history. A
//! later frame, or one that outgrows the memory (past its declared size,
//! an error at its end, or past its window and lag), goes on in a ring
//! mapped twice, its history copied over once.

#![allow(unsafe_code)]

use std::collections::VecDeque;
use std::io;
use std::ptr::NonNull;
use std::sync::Arc;

use crate::entropy::DecodedBlock;
use crate::error::Error;
use crate::execute::{SLACK, execute_raw};
use crate::frame::{BLOCK_SIZE_MAX, Block};
use crate::offsets::resolve_one;

/// Bytes the writer may lag behind the executor beyond the window (it
/// may always read the window's bytes, which the executor only reads):
/// two chunks, so the executor fills one while the writer takes the
/// last.
pub(super) const LAG: usize = 2 * CHUNK;

/// Output handed on at a time. Small against the window, so the writer
/// starts early and the ring stays small; large enough that handing on
/// (a channel send, which may wake the writer) is rare.
pub(super) const CHUNK: usize = 1 << 20;

/// `size` bytes of memory mapped at `base` and again at `base + size`,
/// or (`linear`) once.
pub(super) struct Ring {
    base: NonNull<u8>,
    size: usize,
    /// Mapped once, privately ([`Ring::linear`]): the bytes are never
    /// written over, so positions are plain offsets, never taken round.
    linear: bool,
}

// SAFETY: the ring is plain memory owned by this value; which thread may
// touch which bytes is the pipeline's protocol (see the module doc), and
// the pointer itself is shared freely.
unsafe impl Send for Ring {}
// SAFETY: as for Send.
unsafe impl Sync for Ring {}

impl Ring {
    /// A ring of at least `min` bytes, rounded up to whole pages, its
    /// bytes zero.
    pub(super) fn new(min: usize) -> io::Result<Ring> {
        let page = hugepages::page_size();
        let size = min
            .max(1)
            .checked_next_multiple_of(page)
            .filter(|s| s.checked_mul(2).is_some())
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let base = map_twice(size)?;
        Ok(Ring {
            base,
            size,
            linear: false,
        })
    }

    /// `len` bytes (rounded up to whole pages) of zeroed private memory
    /// mapped once, for output that never wraps (see the module doc).
    pub(super) fn linear(len: usize) -> io::Result<Ring> {
        let size = len
            .max(1)
            .checked_next_multiple_of(hugepages::page_size())
            .ok_or_else(|| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let base = map_once(size)?;
        // SAFETY: the mapping just made, `size` bytes, zero, that nothing
        // else refers to yet; the advice reads none of it.
        hugepages::advise(unsafe { std::slice::from_raw_parts(base.as_ptr(), size) });
        Ok(Ring {
            base,
            size,
            linear: true,
        })
    }

    /// Whether the memory is mapped once ([`Ring::linear`]).
    pub(super) fn is_linear(&self) -> bool {
        self.linear
    }

    /// Where the mappings end: the bytes at `base()` up to this may be
    /// read and written.
    pub(super) fn end(&self) -> usize {
        if self.linear {
            self.size
        } else {
            2 * self.size
        }
    }

    /// Where the executor starts writing: in the second mapping of a ring
    /// mapped twice (see `RingOutput::at`), at the start of one mapped
    /// once.
    fn first_at(&self) -> usize {
        if self.linear { 0 } else { self.size }
    }

    /// Where the bytes at `at` are read: through the first mapping of a
    /// ring mapped twice (see `RingOutput::at`), in place in one mapped
    /// once.
    fn read_at(&self, at: usize) -> usize {
        if self.linear { at } else { at % self.size }
    }

    /// The ring's length: mapped over twice this, or once
    /// ([`Ring::linear`]).
    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// Where the two mappings start.
    pub(super) fn base(&self) -> *mut u8 {
        self.base.as_ptr()
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: the mappings, `end()` bytes, were made by `map_twice` or
        // `map_once` and nothing refers to them any more (chunks hold the
        // ring alive).
        #[cfg(unix)]
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.end());
        }
    }
}

/// A stretch of a ring the executor is about to write, to be faulted in
/// by another thread ([`Ahead::populate`]) before the executor gets
/// there (see [`RingOutput::ahead`]).
pub(super) struct Ahead {
    ring: Arc<Ring>,
    at: usize,
    len: usize,
}

impl Ahead {
    /// Maps the stretch's pages writable, so the executor's first writes
    /// to them take no page fault; bytes already written keep their
    /// values. Where the kernel cannot (before Linux 5.14, or elsewhere)
    /// the executor faults them in itself as before.
    pub(super) fn populate(self) {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        // SAFETY: the stretch lies inside the ring's mappings, which
        // `ring` keeps alive; populating maps pages and never changes a
        // byte, so it may run while the executor writes them.
        unsafe {
            libc::madvise(
                self.ring.base().add(self.at).cast(),
                self.len,
                libc::MADV_POPULATE_WRITE,
            );
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let _ = (&self.ring, self.at, self.len);
    }
}

/// Without a way to map memory twice here, the pipeline cannot run: its
/// executor says so as it would of a mapping that failed.
#[cfg(not(unix))]
fn map_twice(_size: usize) -> io::Result<NonNull<u8>> {
    Err(io::ErrorKind::Unsupported.into())
}

#[cfg(not(unix))]
fn map_once(_size: usize) -> io::Result<NonNull<u8>> {
    Err(io::ErrorKind::Unsupported.into())
}

/// Maps a shared memory object of `size` bytes (a multiple of the page
/// size) twice, back to back.
#[cfg(unix)]
fn map_twice(size: usize) -> io::Result<NonNull<u8>> {
    let fd = shared_memory()?;
    let mapped = map_fd_twice(fd, size);
    // SAFETY: `fd` is ours; the mappings keep the memory alive.
    unsafe { libc::close(fd) };
    mapped
}

/// Maps `size` bytes of zeroed private memory once.
#[cfg(unix)]
fn map_once(size: usize) -> io::Result<NonNull<u8>> {
    // SAFETY: a fresh private anonymous mapping, anywhere.
    let at = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if at == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    NonNull::new(at.cast()).ok_or_else(|| io::ErrorKind::OutOfMemory.into())
}

#[cfg(unix)]
fn map_fd_twice(fd: libc::c_int, size: usize) -> io::Result<NonNull<u8>> {
    let length = libc::off_t::try_from(size).map_err(|_| io::ErrorKind::OutOfMemory)?;
    // SAFETY: `fd` is an open descriptor we own.
    if unsafe { libc::ftruncate(fd, length) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh reservation of address space, anywhere.
    let reserved = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            2 * size,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if reserved == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    for half in 0..2 {
        // SAFETY: each half of the reservation just made, replaced by a
        // mapping of the whole object; nothing else uses those addresses.
        let at = unsafe {
            libc::mmap(
                reserved.cast::<u8>().add(half * size).cast(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                fd,
                0,
            )
        };
        if at == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            // SAFETY: the reservation (and any half mapped) is ours.
            unsafe { libc::munmap(reserved, 2 * size) };
            return Err(e);
        }
    }
    NonNull::new(reserved.cast()).ok_or_else(|| io::ErrorKind::OutOfMemory.into())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn shared_memory() -> io::Result<libc::c_int> {
    // SAFETY: a NUL-terminated name; the flags are memfd_create's.
    let fd = unsafe { libc::memfd_create(c"zstdblock-ring".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(fd)
}

#[cfg(all(unix, not(any(target_os = "linux", target_os = "android"))))]
fn shared_memory() -> io::Result<libc::c_int> {
    use std::sync::atomic::{AtomicU32, Ordering};
    static MADE: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "/zstdblock-{}-{}\0",
        std::process::id(),
        MADE.fetch_add(1, Ordering::Relaxed)
    );
    // SAFETY: a NUL-terminated name; the object is unlinked at once, so
    // only the descriptor (and then the mappings) keep it.
    unsafe {
        let fd = libc::shm_open(
            name.as_ptr().cast(),
            libc::O_RDWR | libc::O_CREAT | libc::O_EXCL,
            0o600,
        );
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        libc::shm_unlink(name.as_ptr().cast());
        Ok(fd)
    }
}

/// A stretch of output handed on: `len` bytes of `ring` at `at`, hashed
/// and written in place by the writer.
pub(super) struct Chunk {
    ring: Arc<Ring>,
    at: usize,
    len: usize,
}

impl Chunk {
    /// The bytes.
    pub(super) fn bytes(&self) -> &[u8] {
        // SAFETY: `at + len <= end()` (see `RingOutput::take`), so the
        // bytes lie inside the mappings, which `ring` keeps alive; the
        // executor writes none of them while this chunk lives (it waits
        // for its release, see `RingOutput::blocked`).
        unsafe { std::slice::from_raw_parts(self.ring.base().add(self.at), self.len) }
    }

    /// Bytes held.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}

/// The executor's output in a [`Ring`]: where the next byte goes, what
/// the current frame has produced, and the chunks handed on and not
/// yet let go of.
pub(super) struct RingOutput {
    ring: Arc<Ring>,
    /// Where the next byte goes, in `0..2 * size` (`0..size` for a ring
    /// mapped once, which never wraps): the window is the
    /// bytes just before it, contiguous across the two mappings. It
    /// starts in the second mapping and goes back a lap only when a
    /// block would run past its end, so the executor writes through the
    /// second mapping (and a block at each lap through the first's last
    /// bytes) and reads the window and the chunks through the first,
    /// where the kernel maps a read fault's neighbours with it: written
    /// through both mappings in turn, a page was faulted in twice (a
    /// lap through each), 2,400 of the 7,600 page faults of a `-19`
    /// file's decode.
    at: usize,
    /// Bytes produced in all.
    produced: u64,
    /// Bytes handed on in all.
    handed: u64,
    /// Where each chunk handed on and not yet released starts, oldest
    /// first (they are released in order: the writer takes them in
    /// order).
    live: VecDeque<u64>,
    /// The window of the current frame, and where it started (the ring
    /// may hold less history than the window, and grows when the frame
    /// gets that far, see `room`).
    window: usize,
    frame_start: u64,
    /// Where the stretches asked to be faulted in ([`RingOutput::ahead`])
    /// end, in `0..end()`.
    warmed: usize,
}

/// How far ahead of the executor its ring is faulted in by the writer:
/// far enough that the writer, woken once a MiB, keeps ahead.
const WARM_AHEAD: usize = 4 * CHUNK;

/// History a new ring holds at most for a frame of unknown size: larger
/// windows (`--long`, levels 20-22) of a first frame go into memory mapped
/// once (see the module doc), and of a later frame grow the ring as the
/// frame reaches them, so a frame that declares a large window and
/// produces little does not map it.
const FIRST_HISTORY: usize = 16 << 20;

impl RingOutput {
    /// The ring's size for `history` bytes of history.
    fn size_for(history: usize) -> usize {
        history
            .saturating_add(BLOCK_SIZE_MAX)
            .saturating_add(SLACK)
            .saturating_add(LAG)
    }

    /// The memory a frame of window `window` that declares `content`
    /// bytes or not starts in. Where `once` is allowed: mapped once if
    /// the whole frame fits in what a ring would hold, or its size is
    /// unknown and its window large (see the module doc). Else a ring
    /// mapped twice: of the whole window for a frame that declares its
    /// size (it outgrows its window, and growing into it copies the
    /// history at each step), of at most [`FIRST_HISTORY`] for one that
    /// does not. A size past what can be mapped (a header declaring a
    /// content size or window near 2^64, which the decode then refuses
    /// as on one thread) gets that smaller ring too.
    fn first_ring(window: usize, content: Option<u64>, once: bool) -> io::Result<Ring> {
        let small = || Ring::new(Self::size_for(window.min(FIRST_HISTORY)));
        let linear = match content.map(usize::try_from) {
            _ if !once => None,
            Some(Ok(c)) if c <= window.saturating_add(LAG) => {
                Some(c.saturating_add(BLOCK_SIZE_MAX).saturating_add(SLACK))
            }
            None if window > FIRST_HISTORY => Some(Self::size_for(window)),
            _ => None,
        };
        match (linear, content) {
            (Some(len), _) => Ring::linear(len),
            (None, Some(_)) => Ring::new(Self::size_for(window)),
            (None, None) => small(),
        }
        .or_else(|_| small())
    }

    /// An output for a first frame of window `window` that declares
    /// `content` bytes or not ([`RingOutput::first_ring`]).
    pub(super) fn new(window: usize, content: Option<u64>) -> io::Result<RingOutput> {
        let ring = Self::first_ring(window, content, true)?;
        Ok(RingOutput {
            at: ring.first_at(),
            warmed: ring.first_at(),
            ring: Arc::new(ring),
            produced: 0,
            handed: 0,
            live: VecDeque::new(),
            window,
            frame_start: 0,
        })
    }

    /// The stretch of the mapping the executor writes through that it is
    /// to reach next and that no [`Ahead`] covered yet, when the stretch
    /// covered ends less than half [`WARM_AHEAD`] past `at` (on the
    /// ring's first lap only: later laps find the pages mapped). On this
    /// project's host each first touch of a page costs the executor, the
    /// pipeline's bound, a fault of about 2 µs, which another thread can
    /// take instead (see [`Ahead`]); asked as it goes, the executor keeps
    /// a few MiB ahead of it faulted in, never more of the ring than a
    /// short frame reaches.
    pub(super) fn ahead(&mut self) -> Option<Ahead> {
        let end = self.ring.end();
        // Most blocks stop here, before the page size (a libc call) is
        // asked: the stretch asked before still reaches far enough.
        if self.warmed >= end || self.warmed >= self.at + WARM_AHEAD / 2 {
            return None;
        }
        // Whole pages: madvise takes a page-aligned start.
        let page = hugepages::page_size();
        let from = self.warmed.max(self.at.next_multiple_of(page));
        if from >= end || from >= self.at + WARM_AHEAD / 2 {
            return None;
        }
        let to = (self.at + WARM_AHEAD).next_multiple_of(page).min(end);
        self.warmed = to;
        Some(Ahead {
            ring: Arc::clone(&self.ring),
            at: from,
            len: to - from,
        })
    }

    /// A frame after the first, of window `window` and declaring
    /// `content` bytes or not, starts here. Memory mapped once was made
    /// for the first frame alone: this one goes on in a ring mapped twice,
    /// which serves every frame after it (a new ring for each frame of a
    /// file of many would fault in each one's pages afresh).
    pub(super) fn start_frame(&mut self, window: usize, content: Option<u64>) -> io::Result<()> {
        self.window = window;
        self.frame_start = self.produced;
        if self.ring.is_linear() {
            // Nothing of this frame yet, so nothing is copied.
            self.move_to(Self::first_ring(window, content, false)?);
        }
        Ok(())
    }

    /// History the ring holds behind `at` whatever is written ahead: all
    /// of it but a block and its slack in memory mapped once, which is
    /// never written over.
    fn history(&self) -> usize {
        let lag = if self.ring.is_linear() { 0 } else { LAG };
        self.ring.size() - (BLOCK_SIZE_MAX + SLACK + lag)
    }

    /// Bytes the current frame has produced.
    pub(super) fn frame_produced(&self) -> u64 {
        self.produced - self.frame_start
    }

    /// [`RingOutput::frame_produced`] as a size, saturated.
    fn in_frame(&self) -> usize {
        usize::try_from(self.frame_produced()).unwrap_or(usize::MAX)
    }

    /// Whether writing `size` more bytes (and the slack past them) would
    /// reach bytes of a chunk not yet released; if so, wait for one
    /// ([`RingOutput::release_oldest`]) and ask again.
    pub(super) fn blocked(&self, size: usize) -> bool {
        let end = self.produced + (size + SLACK) as u64;
        self.live
            .front()
            .is_some_and(|&start| start + (self.ring.size() as u64) < end)
    }

    /// The oldest chunk handed on was let go of by the writer.
    pub(super) fn release_oldest(&mut self) {
        self.live.pop_front();
    }

    /// Makes room for the next `size` bytes (at most a block): a larger
    /// ring if the frame's history has outgrown this one, and the bytes
    /// and their slack contiguous, a lap back in the first mapping when
    /// they would run past the second. The window stays behind `at`
    /// either way: `at` is then at least the ring less a block and the
    /// slack past the first mapping's start, which is more than the
    /// history.
    pub(super) fn room(&mut self, size: usize) -> io::Result<()> {
        debug_assert!(size <= BLOCK_SIZE_MAX);
        let needed = self.window.min(self.in_frame().saturating_add(size));
        if needed > self.history() {
            self.grow(
                needed
                    .max(self.history().saturating_mul(2))
                    .min(self.window),
            )?;
        }
        if self.at + size + SLACK > self.ring.end() {
            if self.ring.is_linear() {
                // The frame writes past the size it declared (an error
                // at its end, as on one thread): it goes on in a ring
                // mapped twice, with room for what it has made so far.
                self.grow(self.window.max(self.history()))?;
            } else {
                self.at -= self.ring.size();
            }
        }
        Ok(())
    }

    /// Moves to a ring mapped twice of `history` bytes of history, the
    /// bytes behind `at` that the frame may still reach or that are not
    /// handed on copied over. Chunks of the old ring keep it alive until
    /// released (and are counted against the new one meanwhile, which
    /// only makes `blocked` wait longer).
    fn grow(&mut self, history: usize) -> io::Result<()> {
        self.move_to(Ring::new(Self::size_for(history))?);
        Ok(())
    }

    /// Goes on in `ring`, mapped twice and not shared yet, with the bytes
    /// behind `at` that the old one holds intact copied over (see
    /// [`RingOutput::grow`]).
    fn move_to(&mut self, ring: Ring) {
        assert!(!ring.is_linear());
        let ring = Arc::new(ring);
        // Intact behind `at`: all but the block and slack last written
        // ahead (all of it in memory mapped once, never written over);
        // that covers the history and the chunk not handed on.
        let kept = self.in_frame().min(self.history() + LAG);
        assert!(kept <= self.at);
        // Behind the new ring's second mapping, where its writes go on
        // (see `at`).
        let at = ring.first_at();
        assert!(kept <= at);
        // SAFETY: both rings are mapped; the old one's `kept` bytes
        // behind `at` lie inside its mappings (`at` is at least that far
        // in, see `room`), and the new one, not shared yet, has room for
        // them before its second mapping (asserted: `kept` is at most the
        // old ring's history and lag, less than the new ring's size).
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ring.base().add(self.at - kept),
                ring.base().add(at - kept),
                kept,
            );
        }
        self.ring = ring;
        self.at = at;
        self.warmed = at;
    }

    /// Where the frame's history starts behind `at`: as far back as the
    /// frame has produced, and no further than the mapping.
    fn floor(&self) -> usize {
        self.at - self.in_frame().min(self.at)
    }

    /// Appends a raw block's bytes (the caller waited while
    /// [`RingOutput::blocked`] and made [`RingOutput::room`] for them).
    pub(super) fn push_raw(&mut self, bytes: &[u8]) {
        assert!(self.at + bytes.len() + SLACK <= self.ring.end());
        // SAFETY: `at + len + SLACK` is inside the mappings (asserted); no
        // chunk covers these bytes (the caller waited while `blocked`),
        // so no reference to them exists.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.ring.base().add(self.at),
                bytes.len(),
            );
        }
        self.advance(bytes.len());
    }

    /// Appends an RLE block: `byte`, `count` times.
    pub(super) fn push_rle(&mut self, byte: u8, count: usize) {
        assert!(self.at + count + SLACK <= self.ring.end());
        // SAFETY: as in `push_raw`.
        unsafe { std::ptr::write_bytes(self.ring.base().add(self.at), byte, count) };
        self.advance(count);
    }

    /// Executes `decoded`, its offsets resolved as it goes from and into
    /// `repeats` (see [`crate::Output::execute_resolving`]); the caller
    /// made [`RingOutput::room`] for its output.
    pub(super) fn execute_resolving(
        &mut self,
        decoded: &DecodedBlock,
        repeats: &mut [u32; 3],
        block: &Block,
    ) -> Result<(), Error> {
        let mut r = *repeats;
        let floor = self.floor();
        // SAFETY: the mappings are `end()` bytes, valid while `ring`
        // lives (`execute_raw` checks that the block and its slack fit);
        // no chunk covers the bytes from `at` on (the caller waited while
        // `blocked`), and the writer's chunks before `at` are only read.
        let end = unsafe {
            execute_raw(
                self.ring.base(),
                self.ring.end(),
                self.at,
                floor,
                self.window,
                decoded,
                block,
                |s| resolve_one(&mut r, s.offset, s.literal_length),
            )
        }?;
        *repeats = r;
        self.advance(end - self.at);
        Ok(())
    }

    fn advance(&mut self, bytes: usize) {
        self.at += bytes;
        self.produced += bytes as u64;
    }

    /// The bytes produced and not handed on but the last `hold`, as a
    /// chunk, if there are at least `min` of them. Within a frame the
    /// executor holds one byte back until the frame's end, so that a
    /// failure anywhere in it, down to the last byte of its checksum,
    /// leaves the writer without the whole output.
    pub(super) fn take(&mut self, min: usize, hold: usize) -> Option<Chunk> {
        let pending = usize::try_from(self.produced - self.handed)
            .unwrap_or(usize::MAX)
            .saturating_sub(hold);
        if pending == 0 || pending < min {
            return None;
        }
        // Never more than a block past a chunk, so within the ring; read
        // in place, it ends at or before `at`, inside the mappings.
        assert!(pending <= self.ring.size());
        let start = self.ring.read_at(self.at - hold - pending);
        self.live.push_back(self.handed);
        self.handed += pending as u64;
        Some(Chunk {
            ring: Arc::clone(&self.ring),
            at: start,
            len: pending,
        })
    }
}

#[cfg(test)]
mod tests;
