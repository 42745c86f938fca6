//! The reference benchmark files (erl-be-tree's formats) and a seeded
//! generator of the same kind of data.
//!
//! * Expression file: an Erlang term list of domains, then one binary per
//!   expression:
//!   ```text
//!   [{par1,bool,disallow_undefined},
//!    {par2,bool,disallow_undefined}].
//!   <<"par1 and (not par2)">>.
//!   ```
//! * Event file: one list per event, `0`/`1` (or `false`/`true`), written as
//!   Erlang's `~p` does: 38 items per line, continuation lines indented by
//!   one space.

use std::fmt::Write as _;

use crate::domain::{AttrType, Bounds, Domain, Schema};
use crate::{Error, Result};

mod stream;

pub use stream::{EventStream, TermStream};

/// How many event values the writer puts on a line (what Erlang's `~p`
/// produces for 0/1 lists within its 80-column limit).
pub const EVENT_ITEMS_PER_LINE: usize = 38;

/// An Erlang term (the subset the reference files use).
#[derive(Debug, Clone, PartialEq)]
pub enum Term {
    /// `name` or `'quoted name'`.
    Atom(String),
    /// Integer.
    Int(i64),
    /// Float.
    Float(f64),
    /// `<<"text">>`.
    Binary(String),
    /// `"text"` (a char list).
    Str(String),
    /// `[a, b]`.
    List(Vec<Term>),
    /// `{a, b}`.
    Tuple(Vec<Term>),
}

/// Reads every `.`-terminated term of `text`; each comes with its 1-based
/// line.
pub fn read_terms(text: &str, what: &'static str) -> Result<Vec<(usize, Term)>> {
    let mut r = TermReader {
        s: text.as_bytes(),
        i: 0,
        line: 1,
        line_start: 0,
        what,
        depth: 0,
    };
    let mut out = Vec::new();
    loop {
        r.skip_ws();
        if r.i >= r.s.len() {
            return Ok(out);
        }
        let line = r.line;
        let t = r.term()?;
        r.skip_ws();
        r.expect(b'.', "`.` ending the term")?;
        out.push((line, t));
    }
}

struct TermReader<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
    line_start: usize,
    what: &'static str,
    depth: usize,
}

