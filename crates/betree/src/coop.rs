//! The cooperative search: selection and evaluation split into steps bounded
//! by a budget of reductions, so a caller on a shared executor can give
//! control back between steps.
//!
//! Reductions are counted as the reference does: one per index node and per
//! candidate taken in selection; in evaluation one per expression node
//! visited, one per comparison and one per list/set loop step. The compiled
//! jump program has no `and`/`or`/`not` nodes left to visit, so a leaf costs
//! two (the node and its test) plus its loop steps.
//!
//! A step stops as soon as the budget is spent, in the middle of an
//! expression if need be (the evaluation state is kept in the iterator), so
//! a step overruns its budget by at most one round of the interleaved
//! evaluation (a few leaves). Every step but the one that pays for selection
//! makes progress, so budget 1 still terminates.

use crate::Result;
use crate::event::Event;
use crate::index::{Id, Index, LaneState};
use crate::program::Memo;

/// The state of one cooperative search.
#[derive(Debug)]
pub struct SearchIter<'a> {
    index: &'a Index,
    event: &'a Event,
    cands: Vec<u32>,
    hits: Vec<u64>,
    lanes: LaneState,
    done: bool,
    memo: Memo,
    selection: u64,
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
    /// Reductions spent so far (selection included once charged).
    pub fn reductions(&self) -> u64 {
        self.reductions
    }

    /// Number of candidate expressions selected.
    pub fn candidates(&self) -> usize {
        self.cands.len()
    }

    fn finish(&mut self) -> Vec<Id> {
        self.done = true;
        let mut ids = Vec::new();
        self.index.collect(&self.cands, &self.hits, &mut ids);
        ids
    }
}

impl Index {
    /// Selects the candidates of `ev`; evaluate them with
    /// [`Index::search_all`] or step by step with [`Index::search_next`].
    pub fn search_iter<'a>(&'a self, ev: &'a Event) -> Result<SearchIter<'a>> {
        self.validate(ev)?;
        let mut cands = Vec::new();
        let selection = self.select(ev, &mut cands, &mut Vec::new());
        let hits = vec![0; cands.len().div_ceil(64)];
        let mut memo = Memo::default();
        memo.reset(self.atoms.len());
        Ok(SearchIter {
            index: self,
            event: ev,
            cands,
            hits,
            lanes: LaneState::default(),
            done: false,
            memo,
            selection,
            reductions: 0,
        })
    }

    /// Evaluates every remaining candidate; no counting, no budget.
    pub fn search_all(&self, mut it: SearchIter<'_>) -> Vec<Id> {
        assert!(std::ptr::eq(self, it.index), "iterator of another index");
        self.eval_many::<false>(
            &it.cands,
            it.event,
            &mut it.memo,
            &mut it.hits,
            &mut it.lanes,
            u64::MAX,
        );
        it.finish()
    }

    /// Evaluates candidates until `budget` reductions are spent (the
    /// selection's reductions are charged to the first call); an expression
    /// cut by the budget resumes where it stopped on the next call.
    pub fn search_next(&self, it: &mut SearchIter<'_>, budget: u64) -> SearchStep {
        assert!(std::ptr::eq(self, it.index), "iterator of another index");
        if it.done {
            return SearchStep::Done(Vec::new());
        }
        let mut spent = 0u64;
        if it.selection > 0 {
            spent = std::mem::take(&mut it.selection);
            it.reductions += spent;
            if spent >= budget && !it.cands.is_empty() {
                return SearchStep::Continue;
            }
        }
        let (done, red) = self.eval_many::<true>(
            &it.cands,
            it.event,
            &mut it.memo,
            &mut it.hits,
            &mut it.lanes,
            budget.saturating_sub(spent).max(1),
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
    /// costs about `budget` reductions.
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
