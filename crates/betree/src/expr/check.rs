//! The type check: each predicate the parser reads, checked against the
//! [`Schema`] as it is read, with attributes resolved to ids and literals
//! to the attribute's type.

use super::{Constants, Expr, Pred};
use crate::domain::{AttrId, AttrType, Bounds, Schema, article};
use crate::parse::{AttrRef, CmpOp, Lit, PredAst, Ref, SetOp, parse};
use crate::strings::{StrId, Strings};
use crate::{Error, Result};

mod call;

/// A checked leaf.
enum Leaf {
    Bool(u32),
    Pred(Pred),
}

/// Longest expression text accepted. Parsing, checking and indexing take
/// about 4 bytes per byte of text at the peak (a long `or` chain of
/// distinct predicates: ~64 bytes a predicate), so without a bound one
/// large expression exhausts an address-space cap and aborts the process;
/// 16 MiB keeps `perfkit betree search` near 76 MB (release build).
const MAX_EXPR_BYTES: usize = 16 << 20;

/// Parses and type-checks `src` against `schema`, handing each predicate
/// to `pred` in text order (until the first type error; nothing after a
/// syntax error), whose returned number its leaf keeps. String literals
/// compared by equality are numbered in `strings`.
pub(crate) fn compile_source(
    schema: &Schema,
    strings: &mut Strings,
    src: &str,
    consts: &Constants,
    pred: &mut dyn FnMut(Pred) -> u32,
) -> Result<Expr> {
    if src.len() > MAX_EXPR_BYTES {
        return Err(Error::Parse {
            col: 1,
            expected: format!("an expression of at most {MAX_EXPR_BYTES} bytes"),
            found: format!("{} bytes", src.len()),
        });
    }
    let mut checker = Checker {
        schema,
        consts,
        strings,
    };
    // Type errors wait for the end of parsing: a syntax error anywhere
    // comes first, and then the first type error in text order, as when
    // the whole text was parsed before checking.
    let mut type_error = None;
    let (nodes, root) = parse(src, &mut |p| {
        if type_error.is_some() {
            return Ref::constant(false);
        }
        match checker.pred(&p) {
            Ok(Leaf::Bool(slot)) => Ref::boolean(slot),
            Ok(Leaf::Pred(p)) => Ref::pred(pred(p) as usize),
            Err(e) => {
                type_error = Some(e);
                Ref::constant(false)
            }
        }
    })?;
    if let Some(e) = type_error {
        return Err(e);
    }
    Ok(Expr { nodes, root })
}

struct Checker<'a> {
    schema: &'a Schema,
    consts: &'a Constants,
    strings: &'a mut Strings,
}

fn terr(col: usize, msg: impl Into<String>) -> Error {
    Error::Type {
        col,
        msg: msg.into(),
    }
}

