//! Generated workloads beyond the reference benchmark: the ad-targeting
//! profile of issue 14 (`perfkit betree gen-exprs --profile adtech`).
//!
//! The schema is fixed (it does not depend on the seed), so expressions and
//! events generated with different seeds always fit together: 200
//! attributes, ranked by popularity, whose types cycle through bounded
//! integers, strings (10 to 10,000 distinct values), booleans, integer
//! lists and string lists. Attributes and values are drawn with Zipf
//! popularity (rank `r` has weight `1 / r^s`), so a few attributes appear in
//! most expressions and events and a few values dominate each attribute.
//!
//! * an expression has 3 to 10 predicates on distinct attributes, joined by
//!   `and`; some adjacent pairs are grouped as `(p or q)` and some
//!   predicates negated with `not`, so not every conjunct is indexable;
//!   integer predicates are mostly ranges (`a >= lo and a <= hi`, or one
//!   side), strings `=`/`in`/`not in`, lists `one of`/`none of`/membership.
//! * an event defines 40 to 120 attributes, chosen by popularity without
//!   replacement, and is written as one JSON object per line (the format
//!   `perfkit betree search --events-format json` reads).
//!
//! Both writers stream: one expression or event is built, written and
//! dropped at a time, so `--count 1000000` needs no more memory than 10.

use std::io::{self, Write};

use crate::domain::{AttrType, Bounds, Domain};
use crate::reference;

/// Number of attributes in the adtech schema.
pub const ADTECH_ATTRS: usize = 200;

/// Zipf exponent of attribute popularity.
const ATTR_SKEW: f64 = 0.8;
/// Zipf exponent of value popularity within an attribute.
const VALUE_SKEW: f64 = 1.0;
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
}

/// The ad-targeting workload: the fixed schema and its samplers.
#[derive(Debug, Clone)]
pub struct Adtech {
    attrs: Vec<Attr>,
    /// Popularity weight of each attribute (by rank).
    attr_weight: Vec<f64>,
    /// One value sampler per distinct cardinality, looked up by `card`.
    values: Vec<(usize, Zipf)>,
}

impl Default for Adtech {
    fn default() -> Self {
        Adtech::new()
    }
}

