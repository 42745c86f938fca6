//! The measurements behind `perfkit bench --only zip` (once `zip bench`): writing archives with the sync writer, the async
//! writer (same core, tokio current-thread runtime), AES-256 and the
//! parallel writer, beside the peers — the `zip` crate and `s-zip` (sync
//! and async) — interleaved iteration by iteration on each scenario, on
//! realistic corpus data and on highly compressible data. Reports CPU and
//! wall MiB/s, the ratio, the archive size, peak RSS growth, CPU relative
//! to our sync writer and the AES cost.
//!
//! Equal work (issue 64): the writers do not deflate alike at one level
//! (ours is libdeflate's, sized to Info-ZIP's `zip -6`), so each peer is
//! timed at its level whose archive is nearest ours in size, found on each
//! scenario before the timed rounds; where no level comes within 1 %, its
//! CPU is interpolated between the two levels either side of our size, or,
//! where none lies beyond it, the row says the sizes differ. Every row
//! gives both sizes and says what it holds equal.
//!
//! Backends: one binary links one flate2 backend for every crate in it, and
//! ours is zlib-rs. The `zip` crate's default deflate backend (9.4.1,
//! feature `deflate`) is zlib-rs too, so its row is both its own default
//! and the same backend. `s-zip`'s default is flate2's, miniz_oxide, so it
//! is measured twice: linked in, on zlib-rs (the same backend), and on its
//! own default in `szip-peer`, a program of its own that `cargo xtask
//! peers` builds (`szip_peer`); without it, or if it will not start,
//! those rows are left out and a note says why.

mod szip_peer;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use szip_peer::{Entries, Measured, SZipPeer, Writer};
use zipstream::{
    AesStrength, AsyncZipWriter, EntryOptions, ParallelOptions, ParallelZipWriter, ZipWriter,
};

use crate::error::{Error, IoContext, Result, StepContext};
use crate::peer::{self, equal_size, size_verdict};
use perfkit_corpus::{self as corpus, Kind};
use perfkit_measure::{Repeat, clock, latency_histogram, memory, record};
use perfkit_report::{Report, Row, RunInfo, Section, Value};

/// What the zip part of `perfkit bench` measures, and for how long.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Measuring time per scenario (all modes together).
    pub time: Duration,
    /// At most this many measured iterations per scenario.
    pub iterations: u64,
    /// Warm-up iterations, excluded.
    pub warmup: u64,
    /// Deflate level (0..=9).
    pub level: u32,
    /// Workers for the parallel mode.
    pub jobs: usize,
    /// Add the 200 MiB single-file scenario.
    pub large: bool,
    /// Only the small scenarios (used by `perfkit bench`).
    pub quick: bool,
    /// Also write one archive per row, made after the timed ones, so they
    /// can be checked with other tools.
    pub keep: Option<Keep>,
}

impl Default for Settings {
    /// The full measurement (the quick one is [`Settings::quick`]).
    fn default() -> Settings {
        Settings {
            time: Duration::from_secs(1),
            iterations: 200,
            warmup: 1,
            level: 6,
            jobs: 2,
            large: false,
            quick: false,
            keep: None,
        }
    }
}

impl Settings {
    /// The short run `perfkit bench` makes: the small scenarios, 200 ms
    /// each.
    pub fn quick() -> Settings {
        Settings {
            time: Duration::from_millis(200),
            iterations: 20,
            quick: true,
            ..Settings::default()
        }
    }
}

/// Where and how kept archives are written: `DIR/s<section>-r<row>.zip`
/// (indexes of the report's sections and rows, from 0), each of ours
/// through `write`, which the binary gives its own safe-output rules
/// (a temporary sibling renamed into place, removed on a signal). The
/// `szip-peer` rows are written by the peer program itself.
#[derive(Debug, Clone)]
pub struct Keep {
    /// The directory (created if needed).
    pub dir: PathBuf,
    /// Writes one whole archive to a path (e.g. through
    /// [`landing::write_atomically`]).
    pub write: fn(&Path, &[u8]) -> Result<(), landing::OutputError>,
}

struct Scenario {
    name: String,
    entries: Entries,
}

impl Scenario {
    fn bytes(&self) -> u64 {
        self.entries.iter().map(|(_, d)| d.len() as u64).sum()
    }
}

