//! Per-operation latency histograms shared by hundreds of workers without
//! a histogram each: a worker buffers a few hundred samples and folds them
//! into one of a few mutex-guarded shards. A full-precision HDR histogram
//! is ~350 KB, so one per worker would cost 100 MB at 300 workers; a batch
//! buffer is 2 KB.

use std::sync::Mutex;
use std::time::Duration;

use hdrhistogram::Histogram;
use perfkit_measure::latency_histogram;

/// Samples a worker holds before folding them into a shard.
const BATCH: usize = 256;

/// One latency distribution, sharded.
#[derive(Debug)]
pub struct Shared {
    shards: Vec<Mutex<Histogram<u64>>>,
}

impl Shared {
    /// `shards` independent histograms (at least one).
    pub fn new(shards: usize) -> Shared {
        Shared {
            shards: (0..shards.max(1))
                .map(|_| Mutex::new(latency_histogram()))
                .collect(),
        }
    }

    /// A batching recorder for one worker; `worker` picks its shard.
    pub fn recorder(&self, worker: usize) -> Recorder<'_> {
        Recorder {
            shard: &self.shards[worker % self.shards.len()],
            buf: Vec::with_capacity(BATCH),
        }
    }

    /// Everything recorded so far (recorders flush when dropped).
    pub fn merged(&self) -> Histogram<u64> {
        let mut h = latency_histogram();
        for s in &self.shards {
            h.add(&*s.lock().unwrap_or_else(|p| p.into_inner()))
                .expect("same bounds");
        }
        h
    }
}

/// A worker's batch of samples for one [`Shared`] histogram.
#[derive(Debug)]
pub struct Recorder<'a> {
    shard: &'a Mutex<Histogram<u64>>,
    buf: Vec<u64>,
}

impl Recorder<'_> {
    /// Records one duration (nanoseconds, clamped to the histogram's range).
    pub fn record(&mut self, d: Duration) {
        self.buf
            .push(d.as_nanos().clamp(1, u64::MAX as u128) as u64);
        if self.buf.len() == BATCH {
            self.flush();
        }
    }

    /// Folds the buffered samples into the shard.
    pub fn flush(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let mut h = self.shard.lock().unwrap_or_else(|p| p.into_inner());
        for &v in &self.buf {
            h.saturating_record(v);
        }
        self.buf.clear();
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_from_every_worker_is_merged() {
        let shared = Shared::new(3);
        std::thread::scope(|s| {
            for w in 0..5 {
                let shared = &shared;
                s.spawn(move || {
                    let mut r = shared.recorder(w);
                    for i in 1..=1000u64 {
                        r.record(Duration::from_nanos(i * 1000));
                    }
                });
            }
        });
        let h = shared.merged();
        assert_eq!(h.len(), 5000);
        assert_eq!(h.min(), 1000);
        // 1..=1000 µs uniform: the median is 500 µs within 0.1 %.
        let p50 = h.value_at_quantile(0.5) as f64;
        assert!((p50 - 500_000.0).abs() / 500_000.0 < 0.002, "{p50}");
    }
}
