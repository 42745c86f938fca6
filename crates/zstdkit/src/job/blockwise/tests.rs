//! The route each input takes, and the writers the second run uses.

use super::*;

#[test]
fn skipping_drops_exactly_the_first_bytes_across_writes() {
    let mut w = Skipping {
        inner: Vec::new(),
        skip: 5,
    };
    w.write_all(b"abc").unwrap();
    w.write_all(b"defg").unwrap();
    w.write_all(b"hi").unwrap();
    assert_eq!(w.inner, b"fghi");
}

/// Fails its first write with `Interrupted`, which `write_all` retries.
struct InterruptedOnce {
    out: Vec<u8>,
    interrupted: bool,
}

impl Write for InterruptedOnce {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.interrupted {
            self.interrupted = true;
            return Err(io::ErrorKind::Interrupted.into());
        }
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn skipping_drops_nothing_twice_when_a_write_is_retried() {
    let mut w = Skipping {
        inner: InterruptedOnce {
            out: Vec::new(),
            interrupted: false,
        },
        skip: 3,
    };
    // The first attempt fails after the skip is counted; the retry
    // must skip the same bytes again, not write them.
    w.write_all(b"abcdefg").unwrap();
    assert_eq!(w.inner.out, b"defg");
}

/// `input` decoded by `blockwise`: (bytes read, bytes written, the
/// output, the notes for `-v`).
fn decoded(blockwise: &Blockwise, input: BlockInput) -> (u64, u64, Vec<u8>, Vec<String>) {
    let out = crate::pipeline::tests::Shared::default();
    let mut notes = Vec::new();
    let (read, written) = blockwise
        .decode(
            input,
            Some(Box::new(out.clone())),
            &mut || Err(io::ErrorKind::NotFound.into()),
            &mut |_| {},
            &mut |n| notes.push(n.to_string()),
        )
        .unwrap();
    let out = std::mem::take(&mut *out.0.lock().unwrap());
    (read, written, out, notes)
}

/// On several threads a regular file is mapped where its handle is
/// given, else read as the pipeline goes, whatever its size; on one
/// thread a file that fits is held whole (its frames walked first).
/// Every way it decodes to its content.
#[test]
fn threads_map_a_file_or_read_it_as_they_go_and_one_thread_holds_it() {
    let data = b"a line of text, and another one\n".repeat(100_000);
    let frame = crate::compress(&data, crate::Recipe::Text).unwrap();
    let size = frame.len() as u64;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.zst");
    std::fs::write(&path, &frame).unwrap();
    for (threads, handle, way) in [
        (1, false, "held"),
        (2, false, "streamed"),
        (4, false, "streamed"),
        (1, true, "held"),
        (2, true, "mapped"),
        (4, true, "mapped"),
    ] {
        let blockwise = Blockwise {
            decoder: Decoder::Perfkit,
            threads,
            window: WindowLimit::Default,
            verify_checksums: true,
        };
        let input = Box::new(io::Cursor::new(frame.clone()));
        let file = handle.then(|| std::fs::File::open(&path).unwrap());
        let Route::Blocks { input } = blockwise
            .route(false, input, Some(size), file, false)
            .unwrap()
        else {
            panic!("{threads} threads: not the block decoder");
        };
        let got = match input {
            BlockInput::Held(_) => "held",
            BlockInput::Streamed { .. } => "streamed",
            BlockInput::Mapped(_) => "mapped",
        };
        assert_eq!(got, way, "{threads} threads, handle {handle}");
        let (read, written, out, _) = decoded(&blockwise, input);
        assert_eq!(
            (read, written),
            (size, data.len() as u64),
            "{threads} threads"
        );
        assert!(out == data, "{threads} threads: content");
    }
}

/// `n` bytes of 64 symbols drawn at random: Huffman-coded literals,
/// compressed blocks at three quarters of the size.
fn symbols(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            b'0' + (x >> 58) as u8
        })
        .collect()
}

/// `frame` with its content size taken out of its header, as a frame
/// streamed from a pipe has none.
fn undeclared(frame: &[u8]) -> Vec<u8> {
    let descriptor = frame[4];
    // No single segment (a window byte follows), no dictionary ID.
    assert_eq!(descriptor & 0x23, 0, "{descriptor:#x}");
    let size_bytes = [0, 2, 4, 8][usize::from(descriptor >> 6)];
    let mut out = frame[..4].to_vec();
    out.push(descriptor & 0x3F);
    out.push(frame[5]);
    out.extend_from_slice(&frame[6 + size_bytes..]);
    out
}