impl TermReader<'_> {
    fn err(&self, msg: impl Into<String>) -> Error {
        Error::Format {
            what: self.what,
            line: self.line,
            col: self.i - self.line_start + 1,
            msg: msg.into(),
        }
    }

    fn skip_ws(&mut self) {
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                }
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'%' => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn expect(&mut self, c: u8, what: &str) -> Result<()> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(self.found(what))
        }
    }

    fn found(&self, expected: &str) -> Error {
        match self.peek() {
            None => self.err(format!("expected {expected}, found end of file")),
            Some(c) => self.err(format!(
                "expected {expected}, found `{}`",
                String::from_utf8_lossy(&self.s[self.i..self.i + utf8_len(c)])
            )),
        }
    }

    fn seq(&mut self, close: u8, what: &str) -> Result<Vec<Term>> {
        self.depth += 1;
        if self.depth > 100 {
            return Err(self.err("terms nested more than 100 deep"));
        }
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(close) {
            self.i += 1;
            self.depth -= 1;
            return Ok(items);
        }
        loop {
            items.push(self.term()?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(c) if c == close => {
                    self.i += 1;
                    self.depth -= 1;
                    return Ok(items);
                }
                _ => return Err(self.found(&format!("`,` or `{}` in a {what}", close as char))),
            }
        }
    }

    fn quoted(&mut self, q: u8) -> Result<String> {
        // The opening quote is consumed by the caller.
        let mut out = Vec::new();
        loop {
            // The run up to the next byte that needs a look is copied at
            // once: a push per byte was most of reading an expression file.
            let rest = &self.s[self.i..];
            let run = rest
                .iter()
                .position(|&c| c == q || c == b'\\' || c == b'\n')
                .unwrap_or(rest.len());
            out.extend_from_slice(&rest[..run]);
            self.i += run;
            match self.peek() {
                None => return Err(self.err(format!("unterminated `{}`", q as char))),
                Some(c) if c == q => {
                    self.i += 1;
                    break;
                }
                Some(b'\\') => {
                    let e = self.s.get(self.i + 1).copied();
                    out.push(match e {
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        Some(b'r') => b'\r',
                        Some(c @ (b'\\' | b'"' | b'\'')) => c,
                        _ => return Err(self.err("unsupported escape sequence")),
                    });
                    self.i += 2;
                }
                Some(b'\n') => {
                    out.push(b'\n');
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                }
                Some(c) => {
                    out.push(c);
                    self.i += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.err("text is not UTF-8"))
    }

    fn term(&mut self) -> Result<Term> {
        self.skip_ws();
        match self.peek() {
            Some(b'[') => {
                self.i += 1;
                Ok(Term::List(self.seq(b']', "list")?))
            }
            Some(b'{') => {
                self.i += 1;
                Ok(Term::Tuple(self.seq(b'}', "tuple")?))
            }
            Some(b'<') => {
                self.expect(b'<', "`<<`")?;
                self.expect(b'<', "`<<` opening a binary")?;
                self.skip_ws();
                let s = if self.peek() == Some(b'"') {
                    self.i += 1;
                    self.quoted(b'"')?
                } else {
                    String::new()
                };
                self.skip_ws();
                self.expect(b'>', "`>>` closing the binary")?;
                self.expect(b'>', "`>>` closing the binary")?;
                Ok(Term::Binary(s))
            }
            Some(b'"') => {
                self.i += 1;
                Ok(Term::Str(self.quoted(b'"')?))
            }
            Some(b'\'') => {
                self.i += 1;
                Ok(Term::Atom(self.quoted(b'\'')?))
            }
            Some(c) if c.is_ascii_digit() || c == b'-' => {
                let st = self.i;
                self.i += 1;
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.i += 1;
                }
                let mut float = false;
                if self.peek() == Some(b'.')
                    && self.s.get(self.i + 1).is_some_and(u8::is_ascii_digit)
                {
                    float = true;
                    self.i += 1;
                    while self.peek().is_some_and(|c| {
                        c.is_ascii_digit() || matches!(c, b'e' | b'E' | b'-' | b'+')
                    }) {
                        self.i += 1;
                    }
                }
                let txt = std::str::from_utf8(&self.s[st..self.i]).expect("ASCII digits");
                if float {
                    txt.parse()
                        .map(Term::Float)
                        .map_err(|_| self.err(format!("bad float `{txt}`")))
                } else {
                    txt.parse()
                        .map(Term::Int)
                        .map_err(|_| self.err(format!("bad integer `{txt}`")))
                }
            }
            Some(c) if c.is_ascii_lowercase() => {
                let st = self.i;
                while self
                    .peek()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'@')
                {
                    self.i += 1;
                }
                Ok(Term::Atom(
                    String::from_utf8_lossy(&self.s[st..self.i]).into_owned(),
                ))
            }
            _ => Err(self.found("a term")),
        }
    }
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

/// Parses the domain list term.
pub fn domains_from_term(t: &Term, line: usize) -> Result<Vec<Domain>> {
    let err = |msg: String| Error::Format {
        what: "domain list",
        line,
        col: 1,
        msg,
    };
    let Term::List(items) = t else {
        return Err(err("the first term must be the list of domains".into()));
    };
    let mut out = Vec::new();
    for it in items {
        match it {
            // erl-be-tree also accepts a list of domain lists.
            Term::List(_) => out.extend(domains_from_term(it, line)?),
            Term::Tuple(f) => {
                let (name, ty, flag) = match f.as_slice() {
                    [Term::Atom(n), Term::Atom(t), Term::Atom(a), ..] => (n, t, a),
                    _ => {
                        return Err(err(format!(
                            "domain {it:?} is not {{name, type, allow_undefined|disallow_undefined, ...}}"
                        )));
                    }
                };
                let ty = AttrType::from_name(ty)
                    .ok_or_else(|| err(format!("unknown domain type `{ty}` of `{name}`")))?;
                let allow = match flag.as_str() {
                    "allow_undefined" => true,
                    "disallow_undefined" => false,
                    o => {
                        return Err(err(format!(
                            "`{o}` of `{name}` is neither allow_undefined nor disallow_undefined"
                        )));
                    }
                };
                let bad = || {
                    err(format!(
                        "bounds of `{name}` do not fit its type {ty} (integers or numbers min, max with min <= max; a count of strings)"
                    ))
                };
                let bounds = match (&f[3..], ty) {
                    ([], _) => Bounds::None,
                    (
                        [Term::Int(lo), Term::Int(hi)],
                        AttrType::Int | AttrType::IntList | AttrType::IntEnum,
                    ) if lo <= hi => Bounds::Int(*lo, *hi),
                    ([lo, hi], AttrType::Float) => match (num(lo), num(hi)) {
                        (Some(lo), Some(hi)) if lo <= hi => Bounds::Float(lo, hi),
                        _ => return Err(bad()),
                    },
                    ([Term::Int(n)], AttrType::Str | AttrType::StrList) if *n >= 0 => {
                        Bounds::MaxStrings(*n as usize)
                    }
                    _ => return Err(bad()),
                };
                out.push(Domain::new(name.clone(), ty, allow).with_bounds(bounds));
            }
            other => return Err(err(format!("domain {other:?} is not a tuple"))),
        }
    }
    Ok(out)
}

