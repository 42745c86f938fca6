//! Compiled expressions.
//!
//! Each expression is compiled twice, into flat arrays with relative indices
//! (so the index can compact its arenas with a plain copy):
//!
//! * a *jump program* for one event: one [`Step`] per leaf, each naming the
//!   leaf's test and where to go on true and on false. `and`, `or` and `not`
//!   disappear into the jump targets (`not` swaps them), so evaluating with
//!   short-circuit visits only the leaves that decide the result, and a
//!   boolean leaf costs one bit test on the event's bitset;
//! * a *preorder tree* of [`TNode`] for many events at once: every value is
//!   a `u64` word holding one bit per event (lane), and `and`/`or` skip their
//!   right operand for the lanes the left one already decided.

use crate::expr::{Expr, Pred};
use crate::parse::MAX_DEPTH;

/// Tag of a [`Step::test`] that names an atom (a memoized predicate) rather
/// than a boolean bit slot.
pub(crate) const ATOM: u32 = 1 << 31;
/// Jump target: the expression matches.
pub(crate) const ACCEPT: u32 = u32::MAX;
/// Jump target: the expression does not match.
pub(crate) const REJECT: u32 = u32::MAX - 1;

/// One leaf of a jump program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// Boolean bit slot, or `ATOM | atom id`.
    pub test: u32,
    /// Next step when the test holds (or `ACCEPT`/`REJECT`).
    pub on_true: u32,
    /// Next step when it does not.
    pub on_false: u32,
    /// Reductions executing this step stands for (see [`weight`]). Kept in
    /// the step rather than a parallel array: the budgeted search reads it
    /// on every leaf, and a second memory stream cost it ~10%.
    pub weight: u32,
}

/// Node kinds of the preorder tree.
pub(crate) mod kind {
    pub const BOOL: u32 = 0;
    pub const ATOM: u32 = 1;
    pub const NOT: u32 = 2;
    pub const AND: u32 = 3;
    pub const OR: u32 = 4;
    pub const TRUE: u32 = 5;
    pub const FALSE: u32 = 6;
}

/// A preorder tree node: the left (or only) child follows its parent; `arg`
/// is the bit slot, the atom id, or the right child's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TNode {
    pub kind: u32,
    pub arg: u32,
}

/// A compiled expression.
#[derive(Debug, Clone, Default)]
pub(crate) struct Compiled {
    pub steps: Vec<Step>,
    pub entry: u32,
    pub tree: Vec<TNode>,
    pub batch: Vec<u32>,
}

/// Compiles `e`; `atom` interns a predicate and returns its atom id.
pub(crate) fn compile(e: &Expr, atom: &mut dyn FnMut(&Pred) -> u32) -> Compiled {
    let mut c = Compiled::default();
    tree(e, atom, &mut c.tree);
    let mut stats = vec![(0.0, 0.0); c.tree.len()];
    if !c.tree.is_empty() {
        estimate(&c.tree, 0, &mut stats);
    }
    let mut rev = Vec::new();
    let mut entered = Vec::new();
    let entry = jumps(&c.tree, &stats, 0, ACCEPT, REJECT, &mut rev, &mut entered);
    // `jumps` emits the right operand before the left one, so the entry comes
    // last; reversing puts execution in ascending memory order.
    let n = rev.len() as u32;
    let fix = |t: u32| if t >= REJECT { t } else { n - 1 - t };
    c.steps = rev
        .iter()
        .zip(&entered)
        .rev()
        .map(|(s, &e)| Step {
            test: s.test,
            on_true: fix(s.on_true),
            on_false: fix(s.on_false),
            weight: weight(e),
        })
        .collect();
    c.entry = fix(entry);
    postfix(&c.tree, 0, &mut c.batch);
    c
}

/// Batch (lane-parallel) instructions: `op << OP_SHIFT | operand`, where
/// the operand is a boolean slot or `BATCH_ATOM | atom id`. The machine has
/// an accumulator and a stack; leaf operands are folded into the operation
/// that consumes them so most leaves cost one instruction.
pub(crate) mod bop {
    /// Push the accumulator, load the operand.
    pub const PUSH: u32 = 0;
    /// Push the accumulator, load the negated operand.
    pub const PUSH_NOT: u32 = 1;
    /// Accumulator &= operand.
    pub const AND: u32 = 2;
    /// Accumulator &= !operand.
    pub const AND_NOT: u32 = 3;
    /// Accumulator |= operand.
    pub const OR: u32 = 4;
    /// Accumulator |= !operand.
    pub const OR_NOT: u32 = 5;
    /// Accumulator &= pop.
    pub const POP_AND: u32 = 6;
    /// Accumulator |= pop.
    pub const POP_OR: u32 = 7;
    /// Accumulator = !accumulator.
    pub const NOT: u32 = 8;
    /// Push the accumulator, load all ones.
    pub const PUSH_TRUE: u32 = 9;
    /// Push the accumulator, load all zeros.
    pub const PUSH_FALSE: u32 = 10;
}

