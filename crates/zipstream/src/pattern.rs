//! Info-ZIP's wildcards, as its `zip -x`/`-i`/`-d` and `unzip MEMBER`/`-x`
//! read them: `*` any run of characters (`/` included), `?` one character,
//! `[abc]`, `[a-z]`, `[!a-z]` (or `[^a-z]`) a set, anything else itself,
//! case-sensitive. Info-ZIP's rules rather than a glob crate's (globset
//! keeps `*` inside one path component unless told otherwise and reads
//! `{a,b}`): an Info-ZIP user's pattern must select what it selects there.
//!
//! ```
//! use zipstream::pattern::Pattern;
//!
//! assert!(Pattern::new("*.txt").matches("docs/a.txt"));
//! assert!(Pattern::new("a/[!b]*").matches("a/y.txt"));
//! assert!(!Pattern::new("*.txt").matches("A.TXT"));
//! ```
//!
//! [`find_archive`] and [`archives_matching`] find the archives `unzip
//! NAME` means, as Info-ZIP's unzip does.

mod archives;

pub use archives::{FolderUnreadable, archives_matching, find_archive, is_wildcard};

/// A compiled pattern in Info-ZIP's syntax.
#[derive(Debug, Clone)]
pub struct Pattern {
    chars: Vec<char>,
    /// `*`, `?` and sets never match `/` (Info-ZIP's `zip -R`, `unzip -W`).
    within_folders: bool,
}

impl Pattern {
    /// The pattern `text`, in Info-ZIP's syntax.
    pub fn new(text: &str) -> Pattern {
        Pattern {
            chars: text.chars().collect(),
            within_folders: false,
        }
    }

    /// The pattern `text` whose wildcards match within one folder level:
    /// `*`, `?` and `[...]` never match `/` (`*.c` matches `a.c`, not
    /// `d/a.c`), but `**` does, as Info-ZIP's `unzip -W` and `zip -R`
    /// read their patterns.
    pub fn within_folders(text: &str) -> Pattern {
        Pattern {
            within_folders: true,
            ..Pattern::new(text)
        }
    }

    /// The pattern as it was given.
    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let s: Vec<char> = name.chars().collect();
        if self.within_folders && self.chars.windows(2).any(|w| w == ['*', '*']) {
            wildcard_within_deep(&self.chars, &s)
        } else if self.within_folders {
            wildcard_within(&self.chars, &s)
        } else {
            wildcard(&self.chars, &s)
        }
    }
}

/// Whether any of `patterns` matches `name`.
pub fn any(patterns: &[Pattern], name: &str) -> bool {
    patterns.iter().any(|p| p.matches(name))
}

/// Which members an Info-ZIP `unzip` acts on: the MEMBER patterns (all
/// when none) less the `-x` ones, remembering which MEMBER patterns
/// matched, since unzip names the first that matched nothing.
///
/// ```
/// use zipstream::pattern::Selection;
///
/// let members = ["*.TXT".to_string(), "none*".to_string()];
/// let sel = Selection::new(&members, &["b*".to_string()], true, false);
/// assert!(sel.wants("a.txt"));
/// assert!(!sel.wants("b.txt"));
/// assert!(!sel.wants("c.md"));
/// assert_eq!(sel.first_unmatched().as_deref(), Some("none*"));
/// ```
#[derive(Debug)]
pub struct Selection {
    include: Vec<Pattern>,
    exclude: Vec<Pattern>,
    matched: std::cell::RefCell<Vec<bool>>,
    /// `-C`: names are lowered before matching (the patterns were).
    fold: bool,
}

impl Selection {
    /// The selection of `members` less `exclude`; `ignore_case` is
    /// unzip's `-C` (patterns and names compared in lower case),
    /// `within_folders` its `-W` (see [`Pattern::within_folders`]).
    pub fn new(
        members: &[String],
        exclude: &[String],
        ignore_case: bool,
        within_folders: bool,
    ) -> Selection {
        // -C: patterns and names are compared in one (lower) case.
        let fold = ignore_case;
        // -W: `*` and `?` within one folder level, `**` across.
        let new = if within_folders {
            Pattern::within_folders
        } else {
            Pattern::new
        };
        let compile = |v: &[String]| {
            v.iter()
                .map(|p| {
                    if fold {
                        new(&p.to_ascii_lowercase())
                    } else {
                        new(p)
                    }
                })
                .collect()
        };
        Selection {
            include: compile(members),
            exclude: compile(exclude),
            matched: std::cell::RefCell::new(vec![false; members.len()]),
            fold,
        }
    }

