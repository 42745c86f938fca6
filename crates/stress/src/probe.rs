//! Process-wide readings of the operating system's view: CPU time consumed,
//! resident memory and live OS threads. They cover everything in the
//! process (allocator, C contexts, runtime threads), which is the point: a
//! language-level heap figure would miss C memory.

use std::time::Duration;

/// What `/proc/self/status` says about the process right now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcStatus {
    /// Resident set size in bytes (`VmRSS`).
    pub rss_bytes: u64,
    /// Peak resident set size in bytes (`VmHWM`).
    pub hwm_bytes: u64,
    /// Live OS threads (`Threads`).
    pub threads: u64,
}

/// Reads `/proc/self/status`; zeros where the file or a field is missing
/// (non-Linux systems), so a run never fails for want of a reading.
pub fn status() -> ProcStatus {
    std::fs::read_to_string("/proc/self/status")
        .map(|s| parse_status(&s))
        .unwrap_or_default()
}

/// Parses the text of a `/proc/<pid>/status` file.
pub fn parse_status(text: &str) -> ProcStatus {
    let mut st = ProcStatus::default();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let num = || -> u64 {
            rest.split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        match key {
            "VmRSS" => st.rss_bytes = num() * 1024,
            "VmHWM" => st.hwm_bytes = num() * 1024,
            "Threads" => st.threads = num(),
            _ => {}
        }
    }
    st
}

/// CPU time (user + system) the whole process has used so far.
pub fn cpu_time() -> Duration {
    rusage::self_cpu()
}

mod rusage {
    use std::time::Duration;

    pub(super) fn self_cpu() -> Duration {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` points to writable memory the size of a `rusage`;
        // getrusage only writes it, and RUSAGE_SELF is always valid.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
        if rc != 0 {
            return Duration::ZERO;
        }
        // SAFETY: getrusage succeeded, so it initialised the struct (and
        // `zeroed` had initialised it anyway).
        let ru = unsafe { ru.assume_init() };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        tv(ru.ru_utime) + tv(ru.ru_stime)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_fields_are_parsed_in_their_units() {
        let text = "Name:\tx\nVmHWM:\t    2048 kB\nVmRSS:\t    1024 kB\nThreads:\t7\n";
        assert_eq!(
            parse_status(text),
            ProcStatus {
                rss_bytes: 1024 * 1024,
                hwm_bytes: 2048 * 1024,
                threads: 7
            }
        );
    }

    #[test]
    fn live_readings_see_this_process() {
        let st = status();
        assert!(st.threads >= 1);
        assert!(st.rss_bytes > 0);
        // Burn a little CPU: the counter must move forward.
        let before = cpu_time();
        let mut x = 0u64;
        while cpu_time() == before {
            for i in 0..100_000u64 {
                x = x.wrapping_mul(31).wrapping_add(i);
            }
            std::hint::black_box(x);
        }
        assert!(cpu_time() > before);
    }
}
