//! One frame decoded to a writer: `zstd -d` (the CLI), libzstd streaming,
//! zstdblock on one thread and zstdblock's pipeline on 2 threads, in
//! turn, to `io::sink()` and to a file; the median wall and CPU time of
//! each (CPU: this process's threads and waited-for children, in 10 ms
//! ticks, so each sample repeats the decode for about 1 s).
//!
//! `cargo run --release -p zstdblock --example pipeline -- FILE.zst [ROUNDS] [OUT_DIR]`
//!
//! `... --example pipeline -- --rss FILE.zst [THREADS]` decodes once to
//! `io::sink()` and prints the peak RSS the decode added to the input;
//! `--rss-stream FILE.zst [THREADS]` decodes it read as it goes
//! (`Parallel::decode_reader`) and prints the process's peak RSS.
//!
//! `... --example pipeline -- --pair FILE.zst [ROUNDS]` decodes it with
//! libzstd on one thread, alone and then as two such decodes at once on
//! two threads, ROUNDS times (11), and prints the median wall of a
//! decode each way: what a second busy core costs the first (shared
//! caches, memory and, on a VM, the host), which bounds what any two
//! threads can gain here.
//!
//! `... --example pipeline -- --stages FILE.zst [THREADS] [REPS] [OUT]`
//! decodes it REPS times (9) to `io::sink()`, or to a new file at OUT each
//! time (without the space reservation `perfkit decompress -o` makes),
//! through the pipeline, timing its
//! stages (`Parallel::decode_timed`), and prints the median of each
//! stretch: what each stage spent working and waiting.

use std::io::Write;
use std::time::{Duration, Instant};

/// The process's CPU time so far, its own threads' (live and ended) and
/// its waited-for children's.
fn cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("stat");
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')').expect("stat") + 2..];
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|f| f.parse().expect("ticks"))
        .collect();
    // USER_HZ is 100 on Linux.
    Duration::from_millis(fields.iter().sum::<u64>() * 10)
}

/// Peak resident set size so far, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kib: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .expect("VmHWM value");
    kib * 1024
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Where a decode writes.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Sink,
    File,
}

fn open(target: Target, dir: &str) -> Box<dyn Write> {
    match target {
        Target::Sink => Box::new(std::io::sink()),
        Target::File => Box::new(std::io::BufWriter::with_capacity(
            1 << 17,
            std::fs::File::create(format!("{dir}/zstdblock-pipeline.out")).expect("output"),
        )),
    }
}

