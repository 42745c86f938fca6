//! Deferred processing: the hot path copies the raw message into a slot of
//! an SPSC ring and returns; a background thread parses, validates and
//! stores it ([`DeferredProcessor::spawn`]) or does whatever the caller's
//! handler does ([`DeferredProcessor::start`]). The producer pays a copy
//! into a warm slot per message; the worker's parse and store leave its
//! thread (measured by `perfkit bench`'s FIX deferred rows against
//! [`process_inline`] and a crossbeam queue of [`InlineMsg`]).
//!
//! ```
//! use fixcore::build::MessageBuilder;
//! use fixcore::deferred::DeferredProcessor;
//! use fixcore::version::BeginString;
//!
//! // 1024 slots of 512 bytes; the worker keeps the last 4096 messages it
//! // parsed, on the process's cores (no pin).
//! let mut worker = DeferredProcessor::spawn(1024, 512, 4096, None)?;
//! let mut b = MessageBuilder::new(BeginString::Fix44);
//! for seq in 1..=100 {
//!     b.begin(b"D").header_str(49, "BUYER").header_str(56, "SELLER").header_uint(34, seq);
//!     b.field_str(55, "MSFT").field_int(38, 100);
//!     worker.submit(b.finish()?)?;
//! }
//! worker.submit(b"not FIX")?;
//! let stats = worker.finish()?;
//! assert_eq!((stats.stored, stats.invalid), (100, 1));
//!
//! // A handler of one's own, built on the worker thread: here, what
//! // begins like FIX counts as stored, anything else as invalid.
//! let mut worker =
//!     DeferredProcessor::start(64, 512, None, || |m: &[u8]| m.starts_with(b"8=FIX"))?;
//! worker.submit(b"8=FIX.4.4\x019=5\x0135=0\x01")?;
//! worker.submit(b"junk")?;
//! let stats = worker.finish()?;
//! assert_eq!((stats.stored, stats.invalid), (1, 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod inline;
pub mod spsc;

pub use inline::{INLINE_MAX, InlineMsg};

use crate::affinity::{self, PinError, Pinning};
use crate::parse::Parser;
use crate::resend::{MessageStore, RingStore};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// Why the deferred processor could not start, take a message or finish.
/// (Messages the worker finds invalid are counted in [`DeferredStats`],
/// not returned.)
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The OS would not start the worker thread.
    #[error("spawning deferred worker: {0}")]
    Spawn(#[source] std::io::Error),
    /// The worker ended, died or panicked.
    #[error("background thread failed: {0}")]
    Thread(&'static str),
    /// A message longer than a slot of the ring.
    #[error("message of {len} bytes exceeds the slot size of {limit}")]
    TooLarge {
        /// The message's length.
        len: usize,
        /// The ring's slot size.
        limit: usize,
    },
}

/// Result with [`WorkerError`].
pub type Result<T> = std::result::Result<T, WorkerError>;

/// What the background thread did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeferredStats {
    /// Messages that parsed and were stored.
    pub stored: u64,
    /// Messages rejected by the parser (or lacking MsgSeqNum).
    pub invalid: u64,
    /// Core the worker ran on when its mask held a single core (read back
    /// from the OS, not taken from the request).
    pub pinned_core: Option<usize>,
}

/// A background parser/validator/store fed through an SPSC ring.
pub struct DeferredProcessor {
    producer: spsc::Producer,
    stop: Arc<AtomicBool>,
    worker: Option<JoinHandle<DeferredStats>>,
    placement: Pinning,
    pin_error: Option<PinError>,
}

/// What the worker sends back once it has taken its place.
type Placed = (Pinning, Option<PinError>);

impl DeferredProcessor {
    /// Starts the worker. `capacity` slots of `max_len` bytes; the worker
    /// keeps the last `window` valid messages in a [`RingStore`] and is
    /// pinned to `pin` when given. With `None` — or when pinning fails, see
    /// [`DeferredProcessor::pin_error`] — it gets the process's original
    /// affinity mask ([`affinity::unpin_current`]) rather than inheriting a
    /// pin of the calling thread. Returns once the worker has taken its
    /// place ([`DeferredProcessor::placement`]).
    pub fn spawn(
        capacity: usize,
        max_len: usize,
        window: usize,
        pin: Option<usize>,
    ) -> Result<DeferredProcessor> {
        let make = move || {
            let mut parser = Parser::new();
            let mut store = RingStore::new(1, window);
            move |m: &[u8]| {
                let seq = parser.parse(m).ok().and_then(|msg| msg.uint(34).ok());
                matches!(seq.map(|s| store.insert(s, m)), Some(Ok(())))
            }
        };
        DeferredProcessor::start(capacity, max_len, pin, make)
    }

