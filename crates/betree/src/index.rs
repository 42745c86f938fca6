//! The index: expressions stored compiled, selected through the counting
//! index ([`crate::counting`]), with insert, delete and the plain and batch
//! searches.
//!
//! # Structure
//!
//! Not a BE-Tree. Each expression posts its top-level conjuncts that only
//! some values satisfy (booleans, equalities, sets, list membership,
//! ranges); a search counts the hits per expression and evaluates only the
//! expressions whose posted conjuncts were all hit, plus those with none.
//! On the reference benchmark (every expression names every attribute,
//! joined by random `and`/`or`/`not`) there is little to prune and the
//! time goes into evaluating candidates, which the compiled form
//! ([`crate::program`]) makes fast; on the ad-targeting profile the
//! counting leaves few candidates beyond the matches. The evaluation of the
//! candidates is in [`eval`]; inserting an expression in [`insert`].

use hashbrown::HashMap;

use crate::counting::Counting;
use crate::domain::Schema;
use crate::event::Event;
use crate::expr::{Constants, Pred};
use crate::program::{ACCEPT, BATCH_ATOM, Memo, OPERAND, REJECT, Step};
use crate::selection::{Selection, Source};
use crate::strings::Strings;
use crate::{Error, Result};

mod eval;
mod insert;

pub(crate) use eval::{LANES, LaneState};

/// An expression's id, chosen by the caller.
pub type Id = u64;

#[derive(Debug, Clone)]
pub(crate) struct Slot {
    pub id: Id,
    pub live: bool,
    pub code_start: u32,
    pub code_len: u32,
    pub entry: u32,
    /// Batch program (see [`crate::program::bop`]).
    pub tree_start: u32,
    pub tree_len: u32,
    /// Terms the expression is posted under in the counting index.
    pub terms: Vec<u32>,
}

/// What evaluating a candidate reads of its slot, 16 bytes a slot in an
/// array of their own (a [`Slot`] is 56): the candidates of a search are
/// scattered over the slots, so each costs a cache miss, and a dense array
/// misses less.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hot {
    pub code_start: u32,
    /// [`Slot::entry`].
    pub entry: u32,
    pub id: Id,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Atoms {
    pub preds: Vec<Option<Pred>>,
    pub(crate) refs: Vec<u32>,
    /// Atom ids by [`Pred::hash_atom`]: the table holds only ids and finds
    /// a predicate by comparing it with `preds`, so no key (a string per
    /// predicate, as once) is built or stored per atom.
    pub(crate) by_pred: hashbrown::HashTable<u32>,
    pub(crate) free: Vec<u32>,
}

/// The table hash of `p`; a fixed seed, so a build is reproducible.
/// foldhash rather than `std`'s SipHash: the table is probed once per
/// predicate inserted, and SipHash took ~4 % of the samples of a
/// 1M-expression build.
fn atom_hash(p: &Pred) -> u64 {
    use std::hash::BuildHasher;
    let mut h = foldhash::fast::FixedState::with_seed(0).build_hasher();
    p.hash_atom(&mut h);
    std::hash::Hasher::finish(&h)
}

impl Atoms {
    /// The atom of `p`, if interned.
    pub(crate) fn find(&self, p: &Pred) -> Option<u32> {
        let preds = &self.preds;
        self.by_pred
            .find(atom_hash(p), |&id| {
                preds[id as usize].as_ref().is_some_and(|q| q.same_atom(p))
            })
            .copied()
    }

    /// The atom of `p`: shared with every expression holding the same
    /// predicate, or with `share` false a new one of its own, not in the
    /// table. The flag tells whether the atom is new.
    fn intern(&mut self, p: Pred, share: bool) -> (u32, bool) {
        if share && let Some(id) = self.find(&p) {
            self.refs[id as usize] += 1;
            return (id, false);
        }
        let hash = share.then(|| atom_hash(&p));
        let id = if let Some(id) = self.free.pop() {
            self.preds[id as usize] = Some(p);
            self.refs[id as usize] = 1;
            id
        } else {
            self.preds.push(Some(p));
            self.refs.push(1);
            self.preds.len() as u32 - 1
        };
        if let Some(hash) = hash {
            let preds = &self.preds;
            self.by_pred.insert_unique(hash, id, |&i| {
                atom_hash(preds[i as usize].as_ref().expect("tabled atoms are live"))
            });
        }
        (id, true)
    }