/// libzstd's streaming decoder, as `zstd -d` uses it: 128 KiB buffers.
fn libzstd_stream(input: &[u8], out: &mut dyn Write) {
    let mut dctx = zstd_safe::DCtx::create();
    let mut buf = vec![0u8; zstd_safe::DCtx::out_size()];
    let mut src = zstd_safe::InBuffer::around(input);
    loop {
        let mut dst = zstd_safe::OutBuffer::around(&mut buf[..]);
        let hint = dctx.decompress_stream(&mut dst, &mut src).expect("libzstd");
        let n = dst.pos();
        out.write_all(&buf[..n]).expect("write");
        // Done when the last frame is flushed, or nothing moves.
        let consumed = src.pos() == input.len();
        if consumed && (n == 0 || (hint == 0 && n < buf.len())) {
            break;
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--skip") {
        // What a range's inherited tables cost: skip_block over every
        // block against the entropy stage of every block.
        let input = std::fs::read(&args[1]).expect("reading the input");
        let frames = zstdblock::walk(&input, 1 << 31).expect("walk");
        let blocks: Vec<_> = frames
            .iter()
            .flat_map(|f| f.blocks.iter())
            .filter(|b| b.kind == zstdblock::BlockKind::Compressed)
            .collect();
        for _ in 0..3 {
            let t = Instant::now();
            let mut state = zstdblock::EntropyState::default();
            for b in &blocks {
                zstdblock::skip_block(&input, b, &mut state).unwrap();
            }
            let skip = t.elapsed();
            let t = Instant::now();
            let mut state = zstdblock::EntropyState::default();
            let mut decoded = zstdblock::DecodedBlock::default();
            for b in &blocks {
                zstdblock::decode_block(&input, b, &mut state, &mut decoded).unwrap();
            }
            println!(
                "{} blocks: skip {:?}, entropy {:?}",
                blocks.len(),
                skip,
                t.elapsed()
            );
        }
        return;
    }
    if args.first().map(String::as_str) == Some("--stages") {
        stages(&args[1..]);
        return;
    }
    if args.first().map(String::as_str) == Some("--pair") {
        pair(&args[1..]);
        return;
    }
    if args.first().map(String::as_str) == Some("--rss-stream") {
        // The whole process's peak: nothing is held but what the
        // decode holds, the input read from the file as it goes.
        let file = std::fs::File::open(&args[1]).expect("opening the input");
        let threads = args.get(2).map_or(2, |t| t.parse().expect("THREADS"));
        let t = Instant::now();
        let decoded = zstdblock::parallel::Parallel::new(threads, 1 << 31)
            .decode_reader(file, &mut std::io::sink())
            .expect("decoding");
        eprintln!("{:?} a decode", t.elapsed());
        println!(
            "{}: {} bytes out, {threads} threads, pipelined {}, read as it goes: peak RSS {:.1} MiB",
            args[1],
            decoded.bytes,
            decoded.pipelined,
            peak_rss() as f64 / 1048576.0
        );
        return;
    }
    if args.first().map(String::as_str) == Some("--rss") {
        let input = std::fs::read(&args[1]).expect("reading the input");
        let threads = args.get(2).map_or(2, |t| t.parse().expect("THREADS"));
        let reps: usize = args.get(3).map_or(1, |r| r.parse().expect("REPS"));
        let before = peak_rss();
        let t = Instant::now();
        let mut decoded = None;
        for _ in 0..reps {
            decoded = Some(
                zstdblock::parallel::Parallel::new(threads, 1 << 31)
                    .decode(&input, &mut std::io::sink())
                    .expect("decoding"),
            );
        }
        let decoded = decoded.expect("REPS > 0");
        eprintln!("{:?} a decode", t.elapsed() / reps as u32);
        let after = peak_rss();
        println!(
            "{}: {} bytes out, {threads} threads, pipelined {}: peak RSS {:.1} MiB with the input, {:.1} MiB added by the decode",
            args[1],
            decoded.bytes,
            decoded.pipelined,
            after as f64 / 1048576.0,
            after.saturating_sub(before) as f64 / 1048576.0
        );
        return;
    }
    let path = args
        .first()
        .expect("usage: pipeline FILE.zst [ROUNDS] [OUT_DIR]");
    let rounds: usize = args.get(1).map_or(5, |r| r.parse().expect("ROUNDS"));
    let dir = args.get(2).map_or("/tmp", String::as_str);
    let input = std::fs::read(path).expect("reading the input");
    let limit = 1u64 << 31;
    let mut dctx = zstd_safe::DCtx::create();
    let mut reference = Vec::new();
    libzstd_stream(&input, &mut reference);
    let mut ours = Vec::new();
    zstdblock::parallel::Parallel::new(2, limit)
        .decode(&input, &mut ours)
        .expect("decoding");
    assert!(ours == reference, "zstdblock and libzstd disagree");
    let size = reference.len();
    drop((ours, reference));

    type Run<'a> = Box<dyn FnMut(Target) + 'a>;
    let input = &input;
    let mut variants: Vec<(&str, Run)> = vec![
        (
            "zstd -d (CLI)",
            Box::new(|target| {
                let out = match target {
                    Target::Sink => "/dev/null".to_owned(),
                    Target::File => format!("{dir}/zstdblock-pipeline.out"),
                };
                let status = std::process::Command::new("zstd")
                    .args(["-q", "-d", "-f", path, "-o", &out])
                    .status()
                    .expect("zstd");
                assert!(status.success());
            }),
        ),
        (
            "libzstd one-shot",
            Box::new(|target| {
                let mut buf = Vec::with_capacity(size);
                dctx.decompress(&mut buf, input).expect("libzstd");
                open(target, dir).write_all(&buf).expect("write");
            }),
        ),
        (
            "libzstd stream",
            Box::new(|target| libzstd_stream(input, &mut *open(target, dir))),
        ),
        (
            "zstdblock 1 thread",
            Box::new(|target| {
                zstdblock::parallel::Parallel::new(1, limit)
                    .decode(input, &mut open(target, dir))
                    .expect("decode");
            }),
        ),
        (
            "zstdblock 2 threads",
            Box::new(|target| {
                zstdblock::parallel::Parallel::new(2, limit)
                    .decode(input, &mut open(target, dir))
                    .expect("decode");
            }),
        ),
    ];
    let probe = Instant::now();
    (variants[3].1)(Target::Sink);
    let reps = (1000 / probe.elapsed().as_millis().max(1)).clamp(1, 100) as u32;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "{path}: {} -> {size} bytes, median of {rounds} interleaved rounds of {reps} decodes; load before: {}",
        input.len(),
        load.trim()
    );
    for target in [Target::Sink, Target::File] {
        let mut samples = vec![(Vec::new(), Vec::new()); variants.len()];
        for _ in 0..rounds {
            for (i, (_, run)) in variants.iter_mut().enumerate() {
                let (wall0, cpu0) = (Instant::now(), cpu());
                for _ in 0..reps {
                    run(target);
                }
                samples[i].0.push(wall0.elapsed() / reps);
                samples[i].1.push((cpu() - cpu0) / reps);
            }
        }
        println!(
            "to {}:",
            if target == Target::Sink {
                "io::sink (zstd -d: /dev/null)"
            } else {
                "a file"
            }
        );
        let cli_wall = median(&mut samples[0].0.clone());
        let one_wall = median(&mut samples[3].0.clone());
        for (i, (name, _)) in variants.iter().enumerate() {
            let wall = median(&mut samples[i].0);
            let cpu = median(&mut samples[i].1);
            println!(
                "  {name:<20} wall {:>7.1} ms  CPU {:>7.1} ms  {:>6.0} MB/s  x{:.2} zstd -d  x{:.2} zstdblock 1 thread",
                wall.as_secs_f64() * 1e3,
                cpu.as_secs_f64() * 1e3,
                size as f64 / wall.as_secs_f64() / 1e6,
                cli_wall.as_secs_f64() / wall.as_secs_f64(),
                one_wall.as_secs_f64() / wall.as_secs_f64(),
            );
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("load after: {}", load.trim());
    let _ = std::fs::remove_file(format!("{dir}/zstdblock-pipeline.out"));
}

/// `--stages FILE.zst [THREADS] [REPS]`: the median of each stretch of
/// the pipeline's stages over REPS decodes.
fn stages(args: &[String]) {
    let input = std::fs::read(&args[0]).expect("reading the input");
    let threads = args.get(1).map_or(2, |t| t.parse().expect("THREADS"));
    let reps: usize = args.get(2).map_or(9, |r| r.parse().expect("REPS"));
    // A new file each decode, as a user's `-o` makes one; the last one
    // removed first, untimed.
    let out = args.get(3);
    let parallel = zstdblock::parallel::Parallel {
        min_input: 0,
        ..zstdblock::parallel::Parallel::new(threads, 1 << 31)
    };
    let runs: Vec<zstdblock::parallel::StageTimes> = (0..reps)
        .map(|_| {
            let mut sink: Box<dyn Write> = match out {
                Some(path) => {
                    let _ = std::fs::remove_file(path);
                    Box::new(std::fs::File::create(path).expect("output"))
                }
                None => Box::new(std::io::sink()),
            };
            let (_, times) = parallel.decode_timed(&input, &mut sink).expect("decoding");
            times.expect("the pipeline ran")
        })
        .collect();
    type Field = fn(&zstdblock::parallel::StageTimes) -> Duration;
    let rows: [(&str, Field); 12] = [
        ("wall", |t| t.wall),
        ("until the first execution", |t| t.until_first_execution),
        ("executor: executing (wall)", |t| t.executing),
        ("executor: executing (its CPU)", |t| t.executing_cpu),
        ("executor: decoding a range itself", |t| t.executor_decoding),
        ("executor: waiting for a range", |t| {
            t.executor_waiting_for_ranges
        }),
        ("executor: waiting for the writer", |t| {
            t.executor_waiting_for_writer
        }),
        ("workers: decoding", |t| t.workers_decoding),
        ("workers: waiting for buffers", |t| {
            t.workers_waiting_for_buffers
        }),
        ("workers: waiting for a range", |t| {
            t.workers_waiting_for_ranges
        }),
        ("writer: waiting for output", |t| t.writer_waiting),
        ("writer: faulting the ring in", |t| t.writer_faulting_ahead),
    ];
    println!(
        "{}: {threads} workers, medians of {reps} decodes to {} (ms; stages' threads summed)",
        args[0],
        out.map_or("a sink", String::as_str)
    );
    for (name, field) in rows {
        let mut values: Vec<Duration> = runs.iter().map(field).collect();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        values.sort();
        println!(
            "  {name:<36} {:>8.2}  [{:.2}-{:.2}]",
            ms(values[values.len() / 2]),
            ms(values[0]),
            ms(values[values.len() - 1])
        );
    }
}

/// `--pair FILE.zst [ROUNDS]`: a libzstd decode alone against each of
/// two run at once (see the module doc).
fn pair(args: &[String]) {
    let input = std::fs::read(&args[0]).expect("reading the input");
    let rounds: usize = args.get(1).map_or(11, |r| r.parse().expect("ROUNDS"));
    let decode = || {
        let t = Instant::now();
        libzstd_stream(&input, &mut std::io::sink());
        t.elapsed()
    };
    let (mut alone, mut together, mut ratios) = (vec![], vec![], vec![]);
    for _ in 0..rounds {
        let a = decode();
        let (b, c) = std::thread::scope(|s| {
            let other = s.spawn(decode);
            let mine = decode();
            (mine, other.join().expect("the other decode"))
        });
        let both = (b + c) / 2;
        alone.push(a);
        together.push(both);
        ratios.push(both.as_secs_f64() / a.as_secs_f64());
    }
    ratios.sort_by(f64::total_cmp);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{}: libzstd on one thread, median of {rounds} rounds: alone {:.2} ms, each of two at once {:.2} ms, ratio {:.3} [{:.3}-{:.3}]",
        args[0],
        ms(median(&mut alone)),
        ms(median(&mut together)),
        ratios[rounds / 2],
        ratios[0],
        ratios[rounds - 1]
    );
}
