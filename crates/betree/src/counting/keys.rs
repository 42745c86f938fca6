//! The values a predicate decided by value is registered under, read off
//! the predicate itself.

use super::AtomLists;
use crate::domain::AttrId;
use crate::expr::Pred;
use crate::parse::{CmpOp, SetOp};
use crate::strings::StrId;

/// One value a predicate is registered under: an integer, or a string's
/// interned number (a key table holds one attribute's keys, so the two
/// never meet).
#[derive(Debug, Clone, Copy, PartialEq, Hash)]
pub(super) enum Key {
    Int(i64),
    Str(StrId),
}

/// Value `i` of a registered predicate (in the order [`keys_of`] gives
/// them), without building the list of them.
pub(super) fn key_at(p: &Pred, i: usize) -> Key {
    match p {
        Pred::IntCmp { v, .. } | Pred::IntListHas { v, .. } => Key::Int(*v),
        Pred::IntIn { set, .. } | Pred::IntSet { set, .. } => Key::Int(set[i]),
        Pred::StrCmp { v, .. } | Pred::StrListHas { v, .. } => Key::Str(*v),
        Pred::StrIn { set, .. } | Pred::StrSet { set, .. } => Key::Str(set[i]),
        _ => unreachable!("only predicates decided by value are registered"),
    }
}

/// Where value `k` sits among the values of registered predicate `p`
/// (which has it).
pub(super) fn key_index(p: &Pred, k: Key) -> u32 {
    let i = match (p, k) {
        (Pred::IntIn { set, .. } | Pred::IntSet { set, .. }, Key::Int(v)) => set.binary_search(&v),
        (Pred::StrIn { set, .. } | Pred::StrSet { set, .. }, Key::Str(v)) => set.binary_search(&v),
        _ => Ok(0),
    };
    i.expect("a list's atoms are registered under its value") as u32
}

/// What a registered predicate is keyed by.
pub(super) enum Keys<'a> {
    Ints(&'a [i64]),
    Strs(&'a [StrId]),
    Int { upper: bool, v: i64, strict: bool },
    Float { upper: bool, v: f64, strict: bool },
}

impl Keys<'_> {
    /// How many values (none for a threshold).
    pub(super) fn len(&self) -> usize {
        match self {
            Keys::Ints(vs) => vs.len(),
            Keys::Strs(vs) => vs.len(),
            Keys::Int { .. } | Keys::Float { .. } => 0,
        }
    }
}

/// The value of key list `l` (not empty): its first atom's, at the
/// recorded position.
#[inline]
pub(super) fn list_key(lists: &AtomLists, l: u32, preds: &[Option<Pred>]) -> Key {
    let atom = lists.get(l)[0];
    let p = preds[atom as usize]
        .as_ref()
        .expect("listed atoms are live");
    key_at(p, lists.first_key[l as usize] as usize)
}

/// The attribute and threshold of a range predicate, or `None`.
pub(super) fn range_of(p: &Pred) -> Option<(AttrId, Keys<'_>)> {
    match keys_of(p) {
        Some((attr, k @ (Keys::Int { .. } | Keys::Float { .. }), true)) => Some((attr, k)),
        _ => None,
    }
}

/// The attribute, keys and polarity of a predicate that can be decided by
/// value, or `None`.
pub(super) fn keys_of(p: &Pred) -> Option<(AttrId, Keys<'_>, bool)> {
    use CmpOp::*;
    let side = |op: CmpOp| match op {
        Lt => Some((true, true)),
        Le => Some((true, false)),
        Gt => Some((false, true)),
        Ge => Some((false, false)),
        Eq | Ne => None,
    };
    Some(match p {
        Pred::IntCmp { attr, op, v } => match op {
            Eq => (*attr, Keys::Ints(std::slice::from_ref(v)), true),
            Ne => (*attr, Keys::Ints(std::slice::from_ref(v)), false),
            _ => {
                let (upper, strict) = side(*op)?;
                (
                    *attr,
                    Keys::Int {
                        upper,
                        v: *v,
                        strict,
                    },
                    true,
                )
            }
        },
        // `=` and `<>` on floats go through an epsilon (`feq`): evaluated.
        Pred::FloatCmp { attr, op, v } if !v.is_nan() => {
            let (upper, strict) = side(*op)?;
            (
                *attr,
                Keys::Float {
                    upper,
                    v: *v,
                    strict,
                },
                true,
            )
        }
        Pred::StrCmp { attr, eq, v } => (*attr, Keys::Strs(std::slice::from_ref(v)), *eq),
        Pred::IntIn { attr, negated, set } => (*attr, Keys::Ints(set), !negated),
        Pred::StrIn { attr, negated, set } => (*attr, Keys::Strs(set), !negated),
        Pred::IntListHas { attr, negated, v } => {
            (*attr, Keys::Ints(std::slice::from_ref(v)), !negated)
        }
        Pred::StrListHas { attr, negated, v } => {
            (*attr, Keys::Strs(std::slice::from_ref(v)), !negated)
        }
        Pred::IntSet { attr, op, set } if *op != SetOp::AllOf => {
            (*attr, Keys::Ints(set), *op == SetOp::OneOf)
        }
        Pred::StrSet { attr, op, set } if *op != SetOp::AllOf => {
            (*attr, Keys::Strs(set), *op == SetOp::OneOf)
        }
        _ => return None,
    })
}
