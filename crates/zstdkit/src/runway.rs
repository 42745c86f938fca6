//! Compressing a stream in place: a reader thread lays the input down on a
//! [`Runway`], one long contiguous range of address space, and a
//! [`RunwayEncoder`] has zstd compress it there, without copying it.
//!
//! zstd's ordinary streaming copies its input into a ring of one window
//! plus one block. The ring wraps every window, so nearly every block of a
//! long stream is compressed in zstd's two-segment ("extDict") mode, which
//! costs about a fifth more time than compressing from contiguous memory.
//! Here zstd runs in stable-input mode over the runway: every block lies
//! right after the one before it, as in a one-shot compression of the whole
//! input, and no byte is copied on its way in.
//!
//! Memory stays bounded whatever the input's length: the reader commits
//! pages only a few MiB ahead of the compressor, and the encoder gives back
//! the pages that have fallen out of the frame's window (with a margin),
//! the reader moving them ahead to commit rather than faulting in new ones
//! while the kernel can (so a long input touches about one window and the
//! look-ahead of fresh memory, as zstd's own ring does).
//! Only address space grows, up to the reservation, which costs nothing
//! until it is touched. A runway is reserved for a known input size (the
//! frame records the size); for an input of unknown size the reservation is
//! as large as the system grants (up to 1 TiB), and an input longer than it
//! continues in a new frame at the runway's start — concatenated frames,
//! which every zstd decoder reads as one stream.
//!
//! ```
//! use std::io::Read;
//! use zstdkit::runway::{Runway, RunwayEncoder};
//! use zstdkit::Params;
//!
//! let text = b"a line of text, repeated. ".repeat(10_000);
//! let runway = Runway::reserve(Some(text.len() as u64)).expect("address space");
//! let source = Box::new(std::io::Cursor::new(text.clone()));
//! let mut enc = RunwayEncoder::new(runway, Params::for_level(3), None, Some(text.len() as u64), source)?;
//! let mut frame = Vec::new();
//! enc.read_to_end(&mut frame)?;
//! assert_eq!(zstdkit::decompress(&frame)?, text);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Read};
use std::ptr::NonNull;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::{Error, Result};
use crate::ffi::{self, FrameHeader};
use crate::recipe::Params;
use crate::stable::StableCCtx;

/// How far the reader may run ahead of the compressor.
const LOOKAHEAD: usize = 2 << 20;

/// The most the reader asks for in one `read` call.
const READ_SIZE: usize = 1 << 20;

/// Pages are committed and given back in steps of this many bytes.
const STEP: usize = 2 << 20;

/// Steps of pages fallen out of the window that are kept for the reader to
/// reuse ahead (see [`Runway::recycle`]) rather than given back; more than
/// the reader's look-ahead can take at once are given back.
const SPARE_STEPS: usize = LOOKAHEAD / STEP + 1;

/// zstd's largest block: the compressor waits for this much new input (or
/// the end) before calling zstd, which compresses whole blocks only.
const BLOCK: usize = 128 << 10;

/// Kept beyond the frame's window before pages are given back: zstd holds
/// up to a block back from the position it reports, and compresses a block
/// ahead of it.
const MARGIN: usize = 2 * BLOCK + STEP;

/// The longest zstd frame header, as zstd defines it.
const FRAME_HEADER_MAX: usize = zstd_safe::zstd_sys::ZSTD_FRAMEHEADERSIZE_MAX as usize;

/// zstd's code for "Src size is incorrect" (its error codes are negated
/// enum values).
const SIZE_WRONG: usize =
    0usize.wrapping_sub(zstd_safe::zstd_sys::ZSTD_ErrorCode::ZSTD_error_srcSize_wrong as usize);

/// The reservations tried for an input of unknown size, largest first.
const UNKNOWN_SIZE_RESERVATIONS: [usize; 5] = [1 << 40, 1 << 36, 1 << 32, 1 << 30, 1 << 28];