fn scenarios(args: &Settings, compressible: bool) -> Result<Vec<Scenario>> {
    let data = |n: usize, seed: u64| -> Result<Vec<u8>> {
        if compressible {
            // What the s-zip benchmarks call highly compressible: one short
            // sentence repeated.
            Ok(
                b"Hello, World! This is a test of highly compressible data. "
                    .iter()
                    .cycle()
                    .take(n)
                    .copied()
                    .collect(),
            )
        } else {
            let mut m = corpus::mixed(n.max(1))?;
            m.truncate(n);
            if seed > 0 {
                m.rotate_left((seed as usize * 7919) % n.max(1));
            }
            Ok(m)
        }
    };
    let mut v = vec![
        Scenario {
            name: "100 KB in memory".into(),
            entries: [("mem.bin".into(), data(100_000, 1)?)].into(),
        },
        Scenario {
            name: "50 × 10 KB".into(),
            entries: (0..50)
                .map(|i| -> Result<(String, Vec<u8>)> {
                    let kind = Kind::ALL[i % 4];
                    let d = if compressible {
                        data(10_000, 0)?
                    } else {
                        corpus::generate(kind, 10_000, i as u64)?
                    };
                    Ok((format!("f{i}.{}", kind.name()), d))
                })
                .collect::<Result<Vec<_>>>()?
                .into(),
        },
        Scenario {
            name: "one 5 MB file".into(),
            entries: [("five.bin".into(), data(5_000_000, 2)?)].into(),
        },
    ];
    if !args.quick {
        for mb in [10, 20] {
            v.push(Scenario {
                name: format!("{mb} MB"),
                entries: [("f.bin".into(), data(mb * 1_000_000, 3)?)].into(),
            });
        }
        if args.large {
            v.push(Scenario {
                name: "200 MiB".into(),
                entries: [("big.bin".into(), data(200 << 20, 4)?)].into(),
            });
        }
    }
    Ok(v)
}

/// The writers this process runs (and times) itself.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Sync,
    Async,
    Aes,
    Parallel,
    /// The `zip` crate with the same zlib-rs backend, as the peer.
    ZipCrate,
    /// s-zip's sync writer (`StreamingZipWriter`), the crate this component
    /// is measured against.
    SZip,
    /// s-zip's async writer (`AsyncStreamingZipWriter`) on the same runtime
    /// as ours.
    SZipAsync,
}

impl Mode {
    fn name(self, jobs: usize) -> String {
        match self {
            Mode::Sync => "sync".into(),
            Mode::Async => "async".into(),
            Mode::Aes => "sync + AES-256".into(),
            Mode::Parallel => format!("parallel --jobs {jobs}"),
            Mode::ZipCrate => "zip crate 9.4.1 (zlib-rs, its default)".into(),
            Mode::SZip => "s-zip 0.15.0 sync (zlib-rs, linked in)".into(),
            Mode::SZipAsync => "s-zip 0.15.0 async (zlib-rs, linked in)".into(),
        }
    }
}

impl Contender {
    /// Whether the row is a peer's (its level is chosen for equal size),
    /// not one of zipstream's writers.
    fn is_peer(self) -> bool {
        matches!(
            self,
            Contender::Peer(_) | Contender::Here(Mode::ZipCrate | Mode::SZip | Mode::SZipAsync)
        )
    }
}

/// What writes one row's archives: this process, or the peer.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Contender {
    /// One of the writers in this process.
    Here(Mode),
    /// s-zip's writers on its own default backend, in `szip-peer`.
    Peer(Writer),
}

impl Contender {
    fn name(self, jobs: usize) -> String {
        match self {
            Contender::Here(mode) => mode.name(jobs),
            Contender::Peer(Writer::Sync) => "s-zip 0.15.0 sync (miniz_oxide, own binary)".into(),
            Contender::Peer(Writer::Async) => "s-zip 0.15.0 async (miniz_oxide, own binary)".into(),
        }
    }
}

struct Tally {
    hist: hdrhistogram::Histogram<u64>,
    /// CPU of each archive, for the median the comparisons use.
    cpus: Vec<Duration>,
    /// CPU of each archive at the other level of an interpolation
    /// ([`Searched::other`]).
    other_cpus: Vec<Duration>,
    /// CPU of all archives together.
    cpu: Duration,
    wall: Duration,
    out: u64,
    n: u64,
    /// Largest growth of the resident set during one archive.
    peak_rss: u64,
}