    /// Drops one reference, freeing the atom at the last (an atom of its
    /// own is not in the table: nothing is found to remove).
    fn release(&mut self, id: u32) {
        let r = &mut self.refs[id as usize];
        *r -= 1;
        if *r == 0 {
            let p = self.preds[id as usize].take().expect("live atom");
            if let Ok(e) = self.by_pred.find_entry(atom_hash(&p), |&i| i == id) {
                e.remove();
            }
            self.free.push(id);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.preds.len()
    }
}

/// Text length above which an expression is *large*: its atoms are its
/// own (not looked up in or added to the table of shared predicates) and
/// only its top-level conjuncts are registered by value in the counting
/// index. Sharing and registering cost ~8.5 and ~17 bytes a predicate
/// (the table's bucket; the key, key list and value position) and buy
/// one evaluation per event for a predicate held by several expressions
/// and a stamp test instead of an evaluation: worth it for the many small
/// expressions of a workload (the generated ones have a few hundred
/// bytes), not for one expression of hundreds of thousands of distinct
/// predicates, which is held to 8x its text (issue 18.6).
const LARGE_EXPR_BYTES: usize = 16 << 10;

/// The boolean-expression index.
///
/// ```
/// use betree::{Index, Schema, Event};
/// let schema = Schema::boolean_params(3);
/// let mut index = Index::new(schema.clone());
/// index.insert(1, "par1 and not par2")?;
/// index.insert(2, "par2 or par3")?;
/// let ev = Event::from_bools(&schema, &[true, false, true])?;
/// assert_eq!(index.search(&ev)?, vec![1, 2]);
/// # Ok::<(), betree::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct Index {
    pub(crate) schema: Schema,
    pub(crate) slots: Vec<Slot>,
    /// Per slot, what evaluation reads of it (kept with [`Index::set_hot`]).
    pub(crate) hot: Vec<Hot>,
    by_id: HashMap<Id, u32>,
    free_slots: Vec<u32>,
    pub(crate) code: Vec<Step>,
    pub(crate) bcode: Vec<u32>,
    garbage: usize,
    pub(crate) atoms: Atoms,
    /// Every live slot, in id order.
    pub(crate) order: Vec<u32>,
    /// Whether `order` is ascending, so that the live slots' ids ascend
    /// with the slots: true until an insert takes a slot out of its id's
    /// place (a delete keeps it). Loads in id order, the command's among
    /// them, keep it, and then a search's matches are listed in id order
    /// by reading their slots' bits in order (`Index::collect`).
    pub(crate) ordered: bool,
    /// The counting index over the expressions' conjuncts.
    pub(crate) counting: Counting,
    required: Vec<u64>,
    /// The expressions' string literals, numbered.
    pub(crate) strings: Strings,
    /// The most values in one expression's value set (`in`, `one of`, ...)
    /// inserted so far: bounds a predicate's loop steps for the budget.
    pub(crate) longest_set: usize,
}

impl Index {
    /// An empty index over `schema`.
    pub fn new(schema: Schema) -> Index {
        let mut required = vec![0u64; schema.len().div_ceil(64)];
        for (i, d) in schema.domains().iter().enumerate() {
            if !d.allow_undefined {
                required[i / 64] |= 1 << (i % 64);
            }
        }
        let counting = Counting::new(&schema);
        let strings = Strings::new(&schema);
        Index {
            schema,
            slots: Vec::new(),
            hot: Vec::new(),
            by_id: HashMap::new(),
            free_slots: Vec::new(),
            code: Vec::new(),
            bcode: Vec::new(),
            garbage: 0,
            atoms: Atoms::default(),
            order: Vec::new(),
            ordered: true,
            counting,
            required,
            strings,
            longest_set: 0,
        }
    }

    /// The schema expressions and events are checked against.
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Number of expressions stored.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether the index holds no expression.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// Whether an expression with this id is stored.
    pub fn contains(&self, id: Id) -> bool {
        self.by_id.contains_key(&id)
    }

    /// Parses, type-checks and stores an expression.
    pub fn insert(&mut self, id: Id, expr: &str) -> Result<()> {
        self.insert_with(id, expr, &Constants::default())
    }

    /// [`Index::insert`] with the constants `within_frequency_cap` needs.
    pub fn insert_with(&mut self, id: Id, expr: &str, consts: &Constants) -> Result<()> {
        self.finish_leaked_bulk();
        self.insert_text(id, Text::Borrowed(expr), consts)
    }

