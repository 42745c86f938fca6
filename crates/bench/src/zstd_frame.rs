//! One ordinary zstd frame, every core: `perfkit decompress -T2` and `-T0`
//! (by default perfkit's block decoder for a frame this large, its blocks'
//! entropy stage on several threads)
//! beside `zstd -d` and beside `perfkit decompress -T1` (libzstd), on 64
//! MiB of source-like and of binary data compressed by the zstd CLI at
//! `-3` and `-19`, written to a file and to a pipe; and the block decoder
//! on one thread beside libzstd's one-shot decoder on the same frames in
//! memory.
//!
//! Every side runs `runs` times, interleaved run by run (every other run in
//! the opposite order), each into a new file where it writes to one; rows
//! show the medians of wall and CPU time (user + sys, from `wait4`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use perfkit_corpus::{self as corpus, Kind};
use perfkit_measure::child::{self, Usage};
use perfkit_report::{Row, Section, Value};

use crate::error::{Error, IoContext, Result};
use crate::invocation::{Invocation, Launcher};
use crate::rounds::alternating;

/// Bytes of data behind each frame.
pub const SIZE: usize = 64 << 20;

/// Where a decode writes.
#[derive(Clone, Copy)]
enum Sink {
    /// A file in the scratch directory (`-o`).
    File,
    /// A pipe this process drains.
    Pipe,
}

impl Sink {
    fn name(self) -> &'static str {
        match self {
            Sink::File => "to a file",
            Sink::Pipe => "to a pipe",
        }
    }
}

/// Runs `cmd` (which writes to stdout unless it was given an output file)
/// with its stdout a pipe drained here for [`Sink::Pipe`], else
/// `/dev/null`.
fn run(mut cmd: Command, sink: Sink) -> Result<Usage> {
    cmd.stdin(Stdio::null());
    match sink {
        Sink::File => {
            cmd.stdout(Stdio::null());
            Ok(child::run(&mut cmd)?)
        }
        Sink::Pipe => {
            let (mut reader, writer) = std::io::pipe().doing("making a pipe")?;
            cmd.stdout(writer);
            let drain =
                std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
            let usage = child::run(&mut cmd);
            // The command holds the pipe's write end until dropped.
            drop(cmd);
            let _ = drain.join();
            Ok(usage?)
        }
    }
}

fn median<T: Copy + Ord>(v: &[T]) -> T {
    let mut s = v.to_vec();
    s.sort_unstable();
    s[s.len() / 2]
}

/// Median wall and CPU time of one side's runs. (Not the peak RSS:
/// `wait4` counts into a child's the RSS of this process it was forked
/// from, which holds the frames and their output here.)
fn medians(v: &[Usage]) -> (Duration, Duration) {
    let wall: Vec<_> = v.iter().map(|u| u.wall).collect();
    let cpu: Vec<_> = v.iter().map(|u| u.cpu).collect();
    (median(&wall), median(&cpu))
}

/// The frames: each kind of data at each level, made by the zstd CLI as
/// users make them (one frame; `-T0` only speeds the making up).
fn frames(dir: &Path) -> Result<Vec<(String, std::path::PathBuf)>> {
    let mut out = Vec::new();
    for (kind, seed) in [(Kind::Source, 66), (Kind::Binary, 67)] {
        let raw = dir.join(format!("{}.raw", kind.name()));
        std::fs::write(&raw, corpus::generate(kind, SIZE, seed)?)
            .doing_with(|| format!("writing {}", raw.display()))?;
        for level in [3, 19] {
            let frame = dir.join(format!("{}-{level}.zst", kind.name()));
            let status = Command::new("zstd")
                .args(["-q", "-f", "-T0", &format!("-{level}")])
                .arg(&raw)
                .arg("-o")
                .arg(&frame)
                .status()
                .doing("running the zstd CLI (install it: apt-get install zstd)")?;
            if !status.success() {
                return Err(Error::Program(format!("zstd -{level} failed: {status}")));
            }
            out.push((format!("{} -{level}", kind.name()), frame));
        }
        std::fs::remove_file(&raw).doing("removing the raw data")?;
    }
    Ok(out)
}

/// Removes the file at `path` if there is one.
fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).doing("removing the last output")
        }
        _ => Ok(()),
    }
}

/// Runs per side at least, whatever `--zstd-runs` asks below it: these
/// rows are issue 66's acceptance figures, medians of 5 interleaved runs.
/// The other `--vs-zstd` rows keep the quick run's one; five runs add
/// about 15 s here to the minutes the `-19` frames take to make.
pub const MIN_RUNS: u64 = 5;

