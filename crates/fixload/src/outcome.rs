//! What a run measured ([`Outcome`]): latencies by interval, counts, and
//! the sessions it lost.

use std::time::{Duration, SystemTime};

use hdrhistogram::Histogram;
use perfkit_measure::latency_histogram;

use crate::Result;

/// One reported interval of the measured part.
#[derive(Debug, Clone)]
pub struct Interval {
    /// Intended send time to first ExecutionReport, for the answers that
    /// arrived in this interval.
    pub corrected: Histogram<u64>,
    /// Actual send time to first ExecutionReport, same answers.
    pub uncorrected: Histogram<u64>,
    /// Orders sent in this interval.
    pub sent: u64,
    /// Of those, sent more than [`LATE`] after their intended time.
    pub late: u64,
}

impl Interval {
    pub(crate) fn new() -> Interval {
        Interval {
            corrected: latency_histogram(),
            uncorrected: latency_histogram(),
            sent: 0,
            late: 0,
        }
    }

    pub(crate) fn add(&mut self, other: &Interval) -> Result<()> {
        self.corrected.add(&other.corrected)?;
        self.uncorrected.add(&other.uncorrected)?;
        self.sent += other.sent;
        self.late += other.late;
        Ok(())
    }
}

/// The most intervals a run keeps. Each holds two latency histograms
/// (about 0.5 MB), so memory stays bounded however long the run.
pub const MAX_INTERVALS: usize = 3_600;

/// How late a send may be and still count as on time.
pub const LATE: Duration = Duration::from_millis(1);

/// What a run measured. Counts cover the measured part only.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// When the measured part began (the interval log's StartTime).
    pub started: SystemTime,
    /// The interval width.
    pub interval: Duration,
    /// By the time each answer arrived (and each order was sent), from the
    /// start of the measured part; answers in the grace period land in the
    /// intervals after it.
    pub intervals: Vec<Interval>,
    /// Every interval together.
    pub total: Interval,
    /// Orders answered (a first ExecutionReport, a rejection included).
    pub answered: u64,
    /// Orders sent and never answered.
    pub unanswered: u64,
    /// ExecutionReports with OrdStatus rejected, business rejects and
    /// session-level Rejects received.
    pub rejects: u64,
    /// The first of them, in words (what, which order, its Text).
    pub first_reject: Option<String>,
    /// Sessions lost before the run logged them out: [`Outcome::lost`]
    /// counted.
    pub disconnects: u64,
    /// The largest lag of a send behind its intended time.
    pub max_lag: Duration,
    /// Times a full window of unanswered orders held a sender back (the
    /// engine's answers, not the generator, set the pace then).
    pub window_full: u64,
    /// CPU time of this whole process over the measured part.
    pub cpu: Duration,
    /// Wall time of the measured part: from its start to the end of its
    /// schedule, or to the last of its orders sent if that was later (a
    /// sender held back sends after the schedule ends), so the achieved
    /// rate is what was really sent per second.
    pub measured: Duration,
    /// How the threads talk to the sockets.
    pub transport: String,
    /// Times the sender woke and sent in the measured part.
    pub send_rounds: u64,
    /// Times the receiver woke with bytes to read in the measured part.
    pub receive_wakes: u64,
    /// How late the OS woke the sender behind the time it asked for, per
    /// round of the measured part.
    pub wake_late: Histogram<u64>,
    /// How long each round of the sender took in the measured part.
    pub round_time: Histogram<u64>,
    /// Sessions run.
    pub sessions: usize,
    /// The mean size of a NewOrderSingle this run wrote, in bytes (0 when
    /// none was built).
    pub order_size: u64,
    /// The mean size of an ExecutionReport this run read, in bytes (0 when
    /// none came).
    pub report_size: u64,
    /// Each session that ended before the run logged it out (the engine
    /// closed the connection or logged it out, the session disconnected,
    /// a read or write failed), with when and why.
    pub lost: Vec<Lost>,
}

/// A session that ended before the run logged it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lost {
    /// `SenderCompID->TargetCompID`.
    pub session: String,
    /// When, from the start of the run (the warm-up's first order; zero
    /// for a session lost while the others logged on).
    pub at: Duration,
    /// What ended it, as the generator saw it.
    pub why: String,
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "session {} lost at {:.2} s: {}",
            self.session,
            self.at.as_secs_f64(),
            self.why
        )
    }
}

impl Outcome {
    /// Orders sent in the measured part.
    pub fn sent(&self) -> u64 {
        self.total.sent
    }

    /// Orders of the measured part sent within [`LATE`] of their time.
    pub fn on_time(&self) -> u64 {
        self.sent() - self.total.late
    }

    /// The generator's CPU per order sent in the measured part.
    pub fn cpu_per_order(&self) -> Duration {
        self.cpu / u32::try_from(self.sent().max(1)).unwrap_or(u32::MAX)
    }

    /// Orders per second actually sent in the measured part.
    pub fn achieved_rate(&self) -> f64 {
        self.sent() as f64 / self.measured.as_secs_f64().max(1e-9)
    }
}
