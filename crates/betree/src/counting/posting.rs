//! Posting an expression's terms: counted entries under key lists and
//! boolean slots, thresholds for ranges, and kill entries for the
//! conjuncts a hit makes false; unposting undoes each exactly.

use super::keys::{Keys, range_of};
use super::terms::counted;
use super::thresholds::Thresholds;
use super::{
    BOOL_TERM, CHECK_BIT, Checks, Counting, DEFINED_TERM, KEY_TERM, LIST_TERM, NO_CHECKS, NOT_TERM,
    PROVEN, PROVEN_BIT, RANGE_TERM, SLOT_SHIFT, TERM_FLAGS, or_term,
};
use crate::domain::AttrId;
use crate::expr::Pred;

impl Counting {
    /// Posts `entry` in key list `l`'s posting ([`Counting::key_post`]),
    /// or with `kill` its kill entries ([`Counting::key_kill`]); while
    /// deferred, it waits.
    fn post_key(&mut self, kill: bool, l: u32, entry: u32) {
        let (pending, lists) = if kill {
            (&mut self.pending_kills, &mut self.key_kill)
        } else {
            (&mut self.pending_posts, &mut self.key_post)
        };
        if !kill {
            if self.key_posted.len() <= l as usize {
                self.key_posted.resize(l as usize + 1, 0);
            }
            self.key_posted[l as usize] += 1;
        }
        if self.defer {
            pending.push((l, entry));
            return;
        }
        if lists.len() <= l as usize {
            lists.resize(l as usize + 1, Vec::new());
        }
        lists[l as usize].push(entry);
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

    /// Posts slot `s` under each of `terms`, to be a candidate only if
    /// `checks` hold too ([`Counting::split_checks`]); `preds` are the
    /// index's atoms (for range conjuncts). `proven`: being a candidate
    /// proves the expression true (every conjunct is
    /// [`Counting::proven`]).
    pub(crate) fn post(
        &mut self,
        s: u32,
        terms: &[u32],
        checks: Checks,
        proven: bool,
        preds: &[Option<Pred>],
    ) {
        if !Counting::posts(s, terms) {
            self.scan.push(s);
            return;
        }
        if checks != NO_CHECKS || (s as usize) < self.checks.len() {
            if self.checks.len() <= s as usize {
                self.checks.resize(s as usize + 1, NO_CHECKS);
            }
            self.checks[s as usize] = checks;
        }
        let need = counted(terms);
        if need == 0 {
            self.gated.push(if proven { s | PROVEN } else { s });
        }
        let entry = make_entry(s, need, proven, checks != NO_CHECKS);
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
        let checks = self
            .checks
            .get_mut(s as usize)
            .map_or(NO_CHECKS, |c| std::mem::replace(c, NO_CHECKS));
        let need = counted(terms);
        if need == 0
            && let Some(k) = self.gated.iter().position(|&x| x & !PROVEN == s)
        {
            self.gated.swap_remove(k);
        }
        let entry = make_entry(s, need, proven, checks != NO_CHECKS);
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
                    self.unpost_key(l, entry);
                }
                continue;
            }
            if t & (KEY_TERM | LIST_TERM) != 0 {
                for l in self.key_lists(t & !TERM_FLAGS, preds) {
                    self.unpost_key(l, entry);
                }
                continue;
            }
            self.unpost_bool(t & !BOOL_TERM, entry);
        }
    }

    /// Removes `entry` from key list `l`'s posting, keeping
    /// [`Counting::key_posted`].
    fn unpost_key(&mut self, l: u32, entry: u32) {
        let post = &mut self.key_post[l as usize];
        let before = post.len();
        post.retain(|&x| x != entry);
        self.key_posted[l as usize] -= (before - post.len()) as u32;
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
}

/// Moves the waiting entries `pending` onto their key lists' postings in
/// `lists`, each list's in the order they were posted (the order a load
/// without deferral gives them).
pub(super) fn settle_posts(pending: &mut Vec<(u32, u32)>, lists: &mut Vec<Vec<u32>>) {
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

/// One side of one attribute's thresholds, and a bound.
enum RangeSide<'a> {
    Int(&'a mut Thresholds<i64>, i64, bool),
    Float(&'a mut Thresholds<f64>, f64, bool),
}

/// The posting entry of slot `s` with `need` counted conjuncts, and
/// whether it has conjuncts to check.
fn make_entry(s: u32, need: u32, proven: bool, checked: bool) -> u32 {
    (s << SLOT_SHIFT)
        | if proven { PROVEN_BIT } else { 0 }
        | if checked { CHECK_BIT } else { 0 }
        | need
}
