use super::*;

/// One step of a xorshift generator: the deterministic source of the
/// test data here and in `piece`'s and `estimate`'s tests.
pub(super) fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Deterministic incompressible bytes (xorshift), for this module's
/// tests and `piece`'s.
pub(super) fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            xorshift(&mut x);
            (x >> 32) as u8
        })
        .collect()
}

#[test]
fn entropy_classifier() {
    assert!(looks_incompressible(&noise(65536, 3)));
    assert!(!looks_incompressible(&[b'a'; 65536]));
    let text: Vec<u8> = b"the quick brown fox jumps over the lazy dog "
        .iter()
        .cycle()
        .take(65536)
        .copied()
        .collect();
    assert!(!looks_incompressible(&text));
}

#[test]
fn mixed_stored_and_deflated_stretches_decode() {
    // text, noise, text (repeating the first text so matches span the
    // stored stretch through the dictionary), noise at the end.
    let text: Vec<u8> = (0..200_000u32)
        .map(|i| b"lorem ipsum dolor sit amet "[(i % 27) as usize])
        .collect();
    let mut data = text.clone();
    data.extend_from_slice(&noise(150_000, 5));
    data.extend_from_slice(&text[..100_000]);
    data.extend_from_slice(&noise(70_000, 9));
    for split in [1000usize, 65536, 100_000] {
        let mut e = Encoder::new(Method::Deflate, 6);
        let mut out = Vec::new();
        for c in data.chunks(split) {
            e.encode(c, &mut out);
        }
        e.finish(&mut out);
        assert_eq!(inflate_all(&out, data.len()), data, "split {split}");
        // The noise is stored, not expanded much; text compresses.
        assert!(out.len() < 150_000 + 70_000 + 20_000, "{}", out.len());
    }
}

/// Inflates with flate2 (zlib-rs's streaming API, not the code under
/// test) what should be at most `max` bytes, requiring the stream to
/// end exactly at `comp`'s end.
pub(super) fn inflate_all(comp: &[u8], max: usize) -> Vec<u8> {
    let mut d = Decoder::for_method(8, None).unwrap();
    let mut out = vec![0u8; max + 1];
    let (mut pos, mut inp) = (0, comp);
    loop {
        let s = d.step(inp, &mut out[pos..]).unwrap();
        inp = &inp[s.consumed..];
        pos += s.produced;
        if s.done {
            break;
        }
        assert!(s.consumed + s.produced > 0, "no progress");
    }
    assert!(inp.is_empty(), "{} bytes after the stream's end", inp.len());
    out.truncate(pos);
    out
}

/// One random block of `block` bytes, repeated to `n` bytes.
fn repeated(n: usize, block: usize, seed: u64) -> Vec<u8> {
    noise(block, seed).into_iter().cycle().take(n).collect()
}

fn deflate_in_chunks(data: &[u8], chunk: usize) -> Vec<u8> {
    let mut e = Encoder::new(Method::Deflate, 6);
    let mut out = Vec::new();
    for c in data.chunks(chunk) {
        e.encode(c, &mut out);
    }
    e.finish(&mut out);
    out
}

/// Data its first piece's sample finds dense (one sentence, zeros)
/// goes into the dense stream from its first byte: the entry is one
/// zlib-rs stream at level 7, byte for byte, with no libdeflate piece
/// before it. Dense data after text goes into it unprimed, and
/// decodes.
#[test]
fn data_that_starts_dense_is_one_dense_stream_from_its_start() {
    let sentence: Vec<u8> = b"Any sentence, said again and again. "
        .iter()
        .cycle()
        .take(6 << 20)
        .copied()
        .collect();
    for data in [sentence, vec![0u8; 5 << 20]] {
        let out = deflate_in_chunks(&data, 1 << 20);
        let mut one = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(7));
        std::io::Write::write_all(&mut one, &data).unwrap();
        assert!(out == one.finish().unwrap(), "{} bytes", out.len());
    }
    let text: Vec<u8> = noise(3 << 20, 9)
        .iter()
        .flat_map(|b| [b"the ", b"and ", b"for ", b"nor "][usize::from(b % 4)])
        .copied()
        .collect();
    let mut data = text.clone();
    data.extend_from_slice(&vec![0u8; 5 << 20]);
    data.extend_from_slice(&text);
    let out = deflate_in_chunks(&data, 1 << 20);
    assert!(inflate_all(&out, data.len()) == data);
}

