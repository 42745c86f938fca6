//! zstdblock against libzstd, not against itself: frames made at test time
//! by libzstd (zstd-safe) and by the real zstd CLI, decoded by both, the
//! output byte-identical; corrupt frames an error from both, or the same
//! bytes where libzstd succeeds.
//!
//! A missing `/usr/bin/zstd` fails these tests: the corpus needs it.

mod common;

use common::*;
use zstd_safe::{CCtx, CParameter};

fn check_round_trip(name: &str, data: &[u8], frame: &[u8]) {
    let ours = zstdblock::decode_all(frame, WINDOW_LIMIT).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert!(
        ours == data,
        "{name}: {} bytes decoded, {} expected",
        ours.len(),
        data.len()
    );
    let theirs = libzstd(frame, data.len() + 64).unwrap_or_else(|e| panic!("{name}: libzstd {e}"));
    let mut streamed = Vec::new();
    let produced = zstdblock::decode_to(frame, WINDOW_LIMIT, |bytes| {
        streamed.extend_from_slice(bytes);
        Ok::<(), ()>(())
    })
    .unwrap_or_else(|e| panic!("{name}: streaming: {e:?}"));
    assert!(
        streamed == data && produced == data.len() as u64,
        "{name}: streaming differs"
    );
    assert!(theirs == ours, "{name}: libzstd disagrees");
    // The parallel path, on every case, pipelined whatever the size.
    for threads in [1, 2, 4] {
        let mut settings = zstdblock::parallel::Parallel::new(threads, WINDOW_LIMIT);
        settings.min_input = 0;
        let mut written = Vec::new();
        let decoded = settings
            .decode(frame, &mut written)
            .unwrap_or_else(|e| panic!("{name}: {threads} threads: {e}"));
        assert!(
            written == theirs,
            "{name}: {threads} threads differ from libzstd"
        );
        assert_eq!(decoded.bytes, theirs.len() as u64);
        assert_eq!(decoded.pipelined, threads >= 2, "{name}");
    }
}

#[test]
fn every_level_from_fast_to_ultra_decodes_like_libzstd() {
    let inputs = [
        ("text", source_text(384 << 10)),
        ("binary", binary(384 << 10)),
        ("random", random(100_000, 7)),
        ("runs", runs(700_000)),
        ("empty", Vec::new()),
        ("one byte", vec![b'x']),
    ];
    let levels: &[&[&str]] = &[
        &["--fast=7"],
        &["--fast=1"],
        &["-1"],
        &["-3"],
        &["-9"],
        &["-19"],
        &["--ultra", "-22"],
    ];
    let mut kinds = std::collections::BTreeSet::new();
    for (name, data) in &inputs {
        for level in levels {
            let frame = cli(data, level, false);
            check_round_trip(&format!("{name} {level:?}"), data, &frame);
            for frame in zstdblock::walk(&frame, WINDOW_LIMIT).unwrap() {
                kinds.extend(frame.blocks.iter().map(|b| format!("{:?}", b.kind)));
            }
        }
    }
    // The noise made raw blocks, the long runs RLE blocks.
    assert_eq!(kinds.len(), 3, "{kinds:?}");
}

#[test]
fn cli_options_and_streamed_input_decode_like_libzstd() {
    let text = source_text(512 << 10);
    let binary = binary(256 << 10);
    let cases: &[(&[&str], bool)] = &[
        (&["-3", "--no-check"], false),
        (&["-3", "--no-content-size"], false),
        (&["-3"], true),
        (&["-19"], true),
        (&["-3", "--long=27"], false),
        (&["-19", "--long=27"], false),
        (&["-3", "--rsyncable"], false),
        (&["-5", "-T2", "-B65536"], false),
    ];
    for data in [&text, &binary] {
        for (args, stdin) in cases {
            let frame = cli(data, args, *stdin);
            check_round_trip(&format!("{args:?} stdin {stdin}"), data, &frame);
        }
    }
}

