//! Context-pool strategies for compression and decompression contexts,
//! interchangeable by name, each counting the contexts it created and how
//! many are alive.
//!
//! - `fresh`: a new context per operation (what a one-shot API does);
//! - `pool`: a shared pool that grows on demand and drops contexts left
//!   idle for two [`ContextPool::tick`]s, as Go's `sync.Pool` does across
//!   two garbage collections (primary and victim caches);
//! - `chanpool`: a bounded crossbeam channel holding a fixed set of
//!   contexts, created up front and never shrinking;
//! - `thread-local`: one context of each kind per worker thread.

use std::cell::RefCell;
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::LocalKey;

use crossbeam::channel::{Receiver, Sender};
use zstdkit::{Compressor, Decompressor, Params};

use crate::error::{Error, Result};

/// A pool strategy, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PoolKind {
    /// A new context per operation.
    Fresh,
    /// A shared pool that grows and drops idle contexts (like `sync.Pool`).
    Pool,
    /// A bounded channel holding a fixed set of contexts.
    ChanPool,
    /// One context per worker thread.
    ThreadLocal,
}

impl PoolKind {
    /// Every strategy, in the order `--compare` runs them.
    pub const ALL: [PoolKind; 4] = [
        PoolKind::Fresh,
        PoolKind::Pool,
        PoolKind::ChanPool,
        PoolKind::ThreadLocal,
    ];

    /// The name the CLI and reports use.
    pub fn name(self) -> &'static str {
        match self {
            PoolKind::Fresh => "fresh",
            PoolKind::Pool => "pool",
            PoolKind::ChanPool => "chanpool",
            PoolKind::ThreadLocal => "thread-local",
        }
    }
}

impl fmt::Display for PoolKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PoolKind {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.replace('_', "-");
        PoolKind::ALL
            .into_iter()
            .find(|k| k.name() == wanted)
            .ok_or_else(|| {
                Error::Config(format!(
                    "unknown pool strategy '{s}' (expected one of: {})",
                    PoolKind::ALL.map(PoolKind::name).join(", ")
                ))
            })
    }
}

/// How many contexts a pool has made and how many exist now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextCounts {
    /// Compression contexts created since the pool was made.
    pub compressors_created: u64,
    /// Compression contexts alive now (pooled or in use).
    pub compressors_alive: u64,
    /// Decompression contexts created since the pool was made.
    pub decompressors_created: u64,
    /// Decompression contexts alive now.
    pub decompressors_alive: u64,
}

impl ContextCounts {
    /// Contexts of both kinds created.
    pub fn created(&self) -> u64 {
        self.compressors_created + self.decompressors_created
    }

    /// Contexts of both kinds alive.
    pub fn alive(&self) -> u64 {
        self.compressors_alive + self.decompressors_alive
    }
}

/// Creation and liveness counters for one kind of context.
#[derive(Debug, Default)]
struct Tally {
    created: AtomicU64,
    dropped: AtomicU64,
}

impl Tally {
    fn alive(&self) -> u64 {
        // Read `dropped` first: a context is counted dropped only after it
        // was counted created, so alive never appears negative.
        let dropped = self.dropped.load(Ordering::Acquire);
        self.created.load(Ordering::Acquire).saturating_sub(dropped)
    }
}

/// A context that reports its own end to its pool's tally, wherever it is
/// dropped (a pool's free list, a thread's exit, after a fresh call).
struct Counted<T> {
    ctx: T,
    tally: Arc<Tally>,
}

impl<T> Drop for Counted<T> {
    fn drop(&mut self) {
        self.tally.dropped.fetch_add(1, Ordering::AcqRel);
    }
}

/// A thread's own context of one kind, tagged with the pool that made it.
type LocalSlot<T> = RefCell<Option<(u64, Counted<T>)>>;

/// The two context kinds, created the same way by every strategy.
trait Codec: Sized + Send + 'static {
    fn create(params: &Params) -> Result<Self>;
    fn slot() -> &'static LocalKey<LocalSlot<Self>>;
}