/// Where the opcode starts in a batch instruction.
pub(crate) const OP_SHIFT: u32 = 27;
/// Operand flag: an atom rather than a boolean slot.
pub(crate) const BATCH_ATOM: u32 = 1 << 26;
/// Mask of the operand index.
pub(crate) const OPERAND: u32 = BATCH_ATOM - 1;

/// A leaf operand (possibly negated) of node `i`, if it is one.
fn leaf(t: &[TNode], i: usize) -> Option<(u32, bool)> {
    let n = t[i];
    let operand = |n: TNode| match n.kind {
        kind::BOOL => Some(n.arg),
        kind::ATOM => Some(BATCH_ATOM | n.arg),
        _ => None,
    };
    match n.kind {
        kind::NOT => operand(t[i + 1]).map(|o| (o, true)),
        _ => operand(n).map(|o| (o, false)),
    }
}

fn postfix(t: &[TNode], i: usize, out: &mut Vec<u32>) {
    let ins = |op: u32, operand: u32| (op << OP_SHIFT) | operand;
    if let Some((o, neg)) = leaf(t, i) {
        out.push(ins(if neg { bop::PUSH_NOT } else { bop::PUSH }, o));
        return;
    }
    let n = t[i];
    match n.kind {
        kind::TRUE => out.push(ins(bop::PUSH_TRUE, 0)),
        kind::FALSE => out.push(ins(bop::PUSH_FALSE, 0)),
        kind::NOT => {
            postfix(t, i + 1, out);
            out.push(ins(bop::NOT, 0));
        }
        k => {
            let (l, r) = (i + 1, n.arg as usize);
            let and = k == kind::AND;
            // `and`/`or` commute, so a leaf on either side can be folded.
            let (first, folded) = match (leaf(t, l), leaf(t, r)) {
                (_, Some(f)) => (l, Some(f)),
                (Some(f), None) => (r, Some(f)),
                (None, None) => (l, None),
            };
            postfix(t, first, out);
            match folded {
                Some((o, neg)) => {
                    let op = match (and, neg) {
                        (true, false) => bop::AND,
                        (true, true) => bop::AND_NOT,
                        (false, false) => bop::OR,
                        (false, true) => bop::OR_NOT,
                    };
                    out.push(ins(op, o));
                }
                None => {
                    postfix(t, r, out);
                    out.push(ins(if and { bop::POP_AND } else { bop::POP_OR }, 0));
                }
            }
        }
    }
}

fn tree(e: &Expr, atom: &mut dyn FnMut(&Pred) -> u32, out: &mut Vec<TNode>) {
    match e {
        Expr::Const(b) => out.push(TNode {
            kind: if *b { kind::TRUE } else { kind::FALSE },
            arg: 0,
        }),
        Expr::Bool(slot) => out.push(TNode {
            kind: kind::BOOL,
            arg: *slot,
        }),
        Expr::Pred(p) => {
            let id = atom(p);
            out.push(TNode {
                kind: kind::ATOM,
                arg: id,
            })
        }
        Expr::Not(x) => {
            out.push(TNode {
                kind: kind::NOT,
                arg: 0,
            });
            tree(x, atom, out);
        }
        Expr::And(a, b) | Expr::Or(a, b) => {
            let at = out.len();
            out.push(TNode {
                kind: if matches!(e, Expr::And(..)) {
                    kind::AND
                } else {
                    kind::OR
                },
                arg: 0,
            });
            tree(a, atom, out);
            out[at].arg = out.len() as u32;
            tree(b, atom, out);
        }
    }
}