#[test]
fn libzstd_parameters_decode_like_libzstd() {
    use CParameter::*;
    let text = source_text(128 << 10);
    let binary = binary(128 << 10);
    let noise = random(50_000, 99);
    let cases: Vec<(&str, Vec<CParameter>)> = vec![
        ("window log 10", vec![CompressionLevel(3), WindowLog(10)]),
        (
            "window log 10 level 19",
            vec![CompressionLevel(19), WindowLog(10)],
        ),
        (
            "1 KiB blocks",
            vec![CompressionLevel(6), MaxBlockSize(1024)],
        ),
        (
            "target 2 KiB blocks",
            vec![CompressionLevel(3), TargetCBlockSize(2048)],
        ),
        (
            "ldm window 27",
            vec![
                CompressionLevel(19),
                WindowLog(27),
                EnableLongDistanceMatching(true),
            ],
        ),
        (
            "no checksum",
            vec![CompressionLevel(3), ChecksumFlag(false)],
        ),
        ("checksum", vec![CompressionLevel(-5), ChecksumFlag(true)]),
        ("btultra2", vec![CompressionLevel(22), ChecksumFlag(true)]),
    ];
    for data in [&text, &binary, &noise] {
        for (name, params) in &cases {
            check_round_trip(name, data, &compress_with(data, params));
            check_round_trip(
                &format!("{name} streamed"),
                data,
                &compress_streamed(data, params),
            );
        }
    }
}

#[test]
fn concatenated_and_skippable_frames_decode_in_order() {
    let text = source_text(64 << 10);
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    for (i, level) in [1, 19, -3].into_iter().enumerate() {
        let part = &text[i * 10_000..(i + 2) * 10_000];
        stream.extend(compress_with(
            part,
            &[
                CParameter::CompressionLevel(level),
                CParameter::ChecksumFlag(true),
            ],
        ));
        expected.extend_from_slice(part);
        // A skippable frame between frames, with user data.
        stream.extend_from_slice(&(0x184D_2A50u32 + i as u32).to_le_bytes());
        stream.extend_from_slice(&5u32.to_le_bytes());
        stream.extend_from_slice(b"skip!");
    }
    stream.extend(compress_with(b"", &[]));
    check_round_trip("concatenated", &expected, &stream);
    let frames = zstdblock::walk(&stream, WINDOW_LIMIT).unwrap();
    assert_eq!(frames.len(), 7);
    assert!(matches!(
        frames[1].kind,
        zstdblock::FrameKind::Skippable {
            variant: 0,
            size: 5
        }
    ));
}

#[test]
fn real_files_from_this_machine_decode_like_libzstd() {
    for (name, data) in [("docs", docs(1 << 20)), ("libraries", binary(1 << 20))] {
        for level in ["-3", "-19"] {
            let frame = cli(&data, &[level], false);
            check_round_trip(&format!("{name} {level}"), &data, &frame);
        }
    }
}

#[test]
fn a_window_over_the_limit_and_a_dictionary_are_refused_with_their_own_errors() {
    let text = source_text(64 << 10);
    // Streamed, so libzstd cannot shrink the window to the input.
    let frame = compress_streamed(
        &text,
        &[CParameter::CompressionLevel(3), CParameter::WindowLog(20)],
    );
    match zstdblock::decode_all(&frame, 1 << 19) {
        Err(zstdblock::Error::WindowTooLarge {
            frame: 0,
            window,
            limit,
            ..
        }) => {
            assert_eq!((window, limit), (1 << 20, 1 << 19));
        }
        other => panic!("{:?}", other.map(|v| v.len())),
    }
    assert_eq!(zstdblock::decode_all(&frame, 1 << 20).unwrap(), text);
    // The same frame with a one-byte dictionary ID put in its header.
    let mut with_dict = frame.clone();
    assert_eq!(with_dict[4] & 3, 0);
    with_dict[4] |= 1;
    with_dict.insert(6, 42);
    assert!(matches!(
        zstdblock::decode_all(&with_dict, WINDOW_LIMIT),
        Err(zstdblock::Error::NeedsDictionary {
            frame: 0,
            offset: 0,
            dictionary_id: 42
        })
    ));
}

