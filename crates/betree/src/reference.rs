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

/// Reads `.`-terminated terms one at a time from a reader, for inputs too
/// large to hold: it keeps only the lines of the terms not yet returned.
///
/// Lines are gathered until one ends (outside quotes and comments) with the
/// `.` that closes a term, then parsed with [`read_terms`]; so the memory
/// held is the longest run of lines up to such a line (one event of a
/// reference event file), and line numbers in errors are the file's own.
pub struct TermStream<R> {
    reader: R,
    what: &'static str,
    /// Lines read so far.
    lines: usize,
    /// Text of the terms not yet parsed, starting at line `buf_line`.
    buf: Vec<u8>,
    buf_line: usize,
    ready: std::collections::VecDeque<(usize, Term)>,
    /// Inside `"..."` or `'...'`: the quote, and whether a `\` precedes.
    quote: Option<u8>,
    escaped: bool,
    /// The last byte outside quotes and comments that is not white space.
    last: Option<u8>,
    done: bool,
}

impl<R: std::io::BufRead> TermStream<R> {
    /// Terms of `reader`; `what` names the input in errors (`"event file"`).
    pub fn new(reader: R, what: &'static str) -> Self {
        TermStream {
            reader,
            what,
            lines: 0,
            buf: Vec::new(),
            buf_line: 1,
            ready: std::collections::VecDeque::new(),
            quote: None,
            escaped: false,
            last: None,
            done: false,
        }
    }

    /// The next term and its 1-based line, or `None` at the end.
    pub fn next_term(&mut self) -> Result<Option<(usize, Term)>> {
        loop {
            if let Some(t) = self.ready.pop_front() {
                return Ok(Some(t));
            }
            if self.done {
                return Ok(None);
            }
            let start = self.buf.len();
            let n = self
                .reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Error::Read(format!("{} line {}: {e}", self.what, self.lines + 1)))?;
            if n == 0 {
                self.done = true;
                self.parse_buffered()?;
                continue;
            }
            self.lines += 1;
            self.scan(start);
            if self.quote.is_none() && matches!(self.last, None | Some(b'.')) {
                self.parse_buffered()?;
            }
        }
    }

    /// Follows quotes and comments over the line just read.
    fn scan(&mut self, from: usize) {
        let mut comment = false;
        for &b in &self.buf[from..] {
            if let Some(q) = self.quote {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == q {
                    self.quote = None;
                    self.last = Some(b);
                }
            } else if comment {
            } else {
                match b {
                    b'%' => comment = true,
                    b'"' | b'\'' => self.quote = Some(b),
                    b' ' | b'\t' | b'\r' | b'\n' => {}
                    _ => self.last = Some(b),
                }
            }
        }
    }

    fn parse_buffered(&mut self) -> Result<()> {
        let base = self.buf_line - 1;
        let shift = |e: Error| match e {
            Error::Format {
                what,
                line,
                col,
                msg,
            } => Error::Format {
                what,
                line: line + base,
                col,
                msg,
            },
            e => e,
        };
        let text = std::str::from_utf8(&self.buf).map_err(|e| {
            let line = self.buf[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            Error::Format {
                what: self.what,
                line: base + line + 1,
                col: 1,
                msg: "text is not UTF-8".into(),
            }
        })?;
        for (line, t) in read_terms(text, self.what).map_err(shift)? {
            self.ready.push_back((line + base, t));
        }
        self.buf.clear();
        self.buf_line = self.lines + 1;
        self.last = None;
        Ok(())
    }
}

/// Reads an event file one event at a time (see [`TermStream`] for what it
/// holds in memory).
pub struct EventStream<R>(TermStream<R>);

impl<R: std::io::BufRead> EventStream<R> {
    /// The events of `reader`.
    pub fn new(reader: R) -> Self {
        EventStream(TermStream::new(reader, "event file"))
    }

