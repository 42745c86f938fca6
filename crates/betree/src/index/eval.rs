//! The evaluation of the selected candidates: their jump programs run
//! side by side, and the matches collected.

use super::{EVAL_ATOM, HIT_ATOM, Hot, Id, Index, MISS_ATOM, SORT_BELOW};
use crate::counting::{Decided, PROVEN};
use crate::event::Event;
use crate::prefetch::{prefetch, prefetch_at};
use crate::program::{ACCEPT, ATOM, INT_ATOM, Memo, REJECT, SHORT_INT, Step};
use crate::selection::Selection;

/// Programs evaluated side by side, one leaf each per round.
pub(crate) const LANES: usize = 4;
/// An empty lane.
const NONE: usize = usize::MAX;
/// Slots from which the evaluation of sparse candidates prefetches. On
/// the ad-targeting profile (`examples/scale`, events per CPU second,
/// three runs each way) the hints cost 10-15 % at 10k expressions and
/// 2-5 % at 30k, and gained 6 % at 100k and 20-30 % at 1M; on the dense
/// reference benchmark (5,000 expressions, most slots candidates) they
/// cost 15 %.
const PREFETCH_SLOTS: usize = 1 << 16;
/// How far ahead of the candidate taken [`Index::prefetch_ahead`] asks
/// for its slot, its program's first steps, and those steps' atoms: each
/// stage reads what the one before brought in.
const AHEAD_SLOT: usize = 16;
const AHEAD_CODE: usize = 8;
const AHEAD_ATOM: usize = 4;

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