fn run_once(
    mode: Mode,
    s: &Scenario,
    level: u32,
    jobs: usize,
    rt: &tokio::runtime::Runtime,
    buf: &mut Vec<u8>,
) -> Result<u64> {
    buf.clear();
    let opts = |name: &str| {
        let o = EntryOptions::file(name).mtime(1_700_000_000).level(level);
        if mode == Mode::Aes {
            o.encrypt(AesStrength::Aes256, "benchmark")
        } else {
            o
        }
    };
    let out = std::mem::take(buf);
    let out = match mode {
        Mode::Sync | Mode::Aes => {
            let mut w = ZipWriter::new(out);
            for (n, d) in s.entries.iter() {
                w.add_bytes(opts(n), d)?;
            }
            w.finish()?
        }
        Mode::Async => rt.block_on(async {
            let mut w = AsyncZipWriter::new(out);
            for (n, d) in s.entries.iter() {
                w.add_bytes(opts(n), d).await?;
            }
            w.finish().await
        })?,
        Mode::Parallel => {
            let mut w = ParallelZipWriter::new(ZipWriter::new(out), ParallelOptions::new(jobs));
            for (n, d) in s.entries.iter() {
                w.add_bytes(opts(n), d)?;
            }
            w.finish()?
        }
        Mode::ZipCrate => {
            use std::io::Write;
            let mut w = zip::ZipWriter::new(std::io::Cursor::new(out));
            let o = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated)
                .compression_level(Some(i64::from(level)));
            for (n, d) in s.entries.iter() {
                w.start_file(n.as_str(), o)?;
                w.write_all(d)
                    .doing("writing an entry with the zip crate")?;
            }
            w.finish()?.into_inner()
        }
        Mode::SZip => {
            let mut w = s_zip::StreamingZipWriter::from_writer_with_compression(
                std::io::Cursor::new(out),
                level,
            )?;
            for (n, d) in s.entries.iter() {
                w.add_entry(n, d)?;
            }
            w.finish()?.into_inner()
        }
        Mode::SZipAsync => rt.block_on(async {
            let mut w = s_zip::AsyncStreamingZipWriter::from_writer_with_compression(
                std::io::Cursor::new(out),
                level,
            );
            for (n, d) in s.entries.iter() {
                w.add_entry(n, d).await?;
            }
            Ok::<_, Error>(w.finish().await?.into_inner())
        })?,
    };
    let n = out.len() as u64;
    *buf = out;
    Ok(n)
}

/// What writes the archives: the settings, the runtime for the async
/// writers, the peer for s-zip's own-backend rows (if it started), and one
/// output buffer reused by every archive written here.
struct Archiver<'a> {
    args: &'a Settings,
    rt: tokio::runtime::Runtime,
    peer: Option<SZipPeer>,
    buf: Vec<u8>,
}

impl Archiver<'_> {
    /// The peer, for the rows only it writes.
    fn peer(&mut self) -> Result<&mut SZipPeer> {
        self.peer
            .as_mut()
            .ok_or_else(|| Error::Invalid("s-zip's own-backend rows need szip-peer".to_owned()))
    }

    /// Times one archive: here, with the thread CPU clock (the process clock
    /// for the parallel writer, whose workers are other threads), or in the
    /// peer, which reads the same clocks itself.
    fn measure(&mut self, c: Contender, s: &Scenario, level: u32) -> Result<Measured> {
        let jobs = self.args.jobs;
        let mode = match c {
            Contender::Here(mode) => mode,
            Contender::Peer(w) => return self.peer()?.run(w, level),
        };
        let clock: fn() -> Duration = if mode == Mode::Parallel {
            clock::process_cpu
        } else {
            clock::thread_cpu
        };
        let rss0 = memory::reset_peak();
        let (c0, w0) = (clock(), Instant::now());
        let out_bytes = run_once(mode, s, level, jobs, &self.rt, &mut self.buf)?;
        let wall = w0.elapsed();
        let cpu = clock() - c0;
        let rss_growth = memory::status().hwm_bytes.saturating_sub(rss0);
        Ok(Measured {
            cpu,
            wall,
            out_bytes,
            rss_growth,
        })
    }

    /// Writes one more archive of `c`'s at `level`, untimed, to `path`
    /// (`--keep`).
    fn keep(&mut self, c: Contender, s: &Scenario, level: u32, path: &Path) -> Result<()> {
        let jobs = self.args.jobs;
        let mode = match c {
            Contender::Here(mode) => mode,
            Contender::Peer(w) => return self.peer()?.save(w, level, path),
        };
        run_once(mode, s, level, jobs, &self.rt, &mut self.buf)?;
        (self
            .args
            .keep
            .as_ref()
            .expect("keep is only called when asked")
            .write)(path, &self.buf)?;
        Ok(())
    }
}