fn num(t: &Term) -> Option<f64> {
    match t {
        Term::Int(i) => Some(*i as f64),
        Term::Float(f) => Some(*f),
        _ => None,
    }
}

/// A parsed expression file.
#[derive(Debug, Clone, PartialEq)]
pub struct ExprFile {
    /// The declared domains, in order.
    pub domains: Vec<Domain>,
    /// The expressions; expression `i` (0-based) has id `i + 1`.
    pub exprs: Vec<String>,
}

/// Reads an expression file.
pub fn read_expr_file(text: &str) -> Result<ExprFile> {
    let terms = read_terms(text, "expression file")?;
    let mut it = terms.into_iter();
    let (line, first) = it.next().ok_or(Error::Format {
        what: "expression file",
        line: 1,
        col: 1,
        msg: "empty file: expected the list of domains".into(),
    })?;
    let domains = domains_from_term(&first, line)?;
    let mut exprs = Vec::new();
    for (line, t) in it {
        match t {
            Term::Binary(s) | Term::Str(s) => exprs.push(s),
            other => {
                return Err(Error::Format {
                    what: "expression file",
                    line,
                    col: 1,
                    msg: format!("expected <<\"expression\">>, found {other:?}"),
                });
            }
        }
    }
    Ok(ExprFile { domains, exprs })
}

/// Writes an expression file in the reference layout.
pub fn write_expr_file(domains: &[Domain], exprs: &[String]) -> String {
    let mut s = String::with_capacity(
        exprs.iter().map(|e| e.len() + 8).sum::<usize>() + domains.len() * 40,
    );
    s.push('[');
    for (i, d) in domains.iter().enumerate() {
        if i > 0 {
            s.push_str(",\n ");
        }
        let _ = write!(
            s,
            "{{{},{},{}",
            atom(&d.name),
            d.ty.erlang_name(),
            if d.allow_undefined {
                "allow_undefined"
            } else {
                "disallow_undefined"
            }
        );
        match d.bounds {
            Bounds::None => {}
            Bounds::Int(lo, hi) => {
                let _ = write!(s, ",{lo},{hi}");
            }
            Bounds::Float(lo, hi) => {
                let _ = write!(s, ",{},{}", erlang_float(lo), erlang_float(hi));
            }
            Bounds::MaxStrings(n) => {
                let _ = write!(s, ",{n}");
            }
        }
        s.push('}');
    }
    s.push_str("].\n");
    for e in exprs {
        push_expr_term(&mut s, e);
    }
    s
}

/// Appends one expression as an expression file's line, `<<"...">>.`,
/// escaped so [`read_terms`] reads the same text back; streaming writers
/// write the domain list with [`write_expr_file`] and then these lines.
pub fn push_expr_term(s: &mut String, e: &str) {
    s.push_str("<<\"");
    for c in e.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s.push_str("\">>.\n");
}

