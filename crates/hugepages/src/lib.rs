//! Transparent huge pages for fresh buffers, where they pay.
//!
//! A large buffer written once from start to end (a decoder's output, a
//! compressor's input laid down ahead of it) costs a page fault per 4 KiB
//! page; backed by 2 MiB pages it costs one fault per 2 MiB and fewer TLB
//! misses. Kernels set to give huge pages only on request
//! (`transparent_hugepage=madvise`) need `madvise(MADV_HUGEPAGE)` for it,
//! and [`advise`] asks, for the part of a range that whole huge pages
//! cover.
//!
//! [`write_all_in_pieces`] keeps the page cache from doing the same on
//! its own: a file system that caches in large folios takes huge pages
//! for one large `write`.
//!
//! It does not ask on a virtual machine whose balloon device reports free
//! memory to the host (virtio's free page reporting). Such a guest hands
//! every free 2 MiB block back to the host a couple of seconds after it is
//! freed, so the next process that faults a huge page on it waits while
//! the host backs it again, 512 of the host's pages at a time: on the
//! machine this was measured on, `perfkit decompress --decoder=perfkit
//! -T2` of a 64 MiB output spent 110 ms of CPU (76 ms in the kernel) with
//! three seconds between runs, against 48 ms back to back and 61-63 ms
//! either way with 4 KiB pages. A user's command runs once, not back to
//! back, so there ordinary pages are the better bet. [`policy`] says which
//! way this machine goes and why; `PERFKIT_HUGE_PAGES=on` or `off` decides
//! instead.
//!
//! ```
//! let buf = vec![0u8; 8 << 20];
//! // Before any of it is touched: advice changes how pages are backed
//! // when they are first written, never what they hold.
//! hugepages::advise(&buf);
//! assert!(buf.iter().all(|&b| b == 0));
//! println!("huge pages: {}", hugepages::policy());
//! ```

use std::fmt;
use std::io::{self, Write};
use std::path::Path;
use std::sync::OnceLock;

/// The size of a transparent huge page on x86_64 and most other targets.
pub const HUGE_PAGE: usize = 2 << 20;

/// The system's page size in bytes (4096 where it cannot be told). Asked
/// once; later calls are one atomic load, safe in a signal handler.
pub fn page_size() -> usize {
    static PAGE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let known = PAGE.load(std::sync::atomic::Ordering::Relaxed);
    if known != 0 {
        return known;
    }
    #[cfg(unix)]
    // SAFETY: sysconf has no preconditions.
    #[allow(unsafe_code)]
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) })
        .ok()
        .filter(|&p| p > 0)
        .unwrap_or(4096);
    #[cfg(not(unix))]
    let page = 4096;
    PAGE.store(page, std::sync::atomic::Ordering::Relaxed);
    page
}

/// The environment variable that overrides the detection: `on` or `off`.
pub const OVERRIDE: &str = "PERFKIT_HUGE_PAGES";

/// The virtio device ID of a memory balloon.
const VIRTIO_BALLOON: &str = "0x0005";

/// The balloon's feature bit for free page reporting
/// (`VIRTIO_BALLOON_F_REPORTING`).
const REPORTING_BIT: usize = 5;

/// Whether [`advise`] asks for huge pages, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Asks: nothing here hands free memory back to a host.
    Ask,
    /// Does not ask: a balloon reports free pages to the host, which then
    /// backs each new huge page again on its first write.
    ReportedToHost,
    /// Asks, because `PERFKIT_HUGE_PAGES=on`.
    ForcedOn,
    /// Does not ask, because `PERFKIT_HUGE_PAGES=off`.
    ForcedOff,
}

impl Policy {
    /// Whether this policy asks for huge pages.
    pub fn asks(self) -> bool {
        matches!(self, Policy::Ask | Policy::ForcedOn)
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Ask => "asked for (madvise)",
            Policy::ReportedToHost => {
                "not asked for: this VM's balloon reports free pages to the host"
            }
            Policy::ForcedOn => "asked for (PERFKIT_HUGE_PAGES=on)",
            Policy::ForcedOff => "not asked for (PERFKIT_HUGE_PAGES=off)",
        })
    }
}

/// This process's policy, decided once: the override if it is set to `on`
/// or `off`, else what `/sys/bus/virtio/devices` says.
pub fn policy() -> Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    *POLICY.get_or_init(|| {
        decide(
            std::env::var(OVERRIDE).ok().as_deref(),
            Path::new("/sys/bus/virtio/devices"),
        )
    })
}

/// The policy for an override's value (ignored unless `on` or `off`) and a
/// sysfs folder of virtio devices (absent on bare metal).
fn decide(overridden: Option<&str>, virtio_devices: &Path) -> Policy {
    match overridden.map(str::trim) {
        Some("on") => return Policy::ForcedOn,
        Some("off") => return Policy::ForcedOff,
        _ => {}
    }
    if balloon_reports(virtio_devices) {
        Policy::ReportedToHost
    } else {
        Policy::Ask
    }
}

/// Whether any virtio device under `dir` is a balloon that negotiated free
/// page reporting. Its `features` file is one `0`/`1` per feature bit,
/// lowest first.
fn balloon_reports(dir: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|device| {
        let path = device.path();
        let read = |name: &str| std::fs::read_to_string(path.join(name)).unwrap_or_default();
        read("device").trim() == VIRTIO_BALLOON
            && read("features").as_bytes().get(REPORTING_BIT) == Some(&b'1')
    })
}

