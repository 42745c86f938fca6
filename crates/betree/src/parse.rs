//! The expression parser: tokens to the expression's shape, a flat array
//! of `and`/`or`/`not` nodes whose operands are [`Ref`]s, with each
//! predicate handed to the caller as it is read (the type checker turns it
//! into a leaf at once), so no tree of boxed nodes is ever built.
//!
//! Precedence is `not` > `and` > `or`; `and`/`or` associate to the left.

use std::borrow::Cow;

use crate::lex::{Kw, Lexer, Tok, Token};
use crate::{Error, Result};

/// A literal value as written; a string borrows the expression's text
/// unless it had escapes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit<'a> {
    Int(i64),
    Float(f64),
    Str(Cow<'a, str>),
}

impl Lit<'_> {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Lit::Int(_) => "an integer",
            Lit::Float(_) => "a float",
            Lit::Str(_) => "a string",
        }
    }
}

/// An attribute reference (its name borrowed from the text) and its column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttrRef<'a> {
    pub name: &'a str,
    pub col: usize,
}

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `=`
    Eq,
    /// `<>`
    Ne,
}

impl CmpOp {
    /// The operator with its operands swapped (`1 < x` is `x > 1`).
    fn flipped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            o => o,
        }
    }
}

/// `one of`, `none of`, `all of`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetOp {
    /// At least one of the values is in the list.
    OneOf,
    /// None of the values is in the list.
    NoneOf,
    /// Every value is in the list.
    AllOf,
}

