//! Generated workloads beyond the reference benchmark: the ad-targeting
//! profile of issue 14 (`perfkit betree gen-exprs --profile adtech`), the
//! shapes issue 33's grid varies it into ([`Shape`], [`grid`]), and a shape
//! unlike both: few attributes, wide ranges, string equality and deep
//! negation ([`DeepNegation`]).
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

use std::io::{self, Write};

use crate::domain::{AttrType, Bounds, Domain};
use crate::{Event, Result, Schema, reference};

mod calibration;
mod negation;
mod popularity;
mod predicates;
mod shape;

pub use negation::{DEEP_INT_MAX, DEEP_INTS, DEEP_STR_VALUES, DEEP_STRS, DeepNegation};

use popularity::Zipf;
pub use shape::{GRID_ALWAYS_DEFINED, GRID_MATCH_RATE, ListSizes, MAX_ATTRS, Shape, grid};

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
        expressions(count, seed, |rng| self.expression(rng))
    }

    /// `count` events from `seed` (those [`Adtech::write_events`] writes),
    /// parsed against `schema` (the one of [`Adtech::domains`]).
    pub fn events(&self, schema: &Schema, count: usize, seed: u64) -> Result<Vec<Event>> {
        events(schema, count, seed, |rng| self.event_json(rng))
    }

    /// Writes `count` expressions from `seed` as a reference expression
    /// file (the domain list first), one at a time.
    pub fn write_exprs<W: Write + ?Sized>(
        &self,
        out: &mut W,
        count: usize,
        seed: u64,
    ) -> io::Result<()> {
        write_exprs(out, &self.domains(), count, seed, |rng| {
            self.expression(rng)
        })
    }

    /// Writes `count` events from `seed`, one JSON object per line, one at
    /// a time.
    pub fn write_events<W: Write + ?Sized>(
        &self,
        out: &mut W,
        count: usize,
        seed: u64,
    ) -> io::Result<()> {
        write_events(out, count, seed, |rng| self.event_json(rng))
    }
}

// The four methods both generators ([`Adtech`], [`DeepNegation`]) share,
// over each one's own `expression`, `event_json` and `domains`.

/// `count` texts of `expression` from one rng seeded with `seed`.
fn expressions(
    count: usize,
    seed: u64,
    mut expression: impl FnMut(&mut fastrand::Rng) -> String,
) -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count).map(|_| expression(&mut rng)).collect()
}

/// `count` objects of `event_json` from one rng seeded with `seed`, parsed
/// against `schema`.
fn events(
    schema: &Schema,
    count: usize,
    seed: u64,
    mut event_json: impl FnMut(&mut fastrand::Rng) -> String,
) -> Result<Vec<Event>> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..count)
        .map(|_| Event::from_json(schema, &event_json(&mut rng)))
        .collect()
}

/// Writes `domains` as a reference expression file's domain list, then
/// `count` texts of `expression` from one rng seeded with `seed`, one at a
/// time.
fn write_exprs<W: Write + ?Sized>(
    out: &mut W,
    domains: &[Domain],
    count: usize,
    seed: u64,
    mut expression: impl FnMut(&mut fastrand::Rng) -> String,
) -> io::Result<()> {
    out.write_all(reference::write_expr_file(domains, &[]).as_bytes())?;
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut line = String::new();
    for _ in 0..count {
        line.clear();
        reference::push_expr_term(&mut line, &expression(&mut rng));
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Writes `count` objects of `event_json` from one rng seeded with `seed`,
/// one per line, one at a time.
fn write_events<W: Write + ?Sized>(
    out: &mut W,
    count: usize,
    seed: u64,
    mut event_json: impl FnMut(&mut fastrand::Rng) -> String,
) -> io::Result<()> {
    let mut rng = fastrand::Rng::with_seed(seed);
    for _ in 0..count {
        let mut line = event_json(&mut rng);
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}
