//! Drawing expressions: the predicates of each kind (drawn, negated, wide,
//! narrow) and the conjunctions of the adtech profile and of a shape with
//! a negation share.

use super::{Adtech, Attr};
use crate::domain::AttrType;

impl Adtech {
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
}

/// How much of a value's popularity a wide predicate covers.
const WIDE_MASS: f64 = 0.8;

/// The most values a wide set lists.
const WIDE_VALUES: usize = 16;

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
