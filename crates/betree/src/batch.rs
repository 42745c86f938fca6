//! Batch search: many events at once, bit-parallel.
//!
//! Events are transposed into lanes: for each boolean slot one bit per event,
//! [`WORDS`] `u64` words wide, so one pass of an expression's batch program
//! ([`crate::program::bop`]) evaluates it for [`LANES`] (512) events with a
//! few word operations per instruction. There is no short-circuit (lanes
//! disagree), but every instruction does 512 events' work.

use crate::Result;
use crate::counting::{Decided, PROVEN};
use crate::event::Event;
use crate::index::{Id, Index, Scratch};
use crate::parse::MAX_DEPTH;
use crate::program::{BATCH_ATOM, OP_SHIFT, OPERAND, bop};
use crate::strings::EventStrings;

/// `u64` words per lane group.
const WORDS: usize = 8;
/// Events per lane group.
const LANES: usize = WORDS * 64;

type Lane = [u64; WORDS];

/// An atom not evaluated yet in this chunk.
const NOT_DONE: u32 = u32::MAX;

/// Stack depth a batch program can reach: one entry per level of the tree
/// (bounded by the parser's depth limit) plus the accumulator's first push.
const MAX_STACK: usize = MAX_DEPTH + 2;

#[derive(Debug, Default)]
struct Lanes {
    words: Vec<Lane>,
    /// Per atom, where its value sits in `atom_words` (`NOT_DONE` until
    /// evaluated). Only atoms with several references are kept: one used
    /// once is evaluated where it is used (a lane per atom of the index
    /// cost 64 bytes each, the largest allocation of a one-event search
    /// over one large expression).
    atom_at: Vec<u32>,
    atom_words: Vec<Lane>,
    /// Per kept atom, the lanes `atom_words` holds its value for: an atom
    /// is evaluated only on the lanes of the events that selected the
    /// expression using it, so another expression may need more of them.
    atom_done: Vec<Lane>,
    /// Per atom decided by value ([`Decided::Hit`]/[`Decided::Miss`]),
    /// where the lanes of the events whose selection hit it sit in
    /// `hit_words` (`NOT_DONE`: no event of the chunk hit it), so such an
    /// atom is read off the selections like the per-event search reads
    /// its stamps, with no comparison of values.
    hit_at: Vec<u32>,
    hit_words: Vec<Lane>,
    stack: Vec<Lane>,
    cmask: Vec<Lane>,
    selection: crate::selection::Selection,
    /// Per lane, its event's strings as numbers, kept from its selection
    /// for the evaluation after all the chunk's selections.
    strs: Vec<EventStrings>,
    /// The plain search's scratch, for chunks searched event by event.
    scratch: Scratch,
    /// One event's ids, for chunks searched event by event.
    ids: Vec<Id>,
}

/// Where a batch search ([`Index::search_batch_by`]) puts the ids it
/// finds: per event of the batch, its matching ids in increasing order.
///
/// `Vec<Vec<Id>>` keeps them as one list per event. A caller that only
/// passes them on (the `perfkit betree search` command writes them as
/// text) takes each id as it is found instead: a bit-parallel pass finds a
/// chunk's ids expression by expression, each event's interleaved with the
/// others', so lists of ids read back afterwards have left the cache (10 MB
/// of them per 512 events on the dense reference profile).
pub trait MatchSink {
    /// Starts a batch of `events` events, none with any id yet.
    fn start(&mut self, events: usize);

    /// Appends `id` to the ids of event `event` (below the count given to
    /// [`MatchSink::start`]). One event's ids come in increasing order.
    fn push(&mut self, event: usize, id: Id);

    /// Appends `ids`, in order, to the ids of event `event`.
    fn push_all(&mut self, event: usize, ids: &[Id]) {
        for &id in ids {
            self.push(event, id);
        }
    }
}

/// One list per event, each list's capacity kept from one batch to the
/// next (see [`Index::search_batch_into`]).
impl MatchSink for Vec<Vec<Id>> {
    fn start(&mut self, events: usize) {
        self.truncate(events);
        for ids in self.iter_mut() {
            ids.clear();
        }
        self.resize_with(events, Vec::new);
    }

    #[inline]
    fn push(&mut self, event: usize, id: Id) {
        self[event].push(id);
    }

