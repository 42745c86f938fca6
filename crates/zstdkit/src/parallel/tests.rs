use super::*;
use crate::{Compressor, Encoder, Recipe};

/// Data that differs at every offset, so a frame written out of order
/// cannot compare equal: text-like runs between noise, frames of
/// different costs.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let noise = perfkit_testkit::noise::noise(len, seed);
    (0..len)
        .map(|i| {
            if (i / 4096) % 2 == 0 {
                b'a' + (i % 7) as u8
            } else {
                noise[i]
            }
        })
        .collect()
}

/// `parts` compressed one frame each, concatenated.
fn frames(parts: &[Vec<u8>]) -> Vec<u8> {
    let mut c = Compressor::new(Recipe::Fast).unwrap();
    parts.iter().flat_map(|p| c.compress(p).unwrap()).collect()
}

fn decode_all(input: &[u8], workers: usize) -> Result<(Vec<u8>, Decoded)> {
    let mut out = Vec::new();
    let done = decode(input, &mut out, workers, Decompressor::new, |_| {})?;
    Ok((out, done))
}

#[test]
fn frames_of_every_size_come_out_in_order() {
    let parts: Vec<Vec<u8>> = (0..40)
        .map(|i| data([0, 1, 100, 70_000, 300_000][i % 5], i as u64))
        .collect();
    let input = frames(&parts);
    for workers in [1, 2, 3, 8] {
        let (out, done) = decode_all(&input, workers).unwrap();
        assert_eq!(out, parts.concat(), "{workers} workers");
        assert_eq!(done.frames, 40);
        assert_eq!(done.read, input.len() as u64);
        assert_eq!(done.written, out.len() as u64);
        assert_eq!(done.streamed, 0);
    }
}

/// A frame that does not declare its size, as a streaming encoder
/// without a pledged size (or pzstd) writes it.
fn unsized_frame(data: &[u8]) -> Vec<u8> {
    let mut e = Encoder::new(Vec::new(), Recipe::Fast).unwrap();
    std::io::Write::write_all(&mut e, data).unwrap();
    let frame = e.finish().unwrap();
    assert_eq!(
        crate::frame::Unit::parse(&frame, 0)
            .unwrap()
            .unwrap()
            .content_size(),
        None
    );
    frame
}

#[test]
fn frames_of_unknown_size_go_to_workers_when_their_blocks_bound_them() {
    let (a, middle, c) = (data(50_000, 1), data(200_000, 9), data(60_000, 2));
    let mut input = frames(std::slice::from_ref(&a));
    input.extend(unsized_frame(&middle));
    input.extend(frames(std::slice::from_ref(&c)));
    assert!(splits(&input) && splits(&unsized_frame(&middle)));
    let (out, done) = decode_all(&input, 2).unwrap();
    assert_eq!(out, [a, middle, c].concat());
    assert_eq!((done.frames, done.streamed), (3, 0));
}

#[test]
fn frames_too_large_to_hold_stream_in_order_between_the_others() {
    let huge = data(MAX_PARALLEL_FRAME as usize + (1 << 20), 4);
    let small = data(70_000, 5);
    // Too large by its declared size, and by its blocks.
    let declared = crate::compress(&huge, Recipe::Fast).unwrap();
    for big in [declared, unsized_frame(&huge)] {
        let mut input = frames(std::slice::from_ref(&small));
        input.extend(&big);
        input.extend(frames(std::slice::from_ref(&small)));
        let (out, done) = decode_all(&input, 2).unwrap();
        assert!(out == [&small[..], &huge, &small].concat());
        assert_eq!((done.frames, done.streamed), (3, 1));
        // Cut inside the large frame: truncated, named as frame 1.
        let cut = &input[..input.len() - frames(std::slice::from_ref(&small)).len() - 100];
        let err = decode_all(cut, 2).unwrap_err();
        assert!(matches!(err, Error::InFrame { index: 1, .. }), "{err}");
    }
}

