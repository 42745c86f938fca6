//! The evaluation of the selected candidates: their jump programs run
//! side by side, and the matches collected.

use super::{EVAL_ATOM, HIT_ATOM, Hot, Id, Index, MISS_ATOM};
use crate::counting::{Decided, PROVEN};
use crate::event::Event;
use crate::program::{ACCEPT, ATOM, Memo, REJECT, Step};
use crate::selection::Selection;

/// Programs evaluated side by side, one leaf each per round.
pub(crate) const LANES: usize = 4;
/// An empty lane.
const NONE: usize = usize::MAX;

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
    pub(crate) fn eval_many<const COUNT: bool>(
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
                    if COUNT {
                        red += u64::from(st.weight);
                    }
                    let v = if st.test < ATOM {
                        ((bits[(st.test >> 6) as usize] >> (st.test & 63)) & 1) as u32
                    } else {
                        self.atom::<COUNT>(st.test & !ATOM, ev, sel, memo, &mut red) as u32
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

    /// The jump program of `slot` (offsets added in `usize`), and the
    /// programs after it: its steps jump within it.
    #[inline]
    fn program(&self, slot: Hot) -> &[Step] {
        &self.code[slot.code_start as usize..]
    }

    /// Appends the ids of the candidates whose bit is set in `hits`, in
    /// ascending order (candidates come in no particular order; the
    /// matches are few, so sorting them is cheap).
    pub(crate) fn collect(&self, cands: &[u32], hits: &[u64], out: &mut Vec<Id>) {
        let from = out.len();
        for (w, &word) in hits.iter().enumerate() {
            let mut m = word;
            while m != 0 {
                let i = w * 64 + m.trailing_zeros() as usize;
                out.push(self.hot[(cands[i] & !PROVEN) as usize].id);
                m &= m - 1;
            }
        }
        out[from..].sort_unstable();
    }

    /// The value of atom `a` on `ev`. An atom the counting index decides
    /// by value costs a stamp test (its lookup was charged to the
    /// selection); any other is evaluated once per event and memoized,
    /// charging its loop steps.
    #[inline(never)]
    fn atom<const COUNT: bool>(
        &self,
        a: u32,
        ev: &Event,
        sel: &Selection,
        memo: &mut Memo,
        red: &mut u64,
    ) -> bool {
        let seen = sel.seen();
        if a & HIT_ATOM != 0 {
            return seen.hit(a & !HIT_ATOM);
        }
        if a & MISS_ATOM != 0 {
            return !seen.hit(a & !MISS_ATOM);
        }
        let a = if a & EVAL_ATOM != 0 {
            a & !EVAL_ATOM
        } else {
            match self.counting.decided(a) {
                Decided::Hit => return seen.hit(a),
                Decided::Miss(attr) => return ev.is_defined(attr) && !seen.hit(a),
                Decided::No => a,
            }
        };
        if let Some(v) = memo.get(a) {
            return v;
        }
        let (v, steps) = self.atoms.preds[a as usize]
            .as_ref()
            .expect("programs reference live atoms")
            .eval(ev, sel.strings());
        if COUNT {
            *red += steps;
        }
        memo.set(a, v);
        v
    }
}
