//! The counting index: which predicates an event makes true, found by
//! value, and which expressions have every posted conjunct satisfied.
//!
//! * **Truth by value.** Every predicate whose truth is a function of one
//!   attribute's value through exact equality is registered under the
//!   values that make its positive form true: `=`/`<>`, `in`/`not in` and
//!   list membership under each value of their set, `one of`/`none of`
//!   under each element ([`Counting::lists`], one list of atoms per value).
//!   An event's value finds them with one hash probe (one per element for
//!   lists); the atoms found that some program tests
//!   ([`Counting::tested`]) are stamped per search, and evaluation then
//!   decides each registered predicate with one stamp test and, for the
//!   negated forms, the attribute's defined bit: no string or set
//!   comparison remains for them in the hot loop. Every atom of a small
//!   expression is registered; of a large one (see
//!   `index::LARGE_EXPR_BYTES`) only the top-level conjuncts, which the
//!   counting needs (the others are evaluated, so one long `or` costs no
//!   key per predicate). An atom stays registered until it is freed.
//! * **Counting.** Each expression posts its distinct top-level conjuncts
//!   of these kinds, as posting entries (slot and number of counted
//!   conjuncts packed in a `u32`):
//!   - a boolean, under the attribute ([`BOOL_TERM`]); an equality or `in`
//!     on a scalar attribute, under each of its values ([`KEY_TERM`]); a
//!     membership or `one of` on a list attribute, likewise, counted once
//!     per attribute however many elements hit it ([`LIST_TERM`]); an `or`
//!     of equalities and `in` sets on scalar attributes, under every
//!     branch's values, counted once ([`OR_TERM`]; a double hit can only
//!     make a candidate early). These
//!     are *counted*: a search walks the entries of the values the event
//!     holds, and an expression becomes a candidate when its count
//!     reaches its number of counted conjuncts;
//!   - an integer or float range, as a threshold in the attribute's sorted
//!     [`Thresholds`] ([`RANGE_TERM`]), a negated form, under the
//!     attribute ([`DEFINED_TERM`]), and a conjunct a hit makes false (a
//!     negated form again, `not` of a predicate decided by a hit, `not` of
//!     a boolean), under the key lists or boolean slot that make it false
//!     ([`NOT_TERM`]). These are true for most events, so they work the
//!     other way round: the search walks the entries the event makes
//!     *false* (the complement span of the thresholds; for an undefined
//!     attribute, its list of the expressions with such a conjunct on it,
//!     one entry each; the kill entries of the values it holds) and marks
//!     those expressions killed before counting. An expression whose posted conjuncts are all of
//!     this kind is *gated*: a candidate unless killed.
//!
//!   A counted conjunct on a common value (its postings far longer than
//!   the expression's rarest counted one's) is *checked* instead: not
//!   posted, and tested (a stamp or a boolean bit) once the expression's
//!   count completes ([`Counting::split_checks`]).
//!
//!   Expressions with nothing to post are on the scan list and always
//!   candidates. Every posted conjunct is necessary for the expression, so
//!   a true expression is never left out, and the full evaluation of each
//!   candidate keeps the C library's semantics exact.
//!
//! The values a predicate is registered under are read off it by [`keys`];
//! [`lists`] holds the atoms per value, [`thresholds`](mod@thresholds) the range
//! conjuncts' sorted thresholds, [`span`] what a probe found. The index's
//! work is split by what it does: [`registry`] registers atoms by value,
//! [`terms`] reads an expression's posted conjuncts, [`posting`] posts
//! and unposts them, [`probe`] finds what an event's value makes true or
//! false.

use crate::domain::{AttrId, Schema};
use crate::expr::Pred;

mod keys;
mod lists;
mod posting;
mod probe;
mod registry;
mod span;
mod terms;
mod thresholds;

use keys::{Key, list_key};
pub(crate) use lists::AtomLists;
use posting::settle_posts;
pub(crate) use span::{Span, SpanTerms};
use thresholds::Thresholds;