/// By default one frame goes to the pipeline on threads only where it
/// measured faster than libzstd's one thread: declaring
/// AUTO_MIN_CONTENT bytes or more, with enough compressed blocks, or
/// declaring none with more. A file of one frame that does not goes to
/// libzstd on one thread, one of several frames to libzstd on the threads
/// asked for (frame-parallel), and the pipeline's output is the content.
#[test]
fn by_default_threads_take_only_a_large_frame_with_blocks_to_share() {
    use Decoder::{Auto, Libzstd};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.zst");
    let mib = 1 << 20;
    let compress = |data: &[u8]| crate::compress(data, crate::Recipe::Fast).unwrap();
    // Compressed to three quarters: 66 MiB declared, 44 MiB undeclared
    // (33 MiB of compressed blocks) pay; 60 MiB declared and 40 MiB
    // undeclared (30 MiB) do not.
    let large = symbols(66 * mib, 1);
    let large_frame = compress(&large);
    let short = compress(&large[..60 * mib]);
    let undeclared_large = undeclared(&compress(&large[..44 * mib]));
    let undeclared_short = undeclared(&compress(&large[..40 * mib]));
    let line = compress(&b"one line\n".repeat(66 * mib / 9));
    let mut two = short.clone();
    two.extend(compress(b"and a second frame"));
    // Bytes of every value: stored blocks.
    let mut x = 7u64;
    let stored: Vec<u8> = (0..66 * mib)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            (x >> 56) as u8
        })
        .collect();
    let stored = compress(&stored);
    let (pipeline, one, asked) = ("pipeline", "libzstd, one thread", "libzstd, -T");
    // (name, file, decoder, threads, a handle given, the way it goes)
    type Case<'a> = (&'a str, &'a [u8], Decoder, usize, bool, &'a str);
    let cases: [Case; 11] = [
        ("66 MiB declared", &large_frame, Auto, 2, true, pipeline),
        (
            "66 MiB declared, -T4",
            &large_frame,
            Auto,
            4,
            true,
            pipeline,
        ),
        (
            "66 MiB declared, one thread",
            &large_frame,
            Auto,
            1,
            true,
            asked,
        ),
        (
            "66 MiB declared, libzstd",
            &large_frame,
            Libzstd,
            2,
            true,
            asked,
        ),
        (
            "66 MiB declared, no handle",
            &large_frame,
            Auto,
            2,
            false,
            asked,
        ),
        (
            "44 MiB undeclared",
            &undeclared_large,
            Auto,
            2,
            true,
            pipeline,
        ),
        ("60 MiB declared", &short, Auto, 2, true, one),
        ("40 MiB undeclared", &undeclared_short, Auto, 2, true, one),
        ("two frames", &two, Auto, 2, true, asked),
        ("66 MiB of one line", &line, Auto, 2, true, one),
        ("66 MiB stored", &stored, Auto, 2, true, one),
    ];
    // Into a pipe, whose reader needs a core, libzstd's one thread keeps
    // even the frame that pays.
    std::fs::write(&path, &large_frame).unwrap();
    let blockwise = Blockwise {
        decoder: Auto,
        threads: 2,
        window: WindowLimit::Default,
        verify_checksums: true,
    };
    let (input, file) = (
        std::fs::File::open(&path).unwrap(),
        std::fs::File::open(&path),
    );
    let size = Some(large_frame.len() as u64);
    let route = blockwise.route(false, Box::new(input), size, file.ok(), true);
    assert!(matches!(
        route.unwrap(),
        Route::Libzstd {
            one_thread: true,
            ..
        }
    ));
    // With a dictionary (these frames name none, which libzstd allows)
    // the pipeline may not take a file; one frame keeps to one thread.
    for (frame, want_one) in [(&large_frame, true), (&short, true), (&two, false)] {
        std::fs::write(&path, frame).unwrap();
        let blockwise = Blockwise {
            decoder: Auto,
            threads: 2,
            window: WindowLimit::Default,
            verify_checksums: true,
        };
        let size = Some(frame.len() as u64);
        let input = Box::new(std::fs::File::open(&path).unwrap());
        let file = std::fs::File::open(&path).ok();
        match blockwise.route(true, input, size, file, false).unwrap() {
            Route::Libzstd { one_thread, .. } => assert_eq!(one_thread, want_one),
            Route::Blocks { .. } => panic!("the pipeline took a frame with a dictionary"),
        }
    }
    for (name, frame, decoder, threads, handle, way) in cases {
        std::fs::write(&path, frame).unwrap();
        let blockwise = Blockwise {
            decoder,
            threads,
            window: WindowLimit::Default,
            verify_checksums: true,
        };
        let size = frame.len() as u64;
        let file = handle.then(|| std::fs::File::open(&path).unwrap());
        let input = Box::new(std::fs::File::open(&path).unwrap());
        match blockwise
            .route(false, input, Some(size), file, false)
            .unwrap()
        {
            Route::Libzstd {
                note, one_thread, ..
            } => {
                let got = if one_thread { one } else { asked };
                assert_eq!(got, way, "{name}");
                assert_eq!(note, None, "{name}: a note nobody asked for");
            }
            Route::Blocks { input } => {
                assert_eq!(pipeline, way, "{name}");
                // Decoded once: the routes past it are the question.
                if name != "66 MiB declared" {
                    continue;
                }
                let (read, written, out, notes) = decoded(&blockwise, input);
                assert_eq!((read, written), (size, large.len() as u64), "{name}");
                assert!(out == large, "{name}: content");
                let want = format!("decoded by perfkit's block decoder on {threads} threads");
                assert_eq!(notes, [want], "{name}");
            }
        }
    }
}
