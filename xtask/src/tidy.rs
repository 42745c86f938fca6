//! Tidy checks that keep the maps true, run by `cargo test --workspace`
//! (so by `cargo xtask ci`):
//!
//! - every workspace package has a code-map heading in ARCHITECTURE.md
//!   that names it in backticks (`### \`zstdkit\` ...`);
//! - README.md stays a front page (at most [`README_MAX_LINES`] lines) and
//!   ARCHITECTURE.md a map (at most [`ARCHITECTURE_MAX_LINES`]);
//! - every relative link in README.md, ARCHITECTURE.md and docs/*.md names
//!   a file or directory that exists;
//! - no library crate depends on `perfkit-bench` in any dependency
//!   section, nor on `anyhow` outside its dev- and build-dependencies
//!   (libraries return typed errors);
//! - in the binary, clap is named only by the flag modules (`main.rs`,
//!   `flags/`, and one `args.rs` per command folder), and no function
//!   outside them takes an `*Args`: flags become settings before any work
//!   starts;
//! - fixsession (the session machine) and fixcore (the wire) are built
//!   with no socket, TLS or database crate, and their source names no
//!   `std::net`: the engine (fixengine) owns sockets and TLS.
//! - no non-test source file is over 800 lines and no function over 150
//!   (`length.rs`; an allow-list gives the reason for each exception);
//! - every fuzz project commits its Cargo.lock, at the main lock's
//!   versions where the two share a package (`lockfiles.rs`);
//! - the crates the dev profile leaves unoptimised are named packages,
//!   none of them linked into the `perfkit` binary (`profile.rs`).
//!
//! The workspace's packages come from `cargo metadata --no-deps`, so a new
//! crate is checked without this file changing.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod architecture;
mod layering;
mod length;
mod lockfiles;
mod map;
mod profile;

/// README.md is a front page; the reference lives in docs/.
const README_MAX_LINES: usize = 150;

/// ARCHITECTURE.md is a map, not a manual.
const ARCHITECTURE_MAX_LINES: usize = 250;

/// The measurement crate, which no library should depend on.
const BENCH: &str = "perfkit-bench";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}

fn read(name: &str) -> String {
    let path = root().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// What `cargo metadata --format-version 1 FLAG` prints for the
/// workspace.
fn metadata(flag: &str) -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", flag])
        .arg("--manifest-path")
        .arg(root().join("Cargo.toml"))
        .output()
        .unwrap_or_else(|e| panic!("running {cargo} metadata: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// The workspace's packages, as `cargo metadata --no-deps` lists them.
fn packages() -> Vec<Value> {
    let packages = metadata("--no-deps")["packages"]
        .as_array()
        .expect("cargo metadata has a packages array")
        .clone();
    assert!(!packages.is_empty(), "cargo metadata listed no package");
    packages
}

/// The whole resolved graph, as `cargo metadata --locked` gives it
/// (`packages`, and `resolve.nodes` with each edge's kinds): read once
/// for every test that walks it.
fn resolved() -> &'static Value {
    static GRAPH: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    GRAPH.get_or_init(|| metadata("--locked"))
}

/// The packages reached from the workspace package `start` in `meta`
/// (see [`resolved`]), by name: each edge is taken when `follow` says so,
/// given its `dep_kinds` and the package it leads to.
fn reachable(
    meta: &Value,
    start: &str,
    follow: impl Fn(&[Value], &Value) -> bool,
) -> BTreeSet<String> {
    let packages: HashMap<&str, &Value> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|p| (p["id"].as_str().expect("an id"), p))
        .collect();
    let nodes: HashMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .expect("a resolved graph")
        .iter()
        .map(|n| (n["id"].as_str().expect("an id"), n))
        .collect();
    let start = packages
        .iter()
        .find(|(_, p)| name(p) == start)
        .map(|(id, _)| *id)
        .unwrap_or_else(|| panic!("no package {start} in the workspace"));
    let mut seen = BTreeSet::new();
    let mut todo = vec![start];
    while let Some(id) = todo.pop() {
        for dep in nodes[id]["deps"].as_array().expect("deps") {
            let kinds = dep["dep_kinds"].as_array().expect("dep_kinds");
            let dep_id = dep["pkg"].as_str().expect("a package id");
            let package = packages[dep_id];
            if follow(kinds, package) && seen.insert(name(package).to_owned()) {
                todo.push(dep_id);
            }
        }
    }
    seen
}

fn name(package: &Value) -> &str {
    package["name"].as_str().expect("a package has a name")
}

/// A library crate: a workspace package with no binary target (so neither
/// the `perfkit` binary's package nor xtask).
fn is_library(package: &Value) -> bool {
    let targets = package["targets"]
        .as_array()
        .expect("a package has targets");
    !targets.iter().any(|t| {
        t["kind"]
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k == "bin"))
    })
}

/// Whether `package` depends on `dep` in any section (normal, dev, build,
/// target-specific), by package name, renamed or not.
fn depends_on(package: &Value, dep: &str) -> bool {
    package["dependencies"]
        .as_array()
        .expect("a package has dependencies")
        .iter()
        .any(|d| d["name"] == dep)
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries =
        std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
