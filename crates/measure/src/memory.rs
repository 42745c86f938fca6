//! Process-wide readings of the operating system's view of memory: resident
//! set, its peak, and live OS threads. They cover everything in the process
//! (allocator, C contexts, runtime threads), which is the point: a
//! language-level heap figure would miss C memory. CPU time is
//! [`clock`](super::clock)'s.

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

/// Resets the kernel's peak-RSS mark (`VmHWM`) to the current RSS, so the
/// next [`status`] covers only what follows (Linux 4.0 and later; elsewhere
/// nothing is reset), and returns the current RSS in bytes.
pub fn reset_peak() -> u64 {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    status().rss_bytes
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
    fn live_readings_see_this_process_and_its_peak_resets() {
        let st = status();
        assert!(st.threads >= 1);
        assert!(st.rss_bytes > 0);
        // 64 MiB touched and freed: the peak holds it, a reset forgets it.
        let big = vec![1u8; 64 << 20];
        std::hint::black_box(&big);
        drop(big);
        let high = status().hwm_bytes;
        let now = reset_peak();
        let after = status();
        assert!(high >= now + (32 << 20), "peak {high} vs current {now}");
        assert!(after.hwm_bytes < high, "the peak did not reset: {after:?}");
    }
}
