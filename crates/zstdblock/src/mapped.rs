//! A regular file mapped into memory as the pipeline's input, read in
//! place: no `read` copies it into buffers, and no buffer of the input is
//! faulted in. On 64 MiB outputs from this machine's files that was 7-25 %
//! of `perfkit decompress --decoder=perfkit -T2`'s CPU where the input is
//! large against its output (docs, stored blocks), and inside the
//! same-binary spread on sources and libraries (docs/compress.md).
//!
//! A mapping has one hazard a read does not: if the file shrinks while it
//! is mapped (another process truncates it), touching a page past its new
//! end raises `SIGBUS`, which would kill the process without a word, its
//! output half written. So every mapping is registered with a `SIGBUS`
//! handler, installed once: a fault inside a registered mapping maps a
//! page of zeros over the missing one, marks the mapping as having shrunk
//! ([`MappedFile::shrank`]) and lets the read go on. The rest of the page a
//! file was cut inside reads as zeros without a fault, so `shrank` asks
//! the file's size too. The decoder asks it before any byte derived from
//! the input goes out, and the decode ends with an input error. A fault
//! anywhere else, or a `SIGBUS` sent by `kill`, goes to the action that
//! was there before (Rust's own stack-overflow report, or the default).

#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Mappings that may be registered at once; one more is refused (the
/// caller then reads the file instead).
const SLOTS: usize = 8;

/// A registered mapping: its address range (`start` 0: free, [`CLAIMED`]:
/// being registered) and whether a read fell past the file's end.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    shrank: AtomicBool,
}

/// A mapping's pages are handed back this many bytes at a time
/// ([`MappedFile::release_before`]): each call costs the other cores a
/// TLB flush.
const RELEASE_STEP: usize = 4 << 20;

/// A slot's start while its mapping is registered.
const CLAIMED: usize = 1;

static REGISTERED: [Slot; SLOTS] = [const {
    Slot {
        start: AtomicUsize::new(0),
        end: AtomicUsize::new(0),
        shrank: AtomicBool::new(false),
    }
}; SLOTS];

/// A file's first `len` bytes, mapped read-only, as they were when it was
/// mapped (see the module doc for a file that shrinks meanwhile).
pub struct MappedFile {
    base: *mut u8,
    len: usize,
    /// Another handle on the file, for its size now: a file cut inside a
    /// page raises no fault for the rest of that page, which reads as
    /// zeros.
    file: File,
    slot: usize,
    /// Bytes from the start already handed back ([`MappedFile::release_before`]).
    released: AtomicUsize,
}

// SAFETY: the mapping is read-only memory owned by this value; any thread
// may read it, and the atomics are its only shared state.
unsafe impl Send for MappedFile {}
// SAFETY: as for Send.
unsafe impl Sync for MappedFile {}

/// The error a decode of a mapped file ends with when the file shrank.
pub(crate) fn shrank_error() -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        "the input file shrank while it was being read",
    )
}

impl MappedFile {
    /// Maps the first `len` bytes of `file`, keeping the handle to ask its
    /// size ([`MappedFile::shrank`]). Fails where the file cannot
    /// be mapped (a file system without it, `len` 0, more than eight
    /// mappings at once, a system other than Linux): the caller reads
    /// it instead.
    ///
    /// # Safety
    ///
    /// [`MappedFile::bytes`] is a shared slice whose bytes another process
    /// may change by writing the file (a read would return the new bytes
    /// too, from then on). The caller accepts that: the slice goes only to
    /// code that treats each byte as untrusted and never reads one twice
    /// trusting it unchanged, as zstdblock's decoder does (every index it
    /// takes into its input is bounded by the input's length, not by a
    /// value read from it earlier).
    pub unsafe fn map(file: File, len: u64) -> io::Result<MappedFile> {
        let len = usize::try_from(len).map_err(|_| io::ErrorKind::OutOfMemory)?;
        if len == 0 {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        guard::install()?;
        let base = guard::map(&file, len)?;
        let start = base as usize;
        for (slot, s) in REGISTERED.iter().enumerate() {
            // Claimed first (a start of CLAIMED, never an address of a
            // mapping), then its end, then the start that makes it live:
            // the handler never pairs one mapping's start with another's
            // end.
            if s.start
                .compare_exchange(0, CLAIMED, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                continue;
            }
            s.shrank.store(false, Ordering::SeqCst);
            s.end.store(start + len, Ordering::SeqCst);
            s.start.store(start, Ordering::SeqCst);
            return Ok(MappedFile {
                base,
                len,
                file,
                slot,
                released: AtomicUsize::new(0),
            });
        }
        guard::unmap(base, len);
        Err(io::Error::other("too many files mapped at once"))
    }

    /// The mapped bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes mapped readable at `base` for this value's
        // life; a page the file lost reads as zeros (see the module doc).
        unsafe { std::slice::from_raw_parts(self.base, self.len) }
    }

