//! The budget: predict how long a compress or decompress call will take, and
//! decide per call whether an async caller runs it inline on the executor or
//! hands it to tokio's blocking pool.
//!
//! # Policy
//!
//! [`CostModel`] holds, per recipe and direction, a line `fixed + size ×
//! per_byte` (nanoseconds; size is the uncompressed size in both
//! directions). [`CostModel::calibrate`] fits it with a short probe (well
//! under a second) on a generated text-like buffer at two sizes, using
//! reused contexts as the inline path does. [`Budget::place`] runs a call
//! inline when the prediction is at most the budget (default
//! [`DEFAULT_BUDGET`], 100 µs), and offloads it otherwise.
//!
//! # Error bounds
//!
//! The probe is prose-like text, and the line is straight; a prediction is
//! only as good as your data is like that text and your sizes are like the
//! probe's. Measured p50 over predicted on the built-in corpus (100 KB to
//! 500 KB per file; one run of `perfkit bench --only zstd` on a shared 2-core
//! Xeon):
//!
//! | data | `fast`, `balanced`, `binary` | `text`, `structured_data`, `maximum` |
//! | --- | --- | --- |
//! | prose-like text | 0.8-1.05x both ways | 1.0-1.2x; 2x at 500 KB; decoding up to 1.5x |
//! | source code, JSON | 0.35-0.55x compressing, 0.55-0.9x decoding | 0.9-1.3x, `maximum` 1.6-2.3x; decoding 0.55-1.0x |
//! | binary | 0.25-1.0x compressing; decoding 0.9-1.3x | 0.5-0.9x; decoding 1.6-1.9x |
//! | already compressed | 0.02-0.16x | 0.15-0.4x |
//!
//! So: within about 20 % only for text-like data at the three fast
//! recipes. Redundant or incompressible data runs up to 3x (compressed
//! data 50x) faster than predicted, which errs towards offloading. The
//! slow recipes' cost grows faster than linearly past the 64 KiB probe and
//! can take about twice the prediction on inputs of hundreds of kilobytes.
//! `perfkit bench --only zstd` prints predicted against measured for every
//! recipe and input, so the error on your own files is a command away, and
//! [`CostModel::calibrate_with`] fits the lines from timings on your data.
//! Offloading a call that would have fit costs a thread hand-off (a few
//! microseconds); running inline a call that does not fit delays every
//! other task on that worker, so pick a budget about half the latency you
//! care about to absorb the 2x underprediction.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::context::{Compressor, Decompressor};
use crate::error::Result;
use crate::recipe::Recipe;

/// The default inline budget: 100 µs per call.
pub const DEFAULT_BUDGET: Duration = Duration::from_micros(100);

/// A compress or a decompress call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Compression.
    Compress,
    /// Decompression.
    Decompress,
}

/// A cost line: `fixed_ns + bytes × ns_per_byte`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearCost {
    /// Per-call overhead, nanoseconds.
    pub fixed_ns: f64,
    /// Cost per uncompressed byte, nanoseconds.
    pub ns_per_byte: f64,
}

impl LinearCost {
    /// Predicted duration for `bytes` uncompressed bytes.
    pub fn predict(&self, bytes: usize) -> Duration {
        let ns = self.fixed_ns + self.ns_per_byte * bytes as f64;
        Duration::from_nanos(ns.max(0.0) as u64)
    }

    /// Fits a line through two (size, duration) measurements.
    fn through(small: (usize, Duration), large: (usize, Duration)) -> LinearCost {
        let (s0, t0) = (small.0 as f64, small.1.as_nanos() as f64);
        let (s1, t1) = (large.0 as f64, large.1.as_nanos() as f64);
        let ns_per_byte = ((t1 - t0) / (s1 - s0)).max(t1 / s1 / 4.0);
        let fixed_ns = (t0 - ns_per_byte * s0).max(0.0);
        LinearCost {
            fixed_ns,
            ns_per_byte,
        }
    }
}

