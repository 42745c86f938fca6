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
//! * a *batch program* (see [`bop`]) for many events at once: every value
//!   is a `u64` word holding one bit per event (lane).
//!
//! Both are written straight into the index's arenas from the checked
//! expression's flat shape ([`Expr`]), with no scratch per node: the
//! evaluation order is settled by reordering the shape's operands.

use crate::event::{Event, Value};
use crate::expr::{Expr, Pred};
use crate::parse::{CmpOp, MAX_DEPTH, Node, Ref};

/// Tag of a [`Step::test`] that names an atom (a memoized predicate) rather
/// than a boolean bit slot.
pub(crate) const ATOM: u32 = 1 << 31;
/// Flag of a step's atom test (beside [`ATOM`]): the atom is an integer
/// comparison with a constant, tested in place from the operand step that
/// follows it ([`Step::int_operand`]), not through the atom table and the
/// memo (see [`inline_int_tests`]). Atom ids stay below it (they stay below
/// [`BATCH_ATOM`]).
pub(crate) const INT_ATOM: u32 = 1 << 27;
/// Flag of an [`INT_ATOM`] step whose comparison is folded into the step
/// itself, with no operand step after it (see [`Step::short_int`]). The
/// atom ids of the other `INT_ATOM` steps stay below it (below
/// [`BATCH_ATOM`], the same bit).
pub(crate) const SHORT_INT: u32 = 1 << 26;
/// A folded comparison's attribute sits in the low bits of its step's
/// test, below this: attributes from it on use an operand step.
const SHORT_ATTRS: u32 = 1 << 15;
/// Where a folded comparison's operator starts in its step's test (3 bits).
const SHORT_OP_SHIFT: u32 = 15;
/// Where a folded comparison step's weight starts in its test (8 bits, up
/// to [`SHORT_INT`]; every weight fits, see [`MAX_STEP_WEIGHT`]).
const SHORT_WEIGHT_SHIFT: u32 = 18;
/// Jump target: the expression matches.
pub(crate) const ACCEPT: u32 = u32::MAX;
/// Jump target: the expression does not match.
pub(crate) const REJECT: u32 = u32::MAX - 1;

/// One leaf of a jump program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Step {
    /// Boolean bit slot, or `ATOM | atom id` (with [`INT_ATOM`], followed
    /// by the comparison's operand step, see [`inline_int_tests`]), or
    /// a folded comparison (`ATOM | INT_ATOM | SHORT_INT`, see
    /// [`Step::short_int`]).
    pub test: u32,
    /// Next step when the test holds (or `ACCEPT`/`REJECT`).
    pub on_true: u32,
    /// Next step when it does not.
    pub on_false: u32,
    /// Reductions executing this step stands for (see [`weight`]). Kept in
    /// the step rather than a parallel array: the budgeted search reads it
    /// on every leaf, and a second memory stream cost it ~10%. A folded
    /// comparison keeps its constant here and its weight in `test`: read
    /// it through [`Step::cost`].
    pub weight: u32,
}

/// The operator of an integer comparison as a step holds it.
fn op_code(op: CmpOp) -> u32 {
    match op {
        CmpOp::Lt => 0,
        CmpOp::Le => 1,
        CmpOp::Gt => 2,
        CmpOp::Ge => 3,
        CmpOp::Eq => 4,
        CmpOp::Ne => 5,
    }
}

/// Whether `x op v` holds, `op` as [`op_code`] gives it.
#[inline(always)]
fn compare(x: i64, op: u32, v: i64) -> bool {
    match op {
        0 => x < v,
        1 => x <= v,
        2 => x > v,
        3 => x >= v,
        4 => x == v,
        _ => x != v,
    }
}

