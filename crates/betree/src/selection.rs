//! Candidate selection: the stored expressions an event can satisfy, in id
//! order, found through the index's posting lists.
//!
//! One resumable stage machine serves both searches. The plain search runs
//! it with no budget, in one call; the cooperative search
//! ([`crate::coop::SearchIter`]) runs it in units of one reduction, stopping
//! wherever its budget runs out. Keeping one implementation means the two
//! cannot drift apart in which candidates they select, in their order, or in
//! what the cooperative search charges for them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::event::Event;
use crate::index::{Id, Index, key_of};

/// Where the selection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Nothing done yet: the root is next.
    Root,
    /// Probing the partition at this position.
    Probe(usize),
    /// One posting list (or none): copying it from this position.
    Copy(usize),
    /// Several lists, many candidates: marking list `src` from `at`.
    Mark { src: usize, at: usize },
    /// Then scanning the index's id-ordered slots from this position.
    Filter(usize),
    /// Several lists, few candidates: a k-way merge by id.
    Merge,
    /// Candidates are all selected.
    Done,
}

/// A posting list found by a probe, by position: `part` in the index's
/// partitions (or [`ALWAYS`] for the always-candidates) and `list` in that
/// partition's lists. Positions rather than references so that the
/// selection's buffers can live in reusable scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Source {
    part: u32,
    list: u32,
}

/// `Source::part` of the index's always-candidates.
const ALWAYS: u32 = u32::MAX;

impl Source {
    #[inline]
    fn list(self, index: &Index) -> &[u32] {
        if self.part == ALWAYS {
            &index.always
        } else {
            &index.partitions[self.part as usize].1.lists[self.list as usize]
        }
    }
}

/// A selection in progress for one event against one index.
///
/// Each unit costs one reduction: the index root, one partition probed, one
/// candidate taken from a posting list, and, when several lists must be
/// brought into id order through the index's id-ordered slot list, one slot
/// scanned. Choosing how to reach id order looks at list lengths only and
/// is free.
///
/// It owns everything it works with: the candidates it selects
/// ([`Selection::cands`]) and its scratch. Its buffers are kept by
/// [`Selection::reset`], so a selection reused for search after search (the
/// plain search keeps one in its [`crate::Scratch`]) allocates nothing once
/// they have grown.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    stage: Stage,
    /// Posting lists found by the probes; each is in id order and they are
    /// disjoint (an expression sits in one partition, an event has one value
    /// per attribute).
    sources: Vec<Source>,
    heap: BinaryHeap<Reverse<(Id, usize, usize)>>,
    /// The selected candidates so far: slots, in id order.
    cands: Vec<u32>,
    /// Scratch of the marking stages: one bit per slot, set for the slots
    /// of every list; sized when marking starts.
    mark: Vec<u64>,
}

impl Default for Selection {
    /// A selection that has not started.
    fn default() -> Selection {
        Selection {
            stage: Stage::Root,
            sources: Vec::new(),
            heap: BinaryHeap::new(),
            cands: Vec::new(),
            mark: Vec::new(),
        }
    }
}

impl Selection {
    /// Makes this a selection that has not started, keeping its buffers.
    pub(crate) fn reset(&mut self) {
        self.stage = Stage::Root;
        self.sources.clear();
        self.heap.clear();
        self.cands.clear();
        self.mark.clear();
    }

    /// The candidates selected so far: slots of the index, in id order (all
    /// of them once [`Selection::advance`] has returned true).
    #[inline]
    pub(crate) fn cands(&self) -> &[u32] {
        &self.cands
    }