/// A reserved range of address space, committed a step at a time.
///
/// The range is mapped inaccessible and without swap accounting, so
/// reserving it uses no memory; committing makes a part writable, and
/// releasing returns a part's pages to the system while keeping the
/// addresses reserved.
pub struct Runway {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the runway is plain memory. Its bytes are only reached through
// raw pointers, by the reader thread (the range past what it has
// published) and by zstd (the range before it), never the same bytes at
// once; see `RunwayEncoder`.
unsafe impl Send for Runway {}
// SAFETY: as for Send; `commit`, `release` and `recycle` are system calls
// on disjoint ranges.
unsafe impl Sync for Runway {}

impl Runway {
    /// Reserves a runway for an input of `size` bytes (with room for the
    /// reader's look-ahead), or for an input of unknown size (`None`): the
    /// largest reservation the system grants. `None` when even the
    /// smallest is refused (a tight `ulimit -v`).
    pub fn reserve(size: Option<u64>) -> Option<Runway> {
        match size {
            Some(n) => {
                let len = usize::try_from(n)
                    .ok()?
                    .checked_add(LOOKAHEAD + READ_SIZE + STEP)?
                    .next_multiple_of(STEP);
                Runway::map(len)
            }
            None => UNKNOWN_SIZE_RESERVATIONS
                .iter()
                .find_map(|&len| Runway::map(len)),
        }
    }

    /// [`Runway::reserve`] for compressing with `params`; `None` also when
    /// they ask for zstd's worker threads, which copy their input into jobs
    /// anyway (a [`RunwayEncoder`] refuses them).
    pub fn reserve_for(params: &Params, size: Option<u64>) -> Option<Runway> {
        (params.worker_count() == 0)
            .then(|| Runway::reserve(size))
            .flatten()
    }

    fn map(len: usize) -> Option<Runway> {
        // SAFETY: a fresh anonymous mapping at an address of the kernel's
        // choosing touches no existing memory.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        // SAFETY: advice on our own fresh mapping, where that pays
        // (`hugepages::policy`); failure only means no huge pages.
        unsafe { hugepages::advise_mapping(p.cast(), len) };
        Some(Runway {
            base: NonNull::new(p.cast())?,
            len,
        })
    }