/// Marks a term that is a boolean bit slot rather than an atom.
pub(crate) const BOOL_TERM: u32 = 1 << 31;
/// Marks a conjunct that is a range predicate (by atom id), posted in its
/// attribute's thresholds rather than under a term.
pub(crate) const RANGE_TERM: u32 = 1 << 30;
/// Marks a conjunct that is an equality or `in` on a scalar attribute (by
/// atom id), posted in the key postings of each of its values: an event
/// has one value there, so the conjunct is hit at most once, and the
/// entries are read straight from the value's list.
pub(crate) const KEY_TERM: u32 = 1 << 29;
/// Marks a conjunct that is membership or `one of` on a list attribute
/// (by atom id), posted in the key postings of each of its values like a
/// [`KEY_TERM`]; an event list can hit it through several elements, so a
/// search counts it once per attribute (at most one such conjunct per
/// expression and attribute is posted).
pub(crate) const LIST_TERM: u32 = 1 << 28;
/// Marks a conjunct that is a negated form decided by value (`<>`, `not
/// in`, `none of`, negated membership), by attribute: false whenever the
/// attribute is undefined, so an event without it rules the expression out.
pub(crate) const DEFINED_TERM: u32 = 1 << 27;
/// Marks a conjunct that a hit makes false, by atom (flagged
/// [`BOOL_TERM`]: by boolean slot): a negated form decided by value (`<>`,
/// `not in`, `none of`, negated membership; besides its [`DEFINED_TERM`]),
/// `not` of a predicate decided by a hit, `not` of a boolean, or (flagged
/// [`RANGE_TERM`] too) `not` of an integer range, kept as its complement's
/// threshold (see `AttrKeys::not_lo`; that took the grid's six points
/// with 8-15 predicates and 40 % negations from 2.70-2.75 candidates per
/// match to 1.65-1.68). Like a
/// range it is true for most events, so the expressions are posted under
/// the values (key lists, boolean slots) that make it false and *killed*
/// when the event holds one; not killed, the conjunct is true and is not
/// evaluated again. On the ad-targeting profile at 100k expressions this
/// took the candidates per event from 4,962 to 3,951 (2,124 matches).
pub(crate) const NOT_TERM: u32 = 1 << 26;
/// Marks a branch of a top-level `or` conjunct each of whose branches an
/// event can hit (by atom, or [`BOOL_TERM`] and slot): an atom decided by
/// a hit (an equality, `in` set, membership or `one of`), a boolean, or an
/// `and` of conjuncts one of which is such, standing for the branch (true
/// whenever the branch is). The expression is posted in the key postings
/// of every branch's values, or a boolean's posting, like a [`KEY_TERM`],
/// and the conjunct counted once, on its first branch; the others carry
/// [`OR_MORE`] and are not counted. An event hitting two branches counts
/// the conjunct twice, which can only make the expression a candidate
/// early (it is evaluated, and never [`PROVEN_BIT`]), never leave a true
/// one out. Without it an expression `(p or q)` alone was on the scan
/// list, a candidate of every event: on the workload grid's points with
/// 2-4 predicates, most of the candidates that did not match. Branches of
/// booleans, list attributes and `and`s took the grid's attrs=400
/// zipf=0.6 preds=2-4 neg=0% point from 2.55 candidates per match to
/// 1.92 (`betree bench --sweep`).
pub(crate) const OR_TERM: u32 = 1 << 25;
/// Marks an [`OR_TERM`] branch after the first: posted, not counted.
pub(crate) const OR_MORE: u32 = 1 << 24;
/// A counted conjunct (a boolean, an equality or `in` on a scalar, a list
/// conjunct) whose postings hold more than this many times the entries of
/// the expression's shortest counted one's (taken as 1 if empty), when
/// the expression is inserted, is checked instead of counted: see
/// [`Counting::split_checks`].
pub(crate) const CHECK_RATIO: usize = 16;
/// The conjuncts of one expression the selection checks rather than
/// counts ([`Counting::split_checks`]): up to two, each an atom decided
/// by a hit (tested by its stamp) or [`BOOL_TERM`] and a boolean slot
/// (tested in the event's bits), [`NO_CHECK`] for none.
pub(crate) type Checks = [u32; 2];
/// An empty place of [`Checks`]: above every atom and flagged slot.
pub(crate) const NO_CHECK: u32 = u32::MAX;
/// The [`Checks`] of an expression with none.
pub(crate) const NO_CHECKS: Checks = [NO_CHECK; 2];
/// The most branches of an `or` conjunct posted as [`OR_TERM`]s.
const OR_BRANCHES: usize = 4;
/// Key lists at or above this are not kept in a decision word.
const ONE_LIST_MAX: u32 = (1 << 30) - 1;
/// The flags of a term.
const TERM_FLAGS: u32 = BOOL_TERM | RANGE_TERM | KEY_TERM | LIST_TERM | DEFINED_TERM | NOT_TERM;