    /// The next event's values and its line, or `None` at the end.
    pub fn next_event(&mut self) -> Result<Option<(usize, Vec<bool>)>> {
        match self.0.next_term()? {
            Some((line, t)) => Ok(Some((line, event_values(line, &t)?))),
            None => Ok(None),
        }
    }
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
mod tests {
    use super::*;
    use crate::expr::{Constants, Expr, compile_source};
    use crate::parse::{Node, Ref};
    use proptest::prelude::*;

    /// Prints a tree the way the reference generator does, independently of
    /// the generator: non-leaf operands parenthesised; `names` by boolean
    /// slot.
    fn show(e: &Expr, r: Ref, names: &[String]) -> String {
        let wrap = |x: Ref| match e.node(x) {
            Node::Bool(_) => show(e, x, names),
            _ => format!("({})", show(e, x, names)),
        };
        match e.node(r) {
            Node::Bool(s) => names[s as usize].clone(),
            Node::Not(x) => format!("not {}", wrap(x)),
            Node::And(l, r) => format!("{} and {}", wrap(l), wrap(r)),
            Node::Or(l, r) => format!("{} or {}", wrap(l), wrap(r)),
            other => panic!("unexpected node {other:?}"),
        }
    }

    fn leaves(e: &Expr, r: Ref, names: &[String], out: &mut Vec<String>) {
        match e.node(r) {
            Node::Bool(s) => out.push(names[s as usize].clone()),
            Node::Not(x) => leaves(e, x, names, out),
            Node::And(l, r) | Node::Or(l, r) => {
                leaves(e, l, names, out);
                leaves(e, r, names, out);
            }
            other => panic!("unexpected node {other:?}"),
        }
    }

    #[test]
    fn reads_the_reference_layout() {
        let text = "[{par1,bool,disallow_undefined},\n {par2,bool,disallow_undefined},\n {par3,bool,disallow_undefined}].\n<<\"(par3 and par1) or (not par2)\">>.\n<<\"par1 or (not (par2 and par3))\">>.\n";
        let f = read_expr_file(text).unwrap();
        assert_eq!(f.domains, params_domains(3));
        assert_eq!(
            f.exprs,
            vec![
                "(par3 and par1) or (not par2)",
                "par1 or (not (par2 and par3))"
            ]
        );
        assert_eq!(write_expr_file(&f.domains, &f.exprs), text);
        let events = "[false,true,true].\n[0,0,1].\n";
        assert_eq!(
            read_event_file(events).unwrap(),
            vec![vec![false, true, true], vec![false, false, true]]
        );
    }

    #[test]
    fn reads_every_domain_type_with_bounds() {
        let text = "[[{i,int,disallow_undefined,0,10},{n,int64,allow_undefined},{f,float,allow_undefined,0.0,10.5},\n{s,bin,disallow_undefined,5},{il,int_list,allow_undefined},{sl,bin_list,allow_undefined},\n{e,int_enum,allow_undefined,0,3},{seg,segments,allow_undefined},{frequency_caps,frequency_caps,allow_undefined}]].\n<<\"s = \\\"a\\\\b\\\"\">>.\n";
        let f = read_expr_file(text).unwrap();
        let tys: Vec<AttrType> = f.domains.iter().map(|d| d.ty).collect();
        use AttrType::*;
        assert_eq!(
            tys,
            vec![
                Int,
                Int,
                Float,
                Str,
                IntList,
                StrList,
                IntEnum,
                Segments,
                FrequencyCaps
            ]
        );
        assert_eq!(f.domains[0].bounds, Bounds::Int(0, 10));
        assert_eq!(f.domains[2].bounds, Bounds::Float(0.0, 10.5));
        assert_eq!(f.domains[3].bounds, Bounds::MaxStrings(5));
        assert!(!f.domains[3].allow_undefined && f.domains[1].allow_undefined);
        assert_eq!(f.exprs, vec!["s = \"a\\b\""]);
        // And back: the rewritten file reads the same.
        let again = read_expr_file(&write_expr_file(&f.domains, &f.exprs)).unwrap();
        assert_eq!(again, f);
    }