    /// [`spawn`](Self::spawn) with the per-message work built on the worker
    /// thread by `make` (so it may hold what is not `Send`); the work
    /// returns whether the message was stored, and [`DeferredStats`]
    /// counts it as stored or invalid accordingly.
    pub fn start<F, H>(
        capacity: usize,
        max_len: usize,
        pin: Option<usize>,
        make: F,
    ) -> Result<DeferredProcessor>
    where
        F: FnOnce() -> H + Send + 'static,
        H: FnMut(&[u8]) -> bool,
    {
        let (producer, mut consumer) = spsc::channel(capacity, max_len);
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let (ready, placed) = std::sync::mpsc::sync_channel::<Placed>(1);
        let worker = std::thread::Builder::new()
            .name("fix-deferred".into())
            .spawn(move || -> DeferredStats {
                // A refused pin is not fatal: the worker runs unpinned and
                // the processor reports both the refusal and where it runs.
                let (placement, pin_error) = affinity::place_current_or_unpin(pin);
                let _ = ready.send((placement, pin_error));
                let mut handle = make();
                let mut stats = DeferredStats {
                    pinned_core: placement.core,
                    ..Default::default()
                };
                let mut idle = Idle::default();
                loop {
                    let got = consumer.try_pop(|m| {
                        if handle(m) {
                            stats.stored += 1;
                        } else {
                            stats.invalid += 1;
                        }
                    });
                    if got.is_some() {
                        idle.reset();
                        continue;
                    }
                    // `finish` raises stop only once the ring is drained, and
                    // no submit can follow it (it consumes the processor).
                    if stop2.load(Ordering::Acquire) {
                        return stats;
                    }
                    idle.wait();
                }
            })
            .map_err(WorkerError::Spawn)?;
        let Ok((placement, pin_error)) = placed.recv() else {
            let _ = worker.join();
            return Err(WorkerError::Thread("deferred worker ended before starting"));
        };
        Ok(DeferredProcessor {
            producer,
            stop,
            worker: Some(worker),
            placement,
            pin_error,
        })
    }

    /// Where the worker runs, as read back from the OS once it started.
    pub fn placement(&self) -> Pinning {
        self.placement
    }

    /// Why the worker could not be pinned as asked (it then runs on the
    /// process's original mask); `None` if it was, or if no pin was asked.
    pub fn pin_error(&self) -> Option<&PinError> {
        self.pin_error.as_ref()
    }

    /// Whether the worker thread has ended (it only does on its own if it
    /// panicked): waiting for it to make room would then never end.
    fn worker_dead(&self) -> bool {
        self.worker.as_ref().is_none_or(JoinHandle::is_finished)
    }

    /// The hot path: copy `msg` into a slot and return. `false` if the ring
    /// is full (or `msg` exceeds a slot); the caller decides whether to retry.
    #[inline]
    pub fn try_submit(&mut self, msg: &[u8]) -> bool {
        self.producer.try_push(msg)
    }

    /// Submits, yielding while the ring is full. Fails if `msg` can never
    /// fit, or if the worker has died and will never make room.
    pub fn submit(&mut self, msg: &[u8]) -> Result<()> {
        if msg.len() > self.producer.max_len() {
            return Err(WorkerError::TooLarge {
                len: msg.len(),
                limit: self.producer.max_len(),
            });
        }
        while !self.producer.try_push(msg) {
            if self.worker_dead() {
                return Err(WorkerError::Thread(
                    "deferred worker died; nothing drains the ring",
                ));
            }
            std::thread::yield_now();
        }
        Ok(())
    }

    /// Messages submitted and not yet taken by the worker.
    pub fn pending(&self) -> usize {
        self.producer.pending()
    }

    /// Waits until the worker has taken every submitted message. Fails,
    /// rather than waiting forever, if the worker has died.
    pub fn wait_drained(&self) -> Result<()> {
        while self.producer.pending() > 0 {
            if self.worker_dead() {
                return Err(WorkerError::Thread(
                    "deferred worker died; nothing drains the ring",
                ));
            }
            std::thread::yield_now();
        }
        Ok(())
    }

    /// Waits for the worker to drain the ring and returns its statistics.
    /// Fails, rather than waiting forever, if the worker has died.
    pub fn finish(mut self) -> Result<DeferredStats> {
        // A dead worker is reported by the join below.
        let _ = self.wait_drained();
        self.stop.store(true, Ordering::Release);
        let worker = self
            .worker
            .take()
            .ok_or(WorkerError::Thread("worker already joined"))?;
        worker
            .join()
            .map_err(|_| WorkerError::Thread("deferred worker panicked"))
    }
}

