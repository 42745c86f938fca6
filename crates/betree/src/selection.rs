//! Candidate selection: the stored expressions an event can satisfy, found
//! by counting hits on their indexed conjuncts ([`crate::counting`]).
//!
//! One resumable stage machine serves both searches. The plain search runs
//! it with no budget, in one call; the cooperative search
//! ([`crate::coop::SearchIter`]) runs it in units of one reduction, stopping
//! wherever its budget runs out. Keeping one implementation means the two
//! cannot drift apart in which candidates they select, in their order, or in
//! what the cooperative search charges for them.

use crate::counting::{BOOL_TERM, Span, SpanTerms, entry_parts};
use crate::event::{Event, Value};
use crate::index::Index;

/// Where the selection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Nothing done yet: the root is next.
    Root,
    /// Probing the attribute at position `at` of the probe list, list
    /// element `elem` for a list value.
    Probe { at: usize, elem: usize },
    /// Walking the terms the probes found: span `span`, its term `term`,
    /// that term's posting from entry `post` (`None` before the term is
    /// taken).
    Count {
        span: usize,
        term: usize,
        post: Option<usize>,
    },
    /// Copying the scan list from this position.
    Scan(usize),
    /// Candidates are all selected.
    Done,
}

/// Which atoms a search found true by value, stamped with the search's
/// generation so that starting a search forgets the last one in O(1).
#[derive(Debug, Clone, Default)]
pub(crate) struct Seen {
    generation: u32,
    stamps: Vec<u32>,
}

impl Seen {
    /// Whether the current search hit `atom`.
    #[inline]
    pub(crate) fn hit(&self, atom: u32) -> bool {
        self.stamps[atom as usize] == self.generation
    }
}

/// A selection in progress for one event against one index.
///
/// Each unit costs one reduction: the index root, one value probed (an
/// attribute's value, or one element of a list value), one term taken from
/// what the probes found, one posting entry counted (range conjuncts are
/// found as entries directly), one scan-list entry copied.
///
/// It owns everything it works with: the candidates it selects
/// ([`Selection::cands`]) and its scratch. Its buffers are kept by
/// [`Selection::reset`], so a selection reused for search after search (the
/// plain search keeps one in its [`crate::Scratch`]) allocates nothing once
/// they have grown.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    stage: Stage,
    /// Runs of terms or posting entries the probes found.
    spans: Vec<Span>,
    /// Single terms (booleans) and entries (of recent thresholds) the
    /// probes found.
    loose: Vec<u32>,
    /// The selected candidates so far: slots, in no particular order.
    cands: Vec<u32>,
    /// Atoms hit, per atom id.
    seen: Seen,
    /// Per slot: the generation (high half) and the number of its indexed
    /// conjuncts hit so far (low half).
    counts: Vec<u64>,
}

impl Default for Selection {
    /// A selection that has not started.
    fn default() -> Selection {
        Selection {
            stage: Stage::Root,
            spans: Vec::new(),
            loose: Vec::new(),
            cands: Vec::new(),
            seen: Seen {
                generation: 1,
                stamps: Vec::new(),
            },
            counts: Vec::new(),
        }
    }
}

/// Elements probed for a value: one per list element, one for anything
/// else.
fn probe_units(v: Option<&Value>) -> usize {
    match v {
        Some(Value::IntList(l)) => l.len(),
        Some(Value::StrList(l)) => l.len(),
        _ => 1,
    }
}

impl Selection {
    /// Makes this a selection that has not started, keeping its buffers,
    /// and forgets the atoms and counts of the last one.
    pub(crate) fn reset(&mut self) {
        self.stage = Stage::Root;
        self.spans.clear();
        self.loose.clear();
        self.cands.clear();
        self.seen.generation = self.seen.generation.wrapping_add(1);
        if self.seen.generation == 0 {
            // Stamps of 2^32 searches ago could look current: start over.
            self.seen.stamps.iter_mut().for_each(|s| *s = 0);
            self.counts.iter_mut().for_each(|c| *c = 0);
            self.seen.generation = 1;
        }
    }

    /// The candidates selected so far: slots of the index, in no
    /// particular order (all of them once [`Selection::advance`] has
    /// returned true).
    #[inline]
    pub(crate) fn cands(&self) -> &[u32] {
        &self.cands
    }

    /// The atoms this selection found true by value (complete once
    /// [`Selection::advance`] has returned true).
    #[inline]
    pub(crate) fn seen(&self) -> &Seen {
        &self.seen
    }

