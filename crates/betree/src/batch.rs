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

/// Row of [`Lanes::rows`] that is all zeros: the operand of the
/// instructions that have none.
const ZERO_ROW: usize = 0;
/// Row of [`Lanes::rows`] where the first boolean slot's lanes sit.
const FIRST_SLOT_ROW: usize = 1;

#[derive(Debug, Default)]
struct Lanes {
    /// Every row a batch instruction reads or writes, in one array so
    /// that an instruction finds its operand by a computed index, with no
    /// branch on the opcode: the zero row ([`ZERO_ROW`]), then a row per
    /// boolean slot (from [`FIRST_SLOT_ROW`]), one for the value of the
    /// atom being used, then the stack ([`MAX_STACK`] + 1 rows: every
    /// instruction stores the accumulator on the row above the top).
    rows: Vec<Lane>,
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
/// text) takes the ids as they are found instead: a bit-parallel pass finds a
/// chunk's ids expression by expression, each event's interleaved with the
/// others', so lists of ids read back afterwards have left the cache (10 MB
/// of them per 512 events on the dense reference profile). That pass gives
/// each event its ids of 64 matching expressions at a time
/// ([`MatchSink::push_all`]).
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
        lanes.rows.clear();
        lanes.rows.resize(
            FIRST_SLOT_ROW + self.schema.bool_count() as usize + 2 + MAX_STACK,
            [0; WORDS],
        );
        for (lane, ev) in events.iter().enumerate() {
            let (lw, lb) = (lane / 64, lane % 64);
            for (w, &word) in ev.bits.iter().enumerate() {
                let mut m = word;
                while m != 0 {
                    let b = m.trailing_zeros() as usize;
                    lanes.rows[FIRST_SLOT_ROW + w * 64 + b][lw] |= 1 << lb;
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
        self.run_slots(events, first, out, lanes);
    }

    /// Runs the batch program of every slot with a candidate lane, and
    /// gives its matches to `out`: compiled for AVX-512 as well, and run
    /// so where the CPU has it, a lane group then being one register (four
    /// with SSE2, x86-64's baseline).
    #[allow(unsafe_code)]
    fn run_slots(
        &self,
        events: &[Event],
        first: usize,
        out: &mut impl MatchSink,
        lanes: &mut Lanes,
    ) {
        #[cfg(all(target_arch = "x86_64", not(miri)))]
        if avx512() {
            // SAFETY: the CPU has AVX-512F, checked just above, which is
            // all `run_slots_avx512` is compiled to need.
            return unsafe { self.run_slots_avx512(events, first, out, lanes) };
        }
        self.run_slots_in(events, first, out, lanes);
    }

    /// [`Index::run_slots_in`] compiled for AVX-512F.
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    #[target_feature(enable = "avx512f")]
    fn run_slots_avx512(
        &self,
        events: &[Event],
        first: usize,
        out: &mut impl MatchSink,
        lanes: &mut Lanes,
    ) {
        self.run_slots_in(events, first, out, lanes);
    }

    /// [`Index::run_slots`]' work, inlined into each of its variants.
    #[inline(always)]
    fn run_slots_in(
        &self,
        events: &[Event],
        first: usize,
        out: &mut impl MatchSink,
        lanes: &mut Lanes,
    ) {
        // In id order, so every event's ids come out sorted.
        let mut block = Block::new();
        for &s in &self.order {
            let m = lanes.cmask[s as usize];
            if is_empty(m) {
                continue;
            }
            let r = map2(self.run_batch(s, m, lanes, events), m, |a, b| a & b);
            if !is_empty(r) && block.add(r, self.slots[s as usize].id) {
                block.flush(first, out);
            }
        }
        block.flush(first, out);
    }

    /// Runs slot `s`'s batch program for the lanes in `cands` (the events
    /// that selected it). Boolean slots are read for every lane, a word at
    /// a time; other atoms are evaluated only on `cands`' lanes: on a
    /// sparse workload an expression is a candidate of a few events of the
    /// chunk, and evaluating its atoms on all 512 made the batch path
    /// slower than one search per event. Lanes outside `cands` come out
    /// unspecified.
    ///
    /// Every instruction does the same word operations, steered by its
    /// opcode's masks ([`Decoded`]), with no branch on the opcode: on the
    /// dense reference profile's random trees a jump per instruction
    /// through the opcode's table was mispredicted most of the time.
    ///
    /// Inlined into its loop over the slots: called there once per slot
    /// (which it was once `batch_chunk` had a copy per sink type), the
    /// dense `search_batch` row took 61-63 ms instead of 56.
    #[inline(always)]
    fn run_batch(&self, s: u32, cands: Lane, lanes: &mut Lanes, events: &[Event]) -> Lane {
        let slot = &self.slots[s as usize];
        let start = slot.tree_start as usize;
        let code = &self.bcode[start..start + slot.tree_len as usize];
        let atom_row = lanes.rows.len() - MAX_STACK - 2;
        let stack_row = atom_row + 1;
        let mut sp = 0usize;
        let mut acc: Lane = [0; WORDS];
        for &ins in code {
            let d = &DECODED[(ins >> OP_SHIFT) as usize % DECODED.len()];
            let o = ins & OPERAND;
            let operand_row = if ins & BATCH_ATOM != 0 {
                let v = self.atom_lanes(o as usize, cands, lanes, events);
                lanes.rows[atom_row] = v;
                atom_row
            } else {
                FIRST_SLOT_ROW + o as usize
            };
            // Each push is matched by a pop or ends the program, and programs
            // are at most `MAX_DEPTH` deep, so the stack never outgrows its
            // `MAX_STACK` rows (and the one above them this store may take).
            lanes.rows[stack_row + sp] = acc;
            let row = if d.pop {
                stack_row + sp - 1
            } else if d.operand {
                operand_row
            } else {
                ZERO_ROW
            };
            acc = d.apply(acc, lanes.rows[row]);
            sp = sp + d.push - usize::from(d.pop);
        }
        acc
    }

    /// The lanes of `want` on which atom `a` holds (the others come out
    /// unspecified): read off the selections for an atom they decide, else
    /// evaluated per lane, and kept for the chunk's later expressions if
    /// several use it.
    #[inline(never)]
    fn atom_lanes(&self, a: usize, cands: Lane, lanes: &mut Lanes, events: &[Event]) -> Lane {
        let Lanes {
            atom_at,
            atom_words,
            atom_done,
            hit_at,
            hit_words,
            strs,
            ..
        } = lanes;
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
            return eval(cands);
        }
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
}

/// Whether the CPU runs AVX-512F (tests may ask for the baseline code).
#[cfg(all(target_arch = "x86_64", not(miri)))]
fn avx512() -> bool {
    #[cfg(test)]
    if tests::BASELINE.get() {
        return false;
    }
    std::arch::is_x86_feature_detected!("avx512f")
}

/// A batch opcode ([`bop`]) as the masks and counts its instruction is run
/// by: the operand `x` is the stack's top (`pop`), the instruction's slot
/// or atom (`operand`), or zero, then `x ^= neg`, and the accumulator
/// becomes `((x & (acc | load)) | (acc & or)) ^ not`, after being pushed
/// when `push` is 1. `load` and `or` all ones give `x | acc`, `load` alone
/// `x`, neither `x & acc`, `or` alone `acc`.
#[derive(Debug, Clone, Copy)]
struct Decoded {
    push: usize,
    pop: bool,
    operand: bool,
    neg: u64,
    load: u64,
    or: u64,
    not: u64,
}

impl Decoded {
    /// The accumulator after this instruction, given its operand `x` (the
    /// row it reads: the stack's top, its slot or atom, or zero).
    #[inline(always)]
    fn apply(&self, acc: Lane, x: Lane) -> Lane {
        std::array::from_fn(|w| {
            let x = x[w] ^ self.neg;
            ((x & (acc[w] | self.load)) | (acc[w] & self.or)) ^ self.not
        })
    }
}

/// [`Decoded`] for every opcode a batch instruction's 5 bits can hold;
/// the ones the compiler never writes run as `PUSH_FALSE`.
static DECODED: [Decoded; 32] = {
    const ONES: u64 = u64::MAX;
    const fn dec(op: u32) -> Decoded {
        let d = Decoded {
            push: 0,
            pop: false,
            operand: false,
            neg: 0,
            load: 0,
            or: 0,
            not: 0,
        };
        match op {
            bop::PUSH => Decoded {
                push: 1,
                operand: true,
                load: ONES,
                ..d
            },
            bop::PUSH_NOT => Decoded {
                push: 1,
                operand: true,
                neg: ONES,
                load: ONES,
                ..d
            },
            bop::AND => Decoded { operand: true, ..d },
            bop::AND_NOT => Decoded {
                operand: true,
                neg: ONES,
                ..d
            },
            bop::OR => Decoded {
                operand: true,
                load: ONES,
                or: ONES,
                ..d
            },
            bop::OR_NOT => Decoded {
                operand: true,
                neg: ONES,
                load: ONES,
                or: ONES,
                ..d
            },
            bop::POP_AND => Decoded { pop: true, ..d },
            bop::POP_OR => Decoded {
                pop: true,
                load: ONES,
                or: ONES,
                ..d
            },
            bop::NOT => Decoded {
                or: ONES,
                not: ONES,
                ..d
            },
            bop::PUSH_TRUE => Decoded {
                push: 1,
                neg: ONES,
                load: ONES,
                ..d
            },
            _ => Decoded {
                push: 1,
                load: ONES,
                ..d
            },
        }
    }
    let mut t = [dec(bop::PUSH_FALSE); 32];
    let mut op = 0;
    while op < 32 {
        t[op as usize] = dec(op);
        op += 1;
    }
    t
};

/// The matches of up to 64 consecutive matching slots (in id order), given
/// to the sink a block at a time, event by event: one `push_all` of the
/// block's ids per event, where one `push` per id and event went to a
/// different event's list each time (on the dense reference profile
/// about 25,000 ids an event per chunk, spread over 512 lists).
struct Block {
    /// Per slot of the block, its matching lanes.
    lanes: [Lane; 64],
    /// Per slot of the block, its id.
    ids: [Id; 64],
    len: usize,
}

impl Block {
    fn new() -> Block {
        Block {
            lanes: [[0; WORDS]; 64],
            ids: [0; 64],
            len: 0,
        }
    }

    /// Adds a slot's matching lanes; true when the block is full.
    #[inline(always)]
    fn add(&mut self, lanes: Lane, id: Id) -> bool {
        self.lanes[self.len] = lanes;
        self.ids[self.len] = id;
        self.len += 1;
        self.len == 64
    }

    /// Gives each event its ids in the block (lane `i` is event
    /// `first + i`), in the block's order, and empties the block.
    #[inline(always)]
    fn flush(&mut self, first: usize, out: &mut impl MatchSink) {
        let mut ids = [0 as Id; 64];
        for w in 0..WORDS {
            // Row k: slot k's lanes of word w; transposed, row b: the slots
            // lane `64 w + b` matches.
            let mut rows: [u64; 64] =
                std::array::from_fn(|k| if k < self.len { self.lanes[k][w] } else { 0 });
            if rows.iter().fold(0, |a, &r| a | r) == 0 {
                continue;
            }
            transpose(&mut rows);
            for (b, &row) in rows.iter().enumerate() {
                let mut m = row;
                let mut n = 0;
                while m != 0 {
                    ids[n] = self.ids[m.trailing_zeros() as usize];
                    n += 1;
                    m &= m - 1;
                }
                if n > 0 {
                    out.push_all(first + w * 64 + b, &ids[..n]);
                }
            }
        }
        self.len = 0;
    }
}

/// Transposes a 64 x 64 bit matrix in place: bit `b` of row `k` becomes
/// bit `k` of row `b`. Swaps ever smaller blocks, halves of 32 bits first.
#[inline(always)]
fn transpose(rows: &mut [u64; 64]) {
    const MASKS: [(usize, u64); 6] = [
        (32, 0x0000_0000_FFFF_FFFF),
        (16, 0x0000_FFFF_0000_FFFF),
        (8, 0x00FF_00FF_00FF_00FF),
        (4, 0x0F0F_0F0F_0F0F_0F0F),
        (2, 0x3333_3333_3333_3333),
        (1, 0x5555_5555_5555_5555),
    ];
    for (j, m) in MASKS {
        for k in (0..64).filter(|k| k & j == 0) {
            // The high `j` bits of each 2j-bit group of row k trade places
            // with the low ones of row k + j.
            let t = ((rows[k] >> j) ^ rows[k + j]) & m;
            rows[k + j] ^= t;
            rows[k] ^= t << j;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::{DECODED, Lane, WORDS};
    use crate::program::bop;
    use crate::{BatchPath, Event, Index, Schema, reference};

    /// The bit transpose against reading every bit.
    #[test]
    fn transpose_swaps_rows_and_columns() {
        let mut rng = fastrand::Rng::with_seed(9);
        for _ in 0..20 {
            let rows: [u64; 64] = std::array::from_fn(|_| rng.u64(..) & rng.u64(..));
            let mut t = rows;
            super::transpose(&mut t);
            for (k, row) in rows.iter().enumerate() {
                for (b, col) in t.iter().enumerate() {
                    assert_eq!(row >> b & 1, col >> k & 1, "row {k}, bit {b}");
                }
            }
        }
    }

    thread_local! {
        /// Runs this thread's batch searches on x86-64's baseline code,
        /// whatever the CPU has.
        pub(super) static BASELINE: Cell<bool> = const { Cell::new(false) };
    }

    fn random_lane(rng: &mut fastrand::Rng) -> Lane {
        std::array::from_fn(|_| rng.u64(..))
    }

    /// Each opcode's masks do what [`bop`] says the opcode does, on the
    /// operand it reads (the stack's top for the pops, zero for the ones
    /// with no operand); the opcodes the compiler never writes run as
    /// `PUSH_FALSE`.
    #[test]
    fn every_opcode_runs_as_bop_defines_it() {
        let mut rng = fastrand::Rng::with_seed(7);
        for op in 0..DECODED.len() as u32 {
            for _ in 0..8 {
                let (acc, v, top) = (
                    random_lane(&mut rng),
                    random_lane(&mut rng),
                    random_lane(&mut rng),
                );
                let f = |g: &dyn Fn(usize) -> u64| -> Lane { std::array::from_fn(g) };
                // The result, pushes, whether it pops, and the operand.
                let (want, push, pop, x) = match op {
                    bop::PUSH => (v, 1, false, v),
                    bop::PUSH_NOT => (f(&|w| !v[w]), 1, false, v),
                    bop::AND => (f(&|w| acc[w] & v[w]), 0, false, v),
                    bop::AND_NOT => (f(&|w| acc[w] & !v[w]), 0, false, v),
                    bop::OR => (f(&|w| acc[w] | v[w]), 0, false, v),
                    bop::OR_NOT => (f(&|w| acc[w] | !v[w]), 0, false, v),
                    bop::POP_AND => (f(&|w| acc[w] & top[w]), 0, true, top),
                    bop::POP_OR => (f(&|w| acc[w] | top[w]), 0, true, top),
                    bop::NOT => (f(&|w| !acc[w]), 0, false, [0; WORDS]),
                    bop::PUSH_TRUE => ([u64::MAX; WORDS], 1, false, [0; WORDS]),
                    _ => ([0; WORDS], 1, false, [0; WORDS]),
                };
                let d = &DECODED[op as usize];
                assert_eq!(d.apply(acc, x), want, "opcode {op}");
                assert_eq!((d.push, d.pop), (push, pop), "opcode {op}'s stack");
                let operand = (bop::PUSH..=bop::OR_NOT).contains(&op);
                assert_eq!(d.operand, operand, "opcode {op}'s operand");
            }
        }
    }

    /// The bit-parallel search gives every event what one search per
    /// event gives it, on the code for this CPU and on the baseline code,
    /// with a chunk of 512 events and a short one after it.
    #[test]
    fn both_compilations_of_the_batch_path_find_what_search_finds() {
        let schema = Schema::boolean_params(24);
        let mut index = Index::new(schema.clone());
        for (i, e) in reference::random_expressions(24, 300, 3).iter().enumerate() {
            index.insert(i as u64 + 1, e).unwrap();
        }
        let events: Vec<Event> = reference::random_events(24, 700, 4)
            .iter()
            .map(|v| Event::from_bools(&schema, v).unwrap())
            .collect();
        let want: Vec<Vec<u64>> = events.iter().map(|ev| index.search(ev).unwrap()).collect();
        assert!(want.iter().any(|ids| !ids.is_empty()));
        for baseline in [false, true] {
            BASELINE.set(baseline);
            let mut got: Vec<Vec<u64>> = Vec::new();
            index
                .search_batch_by(&events, &mut got, BatchPath::Lanes)
                .unwrap();
            BASELINE.set(false);
            assert_eq!(got, want, "baseline code: {baseline}");
        }
    }
}