impl Step {
    /// The step of an [`INT_ATOM`] test of `attr op v` folded into one
    /// step, if it fits: an attribute below [`SHORT_ATTRS`] and a constant
    /// of 32 bits, kept in the `weight` field (the weight moves to
    /// `test`). An operand step is 16 more bytes a comparison, and
    /// evaluation waits on memory for programs larger than the caches:
    /// comparisons are a third of the steps of the deep-negation
    /// workload's programs.
    fn short_int(attr: u32, op: CmpOp, v: i64, weight: u32) -> Option<Step> {
        let v = i32::try_from(v).ok()?;
        (attr < SHORT_ATTRS && weight < SHORT_INT >> SHORT_WEIGHT_SHIFT).then_some(Step {
            test: ATOM
                | INT_ATOM
                | SHORT_INT
                | (weight << SHORT_WEIGHT_SHIFT)
                | (op_code(op) << SHORT_OP_SHIFT)
                | attr,
            on_true: 0,
            on_false: 0,
            weight: v as u32,
        })
    }

    /// Whether this is a folded comparison (see [`Step::short_int`]).
    #[inline(always)]
    fn is_short_int(&self) -> bool {
        const FLAGS: u32 = ATOM | INT_ATOM | SHORT_INT;
        self.test & FLAGS == FLAGS
    }

    /// Reductions executing this step stands for (see [`weight`]).
    #[inline(always)]
    pub(crate) fn cost(&self) -> u32 {
        if self.is_short_int() {
            (self.test & (SHORT_INT - 1)) >> SHORT_WEIGHT_SHIFT
        } else {
            self.weight
        }
    }

    /// Whether `ev` satisfies this step's folded comparison (see
    /// [`Step::short_int`]), as [`Step::int_holds`] decides one.
    #[inline]
    pub(crate) fn short_int_holds(&self, ev: &Event) -> bool {
        let Some(Value::Int(x)) = ev.get(self.test & (SHORT_ATTRS - 1)) else {
            return false;
        };
        let op = (self.test >> SHORT_OP_SHIFT) & 7;
        compare(*x, op, i64::from(self.weight as i32))
    }

    /// The operand step of an [`INT_ATOM`] test of `attr op v`: it follows
    /// the test and is never jumped to, so its fields hold the comparison
    /// (`test` the attribute, `on_true` the operator, `on_false` and
    /// `weight` the constant's low and high halves).
    fn int_operand(attr: u32, op: CmpOp, v: i64) -> Step {
        Step {
            test: attr,
            on_true: op_code(op),
            on_false: v as u32,
            weight: (v >> 32) as u32,
        }
    }

    /// Whether `ev` satisfies the comparison of this operand step (see
    /// [`Step::int_operand`]): as [`Pred::eval`] decides an integer
    /// comparison, false when the attribute is undefined.
    #[inline]
    pub(crate) fn int_holds(&self, ev: &Event) -> bool {
        let Some(Value::Int(x)) = ev.get(self.test) else {
            return false;
        };
        let v = ((u64::from(self.weight) << 32) | u64::from(self.on_false)) as i64;
        compare(*x, self.on_true, v)
    }
}

