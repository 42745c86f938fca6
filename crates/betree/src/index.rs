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
//! counting leaves few candidates beyond the matches.

use std::collections::{HashMap, HashSet};

use crate::counting::{Counting, Decided};
use crate::domain::{AttrId, Bounds, Schema};
use crate::event::Event;
use crate::expr::{Constants, Pred, compile_source};
use crate::parse::Node;
use crate::program::{ACCEPT, ATOM, Memo, REJECT, Step, compile};
use crate::selection::{Seen, Selection, Source};
use crate::{Error, Result};

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

/// The table hash of `p`; fixed keys, so a build is reproducible.
fn atom_hash(p: &Pred) -> u64 {
    let mut h = std::hash::DefaultHasher::new();
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
    /// table.
    fn intern(&mut self, p: Pred, share: bool) -> u32 {
        if share && let Some(id) = self.find(&p) {
            self.refs[id as usize] += 1;
            return id;
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
        id
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

/// The atoms one insert interned, in text order, as runs of consecutive
/// ids: the atoms of new predicates take consecutive ids, so one long
/// expression of distinct predicates is a few runs, not 4 bytes a
/// predicate.
#[derive(Default)]
struct AtomRuns {
    /// First id and length of each run.
    runs: Vec<(u32, u32)>,
}

impl AtomRuns {
    fn push(&mut self, a: u32) {
        if let Some((first, n)) = self.runs.last_mut()
            && *first + *n == a
        {
            *n += 1;
            return;
        }
        self.runs.push((a, 1));
    }

    fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs.iter().flat_map(|&(first, n)| first..first + n)
    }
}

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
    by_id: HashMap<Id, u32>,
    free_slots: Vec<u32>,
    pub(crate) code: Vec<Step>,
    pub(crate) bcode: Vec<u32>,
    garbage: usize,
    pub(crate) atoms: Atoms,
    /// Every live slot, in id order.
    pub(crate) order: Vec<u32>,
    /// The counting index over the expressions' conjuncts.
    pub(crate) counting: Counting,
    required: Vec<u64>,
    strings: HashMap<AttrId, HashSet<String>>,
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
        Index {
            schema,
            slots: Vec::new(),
            by_id: HashMap::new(),
            free_slots: Vec::new(),
            code: Vec::new(),
            bcode: Vec::new(),
            garbage: 0,
            atoms: Atoms::default(),
            order: Vec::new(),
            counting,
            required,
            strings: HashMap::new(),
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
        self.insert_text(id, Text::Owned(expr), &Constants::default())
    }

    fn insert_text(&mut self, id: Id, expr: Text<'_>, consts: &Constants) -> Result<()> {
        if self.by_id.contains_key(&id) {
            return Err(Error::DuplicateId(id));
        }
        // Each predicate is interned as it is read, so the expression never
        // holds a copy of its predicates beside the atom table's; a failed
        // insert gives its atoms back.
        let mut atoms = AtomRuns::default();
        let table = &mut self.atoms;
        let large = expr.as_str().len() > LARGE_EXPR_BYTES;
        let parsed = compile_source(&self.schema, expr.as_str(), consts, &mut |p| {
            let a = table.intern(p, !large);
            atoms.push(a);
            a
        });
        drop(expr);
        let mut e = match parsed.and_then(|e| self.check_strings(&atoms).map(|()| e)) {
            Ok(e) => e,
            Err(err) => {
                self.release(atoms.iter());
                return Err(err);
            }
        };
        for a in atoms.iter() {
            let p = self.atoms.preds[a as usize].as_ref().expect("live atom");
            self.longest_set = self.longest_set.max(p.set_len());
        }
        // A small expression registers every atom; a large one only its
        // top-level conjuncts, which posting needs: its other atoms are
        // evaluated (see `LARGE_EXPR_BYTES`).
        if !large {
            for a in atoms.iter() {
                self.counting.register(a, &self.atoms.preds);
            }
        } else {
            let mut stack = vec![e.root];
            while let Some(r) = stack.pop() {
                match e.node(r) {
                    Node::And(a, b) => stack.extend([b, a]),
                    Node::Pred(a) => self.counting.register(a, &self.atoms.preds),
                    _ => {}
                }
            }
        }
        drop(atoms);
        // The conjuncts are read before compiling reorders the operands.
        let terms = self.counting.conjunct_terms(&e, &self.atoms.preds);
        let code_start = self.code.len();
        let tree_start = self.bcode.len();
        let entry = compile(&mut e, &mut self.code, &mut self.bcode);
        drop(e);
        // Steps testing an atom decided by a hit carry the fact, so that
        // evaluation tests the stamp without reading the atom's entry.
        let counting = &self.counting;
        // Those not registered carry that, so that evaluation goes straight
        // to the predicate (exact still if another expression registers
        // the atom later).
        for st in &mut self.code[code_start..] {
            if st.test & ATOM != 0 {
                match counting.decided(st.test & !ATOM) {
                    Decided::Hit => st.test |= HIT_ATOM,
                    Decided::No => st.test |= EVAL_ATOM,
                    Decided::Miss(_) => {}
                }
            }
        }
        let slot = Slot {
            id,
            live: true,
            code_start: code_start as u32,
            code_len: (self.code.len() - code_start) as u32,
            entry,
            tree_start: tree_start as u32,
            tree_len: (self.bcode.len() - tree_start) as u32,
            terms,
        };
        let s = match self.free_slots.pop() {
            Some(s) => {
                self.slots[s as usize] = slot;
                s
            }
            None => {
                self.slots.push(slot);
                self.slots.len() as u32 - 1
            }
        };
        self.by_id.insert(id, s);
        insert_sorted(&mut self.order, s, &self.slots);
        self.counting
            .post(s, &self.slots[s as usize].terms, &self.atoms.preds);
        Ok(())
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

    fn check_strings(&mut self, atoms: &AtomRuns) -> Result<()> {
        let mut err = None;
        let schema = &self.schema;
        let strings = &mut self.strings;
        let preds = &self.atoms.preds;
        for p in atoms
            .iter()
            .map(|a| preds[a as usize].as_ref().expect("live atom"))
        {
            if err.is_some() {
                break;
            }
            if let Some((attr, vals)) = p.strings() {
                let d = schema.domain(attr);
                if let Bounds::MaxStrings(max) = d.bounds {
                    let set = strings.entry(attr).or_default();
                    let new: HashSet<&str> =
                        vals.iter().copied().filter(|v| !set.contains(*v)).collect();
                    if set.len() + new.len() > max {
                        err = Some(Error::Domain(format!(
                            "attribute `{}` allows at most {max} distinct strings in expressions, this expression would bring it to {}",
                            d.name,
                            set.len() + new.len()
                        )));
                    } else {
                        set.extend(new.into_iter().map(str::to_string));
                    }
                }
            }
        }
        err.map_or(Ok(()), Err)
    }

    /// Removes an expression.
    pub fn delete(&mut self, id: Id) -> Result<()> {
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
        self.counting.unpost(s, &slot.terms, &self.atoms.preds);
        // The expression's atoms, one per predicate leaf, are the atom tests
        // of its jump program (every leaf has exactly one step), so the slot
        // keeps no list of them.
        let (cs, cl) = (slot.code_start as usize, slot.code_len as usize);
        let atoms: Vec<u32> = self.code[cs..cs + cl]
            .iter()
            .filter(|st| st.test & ATOM != 0)
            .map(|st| st.test & !(ATOM | HIT_ATOM | EVAL_ATOM))
            .collect();
        self.release(atoms);
        self.free_slots.push(s);
        self.garbage += (slot.code_len + slot.tree_len) as usize;
        if self.garbage > 1024 && self.garbage * 2 > self.code.len() + self.bcode.len() {
            self.compact();
        }
        Ok(())
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
        self.garbage = 0;
    }

    /// Checks that `ev` was built for a schema of this index's shape (so
    /// every attribute id and boolean slot the index holds indexes it) and
    /// defines every disallow-undefined attribute.
    pub(crate) fn validate(&self, ev: &Event) -> Result<()> {
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
        }
    }

    /// Selects the candidate slots for `ev` into [`Selection::cands`], in
    /// id order (so results come out sorted without sorting them), in one
    /// go: the cooperative search's selection run without a budget. `sel`
    /// is reusable scratch: it is reset here.
    pub(crate) fn select(&self, ev: &Event, sel: &mut Selection) {
        sel.reset();
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
        out.clear();
        self.select(ev, &mut scratch.selection);
        let cands = scratch.selection.cands();
        scratch.memo.reset(self.atoms.len());
        scratch.hits.clear();
        scratch.hits.resize(cands.len().div_ceil(64), 0);
        self.eval_many::<false>(
            &scratch.selection,
            ev,
            &mut scratch.memo,
            &mut scratch.hits,
            &mut LaneState::default(),
            u64::MAX,
        );
        self.collect(cands, &scratch.hits, out);
        Ok(())
    }

    /// Evaluates `cands` on `ev`, setting bit `i` of `hits` when candidate
    /// `i` matches. `lanes` holds the evaluation in flight, so a call that
    /// stops on its budget resumes exactly where it stopped.
    ///
    /// One jump program is a chain of dependent loads (step, event word, next
    /// step), so several programs are interleaved to let the CPU overlap their
    /// latencies; the next step is chosen without a branch because the test
    /// outcome is unpredictable.
    ///
    /// With `COUNT`, every unit of work is charged: taking a candidate (1,
    /// checked against `budget` before it starts), and executing one step
    /// (its weight, plus the loop steps of its atom the first time the atom
    /// is evaluated for this event). Steps are checked once per round of
    /// `LANES`, so the call spends less than `budget` plus one round of the
    /// costliest steps (`SearchIter::max_overrun`). Returns whether every
    /// candidate is decided and the reductions spent.
    pub(crate) fn eval_many<const COUNT: bool>(
        &self,
        sel: &Selection,
        ev: &Event,
        memo: &mut Memo,
        hits: &mut [u64],
        lanes: &mut LaneState,
        budget: u64,
    ) -> (bool, u64) {
        let bits = &ev.bits[..];
        let (cands, seen) = (sel.cands(), sel.seen());
        let LaneState {
            pc,
            pos,
            next,
            live,
        } = lanes;
        let mut code: [&[Step]; LANES] = [&[]; LANES];
        for k in 0..LANES {
            if pc[k] < REJECT {
                code[k] = self.program(&self.slots[cands[pos[k]] as usize]);
            }
        }
        let mut red = 0u64;
        // Puts the next candidate that needs evaluation into lane `k`;
        // constant programs are decided on the spot. With `COUNT` it stops
        // when the budget is spent, leaving the lane empty.
        macro_rules! refill {
            ($k:expr) => {{
                let mut filled = false;
                while *next < cands.len() {
                    if COUNT {
                        if red >= budget {
                            break;
                        }
                        red += 1;
                    }
                    let i = *next;
                    let slot = &self.slots[cands[i] as usize];
                    *next += 1;
                    if slot.entry < REJECT {
                        code[$k] = self.program(slot);
                        pc[$k] = slot.entry;
                        pos[$k] = i;
                        filled = true;
                        break;
                    }
                    if slot.entry == ACCEPT {
                        hits[i / 64] |= 1 << (i % 64);
                    }
                }
                filled
            }};
        }
        while *live > 0 || *next < cands.len() {
            // The budget is checked once per round of lanes, not per lane:
            // per lane it cost ~10% of a search whose leaves are single bit
            // tests. A round may so overrun by up to `LANES` units, which
            // `SearchIter::max_overrun` states.
            if COUNT && red >= budget {
                return (false, red);
            }
            for k in 0..LANES {
                let p = pc[k];
                if p < REJECT {
                    let st = code[k][p as usize];
                    if COUNT {
                        red += u64::from(st.weight);
                    }
                    let v = if st.test < ATOM {
                        ((bits[(st.test >> 6) as usize] >> (st.test & 63)) & 1) as u32
                    } else {
                        self.atom::<COUNT>(st.test & !ATOM, ev, seen, memo, &mut red) as u32
                    };
                    let pick = 0u32.wrapping_sub(v);
                    pc[k] = (st.on_true & pick) | (st.on_false & !pick);
                    continue;
                }
                if pos[k] != NONE {
                    // The program in this lane is decided.
                    if p == ACCEPT {
                        hits[pos[k] / 64] |= 1 << (pos[k] % 64);
                    }
                    pos[k] = NONE;
                    *live -= 1;
                }
                if refill!(k) {
                    *live += 1;
                }
            }
        }
        (true, red)
    }

    /// The jump program of `slot` (offsets added in `usize`).
    #[inline]
    fn program(&self, slot: &Slot) -> &[Step] {
        let start = slot.code_start as usize;
        &self.code[start..start + slot.code_len as usize]
    }

    /// Appends the ids of the candidates whose bit is set in `hits`, in
    /// ascending order (candidates come in no particular order; the
    /// matches are few, so sorting them is cheap).
    pub(crate) fn collect(&self, cands: &[u32], hits: &[u64], out: &mut Vec<Id>) {
        let from = out.len();
        for (w, &word) in hits.iter().enumerate() {
            let mut m = word;
            while m != 0 {
                let i = w * 64 + m.trailing_zeros() as usize;
                out.push(self.slots[cands[i] as usize].id);
                m &= m - 1;
            }
        }
        out[from..].sort_unstable();
    }

    /// The value of atom `a` on `ev`. An atom the counting index decides
    /// by value costs a stamp test (its lookup was charged to the
    /// selection); any other is evaluated once per event and memoized,
    /// charging its loop steps.
    #[inline(never)]
    fn atom<const COUNT: bool>(
        &self,
        a: u32,
        ev: &Event,
        seen: &Seen,
        memo: &mut Memo,
        red: &mut u64,
    ) -> bool {
        if a & HIT_ATOM != 0 {
            return seen.hit(a & !HIT_ATOM);
        }
        let a = if a & EVAL_ATOM != 0 {
            a & !EVAL_ATOM
        } else {
            match self.counting.decided(a) {
                Decided::Hit => return seen.hit(a),
                Decided::Miss(attr) => return ev.is_defined(attr) && !seen.hit(a),
                Decided::No => a,
            }
        };
        if let Some(v) = memo.get(a) {
            return v;
        }
        let (v, steps) = self.atoms.preds[a as usize]
            .as_ref()
            .expect("programs reference live atoms")
            .eval(ev);
        if COUNT {
            *red += steps;
        }
        memo.set(a, v);
        v
    }

    /// Approximate bytes held by the index: the struct, every array at its
    /// capacity, the strings and value sets inside predicates, partition
    /// keys and domains, the interning and string-bound tables and the
    /// schema. Hash tables are counted as capacity × (entry + 1 control
    /// byte), which is close to what `std`'s tables allocate; allocator
    /// overhead is not counted.
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
        n += vec(&self.slots);
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
        n += map(&self.strings);
        for set in self.strings.values() {
            n += set.capacity() * (size_of::<String>() + 1);
            n += set.iter().map(String::capacity).sum::<usize>();
        }
        n + self.schema.heap_bytes()
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

/// Keeps `list` in ascending id order.
fn insert_sorted(list: &mut Vec<u32>, s: u32, slots: &[Slot]) {
    let id = slots[s as usize].id;
    let pos = list.partition_point(|&x| slots[x as usize].id < id);
    list.insert(pos, s);
}

/// Flag of a step's atom test (beside [`ATOM`]): the atom is decided by a
/// hit of the selection ([`Decided::Hit`]). Atom ids stay below it.
const HIT_ATOM: u32 = 1 << 30;
/// Flag of a step's atom test: the atom was not registered by value when
/// the program was compiled, so it is evaluated (memoized per event)
/// without reading its decision word. Atom ids stay below it (a shape's
/// leaf holds 29 bits, [`crate::parse::Ref`]).
const EVAL_ATOM: u32 = 1 << 29;

/// Programs evaluated side by side, one leaf each per round.
pub(crate) const LANES: usize = 4;
/// An empty lane.
const NONE: usize = usize::MAX;

/// The evaluation in flight: per lane the step (`ACCEPT`/`REJECT` once the
/// program is decided) and the candidate (`NONE` for an empty lane), then
/// the next candidate to take and the number of occupied lanes.
#[derive(Debug, Clone)]
pub(crate) struct LaneState {
    pc: [u32; LANES],
    pos: [usize; LANES],
    next: usize,
    live: usize,
}

impl Default for LaneState {
    fn default() -> Self {
        LaneState {
            pc: [REJECT; LANES],
            pos: [NONE; LANES],
            next: 0,
            live: 0,
        }
    }
}

/// Reusable buffers for [`Index::search_with`].
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    /// The selection, with its buffers (candidates, marks, sources, merge
    /// heap).
    pub(crate) selection: Selection,
    pub(crate) hits: Vec<u64>,
    pub(crate) memo: Memo,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SearchStep;
    use crate::domain::{AttrType, Domain};
    use crate::event::EventBuilder;

    fn schema() -> Schema {
        Schema::from_domains([
            Domain::new("i", AttrType::Int, true),
            Domain::new("il", AttrType::IntList, true),
            Domain::new("b", AttrType::Bool, true),
        ])
        .unwrap()
    }

    #[test]
    fn shared_predicates_are_one_atom_evaluated_once_per_event() {
        let mut index = Index::new(schema());
        index.insert(1, "il one of (1, 2, 3) and b").unwrap();
        index.insert(2, "il one of (3, 2, 1) or i = 4").unwrap();
        index.insert(3, "not il one of (1, 2, 3)").unwrap();
        // The set is normalised, so all three share one atom; `i = 4` is another.
        assert_eq!(index.atoms.preds.iter().flatten().count(), 2);
        let s = index.schema().clone();
        let ev = EventBuilder::new(&s)
            .int_list("il", [9, 9, 9, 9, 3])
            .unwrap()
            .bool("b", true)
            .unwrap()
            .build();
        // The event's list is stored as the set [3, 9]; with memoization only
        // the first use pays the merge against (1, 2, 3): three steps.
        let mut it = index.search_iter(&ev).unwrap();
        let SearchStep::Done(ids) = index.search_next(&mut it, u64::MAX) else {
            panic!()
        };
        assert_eq!(ids, vec![1, 2]);
        // Expression 1 posts `b` and the set (it needs both); 2 (an `or`)
        // and 3 (a `not`) have no indexed conjunct and are on the scan
        // list. Selection: the root; four values probed (`i`, undefined;
        // the list's two elements; `b`); two terms taken (the set, by the
        // element 3, and `b`) with one posting entry each; two scan-list
        // entries.
        let selection = 1 + 4 + (2 + 2) + 2;
        // Evaluation: three candidates taken; expression 1 tests `b` first
        // (the cheaper operand: 2 + 1 for entering the `and`), then the set
        // (2; decided by the selection's hit, no loop steps); expression 2
        // enters its `or` at the set (2 + 1) and is decided; expression 3
        // enters its `not` at the set (2 + 1).
        let evaluation = 3 + (3 + 2) + 3 + 3;
        assert_eq!(it.reductions(), selection + evaluation);
        for id in 1..=3 {
            index.delete(id).unwrap();
        }
        assert_eq!(index.atoms.preds.iter().flatten().count(), 0);
        assert!(index.is_empty());
    }

    #[test]
    fn a_failed_insert_leaves_no_atom_behind() {
        let mut index = Index::new(schema());
        index.insert(1, "i = 3").unwrap();
        // Predicates are interned as they are read: a type error after
        // two of them (one shared with expression 1), a syntax error after
        // two, a type error after a set, a boolean and a list test.
        for bad in [
            "i = 3 and i = 4 and il = 5",
            "i = 4 or i = 5 and (",
            "i in (7, 8) or b or il one of (1) or i = \"x\"",
        ] {
            index.insert(2, bad).unwrap_err();
            assert_eq!(index.atoms.preds.iter().flatten().count(), 1, "{bad}");
            assert_eq!(index.atoms.refs.iter().sum::<u32>(), 1, "{bad}");
            assert_eq!(index.counting.probes, vec![0], "{bad}");
        }
        // The shared atom has one reference left: deleting 1 frees it.
        index.delete(1).unwrap();
        assert_eq!(index.atoms.preds.iter().flatten().count(), 0);
        assert!(index.counting.probes.is_empty());
        assert!(index.counting.lists.all_empty());
        index.insert(2, "i = 4 or il one of (1)").unwrap();
        let s = index.schema().clone();
        let ev = EventBuilder::new(&s).int("i", 4).unwrap().build();
        assert_eq!(index.search(&ev).unwrap(), vec![2]);
    }

    #[test]
    fn a_large_expression_keeps_its_atoms_registers_its_conjuncts_and_searches_the_same() {
        let schema = Schema::from_domains([
            Domain::new("a", AttrType::Int, true),
            Domain::new("b", AttrType::Int, true),
            Domain::new("c", AttrType::Int, true),
        ])
        .unwrap();
        // Over LARGE_EXPR_BYTES, repeating one predicate.
        let n = 2000;
        let chain = (0..n)
            .map(|i| format!("a = {i}"))
            .chain(["a = 5".to_string()])
            .collect::<Vec<_>>()
            .join(" or ");
        assert!(chain.len() > LARGE_EXPR_BYTES);
        let mut index = Index::new(schema.clone());
        // 1: a conjunct (`b = 7`, posted) and a long `or`; 2: a small
        // expression with one of the `or`'s predicates; 3: a long `or`
        // with no conjunct (the scan list) and a range.
        index.insert(1, &format!("b = 7 and ({chain})")).unwrap();
        // Its own atoms, one per predicate leaf; only `b` is probed.
        assert_eq!(index.atoms.by_pred.len(), 0);
        assert_eq!(index.atoms.preds.iter().flatten().count(), n + 2);
        assert_eq!(index.counting.probes, vec![1]);
        index.insert(2, "a = 5 or c = 1").unwrap();
        assert_eq!(index.atoms.by_pred.len(), 2);
        assert_eq!(index.counting.probes, vec![0, 1, 2]);
        index.insert(3, &format!("{chain} or c > 10")).unwrap();
        let n = n as i64;
        // Plain arithmetic on the event's values.
        let expected = |live: &[Id], a: i64, b: i64, c: i64| -> Vec<Id> {
            let m = [b == 7 && a < n, a == 5 || c == 1, a < n || c > 10];
            live.iter()
                .copied()
                .filter(|&id| m[id as usize - 1])
                .collect()
        };
        let check = |index: &Index, live: &[Id]| {
            let mut events = Vec::new();
            let mut want = Vec::new();
            for a in [0, 5, 6, n - 1, n, n + 7] {
                for b in [7, 8] {
                    for c in [1, 5, 20] {
                        events.push(
                            EventBuilder::new(&schema)
                                .int("a", a)
                                .unwrap()
                                .int("b", b)
                                .unwrap()
                                .int("c", c)
                                .unwrap()
                                .build(),
                        );
                        want.push(expected(live, a, b, c));
                    }
                }
            }
            for (ev, want) in events.iter().zip(&want) {
                assert_eq!(&index.search(ev).unwrap(), want);
                // The budgeted search, a few reductions at a time.
                let mut it = index.search_iter(ev).unwrap();
                let got = loop {
                    if let SearchStep::Done(ids) = index.search_next(&mut it, 7) {
                        break ids;
                    }
                };
                assert_eq!(&got, want);
            }
            assert_eq!(index.search_batch(&events).unwrap(), want);
            // Reused result lists: longer and dirty before, then fewer events.
            let mut out = vec![vec![99, 98]; want.len() + 3];
            index.search_batch_into(&events, &mut out).unwrap();
            assert_eq!(out, want);
            index.search_batch_into(&events[..4], &mut out).unwrap();
            assert_eq!(out, want[..4]);
        };
        check(&index, &[1, 2, 3]);
        index.delete(2).unwrap();
        assert_eq!(index.counting.probes, vec![1]);
        check(&index, &[1, 3]);
        index.delete(1).unwrap();
        check(&index, &[3]);
        index.delete(3).unwrap();
        assert!(index.counting.lists.all_empty());
        assert!(index.counting.probes.is_empty());
        assert_eq!(index.atoms.preds.iter().flatten().count(), 0);
    }

    #[test]
    fn a_value_shared_by_sets_outlives_the_atom_it_was_read_from() {
        let schema = Schema::from_domains([
            Domain::new("i", AttrType::Int, true),
            Domain::new("s", AttrType::Str, true),
        ])
        .unwrap();
        let mut index = Index::new(schema.clone());
        // The key lists of 2 and "b" are first made by sets, where the
        // value is not the set's first one; deleting those sets leaves the
        // lists to atoms holding the value elsewhere.
        index
            .insert(1, r#"i in (1, 2, 3) or s in ("a", "b")"#)
            .unwrap();
        index
            .insert(2, r#"i in (2, 5) or s in ("b", "c")"#)
            .unwrap();
        index.insert(3, r#"i = 2 or s = "b""#).unwrap();
        let ev = |i: i64, s: &str| {
            EventBuilder::new(&schema)
                .int("i", i)
                .unwrap()
                .str("s", s)
                .unwrap()
                .build()
        };
        assert_eq!(index.search(&ev(2, "z")).unwrap(), vec![1, 2, 3]);
        index.delete(1).unwrap();
        assert_eq!(index.search(&ev(2, "z")).unwrap(), vec![2, 3]);
        assert_eq!(index.search(&ev(9, "b")).unwrap(), vec![2, 3]);
        assert_eq!(index.search(&ev(3, "a")).unwrap(), Vec::<Id>::new());
        assert_eq!(index.search(&ev(5, "z")).unwrap(), vec![2]);
        index.delete(2).unwrap();
        assert_eq!(index.search(&ev(2, "z")).unwrap(), vec![3]);
        assert_eq!(index.search(&ev(9, "b")).unwrap(), vec![3]);
        assert_eq!(index.search(&ev(5, "c")).unwrap(), Vec::<Id>::new());
        index.delete(3).unwrap();
        assert!(index.counting.lists.all_empty());
    }

    #[test]
    fn memory_counts_what_predicates_and_keys_hold() {
        let schema = Schema::from_domains([Domain::new("s", AttrType::Str, true)]).unwrap();
        let mut index = Index::new(schema);
        let before = index.memory_bytes();
        let words: Vec<String> = (0..200)
            .map(|i| format!("\"{}{i:03}\"", "w".repeat(100)))
            .collect();
        index
            .insert(1, &format!("s in ({})", words.join(", ")))
            .unwrap();
        // The 200 strings of ~103 bytes are held at least by the interned
        // predicate (the atom table keeps only ids, no key text).
        let grown = index.memory_bytes() - before;
        assert!(grown >= 200 * 103, "grew by {grown}");
        // A string is held once: the counting index's key table finds its
        // value through the predicate and keeps no copy of its own.
        let before = index.memory_bytes();
        let long = "k".repeat(5000);
        index.insert(2, &format!("s = \"{long}\"")).unwrap();
        let grown = index.memory_bytes() - before;
        assert!((5000..2 * 5000).contains(&grown), "grew by {grown}");
    }

    #[test]
    fn every_indexable_conjunct_is_counted() {
        let mut index = Index::new(schema());
        index.insert(1, "i = 3 and b").unwrap();
        index.insert(2, "b and i in (4, 5)").unwrap();
        index.insert(3, "not b").unwrap();
        index.insert(4, "b").unwrap();
        index.insert(5, "i >= 4 and i < 6 and b").unwrap();
        index.insert(6, "i > 5 and b").unwrap();
        index.insert(7, "i <= 5 and il one of (7, 8)").unwrap();
        // Ranges alone: gated, a candidate unless a range is false.
        index.insert(8, "i > 2 and i <= 9").unwrap();
        index.insert(9, "i < 5").unwrap();
        assert_eq!(index.counting.scan, vec![index.by_id[&3]]);
        assert_eq!(index.counting.gated.len(), 2);
        assert_eq!(index.counting.threshold_count(0), 7);
        let s = index.schema().clone();
        let ev = EventBuilder::new(&s)
            .int("i", 5)
            .unwrap()
            .bool("b", true)
            .unwrap()
            .int_list("il", [1, 8])
            .unwrap()
            .build();
        let mut sel = Selection::default();
        index.select(&ev, &mut sel);
        let mut ids: Vec<Id> = sel
            .cands()
            .iter()
            .map(|&c| index.slots[c as usize].id)
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, vec![2, 3, 4, 5, 7, 8], "1, 6 and 9 miss a conjunct");
        assert_eq!(index.search(&ev).unwrap(), vec![2, 4, 5, 7, 8]);
        // With `i` undefined every range conjunct is false.
        let ev = EventBuilder::new(&s).bool("b", true).unwrap().build();
        index.select(&ev, &mut sel);
        let mut ids: Vec<Id> = sel
            .cands()
            .iter()
            .map(|&c| index.slots[c as usize].id)
            .collect();
        ids.sort_unstable();
        assert_eq!(ids, vec![3, 4]);
        // Delete undoes every posting, key and threshold.
        for id in 1..=9 {
            index.delete(id).unwrap();
        }
        let c = &index.counting;
        assert!(c.scan.is_empty() && c.gated.is_empty() && c.probes.is_empty());
        assert!(c.lists.all_empty());
        assert!(c.bool_post.iter().all(Vec::is_empty));
        assert_eq!(c.threshold_count(0), 0);
        assert!(index.search(&ev).unwrap().is_empty());
    }
}