    /// [`Index::insert`] taking the text by value: it is dropped once
    /// parsed, before the expression is compiled, so that a large
    /// expression's text and its compiled form are not held at once.
    ///
    /// ```
    /// use betree::{Index, Schema, Event};
    /// let schema = Schema::boolean_params(2);
    /// let mut index = Index::new(schema.clone());
    /// index.insert_owned(7, "par1 or par2".to_string())?;
    /// let ev = Event::from_bools(&schema, &[false, true])?;
    /// assert_eq!(index.search(&ev)?, vec![7]);
    /// # Ok::<(), betree::Error>(())
    /// ```
    pub fn insert_owned(&mut self, id: Id, expr: String) -> Result<()> {
        self.finish_leaked_bulk();
        self.insert_text(id, Text::Owned(expr), &Constants::default())
    }

    /// Finishes a bulk load whose [`Bulk`] was leaked (`mem::forget`), so
    /// that nothing it deferred is left waiting when the index changes
    /// outside it.
    fn finish_leaked_bulk(&mut self) {
        if self.counting.deferring() {
            self.counting.defer(false);
        }
    }

    /// Starts a bulk load: expressions inserted through the returned
    /// [`Bulk`] leave their range thresholds unmerged and their key
    /// posting entries unposted until it is dropped, when each
    /// attribute's thresholds are merged once and the entries are moved to
    /// their lists sorted by list. Inserted one by one, a side's sorted
    /// run is merged with its new thresholds every `max(128, √n)` of them,
    /// which was 9 % of a 1M-expression adtech build, and each entry
    /// pushed onto its list missed the cache twice. The ids searches
    /// return are the same either way. A `Bulk` leaked with
    /// `mem::forget` leaves its load unfinished: searches then fail with
    /// [`Error::BulkUnfinished`] rather than miss expressions, and the
    /// next insert, delete or bulk load finishes it.
    ///
    /// ```
    /// use betree::{Event, Index, Schema};
    /// let schema = Schema::boolean_params(2);
    /// let mut index = Index::new(schema.clone());
    /// {
    ///     let mut bulk = index.bulk();
    ///     bulk.insert(1, "par1")?;
    ///     bulk.insert_owned(2, "par1 and not par2".to_string())?;
    /// }
    /// let ev = Event::from_bools(&schema, &[true, false])?;
    /// assert_eq!(index.search(&ev)?, vec![1, 2]);
    /// # Ok::<(), betree::Error>(())
    /// ```
    pub fn bulk(&mut self) -> Bulk<'_> {
        self.finish_leaked_bulk();
        self.counting.defer(true);
        Bulk { index: self }
    }

    /// Gives back one reference to each of `atoms`, unregistering those
    /// freed.
    fn release(&mut self, atoms: impl IntoIterator<Item = u32>) {
        for a in atoms {
            // Unregistered while its predicate is still in the table: the
            // key tables read values off their lists' atoms.
            if self.atoms.refs[a as usize] == 1 {
                self.counting.unregister(a, &self.atoms.preds);
            }
            self.atoms.release(a);
        }
    }

    /// Removes an expression.
    pub fn delete(&mut self, id: Id) -> Result<()> {
        self.finish_leaked_bulk();
        let s = self.by_id.remove(&id).ok_or(Error::UnknownId(id))?;
        // Before the slot is cleared: the search needs its id.
        let at = self
            .order
            .partition_point(|&x| self.slots[x as usize].id < id);
        debug_assert_eq!(self.order.get(at), Some(&s));
        self.order.remove(at);
        let slot = std::mem::replace(
            &mut self.slots[s as usize],
            Slot {
                id: 0,
                live: false,
                code_start: 0,
                code_len: 0,
                entry: REJECT,
                tree_start: 0,
                tree_len: 0,
                terms: Vec::new(),
            },
        );
        self.counting
            .unpost(s, &slot.terms, slot.entry == ACCEPT, &self.atoms.preds);
        // The expression's atoms, one per predicate leaf, are the atom
        // operands of its batch program (every leaf has exactly one
        // instruction; the jump program leaves out proven conjuncts), so the
        // slot keeps no list of them.
        let (ts, tl) = (slot.tree_start as usize, slot.tree_len as usize);
        let atoms: Vec<u32> = self.bcode[ts..ts + tl]
            .iter()
            .filter(|&&ins| ins & BATCH_ATOM != 0)
            .map(|&ins| ins & OPERAND)
            .collect();
        self.release(atoms);
        self.set_hot(s);
        self.free_slots.push(s);
        self.garbage += (slot.code_len + slot.tree_len) as usize;
        if self.garbage > 1024 && self.garbage * 2 > self.code.len() + self.bcode.len() {
            self.compact();
        }
        Ok(())
    }

    /// Copies slot `s`'s [`Hot`] part from the slot.
    fn set_hot(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        let h = Hot {
            code_start: slot.code_start,
            entry: slot.entry,
            id: slot.id,
        };
        if self.hot.len() <= s as usize {
            self.hot.resize(s as usize + 1, h);
        }
        self.hot[s as usize] = h;
    }

    /// Copies live programs to fresh arenas; programs use relative indices so
    /// nothing inside them changes.
    fn compact(&mut self) {
        let mut code = Vec::with_capacity(self.code.len() - self.garbage.min(self.code.len()));
        let mut tree = Vec::new();
        for slot in self.slots.iter_mut().filter(|s| s.live) {
            let (cs, cl) = (slot.code_start as usize, slot.code_len as usize);
            let (ts, tl) = (slot.tree_start as usize, slot.tree_len as usize);
            slot.code_start = code.len() as u32;
            slot.tree_start = tree.len() as u32;
            code.extend_from_slice(&self.code[cs..cs + cl]);
            tree.extend_from_slice(&self.bcode[ts..ts + tl]);
        }
        self.code = code;
        self.bcode = tree;
        for s in 0..self.slots.len() {
            self.set_hot(s as u32);
        }
        self.garbage = 0;
    }

    /// Checks that `ev` was built for a schema of this index's shape (so
    /// every attribute id and boolean slot the index holds indexes it) and
    /// defines every disallow-undefined attribute.
    pub(crate) fn validate(&self, ev: &Event) -> Result<()> {
        if !self.counting.is_settled() {
            return Err(Error::BulkUnfinished);
        }
        ev.check_shape(&self.schema)?;
        for (w, (&req, &def)) in self.required.iter().zip(&ev.defined).enumerate() {
            let missing = req & !def;
            if missing != 0 {
                let id = (w * 64) as u32 + missing.trailing_zeros();
                return Err(Error::MissingAttribute(self.schema.domain(id).name.clone()));
            }
        }
        Ok(())
    }

    /// What a selection in this index reads.
    pub(crate) fn source(&self) -> Source<'_> {
        Source {
            counting: &self.counting,
            schema: &self.schema,
            preds: &self.atoms.preds,
            slots: self.slots.len(),
            strings: &self.strings,
        }
    }

    /// Selects the candidate slots for `ev` into [`Selection::cands`], in
    /// no particular order (the matches' ids are sorted when collected), in
    /// one go: the cooperative search's selection run without a budget.
    /// `sel` is reusable scratch: it is reset here.
    pub(crate) fn select(&self, ev: &Event, sel: &mut Selection) {
        sel.reset();
        let done = sel.advance(self.source(), ev, u64::MAX, &mut 0);
        debug_assert!(done, "an unbounded selection finishes");
    }

    /// [`Index::select`] leaving out the scan list (the expressions with
    /// nothing posted, candidates of every event): see
    /// [`Selection::reset_posted`].
    pub(crate) fn select_posted(&self, ev: &Event, sel: &mut Selection) {
        sel.reset_posted();
        let done = sel.advance(self.source(), ev, u64::MAX, &mut 0);
        debug_assert!(done, "an unbounded selection finishes");
    }

    /// The expressions `ev` satisfies, in ascending id order.
    pub fn search(&self, ev: &Event) -> Result<Vec<Id>> {
        let mut s = Scratch::default();
        let mut out = Vec::new();
        self.search_with(&mut s, ev, &mut out)?;
        Ok(out)
    }

    /// [`Index::search`] reusing `scratch` and `out` so that repeated searches
    /// do not allocate once they have grown (`tests/no_alloc.rs`).
    pub fn search_with(&self, scratch: &mut Scratch, ev: &Event, out: &mut Vec<Id>) -> Result<()> {
        self.validate(ev)?;
        self.search_valid(scratch, ev, out);
        Ok(())
    }

    /// [`Index::search_with`] for an event [`Index::validate`] accepted
    /// (the batch search checks a whole batch before it starts).
    pub(crate) fn search_valid(&self, scratch: &mut Scratch, ev: &Event, out: &mut Vec<Id>) {
        out.clear();
        self.select(ev, &mut scratch.selection);
        // Sparse candidates are sorted (each would otherwise miss the
        // cache on its own); dense ones (the reference benchmark's, most of
        // the slots) are walked as selected: sorting them costs more than
        // the few misses it saves. Where evaluation hints the cache ahead
        // of each candidate, the hints hide those misses and the sort is
        // skipped: `betree bench` on 100,000 adtech expressions had
        // `search_all`, which never sorted, 1-8 % (median 4 %) ahead of
        // `search` in six runs.
        let n = scratch.selection.cands().len();
        if n * SORT_BELOW < self.slots.len() && !self.prefetches(n) {
            scratch.selection.sort_cands(self.slots.len());
        }
        let cands = scratch.selection.cands();
        scratch.memo.reset(self.atoms.len());
        scratch.hits.clear();
        scratch.hits.resize(cands.len().div_ceil(64), 0);
        self.evaluate::<false>(
            &scratch.selection,
            ev,
            &mut scratch.memo,
            &mut scratch.hits,
            &mut LaneState::default(),
            u64::MAX,
        );
        self.collect(cands, &scratch.hits, &mut scratch.marked, out);
    }

    /// Approximate bytes held by the index: the struct, every array at its
    /// capacity, the value sets inside predicates, the key tables, the
    /// atom and string tables and the schema. Hash tables are counted as
    /// capacity × (entry + 1 control byte), which is close to what `std`'s
    /// tables allocate; allocator overhead is not counted.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        fn map<K, V>(m: &HashMap<K, V>) -> usize {
            m.capacity() * (size_of::<(K, V)>() + 1)
        }
        fn vec<T>(v: &Vec<T>) -> usize {
            v.capacity() * size_of::<T>()
        }
        let mut n = size_of::<Index>();
        n += vec(&self.code) + vec(&self.bcode);
        n += vec(&self.slots) + vec(&self.hot);
        for slot in &self.slots {
            n += vec(&slot.terms);
        }
        n += map(&self.by_id) + vec(&self.free_slots);
        n += vec(&self.order) + vec(&self.required);
        let a = &self.atoms;
        n += vec(&a.preds) + vec(&a.refs) + vec(&a.free);
        n += a.by_pred.capacity() * (size_of::<u32>() + 1);
        n += a
            .preds
            .iter()
            .flatten()
            .map(Pred::heap_bytes)
            .sum::<usize>();
        n += self.counting.heap_bytes();
        n += self.strings.heap_bytes();
        n + self.schema.heap_bytes()
    }
}

