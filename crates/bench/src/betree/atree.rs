//! The `a-tree` crate as a peer (issue 33, item 5; `perfkit betree bench
//! --vs-atree`): the same expressions and the same events, indexed by
//! betree and by a-tree in one process, searched alternately round after
//! round on the thread's CPU clock, and the ids each returns compared per
//! event (a difference fails the run).
//!
//! a-tree's language covers a subset of betree's, so every expression is
//! translated from betree's text first, and both indexes hold only the
//! expressions that translated (the same ids). What does not translate is
//! counted by reason:
//!
//! * function calls (frequency caps, segments, geo, string functions),
//!   `true`/`false` constants, floats (a-tree's are decimals), `all of`
//!   (a-tree's `all of` asks whether the *event's* list lies within the
//!   expression's, betree's the converse) and `is null` on lists (a-tree
//!   has no absence test for a list);
//! * a negation over a list attribute that some event of the run leaves
//!   undefined: betree makes `not (xs one of (…))` true when `xs` is
//!   undefined, a-tree leaves it unknown (no match), and a-tree cannot
//!   test a list for absence to say it otherwise.
//!
//! The translation keeps the meaning exactly. betree is two-valued: a
//! predicate on an undefined attribute is false (`<>`, `not in`, `none of`
//! included) and only `not` turns that into true. a-tree is three-valued:
//! such a predicate is unknown, and only a known true matches. So `not` is
//! pushed down to the predicates here (De Morgan), never handed to a-tree,
//! which leaves a formula that only grows with its predicates; there
//! unknown acts as false, as in betree. A negated predicate becomes its
//! complement on a defined value (`=` ↔ `<>`, `in` ↔ `not in`, `one of` ↔
//! `none of`, `b` ↔ `not b`, `<` ↔ `>=`), or'ed with `x is null` unless
//! every event of the run defines `x`, which gives betree's true on an
//! undefined `x`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use a_tree::{ATree, AttributeDefinition};
use betree::workload::{Shape, grid};
use betree::{AttrType, Error, Event, Index, Result, Schema, Scratch, Value};

use perfkit_measure::clock;

use super::median;

/// How big each workload's instance is and how long it is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Expressions generated for the adtech profile.
    pub adtech_expressions: usize,
    /// Expressions generated for each grid point.
    pub grid_expressions: usize,
    /// Events searched per workload (every round).
    pub events: usize,
    /// Rounds (each runs both indexes once; the median is reported).
    pub rounds: usize,
}

impl Default for Settings {
    /// The adtech profile at 100,000 expressions (issue 33's size) and the
    /// grid points at the sweep's 20,000 (the sweep's instances, same
    /// seeds); 300 events, median of 5 rounds.
    fn default() -> Settings {
        Settings {
            adtech_expressions: 100_000,
            grid_expressions: 20_000,
            events: 300,
            rounds: 5,
        }
    }
}

impl Settings {
    /// Small instances (seconds in all), for tests and a first look:
    /// 2,000 expressions, 40 events, one round.
    pub fn quick() -> Settings {
        Settings {
            adtech_expressions: 2_000,
            grid_expressions: 2_000,
            events: 40,
            rounds: 1,
        }
    }
}

/// A grid point run beside the adtech profile, and why.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GridPoint {
    /// Attributes in the schema.
    pub attributes: usize,
    /// Zipf exponent of attribute and value popularity.
    pub zipf: f64,
    /// Predicates per expression.
    pub predicates: (usize, usize),
    /// Share of negated predicates.
    pub negation: f64,
    /// Why it was chosen.
    pub why: &'static str,
}

/// The three grid points run beside the adtech profile.
pub const GRID_POINTS: [GridPoint; 3] = [
    GridPoint {
        attributes: 400,
        zipf: 0.6,
        predicates: (2, 4),
        negation: 0.0,
        why: "the sweep's worst point (most candidates per match), the most attributes",
    },
    GridPoint {
        attributes: 200,
        zipf: 1.4,
        predicates: (8, 15),
        negation: 0.4,
        why: "heavy negation over long expressions, skewed popularity",
    },
    GridPoint {
        attributes: 50,
        zipf: 1.4,
        predicates: (8, 15),
        negation: 0.0,
        why: "few attributes, long expressions, no negation: events hit many predicates",
    },
];

/// The workloads of [`peer`]: the adtech profile, then [`GRID_POINTS`].
pub fn workloads() -> Vec<(Shape, &'static str)> {
    let mut out = vec![(Shape::default(), "issue 33's adtech profile")];
    for p in GRID_POINTS {
        let shape = grid()
            .into_iter()
            .find(|s| {
                s.attributes == p.attributes
                    && s.attr_zipf == p.zipf
                    && s.predicates == p.predicates
                    && s.negation == Some(p.negation)
            })
            .expect("GRID_POINTS are points of the grid");
        out.push((shape, p.why));
    }
    out
}

