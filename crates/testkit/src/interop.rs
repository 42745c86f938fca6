//! Whether an outside program an interoperability test needs is there, and
//! running one.
//!
//! A test that needs a program it cannot find fails, naming the program and
//! how to install it: an oracle that silently did not run is no oracle.
//! `cargo xtask ci` installs every program first and never skips. Where
//! installing them is not possible, `PERFKIT_SKIP_INTEROP=1` turns the
//! failure into a skip that says what was skipped.

use std::process::{Command, Output, Stdio};

/// The environment variable that turns a missing outside program from a
/// failure into a skip (any value but empty or `0`).
pub const SKIP_ENV: &str = "PERFKIT_SKIP_INTEROP";

/// Whether [`SKIP_ENV`] asks for missing programs to be skipped.
pub fn skipping() -> bool {
    std::env::var_os(SKIP_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether `program probe` (`zstd --version`, `unzip -v`) runs and
/// succeeds; when it does not, [`available`] fails the test or, under
/// [`SKIP_ENV`], says it is skipped, with `install` saying how to install it.
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

/// Whether the Python module `module` imports (`python3 -c "import M"`);
/// gated like [`have`].
pub fn have_python_module(module: &str, install: &str) -> bool {
    let imports = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    available(imports, &format!("python3 module {module}"), install)
}

/// `found`, when it is true. When it is false, fails the test, naming
/// `what` is missing and how to `install` it, unless [`SKIP_ENV`] is set:
/// then prints that the test is skipped and returns false.
pub fn available(found: bool, what: &str, install: &str) -> bool {
    if !found {
        assert!(
            skipping(),
            "this interoperability test needs {what}, which is missing: {install} \
             (`cargo xtask ci` installs it; {SKIP_ENV}=1 skips the test instead)"
        );
        eprintln!("SKIPPED ({SKIP_ENV} is set): {what} not installed ({install})");
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