    /// Advances the selection of `ev`'s candidates in `index`, appending
    /// slots to [`Selection::cands`] in id order, by units of one reduction
    /// added to `spent`, until the selection is over (true) or `spent`
    /// reaches `budget` (false). A call never overruns: every unit is
    /// checked before it starts.
    ///
    /// `index` and `ev` must be the same on every call of one selection.
    pub(crate) fn advance(
        &mut self,
        index: &Index,
        ev: &Event,
        budget: u64,
        spent: &mut u64,
    ) -> bool {
        loop {
            if self.stage == Stage::Done {
                return true;
            }
            if *spent >= budget {
                return false;
            }
            // Units this turn may take; at least 1.
            let room = usize::try_from(budget - *spent).unwrap_or(usize::MAX);
            match self.stage {
                Stage::Root => {
                    *spent += 1;
                    // At most one allocation for the whole probe (none
                    // once warm): at most one list per partition, plus the
                    // always-candidates.
                    self.sources.reserve(index.partitions.len() + 1);
                    if !index.always.is_empty() {
                        self.sources.push(Source {
                            part: ALWAYS,
                            list: 0,
                        });
                    }
                    self.stage = Stage::Probe(0);
                }
                Stage::Probe(p) if p < index.partitions.len() => {
                    // As many probes as the budget has room for in one turn
                    // of the machine: the plain search probes every
                    // partition here.
                    let end = index.partitions.len().min(p.saturating_add(room));
                    for (q, (attr, part)) in index.partitions.iter().enumerate().take(end).skip(p) {
                        if let Some(list) = key_of(ev, *attr).and_then(|k| part.find(k)) {
                            self.sources.push(Source {
                                part: q as u32,
                                list,
                            });
                        }
                    }
                    *spent += (end - p) as u64;
                    self.stage = Stage::Probe(end);
                }
                Stage::Probe(_) => {
                    let total: usize = self.sources.iter().map(|s| s.list(index).len()).sum();
                    self.cands.reserve(total);
                    self.stage = if self.sources.len() <= 1 {
                        Stage::Copy(0)
                    } else if total * 8 > index.order.len() {
                        // Many candidates: marking them and scanning every
                        // slot in id order beats merging.
                        // Empty since `reset`: all zero.
                        self.mark.resize(index.slots.len().div_ceil(64), 0);
                        Stage::Mark { src: 0, at: 0 }
                    } else {
                        for (k, s) in self.sources.iter().enumerate() {
                            let first = s.list(index)[0];
                            self.heap
                                .push(Reverse((index.slots[first as usize].id, k, 0)));
                        }
                        Stage::Merge
                    };
                }
                Stage::Copy(at) => {
                    let src = self.sources.first().map_or(&[][..], |s| s.list(index));
                    let n = (src.len() - at).min(room);
                    self.cands.extend_from_slice(&src[at..at + n]);
                    *spent += n as u64;
                    self.stage = if at + n == src.len() {
                        Stage::Done
                    } else {
                        Stage::Copy(at + n)
                    };
                }
                Stage::Mark { src, at } => {
                    let list = self.sources[src].list(index);
                    let n = (list.len() - at).min(room);
                    for &s in &list[at..at + n] {
                        self.mark[s as usize / 64] |= 1 << (s % 64);
                    }
                    *spent += n as u64;
                    self.stage = if at + n < list.len() {
                        Stage::Mark { src, at: at + n }
                    } else if src + 1 < self.sources.len() {
                        Stage::Mark {
                            src: src + 1,
                            at: 0,
                        }
                    } else {
                        Stage::Filter(0)
                    };
                }
                Stage::Filter(at) => {
                    let n = (index.order.len() - at).min(room);
                    let marked = &self.mark;
                    self.cands.extend(
                        index.order[at..at + n]
                            .iter()
                            .copied()
                            .filter(|&s| marked[s as usize / 64] & (1 << (s % 64)) != 0),
                    );
                    *spent += n as u64;
                    self.stage = if at + n == index.order.len() {
                        Stage::Done
                    } else {
                        Stage::Filter(at + n)
                    };
                }
                Stage::Merge => {
                    for _ in 0..room {
                        let Some(Reverse((_, k, at))) = self.heap.pop() else {
                            self.stage = Stage::Done;
                            break;
                        };
                        *spent += 1;
                        let list = self.sources[k].list(index);
                        self.cands.push(list[at]);
                        if let Some(&s) = list.get(at + 1) {
                            self.heap
                                .push(Reverse((index.slots[s as usize].id, k, at + 1)));
                        }
                    }
                }
                Stage::Done => unreachable!("checked at the top of the loop"),
            }
        }
    }
}