/// One workload measured on both indexes.
#[derive(Debug, Clone)]
pub struct Workload {
    /// Its name: `adtech` or the grid point's parameters.
    pub name: String,
    /// Why it was chosen.
    pub why: &'static str,
    /// Expressions generated.
    pub generated: usize,
    /// Expressions translated and indexed by both.
    pub translated: usize,
    /// Expressions left out, by reason.
    pub skipped: BTreeMap<&'static str, usize>,
    /// Translated expressions with at least one `x is null or …` guard (a
    /// negation on an attribute some event leaves undefined).
    pub guarded: usize,
    /// Events searched (every round, by both).
    pub events: usize,
    /// Matches over all events (identical ids in both, checked).
    pub matches: u64,
    /// CPU nanoseconds of inserting every translated expression.
    pub betree_build_ns: u64,
    /// The same for a-tree.
    pub atree_build_ns: u64,
    /// CPU nanoseconds of betree's rounds (`Index::search_with`, one event
    /// at a time), in round order.
    pub betree_rounds_ns: Vec<u64>,
    /// The same for a-tree (`ATree::search`).
    pub atree_rounds_ns: Vec<u64>,
}

impl Workload {
    /// betree's events per CPU second (median round).
    pub fn betree_events_per_s(&self) -> f64 {
        self.events as f64 / (median(&self.betree_rounds_ns).max(1) as f64 / 1e9)
    }

    /// a-tree's events per CPU second (median round).
    pub fn atree_events_per_s(&self) -> f64 {
        self.events as f64 / (median(&self.atree_rounds_ns).max(1) as f64 / 1e9)
    }

    /// betree's events/s over a-tree's (above 1: betree is faster).
    pub fn ratio(&self) -> f64 {
        median(&self.atree_rounds_ns) as f64 / median(&self.betree_rounds_ns).max(1) as f64
    }

    /// Expressions left out.
    pub fn skipped_total(&self) -> usize {
        self.skipped.values().sum()
    }
}

/// Result of [`peer`].
#[derive(Debug, Clone)]
pub struct Peer {
    /// What was run.
    pub settings: Settings,
    /// The adtech profile, then the grid points.
    pub workloads: Vec<Workload>,
}

/// Runs every workload of [`workloads`], calling `progress` after each.
pub fn peer(settings: Settings, progress: &mut dyn FnMut(&Workload)) -> Result<Peer> {
    let mut out = Vec::new();
    for (shape, why) in workloads() {
        let count = if shape == Shape::default() {
            settings.adtech_expressions
        } else {
            settings.grid_expressions
        };
        let w = measure(&shape, why, count, settings)?;
        progress(&w);
        out.push(w);
    }
    Ok(Peer {
        settings,
        workloads: out,
    })
}

/// Measures one shape: its fixed-seed instance (the sweep's seeds),
/// translated, indexed by both, checked event by event, then timed.
pub fn measure(
    shape: &Shape,
    why: &'static str,
    expressions: usize,
    settings: Settings,
) -> Result<Workload> {
    let (_, schema, exprs, events) = super::sweep::instance(shape, expressions, settings.events)?;
    let name = if *shape == Shape::default() {
        "adtech".to_string()
    } else {
        shape.to_string()
    };
    let mut w = compare(&schema, &exprs, &events, settings.rounds)?;
    w.name = name;
    w.why = why;
    Ok(w)
}

