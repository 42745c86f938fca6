//! Generated workloads beyond the reference benchmark: the ad-targeting
//! profile of issue 14 (`perfkit betree gen-exprs --profile adtech`) and
//! the shapes issue 33's grid varies it into ([`Shape`], [`grid`]).
//!
//! The schema depends only on the [`Shape`] (not on the seed), so
//! expressions and events generated with different seeds always fit
//! together. Attributes are ranked by popularity and their types cycle
//! through bounded integers, strings, booleans, integer lists and string
//! lists. Attributes and values are drawn with Zipf popularity (rank `r`
//! has weight `1 / r^s`), so a few attributes appear in most expressions
//! and events and a few values dominate each attribute.
//!
//! The default shape is the adtech profile (its bytes are unchanged by the
//! parameters' arrival: same seed, same file):
//!
//! * 200 attributes; strings have 10 to 10,000 distinct values;
//! * an expression has 3 to 10 predicates on distinct attributes, joined by
//!   `and`; some adjacent pairs are grouped as `(p or q)` and some
//!   predicates negated with `not`, so not every conjunct is indexable;
//!   integer predicates are mostly ranges (`a >= lo and a <= hi`, or one
//!   side), strings `=`/`in`/`not in`, lists `one of`/`none of`/membership.
//! * an event defines 40 to 120 attributes, chosen by popularity without
//!   replacement, and is written as one JSON object per line (the format
//!   `perfkit betree search --events-format json` reads).
//!
//! A shape with a negation share ([`Shape::negation`]) draws each predicate
//! negated with that probability, as `not (…)` over an attribute every
//! event defines ([`Shape::always_defined`]) and otherwise atom-level
//! (`<>`, `not in`, `none of`, `not b`), and no other predicate is negated.
//! A shape with a target match rate ([`Shape::match_rate`]) is calibrated
//! when built: a share of the predicates (the looseness, found by bisection
//! on a fixed sample) is drawn wide, over always-defined attributes, so that
//! long conjunctions still match some events; or, when the shape matches
//! too much as it is, narrow (equality with a value drawn uniformly).
//!
//! Both writers stream: one expression or event is built, written and
//! dropped at a time, so `--count 1000000` needs no more memory than 10.

use std::fmt;
use std::io::{self, Write};

use crate::domain::{AttrType, Bounds, Domain};
use crate::{Error, Event, Index, Result, Schema, reference};

/// Number of attributes in the adtech schema.
pub const ADTECH_ATTRS: usize = 200;

/// The seed of the schema's layout (bounds and cardinalities); fixed so
/// the schema does not depend on the workload's seed.
const LAYOUT_SEED: u64 = 0x00ad_7ec4;

/// The type cycle over popularity ranks: 30 % integers, 30 % strings,
/// 20 % booleans, 10 % integer lists, 10 % string lists.
const TYPE_CYCLE: [AttrType; 10] = [
    AttrType::Int,
    AttrType::Str,
    AttrType::Bool,
    AttrType::Int,
    AttrType::Str,
    AttrType::IntList,
    AttrType::Int,
    AttrType::Bool,
    AttrType::StrList,
    AttrType::Str,
];

/// The most attributes a shape may have (as many as `--params`).
pub const MAX_ATTRS: usize = 1 << 16;

/// How long the generated lists are, as inclusive ranges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListSizes {
    /// Values of a string `in (…)` set.
    pub in_set: (usize, usize),
    /// Values of a list's `one of (…)` set.
    pub one_of: (usize, usize),
    /// Values of a `not in (…)` or `none of (…)` set.
    pub negated: (usize, usize),
    /// Values of a list attribute in an event.
    pub event: (usize, usize),
}

impl Default for ListSizes {
    /// The adtech profile's.
    fn default() -> ListSizes {
        ListSizes {
            in_set: (2, 6),
            one_of: (2, 5),
            negated: (1, 3),
            event: (1, 6),
        }
    }
}

