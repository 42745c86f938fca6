//! The costs this peer reports, read the same way perfkit reads its own:
//! the calling thread's CPU clock and the kernel's peak-RSS mark.

use std::time::Duration;

/// CPU time the calling thread has used (nanosecond clock; `getrusage`
/// is tick-granular for one small archive). A failing clock is an error:
/// read as zero it would report an archive as free.
pub fn thread_cpu() -> std::io::Result<Duration> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the one timespec we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Err(std::io::Error::other(format!(
            "clock_gettime(CLOCK_THREAD_CPUTIME_ID): {}",
            std::io::Error::last_os_error()
        )));
    }
    Ok(Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32))
}

/// Resets the kernel's peak-RSS mark (`VmHWM`) to the current RSS and
/// returns that RSS, so a later [`peak_rss`] covers only what follows
/// (Linux ≥ 4.0; elsewhere both read 0 and the growth is 0).
pub fn reset_peak_rss() -> u64 {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    status_kib("VmRSS") * 1024
}

/// The largest resident set since the last [`reset_peak_rss`], in bytes.
pub fn peak_rss() -> u64 {
    status_kib("VmHWM") * 1024
}

fn status_kib(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| parse_status_kib(&s, key))
        .unwrap_or(0)
}

fn parse_status_kib(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k == key).then(|| v.split_whitespace().next()?.parse().ok())?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_named_kib_field() {
        let text = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(parse_status_kib(text, "VmRSS"), Some(1024));
        assert_eq!(parse_status_kib(text, "VmHWM"), Some(2048));
        assert_eq!(parse_status_kib(text, "VmSwap"), None);
    }

    #[test]
    fn the_thread_clock_reads_and_advances_with_work() {
        let t0 = thread_cpu().unwrap();
        let mut x = 0u64;
        while thread_cpu().unwrap() - t0 < Duration::from_millis(5) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        assert!(x > 0);
    }

    #[test]
    fn peak_covers_a_fresh_allocation() {
        let before = reset_peak_rss();
        let v = vec![1u8; 16 << 20];
        std::hint::black_box(&v);
        let grew = peak_rss().saturating_sub(before);
        // Where the kernel exposes neither field both read 0.
        if before > 0 {
            assert!(grew >= 12 << 20, "grew {grew}");
        }
    }
}