/// Ours and libzstd's verdicts on damaged input: both errors, or the same
/// bytes. Returns whether ours failed.
fn same_verdict(name: &str, damaged: &[u8], room: usize) -> bool {
    let ours = zstdblock::decode_all(damaged, WINDOW_LIMIT);
    // The pipeline reports what one thread reports, the same error.
    let mut settings = zstdblock::parallel::Parallel::new(2, WINDOW_LIMIT);
    settings.min_input = 0;
    let mut written = Vec::new();
    match (settings.decode(damaged, &mut written), &ours) {
        (Ok(_), Ok(bytes)) => assert!(&written == bytes, "{name}: 2 threads differ"),
        (Err(zstdblock::StreamError::Decode(e)), Err(one)) => {
            assert_eq!(&e, one, "{name}: 2 threads fail otherwise")
        }
        (two, one) => panic!(
            "{name}: 2 threads {two:?}, one thread {:?}",
            one.as_ref().map(Vec::len)
        ),
    }
    let theirs = libzstd(damaged, room);
    match (&ours, &theirs) {
        (Err(_), Err(_)) => true,
        (Ok(a), Ok(b)) => {
            assert!(a == b, "{name}: both succeed with different bytes");
            false
        }
        (Err(e), Ok(_)) => {
            assert!(
                e.libzstd_may_accept(),
                "{name}: ours fails ({e}), libzstd succeeds"
            );
            true
        }
        (Ok(_), Err(e)) => panic!("{name}: ours succeeds, libzstd fails ({e})"),
    }
}

#[test]
fn flipped_bits_truncation_and_a_wrong_checksum_fail_like_libzstd() {
    let text = source_text(96 << 10);
    let frames = [
        compress_with(
            &text,
            &[
                CParameter::CompressionLevel(3),
                CParameter::ChecksumFlag(true),
            ],
        ),
        compress_with(
            &text,
            &[
                CParameter::CompressionLevel(19),
                CParameter::ChecksumFlag(false),
                CParameter::MaxBlockSize(8192),
            ],
        ),
        compress_with(
            &runs(100_000),
            &[
                CParameter::CompressionLevel(1),
                CParameter::ChecksumFlag(true),
            ],
        ),
    ];
    let room = 1 << 20;
    for (f, frame) in frames.iter().enumerate() {
        // A flipped bit in every stretch of the frame, header to checksum.
        let step = (frame.len() / 250).max(1);
        for at in (0..frame.len()).step_by(step) {
            for bit in [0, 5] {
                let mut damaged = frame.clone();
                damaged[at] ^= 1 << bit;
                same_verdict(&format!("frame {f} bit {bit} of byte {at}"), &damaged, room);
            }
        }
        // Cut at every block boundary, and one byte either side.
        let walked = zstdblock::walk(frame, WINDOW_LIMIT).unwrap();
        for block in &walked[0].blocks {
            for cut in [
                block.header - 1,
                block.header,
                block.header + 1,
                block.content.end - 1,
            ] {
                assert!(same_verdict(
                    &format!("frame {f} cut at {cut}"),
                    &frame[..cut],
                    room
                ));
            }
        }
        assert!(same_verdict(
            &format!("frame {f} less its last byte"),
            &frame[..frame.len() - 1],
            room
        ));
    }
    // A wrong checksum: the last four bytes of frame 0.
    let mut damaged = frames[0].clone();
    let n = damaged.len();
    damaged[n - 2] ^= 0x10;
    assert!(matches!(
        zstdblock::decode_all(&damaged, WINDOW_LIMIT),
        Err(zstdblock::Error::Checksum { frame: 0, .. })
    ));
    assert!(libzstd(&damaged, room).is_err());
}