/// The parameters of a generated ad-targeting workload. The default is the
/// adtech profile; [`grid`] varies four of them.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// Attributes in the schema (1 to [`MAX_ATTRS`]).
    pub attributes: usize,
    /// Zipf exponent of attribute popularity (how much more often the
    /// popular attributes appear in expressions and events).
    pub attr_zipf: f64,
    /// Zipf exponent of value popularity within an attribute.
    pub value_zipf: f64,
    /// Predicates per expression, an inclusive range (capped at the
    /// attribute count: they name distinct attributes).
    pub predicates: (usize, usize),
    /// The share of predicates drawn negated (0 to 1); `None` keeps the
    /// adtech profile's own mix (6 % `not (…)`, a fifth of the string and
    /// list predicates `not in`/`none of`, booleans on their common side).
    pub negation: Option<f64>,
    /// List and set lengths.
    pub lists: ListSizes,
    /// The distinct values a string attribute may have: each string
    /// attribute takes one of these, by a fixed layout.
    pub str_cards: Vec<usize>,
    /// Attributes an event defines, an inclusive range (capped at the
    /// attribute count).
    pub event_attrs: (usize, usize),
    /// The most popular attributes that every event defines (like a
    /// device type or a country): what `not (…)` negates and what the
    /// calibration's wide predicates name.
    pub always_defined: usize,
    /// The share of (expression, event) pairs that should match (0 to 1,
    /// exclusive), met by calibration; `None`: whatever the other
    /// parameters give (about 2 % for the adtech profile).
    pub match_rate: Option<f64>,
}

impl Default for Shape {
    /// The adtech profile.
    fn default() -> Shape {
        Shape {
            attributes: ADTECH_ATTRS,
            attr_zipf: 0.8,
            value_zipf: 1.0,
            predicates: (3, 10),
            negation: None,
            lists: ListSizes::default(),
            str_cards: vec![10, 100, 1_000, 10_000],
            event_attrs: (40, 120),
            always_defined: 0,
            match_rate: None,
        }
    }
}

/// The match rate [`grid`]'s points are calibrated to: the adtech
/// profile's own, about 2 %.
pub const GRID_MATCH_RATE: f64 = 0.02;

/// How many of a grid point's attributes every event defines.
pub const GRID_ALWAYS_DEFINED: usize = 16;

/// Issue 33's fixed grid of 24 shapes: attributes {50, 200, 400} × Zipf
/// exponent (attributes and values) {0.6, 1.4} × predicates per expression
/// {2-4, 8-15} × negation share {0 %, 40 %}, the rest at the adtech
/// profile's values, [`GRID_ALWAYS_DEFINED`] attributes defined by every
/// event and a match rate of [`GRID_MATCH_RATE`].
pub fn grid() -> Vec<Shape> {
    let mut out = Vec::with_capacity(24);
    for attributes in [50, 200, 400] {
        for zipf in [0.6, 1.4] {
            for predicates in [(2, 4), (8, 15)] {
                for negation in [0.0, 0.4] {
                    out.push(Shape {
                        attributes,
                        attr_zipf: zipf,
                        value_zipf: zipf,
                        predicates,
                        negation: Some(negation),
                        always_defined: GRID_ALWAYS_DEFINED,
                        match_rate: Some(GRID_MATCH_RATE),
                        ..Shape::default()
                    });
                }
            }
        }
    }
    out
}

impl fmt::Display for Shape {
    /// The grid's parameters: `attrs=200 zipf=0.6 preds=2-4 neg=40%`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "attrs={} zipf={}", self.attributes, self.attr_zipf)?;
        if self.value_zipf != self.attr_zipf {
            write!(f, "/{}", self.value_zipf)?;
        }
        write!(f, " preds={}-{}", self.predicates.0, self.predicates.1)?;
        match self.negation {
            Some(n) => write!(f, " neg={}%", (n * 100.0).round()),
            None => write!(f, " neg=adtech"),
        }
    }
}

impl Shape {
    /// Checks the parameters, naming the first one out of range.
    pub fn check(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::Shape(msg));
        let range = |name: &str, (lo, hi): (usize, usize), min: usize| {
            if lo < min || hi < lo {
                Err(Error::Shape(format!(
                    "{name} {lo}-{hi}: want {min} <= low <= high"
                )))
            } else {
                Ok(())
            }
        };
        if !(1..=MAX_ATTRS).contains(&self.attributes) {
            return bad(format!(
                "attributes {}: want 1 to {MAX_ATTRS}",
                self.attributes
            ));
        }
        for (name, z) in [
            ("attribute Zipf exponent", self.attr_zipf),
            ("value Zipf exponent", self.value_zipf),
        ] {
            if !(0.0..=10.0).contains(&z) {
                return bad(format!("{name} {z}: want 0 to 10"));
            }
        }
        range("predicates", self.predicates, 1)?;
        range("event attributes", self.event_attrs, 1)?;
        range("in-set length", self.lists.in_set, 1)?;
        range("one-of length", self.lists.one_of, 1)?;
        range("negated-set length", self.lists.negated, 1)?;
        range("event list length", self.lists.event, 1)?;
        if let Some(n) = self.negation
            && !(0.0..=1.0).contains(&n)
        {
            return bad(format!("negation share {n}: want 0 to 1"));
        }
        if let Some(r) = self.match_rate
            && !(r > 0.0 && r < 1.0)
        {
            return bad(format!("match rate {r}: want above 0 and below 1"));
        }
        if self.str_cards.is_empty() || self.str_cards.iter().any(|&c| c == 0 || c > 1 << 24) {
            return bad(format!(
                "string cardinalities {:?}: want one or more, each 1 to 16,777,216",
                self.str_cards
            ));
        }
        if self.always_defined > self.attributes {
            return bad(format!(
                "always-defined attributes {}: more than the {} attributes",
                self.always_defined, self.attributes
            ));
        }
        Ok(())
    }
}