    /// Whether the entry named `name` is selected; a MEMBER pattern that
    /// matches it is remembered as matched.
    pub fn wants(&self, name: &str) -> bool {
        let lower;
        let name = if self.fold {
            lower = name.to_ascii_lowercase();
            lower.as_str()
        } else {
            name
        };
        let mut inc = self.include.is_empty();
        for (k, p) in self.include.iter().enumerate() {
            if p.matches(name) {
                self.matched.borrow_mut()[k] = true;
                inc = true;
            }
        }
        inc && !any(&self.exclude, name)
    }

    /// The first MEMBER pattern that has matched nothing so far, as
    /// given (lowered under `-C`).
    pub fn first_unmatched(&self) -> Option<String> {
        let m = self.matched.borrow();
        let k = m.iter().position(|&hit| !hit)?;
        Some(self.include[k].text())
    }
}

/// The match itself. Only the last `*` is ever backtracked to (each retry
/// lets it take one more character), so time is at most pattern length ×
/// name length however many stars there are: a recursive matcher is
/// exponential in them.
fn wildcard(pat: &[char], s: &[char]) -> bool {
    matcher(pat, s, false)
}

/// [`wildcard`] with `*`, `?` and sets kept from matching `/`. The last
/// `*` still suffices as the one to retry: a star that would have to
/// take a `/` cannot, and an earlier star cannot either (a `/` in the
/// pattern between them would have to move past one in the name).
fn wildcard_within(pat: &[char], s: &[char]) -> bool {
    matcher(pat, s, true)
}

/// One element of a pattern for [`wildcard_within_deep`].
enum Token {
    /// `*` (within a folder level) or `**` (across `/`).
    Star { deep: bool },
    /// `?`.
    One,
    /// `[...]`, from this index of the pattern.
    Set(usize),
    /// Anything else, itself.
    Literal(char),
}

/// [`wildcard_within`] for patterns with `**`, which matches any run of
/// characters, `/` included, beside `*` that stays in one folder level:
/// the two kinds of star defeat the one-star retry, so this keeps, for
/// each prefix of the pattern, which prefixes of the name it matches
/// (pattern length × name length steps, a name's length of memory).
fn wildcard_within_deep(pat: &[char], s: &[char]) -> bool {
    let mut tokens = Vec::new();
    let mut p = 0;
    while p < pat.len() {
        match pat[p] {
            '*' if pat.get(p + 1) == Some(&'*') => {
                tokens.push(Token::Star { deep: true });
                p += 2;
                while pat.get(p) == Some(&'*') {
                    p += 1;
                }
            }
            '*' => {
                tokens.push(Token::Star { deep: false });
                p += 1;
            }
            '?' => {
                tokens.push(Token::One);
                p += 1;
            }
            '[' => match set_match(&pat[p..], 'a') {
                Some((_, len)) => {
                    tokens.push(Token::Set(p));
                    p += len;
                }
                None => {
                    tokens.push(Token::Literal('['));
                    p += 1;
                }
            },
            c => {
                tokens.push(Token::Literal(c));
                p += 1;
            }
        }
    }
    // can[j]: the tokens so far match the name's first j characters.
    let mut can = vec![false; s.len() + 1];
    can[0] = true;
    for t in &tokens {
        let mut next = vec![false; s.len() + 1];
        match t {
            Token::Star { deep } => {
                let mut open = false;
                for j in 0..=s.len() {
                    open = can[j] || (open && j > 0 && (*deep || s[j - 1] != '/'));
                    next[j] = open;
                }
            }
            _ => {
                for j in 1..=s.len() {
                    let c = s[j - 1];
                    let hit = match t {
                        Token::One => c != '/',
                        Token::Set(at) => {
                            c != '/' && set_match(&pat[*at..], c).is_some_and(|(h, _)| h)
                        }
                        Token::Literal(l) => *l == c,
                        Token::Star { .. } => false,
                    };
                    next[j] = can[j - 1] && hit;
                }
            }
        }
        can = next;
    }
    can[s.len()]
}

