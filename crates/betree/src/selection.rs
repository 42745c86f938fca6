//! Candidate selection: the stored expressions an event can satisfy, found
//! by counting hits on their indexed conjuncts ([`crate::counting`]).
//!
//! One resumable stage machine serves both searches. The plain search runs
//! it with no budget, in one call; the cooperative search
//! (`SearchIter`) runs it in units of one reduction, stopping
//! wherever its budget runs out. Keeping one implementation means the two
//! cannot drift apart in which candidates they select, in their order, or in
//! what the cooperative search charges for them.

use crate::counting::{
    BOOL_TERM, CHECK_BIT, Counting, NO_CHECK, PROVEN, Span, SpanTerms, entry_candidate, entry_parts,
};
use crate::domain::{AttrId, Schema};
use crate::event::{Event, Value};
use crate::expr::Pred;
use crate::strings::{EventStrings, Strings};

/// What a selection reads from the index it selects in: its counting
/// index, schema and atoms, and how many slots it has.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    pub(crate) counting: &'a Counting,
    pub(crate) schema: &'a Schema,
    /// The predicates by atom id.
    pub(crate) preds: &'a [Option<Pred>],
    /// The number of slots (the counts are kept per slot).
    pub(crate) slots: usize,
    /// The interned strings of the expressions.
    pub(crate) strings: &'a Strings,
}

/// Where the selection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Nothing done yet: the root is next.
    Root,
    /// Numbering the event's strings: the string attribute at position
    /// `at` of [`Strings::attrs`], list element `elem` for a list value.
    Number { at: usize, elem: usize },
    /// Probing the attribute at position `at` of the probe list, list
    /// element `elem` for a list value.
    Probe { at: usize, elem: usize },
    /// Marking the expressions with a false range conjunct: kill span
    /// `span` from entry `at`.
    Kill { span: usize, at: usize },
    /// Walking what the probes found true: span `span` from its term or
    /// entry `term`; for a boolean term, its posting from entry `post`
    /// (`None` before the term is taken).
    Count {
        span: usize,
        term: usize,
        post: Option<usize>,
    },
    /// Checking the expressions whose count completed and that have
    /// conjuncts to check ([`Counting::split_checks`]), from this position
    /// of [`Selection::checked`].
    Check(usize),
    /// Taking the expressions gated by ranges alone that no range killed,
    /// from this position.
    Gated(usize),
    /// Copying the scan list from this position.
    Scan(usize),
    /// Candidates are all selected.
    Done,
}

/// Which atoms a search found true by value, stamped with the search's
/// generation so that starting a search forgets the last one in O(1).
/// One byte an atom, cleared once every 255 searches: evaluation reads a
/// stamp per atom test, and four bytes an atom did not fit the L2 cache at
/// 1M expressions.
#[derive(Debug, Clone, Default)]
pub(crate) struct Seen {
    generation: u8,
    stamps: Vec<u8>,
}

impl Seen {
    /// Whether the current search hit `atom`.
    #[inline]
    pub(crate) fn hit(&self, atom: u32) -> bool {
        self.stamps[atom as usize] == self.generation
    }

    /// Hints the cache at `atom`'s stamp.
    #[inline]
    pub(crate) fn prefetch(&self, atom: u32) {
        crate::prefetch::prefetch_at(&self.stamps, atom as usize);
    }
}

