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
//!   section;
//! - in the binary, clap is named only by the flag modules (`main.rs`,
//!   `flags/`, and one `args.rs` per command folder), and no function
//!   outside them takes an `*Args`: flags become settings before any work
//!   starts.
//!
//! The workspace's packages come from `cargo metadata --no-deps`, so a new
//! crate is checked without this file changing.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

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

/// The workspace's packages, as `cargo metadata --no-deps` lists them.
fn packages() -> Vec<Value> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .arg("--manifest-path")
        .arg(root().join("Cargo.toml"))
        .output()
        .unwrap_or_else(|e| panic!("running {cargo} metadata: {e}"));
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON");
    let packages = meta["packages"]
        .as_array()
        .expect("cargo metadata has a packages array")
        .clone();
    assert!(!packages.is_empty(), "cargo metadata listed no package");
    packages
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

#[test]
fn every_workspace_crate_has_a_code_map_heading_in_architecture_md() {
    let text = read("ARCHITECTURE.md");
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with('#')).collect();
    let missing: Vec<String> = packages()
        .iter()
        .map(|p| name(p).to_owned())
        .filter(|n| {
            let quoted = format!("`{n}`");
            !headings.iter().any(|h| h.contains(&quoted))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md has no heading naming these workspace crates in backticks \
         (give each a paragraph in the code map): {missing:?}"
    );
}

#[test]
fn readme_and_architecture_stay_short() {
    for (file, max) in [
        ("README.md", README_MAX_LINES),
        ("ARCHITECTURE.md", ARCHITECTURE_MAX_LINES),
    ] {
        let lines = read(file).lines().count();
        assert!(
            lines <= max,
            "{file} is {lines} lines, over its {max}: move reference text to docs/"
        );
    }
}

/// The targets of `[text](target)` links in Markdown, without titles.
fn link_targets(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split_whitespace().next().unwrap_or("");
        out.push(target);
        rest = &rest[end..];
    }
    out
}

#[test]
fn relative_links_in_the_docs_name_files_that_exist() {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let docs = root.join("docs");
    if docs.is_dir() {
        for entry in std::fs::read_dir(&docs).expect("reading docs/") {
            let path = entry.expect("a docs/ entry").path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    let mut broken = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("reading a Markdown file");
        for target in link_targets(&text) {
            if target.is_empty() || target.starts_with('#') || target.contains("://") {
                continue;
            }
            let path = target.split('#').next().unwrap_or(target);
            let dir = file.parent().expect("a file has a directory");
            if !dir.join(path).exists() {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "links to nothing: {broken:#?}");
}

#[test]
fn no_library_depends_on_the_bench_crate() {
    let packages = packages();
    let on_bench: Vec<&str> = packages
        .iter()
        .filter(|p| is_library(p) && name(p) != BENCH && depends_on(p, BENCH))
        .map(name)
        .collect();
    assert!(
        on_bench.is_empty(),
        "libraries must not depend on {BENCH}, in any dependency section (its probes are \
         perfkit-measure's): {on_bench:?}"
    );
}

#[test]
fn link_targets_are_read_from_markdown() {
    let text = "see [a](docs/a.md) and [b](b.md#x \"title\"), not [c] (d) or ](https://e/f)";
    assert_eq!(link_targets(text), ["docs/a.md", "b.md#x", "https://e/f"]);
}

/// Whether a file of the binary's `src/` (a path relative to it) is a flag
/// module, where clap's types may be named.
fn is_flag_module(rel: &Path) -> bool {
    rel == Path::new("main.rs")
        || rel.starts_with("flags")
        || (rel.starts_with("cmd") && rel.file_name().is_some_and(|f| f == "args.rs"))
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

#[test]
fn clap_stays_in_the_flag_modules() {
    let src = root().join("crates/cli/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut outside = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&src).expect("under src").to_path_buf();
        if is_flag_module(&rel) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            let names_clap = code.contains("clap::") || code.contains("clap_complete");
            let takes_args = code.contains("fn ") && code.contains("Args");
            if names_clap || takes_args {
                outside.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        outside.is_empty(),
        "clap types belong in main.rs, flags/ or a command's args.rs, converted to settings \
         there; these lines are elsewhere:\n{}",
        outside.join("\n")
    );
}

#[test]
fn flag_modules_are_recognised_by_path() {
    assert!(is_flag_module(Path::new("main.rs")));
    assert!(is_flag_module(Path::new("flags/manual.rs")));
    assert!(is_flag_module(Path::new("cmd/zip/args.rs")));
    assert!(!is_flag_module(Path::new("cmd/zip/mod.rs")));
    assert!(!is_flag_module(Path::new("cmd.rs")));
}
