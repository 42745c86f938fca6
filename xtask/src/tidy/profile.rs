//! The dev profile's unoptimised crates. The root `Cargo.toml` builds
//! dependencies at opt-level 2 in dev builds, for the tests' speed, and
//! names back to opt-level 0 the crates no test runs the code of: proc
//! macros and build tools, which only run while compiling, and the
//! test-only validators. A name there that is no package does nothing,
//! and a crate that later became part of the `perfkit` binary would run
//! unoptimised in every test; this keeps the list to what it says.

use std::collections::BTreeSet;

use serde_json::Value;

use super::{reachable, read, resolved};

/// The packages `[profile.dev.package]` of the root `Cargo.toml` sets to
/// opt-level 0, in whatever form the table is written.
fn unoptimised() -> Vec<String> {
    let manifest: toml_edit::DocumentMut = read("Cargo.toml")
        .parse()
        .expect("the root Cargo.toml parses");
    let packages = manifest["profile"]["dev"]["package"]
        .as_table_like()
        .expect("Cargo.toml has a [profile.dev.package] table");
    packages
        .iter()
        .filter(|(_, settings)| settings["opt-level"].as_integer() == Some(0))
        .map(|(name, _)| name.to_owned())
        .collect()
}

/// Whether `package` is a proc macro: its code runs in the compiler, and
/// its own dependencies with it.
fn is_proc_macro(package: &Value) -> bool {
    package["targets"]
        .as_array()
        .expect("a package has targets")
        .iter()
        .any(|t| {
            t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "proc-macro"))
        })
}

#[test]
fn unoptimised_crates_are_packages_and_not_linked_into_the_binary() {
    let meta = resolved();
    let names: BTreeSet<&str> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(super::name)
        .collect();
    // The binary's code: its normal dependencies, not through a proc
    // macro (whose dependencies run in the compiler) nor a build script.
    let linked = reachable(meta, "perfkit", |kinds, package| {
        kinds.iter().any(|k| k["kind"].is_null()) && !is_proc_macro(package)
    });
    // The walk itself is checked on crates the binary surely links, so an
    // empty graph cannot pass for a clean one.
    for runtime in ["zstd-safe", "clap", "tokio"] {
        assert!(
            linked.contains(runtime),
            "the binary's graph lacks {runtime}"
        );
    }
    let listed = unoptimised();
    assert!(
        listed.contains(&"syn".to_owned()),
        "the list parsed: {listed:?}"
    );
    let mut wrong = Vec::new();
    for name in &listed {
        if !names.contains(name.as_str()) {
            wrong.push(format!("{name} names no package in the lock"));
        } else if linked.contains(name) {
            wrong.push(format!("{name} is linked into perfkit"));
        }
    }
    assert!(
        wrong.is_empty(),
        "Cargo.toml's [profile.dev.package] opt-level 0 list is for crates no test runs \
         (proc macros, build tools, test-only validators):\n{}",
        wrong.join("\n")
    );
}
