//! Project automation, run as `cargo xtask <task>`:
//!
//! - `ci`: formatting, clippy, the whole test suite (its executables two
//!   at a time), and the interoperability tests against outside programs,
//!   which it installs (apt-get / pip) when running as root and missing;
//!   otherwise it fails with the list of what to install. It never skips
//!   silently. zstdblock's `differential` fuzz target then runs for 60 s
//!   (under nightly, with cargo-fuzz, which `ci` installs when it is
//!   missing), and the FIX crates' test executables again with
//!   `FIXCORE_SCAN` capped at each scan path slower than this CPU's best
//!   (`avx512`, `avx2`, `scalar`).
//! - `corpus DIR [--small]`: writes the deterministic benchmark corpus
//!   (runs `perfkit corpus`, the one generator).
//! - `fuzz [SECONDS]`: runs every fuzz target under libFuzzer for SECONDS
//!   each (nightly and cargo-fuzz; says what to install when missing).
//! - `bench-compare REV [--runs N] [--only PART,...]`: builds REV and the
//!   work tree, runs `perfkit bench` on both and on a copy of each binary
//!   in turn, and prints each headline's change beside each binary's
//!   spread (the 3 % rule in one command).
//! - `same-output REV [--work REV2] [--release] [--only WORD]`: builds REV
//!   and the work tree, or REV2 (dev profile unless `--release`), runs a fixed set of commands
//!   through both on the same deterministic inputs and prints, for each,
//!   `same` or the first differing line of stdout, stderr, exit status or
//!   files written; fails if any differs (a restructuring's check that no
//!   user-visible behaviour changed).
//! - `peers [NAME...]`: builds the peer programs benches compare with
//!   (e.g. QuickFIX's parser) into `target/peers/`; `ci` builds them too.

#![forbid(unsafe_code)]

mod bench_compare;
mod peers;
mod same_output;
mod scan_caps;
mod suite;
#[cfg(test)]
mod tidy;
mod tools;
mod worktree;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    std::env::set_current_dir(&root)?;
    match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("corpus") => {
            let dir = args
                .get(1)
                .context("usage: cargo xtask corpus DIR [--small]")?;
            // `perfkit corpus` is the one generator; xtask runs it rather
            // than linking perfkit, which would compile zstd and aws-lc
            // before `ci` could run fmt.
            let mut cmd = cargo();
            cmd.args([
                "run",
                "--release",
                "--quiet",
                "-p",
                "perfkit",
                "--",
                "corpus",
                dir,
            ]);
            if args.iter().any(|a| a == "--small") {
                cmd.arg("--small");
            }
            run(&mut cmd)
        }
        Some("fuzz") => {
            let secs: u64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(60);
            fuzz(secs)
        }
        Some("bench-compare") => bench_compare::bench_compare(&args[1..]),
        Some("same-output") => same_output::same_output(&args[1..]),
        Some("peers") => {
            // The peers compile against g++ and libquickfix-dev; install
            // them first (as root) or say what to install, rather than
            // failing on a missing header.
            tools::ensure()?;
            peers::build(&args[1..])
        }
        _ => bail!(
            "usage: cargo xtask ci | corpus DIR [--small] | fuzz [SECONDS] | bench-compare REV [--runs N] [--only PART,...] | same-output REV [--work REV2] [--release] [--only WORD] | peers [NAME...]\npeers:{}",
            peers::usage()
        ),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

/// Runs a command, echoing it, and fails if it fails.
fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: $ {}", render(cmd));
    let started = Instant::now();
    let status = cmd
        .status()
        .with_context(|| format!("starting {}", render(cmd)))?;
    // Each step's time, so a CI log shows where its minutes went (CI has
    // a budget of 40).
    let program = Path::new(cmd.get_program()).file_name().unwrap_or_default();
    let first = cmd.get_args().take(3).map(|a| a.to_string_lossy());
    eprintln!(
        "xtask: {:.0} s: {} {}",
        started.elapsed().as_secs_f64(),
        program.to_string_lossy(),
        first.collect::<Vec<_>>().join(" ")
    );
    if !status.success() {
        bail!("`{}` failed: {status}", render(cmd));
    }
    Ok(())
}

