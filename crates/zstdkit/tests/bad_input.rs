//! Bad input is normal input: every kind of broken stream gets its own typed
//! error, never a panic and never silently short output.

use std::io::Read;

use zstdkit::{Compressor, Decoder, Decompressor, Error, Params, Recipe};

fn sample() -> Vec<u8> {
    (0..200_000u32)
        .flat_map(|i| format!("line {i} value {}\n", i * 31 % 977).into_bytes())
        .collect()
}

fn frame() -> Vec<u8> {
    zstdkit::compress(&sample(), Recipe::Balanced).unwrap()
}

fn stream_decode(src: &[u8]) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    Decoder::new(src)
        .unwrap()
        .read_to_end(&mut out)
        .map_err(Error::from_io)?;
    Ok(out)
}

#[test]
fn truncated_frames_are_reported_not_shortened() {
    let f = frame();
    for cut in [0, 1, 3, 4, 5, 9, f.len() / 2, f.len() - 1] {
        let one = zstdkit::decompress(&f[..cut]).unwrap_err();
        assert!(matches!(one, Error::Truncated { .. }), "cut {cut}: {one}");
        let streamed = stream_decode(&f[..cut]).unwrap_err();
        assert!(
            matches!(streamed, Error::Truncated { .. }),
            "cut {cut}: {streamed}"
        );
    }
}

#[test]
fn foreign_data_is_not_zstd() {
    for junk in [
        &b"PK\x03\x04 this is a zip"[..],
        b"\x1f\x8b\x08 gzip",
        b"hello world",
    ] {
        let e = zstdkit::decompress(junk).unwrap_err();
        assert!(matches!(e, Error::UnknownFormat { offset: 0 }), "{e}");
        assert_eq!(
            e.to_string(),
            "not zstd data: unknown frame header at byte 0"
        );
        assert!(matches!(
            stream_decode(junk).unwrap_err(),
            Error::UnknownFormat { offset: 0 }
        ));
    }
}

#[test]
fn garbage_after_a_valid_frame_is_an_error_at_its_offset() {
    let mut f = frame();
    let end = f.len() as u64;
    f.extend_from_slice(b"trailing junk");
    let e = stream_decode(&f).unwrap_err();
    assert!(
        matches!(e, Error::UnknownFormat { offset } if offset == end),
        "{e}"
    );
    assert!(matches!(
        zstdkit::decompress(&f).unwrap_err(),
        Error::UnknownFormat { .. }
    ));
}

#[test]
fn corrupted_payload_is_an_error_or_provably_unchanged() {
    let f = frame();
    let original = sample();
    let mut seen_error = 0;
    for pos in (20..f.len()).step_by(f.len() / 150) {
        let mut bad = f.clone();
        bad[pos] ^= 0x5a;
        match zstdkit::decompress(&bad) {
            // A few bits of a frame are padding: flipping them changes
            // nothing, and the checksum proves the output is still right.
            Ok(out) => assert!(out == original, "flip at {pos} decoded to wrong data"),
            Err(Error::Corrupt { .. } | Error::Checksum { .. } | Error::Truncated { .. }) => {
                seen_error += 1
            }
            Err(other) => panic!("flip at {pos}: unexpected {other}"),
        }
        if let Ok(out) = stream_decode(&bad) {
            assert!(
                out == original,
                "stream decode accepted a damaging flip at {pos}"
            );
        }
    }
    assert!(seen_error > 10);
}

#[test]
fn checksum_mismatch_has_its_own_error() {
    let mut f = frame();
    let n = f.len();
    f[n - 1] ^= 0xff; // the last 4 bytes are the XXH64-based checksum
    assert!(matches!(
        zstdkit::decompress(&f).unwrap_err(),
        Error::Checksum { .. }
    ));
}

