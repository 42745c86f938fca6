//! The workspace's test suite, run two test executables at a time.
//!
//! `cargo test` runs one test executable after another, and most of ours
//! spend their time waiting on child processes, sockets and timers: over
//! a whole `cargo test --workspace` here the two cores were 1.15 busy on
//! average (1,000 of 2,350 core-seconds idle; `/proc/stat` sampled every
//! 2 s beside the test output). So `ci` has cargo build the tests, asks
//! cargo which executables it built, and runs them in two slots, each
//! one's output printed whole when it ends; the doc tests then run through
//! cargo. cargo-nextest does this (and more), but a fresh CI machine would
//! compile it from source on every run.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// How many test executables run at once: one per core of the CI machine
/// (each runs its own tests on as many threads as there are cores).
pub const SLOTS: usize = 2;

/// One test executable cargo built, and where cargo would run it.
#[derive(Clone)]
pub struct TestBinary {
    /// The executable.
    pub exe: PathBuf,
    /// Its package's directory: the working directory and
    /// `CARGO_MANIFEST_DIR` cargo gives a test.
    pub package_dir: PathBuf,
    /// For the log: package directory, target kind and name.
    pub label: String,
}

/// Builds the workspace's tests (`cargo test --workspace --no-run`, its
/// diagnostics printed as usual) and returns the executables cargo built,
/// integration tests first: they are the long ones, and starting them
/// early keeps the two slots busy to the end.
pub fn build(root: &Path) -> Result<Vec<TestBinary>> {
    let started = Instant::now();
    let out = super::cargo()
        .args([
            "test",
            "--locked",
            "--workspace",
            "--no-run",
            "--message-format=json-render-diagnostics",
        ])
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo test --no-run")?;
    eprintln!(
        "xtask: {:.0} s: cargo test --no-run (the suite's build)",
        started.elapsed().as_secs_f64()
    );
    if !out.status.success() {
        bail!("building the tests failed: {}", out.status);
    }
    // Integration tests (`tests/*.rs`) first, each group in cargo's order.
    let mut binaries: Vec<(bool, TestBinary)> = Vec::new();
    for line in out.stdout.split(|&b| b == b'\n') {
        let Ok(msg) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || msg["profile"]["test"] != true {
            continue;
        }
        let (Some(exe), Some(manifest)) =
            (msg["executable"].as_str(), msg["manifest_path"].as_str())
        else {
            continue;
        };
        let package_dir = Path::new(manifest)
            .parent()
            .context("a manifest is in a directory")?
            .to_path_buf();
        let place = package_dir.strip_prefix(root).unwrap_or(&package_dir);
        let kind = msg["target"]["kind"][0].as_str().unwrap_or("?");
        let name = msg["target"]["name"].as_str().unwrap_or("?");
        let binary = TestBinary {
            exe: exe.into(),
            label: format!("{} {kind} {name}", place.display()),
            package_dir,
        };
        binaries.push((kind != "test", binary));
    }
    if binaries.is_empty() {
        bail!("cargo test --no-run listed no test executable");
    }
    binaries.sort_by_key(|(unit, _)| *unit);
    Ok(binaries.into_iter().map(|(_, b)| b).collect())
}

/// A test executable running, its output going to `log`.
struct Running<'a> {
    binary: &'a TestBinary,
    child: Child,
    log: PathBuf,
    started: Instant,
}

/// Runs `binaries` [`SLOTS`] at a time, each in its package directory
/// with `env` added, and prints each one's output whole when it ends.
/// Every executable runs even after one fails; then any failure fails
/// the task, naming them all.
pub fn run(binaries: &[TestBinary], env: &[(&str, &str)]) -> Result<()> {
    let logs = tempfile::tempdir().context("a directory for the test logs")?;
    let mut waiting: VecDeque<(usize, &TestBinary)> = binaries.iter().enumerate().collect();
    let mut running: Vec<Running> = Vec::new();
    let mut failed = Vec::new();
    let started = Instant::now();
    while !waiting.is_empty() || !running.is_empty() {
        while running.len() < SLOTS {
            let Some((i, binary)) = waiting.pop_front() else {
                break;
            };
            let log = logs.path().join(format!("{i}.log"));
            let out = File::create(&log).context("creating a test log")?;
            let mut cmd = Command::new(&binary.exe);
            cmd.current_dir(&binary.package_dir)
                .env("CARGO_MANIFEST_DIR", &binary.package_dir)
                .env_remove("PERFKIT_SKIP_INTEROP")
                .stdin(Stdio::null())
                .stdout(out.try_clone()?)
                .stderr(out);
            for (k, v) in env {
                cmd.env(k, v);
            }
            let child = cmd
                .spawn()
                .with_context(|| format!("starting {}", binary.exe.display()))?;
            running.push(Running {
                binary,
                child,
                log,
                started: Instant::now(),
            });
        }
        std::thread::sleep(Duration::from_millis(50));
        let mut i = 0;
        while i < running.len() {
            let Some(status) = running[i].child.try_wait()? else {
                i += 1;
                continue;
            };
            let done = running.swap_remove(i);
            // The bytes as written: a test's output need not be UTF-8.
            std::io::copy(
                &mut File::open(&done.log).context("reading a test log")?,
                &mut std::io::stderr(),
            )?;
            eprintln!(
                "xtask: {:.0} s: {}{}",
                done.started.elapsed().as_secs_f64(),
                done.binary.label,
                if status.success() {
                    String::new()
                } else {
                    format!(" FAILED ({status})")
                }
            );
            if !status.success() {
                failed.push(done.binary.label.clone());
            }
        }
    }
    eprintln!(
        "xtask: {:.0} s: {} test executables, {SLOTS} at a time",
        started.elapsed().as_secs_f64(),
        binaries.len()
    );
    if !failed.is_empty() {
        bail!("tests failed in: {}", failed.join(", "));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binary(exe: &str, dir: &Path) -> TestBinary {
        TestBinary {
            exe: exe.into(),
            package_dir: dir.to_path_buf(),
            label: exe.to_owned(),
        }
    }

    /// Every executable runs, in its package directory, even after one
    /// fails; the failure names the one that failed and no other.
    #[test]
    fn every_binary_runs_and_a_failure_names_its_binary() {
        let dir = tempfile::tempdir().unwrap();
        let script = |name: &str, body: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o755))
                .unwrap();
            p.to_str().unwrap().to_owned()
        };
        let ok = script("ok", "touch \"ran-$MARK-$(basename $0)\"");
        let bad = script("bad", "touch \"ran-$MARK-$(basename $0)\"; exit 3");
        let ok2 = script("ok2", "touch \"ran-$MARK-$(basename $0)\"");
        let err = run(
            &[
                binary(&bad, dir.path()),
                binary(&ok, dir.path()),
                binary(&ok2, dir.path()),
            ],
            &[("MARK", "m")],
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains(&bad) && !err.contains(&ok), "{err}");
        for name in ["ok", "bad", "ok2"] {
            assert!(dir.path().join(format!("ran-m-{name}")).exists(), "{name}");
        }
        assert!(run(&[binary(&ok, dir.path())], &[]).is_ok());
    }
}