/// A function argument.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Arg<'a> {
    Lit(Lit<'a>, usize),
    Attr(AttrRef<'a>),
}

/// A predicate as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PredAst<'a> {
    Bare(AttrRef<'a>),
    Cmp(AttrRef<'a>, CmpOp, Lit<'a>, usize),
    In {
        attr: AttrRef<'a>,
        negated: bool,
        items: Vec<(Lit<'a>, usize)>,
    },
    ListHas {
        value: Lit<'a>,
        value_col: usize,
        negated: bool,
        attr: AttrRef<'a>,
    },
    Set {
        attr: AttrRef<'a>,
        op: SetOp,
        items: Vec<(Lit<'a>, usize)>,
    },
    IsNull(AttrRef<'a>, bool),
    IsEmpty(AttrRef<'a>, bool),
    Call {
        name: &'a str,
        col: usize,
        args: Vec<Arg<'a>>,
        close_col: usize,
    },
}

/// An operand of the expression's shape: a leaf (constant, boolean bit
/// slot, predicate by index) or a node (by index in the node array), its
/// kind in the top bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ref(u32);

/// A [`Ref`] decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Node {
    Const(bool),
    /// A bare boolean attribute, by boolean bit slot.
    Bool(u32),
    /// A predicate, by the number the caller of `expr::compile_source`
    /// gave it (the atom id).
    Pred(u32),
    Not(Ref),
    And(Ref, Ref),
    Or(Ref, Ref),
}

impl Ref {
    const SHIFT: u32 = 29;
    const INDEX: u32 = (1 << Ref::SHIFT) - 1;
    const CONST: u32 = 0;
    const BOOL: u32 = 1;
    const PRED: u32 = 2;
    const NOT: u32 = 3;
    const AND: u32 = 4;
    const OR: u32 = 5;

    fn new(kind: u32, index: usize) -> Ref {
        // Indices are bounded by the text's length (MAX_EXPR_BYTES) and
        // the schema's size, far below 2^29.
        debug_assert!(index <= Ref::INDEX as usize);
        Ref((kind << Ref::SHIFT) | index as u32)
    }

    /// A constant leaf.
    pub(crate) fn constant(b: bool) -> Ref {
        Ref::new(Ref::CONST, b as usize)
    }

    /// A boolean-slot leaf.
    pub(crate) fn boolean(slot: u32) -> Ref {
        Ref::new(Ref::BOOL, slot as usize)
    }

    /// A predicate leaf, by index.
    pub(crate) fn pred(index: usize) -> Ref {
        Ref::new(Ref::PRED, index)
    }

    /// The index of `self` (a node's in the node array).
    #[inline]
    pub(crate) fn index(self) -> usize {
        (self.0 & Ref::INDEX) as usize
    }

    /// What `self` is if it is a leaf (constant, boolean, predicate),
    /// read with no node array.
    #[inline]
    pub(crate) fn leaf(self) -> Option<Node> {
        (self.0 >> Ref::SHIFT <= Ref::PRED).then(|| self.node(&[]))
    }

    /// What `self` is, its node's operands read from `nodes`.
    #[inline]
    pub(crate) fn node(self, nodes: &[[Ref; 2]]) -> Node {
        let i = self.0 & Ref::INDEX;
        match self.0 >> Ref::SHIFT {
            Ref::CONST => Node::Const(i != 0),
            Ref::BOOL => Node::Bool(i),
            Ref::PRED => Node::Pred(i),
            k => {
                let [a, b] = nodes[i as usize];
                match k {
                    Ref::NOT => Node::Not(a),
                    Ref::AND => Node::And(a, b),
                    _ => Node::Or(a, b),
                }
            }
        }
    }
}

/// Names of the built-in functions.
pub(crate) const FUNCTIONS: &[&str] = &[
    "within_frequency_cap",
    "segment_within",
    "segment_before",
    "geo_within_radius",
    "contains",
    "starts_with",
    "ends_with",
];

/// Parses an expression, handing each predicate to `leaf` in text order
/// (which returns the leaf standing for it); returns the nodes and the
/// root. A lexical error anywhere in the text is reported before any
/// syntax error, as when the whole text was tokenized first.
pub(crate) fn parse(
    src: &str,
    leaf: &mut dyn FnMut(PredAst<'_>) -> Ref,
) -> Result<(Vec<[Ref; 2]>, Ref)> {
    // A text that parses was lexed whole, so it has no lexical error: the
    // pass looking for one runs only when parsing fails (run on every
    // text, the two passes were a third of a build's instructions).
    parse_text(src, leaf).map_err(|e| Lexer::check(src).err().unwrap_or(e))
}

fn parse_text<'a>(
    src: &'a str,
    leaf: &mut dyn FnMut(PredAst<'a>) -> Ref,
) -> Result<(Vec<[Ref; 2]>, Ref)> {
    let mut lex = Lexer::new(src, true);
    let cur = lex.next_token()?;
    let mut p = Parser {
        lex,
        cur,
        ahead: None,
        parens: 0,
        leaf,
        nodes: Vec::new(),
        chain: Chain::default(),
    };
    let (root, _) = p.or()?;
    if p.peek().tok != Tok::Eof {
        return Err(p.unexpected("`and`, `or` or end of expression"));
    }
    let mut nodes = p.nodes;
    nodes.shrink_to_fit();
    Ok((nodes, root))
}

/// The deepest expression tree accepted.
pub(crate) const MAX_DEPTH: usize = 128;

/// The operands of the `and`/`or` chains being read, with their depths: 5
/// bytes an operand (a `(Ref, usize)` pair took 16, the largest buffer
/// while parsing one long chain). One stack for the whole parse, each
/// chain on top of the chains it is nested in: a chain of its own per
/// `and`/`or` level was two allocations per parenthesis.
#[derive(Default)]
struct Chain {
    refs: Vec<Ref>,
    /// Each operand's depth, at most [`MAX_DEPTH`] (checked as it is read).
    depths: Vec<u8>,
}

impl Chain {
    fn push(&mut self, (r, depth): (Ref, usize)) {
        self.refs.push(r);
        self.depths
            .push(u8::try_from(depth).expect("operand depths are checked against MAX_DEPTH"));
    }
}

/// A new `and`/`or`/`not` node in `nodes`.
fn node(nodes: &mut Vec<[Ref; 2]>, kind: u32, a: Ref, b: Ref) -> Ref {
    nodes.push([a, b]);
    Ref::new(kind, nodes.len() - 1)
}

/// `items[from..to]` joined by `kind` nodes as a balanced tree, and its
/// depth.
fn balance_range(
    items: &Chain,
    nodes: &mut Vec<[Ref; 2]>,
    from: usize,
    to: usize,
    kind: u32,
) -> (Ref, usize) {
    if to - from == 1 {
        return (items.refs[from], usize::from(items.depths[from]));
    }
    let mid = from + (to - from) / 2;
    let (l, dl) = balance_range(items, nodes, from, mid, kind);
    let (r, dr) = balance_range(items, nodes, mid, to, kind);
    (node(nodes, kind, l, r), dl.max(dr) + 1)
}

struct Parser<'a, 'l> {
    lex: Lexer<'a>,
    /// The current token and, once looked at, the one after it.
    cur: Token<'a>,
    ahead: Option<Token<'a>>,
    parens: usize,
    leaf: &'l mut dyn FnMut(PredAst<'a>) -> Ref,
    nodes: Vec<[Ref; 2]>,
    /// The operands of the chains being read.
    chain: Chain,
}

impl<'a> Parser<'a, '_> {
    fn peek(&self) -> &Token<'a> {
        &self.cur
    }

    /// The token after the current one.
    fn peek_next(&mut self) -> Result<&Tok<'a>> {
        if self.ahead.is_none() {
            self.ahead = Some(self.lex.next_token()?);
        }
        Ok(&self.ahead.as_ref().expect("just filled").tok)
    }

    fn bump(&mut self) -> Result<Token<'a>> {
        let next = match self.ahead.take() {
            Some(t) => t,
            None => self.lex.next_token()?,
        };
        Ok(std::mem::replace(&mut self.cur, next))
    }

    /// A new `and`/`or`/`not` node.
    fn node(&mut self, kind: u32, a: Ref, b: Ref) -> Ref {
        node(&mut self.nodes, kind, a, b)
    }

    /// Joins the chain `a op b op c ...` whose operands are on the chain
    /// stack from `base` as a balanced tree, and takes them off the stack:
    /// `and`/`or` are associative, the operands keep their left-to-right
    /// order, and a long flat chain stays shallow (so it is not refused by
    /// the depth limit).
    fn balance(&mut self, base: usize, kind: u32) -> (Ref, usize) {
        let end = self.chain.refs.len();
        // A chain of n operands makes n - 1 nodes: reserved at once
        // (amortized), a long chain does not double the node array.
        self.nodes.reserve(end - base - 1);
        let joined = balance_range(&self.chain, &mut self.nodes, base, end, kind);
        self.chain.refs.truncate(base);
        self.chain.depths.truncate(base);
        joined
    }

    fn is_kw(&self, kw: Kw) -> bool {
        self.peek().tok == Tok::Kw(kw)
    }

    fn unexpected(&self, expected: &str) -> Error {
        let t = self.peek();
        Error::Parse {
            col: t.col,
            expected: expected.to_string(),
            found: t.tok.to_string(),
        }
    }

    fn expect(&mut self, tok: Tok<'_>, expected: &str) -> Result<Token<'a>> {
        if self.peek().tok == tok {
            self.bump()
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_kw(&mut self, kw: Kw) -> Result<()> {
        if self.is_kw(kw) {
            self.bump()?;
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{}`", kw.text())))
        }
    }

    /// Rejects trees deeper than [`MAX_DEPTH`]: every later pass (checking,
    /// compiling, dropping) recurses over the tree, and untrusted text must not
    /// be able to overflow the stack.
    fn deep(&self, depth: usize, col: usize) -> Result<usize> {
        if depth > MAX_DEPTH {
            Err(Error::Parse {
                col,
                expected: format!("an expression nested at most {MAX_DEPTH} levels deep"),
                found: "deeper nesting".into(),
            })
        } else {
            Ok(depth)
        }
    }

    fn or(&mut self) -> Result<(Ref, usize)> {
        let first = self.and()?;
        // A single operand is no chain: most `or`s are the one around an
        // `and` (or around a parenthesis's content).
        if !(self.is_kw(Kw::Or) || self.peek().tok == Tok::OrOr) {
            return Ok(first);
        }
        let base = self.chain.refs.len();
        self.chain.push(first);
        while self.is_kw(Kw::Or) || self.peek().tok == Tok::OrOr {
            self.bump()?;
            let next = self.and()?;
            self.chain.push(next);
        }
        let col = self.peek().col;
        let (e, d) = self.balance(base, Ref::OR);
        Ok((e, self.deep(d, col)?))
    }

    fn and(&mut self) -> Result<(Ref, usize)> {
        let first = self.unary()?;
        if !(self.is_kw(Kw::And) || self.peek().tok == Tok::AndAnd) {
            return Ok(first);
        }
        let base = self.chain.refs.len();
        self.chain.push(first);
        while self.is_kw(Kw::And) || self.peek().tok == Tok::AndAnd {
            self.bump()?;
            let next = self.unary()?;
            self.chain.push(next);
        }
        let col = self.peek().col;
        let (e, d) = self.balance(base, Ref::AND);
        Ok((e, self.deep(d, col)?))
    }

    fn unary(&mut self) -> Result<(Ref, usize)> {
        let mut nots = 0usize;
        let mut outer = self.peek().col;
        while self.is_kw(Kw::Not) {
            let col = self.bump()?.col;
            if nots == 0 {
                outer = col;
            }
            nots += 1;
            self.deep(nots + self.parens, col)?;
        }
        let (mut e, d) = self.primary()?;
        for _ in 0..nots {
            e = self.node(Ref::NOT, e, e);
        }
        // Too deep means the outermost `not` sits too high: name it.
        Ok((e, self.deep(d + nots, outer)?))
    }

    fn primary(&mut self) -> Result<(Ref, usize)> {
        let col = self.peek().col;
        let call = match &self.cur.tok {
            Tok::Ident(s) if FUNCTIONS.contains(s) => *self.peek_next()? == Tok::LParen,
            _ => false,
        };
        let pred = match &self.cur.tok {
            Tok::LParen => {
                self.bump()?;
                self.parens += 1;
                self.deep(self.parens, col)?;
                let e = self.or()?;
                self.parens -= 1;
                self.expect(Tok::RParen, "`)` or an operator (`and`, `or`)")?;
                return Ok(e);
            }
            Tok::Kw(Kw::True) => {
                self.bump()?;
                return Ok((Ref::constant(true), 1));
            }
            Tok::Kw(Kw::False) => {
                self.bump()?;
                return Ok((Ref::constant(false), 1));
            }
            Tok::Ident(_) if call => self.call()?,
            Tok::Ident(_) => self.attr_predicate()?,
            Tok::Int(_) | Tok::Float(_) | Tok::Str(_) => self.literal_predicate()?,
            _ => {
                return Err(self.unexpected(
                    "an attribute, a literal, `not`, `true`, `false`, a function call or `(`",
                ));
            }
        };
        Ok(((self.leaf)(pred), 1))
    }

    fn attr(&mut self) -> Result<AttrRef<'a>> {
        let col = self.peek().col;
        if !matches!(self.cur.tok, Tok::Ident(_)) {
            return Err(self.unexpected("an attribute name"));
        }
        let Tok::Ident(name) = self.bump()?.tok else {
            unreachable!("the current token is an identifier")
        };
        Ok(AttrRef { name, col })
    }

    fn literal(&mut self) -> Result<(Lit<'a>, usize)> {
        if !matches!(self.cur.tok, Tok::Int(_) | Tok::Float(_) | Tok::Str(_)) {
            return Err(self.unexpected("a literal (integer, float or string)"));
        }
        let t = self.bump()?;
        let lit = match t.tok {
            Tok::Int(i) => Lit::Int(i),
            Tok::Float(f) => Lit::Float(f),
            Tok::Str(s) => Lit::Str(s),
            _ => unreachable!("the current token is a literal"),
        };
        Ok((lit, t.col))
    }

    fn literal_list(&mut self) -> Result<Vec<(Lit<'a>, usize)>> {
        self.expect(Tok::LParen, "`(` starting a list of values")?;
        let mut items = vec![self.literal()?];
        loop {
            match self.peek().tok {
                Tok::Comma => {
                    self.bump()?;
                    items.push(self.literal()?);
                }
                Tok::RParen => {
                    self.bump()?;
                    return Ok(items);
                }
                _ => return Err(self.unexpected("`,` or `)` in a list of values")),
            }
        }
    }

    fn cmp_op(&self) -> Option<CmpOp> {
        Some(match self.peek().tok {
            Tok::Lt => CmpOp::Lt,
            Tok::Le => CmpOp::Le,
            Tok::Gt => CmpOp::Gt,
            Tok::Ge => CmpOp::Ge,
            Tok::Eq => CmpOp::Eq,
            Tok::Ne => CmpOp::Ne,
            _ => return None,
        })
    }

    fn attr_predicate(&mut self) -> Result<PredAst<'a>> {
        let attr = self.attr()?;
        if let Some(op) = self.cmp_op() {
            self.bump()?;
            let (lit, col) = self.literal()?;
            return Ok(PredAst::Cmp(attr, op, lit, col));
        }
        if self.is_kw(Kw::In) {
            self.bump()?;
            let items = self.literal_list()?;
            return Ok(PredAst::In {
                attr,
                negated: false,
                items,
            });
        }
        if self.is_kw(Kw::Not) && *self.peek_next()? == Tok::Kw(Kw::In) {
            self.bump()?;
            self.bump()?;
            let items = self.literal_list()?;
            return Ok(PredAst::In {
                attr,
                negated: true,
                items,
            });
        }
        for (kw, op) in [
            (Kw::One, SetOp::OneOf),
            (Kw::None, SetOp::NoneOf),
            (Kw::All, SetOp::AllOf),
        ] {
            if self.is_kw(kw) {
                self.bump()?;
                self.expect_kw(Kw::Of)?;
                let items = self.literal_list()?;
                return Ok(PredAst::Set { attr, op, items });
            }
        }
        if self.is_kw(Kw::Is) {
            self.bump()?;
            let negated = if self.is_kw(Kw::Not) {
                self.bump()?;
                true
            } else {
                false
            };
            if self.is_kw(Kw::Null) {
                self.bump()?;
                return Ok(PredAst::IsNull(attr, negated));
            }
            if self.is_kw(Kw::Empty) {
                self.bump()?;
                return Ok(PredAst::IsEmpty(attr, negated));
            }
            return Err(self.unexpected(if negated {
                "`null` or `empty`"
            } else {
                "`null`, `not` or `empty`"
            }));
        }
        Ok(PredAst::Bare(attr))
    }

    fn literal_predicate(&mut self) -> Result<PredAst<'a>> {
        let (value, value_col) = self.literal()?;
        if let Some(op) = self.cmp_op() {
            self.bump()?;
            let attr = self.attr()?;
            return Ok(PredAst::Cmp(attr, op.flipped(), value, value_col));
        }
        let negated = if self.is_kw(Kw::Not) {
            self.bump()?;
            true
        } else {
            false
        };
        if !self.is_kw(Kw::In) {
            return Err(self.unexpected(if negated {
                "`in`"
            } else {
                "a comparison (`<`, `<=`, `>`, `>=`, `=`, `<>`), `in` or `not in` after a literal"
            }));
        }
        self.bump()?;
        let attr = self.attr()?;
        Ok(PredAst::ListHas {
            value,
            value_col,
            negated,
            attr,
        })
    }

    fn call(&mut self) -> Result<PredAst<'a>> {
        let t = self.bump()?;
        let Tok::Ident(name) = t.tok else {
            unreachable!("call() is entered on an identifier")
        };
        self.expect(Tok::LParen, "`(`")?;
        let mut args = Vec::new();
        if self.peek().tok != Tok::RParen {
            loop {
                let a = match self.peek().tok {
                    Tok::Ident(_) => Arg::Attr(self.attr()?),
                    _ => {
                        let (l, c) = self.literal()?;
                        Arg::Lit(l, c)
                    }
                };
                args.push(a);
                match self.peek().tok {
                    Tok::Comma => {
                        self.bump()?;
                    }
                    Tok::RParen => break,
                    _ => return Err(self.unexpected("`,` or `)` in the arguments")),
                }
            }
        }
        let close = self.expect(Tok::RParen, "`)`")?;
        Ok(PredAst::Call {
            name,
            col: t.col,
            args,
            close_col: close.col,
        })
    }
}