    /// Whether the file shrank since it was mapped: a read fell past its
    /// end, or it is shorter now (the rest of a page it was cut inside
    /// reads as zeros without a fault). Bytes read from past its end were
    /// zeros, not the file's. Asks the file's size each call.
    pub fn shrank(&self) -> bool {
        self.faulted()
            || self
                .file
                .metadata()
                .is_ok_and(|m| m.len() < self.len as u64)
    }

    /// Whether a read fell past the file's end since it was mapped (the
    /// handler's mark alone, without asking the file's size).
    pub(crate) fn faulted(&self) -> bool {
        REGISTERED[self.slot].shrank.load(Ordering::SeqCst)
    }

    /// Hands back the pages wholly before byte `offset` once they add up
    /// to [`RELEASE_STEP`] or more: their memory stops counting as this
    /// process's, and a later read of them maps them again from the
    /// file. Only a hint: no byte changes. One thread calls it.
    pub(crate) fn release_before(&self, offset: usize) {
        let page = hugepages::page_size();
        let end = offset.min(self.len) / page * page;
        let from = self.released.load(Ordering::Relaxed);
        if end < from + RELEASE_STEP {
            return;
        }
        self.released.store(end, Ordering::Relaxed);
        // SAFETY: whole pages inside this mapping.
        guard::release(unsafe { self.base.add(from) }, end - from);
    }
}

impl Drop for MappedFile {
    fn drop(&mut self) {
        let s = &REGISTERED[self.slot];
        // No reader is left: the slot goes before the mapping does, its
        // end first, so that a `map` claiming it after the start is 0
        // keeps its own end.
        s.end.store(0, Ordering::SeqCst);
        s.start.store(0, Ordering::SeqCst);
        guard::unmap(self.base, self.len);
    }
}

// Linux's: the handler reads glibc's and musl's `errno` location and
// `BUS_ADRERR`, which other systems spell otherwise.
#[cfg(target_os = "linux")]
mod guard {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::sync::OnceLock;
    use std::sync::atomic::Ordering;

    use super::REGISTERED;

    /// The `SIGBUS` action before ours, kept for faults that are not ours;
    /// set once, before the handler is installed (None: it could not be).
    static PREVIOUS: OnceLock<Option<Previous>> = OnceLock::new();

    struct Previous(libc::sigaction);
    // SAFETY: a plain C struct, written once before the handler can read
    // it and never again.
    unsafe impl Send for Previous {}
    // SAFETY: as for Send.
    unsafe impl Sync for Previous {}

    /// Installs the handler once for the process; an error if it could
    /// not be.
    pub(super) fn install() -> io::Result<()> {
        // Known before the handler can run, which then only loads it.
        hugepages::page_size();
        let installed = PREVIOUS.get_or_init(|| {
            // SAFETY: zeroed sigaction structs are valid; the new action
            // names a handler of the SA_SIGINFO shape; the old one is
            // written by the kernel. Until `PREVIOUS` is set the handler
            // passes every fault to the default action, and none is ours.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let mut old: libc::sigaction = std::mem::zeroed();
                (libc::sigaction(libc::SIGBUS, &action, &mut old) == 0).then_some(Previous(old))
            }
        });
        match installed {
            Some(_) => Ok(()),
            None => Err(io::Error::other("no SIGBUS handler")),
        }
    }

    /// A fault at a registered mapping's address: a page of zeros goes
    /// over the missing page and the mapping is marked; any other goes to
    /// the previous action.
    extern "C" fn on_sigbus(
        signal: libc::c_int,
        info: *mut libc::siginfo_t,
        context: *mut libc::c_void,
    ) {
        // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO
        // handler; the address is a fault's only for BUS_ADRERR (a
        // SIGBUS sent by kill carries a pid there).
        let addr =
            unsafe { ((*info).si_code == libc::BUS_ADRERR).then(|| (*info).si_addr() as usize) };
        // SAFETY: errno is this thread's; the calls below may set it, and
        // the interrupted code must find it as it left it.
        let errno = unsafe { *libc::__errno_location() };
        if let Some(addr) = addr
            && mark_and_fill(addr)
        {
            // SAFETY: as above.
            unsafe { *libc::__errno_location() = errno };
            return;
        }
        chain(signal, info, context);
        // SAFETY: as above.
        unsafe { *libc::__errno_location() = errno };
    }

    /// Whether `addr` lies in a registered mapping; if so its page is
    /// mapped as zeros and the mapping marked (marked first: once the page
    /// is mapped another thread may read it without a fault, and pass on
    /// what it made of it).
    fn mark_and_fill(addr: usize) -> bool {
        let page = hugepages::page_size();
        for slot in &REGISTERED {
            let start = slot.start.load(Ordering::SeqCst);
            let end = slot.end.load(Ordering::SeqCst);
            // Read again: a slot freed and claimed between the two loads
            // pairs one mapping's start with another's end.
            if start <= super::CLAIMED
                || start != slot.start.load(Ordering::SeqCst)
                || addr < start
                || addr >= end
            {
                continue;
            }
            slot.shrank.store(true, Ordering::SeqCst);
            // SAFETY: the page lies inside a live mapping of ours (its
            // slot is registered until after its last read); replacing it
            // with private zeros changes no other memory. mmap is a bare
            // system call here, safe in a signal handler in practice,
            // though POSIX does not list it.
            let zero = unsafe {
                libc::mmap(
                    (addr & !(page - 1)) as *mut libc::c_void,
                    page,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            // A page that cannot be mapped goes on to the action before
            // ours, and the process dies of the fault as it would have.
            return zero != libc::MAP_FAILED;
        }
        false
    }

    /// Hands a signal that is not ours to the action before ours.
    fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        let previous = match PREVIOUS.get() {
            Some(Some(Previous(previous))) => previous,
            _ => {
                // SAFETY: the default action, as if we were not here; raised
                // again, it takes effect when this handler returns.
                unsafe {
                    libc::signal(libc::SIGBUS, libc::SIG_DFL);
                    libc::raise(libc::SIGBUS);
                }
                return;
            }
        };
        let handler = previous.sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            // Back to it, and raised again (pending until this handler
            // returns): a fault runs again under it, and a signal sent
            // by kill is not lost.
            // SAFETY: restoring the action the process had.
            unsafe {
                libc::sigaction(libc::SIGBUS, previous, std::ptr::null_mut());
                libc::raise(libc::SIGBUS);
            }
        } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
            // SAFETY: the previous handler took these arguments.
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(handler) };
            f(signal, info, context);
        } else {
            // SAFETY: the previous handler took the signal alone.
            let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
            f(signal);
        }
    }

    pub(super) fn map(file: &File, len: usize) -> io::Result<*mut u8> {
        // SAFETY: a fresh read-only private mapping of an open file,
        // anywhere.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(at.cast())
    }

    pub(super) fn unmap(base: *mut u8, len: usize) {
        // SAFETY: a mapping made by `map`, no longer read.
        unsafe { libc::munmap(base.cast(), len) };
    }

    pub(super) fn release(at: *mut u8, len: usize) {
        // SAFETY: whole pages of a read-only file mapping: dropping them
        // loses nothing, a later read maps them again.
        unsafe { libc::madvise(at.cast(), len, libc::MADV_DONTNEED) };
    }
}

