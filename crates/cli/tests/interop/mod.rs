//! Shared by the integration tests: run the `perfkit` binary, and decide
//! whether an outside program is there (through the workspace's one gate,
//! `perfkit_testkit::interop`).

#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use perfkit_testkit::interop as gate;
pub use perfkit_testkit::interop::ok;

/// The binary under test.
pub fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

/// Whether `program --version` runs: a missing program fails the test
/// (`cargo xtask ci` installs them all), unless `PERFKIT_SKIP_INTEROP=1`
/// is set, when the test says it is skipped and why.
pub fn have(program: &str, package: &str) -> bool {
    gate::have(program, "--version", &format!("apt-get install {package}"))
}

/// [`ok`] through [`output_within`]: fails the test if `cmd` fails, or has
/// not exited within `secs`.
pub fn ok_within(cmd: &mut Command, secs: u64) -> Output {
    let out = output_within(cmd, secs);
    gate::succeeded(cmd, out)
}

/// Writes the small corpus (and with `large`, the 64 MiB file) into `dir`
/// through the binary's own `corpus` command; returns the file paths.
pub fn corpus(dir: &Path, large: bool) -> Vec<std::path::PathBuf> {
    let mut cmd = perfkit();
    cmd.arg("corpus").arg(dir);
    if !large {
        cmd.arg("--small");
    }
    let out = ok(&mut cmd);
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(Into::into)
        .collect()
}

/// The peer program `name` that `cargo xtask peers` builds. A missing peer
/// fails the test like a missing outside program, or under
/// `PERFKIT_SKIP_INTEROP=1` is `None` with a skip notice. `needs` names
/// what its build needs besides cargo, if anything.
pub fn peer(name: &str, needs: &str) -> Option<PathBuf> {
    let found = perfkit_peers::locate(name);
    gate::available(
        found.is_some(),
        &format!("the peer program {name}"),
        &format!("cargo xtask peers{needs}"),
    );
    found
}

/// A FIX 4.4 message framed here, independently of fixcore and QuickFIX:
/// BodyLength and CheckSum by plain arithmetic over a `|`-separated body.
/// The message is SOH-separated.
pub fn framed(body: &str) -> Vec<u8> {
    let b = body.replace('|', "\x01");
    let head = format!("8=FIX.4.4\x019={}\x01{}", b.len(), b);
    let sum: u32 = head.bytes().map(u32::from).sum();
    format!("{head}10={:03}\x01", sum % 256).into_bytes()
}

/// The names in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Writes an executable shell script `name` into `dir`: a fake peer.
pub fn fake_peer(dir: &Path, name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// `perfkit fix-bench --json`, for `--only ONLY` (every part when empty),
/// with small settings: each of `--iterations 200 --warmup 10 --runs 2
/// --batch 10` unless `extra` gives that flag itself (clap refuses a flag
/// given twice), then `extra`.
pub fn fix_bench(only: &str, extra: &[&str]) -> Command {
    let mut cmd = perfkit();
    cmd.args(["fix-bench", "--json"]);
    if !only.is_empty() {
        cmd.args(["--only", only]);
    }
    for (flag, value) in [
        ("--iterations", "200"),
        ("--warmup", "10"),
        ("--runs", "2"),
        ("--batch", "10"),
    ] {
        if !extra.contains(&flag) {
            cmd.args([flag, value]);
        }
    }
    cmd.args(extra);
    cmd
}

/// Runs `cmd` to completion like `Command::output`, but fails the test
/// (after killing the child) if it has not exited within `secs`: a test of
/// a timeout must fail when the timeout regresses, not hang.
pub fn output_within(cmd: &mut Command, secs: u64) -> Output {
    use std::io::Read;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    // Drained while waiting, so a child that fills a pipe is not stalled.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Whether `value` is a true `q`-th percentile of `buckets` at histogram
/// precision: at most q % of the samples lie in lower buckets, and at
/// least q % at or below its own.
pub fn is_percentile(buckets: &[serde_json::Value], value: u64, q: f64) -> bool {
    let total: u64 = buckets.iter().map(|b| b[1].as_u64().unwrap()).sum();
    let below: u64 = buckets
        .iter()
        .filter(|b| b[0].as_u64().unwrap() < value)
        .map(|b| b[1].as_u64().unwrap())
        .sum();
    let at_or_below = below
        + buckets
            .iter()
            .filter(|b| b[0].as_u64().unwrap() == value)
            .map(|b| b[1].as_u64().unwrap())
            .sum::<u64>();
    let want = q / 100.0 * total as f64;
    below as f64 <= want && want <= at_or_below as f64
}

/// A bench row's JSON-only column of one number per round, in round
/// order (`col`: the bench's `*_ns_rounds` in nanoseconds, or the
/// session part's `orders_per_s_runs`).
pub fn per_round(row: &serde_json::Value, col: &str) -> Vec<f64> {
    let text = row[col]
        .as_str()
        .unwrap_or_else(|| panic!("no {col}: {row}"));
    text.split(' ').map(|n| n.parse::<f64>().unwrap()).collect()
}

/// The upper median of some numbers, as the bench takes it.
pub fn upper_median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