thread_local! {
    static LOCAL_COMPRESSOR: LocalSlot<Compressor> = const { RefCell::new(None) };
    static LOCAL_DECOMPRESSOR: LocalSlot<Decompressor> = const { RefCell::new(None) };
}

impl Codec for Compressor {
    fn create(params: &Params) -> Result<Self> {
        Ok(Compressor::new(*params)?)
    }
    fn slot() -> &'static LocalKey<LocalSlot<Self>> {
        &LOCAL_COMPRESSOR
    }
}

impl Codec for Decompressor {
    fn create(_: &Params) -> Result<Self> {
        Ok(Decompressor::new()?)
    }
    fn slot() -> &'static LocalKey<LocalSlot<Self>> {
        &LOCAL_DECOMPRESSOR
    }
}

/// sync.Pool's two generations: contexts returned since the last tick, and
/// those that survived one tick unused (dropped at the next).
struct Generations<T> {
    primary: Vec<Counted<T>>,
    victim: Vec<Counted<T>>,
}

enum Store<T> {
    Fresh,
    Shared(Mutex<Generations<T>>),
    Chan(Sender<Counted<T>>, Receiver<Counted<T>>),
    Local,
}

/// One strategy's store of one kind of context.
struct Slots<T: Codec> {
    store: Store<T>,
    tally: Arc<Tally>,
    params: Params,
    /// Distinguishes this pool's thread-local contexts from an earlier
    /// pool's on the same thread.
    id: u64,
}

static NEXT_POOL_ID: AtomicU64 = AtomicU64::new(1);

impl<T: Codec> Slots<T> {
    fn new(kind: PoolKind, params: Params, chan_size: usize, id: u64) -> Result<Self> {
        let tally = Arc::new(Tally::default());
        let store = match kind {
            PoolKind::Fresh => Store::Fresh,
            PoolKind::Pool => Store::Shared(Mutex::new(Generations {
                primary: Vec::new(),
                victim: Vec::new(),
            })),
            PoolKind::ChanPool => {
                let (tx, rx) = crossbeam::channel::bounded(chan_size);
                for _ in 0..chan_size {
                    let c = Self::make(&tally, &params)?;
                    tx.send(c).expect("the pool holds its own receiver");
                }
                Store::Chan(tx, rx)
            }
            PoolKind::ThreadLocal => Store::Local,
        };
        Ok(Slots {
            store,
            tally,
            params,
            id,
        })
    }

