//! The key lists: the atoms registered under each value.

/// The key lists: per list, the atoms registered under one value. Most
/// values have one atom (a long `or` of equalities has ~300,000 such
/// values), held in the list's 4-byte word; a longer list's word points
/// into `many`. A `Vec` per list cost 24 bytes plus a 32-byte allocation.
#[derive(Debug, Clone, Default)]
pub(crate) struct AtomLists {
    /// Per list: an atom id, [`MANY`] | an index into `many`, or [`EMPTY`].
    words: Vec<u32>,
    /// Per list: where the list's value sits among the values of its
    /// first atom (0 but for a set), so that the value is not stored.
    pub(super) first_key: Vec<u32>,
    many: Vec<Vec<u32>>,
    /// Positions in `many` free for reuse.
    free_many: Vec<u32>,
}

/// Flag of a list word pointing into [`AtomLists::many`]; atom ids stay
/// below it (they are below `HIT_ATOM`, `1 << 30`).
const MANY: u32 = 1 << 31;
/// The word of an empty list.
const EMPTY: u32 = u32::MAX;

impl AtomLists {
    /// A new empty list.
    pub(super) fn add(&mut self) -> u32 {
        self.first_key.push(0);
        self.add_without_key()
    }

    /// A new empty list with no [`AtomLists::first_key`], for lists whose
    /// value is read off another `AtomLists` numbered alike.
    pub(super) fn add_without_key(&mut self) -> u32 {
        self.words.push(EMPTY);
        self.words.len() as u32 - 1
    }

    /// The atoms of list `l`.
    #[inline]
    pub(crate) fn get(&self, l: u32) -> &[u32] {
        let w = &self.words[l as usize];
        match *w {
            EMPTY => &[],
            m if m & MANY != 0 => &self.many[(m & !MANY) as usize],
            _ => std::slice::from_ref(w),
        }
    }

    /// Adds `atom` to list `l` unless it was the last one added.
    pub(super) fn push_once(&mut self, l: u32, atom: u32) {
        let w = self.words[l as usize];
        if w == EMPTY {
            self.words[l as usize] = atom;
        } else if w & MANY != 0 {
            let v = &mut self.many[(w & !MANY) as usize];
            if v.last() != Some(&atom) {
                v.push(atom);
            }
        } else if w != atom {
            let pair = vec![w, atom];
            let m = match self.free_many.pop() {
                Some(m) => {
                    self.many[m as usize] = pair;
                    m
                }
                None => {
                    self.many.push(pair);
                    self.many.len() as u32 - 1
                }
            };
            self.words[l as usize] = MANY | m;
        }
    }

    /// Removes every occurrence of `atom` from list `l`; returns whether
    /// the list is now empty.
    pub(super) fn remove(&mut self, l: u32, atom: u32) -> bool {
        let w = self.words[l as usize];
        if w & MANY == 0 {
            if w == atom {
                self.words[l as usize] = EMPTY;
            }
        } else if w != EMPTY {
            let v = &mut self.many[(w & !MANY) as usize];
            v.retain(|&x| x != atom);
            if v.is_empty() {
                *v = Vec::new();
                self.free_many.push(w & !MANY);
                self.words[l as usize] = EMPTY;
            }
        }
        self.words[l as usize] == EMPTY
    }

    /// Whether every list is empty.
    #[cfg(test)]
    pub(crate) fn all_empty(&self) -> bool {
        self.words.iter().all(|&w| w == EMPTY)
    }

    pub(super) fn heap_bytes(&self) -> usize {
        (self.words.capacity() + self.first_key.capacity() + self.free_many.capacity()) * 4
            + self.many.capacity() * size_of::<Vec<u32>>()
            + self.many.iter().map(|v| v.capacity() * 4).sum::<usize>()
    }
}
