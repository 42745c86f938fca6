//! Layering: which crate may lean on which, and what the binary alone
//! may do.

use std::collections::BTreeSet;
use std::path::Path;

use super::{BENCH, depends_on, is_library, name, packages, reachable, resolved, root, rust_files};

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

/// Whether a file of the binary's `src/` (a path relative to it) is a flag
/// module, where clap's types may be named: `main.rs`, `flags/`, and a
/// command's `args.rs` with its child modules (`args/tests.rs`).
fn is_flag_module(rel: &Path) -> bool {
    rel == Path::new("main.rs")
        || rel.starts_with("flags")
        || (rel.starts_with("cmd")
            && (rel.file_name().is_some_and(|f| f == "args.rs")
                || rel.components().any(|c| c.as_os_str() == "args")))
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
    assert!(is_flag_module(Path::new("cmd/fix/args/tests.rs")));
    assert!(!is_flag_module(Path::new("cmd/fix/tests.rs")));
    assert!(!is_flag_module(Path::new("cmd/zip/mod.rs")));
    assert!(!is_flag_module(Path::new("cmd.rs")));
}

/// What running the program a library is linked into looks like: finding
/// its own path (`current_exe`, `/proc/self/exe`) or its name
/// (`args_os().next()`, `args().next()`).
const SELF_EXEC: [&str; 4] = [
    "current_exe",
    "/proc/self/exe",
    "args_os().next()",
    "args().next()",
];

/// The source a library ships, with its tests left out: files under
/// `tests/`, `benches/`, `examples/`, `fuzz/` and files named `tests.rs`
/// are skipped, and a file is read up to its first `#[cfg(test)]`.
fn shipped_lines(root: &Path, rel: &Path) -> Vec<(usize, String)> {
    let skipped = rel.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("tests" | "benches" | "examples" | "fuzz" | "tests.rs")
        )
    });
    if skipped {
        return Vec::new();
    }
    let text = std::fs::read_to_string(root.join(rel)).expect("a readable source file");
    text.lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .enumerate()
        .map(|(n, l)| (n + 1, l.to_owned()))
        .collect()
}

/// Lines of `rel` under `root` (shipped code, comments aside) that name a
/// way of finding and running the program itself.
fn self_exec_lines(root: &Path, rel: &Path) -> Vec<String> {
    shipped_lines(root, rel)
        .into_iter()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or_default();
            SELF_EXEC.iter().any(|s| code.contains(s))
        })
        .map(|(n, l)| format!("{}:{n}: {}", rel.display(), l.trim()))
        .collect()
}

#[test]
fn no_library_runs_the_program_it_is_linked_into() {
    let root = root();
    let mut found = Vec::new();
    for p in packages().iter().filter(|p| is_library(p)) {
        let manifest = Path::new(p["manifest_path"].as_str().expect("a manifest path"));
        let dir = manifest.parent().expect("a manifest has a directory");
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        for f in files {
            let rel = f
                .strip_prefix(&root)
                .expect("a workspace crate is under the root");
            found.extend(self_exec_lines(&root, rel));
        }
    }
    assert!(
        found.is_empty(),
        "a library runs the binary it is linked into: the binary hands it a typed \
         description instead (perfkit_bench::invocation::Launcher), or the comparison lives \
         in the binary:\n{}",
        found.join("\n")
    );
}