/// A bulk load in progress (see [`Index::bulk`]): inserts go to the index;
/// dropping it finishes the load.
#[derive(Debug)]
pub struct Bulk<'a> {
    index: &'a mut Index,
}

impl Bulk<'_> {
    /// [`Index::insert`].
    pub fn insert(&mut self, id: Id, expr: &str) -> Result<()> {
        self.insert_with(id, expr, &Constants::default())
    }

    /// [`Index::insert_with`].
    pub fn insert_with(&mut self, id: Id, expr: &str, consts: &Constants) -> Result<()> {
        self.index.insert_text(id, Text::Borrowed(expr), consts)
    }

    /// [`Index::insert_owned`].
    pub fn insert_owned(&mut self, id: Id, expr: String) -> Result<()> {
        self.index
            .insert_text(id, Text::Owned(expr), &Constants::default())
    }
}

impl Drop for Bulk<'_> {
    fn drop(&mut self) {
        self.index.counting.defer(false);
    }
}

/// An expression's text, borrowed or owned (and then dropped once parsed).
enum Text<'a> {
    Borrowed(&'a str),
    Owned(String),
}

impl Text<'_> {
    fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Owned(s) => s,
        }
    }
}

/// The plain search sorts its candidates when they are fewer than one
/// slot in this many.
const SORT_BELOW: usize = 8;

