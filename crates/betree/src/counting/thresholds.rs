//! The sorted thresholds of range conjuncts, one side of one attribute
//! each, and the spans of them a value makes false.

use super::Span;
use crate::domain::AttrId;

/// Thresholds added since the last merge, scanned linearly by a search;
/// merged into the sorted run when there are this many.
const PENDING_MAX: usize = 128;

/// A comparison threshold: the predicate `x > v`/`x >= v` (lower side) or
/// `x < v`/`x <= v` (upper side) of one atom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Threshold<T> {
    v: T,
    strict: bool,
    /// The posting entry of the expression with this range conjunct: the
    /// span a value makes true is then read as one contiguous run of
    /// entries, with no indirection through a term.
    pub(super) entry: u32,
}

/// The thresholds of one side of one attribute: a sorted run in which the
/// atoms a value makes true are one contiguous span, and a short unsorted
/// tail of recent insertions, so that inserting stays cheap and searching
/// needs no mutation.
#[derive(Debug, Clone)]
pub(crate) struct Thresholds<T> {
    upper: bool,
    pub(super) run: Vec<Threshold<T>>,
    pending: Vec<Threshold<T>>,
}

impl<T: PartialOrd + Copy> Thresholds<T> {
    pub(super) fn new(upper: bool) -> Self {
        Thresholds {
            upper,
            run: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Sort order of the run: by value; at equal values, the side's
    /// weaker bound first, so that a value's true atoms stay contiguous
    /// (non-strict before strict on the lower side, strict before
    /// non-strict on the upper side).
    fn before(&self, a: &Threshold<T>, b: &Threshold<T>) -> std::cmp::Ordering {
        a.v.partial_cmp(&b.v)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(if self.upper {
                b.strict.cmp(&a.strict)
            } else {
                a.strict.cmp(&b.strict)
            })
    }

    /// Whether `x` satisfies `t`.
    #[inline]
    fn holds(&self, t: &Threshold<T>, x: T) -> bool {
        if self.upper {
            x < t.v || (x == t.v && !t.strict)
        } else {
            x > t.v || (x == t.v && !t.strict)
        }
    }

    pub(super) fn add(&mut self, v: T, strict: bool, entry: u32) {
        self.pending.push(Threshold { v, strict, entry });
        if self.pending.len() >= PENDING_MAX {
            let mut p = std::mem::take(&mut self.pending);
            p.sort_by(|a, b| self.before(a, b));
            let mut run = Vec::with_capacity(self.run.len() + p.len());
            let (mut i, mut j) = (0, 0);
            while i < self.run.len() && j < p.len() {
                if self.before(&p[j], &self.run[i]).is_lt() {
                    run.push(p[j]);
                    j += 1;
                } else {
                    run.push(self.run[i]);
                    i += 1;
                }
            }
            run.extend_from_slice(&self.run[i..]);
            run.extend_from_slice(&p[j..]);
            self.run = run;
            p.clear();
            self.pending = p;
        }
    }

    pub(super) fn remove(&mut self, v: T, strict: bool, entry: u32) {
        let same = |t: &Threshold<T>| t.entry == entry && t.strict == strict && t.v == v;
        if let Some(k) = self.pending.iter().position(same) {
            self.pending.swap_remove(k);
        } else {
            let from = self.run.partition_point(|t| t.v < v);
            if let Some(k) = self.run[from..].iter().position(same) {
                self.run.remove(from + k);
            }
        }
    }

    /// The span of the run `x` makes true.
    pub(super) fn span(&self, x: T) -> (u32, u32) {
        if self.upper {
            // False first: below `x`, or equal and strict.
            let at = self
                .run
                .partition_point(|t| t.v < x || (t.v == x && t.strict));
            (at as u32, self.run.len() as u32)
        } else {
            let at = self
                .run
                .partition_point(|t| t.v < x || (t.v == x && !t.strict));
            (0, at as u32)
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.run.len() + self.pending.len()
    }

    pub(super) fn heap_bytes(&self) -> usize {
        (self.run.capacity() + self.pending.capacity()) * std::mem::size_of::<Threshold<T>>()
    }
}

/// Pushes the spans of `th`'s run that `x` does not satisfy (all of it
/// for no value), and the entries of its pending thresholds that `x` does
/// not satisfy one by one.
pub(super) fn thresholds<T: PartialOrd + Copy>(
    th: &Thresholds<T>,
    x: Option<T>,
    attr: AttrId,
    side: u8,
    kills: &mut Vec<Span>,
    loose: &mut Vec<u32>,
) {
    let len = th.run.len() as u32;
    let (start, end) = x.map_or((0, 0), |x| th.span(x));
    for (from, to) in [(0, start), (end, len)] {
        if from < to {
            kills.push(Span::Run {
                attr,
                side,
                start: from,
                end: to,
            });
        }
    }
    let at = loose.len();
    loose.extend(
        th.pending
            .iter()
            .filter(|t| x.is_none_or(|x| !th.holds(t, x)))
            .map(|t| t.entry),
    );
    if loose.len() > at {
        kills.push(Span::LooseEntries(at as u32, loose.len() as u32));
    }
}
