//! ARCHITECTURE.md names only what exists, and every rule it labels says
//! what enforces it.
//!
//! - A file named outside backticks (a word ending in `.md`, `.rs`...)
//!   must exist too, unless its line says it is not in the tree.
//! - A backticked path (it holds `/` or ends in a source or manifest
//!   extension) must exist: from the root, from a crate the section's
//!   heading names, or from that crate's `src/`; a bare file name
//!   anywhere in that crate. `{a,b}` alternatives are each checked.
//! - A backticked Rust name (`fixsession::store`, `Params::apply`,
//!   `screen_logon`) must have every segment among the identifiers of the
//!   section's crates (the whole workspace outside the code map).
//! - A labelled rule (`**[label]**`) must name, in its paragraph, a test
//!   or a check: a test function, or a file of tests, fuzz targets, tidy
//!   checks or CI.
//! - The map has a section saying what is deliberately absent.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{read, root, rust_files};

/// One stretch of ARCHITECTURE.md and the crate directories it is about
/// (those its `###` heading names in parentheses; none outside the code
/// map, where names are looked up in the whole workspace).
struct Section<'a> {
    dirs: Vec<PathBuf>,
    lines: Vec<(usize, &'a str)>,
}

fn sections(text: &str) -> Vec<Section<'_>> {
    let mut out = vec![Section {
        dirs: Vec::new(),
        lines: Vec::new(),
    }];
    for (n, line) in text.lines().enumerate() {
        if line.starts_with("## ") || line.starts_with("### ") {
            let dirs = match (line.find('('), line.rfind(')')) {
                (Some(a), Some(b)) if line.starts_with("### ") && a < b => line[a + 1..b]
                    .split(',')
                    .map(|d| root().join(d.trim()))
                    .filter(|d| d.join("Cargo.toml").is_file())
                    .collect(),
                _ => Vec::new(),
            };
            out.push(Section {
                dirs,
                lines: Vec::new(),
            });
        }
        out.last_mut().expect("a section").lines.push((n + 1, line));
    }
    out
}

