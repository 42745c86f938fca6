//! zstd's benchmark mode (`-b#`, `-e#`, `-i#`) the perfkit way: for each
//! level from the first to the last, every input compressed and then
//! decompressed, each for at least the evaluation time, on a reused
//! context, one row per level with the ratio and both speeds, its
//! compression latency histogram behind it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use perfkit_measure::{latency_histogram, record};
use perfkit_report::{Report, Row, RunInfo, Value};
use zstdkit::{Compressor, Decompressor, Params};

use crate::error::{IoContext, Result};

/// What a level sweep measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels {
    /// The inputs; empty: the built-in corpus (one file of each kind).
    pub files: Vec<PathBuf>,
    /// The first level (`-b#`, zstd's default 3).
    pub first: i32,
    /// The last level (`-e#`; the first when not given).
    pub last: i32,
    /// How long each level compresses, and then decompresses, at least
    /// (`-i#`, zstd's default 3 s); zero: once each.
    pub min_time: Duration,
}

/// Every input as (name, bytes).
fn inputs(files: &[PathBuf]) -> Result<Vec<(String, Vec<u8>)>> {
    if files.is_empty() {
        return Ok(perfkit_corpus::bench_set()?
            .into_iter()
            .map(|e| (e.name, e.data))
            .collect());
    }
    files
        .iter()
        .map(|p| {
            let data = std::fs::read(p).doing_with(|| format!("reading {}", p.display()))?;
            Ok((p.display().to_string(), data))
        })
        .collect()
}

/// Runs the sweep into a report with one section, a row per level.
pub fn measure(levels: &Levels, bar: &ProgressBar) -> Result<Report> {
    let inputs = inputs(&levels.files)?;
    let total: u64 = inputs.iter().map(|(_, d)| d.len() as u64).sum();
    let mb = total as f64 / 1e6;
    let mut report = Report::new("compress -b");
    let names: Vec<&str> = inputs.iter().map(|(n, _)| n.as_str()).collect();
    let section = report.section(format!("levels ({} inputs, {total} bytes)", inputs.len()));
    section.note(format!("inputs: {}", names.join(", ")));
    let (lo, hi) = (levels.first.min(levels.last), levels.first.max(levels.last));
    bar.set_length((hi - lo + 1) as u64);
    let mut most = 0;
    for level in lo..=hi {
        bar.set_message(format!("level {level}"));
        let mut c = Compressor::new(Params::for_level(level))?;
        let mut frames: Vec<Vec<u8>> = vec![Vec::new(); inputs.len()];
        let mut hist = latency_histogram();
        let (mut spent, mut rounds) = (Duration::ZERO, 0u64);
        while rounds == 0 || spent < levels.min_time {
            let t = Instant::now();
            for ((_, data), frame) in inputs.iter().zip(&mut frames) {
                c.compress_into(data, frame)?;
            }
            let d = t.elapsed();
            record(&mut hist, d);
            spent += d;
            rounds += 1;
        }
        let packed: u64 = frames.iter().map(|f| f.len() as u64).sum();
        let mut dec = Decompressor::new()?;
        let mut out = Vec::new();
        let (mut unspent, mut unrounds) = (Duration::ZERO, 0u64);
        while unrounds == 0 || unspent < levels.min_time {
            let t = Instant::now();
            for frame in &frames {
                dec.decompress_into(frame, &mut out)?;
            }
            unspent += t.elapsed();
            unrounds += 1;
        }
        most = most.max(rounds);
        section.row(
            Row::new(format!("level {level}"))
                .col("compressed_bytes", Value::num(packed as f64, 0))
                .col("ratio", Value::num(total as f64 / packed.max(1) as f64, 3))
                .col(
                    "compress_mb_s",
                    Value::num(mb * rounds as f64 / spent.as_secs_f64().max(1e-9), 1),
                )
                .col(
                    "decompress_mb_s",
                    Value::num(mb * unrounds as f64 / unspent.as_secs_f64().max(1e-9), 1),
                )
                .elapsed(spent)
                .latency(hist),
        );
        bar.inc(1);
    }
    bar.finish_and_clear();
    report.run = RunInfo {
        iterations: most,
        warmup: 0,
        runs: 1,
        pinned: None,
        timing: "std::time::Instant around each pass over every input, reused contexts".into(),
    };
    Ok(report)
}