/// Predicted cost of every (operation, recipe).
#[derive(Debug, Clone, PartialEq)]
pub struct CostModel {
    compress: [LinearCost; 6],
    decompress: [LinearCost; 6],
}

fn recipe_index(r: Recipe) -> usize {
    Recipe::ALL
        .iter()
        .position(|x| *x == r)
        .expect("ALL lists every recipe")
}

/// Sizes the calibration probe measures; the line is fitted through them.
const PROBE_SIZES: (usize, usize) = (4 << 10, 64 << 10);

impl CostModel {
    /// A model from known coefficients, in [`Recipe::ALL`] order.
    pub fn new(compress: [LinearCost; 6], decompress: [LinearCost; 6]) -> Self {
        CostModel {
            compress,
            decompress,
        }
    }

    /// Fits the model on this machine with a short probe: for every recipe,
    /// the median of three calls at 4 KiB and at 64 KiB of text-like data,
    /// each direction, on reused contexts.
    pub fn calibrate() -> Result<Self> {
        let mut compressors: [Option<Compressor>; 6] = Default::default();
        let mut dec = Decompressor::new()?;
        let mut frame = Vec::new();
        let mut out = Vec::new();
        CostModel::calibrate_with(|op, recipe, data| {
            let slot = &mut compressors[recipe_index(recipe)];
            let comp = match slot {
                Some(c) => c,
                None => slot.insert(Compressor::new(recipe)?),
            };
            match op {
                Operation::Compress => {
                    median_of_3(|| comp.compress_into(data, &mut frame).map(drop))
                }
                Operation::Decompress => {
                    let input = comp.compress(data)?;
                    median_of_3(|| dec.decompress_into(&input, &mut out).map(drop))
                }
            }
        })
    }

    /// Fits the model from `measure(op, recipe, data)`, the time one `op`
    /// call takes on `data` (uncompressed bytes; a decompress measurement
    /// decodes a frame of them). [`calibrate`](Self::calibrate) measures
    /// this machine; a caller can pass timings taken on its own data, or
    /// known costs.
    pub fn calibrate_with(
        mut measure: impl FnMut(Operation, Recipe, &[u8]) -> Result<Duration>,
    ) -> Result<Self> {
        let sample = probe_data(PROBE_SIZES.1);
        let small = &sample[..PROBE_SIZES.0];
        let mut compress = [LinearCost {
            fixed_ns: 0.0,
            ns_per_byte: 0.0,
        }; 6];
        let mut decompress = compress;
        for (i, recipe) in Recipe::ALL.into_iter().enumerate() {
            for (op, line) in [
                (Operation::Compress, &mut compress[i]),
                (Operation::Decompress, &mut decompress[i]),
            ] {
                let t_small = measure(op, recipe, small)?;
                let t_large = measure(op, recipe, &sample)?;
                *line = LinearCost::through((small.len(), t_small), (sample.len(), t_large));
            }
        }
        Ok(CostModel::new(compress, decompress))
    }

    /// The cost line for an operation and recipe.
    pub fn cost(&self, op: Operation, recipe: Recipe) -> LinearCost {
        let i = recipe_index(recipe);
        match op {
            Operation::Compress => self.compress[i],
            Operation::Decompress => self.decompress[i],
        }
    }

    /// Predicted duration of `op` on `bytes` uncompressed bytes.
    pub fn predict(&self, op: Operation, recipe: Recipe, bytes: usize) -> Duration {
        self.cost(op, recipe).predict(bytes)
    }
}

fn median_of_3(mut f: impl FnMut() -> Result<()>) -> Result<Duration> {
    let mut t = [Duration::ZERO; 3];
    for slot in &mut t {
        let start = Instant::now();
        f()?;
        *slot = start.elapsed();
    }
    t.sort();
    Ok(t[1])
}

