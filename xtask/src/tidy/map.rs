//! The maps: README.md and ARCHITECTURE.md stay short and name only what
//! exists.

use super::{ARCHITECTURE_MAX_LINES, README_MAX_LINES, name, packages, read, root};

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
fn link_targets_are_read_from_markdown() {
    let text = "see [a](docs/a.md) and [b](b.md#x \"title\"), not [c] (d) or ](https://e/f)";
    assert_eq!(link_targets(text), ["docs/a.md", "b.md#x", "https://e/f"]);
}

#[test]
fn the_readme_layout_table_lists_every_crate() {
    let readme = read("README.md");
    let root = root();
    let missing: Vec<String> = packages()
        .iter()
        .filter_map(|p| {
            let manifest = std::path::Path::new(p["manifest_path"].as_str()?);
            let dir = manifest.parent()?.strip_prefix(&root).ok()?;
            let cell = format!("| `{}` |", dir.display());
            (!readme.lines().any(|l| l.starts_with(&cell))).then(|| dir.display().to_string())
        })
        .collect();
    assert!(
        missing.is_empty(),
        "README.md's layout table has no row for: {missing:?}"
    );
}