fn render(cmd: &Command) -> String {
    std::iter::once(cmd.get_program().to_string_lossy().into_owned())
        .chain(cmd.get_args().map(|a| a.to_string_lossy().into_owned()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// `cargo +nightly`, for cargo-fuzz. Not [`cargo()`]: under `cargo xtask`
/// `$CARGO` is the stable toolchain's own cargo binary, which refuses
/// `+nightly` ("invoke `cargo` through `rustup` to handle `+toolchain`
/// directives"); the `cargo` on `PATH` is rustup's proxy, which picks the
/// nightly toolchain.
const NIGHTLY_CARGO: [&str; 2] = ["cargo", "+nightly"];

/// [`NIGHTLY_CARGO`] as a command.
fn nightly_cargo() -> Command {
    let [cargo, toolchain] = NIGHTLY_CARGO;
    let mut c = Command::new(cargo);
    c.arg(toolchain);
    c
}

fn ci() -> Result<()> {
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    // --locked: the committed Cargo.lock is what is built, never a fresh
    // resolution.
    run(cargo().args([
        "clippy",
        "--locked",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    // The codec libraries build without their default `tokio` feature (a
    // sync user's build), so an async item that escapes its gate fails
    // here; so does the engine without its default `postgres` feature (no
    // PostgreSQL client, no tokio), whose refusal of settings naming a
    // PostgreSQL store or log the default build's tests check.
    run(cargo().args([
        "check",
        "--locked",
        "-p",
        "zstdkit",
        "-p",
        "zipstream",
        "-p",
        "fixengine",
        "--no-default-features",
    ]))?;
    // The API docs build with every intra-doc link resolved and none
    // pointing at an item the reader of the public docs cannot see.
    run(cargo()
        .args(["doc", "--locked", "--workspace", "--no-deps"])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    // The s-zip peer is its own workspace: its fmt, clippy and tests run
    // here, once; peers::build below only checks its backend and builds it.
    peers::check_szip()?;
    tools::ensure()?;
    // The peer tests (QuickFIX beside fix-bench's parser) need the peers
    // built, from the libraries tools::ensure just installed.
    peers::build(&[])?;
    // The suite's executables run two at a time (see suite.rs); the doc
    // tests through cargo, with the same selection, so nothing rebuilds.
    // A missing outside program fails its interoperability test unless
    // PERFKIT_SKIP_INTEROP is set; ci installed them all above and never
    // skips (both remove the variable), even when the caller asks to.
    let root = workspace_root();
    let binaries = suite::build(&root)?;
    suite::run(&binaries, &[])?;
    // zstdblock's decoder against libzstd on mutated frames, for a bounded
    // time: its differential corpus ran as tests above, and the decoder
    // behind `decompress -T2` must keep agreeing on what no corpus holds.
    // Its build keeps both cores busy; its run keeps one (libFuzzer is
    // one process), so the doc tests and the FIX crates' capped runs go
    // beside it (in ci67 the three took 22, 70 and 12 s one after another),
    // at the same priority, so that they share the cores evenly.
    let targets = fuzz_setup(Some(vec!["differential".to_owned()]), Missing::Install)?;
    fuzz_build(&targets)?;
    let (fuzzed, rest) = std::thread::scope(|s| {
        let fuzzing = s.spawn(|| fuzz_run_targets(60, &targets, Priority::Even));
        let rest = run(cargo()
            .args(["test", "--locked", "--workspace", "--doc"])
            .env_remove("PERFKIT_SKIP_INTEROP"))
        // The FIX crates' tests again under each slower SIMD scan path,
        // from the executables just built.
        .and_then(|()| scan_caps::run_capped(&root, &binaries));
        (fuzzing.join(), rest)
    });
    rest?;
    fuzzed.map_err(|_| anyhow::anyhow!("the fuzzing thread panicked"))??;
    eprintln!("xtask: ci passed");
    Ok(())
}

/// Every cargo-fuzz project in the workspace at `root` (a `fuzz/`
/// directory in a crate), as a path relative to `root`.
fn fuzz_projects(root: &Path) -> Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for entry in std::fs::read_dir(root.join("crates"))? {
        let dir = Path::new("crates").join(entry?.file_name()).join("fuzz");
        if root.join(&dir).join("Cargo.toml").exists() {
            v.push(dir);
        }
    }
    v.sort();
    Ok(v)
}

/// Runs every target of every cargo-fuzz project for `seconds` each: one
/// libFuzzer process per target, one target at a time, at the lowest CPU
/// priority (a developer's fuzzers share the machine with builds and
/// benchmarks).
/// Each target grows its corpus in `fuzz/corpus/TARGET` (gitignored) from
/// the committed seeds in `fuzz/seeds/TARGET`; a crash is left in
/// `fuzz/artifacts/TARGET`. Every target runs even after one fails, then a
/// summary line per target is printed and any failure fails the task.
/// `XTASK_FUZZ_ONLY=a,b` restricts the run to the named targets.
fn fuzz(seconds: u64) -> Result<()> {
    let only: Option<Vec<String>> = std::env::var("XTASK_FUZZ_ONLY")
        .ok()
        .map(|s| s.split(',').map(str::to_owned).collect());
    let targets = fuzz_setup(only, Missing::Say)?;
    fuzz_run_targets(seconds, &targets, Priority::Lowest)
}

/// The CPU priority of a fuzzer: `ci` runs one beside its last tests
/// ([`Priority::Even`]); a developer's `fuzz` yields to everything else.
#[derive(Clone, Copy)]
enum Priority {
    Even,
    Lowest,
}

/// What [`fuzz_setup`] does when cargo-fuzz is missing: `ci` installs
/// it (CI installs what it needs); `fuzz`, a developer's command, says
/// what to install.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Missing {
    Install,
    Say,
}

/// One fuzz target: its crate's directory (relative to the workspace
/// root, where xtask runs) and its name.
struct FuzzTarget {
    crate_dir: PathBuf,
    name: String,
}

/// Checks for the nightly toolchain and cargo-fuzz (see [`Missing`]) and
/// lists the targets named in `only` (`None`: all of them), failing when
/// none matches.
fn fuzz_setup(only: Option<Vec<String>>, missing: Missing) -> Result<Vec<FuzzTarget>> {
    let works = |args: &[&str]| {
        nightly_cargo()
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !works(&["--version"]) {
        bail!("fuzzing needs a nightly toolchain: rustup toolchain install nightly");
    }
    if !works(&["fuzz", "--version"]) {
        if missing == Missing::Say {
            bail!(
                "fuzzing needs cargo-fuzz: cargo install cargo-fuzz --locked --version ={}",
                tools::CARGO_FUZZ
            );
        }
        tools::install_cargo_fuzz()?;
        if !works(&["fuzz", "--version"]) {
            bail!(
                "cargo-fuzz {} was installed, but `cargo +nightly fuzz` still does not run",
                tools::CARGO_FUZZ
            );
        }
    }
    let mut targets = Vec::new();
    for project in fuzz_projects(Path::new("."))? {
        let crate_dir = project.parent().expect("fuzz/ is inside a crate");
        let list = nightly_cargo()
            .args(["fuzz", "list"])
            .current_dir(crate_dir)
            .output()
            .with_context(|| format!("cargo fuzz list in {}", crate_dir.display()))?;
        if !list.status.success() {
            bail!(
                "cargo fuzz list in {} failed: {}",
                crate_dir.display(),
                String::from_utf8_lossy(&list.stderr)
            );
        }
        for name in String::from_utf8_lossy(&list.stdout).lines() {
            if only.as_ref().is_none_or(|o| o.iter().any(|t| t == name)) {
                targets.push(FuzzTarget {
                    crate_dir: crate_dir.to_path_buf(),
                    name: name.to_owned(),
                });
            }
        }
    }
    if targets.is_empty() {
        bail!("no fuzz target matched");
    }
    Ok(targets)
}

/// Builds `targets` as `cargo fuzz run` would (its defaults: release,
/// AddressSanitizer, debug assertions), so that their runs start at once.
fn fuzz_build(targets: &[FuzzTarget]) -> Result<()> {
    for t in targets {
        run(nightly_cargo()
            .args(["fuzz", "build", &t.name])
            .current_dir(&t.crate_dir))?;
    }
    Ok(())
}

/// Fuzzes each of `targets` for `seconds` at `priority` (see [`fuzz`]).
fn fuzz_run_targets(seconds: u64, targets: &[FuzzTarget], priority: Priority) -> Result<()> {
    let fuzzer = || match priority {
        Priority::Even => nightly_cargo(),
        Priority::Lowest => {
            let mut c = Command::new("nice");
            c.args(["-n", "19"]).args(NIGHTLY_CARGO);
            c
        }
    };
    let mut summary = Vec::new();
    let mut failed = Vec::new();
    for FuzzTarget {
        crate_dir,
        name: target,
    } in targets
    {
        let name = format!("{}/{target}", crate_dir.display());
        let corpus = Path::new("fuzz/corpus").join(target);
        std::fs::create_dir_all(crate_dir.join(&corpus))?;
        let seeds = Path::new("fuzz/seeds").join(target);
        let mut cmd = fuzzer();
        cmd.args(["fuzz", "run", target])
            .arg(&corpus)
            .current_dir(crate_dir);
        // libFuzzer adds new inputs to the first directory only, so the
        // committed seeds stay as they are.
        if crate_dir.join(&seeds).is_dir() {
            cmd.arg(&seeds);
        }
        cmd.args([
            "--".to_owned(),
            format!("-max_total_time={seconds}"),
            format!("-max_len={}", fuzz_max_len(target)),
            // One input running this long is a hang, not slowness.
            "-timeout=10".to_owned(),
            "-rss_limit_mb=2048".to_owned(),
            "-print_final_stats=1".to_owned(),
        ])
        .args(fuzz_extra_args(target));
        let started = std::time::Instant::now();
        let (ok, stats) = fuzz_run(&mut cmd)?;
        let files = std::fs::read_dir(crate_dir.join(&corpus))?.count();
        let line = format!(
            "{name}: {}s, {stats}, corpus {files} files{}",
            started.elapsed().as_secs(),
            if ok { "" } else { ", FAILED" }
        );
        if !ok {
            failed.push(format!(
                "{name} (input in {})",
                crate_dir.join("fuzz/artifacts").join(target).display()
            ));
        }
        summary.push(line);
    }
    for line in &summary {
        eprintln!("xtask: fuzz {line}");
    }
    if !failed.is_empty() {
        bail!("fuzz targets failed: {}", failed.join(", "));
    }
    Ok(())
}

/// libFuzzer's `-max_len` per target: room for a realistic input of the
/// format (so mutations can reach every structure) without letting the
/// fuzzer spend its time on large inputs that add no coverage.
fn fuzz_max_len(target: &str) -> usize {
    match target {
        // Several frames of a zstd stream, or a zip archive with a handful of
        // entries, ZIP64 extras and an AES header.
        "decode" | "frames" | "patch" | "seek_table" | "read_archive" | "read_stream"
        | "extract" | "differential" => 16 * 1024,
        // The framer's stream: several messages and the junk between them.
        "frame" => 8 * 1024,
        // A reference expression file with its domain list and some rules.
        "expr_file" => 8 * 1024,
        // An interval log: its header and a handful of compressed
        // histograms, a few hundred bytes of base64 each.
        "hlog_merge" => 8 * 1024,
        // One FIX message, one expression, one event or domain list.
        _ => 4 * 1024,
    }
}

/// libFuzzer flags of one target beyond every target's.
fn fuzz_extra_args(target: &str) -> &'static [&'static str] {
    match target {
        // zstdblock's pipeline runs threads whose thread-locals are freed
        // as each OS thread exits, after the pipeline has returned: a leak
        // check in between reports them (the crate is safe Rust).
        "differential" => &["-detect_leaks=0"],
        _ => &[],
    }
}

/// Runs one fuzzer, echoing its output, and returns whether it succeeded
/// with libFuzzer's final figures: runs, exec/s and coverage.
fn fuzz_run(cmd: &mut Command) -> Result<(bool, String)> {
    use std::io::{BufRead, BufReader, Write};
    eprintln!("xtask: $ {}", render(cmd));
    let mut child = cmd
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", render(cmd)))?;
    let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut last_status = String::new();
    let mut buf = Vec::new();
    let mut err = std::io::stderr();
    let echoed = loop {
        buf.clear();
        match lines.read_until(b'\n', &mut buf) {
            Ok(0) => break Ok(()),
            Ok(_) => {}
            Err(e) => break Err(e),
        }
        if let Err(e) = err.write_all(&buf) {
            break Err(e);
        }
        // libFuzzer's status lines look like `#1234  NEW  cov: 56 ft: 78
        // corp: 9/10b ... exec/s: 11 rss: 12Mb`; the last one holds the
        // final figures.
        let line = String::from_utf8_lossy(&buf);
        if line.starts_with('#') && line.contains(" cov: ") {
            last_status = line.trim().to_owned();
        }
    };
    if let Err(e) = echoed {
        // Not left running for the rest of its time budget.
        let _ = child.kill();
        let _ = child.wait();
        return Err(e).context("relaying the fuzzer's output");
    }
    let ok = child.wait()?.success();
    let field = |key: &str| {
        last_status
            .split_whitespace()
            .skip_while(|w| *w != key)
            .nth(1)
            .unwrap_or("?")
            .to_owned()
    };
    let runs = last_status
        .split_whitespace()
        .next()
        .map_or("?", |w| w.trim_start_matches('#'));
    Ok((
        ok,
        format!(
            "{runs} runs, {} exec/s, cov {}, ft {}",
            field("exec/s:"),
            field("cov:"),
            field("ft:")
        ),
    ))
}