/// Asks for huge pages for the whole 2 MiB pages inside `buf`, when
/// [`policy`] says so. Call it before the buffer is written: pages already
/// faulted in stay as they are. A buffer holding no whole aligned huge
/// page is left alone, as is every target but Linux.
pub fn advise(buf: &[u8]) {
    if !policy().asks() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let start = buf.as_ptr() as usize;
        let first = start.next_multiple_of(HUGE_PAGE);
        let end = (start + buf.len()) / HUGE_PAGE * HUGE_PAGE;
        if end > first {
            #[allow(unsafe_code)]
            // SAFETY: the range lies inside `buf`, page-aligned; the advice
            // changes how its pages are backed, never what they hold, and
            // failing only means no huge pages.
            unsafe {
                libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = buf;
}

/// The most bytes [`write_all_in_pieces`] hands the system in one call.
pub const WRITE_PIECE: usize = 1 << 20;

/// Writes all of `buf` in calls of at most [`WRITE_PIECE`] bytes.
///
/// A file system that caches files in large folios (ext4 and XFS on recent
/// kernels) takes folios as large as the write asks for, up to 2 MiB: one
/// `write` of 16 MiB into a new file fills it with huge pages of the page
/// cache, and on a VM whose free memory goes back to the host (see the
/// crate docs) each is backed by the host again as it is filled. Writing
/// 64 MiB into a new file took 132-158 ms of CPU in 16 MiB writes three
/// seconds apart, against 13-17 ms in 1 MiB or 128 KiB writes, and 13-14
/// ms any way back to back. Smaller calls cost nothing measurable.
pub fn write_all_in_pieces<W: Write + ?Sized>(writer: &mut W, buf: &[u8]) -> io::Result<()> {
    for piece in buf.chunks(WRITE_PIECE) {
        writer.write_all(piece)?;
    }
    Ok(())
}

/// [`advise`] for a mapping the caller made and owns, `len` bytes from
/// `addr` (page-aligned, as `mmap` returns), which no reference covers
/// yet: a reserved range not yet readable, say.
///
/// # Safety
///
/// `addr..addr + len` must be a mapping of this process.
#[allow(unsafe_code)]
pub unsafe fn advise_mapping(addr: *mut u8, len: usize) {
    if !policy().asks() {
        return;
    }
    #[cfg(target_os = "linux")]
    // SAFETY: the caller vouches that the range is its own mapping; the
    // advice changes how its pages are backed, never what they hold.
    unsafe {
        libc::madvise(addr.cast(), len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (addr, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The system's own word for it, `getconf PAGESIZE`, asked twice (the
    /// second answer is the remembered one).
    #[cfg(unix)]
    #[test]
    fn the_page_size_is_the_systems() {
        let out = std::process::Command::new("getconf")
            .arg("PAGESIZE")
            .output()
            .expect("getconf runs");
        let theirs: usize = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(page_size(), theirs);
        assert_eq!(page_size(), theirs);
    }

    /// A sysfs folder of virtio devices, each `(name, device ID, features)`.
    fn devices(list: &[(&str, &str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, id, features) in list {
            let d = dir.path().join(name);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("device"), format!("{id}\n")).unwrap();
            std::fs::write(d.join("features"), format!("{features}\n")).unwrap();
        }
        dir
    }

    /// This machine's balloon's features line, as sysfs gives it.
    const REPORTING: &str = "01100101000000000000000000000000100000000000";
    const NOT_REPORTING: &str = "01100001000000000000000000000000100000000000";

    #[test]
    fn a_balloon_that_reports_free_pages_turns_the_advice_off() {
        let vm = devices(&[
            ("virtio0", "0x0005", REPORTING),
            ("virtio1", "0x0002", "1111111"),
        ]);
        assert_eq!(decide(None, vm.path()), Policy::ReportedToHost);
        assert!(!Policy::ReportedToHost.asks());
    }

    #[test]
    fn no_balloon_or_one_that_does_not_report_keeps_it() {
        let quiet = devices(&[("virtio0", "0x0005", NOT_REPORTING)]);
        assert_eq!(decide(None, quiet.path()), Policy::Ask);
        // Bit 5 set on another device is not a balloon's.
        let other = devices(&[("virtio2", "0x0001", REPORTING)]);
        assert_eq!(decide(None, other.path()), Policy::Ask);
        // Bare metal: no virtio bus at all.
        assert_eq!(decide(None, Path::new("/nonexistent/virtio")), Policy::Ask);
    }

    /// A writer that records the size of every call.
    #[derive(Default)]
    struct Calls(Vec<usize>);

    impl Write for Calls {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.push(buf.len());
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_large_buffer_goes_out_in_pieces_of_at_most_a_mebibyte() {
        let mut w = Calls::default();
        write_all_in_pieces(&mut w, &vec![7u8; 5 * WRITE_PIECE / 2]).unwrap();
        assert_eq!(w.0, [WRITE_PIECE, WRITE_PIECE, WRITE_PIECE / 2]);
        let mut w = Calls::default();
        write_all_in_pieces(&mut w, b"short").unwrap();
        assert_eq!(w.0, [5]);
    }

    #[test]
    fn the_override_decides_and_other_values_are_ignored() {
        let vm = devices(&[("virtio0", "0x0005", REPORTING)]);
        assert_eq!(decide(Some("on"), vm.path()), Policy::ForcedOn);
        assert_eq!(
            decide(Some("off"), Path::new("/nonexistent")),
            Policy::ForcedOff
        );
        assert_eq!(decide(Some("maybe"), vm.path()), Policy::ReportedToHost);
        assert!(Policy::ForcedOn.asks() && !Policy::ForcedOff.asks());
    }
}
