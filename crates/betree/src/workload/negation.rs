//! A third shape, unlike the adtech profile and the reference generator
//! (`perfkit bench`'s `betree search` rows run all three): few attributes,
//! every one defined by every event, integers over wide ranges, strings
//! compared for equality, and negation nested several levels deep, so that
//! most of an expression's work is in its `not`s rather than in the index's
//! counting of plain conjunctions.
//!
//! * [`DEEP_INTS`] integers over `0..=`[`DEEP_INT_MAX`], compared with
//!   ranges whose width is drawn log-uniformly from a thousand to half the
//!   domain, or with one bound;
//! * [`DEEP_STRS`] strings of [`DEEP_STR_VALUES`] values each, compared
//!   with `=` or `<>`; values are drawn with a skew (the cube of a uniform
//!   draw), in events and expressions alike, so equality matches often
//!   enough to matter;
//! * an expression is a string equality `and` a tree of `and`/`or` of
//!   depth 2 to 4 whose inner nodes are negated with probability one half
//!   (`not (…)`), over leaves of the two kinds; events are JSON objects,
//!   one per line.

use std::io::{self, Write};

use crate::domain::{AttrType, Bounds, Domain};
use crate::{Event, Result, Schema};

/// Integer attributes.
pub const DEEP_INTS: usize = 4;
/// String attributes.
pub const DEEP_STRS: usize = 3;
/// The largest integer value (the smallest is 0).
pub const DEEP_INT_MAX: i64 = 1_000_000_000;
/// Distinct values of each string attribute.
pub const DEEP_STR_VALUES: usize = 1000;

/// The generator of the deep-negation shape; the schema is fixed, so files
/// of different seeds fit together.
#[derive(Debug, Clone, Default)]
pub struct DeepNegation;

impl DeepNegation {
    /// The schema's domains: `n0..` integers, then `s0..` strings, none of
    /// them ever undefined.
    pub fn domains(&self) -> Vec<Domain> {
        let ints = (0..DEEP_INTS).map(|i| {
            Domain::new(format!("n{i}"), AttrType::Int, false)
                .with_bounds(Bounds::Int(0, DEEP_INT_MAX))
        });
        let strs = (0..DEEP_STRS).map(|i| {
            Domain::new(format!("s{i}"), AttrType::Str, false)
                .with_bounds(Bounds::MaxStrings(DEEP_STR_VALUES))
        });
        ints.chain(strs).collect()
    }

    /// A skewed string value of attribute `i`: rank `r` is the cube of a
    /// uniform draw, so low ranks are common.
    fn str_value(rng: &mut fastrand::Rng, i: usize) -> String {
        let r = (rng.f64().powi(3) * DEEP_STR_VALUES as f64) as usize;
        format!("s{i}v{}", r.min(DEEP_STR_VALUES - 1))
    }

    fn leaf(rng: &mut fastrand::Rng, out: &mut String) {
        if rng.bool() {
            let a = rng.usize(0..DEEP_INTS);
            // Log-uniform width: 10^3 to half the domain.
            let span = (DEEP_INT_MAX / 2) as f64;
            let width = (1e3f64.ln() + rng.f64() * (span.ln() - 1e3f64.ln())).exp() as i64;
            let lo = rng.i64(0..=DEEP_INT_MAX - width);
            match rng.u8(0..4) {
                0 => out.push_str(&format!("n{a} >= {lo}")),
                1 => out.push_str(&format!("n{a} <= {}", lo + width)),
                _ => out.push_str(&format!("(n{a} >= {lo} and n{a} <= {})", lo + width)),
            }
        } else {
            let a = rng.usize(0..DEEP_STRS);
            let op = if rng.u8(0..4) == 0 { "<>" } else { "=" };
            out.push_str(&format!("s{a} {op} \"{}\"", Self::str_value(rng, a)));
        }
    }

    fn node(rng: &mut fastrand::Rng, depth: usize, out: &mut String) {
        if depth == 0 {
            Self::leaf(rng, out);
            return;
        }
        let negated = rng.bool();
        if negated {
            out.push_str("not ");
        }
        out.push('(');
        let n = rng.usize(2..=3);
        let join = if rng.bool() { " and " } else { " or " };
        for k in 0..n {
            if k > 0 {
                out.push_str(join);
            }
            // Some children stop early, so the trees are ragged.
            let d = if rng.u8(0..4) == 0 { 0 } else { depth - 1 };
            Self::node(rng, d, out);
        }
        out.push(')');
    }

    /// One expression: a string equality `and` a tree of depth 2 to 4.
    /// The equality keeps the match rate near what targeting rules have (a
    /// few percent: two skewed draws agree about 1 time in 80); the tree
    /// under it holds the negations.
    pub fn expression(&self, rng: &mut fastrand::Rng) -> String {
        let a = rng.usize(0..DEEP_STRS);
        let mut out = format!("s{a} = \"{}\" and ", Self::str_value(rng, a));
        let depth = rng.usize(2..=4);
        Self::node(rng, depth, &mut out);
        out
    }

