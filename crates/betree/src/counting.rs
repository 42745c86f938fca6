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
//!   Expressions with nothing to post are on the scan list and always
//!   candidates. Every posted conjunct is necessary for the expression, so
//!   a true expression is never left out, and the full evaluation of each
//!   candidate keeps the C library's semantics exact.
//!
//! The values a predicate is registered under are read off it by [`keys`];
//! [`lists`] holds the atoms per value, [`thresholds`](mod@thresholds) the range
//! conjuncts' sorted thresholds, [`span`] what a probe found.

use std::hash::BuildHasher;

use crate::domain::{AttrId, Schema};
use crate::event::{Event, Value};
use crate::expr::{Expr, Pred};
use crate::parse::Node;
use crate::strings::{EventStrings, UNKNOWN};

mod keys;
mod lists;
mod span;
mod thresholds;

use keys::{Key, Keys, key_at, key_index, keys_of, list_key, range_of};
pub(crate) use lists::AtomLists;
pub(crate) use span::{Span, SpanTerms};
use thresholds::{Thresholds, thresholds};

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
/// conjuncts; [`PROVEN_BIT`] sits above them, the slot above it.
const NEED_BITS: u32 = 6;
/// The bit of a posting entry set when the expression's selection proves
/// it (its jump program is constant `true`, see [`Counting::proven`]).
const PROVEN_BIT: u32 = 1 << NEED_BITS;
/// Where the slot starts in a posting entry.
const SLOT_SHIFT: u32 = NEED_BITS + 1;
/// The most indexed conjuncts one expression posts.
pub(crate) const MAX_NEED: usize = (1 << NEED_BITS) - 1;
/// Slots at or above this cannot be packed in a posting entry; such
/// expressions go to the scan list.
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

    /// Posts `entry` in key list `l`'s posting ([`Counting::key_post`]),
    /// or with `kill` its kill entries ([`Counting::key_kill`]); while
    /// deferred, it waits.
    fn post_key(&mut self, kill: bool, l: u32, entry: u32) {
        let (pending, lists) = if kill {
            (&mut self.pending_kills, &mut self.key_kill)
        } else {
            (&mut self.pending_posts, &mut self.key_post)
        };
        if self.defer {
            pending.push((l, entry));
            return;
        }
        if lists.len() <= l as usize {
            lists.resize(l as usize + 1, Vec::new());
        }
        lists[l as usize].push(entry);
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

    fn use_attr(&mut self, attr: AttrId) {
        let a = &mut self.attrs[attr as usize];
        a.uses += 1;
        if a.uses == 1 {
            let at = self.probes.partition_point(|&x| x < attr);
            self.probes.insert(at, attr);
        }
    }

    fn unuse_attr(&mut self, attr: AttrId) {
        let a = &mut self.attrs[attr as usize];
        a.uses -= 1;
        if a.uses == 0 {
            let at = self.probes.partition_point(|&x| x < attr);
            self.probes.remove(at);
        }
    }

    /// Registers atom `atom` (live in `preds`, the atom table) by value if
    /// its predicate can be decided that way and it is not registered yet.
    pub(crate) fn register(&mut self, atom: u32, preds: &[Option<Pred>]) {
        if self.decided(atom) != Decided::No {
            return;
        }
        let a = atom as usize;
        let p = preds[a].as_ref().expect("a registered atom is live");
        // Ranges are posted per expression into the thresholds instead
        // (see `post`), and evaluated: a comparison costs no more than a
        // stamp test.
        let Some((attr, keys, positive)) = keys_of(p).filter(|_| range_of(p).is_none()) else {
            return;
        };
        if self.decided.len() <= a {
            self.decided.resize(a + 1, Decided::No.word());
        }
        self.decided[a] = if positive {
            Decided::Hit
        } else {
            Decided::Miss(attr)
        }
        .word();
        self.use_attr(attr);
        let Counting {
            attrs,
            lists,
            tested,
            free_lists,
            hasher,
            ..
        } = self;
        let table = &mut attrs[attr as usize].keys;
        // The one key list of an atom with one value, kept in its
        // decision word (see `Decided::word`).
        let mut one = None;
        for i in 0..keys.len() {
            let k = key_at(p, i);
            let h = hasher.hash_one(k);
            if let Some(t) = table.find(h, |t| t.is(k, lists, preds)) {
                let l = t.list;
                lists.push_once(l, atom);
                one = Some(l);
                continue;
            }
            let l = free_lists.pop().unwrap_or_else(|| {
                tested.add_without_key();
                lists.add()
            });
            lists.push_once(l, atom);
            lists.first_key[l as usize] = i as u32;
            table.insert_unique(h, KeyTag::new(l, k), |t| {
                hasher.hash_one(list_key(lists, t.list, preds))
            });
            one = Some(l);
        }
        if let Some(l) = one.filter(|_| positive && keys.len() == 1)
            && l < ONE_LIST_MAX
        {
            self.decided[a] |= (l + 1) << 2;
        }
    }

    /// Puts registered atom `atom`, which a jump program step tests by
    /// its stamp, in its key lists' [`Counting::tested`] lists, unless it
    /// is there already. It stays there until it is unregistered: no
    /// count of the steps testing it is kept, as that would be an array
    /// of four bytes an atom read once per step, where this is a bit an
    /// atom.
    pub(crate) fn stamp_test(&mut self, atom: u32, preds: &[Option<Pred>]) {
        let (w, b) = ((atom / 64) as usize, 1u64 << (atom % 64));
        if self.stamped.len() <= w {
            self.stamped.resize(w + 1, 0);
        }
        if self.stamped[w] & b != 0 {
            return;
        }
        self.stamped[w] |= b;
        for l in self.key_lists(atom, preds) {
            self.tested.push_once(l, atom);
        }
    }

    /// Undoes [`Counting::register`] for an atom about to be freed (still
    /// in `preds`).
    pub(crate) fn unregister(&mut self, atom: u32, preds: &[Option<Pred>]) {
        let a = atom as usize;
        if self.decided(atom) == Decided::No {
            return;
        }
        self.decided[a] = Decided::No.word();
        let p = preds[a].as_ref().expect("an atom being freed is live");
        let Some((attr, keys, _)) = keys_of(p).filter(|_| range_of(p).is_none()) else {
            return;
        };
        let bit = 1u64 << (a % 64);
        let stamped = match self.stamped.get_mut(a / 64) {
            Some(w) if *w & bit != 0 => {
                *w &= !bit;
                true
            }
            _ => false,
        };
        let Counting {
            attrs,
            lists,
            tested,
            free_lists,
            hasher,
            ..
        } = self;
        let table = &mut attrs[attr as usize].keys;
        for i in 0..keys.len() {
            let k = key_at(p, i);
            let h = hasher.hash_one(k);
            let Some(l) = table.find(h, |t| t.is(k, lists, preds)).map(|t| t.list) else {
                continue;
            };
            let was_first = lists.get(l)[0] == atom;
            if stamped {
                tested.remove(l, atom);
            }
            if lists.remove(l, atom) {
                free_lists.push(l);
                if let Ok(e) = table.find_entry(h, |t| t.list == l) {
                    e.remove();
                }
            } else if was_first {
                // The list's value is now read off its next atom.
                let first = lists.get(l)[0];
                let q = preds[first as usize]
                    .as_ref()
                    .expect("listed atoms are live");
                lists.first_key[l as usize] = key_index(q, k);
            }
        }
        self.unuse_attr(attr);
    }

    /// The key list of value `k` of attribute `attr`, if any atom is
    /// registered under it.
    #[inline]
    fn find_list(&self, attr: AttrId, k: Key, preds: &[Option<Pred>]) -> Option<u32> {
        let h = self.hasher.hash_one(k);
        self.attrs[attr as usize]
            .keys
            .find(h, |t| t.is(k, &self.lists, preds))
            .map(|t| t.list)
    }

    /// The indexed conjuncts of `e`, whose predicate leaves are atoms of
    /// `preds` (the atom table): distinct terms, at most [`MAX_NEED`].
    pub(crate) fn conjunct_terms(&self, e: &Expr, preds: &[Option<Pred>]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut list_attrs = Vec::new();
        // `or`s with a branch other than an equality or `in` on a scalar:
        // posted only if nothing else is counted (see the end).
        let mut late_ors: Vec<(Vec<u32>, Vec<AttrId>)> = Vec::new();
        let mut stack = vec![e.root];
        while let Some(r) = stack.pop() {
            let t = match e.node(r) {
                Node::And(a, b) => {
                    stack.push(b);
                    stack.push(a);
                    continue;
                }
                // A slot this high would read as an `or` branch.
                Node::Bool(slot) if slot < OR_MORE => Some(BOOL_TERM | slot),
                Node::Or(..) => {
                    if let Some((branches, attrs, plain)) = self.or_branches(e, r, preds) {
                        if plain {
                            push_or(&mut out, &branches);
                        } else if branches.iter().any(|&t| t & BOOL_TERM == 0) {
                            late_ors.push((branches, attrs));
                        }
                    }
                    continue;
                }
                Node::Not(x) => match x.leaf() {
                    Some(Node::Bool(slot)) => Some(NOT_TERM | BOOL_TERM | slot),
                    Some(Node::Pred(a)) if a < NOT_TERM && self.decided(a) == Decided::Hit => {
                        Some(NOT_TERM | a)
                    }
                    Some(Node::Pred(a))
                        if a < NOT_TERM
                            && matches!(preds[a as usize], Some(ref p @ Pred::IntCmp { .. })
                                if range_of(p).is_some()) =>
                    {
                        Some(NOT_TERM | RANGE_TERM | a)
                    }
                    _ => None,
                },
                Node::Pred(a) => {
                    let p = preds[a as usize].as_ref().expect("live atom");
                    if range_of(p).is_some() {
                        Some(RANGE_TERM | a)
                    } else {
                        match self.decided(a) {
                            Decided::Miss(attr) => {
                                // False when undefined, and when hit.
                                if a < NOT_TERM
                                    && !out.contains(&(NOT_TERM | a))
                                    && out.len() + 1 < MAX_NEED
                                {
                                    out.push(NOT_TERM | a);
                                }
                                Some(DEFINED_TERM | attr)
                            }
                            Decided::Hit => Some(match p {
                                Pred::IntCmp { .. }
                                | Pred::StrCmp { .. }
                                | Pred::IntIn { .. }
                                | Pred::StrIn { .. } => KEY_TERM | a,
                                _ => {
                                    // One list conjunct per attribute: its hits
                                    // are deduplicated per attribute.
                                    let attr = keys_of(p).expect("a registered predicate").0;
                                    if list_attrs.contains(&attr) {
                                        continue;
                                    }
                                    list_attrs.push(attr);
                                    LIST_TERM | a
                                }
                            }),
                            Decided::No => None,
                        }
                    }
                }
                _ => None,
            };
            if let Some(t) = t
                && !out.contains(&t)
                && out.len() < MAX_NEED
            {
                out.push(t);
            }
        }
        // A boolean is true for about half of all events, a list often
        // holds one of several elements: such an `or` is true for most,
        // and its posting entries are walked for each. It pays only for an
        // expression that no other hit counts (else gated or scanned, a
        // candidate of most events). An `or` of booleans alone is not
        // posted at all: posting those cost the dense reference profile
        // (booleans only) 8-10 % of its batch speed for 1-2 % fewer
        // candidates, where the batch path evaluates a scanned expression
        // for 64 events a word.
        if counted(&out) == 0 {
            // Nothing counted, so no list conjunct holds an attribute yet:
            // only an earlier `or` posted here can.
            for (branches, attrs) in &late_ors {
                if attrs.iter().all(|a| !list_attrs.contains(a)) && push_or(&mut out, branches) {
                    list_attrs.extend(attrs);
                }
            }
        }
        out
    }

    /// The branch terms of the `or` tree at `r` (see [`OR_TERM`]), distinct
    /// and at most [`OR_BRANCHES`], the list attributes they count on, and
    /// whether every branch is an equality or `in` on a scalar, if an event
    /// can hit every branch. The caller keeps list attributes to one
    /// counted conjunct each (hits on a list attribute count once per
    /// expression).
    fn or_branches(
        &self,
        e: &Expr,
        r: crate::parse::Ref,
        preds: &[Option<Pred>],
    ) -> Option<(Vec<u32>, Vec<AttrId>, bool)> {
        let mut out = Vec::new();
        let mut attrs = Vec::new();
        let mut plain = true;
        let mut stack = vec![r];
        while let Some(r) = stack.pop() {
            let branch = match e.node(r) {
                Node::Or(a, b) => {
                    stack.extend([b, a]);
                    continue;
                }
                // The branch is true only where each of its conjuncts is:
                // the first one an event can hit stands for it.
                Node::And(..) => {
                    let mut conj = vec![r];
                    let mut found = None;
                    while let Some(c) = conj.pop() {
                        match e.node(c) {
                            Node::And(a, b) => conj.extend([b, a]),
                            n => {
                                if let Some(t) = self.branch_term(n, preds) {
                                    found = Some(t);
                                    break;
                                }
                            }
                        }
                    }
                    plain = false;
                    found?
                }
                n => self.branch_term(n, preds)?,
            };
            plain &= branch.0 & BOOL_TERM == 0 && branch.1.is_none();
            let (t, attr) = branch;
            if !out.contains(&t) {
                if out.len() == OR_BRANCHES {
                    return None;
                }
                out.push(t);
                attrs.extend(attr);
            }
        }
        Some((out, attrs, plain))
    }

    /// The [`OR_TERM`] branch an event hits exactly when leaf `n` is true,
    /// and the list attribute it counts on, if any.
    fn branch_term(&self, n: Node, preds: &[Option<Pred>]) -> Option<(u32, Option<AttrId>)> {
        match n {
            Node::Bool(slot) if slot < OR_MORE => Some((BOOL_TERM | slot, None)),
            Node::Pred(a) if a < OR_MORE && self.decided(a) == Decided::Hit => {
                let p = preds[a as usize].as_ref().expect("live atom");
                match p {
                    Pred::IntCmp { .. }
                    | Pred::StrCmp { .. }
                    | Pred::IntIn { .. }
                    | Pred::StrIn { .. } => Some((a, None)),
                    _ => Some((a, Some(keys_of(p).expect("a registered predicate").0))),
                }
            }
            _ => None,
        }
    }

    /// Whether top-level conjunct `a` of a posted expression with `terms`
    /// is a negated form (decided by a miss) whose attribute is defined on
    /// every event that makes the expression a candidate (its
    /// [`DEFINED_TERM`] was posted: an undefined attribute kills it).
    pub(crate) fn defined_proven(&self, a: u32, terms: &[u32]) -> bool {
        matches!(self.decided(a), Decided::Miss(attr) if terms.contains(&(DEFINED_TERM | attr)))
    }

    /// Whether slot `s`, with conjunct terms `terms`, is posted (counted or
    /// gated) rather than on the scan list.
    pub(crate) fn posts(s: u32, terms: &[u32]) -> bool {
        !terms.is_empty() && s < MAX_POSTED_SLOT
    }

    /// Whether top-level conjunct `n` of a posted expression with
    /// `terms` is true on every event that makes the expression a
    /// candidate, so that evaluation need not test it again: a boolean, an
    /// equality or `in` on a scalar, or the list conjunct of its attribute
    /// (each counted, and a hit is exactly the predicate being true), or an
    /// integer range (not killed means true), the negation of an atom
    /// decided by a hit (not killed: not hit), or a negated form decided by
    /// a miss whose attribute is defined and whose hit kills (true exactly
    /// then). Float ranges are tested again: a NaN value satisfies no
    /// threshold yet kills none of the upper side.
    ///
    /// An expression with an [`OR_TERM`] can reach its count with a
    /// counted conjunct missed (an `or` hit twice), so none of its counted
    /// conjuncts is proven; its kills and ranges still are.
    pub(crate) fn proven(&self, n: Node, terms: &[u32], preds: &[Option<Pred>]) -> bool {
        let counted_proven = !terms.iter().any(|&t| or_term(t).is_some());
        match n {
            Node::Bool(slot) => counted_proven && terms.contains(&(BOOL_TERM | slot)),
            // Not killed: the boolean is not true, the atom not hit. The
            // kill term of an atom decided by a miss means the opposite
            // (the negated form is true), so only a hit atom's counts here.
            Node::Not(x) => match x.leaf() {
                Some(Node::Bool(slot)) => terms.contains(&(NOT_TERM | BOOL_TERM | slot)),
                Some(Node::Pred(a)) => {
                    a < NOT_TERM
                        && ((self.decided(a) == Decided::Hit && terms.contains(&(NOT_TERM | a)))
                            || terms.contains(&(NOT_TERM | RANGE_TERM | a)))
                }
                _ => false,
            },
            Node::Pred(a) => {
                (counted_proven
                    && (terms.contains(&(KEY_TERM | a)) || terms.contains(&(LIST_TERM | a))))
                    || (terms.contains(&(RANGE_TERM | a))
                        && matches!(preds[a as usize], Some(Pred::IntCmp { .. })))
                    || (a < NOT_TERM
                        && terms.contains(&(NOT_TERM | a))
                        && self.defined_proven(a, terms))
            }
            _ => false,
        }
    }

    /// The thresholds and bound of range conjunct `p`.
    fn range_side(&mut self, p: &Pred) -> (AttrId, RangeSide<'_>) {
        let (attr, keys) = range_of(p).expect("a range conjunct");
        let k = &mut self.attrs[attr as usize];
        let side = match keys {
            Keys::Int { upper, v, strict } => {
                RangeSide::Int(if upper { &mut k.int_hi } else { &mut k.int_lo }, v, strict)
            }
            Keys::Float { upper, v, strict } => {
                RangeSide::Float(if upper { &mut k.flt_hi } else { &mut k.flt_lo }, v, strict)
            }
            _ => unreachable!("range_of gives thresholds"),
        };
        (attr, side)
    }

    /// Posts slot `s` under each of `terms`; `preds` are the index's atoms
    /// (for range conjuncts). `proven`: being a candidate proves the
    /// expression true (every conjunct is [`Counting::proven`]).
    pub(crate) fn post(&mut self, s: u32, terms: &[u32], proven: bool, preds: &[Option<Pred>]) {
        if !Counting::posts(s, terms) {
            self.scan.push(s);
            return;
        }
        let need = counted(terms);
        if need == 0 {
            self.gated.push(if proven { s | PROVEN } else { s });
        }
        let entry = make_entry(s, need, proven);
        let mut undef_attrs: Vec<AttrId> = Vec::new();
        for &t in terms {
            if t & NOT_TERM != 0 {
                if t & BOOL_TERM != 0 {
                    let slot = t & !TERM_FLAGS;
                    self.use_attr(self.bool_attr[slot as usize]);
                    self.bool_kill[slot as usize].push(entry);
                } else if t & RANGE_TERM != 0 {
                    let defer = self.defer;
                    let (attr, th, v, strict) = self.not_range(t, preds);
                    th.add(v, strict, entry, defer);
                    self.use_attr(attr);
                } else {
                    for l in self.key_lists(t & !TERM_FLAGS, preds) {
                        self.post_key(true, l, entry);
                    }
                }
            } else if t & RANGE_TERM != 0 {
                let p = preds[(t & !RANGE_TERM) as usize]
                    .as_ref()
                    .expect("live atom");
                let defer = self.defer;
                let (attr, side) = self.range_side(p);
                match side {
                    RangeSide::Int(th, v, strict) => th.add(v, strict, entry, defer),
                    RangeSide::Float(th, v, strict) => th.add(v, strict, entry, defer),
                }
                self.use_attr(attr);
                if !undef_attrs.contains(&attr) {
                    undef_attrs.push(attr);
                }
            } else if t & DEFINED_TERM != 0 {
                let attr = t & !DEFINED_TERM;
                self.use_attr(attr);
                if !undef_attrs.contains(&attr) {
                    undef_attrs.push(attr);
                }
            } else if let Some((a, _)) = or_term(t) {
                if a & BOOL_TERM != 0 {
                    self.post_bool(a & !BOOL_TERM, entry);
                    continue;
                }
                for l in self.key_lists(a, preds) {
                    self.post_key(false, l, entry);
                }
            } else if t & (KEY_TERM | LIST_TERM) != 0 {
                for l in self.key_lists(t & !TERM_FLAGS, preds) {
                    self.post_key(false, l, entry);
                }
            } else {
                debug_assert!(t & BOOL_TERM != 0, "every term is flagged");
                self.post_bool(t & !BOOL_TERM, entry);
            }
        }
        for attr in undef_attrs {
            self.attrs[attr as usize].undef.push(entry);
        }
    }

    /// Removes slot `s`, posted under `terms` with `proven` (before its
    /// atoms are released: range conjuncts are found through `preds`).
    pub(crate) fn unpost(&mut self, s: u32, terms: &[u32], proven: bool, preds: &[Option<Pred>]) {
        if !Counting::posts(s, terms) {
            if let Some(k) = self.scan.iter().position(|&x| x == s) {
                self.scan.swap_remove(k);
            }
            return;
        }
        let need = counted(terms);
        if need == 0
            && let Some(k) = self.gated.iter().position(|&x| x & !PROVEN == s)
        {
            self.gated.swap_remove(k);
        }
        let entry = make_entry(s, need, proven);
        for &t in terms {
            if t & NOT_TERM != 0 {
                if t & BOOL_TERM != 0 {
                    let slot = t & !TERM_FLAGS;
                    self.bool_kill[slot as usize].retain(|&x| x != entry);
                    self.unuse_attr(self.bool_attr[slot as usize]);
                } else if t & RANGE_TERM != 0 {
                    let (attr, th, v, strict) = self.not_range(t, preds);
                    th.remove(v, strict, entry);
                    self.unuse_attr(attr);
                } else {
                    for l in self.key_lists(t & !TERM_FLAGS, preds) {
                        self.key_kill[l as usize].retain(|&x| x != entry);
                    }
                }
                continue;
            }
            if t & RANGE_TERM != 0 {
                let p = preds[(t & !RANGE_TERM) as usize]
                    .as_ref()
                    .expect("live atom");
                let (attr, side) = self.range_side(p);
                match side {
                    RangeSide::Int(th, v, strict) => th.remove(v, strict, entry),
                    RangeSide::Float(th, v, strict) => th.remove(v, strict, entry),
                }
                // Removes its one entry, if another conjunct on the
                // attribute did not already.
                self.attrs[attr as usize].undef.retain(|&x| x != entry);
                self.unuse_attr(attr);
                continue;
            }
            if t & DEFINED_TERM != 0 {
                let attr = t & !DEFINED_TERM;
                self.attrs[attr as usize].undef.retain(|&x| x != entry);
                self.unuse_attr(attr);
                continue;
            }
            if let Some((a, _)) = or_term(t) {
                if a & BOOL_TERM != 0 {
                    self.unpost_bool(a & !BOOL_TERM, entry);
                    continue;
                }
                for l in self.key_lists(a, preds) {
                    self.key_post[l as usize].retain(|&x| x != entry);
                }
                continue;
            }
            if t & (KEY_TERM | LIST_TERM) != 0 {
                for l in self.key_lists(t & !TERM_FLAGS, preds) {
                    self.key_post[l as usize].retain(|&x| x != entry);
                }
                continue;
            }
            self.unpost_bool(t & !BOOL_TERM, entry);
        }
    }

    /// Posts `entry` under boolean slot `slot`, counted when the event
    /// sets it true.
    fn post_bool(&mut self, slot: u32, entry: u32) {
        if self.bool_post[slot as usize].is_empty() {
            self.use_attr(self.bool_attr[slot as usize]);
        }
        self.bool_post[slot as usize].push(entry);
    }

    /// Undoes [`Counting::post_bool`] (every copy of `entry`: a boolean can
    /// be both a conjunct of an expression and a branch of its `or`, and
    /// the second call finds nothing left to remove).
    fn unpost_bool(&mut self, slot: u32, entry: u32) {
        let post = &mut self.bool_post[slot as usize];
        let before = post.len();
        post.retain(|&x| x != entry);
        if post.len() < before && post.is_empty() {
            let attr = self.bool_attr[slot as usize];
            self.unuse_attr(attr);
        }
    }

    /// The attribute, thresholds and complement bound of negated range
    /// term `t` (`NOT_TERM | RANGE_TERM | atom`, an integer range): `not
    /// (x >= v)` is kept as `x < v` (see [`AttrKeys::not_lo`]).
    fn not_range(
        &mut self,
        t: u32,
        preds: &[Option<Pred>],
    ) -> (AttrId, &mut Thresholds<i64>, i64, bool) {
        let p = preds[(t & !TERM_FLAGS) as usize]
            .as_ref()
            .expect("live atom");
        let Some((attr, Keys::Int { upper, v, strict })) = range_of(p) else {
            unreachable!("a negated range term is an integer range");
        };
        let k = &mut self.attrs[attr as usize];
        // The complement of a lower bound is an upper one, strict where
        // the bound was not.
        let th = if upper { &mut k.not_lo } else { &mut k.not_hi };
        (attr, th, v, !strict)
    }

    /// The key lists of registered atom `atom`'s values, distinct.
    /// Posting an expression needs them for each of its counted
    /// conjuncts, most of them atoms with one value shared with earlier
    /// expressions: those read the list off the atom's decision word;
    /// looking the value up again read the list's first atom and its
    /// value (a string compare), ~6 % of a 1M-expression build.
    ///
    /// One list comes back without allocating: that is most atoms, and a
    /// `Vec` for each was ~2 % of a 1M-expression build.
    fn key_lists(&self, atom: u32, preds: &[Option<Pred>]) -> KeyLists {
        let w = self.decided[atom as usize];
        if w & 3 == 1 && w >> 2 != 0 {
            return KeyLists::One(Some((w >> 2) - 1));
        }
        let p = preds[atom as usize].as_ref().expect("live atom");
        let Some((attr, keys, _)) = keys_of(p) else {
            return KeyLists::One(None);
        };
        let mut ls: Vec<u32> = (0..keys.len())
            .filter_map(|i| self.find_list(attr, key_at(p, i), preds))
            .collect();
        // A value written twice is one key: posted once, hit once.
        ls.sort_unstable();
        ls.dedup();
        KeyLists::Many(ls.into_iter())
    }

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
        n += vecs(&self.bool_post) + vecs(&self.key_post);
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

/// Moves the waiting entries `pending` onto their key lists' postings in
/// `lists`, each list's in the order they were posted (the order a load
/// without deferral gives them).
fn settle_posts(pending: &mut Vec<(u32, u32)>, lists: &mut Vec<Vec<u32>>) {
    // Stable: entries of one list keep their order.
    pending.sort_by_key(|&(l, _)| l);
    if let Some(&(last, _)) = pending.last()
        && lists.len() <= last as usize
    {
        lists.resize(last as usize + 1, Vec::new());
    }
    for &(l, e) in pending.iter() {
        lists[l as usize].push(e);
    }
    *pending = Vec::new();
}

/// Appends the terms of an `or` conjunct with `branches` (see
/// [`OR_TERM`]) to `out` if they fit and none of them is there already;
/// whether it did.
fn push_or(out: &mut Vec<u32>, branches: &[u32]) -> bool {
    let fits = out.len() + branches.len() <= MAX_NEED
        && !branches.iter().any(|&a| out.contains(&(OR_TERM | a)));
    if fits {
        out.push(OR_TERM | branches[0]);
        out.extend(branches[1..].iter().map(|&a| OR_TERM | OR_MORE | a));
    }
    fits
}

/// How many of `terms` are counted by hits (ranges, definedness and kills
/// are not: they are found false instead).
fn counted(terms: &[u32]) -> u32 {
    terms
        .iter()
        .filter(|&&t| {
            t & (RANGE_TERM | DEFINED_TERM | NOT_TERM) == 0
                && !matches!(or_term(t), Some((_, true)))
        })
        .count() as u32
}

/// One side of one attribute's thresholds, and a bound.
enum RangeSide<'a> {
    Int(&'a mut Thresholds<i64>, i64, bool),
    Float(&'a mut Thresholds<f64>, f64, bool),
}

/// The key lists of an atom ([`Counting::key_lists`]).
enum KeyLists {
    One(Option<u32>),
    Many(std::vec::IntoIter<u32>),
}

impl Iterator for KeyLists {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        match self {
            KeyLists::One(l) => l.take(),
            KeyLists::Many(ls) => ls.next(),
        }
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

/// The posting entry of slot `s` with `need` counted conjuncts.
fn make_entry(s: u32, need: u32, proven: bool) -> u32 {
    (s << SLOT_SHIFT) | if proven { PROVEN_BIT } else { 0 } | need
}