/// An atom as Erlang writes it: bare when it is a lowercase word, quoted
/// (with `'` and `\\` escaped) otherwise, so that `file:consult` and
/// [`read_terms`] read the same name back.
fn atom(name: &str) -> String {
    let bare = name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '@');
    if bare {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len() + 2);
    out.push('\'');
    for c in name.chars() {
        if matches!(c, '\'' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// A float as an Erlang literal: digits, a point and digits, then an
/// optional exponent (Rust prints `1e300`, which Erlang reads as `1` and
/// garbage). Infinities and NaN have no Erlang spelling; they are written
/// as Rust prints them and refused when read back.
fn erlang_float(x: f64) -> String {
    let s = format!("{x:?}");
    match s.find('e') {
        Some(e) if !s[..e].contains('.') => format!("{}.0{}", &s[..e], &s[e..]),
        _ => s,
    }
}

/// Reads an event file: one list of `0`/`1` or `false`/`true` per event.
pub fn read_event_file(text: &str) -> Result<Vec<Vec<bool>>> {
    let terms = read_terms(text, "event file")?;
    terms
        .into_iter()
        .map(|(line, t)| event_values(line, &t))
        .collect()
}

/// One event's values from its term (`line` is where the term starts).
fn event_values(line: usize, t: &Term) -> Result<Vec<bool>> {
    let err = |msg: String| Error::Format {
        what: "event file",
        line,
        col: 1,
        msg,
    };
    let Term::List(items) = t else {
        return Err(err("expected a list of 0/1 values".into()));
    };
    items
        .iter()
        .map(|v| match v {
            Term::Int(0) => Ok(false),
            Term::Int(1) => Ok(true),
            Term::Atom(a) if a == "false" => Ok(false),
            Term::Atom(a) if a == "true" => Ok(true),
            other => Err(err(format!(
                "expected 0, 1, true or false, found {other:?}"
            ))),
        })
        .collect()
}

/// Writes one event as the reference tools do.
pub fn write_event(out: &mut String, values: &[bool]) {
    out.push('[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(',');
            if i % EVENT_ITEMS_PER_LINE == 0 {
                out.push_str("\n ");
            }
        }
        out.push(if *v { '1' } else { '0' });
    }
    out.push_str("].\n");
}

/// Writes an event file.
pub fn write_event_file(events: &[Vec<bool>]) -> String {
    let mut s = String::with_capacity(events.iter().map(|e| e.len() * 2 + 8).sum());
    for e in events {
        write_event(&mut s, e);
    }
    s
}

/// One random expression over `par1..parN` as the reference generator builds
/// them: repeatedly pick `and` (40 %), `or` (40 %) or `not` (20 %); `not`
/// wraps one random pool entry, `and`/`or` join two distinct ones, until one
/// tree is left. Every non-leaf operand is parenthesised.
///
/// # Panics
///
/// If `params` is 0: there is no expression over no parameter (callers
/// taking the count from a user check it first, as `perfkit betree
/// gen-exprs` does).
pub fn random_expression(rng: &mut fastrand::Rng, params: usize) -> String {
    assert!(params > 0, "at least one parameter");
    let mut pool: Vec<(String, bool)> = (1..=params).map(|i| (format!("par{i}"), true)).collect();
    let wrap = |(s, leaf): &(String, bool)| if *leaf { s.clone() } else { format!("({s})") };
    while pool.len() > 1 {
        let r = rng.u32(0..10);
        if r >= 8 {
            let i = rng.usize(0..pool.len());
            pool[i] = (format!("not {}", wrap(&pool[i])), false);
        } else {
            let i = rng.usize(0..pool.len());
            let mut j = rng.usize(0..pool.len() - 1);
            if j >= i {
                j += 1;
            }
            let op = if r < 4 { "and" } else { "or" };
            let joined = format!("{} {op} {}", wrap(&pool[i]), wrap(&pool[j]));
            let (lo, hi) = (i.min(j), i.max(j));
            pool[lo] = (joined, false);
            pool.swap_remove(hi);
        }
    }
    pool.pop().expect("one tree left").0
}

/// `count` random expressions from `seed` (deterministic).
///
/// # Panics
///
/// If `params` is 0 and `count` is not (see [`random_expression`]).
pub fn random_expressions(params: usize, count: usize, seed: u64) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|_| random_expression(&mut rng, params))
        .collect()
}

/// `count` random 0/1 events from `seed` (deterministic).
pub fn random_events(params: usize, count: usize, seed: u64) -> Vec<Vec<bool>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|_| (0..params).map(|_| rng.bool()).collect())
        .collect()
}

/// The reference schema: `par1..parN`, boolean, disallow-undefined.
pub fn params_domains(params: usize) -> Vec<Domain> {
    Schema::boolean_params(params).domains().to_vec()
}

#[cfg(test)]
mod tests;