    fn push_all(&mut self, event: usize, ids: &[Id]) {
        self[event].extend_from_slice(ids);
    }
}

/// A chunk is searched bit-parallel when its first event's candidates are
/// at least one stored expression in this many, and event by event
/// otherwise: the bit-parallel pass pays off when an expression is a
/// candidate of many events of the chunk (freed slots do not count).
/// Measured with `betree bench`'s CPU rows (batch
/// against one search per event): 5x on the dense reference profile
/// (most slots are candidates) and 1.26x on a 50-attribute adtech shape
/// at a 10 % match rate (at least one slot in 10), but 0.89x on the
/// adtech profile (3.7 %) and 0.77x on a 200-attribute shape at 2.2 %
/// (under one in 20).
const BATCH_SHARE: usize = 12;

/// How [`Index::search_batch_by`] searches each chunk of 512 events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BatchPath {
    /// Bit-parallel when the chunk's first event selects at least one
    /// expression in 12, event by event otherwise (what
    /// [`Index::search_batch`] does).
    #[default]
    Auto,
    /// Always bit-parallel.
    Lanes,
}

/// Whether no lane is set. An OR of the words: `== [0; WORDS]` compiled
/// to a call of `memcmp` (1.2 % of `perfkit betree search`'s samples on the
/// adtech profile, where every slot's candidate mask is tested).
#[inline(always)]
fn is_empty(l: Lane) -> bool {
    l.iter().fold(0, |a, &w| a | w) == 0
}

#[inline(always)]
fn map2(a: Lane, b: Lane, f: impl Fn(u64, u64) -> u64) -> Lane {
    std::array::from_fn(|i| f(a[i], b[i]))
}

impl Index {
    /// Searches many events at once; result `i` is what [`Index::search`]
    /// returns for `events[i]`. Events go in chunks of 512: a chunk whose
    /// events select many expressions each (see `BATCH_SHARE`) is searched
    /// bit-parallel, each candidate expression evaluated once for all of
    /// them, several times faster per event than one search per event on
    /// the dense reference profile; a sparse chunk is searched event by
    /// event, which is faster there.
    pub fn search_batch(&self, events: &[Event]) -> Result<Vec<Vec<Id>>> {
        let mut out = Vec::new();
        self.search_batch_into(events, &mut out)?;
        Ok(out)
    }

    /// [`Index::search_batch`] into `out`, whose vectors are reused: it
    /// ends with one result per event, and the result lists keep their
    /// capacity from one call to the next, so a stream searched batch by
    /// batch does not allocate (and fault in) thousands of ids per event
    /// each time. On an error `out` is left empty.
    pub fn search_batch_into(&self, events: &[Event], out: &mut Vec<Vec<Id>>) -> Result<()> {
        self.search_batch_by(events, out, BatchPath::Auto)
    }

    /// [`Index::search_batch_into`] choosing how chunks are searched, and
    /// giving each id found to `out` as it is found (see [`MatchSink`]).
    /// On an error, `out` is started over with no events.
    pub fn search_batch_by(
        &self,
        events: &[Event],
        out: &mut impl MatchSink,
        path: BatchPath,
    ) -> Result<()> {
        if let Err(e) = events.iter().try_for_each(|ev| self.validate(ev)) {
            out.start(0);
            return Err(e);
        }
        out.start(events.len());
        let mut lanes = Lanes::default();
        for (k, chunk) in events.chunks(LANES).enumerate() {
            let first = k * LANES;
            // The first event's selection stands for the chunk's: events
            // of one stream tend to select alike. It is made in the
            // bit-parallel pass's own selection, which holds no more than
            // that pass then needs.
            let dense = path == BatchPath::Lanes || {
                self.select(&chunk[0], &mut lanes.selection);
                lanes.selection.cands().len() * BATCH_SHARE >= self.len()
            };
            if dense {
                self.batch_chunk(chunk, first, out, &mut lanes);
                continue;
            }
            for (i, ev) in chunk.iter().enumerate() {
                self.search_valid(&mut lanes.scratch, ev, &mut lanes.ids);
                out.push_all(first + i, &lanes.ids);
            }
        }
        Ok(())
    }