impl Drop for DeferredProcessor {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

/// Back-off for a consumer that found its queue empty: spin briefly, then
/// yield, then sleep. Polling the producer's index in a tight loop pulls its
/// cache line away on every push and slows the hot path, and on a machine
/// with few cores a spinning consumer starves the producer.
#[derive(Debug, Default)]
pub struct Idle {
    rounds: u32,
}

impl Idle {
    /// Call after finding work.
    pub fn reset(&mut self) {
        self.rounds = 0;
    }

    /// Call after finding nothing.
    pub fn wait(&mut self) {
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds < 64 {
            std::hint::spin_loop();
        } else if self.rounds < 256 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
}

/// Processes a message inline, as the deferred worker would: parse,
/// validate, store. The "before" of the deferred comparison.
pub fn process_inline(
    parser: &mut Parser,
    store: &mut dyn MessageStore,
    msg: &[u8],
) -> crate::Result<()> {
    let seq = parser.parse(msg)?.uint(34)?;
    store.insert(seq, msg)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::MessageBuilder;
    use crate::sample;
    use crate::version::BeginString;

    #[test]
    fn every_message_is_processed_once() {
        let mut b = MessageBuilder::new(BeginString::Fix44);
        let mut d = DeferredProcessor::spawn(64, 512, 1024, None).unwrap();
        for seq in 1..=5000 {
            let m = sample::new_order_single(&mut b, seq);
            d.submit(&m).unwrap();
        }
        d.submit(b"8=FIX.4.4\x019=1\x01garbage").unwrap();
        let stats = d.finish().unwrap();
        assert_eq!(stats.stored, 5000);
        assert_eq!(stats.invalid, 1);
    }

    #[test]
    fn a_refused_pin_runs_unpinned_and_says_why() {
        // Beyond CPU_SETSIZE, and (below it) a core no machine here has.
        for core in [100_000, 1000] {
            let mut b = MessageBuilder::new(BeginString::Fix44);
            let mut d = DeferredProcessor::spawn(8, 512, 64, Some(core)).unwrap();
            let why = d.pin_error().expect("pin refused").to_string();
            assert!(
                why.starts_with(&format!("cannot pin thread to core {core}: ")),
                "{why}"
            );
            assert_ne!(d.placement().core, Some(core));
            for seq in 1..=100 {
                d.submit(&sample::new_order_single(&mut b, seq)).unwrap();
            }
            let stats = d.finish().unwrap();
            assert_eq!(stats.stored, 100);
            // Unpinned, it lands on a single core only if the process has one.
            let only = match affinity::usable().as_slice() {
                [c] => Some(*c),
                _ => None,
            };
            assert_eq!(stats.pinned_core, only);
        }
    }

    /// A worker that dies (here: its handler panics) must not leave
    /// `submit` or `finish` waiting for room that never comes.
    #[test]
    fn a_dead_worker_is_an_error_not_a_hang() {
        let mut d = DeferredProcessor::start(2, 16, None, || {
            |_: &[u8]| -> bool { panic!("handler failure (expected by the test)") }
        })
        .unwrap();
        let mut res = Ok(());
        // The first message kills the worker; the ring (2 slots) then fills.
        for _ in 0..10 {
            res = d.submit(b"x");
            if res.is_err() {
                break;
            }
        }
        let e = res.unwrap_err().to_string();
        assert_eq!(
            e,
            "background thread failed: deferred worker died; nothing drains the ring"
        );
        assert_eq!(d.wait_drained().unwrap_err().to_string(), e);
        assert_eq!(
            d.finish().unwrap_err().to_string(),
            "background thread failed: deferred worker panicked"
        );
    }

    #[test]
    fn finish_after_the_worker_died_returns() {
        let mut d = DeferredProcessor::start(4, 16, None, || {
            |_: &[u8]| -> bool { panic!("handler failure (expected by the test)") }
        })
        .unwrap();
        d.submit(b"a").unwrap();
        d.submit(b"b").unwrap();
        assert!(d.finish().is_err());
    }

    #[test]
    fn oversize_is_an_error() {
        let mut d = DeferredProcessor::spawn(4, 16, 4, None).unwrap();
        assert!(matches!(
            d.submit(&[b'x'; 17]),
            Err(WorkerError::TooLarge { .. })
        ));
        assert!(!d.try_submit(&[b'x'; 17]));
    }
}
