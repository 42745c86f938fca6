//! Translation of betree's expression text into a-tree's language (see
//! the parent module for what translates and why `not` is pushed down):
//! a lexer and parser of betree's text, and the writer of a-tree's.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use a_tree::{ATree, AttributeDefinition};
use betree::{AttrType, Error, Event, Result, Schema, Value};

/// Why an expression was left out.
type Skip = &'static str;

/// betree's expression text into a-tree's, for one schema.
pub struct Translator<'s> {
    schema: &'s Schema,
    always: &'s BTreeSet<usize>,
    /// `x is null or …` guards written so far.
    pub(super) guards: std::cell::Cell<usize>,
}

impl<'s> Translator<'s> {
    /// A translator for `schema`'s expressions; `always` holds the
    /// attributes (by id) that every event searched defines.
    pub fn new(schema: &'s Schema, always: &'s BTreeSet<usize>) -> Translator<'s> {
        Translator {
            schema,
            always,
            guards: std::cell::Cell::new(0),
        }
    }

    /// a-tree's attribute definitions: every attribute of a type a-tree
    /// has (booleans, integers, strings and their lists).
    pub fn definitions(&self) -> Vec<AttributeDefinition> {
        self.schema
            .domains()
            .iter()
            .filter(|d| atree_name(&d.name))
            .filter_map(|d| {
                Some(match d.ty {
                    AttrType::Bool => AttributeDefinition::boolean(&d.name),
                    AttrType::Int | AttrType::IntEnum => AttributeDefinition::integer(&d.name),
                    AttrType::Str => AttributeDefinition::string(&d.name),
                    AttrType::IntList => AttributeDefinition::integer_list(&d.name),
                    AttrType::StrList => AttributeDefinition::string_list(&d.name),
                    _ => return None,
                })
            })
            .collect()
    }

    /// `ev` as an a-tree event of `atree` (built from [`Self::definitions`]).
    pub fn event(&self, atree: &ATree<u64>, ev: &Event) -> Result<a_tree::Event> {
        let bad = |e: a_tree::EventError| Error::Event(format!("a-tree event: {e}"));
        let mut b = atree.make_event();
        for (id, d) in self.schema.domains().iter().enumerate() {
            if !atree_name(&d.name) {
                continue;
            }
            let n = d.name.as_str();
            match ev.get(id as betree::AttrId) {
                Some(Value::Bool(v)) => b.with_boolean(n, *v).map_err(bad)?,
                Some(Value::Int(v)) => b.with_integer(n, *v).map_err(bad)?,
                Some(Value::Str(v)) => b.with_string(n, v).map_err(bad)?,
                Some(Value::IntList(v)) => b.with_integer_list(n, v).map_err(bad)?,
                Some(Value::StrList(v)) => {
                    let v: Vec<&str> = v.iter().map(String::as_str).collect();
                    b.with_string_list(n, &v).map_err(bad)?
                }
                _ => {}
            }
        }
        b.build().map_err(bad)
    }

    /// `expr` (betree's language, already accepted by betree) in a-tree's
    /// language with the same matches, or why it cannot be.
    pub fn translate(&self, expr: &str) -> std::result::Result<String, Skip> {
        let mut p = Parser {
            toks: lex(expr)?,
            at: 0,
        };
        let node = p.or()?;
        if p.at != p.toks.len() {
            return Err("syntax a-tree lacks");
        }
        let mut out = String::new();
        self.write(&node, false, &mut out)?;
        Ok(out)
    }

    fn write(&self, n: &Node, neg: bool, out: &mut String) -> std::result::Result<(), Skip> {
        match n {
            Node::Not(e) => self.write(e, !neg, out),
            Node::And(items) | Node::Or(items) => {
                let and = matches!(n, Node::And(_)) != neg;
                out.push('(');
                for (k, e) in items.iter().enumerate() {
                    if k > 0 {
                        out.push_str(if and { " and " } else { " or " });
                    }
                    self.write(e, neg, out)?;
                }
                out.push(')');
                Ok(())
            }
            Node::Pred(p) => self.pred(p, neg, out),
        }
    }

    fn pred(&self, p: &Pred, neg: bool, out: &mut String) -> std::result::Result<(), Skip> {
        let name = match p {
            Pred::Bare(a)
            | Pred::Cmp(a, ..)
            | Pred::In(a, ..)
            | Pred::OneOf(a, ..)
            | Pred::Null(a, _)
            | Pred::Empty(a, _) => a,
        };
        let id = self.schema.id(name).ok_or("syntax a-tree lacks")?;
        let ty = self.schema.domain(id).ty;
        if !atree_name(name) {
            return Err("an attribute name a-tree cannot read");
        }
        let scalar = match ty {
            AttrType::Bool | AttrType::Int | AttrType::IntEnum | AttrType::Str => true,
            AttrType::IntList | AttrType::StrList => false,
            AttrType::Float => return Err("a float"),
            _ => return Err("an attribute type a-tree lacks"),
        };
        if let Pred::Null(_, not) = p {
            if !scalar {
                return Err("`is null` on a list");
            }
            let _ = write!(
                out,
                "{name} {}",
                if *not != neg {
                    "is not null"
                } else {
                    "is null"
                }
            );
            return Ok(());
        }
        // betree's complement is true on an undefined attribute.
        let guard = neg && !self.always.contains(&(id as usize));
        if guard && !scalar {
            return Err("a negation over a list some event leaves undefined");
        }
        if guard {
            self.guards.set(self.guards.get() + 1);
            let _ = write!(out, "({name} is null or ");
        }
        match p {
            Pred::Bare(_) => {
                if ty != AttrType::Bool {
                    return Err("syntax a-tree lacks");
                }
                let _ = write!(out, "{}{name}", if neg { "not " } else { "" });
            }
            Pred::Cmp(_, op, lit) => {
                let op = if neg {
                    match *op {
                        "<" => ">=",
                        "<=" => ">",
                        ">" => "<=",
                        ">=" => "<",
                        "=" => "<>",
                        _ => "=",
                    }
                } else {
                    op
                };
                match (lit, ty) {
                    (Lit::Int(_), AttrType::Int | AttrType::IntEnum) => {}
                    (Lit::Str(_), AttrType::Str) if matches!(op, "=" | "<>") => {}
                    _ => return Err("a comparison a-tree lacks"),
                }
                let _ = write!(out, "{name} {op} ");
                lit_text(lit, out);
            }
            Pred::In(_, not, items) => {
                if !matches!(ty, AttrType::Int | AttrType::IntEnum | AttrType::Str) {
                    return Err("syntax a-tree lacks");
                }
                let op = if *not != neg { "not in" } else { "in" };
                let _ = write!(out, "{name} {op} ");
                list_text(items, ty == AttrType::Str, out)?;
            }
            Pred::OneOf(_, none, items) => {
                if scalar {
                    return Err("syntax a-tree lacks");
                }
                let op = if *none != neg { "none of" } else { "one of" };
                let _ = write!(out, "{name} {op} ");
                list_text(items, ty == AttrType::StrList, out)?;
            }
            Pred::Empty(_, not) => {
                if scalar {
                    return Err("syntax a-tree lacks");
                }
                let op = if *not != neg {
                    "is not empty"
                } else {
                    "is empty"
                };
                let _ = write!(out, "{name} {op}");
            }
            Pred::Null(..) => unreachable!("handled above"),
        }
        if guard {
            out.push(')');
        }
        Ok(())
    }
}