    fn make(tally: &Arc<Tally>, params: &Params) -> Result<Counted<T>> {
        let ctx = T::create(params)?;
        tally.created.fetch_add(1, Ordering::AcqRel);
        Ok(Counted {
            ctx,
            tally: tally.clone(),
        })
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> Result<R> {
        match &self.store {
            Store::Fresh => {
                let mut c = Self::make(&self.tally, &self.params)?;
                Ok(f(&mut c.ctx))
            }
            Store::Shared(m) => {
                let taken = {
                    let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
                    g.primary.pop().or_else(|| g.victim.pop())
                };
                let mut c = match taken {
                    Some(c) => c,
                    None => Self::make(&self.tally, &self.params)?,
                };
                let r = f(&mut c.ctx);
                m.lock().unwrap_or_else(|p| p.into_inner()).primary.push(c);
                Ok(r)
            }
            Store::Chan(tx, rx) => {
                // Contexts are only ever held for one synchronous call, so a
                // waiting receiver is always woken by a returning one.
                let mut c = rx.recv().expect("the pool holds its own sender");
                let r = f(&mut c.ctx);
                tx.send(c).expect("the pool holds its own receiver");
                Ok(r)
            }
            Store::Local => T::slot().with(|slot| {
                let mut slot = slot.borrow_mut();
                if slot.as_ref().is_none_or(|(id, _)| *id != self.id) {
                    *slot = Some((self.id, Self::make(&self.tally, &self.params)?));
                }
                let (_, c) = slot.as_mut().expect("filled above");
                Ok(f(&mut c.ctx))
            }),
        }
    }

    fn tick(&self) {
        if let Store::Shared(m) = &self.store {
            let expired = {
                let mut g = m.lock().unwrap_or_else(|p| p.into_inner());
                let primary = std::mem::take(&mut g.primary);
                std::mem::replace(&mut g.victim, primary)
            };
            // Freed outside the lock: zstd's free is not free.
            drop(expired);
        }
    }
}

/// Compression and decompression contexts under one strategy.
///
/// ```
/// use stress::{ContextPool, PoolKind};
/// let pool = ContextPool::new(PoolKind::Pool, zstdkit::Recipe::Fast.into(), 4)?;
/// let (mut frame, mut back) = (Vec::new(), Vec::new());
/// pool.compress(b"hello hello hello", &mut frame)?;
/// pool.decompress(&frame, &mut back)?;
/// assert_eq!(back, b"hello hello hello");
/// assert_eq!(pool.counts().created(), 2);
/// # Ok::<(), stress::Error>(())
/// ```
pub struct ContextPool {
    kind: PoolKind,
    compressors: Slots<Compressor>,
    decompressors: Slots<Decompressor>,
    /// Contexts made by [`ContextPool::leak`], held until the pool goes.
    leaked: Mutex<Vec<Counted<Decompressor>>>,
}

impl fmt::Debug for ContextPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextPool")
            .field("kind", &self.kind)
            .field("counts", &self.counts())
            .finish()
    }
}

impl ContextPool {
    /// A pool of `kind` for contexts with `params`. `chan_size` is the
    /// fixed number of contexts of each kind for `chanpool` (ignored by the
    /// others).
    pub fn new(kind: PoolKind, params: Params, chan_size: usize) -> Result<ContextPool> {
        if kind == PoolKind::ChanPool && chan_size == 0 {
            return Err(Error::Config("chanpool needs at least one context".into()));
        }
        let id = NEXT_POOL_ID.fetch_add(1, Ordering::Relaxed);
        Ok(ContextPool {
            kind,
            compressors: Slots::new(kind, params, chan_size, id)?,
            decompressors: Slots::new(kind, params, chan_size, id)?,
            leaked: Mutex::new(Vec::new()),
        })
    }

    /// Creates a decompression context, counted like any other, and keeps
    /// it until the pool is dropped: the leak a strategy that forgets to
    /// return its contexts would have (the harness's `LeakContext` fault,
    /// which proves a soak catches growth).
    pub(crate) fn leak(&self) -> Result<()> {
        let d = &self.decompressors;
        let c = Slots::make(&d.tally, &d.params)?;
        self.leaked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(c);
        Ok(())
    }

    /// The strategy.
    pub fn kind(&self) -> PoolKind {
        self.kind
    }

    /// Compresses `src` into `dst` (replacing it) with a context from the
    /// pool; returns the frame size.
    pub fn compress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<usize> {
        Ok(self.compressors.with(|c| c.compress_into(src, dst))??)
    }

    /// Decompresses `src` into `dst` (replacing it) with a context from the
    /// pool; returns the decoded size. A corrupt frame is an error, and the
    /// context is reset by the decoder before its next use.
    pub fn decompress(&self, src: &[u8], dst: &mut Vec<u8>) -> Result<usize> {
        Ok(self.decompressors.with(|d| d.decompress_into(src, dst))??)
    }

    /// What the pool has created and holds.
    pub fn counts(&self) -> ContextCounts {
        ContextCounts {
            compressors_created: self.compressors.tally.created.load(Ordering::Acquire),
            compressors_alive: self.compressors.tally.alive(),
            decompressors_created: self.decompressors.tally.created.load(Ordering::Acquire),
            decompressors_alive: self.decompressors.tally.alive(),
        }
    }

