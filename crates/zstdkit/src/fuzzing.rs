//! The fuzz body, kept in the library so `cargo test` runs it over the seed
//! frames and mutations of real frames, and `cargo fuzz`
//! (crates/zstdkit/fuzz) runs it over random inputs.

use std::io::Read;

/// Untrusted bytes into both decoders: neither may panic, and a one-shot
/// success must be matched, byte for byte, by the streaming decoder.
///
/// # Panics
/// When the two decoders disagree: that is the property under test, and a
/// panic is how a fuzzer reports it.
pub fn decode(data: &[u8]) {
    let one_shot = crate::decompress(data);
    let mut streamed = Vec::new();
    let stream = crate::Decoder::new(data)
        .expect("a decoding context")
        .read_to_end(&mut streamed)
        .map_err(crate::Error::from_io);
    match (one_shot, stream) {
        (Ok(a), Ok(_)) => assert!(a == streamed, "the decoders disagree"),
        (Ok(a), Err(e)) => panic!("one-shot decoded {} bytes, streaming failed: {e}", a.len()),
        _ => {}
    }
}

/// Untrusted bytes as a patch, against a fixed reference: applying it
/// must never panic, whatever the frame (the first byte picks how long a
/// reference the frame is applied to).
///
/// # Panics
/// When applying a patch panics inside zstdkit; that is what is under test.
pub fn patch(data: &[u8]) {
    let Some((&cut, frame)) = data.split_first() else {
        return;
    };
    let reference = PATCH_REFERENCE.repeat(usize::from(cut) % 8);
    let _ = crate::patch::apply(&reference, frame);
}

/// Untrusted bytes after gzip's magic, through the file tool's decoder
/// ([`crate::job`], which streams member headers past itself): it must
/// never panic, and whatever flate2's own gzip reader decodes it must
/// decode to the same bytes (it also takes header fields flate2 refuses
/// as too long).
///
/// # Panics
/// When decoding panics, or the two disagree.
pub fn gzip(data: &[u8]) {
    use crate::job::{Decompress, Job, WindowLimit};
    let input = [&crate::job::GZIP_MAGIC[..], data].concat();
    let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Shared(out.clone());
    let job = Job::Decompress(Decompress::Frames {
        window: WindowLimit::Default,
        dictionary: None,
        threads: 1,
        verify_checksums: true,
        pass_through: false,
    });
    let ours = job.run(
        Box::new(std::io::Cursor::new(input.clone())),
        None,
        Some(Box::new(sink)),
        &mut |_| {},
    );
    let mut theirs = Vec::new();
    let oracle = flate2::read::MultiGzDecoder::new(&input[..]).read_to_end(&mut theirs);
    if oracle.is_ok() {
        assert!(ours.is_ok(), "flate2 decoded it, job failed: {ours:?}");
        assert!(*out.lock().unwrap() == theirs, "the decoders disagree");
    }
}

/// A writer into a buffer the caller keeps a handle on.
struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Untrusted bytes as a seekable file's tail: reading its seek table must
/// never panic, and a table read must encode back to the bytes it came
/// from (no field is lost or invented).
///
/// # Panics
/// When reading panics, or a table read does not encode back.
pub fn seek_table(data: &[u8]) {
    if let Ok(table) = crate::seekable::SeekTable::parse_with_len(data, None) {
        let encoded = table.encode();
        let mut tail = data[data.len() - encoded.len()..].to_vec();
        // The descriptor's two unused bits are not kept.
        let descriptor = tail.len() - 5;
        tail[descriptor] &= !0x03;
        assert!(tail == encoded, "a table read does not encode back");
    }
    let _ = crate::seekable::SeekTable::parse(data);
}

/// Untrusted bytes as an input of several frames: the parallel decoder
/// ([`crate::parallel::decode`], two workers) must never panic, and when
/// the one-shot decoder decodes the input, it must decode it too, to the
/// same bytes. The frame walker must pass over exactly the bytes it was
/// given when it reaches the end.
///
/// # Panics
/// When a decoder panics, or the two disagree.
pub fn frames(data: &[u8]) {
    let mut out = Vec::new();
    let parallel = crate::parallel::decode(data, &mut out, 2, crate::Decompressor::new, |_| {});
    if let Ok(whole) = crate::decompress(data) {
        assert!(
            parallel.is_ok(),
            "one-shot decoded, parallel failed: {parallel:?}"
        );
        assert!(whole == out, "the decoders disagree");
    }
    let mut walker = crate::frame::FrameWalker::new(data);
    let mut walked = 0u64;
    loop {
        match walker.take(None) {
            Ok(Some(w)) => {
                assert_eq!(w.offset, walked, "units follow each other");
                walked += w.len;
            }
            Ok(None) => {
                assert_eq!(
                    walked,
                    data.len() as u64,
                    "the walker ended off the input's end"
                );
                break;
            }
            Err(_) => break,
        }
    }
}

