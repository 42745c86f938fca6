//! What a probe found: runs of terms or posting entries, by position.

use crate::domain::AttrId;

/// A run of terms a probe found, by position so that it can sit in
/// reusable scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Span {
    /// A key list whose atoms are only stamped.
    Stamp(u32),
    /// The posting entries of a key list.
    KeyEntries(u32),
    /// The posting entries of a key list of a list attribute, and the
    /// attribute: its entries count once per expression (see
    /// [`LIST_TERM`](super::LIST_TERM)).
    ListEntries(u32, AttrId),
    /// Part of a sorted threshold run: side 0/1 integer lower/upper, 2/3
    /// float lower/upper, 4/5 negated integer ranges' complements,
    /// lower/upper.
    Run {
        attr: AttrId,
        side: u8,
        start: u32,
        end: u32,
    },
    /// Boolean terms in the selection's `loose` list.
    Loose(u32, u32),
    /// The [`DEFINED_TERM`](super::DEFINED_TERM) entries of an undefined attribute.
    Undefined(AttrId),
    /// The [`NOT_TERM`](super::NOT_TERM) entries of a key list the event
    /// hit: their negated conjuncts are false.
    KeyKills(u32),
    /// The [`NOT_TERM`](super::NOT_TERM) entries of a boolean slot the
    /// event sets true.
    BoolKills(u32),
    /// Posting entries in the selection's `loose` list.
    LooseEntries(u32, u32),
}

/// What a [`Span`] holds: terms, whose postings are walked, or posting
/// entries themselves.
pub(crate) enum SpanTerms<'a> {
    Bools(&'a [u32]),
    Stamp(&'a [u32]),
    Entries(&'a [u32]),
}

impl SpanTerms<'_> {
    /// Number of terms or entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            SpanTerms::Bools(a) | SpanTerms::Stamp(a) | SpanTerms::Entries(a) => a.len(),
        }
    }

    /// Calls `f` on entries `from..to` (spans of entries only).
    #[inline]
    pub(crate) fn each_entry(&self, from: usize, to: usize, mut f: impl FnMut(u32)) {
        match self {
            SpanTerms::Bools(_) | SpanTerms::Stamp(_) => unreachable!("a span of terms"),
            SpanTerms::Entries(a) => a[from..to].iter().for_each(|&e| f(e)),
        }
    }
}
