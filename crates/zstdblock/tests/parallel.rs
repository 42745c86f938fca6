//! The parallel pipeline's behaviour beyond its output (which
//! tests/differential.rs checks against libzstd on every case): corrupt
//! input ends in the one-thread path's error and never hangs, a failing
//! writer stops every stage, small or stored inputs start no thread, and
//! a block's buffers are made once, not grown block by block.

mod common;

use std::io::Write;
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use zstd_safe::CParameter;
use zstdblock::StreamError;
use zstdblock::parallel::Parallel;

/// Long enough for a debug build on a busy machine; a hang is forever.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Runs `f` on its own thread and fails the test if it takes longer than
/// [`TIMEOUT`] (a stage waiting on one that is gone).
fn within_timeout<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(TIMEOUT)
        .unwrap_or_else(|e| panic!("{what}: no answer in {TIMEOUT:?} ({e})"))
}

fn pipelined(threads: usize) -> Parallel {
    let mut settings = Parallel::new(threads, WINDOW_LIMIT);
    settings.min_input = 0;
    settings
}

/// A frame of many small blocks, so a range is in every worker and many
/// wait behind a fault.
fn many_blocks(level: i32, checksum: bool) -> (Vec<u8>, Vec<u8>) {
    let text = source_text(1 << 20);
    let frame = compress_with(
        &text,
        &[
            CParameter::CompressionLevel(level),
            CParameter::ChecksumFlag(checksum),
            CParameter::MaxBlockSize(4096),
        ],
    );
    (text, frame)
}

#[test]
fn corrupt_blocks_anywhere_end_in_the_one_thread_error_and_never_hang() {
    for (level, checksum) in [(3, true), (19, false)] {
        let (text, frame) = many_blocks(level, checksum);
        let blocks = zstdblock::walk(&frame, WINDOW_LIMIT).unwrap()[0]
            .blocks
            .clone();
        assert!(blocks.len() > 100);
        let frame = std::sync::Arc::new(frame);
        // A flipped byte in blocks spread over the frame, a truncation
        // inside a block, and the checksum.
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for block in blocks.iter().step_by(blocks.len() / 12) {
            let mut damaged = frame.to_vec();
            damaged[block.content.start + block.content.len() / 2] ^= 0x5A;
            cases.push(damaged);
            let mut header = frame.to_vec();
            header[block.header] ^= 0x06;
            cases.push(header);
            cases.push(frame[..block.content.start + 2].to_vec());
        }
        if checksum {
            let mut damaged = frame.to_vec();
            let n = damaged.len();
            damaged[n - 1] ^= 1;
            cases.push(damaged);
        }
        for (i, damaged) in cases.into_iter().enumerate() {
            let name = format!("level {level} case {i}");
            let one = zstdblock::decode_all(&damaged, WINDOW_LIMIT);
            let mut prefix = Vec::new();
            let _ = zstdblock::decode_to(&damaged, WINDOW_LIMIT, |b| {
                prefix.extend_from_slice(b);
                Ok::<(), ()>(())
            });
            for threads in [2, 4] {
                let damaged = damaged.clone();
                let (result, written) = within_timeout(&name, move || {
                    let mut written = Vec::new();
                    let result = pipelined(threads).decode(&damaged, &mut written);
                    (result, written)
                });
                match (&result, &one) {
                    (Err(StreamError::Decode(e)), Err(expected)) => {
                        assert_eq!(e, expected, "{name}, {threads} threads");
                        // Only bytes one thread makes, in its order, before
                        // the fault (the two hand bytes on at other points).
                        let common = written.len().min(prefix.len());
                        assert!(
                            written[..common] == prefix[..common],
                            "{name}: {threads} threads wrote bytes one thread does not"
                        );
                        // Never the whole output, whichever stage found
                        // the fault (the writer, for a checksum): the
                        // frame's last bytes wait for its end's checks.
                        // The whole is the text's length, or, where the
                        // damage changed the frame's length (found at its
                        // end), what the frame made: a byte that made it
                        // one longer left the text's length written.
                        // (The one thread's error, which `e` equals.)
                        let whole = match expected {
                            zstdblock::Error::ContentSize { produced, .. } => *produced as usize,
                            _ => text.len(),
                        };
                        assert!(
                            written.len() < whole,
                            "{name}: {threads} threads wrote the whole output and failed"
                        );
                    }
                    (Ok(_), Ok(bytes)) => assert!(&written == bytes, "{name}"),
                    _ => panic!(
                        "{name}: {threads} threads {result:?}, one thread {:?}",
                        one.as_ref().map(Vec::len)
                    ),
                }
            }
        }
    }
}

