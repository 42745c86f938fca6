//! Whole frames decoded in memory by zstdblock and by libzstd's one-shot
//! `ZSTD_decompressDCtx`, in turn, on one thread: the median CPU time of
//! each, their ratio, the entropy stage's share of zstdblock's time, and
//! the execution stage alone (every block decoded beforehand, executed
//! into two output buffers reused as the pipeline's executor reuses them,
//! so neither page faults nor the checksum are counted).
//!
//! `cargo run --release -p zstdblock --example throughput -- FILE.zst [ROUNDS]`
//!
//! The kernel may account CPU time in scheduler ticks (4 ms here), so each
//! sample repeats a decode until it has taken about 400 ms.

use std::time::Duration;

/// This thread's CPU time, from the scheduler's accounting.
fn cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    let ns: u64 = text.split_whitespace().next().unwrap().parse().unwrap();
    Duration::from_nanos(ns)
}

/// CPU time per call of `f`, over `reps` calls.
fn timed(reps: u32, mut f: impl FnMut()) -> Duration {
    let start = cpu();
    for _ in 0..reps {
        f();
    }
    (cpu() - start) / reps
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: throughput FILE.zst [ROUNDS]");
    let rounds: usize = args.next().map_or(7, |r| r.parse().expect("ROUNDS"));
    let input = std::fs::read(&path).expect("reading the input");
    let limit = 1u64 << 31;
    let frames = zstdblock::walk(&input, limit).expect("walking");
    let expected = zstdblock::decode_all(&input, limit).expect("decoding");
    let size = expected.len();
    let mut dctx = zstd_safe::DCtx::create();
    let mut reference = Vec::with_capacity(size);
    dctx.decompress(&mut reference, &input).expect("libzstd");
    assert!(reference == expected, "zstdblock and libzstd disagree");
    drop((reference, expected));
    let blocks: usize = frames.iter().map(|f| f.blocks.len()).sum();

    let ours_once = || {
        let out = zstdblock::decode_all(&input, limit).unwrap();
        assert!(out.len() == size);
    };
    let mut theirs_once = || {
        let mut out = Vec::with_capacity(size);
        dctx.decompress(&mut out, &input).expect("libzstd");
        assert!(out.len() == size);
    };
    // The entropy stage alone: every block's literals and sequences.
    let mut block = zstdblock::DecodedBlock::default();
    let mut entropy_once = || {
        for frame in &frames {
            let mut state = zstdblock::EntropyState::default();
            for b in frame
                .blocks
                .iter()
                .filter(|b| b.kind == zstdblock::BlockKind::Compressed)
            {
                zstdblock::decode_block(&input, b, &mut state, &mut block).unwrap();
            }
        }
    };
    // Execution alone: every block's literals and sequences decoded once,
    // then executed in each timed call into one buffer, emptied after
    // each call, so after the first call its pages are already faulted in
    // (as the pipeline's ring's are).
    let mut decoded = Vec::new();
    for frame in &frames {
        let mut state = zstdblock::EntropyState::default();
        for b in &frame.blocks {
            let mut d = zstdblock::DecodedBlock::default();
            if b.kind == zstdblock::BlockKind::Compressed {
                zstdblock::decode_block(&input, b, &mut state, &mut d).unwrap();
            }
            decoded.push(d);
        }
    }
    let mut out = zstdblock::Output::with_capacity(size);
    let mut execution_once = || {
        let mut next = decoded.iter();
        for frame in &frames {
            let zstdblock::FrameKind::Zstd(header) = &frame.kind else {
                continue;
            };
            let start = out.position();
            let mut repeats = zstdblock::INITIAL_REPEATS;
            for (b, d) in frame.blocks.iter().zip(&mut next) {
                match b.kind {
                    zstdblock::BlockKind::Raw => out.push_raw(&input[b.content.clone()]),
                    zstdblock::BlockKind::Rle => {
                        out.push_rle(input[b.content.start], b.known_size.unwrap_or(0))
                    }
                    _ => out
                        .execute_resolving(d, &mut repeats, b, start, header.window_size)
                        .unwrap(),
                }
            }
        }
        assert!(out.len() == size);
        out.drain(0, |_| Ok::<(), ()>(())).unwrap();
    };
    let probe = timed(1, ours_once).max(Duration::from_millis(1));
    let reps = (400 / probe.as_millis().max(1)).clamp(1, 1000) as u32;
    let (mut ours, mut theirs, mut entropy) = (Vec::new(), Vec::new(), Vec::new());
    let mut execution = Vec::new();
    execution_once();
    for _ in 0..rounds {
        ours.push(timed(reps, ours_once));
        theirs.push(timed(reps, &mut theirs_once));
        entropy.push(timed(reps, &mut entropy_once));
        execution.push(timed(reps, &mut execution_once));
    }
    let spread = |v: &[Duration]| {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        (ms(v[0]), ms(v[v.len() - 1]))
    };
    let (ours, theirs, entropy) = (median(&mut ours), median(&mut theirs), median(&mut entropy));
    let execution_range = {
        execution.sort();
        spread(&execution)
    };
    let execution = median(&mut execution);
    let rate = |t: Duration| size as f64 / t.as_secs_f64() / 1e6;
    println!(
        "{path}: {} -> {} bytes, {} frames, {blocks} blocks, median of {rounds} CPU times of {reps} decodes",
        input.len(),
        size,
        frames.len()
    );
    println!(
        "libzstd one-shot  {:>8.1} ms  {:>7.0} MB/s",
        theirs.as_secs_f64() * 1e3,
        rate(theirs)
    );
    println!(
        "zstdblock         {:>8.1} ms  {:>7.0} MB/s",
        ours.as_secs_f64() * 1e3,
        rate(ours)
    );
    println!(
        "  entropy stage   {:>8.1} ms  ({:.0} % of zstdblock)",
        entropy.as_secs_f64() * 1e3,
        100.0 * entropy.as_secs_f64() / ours.as_secs_f64()
    );
    println!(
        "  execution alone {:>8.1} ms  (reused buffers; {:.1}-{:.1} ms over the rounds)",
        execution.as_secs_f64() * 1e3,
        execution_range.0,
        execution_range.1
    );
    println!(
        "ratio zstdblock / libzstd throughput: {:.2}",
        theirs.as_secs_f64() / ours.as_secs_f64()
    );
}
