//! The cooperative search: selection and evaluation split into steps bounded
//! by a budget of reductions, so a caller on a shared executor can give
//! control back between steps. What is counted and how far a step may
//! overrun its budget is documented on [`SearchIter`], the public face of
//! this module.

use crate::Result;
use crate::event::Event;
use crate::index::{Id, Index, LANES, LaneState, Scratch};
use crate::program::{MAX_STEP_WEIGHT, Memo};
use crate::selection::Selection;

/// The state of one cooperative search, made by [`Index::search_iter`]
/// and advanced by [`Index::search_next`] or finished by
/// [`Index::search_all`].
///
/// # Reductions
///
/// Counted as the reference does:
///
/// * selection: one for the index root, one per event string numbered
///   (see `strings`: each value of a string attribute, each element of a
///   string list; one for an undefined one), one per partition probed, one per
///   candidate taken from a posting list, and, when several lists must be
///   merged into id order through the index's id-ordered slot list, one per
///   slot scanned;
/// * evaluation: one per candidate taken, then per expression node visited
///   one, per comparison/operation one, per list/set loop step one. The
///   compiled jump program has no `and`/`or`/`not` steps, so each such node
///   is charged to the leaf step where evaluation enters it (fixed at
///   compile time): executing a leaf costs 2 (node and test) plus the
///   `and`/`or`/`not` nodes it enters, and the whole search counts the nodes
///   a short-circuit tree walk would visit. A predicate shared by several
///   expressions is evaluated once per event (memoized); later uses cost no
///   loop steps.
///
/// # Overrun
///
/// Selection units cost exactly 1 and each is checked against the budget
/// before it starts, so selection never overruns. Evaluation runs several
/// expressions side by side, one leaf of each per round, and checks the
/// budget once per round (checking per leaf cost about a tenth of the
/// search, whose leaves are mostly single bit tests). A leaf step is
/// indivisible: it costs at most [`MAX_STEP_WEIGHT`] (2 plus one per
/// nesting level, which the parser bounds) plus, the first time its
/// predicate is evaluated for the event, the predicate's loop steps, at most
/// the length of the event's list plus the length of the expression's value
/// set; taking a candidate costs 1 and is checked on its own. So with
/// `budget ≥ 1` one call of [`Index::search_next`] spends at most
/// `budget - 1 +` [`SearchIter::max_overrun`] reductions: a round's worth of
/// leaf steps. Every call does at least one unit of work, so any budget, 1
/// included, terminates.
#[derive(Debug)]
pub struct SearchIter<'a> {
    index: &'a Index,
    event: &'a Event,
    selection: Selection,
    hits: Vec<u64>,
    lanes: LaneState,
    done: bool,
    memo: Memo,
    /// As in [`Scratch`]: the matching slots, a bit each (`Index::collect`).
    marked: Vec<u64>,
    reductions: u64,
}

/// Outcome of [`Index::search_next`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchStep {
    /// The budget is spent; call again to go on.
    Continue,
    /// The search is over: the matching ids in ascending order.
    Done(Vec<Id>),
}

impl SearchIter<'_> {
    /// Reductions spent so far by [`Index::search_next`] (selection
    /// included).
    pub fn reductions(&self) -> u64 {
        self.reductions
    }

    /// Number of candidate expressions selected so far (all of them once
    /// selection is over).
    pub fn candidates(&self) -> usize {
        self.selection.cands().len()
    }

    /// The most reductions one call of [`Index::search_next`] can spend
    /// beyond `budget - 1` for this event: one round of leaf steps, each
    /// [`MAX_STEP_WEIGHT`] plus the longest list the event holds plus the
    /// longest value set of any expression inserted into the index so far.
    pub fn max_overrun(&self) -> u64 {
        let leaf =
            MAX_STEP_WEIGHT + self.event.longest_list() as u64 + self.index.longest_set as u64;
        LANES as u64 * leaf
    }

    /// Gives the search's buffers back as a [`Scratch`], for the next
    /// [`Index::search_iter_in`] (or [`Index::search_with`]).
    pub fn into_scratch(self) -> Scratch {
        Scratch {
            selection: self.selection,
            hits: self.hits,
            memo: self.memo,
            marked: self.marked,
        }
    }

    fn finish(&mut self) -> Vec<Id> {
        self.done = true;
        let mut ids = Vec::new();
        self.index.collect(
            self.selection.cands(),
            &self.hits,
            &mut self.marked,
            &mut ids,
        );
        ids
    }

    /// Advances the selection by units of one reduction until it is over
    /// (true) or `spent` reaches `budget` (false).
    fn select(&mut self, budget: u64, spent: &mut u64) -> bool {
        self.selection
            .advance(self.index.source(), self.event, budget, spent)
    }
}

impl Index {
    /// Starts a search of `ev`; run it with [`Index::search_all`] or step by
    /// step with [`Index::search_next`]. Only checks the event: selection is
    /// part of the budgeted work.
    pub fn search_iter<'a>(&'a self, ev: &'a Event) -> Result<SearchIter<'a>> {
        self.validate(ev)?;
        let mut memo = Memo::default();
        memo.reset(self.atoms.len());
        Ok(SearchIter {
            index: self,
            event: ev,
            selection: Selection::default(),
            hits: Vec::new(),
            lanes: LaneState::default(),
            done: false,
            memo,
            marked: Vec::new(),
            reductions: 0,
        })
    }