/// A writer that fails once it has taken `limit` bytes, counting the
/// calls it gets after that.
struct FailingWriter {
    taken: usize,
    limit: usize,
    calls_after_failing: usize,
}

impl Write for FailingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.taken >= self.limit {
            self.calls_after_failing += 1;
            return Err(std::io::Error::other("disk full"));
        }
        self.taken += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn a_writer_that_fails_midway_stops_every_stage() {
    // Without a checksum the writer holds the only reference to the
    // buffer it fails on: dropped, not given back, it left the executor
    // waiting for it for ever.
    for checksum in [true, false] {
        let (text, frame) = many_blocks(3, checksum);
        // A 1 KiB window makes the output move on in 1 MiB chunks; the
        // text is 1 MiB, so use it four times in a row as four frames.
        let stream: Vec<u8> = (0..4).flat_map(|_| frame.iter().copied()).collect();
        let what = format!("failing writer, checksum {checksum}");
        let (result, writer) = within_timeout(&what, move || {
            let mut writer = FailingWriter {
                taken: 0,
                limit: 1,
                calls_after_failing: 0,
            };
            let result = pipelined(2).decode(&stream, &mut writer);
            (result, writer)
        });
        match result {
            Err(StreamError::Sink(e)) => assert_eq!(e.to_string(), "disk full"),
            other => panic!("{what}: {other:?}"),
        }
        // One failed call, and nothing handed to the writer after it.
        assert_eq!(writer.calls_after_failing, 1, "{what}");
        assert!(writer.taken <= text.len(), "{what}");
    }
}

#[test]
fn small_inputs_and_stored_blocks_stay_on_the_callers_thread() {
    let text = source_text(4 << 20);
    let big = cli(&text, &["-3"], false);
    let small = cli(&text[..64 << 10], &["-3"], false);
    let noise = random(4 << 20, 3);
    let stored = cli(&noise, &["-3"], false);
    let walked = zstdblock::walk(&stored, WINDOW_LIMIT).unwrap();
    assert!(
        walked[0]
            .blocks
            .iter()
            .all(|b| b.kind != zstdblock::BlockKind::Compressed)
    );
    assert!(big.len() > zstdblock::parallel::MIN_PARALLEL_INPUT);
    for (name, frame, data, pipelines) in [
        ("big", &big, &text, true),
        ("small", &small, &text[..64 << 10].to_vec(), false),
        ("stored", &stored, &noise, false),
    ] {
        for threads in [1, 2, 4] {
            let settings = Parallel::new(threads, WINDOW_LIMIT);
            let expected = pipelines && threads >= 2;
            assert_eq!(settings.pipelines(frame), expected, "{name} {threads}");
            let mut out = Vec::new();
            let decoded = settings.decode(frame, &mut out).unwrap();
            assert_eq!(decoded.pipelined, expected, "{name} {threads}");
            assert!(&out == data, "{name} {threads}");
        }
    }
}