    /// Makes `start..end` readable and writable.
    fn commit(&self, start: usize, end: usize) -> io::Result<()> {
        debug_assert!(
            start.is_multiple_of(hugepages::page_size()) && start <= end && end <= self.len
        );
        // SAFETY: the range lies inside our own mapping (asserted above and
        // ensured by the callers, which stay below `len`).
        let rc = unsafe {
            libc::mprotect(
                self.base.as_ptr().add(start).cast(),
                end - start,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Gives `start..end`'s pages back to the system, keeping the addresses
    /// reserved (inaccessible, so a stray read would fault, not read stale
    /// data).
    fn release(&self, start: usize, end: usize) -> io::Result<()> {
        debug_assert!(
            start.is_multiple_of(hugepages::page_size()) && start <= end && end <= self.len
        );
        if start == end {
            return Ok(());
        }
        // SAFETY: MAP_FIXED replaces only the given range, which lies inside
        // our own mapping; nothing else lives there and no reference into it
        // outlives this call (the encoder releases only bytes zstd no longer
        // reads, and the reader never writes below what it has published).
        let p = unsafe {
            libc::mmap(
                self.base.as_ptr().add(start).cast(),
                end - start,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

impl Runway {
    /// Moves the pages of `from..from + len` to `to..to + len` (neither
    /// range readable by anyone else, `to`'s not yet committed), so the
    /// reader commits pages that are already there instead of faulting in
    /// new ones, then leaves `from`'s addresses reserved and inaccessible.
    /// New pages are zeroed by the kernel on their first write, and on a VM
    /// whose free memory goes back to the host, backed by the host again
    /// first (see the `hugepages` crate): a long input would otherwise pay
    /// that for every byte, zstd's own ring for one window only. Returns
    /// `Ok(false)`, having moved nothing, where the kernel cannot keep
    /// `from` mapped while it moves the pages (`MREMAP_DONTUNMAP`, Linux
    /// 5.7; a hole there could be taken by another thread's mapping) or
    /// refuses the move for any other reason.
    fn recycle(&self, from: usize, to: usize, len: usize) -> io::Result<bool> {
        debug_assert!(from + len <= to || to + len <= from);
        debug_assert!(to + len <= self.len && from + len <= self.len);
        #[cfg(target_os = "linux")]
        {
            // SAFETY: both ranges lie inside our own mapping, apart; `from`
            // holds bytes no one reads any more and `to` is reserved, not
            // yet handed to the reader. MREMAP_FIXED replaces only `to`,
            // and MREMAP_DONTUNMAP leaves `from` mapped (empty).
            let p = unsafe {
                libc::mremap(
                    self.base.as_ptr().add(from).cast(),
                    len,
                    len,
                    libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED | libc::MREMAP_DONTUNMAP,
                    self.base.as_ptr().add(to).cast::<libc::c_void>(),
                )
            };
            if p == libc::MAP_FAILED {
                // Nothing moved; committing as before works wherever this
                // failed (no MREMAP_DONTUNMAP, or no room for one more
                // mapping).
                return Ok(false);
            }
            self.release(from, from + len)?;
            Ok(true)
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (from, to, len);
            Ok(false)
        }
    }
}

impl Drop for Runway {
    fn drop(&mut self) {
        // SAFETY: the whole mapping is ours and nothing refers into it any
        // more: the reader thread holds an `Arc` to the runway, so this runs
        // after it has stopped.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

impl std::fmt::Debug for Runway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runway").field("len", &self.len).finish()
    }
}

/// What the reader and the encoder know of each other, under one lock.
#[derive(Debug, Default)]
struct Feed {
    /// Input bytes on the runway, from its start.
    filled: usize,
    /// Writable up to here (a multiple of STEP, or the runway's end).
    committed: usize,
    /// How far the encoder has taken input: the reader stays within
    /// LOOKAHEAD of it.
    taken: usize,
    /// The source has ended.
    ended: bool,
    /// The source failed; taken by the encoder to report.
    error: Option<io::Error>,
    /// The encoder is gone: the reader stops.
    stop: bool,
    /// Threads waiting for a change: a change with none skips the wake-up
    /// (a system call).
    waiting: u8,
    /// Steps (their offsets) the encoder no longer needs, still holding
    /// their pages, for the reader to move ahead ([`Runway::recycle`]).
    spare: Vec<usize>,
    /// The kernel cannot recycle: spares are given back, as before.
    no_recycling: bool,
    /// Steps recycled so far.
    recycled: u64,
}

struct Shared {
    feed: Mutex<Feed>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Feed> {
        // A panic while holding the lock cannot leave `Feed` inconsistent
        // (every update is a plain store), so a poisoned lock is used as is.
        self.feed.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn wait<'a>(&self, mut guard: MutexGuard<'a, Feed>) -> MutexGuard<'a, Feed> {
        guard.waiting += 1;
        let mut guard = self.changed.wait(guard).unwrap_or_else(|e| e.into_inner());
        guard.waiting -= 1;
        guard
    }

    /// Unlocks after a change, waking the other side if it waits for one.
    fn publish(&self, guard: MutexGuard<'_, Feed>) {
        let wake = guard.waiting > 0;
        drop(guard);
        if wake {
            self.changed.notify_all();
        }
    }
}

/// The reader thread: lays the source down on the runway, committing pages
/// as it goes, never more than LOOKAHEAD past what the encoder has taken,
/// until the source ends, fails, or the encoder goes away.
fn lay_down(mut source: Box<dyn Read + Send>, runway: &Runway, shared: &Shared) {
    loop {
        let (start, want, committed) = {
            let mut feed = shared.lock();
            let limit = loop {
                if feed.stop {
                    return;
                }
                let limit = (feed.taken + LOOKAHEAD).min(runway.len);
                if feed.filled < limit {
                    break limit;
                }
                feed = shared.wait(feed);
            };
            (
                feed.filled,
                (limit - feed.filled).min(READ_SIZE),
                feed.committed,
            )
        };
        // Only this thread raises `committed` and `filled`; the encoder
        // resets them (starting a new frame) only while `filled` is the
        // runway's length, which it is not here.
        let end = start + want;
        if end > committed {
            let to = end.next_multiple_of(STEP).min(runway.len);
            let recycled = match commit_recycling(runway, shared, committed, to) {
                Ok(n) => n,
                Err(e) => return fail(shared, e),
            };
            let mut feed = shared.lock();
            feed.committed = to;
            feed.recycled += recycled;
        }
        // SAFETY: `start..end` is committed (above), inside the runway, and
        // no one else touches it: zstd reads only below `filled`, which is
        // `start` until this read is published.
        let buf = unsafe { std::slice::from_raw_parts_mut(runway.base.as_ptr().add(start), want) };
        let n = loop {
            match source.read(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return fail(shared, e),
            }
        };
        let mut feed = shared.lock();
        if n == 0 {
            feed.ended = true;
        } else {
            feed.filled += n;
        }
        shared.publish(feed);
        if n == 0 {
            return;
        }
    }
}

/// Commits `start..end` (whole steps), moving spare steps' pages there
/// first where there are any and the kernel can; returns how many steps
/// were moved.
fn commit_recycling(runway: &Runway, shared: &Shared, start: usize, end: usize) -> io::Result<u64> {
    let mut at = start;
    let mut moved = 0;
    while at + STEP <= end {
        let spare = {
            let mut feed = shared.lock();
            if feed.no_recycling {
                None
            } else {
                feed.spare.pop()
            }
        };
        let Some(from) = spare else { break };
        if runway.recycle(from, at, STEP)? {
            moved += 1;
            at += STEP;
        } else {
            runway.release(from, from + STEP)?;
            shared.lock().no_recycling = true;
        }
    }
    runway.commit(at, end)?;
    Ok(moved)
}

fn fail(shared: &Shared, e: io::Error) {
    let mut feed = shared.lock();
    feed.error = Some(e);
    shared.publish(feed);
}

/// Where an encoder's frame stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Compressing; more input may come.
    Running,
    /// Every frame is complete.
    Done,
    /// An error ended the stream (its I/O kind, for a later call).
    Failed(io::ErrorKind),
}

/// A [`Read`] of compressed bytes: zstd frames of everything a source
/// yields, compressed in place on a [`Runway`] (see the module docs).
///
/// Read errors of the source come out as they were (same kind), zstd's
/// errors as [`Error::into_io`] wraps them ([`Error::from_io`] takes them
/// back).
pub struct RunwayEncoder {
    cctx: StableCCtx,
    runway: Arc<Runway>,
    shared: Arc<Shared>,
    reader: Option<JoinHandle<()>>,
    /// zstd's input position on the runway.
    pos: usize,
    /// Pages below this offset have been given back.
    released: usize,
    /// The current frame's header bytes seen so far, to learn its window.
    header: Vec<u8>,
    /// The current frame's window, once its header is out.
    window: Option<usize>,
    /// The frame ends at the input's end (or at the runway's, for a new
    /// frame to follow): the size zstd is finishing, fixed from then on.
    ending: Option<usize>,
    /// Whether zstd has been called in this frame yet (see [`Self::step`]).
    started: bool,
    /// Input bytes compressed in earlier frames.
    earlier: u64,
    /// The input's size as declared to zstd, if it was.
    declared: Option<u64>,
    phase: Phase,
}

impl std::fmt::Debug for RunwayEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunwayEncoder")
            .field("runway", &self.runway)
            .field("pos", &self.pos)
            .field("released", &self.released)
            .field("window", &self.window)
            .finish()
    }
}

impl RunwayEncoder {
    /// Starts the reader thread over `source` and a stable-input zstd
    /// context with `params` (which must ask for no worker threads) and an
    /// optional dictionary. `size`, when known, is recorded in the frame
    /// header; an input of another size is an error, as in zstd.
    pub fn new(
        runway: Runway,
        params: Params,
        dictionary: Option<&[u8]>,
        size: Option<u64>,
        source: Box<dyn Read + Send>,
    ) -> Result<Self> {
        if params.worker_count() > 0 {
            return Err(Error::Parameter {
                name: "workers",
                detail: "a runway encoder compresses in the calling thread",
            });
        }
        let mut cctx = StableCCtx::new(&params, dictionary)?;
        cctx.pledge(size)?;
        let runway = Arc::new(runway);
        let shared = Arc::new(Shared {
            feed: Mutex::new(Feed::default()),
            changed: Condvar::new(),
        });
        let reader = {
            let (runway, shared) = (Arc::clone(&runway), Arc::clone(&shared));
            std::thread::Builder::new()
                .name("runway-reader".into())
                .spawn(move || {
                    // A source whose read panics must not leave the encoder
                    // waiting for input that will never come.
                    let run = std::panic::AssertUnwindSafe(|| lay_down(source, &runway, &shared));
                    if std::panic::catch_unwind(run).is_err() {
                        fail(&shared, io::Error::other("the input reader panicked"));
                    }
                })?
        };
        Ok(RunwayEncoder {
            cctx,
            runway,
            shared,
            reader: Some(reader),
            pos: 0,
            released: 0,
            header: Vec::new(),
            window: None,
            ending: None,
            started: false,
            earlier: 0,
            declared: size,
            phase: Phase::Running,
        })
    }

    /// Input bytes compressed so far.
    pub fn consumed(&self) -> u64 {
        self.earlier + self.pos as u64
    }

    /// Compresses into `out`; returns the bytes written, 0 once the last
    /// frame is complete (or when `out` is empty). After an error, every
    /// later call fails too: the stream cannot continue.
    pub fn compress(&mut self, out: &mut [u8]) -> Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if let Phase::Failed(kind) = self.phase {
            return Err(Error::Io(io::Error::new(kind, "an earlier call failed")));
        }
        self.step(out).inspect_err(|e| {
            let kind = match e {
                Error::Io(e) => e.kind(),
                _ => io::ErrorKind::InvalidData,
            };
            self.phase = Phase::Failed(kind);
        })
    }

    fn step(&mut self, out: &mut [u8]) -> Result<usize> {
        while self.phase == Phase::Running {
            let size = match self.ending {
                Some(size) => size,
                None => self.await_input()?,
            };
            // A frame's first call with all its input and the end takes
            // zstd's one-shot path, other calls its streaming path, and the
            // two encode differently: whether the reader got to the end
            // before the first call is timing, so the output would vary
            // from run to run. Only an input of at most a block is coded in
            // one shot, as the zstd CLI codes it (its first read holds a
            // whole such file); a longer one always streams, as the CLI's.
            let end = self.ending.is_some() && (self.started || size <= BLOCK);
            self.started = true;
            // SAFETY: `base` and `size` are this frame's (the same start
            // every call, sizes never shrinking: `filled` only grows within
            // a frame); `pos` is what zstd left; `base..size` is committed
            // and published by the reader, which writes only beyond it; and
            // pages are released only below the window (plus margin) behind
            // `pos`, which zstd no longer reads.
            let (written, remaining) = unsafe {
                self.cctx
                    .compress(out, self.runway.base.as_ptr(), size, &mut self.pos, end)
            }?;
            self.note_header(&out[..written]);
            self.taken();
            self.give_back()?;
            if end && remaining == 0 {
                self.frame_done()?;
            }
            if written > 0 {
                return Ok(written);
            }
        }
        Ok(0)
    }

    /// Waits for a block's worth of new input, the input's end, or a full
    /// runway; returns the input size to compress up to, and sets `ending`
    /// when the frame must close there.
    fn await_input(&mut self) -> Result<usize> {
        let mut feed = self.shared.lock();
        loop {
            if let Some(e) = feed.error.take() {
                return Err(Error::Io(e));
            }
            if let Some(declared) = self.declared {
                let have = self.earlier + feed.filled as u64;
                // zstd checks this only when it has not seen all the input
                // at once; a frame's first call with all of it overrides
                // the pledge.
                if have > declared || (feed.ended && have != declared) {
                    return Err(Error::zstd(SIZE_WRONG));
                }
            }
            let full = feed.filled == self.runway.len;
            if feed.ended || full {
                self.ending = Some(feed.filled);
                return Ok(feed.filled);
            }
            if feed.filled >= self.pos + BLOCK {
                return Ok(feed.filled);
            }
            feed = self.shared.wait(feed);
        }
    }

    /// Tells the reader how far zstd has got, so it may read further.
    fn taken(&self) {
        let mut feed = self.shared.lock();
        feed.taken = self.pos;
        self.shared.publish(feed);
    }

    /// Learns the frame's window from its header, the first bytes of the
    /// frame's output. Only the header's bytes are kept (at most
    /// [`FRAME_HEADER_MAX`]), not the first output call's whole block.
    fn note_header(&mut self, written: &[u8]) {
        if self.window.is_some() || written.is_empty() {
            return;
        }
        let want = FRAME_HEADER_MAX.saturating_sub(self.header.len());
        self.header
            .extend_from_slice(&written[..written.len().min(want)]);
        match ffi::frame_header(&self.header) {
            FrameHeader::Frame { window_size, .. } => {
                self.window = Some(usize::try_from(window_size).unwrap_or(usize::MAX));
                self.header.clear();
            }
            // A header is never longer than FRAME_HEADER_MAX; more bytes
            // will come only while it is shorter.
            FrameHeader::Incomplete { .. } if self.header.len() < FRAME_HEADER_MAX => {}
            // Our own output always starts with a frame header; should it
            // not, nothing is given back (memory grows, output is right).
            FrameHeader::Incomplete { .. } | FrameHeader::Skippable | FrameHeader::Invalid => {
                self.window = Some(usize::MAX);
                self.header.clear();
            }
        }
    }

    /// Gives back the pages that have fallen out of the window.
    fn give_back(&mut self) -> Result<()> {
        let Some(window) = self.window else {
            return Ok(());
        };
        let keep_from = self.pos.saturating_sub(window.saturating_add(MARGIN));
        let to = keep_from - keep_from % STEP;
        if to > self.released {
            // Whole steps are kept for the reader (up to SPARE_STEPS), the
            // rest given back.
            let mut given_from = self.released;
            {
                let mut feed = self.shared.lock();
                while !feed.no_recycling
                    && feed.spare.len() < SPARE_STEPS
                    && given_from + STEP <= to
                {
                    feed.spare.push(given_from);
                    given_from += STEP;
                }
            }
            self.runway.release(given_from, to)?;
            self.released = to;
        }
        Ok(())
    }

    /// Steps of pages moved ahead for the reader rather than faulted in
    /// anew (for the tests).
    #[cfg(test)]
    fn recycled(&self) -> u64 {
        self.shared.lock().recycled
    }

    /// After a frame's last bytes: done at the input's end, else (the
    /// runway is full) a new frame from the runway's start.
    fn frame_done(&mut self) -> Result<()> {
        let feed = self.shared.lock();
        if feed.ended {
            self.phase = Phase::Done;
            return Ok(());
        }
        drop(feed);
        // The reader has stopped laying down (the runway is full), so no
        // spare is being moved: every page goes back.
        let spare = std::mem::take(&mut self.shared.lock().spare);
        for from in spare {
            self.runway.release(from, from + STEP)?;
        }
        self.runway.release(self.released, self.runway.len)?;
        self.earlier += self.pos as u64;
        self.pos = 0;
        self.released = 0;
        self.window = None;
        self.ending = None;
        self.started = false;
        self.cctx.reset_session();
        let mut feed = self.shared.lock();
        feed.filled = 0;
        feed.committed = 0;
        feed.taken = 0;
        self.shared.publish(feed);
        Ok(())
    }
}

impl Read for RunwayEncoder {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        self.compress(out).map_err(Error::into_io)
    }
}

impl Drop for RunwayEncoder {
    fn drop(&mut self) {
        let mut feed = self.shared.lock();
        feed.stop = true;
        self.shared.publish(feed);
        // The reader may be blocked in a read of a terminal or an idle pipe:
        // it is not waited for. Its `Arc` keeps the runway mapped until it
        // ends, so its last read still lands in memory of ours.
        drop(self.reader.take());
    }
}

#[cfg(test)]
mod tests;
