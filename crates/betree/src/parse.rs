//! The expression parser: tokens to an untyped syntax tree.
//!
//! Precedence is `not` > `and` > `or`; `and`/`or` associate to the left.

use crate::lex::{Tok, Token, lex};
use crate::{Error, Result};

/// A literal value as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Lit {
    Int(i64),
    Float(f64),
    Str(String),
}

impl Lit {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Lit::Int(_) => "an integer",
            Lit::Float(_) => "a float",
            Lit::Str(_) => "a string",
        }
    }
}

/// An attribute reference and its column.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AttrRef {
    pub name: String,
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
pub(crate) enum Arg {
    Lit(Lit, usize),
    Attr(AttrRef),
}

/// A predicate as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PredAst {
    Bare(AttrRef),
    Cmp(AttrRef, CmpOp, Lit, usize),
    In {
        attr: AttrRef,
        negated: bool,
        items: Vec<(Lit, usize)>,
    },
    ListHas {
        value: Lit,
        value_col: usize,
        negated: bool,
        attr: AttrRef,
    },
    Set {
        attr: AttrRef,
        op: SetOp,
        items: Vec<(Lit, usize)>,
    },
    IsNull(AttrRef, bool),
    IsEmpty(AttrRef, bool),
    Call {
        name: String,
        col: usize,
        args: Vec<Arg>,
        close_col: usize,
    },
}

/// An untyped expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ast {
    Const(bool),
    Not(Box<Ast>),
    And(Box<Ast>, Box<Ast>),
    Or(Box<Ast>, Box<Ast>),
    Pred(PredAst),
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

pub(crate) const KEYWORDS: &[&str] = &[
    "and", "or", "not", "in", "is", "null", "empty", "one", "none", "all", "of", "true", "false",
];

/// Parses an expression.
pub(crate) fn parse(src: &str) -> Result<Ast> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        parens: 0,
    };
    let (ast, _) = p.or()?;
    let t = p.peek();
    if t.tok != Tok::Eof {
        return Err(p.unexpected("`and`, `or` or end of expression"));
    }
    Ok(ast)
}

/// Joins a chain `a op b op c ...` as a balanced tree: `and`/`or` are
/// associative, the operands keep their left-to-right order, and a long flat
/// chain stays shallow (so it is not refused by the depth limit).
fn balance(mut items: Vec<(Ast, usize)>, mk: &dyn Fn(Box<Ast>, Box<Ast>) -> Ast) -> (Ast, usize) {
    if items.len() == 1 {
        return items.pop().expect("one item");
    }
    let right = items.split_off(items.len() / 2);
    let (l, dl) = balance(items, mk);
    let (r, dr) = balance(right, mk);
    (mk(Box::new(l), Box::new(r)), dl.max(dr) + 1)
}