/// The comparison on given expressions (ids 1, 2, … in order) and events:
/// translate, index both, check every event's ids, time `rounds` rounds
/// (at least 1) after an unrecorded one. A difference in ids is an
/// [`Error::Event`] naming the event and the ids.
pub fn compare(
    schema: &Schema,
    exprs: &[String],
    events: &[Event],
    rounds: usize,
) -> Result<Workload> {
    let atree_err =
        |what: &str, e: &dyn std::fmt::Display| Error::Event(format!("a-tree {what}: {e}"));
    // Attributes every event defines: a negation over them needs no
    // absence test.
    let always: BTreeSet<usize> = (0..schema.len())
        .filter(|&a| {
            events
                .iter()
                .all(|ev| ev.get(a as betree::AttrId).is_some())
        })
        .collect();
    let tr = Translator::new(schema, &always);
    let mut translated: Vec<(u64, String, bool)> = Vec::new();
    let mut skipped: BTreeMap<&'static str, usize> = BTreeMap::new();
    for (k, e) in exprs.iter().enumerate() {
        let before = tr.guards.get();
        match tr.translate(e) {
            Ok(t) => translated.push((k as u64 + 1, t, tr.guards.get() > before)),
            Err(why) => *skipped.entry(why).or_default() += 1,
        }
    }
    let mut atree: ATree<u64> =
        ATree::new(&tr.definitions()).map_err(|e| atree_err("schema", &e))?;
    let t = clock::thread_cpu();
    let mut refused: Vec<u64> = Vec::new();
    for (id, e, _) in &translated {
        if atree.insert(id, e).is_err() {
            refused.push(*id);
        }
    }
    let atree_build_ns = (clock::thread_cpu() - t).as_nanos() as u64;
    if !refused.is_empty() {
        // Never expected: the translator writes only what a-tree parses.
        *skipped.entry("refused by a-tree's parser").or_default() += refused.len();
        for id in &refused {
            atree.delete(id);
        }
        translated.retain(|(id, ..)| !refused.contains(id));
    }
    let t = clock::thread_cpu();
    let mut index = Index::new(schema.clone());
    let mut bulk = index.bulk();
    for (id, ..) in &translated {
        bulk.insert(*id, &exprs[*id as usize - 1])?;
    }
    drop(bulk);
    let betree_build_ns = (clock::thread_cpu() - t).as_nanos() as u64;
    let aevents = events
        .iter()
        .map(|ev| tr.event(&atree, ev))
        .collect::<Result<Vec<_>>>()?;

    // The id check, untimed: every event, both indexes.
    let mut scratch = Scratch::default();
    let mut ids = Vec::new();
    let mut matches = 0u64;
    for (k, (ev, aev)) in events.iter().zip(&aevents).enumerate() {
        index.search_with(&mut scratch, ev, &mut ids)?;
        let report = atree.search(aev).map_err(|e| atree_err("search", &e))?;
        let mut theirs: Vec<u64> = report.matches().iter().map(|id| **id).collect();
        theirs.sort_unstable();
        if theirs != ids {
            let only = |a: &[u64], b: &[u64]| -> Vec<u64> {
                a.iter()
                    .filter(|x| b.binary_search(x).is_err())
                    .copied()
                    .take(5)
                    .collect()
            };
            return Err(Error::Event(format!(
                "betree and a-tree differ on event {k}: {} matches against {}; only betree: {:?}, only a-tree: {:?} (first ids)",
                ids.len(),
                theirs.len(),
                only(&ids, &theirs),
                only(&theirs, &ids),
            )));
        }
        matches += ids.len() as u64;
    }

    // Timed rounds, alternating which goes first; round 0 unrecorded.
    let rounds = rounds.max(1);
    let (mut b_ns, mut a_ns) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        for side in [round % 2, 1 - round % 2] {
            let t = clock::thread_cpu();
            let mut m = 0u64;
            if side == 0 {
                for ev in events {
                    index.search_with(&mut scratch, ev, &mut ids)?;
                    m += ids.len() as u64;
                }
            } else {
                for aev in &aevents {
                    let report = atree.search(aev).map_err(|e| atree_err("search", &e))?;
                    m += report.matches().len() as u64;
                }
            }
            let ns = (clock::thread_cpu() - t).as_nanos() as u64;
            if m != matches {
                return Err(Error::Event(format!(
                    "{} found {m} matches in a timed round, {matches} when checked",
                    if side == 0 { "betree" } else { "a-tree" }
                )));
            }
            if round > 0 {
                if side == 0 { &mut b_ns } else { &mut a_ns }.push(ns);
            }
        }
    }
    Ok(Workload {
        name: String::new(),
        why: "",
        generated: exprs.len(),
        translated: translated.len(),
        skipped,
        guarded: translated.iter().filter(|t| t.2).count(),
        events: events.len(),
        matches,
        betree_build_ns,
        atree_build_ns,
        betree_rounds_ns: b_ns,
        atree_rounds_ns: a_ns,
    })
}

/// Why an expression was left out.
type Skip = &'static str;