#[test]
fn offsets_before_the_frame_or_past_the_window_are_errors() {
    let text = source_text(64 << 10);
    // Compressed against a prefix the decoder does not have: the first
    // matches reach before the frame's first byte.
    let mut cctx = CCtx::create();
    cctx.set_parameter(CParameter::CompressionLevel(3)).unwrap();
    cctx.ref_prefix(&text[..32 << 10]).unwrap();
    let mut frame = Vec::with_capacity(70_000);
    cctx.compress2(&mut frame, &text[32 << 10..]).unwrap();
    match zstdblock::decode_all(&frame, WINDOW_LIMIT) {
        Err(zstdblock::Error::OffsetOutOfRange { frame: 0, .. }) => {}
        other => panic!("{:?}", other.map(|v| v.len())),
    }
    assert!(libzstd(&frame, 1 << 20).is_err());

    // Matches up to 64 KiB back in 1 KiB blocks, then the header's window
    // rewritten to 1 KiB: every match past 1 KiB breaks the RFC's window.
    // libzstd's one-shot decoder checks offsets only against the frame's
    // start and decodes it; this decoder refuses it, as a decoder holding
    // only the window must.
    let frame = compress_with(
        &text,
        &[
            CParameter::CompressionLevel(3),
            CParameter::WindowLog(16),
            CParameter::MaxBlockSize(1024),
            CParameter::ContentSizeFlag(false),
        ],
    );
    let header = zstdblock::frame_header(&frame, 0, 0).unwrap().unwrap();
    assert!(!header.single_segment);
    let mut narrowed = frame.clone();
    narrowed[5] = 0; // window log 10, mantissa 0
    match zstdblock::decode_all(&narrowed, WINDOW_LIMIT) {
        Err(zstdblock::Error::OffsetOutOfRange {
            frame: 0,
            available,
            distance,
            ..
        }) => {
            assert_eq!(available, 1024);
            assert!(distance > 1024);
        }
        other => panic!("{:?}", other.map(|v| v.len())),
    }
    assert_eq!(libzstd(&narrowed, 1 << 20).as_deref(), Ok(&text[..]));
}

#[test]
fn a_worker_starting_mid_frame_from_skipped_tables_decodes_what_one_thread_does() {
    use zstdblock::{BlockKind, DecodedBlock, EntropyState};
    // The CLI's -19 on binaries writes Treeless literals; libzstd's -19
    // with 4 KiB blocks, Repeat sequence tables.
    let frames = [
        cli(&binary(512 << 10), &["-19"], false),
        compress_with(
            &source_text(256 << 10),
            &[
                CParameter::CompressionLevel(19),
                CParameter::MaxBlockSize(4 << 10),
            ],
        ),
    ];
    let (mut treeless, mut repeat) = (false, false);
    for frame in &frames {
        let walked = zstdblock::walk(frame, WINDOW_LIMIT).unwrap();
        let blocks: Vec<_> = walked[0]
            .blocks
            .iter()
            .filter(|b| b.kind == BlockKind::Compressed)
            .collect();
        assert!(blocks.len() > 8);
        // The frame exercises what a worker inherits: Treeless literals
        // and Repeat sequence tables (read from the headers here).
        // Starting at an inheriting block is the case that matters.
        let mut starts = vec![1, 2, blocks.len() / 2, blocks.len() - 1];
        for (index, block) in blocks.iter().enumerate() {
            let b = &frame[block.content.clone()];
            let word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let section = match (b[0] & 3, (b[0] >> 2) & 3) {
                (0, 0 | 2) => 1 + (b[0] >> 3) as usize,
                (0, 1) => 2 + (word >> 4 & 0xFFF) as usize,
                (0, _) => 3 + (word >> 4 & 0xF_FFFF) as usize,
                (1, 0 | 2) => 2,
                (1, 1) => 3,
                (1, _) => 4,
                (_, 0 | 1) => 3 + (word >> 14 & 0x3FF) as usize,
                (_, 2) => 4 + (word >> 18) as usize,
                _ => 5 + (word >> 22 | u32::from(b[4]) << 10) as usize,
            };
            let seq = &b[section..];
            let modes_at = match seq[0] {
                0 => None,
                1..=127 => Some(1),
                255 => Some(3),
                _ => Some(2),
            };
            let repeats = modes_at.is_some_and(|at| {
                let modes = seq[at];
                [modes >> 6, (modes >> 4) & 3, (modes >> 2) & 3].contains(&3)
            });
            if b[0] & 3 == 3 || repeats {
                starts.push(index);
            }
            treeless |= b[0] & 3 == 3;
            repeat |= repeats;
        }
        let mut sequential = Vec::new();
        let mut state = EntropyState::default();
        for block in &blocks {
            let mut decoded = DecodedBlock::default();
            zstdblock::decode_block(frame, block, &mut state, &mut decoded).unwrap();
            sequential.push(decoded);
        }
        for start in starts {
            let mut state = EntropyState::default();
            for block in &blocks[..start] {
                zstdblock::skip_block(frame, block, &mut state).unwrap();
            }
            for (k, block) in blocks.iter().enumerate().skip(start).take(3) {
                let mut decoded = DecodedBlock::default();
                zstdblock::decode_block(frame, block, &mut state, &mut decoded).unwrap();
                assert_eq!(
                    decoded.literals(),
                    sequential[k].literals(),
                    "block {k} from {start}"
                );
                assert_eq!(
                    decoded.sequences(),
                    sequential[k].sequences(),
                    "block {k} from {start}"
                );
            }
        }
    }
    assert!(treeless && repeat, "treeless {treeless}, repeat {repeat}");
}