/// The JSON-only column saying how a row's CPU is held at the sync
/// writer's archive size: `within 1 %`, `interpolated` (between two of a
/// peer's levels, neither within 1 %) or `not equal` (the summary leaves
/// those out of its ratio, naming them).
pub(crate) const SIZE_HELD: &str = "size_held";

/// AES-256's bytes in each entry of an archive (WinZip AE-2): a 16-byte
/// salt, a 2-byte password verifier and a 10-byte MAC in the data, and an
/// 11-byte extra field in both the local and the central header.
const AES256_ENTRY_BYTES: u64 = 16 + 2 + 10 + 2 * 11;

/// The level a row's writer runs at on one scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Pairing {
    /// The deflate level.
    level: u32,
    /// How a peer's level was found; `None` for our writers, which run at
    /// the bench's level.
    searched: Option<Searched>,
}

/// The search behind a peer's level ([`nearest_level`]), for its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Searched {
    /// The peer's archive at the bench's level.
    at_start: u64,
    /// The lowest and highest levels tried.
    tried: (u32, u32),
    /// When no level came within 1 % of the target but two adjacent ones
    /// lie either side of it: the other of the two, and its archive's
    /// size. The row's CPU is interpolated between them.
    other: Option<(u32, u64)>,
}

/// The level in 1..=9 whose archive is nearest `target` bytes, `size`
/// giving the archive's size at a level. The walk starts at `start` and
/// goes a level at a time toward the target (deeper while the archive is
/// larger) until the sizes cross it or the levels end. Deflate's sizes
/// mostly shrink level by level but not always (zlib's levels 1-3 use
/// another strategy than 4-9, and flat stretches are common), so the
/// nearest of the levels tried is kept, not the last; on a tie, the one
/// nearer `start`. When none is within 1 %
/// ([`peer::EQUAL_SIZE_PERCENT`]) and the walk crossed the target, the two
/// levels either side of it are the answer (the nearer first), for the CPU
/// at the target to be interpolated.
fn nearest_level(
    target: u64,
    start: u32,
    mut size: impl FnMut(u32) -> Result<u64>,
) -> Result<(u32, Searched)> {
    let start = start.clamp(1, 9);
    let gap = |bytes: u64| bytes.abs_diff(target);
    let at_start = size(start)?;
    let deeper = at_start > target;
    let (mut best, mut best_bytes) = (start, at_start);
    let (mut level, mut bytes) = (start, at_start);
    let mut previous = None;
    let mut tried = (start, start);
    while bytes != target && (bytes > target) == deeper {
        let next = match (deeper, level) {
            (true, 9) | (false, 1) => break,
            (true, l) => l + 1,
            (false, l) => l - 1,
        };
        previous = Some((level, bytes));
        (level, bytes) = (next, size(next)?);
        tried = (tried.0.min(level), tried.1.max(level));
        if gap(bytes) < gap(best_bytes) {
            (best, best_bytes) = (level, bytes);
        }
    }
    let crossed = bytes != target && (bytes > target) != deeper;
    let mut searched = Searched {
        at_start,
        tried,
        other: None,
    };
    if let (false, true, Some(before)) = (equal_size(best_bytes, target), crossed, previous) {
        let last = (level, bytes);
        let (near, far) = if gap(last.1) < gap(before.1) {
            (last, before)
        } else {
            (before, last)
        };
        searched.other = Some(far);
        return Ok((near.0, searched));
    }
    Ok((best, searched))
}

/// The CPU at `target` bytes, on the line through (`a` bytes, `cpu_a`)
/// and (`b` bytes, `cpu_b`), two levels either side of it.
fn interpolate(target: u64, (a, cpu_a): (u64, f64), (b, cpu_b): (u64, f64)) -> f64 {
    if a == b {
        return cpu_a;
    }
    let t = (target as f64 - a as f64) / (b as f64 - a as f64);
    cpu_a + t * (cpu_b - cpu_a)
}

