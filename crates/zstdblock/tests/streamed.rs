//! The pipeline reading its input as it goes
//! ([`Parallel::decode_reader`]): whatever sizes the reader's reads come
//! in, the output is the data compressed and the errors are the
//! one-thread path's on the whole input; a failing read stops it with
//! that error; and its memory does not grow with the input's length.

mod common;

use std::io::{self, Read, Write};
use std::process::Command;

use common::*;
use zstd_safe::CParameter;
use zstdblock::StreamError;
use zstdblock::parallel::Parallel;

/// Hands out `data` in reads of sizes cycling through odd small and large
/// counts, so headers, blocks and checksums are split across reads every
/// way; fails with "device gone" past `fail_at` bytes.
struct Choppy<'a> {
    data: &'a [u8],
    at: usize,
    turn: usize,
    fail_at: usize,
}

impl Read for Choppy<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        const SIZES: [usize; 8] = [1, 2, 3, 7, 100, 4096, 70_000, 300_000];
        if self.at >= self.fail_at {
            return Err(io::Error::other("device gone"));
        }
        let size = SIZES[self.turn % SIZES.len()];
        self.turn += 1;
        let n = size
            .min(buf.len())
            .min(self.data.len() - self.at)
            .min(self.fail_at - self.at);
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn choppy(data: &[u8]) -> Choppy<'_> {
    Choppy {
        data,
        at: 0,
        turn: 0,
        fail_at: usize::MAX,
    }
}

fn skippable(size: usize) -> Vec<u8> {
    let mut frame = 0x184D_2A53u32.to_le_bytes().to_vec();
    frame.extend_from_slice(&(size as u32).to_le_bytes());
    frame.extend(std::iter::repeat_n(0xAB, size));
    frame
}

/// Frames of every block kind, more than the probe long: skippable frames
/// (one longer than a read-ahead), compressed blocks with a checksum, raw
/// blocks, RLE blocks; and the data they hold.
fn mixed_stream() -> (Vec<u8>, Vec<u8>) {
    let text = source_text(1 << 20);
    let noise = random(3 << 19, 7);
    let rle = runs(1 << 20);
    let small = [CParameter::MaxBlockSize(4096)];
    let mut stream = skippable(200_000);
    stream.extend(compress_with(
        &text,
        &[
            CParameter::CompressionLevel(3),
            CParameter::ChecksumFlag(true),
            small[0],
        ],
    ));
    stream.extend(compress_with(&noise, &[CParameter::CompressionLevel(1)]));
    stream.extend(skippable(10));
    stream.extend(compress_with(
        &rle,
        &[
            CParameter::CompressionLevel(19),
            CParameter::ChecksumFlag(true),
        ],
    ));
    let data = [text, noise, rle].concat();
    (stream, data)
}

fn settings(threads: usize) -> Parallel {
    let mut settings = Parallel::new(threads, WINDOW_LIMIT);
    settings.min_input = 0;
    settings
}

#[test]
fn reads_of_any_size_decode_the_data_and_fail_as_one_thread_does() {
    let (stream, data) = mixed_stream();
    // Longer than the probe one thread reads (more threads read none):
    // every thread count takes the pipeline.
    assert!(
        stream.len() > settings(1).probe(),
        "the stream takes the pipeline"
    );
    for threads in [1, 2, 4] {
        let mut out = Vec::new();
        let done = settings(threads)
            .decode_reader(choppy(&stream), &mut out)
            .unwrap();
        assert!(done.pipelined);
        assert_eq!(done.bytes, data.len() as u64);
        assert!(out == data, "{threads} threads");
    }
    // Damage past the probe (and a few bytes before it): a flipped byte
    // every 97 KiB, a cut every 61 KiB (inside skippable frames, headers,
    // blocks and checksums alike), and the checksums.
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for at in (1 << 20..stream.len()).step_by(97 << 10) {
        let mut damaged = stream.clone();
        damaged[at] ^= 0x5A;
        cases.push(damaged);
    }
    for at in (1 << 20..stream.len()).step_by(61 << 10) {
        cases.push(stream[..at].to_vec());
    }
    let mut end = stream.clone();
    let n = end.len();
    end[n - 2] ^= 1;
    cases.push(end);
    cases.push(stream[..n - 2].to_vec());
    let mut failures = 0;
    for (i, damaged) in cases.iter().enumerate() {
        let one = zstdblock::decode_all(damaged, WINDOW_LIMIT);
        let mut out = Vec::new();
        let streamed = settings(2).decode_reader(choppy(damaged), &mut out);
        match (&streamed, &one) {
            (Err(StreamError::Decode(e)), Err(expected)) => {
                assert_eq!(e, expected, "case {i}");
                assert!(data.starts_with(&out), "case {i}: wrote other bytes");
                failures += 1;
            }
            (Ok(_), Ok(bytes)) => assert!(&out == bytes, "case {i}"),
            _ => panic!("case {i}: streamed {streamed:?}, one thread {one:?}"),
        }
    }
    assert!(failures > 15, "most damage is found ({failures})");
}

