//! Inserting an expression: interning its atoms, registering them by
//! value, compiling its program and posting its conjuncts. The longest
//! path through the index's state, kept apart from the searches that read
//! that state.

use super::{EVAL_ATOM, HIT_ATOM, Id, Index, LARGE_EXPR_BYTES, MISS_ATOM, Slot, Text};
use crate::counting::{BOOL_TERM, Counting, Decided, NO_CHECK};
use crate::domain::Bounds;
use crate::expr::{Constants, compile_source};
use crate::parse::{Node, Ref};
use crate::program::{ACCEPT, ATOM, Step, compile, inline_int_tests};
use crate::{Error, Result};

impl Index {
    pub(super) fn insert_text(&mut self, id: Id, expr: Text<'_>, consts: &Constants) -> Result<()> {
        if self.by_id.contains_key(&id) {
            return Err(Error::DuplicateId(id));
        }
        // Each predicate is interned as it is read, so the expression never
        // holds a copy of its predicates beside the atom table's; a failed
        // insert gives its atoms back.
        let mut atoms = AtomRuns::default();
        // The atoms new with this insert: an atom shared with a stored
        // expression had its set length counted and its values registered
        // when it was new (registered atoms stay so until freed), so only
        // these are read again below; reading them all was three cache
        // misses a predicate at 1M expressions.
        let mut fresh = AtomRuns::default();
        let table = &mut self.atoms;
        let large = expr.as_str().len() > LARGE_EXPR_BYTES;
        // The strings numbered from here on are this insert's: given back
        // if it fails.
        let mark = self.strings.mark();
        let parsed = compile_source(
            &self.schema,
            &mut self.strings,
            expr.as_str(),
            consts,
            &mut |p| {
                let (a, new) = table.intern(p, !large);
                atoms.push(a);
                if new {
                    fresh.push(a);
                }
                a
            },
        );
        drop(expr);
        let mut e = match parsed.and_then(|e| self.check_string_bounds(mark).map(|()| e)) {
            Ok(e) => e,
            Err(err) => {
                self.release(atoms.iter());
                self.strings.rollback(mark);
                return Err(err);
            }
        };
        for a in fresh.iter() {
            let p = self.atoms.preds[a as usize].as_ref().expect("live atom");
            self.longest_set = self.longest_set.max(p.set_len());
        }
        // A small expression registers every atom; a large one only its
        // top-level conjuncts, which posting needs: its other atoms are
        // evaluated (see `LARGE_EXPR_BYTES`).
        if !large {
            for a in fresh.iter() {
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
        drop((atoms, fresh));
        // The conjuncts are read before compiling reorders the operands.
        let terms = self.counting.conjunct_terms(&e, &self.atoms.preds);
        let s = match self.free_slots.last() {
            Some(&s) => s,
            None => self.slots.len() as u32,
        };
        // The conjuncts the selection proves true are not evaluated again
        // (none when the expression is not posted: it is on the scan list),
        // those it checks included: they are proven from `terms`, all of
        // them, and posted from `kept`.
        let posted = Counting::posts(s, &terms);
        let (kept, checks) = self
            .counting
            .split_checks(s, terms.clone(), &self.atoms.preds);
        let preds = &self.atoms.preds;
        let counting = &self.counting;
        let proven = |n: Node| match n {
            _ if !posted => None,
            _ if counting.proven(n, &terms, preds) => Some(Ref::constant(true)),
            // A negated form whose attribute the selection proves defined
            // is the selection's miss alone.
            Node::Pred(a) if counting.defined_proven(a, &terms) => {
                Some(Ref::pred((a | MISS_ATOM) as usize))
            }
            _ => None,
        };
        let code_start = self.code.len();
        let tree_start = self.bcode.len();
        let schema = &self.schema;
        // Leaves the selection half proves are flagged `MISS_ATOM`.
        let chance = |a: u32| {
            preds
                .get((a & !MISS_ATOM) as usize)
                .and_then(Option::as_ref)
                .map_or(0.5, |p| p.chance(schema))
        };
        let entry = compile(&mut e, &mut self.code, &mut self.bcode, &proven, &chance);
        drop(e);
        let entry = self.settle_program(code_start, entry, large);
        let slot = Slot {
            id,
            live: true,
            code_start: code_start as u32,
            code_len: (self.code.len() - code_start) as u32,
            entry,
            tree_start: tree_start as u32,
            tree_len: (self.bcode.len() - tree_start) as u32,
            terms: kept,
        };
        match self.free_slots.pop() {
            Some(f) => {
                debug_assert_eq!(f, s);
                self.slots[s as usize] = slot;
            }
            None => self.slots.push(slot),
        }
        self.set_hot(s);
        self.by_id.insert(id, s);
        let at = insert_sorted(&mut self.order, s, &self.slots);
        self.ordered &= (at == 0 || self.order[at - 1] < s)
            && self.order.get(at + 1).is_none_or(|&next| s < next);
        // A checked atom is tested by its stamp, which searches then make.
        for k in checks {
            if k != NO_CHECK && k & BOOL_TERM == 0 {
                self.counting.stamp_test(k, &self.atoms.preds);
            }
        }
        self.counting.post(
            s,
            &self.slots[s as usize].terms,
            checks,
            entry == ACCEPT,
            &self.atoms.preds,
        );
        Ok(())
    }

    /// Settles the program just compiled from `code_start`, entered at
    /// `entry`: marks how each step's atom is decided and, for an
    /// expression that is not `large`, tests its integer comparisons in
    /// place. Returns the program's entry after that rewrite.
    fn settle_program(&mut self, code_start: usize, entry: u32, large: bool) -> u32 {
        // Steps testing an atom decided by a hit carry the fact, so that
        // evaluation tests the stamp without reading the atom's entry.
        // Those not registered carry that, so that evaluation goes straight
        // to the predicate (exact still if another expression registers
        // the atom later). Any other atom a step tests is stamped by the
        // searches from now on.
        let Index {
            code,
            counting,
            atoms,
            ..
        } = self;
        for st in &mut code[code_start..] {
            if st.test & ATOM != 0 && st.test & MISS_ATOM == 0 {
                match counting.decided(st.test & !ATOM) {
                    Decided::Hit => st.test |= HIT_ATOM,
                    Decided::No => st.test |= EVAL_ATOM,
                    Decided::Miss(_) => {}
                }
            }
            if let Some(a) = stamp_tested(*st) {
                counting.stamp_test(a, &atoms.preds);
            }
        }
        // A large expression keeps its comparisons in the atom table: an
        // operand step is 16 more bytes a comparison, and rewriting the
        // program holds a copy of it, where such an expression's memory
        // is held to a few times its text (perfkit's betree_memory).
        if large {
            entry
        } else {
            inline_int_tests(code, code_start, entry, EVAL_ATOM, &atoms.preds)
        }
    }

    /// Checks that the strings numbered since `mark` (this insert's new
    /// ones) keep every attribute within its
    /// [`Bounds::MaxStrings`](crate::Bounds::MaxStrings).
    fn check_string_bounds(&self, mark: usize) -> Result<()> {
        for attr in self.strings.made_since(mark) {
            let d = self.schema.domain(attr);
            if let Bounds::MaxStrings(max) = d.bounds {
                let n = self.strings.count(attr);
                if n > max {
                    return Err(Error::Domain(format!(
                        "attribute `{}` allows at most {max} distinct strings in expressions, this expression would bring it to {n}",
                        d.name
                    )));
                }
            }
        }
        Ok(())
    }
}

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

/// Keeps `list` in ascending id order, returning where slot `s` went.
fn insert_sorted(list: &mut Vec<u32>, s: u32, slots: &[Slot]) -> usize {
    let id = slots[s as usize].id;
    // Ids mostly come in ascending order: appending needs no binary
    // search, whose ~20 probes into the slots missed the cache at 1M
    // expressions.
    if list.last().is_none_or(|&x| slots[x as usize].id < id) {
        list.push(s);
        return list.len() - 1;
    }
    let pos = list.partition_point(|&x| slots[x as usize].id < id);
    list.insert(pos, s);
    pos
}

/// The atom step `st` tests by its stamp, if it does: any atom test
/// but one of an atom evaluated by value ([`EVAL_ATOM`]).
fn stamp_tested(st: Step) -> Option<u32> {
    (st.test & ATOM != 0 && st.test & EVAL_ATOM == 0)
        .then_some(st.test & !(ATOM | HIT_ATOM | MISS_ATOM))
}