/// One row's sizes and CPU beside the sync writer's, for its
/// `held_equal` and `size_held` columns.
struct Held {
    /// The row's writer.
    contender: Contender,
    /// Its level and how it was found.
    pairing: Pairing,
    /// The bench's level, the sync writer's.
    bench_level: u32,
    /// Entries in the scenario (AES-256's bytes are per entry).
    entries: u64,
    /// The row's archive and the sync writer's, in bytes.
    out: u64,
    sync_out: u64,
    /// Median CPU per archive at the row's level, and at the other level
    /// of an interpolation, in seconds.
    cpu: f64,
    other_cpu: Option<f64>,
}

impl Held {
    /// The archive's size as it compares with the sync writer's: an
    /// AES-256 row without the bytes encryption adds.
    fn compared(&self) -> u64 {
        match self.contender {
            Contender::Here(Mode::Aes) => {
                self.out.saturating_sub(AES256_ENTRY_BYTES * self.entries)
            }
            _ => self.out,
        }
    }

    /// The row's CPU per archive at the sync writer's size: measured, or
    /// interpolated between a peer's two levels either side of it.
    fn cpu(&self) -> f64 {
        match (self.pairing.searched.and_then(|s| s.other), self.other_cpu) {
            (Some((_, other)), Some(other_cpu)) => {
                interpolate(self.sync_out, (self.out, self.cpu), (other, other_cpu))
            }
            _ => self.cpu,
        }
    }

    /// [`SIZE_HELD`]'s value.
    fn size_held(&self) -> &'static str {
        if equal_size(self.compared(), self.sync_out) {
            "within 1 %"
        } else if self.other_cpu.is_some() {
            "interpolated"
        } else {
            "not equal"
        }
    }

    /// What the row holds equal with our sync writer, in words: the
    /// level, both archives' sizes, and whether they are within 1 %
    /// ([`peer::EQUAL_SIZE_PERCENT`]), said either way.
    fn text(&self) -> String {
        let (out, sync_out, level) = (self.out, self.sync_out, self.bench_level);
        let compared = self.compared();
        let ratio = compared as f64 / sync_out.max(1) as f64;
        let verdict = size_verdict(compared, sync_out);
        let sizes = format!(
            "archives {out} bytes and the sync writer's {sync_out}, {ratio:.4}x, {verdict}"
        );
        match (self.contender, self.pairing.searched) {
            (Contender::Here(Mode::Sync), _) => {
                format!("the reference: level {level}; archive {out} bytes")
            }
            (Contender::Here(Mode::Aes), _) => format!(
                "level {level} as the sync writer, then encrypted; archives {out} bytes, {compared} without AES-256's {AES256_ENTRY_BYTES} bytes an entry (salt, verifier, MAC, extra fields), and the sync writer's {sync_out}, {ratio:.4}x, {verdict}"
            ),
            (_, Some(found)) => {
                let at_start = format!(
                    "at level {level} it writes {} bytes, {:.4}x",
                    found.at_start,
                    found.at_start as f64 / sync_out.max(1) as f64
                );
                let (lo, hi) = found.tried;
                match (found.other, self.other_cpu) {
                    (Some((other_level, other_out)), Some(other_cpu)) => format!(
                        "archive size, interpolated: no level of this writer's comes within 1 % of the sync writer's {sync_out} bytes (levels {lo}-{hi} tried); level {} writes {out} bytes in {:.3} ms, level {other_level} {other_out} bytes in {:.3} ms, so the CPU at {sync_out} bytes is {:.3} ms, on the line between them (the other columns are level {}'s); {at_start}",
                        self.pairing.level,
                        self.cpu * 1e3,
                        other_cpu * 1e3,
                        self.cpu() * 1e3,
                        self.pairing.level
                    ),
                    _ => format!(
                        "archive size: level {} is this writer's level nearest the sync writer's size at level {level} (levels {lo}-{hi} tried); {sizes}; {at_start}",
                        self.pairing.level
                    ),
                }
            }
            _ => format!("level {level} as the sync writer; {sizes}"),
        }
    }
}

/// The median of some durations (zero for none).
fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied().unwrap_or_default()
}

