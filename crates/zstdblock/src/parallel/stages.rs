//! Where a pipelined decode's time went, stage by stage
//! ([`Parallel::decode_timed`](super::Parallel::decode_timed)): what each
//! stage spent working and what it spent waiting for another, so a
//! change to the pipeline can be judged by the stretch it meant to move
//! rather than by a wall time that this project's host moves by half
//! between minutes.
//!
//! A decode that is not timed carries no clock, and each timed point
//! costs it one branch.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use perfkit_measure::clock::thread_cpu;

/// Where one pipelined decode's time went. Each stretch is summed over
/// the threads of its stage (two workers waiting a millisecond each are
/// two milliseconds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// From the call's start (its check of whether threads pay
    /// included) to the pipeline's end (its threads joined).
    pub wall: Duration,
    /// From the call's start until the executor starts executing the
    /// first range.
    pub until_first_execution: Duration,
    /// The executor executing ranges, wall time (with its waits for the
    /// writer, which [`StageTimes::executor_waiting_for_writer`] also
    /// counts).
    pub executing: Duration,
    /// The executor's own CPU time while executing ranges: less than
    /// [`StageTimes::executing`] by the time it was off its core
    /// (preempted, or waiting for a page).
    pub executing_cpu: Duration,
    /// The executor decoding a range itself, because the one it needed
    /// next was not back and nobody had started it.
    pub executor_decoding: Duration,
    /// The executor waiting for a worker's range.
    pub executor_waiting_for_ranges: Duration,
    /// The executor waiting for the writer to let go of the ring's bytes.
    pub executor_waiting_for_writer: Duration,
    /// Workers decoding ranges.
    pub workers_decoding: Duration,
    /// Workers waiting for a set of decoded blocks' buffers (all held
    /// by ranges decoded and not yet executed).
    pub workers_waiting_for_buffers: Duration,
    /// Workers waiting for the walker's next range.
    pub workers_waiting_for_ranges: Duration,
    /// The writer waiting for output.
    pub writer_waiting: Duration,
    /// The writer faulting in the ring ahead of the executor.
    pub writer_faulting_ahead: Duration,
}

/// A stretch [`Clock`] counts.
#[derive(Clone, Copy)]
pub(super) enum Stretch {
    UntilFirstExecution,
    Executing,
    ExecutingCpu,
    ExecutorDecoding,
    ExecutorWaitingForRanges,
    ExecutorWaitingForWriter,
    WorkersDecoding,
    WorkersWaitingForBuffers,
    WorkersWaitingForRanges,
    WriterWaiting,
    WriterFaultingAhead,
}

const STRETCHES: usize = Stretch::WriterFaultingAhead as usize + 1;

/// The counters of one timed decode, shared by its stages.
pub(super) struct Clock {
    start: Instant,
    nanos: [AtomicU64; STRETCHES],
}

impl Clock {
    /// A clock started now.
    pub(super) fn new() -> Self {
        Clock {
            start: Instant::now(),
            nanos: [const { AtomicU64::new(0) }; STRETCHES],
        }
    }

    fn add(&self, stretch: Stretch, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.nanos[stretch as usize].fetch_add(nanos, Ordering::Relaxed);
    }

    /// Marks the first execution, once.
    pub(super) fn first_execution(&self) {
        let since = self.start.elapsed().as_nanos().max(1);
        let since = u64::try_from(since).unwrap_or(u64::MAX);
        let _ = self.nanos[Stretch::UntilFirstExecution as usize].compare_exchange(
            0,
            since,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// What the clock counted, the wall time being until now.
    pub(super) fn read(&self) -> StageTimes {
        let at = |s: Stretch| Duration::from_nanos(self.nanos[s as usize].load(Ordering::Relaxed));
        StageTimes {
            wall: self.start.elapsed(),
            until_first_execution: at(Stretch::UntilFirstExecution),
            executing: at(Stretch::Executing),
            executing_cpu: at(Stretch::ExecutingCpu),
            executor_decoding: at(Stretch::ExecutorDecoding),
            executor_waiting_for_ranges: at(Stretch::ExecutorWaitingForRanges),
            executor_waiting_for_writer: at(Stretch::ExecutorWaitingForWriter),
            workers_decoding: at(Stretch::WorkersDecoding),
            workers_waiting_for_buffers: at(Stretch::WorkersWaitingForBuffers),
            workers_waiting_for_ranges: at(Stretch::WorkersWaitingForRanges),
            writer_waiting: at(Stretch::WriterWaiting),
            writer_faulting_ahead: at(Stretch::WriterFaultingAhead),
        }
    }
}

/// Runs `f`, adding its wall time to `stretch` if the decode is timed.
#[inline]
pub(super) fn timed<R>(clock: Option<&Clock>, stretch: Stretch, f: impl FnOnce() -> R) -> R {
    let Some(clock) = clock else {
        return f();
    };
    let start = Instant::now();
    let result = f();
    clock.add(stretch, start.elapsed());
    result
}

/// Runs `f`, adding its wall time to `wall` and this thread's CPU time
/// in it to `cpu`, if the decode is timed.
pub(super) fn timed_with_cpu<R>(
    clock: Option<&Clock>,
    wall: Stretch,
    cpu: Stretch,
    f: impl FnOnce() -> R,
) -> R {
    let Some(clock) = clock else {
        return f();
    };
    let (start, cpu_start) = (Instant::now(), thread_cpu());
    let result = f();
    clock.add(wall, start.elapsed());
    clock.add(cpu, thread_cpu().saturating_sub(cpu_start));
    result
}
