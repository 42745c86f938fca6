//! Lock files: the fuzz projects (each its own workspace, built by
//! cargo-fuzz, which has no `--locked`) commit theirs, and every package
//! they share with the main workspace is at a version the main lock has,
//! so CI's fuzz build compiles what the test build does, not a fresh
//! resolution of the day.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::root;

/// Each package's versions in the lock file at `path`: its `name` and
/// `version` lines, which cargo writes one after the other.
fn locked(path: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e} (commit it)", path.display()));
    let field = |line: &str, key: &str| {
        line.strip_prefix(key)
            .and_then(|rest| rest.strip_prefix(" = \""))
            .and_then(|rest| rest.strip_suffix('"'))
            .map(str::to_owned)
    };
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some(name) = field(line, "name") {
            let version = lines.next().and_then(|l| field(l, "version"));
            let version =
                version.unwrap_or_else(|| panic!("{}: {name} has no version line", path.display()));
            packages.entry(name).or_default().insert(version);
        }
    }
    packages
}

#[test]
fn fuzz_projects_lock_what_the_workspace_locks() {
    let main = locked(&root().join("Cargo.lock"));
    assert!(main.contains_key("zstd-safe"), "the main lock parsed");
    let projects = crate::fuzz_projects(&root()).expect("listing the fuzz projects");
    let mut drift = Vec::new();
    for fuzz in &projects {
        for (name, versions) in locked(&root().join(fuzz).join("Cargo.lock")) {
            let Some(ours) = main.get(&name) else {
                continue;
            };
            for v in versions.difference(ours) {
                drift.push(format!("{}: {name} {v}", fuzz.display()));
            }
        }
    }
    assert!(!projects.is_empty(), "no fuzz project found");
    assert!(
        drift.is_empty(),
        "fuzz lock files hold versions the main Cargo.lock does not (copy Cargo.lock over \
         the project's and run `cargo +nightly metadata` there): {drift:?}"
    );
}
