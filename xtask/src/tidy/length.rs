//! Lengths: no source file over [`MAX_FILE_LINES`] lines and no function
//! over [`MAX_FN_LINES`], so each file stays one topic and each function
//! one idea a reader can hold.
//!
//! Test code is exempt: files named `tests.rs`, files under a `tests`
//! directory, files of `#[cfg(test)] mod name;` declarations and `#[test]`
//! functions. A function is counted from its `fn` line to its closing
//! brace, both included; any other file by all its lines, an inline test
//! module included (one that makes the file too long moves to its own
//! `tests.rs`).
//! The scan blanks comments and string and character literals first, so a
//! brace or `fn` in them is not code.
//!
//! What may stay longer is in [`ALLOWED`], each entry with its reason.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{root, rust_files};

/// The most lines a non-test source file may have.
const MAX_FILE_LINES: usize = 800;

/// The most lines a non-test function may have, `fn` line to closing brace.
const MAX_FN_LINES: usize = 150;

/// Files (`path`) and functions (`path:name`) allowed over the bounds,
/// paths from the workspace root, each with why.
const ALLOWED: &[(&str, &str)] = &[(
    "crates/zstdblock/examples/pipeline.rs:main",
    "a measuring example, not the product: one script of flags, interleaved runs and printed figures read top to bottom",
)];

/// One function found by [`functions`].
#[derive(Debug, PartialEq, Eq)]
struct Function {
    name: String,
    /// 1-based line of the `fn` keyword.
    line: usize,
    lines: usize,
    /// Under `#[test]` or inside a `#[cfg(test)]` module.
    test: bool,
}

/// What [`scan`] finds in one file.
#[derive(Debug, Default)]
struct Scan {
    functions: Vec<Function>,
    /// All the file's lines.
    lines: usize,
    /// The modules declared `#[cfg(test)] mod name;`, whose files are tests.
    test_modules: Vec<String>,
}