    #[test]
    fn writer_quotes_atoms_and_spells_floats_as_erlang_does() {
        let domains = vec![
            Domain::new("Par1", AttrType::Bool, true),
            Domain::new("it's", AttrType::Float, false).with_bounds(Bounds::Float(-1e-7, 1e300)),
            Domain::new("ok_name@x", AttrType::Int, true),
        ];
        let text = write_expr_file(&domains, &[]);
        assert_eq!(
            text,
            "[{'Par1',bool,allow_undefined},\n {'it\\'s',float,disallow_undefined,-1.0e-7,1.0e300},\n {ok_name@x,int,allow_undefined}].\n"
        );
        assert_eq!(read_expr_file(&text).unwrap().domains, domains);
    }

    #[test]
    fn format_errors_name_line_and_column() {
        let e = |t: &str| read_expr_file(t).unwrap_err().to_string();
        assert_eq!(
            e(""),
            "expression file line 1, column 1: empty file: expected the list of domains"
        );
        assert_eq!(
            e("[{a,bool,disallow_undefined}]\n<<\"a\">>."),
            "expression file line 2, column 1: expected `.` ending the term, found `<`"
        );
        assert_eq!(
            e("[{a,boolx,disallow_undefined}]."),
            "domain list line 1, column 1: unknown domain type `boolx` of `a`"
        );
        assert_eq!(
            e("[{a,bool,maybe}]."),
            "domain list line 1, column 1: `maybe` of `a` is neither allow_undefined nor disallow_undefined"
        );
        assert_eq!(
            e("[{a,bool,allow_undefined}].\n<<\"a>>."),
            "expression file line 2, column 8: unterminated `\"`"
        );
        assert_eq!(
            e("[{a,bool,allow_undefined}].\n[1]."),
            "expression file line 2, column 1: expected <<\"expression\">>, found List([Int(1)])"
        );
        assert_eq!(
            e("[{a,bool,allow_undefined} {b}]."),
            "expression file line 1, column 27: expected `,` or `]` in a list, found `{`"
        );
        assert_eq!(
            read_event_file("[0,1].\n[0,2].").unwrap_err().to_string(),
            "event file line 2, column 1: expected 0, 1, true or false, found Int(2)"
        );
    }

    #[test]
    fn events_wrap_at_38_items() {
        let ev: Vec<bool> = (0..128).map(|i| i % 3 == 0).collect();
        let mut s = String::new();
        write_event(&mut s, &ev);
        let digits: Vec<&str> = ev.iter().map(|b| if *b { "1" } else { "0" }).collect();
        let expected = format!(
            "[{},\n {},\n {},\n {}].\n",
            digits[0..38].join(","),
            digits[38..76].join(","),
            digits[76..114].join(","),
            digits[114..].join(",")
        );
        assert_eq!(s, expected);
        // Lines stay within Erlang's 80 columns.
        assert!(s.lines().all(|l| l.len() <= 80));
        assert_eq!(read_event_file(&s).unwrap(), vec![ev]);
    }

    #[test]
    fn generator_is_deterministic_and_uses_every_parameter_once() {
        assert_eq!(random_expressions(20, 50, 9), random_expressions(20, 50, 9));
        assert_ne!(
            random_expressions(20, 50, 9),
            random_expressions(20, 50, 10)
        );
        assert_eq!(random_events(20, 5, 3), random_events(20, 5, 3));
        let (mut ands, mut ors, mut nots) = (0usize, 0usize, 0usize);
        let schema = Schema::boolean_params(64);
        let mut names = vec![String::new(); 64];
        for (id, d) in schema.domains().iter().enumerate() {
            names[schema.bool_slot(id as u32).unwrap() as usize] = d.name.clone();
        }
        for e in random_expressions(64, 200, 1) {
            let ast = compile_source(&schema, &e, &Constants::default(), &mut |_| 0).unwrap();
            let mut l = Vec::new();
            leaves(&ast, ast.root, &names, &mut l);
            l.sort();
            let mut want: Vec<String> = (1..=64).map(|i| format!("par{i}")).collect();
            want.sort();
            assert_eq!(l, want, "{e}");
            assert_eq!(show(&ast, ast.root, &names), e, "parenthesisation");
            ands += e.matches(" and ").count();
            ors += e.matches(" or ").count();
            nots += e.matches("not ").count();
        }
        // 63 joins per expression, split evenly between `and` and `or`; `not`
        // is picked a fifth of the time, so about 63/4 per expression.
        assert_eq!(ands + ors, 63 * 200);
        let share = ands as f64 / (ands + ors) as f64;
        assert!((0.45..0.55).contains(&share), "and share {share}");
        let per = nots as f64 / 200.0;
        assert!((13.0..19.0).contains(&per), "nots per expression {per}");
    }