#[cfg(not(target_os = "linux"))]
mod guard {
    use std::fs::File;
    use std::io;

    pub(super) fn install() -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }
    pub(super) fn map(_: &File, _: usize) -> io::Result<*mut u8> {
        Err(io::ErrorKind::Unsupported.into())
    }
    pub(super) fn unmap(_: *mut u8, _: usize) {}
    pub(super) fn release(_: *mut u8, _: usize) {}
}

// Where files are mapped at all.
#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("input");
        File::create(&path).unwrap().write_all(bytes).unwrap();
        let f = File::options().read(true).write(true).open(&path).unwrap();
        (dir, f)
    }

    fn mapped(f: &File, len: usize) -> MappedFile {
        // SAFETY: the tests only shorten their files, which the guard is
        // for; nothing writes them.
        unsafe { MappedFile::map(f.try_clone().unwrap(), len as u64) }.unwrap()
    }

    #[test]
    fn a_mapped_file_reads_as_its_bytes_before_and_after_its_pages_are_handed_back() {
        // Past RELEASE_STEP, so that the pages before it are handed back.
        let data: Vec<u8> = (0..5u32 << 20).map(|i| (i * 7 % 251) as u8).collect();
        let (_dir, f) = file_of(&data);
        let map = mapped(&f, data.len());
        assert_eq!(map.bytes(), &data[..]);
        map.release_before(data.len());
        assert!(
            map.released.load(Ordering::Relaxed) >= RELEASE_STEP,
            "nothing was handed back"
        );
        // Released pages map again from the file.
        assert_eq!(map.bytes(), &data[..]);
        assert!(!map.shrank());
    }

    #[test]
    fn a_file_that_shrinks_reads_zeros_past_its_end_and_says_so() {
        let page = hugepages::page_size();
        let data = vec![0xA5u8; 4 * page];
        let (_dir, f) = file_of(&data);
        let map = mapped(&f, data.len());
        let other = file_of(&data);
        let intact = mapped(&other.1, data.len());
        f.set_len(page as u64).unwrap();
        let bytes = map.bytes();
        assert_eq!(bytes[page - 1], 0xA5, "the page the file kept");
        assert!(!map.faulted());
        assert!(map.shrank(), "its size says so before any fault");
        // Without the guard this read kills the test process (SIGBUS).
        assert_eq!(bytes[3 * page + 5], 0);
        assert!(map.faulted(), "the handler marked it");
        assert!(
            !intact.faulted() && !intact.shrank(),
            "another mapping is not marked"
        );
        assert_eq!(intact.bytes()[3 * page + 5], 0xA5);
    }

    #[test]
    fn an_empty_file_is_not_mapped() {
        let (_dir, f) = file_of(&[]);
        // SAFETY: nothing writes the file.
        assert!(unsafe { MappedFile::map(f, 0) }.is_err());
    }
}