/// A selection in progress for one event against one index.
///
/// Each unit costs one reduction: the index root, one event string
/// numbered (as a probe: a scalar, one element of a list, or an undefined
/// string attribute), one value probed (an attribute's value, or one
/// element of a list value), one term taken from
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
    /// Runs of terms the probes found true.
    spans: Vec<Span>,
    /// Runs of range entries the probes found false.
    kills: Vec<Span>,
    /// Single terms (booleans) and entries (of recent thresholds) the
    /// probes found.
    loose: Vec<u32>,
    /// The selected candidates so far: slots, flagged `PROVEN` when the
    /// selection proves them, in no particular order.
    cands: Vec<u32>,
    /// The expressions whose count completed and that have conjuncts to
    /// check, as candidates (slot and `PROVEN` flag): each becomes one if
    /// its checks hold, once every count and stamp of the event is in.
    checked: Vec<u32>,
    /// Atoms hit, per atom id.
    seen: Seen,
    /// The event's strings as numbers (made before the probes).
    strs: EventStrings,
    /// Per slot: whether a range conjunct was found false ([`KILLED`])
    /// and the number of its counted conjuncts hit so far (bits 0-5),
    /// cleared when the selection starts. One byte a slot: every kill and
    /// every count is a random access to this array, and with a
    /// generation in each cell (four bytes a slot, so that starting a
    /// search cleared nothing) it was 4 MB at 1M expressions, most
    /// accesses missing the cache; clearing 1 MB costs less.
    counts: Vec<u8>,
    /// Per slot: the number of the list attribute whose entries last
    /// counted its list conjunct (see [`crate::counting::LIST_TERM`]). One
    /// byte a slot, cleared when the numbers come round: every list entry
    /// counted tests its mark, and four bytes a slot (4 MB at 1M
    /// expressions) missed the L2 cache where one does not. The counting
    /// gives the numbers, as it reaches each list attribute's entries, so
    /// the clear falls between the attributes numbered before and after
    /// it (given while probing, a wrap cleared before any of the search's
    /// marks were written, and left them stale).
    marks: Vec<u8>,
    /// The number of the list attribute being counted, and that attribute
    /// (`None` until the search counts its first list attribute).
    group: u8,
    group_attr: Option<AttrId>,
    /// Scratch of [`Selection::sort_cands`]: a bit per slot, and the
    /// sorted candidates before they replace `cands`.
    sort_bits: Vec<u64>,
    sorted: Vec<u32>,
    /// Whether the selection ends by copying the scan list (the
    /// expressions with nothing posted, candidates of every event): set
    /// by [`Selection::reset`], cleared by [`Selection::reset_posted`].
    scan: bool,
}

impl Default for Selection {
    /// A selection that has not started.
    fn default() -> Selection {
        Selection {
            stage: Stage::Root,
            spans: Vec::new(),
            kills: Vec::new(),
            loose: Vec::new(),
            cands: Vec::new(),
            checked: Vec::new(),
            seen: Seen {
                generation: 1,
                stamps: Vec::new(),
            },
            strs: EventStrings::default(),
            counts: Vec::new(),
            marks: Vec::new(),
            group: 0,
            group_attr: None,
            sort_bits: Vec::new(),
            sorted: Vec::new(),
            scan: true,
        }
    }
}

/// The bit of a count cell marking a false range conjunct.
const KILLED: u8 = 1 << 7;
/// The bits of a count cell holding the number of hits.
const COUNT: u8 = (1 << 6) - 1;

