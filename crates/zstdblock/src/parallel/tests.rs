//! The pipeline's own tests: its fault point, and the stages' ends.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use zstd_safe::{CCtx, CParameter};

use super::*;

thread_local! {
    /// Set on the workers' threads, so the fault point fires on a
    /// worker, not on the executor when it decodes a range itself.
    pub(super) static IN_WORKER: Cell<bool> = const { Cell::new(false) };
    /// The fault point fires on the first unit from this number on that a
    /// worker decodes, once: set on a test's thread, and given by each
    /// pipeline it starts to that pipeline's workers, so that the other
    /// tests' pipelines, running beside it, never fire it.
    pub(super) static FAULT_FROM: Cell<Option<u64>> = const { Cell::new(None) };
}
static FIRED: AtomicBool = AtomicBool::new(false);

pub(super) fn fault_point(seq: u64) {
    if IN_WORKER.get()
        && FAULT_FROM.get().is_some_and(|from| seq >= from)
        && !FIRED.swap(true, Ordering::SeqCst)
    {
        panic!("fault point: a worker panics in the entropy stage of unit {seq}");
    }
}

/// One frame of 256 blocks of 4 KiB (32 ranges).
fn frame_of_many_ranges() -> Vec<u8> {
    let text: Vec<u8> = (0..1u32 << 20)
        .map(|i| b"abcdefgh"[(i.wrapping_mul(2_654_435_761) >> 29) as usize])
        .collect();
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
    cctx.set_parameter(CParameter::MaxBlockSize(4096)).unwrap();
    let mut frame = vec![0u8; zstd_safe::compress_bound(text.len())];
    let n = cctx.compress2(&mut frame[..], &text).unwrap();
    frame.truncate(n);
    frame
}

/// `f` run on a thread of its own: what it returned, or its panic; a
/// failure if it has not returned in two minutes (a stage waiting for
/// ever).
fn on_a_thread<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::Result<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the pipeline never returned")
}

/// Inputs whose walk stops before any zstd frame goes on (not zstd, a
/// truncated header, skippable frames alone, a frame naming a
/// dictionary, a read that fails) end the pipeline as one thread
/// ends them, and as libzstd does: the walker stocks the shelf when it
/// stops (see [`Stock`]), where before the first frame it had not, and
/// the workers and the executor would wait for a set for ever.
#[test]
fn a_walk_that_stops_before_a_frame_ends_the_pipeline_as_one_thread_does() {
    /// The pipeline over `reader`: its result as text.
    fn piped<R: Read + Send + 'static>(reader: R) -> Result<u64, String> {
        on_a_thread(move || {
            let piped = pipeline(
                Source::new(Vec::new(), reader),
                1 << 27,
                2,
                &mut io::sink(),
                None,
            );
            piped.map_err(|e| e.to_string())
        })
        .expect("the pipeline panicked")
    }
    let skippable = [0x50, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 1, 2, 3];
    // No content size, a 1 KiB window, dictionary 5, one empty block.
    let dictionary = [0x28, 0xB5, 0x2F, 0xFD, 0x01, 0x00, 5, 0x01, 0, 0];
    let inputs: [&[u8]; 4] = [
        b"not zstd at all",
        &[0x28, 0xB5, 0x2F, 0xFD],
        &skippable,
        &dictionary,
    ];
    for input in inputs {
        let piped = piped(io::Cursor::new(input.to_vec()));
        let alone = decode_to(input, 1 << 27, |_| Ok::<(), io::Error>(()));
        assert_eq!(piped, alone.map_err(|e| e.to_string()), "{input:?}");
        let mut out = [0u8; 16];
        let libzstd = zstd_safe::decompress(&mut out[..], input);
        assert_eq!(
            piped.ok(),
            libzstd.ok().map(|n| n as u64),
            "{input:?}: libzstd decides otherwise"
        );
    }
    /// A reader whose first read fails.
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            Err(io::Error::other("the disk went away"))
        }
    }
    let failed = piped(Failing).expect_err("a failed read decoded");
    assert!(failed.contains("the disk went away"), "{failed}");
}

/// A worker's panic (a bug) reaches the caller, and nothing waits for
/// ever: before `Abandoned`, the executor waited for the range the
/// worker had, the walker for a credit, and the other worker for a
/// range.
///
/// The executor decodes a range itself when the one it awaits is not back
/// and no worker has started the next, so on a loaded machine (CI runs
/// tests side by side) the workers may take no range from the fault's on:
/// then nothing fires, that run must decode, and the test runs again.
#[test]
fn a_workers_panic_reaches_the_caller_and_no_stage_waits_for_ever() {
    const ATTEMPTS: usize = 50;
    let frame = frame_of_many_ranges();
    let mut attempt = 0;
    let answer = loop {
        attempt += 1;
        let frame = frame.clone();
        let answer = on_a_thread(move || {
            FAULT_FROM.set(Some(4));
            pipeline(Source::slice(&frame), 1 << 27, 2, &mut io::sink(), None).is_ok()
        });
        if FIRED.load(Ordering::SeqCst) {
            break answer;
        }
        assert!(
            matches!(answer, Ok(true)),
            "a run whose fault point did not fire failed"
        );
        assert!(
            attempt < ATTEMPTS,
            "no worker reached the fault point in {ATTEMPTS} runs"
        );
    };
    assert!(
        answer.is_err(),
        "the worker's panic did not reach the caller"
    );
}