#[test]
fn self_exec_is_recognised_in_code_not_in_comments_or_tests() {
    let dir = std::env::temp_dir().join(format!("xtask-tidy-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("src/lib.rs"),
        "// current_exe in a comment\nlet me = std::env::current_exe();\n#[cfg(test)]\nlet t = std::env::current_exe();\n",
    )
    .unwrap();
    let lines = self_exec_lines(&dir, Path::new("src/lib.rs"));
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].ends_with(":2: let me = std::env::current_exe();"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// No library depends on anyhow, perfkit-bench included (issue 45): each
/// returns a thiserror enum saying what failed; only the binary and xtask,
/// which are not libraries, use anyhow. Dev- and build-dependencies are
/// not counted: neither is part of a library's API.
#[test]
fn libraries_return_typed_errors() {
    let packages = packages();
    let on_anyhow: Vec<&str> = packages
        .iter()
        .filter(|p| is_library(p))
        .filter(|p| {
            p["dependencies"]
                .as_array()
                .expect("a package has dependencies")
                .iter()
                .any(|d| d["name"] == "anyhow" && d["kind"].is_null())
        })
        .map(name)
        .collect();
    assert!(
        on_anyhow.is_empty(),
        "libraries return thiserror enums, not anyhow: {on_anyhow:?}"
    );
}

#[test]
fn every_outside_dependency_is_pinned_exactly() {
    let mut loose = Vec::new();
    for p in packages() {
        for d in p["dependencies"]
            .as_array()
            .expect("a package has dependencies")
        {
            // Workspace crates are path dependencies; the rest come from a
            // registry and must name one version.
            if d["path"].is_string() {
                continue;
            }
            let req = d["req"].as_str().unwrap_or_default();
            if !req.starts_with('=') {
                loose.push(format!("{} → {} {req}", name(&p), d["name"]));
            }
        }
    }
    assert!(
        loose.is_empty(),
        "pin every dependency exactly (`=x.y.z`) in [workspace.dependencies]: {loose:#?}"
    );
}

#[test]
fn crates_without_unsafe_forbid_it() {
    let mut missing = Vec::new();
    for p in packages() {
        let manifest = Path::new(p["manifest_path"].as_str().expect("a manifest path"));
        let dir = manifest.parent().expect("a manifest has a directory");
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        let uses_unsafe = files.iter().any(|f| {
            std::fs::read_to_string(f)
                .unwrap_or_default()
                .lines()
                .any(|l| l.split("//").next().unwrap_or_default().contains("unsafe "))
        });
        let roots = ["src/lib.rs", "src/main.rs"].map(|r| dir.join(r));
        let forbids = roots.iter().filter(|r| r.is_file()).all(|r| {
            std::fs::read_to_string(r)
                .unwrap_or_default()
                .contains("#![forbid(unsafe_code)]")
        });
        if !uses_unsafe && !forbids {
            missing.push(name(&p).to_owned());
        }
    }
    assert!(
        missing.is_empty(),
        "crates without unsafe say #![forbid(unsafe_code)] in each crate root: {missing:?}"
    );
}

/// betree's evaluation and key probes: where [no-bytes-in-eval] holds.
const BETREE_EVAL: [&str; 3] = [
    "crates/betree/src/expr/eval.rs",
    "crates/betree/src/index/eval.rs",
    "crates/betree/src/counting/keys.rs",
];

#[test]
fn eval_and_probes_never_touch_string_bytes() {
    let root = root();
    let mut found = Vec::new();
    for file in BETREE_EVAL {
        for (n, line) in shipped_lines(&root, Path::new(file)) {
            let code = line.split("//").next().unwrap_or_default();
            let bytes = ["str", "String", "as_bytes", "as_str"];
            let mut words = code.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            if words.any(|w| bytes.contains(&w)) {
                found.push(format!("{file}:{n}: {}", line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "betree's evaluation compares interned string numbers, never string bytes:\n{}",
        found.join("\n")
    );
}

/// Crates that open sockets, speak TLS or reach a database (or bring the
/// async runtime those clients run on): the FIX engine's business, never
/// the session machine's or the wire's.
const IO_CRATES: [&str; 11] = [
    "socket2",
    "mio",
    "tokio",
    "rustls",
    "native-tls",
    "openssl",
    "postgres",
    "tokio-postgres",
    "postgres-protocol",
    "hyper",
    "reqwest",
];

/// The crates `package` is built with (its normal and build dependencies,
/// transitively; dev-dependencies left out), by name, from the resolved
/// graph of `cargo metadata`.
fn built_with(package: &str) -> BTreeSet<String> {
    reachable(resolved(), package, |kinds, _| {
        kinds.iter().any(|k| k["kind"] != "dev")
    })
}

/// The session machine's crate, which `[session-without-io]` keeps free of
/// sockets, TLS and databases.
const SESSION_CRATE: &str = "fixsession";

#[test]
fn the_session_and_wire_crates_open_no_sockets_tls_or_databases() {
    // The walk itself is checked on the crate that must have them, so an
    // empty graph cannot pass for a clean one.
    let engine = built_with("fixengine");
    for io in ["rustls", "socket2", "postgres"] {
        assert!(
            engine.contains(io),
            "fixengine's graph lacks {io}: {engine:?}"
        );
    }
    let mut found = Vec::new();
    for package in [SESSION_CRATE, "fixcore"] {
        let deps = built_with(package);
        for io in IO_CRATES.iter().filter(|c| deps.contains(**c)) {
            found.push(format!("{package} is built with {io}"));
        }
    }
    let root = root();
    let mut files = Vec::new();
    for package in [SESSION_CRATE, "fixcore"] {
        rust_files(&root.join("crates").join(package).join("src"), &mut files);
    }
    for f in files {
        let text = std::fs::read_to_string(&f).expect("a readable source file");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if code.contains("std::net") || code.contains("net::Tcp") {
                let rel = f.strip_prefix(&root).expect("under the root");
                found.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "sockets, TLS and databases are fixengine's (and fixsession-postgres's): the session \
         machine and the wire take bytes and give bytes:\n{}",
        found.join("\n")
    );
}