/// One attribute of the profile: its declaration and how values are drawn.
#[derive(Debug, Clone)]
struct Attr {
    domain: Domain,
    /// Integers: values are `0..=card-1`; strings and lists: `card` distinct
    /// values, ranked by popularity.
    card: usize,
    /// Booleans: the probability an event sets it true.
    p_true: f64,
}

/// Cumulative Zipf weights over `n` ranks, for sampling by binary search.
#[derive(Debug, Clone)]
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, s: f64) -> Zipf {
        let mut acc = 0.0;
        let cdf = (1..=n)
            .map(|r| {
                acc += 1.0 / (r as f64).powf(s);
                acc
            })
            .collect();
        Zipf { cdf }
    }

    /// A rank in `0..n`, rank 0 the most popular.
    fn sample(&self, rng: &mut fastrand::Rng) -> usize {
        let total = *self.cdf.last().expect("at least one rank");
        let u = rng.f64() * total;
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }

    /// The fewest top ranks whose popularity adds up to `mass` (0 to 1).
    fn head(&self, mass: f64) -> usize {
        let total = *self.cdf.last().expect("at least one rank");
        (self.cdf.partition_point(|&c| c < mass * total) + 1).min(self.cdf.len())
    }
}

/// Expressions and events of the calibration's sample: enough pairs
/// (48,000) that a 2 % rate is measured within about 5 %.
const CALIBRATION_EXPRS: usize = 600;
const CALIBRATION_EVENTS: usize = 80;
/// Bisection steps: the looseness to within 1/512.
const CALIBRATION_STEPS: usize = 10;
/// The calibration sample's seeds, fixed so that a shape always gets the
/// same looseness (gen-exprs and gen-events agree without talking).
const CALIBRATION_SEED: u64 = 0xca1_1b8a7e;

/// How much of a value's popularity a wide predicate covers.
const WIDE_MASS: f64 = 0.8;
/// The most values a wide set lists.
const WIDE_VALUES: usize = 16;

/// The ad-targeting workload: the schema of its [`Shape`] and its samplers.
#[derive(Debug, Clone)]
pub struct Adtech {
    shape: Shape,
    attrs: Vec<Attr>,
    /// Popularity weight of each attribute (by rank).
    attr_weight: Vec<f64>,
    /// One value sampler per distinct cardinality, looked up by `card`.
    values: Vec<(usize, Zipf)>,
    /// Above 0, the chance that a predicate is drawn wide over an
    /// always-defined attribute; below 0, minus the chance that it is drawn
    /// narrow (0 unless the shape has a target match rate).
    looseness: f64,
    /// The match rate the calibration measured at `looseness`.
    calibrated: Option<f64>,
}

impl Default for Adtech {
    fn default() -> Self {
        Adtech::new()
    }
}

impl Adtech {
    /// The adtech profile's schema and samplers ([`Shape::default`]).
    pub fn new() -> Adtech {
        Adtech::layout(Shape::default())
    }

    /// The workload of `shape`, calibrated to its match rate if it has one
    /// (which builds a small index and searches it: some milliseconds in a
    /// release build).
    pub fn with_shape(shape: Shape) -> Result<Adtech> {
        shape.check()?;
        let mut a = Adtech::layout(shape);
        if let Some(target) = a.shape.match_rate {
            a.calibrate(target)?;
        }
        Ok(a)
    }

