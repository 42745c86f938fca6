//! Round trips of arbitrary data through every API, with arbitrary chunking
//! and flush modes. The oracle is the original input.

use std::io::{Read, Write};

use proptest::prelude::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use zstdkit::{
    AsyncDecoder, AsyncEncoder, Compressor, Decoder, Decompressor, Encoder, FlushMode, Params,
    Recipe,
};

fn recipe() -> impl Strategy<Value = Recipe> {
    // `maximum` is exercised by the CLI oracle tests; level 22 on thousands of
    // proptest cases would dominate the suite's run time.
    prop::sample::select(&Recipe::ALL[..5])
}

/// Data that is sometimes random, sometimes highly repetitive, like real
/// inputs are.
fn data() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..20_000),
        (prop::collection::vec(any::<u8>(), 1..64), 0usize..40_000).prop_map(|(unit, n)| unit
            .iter()
            .copied()
            .cycle()
            .take(n)
            .collect()),
    ]
}

fn chunks(len: usize, cuts: &[usize]) -> Vec<(usize, usize)> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (len + 1)).collect();
    points.extend([0, len]);
    points.sort_unstable();
    points.dedup();
    points.windows(2).map(|w| (w[0], w[1])).collect()
}

fn mode(i: u8) -> FlushMode {
    match i % 4 {
        0 | 1 => FlushMode::Continue,
        2 => FlushMode::Flush,
        _ => FlushMode::End,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn one_shot_reused_and_fresh(data in data(), r in recipe()) {
        let mut c = Compressor::new(r).unwrap();
        let mut d = Decompressor::new().unwrap();
        for _ in 0..2 {
            let frame = c.compress(&data).unwrap();
            prop_assert_eq!(&d.decompress(&frame).unwrap(), &data);
        }
        let fresh = zstdkit::compress(&data, r).unwrap();
        prop_assert_eq!(zstdkit::decompress(&fresh).unwrap(), data);
    }

    #[test]
    fn streaming_with_any_chunking_and_flush_modes(
        data in data(), r in recipe(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        modes in prop::collection::vec(any::<u8>(), 12),
        read_size in 1usize..5000,
    ) {
        let mut enc = Encoder::new(Vec::new(), r).unwrap();
        for (i, (a, b)) in chunks(data.len(), &cuts).into_iter().enumerate() {
            enc.write_with(&data[a..b], mode(modes[i % modes.len()])).unwrap();
        }
        let frames = enc.finish().unwrap();
        let mut dec = Decoder::new(&frames[..]).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0u8; read_size];
        loop {
            let n = dec.read(&mut buf).unwrap();
            if n == 0 { break; }
            out.extend_from_slice(&buf[..n]);
        }
        prop_assert_eq!(&out, &data);
        // Frames made of many `End`s are concatenated frames: one-shot
        // decoding must accept them too.
        prop_assert_eq!(zstdkit::decompress(&frames).unwrap(), data);
    }

    /// Input arriving a few bytes at a time splits frame headers (zstd
    /// frames and skippable ones) across reads; the decoder assembles them
    /// before checking and decoding, and a cut inside one is truncation.
    #[test]
    fn frame_headers_split_across_reads(
        data in data(), frames in 1usize..4, skippable in any::<bool>(),
        in_chunk in 1usize..40, cut in 1usize..6,
    ) {
        let mut stream = Vec::new();
        for i in 0..frames {
            let part = &data[i * data.len() / frames..(i + 1) * data.len() / frames];
            stream.extend(zstdkit::compress(part, Recipe::Fast).unwrap());
            if skippable {
                stream.extend([0x50, 0x2a, 0x4d, 0x18]);
                stream.extend(3u32.to_le_bytes());
                stream.extend(b"abc");
            }
        }
        let decode = |src: &[u8]| {
            let reader = std::io::BufReader::with_capacity(in_chunk, src);
            let mut dec = Decoder::with_decompressor(reader, Decompressor::new().unwrap());
            let mut out = Vec::new();
            dec.read_to_end(&mut out).map(|_| out).map_err(zstdkit::Error::from_io)
        };
        prop_assert_eq!(&decode(&stream).unwrap(), &data);
        prop_assert_eq!(&zstdkit::decompress(&stream).unwrap(), &data);
        let short = decode(&stream[..cut]);
        prop_assert!(matches!(short, Err(zstdkit::Error::Truncated { .. })), "{:?}", short);
    }

    #[test]
    fn flushed_prefix_is_decodable_before_the_frame_ends(
        data in data(), split in any::<usize>(),
    ) {
        let split = split % (data.len() + 1);
        let mut enc = Encoder::new(Vec::new(), Recipe::Fast).unwrap();
        enc.write_with(&data[..split], FlushMode::Flush).unwrap();
        let partial = enc.get_ref().clone();
        let mut dec = Decoder::new(&partial[..]).unwrap();
        let mut got = vec![0u8; split];
        dec.read_exact(&mut got).unwrap();
        prop_assert_eq!(&got[..], &data[..split]);
    }

    #[test]
    fn async_encoder_makes_the_same_bytes_as_sync(
        data in data(), cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let pieces = chunks(data.len(), &cuts);
        let mut enc = Encoder::new(Vec::new(), Recipe::Balanced).unwrap();
        for &(a, b) in &pieces { enc.write_all(&data[a..b]).unwrap(); }
        let sync_bytes = enc.finish().unwrap();

        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let (async_bytes, decoded) = rt.block_on(async {
            let mut enc = AsyncEncoder::new(Vec::new(), Recipe::Balanced).unwrap();
            for &(a, b) in &pieces { enc.write_all(&data[a..b]).await.unwrap(); }
            enc.shutdown().await.unwrap();
            let bytes = enc.into_inner();
            let mut dec = AsyncDecoder::new(BufReader::with_capacity(777, &bytes[..])).unwrap();
            let mut out = Vec::new();
            dec.read_to_end(&mut out).await.unwrap();
            (bytes, out)
        });
        prop_assert_eq!(&async_bytes, &sync_bytes);
        prop_assert_eq!(decoded, data);
    }
}

#[test]
fn overrides_long_mode_and_workers_round_trip() {
    let data: Vec<u8> = (0..3_000_000u32)
        .map(|i| (i % 251) as u8 ^ (i >> 13) as u8)
        .collect();
    for params in [
        Params::for_level(19),
        Params::from(Recipe::Fast).long(None),
        Params::from(Recipe::Balanced).workers(2),
        Params::from(Recipe::Binary)
            .window_log(Some(20))
            .checksum(false),
    ] {
        let frame = Compressor::new(params).unwrap().compress(&data).unwrap();
        assert_eq!(zstdkit::decompress(&frame).unwrap(), data, "{params:?}");
    }
}

#[test]
fn dictionaries_train_and_round_trip() {
    let samples: Vec<Vec<u8>> = (0..400)
        .map(|i| {
            format!(
                r#"{{"id":{i},"user":"user{}","event":"click","ts":{},"tags":["a","b{}"]}}"#,
                i % 17,
                1_700_000_000 + i * 7,
                i % 5
            )
            .into_bytes()
        })
        .collect();
    let dict = zstdkit::dict::train(&samples, 4096).unwrap();
    assert!(zstdkit::dict::dictionary_id(&dict).is_some());
    let mut c = Compressor::with_dictionary(Recipe::Balanced, &dict).unwrap();
    let mut d = Decompressor::with_dictionary(&dict).unwrap();
    let plain = zstdkit::compress(&samples[3], Recipe::Balanced).unwrap();
    let with = c.compress(&samples[3]).unwrap();
    assert!(
        with.len() < plain.len(),
        "dictionary helps: {} vs {}",
        with.len(),
        plain.len()
    );
    assert_eq!(d.decompress(&with).unwrap(), samples[3]);
}

/// A frame of libzstd's own, made by a context that never compressed
/// before, with `recipe`'s parameters set one by one here.
fn new_context_frame(recipe: Recipe, src: &[u8]) -> Vec<u8> {
    use zstd_safe::{CCtx, CParameter, Strategy as Z};
    let strategy = match recipe.strategy() {
        zstdkit::Strategy::Fast => Z::ZSTD_fast,
        zstdkit::Strategy::Dfast => Z::ZSTD_dfast,
        zstdkit::Strategy::Greedy => Z::ZSTD_greedy,
        zstdkit::Strategy::Lazy => Z::ZSTD_lazy,
        zstdkit::Strategy::Lazy2 => Z::ZSTD_lazy2,
        zstdkit::Strategy::Btlazy2 => Z::ZSTD_btlazy2,
        zstdkit::Strategy::Btopt => Z::ZSTD_btopt,
        zstdkit::Strategy::Btultra => Z::ZSTD_btultra,
        zstdkit::Strategy::Btultra2 => Z::ZSTD_btultra2,
    };
    let mut cctx = CCtx::create();
    for p in [
        CParameter::CompressionLevel(recipe.level()),
        CParameter::Strategy(strategy),
        CParameter::ChecksumFlag(Params::from(recipe).has_checksum()),
    ] {
        cctx.set_parameter(p).unwrap();
    }
    let mut frame = Vec::with_capacity(zstd_safe::compress_bound(src.len()));
    cctx.compress2(&mut frame, src).unwrap();
    frame
}

/// A reused context's frames are libzstd's frames of a new context, byte
/// for byte, whatever it compressed before: below and from the size where
/// a frame starts on clean tables (`CLEAN_TABLES_FROM`), in any order.
#[test]
fn a_reused_context_makes_the_frames_of_a_new_one() {
    let from = zstdkit::CLEAN_TABLES_FROM;
    // Words in a random order shrink about three times, as text does.
    let words = ["the ", "frame ", "of ", "a ", "window ", "and ", "tables\n"];
    let text: Vec<u8> = perfkit_testkit::noise::noise(from, 3)
        .into_iter()
        .flat_map(|b| words[usize::from(b) % words.len()].bytes())
        .take(3 * from)
        .collect();
    assert_eq!(text.len(), 3 * from);
    let zeros = vec![0u8; 2 * from];
    let noise = perfkit_testkit::noise::noise((1 << 20) + 5, 4);
    // After each kind of last frame (text, zeros, noise), frames above and
    // below the sizes where the context is replaced.
    let inputs = [
        &text[..from],
        &text[from..2 * from - 1],
        &text[..],
        &text[7..4096],
        &zeros[..],
        &text[..from],
        &noise[..from],
        &noise[..],
        &noise[3..],
        &text[..],
    ];
    for recipe in [Recipe::Fast, Recipe::Balanced, Recipe::Binary, Recipe::Text] {
        let mut reused = Compressor::new(recipe).unwrap();
        let mut frame = Vec::new();
        for (i, src) in inputs.iter().enumerate() {
            reused.compress_into(src, &mut frame).unwrap();
            assert!(
                frame == new_context_frame(recipe, src),
                "{recipe}, call {i} ({} bytes)",
                src.len()
            );
            assert_eq!(zstdkit::decompress(&frame).unwrap(), *src);
        }
    }
}