#[test]
fn a_blocks_buffers_are_made_once_for_the_largest_block() {
    // A first block of one literal run and long matches, then text: the
    // later blocks have thousands of sequences and tens of kilobytes of
    // literals more than the first.
    let mut data = random(1024, 7).repeat(128);
    data.extend_from_slice(&source_text(512 << 10));
    let frame = compress_with(&data, &[CParameter::CompressionLevel(3)]);
    let frames = zstdblock::walk(&frame, WINDOW_LIMIT).unwrap();
    let blocks: Vec<_> = frames[0]
        .blocks
        .iter()
        .filter(|b| b.kind == zstdblock::BlockKind::Compressed)
        .collect();
    let mut state = zstdblock::EntropyState::default();
    let mut decoded = zstdblock::DecodedBlock::default();
    let mut seen = Vec::new();
    for block in &blocks {
        zstdblock::decode_block(&frame, block, &mut state, &mut decoded).unwrap();
        seen.push((
            decoded.sequences().len(),
            decoded.literals().len(),
            decoded.sequences().as_ptr(),
            decoded.literals().as_ptr(),
        ));
    }
    let (first_sequences, first_literals, sequences_at, literals_at) = seen[0];
    assert!(
        seen.iter()
            .any(|s| s.0 > 1000 + first_sequences && s.1 > 4 * first_literals),
        "no block larger than the first: {seen:?}"
    );
    // Grown as blocks come, each buffer would move (and fault its pages
    // in again); the pipeline holds such a pair for every block in flight.
    for (i, s) in seen.iter().enumerate() {
        assert_eq!(
            (s.2, s.3),
            (sequences_at, literals_at),
            "block {i} moved a buffer"
        );
    }
}

/// A wrong checksum, whether in the one frame or the last of several,
/// fails with the checksum error and leaves the writer short of the
/// whole output: the frame's last byte waits for the verdict.
#[test]
fn a_wrong_checksum_leaves_the_writer_short_of_the_whole_output() {
    let text = source_text(4 << 20);
    let one = cli(&text, &["-3"], false);
    let two = [cli(&text[..1 << 20], &["-3"], false), one.clone()].concat();
    for (name, mut input, expected) in [
        ("one frame", one, text.clone()),
        (
            "the last of two",
            two,
            [&text[..1 << 20], &text[..]].concat(),
        ),
    ] {
        let n = input.len();
        input[n - 1] ^= 1;
        for threads in [2, 4] {
            let mut written = Vec::new();
            let result = pipelined(threads).decode(&input, &mut written);
            assert!(
                matches!(
                    result,
                    Err(StreamError::Decode(zstdblock::Error::Checksum { .. }))
                ),
                "{name}, {threads} threads: {result:?}"
            );
            assert!(
                written.len() < expected.len() && expected.starts_with(&written),
                "{name}, {threads} threads: {} of {} bytes written",
                written.len(),
                expected.len()
            );
        }
    }
}

#[test]
fn a_timed_decode_says_where_each_stage_spent_its_time() {
    let (text, frame) = many_blocks(3, true);
    let mut out = Vec::new();
    let (decoded, times) = pipelined(2).decode_timed(&frame, &mut out).unwrap();
    assert!(out == text, "a timed decode decodes as any other");
    assert!(decoded.pipelined);
    let times = times.expect("the pipeline ran, so it was timed");
    // Every range was decoded by someone and executed by the executor;
    // each stretch lies within the decode (per stage thread).
    assert!(times.executing > Duration::ZERO);
    assert!(times.workers_decoding + times.executor_decoding > Duration::ZERO);
    assert!(times.until_first_execution > Duration::ZERO);
    assert!(times.until_first_execution <= times.wall);
    for single in [
        times.executing,
        times.executor_decoding,
        times.executor_waiting_for_ranges,
        times.executor_waiting_for_writer,
        times.writer_waiting,
        times.writer_faulting_ahead,
    ] {
        assert!(single <= times.wall, "{times:?}");
    }
    for both_workers in [
        times.workers_decoding,
        times.workers_waiting_for_buffers,
        times.workers_waiting_for_ranges,
    ] {
        assert!(both_workers <= 2 * times.wall, "{times:?}");
    }
    // Not pipelined (below the default minimum), not timed.
    let small = compress_with(b"a few bytes", &[CParameter::CompressionLevel(3)]);
    let (decoded, times) = Parallel::new(2, WINDOW_LIMIT)
        .decode_timed(&small, &mut Vec::new())
        .unwrap();
    assert!(!decoded.pipelined && times.is_none());
}