/// betree's expression text into a-tree's, for one schema.
pub struct Translator<'s> {
    schema: &'s Schema,
    always: &'s BTreeSet<usize>,
    /// `x is null or …` guards written so far.
    guards: std::cell::Cell<usize>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use betree::{Domain, EventBuilder};

    fn schema() -> Schema {
        Schema::from_domains([
            Domain::new("i", AttrType::Int, true),
            Domain::new("s", AttrType::Str, true),
            Domain::new("b", AttrType::Bool, true),
            Domain::new("xs", AttrType::StrList, true),
            Domain::new("f", AttrType::Float, true),
        ])
        .unwrap()
    }

    #[test]
    fn translates_the_shared_subset_and_names_the_rest() {
        let schema = schema();
        let none = BTreeSet::new();
        let all: BTreeSet<usize> = (0..5).collect();
        let t = Translator::new(&schema, &none);
        assert_eq!(
            t.translate(r#"i >= 3 and ("a" in xs or s in ("x", "y"))"#),
            Ok(r#"(i >= 3 and (xs one of ["a"] or s in ["x", "y"]))"#.into())
        );
        assert_eq!(
            t.translate("not (i = 1 or b)"),
            Ok("((i is null or i <> 1) and (b is null or not b))".into())
        );
        assert_eq!(t.translate("5 < i"), Ok("i > 5".into()));
        assert_eq!(t.translate("not i is null"), Ok("i is not null".into()));
        assert_eq!(
            Translator::new(&schema, &all).translate(r#"not (xs none of ("a", "b"))"#),
            Ok(r#"xs one of ["a", "b"]"#.into())
        );
        for (e, why) in [
            (
                r#"not (xs one of ("a"))"#,
                "a negation over a list some event leaves undefined",
            ),
            (
                r#"xs all of ("a")"#,
                "`all of` (a-tree's asks the converse)",
            ),
            ("f > 1.5", "a float"),
            ("true or b", "a `true`/`false` constant"),
            (r#"contains(s, "a")"#, "a function call"),
            ("xs is null", "`is null` on a list"),
        ] {
            assert_eq!(t.translate(e), Err(why), "{e}");
        }
    }

    /// Handed to a-tree as is, `not` disagrees with betree on an undefined
    /// attribute (which is why it is pushed down): the id check sees it.
    #[test]
    fn a_bare_not_differs_on_an_undefined_attribute() {
        let schema = schema();
        let ev = EventBuilder::new(&schema).bool("b", true).unwrap().build();
        let mut index = Index::new(schema.clone());
        index.insert(1, "not (i = 1)").unwrap();
        assert_eq!(index.search(&ev).unwrap(), vec![1]);
        let none = BTreeSet::new();
        let t = Translator::new(&schema, &none);
        let mut atree: ATree<u64> = ATree::new(&t.definitions()).unwrap();
        atree.insert(&1, "not (i = 1)").unwrap();
        atree
            .insert(&2, &t.translate("not (i = 1)").unwrap())
            .unwrap();
        let aev = t.event(&atree, &ev).unwrap();
        let report = atree.search(&aev).unwrap();
        assert_eq!(report.matches(), [&2]);
    }

    /// Undefined attributes, negations at every depth, every operator:
    /// betree and a-tree agree on every event (or `compare` fails).
    #[test]
    fn compare_agrees_on_undefined_attributes_and_negations() {
        let schema = schema();
        let exprs: Vec<String> = [
            "i = 1",
            "i <> 1",
            "not (i = 1)",
            "not (i <> 1 and b)",
            "not not (i < 3)",
            r#"s in ("a", "b") or not b"#,
            r#"s not in ("a") and i >= 0"#,
            r#"not (s = "a" or "x" in xs)"#,
            r#"xs none of ("x", "y")"#,
            r#""y" not in xs or i is null"#,
            r#"xs is not empty and not (s <> "b")"#,
            "f < 2.0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut events = Vec::new();
        for i in [None, Some(0), Some(1), Some(5)] {
            for s in [None, Some("a"), Some("b")] {
                for b in [None, Some(false), Some(true)] {
                    for xs in [None, Some(vec![]), Some(vec!["x"]), Some(vec!["y", "z"])] {
                        let mut e = EventBuilder::new(&schema);
                        if let Some(i) = i {
                            e = e.int("i", i).unwrap();
                        }
                        if let Some(s) = s {
                            e = e.str("s", s).unwrap();
                        }
                        if let Some(b) = b {
                            e = e.bool("b", b).unwrap();
                        }
                        if let Some(xs) = xs {
                            e = e.str_list("xs", xs).unwrap();
                        }
                        events.push(e.build());
                    }
                }
            }
        }
        let w = compare(&schema, &exprs, &events, 1).unwrap();
        assert_eq!(
            w.skipped,
            BTreeMap::from([
                ("a float", 1),
                ("a negation over a list some event leaves undefined", 1)
            ])
        );
        assert_eq!(w.translated, exprs.len() - 2);
        // `not (i = 1)`, `not (i <> 1 and b)`, `not b`, `not (s <> "b")`.
        assert_eq!(w.guarded, 4);
        assert!(w.matches > 0);
        assert_eq!((w.betree_rounds_ns.len(), w.atree_rounds_ns.len()), (1, 1));
    }
}