/// The sections: for each frame, the processes to a file and to a pipe,
/// and the decoders in memory, `runs` times each (at least [`MIN_RUNS`]).
/// `perfkit` spells the binary's commands.
pub fn measure(runs: u64, perfkit: &dyn Launcher) -> Result<Vec<Section>> {
    let runs = runs.max(MIN_RUNS) as usize;
    let dir = tempfile::tempdir().doing("creating a scratch directory")?;
    let out = dir.path().join("out");
    let out_s = out
        .to_str()
        .ok_or_else(|| Error::Invalid("scratch path is not UTF-8".into()))?;
    let mut sections = Vec::new();
    for (name, frame) in frames(dir.path())? {
        let frame_s = frame
            .to_str()
            .ok_or_else(|| Error::Invalid("scratch path is not UTF-8".into()))?;
        let mut section = Section::new(format!("one zstd frame: {name}, {} MiB", SIZE >> 20));
        for sink in [Sink::File, Sink::Pipe] {
            let ours = |flags: &[&str]| {
                let mut c = perfkit.command(&Invocation::Decompress { input: &frame });
                c.args(flags);
                if let Sink::File = sink {
                    c.args(["-f", "-o", out_s]);
                }
                c
            };
            let zstd = || {
                let mut c = Command::new("zstd");
                c.args(["-q", "-d", "-f", frame_s]);
                match sink {
                    Sink::File => c.args(["-o", out_s]),
                    Sink::Pipe => c.arg("-c"),
                };
                c
            };
            let names = [
                "zstd -d",
                "perfkit decompress -T1",
                "perfkit decompress -T2",
                "perfkit decompress -T0",
            ];
            let mut sides: [Vec<Usage>; 4] = Default::default();
            for r in 0..runs {
                for i in alternating(names.len(), r) {
                    // A new file for each side, removed untimed: replacing
                    // the side before's 64 MiB (its page cache freed by
                    // whoever replaces it) cost the next side 6-15 ms and
                    // more after some sides than others, so that `-T0`, the
                    // same decode as `-T2` here, ran 10-25 % faster to a
                    // file than `-T2` right after `-T1` (see the commit).
                    if let Sink::File = sink {
                        remove_if_there(&out)?;
                    }
                    let cmd = match i {
                        0 => zstd(),
                        1 => ours(&["-T1"]),
                        // As users run it: by default a frame this large
                        // takes the pipeline on threads.
                        2 => ours(&["-T2"]),
                        _ => ours(&["-T0"]),
                    };
                    sides[i].push(run(cmd, sink)?);
                }
            }
            let (zw, zc) = medians(&sides[0]);
            let (t1w, _) = medians(&sides[1]);
            for (side, usages) in names.iter().zip(&sides) {
                let (w, c) = medians(usages);
                let mut row = Row::new(format!("{side} {}", sink.name()))
                    .col(
                        "throughput_mb_s",
                        Value::num(SIZE as f64 / 1e6 / w.as_secs_f64(), 1),
                    )
                    .col("wall_ms", Value::num(w.as_secs_f64() * 1e3, 1))
                    .col("cpu_ms", Value::num(c.as_secs_f64() * 1e3, 1));
                if side.starts_with("perfkit") {
                    row = row
                        .col("vs_zstd", Value::num(zw.as_secs_f64() / w.as_secs_f64(), 3))
                        .col(
                            "cpu_vs_zstd",
                            Value::num(zc.as_secs_f64() / c.as_secs_f64().max(1e-9), 3),
                        )
                        .col("vs_t1", Value::num(t1w.as_secs_f64() / w.as_secs_f64(), 3));
                }
                section.row(row);
            }
        }
        in_memory(&mut section, &frame, runs)?;
        section.note(format!(
            "{runs} interleaved runs per side, every other run in the opposite order, each side writing a new file, medians; the frame is the zstd CLI's (`zstd -{{3,19}} -T0`, one frame); -T1 decodes with libzstd, -T2 and -T0 (as users run them) with perfkit's block decoder, which takes one frame of 64 MiB or more by default on threads (entropy stage of block ranges on several threads, execution in order on one); vs_zstd = zstd -d wall / the row's wall, cpu_vs_zstd = zstd CPU / the row's CPU, vs_t1 = -T1 wall / the row's wall (above 1: faster); wall from spawn to exit, CPU user + sys from wait4; peak RSS is not shown, wait4 counting this process's into each child's (docs/compress.md has it by /usr/bin/time)"
        ));
        sections.push(section);
    }
    Ok(sections)
}

/// The block decoder on one thread beside libzstd's one-shot decoder
/// (`ZSTD_decompressDCtx` into a buffer of the declared size), whole
/// frames in memory: entropy stage, execution and checksum.
fn in_memory(section: &mut Section, frame: &Path, runs: usize) -> Result<()> {
    let input = std::fs::read(frame).doing_with(|| format!("reading {}", frame.display()))?;
    let mut libzstd = zstdkit::Decompressor::new()?;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        // A fresh output on both sides, as a one-shot call has it: each
        // pays the same page faults.
        let mut buf = Vec::new();
        let t = Instant::now();
        let n = libzstd.decompress_into(&input, &mut buf)?;
        theirs.push(t.elapsed());
        let t = Instant::now();
        let decoded = zstdblock::decode_all(&input, 1 << 31)
            .map_err(|e| Error::Mismatch(format!("perfkit's block decoder: {e}")))?;
        ours.push(t.elapsed());
        if decoded.len() != n || decoded != buf {
            return Err(Error::Mismatch(
                "perfkit's block decoder and libzstd decode the frame differently".into(),
            ));
        }
    }
    let (o, t) = (median(&ours), median(&theirs));
    let rate = |d: Duration| SIZE as f64 / 1e6 / d.as_secs_f64();
    section.row(
        Row::new("in memory, one thread: perfkit's block decoder")
            .col("throughput_mb_s", Value::num(rate(o), 1))
            .col("wall_ms", Value::num(o.as_secs_f64() * 1e3, 1))
            .col(
                "vs_libzstd",
                Value::num(t.as_secs_f64() / o.as_secs_f64(), 3),
            ),
    );
    section.row(
        Row::new("in memory, one thread: libzstd one-shot (ZSTD_decompressDCtx)")
            .col("throughput_mb_s", Value::num(rate(t), 1))
            .col("wall_ms", Value::num(t.as_secs_f64() * 1e3, 1)),
    );
    Ok(())
}