/// Deterministic text-like bytes: a Zipf-ish draw from a vocabulary of a
/// thousand syllable-built words with numbers mixed in, which compresses
/// (about 2.5:1 at the fast recipes) and decodes at speeds close to prose,
/// logs and source code.
pub fn probe_data(len: usize) -> Vec<u8> {
    const SYLLABLES: [&str; 16] = [
        "ka", "to", "re", "in", "an", "st", "er", "on", "la", "mi", "de", "ar", "co", "ve", "pu",
        "th",
    ];
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let words: Vec<String> = (0..1024)
        .map(|_| {
            let r = next();
            (0..1 + r % 3)
                .map(|i| SYLLABLES[((r >> (8 + 4 * i)) & 15) as usize])
                .collect()
        })
        .collect();
    let mut out = Vec::with_capacity(len + 16);
    while out.len() < len {
        let r = next();
        if r.is_multiple_of(7) {
            out.extend_from_slice((r % 100_000).to_string().as_bytes());
        } else {
            // Squaring a uniform draw favours low indices, like word
            // frequencies in real text.
            let u = ((r >> 11) & 0xffff) as usize;
            out.extend_from_slice(words[u * u / 65536 * words.len() / 65536].as_bytes());
        }
        out.push(if r.is_multiple_of(13) { b'\n' } else { b' ' });
    }
    out.truncate(len);
    out
}

/// Where a call runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// On the calling task's executor thread.
    Inline,
    /// On tokio's blocking pool (`spawn_blocking`).
    Offload,
}

/// How a [`Budget`] places calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Every call inline (what a compile-time "not dirty" choice gives).
    AlwaysInline,
    /// Every call offloaded (what a compile-time "dirty scheduler" gives).
    AlwaysOffload,
    /// Inline when the predicted time is at most this budget.
    Budgeted(Duration),
}

/// Per-call inline-or-offload placement for async compression. Its async
/// calls need the `tokio` feature (on by default); without it,
/// [`place`](Budget::place) still says where a call belongs.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> zstdkit::Result<()> {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use zstdkit::{Budget, CostModel, LinearCost, Operation, Placement, Policy, Recipe};
/// // A service would measure its machine with `CostModel::calibrate()?`;
/// // here every recipe costs 2 µs per call plus 1 ns per byte.
/// let line = LinearCost { fixed_ns: 2_000.0, ns_per_byte: 1.0 };
/// let model = Arc::new(CostModel::new([line; 6], [line; 6]));
/// let budget = Budget::new(model, Policy::Budgeted(Duration::from_micros(100)));
/// assert_eq!(budget.place(Operation::Compress, Recipe::Fast, 64 << 10), Placement::Inline); // 67.5 µs
/// assert_eq!(budget.place(Operation::Compress, Recipe::Fast, 1 << 20), Placement::Offload); // 1.05 ms
/// let frame = budget.compress(b"tiny".to_vec(), Recipe::Fast).await?; // inline
/// assert_eq!(budget.decompress(frame, Recipe::Fast).await?, b"tiny");
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Budget {
    model: Arc<CostModel>,
    policy: Policy,
}

thread_local! {
    // Inline calls and blocking-pool threads each keep one context per
    // recipe: creating a level-22 context costs more than many small calls.
    static COMPRESSORS: RefCell<[Option<Compressor>; 6]> = const { RefCell::new([None, None, None, None, None, None]) };
    static DECOMPRESSOR: RefCell<Option<Decompressor>> = const { RefCell::new(None) };
}

fn with_compressor<T>(recipe: Recipe, f: impl FnOnce(&mut Compressor) -> Result<T>) -> Result<T> {
    COMPRESSORS.with(|cell| {
        let mut slots = cell.borrow_mut();
        let slot = &mut slots[recipe_index(recipe)];
        if slot.is_none() {
            *slot = Some(Compressor::new(recipe)?);
        }
        f(slot.as_mut().expect("filled above"))
    })
}

fn with_decompressor<T>(f: impl FnOnce(&mut Decompressor) -> Result<T>) -> Result<T> {
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = Some(Decompressor::new()?);
        }
        f(slot.as_mut().expect("filled above"))
    })
}