    fn layout(shape: Shape) -> Adtech {
        let mut rng = fastrand::Rng::with_seed(LAYOUT_SEED);
        let cards = &shape.str_cards;
        let attrs: Vec<Attr> = (0..shape.attributes)
            .map(|i| {
                let ty = TYPE_CYCLE[i % TYPE_CYCLE.len()];
                let (name, card, bounds) = match ty {
                    AttrType::Int => {
                        let card = [100, 1_000, 10_000, 100_000][rng.usize(0..4)];
                        (format!("int_{i}"), card, Bounds::Int(0, card as i64 - 1))
                    }
                    AttrType::Str => {
                        let card = cards[rng.usize(0..cards.len())];
                        (format!("str_{i}"), card, Bounds::MaxStrings(card))
                    }
                    AttrType::IntList => {
                        let card = [50, 500][rng.usize(0..2)];
                        (format!("ilist_{i}"), card, Bounds::Int(0, card as i64 - 1))
                    }
                    AttrType::StrList => {
                        let card = [100, 1_000][rng.usize(0..2)];
                        (format!("slist_{i}"), card, Bounds::MaxStrings(card))
                    }
                    _ => (format!("bool_{i}"), 2, Bounds::None),
                };
                Attr {
                    domain: Domain::new(name, ty, true).with_bounds(bounds),
                    card,
                    p_true: 0.5 + 0.4 * rng.f64(),
                }
            })
            .collect();
        let mut values: Vec<(usize, Zipf)> = Vec::new();
        for a in &attrs {
            if !values.iter().any(|(c, _)| *c == a.card) {
                values.push((a.card, Zipf::new(a.card, shape.value_zipf)));
            }
        }
        let attr_weight = (1..=shape.attributes)
            .map(|r| 1.0 / (r as f64).powf(shape.attr_zipf))
            .collect();
        Adtech {
            shape,
            attrs,
            attr_weight,
            values,
            looseness: 0.0,
            calibrated: None,
        }
    }

    /// The shape this workload was built from.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The share of predicates drawn wide to meet the shape's match rate,
    /// or minus the share drawn narrow (-1 to 1; 0 without a target).
    pub fn looseness(&self) -> f64 {
        self.looseness
    }

    /// The match rate the calibration measured on its sample, if the shape
    /// asked for one: when even every predicate drawn wide (looseness 1)
    /// or narrow (-1) misses the target, this says by how much.
    pub fn calibrated_rate(&self) -> Option<f64> {
        self.calibrated
    }

