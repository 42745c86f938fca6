//! The counting index against brute force on generated workloads of both
//! profiles: every expression text is evaluated on every event by a small
//! interpreter of its own (no index, no compilation, no memo), and the
//! plain, cooperative and batch searches must return exactly those ids,
//! before and after deleting expressions.

use std::collections::HashMap;

use betree::workload::{Adtech, DeepNegation};
use betree::{Event, Index, Schema, SearchStep, reference};
use serde_json::Value as J;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Id(String),
    Int(i64),
    Str(String),
    Op(&'static str),
}

fn lex(s: &str) -> Vec<Tok> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Id(s[st..i].to_string()));
        } else if c.is_ascii_digit() || c == b'-' {
            let st = i;
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push(Tok::Int(s[st..i].parse().unwrap()));
        } else if c == b'"' {
            let st = i + 1;
            i = st;
            while b[i] != b'"' {
                i += 1;
            }
            out.push(Tok::Str(s[st..i].to_string()));
            i += 1;
        } else {
            let two = &s[i..(i + 2).min(s.len())];
            let op = ["<=", ">=", "<>"].into_iter().find(|o| *o == two);
            match op {
                Some(o) => {
                    out.push(Tok::Op(o));
                    i += 2;
                }
                None => {
                    let one = ["(", ")", ",", "<", ">", "="]
                        .into_iter()
                        .find(|o| o.as_bytes()[0] == c)
                        .unwrap_or_else(|| panic!("unexpected {:?} in {s}", c as char));
                    out.push(Tok::Op(one));
                    i += 1;
                }
            }
        }
    }
    out
}

/// A literal or an attribute's value.
#[derive(Debug, Clone, PartialEq)]
enum V {
    B(bool),
    I(i64),
    S(String),
    IL(Vec<i64>),
    SL(Vec<String>),
}

struct Eval<'a> {
    t: Vec<Tok>,
    at: usize,
    ev: &'a HashMap<String, V>,
}

