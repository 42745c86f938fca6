//! Which conjuncts of an expression are posted (its terms), and which of
//! them being a candidate proves true. Read off the expression tree
//! before anything is posted, so posting and unposting work on the same
//! term list.

use super::keys::{keys_of, range_of};
use super::{
    BOOL_TERM, CHECK_RATIO, Checks, Counting, DEFINED_TERM, Decided, KEY_TERM, LIST_TERM, MAX_NEED,
    MAX_POSTED_SLOT, NO_CHECKS, NOT_TERM, OR_BRANCHES, OR_MORE, OR_TERM, RANGE_TERM, TERM_FLAGS,
    or_term,
};
use crate::domain::AttrId;
use crate::expr::{Expr, Pred};
use crate::parse::Node;

impl Counting {
    /// The indexed conjuncts of `e`, whose predicate leaves are atoms of
    /// `preds` (the atom table): distinct terms, at most [`MAX_NEED`].
    pub(crate) fn conjunct_terms(&self, e: &Expr, preds: &[Option<Pred>]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut list_attrs = Vec::new();
        // `or`s with a branch other than an equality or `in` on a scalar:
        // posted only if nothing else is counted (see the end).
        let mut late_ors: Vec<(Vec<u32>, Vec<AttrId>)> = Vec::new();
        let mut stack = vec![e.root];
        while let Some(r) = stack.pop() {
            let t = match e.node(r) {
                Node::And(a, b) => {
                    stack.push(b);
                    stack.push(a);
                    continue;
                }
                // A slot this high would read as an `or` branch.
                Node::Bool(slot) if slot < OR_MORE => Some(BOOL_TERM | slot),
                Node::Or(..) => {
                    if let Some((branches, attrs, plain)) = self.or_branches(e, r, preds) {
                        if plain {
                            push_or(&mut out, &branches);
                        } else if branches.iter().any(|&t| t & BOOL_TERM == 0) {
                            late_ors.push((branches, attrs));
                        }
                    }
                    continue;
                }
                Node::Not(x) => match x.leaf() {
                    Some(Node::Bool(slot)) => Some(NOT_TERM | BOOL_TERM | slot),
                    Some(Node::Pred(a)) if a < NOT_TERM && self.decided(a) == Decided::Hit => {
                        Some(NOT_TERM | a)
                    }
                    Some(Node::Pred(a))
                        if a < NOT_TERM
                            && matches!(preds[a as usize], Some(ref p @ Pred::IntCmp { .. })
                                if range_of(p).is_some()) =>
                    {
                        Some(NOT_TERM | RANGE_TERM | a)
                    }
                    _ => None,
                },
                Node::Pred(a) => {
                    let p = preds[a as usize].as_ref().expect("live atom");
                    if range_of(p).is_some() {
                        Some(RANGE_TERM | a)
                    } else {
                        match self.decided(a) {
                            Decided::Miss(attr) => {
                                // False when undefined, and when hit.
                                if a < NOT_TERM
                                    && !out.contains(&(NOT_TERM | a))
                                    && out.len() + 1 < MAX_NEED
                                {
                                    out.push(NOT_TERM | a);
                                }
                                Some(DEFINED_TERM | attr)
                            }
                            Decided::Hit => Some(match p {
                                Pred::IntCmp { .. }
                                | Pred::StrCmp { .. }
                                | Pred::IntIn { .. }
                                | Pred::StrIn { .. } => KEY_TERM | a,
                                _ => {
                                    // One list conjunct per attribute: its hits
                                    // are deduplicated per attribute.
                                    let attr = keys_of(p).expect("a registered predicate").0;
                                    if list_attrs.contains(&attr) {
                                        continue;
                                    }
                                    list_attrs.push(attr);
                                    LIST_TERM | a
                                }
                            }),
                            Decided::No => None,
                        }
                    }
                }
                _ => None,
            };
            if let Some(t) = t
                && !out.contains(&t)
                && out.len() < MAX_NEED
            {
                out.push(t);
            }
        }
        // A boolean is true for about half of all events, a list often
        // holds one of several elements: such an `or` is true for most,
        // and its posting entries are walked for each. It pays only for an
        // expression that no other hit counts (else gated or scanned, a
        // candidate of most events). An `or` of booleans alone is not
        // posted at all: posting those cost the dense reference profile
        // (booleans only) 8-10 % of its batch speed for 1-2 % fewer
        // candidates, where the batch path evaluates a scanned expression
        // for 64 events a word.
        if counted(&out) == 0 {
            // Nothing counted, so no list conjunct holds an attribute yet:
            // only an earlier `or` posted here can.
            for (branches, attrs) in &late_ors {
                if attrs.iter().all(|a| !list_attrs.contains(a)) && push_or(&mut out, branches) {
                    list_attrs.extend(attrs);
                }
            }
        }
        out
    }