/// The branch of an [`OR_TERM`] (an atom, or [`BOOL_TERM`] and a boolean
/// slot) and whether it is an [`OR_MORE`], or `None` for a term of another
/// kind. Those carry one of [`TERM_FLAGS`] other than [`BOOL_TERM`] above
/// their atom or slot, or are a plain boolean term, whose slot stays below
/// [`OR_MORE`] (see [`Counting::conjunct_terms`]); an `or` branch carries
/// none of them (its atoms and slots are below [`OR_MORE`]).
fn or_term(t: u32) -> Option<(u32, bool)> {
    (t & (TERM_FLAGS & !BOOL_TERM) == 0 && t & OR_TERM != 0)
        .then_some((t & !(OR_TERM | OR_MORE), t & OR_MORE != 0))
}

/// Bits of a posting entry holding the expression's number of indexed
/// conjuncts; [`PROVEN_BIT`] and [`CHECK_BIT`] sit above them, the slot
/// above those.
const NEED_BITS: u32 = 6;
/// The bit of a posting entry set when the expression's selection proves
/// it (its jump program is constant `true`, see [`Counting::proven`]).
const PROVEN_BIT: u32 = 1 << NEED_BITS;
/// The bit of a posting entry set when the expression has conjuncts to
/// check ([`Counting::split_checks`]): the count that completes reads it
/// off the entry, where reading the slot's [`Checks`] for every completed
/// count missed the cache (a third of the selection's samples on grid
/// point 13 at 100k expressions).
pub(crate) const CHECK_BIT: u32 = PROVEN_BIT << 1;
/// Where the slot starts in a posting entry.
const SLOT_SHIFT: u32 = NEED_BITS + 2;
/// The most indexed conjuncts one expression posts.
pub(crate) const MAX_NEED: usize = (1 << NEED_BITS) - 1;
/// Slots at or above this (16,777,216) cannot be packed in a posting
/// entry; such expressions go to the scan list.
pub(crate) const MAX_POSTED_SLOT: u32 = 1 << (32 - SLOT_SHIFT);
/// Flag of a candidate (in [`Counting::gated`] and a selection's
/// candidates) that its selection proves: it matches with no evaluation.
/// Slots stay below it.
pub(crate) const PROVEN: u32 = 1 << 31;

/// How evaluation decides an atom.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decided {
    /// Not registered: the predicate is evaluated.
    No,
    /// True exactly when a search hit it.
    Hit,
    /// True exactly when its attribute is defined and a search did not hit
    /// it (`<>`, `not in`, `none of`, negated membership).
    Miss(AttrId),
}

impl Decided {
    /// The 4-byte word [`Counting::decided`] stores (an enum took 8). A
    /// `Hit` word of an atom with one value has that value's key list + 1
    /// in its upper 30 bits (0: look the values up), set by
    /// [`Counting::register`].
    fn word(self) -> u32 {
        match self {
            Decided::No => 0,
            Decided::Hit => 1,
            Decided::Miss(attr) => 2 | (attr << 2),
        }
    }
}

