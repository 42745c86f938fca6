//! QuickFIX 1.15.1's `spec/` dictionaries, shared by the tests that read
//! them (fixcore's dictionary unit tests, the session scenarios and the
//! perfkit acceptance-settings test include this file by path).

use std::path::PathBuf;
use std::process::Command;

/// The `spec/` folder of QuickFIX 1.15.1's source package from PyPI,
/// fetched once with pip and cached under `target/` (never committed).
/// When pip cannot get it the calling test fails, unless
/// `PERFKIT_SKIP_INTEROP=1`, where it is skipped (`None`) saying why.
pub fn quickfix_spec() -> Option<PathBuf> {
    let cache = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/quickfix-spec");
    let spec = cache.join("quickfix-1.15.1/spec");
    if spec.join("FIX44.xml").is_file() {
        return Some(spec);
    }
    std::fs::create_dir_all(&cache).unwrap();
    let got = Command::new("pip")
        .args([
            "download",
            "--no-deps",
            "--no-binary",
            ":all:",
            "quickfix==1.15.1",
            "-d",
        ])
        .arg(&cache)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("tar")
            .current_dir(&cache)
            .args([
                "xzf",
                "quickfix-1.15.1.tar.gz",
                "--wildcards",
                "*/spec/*.xml",
            ])
            .status()
            .is_ok_and(|s| s.success());
    if got {
        return Some(spec);
    }
    assert!(
        std::env::var_os("PERFKIT_SKIP_INTEROP").is_some(),
        "QuickFIX dictionaries unavailable: pip download quickfix==1.15.1 failed \
         (PERFKIT_SKIP_INTEROP=1 skips this test)"
    );
    eprintln!("SKIPPED: QuickFIX dictionaries unavailable (pip download quickfix==1.15.1 failed)");
    None
}
