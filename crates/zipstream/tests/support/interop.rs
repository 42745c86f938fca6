//! Whether an outside program an interoperability test needs is there, and
//! running one. Shared by the workspace's test crates, each including this
//! file with `#[path = …] mod`: `crates/cli/tests/interop/mod.rs`,
//! `support/moto.rs` beside it, `crates/zstdkit/tests/seeds_vs_zstd_cli.rs`.
//!
//! Under `PERFKIT_INTEROP` (set by `cargo xtask ci`, which installs the
//! programs) a missing program fails the test; in a plain `cargo test` the
//! test says it is skipped and why.

#![allow(dead_code)] // each test file uses its own subset

use std::process::{Command, Output, Stdio};

/// Whether `program probe` (`zstd --version`, `unzip -v`) runs and
/// succeeds; if not, [`available`] fails or skips, with `install` saying
/// how to install it.
pub fn have(program: &str, probe: &str, install: &str) -> bool {
    let runs = Command::new(program)
        .arg(probe)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    available(runs, program, install)
}

/// `found`; when it is false, fails the test under `PERFKIT_INTEROP`, and
/// otherwise says the test is skipped. Both name `what` is missing and how
/// to `install` it.
pub fn available(found: bool, what: &str, install: &str) -> bool {
    if !found {
        assert!(
            std::env::var_os("PERFKIT_INTEROP").is_none(),
            "PERFKIT_INTEROP is set, so the interoperability tests need {what}, but it is missing: {install}"
        );
        eprintln!(
            "SKIPPED: {what} not installed ({install}); `cargo xtask ci` installs it and runs this test"
        );
    }
    found
}

/// Runs a command and insists it succeeds.
pub fn ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    succeeded(cmd, out)
}

/// `out`, if `cmd` exited with success; else fails the test quoting its
/// status and stderr.
pub fn succeeded(cmd: &Command, out: Output) -> Output {
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