/// Rewrites the jump program `code[start..]` (entry `entry`, relative to
/// `start`) so that each step testing an atom flagged `eval` (the index's
/// flag of an atom evaluated by value, not decided by the selection)
/// whose predicate in `preds` is an
/// integer comparison tests it in place: folded into the step when it
/// fits ([`Step::short_int`]), else flagged [`INT_ATOM`] and followed by
/// its operand step, the jumps moved to match. Returns the new entry.
///
/// An atom evaluated through the table reads the memo and the predicate,
/// two arrays indexed by atom id; where the comparisons are mostly
/// distinct (ranges with bounds drawn from a wide domain: 800,000 atoms
/// for 100,000 expressions of the deep-negation workload) each is a cache
/// miss, and the memo saves nothing. In place, a program's comparisons
/// sit beside its steps, on the cache lines evaluation reads anyway.
pub(crate) fn inline_int_tests(
    code: &mut Vec<Step>,
    start: usize,
    entry: u32,
    eval: u32,
    preds: &[Option<Pred>],
) -> u32 {
    // How a step's comparison is tested in place: the step that replaces
    // it, and the operand step that follows, if any.
    let in_place = |st: &Step| -> Option<(Step, Option<Step>)> {
        if st.test & ATOM == 0 || st.test & eval == 0 {
            return None;
        }
        let Some(Some(Pred::IntCmp { attr, op, v })) =
            preds.get((st.test & !(ATOM | eval)) as usize)
        else {
            return None;
        };
        Some(match Step::short_int(*attr, *op, *v, st.weight) {
            Some(short) => (short, None),
            None => (
                Step {
                    test: (st.test & !eval) | INT_ATOM,
                    ..*st
                },
                Some(Step::int_operand(*attr, *op, *v)),
            ),
        })
    };
    if !code[start..].iter().any(|st| in_place(st).is_some()) {
        return entry;
    }
    // Where each step lands: after the operand steps inserted before it.
    let mut moved = Vec::with_capacity(code.len() - start);
    let mut extra = 0u32;
    for (i, st) in code[start..].iter().enumerate() {
        moved.push(i as u32 + extra);
        extra += u32::from(in_place(st).is_some_and(|(_, operand)| operand.is_some()));
    }
    let to = |t: u32| if t >= REJECT { t } else { moved[t as usize] };
    if extra == 0 {
        // Every comparison folds: the steps stay where they are.
        for st in &mut code[start..] {
            if let Some((short, None)) = in_place(st) {
                *st = Step {
                    on_true: st.on_true,
                    on_false: st.on_false,
                    ..short
                };
            }
        }
        return entry;
    }
    let old: Vec<Step> = code.drain(start..).collect();
    code.reserve(old.len() + extra as usize);
    for st in &old {
        let (step, operand) = in_place(st).unwrap_or((*st, None));
        code.push(Step {
            on_true: to(st.on_true),
            on_false: to(st.on_false),
            ..step
        });
        code.extend(operand);
    }
    to(entry)
}

/// Compiles `e` (its predicate leaves hold atom ids), appending its jump
/// program to `code` and its batch program to `batch`; returns the
/// program's entry, relative to its first step. The operands of `e`'s
/// `and`/`or` nodes are left in evaluation order (the one to test first on
/// the left).
///
/// The jump program evaluates only the candidates of a search, so
/// `proven` may replace the top-level conjuncts (a conjunct that is the
/// whole expression included) with what being a candidate leaves of them:
/// constant `true` for one it proves, a cheaper leaf for one it half
/// proves. The batch program, which runs on events for which the
/// expression need not be a candidate, keeps them.
pub(crate) fn compile(
    e: &mut Expr,
    code: &mut Vec<Step>,
    batch: &mut Vec<u32>,
    proven: &dyn Fn(Node) -> Option<Ref>,
    chance: &dyn Fn(u32) -> f64,
) -> u32 {
    // The batch program is written in the text's operand order, before
    // the jump program's order is settled. Each leaf takes at most one
    // instruction and one step: reserving for them up front (amortized, so
    // many small expressions do not copy the arenas each time) writes a
    // large expression's programs without doubling the arenas step by step.
    batch.reserve(e.nodes.len() + 1);
    Compiler { e }.postfix(e.root, batch);
    drop_proven(e, proven);
    let mut leaves = 0;
    order(e, e.root, &mut leaves, chance);
    code.reserve(leaves);
    let c = Compiler { e };
    let base = code.len();
    let entry = c.jumps(e.root, ACCEPT, REJECT, code, base);
    // `jumps` emits the right operand before the left one, so the entry comes
    // last; reversing puts execution in ascending memory order. While
    // emitting, a step's weight field counts the nodes entered there.
    let steps = &mut code[base..];
    let n = steps.len() as u32;
    let fix = |t: u32| if t >= REJECT { t } else { n - 1 - t };
    steps.reverse();
    for s in steps.iter_mut() {
        s.on_true = fix(s.on_true);
        s.on_false = fix(s.on_false);
        s.weight = weight(s.weight);
    }
    fix(entry)
}