/// `text` with comments and the insides of string and character literals
/// replaced by spaces (newlines kept, so offsets and lines still match).
fn blank(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            wipe(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            // Block comments nest in Rust.
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            wipe(&mut out, i, j);
            i = j;
        } else if !ident_before && raw_string_hashes(&b[i..]).is_some() {
            let (prefix, hashes) = raw_string_hashes(&b[i..]).expect("checked");
            let start = i + prefix + hashes + 1;
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let end = b[start..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| start + p);
            wipe(&mut out, start, end);
            i = end + close.len();
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            wipe(&mut out, i + 1, j);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character or byte literal ('x', b'\n', '\u{..}', '{'), not
            // a lifetime or label ('a, 'outer).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&c| c == b'\'')
                    .map(|p| i + 2 + p)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 1 + ch)
            };
            match end {
                Some(end) => {
                    wipe(&mut out, i + 1, end);
                    i = end + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// For a raw string literal starting at `b[0]` (`r"`, `r#"`, `br##"`...),
/// the length of its `r`/`br` prefix and its number of `#`s.
fn raw_string_hashes(b: &[u8]) -> Option<(usize, usize)> {
    let prefix = if b.starts_with(b"br") {
        2
    } else if b.starts_with(b"r") {
        1
    } else {
        return None;
    };
    let hashes = b[prefix..].iter().take_while(|&&c| c == b'#').count();
    (b.get(prefix + hashes) == Some(&b'"')).then_some((prefix, hashes))
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Whether the keyword `word` stands at `i` of `code` (not inside a longer
/// identifier).
fn word_at(code: &[u8], i: usize, word: &[u8]) -> bool {
    code[i..].starts_with(word)
        && (i == 0 || !is_ident(code[i - 1]))
        && code.get(i + word.len()).is_none_or(|&c| !is_ident(c))
}

fn skip_space(code: &[u8], mut i: usize) -> usize {
    while i < code.len() && code[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

fn identifier(code: &[u8], i: usize) -> &str {
    let end = code[i..]
        .iter()
        .position(|&c| !is_ident(c))
        .map_or(code.len(), |p| i + p);
    std::str::from_utf8(&code[i..end]).unwrap_or_default()
}

/// The offset of the brace that closes the one at `open`.
fn closing(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (j, &c) in code.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return j;
                }
            }
            _ => {}
        }
    }
    code.len().saturating_sub(1)
}

/// The item after the attribute ending at `i`, past any further
/// attributes and visibility: its offset.
fn after_attributes(code: &[u8], mut i: usize) -> usize {
    loop {
        i = skip_space(code, i);
        if code[i..].starts_with(b"#[") {
            let mut depth = 0usize;
            while i < code.len() {
                match code[i] {
                    b'[' => depth += 1,
                    b']' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            i += 1;
        } else if word_at(code, i, b"pub") {
            i += 3;
            if code.get(skip_space(code, i)) == Some(&b'(') {
                i = skip_space(code, i);
                i += code[i..]
                    .iter()
                    .position(|&c| c == b')')
                    .map_or(0, |p| p + 1);
            }
        } else {
            return i;
        }
    }
}

fn scan(text: &str) -> Scan {
    let code = blank(text);
    let line_of = |at: usize| code[..at].iter().filter(|&&c| c == b'\n').count() + 1;
    let mut scan = Scan::default();
    // Byte ranges of #[cfg(test)] module bodies, and of #[test] functions.
    let mut test_ranges: Vec<(usize, usize)> = Vec::new();
    let mut test_fns: HashSet<usize> = HashSet::new();
    for (at, _) in text.match_indices("#[cfg(test)]") {
        if code[at] != b'#' {
            continue; // in a comment or string
        }
        let item = after_attributes(&code, at + "#[cfg(test)]".len());
        if !word_at(&code, item, b"mod") {
            continue;
        }
        let name_at = skip_space(&code, item + 3);
        let name = identifier(&code, name_at).to_owned();
        let after = skip_space(&code, name_at + name.len());
        match code.get(after) {
            Some(b'{') => test_ranges.push((at, closing(&code, after))),
            Some(b';') => scan.test_modules.push(name),
            _ => {}
        }
    }
    for (at, _) in text.match_indices("#[test]") {
        if code[at] == b'#' {
            test_fns.insert(after_attributes(&code, at + "#[test]".len()));
        }
    }
    let in_test = |at: usize| test_ranges.iter().any(|&(a, b)| a <= at && at <= b);
    let mut i = 0;
    while i < code.len() {
        if !word_at(&code, i, b"fn") {
            i += 1;
            continue;
        }
        let name_at = skip_space(&code, i + 2);
        let name = identifier(&code, name_at);
        if name.is_empty() {
            // A function pointer type, `fn(u8) -> u8`.
            i += 2;
            continue;
        }
        // The body: the first `{` outside parentheses and brackets, unless
        // a `;` ends a bodiless declaration first.
        let (mut depth, mut j, mut body) = (0i32, name_at + name.len(), None);
        while j < code.len() {
            match code[j] {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'{' if depth == 0 => {
                    body = Some(j);
                    break;
                }
                b';' if depth == 0 => break,
                _ => {}
            }
            j += 1;
        }
        if let Some(open) = body {
            let close = closing(&code, open);
            // The item's start, for #[test]: back over `pub`, `const`,
            // `async`, `unsafe`, `extern "C"` to the attribute's target.
            let marked = test_fns
                .iter()
                .any(|&t| t <= i && code[t..i].iter().all(|&c| c != b';' && c != b'}'));
            scan.functions.push(Function {
                name: name.to_owned(),
                line: line_of(i),
                lines: line_of(close) - line_of(i) + 1,
                test: marked || in_test(i),
            });
        }
        i = name_at + name.len();
    }
    scan.lines = text.lines().count();
    scan
}

/// The directory holding the child modules of the module in `file`.
fn module_dir(file: &Path) -> PathBuf {
    let parent = file.parent().expect("a file has a directory");
    match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "lib.rs" | "main.rs") => parent.to_path_buf(),
        _ => parent.join(file.file_stem().expect("a file has a stem")),
    }
}

/// Every Rust source file of the workspace (crates, xtask, examples), with
/// build output skipped.
fn sources() -> Vec<PathBuf> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["crates", "xtask", "examples"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    files.retain(|f| !f.components().any(|c| c.as_os_str() == "target"));
    files.sort();
    files
}

/// Whether `rel` is a test file by its path alone.
fn is_test_path(rel: &Path) -> bool {
    rel.file_name().is_some_and(|n| n == "tests.rs")
        || rel.components().any(|c| c.as_os_str() == "tests")
}

/// Every file and function over its bound, as `(allow-list key, message)`.
fn overlong() -> Vec<(String, String)> {
    let root = root();
    let scans: Vec<(PathBuf, Scan)> = sources()
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f)
                .unwrap_or_else(|e| panic!("reading {}: {e}", f.display()));
            let rel = f.strip_prefix(&root).unwrap_or(&f).to_path_buf();
            (rel, scan(&text))
        })
        .collect();
    // Modules declared `#[cfg(test)] mod name;`: their files and directories.
    let test_dirs: Vec<PathBuf> = scans
        .iter()
        .flat_map(|(rel, s)| s.test_modules.iter().map(|m| module_dir(rel).join(m)))
        .collect();
    let is_test = |rel: &Path| {
        is_test_path(rel)
            || test_dirs
                .iter()
                .any(|d| rel.starts_with(d) || rel == d.with_extension("rs"))
    };
    let mut over = Vec::new();
    for (rel, s) in &scans {
        if is_test(rel) {
            continue;
        }
        let path = rel.display().to_string();
        if s.lines > MAX_FILE_LINES {
            over.push((
                path.clone(),
                format!("{path}: {} lines (over {MAX_FILE_LINES})", s.lines),
            ));
        }
        for f in s
            .functions
            .iter()
            .filter(|f| !f.test && f.lines > MAX_FN_LINES)
        {
            over.push((
                format!("{path}:{}", f.name),
                format!(
                    "{path}:{}: fn {} is {} lines (over {MAX_FN_LINES})",
                    f.line, f.name, f.lines
                ),
            ));
        }
    }
    over
}