#[test]
fn decode_to_holds_a_window_not_the_whole_output() {
    let text = source_text(1 << 20);
    let frame = compress_streamed(
        &text,
        &[CParameter::CompressionLevel(3), CParameter::WindowLog(10)],
    );
    let mut chunks = Vec::new();
    let mut streamed = Vec::new();
    zstdblock::decode_to(&frame, WINDOW_LIMIT, |bytes| {
        chunks.push(bytes.len());
        streamed.extend_from_slice(bytes);
        Ok::<(), ()>(())
    })
    .unwrap();
    assert!(streamed == text);
    // Drained whenever twice the 1 KiB window plus a block is held.
    assert!(chunks.len() > 4, "{chunks:?}");
    assert!(
        chunks
            .iter()
            .all(|&c| c <= 2 * 1024 + 2 * zstdblock::BLOCK_SIZE_MAX),
        "{chunks:?}"
    );
    // A failing sink stops the decode with its own error.
    let err = zstdblock::decode_to(&frame, WINDOW_LIMIT, |_| Err("disk full")).unwrap_err();
    assert!(matches!(err, zstdblock::StreamError::Sink("disk full")));
}

#[test]
fn a_block_whose_entropy_stage_failed_is_not_executed() {
    use zstdblock::{BlockKind, DecodedBlock, EntropyState, Output};
    let text = source_text(64 << 10);
    let frame = compress_with(
        &text,
        &[
            CParameter::CompressionLevel(3),
            CParameter::MaxBlockSize(4096),
        ],
    );
    let walked = zstdblock::walk(&frame, WINDOW_LIMIT).unwrap();
    let block = walked[0]
        .blocks
        .iter()
        .find(|b| b.kind == BlockKind::Compressed)
        .unwrap();
    let mut decoded = DecodedBlock::default();
    zstdblock::decode_block(&frame, block, &mut EntropyState::default(), &mut decoded).unwrap();
    // The same block with its last byte (the end of its sequence
    // bitstream) cleared: the entropy stage fails after filling buffers.
    let mut damaged = frame.clone();
    damaged[block.content.end - 1] = 0;
    assert!(
        zstdblock::decode_block(&damaged, block, &mut EntropyState::default(), &mut decoded)
            .is_err()
    );
    let mut out = Output::new();
    assert!(matches!(
        out.execute(&decoded, block, 0, 1 << 20),
        Err(zstdblock::Error::Corrupt { .. })
    ));
}

#[test]
fn matches_reaching_back_over_16_mib_decode_like_libzstd() {
    use zstdblock::{BlockKind, DecodedBlock, EntropyState};
    // Text, 17 MiB of noise (raw blocks), the text again: with --long the
    // second copy is one long match, an offset code of 24 extra bits.
    let text = source_text(96 << 10);
    let mut data = text.clone();
    data.extend(random(17 << 20, 3));
    data.extend_from_slice(&text);
    let frame = cli(&data, &["-3", "--long=27"], false);
    check_round_trip("--long=27 over 17 MiB", &data, &frame);
    let walked = zstdblock::walk(&frame, WINDOW_LIMIT).unwrap();
    let (mut state, mut repeats) = (EntropyState::default(), zstdblock::INITIAL_REPEATS);
    let mut longest = 0;
    for block in walked[0]
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Compressed)
    {
        let mut decoded = DecodedBlock::default();
        zstdblock::decode_block(&frame, block, &mut state, &mut decoded).unwrap();
        decoded.resolve_offsets(&mut repeats);
        longest = longest.max(
            decoded
                .sequences()
                .iter()
                .map(|s| s.offset)
                .max()
                .unwrap_or(0),
        );
    }
    assert!(longest > 16 << 20, "longest match offset {longest}");
}