impl Adtech {
    /// The profile's schema and samplers.
    pub fn new() -> Adtech {
        let mut rng = fastrand::Rng::with_seed(LAYOUT_SEED);
        let attrs: Vec<Attr> = (0..ADTECH_ATTRS)
            .map(|i| {
                let ty = TYPE_CYCLE[i % TYPE_CYCLE.len()];
                let (name, card, bounds) = match ty {
                    AttrType::Int => {
                        let card = [100, 1_000, 10_000, 100_000][rng.usize(0..4)];
                        (format!("int_{i}"), card, Bounds::Int(0, card as i64 - 1))
                    }
                    AttrType::Str => {
                        let card = [10, 100, 1_000, 10_000][rng.usize(0..4)];
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
                values.push((a.card, Zipf::new(a.card, VALUE_SKEW)));
            }
        }
        let attr_weight = (1..=ADTECH_ATTRS)
            .map(|r| 1.0 / (r as f64).powf(ATTR_SKEW))
            .collect();
        Adtech {
            attrs,
            attr_weight,
            values,
        }
    }

    /// The schema's domains, every one allowing undefined.
    pub fn domains(&self) -> Vec<Domain> {
        self.attrs.iter().map(|a| a.domain.clone()).collect()
    }

    fn value_rank(&self, a: &Attr, rng: &mut fastrand::Rng) -> usize {
        let (_, z) = self
            .values
            .iter()
            .find(|(c, _)| *c == a.card)
            .expect("a sampler per cardinality");
        z.sample(rng)
    }

    /// `n` distinct attributes drawn by popularity without replacement
    /// (Efraimidis–Spirakis keys: the `n` largest `ln(u) / w`), returned
    /// in rank order so output is stable.
    fn pick_attrs(&self, rng: &mut fastrand::Rng, n: usize) -> Vec<usize> {
        let mut keyed: Vec<(f64, usize)> = self
            .attr_weight
            .iter()
            .enumerate()
            .map(|(i, w)| {
                // 1 - f64() is in (0, 1], so the log is finite.
                ((1.0 - rng.f64()).ln() / w, i)
            })
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

    /// One predicate on attribute `i`.
    fn predicate(&self, rng: &mut fastrand::Rng, i: usize) -> String {
        let a = &self.attrs[i];
        let name = &a.domain.name;
        match a.domain.ty {
            AttrType::Bool => {
                // Targeting mostly asks for the common side.
                if rng.f64() < a.p_true {
                    name.clone()
                } else {
                    format!("not {name}")
                }
            }
            AttrType::Int => {
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
            AttrType::Str => match rng.u32(0..10) {
                0..=2 => format!(
                    "{name} = \"{}\"",
                    Adtech::str_value(i, self.value_rank(a, rng))
                ),
                3..=7 => {
                    let m = rng.usize(2..=6);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} in ({})", self.list_text(i, a, &ranks))
                }
                _ => {
                    let m = rng.usize(1..=3);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} not in ({})", self.list_text(i, a, &ranks))
                }
            },
            AttrType::IntList | AttrType::StrList => match rng.u32(0..10) {
                0..=5 => {
                    let m = rng.usize(2..=5);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} one of ({})", self.list_text(i, a, &ranks))
                }
                6..=7 => {
                    let r = self.value_rank(a, rng);
                    format!("{} in {name}", self.list_text(i, a, &[r]))
                }
                _ => {
                    let m = rng.usize(1..=3);
                    let ranks = self.some_ranks(a, rng, m);
                    format!("{name} none of ({})", self.list_text(i, a, &ranks))
                }
            },
            other => unreachable!("the adtech schema has no {other} attribute"),
        }
    }

    /// One expression: 3 to 10 predicates on distinct attributes, a
    /// conjunction with some `or` pairs and some negations.
    pub fn expression(&self, rng: &mut fastrand::Rng) -> String {
        let k = rng.usize(3..=10);
        let mut attrs = self.pick_attrs(rng, k);
        rng.shuffle(&mut attrs);
        let mut parts: Vec<String> = Vec::with_capacity(k);
        let mut j = 0;
        while j < attrs.len() {
            let p = self.predicate(rng, attrs[j]);
            let roll = rng.u32(0..100);
            if roll < 12 && j + 1 < attrs.len() {
                let q = self.predicate(rng, attrs[j + 1]);
                parts.push(format!("({p} or {q})"));
                j += 2;
            } else if roll < 18 {
                parts.push(format!("not ({p})"));
                j += 1;
            } else {
                parts.push(if p.contains(" and ") {
                    format!("({p})")
                } else {
                    p
                });
                j += 1;
            }
        }
        parts.join(" and ")
    }

    /// One event as a JSON object: 40 to 120 attributes by popularity.
    pub fn event_json(&self, rng: &mut fastrand::Rng) -> String {
        let n = rng.usize(40..=120);
        let mut obj = serde_json::Map::new();
        for i in self.pick_attrs(rng, n) {
            let a = &self.attrs[i];
            let v = match a.domain.ty {
                AttrType::Bool => serde_json::Value::Bool(rng.f64() < a.p_true),
                AttrType::Int => serde_json::Value::from(rng.i64(0..a.card as i64)),
                AttrType::Str => {
                    serde_json::Value::from(Adtech::str_value(i, self.value_rank(a, rng)))
                }
                AttrType::IntList => {
                    let m = rng.usize(1..=6);
                    serde_json::Value::from(
                        self.some_ranks(a, rng, m)
                            .into_iter()
                            .map(|r| r as i64)
                            .collect::<Vec<_>>(),
                    )
                }
                AttrType::StrList => {
                    let m = rng.usize(1..=6);
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