/// Measures every scenario and returns the report (also used by `perfkit bench`).
pub fn measure(args: &Settings) -> Result<Report> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .doing("starting a tokio runtime")?;
    let mut report = Report::new("zip bench");
    let mut max_iters = 0;
    // Our sync writer first: the other rows' cpu_vs_sync divides by it.
    let mut modes: Vec<Contender> = [
        Mode::Sync,
        Mode::Async,
        Mode::Aes,
        Mode::Parallel,
        Mode::ZipCrate,
        Mode::SZip,
        Mode::SZipAsync,
    ]
    .map(Contender::Here)
    .to_vec();
    // A peer that is missing or will not start (e.g. an older protocol)
    // leaves its rows out with a note saying why, as fix-bench does with
    // QuickFIX; one that fails after it started fails the bench.
    let started = peer::start_or_note(
        peer::SZIP,
        "s-zip on its own default backend (miniz_oxide)",
        "",
        |p| Ok((SZipPeer::start(p)?, p.to_owned())),
    );
    let (peer, peer_note) = match started {
        Ok((peer, p)) => {
            modes.extend([
                Contender::Peer(Writer::Sync),
                Contender::Peer(Writer::Async),
            ]);
            let note = format!(
                "s-zip (miniz_oxide, own binary): {}, s-zip 0.15.0 with its default features + async built on its own by `cargo xtask peers`; loaded with each scenario once, then asked for one archive at a time over a pipe in the same round-robin as the other rows; it times each archive itself with the same clocks (thread CPU, wall, VmHWM), so the pipe is not in its numbers",
                p.display()
            );
            (Some(peer), note)
        }
        Err(peer::Unavailable(why)) => (None, why),
    };
    if let Some(Keep { dir, .. }) = &args.keep {
        std::fs::create_dir_all(dir).doing_with(|| format!("creating {}", dir.display()))?;
    }
    let mut archiver = Archiver {
        args,
        rt,
        peer,
        buf: Vec::new(),
    };
    for compressible in [false, true] {
        let label = if compressible {
            "highly compressible"
        } else {
            "realistic (corpus)"
        };
        let section_index = report.sections.len();
        let mut rows = Vec::new();
        // The rows whose archive is not the sync writer's size within 1 %,
        // each said in a note as well as in its row.
        let mut unequal = Vec::new();
        for s in scenarios(args, compressible)? {
            if let Some(p) = archiver.peer.as_mut() {
                p.load(&s.entries)?;
            }
            // Equal work (issue 64): each peer runs at the level of its own
            // whose archive is nearest our sync writer's in size, chosen
            // on this scenario's data before the timed rounds.
            let ours = archiver
                .measure(Contender::Here(Mode::Sync), &s, args.level)?
                .out_bytes;
            let pairings: Vec<Pairing> = modes
                .iter()
                .map(|&m| {
                    // Level 0 stores, the same work for every writer.
                    if !m.is_peer() || args.level == 0 {
                        return Ok(Pairing {
                            level: args.level,
                            searched: None,
                        });
                    }
                    let (level, searched) = nearest_level(ours, args.level, |level| {
                        Ok(archiver.measure(m, &s, level)?.out_bytes)
                    })?;
                    Ok(Pairing {
                        level,
                        searched: Some(searched),
                    })
                })
                .collect::<Result<_>>()?;
            let mut t: Vec<Tally> = modes
                .iter()
                .map(|_| Tally {
                    hist: latency_histogram(),
                    cpus: Vec::new(),
                    other_cpus: Vec::new(),
                    cpu: Duration::ZERO,
                    wall: Duration::ZERO,
                    out: 0,
                    n: 0,
                    peak_rss: 0,
                })
                .collect();
            let repeat = Repeat {
                warmup: args.warmup,
                rounds: args.iterations,
                min_rounds: 2,
                time: args.time,
            };
            let iters = repeat.run(|measured| -> Result<()> {
                for (i, &m) in modes.iter().enumerate() {
                    let x = archiver.measure(m, &s, pairings[i].level)?;
                    // The other level of an interpolation, in the same
                    // round-robin.
                    let other = match pairings[i].searched.and_then(|f| f.other) {
                        Some((level, _)) => Some(archiver.measure(m, &s, level)?.cpu),
                        None => None,
                    };
                    if !measured {
                        continue;
                    }
                    t[i].other_cpus.extend(other);
                    // Saturating: the peer's times are its word, and a
                    // peer's word must not panic the bench.
                    t[i].cpu = t[i].cpu.saturating_add(x.cpu);
                    t[i].cpus.push(x.cpu);
                    t[i].peak_rss = t[i].peak_rss.max(x.rss_growth);
                    t[i].wall = t[i].wall.saturating_add(x.wall);
                    t[i].out = x.out_bytes;
                    t[i].n += 1;
                    record(&mut t[i].hist, x.wall);
                }
                Ok(())
            })?;
            max_iters = max_iters.max(iters);
            let mib = s.bytes() as f64 / (1 << 20) as f64;
            let cpu_rate = |x: &Tally| mib * x.n as f64 / x.cpu.as_secs_f64().max(1e-9);
            let sync_cpu = median(&t[0].cpus).as_secs_f64().max(1e-9);
            let sync_out = t[0].out;
            for (i, &m) in modes.iter().enumerate() {
                let pairing = pairings[i];
                if let Some(Keep { dir, .. }) = &args.keep {
                    let path = dir.join(format!("s{section_index}-r{}.zip", rows.len()));
                    archiver
                        .keep(m, &s, pairing.level, &path)
                        .during_with(|| format!("writing {}", path.display()))?;
                }
                let x = &t[i];
                let held = Held {
                    contender: m,
                    pairing,
                    bench_level: args.level,
                    entries: s.entries.len() as u64,
                    out: x.out,
                    sync_out,
                    cpu: median(&x.cpus).as_secs_f64(),
                    other_cpu: (!x.other_cpus.is_empty())
                        .then(|| median(&x.other_cpus).as_secs_f64()),
                };
                let cpu = held.cpu();
                let name = format!("{} · {}", s.name, m.name(args.jobs));
                if held.size_held() != "within 1 %" {
                    unequal.push(format!("{name}: {}", held.text()));
                }
                let mut row = Row::new(name)
                    .latency(x.hist.clone())
                    // The comparison and what it holds equal first, so the
                    // table shows them beside the latencies.
                    .col("cpu_vs_sync", Value::num(cpu / sync_cpu, 3))
                    .col(
                        "size_vs_sync",
                        Value::num(x.out as f64 / sync_out.max(1) as f64, 4),
                    )
                    .col("level", Value::from(u64::from(pairing.level)))
                    .col("cpu_ms", Value::num(cpu * 1e3, 3))
                    .col("cpu_mib_s", Value::num(cpu_rate(x), 1))
                    .col(
                        "wall_mib_s",
                        Value::num(mib * x.n as f64 / x.wall.as_secs_f64().max(1e-9), 1),
                    )
                    .col("ratio", Value::num(s.bytes() as f64 / x.out as f64, 2))
                    .col("out_bytes", Value::from(x.out))
                    .col(
                        "peak_rss_growth_mib",
                        Value::num(x.peak_rss as f64 / (1 << 20) as f64, 2),
                    );
                if m == Contender::Here(Mode::Parallel) {
                    let speedup = t[0].wall.as_secs_f64()
                        / t[0].n as f64
                        / (x.wall.as_secs_f64() / x.n as f64);
                    row = row.col("wall_speedup", Value::num(speedup, 2));
                }
                rows.push(
                    row.col("held_equal", held.text())
                        .json_col(SIZE_HELD, held.size_held()),
                );
            }
        }
        let sec = report.section(format!("write, {label}, deflate level {}", args.level));
        for r in rows {
            sec.row(r);
        }
        explain(sec, &peer_note);
        for u in unequal {
            sec.note(format!("not at the sync writer's size within 1 %: {u}"));
        }
    }
    report.run = RunInfo {
        iterations: max_iters,
        warmup: args.warmup,
        runs: 1,
        pinned: None,
        timing: "Instant and clock_gettime CPU clocks (thread; process for parallel) per archive; modes interleaved".into(),
    };
    Ok(report)
}