impl Eval<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.at)
    }
    fn next(&mut self) -> Tok {
        self.at += 1;
        self.t[self.at - 1].clone()
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Some(Tok::Id(x)) if x == k)
    }
    fn or(&mut self) -> bool {
        let mut v = self.and();
        while self.is_kw("or") {
            self.at += 1;
            let r = self.and();
            v = v || r;
        }
        v
    }
    fn and(&mut self) -> bool {
        let mut v = self.unary();
        while self.is_kw("and") {
            self.at += 1;
            let r = self.unary();
            v = v && r;
        }
        v
    }
    fn unary(&mut self) -> bool {
        if self.is_kw("not") {
            self.at += 1;
            return !self.unary();
        }
        if self.peek() == Some(&Tok::Op("(")) {
            self.at += 1;
            let v = self.or();
            assert_eq!(self.next(), Tok::Op(")"));
            return v;
        }
        self.pred()
    }
    fn lit(&mut self) -> V {
        match self.next() {
            Tok::Int(i) => V::I(i),
            Tok::Str(s) => V::S(s),
            t => panic!("literal expected, got {t:?}"),
        }
    }
    fn set(&mut self) -> Vec<V> {
        assert_eq!(self.next(), Tok::Op("("));
        let mut out = vec![self.lit()];
        while self.peek() == Some(&Tok::Op(",")) {
            self.at += 1;
            out.push(self.lit());
        }
        assert_eq!(self.next(), Tok::Op(")"));
        out
    }
    /// One predicate; on an undefined attribute every form is false (the C
    /// library's rule; only `not` above it turns that into true).
    fn pred(&mut self) -> bool {
        if matches!(self.peek(), Some(Tok::Int(_) | Tok::Str(_))) {
            // `lit in list` / `lit not in list`.
            let x = self.lit();
            let neg = self.is_kw("not");
            if neg {
                self.at += 1;
            }
            assert_eq!(self.next(), Tok::Id("in".into()));
            let Tok::Id(name) = self.next() else { panic!() };
            return match (self.ev.get(&name), x) {
                (Some(V::IL(l)), V::I(i)) => l.contains(&i) != neg,
                (Some(V::SL(l)), V::S(s)) => l.contains(&s) != neg,
                _ => false,
            };
        }
        let Tok::Id(name) = self.next() else {
            panic!("attribute expected")
        };
        let val = self.ev.get(&name);
        match self.peek().cloned() {
            Some(Tok::Op(op)) if op != ")" => {
                self.at += 1;
                let x = self.lit();
                match (val, x) {
                    (Some(V::I(a)), V::I(b)) => match op {
                        "<" => *a < b,
                        "<=" => *a <= b,
                        ">" => *a > b,
                        ">=" => *a >= b,
                        "=" => *a == b,
                        "<>" => *a != b,
                        _ => panic!("{op}"),
                    },
                    (Some(V::S(a)), V::S(b)) => match op {
                        "=" => *a == b,
                        "<>" => *a != b,
                        _ => panic!("{op}"),
                    },
                    _ => false,
                }
            }
            Some(Tok::Id(k)) if k == "in" || k == "not" || k == "one" || k == "none" => {
                self.at += 1;
                let kind = match k.as_str() {
                    "not" => {
                        assert_eq!(self.next(), Tok::Id("in".into()));
                        "not in"
                    }
                    "one" | "none" => {
                        assert_eq!(self.next(), Tok::Id("of".into()));
                        if k == "one" { "one of" } else { "none of" }
                    }
                    _ => "in",
                };
                let set = self.set();
                let Some(val) = val else { return false };
                let found = match val {
                    V::I(_) | V::S(_) => set.contains(val),
                    V::IL(l) => l.iter().any(|x| set.contains(&V::I(*x))),
                    V::SL(l) => l.iter().any(|x| set.contains(&V::S(x.clone()))),
                    V::B(_) => panic!("set test on a boolean"),
                };
                match kind {
                    "in" | "one of" => found,
                    _ => !found,
                }
            }
            // A bare boolean.
            _ => matches!(val, Some(V::B(true))),
        }
    }
}

fn brute(expr: &str, ev: &HashMap<String, V>) -> bool {
    let mut e = Eval {
        t: lex(expr),
        at: 0,
        ev,
    };
    let v = e.or();
    assert_eq!(e.at, e.t.len(), "whole expression read: {expr}");
    v
}

fn model_of_json(line: &str) -> HashMap<String, V> {
    let v: J = serde_json::from_str(line).unwrap();
    v.as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            let x = match v {
                J::Bool(b) => V::B(*b),
                J::Number(n) => V::I(n.as_i64().unwrap()),
                J::String(s) => V::S(s.clone()),
                J::Array(a) if a.iter().all(J::is_i64) => {
                    V::IL(a.iter().map(|x| x.as_i64().unwrap()).collect())
                }
                J::Array(a) => V::SL(a.iter().map(|x| x.as_str().unwrap().into()).collect()),
                other => panic!("{other}"),
            };
            (k.clone(), x)
        })
        .collect()
}

fn stepped(index: &Index, ev: &Event, budget: u64) -> Vec<u64> {
    let mut it = index.search_iter(ev).unwrap();
    loop {
        if let SearchStep::Done(ids) = index.search_next(&mut it, budget) {
            return ids;
        }
    }
}

/// Every search mode of `index` agrees with brute force over the live
/// expressions.
fn check(index: &Index, exprs: &[(u64, String)], events: &[Event], models: &[HashMap<String, V>]) {
    let batch = index.search_batch(events).unwrap();
    let mut lanes = Vec::new();
    index
        .search_batch_by(events, &mut lanes, betree::BatchPath::Lanes)
        .unwrap();
    assert_eq!(lanes, batch, "search_batch_by(Lanes) and search_batch");
    for (k, (ev, m)) in events.iter().zip(models).enumerate() {
        let want: Vec<u64> = exprs
            .iter()
            .filter(|(_, e)| brute(e, m))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(index.search(ev).unwrap(), want, "event {k}");
        assert_eq!(batch[k], want, "batch, event {k}");
        for budget in [1, 7, 100] {
            assert_eq!(
                stepped(index, ev, budget),
                want,
                "event {k}, budget {budget}"
            );
        }
    }
}