    /// Ages the `pool` strategy's idle contexts by one generation (a
    /// garbage collection in `sync.Pool` terms); the harness calls it once
    /// per sample. No effect on the other strategies.
    pub fn tick(&self) {
        self.compressors.tick();
        self.decompressors.tick();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zstdkit::Recipe;

    fn round_trip(pool: &ContextPool, text: &[u8]) {
        let (mut f, mut b) = (Vec::new(), Vec::new());
        pool.compress(text, &mut f).unwrap();
        // Independent decoder: a fresh zstdkit one-shot.
        assert_eq!(zstdkit::decompress(&f).unwrap(), text);
        pool.decompress(&f, &mut b).unwrap();
        assert_eq!(b, text);
    }

    #[test]
    fn names_round_trip() {
        for k in PoolKind::ALL {
            assert_eq!(k.name().parse::<PoolKind>().unwrap(), k);
        }
        assert_eq!(
            "thread_local".parse::<PoolKind>().unwrap(),
            PoolKind::ThreadLocal
        );
        assert!("sync".parse::<PoolKind>().is_err());
    }

    #[test]
    fn fresh_creates_per_call_and_keeps_none() {
        let p = ContextPool::new(PoolKind::Fresh, Recipe::Fast.into(), 0).unwrap();
        for _ in 0..3 {
            round_trip(&p, b"abcabcabc");
        }
        let c = p.counts();
        assert_eq!((c.compressors_created, c.decompressors_created), (3, 3));
        assert_eq!(c.alive(), 0);
    }

    #[test]
    fn pool_reuses_then_drops_after_two_idle_ticks() {
        let p = ContextPool::new(PoolKind::Pool, Recipe::Fast.into(), 0).unwrap();
        for _ in 0..3 {
            round_trip(&p, b"abcabcabc");
        }
        assert_eq!(p.counts().created(), 2);
        assert_eq!(p.counts().alive(), 2);
        p.tick();
        assert_eq!(
            p.counts().alive(),
            2,
            "one tick moves them to the victim cache"
        );
        round_trip(&p, b"xyz");
        assert_eq!(p.counts().created(), 2, "the victim cache is still used");
        p.tick();
        p.tick();
        assert_eq!(p.counts().alive(), 0, "two idle ticks free them");
        round_trip(&p, b"xyz");
        assert_eq!(p.counts().created(), 4);
    }

    #[test]
    fn chanpool_holds_a_fixed_set() {
        let p = ContextPool::new(PoolKind::ChanPool, Recipe::Fast.into(), 3).unwrap();
        for _ in 0..10 {
            round_trip(&p, b"abcabcabc");
        }
        p.tick();
        let c = p.counts();
        assert_eq!((c.created(), c.alive()), (6, 6));
        assert!(ContextPool::new(PoolKind::ChanPool, Recipe::Fast.into(), 0).is_err());
    }

    #[test]
    fn thread_local_makes_one_per_thread_and_frees_it_on_exit() {
        let p = Arc::new(ContextPool::new(PoolKind::ThreadLocal, Recipe::Fast.into(), 0).unwrap());
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..5 {
                        round_trip(&p, b"abcabcabc");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let c = p.counts();
        assert_eq!(c.created(), 6);
        assert_eq!(c.alive(), 0, "thread exit dropped them");
    }

    #[test]
    fn a_corrupt_frame_is_an_error_and_the_context_stays_usable() {
        for k in PoolKind::ALL {
            let p = ContextPool::new(k, Recipe::Fast.into(), 1).unwrap();
            let mut f = Vec::new();
            p.compress(&[7u8; 5000], &mut f).unwrap();
            let mut bad = f.clone();
            let mid = bad.len() / 2;
            bad[mid] ^= 0x55;
            bad.truncate(bad.len() - 1);
            let mut out = Vec::new();
            assert!(p.decompress(&bad, &mut out).is_err(), "{k}");
            round_trip(&p, b"still works");
        }
    }
}