/// A header declaring 256 bytes, then raw blocks that bound 40 MiB: not
/// held whole for a worker (the block bound passes the limit, so it
/// streams), and refused by zstd as a frame, named.
#[test]
fn a_frame_whose_header_lies_about_its_size_is_refused_not_held() {
    // Magic, a 2-byte content size (256 + 0), an 8 MiB window, no
    // checksum; then 320 raw blocks of 128 KiB, the last marked last.
    let mut input = vec![0x28, 0xB5, 0x2F, 0xFD, 0x40, 0x68, 0, 0];
    let block = 128u32 << 10;
    for i in 0..320 {
        let last = u32::from(i == 319);
        input.extend(&((block << 3) | last).to_le_bytes()[..3]);
        input.extend(std::iter::repeat_n(b'x', block as usize));
    }
    // How far it read before refusing: held whole, it would have read all
    // 40 MiB first.
    struct Counted<'a>(&'a [u8], u64);
    impl std::io::Read for Counted<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.0.read(buf)?;
            self.1 += n as u64;
            Ok(n)
        }
    }
    let mut src = Counted(&input, 0);
    let err = decode(&mut src, &mut Vec::new(), 2, Decompressor::new, |_| {}).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InFrame {
                index: 0,
                offset: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(
        src.1 < MAX_PARALLEL_FRAME + (2 << 20),
        "read {} bytes",
        src.1
    );
}

#[test]
fn skippable_frames_are_passed_over_as_pzstd_writes_them() {
    let parts = [data(10_000, 3), data(20_000, 4)];
    let mut c = Compressor::new(Recipe::Fast).unwrap();
    let mut input = Vec::new();
    for p in &parts {
        let f = c.compress(p).unwrap();
        // pzstd's skippable frame before each frame: its compressed size.
        input.extend(0x184D_2A50u32.to_le_bytes());
        input.extend(4u32.to_le_bytes());
        input.extend((f.len() as u32).to_le_bytes());
        input.extend(f);
    }
    assert!(splits(&input));
    let (out, done) = decode_all(&input, 2).unwrap();
    assert_eq!(out, parts.concat());
    assert_eq!(done.frames, 4);
}

#[test]
fn a_damaged_frame_is_named_with_its_offset_after_the_frames_before_it() {
    let parts: Vec<Vec<u8>> = (0..6).map(|i| data(30_000, i)).collect();
    let mut c = Compressor::new(Recipe::Fast).unwrap();
    let encoded: Vec<Vec<u8>> = parts.iter().map(|p| c.compress(p).unwrap()).collect();
    let at: usize = encoded[..3].iter().map(Vec::len).sum();
    let mut input = encoded.concat();
    // Inside frame 3's first block, past its headers.
    let mid = at + encoded[3].len() / 2;
    input[mid] ^= 0xA5;
    input[mid + 1] ^= 0x5A;
    let mut out = Vec::new();
    let err = decode(&input[..], &mut out, 2, Decompressor::new, |_| {}).unwrap_err();
    match err {
        Error::InFrame { index, offset, .. } => assert_eq!((index, offset), (3, at as u64)),
        other => panic!("{other}"),
    }
    assert_eq!(out, parts[..3].concat());
}

#[test]
fn cut_empty_and_foreign_inputs_are_errors() {
    let input = frames(&[data(5000, 1), data(5000, 2)]);
    let first = frames(&[data(5000, 1)]).len();
    let err = decode_all(&input[..input.len() - 3], 2).unwrap_err();
    match err {
        Error::InFrame {
            index: 1,
            offset,
            source,
        } => {
            assert_eq!(offset, first as u64);
            assert!(matches!(*source, Error::Truncated { .. }), "{source}");
        }
        other => panic!("{other}"),
    }
    assert!(matches!(
        decode_all(b"", 2),
        Err(Error::Truncated { offset: 0 })
    ));
    assert!(matches!(
        decode_all(b"PK\x03\x04 not zstd at all", 2),
        Err(Error::InFrame {
            index: 0,
            offset: 0,
            ..
        })
    ));
}

#[test]
fn the_window_limit_holds_on_every_worker() {
    let big_window = crate::compress(
        &data(3 << 20, 5),
        crate::Params::from(Recipe::Fast).window_log(Some(22)),
    )
    .unwrap();
    let input = [frames(&[data(1000, 6)]), big_window].concat();
    let limited = || {
        let mut d = Decompressor::new()?;
        d.set_memory_limit(1 << 20)?;
        Ok(d)
    };
    let mut out = Vec::new();
    let err = decode(&input[..], &mut out, 2, limited, |_| {}).unwrap_err();
    assert!(
        matches!(&err, Error::InFrame { index: 1, source, .. } if matches!(**source, Error::WindowTooLarge { .. })),
        "{err}"
    );
}