impl Index {
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
    pub(crate) fn eval_many<const COUNT: bool, const PREFETCH: bool>(
        &self,
        sel: &Selection,
        ev: &Event,
        memo: &mut Memo,
        hits: &mut [u64],
        lanes: &mut LaneState,
        budget: u64,
    ) -> (bool, u64) {
        let bits = &ev.bits[..];
        let cands = sel.cands();
        let LaneState {
            pc,
            pos,
            next,
            live,
        } = lanes;
        let mut code: [&[Step]; LANES] = [&[]; LANES];
        for k in 0..LANES {
            if pc[k] < REJECT {
                code[k] = self.program(self.hot[cands[pos[k]] as usize]);
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
                    *next += 1;
                    if PREFETCH {
                        self.prefetch_ahead(cands, i, sel, memo);
                    }
                    if cands[i] & PROVEN != 0 {
                        // Matches with no evaluation, and without reading
                        // its slot.
                        hits[i / 64] |= 1 << (i % 64);
                        continue;
                    }
                    let slot = self.hot[cands[i] as usize];
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
                    // A folded comparison keeps its weight in the test word
                    // (`Step::cost`); every other step in `weight`. Charged
                    // per branch, so the bit tests that dominate budgeted
                    // searches of boolean workloads pay no extra test
                    // (through `cost()` for every step, the `search_next`
                    // bench's reference workload ran 7.5 % slower).
                    let v = if st.test < ATOM {
                        if COUNT {
                            red += u64::from(st.weight);
                        }
                        ((bits[(st.test >> 6) as usize] >> (st.test & 63)) & 1) as u32
                    } else if st.test & (INT_ATOM | HIT_ATOM) == HIT_ATOM {
                        if COUNT {
                            red += u64::from(st.weight);
                        }
                        // Decided by a hit: the stamp, tested here rather
                        // than through the call below (most leaves of
                        // indexed workloads are such tests).
                        sel.seen().hit(st.test & !(ATOM | HIT_ATOM)) as u32
                    } else if st.test & INT_ATOM != 0 {
                        if COUNT {
                            red += u64::from(st.cost());
                        }
                        // Folded into the step, or its operand follows it
                        // (see `inline_int_tests`).
                        if st.test & SHORT_INT != 0 {
                            st.short_int_holds(ev) as u32
                        } else {
                            code[k][p as usize + 1].int_holds(ev) as u32
                        }
                    } else {
                        let (v, steps) = self.atom::<COUNT>(st.test & !ATOM, ev, sel, memo);
                        if COUNT {
                            red += u64::from(st.weight) + steps;
                        }
                        v as u32
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

    /// [`Index::eval_many`], hinting the cache ahead of each candidate
    /// when they are sparse in an index of at least [`PREFETCH_SLOTS`]
    /// slots. Below that, or with dense candidates, what a candidate reads
    /// is mostly cached and the hints cost more than they save. Chosen
    /// once per call, as a type parameter: tested per candidate instead,
    /// the choice alone cost the dense reference benchmark 4 %.
    pub(crate) fn evaluate<const COUNT: bool>(
        &self,
        sel: &Selection,
        ev: &Event,
        memo: &mut Memo,
        hits: &mut [u64],
        lanes: &mut LaneState,
        budget: u64,
    ) -> (bool, u64) {
        if self.prefetches(sel.cands().len()) {
            self.eval_many::<COUNT, true>(sel, ev, memo, hits, lanes, budget)
        } else {
            self.eval_many::<COUNT, false>(sel, ev, memo, hits, lanes, budget)
        }
    }

    /// Whether evaluating `cands` candidates hints the cache ahead of
    /// each (see [`Index::evaluate`]).
    #[inline]
    pub(crate) fn prefetches(&self, cands: usize) -> bool {
        cands * SORT_BELOW < self.slots.len() && self.slots.len() >= PREFETCH_SLOTS
    }

    /// Hints the cache at what evaluating the candidates after the `i`th
    /// will read: a slot [`AHEAD_SLOT`] ahead, the steps of a program
    /// [`AHEAD_CODE`] ahead (from its entry, about a cache line's worth:
    /// most programs are a few steps), and what those steps test
    /// [`AHEAD_ATOM`] ahead. Candidates are sparse in a large index, so
    /// each of these reads is a cache miss, and a program's reads depend
    /// on each other (slot, then step, then atom): at 1M expressions
    /// evaluation waited on them more than it worked.
    #[inline]
    fn prefetch_ahead(&self, cands: &[u32], i: usize, sel: &Selection, memo: &Memo) {
        if let Some(&c) = cands.get(i + AHEAD_SLOT) {
            prefetch_at(&self.hot, (c & !PROVEN) as usize);
        }
        let steps = |c: u32| {
            let h = self.hot[c as usize];
            let at = h.code_start as usize + h.entry as usize;
            // Steps are 16 bytes: to the next fourth step of the array,
            // about a cache line (the array is not aligned to one).
            self.code.get(at..(at | 3) + 1).unwrap_or(&[])
        };
        if let Some(&c) = cands.get(i + AHEAD_CODE)
            && c & PROVEN == 0
            && let Some(st) = steps(c).first()
        {
            prefetch(st);
        }
        if let Some(&c) = cands.get(i + AHEAD_ATOM)
            && c & PROVEN == 0
        {
            for st in steps(c) {
                if st.test & ATOM == 0 {
                    continue;
                }
                let t = st.test & !ATOM;
                if t & INT_ATOM != 0 {
                    // Tested in place: nothing beyond the steps to read.
                    continue;
                }
                if t & (HIT_ATOM | MISS_ATOM) != 0 {
                    sel.seen().prefetch(t & !(HIT_ATOM | MISS_ATOM));
                } else if t & EVAL_ATOM != 0 {
                    let a = t & !EVAL_ATOM;
                    memo.prefetch(a);
                    prefetch_at(&self.atoms.preds, a as usize);
                } else {
                    self.counting.prefetch_decided(t);
                    sel.seen().prefetch(t);
                }
            }
        }
    }

    /// The jump program of `slot` (offsets added in `usize`), and the
    /// programs after it: its steps jump within it.
    #[inline]
    fn program(&self, slot: Hot) -> &[Step] {
        &self.code[slot.code_start as usize..]
    }

    /// Appends the ids of the candidates whose bit is set in `hits`, in
    /// ascending order. Candidates come in no particular order, so the
    /// matches are either sorted (few of them) or marked by slot and read
    /// off in id order (many: linear in the slots, where the sort is
    /// `m log m`; on the reference benchmark, 2,465 matches in 5,000
    /// slots, the sort was an eighth of a search's instructions): in slot
    /// order when that is id order ([`Index::ordered`]), else through the
    /// id-ordered slot list.
    /// `marked` is the slot bitset's buffer, kept by the caller so that a
    /// warm search allocates nothing.
    pub(crate) fn collect(
        &self,
        cands: &[u32],
        hits: &[u64],
        marked: &mut Vec<u64>,
        out: &mut Vec<Id>,
    ) {
        let from = out.len();
        let matches: usize = hits.iter().map(|w| w.count_ones() as usize).sum();
        // The slots of the matching candidates, in candidate order.
        let matched = || {
            hits.iter().enumerate().flat_map(move |(w, &word)| {
                let mut m = word;
                std::iter::from_fn(move || {
                    if m == 0 {
                        return None;
                    }
                    let i = w * 64 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    Some(cands[i] & !PROVEN)
                })
            })
        };
        let sort_cost = matches * matches.max(2).ilog2() as usize;
        let words = self.slots.len().div_ceil(64);
        // Slots in id order: the matches' bits, read in slot order, give
        // their ids sorted, for a word a 64 slots and a push a match. On
        // the ad-targeting profile at 100k expressions (2,160 matches an
        // event, 1,563 words) the sort this replaces was 3 % of the
        // command's search; what remains is mostly the load of each
        // match's id, which every way makes.
        let in_slot_order = self.ordered && words < sort_cost;
        if in_slot_order || self.order.len() < sort_cost {
            marked.clear();
            marked.resize(words, 0);
            for s in matched() {
                marked[s as usize / 64] |= 1 << (s % 64);
            }
            if in_slot_order {
                out.reserve(matches);
                for (w, &word) in marked.iter().enumerate() {
                    let mut m = word;
                    while m != 0 {
                        let s = w * 64 + m.trailing_zeros() as usize;
                        out.push(self.hot[s].id);
                        m &= m - 1;
                    }
                }
                return;
            }
            // Without a branch per slot (on the reference benchmark half
            // the slots match, at random, and a branch would miss as often):
            // every slot's id is written and only a marked one is kept, by
            // moving past it. The last write may land one past the matches,
            // hence the spare element.
            out.resize(from + matches + 1, 0);
            let mut n = from;
            for &s in &self.order {
                out[n] = self.hot[s as usize].id;
                n += ((marked[s as usize / 64] >> (s % 64)) & 1) as usize;
            }
            debug_assert_eq!(n, from + matches, "every match is a live slot");
            out.truncate(n);
            return;
        }
        out.reserve(matches);
        out.extend(matched().map(|s| self.hot[s as usize].id));
        out[from..].sort_unstable();
    }

    /// The value of atom `a` on `ev`, and the loop steps it charges (with
    /// `COUNT`). An atom the counting index decides by value costs a stamp
    /// test (its lookup was charged to the selection); any other is
    /// evaluated once per event and memoized, charging its loop steps.
    ///
    /// The steps are returned, not added through a `&mut` to the caller's
    /// count: a count whose address goes into this call (not inlined) is
    /// kept in memory, a load and a store on every step of the
    /// evaluation loop: `search_next` took 1.06-1.07x plain search's time
    /// in `perfkit bench`'s betree part that way, and takes 1.02-1.03x
    /// now (`search_all`: 0.98x either way).
    #[inline(never)]
    fn atom<const COUNT: bool>(
        &self,
        a: u32,
        ev: &Event,
        sel: &Selection,
        memo: &mut Memo,
    ) -> (bool, u64) {
        let seen = sel.seen();
        if a & HIT_ATOM != 0 {
            return (seen.hit(a & !HIT_ATOM), 0);
        }
        if a & MISS_ATOM != 0 {
            return (!seen.hit(a & !MISS_ATOM), 0);
        }
        let a = if a & EVAL_ATOM != 0 {
            a & !EVAL_ATOM
        } else {
            match self.counting.decided(a) {
                Decided::Hit => return (seen.hit(a), 0),
                Decided::Miss(attr) => return (ev.is_defined(attr) && !seen.hit(a), 0),
                Decided::No => a,
            }
        };
        if let Some(v) = memo.get(a) {
            return (v, 0);
        }
        let (v, steps) = self.atoms.preds[a as usize]
            .as_ref()
            .expect("programs reference live atoms")
            .eval(ev, sel.strings());
        memo.set(a, v);
        (v, if COUNT { steps } else { 0 })
    }
}
