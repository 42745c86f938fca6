//! The sorted thresholds of range conjuncts, one side of one attribute
//! each, and the spans of them a value makes false.

use super::Span;
use crate::domain::AttrId;

/// Thresholds added since the last merge, scanned linearly by a search,
/// are merged into the sorted run when there are this many, or the square
/// root of the run's length if more. A merge copies the whole run, so a
/// fixed tail made adding `n` thresholds cost `n² / 256` copies; a tail of
/// `√n` keeps it near `n^1.5`, while a search scans at most `√n` pending
/// thresholds beside its binary search.
const PENDING_MIN: usize = 128;

/// A comparison bound: `x > v`/`x >= v` (lower side) or `x < v`/`x <= v`
/// (upper side), `strict` for `>`/`<`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Bound<T> {
    v: T,
    strict: bool,
}

/// A threshold not merged yet: its bound and posting entry.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Pending<T> {
    bound: Bound<T>,
    entry: u32,
}

/// The thresholds of one side of one attribute: a sorted run in which the
/// atoms a value makes true are one contiguous span, and a short unsorted
/// tail of recent insertions, so that inserting stays cheap and searching
/// needs no mutation.
///
/// The run keeps its bounds and its posting entries in two arrays in the
/// same order: a search binary-searches the bounds and then walks a span
/// of entries alone, 4 bytes an entry where a combined array read 16.
#[derive(Debug, Clone)]
pub(crate) struct Thresholds<T> {
    upper: bool,
    bounds: Vec<Bound<T>>,
    /// The posting entry of the expression with each range conjunct of
    /// the run: the span a value makes false is one contiguous run of
    /// entries, with no indirection through a term.
    pub(super) entries: Vec<u32>,
    pending: Vec<Pending<T>>,
}

impl<T: PartialOrd + Copy> Thresholds<T> {
    pub(super) fn new(upper: bool) -> Self {
        Thresholds {
            upper,
            bounds: Vec::new(),
            entries: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// Sort order of the run: by value; at equal values, the side's
    /// weaker bound first, so that a value's true atoms stay contiguous
    /// (non-strict before strict on the lower side, strict before
    /// non-strict on the upper side).
    fn before(&self, a: &Bound<T>, b: &Bound<T>) -> std::cmp::Ordering {
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
    fn holds(&self, t: &Bound<T>, x: T) -> bool {
        if self.upper {
            x < t.v || (x == t.v && !t.strict)
        } else {
            x > t.v || (x == t.v && !t.strict)
        }
    }

    /// Adds a threshold; with `defer`, it waits among the pending ones
    /// until [`Thresholds::settle`], however many there are.
    pub(super) fn add(&mut self, v: T, strict: bool, entry: u32, defer: bool) {
        self.pending.push(Pending {
            bound: Bound { v, strict },
            entry,
        });
        if !defer && self.pending.len() >= PENDING_MIN.max(self.bounds.len().isqrt()) {
            self.merge_pending();
        }
    }

    /// Merges every pending threshold into the run, and gives back the
    /// room a bulk load's pending ones took (a merge keeps it for the
    /// next ones; after a 1M-expression load that held 72 MiB).
    pub(super) fn settle(&mut self) {
        if !self.pending.is_empty() {
            self.merge_pending();
        }
        self.pending.shrink_to(PENDING_MIN);
    }

    /// Merges the pending thresholds into the run, in place: each pending
    /// one, from the greatest down, finds its place by binary search, and
    /// the run's elements above it move up in one block. A merge element
    /// by element into new arrays took ~11 % of a 1M-expression build:
    /// a compare and branch per element of the whole run, and fresh
    /// pages for each copy; a block move runs at memory speed.
    fn merge_pending(&mut self) {
        let mut p = std::mem::take(&mut self.pending);
        p.sort_by(|a, b| self.before(&a.bound, &b.bound));
        let n = self.bounds.len();
        let fill = Bound {
            v: p[0].bound.v,
            strict: false,
        };
        // Exact: the run is most of the index's range memory, and a
        // doubling capacity held up to twice that (growing a large block
        // in place is cheap: the allocator remaps its pages).
        self.bounds.reserve_exact(p.len());
        self.entries.reserve_exact(p.len());
        self.bounds.resize(n + p.len(), fill);
        self.entries.resize(n + p.len(), 0);
        // `end`: the run's elements at or above it are placed already.
        let mut end = n;
        for (j, t) in p.iter().enumerate().rev() {
            // After every run element not ordered after it (as the
            // element-wise merge placed them).
            let at = self.bounds[..end].partition_point(|r| !self.before(&t.bound, r).is_lt());
            self.bounds.copy_within(at..end, at + j + 1);
            self.entries.copy_within(at..end, at + j + 1);
            self.bounds[at + j] = t.bound;
            self.entries[at + j] = t.entry;
            end = at;
        }
        p.clear();
        self.pending = p;
    }

    pub(super) fn remove(&mut self, v: T, strict: bool, entry: u32) {
        let bound = Bound { v, strict };
        if let Some(k) = self
            .pending
            .iter()
            .position(|t| t.entry == entry && t.bound == bound)
        {
            self.pending.swap_remove(k);
        } else {
            let from = self.bounds.partition_point(|t| t.v < v);
            if let Some(k) = (from..self.bounds.len())
                .find(|&k| self.entries[k] == entry && self.bounds[k] == bound)
            {
                self.bounds.remove(k);
                self.entries.remove(k);
            }
        }
    }

    /// The span of the run `x` makes true.
    pub(super) fn span(&self, x: T) -> (u32, u32) {
        if self.upper {
            // False first: below `x`, or equal and strict.
            let at = self
                .bounds
                .partition_point(|t| t.v < x || (t.v == x && t.strict));
            (at as u32, self.bounds.len() as u32)
        } else {
            let at = self
                .bounds
                .partition_point(|t| t.v < x || (t.v == x && !t.strict));
            (0, at as u32)
        }
    }

    #[cfg(test)]
    pub(super) fn pending(&self) -> usize {
        self.pending.len()
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.bounds.len() + self.pending.len()
    }

    pub(super) fn heap_bytes(&self) -> usize {
        self.bounds.capacity() * std::mem::size_of::<Bound<T>>()
            + self.entries.capacity() * 4
            + self.pending.capacity() * std::mem::size_of::<Pending<T>>()
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
    let len = th.bounds.len() as u32;
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
            .filter(|t| x.is_none_or(|x| !th.holds(&t.bound, x)))
            .map(|t| t.entry),
    );
    if loose.len() > at {
        kills.push(Span::LooseEntries(at as u32, loose.len() as u32));
    }
}