#[test]
fn wrong_or_missing_dictionary() {
    let samples: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("{{\"k\":{i},\"name\":\"n{}\",\"ok\":true}}", i % 13).into_bytes())
        .collect();
    let other: Vec<Vec<u8>> = (0..300)
        .map(|i| format!("<row id='{i}' v='{}'/>", i * 7 % 23).into_bytes())
        .collect();
    let dict = zstdkit::dict::train(&samples, 2048).unwrap();
    let wrong = zstdkit::dict::train(&other, 2048).unwrap();
    let f = Compressor::with_dictionary(Recipe::Balanced, &dict)
        .unwrap()
        .compress(&samples[0])
        .unwrap();
    let e = Decompressor::new().unwrap().decompress(&f).unwrap_err();
    assert!(matches!(e, Error::WrongDictionary { .. }), "{e}");
    let e = Decompressor::with_dictionary(&wrong)
        .unwrap()
        .decompress(&f)
        .unwrap_err();
    assert!(matches!(e, Error::WrongDictionary { .. }), "{e}");
}

#[test]
fn an_impossible_dictionary_size_is_an_error_not_a_panic() {
    let samples: Vec<Vec<u8>> = (0..100)
        .map(|i| format!("sample {i}").into_bytes())
        .collect();
    for size in [usize::MAX, usize::MAX / 2, zstdkit::dict::MAX_DICT_SIZE + 1] {
        let e = zstdkit::dict::train(&samples, size).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Parameter {
                    name: "max_dict_size",
                    ..
                }
            ),
            "{size}: {e}"
        );
    }
}

#[test]
fn windows_beyond_the_memory_limit_are_refused() {
    let data = sample();
    // No declared size: the streaming path, where zstd keeps a window
    // buffer of the frame's window size.
    let mut enc =
        zstdkit::Encoder::new(Vec::new(), Params::from(Recipe::Fast).window_log(Some(23))).unwrap();
    std::io::Write::write_all(&mut enc, &data).unwrap();
    let f = enc.finish().unwrap();
    let mut d = Decompressor::new().unwrap();
    d.set_window_log_max(20).unwrap();
    let e = d.decompress(&f).unwrap_err();
    assert!(
        matches!(
            e,
            Error::WindowTooLarge {
                limit: 0x10_0000,
                ..
            }
        ),
        "{e}"
    );
    d.set_window_log_max(23).unwrap();
    assert_eq!(d.decompress(&f).unwrap(), data);
}

mod mutated {
    use super::*;
    use proptest::prelude::*;

    fn small_frame() -> Vec<u8> {
        let text: Vec<u8> = (0..3000u32)
            .flat_map(|i| format!("{} ", i % 97).into_bytes())
            .collect();
        zstdkit::compress(&text, Recipe::Balanced).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// The fuzz target's property, on mutations of a real frame so that
        /// plain `cargo test` reaches past the header: no panic, and the two
        /// decoders never disagree about a success.
        #[test]
        fn decoders_agree_on_mutated_frames(
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut f = small_frame();
            for (i, x) in flips {
                let at = i.index(f.len());
                f[at] ^= x;
            }
            let len = f.len();
            f.truncate(1 + cut.index(len));
            zstdkit::fuzzing::decode(&f);
        }
    }
}

/// A hand-built frame: a 2^`window_log` window, a declared content size and
/// RLE blocks of `b'a'` (at most 128 KiB each) adding up to `content`.
/// Eighteen-odd bytes that decode to `content` bytes: no encoder needed.
fn rle_frame(window_log: u8, content: u32) -> Vec<u8> {
    let mut f = vec![0x28, 0xb5, 0x2f, 0xfd];
    // Frame header descriptor: 4-byte content size, no single segment,
    // no checksum, no dictionary; then the window descriptor.
    f.push(0x80);
    f.push((window_log - 10) << 3);
    f.extend_from_slice(&content.to_le_bytes());
    let mut left = content;
    while left > 0 {
        let size = left.min(128 << 10);
        left -= size;
        let last = u32::from(left == 0);
        // Block header: last-block bit, type 1 (RLE), regenerated size.
        f.extend_from_slice(&((size << 3) | (1 << 1) | last).to_le_bytes()[..3]);
        f.push(b'a');
    }
    f
}

