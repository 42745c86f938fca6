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
fn windows_beyond_the_memory_limit_are_refused() {
    let data = sample();
    // No declared size forces the streaming path, which is where a window
    // limit protects memory.
    let mut enc =
        zstdkit::Encoder::new(Vec::new(), Params::from(Recipe::Fast).window_log(Some(23))).unwrap();
    std::io::Write::write_all(&mut enc, &data).unwrap();
    let f = enc.finish().unwrap();
    let mut d = Decompressor::new().unwrap();
    d.set_window_log_max(20).unwrap();
    let e = d.decompress(&f).unwrap_err();
    assert!(matches!(e, Error::WindowTooLarge { limit: 20, .. }), "{e}");
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
            let one = zstdkit::decompress(&f);
            let stream = stream_decode(&f);
            if let (Ok(a), Ok(b)) = (&one, &stream) {
                prop_assert_eq!(a, b);
            }
            prop_assert!(!(one.is_ok() && stream.is_err()), "one-shot ok, stream {:?}", stream.err());
        }
    }
}