    /// One event as a JSON object defining every attribute.
    pub fn event_json(&self, rng: &mut fastrand::Rng) -> String {
        let mut obj = serde_json::Map::new();
        for i in 0..DEEP_INTS {
            obj.insert(
                format!("n{i}"),
                serde_json::Value::from(rng.i64(0..=DEEP_INT_MAX)),
            );
        }
        for i in 0..DEEP_STRS {
            obj.insert(
                format!("s{i}"),
                serde_json::Value::from(Self::str_value(rng, i)),
            );
        }
        serde_json::Value::Object(obj).to_string()
    }

    /// `count` expressions from `seed`: the texts [`DeepNegation::write_exprs`]
    /// writes, in memory.
    pub fn expressions(&self, count: usize, seed: u64) -> Vec<String> {
        super::expressions(count, seed, |rng| self.expression(rng))
    }

    /// `count` events from `seed`, parsed against `schema` (the one of
    /// [`DeepNegation::domains`]).
    pub fn events(&self, schema: &Schema, count: usize, seed: u64) -> Result<Vec<Event>> {
        super::events(schema, count, seed, |rng| self.event_json(rng))
    }

    /// Writes `count` expressions from `seed` as a reference expression
    /// file (the domain list first), one at a time.
    pub fn write_exprs<W: Write + ?Sized>(
        &self,
        out: &mut W,
        count: usize,
        seed: u64,
    ) -> io::Result<()> {
        super::write_exprs(out, &self.domains(), count, seed, |rng| {
            self.expression(rng)
        })
    }

    /// Writes `count` events from `seed`, one JSON object per line.
    pub fn write_events<W: Write + ?Sized>(
        &self,
        out: &mut W,
        count: usize,
        seed: u64,
    ) -> io::Result<()> {
        super::write_events(out, count, seed, |rng| self.event_json(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Index, reference};

    /// The deepest nesting of `not (` in an expression's text.
    fn negation_depth(e: &str) -> usize {
        let (mut stack, mut depth, mut best) = (Vec::new(), 0usize, 0usize);
        let b = e.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if e[i..].starts_with("not (") {
                depth += 1;
                best = best.max(depth);
                stack.push(true);
                i += 5;
                continue;
            }
            match b[i] {
                b'(' => stack.push(false),
                b')' if stack.pop() == Some(true) => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        best
    }

    /// The shape it promises: few attributes, all always defined; wide
    /// integer ranges; string equality in most expressions; negation
    /// nested two levels or more in a good share; every expression valid
    /// for the index; a match rate that is neither none nor all; the same
    /// seed, the same files.
    #[test]
    fn the_deep_negation_shape_is_what_it_says() {
        let g = DeepNegation;
        let domains = g.domains();
        assert_eq!(domains.len(), DEEP_INTS + DEEP_STRS);
        assert!(domains.iter().all(|d| !d.allow_undefined));
        assert!(
            domains
                .iter()
                .any(|d| d.bounds == Bounds::Int(0, DEEP_INT_MAX))
        );
        let schema = Schema::from_domains(domains).unwrap();
        let exprs = g.expressions(2000, 7);
        assert_eq!(exprs, g.expressions(2000, 7));
        let share = |f: &dyn Fn(&str) -> bool| {
            exprs.iter().filter(|e| f(e)).count() as f64 / exprs.len() as f64
        };
        assert!(share(&|e| e.contains(" = \"")) > 0.5, "string equality");
        assert!(share(&|e| negation_depth(e) >= 2) > 0.2, "deep negation");
        assert!(share(&|e| negation_depth(e) >= 1) > 0.7, "negation");
        // Ranges wide and narrow: some spans over 10^7.
        let spans: Vec<i64> = exprs
            .iter()
            .flat_map(|e| e.split("(n").skip(1).map(str::to_owned).collect::<Vec<_>>())
            .filter_map(|r| {
                // `(nA >= LO and nA <= HI)`: HI - LO.
                let nums: Vec<i64> = r
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|t| t.parse().ok())
                    .collect();
                (r.contains(" and n") && nums.len() >= 4).then(|| nums[3] - nums[1])
            })
            .collect();
        assert!(spans.iter().any(|&w| w > 10_000_000), "wide ranges");
        assert!(spans.iter().any(|&w| w < 100_000), "and narrow ones");
        let mut index = Index::new(schema.clone());
        for (i, e) in exprs.iter().enumerate() {
            index
                .insert(i as u64 + 1, e)
                .unwrap_or_else(|err| panic!("{e}: {err}"));
        }
        let events = g.events(&schema, 200, 8).unwrap();
        let mut matched = 0usize;
        for ev in &events {
            matched += index.search(ev).unwrap().len();
        }
        let rate = matched as f64 / (events.len() * exprs.len()) as f64;
        assert!((0.001..0.05).contains(&rate), "match rate {rate}");
        // The writers write what the in-memory forms hold.
        let mut file = Vec::new();
        g.write_exprs(&mut file, 3, 7).unwrap();
        let read = reference::read_expr_file(std::str::from_utf8(&file).unwrap()).unwrap();
        assert_eq!(read.exprs, g.expressions(3, 7));
    }
}
