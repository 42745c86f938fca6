//! Facts about the machine that every report states.

/// The CPU model, core count and OS a report was produced on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// `model name` from /proc/cpuinfo, or "unknown".
    pub cpu_model: String,
    /// Cores available to this process.
    pub cores: usize,
    /// `linux`, `macos`, …
    pub os: String,
}

impl Machine {
    /// Reads the facts of the machine we run on.
    pub fn detect() -> Machine {
        let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_else(|| "unknown".to_owned());
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Machine {
            cpu_model,
            cores,
            os: std::env::consts::OS.to_owned(),
        }
    }
}