/// Reads with one caller buffer of `buf` bytes per call, as an application
/// with a big read buffer does.
fn stream_decode_with(src: &[u8], buf: usize, dec: Decompressor) -> Result<Vec<u8>, Error> {
    let mut d = Decoder::with_decompressor(src, dec);
    let mut out = Vec::new();
    let mut chunk = vec![0u8; buf];
    loop {
        let n = d.read(&mut chunk).map_err(Error::from_io)?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

fn async_decode(src: &[u8], dec: Decompressor) -> Result<Vec<u8>, Error> {
    use tokio::io::AsyncReadExt;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut out = Vec::new();
        zstdkit::AsyncDecoder::with_decompressor(src, dec)
            .read_to_end(&mut out)
            .await
            .map_err(Error::from_io)?;
        Ok(out)
    })
}

/// The memory limit is a property of the frame, not of the decoding path:
/// zstd checks it only when it streams through its own window buffer, so
/// the one-shot call, and a streaming call whose output buffer holds the
/// whole frame, used to accept what `zstd -d` refuses.
#[test]
fn the_window_limit_holds_on_every_decoding_path() {
    let limited = || {
        let mut d = Decompressor::new().unwrap();
        d.set_window_log_max(27).unwrap();
        d
    };
    for content in [256 << 10, 300] {
        let f = rle_frame(28, content);
        let paths: [(&str, Result<Vec<u8>, Error>); 5] = [
            ("one-shot", zstdkit::decompress(&f)),
            ("reused one-shot", limited().decompress(&f)),
            ("streaming", stream_decode(&f)),
            (
                "streaming, 1 MiB reads",
                stream_decode_with(&f, 1 << 20, limited()),
            ),
            ("async", async_decode(&f, limited())),
        ];
        for (path, got) in paths {
            assert!(
                matches!(
                    got,
                    Err(Error::WindowTooLarge {
                        offset: 0,
                        window: Some(0x1000_0000),
                        limit: 0x800_0000,
                    })
                ),
                "{path}, {content} bytes declared: {:?}",
                got.map(|v| v.len())
            );
        }
        // Raising the limit admits the frame everywhere, with the same bytes.
        let wide = || {
            let mut d = Decompressor::new().unwrap();
            d.set_window_log_max(28).unwrap();
            d
        };
        let want = vec![b'a'; content as usize];
        assert_eq!(wide().decompress(&f).unwrap(), want);
        assert_eq!(stream_decode_with(&f, 1 << 20, wide()).unwrap(), want);
        assert_eq!(stream_decode_with(&f, 100, wide()).unwrap(), want);
        assert_eq!(async_decode(&f, wide()).unwrap(), want);
    }
    // A frame within the limit after one that is not: the error names the
    // second frame's start.
    let ok = rle_frame(27, 1000);
    let mut two = ok.clone();
    two.extend_from_slice(&rle_frame(28, 1000));
    let e = zstdkit::decompress(&two).unwrap_err();
    assert!(
        matches!(e, Error::WindowTooLarge { offset, .. } if offset == ok.len() as u64),
        "{e}"
    );
    let e = stream_decode_with(&two, 1 << 20, Decompressor::new().unwrap()).unwrap_err();
    assert!(
        matches!(e, Error::WindowTooLarge { offset, .. } if offset == ok.len() as u64),
        "{e}"
    );
}

/// A `BufRead` that hands out its input in pieces of the given sizes, then
/// the rest at once: how a socket or a pipe delivers a stream.
struct Pieces<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
}

impl std::io::Read for Pieces<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = std::io::BufRead::fill_buf(self)?.len().min(out.len());
        out[..n].copy_from_slice(&self.data[..n]);
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl std::io::BufRead for Pieces<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        let n = self.sizes.first().map_or(self.data.len(), |&n| n);
        Ok(&self.data[..n.min(self.data.len())])
    }

    fn consume(&mut self, n: usize) {
        self.data = &self.data[n..];
        if let Some(first) = self.sizes.first_mut() {
            *first -= n.min(*first);
            if *first == 0 {
                self.sizes.remove(0);
            }
        }
    }
}