/// Replaces the top-level conjuncts of `e` for which `proven` gives a
/// replacement.
fn drop_proven(e: &mut Expr, proven: &dyn Fn(Node) -> Option<Ref>) {
    if let Some(r) = proven(e.node(e.root)) {
        e.root = r;
        return;
    }
    let mut stack = vec![e.root];
    while let Some(r) = stack.pop() {
        if let Node::And(..) = e.node(r) {
            for side in 0..2 {
                let x = e.nodes[r.index()][side];
                match e.node(x) {
                    Node::And(..) => stack.push(x),
                    n => {
                        if let Some(y) = proven(n) {
                            e.nodes[r.index()][side] = y;
                        }
                    }
                }
            }
        }
    }
}

/// The estimate of a leaf: the probability that it is true and the
/// expected number of leaves a short-circuit evaluation visits; `None` for
/// a node. A boolean is taken as a fair coin, a predicate as `chance` of
/// its atom says (see [`crate::expr::Pred::chance`]).
fn leaf_estimate(n: Node, chance: &dyn Fn(u32) -> f64) -> Option<(f64, f64)> {
    match n {
        Node::Const(true) => Some((1.0, 0.0)),
        Node::Const(false) => Some((0.0, 0.0)),
        Node::Bool(_) => Some((0.5, 1.0)),
        Node::Pred(a) => Some((chance(a), 2.0)),
        _ => None,
    }
}

/// Estimates subtree `r` (see [`leaf_estimate`]) and puts the operands of
/// each `and`/`or` in it in evaluation order: the one expected to decide
/// sooner first, taking the leaves as independent. Only the evaluation
/// order depends on these guesses, never the result. Deciding in place,
/// bottom-up, keeps no estimate per node (a pair of `f64` per node was
/// the largest buffer of compiling one large expression).
/// `leaves` counts the boolean and predicate leaves (one step each).
fn order(e: &mut Expr, r: Ref, leaves: &mut usize, chance: &dyn Fn(u32) -> f64) -> (f64, f64) {
    let n = e.node(r);
    if let Some(v) = leaf_estimate(n, chance) {
        if matches!(n, Node::Bool(_) | Node::Pred(_)) {
            *leaves += 1;
        }
        return v;
    }
    match n {
        Node::Not(x) => {
            let (p, c) = order(e, x, leaves, chance);
            (1.0 - p, c)
        }
        Node::And(l, rr) | Node::Or(l, rr) => {
            let and = matches!(n, Node::And(..));
            let (pl, cl) = order(e, l, leaves, chance);
            let (pr, cr) = order(e, rr, leaves, chance);
            // Swapped only when the right operand is strictly better, so
            // that ties keep the text's order.
            let (left_first, v) = if and {
                let (a, b) = (cl + pl * cr, cr + pr * cl);
                (a <= b, (pl * pr, a.min(b)))
            } else {
                let (a, b) = (cl + (1.0 - pl) * cr, cr + (1.0 - pr) * cl);
                (a <= b, (1.0 - (1.0 - pl) * (1.0 - pr), a.min(b)))
            };
            if !left_first {
                e.nodes[r.index()] = [rr, l];
            }
            v
        }
        _ => unreachable!("leaves are estimated above"),
    }
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

/// An expression being compiled.
struct Compiler<'a> {
    e: &'a Expr,
}