#[test]
fn a_failing_read_stops_the_decode_with_its_error() {
    let (stream, data) = mixed_stream();
    for fail_at in [(1 << 20) + 5, stream.len() / 2, stream.len() - 1] {
        let mut reader = choppy(&stream);
        reader.fail_at = fail_at;
        let mut out = Vec::new();
        match settings(2).decode_reader(reader, &mut out) {
            Err(StreamError::Input(e)) => {
                assert_eq!(e.to_string(), "device gone");
                assert!(out.len() < data.len() && data.starts_with(&out));
            }
            other => panic!("fail at {fail_at}: {other:?}"),
        }
    }
    // Within the probe, too.
    let mut reader = choppy(&stream);
    reader.fail_at = 1000;
    let err = settings(2)
        .decode_reader(reader, &mut io::sink())
        .unwrap_err();
    assert_eq!(err.to_string(), "reading the input: device gone");
}

/// A reader that breaks `Read`'s contract past `honest` bytes: it says it
/// read more than the buffer it was given.
struct Lying<'a> {
    data: &'a [u8],
    honest: usize,
}

impl io::Read for Lying<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.honest == 0 {
            return Ok(buf.len() + 1);
        }
        let n = buf.len().min(self.data.len()).min(self.honest);
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        self.honest -= n;
        Ok(n)
    }
}

#[test]
fn a_reader_claiming_more_than_it_was_given_stops_the_decode_not_the_process() {
    let (stream, data) = mixed_stream();
    // On two threads with nothing to decide the pipeline reads first; on
    // one thread, or with the default threshold, the probe does.
    let ways = || [settings(2), settings(1), Parallel::new(2, WINDOW_LIMIT)];
    for (honest, parallel) in [0, 1 << 20, stream.len() / 2]
        .into_iter()
        .flat_map(|h| ways().map(|p| (h, p)))
    {
        let reader = Lying {
            data: &stream,
            honest,
        };
        let mut out = Vec::new();
        match parallel.decode_reader(reader, &mut out) {
            Err(StreamError::Input(e)) => {
                assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}");
                assert!(out.len() < data.len() && data.starts_with(&out));
            }
            other => panic!("honest for {honest} bytes, {parallel:?}: {other:?}"),
        }
    }
}

/// A frame of raw blocks `mib` MiB long, made as it is read: the input is
/// as long as the output, and only the reader's 128 KiB is in memory.
struct RawFrame {
    head: Vec<u8>,
    block: Vec<u8>,
    blocks_left: usize,
    at: usize,
}

impl RawFrame {
    fn new(mib: usize) -> Self {
        // A frame with an 8 MiB window (zstd -19's), no content size and
        // no checksum, after a compressed frame so the whole pipeline runs.
        let mut head = compress_with(&source_text(1 << 20), &[CParameter::CompressionLevel(19)]);
        head.extend_from_slice(&zstdblock::MAGIC.to_le_bytes());
        head.extend_from_slice(&[0x00, 13 << 3]);
        let size = 128 << 10;
        let mut block = ((size << 3) as u32).to_le_bytes()[..3].to_vec();
        block.extend(random(size, 11));
        RawFrame {
            head,
            block,
            blocks_left: mib * 8,
            at: 0,
        }
    }
}

impl Read for RawFrame {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.head.is_empty() {
            let n = buf.len().min(self.head.len());
            buf[..n].copy_from_slice(&self.head[..n]);
            self.head.drain(..n);
            return Ok(n);
        }
        if self.blocks_left == 0 {
            return Ok(0);
        }
        if self.blocks_left == 1 && self.at == 0 {
            self.block[0] |= 1; // the last block
        }
        let n = buf.len().min(self.block.len() - self.at);
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        if self.at == self.block.len() {
            self.at = 0;
            self.blocks_left -= 1;
        }
        Ok(n)
    }
}

/// Peak resident set size of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

const CHILD: &str = "ZSTDBLOCK_STREAMED_MIB";

#[test]
fn memory_does_not_grow_with_the_input() {
    // The child: decode a frame of the size asked, say the peak.
    if let Ok(mib) = std::env::var(CHILD) {
        let mib: usize = mib.parse().unwrap();
        let mut out = Counting(0);
        let done = settings(2)
            .decode_reader(RawFrame::new(mib), &mut out)
            .unwrap();
        assert_eq!(out.0, ((mib + 1) << 20) as u64);
        assert!(done.pipelined);
        println!("peak {} KiB", peak_rss_kib());
        return;
    }
    let peak = |mib: usize| -> u64 {
        let run = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "memory_does_not_grow_with_the_input",
                "--nocapture",
            ])
            .env(CHILD, mib.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success(),
            "{stdout}{}",
            String::from_utf8_lossy(&run.stderr)
        );
        let line = stdout.lines().find(|l| l.starts_with("peak ")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let (small, large) = (peak(64), peak(512));
    println!("peak RSS {small} KiB for 64 MiB, {large} KiB for 512 MiB");
    // The input held is the blocks in flight, a few MiB whatever the
    // length; holding the input (or the output) would add 448 MiB.
    assert!(
        large < small + (16 << 10),
        "peak RSS {small} KiB for 64 MiB, {large} KiB for 512 MiB"
    );
}

/// Counts the bytes written, keeps none.
struct Counting(u64);

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