fn run(schema: Schema, exprs: Vec<String>, events: Vec<Event>, models: Vec<HashMap<String, V>>) {
    let mut index = Index::new(schema);
    let mut live: Vec<(u64, String)> = Vec::new();
    for (i, e) in exprs.into_iter().enumerate() {
        index.insert(i as u64 + 1, &e).unwrap();
        live.push((i as u64 + 1, e));
    }
    check(&index, &live, &events, &models);
    // Delete every third expression, then insert some back under new ids:
    // postings, key lists and thresholds must follow.
    let mut rng = fastrand::Rng::with_seed(11);
    let mut kept = Vec::new();
    let mut removed = Vec::new();
    for (id, e) in live {
        if rng.u32(0..3) == 0 {
            index.delete(id).unwrap();
            removed.push(e);
        } else {
            kept.push((id, e));
        }
    }
    check(&index, &kept, &events, &models);
    let next = kept.iter().map(|x| x.0).max().unwrap_or(0) + 1;
    for (k, e) in removed.into_iter().step_by(2).enumerate() {
        let id = next + k as u64;
        index.insert(id, &e).unwrap();
        kept.push((id, e));
    }
    check(&index, &kept, &events, &models);
}

#[test]
fn adtech_matches_brute_force_with_deletes() {
    let a = Adtech::new();
    let schema = Schema::from_domains(a.domains()).unwrap();
    for seed in [1, 2] {
        let mut rng = fastrand::Rng::with_seed(seed);
        let exprs: Vec<String> = (0..1500).map(|_| a.expression(&mut rng)).collect();
        let lines: Vec<String> = (0..60).map(|_| a.event_json(&mut rng)).collect();
        let events = lines
            .iter()
            .map(|l| Event::from_json(&schema, l).unwrap())
            .collect();
        let models = lines.iter().map(|l| model_of_json(l)).collect();
        run(schema.clone(), exprs, events, models);
    }
}

/// The deep-negation workload: wide integer ranges (most of them tested in
/// place, see `inline_int_tests`) under `and`/`or` trees with half their
/// nodes negated, before and after deletes and re-inserts.
#[test]
fn deep_negation_matches_brute_force_with_deletes() {
    let g = DeepNegation;
    let schema = Schema::from_domains(g.domains()).unwrap();
    let mut rng = fastrand::Rng::with_seed(3);
    let exprs: Vec<String> = (0..500).map(|_| g.expression(&mut rng)).collect();
    let lines: Vec<String> = (0..40).map(|_| g.event_json(&mut rng)).collect();
    let events = lines
        .iter()
        .map(|l| Event::from_json(&schema, l).unwrap())
        .collect();
    let models = lines.iter().map(|l| model_of_json(l)).collect();
    run(schema, exprs, events, models);
}

#[test]
fn dense_boolean_matches_brute_force_with_deletes() {
    let schema = Schema::boolean_params(32);
    let exprs = reference::random_expressions(32, 400, 5);
    let vals = reference::random_events(32, 40, 6);
    let events = vals
        .iter()
        .map(|v| Event::from_bools(&schema, v).unwrap())
        .collect();
    let models = vals
        .iter()
        .map(|v| {
            v.iter()
                .enumerate()
                .map(|(i, b)| (format!("par{}", i + 1), V::B(*b)))
                .collect()
        })
        .collect();
    run(schema, exprs, events, models);
}