    /// Splits the conjunct terms of an expression to be posted in slot `s`
    /// into the terms to post and the conjuncts to check ([`Checks`]): up
    /// to two counted conjuncts (booleans, equalities and `in` sets on
    /// scalars, list conjuncts; not `or` branches), the ones whose
    /// postings hold the most entries, if more than [`CHECK_RATIO`] times
    /// the entries of the shortest counted one's. A checked conjunct is
    /// not posted: an expression whose count completes on the others is
    /// a candidate once the selection, after its counting, finds every
    /// checked one true (a stamp or a boolean bit). So the selection
    /// proves it as before and picks the same candidates, and the events
    /// that hit a common value (a boolean, a popular string) no longer
    /// walk an entry for each expression that a rarer value it also
    /// needs rules out. On the adtech profile at 100k expressions (200
    /// events) the counting walked 55,000 entries an event, 27,000 with
    /// such conjuncts taken out; on grid point 13, 47,000 against 10,600.
    pub(crate) fn split_checks(
        &self,
        s: u32,
        terms: Vec<u32>,
        preds: &[Option<Pred>],
    ) -> (Vec<u32>, Checks) {
        let checkable =
            |t: u32| t & (RANGE_TERM | DEFINED_TERM | NOT_TERM) == 0 && or_term(t).is_none();
        // With one such conjunct there is nothing to choose: its postings
        // are not looked up (most of the deep-negation profile's
        // expressions).
        if !Counting::posts(s, &terms) || terms.iter().filter(|&&t| checkable(t)).count() < 2 {
            return (terms, NO_CHECKS);
        }
        let cost = |t: u32| -> Option<usize> {
            if !checkable(t) {
                None
            } else if t & (KEY_TERM | LIST_TERM) != 0 {
                Some(
                    self.key_lists(t & !TERM_FLAGS, preds)
                        .map(|l| self.key_posted.get(l as usize).map_or(0, |&n| n as usize))
                        .sum(),
                )
            } else {
                Some(self.bool_post[(t & !BOOL_TERM) as usize].len())
            }
        };
        let costs: Vec<Option<usize>> = terms.iter().map(|&t| cost(t)).collect();
        let Some(&min) = costs.iter().flatten().min() else {
            return (terms, NO_CHECKS);
        };
        let limit = CHECK_RATIO.saturating_mul(min.max(1));
        // The costliest first, at most two of them.
        let mut over: Vec<usize> = (0..terms.len())
            .filter(|&i| costs[i].is_some_and(|c| c > limit))
            .collect();
        over.sort_by_key(|&i| std::cmp::Reverse(costs[i]));
        over.truncate(NO_CHECKS.len());
        let mut checks = NO_CHECKS;
        for (k, &i) in over.iter().enumerate() {
            let t = terms[i];
            checks[k] = if t & BOOL_TERM != 0 {
                t
            } else {
                t & !TERM_FLAGS
            };
        }
        let kept = (0..terms.len())
            .filter(|i| !over.contains(i))
            .map(|i| terms[i])
            .collect();
        (kept, checks)
    }

    /// The branch terms of the `or` tree at `r` (see [`OR_TERM`]), distinct
    /// and at most [`OR_BRANCHES`], the list attributes they count on, and
    /// whether every branch is an equality or `in` on a scalar, if an event
    /// can hit every branch. The caller keeps list attributes to one
    /// counted conjunct each (hits on a list attribute count once per
    /// expression).
    fn or_branches(
        &self,
        e: &Expr,
        r: crate::parse::Ref,
        preds: &[Option<Pred>],
    ) -> Option<(Vec<u32>, Vec<AttrId>, bool)> {
        let mut out = Vec::new();
        let mut attrs = Vec::new();
        let mut plain = true;
        let mut stack = vec![r];
        while let Some(r) = stack.pop() {
            let branch = match e.node(r) {
                Node::Or(a, b) => {
                    stack.extend([b, a]);
                    continue;
                }
                // The branch is true only where each of its conjuncts is:
                // the first one an event can hit stands for it.
                Node::And(..) => {
                    let mut conj = vec![r];
                    let mut found = None;
                    while let Some(c) = conj.pop() {
                        match e.node(c) {
                            Node::And(a, b) => conj.extend([b, a]),
                            n => {
                                if let Some(t) = self.branch_term(n, preds) {
                                    found = Some(t);
                                    break;
                                }
                            }
                        }
                    }
                    plain = false;
                    found?
                }
                n => self.branch_term(n, preds)?,
            };
            plain &= branch.0 & BOOL_TERM == 0 && branch.1.is_none();
            let (t, attr) = branch;
            if !out.contains(&t) {
                if out.len() == OR_BRANCHES {
                    return None;
                }
                out.push(t);
                attrs.extend(attr);
            }
        }
        Some((out, attrs, plain))
    }