    /// Searches `events` bit-parallel; event `i`'s ids go to `out` as
    /// event `first + i`'s.
    ///
    /// Out of line, one copy per sink type: inlined into the generic
    /// `search_batch_by`, the `Vec<Vec<Id>>` copy ran 4 % slower in `betree
    /// bench`'s `search_batch` row on the dense profile (58.5 against 56.0
    /// ms, five interleaved runs each), the same code placed differently.
    #[inline(never)]
    fn batch_chunk(
        &self,
        events: &[Event],
        first: usize,
        out: &mut impl MatchSink,
        lanes: &mut Lanes,
    ) {
        lanes.words.clear();
        lanes
            .words
            .resize(self.schema.bool_count() as usize, [0; WORDS]);
        for (lane, ev) in events.iter().enumerate() {
            let (lw, lb) = (lane / 64, lane % 64);
            for (w, &word) in ev.bits.iter().enumerate() {
                let mut m = word;
                while m != 0 {
                    let b = m.trailing_zeros() as usize;
                    lanes.words[w * 64 + b][lw] |= 1 << lb;
                    m &= m - 1;
                }
            }
        }
        lanes.atom_at.clear();
        lanes.atom_at.resize(self.atoms.len(), NOT_DONE);
        lanes.atom_words.clear();
        lanes.atom_done.clear();

        // Candidate lanes per slot: each event's selection (the counting
        // index) marks its candidates' slots. A scanned expression is a
        // candidate of every event: it takes the chunk's lanes at once,
        // and the selections leave the scan list out.
        lanes.cmask.clear();
        lanes.cmask.resize(self.slots.len(), [0; WORDS]);
        let every: Lane = std::array::from_fn(|w| {
            let n = events.len().saturating_sub(w * 64).min(64);
            if n == 64 { u64::MAX } else { (1 << n) - 1 }
        });
        for &s in &self.counting.scan {
            lanes.cmask[s as usize] = every;
        }
        lanes.hit_at.clear();
        lanes.hit_at.resize(self.atoms.len(), NOT_DONE);
        lanes.hit_words.clear();
        if lanes.strs.len() < events.len() {
            lanes.strs.resize_with(events.len(), EventStrings::default);
        }
        let has_strings = !self.strings.attrs().is_empty();
        for (lane, ev) in events.iter().enumerate() {
            self.select_posted(ev, &mut lanes.selection);
            if has_strings {
                lanes.strs[lane].clone_from(lanes.selection.strings());
            }
            for &s in lanes.selection.cands() {
                lanes.cmask[(s & !PROVEN) as usize][lane / 64] |= 1 << (lane % 64);
            }
            let Lanes {
                selection,
                hit_at,
                hit_words,
                ..
            } = &mut *lanes;
            for l in selection.stamped_lists() {
                for &a in self.counting.lists.get(l) {
                    let at = &mut hit_at[a as usize];
                    if *at == NOT_DONE {
                        *at = hit_words.len() as u32;
                        hit_words.push([0; WORDS]);
                    }
                    hit_words[*at as usize][lane / 64] |= 1 << (lane % 64);
                }
            }
        }
        // In id order, so every event's ids come out sorted.
        for &s in &self.order {
            let m = lanes.cmask[s as usize];
            if is_empty(m) {
                continue;
            }
            let r = self.run_batch(s, m, lanes, events);
            push_lanes(
                map2(r, m, |a, b| a & b),
                self.slots[s as usize].id,
                first,
                out,
            );
        }
    }