impl Compiler<'_> {
    /// A leaf operand (possibly negated) at `r`, if it is one.
    fn leaf(&self, r: Ref) -> Option<(u32, bool)> {
        let operand = |r: Ref| match self.e.node(r) {
            Node::Bool(slot) => Some(slot),
            Node::Pred(a) => Some(BATCH_ATOM | a),
            _ => None,
        };
        match self.e.node(r) {
            Node::Not(x) => operand(x).map(|o| (o, true)),
            _ => operand(r).map(|o| (o, false)),
        }
    }

    fn postfix(&self, r: Ref, out: &mut Vec<u32>) {
        let ins = |op: u32, operand: u32| (op << OP_SHIFT) | operand;
        if let Some((o, neg)) = self.leaf(r) {
            out.push(ins(if neg { bop::PUSH_NOT } else { bop::PUSH }, o));
            return;
        }
        let (l, r, and) = match self.e.node(r) {
            Node::Const(true) => return out.push(ins(bop::PUSH_TRUE, 0)),
            Node::Const(false) => return out.push(ins(bop::PUSH_FALSE, 0)),
            Node::Not(x) => {
                self.postfix(x, out);
                return out.push(ins(bop::NOT, 0));
            }
            Node::And(l, r) => (l, r, true),
            Node::Or(l, r) => (l, r, false),
            Node::Bool(_) | Node::Pred(_) => unreachable!("leaves are handled above"),
        };
        // `and`/`or` commute, so a leaf on either side can be folded.
        let (first, folded) = match (self.leaf(l), self.leaf(r)) {
            (_, Some(f)) => (l, Some(f)),
            (Some(f), None) => (r, Some(f)),
            (None, None) => (l, None),
        };
        self.postfix(first, out);
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
                self.postfix(r, out);
                out.push(ins(if and { bop::POP_AND } else { bop::POP_OR }, 0));
            }
        }
    }

    /// Emits the steps of subtree `r` after `out[..base]` (targets
    /// relative to `base`), returning its entry, and counts in each step's
    /// weight field the `and`/`or`/`not` nodes it is the entry of. Of
    /// `and`/`or` operands the left one is tested first ([`order`] put
    /// them so).
    fn jumps(&self, r: Ref, on_true: u32, on_false: u32, out: &mut Vec<Step>, base: usize) -> u32 {
        let first_step = (out.len() - base) as u32;
        let entry = match self.e.node(r) {
            Node::Const(true) => return on_true,
            Node::Const(false) => return on_false,
            Node::Bool(slot) => return self.step(slot, on_true, on_false, out, base),
            Node::Pred(a) => return self.step(ATOM | a, on_true, on_false, out, base),
            Node::Not(x) => self.jumps(x, on_false, on_true, out, base),
            Node::And(first, second) => {
                let then = self.jumps(second, on_true, on_false, out, base);
                self.jumps(first, then, on_false, out, base)
            }
            Node::Or(first, second) => {
                let then = self.jumps(second, on_true, on_false, out, base);
                self.jumps(first, on_true, then, out, base)
            }
        };
        // An `and`/`or`/`not` node: charged to its entry step if that step is
        // its own (a constant subtree jumps straight to a target outside it).
        if (first_step..(out.len() - base) as u32).contains(&entry) {
            out[base + entry as usize].weight += 1;
        }
        entry
    }

    /// Emits one leaf step (no node entered yet); returns its position.
    fn step(
        &self,
        test: u32,
        on_true: u32,
        on_false: u32,
        out: &mut Vec<Step>,
        base: usize,
    ) -> u32 {
        out.push(Step {
            test,
            on_true,
            on_false,
            weight: 0,
        });
        (out.len() - base - 1) as u32
    }
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

/// Per-event memo of atom results, reset in O(1) by bumping a generation.
/// One byte an atom (a 7-bit generation and the result), cleared once
/// every 127 events, for the reason [`crate::selection::Seen`] gives.
#[derive(Debug, Clone, Default)]
pub(crate) struct Memo {
    generation: u8,
    stamps: Vec<u8>,
}

impl Memo {
    /// Forgets every result; sizes the memo for `atoms` atoms.
    pub(crate) fn reset(&mut self, atoms: usize) {
        if self.stamps.len() < atoms {
            self.stamps.resize(atoms, 0);
        }
        self.generation += 1;
        if self.generation >= 1 << 7 {
            self.stamps.fill(0);
            self.generation = 1;
        }
    }

    /// A remembered result.
    #[inline]
    pub(crate) fn get(&self, atom: u32) -> Option<bool> {
        let s = self.stamps[atom as usize];
        (s >> 1 == self.generation).then_some(s & 1 == 1)
    }

    /// Hints the cache at `atom`'s result.
    #[inline]
    pub(crate) fn prefetch(&self, atom: u32) {
        crate::prefetch::prefetch_at(&self.stamps, atom as usize);
    }

    /// Remembers a result.
    #[inline]
    pub(crate) fn set(&mut self, atom: u32, v: bool) {
        self.stamps[atom as usize] = (self.generation << 1) | v as u8;
    }
}