    /// The [`OR_TERM`] branch an event hits exactly when leaf `n` is true,
    /// and the list attribute it counts on, if any.
    fn branch_term(&self, n: Node, preds: &[Option<Pred>]) -> Option<(u32, Option<AttrId>)> {
        match n {
            Node::Bool(slot) if slot < OR_MORE => Some((BOOL_TERM | slot, None)),
            Node::Pred(a) if a < OR_MORE && self.decided(a) == Decided::Hit => {
                let p = preds[a as usize].as_ref().expect("live atom");
                match p {
                    Pred::IntCmp { .. }
                    | Pred::StrCmp { .. }
                    | Pred::IntIn { .. }
                    | Pred::StrIn { .. } => Some((a, None)),
                    _ => Some((a, Some(keys_of(p).expect("a registered predicate").0))),
                }
            }
            _ => None,
        }
    }

    /// Whether top-level conjunct `a` of a posted expression with `terms`
    /// is a negated form (decided by a miss) whose attribute is defined on
    /// every event that makes the expression a candidate (its
    /// [`DEFINED_TERM`] was posted: an undefined attribute kills it).
    pub(crate) fn defined_proven(&self, a: u32, terms: &[u32]) -> bool {
        matches!(self.decided(a), Decided::Miss(attr) if terms.contains(&(DEFINED_TERM | attr)))
    }

    /// Whether slot `s`, with conjunct terms `terms`, is posted (counted or
    /// gated) rather than on the scan list.
    pub(crate) fn posts(s: u32, terms: &[u32]) -> bool {
        !terms.is_empty() && s < MAX_POSTED_SLOT
    }

    /// Whether top-level conjunct `n` of a posted expression with
    /// `terms` is true on every event that makes the expression a
    /// candidate, so that evaluation need not test it again: a boolean, an
    /// equality or `in` on a scalar, or the list conjunct of its attribute
    /// (each counted, and a hit is exactly the predicate being true), or an
    /// integer range (not killed means true), the negation of an atom
    /// decided by a hit (not killed: not hit), or a negated form decided by
    /// a miss whose attribute is defined and whose hit kills (true exactly
    /// then). Float ranges are tested again: a NaN value satisfies no
    /// threshold yet kills none of the upper side.
    ///
    /// An expression with an [`OR_TERM`] can reach its count with a
    /// counted conjunct missed (an `or` hit twice), so none of its counted
    /// conjuncts is proven; its kills and ranges still are.
    pub(crate) fn proven(&self, n: Node, terms: &[u32], preds: &[Option<Pred>]) -> bool {
        let counted_proven = !terms.iter().any(|&t| or_term(t).is_some());
        match n {
            Node::Bool(slot) => counted_proven && terms.contains(&(BOOL_TERM | slot)),
            // Not killed: the boolean is not true, the atom not hit. The
            // kill term of an atom decided by a miss means the opposite
            // (the negated form is true), so only a hit atom's counts here.
            Node::Not(x) => match x.leaf() {
                Some(Node::Bool(slot)) => terms.contains(&(NOT_TERM | BOOL_TERM | slot)),
                Some(Node::Pred(a)) => {
                    a < NOT_TERM
                        && ((self.decided(a) == Decided::Hit && terms.contains(&(NOT_TERM | a)))
                            || terms.contains(&(NOT_TERM | RANGE_TERM | a)))
                }
                _ => false,
            },
            Node::Pred(a) => {
                (counted_proven
                    && (terms.contains(&(KEY_TERM | a)) || terms.contains(&(LIST_TERM | a))))
                    || (terms.contains(&(RANGE_TERM | a))
                        && matches!(preds[a as usize], Some(Pred::IntCmp { .. })))
                    || (a < NOT_TERM
                        && terms.contains(&(NOT_TERM | a))
                        && self.defined_proven(a, terms))
            }
            _ => false,
        }
    }
}

/// Appends the terms of an `or` conjunct with `branches` (see
/// [`OR_TERM`]) to `out` if they fit and none of them is there already;
/// whether it did.
fn push_or(out: &mut Vec<u32>, branches: &[u32]) -> bool {
    let fits = out.len() + branches.len() <= MAX_NEED
        && !branches.iter().any(|&a| out.contains(&(OR_TERM | a)));
    if fits {
        out.push(OR_TERM | branches[0]);
        out.extend(branches[1..].iter().map(|&a| OR_TERM | OR_MORE | a));
    }
    fits
}

/// How many of `terms` are counted by hits (ranges, definedness and kills
/// are not: they are found false instead).
pub(super) fn counted(terms: &[u32]) -> u32 {
    terms
        .iter()
        .filter(|&&t| {
            t & (RANGE_TERM | DEFINED_TERM | NOT_TERM) == 0
                && !matches!(or_term(t), Some((_, true)))
        })
        .count() as u32
}