/// Flag of a step's atom test (beside [`ATOM`]): the atom is decided by a
/// hit of the selection ([`Decided::Hit`]). Atom ids stay below it.
const HIT_ATOM: u32 = 1 << 30;
/// Flag of a step's atom test: the atom was not registered by value when
/// the program was compiled, so it is evaluated (memoized per event)
/// without reading its decision word. Atom ids stay below it (a shape's
/// leaf holds 29 bits, [`crate::parse::Ref`]).
const EVAL_ATOM: u32 = 1 << 29;
/// Flag of a step's atom test: the atom, a negated form decided by a miss
/// ([`Decided::Miss`]), is a top-level conjunct whose attribute the
/// selection proves defined, so the miss alone decides it. Atom ids stay
/// below it (they stay below [`BATCH_ATOM`]).
const MISS_ATOM: u32 = 1 << 28;

/// Reusable buffers for [`Index::search_with`].
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    /// The selection, with its buffers (candidates, marks, sources, merge
    /// heap).
    pub(crate) selection: Selection,
    pub(crate) hits: Vec<u64>,
    pub(crate) memo: Memo,
    /// The matching slots, a bit each, when many matches are put in id
    /// order (`Index::collect`).
    pub(crate) marked: Vec<u64>,
}

#[cfg(test)]
mod tests;
