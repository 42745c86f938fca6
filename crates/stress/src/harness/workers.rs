//! The producers and consumers and the state they share: blocks made,
//! compressed, sent, decompressed and checked against their original.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crossbeam::queue::ArrayQueue;
use crossbeam::utils::CachePadded;

use super::config::{Config, FaultKind};
use crate::error::{Error, Result};
use crate::latency::{self, Recorder};
use crate::ledger::Ledger;
use crate::pool::ContextPool;
use crate::workload::BlockSource;

/// A block in flight, recycled so the steady state allocates nothing.
#[derive(Debug)]
pub(super) struct Block {
    pub(super) seq: u64,
    pub(super) born: Instant,
    pub(super) original: Vec<u8>,
    pub(super) frame: Vec<u8>,
}

impl Block {
    fn empty() -> Block {
        Block {
            seq: 0,
            born: Instant::now(),
            original: Vec::new(),
            frame: Vec::new(),
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct ProducerCounts {
    pub(super) produced: AtomicU64,
}

#[derive(Debug, Default)]
pub(super) struct ConsumerCounts {
    pub(super) verified: AtomicU64,
    pub(super) corrupt: AtomicU64,
    pub(super) bytes: AtomicU64,
    pub(super) frame_bytes: AtomicU64,
}

/// State every worker shares.
pub(super) struct Shared {
    pub(super) config: Config,
    pub(super) pool: ContextPool,
    pub(super) stop: AtomicBool,
    pub(super) measuring: AtomicBool,
    pub(super) seq: AtomicU64,
    pub(super) tasks: AtomicU64,
    pub(super) produced: CachePadded<ProducerCounts>,
    pub(super) consumed: CachePadded<ConsumerCounts>,
    pub(super) recycle: ArrayQueue<Block>,
    pub(super) ledger: Ledger,
    pub(super) compress: latency::Shared,
    pub(super) decompress: latency::Shared,
    pub(super) end_to_end: latency::Shared,
    pub(super) first_corrupt: Mutex<Option<(u64, String)>>,
    pub(super) error: Mutex<Option<Error>>,
}

impl Shared {
    fn fault(&self, seq: u64, kind: FaultKind) -> bool {
        self.config
            .faults
            .iter()
            .any(|f| f.block == seq && f.kind == kind)
    }

    fn fail(&self, e: Error) {
        self.error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
        self.stop.store(true, Ordering::Release);
    }

    /// Makes the next block of one producer (generation and compression).
    fn produce(
        &self,
        src: &mut BlockSource,
        fixed: &mut Option<(Vec<u8>, Vec<u8>)>,
        rec: &mut Recorder<'_>,
    ) -> Result<Block> {
        let mut b = self.recycle.pop().unwrap_or_else(Block::empty);
        b.born = Instant::now();
        match fixed {
            Some((orig, frame)) => {
                b.original.clone_from(orig);
                b.frame.clone_from(frame);
            }
            None => {
                src.fill(&mut b.original);
                let t = Instant::now();
                self.pool.compress(&b.original, &mut b.frame)?;
                if self.measuring.load(Ordering::Relaxed) {
                    rec.record(t.elapsed());
                }
                if self.config.replay {
                    *fixed = Some((b.original.clone(), b.frame.clone()));
                }
            }
        }
        b.seq = self.seq.fetch_add(1, Ordering::Relaxed);
        if !self.config.faults.is_empty() {
            if self.fault(b.seq, FaultKind::CorruptFrame) {
                let mid = b.frame.len() / 2;
                b.frame[mid] ^= 0x5a;
            }
            if self.fault(b.seq, FaultKind::CorruptPayload) {
                let mid = b.original.len() / 2;
                b.original[mid] ^= 0x01;
            }
        }
        self.produced.produced.fetch_add(1, Ordering::Relaxed);
        Ok(b)
    }

    /// A copy of `b` to send after it, when a fault says so.
    fn duplicate(&self, b: &Block) -> Option<Block> {
        (!self.config.faults.is_empty() && self.fault(b.seq, FaultKind::Duplicate)).then(|| Block {
            seq: b.seq,
            born: b.born,
            original: b.original.clone(),
            frame: b.frame.clone(),
        })
    }

    /// Decodes and verifies one block, then recycles it.
    fn consume(&self, b: Block, out: &mut Vec<u8>, dec: &mut Recorder<'_>, e2e: &mut Recorder<'_>) {
        if !self.config.faults.is_empty() && self.fault(b.seq, FaultKind::Drop) {
            let _ = self.recycle.push(b);
            return;
        }
        // Counted in the ledger whatever the verdict below: a duplicate is
        // still verified (or found corrupt), and fails the run on its own.
        self.ledger.mark(b.seq);
        if !self.config.faults.is_empty()
            && self
                .config
                .faults
                .iter()
                .any(|f| f.kind == FaultKind::LeakContext && b.seq >= f.block)
            && let Err(e) = self.pool.leak()
        {
            self.fail(e);
        }
        let t = Instant::now();
        let decoded = self.pool.decompress(&b.frame, out);
        let done = Instant::now();
        let measuring = self.measuring.load(Ordering::Relaxed);
        match decoded {
            Ok(_) if *out == b.original => {
                self.consumed.verified.fetch_add(1, Ordering::Relaxed);
                self.consumed
                    .bytes
                    .fetch_add(b.original.len() as u64, Ordering::Relaxed);
                self.consumed
                    .frame_bytes
                    .fetch_add(b.frame.len() as u64, Ordering::Relaxed);
                if measuring {
                    dec.record(done - t);
                    e2e.record(done - b.born);
                }
            }
            other => {
                self.consumed.corrupt.fetch_add(1, Ordering::Relaxed);
                let why = match other {
                    Err(e) => format!("decode error: {e}"),
                    Ok(n) => {
                        let at = out
                            .iter()
                            .zip(&b.original)
                            .position(|(a, b)| a != b)
                            .unwrap_or(n.min(b.original.len()));
                        format!(
                            "decoded {n} bytes, expected {}, first difference at byte {at}",
                            b.original.len()
                        )
                    }
                };
                let mut first = self.first_corrupt.lock().unwrap_or_else(|p| p.into_inner());
                if first.as_ref().is_none_or(|(s, _)| b.seq < *s) {
                    *first = Some((b.seq, why));
                }
            }
        }
        // A full queue means more blocks exist than can be in flight; let
        // the extra one go.
        let _ = self.recycle.push(b);
    }
}

/// Counts a worker as a live task for as long as it exists.
struct TaskGuard<'a>(&'a AtomicU64);

impl<'a> TaskGuard<'a> {
    fn enter(n: &'a AtomicU64) -> TaskGuard<'a> {
        n.fetch_add(1, Ordering::Relaxed);
        TaskGuard(n)
    }
}

impl Drop for TaskGuard<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

pub(super) async fn producer_task(shared: Arc<Shared>, tx: async_channel::Sender<Block>, i: usize) {
    let shared = &*shared;
    let _task = TaskGuard::enter(&shared.tasks);
    let mut src = shared
        .config
        .workload
        .source(shared.config.seed.wrapping_add(i as u64));
    let mut rec = shared.compress.recorder(i);
    let mut fixed = None;
    let interval = shared.config.interval;
    while !shared.stop.load(Ordering::Acquire) {
        if !interval.is_zero() {
            tokio::time::sleep(interval).await;
            if shared.stop.load(Ordering::Acquire) {
                break;
            }
        }
        let block = match shared.produce(&mut src, &mut fixed, &mut rec) {
            Ok(b) => b,
            Err(e) => return shared.fail(e),
        };
        let again = shared.duplicate(&block);
        if tx.send(block).await.is_err() {
            break;
        }
        if let Some(b) = again
            && tx.send(b).await.is_err()
        {
            break;
        }
        // A send into a channel with room completes without yielding; give
        // the runtime its turn so consumers and the timer are not starved.
        tokio::task::consume_budget().await;
    }
}

pub(super) async fn consumer_task(
    shared: Arc<Shared>,
    rx: async_channel::Receiver<Block>,
    i: usize,
) {
    let shared = &*shared;
    let _task = TaskGuard::enter(&shared.tasks);
    let mut out = Vec::new();
    let mut dec = shared.decompress.recorder(i);
    let mut e2e = shared.end_to_end.recorder(i);
    while let Ok(block) = rx.recv().await {
        shared.consume(block, &mut out, &mut dec, &mut e2e);
        tokio::task::consume_budget().await;
    }
}

pub(super) fn producer_thread(shared: &Shared, tx: async_channel::Sender<Block>, i: usize) {
    let _task = TaskGuard::enter(&shared.tasks);
    let mut src = shared
        .config
        .workload
        .source(shared.config.seed.wrapping_add(i as u64));
    let mut rec = shared.compress.recorder(i);
    let mut fixed = None;
    let interval = shared.config.interval;
    while !shared.stop.load(Ordering::Acquire) {
        if !interval.is_zero() {
            std::thread::sleep(interval);
            if shared.stop.load(Ordering::Acquire) {
                break;
            }
        }
        let block = match shared.produce(&mut src, &mut fixed, &mut rec) {
            Ok(b) => b,
            Err(e) => return shared.fail(e),
        };
        let again = shared.duplicate(&block);
        if tx.send_blocking(block).is_err() {
            break;
        }
        if let Some(b) = again
            && tx.send_blocking(b).is_err()
        {
            break;
        }
    }
}

pub(super) fn consumer_thread(shared: &Shared, rx: async_channel::Receiver<Block>, i: usize) {
    let _task = TaskGuard::enter(&shared.tasks);
    let mut out = Vec::new();
    let mut dec = shared.decompress.recorder(i);
    let mut e2e = shared.end_to_end.recorder(i);
    while let Ok(block) = rx.recv_blocking() {
        shared.consume(block, &mut out, &mut dec, &mut e2e);
    }
}