impl Checker<'_> {
    fn attr(&self, a: &AttrRef) -> Result<(AttrId, AttrType)> {
        let id = self
            .schema
            .id(a.name)
            .ok_or_else(|| Error::UnknownAttribute {
                col: a.col,
                name: a.name.to_string(),
            })?;
        Ok((id, self.schema.domain(id).ty))
    }

    fn named(&self, name: &str, ty: AttrType, col: usize, func: &str) -> Result<AttrId> {
        match self.schema.id(name) {
            Some(id) if self.schema.domain(id).ty == ty => Ok(id),
            Some(id) => Err(terr(
                col,
                format!(
                    "`{func}` needs attribute `{name}` to be {}, it is declared {}",
                    article(ty),
                    article(self.schema.domain(id).ty)
                ),
            )),
            None => Err(terr(
                col,
                format!(
                    "`{func}` needs {} attribute `{name}`, which is not declared",
                    article(ty)
                ),
            )),
        }
    }

    fn int_lit(&self, a: &AttrRef, id: AttrId, lit: &Lit, col: usize) -> Result<i64> {
        match lit {
            Lit::Int(i) => {
                if let Bounds::Int(lo, hi) = self.schema.domain(id).bounds
                    && (*i < lo || *i > hi)
                {
                    return Err(terr(
                        col,
                        format!("{i} is outside the bounds [{lo}, {hi}] of `{}`", a.name),
                    ));
                }
                Ok(*i)
            }
            other => Err(self.mismatch(a, id, other, col)),
        }
    }

    fn str_lit(&mut self, a: &AttrRef, id: AttrId, lit: &Lit, col: usize) -> Result<StrId> {
        match lit {
            Lit::Str(s) => self.strings.intern(id, s),
            other => Err(self.mismatch(a, id, other, col)),
        }
    }

    fn mismatch(&self, a: &AttrRef, id: AttrId, lit: &Lit, col: usize) -> Error {
        terr(
            col,
            format!(
                "`{}` is {} attribute, compared with {}",
                a.name,
                article(self.schema.domain(id).ty),
                lit.kind()
            ),
        )
    }

    /// A list of integer literals, each checked against `a`'s domain, as a
    /// set.
    fn int_set(&self, a: &AttrRef, id: AttrId, items: &[(Lit, usize)]) -> Result<Box<[i64]>> {
        Ok(set_of(
            items
                .iter()
                .map(|(l, c)| self.int_lit(a, id, l, *c))
                .collect::<Result<Vec<_>>>()?,
        ))
    }

    fn pred(&mut self, p: &PredAst) -> Result<Leaf> {
        Ok(Leaf::Pred(match p {
            PredAst::Bare(a) => return self.bare(a),
            PredAst::Cmp(a, op, lit, col) => self.compare(a, *op, lit, *col)?,
            PredAst::In {
                attr: a,
                negated,
                items,
            } => self.member(a, *negated, items)?,
            PredAst::ListHas {
                value,
                value_col,
                negated,
                attr: a,
            } => self.list_has(a, value, *value_col, *negated)?,
            PredAst::Set { attr: a, op, items } => self.list_set(a, *op, items)?,
            PredAst::IsNull(a, negated) => self.is_null(a, *negated)?,
            PredAst::IsEmpty(a, negated) => self.is_empty(a, *negated)?,
            PredAst::Call {
                name,
                col,
                args,
                close_col,
            } => self.call(name, *col, args, *close_col)?,
        }))
    }

    /// A boolean attribute standing alone: `flag`.
    fn bare(&mut self, a: &AttrRef) -> Result<Leaf> {
        use AttrType as T;
        let (id, ty) = self.attr(a)?;
        if ty != T::Bool {
            return Err(terr(
                a.col,
                format!(
                    "`{}` is {} attribute; only a boolean attribute stands alone as a test",
                    a.name,
                    article(ty)
                ),
            ));
        }
        let slot = self
            .schema
            .bool_slot(id)
            .expect("boolean attributes have a slot");
        Ok(Leaf::Bool(slot))
    }

    /// `attr op value`: numbers against numbers in bounds, strings with `=`
    /// and `<>` only.
    fn compare(&mut self, a: &AttrRef, op: CmpOp, lit: &Lit, col: usize) -> Result<Pred> {
        use AttrType as T;
        let (id, ty) = self.attr(a)?;
        Ok(match ty {
            T::Int | T::IntEnum => Pred::IntCmp {
                attr: id,
                op,
                v: self.int_lit(a, id, lit, col)?,
            },
            T::Float => {
                let v = match lit {
                    Lit::Int(i) => *i as f64,
                    Lit::Float(f) => *f,
                    other => return Err(self.mismatch(a, id, other, col)),
                };
                if let Bounds::Float(lo, hi) = self.schema.domain(id).bounds
                    && (v < lo || v > hi)
                {
                    return Err(terr(
                        col,
                        format!("{v} is outside the bounds [{lo}, {hi}] of `{}`", a.name),
                    ));
                }
                Pred::FloatCmp { attr: id, op, v }
            }
            T::Str => {
                let eq = match op {
                    CmpOp::Eq => true,
                    CmpOp::Ne => false,
                    _ => {
                        return Err(terr(
                            a.col,
                            format!(
                                "`{}` is a string attribute: only `=` and `<>` compare strings",
                                a.name
                            ),
                        ));
                    }
                };
                Pred::StrCmp {
                    attr: id,
                    eq,
                    v: self.str_lit(a, id, lit, col)?,
                }
            }
            _ => {
                return Err(terr(
                    a.col,
                    format!(
                        "`{}` is {} attribute and cannot be compared with a value",
                        a.name,
                        article(ty)
                    ),
                ));
            }
        })
    }

    /// `attr [not] in (v, ...)` over an integer, enum or string attribute.
    fn member(&mut self, a: &AttrRef, negated: bool, items: &[(Lit, usize)]) -> Result<Pred> {
        use AttrType as T;
        let (id, ty) = self.attr(a)?;
        Ok(match ty {
            T::Int | T::IntEnum => {
                let set = self.int_set(a, id, items)?;
                Pred::IntIn {
                    attr: id,
                    negated,
                    set,
                }
            }
            T::Str => {
                let set = set_of(
                    items
                        .iter()
                        .map(|(l, c)| self.str_lit(a, id, l, *c))
                        .collect::<Result<Vec<_>>>()?,
                );
                Pred::StrIn {
                    attr: id,
                    negated,
                    set,
                }
            }
            _ => {
                return Err(terr(
                    a.col,
                    format!(
                        "`{}` is {} attribute: `in (...)` applies to integer, enum and string attributes (for lists use `one of`)",
                        a.name,
                        article(ty)
                    ),
                ));
            }
        })
    }

    /// `value [not] in list_attr`.
    fn list_has(
        &mut self,
        a: &AttrRef,
        value: &Lit,
        value_col: usize,
        negated: bool,
    ) -> Result<Pred> {
        use AttrType as T;
        let (id, ty) = self.attr(a)?;
        Ok(match (ty, value) {
            (T::IntList, Lit::Int(_)) => Pred::IntListHas {
                attr: id,
                negated,
                v: self.int_lit(a, id, value, value_col)?,
            },
            (T::StrList, Lit::Str(s)) => Pred::StrListHas {
                attr: id,
                negated,
                v: self.strings.intern(id, s)?,
            },
            (T::IntList | T::StrList, _) => {
                return Err(terr(
                    value_col,
                    format!(
                        "`{}` is {} attribute, searched for {}",
                        a.name,
                        article(ty),
                        value.kind()
                    ),
                ));
            }
            _ => {
                return Err(terr(
                    a.col,
                    format!(
                        "`{}` is {} attribute: `value in attribute` needs an integer or string list",
                        a.name,
                        article(ty)
                    ),
                ));
            }
        })
    }

    /// `list_attr one of / none of / all of (v, ...)`.
    fn list_set(&mut self, a: &AttrRef, op: SetOp, items: &[(Lit, usize)]) -> Result<Pred> {
        use AttrType as T;
        let (id, ty) = self.attr(a)?;
        Ok(match ty {
            T::IntList => {
                let set = self.int_set(a, id, items)?;
                Pred::IntSet { attr: id, op, set }
            }
            T::StrList => {
                let set = items
                    .iter()
                    .map(|(l, c)| match l {
                        Lit::Str(s) => self.strings.intern(id, s),
                        other => Err(terr(
                            *c,
                            format!(
                                "`{}` is a string list attribute, compared with {}",
                                a.name,
                                other.kind()
                            ),
                        )),
                    })
                    .collect::<Result<Vec<_>>>()?;
                let set = set_of(set);
                Pred::StrSet { attr: id, op, set }
            }
            _ => {
                return Err(terr(
                    a.col,
                    format!(
                        "`{}` is {} attribute: `one of`/`none of`/`all of` apply to lists",
                        a.name,
                        article(ty)
                    ),
                ));
            }
        })
    }

    /// `attr is [not] null`, which only an attribute that may be undefined
    /// can be.
    fn is_null(&mut self, a: &AttrRef, negated: bool) -> Result<Pred> {
        let (id, _) = self.attr(a)?;
        if !self.schema.domain(id).allow_undefined {
            return Err(terr(
                a.col,
                format!(
                    "`{}` is declared disallow-undefined, so `is {}null` is meaningless",
                    a.name,
                    if negated { "not " } else { "" }
                ),
            ));
        }
        Ok(Pred::IsNull { attr: id, negated })
    }

    /// `list_attr is [not] empty`.
    fn is_empty(&mut self, a: &AttrRef, negated: bool) -> Result<Pred> {
        use AttrType as T;
        let (id, ty) = self.attr(a)?;
        if !matches!(ty, T::IntList | T::StrList | T::Segments | T::FrequencyCaps) {
            return Err(terr(
                a.col,
                format!(
                    "`{}` is {} attribute: `is empty` applies to lists",
                    a.name,
                    article(ty)
                ),
            ));
        }
        Ok(Pred::IsEmpty { attr: id, negated })
    }
}

/// Values as a predicate holds them: sorted, each once.
fn set_of<T: Ord>(mut v: Vec<T>) -> Box<[T]> {
    v.sort_unstable();
    v.dedup();
    v.into()
}