    /// [`Index::search_iter`] on the buffers of `scratch`, which it takes
    /// (leaving `scratch` empty); [`SearchIter::into_scratch`] or
    /// [`Index::search_all_in`] gives them back. A stream of searches then
    /// sizes and zeroes its memo (four bytes per atom of the index) and its
    /// selection's arrays once, not per event: fresh ones cost three
    /// mmap/munmap pairs and ~700 page faults per event at 100,000 adtech
    /// expressions, 0.6 of `perfkit betree search --mode all`'s time.
    pub fn search_iter_in<'a>(
        &'a self,
        ev: &'a Event,
        scratch: &mut Scratch,
    ) -> Result<SearchIter<'a>> {
        self.validate(ev)?;
        let Scratch {
            mut selection,
            mut hits,
            mut memo,
            marked,
        } = std::mem::take(scratch);
        selection.reset();
        hits.clear();
        memo.reset(self.atoms.len());
        Ok(SearchIter {
            index: self,
            event: ev,
            selection,
            hits,
            lanes: LaneState::default(),
            done: false,
            memo,
            marked,
            reductions: 0,
        })
    }

    /// [`Index::search_all`], then `it`'s buffers go back into `scratch`
    /// for the next [`Index::search_iter_in`].
    ///
    /// # Panics
    ///
    /// As [`Index::search_all`].
    pub fn search_all_in(&self, it: SearchIter<'_>, scratch: &mut Scratch) -> Vec<Id> {
        let mut it = it;
        let ids = self.run_all(&mut it);
        *scratch = it.into_scratch();
        ids
    }

    /// Finishes the search in one go: the rest of the selection, then every
    /// remaining candidate, without a budget. Returns the matching ids in
    /// ascending order (none if `it` already returned them).
    ///
    /// # Panics
    ///
    /// If `it` was started by another index ([`Index::search_iter`] of
    /// another `Index` value): that is a bug in the caller, not bad data.
    pub fn search_all(&self, mut it: SearchIter<'_>) -> Vec<Id> {
        self.run_all(&mut it)
    }

    fn run_all(&self, it: &mut SearchIter<'_>) -> Vec<Id> {
        assert!(std::ptr::eq(self, it.index), "iterator of another index");
        if it.done {
            return Vec::new();
        }
        let mut spent = 0;
        it.select(u64::MAX, &mut spent);
        it.reductions += spent;
        it.hits.resize(it.selection.cands().len().div_ceil(64), 0);
        self.evaluate::<false>(
            &it.selection,
            it.event,
            &mut it.memo,
            &mut it.hits,
            &mut it.lanes,
            u64::MAX,
        );
        it.finish()
    }

    /// Goes on with the search until `budget` reductions are spent (a budget
    /// of 0 counts as 1), through selection and then evaluation; an
    /// expression cut by the budget resumes where it stopped on the next
    /// call.
    ///
    /// A call spends at most `budget - 1 +` [`SearchIter::max_overrun`]
    /// reductions (see [`SearchIter`] for what is counted), and always
    /// makes progress. After `Done`, further calls
    /// return `Done` with no ids.
    ///
    /// # Panics
    ///
    /// If `it` was started by another index: a bug in the caller.
    pub fn search_next(&self, it: &mut SearchIter<'_>, budget: u64) -> SearchStep {
        assert!(std::ptr::eq(self, it.index), "iterator of another index");
        if it.done {
            return SearchStep::Done(Vec::new());
        }
        let budget = budget.max(1);
        let mut spent = 0u64;
        let selected = it.select(budget, &mut spent);
        it.reductions += spent;
        if !selected {
            return SearchStep::Continue;
        }
        let words = it.selection.cands().len().div_ceil(64);
        if it.hits.len() != words {
            it.hits.resize(words, 0);
        }
        // With the budget spent this only finds out whether anything is left.
        let (done, red) = self.evaluate::<true>(
            &it.selection,
            it.event,
            &mut it.memo,
            &mut it.hits,
            &mut it.lanes,
            budget - spent,
        );
        it.reductions += red;
        if done {
            SearchStep::Done(it.finish())
        } else {
            SearchStep::Continue
        }
    }

    /// The async search: runs [`Index::search_next`] with `budget` and yields
    /// to the tokio executor between steps. CPU work stays on the calling
    /// task (cooperative, not `spawn_blocking`); each slice between yields
    /// spends at most `budget - 1 +` [`SearchIter::max_overrun`] reductions.
    /// Needs the `tokio` feature (on by default).
    #[cfg(feature = "tokio")]
    pub async fn search_async(&self, ev: &Event, budget: u64) -> Result<Vec<Id>> {
        let mut it = self.search_iter(ev)?;
        loop {
            match self.search_next(&mut it, budget) {
                SearchStep::Done(ids) => return Ok(ids),
                SearchStep::Continue => tokio::task::yield_now().await,
            }
        }
    }
}