fn matcher(pat: &[char], s: &[char], within: bool) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        let step = match pat.get(p) {
            Some('*') => {
                star = Some((p, i));
                p += 1;
                continue;
            }
            Some('?') if within && s[i] == '/' => None,
            Some('?') => Some(p + 1),
            Some('[') if within && s[i] == '/' => None,
            Some('[') => match set_match(&pat[p..], s[i]) {
                Some((true, len)) => Some(p + len),
                Some((false, _)) => None,
                // An unclosed `[` is a literal.
                None => (s[i] == '[').then_some(p + 1),
            },
            Some(&c) => (c == s[i]).then_some(p + 1),
            None => None,
        };
        match (step, star) {
            (Some(np), _) => {
                p = np;
                i += 1;
            }
            // The star may not take a `/` (see wildcard_within).
            (None, Some((_, si))) if within && s[si] == '/' => return false,
            (None, Some((sp, si))) => {
                p = sp + 1;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            (None, None) => return false,
        }
    }
    pat[p..].iter().all(|&c| c == '*')
}

/// Matches `c` against the set at the start of `pat` (`[...]`); returns
/// whether it matched and the set's length, or None if it is not closed.
fn set_match(pat: &[char], c: char) -> Option<(bool, usize)> {
    let mut k = 1;
    let negate = matches!(pat.get(1), Some('!') | Some('^'));
    if negate {
        k += 1;
    }
    let mut hit = false;
    let mut first = true;
    while k < pat.len() {
        if pat[k] == ']' && !first {
            return Some((hit != negate, k + 1));
        }
        first = false;
        if k + 2 < pat.len() && pat[k + 1] == '-' && pat[k + 2] != ']' {
            hit |= pat[k] <= c && c <= pat[k + 2];
            k += 3;
        } else {
            hit |= pat[k] == c;
            k += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one matcher over bytes (ASCII here).
    fn glob(pat: &[u8], s: &[u8]) -> bool {
        let chars = |b: &[u8]| b.iter().map(|&c| c as char).collect::<Vec<_>>();
        wildcard(&chars(pat), &chars(s))
    }

    /// The exponential recursive matcher, kept as the brute-force oracle.
    fn glob_reference(pat: &[u8], s: &[u8]) -> bool {
        match (pat.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => {
                glob_reference(&pat[1..], s) || (!s.is_empty() && glob_reference(pat, &s[1..]))
            }
            (Some(b'?'), Some(_)) => glob_reference(&pat[1..], &s[1..]),
            (Some(a), Some(b)) if a == b => glob_reference(&pat[1..], &s[1..]),
            _ => false,
        }
    }

    #[test]
    fn glob_agrees_with_the_brute_force_matcher() {
        // Every pattern and name up to length 5 over a small alphabet.
        fn all(alphabet: &[u8], max: usize) -> Vec<Vec<u8>> {
            let mut out = vec![Vec::new()];
            let mut last = vec![Vec::new()];
            for _ in 0..max {
                let next: Vec<Vec<u8>> = last
                    .iter()
                    .flat_map(|w: &Vec<u8>| {
                        alphabet.iter().map(move |&c| {
                            let mut w = w.clone();
                            w.push(c);
                            w
                        })
                    })
                    .collect();
                out.extend(next.iter().cloned());
                last = next;
            }
            out
        }
        let names = all(b"ab/", 5);
        for pat in all(b"a*?", 5) {
            for name in &names {
                assert_eq!(
                    glob(&pat, name),
                    glob_reference(&pat, name),
                    "{:?} on {:?}",
                    String::from_utf8_lossy(&pat),
                    String::from_utf8_lossy(name)
                );
            }
        }
    }

    /// The recursive matcher whose wildcards stop at `/`.
    fn within_reference(pat: &[u8], s: &[u8]) -> bool {
        match (pat.first(), s.first()) {
            (None, None) => true,
            (Some(b'*'), _) => {
                within_reference(&pat[1..], s)
                    || (!s.is_empty() && s[0] != b'/' && within_reference(pat, &s[1..]))
            }
            (Some(b'?'), Some(&c)) if c != b'/' => within_reference(&pat[1..], &s[1..]),
            (Some(a), Some(b)) if a == b && *a != b'?' => within_reference(&pat[1..], &s[1..]),
            _ => false,
        }
    }

    #[test]
    fn within_folders_agrees_with_the_brute_force_matcher() {
        let chars = |b: &[u8]| b.iter().map(|&c| c as char).collect::<Vec<_>>();
        let words = |alphabet: &[u8], max: usize| {
            let mut out: Vec<Vec<u8>> = vec![Vec::new()];
            let mut last = out.clone();
            for _ in 0..max {
                let next: Vec<Vec<u8>> = last
                    .iter()
                    .flat_map(|w| {
                        alphabet.iter().map(move |&c| {
                            let mut w = w.clone();
                            w.push(c);
                            w
                        })
                    })
                    .collect();
                out.extend(next.iter().cloned());
                last = next;
            }
            out
        };
        let names = words(b"a/b", 5);
        for pat in words(b"a*?/", 5) {
            for name in &names {
                assert_eq!(
                    wildcard_within(&chars(&pat), &chars(name)),
                    within_reference(&pat, name),
                    "{:?} on {:?}",
                    String::from_utf8_lossy(&pat),
                    String::from_utf8_lossy(name)
                );
            }
        }
        // With `**` (matching `/` too), against a matcher of the same rules.
        fn deep_reference(pat: &[u8], s: &[u8]) -> bool {
            match (pat, s.first()) {
                ([], None) => true,
                ([b'*', b'*', rest @ ..], _) => {
                    deep_reference(rest, s) || (!s.is_empty() && deep_reference(pat, &s[1..]))
                }
                ([b'*', rest @ ..], _) => {
                    deep_reference(rest, s)
                        || (!s.is_empty() && s[0] != b'/' && deep_reference(pat, &s[1..]))
                }
                ([b'?', rest @ ..], Some(&c)) if c != b'/' => deep_reference(rest, &s[1..]),
                ([a, rest @ ..], Some(b)) if a == b && *a != b'?' => deep_reference(rest, &s[1..]),
                _ => false,
            }
        }
        for pat in words(b"a*?/", 5) {
            if !pat.windows(2).any(|w| w == b"**") {
                continue;
            }
            for name in &names {
                assert_eq!(
                    wildcard_within_deep(&chars(&pat), &chars(name)),
                    deep_reference(&pat, name),
                    "{:?} on {:?}",
                    String::from_utf8_lossy(&pat),
                    String::from_utf8_lossy(name)
                );
            }
        }
        assert!(Pattern::within_folders("d/**").matches("d/sub/z.bin"));
        assert!(Pattern::within_folders("**.txt").matches("a/b.txt"));
        assert!(Pattern::within_folders("d/*").matches("d/x1"));
        assert!(!Pattern::within_folders("d/*").matches("d/sub/z.bin"));
        assert!(!Pattern::within_folders("*.txt").matches("d/a.txt"));
    }

    #[test]
    fn globs() {
        assert!(glob(b"*.txt", b"a/b.txt"));
        assert!(glob(b"a?c", b"abc"));
        assert!(!glob(b"*.txt", b"a.rs"));
    }

    #[test]
    fn info_zip_wildcards() {
        let m = |p: &str, s: &str| {
            wildcard(
                &p.chars().collect::<Vec<_>>(),
                &s.chars().collect::<Vec<_>>(),
            )
        };
        // What `unzip t.zip PATTERN` selected, checked with Info-ZIP 6.0.
        assert!(m("*.txt", "a/b/x.txt"));
        assert!(m("a/*", "a/b/x.txt"));
        assert!(!m("*.txt", "A.TXT"));
        assert!(m("a/[xy]*", "a/y.txt"));
        assert!(!m("a/[xy]*", "a/b/x.txt"));
        assert!(m("a/[!b]*", "a/y.txt"));
        assert!(m("?op.txt", "top.txt"));
        assert!(!m("?op.txt", "ttop.txt"));
        assert!(m("top.txt", "top.txt"));
        assert!(m("[a", "[a"));
        assert!(m("*", ""));
        assert!(m("a*b*c", "aXXbYYc"));
        assert!(!m("a*b*c", "aXXbYY"));
    }
}