/// The notes under a write section: what each column means and how the
/// rows were made; `peer_note` says which peers ran.
fn explain(sec: &mut Section, peer_note: &str) {
    sec.note("cpu_vs_sync: median CPU per archive relative to our sync writer's (async: target ≤ 1.05; AES-256: cost = value − 1; zip crate and s-zip: > 1 means perfkit is faster), at the sizes size_vs_sync gives: this row's archive over the sync writer's");
    sec.note("held equal (issue 64): the peers' rows compare at equal archive size, not at equal level: before the timed rounds of each scenario, each peer writer is run at the bench's level and then a level at a time toward the sync writer's size, and is timed at its level nearest that size (the level column); held_equal (--wide, JSON) says the level, the levels tried, both sizes and whether they are within 1 %, and a note below names every row that is not");
    sec.note("AES-256: every entry pays one key derivation, PBKDF2-HMAC-SHA1 with 1,000 iterations over a fresh salt, as WinZip AE-2 requires (a shared salt would reuse the CTR keystream); that fixed cost dominates small entries, while on entries of a few MB and up the cost is AES-CTR plus HMAC-SHA1 over the compressed bytes");
    sec.note("wall_speedup: sync wall time / parallel wall time on this (shared) machine");
    sec.note("peak_rss_growth: most the resident set grew during one archive (VmHWM after − VmRSS before; input preloaded, the reused output buffer already resident)");
    sec.note("backends: zipstream deflates with libdeflate in pieces (level 6 is libdeflate's 7, sized to Info-ZIP's zip -6: docs/zip.md); the zip crate and s-zip (linked in) run on this binary's one flate2 backend, zlib-rs, the zip crate's default, whose level 6 writes larger archives on most data, hence their deeper levels; s-zip's own default is miniz_oxide");
    sec.note(peer_note.to_owned());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`nearest_level`] over a table of sizes by level (index 0 unused),
    /// with the levels it asked for.
    fn search(target: u64, sizes: [u64; 10]) -> ((u32, Searched), Vec<u32>) {
        let mut asked = Vec::new();
        let found = nearest_level(target, 6, |l| {
            asked.push(l);
            Ok(sizes[l as usize])
        })
        .unwrap();
        (found, asked)
    }

    #[test]
    fn the_peer_runs_at_its_level_nearest_our_size_or_between_two() {
        // Deeper levels shrink the archive: 8 is within 1 % of 1000, and
        // the walk stops where the sizes cross the target.
        let sizes = [0, 1300, 1200, 1150, 1100, 1060, 1030, 1015, 1004, 990];
        let ((level, found), asked) = search(1000, sizes);
        assert_eq!((level, found.other), (8, None));
        assert_eq!(asked, [6, 7, 8, 9]);
        assert_eq!((found.at_start, found.tried), (1030, (6, 9)));
        // Ours smaller than every level: the deepest, not within 1 %, and
        // nothing to interpolate with.
        let ((level, found), _) = search(900, sizes);
        assert_eq!((level, found.other), (9, None));
        assert!(!equal_size(sizes[9], 900));
        // Ours larger than the bench level's: the walk goes shallower.
        let ((level, found), asked) = search(1145, sizes);
        assert_eq!((level, found.other), (3, None));
        assert_eq!(asked, [6, 5, 4, 3]);
        // None within 1 %, two either side: the nearer, and the other to
        // interpolate with.
        let gap = [0, 900, 900, 900, 900, 900, 1500, 700, 690, 680];
        let ((level, found), _) = search(1000, gap);
        assert_eq!((level, found.other), (7, Some((6, 1500))));
        // Equal sizes at several levels: the one nearest the start.
        let flat = [0, 2000, 2000, 2000, 2000, 2000, 1100, 1000, 1000, 1000];
        assert_eq!(search(1000, flat).0.0, 7);
    }

    #[test]
    fn the_cpu_between_two_levels_lies_on_their_line() {
        // 538 bytes is 62 of the 349 from 476 (0.145 ms) to 825 (0.036 ms).
        let cpu = interpolate(538, (476, 0.145), (825, 0.036));
        assert!(
            (cpu - (0.145 - 62.0 / 349.0 * 0.109)).abs() < 1e-12,
            "{cpu}"
        );
        assert_eq!(interpolate(5, (5, 1.0), (5, 2.0)), 1.0);
    }

    fn held(contender: Contender, out: u64, sync_out: u64, entries: u64) -> Held {
        Held {
            contender,
            pairing: Pairing {
                level: 6,
                searched: None,
            },
            bench_level: 6,
            entries,
            out,
            sync_out,
            cpu: 1.0,
            other_cpu: None,
        }
    }

    #[test]
    fn a_row_off_our_size_by_more_than_one_percent_says_so() {
        let h = held(Contender::Here(Mode::Parallel), 494, 538, 1);
        assert_eq!(h.size_held(), "not equal");
        assert!(
            h.text().contains("NOT equal: 8.2 % smaller"),
            "{}",
            h.text()
        );
        let h = held(Contender::Here(Mode::Parallel), 1009, 1000, 1);
        assert_eq!(h.size_held(), "within 1 %");
        // AES-256's own bytes do not count against it, but only those.
        let h = held(Contender::Here(Mode::Aes), 10_702 + 50 * 50, 10_702, 50);
        assert_eq!(h.size_held(), "within 1 %", "{}", h.text());
        let h = held(Contender::Here(Mode::Aes), 10_702 + 50 * 60, 10_702, 50);
        assert_eq!(h.size_held(), "not equal", "{}", h.text());
    }
}