#[test]
fn no_source_file_over_800_lines_and_no_function_over_150() {
    let over = overlong();
    let allowed: HashSet<&str> = ALLOWED.iter().map(|(k, _)| *k).collect();
    let unexplained: Vec<&str> = over
        .iter()
        .filter(|(k, _)| !allowed.contains(k.as_str()))
        .map(|(_, m)| m.as_str())
        .collect();
    assert!(
        unexplained.is_empty(),
        "split these where a concept hides (a test module may move to tests.rs), or add \
         them to ALLOWED in xtask/src/tidy/length.rs with the reason:\n{}",
        unexplained.join("\n")
    );
    let found: HashSet<&str> = over.iter().map(|(k, _)| k.as_str()).collect();
    let stale: Vec<&str> = allowed
        .iter()
        .filter(|k| !found.contains(*k))
        .copied()
        .collect();
    assert!(
        stale.is_empty(),
        "these ALLOWED entries are within bounds now (or gone): take them off the list: {stale:?}"
    );
}

#[test]
fn every_allowed_entry_gives_a_reason() {
    for (key, reason) in ALLOWED {
        assert!(
            reason.split_whitespace().count() >= 3,
            "{key}: no reason given"
        );
    }
}

#[test]
fn functions_are_measured_from_fn_to_closing_brace_past_braces_in_literals() {
    let text = r##"
fn one() {
    let s = "}}} fn fake() {";
    let r = r#"{ "}" "#;
    let c = '}';
    let b = b'"';
    let l: &'static str = "x"; // } fn comment() {
    /* } /* nested { */ */
}

pub(crate) fn two<'a>(x: &'a [u8; 2], f: fn(u8) -> u8) -> impl Fn() + 'a
where
    u8: Copy,
{
    move || {}
}

trait T {
    fn declared(&self);
}

#[cfg(test)]
mod tests {
    fn helper() {}
}

#[cfg(test)]
mod more;

#[test]
fn a_test() {
}
"##;
    let s = scan(text);
    let got: Vec<(&str, usize, usize, bool)> = s
        .functions
        .iter()
        .map(|f| (f.name.as_str(), f.line, f.lines, f.test))
        .collect();
    assert_eq!(
        got,
        [
            ("one", 2, 8, false),
            ("two", 11, 6, false),
            ("helper", 24, 1, true),
            ("a_test", 31, 2, true),
        ]
    );
    assert_eq!(s.test_modules, ["more"]);
    // Every line counts, the literal's leading empty one and the inline
    // test module's too.
    assert_eq!(s.lines, 32);
}