/// The reference [`patch`] applies untrusted frames to.
pub const PATCH_REFERENCE: &[u8] = b"perfkit patch reference: the quick brown fox. ";

#[cfg(test)]
mod tests {
    /// The seed frames `cargo xtask fuzz` starts from (zstd CLI output: no
    /// checksum, no content size, behind a skippable frame), whole and cut.
    /// That the whole seeds decode to what the `zstd` CLI makes of them is
    /// checked by `tests/seeds_vs_zstd_cli.rs`.
    #[test]
    fn fuzz_body_survives_the_seeds() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/decode");
        let mut n = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let seed = std::fs::read(entry.unwrap().path()).unwrap();
            assert!(crate::decompress(&seed).is_ok(), "seeds are valid frames");
            for cut in 0..=seed.len() {
                super::decode(&seed[..cut]);
            }
            n += 1;
        }
        assert!(n >= 3, "seed directory read");
    }

    /// Real gzip members (one with every optional header field, then a
    /// plain one), cut at every length and with bytes flipped, through the
    /// gzip body.
    #[test]
    fn gzip_body_survives_real_members_mangled() {
        use std::io::Write;
        let mut first = flate2::GzBuilder::new()
            .filename("name.txt")
            .comment("a comment")
            .extra(vec![1, 2, 3, 4])
            .write(Vec::new(), flate2::Compression::fast());
        first.write_all(&b"gzip members ".repeat(40)).unwrap();
        let mut second = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        second.write_all(b"and a second one").unwrap();
        let file = [first.finish().unwrap(), second.finish().unwrap()].concat();
        let body = &file[2..];
        for cut in 0..=body.len() {
            super::gzip(&body[..cut]);
        }
        for i in 0..body.len() {
            let mut bad = body.to_vec();
            bad[i] ^= 0x5A;
            super::gzip(&bad);
        }
    }

    /// Real multi-frame inputs (a seekable file, frames behind skippable
    /// ones), cut at every length and with bytes flipped, through the
    /// frames body.
    #[test]
    fn frames_body_survives_real_frames_mangled() {
        use std::io::Write;
        let mut w =
            crate::seekable::SeekableWriter::new(Vec::new(), crate::Recipe::Fast, 300, true)
                .unwrap();
        w.write_all(&b"several frames ".repeat(60)).unwrap();
        let file = w.finish().unwrap();
        for cut in (0..=file.len()).step_by(3) {
            super::frames(&file[..cut]);
        }
        for i in (0..file.len()).step_by(5) {
            let mut bad = file.clone();
            bad[i] ^= 0x5A;
            super::frames(&bad);
        }
    }

    /// A real seekable file, cut at every length and with every byte of
    /// its table changed, through the seek table body.
    #[test]
    fn seek_table_body_survives_a_real_table_mangled() {
        use std::io::Write;
        let mut w =
            crate::seekable::SeekableWriter::new(Vec::new(), crate::Recipe::Fast, 100, true)
                .unwrap();
        w.write_all(&[7u8; 1000]).unwrap();
        let file = w.finish().unwrap();
        for cut in 0..=file.len() {
            super::seek_table(&file[cut..]);
            super::seek_table(&file[..cut]);
        }
        for i in file.len() - 140..file.len() {
            let mut bad = file.clone();
            bad[i] ^= 0x5A;
            super::seek_table(&bad);
        }
    }

    /// A real patch, whole, cut at every length and with every byte
    /// flipped, through the patch body.
    #[test]
    fn patch_body_survives_a_real_patch_mangled() {
        let reference = super::PATCH_REFERENCE.repeat(3);
        let mut target = reference.clone();
        target.extend_from_slice(b"and a new ending");
        let frame = crate::patch::diff(&reference, &target, crate::Recipe::Balanced).unwrap();
        assert_eq!(crate::patch::apply(&reference, &frame).unwrap(), target);
        let input = [&[3u8][..], &frame].concat();
        for cut in 0..=input.len() {
            super::patch(&input[..cut]);
        }
        for i in 1..input.len() {
            let mut bad = input.clone();
            bad[i] ^= 0x41;
            super::patch(&bad);
        }
    }
}
