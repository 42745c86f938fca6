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
//! timed at its level whose entries' compressed bytes are nearest ours,
//! found on each scenario before the timed rounds; where no level comes
//! within 1 %, its CPU is interpolated between the two levels either side
//! of our size, or, where none lies beyond it, the row says the sizes
//! differ. Every row gives both writers' compressed bytes and archives and
//! says what it holds equal.
//!
//! Backends: one binary links one flate2 backend for every crate in it, and
//! ours is zlib-rs. The `zip` crate's default deflate backend (9.4.1,
//! feature `deflate`) is zlib-rs too, so its row is both its own default
//! and the same backend. `s-zip`'s default is flate2's, miniz_oxide, so it
//! is measured twice: linked in, on zlib-rs (the same backend), and on its
//! own default in `szip-peer`, a program of its own that `cargo xtask
//! peers` builds (`szip_peer`); without it, or if it will not start,
//! those rows are left out and a note says why.

mod equal_size;
mod szip_peer;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use equal_size::{Held, Pairing, nearest_level};
use szip_peer::{Entries, Measured, SZipPeer, Writer};
use zipstream::{
    AesStrength, AsyncZipWriter, EntryOptions, ParallelOptions, ParallelZipWriter, ZipWriter,
};

use crate::error::{Error, IoContext, Result, StepContext};
use crate::peer;
use crate::rounds::{in_ns, median_of};
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
    /// ([`equal_size::Searched::other`]).
    other_cpus: Vec<Duration>,
    /// CPU of all archives together.
    cpu: Duration,
    wall: Duration,
    out: u64,
    n: u64,
    /// Largest growth of the resident set during one archive.
    peak_rss: u64,
}

impl Tally {
    /// A tally of no archives yet.
    fn new() -> Tally {
        Tally {
            hist: latency_histogram(),
            cpus: Vec::new(),
            other_cpus: Vec::new(),
            cpu: Duration::ZERO,
            wall: Duration::ZERO,
            out: 0,
            n: 0,
            peak_rss: 0,
        }
    }
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