/// A literal of betree's language.
#[derive(Debug, Clone, PartialEq)]
enum Lit {
    Int(i64),
    Str(String),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Int(i64),
    Str(String),
    Op(&'static str),
}

/// A parsed expression: `not` kept, to be pushed down when written.
#[derive(Debug)]
enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    Pred(Pred),
}

#[derive(Debug)]
enum Pred {
    /// A bare boolean.
    Bare(String),
    /// `x op literal` (flipped when the literal came first).
    Cmp(String, &'static str, Lit),
    /// `x in (…)` / `x not in (…)`.
    In(String, bool, Vec<Lit>),
    /// `xs one of (…)` (false) / `xs none of (…)` (true).
    OneOf(String, bool, Vec<Lit>),
    /// `x is null` (false) / `x is not null` (true).
    Null(String, bool),
    /// `xs is empty` (false) / `xs is not empty` (true).
    Empty(String, bool),
}

const KEYWORDS: &[&str] = &[
    "and", "or", "not", "in", "is", "null", "empty", "one", "none", "all", "of", "true", "false",
];

fn lex(src: &str) -> std::result::Result<Vec<Tok>, Skip> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'(' | b')' | b',' => {
                out.push(Tok::Op(match c {
                    b'(' => "(",
                    b')' => ")",
                    _ => ",",
                }));
                i += 1;
            }
            b'<' | b'>' | b'=' | b'!' | b'&' | b'|' => {
                let two = b.get(i..i + 2).unwrap_or(&[]);
                let (op, n) = match two {
                    b"<=" => ("<=", 2),
                    b">=" => (">=", 2),
                    b"<>" | b"!=" => ("<>", 2),
                    b"&&" => ("and", 2),
                    b"||" => ("or", 2),
                    _ => match c {
                        b'<' => ("<", 1),
                        b'>' => (">", 1),
                        b'=' => ("=", 1),
                        _ => return Err("syntax a-tree lacks"),
                    },
                };
                out.push(Tok::Op(op));
                i += n;
            }
            b'"' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&d| d == b'"')
                    .ok_or("syntax a-tree lacks")?;
                let s = &src[i + 1..i + 1 + end];
                if s.contains(['\\', '\'']) {
                    return Err("a string with an escape or a quote");
                }
                out.push(Tok::Str(s.to_string()));
                i += end + 2;
            }
            b'0'..=b'9' | b'-' => {
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j < b.len() && matches!(b[j], b'.' | b'e' | b'E') {
                    return Err("a float");
                }
                let n = src[i..j].parse().map_err(|_| "syntax a-tree lacks")?;
                out.push(Tok::Int(n));
                i = j;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let mut j = i + 1;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                let w = &src[i..j];
                out.push(match KEYWORDS.iter().find(|k| **k == w) {
                    Some(k) => Tok::Op(k),
                    None => Tok::Ident(w.to_string()),
                });
                i = j;
            }
            _ => return Err("syntax a-tree lacks"),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }

    fn is(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }

    fn is_at(&self, k: usize, op: &str) -> bool {
        matches!(self.toks.get(self.at + k), Some(Tok::Op(o)) if *o == op)
    }

    fn next(&mut self) -> std::result::Result<Tok, Skip> {
        let t = self
            .toks
            .get(self.at)
            .cloned()
            .ok_or("syntax a-tree lacks")?;
        self.at += 1;
        Ok(t)
    }

    fn expect(&mut self, op: &str) -> std::result::Result<(), Skip> {
        if self.is(op) {
            self.at += 1;
            Ok(())
        } else {
            Err("syntax a-tree lacks")
        }
    }

    fn or(&mut self) -> std::result::Result<Node, Skip> {
        let mut items = vec![self.and()?];
        while self.is("or") {
            self.at += 1;
            items.push(self.and()?);
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one item")
        } else {
            Node::Or(items)
        })
    }

    fn and(&mut self) -> std::result::Result<Node, Skip> {
        let mut items = vec![self.unary()?];
        while self.is("and") {
            self.at += 1;
            items.push(self.unary()?);
        }
        Ok(if items.len() == 1 {
            items.pop().expect("one item")
        } else {
            Node::And(items)
        })
    }

    fn unary(&mut self) -> std::result::Result<Node, Skip> {
        if self.is("not") {
            self.at += 1;
            return Ok(Node::Not(Box::new(self.unary()?)));
        }
        if self.is("(") {
            self.at += 1;
            let e = self.or()?;
            self.expect(")")?;
            return Ok(e);
        }
        if self.is("true") || self.is("false") {
            return Err("a `true`/`false` constant");
        }
        match self.next()? {
            Tok::Ident(name) => {
                if self.is("(") {
                    return Err("a function call");
                }
                self.attr_pred(name).map(Node::Pred)
            }
            Tok::Int(i) => self.lit_pred(Lit::Int(i)).map(Node::Pred),
            Tok::Str(s) => self.lit_pred(Lit::Str(s)).map(Node::Pred),
            Tok::Op(_) => Err("syntax a-tree lacks"),
        }
    }

    fn lit(&mut self) -> std::result::Result<Lit, Skip> {
        match self.next()? {
            Tok::Int(i) => Ok(Lit::Int(i)),
            Tok::Str(s) => Ok(Lit::Str(s)),
            _ => Err("syntax a-tree lacks"),
        }
    }

    fn list(&mut self) -> std::result::Result<Vec<Lit>, Skip> {
        self.expect("(")?;
        let mut items = vec![self.lit()?];
        while self.is(",") {
            self.at += 1;
            items.push(self.lit()?);
        }
        self.expect(")")?;
        Ok(items)
    }

    fn cmp_op(&mut self) -> Option<&'static str> {
        let op = match self.peek() {
            Some(Tok::Op(o @ ("<" | "<=" | ">" | ">=" | "=" | "<>"))) => *o,
            _ => return None,
        };
        self.at += 1;
        Some(op)
    }

    fn attr_pred(&mut self, name: String) -> std::result::Result<Pred, Skip> {
        if let Some(op) = self.cmp_op() {
            return Ok(Pred::Cmp(name, op, self.lit()?));
        }
        if self.is("in") {
            self.at += 1;
            return Ok(Pred::In(name, false, self.list()?));
        }
        if self.is("not") && self.is_at(1, "in") {
            self.at += 2;
            return Ok(Pred::In(name, true, self.list()?));
        }
        if (self.is("one") || self.is("none")) && self.is_at(1, "of") {
            let none = self.is("none");
            self.at += 2;
            return Ok(Pred::OneOf(name, none, self.list()?));
        }
        if self.is("all") {
            return Err("`all of` (a-tree's asks the converse)");
        }
        if self.is("is") {
            self.at += 1;
            let neg = self.is("not");
            if neg {
                self.at += 1;
            }
            if self.is("null") {
                self.at += 1;
                return Ok(Pred::Null(name, neg));
            }
            self.expect("empty")?;
            return Ok(Pred::Empty(name, neg));
        }
        Ok(Pred::Bare(name))
    }

    fn lit_pred(&mut self, value: Lit) -> std::result::Result<Pred, Skip> {
        if let Some(op) = self.cmp_op() {
            let flipped = match op {
                "<" => ">",
                "<=" => ">=",
                ">" => "<",
                ">=" => "<=",
                o => o,
            };
            let Tok::Ident(name) = self.next()? else {
                return Err("syntax a-tree lacks");
            };
            return Ok(Pred::Cmp(name, flipped, value));
        }
        let neg = self.is("not");
        if neg {
            self.at += 1;
        }
        self.expect("in")?;
        let Tok::Ident(name) = self.next()? else {
            return Err("syntax a-tree lacks");
        };
        Ok(Pred::OneOf(name, neg, vec![value]))
    }
}

/// Whether a-tree's lexer reads `name` as one identifier.
fn atree_name(name: &str) -> bool {
    const ATREE_WORDS: &[&str] = &["not", "in", "and", "or", "true", "false"];
    let mut c = name.bytes();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == b'_')
        && c.all(|d| d.is_ascii_alphanumeric() || d == b'_' || d == b'-')
        && !ATREE_WORDS.contains(&name)
}

fn lit_text(lit: &Lit, out: &mut String) {
    let _ = match lit {
        Lit::Int(i) => write!(out, "{i}"),
        Lit::Str(s) => write!(out, "\"{s}\""),
    };
}

fn list_text(items: &[Lit], strings: bool, out: &mut String) -> std::result::Result<(), Skip> {
    if items.iter().any(|l| matches!(l, Lit::Str(_)) != strings) {
        return Err("a list of mixed or mistyped values");
    }
    out.push('[');
    for (k, l) in items.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        lit_text(l, out);
    }
    out.push(']');
    Ok(())
}