    /// Bisects the looseness until the sample's match rate meets `target`.
    /// The rate grows with the looseness (same draws, wider predicates),
    /// up to the sampling noise of one fixed sample.
    fn calibrate(&mut self, target: f64) -> Result<()> {
        let schema = Schema::from_domains(self.domains())?;
        let mut rng = fastrand::Rng::with_seed(CALIBRATION_SEED ^ 1);
        let events = (0..CALIBRATION_EVENTS)
            .map(|_| Event::from_json(&schema, &self.event_json(&mut rng)))
            .collect::<Result<Vec<_>>>()?;
        let (mut lo, mut hi) = (-1.0f64, 1.0f64);
        let rate_at = |a: &mut Adtech, looseness: f64| -> Result<f64> {
            a.looseness = looseness;
            let mut index = Index::new(schema.clone());
            let mut rng = fastrand::Rng::with_seed(CALIBRATION_SEED);
            for id in 1..=CALIBRATION_EXPRS as u64 {
                index.insert(id, &a.expression(&mut rng))?;
            }
            let mut matched = 0usize;
            for ev in &events {
                matched += index.search(ev)?.len();
            }
            Ok(matched as f64 / (CALIBRATION_EXPRS * CALIBRATION_EVENTS) as f64)
        };
        let mut best = (f64::INFINITY, 0.0, 0.0);
        for _ in 0..CALIBRATION_STEPS {
            let mid = (lo + hi) / 2.0;
            let rate = rate_at(self, mid)?;
            let miss = (rate / target).ln().abs();
            if miss < best.0 {
                best = (miss, mid, rate);
            }
            if rate < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        // The ends, which bisection only approaches.
        for end in [-1.0, 1.0] {
            if (end - lo).abs() < 1e-3 || (end - hi).abs() < 1e-3 {
                let rate = rate_at(self, end)?;
                let miss = (rate / target).ln().abs();
                if miss < best.0 {
                    best = (miss, end, rate);
                }
            }
        }
        self.looseness = best.1;
        self.calibrated = Some(best.2);
        Ok(())
    }

    /// The schema's domains, every one allowing undefined.
    pub fn domains(&self) -> Vec<Domain> {
        self.attrs.iter().map(|a| a.domain.clone()).collect()
    }

    fn sampler(&self, a: &Attr) -> &Zipf {
        let (_, z) = self
            .values
            .iter()
            .find(|(c, _)| *c == a.card)
            .expect("a sampler per cardinality");
        z
    }

    fn value_rank(&self, a: &Attr, rng: &mut fastrand::Rng) -> usize {
        self.sampler(a).sample(rng)
    }

    /// `n` distinct attributes drawn by popularity without replacement
    /// (Efraimidis–Spirakis keys: the `n` largest `ln(u) / w`), none of
    /// the first `skip` ranks, returned in rank order so output is stable.
    fn pick_attrs(&self, rng: &mut fastrand::Rng, n: usize, skip: usize) -> Vec<usize> {
        let mut keyed: Vec<(f64, usize)> = self
            .attr_weight
            .iter()
            .enumerate()
            .map(|(i, w)| {
                // 1 - f64() is in (0, 1], so the log is finite.
                ((1.0 - rng.f64()).ln() / w, i)
            })
            .filter(|&(_, i)| i >= skip)
            .collect();
        keyed.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        let mut picked: Vec<usize> = keyed.into_iter().take(n).map(|(_, i)| i).collect();
        picked.sort_unstable();
        picked
    }

    /// A string value of attribute `i` with popularity rank `r`.
    fn str_value(i: usize, r: usize) -> String {
        format!("a{i}v{r}")
    }

    /// `m` distinct popular values of `a` (ranks), ascending.
    fn some_ranks(&self, a: &Attr, rng: &mut fastrand::Rng, m: usize) -> Vec<usize> {
        let m = m.min(a.card);
        let mut out: Vec<usize> = Vec::with_capacity(m);
        // Bounded retries: with few ranks a duplicate is likely, and the
        // list may come out shorter rather than loop for long.
        for _ in 0..m * 8 {
            if out.len() == m {
                break;
            }
            let r = self.value_rank(a, rng);
            if !out.contains(&r) {
                out.push(r);
            }
        }
        out.sort_unstable();
        out
    }

    fn list_text(&self, i: usize, a: &Attr, ranks: &[usize]) -> String {
        let strs = matches!(a.domain.ty, AttrType::Str | AttrType::StrList);
        let items: Vec<String> = ranks
            .iter()
            .map(|&r| {
                if strs {
                    format!("\"{}\"", Adtech::str_value(i, r))
                } else {
                    r.to_string()
                }
            })
            .collect();
        items.join(", ")
    }

    /// A length drawn from an inclusive range.
    fn len(rng: &mut fastrand::Rng, (lo, hi): (usize, usize)) -> usize {
        rng.usize(lo..=hi)
    }

    /// One integer predicate as the adtech profile draws it: mostly ranges.
    fn int_predicate(&self, rng: &mut fastrand::Rng, a: &Attr) -> String {
        let name = &a.domain.name;
        let max = a.card as i64 - 1;
        let width = ((0.3 + 0.6 * rng.f64()) * max as f64) as i64;
        let lo = rng.i64(0..=max - width);
        match rng.u32(0..10) {
            0..=4 => format!("{name} >= {lo} and {name} <= {}", lo + width),
            5..=6 => format!("{name} >= {lo}"),
            7..=8 => format!("{name} < {}", lo + width),
            _ => format!("{name} = {}", self.value_rank(a, rng)),
        }
    }

    /// One predicate on attribute `i` in the adtech profile's own mix.
    fn predicate(&self, rng: &mut fastrand::Rng, i: usize) -> String {
        let a = &self.attrs[i];
        let name = &a.domain.name;
        let l = self.shape.lists;
        match a.domain.ty {
            AttrType::Bool => {
                // Targeting mostly asks for the common side.
                if rng.f64() < a.p_true {
                    name.clone()
                } else {
                    format!("not {name}")
                }
            }
            AttrType::Int => self.int_predicate(rng, a),
            AttrType::Str => match rng.u32(0..10) {
                0..=2 => format!(
                    "{name} = \"{}\"",
                    Adtech::str_value(i, self.value_rank(a, rng))
                ),
                3..=7 => {
                    let m = Adtech::len(rng, l.in_set);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} in ({})", self.list_text(i, a, &ranks))
                }
                _ => {
                    let m = Adtech::len(rng, l.negated);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} not in ({})", self.list_text(i, a, &ranks))
                }
            },
            AttrType::IntList | AttrType::StrList => match rng.u32(0..10) {
                0..=5 => {
                    let m = Adtech::len(rng, l.one_of);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} one of ({})", self.list_text(i, a, &ranks))
                }
                6..=7 => {
                    let r = self.value_rank(a, rng);
                    format!("{} in {name}", self.list_text(i, a, &[r]))
                }
                _ => {
                    let m = Adtech::len(rng, l.negated);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} none of ({})", self.list_text(i, a, &ranks))
                }
            },
            other => unreachable!("the adtech schema has no {other} attribute"),
        }
    }

    /// One predicate on attribute `i` with no negation in it (a shape with
    /// a negation share draws the negated ones apart).
    fn positive(&self, rng: &mut fastrand::Rng, i: usize) -> String {
        let a = &self.attrs[i];
        let name = &a.domain.name;
        let l = self.shape.lists;
        match a.domain.ty {
            AttrType::Bool => name.clone(),
            AttrType::Int => self.int_predicate(rng, a),
            AttrType::Str => {
                if rng.u32(0..10) < 4 {
                    let r = self.value_rank(a, rng);
                    format!("{name} = \"{}\"", Adtech::str_value(i, r))
                } else {
                    let m = Adtech::len(rng, l.in_set);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} in ({})", self.list_text(i, a, &ranks))
                }
            }
            AttrType::IntList | AttrType::StrList => {
                if rng.u32(0..10) < 7 {
                    let m = Adtech::len(rng, l.one_of);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} one of ({})", self.list_text(i, a, &ranks))
                } else {
                    let r = self.value_rank(a, rng);
                    format!("{} in {name}", self.list_text(i, a, &[r]))
                }
            }
            other => unreachable!("the adtech schema has no {other} attribute"),
        }
    }

    /// One atom-level negation on attribute `i`: `<>`, `not in`, `none
    /// of`, `not b` (false, like every predicate, when `i` is undefined).
    fn atom_negated(&self, rng: &mut fastrand::Rng, i: usize) -> String {
        let a = &self.attrs[i];
        let name = &a.domain.name;
        let l = self.shape.lists;
        match a.domain.ty {
            AttrType::Bool => format!("not {name}"),
            AttrType::Int => format!("{name} <> {}", self.value_rank(a, rng)),
            AttrType::Str => {
                if rng.bool() {
                    let r = self.value_rank(a, rng);
                    format!("{name} <> \"{}\"", Adtech::str_value(i, r))
                } else {
                    let m = Adtech::len(rng, l.negated);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} not in ({})", self.list_text(i, a, &ranks))
                }
            }
            AttrType::IntList | AttrType::StrList => {
                if rng.bool() {
                    let m = Adtech::len(rng, l.negated);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} none of ({})", self.list_text(i, a, &ranks))
                } else {
                    let r = self.value_rank(a, rng);
                    format!("{} not in {name}", self.list_text(i, a, &[r]))
                }
            }
            other => unreachable!("the adtech schema has no {other} attribute"),
        }
    }

    /// A wide predicate on attribute `i`: most events that define it pass
    /// (integers: a range over most of the domain; strings and lists: the
    /// most popular values, up to [`WIDE_MASS`] of the popularity;
    /// booleans: true).
    fn wide(&self, rng: &mut fastrand::Rng, i: usize) -> String {
        let a = &self.attrs[i];
        let name = &a.domain.name;
        match a.domain.ty {
            AttrType::Bool => name.clone(),
            AttrType::Int => {
                let max = a.card as i64 - 1;
                let lo = rng.i64(0..=max / 10);
                if rng.bool() {
                    format!("{name} >= {lo}")
                } else {
                    format!("{name} <= {}", max - lo)
                }
            }
            AttrType::Str | AttrType::IntList | AttrType::StrList => {
                let m = self.sampler(a).head(WIDE_MASS).clamp(1, WIDE_VALUES);
                let ranks: Vec<usize> = (0..m).collect();
                let op = if a.domain.ty == AttrType::Str {
                    "in"
                } else {
                    "one of"
                };
                format!("{name} {op} ({})", self.list_text(i, a, &ranks))
            }
            other => unreachable!("the adtech schema has no {other} attribute"),
        }
    }

    /// One expression: a conjunction over distinct attributes of the
    /// shape's predicate count, with some `or` pairs and negations.
    pub fn expression(&self, rng: &mut fastrand::Rng) -> String {
        let (lo, hi) = self.shape.predicates;
        let k = rng.usize(lo..=hi).min(self.attrs.len());
        let mut attrs = self.pick_attrs(rng, k, 0);
        rng.shuffle(&mut attrs);
        let slots = self.widen(rng, &mut attrs);
        match self.shape.negation {
            None => self.adtech_conjunction(rng, &attrs, &slots),
            Some(share) => self.shaped_conjunction(rng, &attrs, &slots, share),
        }
    }

    /// Draws each slot's [`Slot`] from the looseness: above 0, wide with
    /// that chance, moved to an always-defined attribute the expression
    /// does not name yet; below 0, narrow with minus that chance. Draws
    /// nothing at looseness 0, so the adtech profile is unchanged.
    fn widen(&self, rng: &mut fastrand::Rng, attrs: &mut [usize]) -> Vec<Slot> {
        let mut slots = vec![Slot::Drawn; attrs.len()];
        if self.looseness < 0.0 {
            for slot in &mut slots {
                if rng.f64() < -self.looseness {
                    *slot = Slot::Narrow;
                }
            }
            return slots;
        }
        if self.looseness == 0.0 || self.shape.always_defined == 0 {
            return slots;
        }
        let core = self.shape.always_defined;
        for j in 0..attrs.len() {
            if rng.f64() >= self.looseness {
                continue;
            }
            if attrs[j] < core {
                slots[j] = Slot::Wide;
                continue;
            }
            let free: Vec<usize> = (0..core).filter(|c| !attrs.contains(c)).collect();
            if !free.is_empty() {
                attrs[j] = free[rng.usize(0..free.len())];
                slots[j] = Slot::Wide;
            }
        }
        slots
    }

    /// A narrow predicate on attribute `i`: equality with (or, for a
    /// list, membership of) a value drawn uniformly, so mostly a rare one;
    /// booleans as drawn.
    fn narrow(&self, rng: &mut fastrand::Rng, i: usize) -> String {
        let a = &self.attrs[i];
        let name = &a.domain.name;
        let r = rng.usize(0..a.card);
        match a.domain.ty {
            AttrType::Bool => self.positive(rng, i),
            AttrType::Int => format!("{name} = {r}"),
            AttrType::Str => format!("{name} = \"{}\"", Adtech::str_value(i, r)),
            AttrType::IntList | AttrType::StrList => {
                format!("{} in {name}", self.list_text(i, a, &[r]))
            }
            other => unreachable!("the adtech schema has no {other} attribute"),
        }
    }

    /// The adtech profile's conjunction: 12 % of the slots paired with the
    /// next as `(p or q)`, 6 % as `not (p)`.
    fn adtech_conjunction(
        &self,
        rng: &mut fastrand::Rng,
        attrs: &[usize],
        slots: &[Slot],
    ) -> String {
        let mut parts: Vec<String> = Vec::with_capacity(attrs.len());
        let mut j = 0;
        while j < attrs.len() {
            match slots[j] {
                Slot::Wide => {
                    parts.push(parenthesized(self.wide(rng, attrs[j])));
                    j += 1;
                    continue;
                }
                Slot::Narrow => {
                    parts.push(self.narrow(rng, attrs[j]));
                    j += 1;
                    continue;
                }
                Slot::Drawn => {}
            }
            let p = self.predicate(rng, attrs[j]);
            let roll = rng.u32(0..100);
            if roll < 12 && j + 1 < attrs.len() && slots[j + 1] == Slot::Drawn {
                let q = self.predicate(rng, attrs[j + 1]);
                parts.push(format!("({p} or {q})"));
                j += 2;
            } else if roll < 18 {
                parts.push(format!("not ({p})"));
                j += 1;
            } else {
                parts.push(parenthesized(p));
                j += 1;
            }
        }
        parts.join(" and ")
    }

    /// A conjunction with a negation share: each predicate negated with
    /// probability `share` (as `not (…)` over an always-defined
    /// attribute, atom-level elsewhere), 12 % of the slots paired with the
    /// next as `(p or q)`.
    fn shaped_conjunction(
        &self,
        rng: &mut fastrand::Rng,
        attrs: &[usize],
        slots: &[Slot],
        share: f64,
    ) -> String {
        let core = self.shape.always_defined;
        let one = |rng: &mut fastrand::Rng, j: usize| -> String {
            let i = attrs[j];
            let negated = rng.f64() < share;
            match (negated, slots[j]) {
                (false, Slot::Wide) => self.wide(rng, i),
                (false, Slot::Narrow) => self.narrow(rng, i),
                (false, Slot::Drawn) => self.positive(rng, i),
                (true, _) if i < core => format!("not ({})", self.positive(rng, i)),
                (true, _) => self.atom_negated(rng, i),
            }
        };
        let mut parts: Vec<String> = Vec::with_capacity(attrs.len());
        let mut j = 0;
        while j < attrs.len() {
            let pair = slots[j] == Slot::Drawn
                && j + 1 < attrs.len()
                && slots[j + 1] == Slot::Drawn
                && rng.u32(0..100) < 12;
            if pair {
                let p = one(rng, j);
                let q = one(rng, j + 1);
                parts.push(format!("({p} or {q})"));
                j += 2;
            } else {
                parts.push(parenthesized(one(rng, j)));
                j += 1;
            }
        }
        parts.join(" and ")
    }

    /// One event as a JSON object: the shape's count of attributes, the
    /// always-defined ones and the rest by popularity.
    pub fn event_json(&self, rng: &mut fastrand::Rng) -> String {
        let (lo, hi) = self.shape.event_attrs;
        let n = rng.usize(lo..=hi).min(self.attrs.len());
        let core = self.shape.always_defined;
        let mut picked: Vec<usize> = (0..core).collect();
        picked.extend(self.pick_attrs(rng, n.saturating_sub(core), core));
        let mut obj = serde_json::Map::new();
        for i in picked {
            let a = &self.attrs[i];
            let v = match a.domain.ty {
                AttrType::Bool => serde_json::Value::Bool(rng.f64() < a.p_true),
                AttrType::Int => serde_json::Value::from(rng.i64(0..a.card as i64)),
                AttrType::Str => {
                    serde_json::Value::from(Adtech::str_value(i, self.value_rank(a, rng)))
                }
                AttrType::IntList => {
                    let m = Adtech::len(rng, self.shape.lists.event);
                    serde_json::Value::from(
                        self.some_ranks(a, rng, m)
                            .into_iter()
                            .map(|r| r as i64)
                            .collect::<Vec<_>>(),
                    )
                }
                AttrType::StrList => {
                    let m = Adtech::len(rng, self.shape.lists.event);
                    serde_json::Value::from(
                        self.some_ranks(a, rng, m)
                            .into_iter()
                            .map(|r| Adtech::str_value(i, r))
                            .collect::<Vec<_>>(),
                    )
                }
                other => unreachable!("the adtech schema has no {other} attribute"),
            };
            obj.insert(a.domain.name.clone(), v);
        }
        serde_json::Value::Object(obj).to_string()
    }

    /// `count` expressions from `seed`: the texts [`Adtech::write_exprs`]
    /// writes, in memory.
    pub fn expressions(&self, count: usize, seed: u64) -> Vec<String> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..count).map(|_| self.expression(&mut rng)).collect()
    }

    /// `count` events from `seed` (those [`Adtech::write_events`] writes),
    /// parsed against `schema` (the one of [`Adtech::domains`]).
    pub fn events(&self, schema: &Schema, count: usize, seed: u64) -> Result<Vec<Event>> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..count)
            .map(|_| Event::from_json(schema, &self.event_json(&mut rng)))
            .collect()
    }

    /// Writes `count` expressions from `seed` as a reference expression
    /// file (the domain list first), one at a time.
    pub fn write_exprs<W: Write + ?Sized>(
        &self,
        out: &mut W,
        count: usize,
        seed: u64,
    ) -> io::Result<()> {
        out.write_all(reference::write_expr_file(&self.domains(), &[]).as_bytes())?;
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut line = String::new();
        for _ in 0..count {
            line.clear();
            reference::push_expr_term(&mut line, &self.expression(&mut rng));
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    }

    /// Writes `count` events from `seed`, one JSON object per line, one at
    /// a time.
    pub fn write_events<W: Write + ?Sized>(
        &self,
        out: &mut W,
        count: usize,
        seed: u64,
    ) -> io::Result<()> {
        let mut rng = fastrand::Rng::with_seed(seed);
        for _ in 0..count {
            let mut line = self.event_json(&mut rng);
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        Ok(())
    }
}

/// How one predicate of an expression is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// As the shape draws it.
    Drawn,
    /// Wide, over an always-defined attribute.
    Wide,
    /// Narrow.
    Narrow,
}

/// A range predicate (it contains `and`) in parentheses, so that `not` and
/// `or` around it bind as meant; other predicates as they are.
fn parenthesized(p: String) -> String {
    if p.contains(" and ") {
        format!("({p})")
    } else {
        p
    }
}