/// The backticked spans of `line`.
fn ticked(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// File names written outside backticks (`DESIGN.md`, `docs/fix.md`, a
/// link's target): words that end in a source or document extension, with
/// the punctuation around them taken off. A line that says the file is
/// outside the tree ("not in the tree", "outside the tree") names none.
fn plain_file_names(line: &str) -> Vec<&str> {
    if line.contains("not in the tree") || line.contains("outside the tree") {
        return Vec::new();
    }
    let ext = [".rs", ".md", ".toml", ".json", ".lock", ".script"];
    line.split('`')
        .step_by(2)
        .flat_map(|plain| plain.split(|c: char| c.is_whitespace() || "()[]<>,;\"'".contains(c)))
        .map(|w| w.trim_end_matches(['.', ':', '!', '?']))
        .map(|w| w.split('#').next().unwrap_or(w))
        .filter(|w| !w.contains("://") && ext.iter().any(|e| w.ends_with(e)))
        .collect()
}

/// `a/{b,c}.rs` as `a/b.rs` and `a/c.rs`.
fn expand(token: &str) -> Vec<String> {
    match (token.find('{'), token.find('}')) {
        (Some(a), Some(b)) if a < b => token[a + 1..b]
            .split(',')
            .flat_map(|alt| expand(&format!("{}{alt}{}", &token[..a], &token[b + 1..])))
            .collect(),
        _ => vec![token.to_owned()],
    }
}

fn is_path(token: &str) -> bool {
    let plain = !token.contains(' ') && !token.contains("://") && !token.contains('<');
    let ext = [".rs", ".md", ".toml", ".json", ".lock", ".script"];
    plain
        && !token.starts_with('-')
        && (token.contains('/') || ext.iter().any(|e| token.ends_with(e)))
}

/// A Rust name: identifiers joined by `::`, maybe called (`quick()`).
fn rust_segments(token: &str) -> Option<Vec<&str>> {
    let t = token.strip_suffix("()").unwrap_or(token);
    let segs: Vec<&str> = t.split("::").collect();
    let ident = |s: &&str| {
        let mut c = s.chars();
        c.next()
            .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
            && c.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    segs.iter().all(ident).then_some(segs)
}

/// Whether `token`, a path, exists for a section about `dirs`.
fn path_exists(token: &str, dirs: &[PathBuf]) -> bool {
    let root = root();
    expand(token).iter().all(|t| {
        let t = t.trim_end_matches('/');
        // A glob names its directory.
        let t = match t.find('*') {
            Some(star) => t[..star].trim_end_matches('/'),
            None => t,
        };
        let mut bases = vec![root.clone(), root.join("crates")];
        for d in dirs {
            bases.push(d.clone());
            bases.push(d.join("src"));
        }
        if bases.iter().any(|b| b.join(t).exists()) {
            return true;
        }
        // A bare file name: anywhere in the section's crates.
        !t.contains('/')
            && dirs.iter().any(|d| {
                let mut files = Vec::new();
                all_files(d, &mut files);
                files.iter().any(|f| f.file_name().is_some_and(|n| n == t))
            })
    })
}

fn all_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == "target") {
            continue;
        }
        if p.is_dir() {
            all_files(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Every identifier in the Rust sources under `dirs`, module file and
/// directory names included; with the workspace's manifests' package
/// names (as Rust spells them) too.
fn identifiers(dirs: &[PathBuf]) -> HashSet<String> {
    let mut set = HashSet::new();
    for d in dirs {
        let mut files = Vec::new();
        rust_files(d, &mut files);
        for f in files {
            for comp in f.strip_prefix(d).unwrap_or(&f).components() {
                let c = comp.as_os_str().to_string_lossy();
                set.insert(c.trim_end_matches(".rs").to_owned());
            }
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            for w in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if !w.is_empty() {
                    set.insert(w.to_owned());
                }
            }
        }
        if let Ok(m) = std::fs::read_to_string(d.join("Cargo.toml")) {
            for l in m.lines().filter(|l| l.starts_with("name = ")) {
                set.insert(l[7..].trim_matches('"').replace('-', "_"));
            }
        }
    }
    set
}

/// The workspace's code directories: every crate and xtask.
fn workspace_dirs() -> Vec<PathBuf> {
    let root = root();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("reading crates/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("Cargo.toml").is_file())
        .collect();
    dirs.push(root.join("xtask"));
    dirs
}

#[test]
fn every_path_crate_and_module_architecture_md_names_exists() {
    let text = read("ARCHITECTURE.md");
    let everywhere = identifiers(&workspace_dirs());
    let mut missing = Vec::new();
    for s in sections(&text) {
        let local = if s.dirs.is_empty() {
            None
        } else {
            Some(identifiers(&s.dirs))
        };
        for &(n, line) in &s.lines {
            for f in plain_file_names(line) {
                if !path_exists(f, &s.dirs) {
                    missing.push(format!("line {n}: file {f}"));
                }
            }
            for t in ticked(line) {
                if is_path(t) {
                    if !path_exists(t, &s.dirs) {
                        missing.push(format!("line {n}: path `{t}`"));
                    }
                } else if let Some(segs) = rust_segments(t) {
                    let known = |w: &str| {
                        local.as_ref().is_some_and(|l| l.contains(w)) || everywhere.contains(w)
                    };
                    let unknown: Vec<&&str> = segs.iter().filter(|w| !known(w)).collect();
                    if !unknown.is_empty() {
                        missing.push(format!("line {n}: `{t}` ({unknown:?} found nowhere)"));
                    }
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names what does not exist:\n{}",
        missing.join("\n")
    );
}

/// Names of functions written as tests: every `fn` in a file named
/// `tests.rs` or under a `tests`, `fuzz` or `benches` directory or in
/// xtask, and every `fn` after a file's first `#[cfg(test)]`.
fn test_functions() -> HashSet<String> {
    let mut set = HashSet::new();
    for d in workspace_dirs() {
        let mut files = Vec::new();
        rust_files(&d, &mut files);
        for f in files {
            let rel = f.strip_prefix(root()).unwrap_or(&f);
            let all = rel.components().any(|c| {
                matches!(
                    c.as_os_str().to_str(),
                    Some("tests" | "tests.rs" | "fuzz" | "benches" | "xtask")
                )
            });
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let mut in_tests = all;
            for line in text.lines() {
                in_tests |= line.trim() == "#[cfg(test)]";
                let Some(at) = line.find("fn ").filter(|_| in_tests) else {
                    continue;
                };
                let name: String = line[at + 3..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    set.insert(name);
                }
            }
        }
    }
    set
}

/// Whether `token` names something that enforces a rule: a test function,
/// or a file of tests, fuzz targets, tidy checks, CI or lints.
fn names_a_check(token: &str, tests: &HashSet<String>) -> bool {
    if tests.contains(token.trim_end_matches("()")) {
        return true;
    }
    let enforcing = [
        "tests/",
        "tests.rs",
        "fuzz",
        "xtask/",
        ".ci/",
        "Cargo.toml",
        "benches/",
    ];
    is_path(token)
        && enforcing.iter().any(|e| token.contains(e))
        && path_exists(token, &workspace_dirs())
}

/// Each labelled rule and its paragraph (to the next blank line, list
/// item or label).
fn rules(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        let t = line.trim_start();
        let starts = t.starts_with("**[") || t.starts_with("- **[");
        if starts {
            let label = t[t.find("**[").expect("a label") + 3..]
                .split(']')
                .next()
                .unwrap_or_default()
                .to_owned();
            out.push((label, line.to_owned()));
            open = true;
        } else if t.is_empty() || t.starts_with("- ") || t.starts_with('#') {
            open = false;
        } else if open {
            let last = out.last_mut().expect("an open rule");
            last.1.push(' ');
            last.1.push_str(t);
        }
    }
    out
}

#[test]
fn every_labelled_rule_names_what_enforces_it() {
    let text = read("ARCHITECTURE.md");
    let tests = test_functions();
    let rules = rules(&text);
    assert!(
        rules.len() > 10,
        "found only {} labelled rules",
        rules.len()
    );
    let unenforced: Vec<String> = rules
        .iter()
        .filter(|(_, para)| !ticked(para).iter().any(|t| names_a_check(t, &tests)))
        .map(|(label, _)| format!("[{label}]"))
        .collect();
    assert!(
        unenforced.is_empty(),
        "these rules name no test or check (a test function or a test, fuzz, tidy or CI file, \
         in backticks): {unenforced:?}"
    );
}

#[test]
fn architecture_md_says_what_is_deliberately_absent() {
    let text = read("ARCHITECTURE.md");
    assert!(
        text.lines()
            .any(|l| l.starts_with("## Deliberately absent")),
        "ARCHITECTURE.md has no `## Deliberately absent` section"
    );
}

#[test]
fn names_and_paths_are_told_apart() {
    assert!(is_path("session/acceptor/{waiting,admission}.rs"));
    assert!(is_path("Cargo.lock"));
    assert!(!is_path("--max-dynamic-sessions"));
    assert!(!is_path("s3://bucket/key"));
    assert_eq!(expand("a/{b,c}.rs"), ["a/b.rs", "a/c.rs"]);
    assert_eq!(
        rust_segments("perfkit_measure::report"),
        Some(vec!["perfkit_measure", "report"])
    );
    assert_eq!(rust_segments("quick()"), Some(vec!["quick"]));
    assert_eq!(rust_segments("Histogram<u64>"), None);
    assert!(!path_exists("crates/no/such/file.rs", &[]));
    assert!(path_exists("xtask/src/tidy/{layering,map}.rs", &[]));
    assert_eq!(
        plain_file_names("see DESIGN.md, [docs](docs/fix.md#settings) and `x.rs` (a.toml)."),
        ["DESIGN.md", "docs/fix.md", "a.toml"]
    );
    assert!(plain_file_names("DESIGN.md is not in the tree").is_empty());
    assert!(!path_exists("DESIGN.md", &[]));
    let rules = rules("- **[a]** one\n  two `x`\n- next\n\n**[b]** three\n");
    assert_eq!(rules.len(), 2);
    assert!(rules[0].1.contains("`x`"));
}