    /// The entries' compressed bytes, as the central directory gives
    /// them, in the archive `c` writes of `s` at `level` (untimed): what
    /// deflate made, without the headers each writer adds. The peer's
    /// archive is saved to a file and read back.
    fn payload(&mut self, c: Contender, s: &Scenario, level: u32) -> Result<u64> {
        match c {
            Contender::Here(mode) => {
                run_once(mode, s, level, self.args.jobs, &self.rt, &mut self.buf)?;
            }
            Contender::Peer(w) => {
                let dir = tempfile::tempdir().doing("making a folder for s-zip's archive")?;
                let path = dir.path().join("peer.zip");
                self.peer()?.save(w, level, &path)?;
                self.buf =
                    std::fs::read(&path).doing_with(|| format!("reading {}", path.display()))?;
            }
        }
        let archive = zipstream::ZipArchive::new(std::io::Cursor::new(&self.buf[..]))?;
        Ok(archive.entries().iter().map(|e| e.compressed_size).sum())
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
        let mut written = Written {
            index: report.sections.len(),
            rows: Vec::new(),
            unequal: Vec::new(),
        };
        for s in scenarios(args, compressible)? {
            if let Some(p) = archiver.peer.as_mut() {
                p.load(&s.entries)?;
            }
            let pairings = archiver.pairings(&modes, &s)?;
            let (tallies, iters) = archiver.rounds(&modes, &s, &pairings)?;
            max_iters = max_iters.max(iters);
            archiver.rows(&mut written, &modes, &s, &pairings, &tallies)?;
        }
        let sec = report.section(format!("write, {label}, deflate level {}", args.level));
        for r in written.rows {
            sec.row(r);
        }
        explain(sec, &peer_note);
        for u in written.unequal {
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

/// One write section's rows as they are made, scenario by scenario.
struct Written {
    /// The section's index in the report (for `--keep`'s file names).
    index: usize,
    /// The rows, in the order of the scenarios and then the contenders.
    rows: Vec<Row>,
    /// The rows whose archive is not the sync writer's size within 1 %,
    /// each said in a note as well as in its row.
    unequal: Vec<String>,
}

impl Archiver<'_> {
    /// The level each contender runs at on `s`. Equal work (issue 64):
    /// each peer runs at the level of its own whose compressed bytes are
    /// nearest our sync writer's, chosen on this scenario's data before
    /// the timed rounds; our writers run at the bench's level.
    fn pairings(&mut self, modes: &[Contender], s: &Scenario) -> Result<Vec<Pairing>> {
        let level = self.args.level;
        let ours = self.payload(Contender::Here(Mode::Sync), s, level)?;
        modes
            .iter()
            .map(|&m| {
                // Level 0 stores, the same work for every writer.
                if !m.is_peer() || level == 0 {
                    let payload = match m {
                        Contender::Here(Mode::Sync) => ours,
                        _ => self.payload(m, s, level)?,
                    };
                    return Ok(Pairing {
                        level,
                        searched: None,
                        payload,
                    });
                }
                let (level, payload, searched) =
                    nearest_level(ours, level, |level| self.payload(m, s, level))?;
                Ok(Pairing {
                    level,
                    searched: Some(searched),
                    payload,
                })
            })
            .collect()
    }

    /// The timed rounds on `s`: every contender once a round, at its
    /// paired level, round-robin; returns each one's tally and the rounds
    /// measured.
    fn rounds(
        &mut self,
        modes: &[Contender],
        s: &Scenario,
        pairings: &[Pairing],
    ) -> Result<(Vec<Tally>, u64)> {
        let mut t: Vec<Tally> = modes.iter().map(|_| Tally::new()).collect();
        let repeat = Repeat {
            warmup: self.args.warmup,
            rounds: self.args.iterations,
            min_rounds: 2,
            time: self.args.time,
            odd: false,
        };
        let iters = repeat.run(|measured| -> Result<()> {
            for (i, &m) in modes.iter().enumerate() {
                let x = self.measure(m, s, pairings[i].level)?;
                // The other level of an interpolation, in the same
                // round-robin.
                let other = match pairings[i].searched.and_then(|f| f.other) {
                    Some((level, _)) => Some(self.measure(m, s, level)?.cpu),
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
        Ok((t, iters))
    }

    /// Adds `s`'s rows to `written`, one per contender from its tally
    /// beside the sync writer's (the first), writing each one's kept
    /// archive first when `--keep` asks.
    fn rows(
        &mut self,
        written: &mut Written,
        modes: &[Contender],
        s: &Scenario,
        pairings: &[Pairing],
        t: &[Tally],
    ) -> Result<()> {
        let args = self.args;
        let mib = s.bytes() as f64 / (1 << 20) as f64;
        let cpu_rate = |x: &Tally| mib * x.n as f64 / x.cpu.as_secs_f64().max(1e-9);
        let sync_out = t[0].out;
        for (i, &m) in modes.iter().enumerate() {
            let pairing = pairings[i];
            if let Some(Keep { dir, .. }) = &args.keep {
                let path = dir.join(format!("s{}-r{}.zip", written.index, written.rows.len()));
                self.keep(m, s, pairing.level, &path)
                    .during_with(|| format!("writing {}", path.display()))?;
            }
            let x = &t[i];
            let held_at = |cpu: f64, other_cpu: Option<f64>| Held {
                contender: m,
                pairing,
                bench_level: args.level,
                entries: s.entries.len() as u64,
                out: x.out,
                sync_out,
                sync_payload: pairings[0].payload,
                cpu,
                other_cpu,
            };
            let held = held_at(
                median(&x.cpus).as_secs_f64(),
                (!x.other_cpus.is_empty()).then(|| median(&x.other_cpus).as_secs_f64()),
            );
            let cpu = held.cpu();
            // The ratio to the sync writer pairs the rounds, each of which
            // ran every contender back to back: a ratio of two medians can
            // take them from rounds the machine ran at different speeds.
            let vs_sync = median_of(
                x.cpus
                    .iter()
                    .zip(&t[0].cpus)
                    .enumerate()
                    .map(|(k, (c, sync))| {
                        let other = x.other_cpus.get(k).map(Duration::as_secs_f64);
                        held_at(c.as_secs_f64(), other).cpu() / sync.as_secs_f64().max(1e-9)
                    })
                    .collect(),
            );
            let name = format!("{} · {}", s.name, m.name(args.jobs));
            if held.size_held() != "within 1 %" {
                written.unequal.push(format!("{name}: {}", held.text()));
            }
            let mut row = Row::new(name)
                .latency(x.hist.clone())
                // The comparison and what it holds equal first, so the
                // table shows them beside the latencies.
                .col("cpu_vs_sync", Value::num(vs_sync, 3))
                .col(
                    "data_vs_sync",
                    Value::num(
                        pairing.payload as f64 / pairings[0].payload.max(1) as f64,
                        4,
                    ),
                )
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
                // What `cpu_vs_sync` pairs: each round's CPU, in order.
                .json_col("cpu_ns_rounds", in_ns(&x.cpus))
                .col(
                    "peak_rss_growth_mib",
                    Value::num(x.peak_rss as f64 / (1 << 20) as f64, 2),
                );
            if m == Contender::Here(Mode::Parallel) {
                let speedup =
                    t[0].wall.as_secs_f64() / t[0].n as f64 / (x.wall.as_secs_f64() / x.n as f64);
                row = row.col("wall_speedup", Value::num(speedup, 2));
            }
            written.rows.push(
                row.col("held_equal", held.text())
                    .json_col(SIZE_HELD, held.size_held()),
            );
        }
        Ok(())
    }
}

/// The notes under a write section: what each column means and how the
/// rows were made; `peer_note` says which peers ran.
fn explain(sec: &mut Section, peer_note: &str) {
    sec.note("cpu_vs_sync: CPU per archive relative to our sync writer's, the median of the rounds' own ratios (each round writes one archive with every writer in turn; async: target ≤ 1.05; AES-256: cost = value − 1; zip crate and s-zip: > 1 means perfkit is faster), at the compressed bytes data_vs_sync gives: this row's entries' compressed bytes over the sync writer's (size_vs_sync: its archive over the sync writer's)");
    sec.note("held equal (issue 64): the peers' rows compare at equal compressed bytes (deflate's output: the entries' compressed sizes in the central directory), not at equal level or archive size: before the timed rounds of each scenario, each peer writer is run at the bench's level and then a level at a time toward the sync writer's compressed bytes, and is timed at its level nearest them (the level column); held_equal (--wide, JSON) says the level, the levels tried, both writers' compressed bytes and archives and whether the compressed bytes are within 1 %, and a note below names every row that is not");
    sec.note("headers are not held equal: zipstream's writers add Info-ZIP's extended timestamp (9 bytes in each local and central header) and, on the bench's sink, which cannot seek, a data descriptor (16 bytes) after each entry past 64 KiB; the zip crate and s-zip, given a seekable Cursor, write neither. On small, dense entries those bytes outweigh the data, which is why the archives are not what is compared");
    sec.note("validated, not held equal: zipstream's writers inflate every libdeflate piece they make and compare it with its input (a piece that does not match is written stored), 15-20 % of their compression's CPU on real data and in their rows; dense data, which goes on in one zlib-rs stream, is not checked, nor do the zip crate and s-zip check what they write");
    sec.note("AES-256: every entry pays one key derivation, PBKDF2-HMAC-SHA1 with 1,000 iterations over a fresh salt, as WinZip AE-2 requires (a shared salt would reuse the CTR keystream); that fixed cost dominates small entries, while on entries of a few MB and up the cost is AES-CTR plus HMAC-SHA1 over the compressed bytes");
    sec.note("wall_speedup: sync wall time / parallel wall time on this (shared) machine");
    sec.note("peak_rss_growth: most the resident set grew during one archive (VmHWM after − VmRSS before; input preloaded, the reused output buffer already resident)");
    sec.note("backends: zipstream deflates with libdeflate in pieces (level 6 is libdeflate's 7, sized to Info-ZIP's zip -6: docs/zip.md); the zip crate and s-zip (linked in) run on this binary's one flate2 backend, zlib-rs, the zip crate's default, whose level 6 writes larger archives on most data, hence their deeper levels; s-zip's own default is miniz_oxide");
    sec.note(peer_note.to_owned());
}