/// Elements probed (or numbered, for a string list) for a value: one per
/// list element, one for anything else (an empty list takes one unit all
/// the same: its caller moves on once `elem` reaches this).
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
        self.scan = true;
        self.stage = Stage::Root;
        self.spans.clear();
        self.kills.clear();
        self.loose.clear();
        self.cands.clear();
        self.checked.clear();
        self.seen.generation = self.seen.generation.wrapping_add(1);
        if self.seen.generation == 0 {
            // Stamps of 256 searches ago could look current: start over.
            self.seen.stamps.fill(0);
            self.seen.generation = 1;
        }
    }

    /// [`Selection::reset`] for a selection of the posted expressions
    /// alone: the scan list is left out of its candidates. The batch path
    /// gives the scanned expressions every lane of a chunk at once, where
    /// each event's selection copied the whole list and marked each of
    /// its slots for its own lane: on the reference profile at 100k
    /// expressions, all of them scanned, that was 100k copies and
    /// scattered writes an event.
    pub(crate) fn reset_posted(&mut self) {
        self.reset();
        self.scan = false;
    }

    /// The candidates selected so far: slots of the index, flagged
    /// [`PROVEN`] when the selection proves them (they match with no
    /// evaluation), in no particular order (all of them once
    /// [`Selection::advance`] has returned true).
    #[inline]
    pub(crate) fn cands(&self) -> &[u32] {
        &self.cands
    }

    /// Puts the candidates in slot order (the proven ones last, in
    /// selection order), so that evaluation walks the slot and program
    /// arrays in one direction. `slots` bounds the slots. A slot is a
    /// candidate at most once, so a bitmap of the slots sorts them: it is
    /// cleared, set and read in ~slots / 64 + 2 x candidates steps, where
    /// `sort_unstable` took ~11 % of the search's instructions on the
    /// ad-targeting profile at 100k expressions.
    // Not inlined into the plain search: inlined, it changed how the
    // evaluation loop beside it was compiled, +3 % instructions on the
    // dense reference benchmark, which never sorts.
    #[inline(never)]
    pub(crate) fn sort_cands(&mut self, slots: usize) {
        let bits = &mut self.sort_bits;
        bits.clear();
        bits.resize(slots.div_ceil(64), 0);
        for &c in &self.cands {
            if c & PROVEN == 0 {
                bits[(c / 64) as usize] |= 1 << (c % 64);
            }
        }
        let out = &mut self.sorted;
        out.clear();
        for (w, &word) in bits.iter().enumerate() {
            let mut m = word;
            while m != 0 {
                out.push(w as u32 * 64 + m.trailing_zeros());
                m &= m - 1;
            }
        }
        out.extend(self.cands.iter().copied().filter(|&c| c & PROVEN != 0));
        debug_assert_eq!(out.len(), self.cands.len(), "each slot at most once");
        std::mem::swap(&mut self.cands, out);
    }

    /// The key lists whose atoms this selection stamped as hit (complete
    /// once [`Selection::advance`] has returned true): the batch path reads
    /// an event's hits from them, since one selection's stamps are gone
    /// when the next event's selection starts.
    pub(crate) fn stamped_lists(&self) -> impl Iterator<Item = u32> + '_ {
        self.spans.iter().filter_map(|s| match *s {
            Span::Stamp(l) => Some(l),
            _ => None,
        })
    }

    /// The atoms this selection found true by value (complete once
    /// [`Selection::advance`] has returned true).
    #[inline]
    pub(crate) fn seen(&self) -> &Seen {
        &self.seen
    }

    /// The event's strings as numbers (complete once the probes have
    /// started, and so once [`Selection::advance`] has returned true).
    #[inline]
    pub(crate) fn strings(&self) -> &EventStrings {
        &self.strs
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
        index: Source<'_>,
        ev: &Event,
        budget: u64,
        spent: &mut u64,
    ) -> bool {
        let c = index.counting;
        loop {
            if self.stage == Stage::Done {
                return true;
            }
            if *spent >= budget {
                return false;
            }
            // Units this turn may take; at least 1.
            let room = usize::try_from(budget - *spent).unwrap_or(usize::MAX);
            let (units, next) = match self.stage {
                Stage::Root => (1, self.root(index)),
                Stage::Number { at, elem } => self.number(index, ev, at, elem, room),
                Stage::Probe { at, elem } => self.probe(index, ev, at, elem, room),
                Stage::Kill { span, at } => self.kill(c, span, at, room),
                Stage::Count { span, term, post } => self.count(c, span, term, post, room),
                Stage::Check(at) => self.check(c, ev, at, room),
                Stage::Gated(at) => self.gated(c, at, room),
                Stage::Scan(at) => self.scan(c, at, room),
                Stage::Done => unreachable!("checked at the top of the loop"),
            };
            *spent += units as u64;
            self.stage = next;
        }
    }

    // The stages below are the parts of `advance`, one unit of work each
    // (see `Stage`); each takes at most `room` units and returns how many it
    // took and the stage to go on with. They are `inline(always)` so that
    // `advance` compiles as the one loop it was written as: this is the
    // search's hot path, and the split is for the reader only.

    /// The root unit: sizes the per-atom and per-slot arrays and clears the
    /// counts.
    #[inline(always)]
    fn root(&mut self, index: Source<'_>) -> Stage {
        if self.seen.stamps.len() < index.preds.len() {
            self.seen.stamps.resize(index.preds.len(), 0);
        }
        // The root unit clears the counts: a memset of one byte
        // a slot, far below what counting them costs.
        self.counts.clear();
        self.counts.resize(index.slots, 0);
        if self.marks.len() < index.slots {
            self.marks.resize(index.slots, 0);
        }
        self.group_attr = None;
        if !index.strings.attrs().is_empty() {
            self.strs.reset(index.schema.len());
        }
        Stage::Number { at: 0, elem: 0 }
    }

    /// Numbers the event's strings, one unit a string, as a probe: the
    /// lookup that maps it to its number is the only one that reads its
    /// bytes.
    #[inline(always)]
    fn number(
        &mut self,
        index: Source<'_>,
        ev: &Event,
        mut at: usize,
        mut elem: usize,
        room: usize,
    ) -> (usize, Stage) {
        let attrs = index.strings.attrs();
        let mut n = 0;
        while n < room && at < attrs.len() {
            let v = ev.get(attrs[at]);
            self.strs.number(index.strings, attrs[at], v, elem);
            n += 1;
            elem += 1;
            if elem >= probe_units(v) {
                at += 1;
                elem = 0;
            }
        }
        let next = if at < attrs.len() {
            Stage::Number { at, elem }
        } else {
            Stage::Probe { at: 0, elem: 0 }
        };
        (n, next)
    }

    /// Probes the event's values, one unit a value (or list element).
    #[inline(always)]
    fn probe(
        &mut self,
        index: Source<'_>,
        ev: &Event,
        mut at: usize,
        mut elem: usize,
        room: usize,
    ) -> (usize, Stage) {
        let c = index.counting;
        let mut n = 0;
        while n < room && at < c.probes.len() {
            let attr = c.probes[at];
            c.probe(
                ev,
                &self.strs,
                attr,
                elem,
                &mut self.spans,
                &mut self.kills,
                &mut self.loose,
                index.schema,
                index.preds,
            );
            n += 1;
            elem += 1;
            if elem >= probe_units(ev.get(attr)) {
                at += 1;
                elem = 0;
            }
        }
        let next = if at < c.probes.len() {
            Stage::Probe { at, elem }
        } else {
            Stage::Kill { span: 0, at: 0 }
        };
        (n, next)
    }

    /// Marks the expressions with a false range conjunct, one unit an
    /// entry. Before any counting, so that a count completing later sees
    /// the mark.
    #[inline(always)]
    fn kill(
        &mut self,
        c: &Counting,
        mut span: usize,
        mut at: usize,
        room: usize,
    ) -> (usize, Stage) {
        let mut n = 0;
        let counts = &mut self.counts[..];
        while span < self.kills.len() && n < room {
            let entries = c.span_terms(self.kills[span], &self.loose);
            let end = entries.len().min(at.saturating_add(room - n));
            entries.each_entry(at, end, |e| {
                counts[entry_parts(e).0 as usize] = KILLED;
            });
            n += end - at;
            if end < entries.len() {
                at = end;
            } else {
                span += 1;
                at = 0;
            }
        }
        let next = if span < self.kills.len() {
            Stage::Kill { span, at }
        } else {
            Stage::Count {
                span: 0,
                term: 0,
                post: None,
            }
        };
        (n, next)
    }

    /// Counts what the probes found true: one unit a boolean term taken,
    /// a posting entry, a scalar atom stamped or a list entry.
    #[inline(always)]
    fn count(
        &mut self,
        c: &Counting,
        mut span: usize,
        mut term: usize,
        mut post: Option<usize>,
        room: usize,
    ) -> (usize, Stage) {
        let generation = self.seen.generation;
        let mut n = 0;
        let counts = &mut self.counts[..];
        let stamps = &mut self.seen.stamps[..];
        let cands = &mut self.cands;
        let checked = &mut self.checked;
        // Counts one hit of a posting entry's expression; the
        // hit that completes its count makes it a candidate, or one to
        // check if it has conjuncts to check.
        let mut bump = |e: u32| {
            let (slot, need) = entry_parts(e);
            let cell = &mut counts[slot as usize];
            // At most `MAX_NEED` hits: the count never carries
            // into the kill bit, and a killed expression never
            // matches `need`.
            let now = *cell + 1;
            *cell = now;
            if u32::from(now & (KILLED | COUNT)) == need {
                if e & CHECK_BIT != 0 {
                    checked.push(entry_candidate(e));
                } else {
                    cands.push(entry_candidate(e));
                }
            }
        };
        'spans: while span < self.spans.len() {
            let terms = c.span_terms(self.spans[span], &self.loose);
            if let SpanTerms::Bools(terms) = terms {
                while term < terms.len() {
                    let t = terms[term];
                    let at = match post {
                        Some(at) => at,
                        None => {
                            if n >= room {
                                break 'spans;
                            }
                            n += 1;
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
            } else if let SpanTerms::Stamp(atoms) = terms {
                // Atoms of a scalar value: one unit each.
                let end = atoms.len().min(term.saturating_add(room - n));
                for &a in &atoms[term..end] {
                    stamps[a as usize] = generation;
                }
                n += end - term;
                if end < atoms.len() {
                    term = end;
                    break 'spans;
                }
            } else if let Span::ListEntries(_, attr) = self.spans[span] {
                // Entries of list conjuncts, counted once per
                // attribute: one unit each. A new attribute
                // takes the next number.
                if self.group_attr != Some(attr) {
                    self.group_attr = Some(attr);
                    self.group = self.group.wrapping_add(1);
                    if self.group == 0 {
                        // A mark of 255 list attributes ago
                        // could look current: start over.
                        self.marks.fill(0);
                        self.group = 1;
                    }
                }
                let group = self.group;
                let marks = &mut self.marks[..];
                let end = terms.len().min(term.saturating_add(room - n));
                terms.each_entry(term, end, |e| {
                    let m = &mut marks[entry_parts(e).0 as usize];
                    if *m != group {
                        *m = group;
                        bump(e);
                    }
                });
                n += end - term;
                if end < terms.len() {
                    term = end;
                    break 'spans;
                }
            } else {
                // Posting entries: one unit each.
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
        let next = if span < self.spans.len() {
            Stage::Count { span, term, post }
        } else {
            Stage::Check(0)
        };
        (n, next)
    }

    /// Makes candidates of the expressions to check whose checked
    /// conjuncts hold, one unit each: after the counting, so that every
    /// atom the event hits is stamped.
    #[inline(always)]
    fn check(&mut self, c: &Counting, ev: &Event, at: usize, room: usize) -> (usize, Stage) {
        let n = (self.checked.len() - at).min(room);
        let generation = self.seen.generation;
        let stamps = &self.seen.stamps;
        let holds = |k: u32| {
            if k == NO_CHECK {
                true
            } else if k & BOOL_TERM != 0 {
                let b = (k & !BOOL_TERM) as usize;
                (ev.bits[b / 64] >> (b % 64)) & 1 != 0
            } else {
                stamps[k as usize] == generation
            }
        };
        for &cand in &self.checked[at..at + n] {
            if c.checks[(cand & !PROVEN) as usize]
                .iter()
                .all(|&k| holds(k))
            {
                self.cands.push(cand);
            }
        }
        let next = if at + n < self.checked.len() {
            Stage::Check(at + n)
        } else {
            Stage::Gated(0)
        };
        (n, next)
    }

    /// Takes the expressions gated by ranges alone that no range killed,
    /// one unit each.
    #[inline(always)]
    fn gated(&mut self, c: &Counting, at: usize, room: usize) -> (usize, Stage) {
        if at == 0 {
            // Both lists' lengths are known here: one reservation, where a
            // budgeted search's chunks would grow the candidates by
            // doubling (two more copies of them per event on the reference
            // workload: 13,000 instructions, 0.8 % of its search_next).
            let scan = if self.scan { c.scan.len() } else { 0 };
            self.cands.reserve(c.gated.len() + scan);
        }
        let n = (c.gated.len() - at).min(room);
        let counts = &self.counts;
        self.cands.extend(
            c.gated[at..at + n]
                .iter()
                .copied()
                .filter(|&s| counts[(s & !PROVEN) as usize] != KILLED),
        );
        let next = if at + n < c.gated.len() {
            Stage::Gated(at + n)
        } else if self.scan {
            Stage::Scan(0)
        } else {
            Stage::Done
        };
        (n, next)
    }

    /// Copies the scan list, one unit an entry.
    #[inline(always)]
    fn scan(&mut self, c: &Counting, at: usize, room: usize) -> (usize, Stage) {
        let n = (c.scan.len() - at).min(room);
        self.cands.extend_from_slice(&c.scan[at..at + n]);
        let next = if at + n == c.scan.len() {
            Stage::Done
        } else {
            Stage::Scan(at + n)
        };
        (n, next)
    }
}