/// A key table's entry: a key list and its value's tag, the value itself
/// when it fits in 32 bits (an interned string's number, an integer in
/// `0..u32::MAX`), else [`KeyTag::LOOK`]: the value is then read off the
/// list.
#[derive(Debug, Clone, Copy)]
struct KeyTag {
    list: u32,
    tag: u32,
}

impl KeyTag {
    /// The tag of a value that does not fit.
    const LOOK: u32 = u32::MAX;

    fn tag(k: Key) -> u32 {
        match k {
            // Never `LOOK`: that is `UNKNOWN`, which no literal is.
            Key::Str(id) => id,
            Key::Int(v) => u32::try_from(v).unwrap_or(Self::LOOK),
        }
    }

    fn new(list: u32, k: Key) -> KeyTag {
        KeyTag {
            list,
            tag: Self::tag(k),
        }
    }

    /// Whether this is the entry of value `k`.
    #[inline]
    fn is(&self, k: Key, lists: &AtomLists, preds: &[Option<Pred>]) -> bool {
        let tag = Self::tag(k);
        self.tag == tag && (tag != Self::LOOK || list_key(lists, self.list, preds) == k)
    }
}

/// The registered predicates of one attribute.
#[derive(Debug, Clone)]
pub(crate) struct AttrKeys {
    /// The key lists (in [`Counting::lists`]) of the attribute's values,
    /// by the value's hash, each with its value's [`KeyTag`]. A value
    /// whose tag is exact is found from the table alone; another one is
    /// read off its list's first atom ([`keys::list_key`]). Reading every
    /// value that way (the table held list ids only) cost a cache miss or
    /// two a probe: `list_key` was 10.8 % of a 1M-expression build's
    /// samples and 6 % of a 100k-expression search's on the adtech
    /// profile. A map from value to list took 17 bytes a bucket; this
    /// takes 9.
    keys: hashbrown::HashTable<KeyTag>,
    /// Integer thresholds, lower and upper side.
    int_lo: Thresholds<i64>,
    int_hi: Thresholds<i64>,
    /// Float thresholds, lower and upper side.
    flt_lo: Thresholds<f64>,
    flt_hi: Thresholds<f64>,
    /// The negated integer range conjuncts (`not (x >= v)`), as the range
    /// of their complement on a defined value (`x < v`), lower and upper
    /// side: a value makes the conjunct false exactly where it makes the
    /// complement false, and an undefined attribute makes it true, so they
    /// are killed like ranges but never for an undefined attribute.
    not_lo: Thresholds<i64>,
    not_hi: Thresholds<i64>,
    /// Posting entries, one per expression, of the expressions with a
    /// [`RANGE_TERM`] or [`DEFINED_TERM`] on this attribute: an event that
    /// leaves the attribute undefined kills exactly these. Walking the
    /// thresholds instead met a two-sided range twice, and ~70 % of the
    /// kills on the ad-targeting profile are for undefined attributes.
    undef: Vec<u32>,
    /// Registered atoms and posted boolean terms of this attribute: while
    /// non-zero the attribute is probed.
    uses: usize,
}

impl Default for AttrKeys {
    fn default() -> Self {
        AttrKeys {
            keys: hashbrown::HashTable::new(),
            int_lo: Thresholds::new(false),
            int_hi: Thresholds::new(true),
            flt_lo: Thresholds::new(false),
            flt_hi: Thresholds::new(true),
            not_lo: Thresholds::new(false),
            not_hi: Thresholds::new(true),
            undef: Vec::new(),
            uses: 0,
        }
    }
}