/// Estimates, for every subtree, the probability that it is true and the
/// expected number of leaves a short-circuit evaluation visits, taking each
/// leaf as an independent fair coin. Only the evaluation order depends on
/// these guesses, never the result.
fn estimate(t: &[TNode], i: usize, out: &mut [(f64, f64)]) -> (f64, f64) {
    let n = t[i];
    let r = match n.kind {
        kind::TRUE => (1.0, 0.0),
        kind::FALSE => (0.0, 0.0),
        kind::BOOL => (0.5, 1.0),
        kind::ATOM => (0.5, 2.0),
        kind::NOT => {
            let (p, c) = estimate(t, i + 1, out);
            (1.0 - p, c)
        }
        k => {
            let (pl, cl) = estimate(t, i + 1, out);
            let (pr, cr) = estimate(t, n.arg as usize, out);
            if k == kind::AND {
                (pl * pr, (cl + pl * cr).min(cr + pr * cl))
            } else {
                (
                    1.0 - (1.0 - pl) * (1.0 - pr),
                    (cl + (1.0 - pl) * cr).min(cr + (1.0 - pr) * cl),
                )
            }
        }
    };
    out[i] = r;
    r
}

/// The most reductions one leaf step of a compiled expression stands for,
/// loop steps aside: the leaf, its test, and every `and`/`or`/`not` above it
/// (expressions nest at most 128 levels deep).
pub const MAX_STEP_WEIGHT: u64 = 2 + MAX_DEPTH as u64;

/// Reductions of executing a step: one for the leaf node, one for its test
/// (a bit test or an atom), and one per `and`/`or`/`not` node first entered
/// there.
///
/// The jump program has no `and`/`or`/`not` steps, yet a tree walk (the C
/// library's) visits each such node it enters. A node is entered exactly
/// when the first leaf evaluated inside it is, and that leaf (its subtree's
/// entry step) is fixed at compile time, so the node's visit is charged to
/// that step: a search then counts every node a short-circuit tree walk in
/// the same operand order would visit. Constant subtrees are folded away at
/// compile time and cost nothing.
fn weight(entered: u32) -> u32 {
    2 + entered
}

/// Emits the steps of subtree `i`, returning its entry, and counts in
/// `entered` (parallel to `out`) the `and`/`or`/`not` nodes each step is the
/// entry of. Of `and`/`or` operands the one expected to decide sooner is
/// tested first.
fn jumps(
    t: &[TNode],
    st: &[(f64, f64)],
    i: usize,
    on_true: u32,
    on_false: u32,
    out: &mut Vec<Step>,
    entered: &mut Vec<u32>,
) -> u32 {
    let n = t[i];
    let first_step = out.len() as u32;
    let entry = match n.kind {
        kind::TRUE => return on_true,
        kind::FALSE => return on_false,
        kind::BOOL | kind::ATOM => {
            out.push(Step {
                test: if n.kind == kind::ATOM {
                    ATOM | n.arg
                } else {
                    n.arg
                },
                on_true,
                on_false,
                weight: 0,
            });
            entered.push(0);
            return out.len() as u32 - 1;
        }
        kind::NOT => jumps(t, st, i + 1, on_false, on_true, out, entered),
        k => {
            let (l, r) = (i + 1, n.arg as usize);
            let ((pl, cl), (pr, cr)) = (st[l], st[r]);
            let (first, second) = if k == kind::AND {
                if cl + pl * cr <= cr + pr * cl {
                    (l, r)
                } else {
                    (r, l)
                }
            } else if cl + (1.0 - pl) * cr <= cr + (1.0 - pr) * cl {
                (l, r)
            } else {
                (r, l)
            };
            let then = jumps(t, st, second, on_true, on_false, out, entered);
            if k == kind::AND {
                jumps(t, st, first, then, on_false, out, entered)
            } else {
                jumps(t, st, first, on_true, then, out, entered)
            }
        }
    };
    // An `and`/`or`/`not` node: charged to its entry step if that step is
    // its own (a constant subtree jumps straight to a target outside it).
    if (first_step..out.len() as u32).contains(&entry) {
        entered[entry as usize] += 1;
    }
    entry
}

/// Per-event memo of atom results, reset in O(1) by bumping a generation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Memo {
    generation: u32,
    stamps: Vec<u32>,
}

impl Memo {
    /// Forgets every result; sizes the memo for `atoms` atoms.
    pub(crate) fn reset(&mut self, atoms: usize) {
        if self.stamps.len() < atoms {
            self.stamps.resize(atoms, 0);
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation >= (1 << 30) || self.generation == 0 {
            self.stamps.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
    }

    /// A remembered result.
    #[inline]
    pub(crate) fn get(&self, atom: u32) -> Option<bool> {
        let s = self.stamps[atom as usize];
        (s >> 1 == self.generation).then_some(s & 1 == 1)
    }

    /// Remembers a result.
    #[inline]
    pub(crate) fn set(&mut self, atom: u32, v: bool) {
        self.stamps[atom as usize] = (self.generation << 1) | v as u32;
    }
}