/// An empty skippable frame whose header arrives a byte at a time ends at
/// its header; the frame after it is still checked against the limit, even
/// when it arrives whole into an output buffer that holds all of it (where
/// zstd skips its own check).
#[test]
fn the_window_limit_holds_after_a_skippable_frame_read_in_pieces() {
    let mut src = vec![0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0];
    src.extend_from_slice(&rle_frame(28, 300));
    let reader = Pieces {
        data: &src,
        sizes: vec![1; 8],
    };
    let mut d = Decoder::with_decompressor(reader, Decompressor::new().unwrap());
    let mut out = vec![0u8; 1 << 20];
    let e = Error::from_io(d.read(&mut out).unwrap_err());
    assert!(
        matches!(
            e,
            Error::WindowTooLarge {
                offset: 8,
                window: Some(0x1000_0000),
                limit: 0x800_0000,
            }
        ),
        "{e}"
    );
}

/// `--memory`-style limits need not be powers of two: a 160 MiB window
/// (2^27 x 1.25) fits a 200 MiB limit, a 256 MiB one does not; the window
/// log form is the special case 2^log.
#[test]
fn memory_limits_in_bytes() {
    let mut f = rle_frame(27, 300);
    f[5] |= 2; // window mantissa: 2^27 + 2 x 2^24 = 160 MiB
    let wide = rle_frame(28, 300);
    let mut d = Decompressor::new().unwrap();
    assert_eq!(d.memory_limit(), 1 << 27);
    assert!(matches!(
        d.decompress(&f),
        Err(Error::WindowTooLarge { window: Some(w), limit: 0x800_0000, .. }) if w == 160 << 20
    ));
    d.set_memory_limit(200 << 20).unwrap();
    assert_eq!(d.decompress(&f).unwrap(), vec![b'a'; 300]);
    assert_eq!(stream_decode_with(&f, 7, d).unwrap(), vec![b'a'; 300]);
    let mut d = Decompressor::new().unwrap();
    d.set_memory_limit(200 << 20).unwrap();
    let e = d.decompress(&wide).unwrap_err();
    assert_eq!(
        e.to_string(),
        "frame window of 268435456 bytes exceeds the memory limit of 209715200 bytes at byte 0"
    );
    for bad in [0, 1023, (2 << 30) + 1, u64::MAX] {
        assert!(matches!(
            d.set_memory_limit(bad),
            Err(Error::Parameter {
                name: "memory_limit",
                ..
            })
        ));
    }
    for bad in [0, 9, 32, u32::MAX] {
        assert!(d.set_window_log_max(bad).is_err(), "{bad}");
    }
}

/// A header may declare any size; the one-shot decoder reserves room for it
/// only up to a bound set by the input's size and the memory limit, and
/// grows past that only as real output arrives.
#[test]
fn a_forged_content_size_does_not_reserve_memory() {
    let mut f = rle_frame(20, 128 << 10);
    // Claim 200 MiB while the one block makes 128 KiB.
    f[6..10].copy_from_slice(&(200u32 << 20).to_le_bytes());
    assert!(f.len() < 24);
    let mut dst = Vec::new();
    let e = Decompressor::new()
        .unwrap()
        .decompress_into(&f, &mut dst)
        .unwrap_err();
    assert!(
        matches!(e, Error::Corrupt { .. } | Error::Truncated { .. }),
        "{e}"
    );
    assert!(
        dst.capacity() <= 4 << 20,
        "reserved {} bytes for a {}-byte input",
        dst.capacity(),
        f.len()
    );
    // Real data far beyond the bound still decodes (zeros compress ~4000:1).
    let zeros = vec![0u8; 16 << 20];
    let frame = zstdkit::compress(&zeros, Recipe::Fast).unwrap();
    assert!(frame.len() * 1000 < zeros.len());
    assert!(zstdkit::decompress(&frame).unwrap() == zeros);
}
