//! Registering atoms by value: the key lists each predicate decided by
//! exact equality joins, and the attributes a search must probe because
//! something is registered or posted on them. Kept apart from posting
//! because an atom is registered once however many expressions share it.

use std::hash::BuildHasher;

use super::keys::{Key, key_at, key_index, keys_of, list_key, range_of};
use super::{Counting, Decided, KeyTag, ONE_LIST_MAX};
use crate::domain::AttrId;
use crate::expr::Pred;

impl Counting {
    pub(super) fn use_attr(&mut self, attr: AttrId) {
        let a = &mut self.attrs[attr as usize];
        a.uses += 1;
        if a.uses == 1 {
            let at = self.probes.partition_point(|&x| x < attr);
            self.probes.insert(at, attr);
        }
    }

    pub(super) fn unuse_attr(&mut self, attr: AttrId) {
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
    pub(super) fn find_list(&self, attr: AttrId, k: Key, preds: &[Option<Pred>]) -> Option<u32> {
        let h = self.hasher.hash_one(k);
        self.attrs[attr as usize]
            .keys
            .find(h, |t| t.is(k, &self.lists, preds))
            .map(|t| t.list)
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
    pub(super) fn key_lists(&self, atom: u32, preds: &[Option<Pred>]) -> KeyLists {
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
}

/// The key lists of an atom ([`Counting::key_lists`]).
pub(super) enum KeyLists {
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