/// The counting index (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct Counting {
    /// Per attribute id.
    pub(crate) attrs: Vec<AttrKeys>,
    /// Attributes with `uses > 0`, ascending: what a search probes.
    pub(crate) probes: Vec<AttrId>,
    /// Key lists: the atoms registered under one value; emptied ones are
    /// reused (positions in `free_lists`).
    pub(crate) lists: AtomLists,
    /// Per key list (same numbers as `lists`): its atoms that a jump
    /// program has tested by stamp since they were registered, the only
    /// ones a search stamps. At 1M ad-targeting expressions 27 % of the
    /// atoms an event's values hit are tested; the rest are conjuncts the
    /// selection proves.
    pub(crate) tested: AtomLists,
    /// A bit per atom id (up to the highest one so far): in its key lists'
    /// `tested` lists.
    stamped: Vec<u64>,
    /// Per key list: the posting entries of the expressions with a
    /// [`KEY_TERM`] conjunct registered under that value.
    pub(crate) key_post: Vec<Vec<u32>>,
    /// Per key list: the entries of its posting, those still waiting in
    /// `pending_posts` included: what a search that hits the value walks,
    /// read when an expression's checked conjuncts are chosen
    /// ([`Counting::split_checks`]).
    key_posted: Vec<u32>,
    /// Per slot: the conjuncts the selection checks rather than counts
    /// ([`Checks`]; [`NO_CHECKS`] for none, and for slots not posted).
    pub(crate) checks: Vec<Checks>,
    free_lists: Vec<u32>,
    /// Per atom id: how evaluation decides it, as [`Decided::word`]s.
    decided: Vec<u32>,
    /// Hashes the values of [`AttrKeys::keys`].
    hasher: hashbrown::DefaultHashBuilder,
    /// Whether new thresholds wait unmerged and new key postings wait
    /// unposted (see [`Counting::defer`]).
    defer: bool,
    /// Key posting entries waiting while `defer` is on, as (key list,
    /// entry), for [`Counting::key_post`] and [`Counting::key_kill`]. An
    /// entry pushed straight onto its list misses the cache twice at 1M
    /// expressions (the list's header among millions, then its tail);
    /// these are appended in order and moved to their lists once, sorted
    /// by list.
    pending_posts: Vec<(u32, u32)>,
    pending_kills: Vec<(u32, u32)>,
    /// Per key list: the posting entries of the expressions with a
    /// [`NOT_TERM`] conjunct on an atom registered under that value.
    pub(crate) key_kill: Vec<Vec<u32>>,
    /// Per boolean slot: its posting.
    pub(crate) bool_post: Vec<Vec<u32>>,
    /// Per boolean slot: the posting entries of the expressions with a
    /// conjunct `not` that boolean.
    pub(crate) bool_kill: Vec<Vec<u32>>,
    /// Per boolean slot: its attribute.
    bool_attr: Vec<AttrId>,
    /// Slots of expressions with no indexed conjunct.
    pub(crate) scan: Vec<u32>,
    /// Slots of expressions none of whose indexed conjuncts is counted by
    /// a hit (ranges, definedness, kills): a candidate unless one of them
    /// is found false.
    pub(crate) gated: Vec<u32>,
}

impl Counting {
    /// An empty counting index over `schema`.
    pub(crate) fn new(schema: &Schema) -> Counting {
        let mut bool_attr = vec![0; schema.bool_count() as usize];
        for a in 0..schema.len() as AttrId {
            if let Some(s) = schema.bool_slot(a) {
                bool_attr[s as usize] = a;
            }
        }
        Counting {
            attrs: vec![AttrKeys::default(); schema.len()],
            bool_post: vec![Vec::new(); schema.bool_count() as usize],
            bool_kill: vec![Vec::new(); schema.bool_count() as usize],
            bool_attr,
            ..Counting::default()
        }
    }

    /// With `on`, new range thresholds wait unmerged, however many, so
    /// that a bulk load merges each side once instead of every
    /// `max(128, √n)` thresholds, and new key posting entries wait in
    /// [`Counting::pending_posts`]; turning it off merges and posts them
    /// all. A search must not run while anything waits
    /// ([`Counting::is_settled`]).
    pub(crate) fn defer(&mut self, on: bool) {
        self.defer = on;
        if !on {
            settle_posts(&mut self.pending_posts, &mut self.key_post);
            settle_posts(&mut self.pending_kills, &mut self.key_kill);
            for k in &mut self.attrs {
                k.int_lo.settle();
                k.int_hi.settle();
                k.flt_lo.settle();
                k.flt_hi.settle();
                k.not_lo.settle();
                k.not_hi.settle();
            }
        }
    }

