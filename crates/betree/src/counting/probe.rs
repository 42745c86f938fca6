//! What one event's attribute value finds: the key lists, threshold spans
//! and kill entries a search walks. The read side of the index, on the
//! hot path of every search.

use super::keys::Key;
use super::span::{Span, SpanTerms};
use super::thresholds::thresholds;
use super::{BOOL_TERM, Counting};
use crate::domain::{AttrId, Schema};
use crate::event::{Event, Value};
use crate::expr::Pred;
use crate::strings::{EventStrings, UNKNOWN};

impl Counting {
    /// The posting of a boolean term.
    #[inline]
    pub(crate) fn posting(&self, t: u32) -> &[u32] {
        &self.bool_post[(t & !BOOL_TERM) as usize]
    }

    /// Finds what the value of attribute `attr` in `ev` makes true: pushes
    /// whole key lists and threshold spans to `spans`, single terms
    /// (booleans) to `loose` and the entries of recent thresholds to
    /// `loose` too, as spans of entries. `elem` is the list element to look
    /// up for list values; `strs` holds the event's strings as numbers.
    /// One unit of work.
    ///
    /// Range conjuncts work the other way round: they are true for most
    /// values, so what is pushed (to `kills`) is the entries of the
    /// thresholds the value makes *false*; when the attribute is
    /// undefined, its expressions with a range or negated conjunct on it,
    /// once each.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn probe(
        &self,
        ev: &Event,
        strs: &EventStrings,
        attr: AttrId,
        elem: usize,
        spans: &mut Vec<Span>,
        kills: &mut Vec<Span>,
        loose: &mut Vec<u32>,
        schema: &Schema,
        preds: &[Option<Pred>],
    ) {
        let k = &self.attrs[attr as usize];
        // A list element: its atoms are stamped, and the expressions come
        // from the value's entries, counted once per attribute.
        let keys = |l: Option<u32>, spans: &mut Vec<Span>, kills: &mut Vec<Span>| {
            if let Some(l) = l {
                if self.key_kill.get(l as usize).is_some_and(|p| !p.is_empty()) {
                    kills.push(Span::KeyKills(l));
                }
                spans.push(Span::Stamp(l));
                if self.key_post.get(l as usize).is_some_and(|p| !p.is_empty()) {
                    spans.push(Span::ListEntries(l, attr));
                }
            }
        };
        // A scalar value: its atoms are only stamped (none posts under
        // itself), and the expressions come from the value's entries.
        let scalar = |l: Option<u32>, spans: &mut Vec<Span>, kills: &mut Vec<Span>| {
            if let Some(l) = l {
                if self.key_kill.get(l as usize).is_some_and(|p| !p.is_empty()) {
                    kills.push(Span::KeyKills(l));
                }
                spans.push(Span::Stamp(l));
                if self.key_post.get(l as usize).is_some_and(|p| !p.is_empty()) {
                    spans.push(Span::KeyEntries(l));
                }
            }
        };
        match ev.get(attr) {
            Some(Value::Bool(true)) => {
                let slot = schema
                    .bool_slot(attr)
                    .expect("a boolean attribute has a slot");
                if !self.bool_post[slot as usize].is_empty() {
                    spans.push(Span::Loose(loose.len() as u32, loose.len() as u32 + 1));
                    loose.push(BOOL_TERM | slot);
                }
                if !self.bool_kill[slot as usize].is_empty() {
                    kills.push(Span::BoolKills(slot));
                }
            }
            Some(Value::Int(x)) => {
                scalar(self.find_list(attr, Key::Int(*x), preds), spans, kills);
                thresholds(&k.int_lo, Some(*x), attr, 0, kills, loose);
                thresholds(&k.int_hi, Some(*x), attr, 1, kills, loose);
                thresholds(&k.not_lo, Some(*x), attr, 4, kills, loose);
                thresholds(&k.not_hi, Some(*x), attr, 5, kills, loose);
            }
            Some(Value::Float(x)) => {
                // NaN satisfies no comparison.
                let x = Some(*x).filter(|x| !x.is_nan());
                thresholds(&k.flt_lo, x, attr, 2, kills, loose);
                thresholds(&k.flt_hi, x, attr, 3, kills, loose);
            }
            // Every range and negated conjunct on the attribute is false:
            // their expressions, once each.
            None if !k.undef.is_empty() => kills.push(Span::Undefined(attr)),
            // An event string no expression names has no key list.
            Some(Value::Str(_)) => scalar(
                Some(strs.scalar(attr))
                    .filter(|&s| s != UNKNOWN)
                    .and_then(|s| self.find_list(attr, Key::Str(s), preds)),
                spans,
                kills,
            ),
            Some(Value::IntList(l)) => keys(
                l.get(elem)
                    .and_then(|x| self.find_list(attr, Key::Int(*x), preds)),
                spans,
                kills,
            ),
            // The numbered list is sorted and may be shorter (strings no
            // expression names are left out): each element is still
            // probed once, at its own position.
            Some(Value::StrList(_)) => keys(
                strs.list(attr)
                    .get(elem)
                    .and_then(|&x| self.find_list(attr, Key::Str(x), preds)),
                spans,
                kills,
            ),
            _ => {}
        }
    }

    /// The terms or posting entries of a span.
    #[inline]
    pub(crate) fn span_terms<'a>(&'a self, span: Span, loose: &'a [u32]) -> SpanTerms<'a> {
        match span {
            Span::Stamp(l) => SpanTerms::Stamp(self.tested.get(l)),
            Span::KeyEntries(l) => SpanTerms::Entries(&self.key_post[l as usize]),
            Span::ListEntries(l, _) => SpanTerms::Entries(&self.key_post[l as usize]),
            Span::Undefined(attr) => SpanTerms::Entries(&self.attrs[attr as usize].undef),
            Span::KeyKills(l) => SpanTerms::Entries(&self.key_kill[l as usize]),
            Span::BoolKills(slot) => SpanTerms::Entries(&self.bool_kill[slot as usize]),
            Span::Loose(a, b) => SpanTerms::Bools(&loose[a as usize..b as usize]),
            Span::LooseEntries(a, b) => SpanTerms::Entries(&loose[a as usize..b as usize]),
            Span::Run {
                attr,
                side,
                start,
                end,
            } => {
                let k = &self.attrs[attr as usize];
                let entries = match side {
                    0 => &k.int_lo.entries,
                    1 => &k.int_hi.entries,
                    2 => &k.flt_lo.entries,
                    3 => &k.flt_hi.entries,
                    4 => &k.not_lo.entries,
                    _ => &k.not_hi.entries,
                };
                SpanTerms::Entries(&entries[start as usize..end as usize])
            }
        }
    }
}