/// The deepest expression tree accepted.
pub(crate) const MAX_DEPTH: usize = 128;

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    parens: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn is_kw(&self, kw: &str) -> bool {
        matches!(&self.peek().tok, Tok::Kw(s) if *s == kw)
    }

    fn unexpected(&self, expected: &str) -> Error {
        let t = self.peek();
        Error::Parse {
            col: t.col,
            expected: expected.to_string(),
            found: t.tok.to_string(),
        }
    }

    fn expect(&mut self, tok: Tok, expected: &str) -> Result<Token> {
        if self.peek().tok == tok {
            Ok(self.bump())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_kw(&mut self, kw: &str) -> Result<()> {
        if self.is_kw(kw) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{kw}`")))
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

    fn or(&mut self) -> Result<(Ast, usize)> {
        let mut items = vec![self.and()?];
        while self.is_kw("or") || self.peek().tok == Tok::OrOr {
            self.bump();
            items.push(self.and()?);
        }
        let col = self.peek().col;
        let (e, d) = balance(items, &|a, b| Ast::Or(a, b));
        Ok((e, self.deep(d, col)?))
    }

    fn and(&mut self) -> Result<(Ast, usize)> {
        let mut items = vec![self.unary()?];
        while self.is_kw("and") || self.peek().tok == Tok::AndAnd {
            self.bump();
            items.push(self.unary()?);
        }
        let col = self.peek().col;
        let (e, d) = balance(items, &|a, b| Ast::And(a, b));
        Ok((e, self.deep(d, col)?))
    }

    fn unary(&mut self) -> Result<(Ast, usize)> {
        let mut nots = 0usize;
        let mut outer = self.peek().col;
        while self.is_kw("not") {
            let col = self.bump().col;
            if nots == 0 {
                outer = col;
            }
            nots += 1;
            self.deep(nots + self.parens, col)?;
        }
        let (mut e, d) = self.primary()?;
        for _ in 0..nots {
            e = Ast::Not(Box::new(e));
        }
        // Too deep means the outermost `not` sits too high: name it.
        Ok((e, self.deep(d + nots, outer)?))
    }

    fn primary(&mut self) -> Result<(Ast, usize)> {
        let col = self.peek().col;
        match &self.toks[self.pos].tok {
            Tok::LParen => {
                self.bump();
                self.parens += 1;
                self.deep(self.parens, col)?;
                let e = self.or()?;
                self.parens -= 1;
                self.expect(Tok::RParen, "`)` or an operator (`and`, `or`)")?;
                Ok(e)
            }
            Tok::Kw("true") => {
                self.bump();
                Ok((Ast::Const(true), 1))
            }
            Tok::Kw("false") => {
                self.bump();
                Ok((Ast::Const(false), 1))
            }
            Tok::Ident(s) if FUNCTIONS.contains(&s.as_str()) && *self.peek_at(1) == Tok::LParen => {
                Ok((self.call()?, 1))
            }
            Tok::Ident(_) => Ok((self.attr_predicate()?, 1)),
            Tok::Int(_) | Tok::Float(_) | Tok::Str(_) => Ok((self.literal_predicate()?, 1)),
            _ => Err(self.unexpected(
                "an attribute, a literal, `not`, `true`, `false`, a function call or `(`",
            )),
        }
    }

    fn attr(&mut self) -> Result<AttrRef> {
        let col = self.peek().col;
        match &mut self.toks[self.pos].tok {
            Tok::Ident(name) => {
                // The token is consumed, so its text can be moved out.
                let name = std::mem::take(name);
                self.bump();
                Ok(AttrRef { name, col })
            }
            _ => Err(self.unexpected("an attribute name")),
        }
    }

    fn literal(&mut self) -> Result<(Lit, usize)> {
        let t = self.peek().clone();
        let lit = match t.tok {
            Tok::Int(i) => Lit::Int(i),
            Tok::Float(f) => Lit::Float(f),
            Tok::Str(s) => Lit::Str(s),
            _ => return Err(self.unexpected("a literal (integer, float or string)")),
        };
        self.bump();
        Ok((lit, t.col))
    }

    fn literal_list(&mut self) -> Result<Vec<(Lit, usize)>> {
        self.expect(Tok::LParen, "`(` starting a list of values")?;
        let mut items = vec![self.literal()?];
        loop {
            match self.peek().tok {
                Tok::Comma => {
                    self.bump();
                    items.push(self.literal()?);
                }
                Tok::RParen => {
                    self.bump();
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

    fn attr_predicate(&mut self) -> Result<Ast> {
        let attr = self.attr()?;
        if let Some(op) = self.cmp_op() {
            self.bump();
            let (lit, col) = self.literal()?;
            return Ok(Ast::Pred(PredAst::Cmp(attr, op, lit, col)));
        }
        if self.is_kw("in") {
            self.bump();
            let items = self.literal_list()?;
            return Ok(Ast::Pred(PredAst::In {
                attr,
                negated: false,
                items,
            }));
        }
        if self.is_kw("not") && *self.peek_at(1) == Tok::Kw("in") {
            self.bump();
            self.bump();
            let items = self.literal_list()?;
            return Ok(Ast::Pred(PredAst::In {
                attr,
                negated: true,
                items,
            }));
        }
        for (kw, op) in [
            ("one", SetOp::OneOf),
            ("none", SetOp::NoneOf),
            ("all", SetOp::AllOf),
        ] {
            if self.is_kw(kw) {
                self.bump();
                self.expect_kw("of")?;
                let items = self.literal_list()?;
                return Ok(Ast::Pred(PredAst::Set { attr, op, items }));
            }
        }
        if self.is_kw("is") {
            self.bump();
            let negated = if self.is_kw("not") {
                self.bump();
                true
            } else {
                false
            };
            if self.is_kw("null") {
                self.bump();
                return Ok(Ast::Pred(PredAst::IsNull(attr, negated)));
            }
            if self.is_kw("empty") {
                self.bump();
                return Ok(Ast::Pred(PredAst::IsEmpty(attr, negated)));
            }
            return Err(self.unexpected(if negated {
                "`null` or `empty`"
            } else {
                "`null`, `not` or `empty`"
            }));
        }
        Ok(Ast::Pred(PredAst::Bare(attr)))
    }

    fn literal_predicate(&mut self) -> Result<Ast> {
        let (value, value_col) = self.literal()?;
        if let Some(op) = self.cmp_op() {
            self.bump();
            let attr = self.attr()?;
            return Ok(Ast::Pred(PredAst::Cmp(
                attr,
                op.flipped(),
                value,
                value_col,
            )));
        }
        let negated = if self.is_kw("not") {
            self.bump();
            true
        } else {
            false
        };
        if !self.is_kw("in") {
            return Err(self.unexpected(if negated {
                "`in`"
            } else {
                "a comparison (`<`, `<=`, `>`, `>=`, `=`, `<>`), `in` or `not in` after a literal"
            }));
        }
        self.bump();
        let attr = self.attr()?;
        Ok(Ast::Pred(PredAst::ListHas {
            value,
            value_col,
            negated,
            attr,
        }))
    }

    fn call(&mut self) -> Result<Ast> {
        let t = self.bump();
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
                        self.bump();
                    }
                    Tok::RParen => break,
                    _ => return Err(self.unexpected("`,` or `)` in the arguments")),
                }
            }
        }
        let close = self.expect(Tok::RParen, "`)`")?;
        Ok(Ast::Pred(PredAst::Call {
            name,
            col: t.col,
            args,
            close_col: close.col,
        }))
    }
}