    /// Every event of `text` read through [`EventStream`], its reader
    /// buffer a few bytes so that lines arrive in pieces.
    fn stream_events(text: impl AsRef<[u8]>) -> Result<Vec<(usize, Vec<bool>)>> {
        let mut s = EventStream::new(std::io::BufReader::with_capacity(7, text.as_ref()));
        let mut v = Vec::new();
        while let Some(e) = s.next_event()? {
            v.push(e);
        }
        Ok(v)
    }

    #[test]
    fn event_stream_reads_the_generated_events_with_their_lines() {
        let events = random_events(100, 50, 9);
        let got = stream_events(write_event_file(&events)).unwrap();
        // 100 values take 3 lines (38 per line) in the writer's layout.
        let lines: Vec<usize> = got.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, (0..50).map(|k| 1 + 3 * k).collect::<Vec<_>>());
        let values: Vec<Vec<bool>> = got.into_iter().map(|(_, v)| v).collect();
        assert_eq!(values, events);
    }

    #[test]
    fn event_stream_handles_terms_sharing_lines_comments_and_quotes() {
        let text = "% header. with a dot.\n[0,1].[true,\n false]. % done.\n\n[1,\n% a comment line.\n 0].\n";
        let got = stream_events(text).unwrap();
        assert_eq!(
            got,
            vec![
                (2, vec![false, true]),
                (2, vec![true, false]),
                (5, vec![true, false])
            ]
        );
        // A `.` ending a line inside a quoted atom does not end the term:
        // the whole term is read, then rejected as no event.
        let err = stream_events("[0].\n['a.\nb'].\n").unwrap_err();
        assert!(matches!(err, Error::Format { line: 2, .. }), "{err}");
    }

    #[test]
    fn event_stream_errors_name_the_files_own_line() {
        let text = "[0,1].\n[1,0].\n[1,\n 2].\n";
        let err = stream_events(text).unwrap_err();
        assert_eq!(err, read_event_file(text).unwrap_err());
        assert!(matches!(err, Error::Format { line: 3, .. }), "{err}");
        let err = stream_events("[0].\n[1\n").unwrap_err();
        assert!(matches!(err, Error::Format { line: 3, .. }), "{err}");
        let err = stream_events(b"[0].\n[\xff].\n").unwrap_err();
        assert!(matches!(err, Error::Format { line: 2, .. }), "{err}");
    }

    proptest! {
        #[test]
        fn event_files_round_trip(events in proptest::collection::vec(proptest::collection::vec(any::<bool>(), 1..200), 0..5)) {
            let text = write_event_file(&events);
            prop_assert_eq!(read_event_file(&text).unwrap(), events);
        }

        #[test]
        fn expression_files_round_trip(exprs in proptest::collection::vec("[ -~]{0,40}", 0..5), n in 1usize..10) {
            let domains = params_domains(n);
            let text = write_expr_file(&domains, &exprs);
            let f = read_expr_file(&text).unwrap();
            prop_assert_eq!(f.domains, domains);
            prop_assert_eq!(f.exprs, exprs);
        }
    }
}
