//! The measurements behind `perfkit bench --only zip` (once `zip bench`): writing archives with the sync writer, the async
//! writer (same core, tokio current-thread runtime), AES-256 and the
//! parallel writer, beside the peers — the `zip` crate and `s-zip` (sync
//! and async) — interleaved iteration by iteration on each scenario, on
//! realistic corpus data and on highly compressible data. Reports CPU and
//! wall MiB/s, the ratio, the archive size, peak RSS growth, CPU relative
//! to our sync writer and the AES cost.
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
use crate::peer;
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
    fn measure(&mut self, c: Contender, s: &Scenario) -> Result<Measured> {
        let (level, jobs) = (self.args.level, self.args.jobs);
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

    /// Writes one more archive of `c`'s, untimed, to `path` (`--keep`).
    fn keep(&mut self, c: Contender, s: &Scenario, path: &Path) -> Result<()> {
        let (level, jobs) = (self.args.level, self.args.jobs);
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
        for s in scenarios(args, compressible)? {
            if let Some(p) = archiver.peer.as_mut() {
                p.load(&s.entries)?;
            }
            let mut t: Vec<Tally> = modes
                .iter()
                .map(|_| Tally {
                    hist: latency_histogram(),
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
                    let x = archiver.measure(m, &s)?;
                    if !measured {
                        continue;
                    }
                    // Saturating: the peer's times are its word, and a
                    // peer's word must not panic the bench.
                    t[i].cpu = t[i].cpu.saturating_add(x.cpu);
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
            let sync_cpu = t[0].cpu.as_secs_f64() / t[0].n as f64;
            for (i, &m) in modes.iter().enumerate() {
                if let Some(Keep { dir, .. }) = &args.keep {
                    let path = dir.join(format!("s{section_index}-r{}.zip", rows.len()));
                    archiver
                        .keep(m, &s, &path)
                        .during_with(|| format!("writing {}", path.display()))?;
                }
                let x = &t[i];
                let per = x.cpu.as_secs_f64() / x.n as f64;
                let mut row = Row::new(format!("{} · {}", s.name, m.name(args.jobs)))
                    .latency(x.hist.clone())
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
                    )
                    .col("cpu_vs_sync", Value::num(per / sync_cpu, 3));
                if m == Contender::Here(Mode::Parallel) {
                    let speedup = t[0].wall.as_secs_f64()
                        / t[0].n as f64
                        / (x.wall.as_secs_f64() / x.n as f64);
                    row = row.col("wall_speedup", Value::num(speedup, 2));
                }
                rows.push(row);
            }
        }
        let sec = report.section(format!("write, {label}, deflate level {}", args.level));
        for r in rows {
            sec.row(r);
        }
        explain(sec, &peer_note);
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
    sec.note("cpu_vs_sync: CPU per archive relative to our sync writer (async: target ≤ 1.05; AES-256: cost = value − 1; zip crate and s-zip: > 1 means perfkit is faster)");
    sec.note("AES-256: every entry pays one key derivation, PBKDF2-HMAC-SHA1 with 1,000 iterations over a fresh salt, as WinZip AE-2 requires (a shared salt would reuse the CTR keystream); that fixed cost dominates small entries, while on entries of a few MB and up the cost is AES-CTR plus HMAC-SHA1 over the compressed bytes");
    sec.note("wall_speedup: sync wall time / parallel wall time on this (shared) machine");
    sec.note("peak_rss_growth: most the resident set grew during one archive (VmHWM after − VmRSS before; input preloaded, the reused output buffer already resident)");
    sec.note("backends: zipstream deflates with libdeflate in 1 MiB pieces (level 6 is libdeflate's 7, sized to Info-ZIP's zip -6: docs/zip.md); the zip crate and s-zip (linked in) run on this binary's one flate2 backend, zlib-rs, the zip crate's default, whose level 6 writes larger archives on most data; s-zip's own default is miniz_oxide. The rows compare time at each writer's own archive size: ratio and out_bytes (--wide) say what each wrote, and the summary gives the size beside the time");
    sec.note(peer_note.to_owned());
}