    /// Whether new thresholds and key postings wait (see
    /// [`Counting::defer`]).
    pub(crate) fn deferring(&self) -> bool {
        self.defer
    }

    /// Whether no key posting entry waits for its list (see
    /// [`Counting::defer`]; turning deferral off posts them all).
    pub(crate) fn is_settled(&self) -> bool {
        self.pending_posts.is_empty() && self.pending_kills.is_empty()
    }

    /// Range thresholds not merged into their runs yet.
    #[cfg(test)]
    pub(crate) fn pending_thresholds(&self) -> usize {
        self.attrs
            .iter()
            .map(|k| {
                k.int_lo.pending()
                    + k.int_hi.pending()
                    + k.flt_lo.pending()
                    + k.flt_hi.pending()
                    + k.not_lo.pending()
                    + k.not_hi.pending()
            })
            .sum()
    }

    /// Hints the cache at atom `a`'s decision word.
    #[inline]
    pub(crate) fn prefetch_decided(&self, a: u32) {
        crate::prefetch::prefetch_at(&self.decided, a as usize);
    }

    /// How evaluation decides atom `a`.
    #[inline]
    pub(crate) fn decided(&self, a: u32) -> Decided {
        // Sized up to the highest atom registered so far: atoms past it
        // are not registered.
        let w = self.decided.get(a as usize).copied().unwrap_or(0);
        match w & 3 {
            0 => Decided::No,
            1 => Decided::Hit,
            _ => Decided::Miss(w >> 2),
        }
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let vecs = |v: &Vec<Vec<u32>>| {
            v.capacity() * size_of::<Vec<u32>>() + v.iter().map(|x| x.capacity() * 4).sum::<usize>()
        };
        let mut n = self.attrs.capacity() * size_of::<AttrKeys>();
        for k in &self.attrs {
            n += k.keys.capacity() * (size_of::<KeyTag>() + 1);
            n += k.int_lo.heap_bytes() + k.int_hi.heap_bytes() + k.undef.capacity() * 4;
            n += k.flt_lo.heap_bytes() + k.flt_hi.heap_bytes();
            n += k.not_lo.heap_bytes() + k.not_hi.heap_bytes();
        }
        n += self.lists.heap_bytes() + self.tested.heap_bytes() + self.stamped.capacity() * 8;
        n += self.probes.capacity() * 4 + self.free_lists.capacity() * 4;
        n += self.decided.capacity() * 4;
        n += vecs(&self.bool_post) + vecs(&self.key_post) + self.key_posted.capacity() * 4;
        n += self.checks.capacity() * size_of::<Checks>();
        n += vecs(&self.bool_kill) + vecs(&self.key_kill);
        n += (self.pending_posts.capacity() + self.pending_kills.capacity()) * 8;
        n += self.bool_attr.capacity() * 4 + (self.scan.capacity() + self.gated.capacity()) * 4;
        n
    }

    /// Registered thresholds of an attribute (for tests).
    #[cfg(test)]
    pub(crate) fn threshold_count(&self, attr: AttrId) -> usize {
        let k = &self.attrs[attr as usize];
        k.int_lo.len()
            + k.int_hi.len()
            + k.flt_lo.len()
            + k.flt_hi.len()
            + k.not_lo.len()
            + k.not_hi.len()
    }
}

/// Splits a posting entry into slot and need.
#[inline]
pub(crate) fn entry_parts(e: u32) -> (u32, u32) {
    (e >> SLOT_SHIFT, e & ((1 << NEED_BITS) - 1))
}

/// The candidate a posting entry's count completes: its slot, flagged
/// [`PROVEN`] when the selection proves it.
#[inline]
pub(crate) fn entry_candidate(e: u32) -> u32 {
    (e >> SLOT_SHIFT) | ((e & PROVEN_BIT) << (31 - NEED_BITS))
}