/// A frame of unknown size (`tar | zstd --long`) whose window is over
/// 16 MiB starts the pipeline's output in memory mapped once and moves to
/// a ring as it outgrows its window: a match 16 MiB back reaches across
/// the move.
#[test]
fn a_long_window_frame_of_unknown_size_outgrowing_its_window_decodes_like_libzstd() {
    let text = source_text(96 << 10);
    let mut data = random(20 << 20, 5);
    data.extend_from_slice(&text);
    data.extend(random(16 << 20, 6));
    data.extend_from_slice(&text);
    data.extend(random(1 << 20, 7));
    let frame = cli(&data, &["-1", "--long=25"], true);
    let header = zstdblock::walk(&frame, WINDOW_LIMIT).unwrap();
    let zstdblock::FrameKind::Zstd(h) = &header[0].kind else {
        panic!("a zstd frame");
    };
    assert!(h.content_size.is_none() && h.window_size == 32 << 20);
    check_round_trip("--long=25 from stdin over 37 MiB", &data, &frame);
}

/// A frame header may declare any content size up to 2^64 - 1: every
/// decoding path gives libzstd's output where it accepts the frame (it
/// reads 2^64 - 1 as "unknown") and an error where it refuses it, never
/// an arithmetic overflow (the fuzz target found decode_to sizing its
/// buffer by the declared size plus a block).
#[test]
fn a_content_size_near_the_top_of_u64_decodes_as_libzstd_decodes_it() {
    let mut frames = Vec::new();
    for content_size in [u64::MAX, u64::MAX - 1, u64::MAX - (128 << 10) + 1] {
        // 8-byte content size, with and without a window descriptor
        // (single segment: the window is the content size), one raw last
        // block of 5 bytes.
        for single_segment in [false, true] {
            let mut frame = zstdblock::MAGIC.to_le_bytes().to_vec();
            frame.push(0xC0 | if single_segment { 0x20 } else { 0 });
            if !single_segment {
                frame.push(0x35);
            }
            frame.extend_from_slice(&content_size.to_le_bytes());
            frame.extend_from_slice(&[(5 << 3) | 1, 0, 0]);
            frame.extend_from_slice(b"hello");
            frames.push(frame);
        }
    }
    // The fuzz target's input, as it found it.
    let mut found = vec![0x28, 0xb5, 0x2f, 0xfd, 0xc0, 0x35, 0x0a, 0x0a];
    found.extend_from_slice(&[0xff; 28]);
    found.extend_from_slice(&[0x0a; 27]);
    found.extend_from_slice(&[0x13, 10, 10, 10, 10, 10, 10, 10, 0x0b, 0x0a, 0xff, 0xff]);
    found.extend_from_slice(&[0x2f, 0xfd, 0x14]);
    frames.push(found);
    for (i, frame) in frames.iter().enumerate() {
        let theirs = libzstd(frame, 1 << 20).ok();
        let ours = zstdblock::decode_all(frame, u64::MAX).ok();
        assert_eq!(ours, theirs, "frame {i}: decode_all");
        let mut streamed = Vec::new();
        let done = zstdblock::decode_to(frame, u64::MAX, |bytes| {
            streamed.extend_from_slice(bytes);
            Ok::<(), std::io::Error>(())
        });
        assert_eq!(done.ok().map(|_| streamed), theirs, "frame {i}: decode_to");
        for threads in [1, 2] {
            let mut settings = zstdblock::parallel::Parallel::new(threads, u64::MAX);
            settings.min_input = 0;
            let mut written = Vec::new();
            let done = settings.decode(frame, &mut written);
            assert_eq!(
                done.ok().map(|_| written),
                theirs,
                "frame {i}: {threads} threads"
            );
        }
    }
}