    /// Runs slot `s`'s batch program for the lanes in `cands` (the events
    /// that selected it). Boolean slots are read for every lane, a word at
    /// a time; other atoms are evaluated only on `cands`' lanes: on a
    /// sparse workload an expression is a candidate of a few events of the
    /// chunk, and evaluating its atoms on all 512 made the batch path
    /// slower than one search per event. Lanes outside `cands` come out
    /// unspecified.
    ///
    /// Inlined into its loop over the slots: called there once per slot
    /// (which it was once `batch_chunk` had a copy per sink type), the
    /// dense `search_batch` row took 61-63 ms instead of 56.
    #[inline(always)]
    fn run_batch(&self, s: u32, cands: Lane, lanes: &mut Lanes, events: &[Event]) -> Lane {
        let slot = &self.slots[s as usize];
        let start = slot.tree_start as usize;
        let code = &self.bcode[start..start + slot.tree_len as usize];
        let Lanes {
            words,
            atom_at,
            atom_words,
            atom_done,
            hit_at,
            hit_words,
            stack,
            strs,
            ..
        } = lanes;
        // Each push is matched by a pop or ends the program, and programs
        // are at most `MAX_DEPTH` deep, so the stack never outgrows this.
        if stack.len() < MAX_STACK {
            stack.resize(MAX_STACK, [0; WORDS]);
        }
        let mut sp = 0usize;
        let mut acc: Lane = [0; WORDS];
        for &ins in code {
            let op = ins >> OP_SHIFT;
            let o = ins & ((1 << OP_SHIFT) - 1);
            let v: Lane = if op > bop::OR_NOT {
                [0; WORDS]
            } else if o & BATCH_ATOM == 0 {
                words[o as usize]
            } else {
                let a = (o & OPERAND) as usize;
                let eval = |want: Lane| {
                    let hits = || match hit_at[a] {
                        NOT_DONE => [0; WORDS],
                        at => hit_words[at as usize],
                    };
                    match self.counting.decided(a as u32) {
                        Decided::Hit => return map2(hits(), want, |h, w| h & w),
                        Decided::Miss(attr) => {
                            let h = hits();
                            let mut w = [0u64; WORDS];
                            for (k, &word) in want.iter().enumerate() {
                                let mut m = word & !h[k];
                                while m != 0 {
                                    let b = m.trailing_zeros() as usize;
                                    w[k] |= (events[k * 64 + b].is_defined(attr) as u64) << b;
                                    m &= m - 1;
                                }
                            }
                            return w;
                        }
                        Decided::No => {}
                    }
                    let p = self.atoms.preds[a]
                        .as_ref()
                        .expect("programs reference live atoms");
                    let mut w = [0u64; WORDS];
                    for (k, &word) in want.iter().enumerate() {
                        let mut m = word;
                        while m != 0 {
                            let b = m.trailing_zeros() as usize;
                            let e = k * 64 + b;
                            w[k] |= (p.eval(&events[e], &strs[e]).0 as u64) << b;
                            m &= m - 1;
                        }
                    }
                    w
                };
                if self.atoms.refs[a] == 1 {
                    eval(cands)
                } else {
                    if atom_at[a] == NOT_DONE {
                        atom_at[a] = atom_words.len() as u32;
                        atom_words.push([0; WORDS]);
                        atom_done.push([0; WORDS]);
                    }
                    let at = atom_at[a] as usize;
                    let need = map2(cands, atom_done[at], |c, d| c & !d);
                    if !is_empty(need) {
                        atom_words[at] = map2(atom_words[at], eval(need), |x, y| x | y);
                        atom_done[at] = map2(atom_done[at], need, |x, y| x | y);
                    }
                    atom_words[at]
                }
            };
            match op {
                bop::PUSH => {
                    stack[sp] = acc;
                    sp += 1;
                    acc = v;
                }
                bop::PUSH_NOT => {
                    stack[sp] = acc;
                    sp += 1;
                    acc = v.map(|x| !x);
                }
                bop::AND => acc = map2(acc, v, |a, b| a & b),
                bop::AND_NOT => acc = map2(acc, v, |a, b| a & !b),
                bop::OR => acc = map2(acc, v, |a, b| a | b),
                bop::OR_NOT => acc = map2(acc, v, |a, b| a | !b),
                bop::POP_AND => {
                    sp -= 1;
                    acc = map2(acc, stack[sp], |a, b| a & b);
                }
                bop::POP_OR => {
                    sp -= 1;
                    acc = map2(acc, stack[sp], |a, b| a | b);
                }
                bop::NOT => acc = acc.map(|x| !x),
                bop::PUSH_TRUE => {
                    stack[sp] = acc;
                    sp += 1;
                    acc = [u64::MAX; WORDS];
                }
                _ => {
                    stack[sp] = acc;
                    sp += 1;
                    acc = [0; WORDS];
                }
            }
        }
        acc
    }
}

/// Gives `id` to the events of the lanes set in `r` (lane `i` is event
/// `first + i`).
fn push_lanes(r: Lane, id: Id, first: usize, out: &mut impl MatchSink) {
    for (w, &word) in r.iter().enumerate() {
        let mut m = word;
        while m != 0 {
            let lane = w * 64 + m.trailing_zeros() as usize;
            out.push(first + lane, id);
            m &= m - 1;
        }
    }
}