/// Every point of issue 33's workload grid, on a small instance: each
/// search mode gives brute force's ids, before and after deletes and
/// re-inserts (the sweep times the same shapes on larger instances).
#[test]
fn every_grid_point_matches_brute_force_with_deletes() {
    let grid = betree::workload::grid();
    assert_eq!(grid.len(), 24);
    for (k, shape) in grid.into_iter().enumerate() {
        let a = Adtech::with_shape(shape.clone()).unwrap();
        let schema = Schema::from_domains(a.domains()).unwrap();
        let exprs = a.expressions(150, 100 + k as u64);
        let mut rng = fastrand::Rng::with_seed(200 + k as u64);
        let lines: Vec<String> = (0..16).map(|_| a.event_json(&mut rng)).collect();
        let events: Vec<Event> = lines
            .iter()
            .map(|l| Event::from_json(&schema, l).unwrap())
            .collect();
        let models: Vec<HashMap<String, V>> = lines.iter().map(|l| model_of_json(l)).collect();
        // A point whose instance matches nothing would check little.
        let matched: usize = events
            .iter()
            .zip(&models)
            .map(|(_, m)| exprs.iter().filter(|e| brute(e, m)).count())
            .sum();
        assert!(
            matched > 0,
            "grid point {} ({shape}) matches nothing",
            k + 1
        );
        run(schema, exprs, events, models);
    }
}

/// The shapes the counting index posts through `or` branches and negated
/// ranges, where a slip would lose a match: `not` of ranges on an
/// attribute some events leave undefined (true there), `or`s standing on
/// booleans, list elements and `and`s, two `or`s on one list attribute
/// (hits on a list attribute count once per expression), and an `or`
/// beside a list conjunct on its attribute. Every combination of values
/// is an event.
#[test]
fn or_branches_and_negated_ranges_match_brute_force() {
    use betree::{AttrType, Domain};
    let schema = Schema::from_domains([
        Domain::new("b1", AttrType::Bool, true),
        Domain::new("b2", AttrType::Bool, true),
        Domain::new("x", AttrType::Int, true),
        Domain::new("s", AttrType::Str, true),
        Domain::new("tags", AttrType::StrList, true),
    ])
    .unwrap();
    let exprs: Vec<String> = [
        "not (x >= 5)",
        "not (x < 5)",
        "not (x > 5) and not (x <= 2)",
        "not (x >= 5) and b1",
        "(tags one of (\"a\", \"b\") or b1) and not (x >= 3)",
        "(\"a\" in tags or \"b\" in tags) and (b2 or \"c\" in tags)",
        "(\"a\" in tags or b1) and \"c\" in tags",
        "((x = 1 and b1) or (tags one of (\"z\") and b2))",
        "(s = \"p\" or (b1 and not b2)) and not (x > 6)",
        "(b1 or b2) and not (x < 2)",
        "(s in (\"p\", \"q\") or \"z\" in tags or b2)",
        "(x = 7 or s = \"q\") and (b1 or \"a\" in tags)",
    ]
    .map(String::from)
    .into();
    let mut lines = Vec::new();
    for b1 in ["", "\"b1\": true", "\"b1\": false"] {
        for b2 in ["", "\"b2\": true", "\"b2\": false"] {
            for x in ["", "\"x\": 1", "\"x\": 2", "\"x\": 5", "\"x\": 7"] {
                for s in ["", "\"s\": \"p\"", "\"s\": \"q\""] {
                    for tags in [
                        "",
                        "\"tags\": []",
                        "\"tags\": [\"a\"]",
                        "\"tags\": [\"a\", \"b\", \"c\"]",
                        "\"tags\": [\"z\", \"c\"]",
                    ] {
                        let fields: Vec<&str> = [b1, b2, x, s, tags]
                            .into_iter()
                            .filter(|f| !f.is_empty())
                            .collect();
                        lines.push(format!("{{{}}}", fields.join(", ")));
                    }
                }
            }
        }
    }
    let events = lines
        .iter()
        .map(|l| Event::from_json(&schema, l).unwrap())
        .collect();
    let models = lines.iter().map(|l| model_of_json(l)).collect();
    run(schema, exprs, events, models);
}
