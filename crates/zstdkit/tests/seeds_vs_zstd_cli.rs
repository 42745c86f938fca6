//! The fuzz seeds decoded by the `zstd` CLI, an oracle independent of how
//! this crate drives libzstd: both of our decoders must produce its bytes,
//! for every whole seed. The fuzz body's own test (in `src/fuzzing.rs`)
//! only compares our two decoders with each other.
//!
//! Under `PERFKIT_INTEROP=1` (set by `cargo xtask ci`, which installs the
//! program) a missing `zstd` is a failure; in a plain `cargo test` the test
//! says it is skipped and why.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};

fn have_zstd() -> bool {
    let ok = Command::new("zstd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        if std::env::var_os("PERFKIT_INTEROP").is_some() {
            panic!("zstd is required by the interoperability tests: apt-get install zstd");
        }
        eprintln!(
            "SKIPPED: zstd not installed (apt-get install zstd); `cargo xtask ci` installs it and runs this test"
        );
    }
    ok
}

fn zstd_dc(path: &Path) -> Vec<u8> {
    let out = Command::new("zstd")
        .args(["-d", "-c", "-q"])
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .expect("spawn zstd");
    assert!(
        out.status.success(),
        "zstd -dc {} failed: {}\n{}",
        path.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn every_seed_decodes_as_the_zstd_cli_decodes_it() {
    if !have_zstd() {
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