    /// Advances the selection of `ev`'s candidates in `index`, appending
    /// slots to [`Selection::cands`], by units of one reduction added to
    /// `spent`, until the selection is over (true) or `spent` reaches
    /// `budget` (false). A call never overruns: every unit is checked
    /// before it starts.
    ///
    /// `index` and `ev` must be the same on every call of one selection.
    pub(crate) fn advance(
        &mut self,
        index: &Index,
        ev: &Event,
        budget: u64,
        spent: &mut u64,
    ) -> bool {
        let c = &index.counting;
        let generation = self.seen.generation;
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
                    if self.seen.stamps.len() < index.atoms.len() {
                        self.seen.stamps.resize(index.atoms.len(), 0);
                    }
                    if self.counts.len() < index.slots.len() {
                        self.counts.resize(index.slots.len(), 0);
                    }
                    self.stage = Stage::Probe { at: 0, elem: 0 };
                }
                Stage::Probe { mut at, mut elem } => {
                    let mut n = 0;
                    while n < room && at < c.probes.len() {
                        let attr = c.probes[at];
                        c.probe(
                            ev,
                            attr,
                            elem,
                            &mut self.spans,
                            &mut self.loose,
                            &index.schema,
                        );
                        n += 1;
                        elem += 1;
                        if elem >= probe_units(ev.get(attr)) {
                            at += 1;
                            elem = 0;
                        }
                    }
                    *spent += n as u64;
                    self.stage = if at < c.probes.len() {
                        Stage::Probe { at, elem }
                    } else {
                        Stage::Count {
                            span: 0,
                            term: 0,
                            post: None,
                        }
                    };
                }
                Stage::Count {
                    mut span,
                    mut term,
                    mut post,
                } => {
                    let mut n = 0;
                    let counts = &mut self.counts[..];
                    let stamps = &mut self.seen.stamps[..];
                    let cands = &mut self.cands;
                    // Counts one hit of a posting entry's expression; the
                    // hit that completes its count makes it a candidate.
                    let mut bump = |e: u32| {
                        let (slot, need) = entry_parts(e);
                        let cell = &mut counts[slot as usize];
                        let got = if (*cell >> 32) as u32 == generation {
                            *cell as u32 + 1
                        } else {
                            1
                        };
                        *cell = (u64::from(generation) << 32) | u64::from(got);
                        if got == need {
                            cands.push(slot);
                        }
                    };
                    'spans: while span < self.spans.len() {
                        let terms = c.span_terms(self.spans[span], &self.loose);
                        if let SpanTerms::Atoms(terms) = terms {
                            while term < terms.len() {
                                let t = terms[term];
                                let at = match post {
                                    Some(at) => at,
                                    None => {
                                        if n >= room {
                                            break 'spans;
                                        }
                                        n += 1;
                                        if t & BOOL_TERM == 0 {
                                            let s = &mut stamps[t as usize];
                                            if *s == generation {
                                                // Already counted (another
                                                // element of the same list).
                                                term += 1;
                                                continue;
                                            }
                                            *s = generation;
                                        }
                                        0
                                    }
                                };
                                let posting = c.posting(t);
                                let end = posting.len().min(at.saturating_add(room - n));
                                posting[at..end].iter().for_each(|&e| bump(e));
                                n += end - at;
                                if end < posting.len() {
                                    post = Some(end);
                                    break 'spans;
                                }
                                post = None;
                                term += 1;
                            }
                        } else {
                            // Entries of range conjuncts: one unit each.
                            let end = terms.len().min(term.saturating_add(room - n));
                            terms.each_entry(term, end, &mut bump);
                            n += end - term;
                            if end < terms.len() {
                                term = end;
                                break 'spans;
                            }
                        }
                        span += 1;
                        term = 0;
                    }
                    *spent += n as u64;
                    self.stage = if span < self.spans.len() {
                        Stage::Count { span, term, post }
                    } else {
                        Stage::Scan(0)
                    };
                }
                Stage::Scan(at) => {
                    let n = (c.scan.len() - at).min(room);
                    self.cands.extend_from_slice(&c.scan[at..at + n]);
                    *spent += n as u64;
                    self.stage = if at + n == c.scan.len() {
                        Stage::Done
                    } else {
                        Stage::Scan(at + n)
                    };
                }
                Stage::Done => unreachable!("checked at the top of the loop"),
            }
        }
    }
}
