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
//! A step never stops inside an expression: it evaluates whole candidates
//! until the budget is spent, so one step may overrun its budget by at most
//! one expression's reductions, and every step that is not the selection
//! step makes progress (budget 1 still terminates).

use crate::Result;
use crate::event::Event;
use crate::index::{Id, Index};
use crate::program::Memo;

/// The state of one cooperative search.
#[derive(Debug)]
pub struct SearchIter<'a> {
    index: &'a Index,
    event: &'a Event,
    cands: Vec<u32>,
    pos: usize,
    matched: Vec<Id>,
    hits: Vec<u64>,
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
        std::mem::take(&mut self.matched)
    }
}

impl Index {
    /// Selects the candidates of `ev`; evaluate them with
    /// [`Index::search_all`] or step by step with [`Index::search_next`].
    pub fn search_iter<'a>(&'a self, ev: &'a Event) -> Result<SearchIter<'a>> {
        self.validate(ev)?;
        let mut cands = Vec::new();
        let selection = self.select(ev, &mut cands, &mut Vec::new());
        let mut memo = Memo::default();
        memo.reset(self.atoms.len());
        Ok(SearchIter {
            index: self,
            event: ev,
            cands,
            pos: 0,
            matched: Vec::new(),
            hits: Vec::new(),
            memo,
            selection,
            reductions: 0,
        })
    }

    /// Evaluates every remaining candidate; no counting, no budget.
    pub fn search_all(&self, mut it: SearchIter<'_>) -> Vec<Id> {
        assert!(std::ptr::eq(self, it.index), "iterator of another index");
        self.eval_many::<false>(
            &it.cands[it.pos..],
            it.event,
            &mut it.memo,
            &mut it.hits,
            &mut it.matched,
            u64::MAX,
        );
        it.pos = it.cands.len();
        it.finish()
    }

    /// Evaluates candidates until `budget` reductions are spent.
    pub fn search_next(&self, it: &mut SearchIter<'_>, budget: u64) -> SearchStep {
        assert!(std::ptr::eq(self, it.index), "iterator of another index");
        let mut spent = 0u64;
        if it.selection > 0 {
            spent = std::mem::take(&mut it.selection);
            it.reductions += spent;
            if spent >= budget && it.pos < it.cands.len() {
                return SearchStep::Continue;
            }
        }
        if it.pos < it.cands.len() {
            let (n, red) = self.eval_many::<true>(
                &it.cands[it.pos..],
                it.event,
                &mut it.memo,
                &mut it.hits,
                &mut it.matched,
                budget - spent.min(budget),
            );
            it.pos += n;
            it.reductions += red;
        }
        if it.pos < it.cands.len() {
            SearchStep::Continue
        } else {
            SearchStep::Done(it.finish())
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