/// Compresses on this thread's cached context for `recipe`.
pub fn compress_cached(data: &[u8], recipe: Recipe) -> Result<Vec<u8>> {
    with_compressor(recipe, |c| c.compress(data))
}

/// Decompresses on this thread's cached context.
pub fn decompress_cached(frame: &[u8]) -> Result<Vec<u8>> {
    with_decompressor(|d| d.decompress(frame))
}

impl Budget {
    /// A budget over a model.
    pub fn new(model: Arc<CostModel>, policy: Policy) -> Self {
        Budget { model, policy }
    }

    /// The model.
    pub fn model(&self) -> &CostModel {
        &self.model
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// Where a call of `op` on `bytes` uncompressed bytes would run.
    pub fn place(&self, op: Operation, recipe: Recipe, bytes: usize) -> Placement {
        match self.policy {
            Policy::AlwaysInline => Placement::Inline,
            Policy::AlwaysOffload => Placement::Offload,
            Policy::Budgeted(limit) => {
                if self.model.predict(op, recipe, bytes) <= limit {
                    Placement::Inline
                } else {
                    Placement::Offload
                }
            }
        }
    }

    /// Compresses `data` with `recipe`, inline or offloaded as
    /// [`place`](Self::place) decides.
    #[cfg(feature = "tokio")]
    pub async fn compress(&self, data: Vec<u8>, recipe: Recipe) -> Result<Vec<u8>> {
        match self.place(Operation::Compress, recipe, data.len()) {
            Placement::Inline => compress_cached(&data, recipe),
            Placement::Offload => offload(move || compress_cached(&data, recipe)).await,
        }
    }

    /// Decompresses `frame`. The size used for the decision is the size the
    /// frame declares, or four times the compressed size when it declares
    /// none; `recipe` is the one it was made with, if known (the slower
    /// recipes also decode a little slower).
    #[cfg(feature = "tokio")]
    pub async fn decompress(&self, frame: Vec<u8>, recipe: Recipe) -> Result<Vec<u8>> {
        let size = match zstd_safe::find_decompressed_size(&frame) {
            Ok(Some(n)) => usize::try_from(n).unwrap_or(usize::MAX),
            _ => frame.len().saturating_mul(4),
        };
        match self.place(Operation::Decompress, recipe, size) {
            Placement::Inline => decompress_cached(&frame),
            Placement::Offload => offload(move || decompress_cached(&frame)).await,
        }
    }
}

#[cfg(feature = "tokio")]
async fn offload<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        crate::Error::Io(std::io::Error::other(format!("blocking task failed: {e}")))
    })?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_through_two_points_predicts_both() {
        let c = LinearCost::through(
            (1000, Duration::from_nanos(3000)),
            (11_000, Duration::from_nanos(23_000)),
        );
        assert!((c.ns_per_byte - 2.0).abs() < 1e-9);
        assert!((c.fixed_ns - 1000.0).abs() < 1e-9);
        assert_eq!(c.predict(5000), Duration::from_nanos(11_000));
    }

    #[test]
    fn budgeted_policy_splits_on_the_prediction() {
        let line = LinearCost {
            fixed_ns: 1000.0,
            ns_per_byte: 1.0,
        };
        let model = Arc::new(CostModel::new([line; 6], [line; 6]));
        let b = Budget::new(model.clone(), Policy::Budgeted(Duration::from_micros(10)));
        assert_eq!(
            b.place(Operation::Compress, Recipe::Fast, 9000),
            Placement::Inline
        );
        assert_eq!(
            b.place(Operation::Compress, Recipe::Fast, 9001),
            Placement::Offload
        );
        let inline = Budget::new(model.clone(), Policy::AlwaysInline);
        assert_eq!(
            inline.place(Operation::Compress, Recipe::Maximum, 1 << 30),
            Placement::Inline
        );
        let off = Budget::new(model, Policy::AlwaysOffload);
        assert_eq!(
            off.place(Operation::Decompress, Recipe::Fast, 1),
            Placement::Offload
        );
    }

    /// A machine with known costs: recipe i (1-based, in `Recipe::ALL`
    /// order) compresses at 1000·i ns per call plus i² ns per byte, and
    /// decompresses at 200·i ns plus i ns per byte.
    fn known_cost(op: Operation, recipe: Recipe, data: &[u8]) -> Result<Duration> {
        let i = recipe_index(recipe) as u64 + 1;
        let n = data.len() as u64;
        Ok(Duration::from_nanos(match op {
            Operation::Compress => 1000 * i + i * i * n,
            Operation::Decompress => 200 * i + i * n,
        }))
    }

    #[test]
    fn calibration_recovers_the_measured_lines() {
        let m = CostModel::calibrate_with(known_cost).unwrap();
        for (i, recipe) in Recipe::ALL.into_iter().enumerate() {
            let i = i as f64 + 1.0;
            let c = m.cost(Operation::Compress, recipe);
            assert!((c.fixed_ns - 1000.0 * i).abs() < 1e-6, "{recipe}: {c:?}");
            assert!((c.ns_per_byte - i * i).abs() < 1e-9, "{recipe}: {c:?}");
            let d = m.cost(Operation::Decompress, recipe);
            assert!((d.fixed_ns - 200.0 * i).abs() < 1e-6, "{recipe}: {d:?}");
            assert!((d.ns_per_byte - i).abs() < 1e-9, "{recipe}: {d:?}");
        }
    }

    #[test]
    fn the_budget_follows_the_calibrated_model() {
        let model = Arc::new(CostModel::calibrate_with(known_cost).unwrap());
        let b = Budget::new(model, Policy::Budgeted(Duration::from_micros(100)));
        let place = |op, r, n| b.place(op, r, n);
        // fast: 1 µs + 1 ns/B → 4 KiB in 5.1 µs, 1 MiB in 1.05 ms.
        assert_eq!(
            place(Operation::Compress, Recipe::Fast, 4 << 10),
            Placement::Inline
        );
        assert_eq!(
            place(Operation::Compress, Recipe::Fast, 1 << 20),
            Placement::Offload
        );
        // maximum: 6 µs + 36 ns/B → even 4 KiB (153 µs) is offloaded, but
        // decoding it (1.2 µs + 6 ns/B = 25.8 µs) runs inline.
        assert_eq!(
            place(Operation::Compress, Recipe::Maximum, 4 << 10),
            Placement::Offload
        );
        assert_eq!(
            place(Operation::Decompress, Recipe::Maximum, 4 << 10),
            Placement::Inline
        );
        // Costlier recipes never get a larger inline share.
        let sizes = [1usize, 1 << 10, 2 << 10, 3 << 10, 8 << 10, 64 << 10];
        let inline = |r| {
            sizes
                .iter()
                .filter(|&&n| place(Operation::Compress, r, n) == Placement::Inline)
                .count()
        };
        for w in Recipe::ALL.windows(2) {
            assert!(inline(w[0]) >= inline(w[1]), "{} vs {}", w[0], w[1]);
        }
    }

    #[test]
    fn calibrating_this_machine_gives_usable_lines() {
        // Timings are not asserted (they belong to benchmarks); the probe
        // must run and give finite, non-negative lines for every recipe.
        let m = CostModel::calibrate().unwrap();
        for recipe in Recipe::ALL {
            for op in [Operation::Compress, Operation::Decompress] {
                let c = m.cost(op, recipe);
                assert!(
                    c.fixed_ns.is_finite() && c.fixed_ns >= 0.0,
                    "{recipe}: {c:?}"
                );
                assert!(
                    c.ns_per_byte.is_finite() && c.ns_per_byte >= 0.0,
                    "{recipe}: {c:?}"
                );
            }
        }
    }
}
