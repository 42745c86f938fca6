//! Info-ZIP's wildcards, the one matcher behind `zip -x`/`-i`/`-d` and
//! `unzip MEMBER`/`-x`: `*` any run of characters (`/` included), `?` one
//! character, `[abc]`, `[a-z]`, `[!a-z]` (or `[^a-z]`) a set, anything else
//! itself, case-sensitive. Info-ZIP's rules rather than a crate's (globset
//! keeps `*` inside one path component unless told otherwise and reads
//! `{a,b}`): an Info-ZIP user's pattern must select what it selects there.

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    chars: Vec<char>,
}

impl Pattern {
    /// The pattern `text`, in Info-ZIP's syntax.
    pub fn new(text: &str) -> Pattern {
        Pattern {
            chars: text.chars().collect(),
        }
    }

    /// The pattern as it was given.
    pub fn text(&self) -> String {
        self.chars.iter().collect()
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let s: Vec<char> = name.chars().collect();
        wildcard(&self.chars, &s)
    }
}

/// Whether any of `patterns` matches `name`.
pub fn any(patterns: &[Pattern], name: &str) -> bool {
    patterns.iter().any(|p| p.matches(name))
}

/// The match itself. Only the last `*` is ever backtracked to (each retry
/// lets it take one more character), so time is at most pattern length ×
/// name length however many stars there are: a recursive matcher is
/// exponential in them.
pub(super) fn wildcard(pat: &[char], s: &[char]) -> bool {
    let (mut p, mut i) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        let step = match pat.get(p) {
            Some('*') => {
                star = Some((p, i));
                p += 1;
                continue;
            }
            Some('?') => Some(p + 1),
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
