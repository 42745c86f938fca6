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
        n += 1;
        bytes += want.len();
    }
    assert!(n >= 3, "seed directory read");
    assert!(bytes > 0, "the seeds decode to something");
}
