//! Project automation, run as `cargo xtask <task>`:
//!
//! - `ci`: formatting, clippy, the whole test suite, and the
//!   interoperability tests against outside programs, which it installs
//!   (apt-get / pip) when running as root and missing; otherwise it fails
//!   with the list of what to install. It never skips silently. fixcore's
//!   tests then run again with `FIXCORE_SCAN=avx512`, `avx2` and `scalar`.
//! - `corpus DIR [--small]`: writes the deterministic benchmark corpus.
//! - `fuzz [SECONDS]`: runs every fuzz target for SECONDS each (nightly).
//! - `peers [NAME...]`: builds the peer programs benches compare with
//!   (e.g. QuickFIX's parser) into `target/peers/`; `ci` builds them too.

mod peers;
mod tools;

use std::path::{Path, PathBuf};
use std::process::Command;

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
            let small = args.iter().any(|a| a == "--small");
            for p in perfkit::corpus::write(Path::new(dir), !small)? {
                println!("{}", p.display());
            }
            Ok(())
        }
        Some("fuzz") => {
            let secs: u64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(60);
            fuzz(secs)
        }
        Some("peers") => peers::build(&args[1..]),
        _ => bail!(
            "usage: cargo xtask ci | corpus DIR [--small] | fuzz [SECONDS] | peers [NAME...]\npeers:{}",
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
    let status = cmd
        .status()
        .with_context(|| format!("starting {}", render(cmd)))?;
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

fn ci() -> Result<()> {
    run(cargo().args(["fmt", "--all", "--", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--",
        "-D",
        "warnings",
    ]))?;
    tools::ensure()?;
    // The peer tests (QuickFIX beside fix-bench's parser) need the peers
    // built, from the libraries tools::ensure just installed.
    peers::build(&[])?;
    // The interoperability tests read PERFKIT_INTEROP: set, a missing outside
    // program is a failure rather than a skip.
    run(cargo()
        .args(["test", "--workspace"])
        .env("PERFKIT_INTEROP", "1"))?;
    // fixcore's scanner picks the fastest SIMD path at run time, so the run
    // above only exercised this CPU's best one. Capping the pick runs the
    // parser, framer and builder tests on each slower path as well (the
    // capped pick never exceeds what the CPU has, so on a CPU without
    // AVX-512 a cap repeats the run above; fixcore rejects unknown names).
    // Selecting fixcore alone re-resolves its dev-dependencies' features, so
    // the first capped run rebuilds a few of them (about a minute); the
    // other two reuse that build.
    for cap in ["avx512", "avx2", "scalar"] {
        run(cargo()
            .args(["test", "-p", "fixcore"])
            .env("FIXCORE_SCAN", cap))?;
    }
    eprintln!("xtask: ci passed");
    Ok(())
}

/// Every cargo-fuzz project in the tree (a `fuzz/` directory in a crate).
fn fuzz_projects() -> Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for entry in std::fs::read_dir("crates")? {
        let dir = entry?.path().join("fuzz");
        if dir.join("Cargo.toml").exists() {
            v.push(dir);
        }
    }
    v.sort();
    Ok(v)
}

fn fuzz(seconds: u64) -> Result<()> {
    for project in fuzz_projects()? {
        let crate_dir = project.parent().expect("fuzz/ is inside a crate");
        let list = Command::new("cargo")
            .args(["+nightly", "fuzz", "list"])
            .current_dir(crate_dir)
            .output()
            .context("running cargo fuzz (install: cargo install cargo-fuzz; rustup toolchain install nightly)")?;
        for target in String::from_utf8_lossy(&list.stdout).lines() {
            run(Command::new("cargo")
                .args([
                    "+nightly",
                    "fuzz",
                    "run",
                    target,
                    "--",
                    &format!("-max_total_time={seconds}"),
                ])
                .current_dir(crate_dir))?;
        }
    }
    Ok(())
}