/// `frame` written to a file of its own, opened for reading and writing.
fn file_holding(frame: &[u8]) -> (tempfile::TempDir, std::fs::File) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("input.zst");
    std::fs::write(&path, frame).unwrap();
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    (dir, file)
}

/// `file`'s first `len` bytes, mapped.
#[allow(unsafe_code)]
fn map_file(file: &std::fs::File, len: usize) -> MappedFile {
    // SAFETY: the tests only shorten their files, which the guard is for;
    // nothing writes them.
    unsafe { MappedFile::map(file.try_clone().unwrap(), len as u64) }.unwrap()
}

#[test]
#[cfg(target_os = "linux")]
fn a_mapped_file_decodes_as_libzstd_decodes_it_on_threads_and_on_one() {
    let frame = frame_of_many_ranges();
    let (_dir, file) = file_holding(&frame);
    let mut want = vec![0u8; 1 << 20];
    zstd_safe::decompress(&mut want[..], &frame).unwrap();
    for (threads, min_input, pipelined) in [(2, 0, true), (2, usize::MAX, false), (1, 0, false)] {
        let map = map_file(&file, frame.len());
        let mut parallel = Parallel::new(threads, 1 << 27);
        parallel.min_input = min_input;
        let mut out = Vec::new();
        let done = parallel.decode_mapped(&map, &mut out).unwrap();
        assert_eq!(done.pipelined, pipelined, "{threads} threads");
        assert!(out == want, "{threads} threads: the output differs");
    }
}

/// A writer that cuts `file` to `cut` bytes on its first write, as
/// another process truncating the input mid-decode would.
struct CutOnFirstWrite<'f> {
    file: &'f std::fs::File,
    cut: Option<u64>,
    out: Vec<u8>,
}

impl Write for CutOnFirstWrite<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(cut) = self.cut.take() {
            self.file.set_len(cut)?;
        }
        self.out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_mapped_file_that_shrinks_stops_the_decode_and_writes_nothing_from_past_its_end() {
    // 4 MiB at random, in blocks of 16 KiB: stored blocks, which the
    // executor copies from the input as they are, zeros and all; the
    // output's first chunk (1 MiB) is written while most of the input is
    // still to be read.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let data: Vec<u8> = (0..4 << 20)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 56) as u8
        })
        .collect();
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(1)).unwrap();
    cctx.set_parameter(CParameter::MaxBlockSize(16 << 10))
        .unwrap();
    let mut frame = vec![0u8; zstd_safe::compress_bound(data.len())];
    let n = cctx.compress2(&mut frame[..], &data).unwrap();
    frame.truncate(n);
    let want = data;
    let half = frame.len() as u64 / 2;
    // Cut on a 64 KiB boundary (a page boundary whatever the page size:
    // the reads past it fault) and inside a page (the rest of that page
    // reads as zeros without a fault; only the file's size tells), there
    // or in the last page: without a checksum, the frame then decodes
    // whole, its last 100 bytes zeros.
    let len = frame.len() as u64;
    for cut in [half / 65536 * 65536, half / 65536 * 65536 + 100, len - 100] {
        for before in [true, false] {
            for (threads, min_input) in [(2, 0), (2, usize::MAX)] {
                let case = format!("cut at {cut}, before: {before}, min_input {min_input}");
                let (_dir, file) = file_holding(&frame);
                let map = map_file(&file, frame.len());
                let mut out = CutOnFirstWrite {
                    file: &file,
                    cut: (!before).then_some(cut),
                    out: Vec::new(),
                };
                if before {
                    file.set_len(cut).unwrap();
                }
                let mut parallel = Parallel::new(threads, 1 << 27);
                parallel.min_input = min_input;
                let Err(StreamError::Input(e)) = parallel.decode_mapped(&map, &mut out) else {
                    panic!("{case}: the decode of a shrunk file went on");
                };
                assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "{case}: {e}");
                assert!(map.shrank(), "{case}");
                let out = out.out;
                assert!(
                    out.len() < want.len() && want.starts_with(&out),
                    "{case}: {} bytes out, not a strict prefix of the data",
                    out.len()
                );
            }
        }
    }
}