/// Word text of `pieces` pieces, each with zeros where its sample is
/// probed.
fn dense_where_probed(pieces: usize) -> Vec<u8> {
    let mut data: Vec<u8> = noise(3 << 20, 4)
        .iter()
        .flat_map(|b| [b"the ", b"and ", b"for ", b"nor "][usize::from(b % 4)])
        .copied()
        .take(pieces * piece::PIECE)
        .collect();
    for piece in data.chunks_mut(piece::PIECE) {
        let middle = piece.len() / 2;
        piece[middle - (32 << 10)..middle + (32 << 10)].fill(0);
    }
    data
}

/// Text whose every piece holds zeros where its sample is probed: the
/// first piece goes into the dense stream by the probe and comes out
/// only a few times smaller, and the pieces after it are libdeflate's
/// (the ladder runs), where each went into the dense stream before.
#[test]
fn a_probe_that_misjudged_its_piece_is_not_trusted_again() {
    let data = dense_where_probed(5);
    let mut d = Deflater::new(6);
    let mut out = Vec::new();
    d.encode(&data, &mut out);
    assert!(d.probe_misled);
    assert!(d.engine.made_beyond_probes());
    d.finish(&mut out);
    assert!(inflate_all(&out, data.len()) == data);
}

/// A deflater's next stream or stretch (the parallel writer's workers
/// keep theirs from job to job) is made as a new deflater makes it:
/// the same input, the same archive, whichever worker saw what.
#[test]
fn a_misjudged_probe_is_forgotten_at_the_end_of_a_stream_or_stretch() {
    let data = dense_where_probed(2);
    let fresh = |end: fn(&mut Deflater, &mut Vec<u8>)| {
        let mut out = Vec::new();
        let mut d = Deflater::new(6);
        d.encode(&data, &mut out);
        end(&mut d, &mut out);
        (d, out)
    };
    let ends: [fn(&mut Deflater, &mut Vec<u8>); 2] =
        [|d, out| d.finish(out), |d, out| d.end_stretch(out)];
    for end in ends {
        let (mut used, first) = fresh(end);
        let mut second = Vec::new();
        used.encode(&data, &mut second);
        end(&mut used, &mut second);
        assert!(
            second == first,
            "{} bytes, new {}",
            second.len(),
            first.len()
        );
    }
}

#[test]
fn dense_data_costs_what_one_stream_costs() {
    // 12 MiB of one 4 KiB random block: each fresh 2 MiB piece would
    // spell the block out again (about 30 % more than one stream).
    let data = repeated(12 << 20, 4096, 11);
    let out = deflate_in_chunks(&data, 1 << 20);
    assert!(inflate_all(&out, data.len()) == data);
    let mut one = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::new(9));
    std::io::Write::write_all(&mut one, &data).unwrap();
    let one = one.finish().unwrap();
    assert!(
        out.len() * 100 <= one.len() * 101,
        "{} bytes, one stream {}",
        out.len(),
        one.len()
    );
}

#[test]
fn dense_stretches_between_text_and_stored_noise_decode() {
    // Text (pieces), dense data (the dense stream, primed with the
    // text's end), noise (stored: the dense stream ends), dense data
    // again, then text that ends the dense stream by its ratio.
    let words = [
        "lorem ",
        "ipsum ",
        "dolor ",
        "sit ",
        "amet, ",
        "consectetur\n",
        "elit ",
        "sed ",
    ];
    let text: Vec<u8> = noise(500_000, 3)
        .iter()
        .flat_map(|b| words[usize::from(b % 8)].bytes())
        .collect();
    let mut data = text.clone();
    data.extend_from_slice(&repeated(6 << 20, 1000, 2));
    data.extend_from_slice(&noise(300_000, 4));
    data.extend_from_slice(&repeated(5 << 20, 3000, 5));
    data.extend_from_slice(&noise(3 << 20, 6)[..]);
    data.extend_from_slice(&repeated(3 << 20, 777, 8));
    data.extend_from_slice(&text);
    for chunk in [65536, 1 << 20, 3_000_001] {
        let out = deflate_in_chunks(&data, chunk);
        assert!(inflate_all(&out, data.len()) == data, "chunks of {chunk}");
    }
}

#[test]
fn deflate_round_trip_in_chunks_and_sync_points() {
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| (i % 251) as u8 ^ (i / 977) as u8)
        .collect();
    let mut e = Encoder::new(Method::Deflate, 6);
    let mut out = Vec::new();
    e.encode_sync(&data[..70_000], &mut out);
    // A sync flush leaves the stream ending in an empty stored block.
    assert_eq!(&out[out.len() - 4..], &[0, 0, 0xff, 0xff]);
    for c in data[70_000..].chunks(9_999) {
        e.encode(c, &mut out);
    }
    e.finish(&mut out);
    assert!(out.len() < data.len());
    assert_eq!(inflate_all(&out, data.len()), data);
}
