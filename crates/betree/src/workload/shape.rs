//! The parameters a generated workload varies ([`Shape`]) and issue 33's
//! grid of them: what is generated, apart from how it is drawn.

use std::fmt;

use super::ADTECH_ATTRS;
use crate::{Error, Result};

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
