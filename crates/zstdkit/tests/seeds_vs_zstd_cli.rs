//! The fuzz seeds decoded by the `zstd` CLI, an oracle independent of how
//! this crate drives libzstd: both of our decoders must produce its bytes,
//! for every whole seed. The fuzz body's own test (in `src/fuzzing.rs`)
//! only compares our two decoders with each other.
//!
//! Gated like every interoperability test (`perfkit_testkit::interop`): a
//! missing `zstd` fails it, unless `PERFKIT_SKIP_INTEROP=1` is set (then it
//! says it is skipped); `cargo xtask ci` installs the program.

use perfkit_testkit::interop;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

use zstdkit::{Decompressor, Error, RawDecoder};

/// What `zstd -dc` makes of `path`; fails the test if zstd fails.
fn zstd_dc(path: &Path) -> Vec<u8> {
    interop::ok(
        Command::new("zstd")
            .args(["-d", "-c", "-q"])
            .arg(path)
            .stdin(Stdio::null()),
    )
    .stdout
}

/// Decodes `src` through `dec` with the smallest buffers there are: one
/// byte of input and one of output per call.
fn raw_decode(src: &[u8], mut dec: RawDecoder) -> Result<Vec<u8>, Error> {
    let (mut rest, mut out, mut byte) = (src, Vec::new(), [0u8]);
    loop {
        let step = dec.decode(&rest[..rest.len().min(1)], &mut byte)?;
        rest = &rest[step.consumed..];
        out.extend_from_slice(&byte[..step.produced]);
        if rest.is_empty() && step.produced == 0 {
            dec.finish()?;
            return Ok(out);
        }
    }
}

#[test]
fn every_seed_decodes_as_the_zstd_cli_decodes_it() {
    if !interop::have("zstd", "--version", "apt-get install zstd") {
        return;
    }
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/decode");
    let mut n = 0;
    let mut bytes = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let seed = std::fs::read(&path).unwrap();
        let want = zstd_dc(&path);
        let name = path.display();
        let one_shot = zstdkit::decompress(&seed).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(one_shot == want, "{name}: one-shot differs from zstd -dc");
        let mut streamed = Vec::new();
        zstdkit::Decoder::new(&seed[..])
            .unwrap()
            .read_to_end(&mut streamed)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(streamed == want, "{name}: streaming differs from zstd -dc");
        let raw = raw_decode(&seed, zstdkit::RawDecoder::new().unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(raw == want, "{name}: the raw decoder differs from zstd -dc");
        n += 1;
        bytes += want.len();
    }
    assert!(n >= 3, "seed directory read");
    assert!(bytes > 0, "the seeds decode to something");
}

/// The memory limit agrees with the `zstd` CLI's: a frame asking for a
/// 256 MiB window is refused by default (128 MiB) by both, and admitted by
/// both once the limit is raised to 2^28 (`--long=28`).
///
/// The frame declares no content size: with one small enough for its
/// output buffer, the CLI (1.5.4 here) decodes in a single pass that skips
/// the check and admits the frame, where zstdkit refuses it on every path
/// (`the_window_limit_holds_on_every_decoding_path` in `bad_input.rs`).
#[test]
fn the_window_limit_is_the_zstd_clis() {
    if !interop::have("zstd", "--version", "apt-get install zstd") {
        return;
    }
    // A hand-built frame: no declared size, a 2^28 window, and one last
    // RLE block of 300 bytes `b'a'`.
    let mut frame = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, (28 - 10) << 3];
    frame.extend_from_slice(&((300u32 << 3) | (1 << 1) | 1).to_le_bytes()[..3]);
    frame.push(b'a');
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wide.zst");
    std::fs::write(&path, &frame).unwrap();

    let refused = Command::new("zstd")
        .args(["-d", "-c", "-q"])
        .arg(&path)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        !refused.status.success(),
        "zstd -d admitted a 256 MiB window"
    );
    let e = raw_decode(&frame, RawDecoder::new().unwrap()).unwrap_err();
    assert!(matches!(e, Error::WindowTooLarge { offset: 0, .. }), "{e}");

    let admitted = interop::ok(
        Command::new("zstd")
            .args(["-d", "-c", "-q", "--long=28"])
            .arg(&path)
            .stdin(Stdio::null()),
    )
    .stdout;
    let mut wide = Decompressor::new().unwrap();
    wide.set_window_log_max(28).unwrap();
    assert_eq!(
        raw_decode(&frame, RawDecoder::with_decompressor(wide)).unwrap(),
        admitted
    );
    assert_eq!(admitted, vec![b'a'; 300]);
}
