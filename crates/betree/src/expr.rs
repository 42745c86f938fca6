//! Typed expressions: the parser's tree checked against a [`Schema`], with
//! attributes resolved to ids and literals to the attribute's type. Also the
//! evaluation of one predicate on one event.

use crate::domain::{AttrId, AttrType, Bounds, Schema};
use crate::event::{Event, Value, article};
use crate::parse::{Arg, Ast, AttrRef, CmpOp, Lit, PredAst, SetOp, parse};
use crate::{Error, Result};

/// Ids that `within_frequency_cap` needs from the expression's owner (the C
/// library's "constants" given with each insert).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Constants {
    /// Used by `flight` and `flightip` caps.
    pub flight_id: Option<u32>,
    /// Used by `advertiser` and `advertiserip` caps.
    pub advertiser_id: Option<u32>,
    /// Used by `campaign` and `campaignip` caps.
    pub campaign_id: Option<u32>,
    /// Used by `product` and `productip` caps.
    pub product_id: Option<u32>,
}

/// String tests of `contains`, `starts_with`, `ends_with`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum StrOp {
    Contains,
    StartsWith,
    EndsWith,
}

/// A checked predicate (a leaf of an expression other than a bare boolean).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Pred {
    IntCmp {
        attr: AttrId,
        op: CmpOp,
        v: i64,
    },
    FloatCmp {
        attr: AttrId,
        op: CmpOp,
        v: f64,
    },
    StrCmp {
        attr: AttrId,
        eq: bool,
        v: String,
    },
    IntIn {
        attr: AttrId,
        negated: bool,
        set: Vec<i64>,
    },
    StrIn {
        attr: AttrId,
        negated: bool,
        set: Vec<String>,
    },
    IntListHas {
        attr: AttrId,
        negated: bool,
        v: i64,
    },
    StrListHas {
        attr: AttrId,
        negated: bool,
        v: String,
    },
    IntSet {
        attr: AttrId,
        op: SetOp,
        set: Vec<i64>,
    },
    StrSet {
        attr: AttrId,
        op: SetOp,
        set: Vec<String>,
    },
    IsNull {
        attr: AttrId,
        negated: bool,
    },
    IsEmpty {
        attr: AttrId,
        negated: bool,
    },
    Segment {
        attr: AttrId,
        now: AttrId,
        before: bool,
        id: i64,
        seconds: i64,
    },
    FreqCap {
        attr: AttrId,
        now: AttrId,
        kind: String,
        id: u32,
        ns: String,
        value: i64,
        length: i64,
    },
    Geo {
        lat: AttrId,
        lon: AttrId,
        clat: f64,
        clon: f64,
        km: f64,
    },
    Str {
        attr: AttrId,
        op: StrOp,
        s: String,
    },
}

/// A checked expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Const(bool),
    /// A bare boolean attribute, by boolean bit slot.
    Bool(u32),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Pred(Pred),
}

const USEC: i64 = 1_000_000;
const EARTH_RADIUS_KM: f64 = 6371.0;

impl Pred {
    /// Evaluates on `ev`; returns the result and the number of list/set loop
    /// steps taken (reductions).
    pub(crate) fn eval(&self, ev: &Event) -> (bool, u32) {
        use Pred::*;
        match self {
            IntCmp { attr, op, v } => match ev.get(*attr) {
                Some(Value::Int(x)) => (cmp(*op, x, v), 0),
                _ => (false, 0),
            },
            FloatCmp { attr, op, v } => match ev.get(*attr) {
                Some(Value::Float(x)) => (cmp_f(*op, *x, *v), 0),
                _ => (false, 0),
            },
            StrCmp { attr, eq, v } => match ev.get(*attr) {
                Some(Value::Str(x)) => ((x == v) == *eq, 0),
                _ => (false, 0),
            },
            IntIn { attr, negated, set } => match ev.get(*attr) {
                Some(Value::Int(x)) => (set.binary_search(x).is_ok() != *negated, log2(set.len())),
                _ => (false, 0),
            },
            StrIn { attr, negated, set } => match ev.get(*attr) {
                Some(Value::Str(x)) => (set.binary_search(x).is_ok() != *negated, log2(set.len())),
                _ => (false, 0),
            },
            IntListHas { attr, negated, v } => match ev.get(*attr) {
                Some(Value::IntList(l)) => {
                    let pos = l.iter().position(|x| x == v);
                    (pos.is_some() != *negated, steps(pos, l.len()))
                }
                _ => (false, 0),
            },
            StrListHas { attr, negated, v } => match ev.get(*attr) {
                Some(Value::StrList(l)) => {
                    let pos = l.iter().position(|x| x == v);
                    (pos.is_some() != *negated, steps(pos, l.len()))
                }
                _ => (false, 0),
            },
            IntSet { attr, op, set } => match ev.get(*attr) {
                Some(Value::IntList(l)) => set_op(*op, l, set),
                _ => (false, 0),
            },
            StrSet { attr, op, set } => match ev.get(*attr) {
                Some(Value::StrList(l)) => set_op(*op, l, set),
                _ => (false, 0),
            },
            IsNull { attr, negated } => (ev.get(*attr).is_none() != *negated, 0),
            IsEmpty { attr, negated } => match ev.get(*attr) {
                Some(Value::IntList(l)) => (l.is_empty() != *negated, 0),
                Some(Value::StrList(l)) => (l.is_empty() != *negated, 0),
                Some(Value::Segments(l)) => (l.is_empty() != *negated, 0),
                Some(Value::FrequencyCaps(l)) => (l.is_empty() != *negated, 0),
                _ => (false, 0),
            },
            Segment {
                attr,
                now,
                before,
                id,
                seconds,
            } => match (ev.get(*attr), ev.get(*now)) {
                (Some(Value::Segments(segs)), Some(Value::Int(now))) => {
                    let edge = now.saturating_sub(seconds.saturating_mul(USEC));
                    let pos = segs.iter().position(|(s, _)| s == id);
                    let r = match pos {
                        Some(p) if *before => segs[p].1 < edge,
                        Some(p) => segs[p].1 >= edge,
                        None => false,
                    };
                    (r, steps(pos, segs.len()))
                }
                _ => (false, 0),
            },
            FreqCap {
                attr,
                now,
                kind,
                id,
                ns,
                value,
                length,
            } => match (ev.get(*attr), ev.get(*now)) {
                (Some(Value::FrequencyCaps(caps)), Some(Value::Int(now))) => {
                    let pos = caps
                        .iter()
                        .position(|c| c.id == *id && c.kind == *kind && c.namespace == *ns);
                    let r = match pos {
                        None => true,
                        Some(p) => {
                            let c = &caps[p];
                            match c.timestamp {
                                Some(ts)
                                    if *length > 0
                                        && now.saturating_sub(ts) > length.saturating_mul(USEC) =>
                                {
                                    true
                                }
                                _ => c.value < *value,
                            }
                        }
                    };
                    (r, steps(pos, caps.len()))
                }
                _ => (false, 0),
            },
            Geo {
                lat,
                lon,
                clat,
                clon,
                km,
            } => match (ev.get(*lat), ev.get(*lon)) {
                (Some(Value::Float(a)), Some(Value::Float(o))) => {
                    (haversine_km(*clat, *clon, *a, *o) <= *km, 0)
                }
                _ => (false, 0),
            },
            Str { attr, op, s } => match ev.get(*attr) {
                Some(Value::Str(x)) => (
                    match op {
                        StrOp::Contains => x.contains(s.as_str()),
                        StrOp::StartsWith => x.starts_with(s.as_str()),
                        StrOp::EndsWith => x.ends_with(s.as_str()),
                    },
                    0,
                ),
                _ => (false, 0),
            },
        }
    }
}

fn log2(n: usize) -> u32 {
    usize::BITS - n.leading_zeros()
}

fn steps(pos: Option<usize>, len: usize) -> u32 {
    pos.map_or(len, |p| p + 1) as u32
}

fn cmp<T: PartialOrd>(op: CmpOp, x: &T, v: &T) -> bool {
    match op {
        CmpOp::Lt => x < v,
        CmpOp::Le => x <= v,
        CmpOp::Gt => x > v,
        CmpOp::Ge => x >= v,
        CmpOp::Eq => x == v,
        CmpOp::Ne => x != v,
    }
}

fn cmp_f(op: CmpOp, x: f64, v: f64) -> bool {
    cmp(op, &x, &v)
}

fn set_op<T: Ord>(op: SetOp, list: &[T], set: &[T]) -> (bool, u32) {
    match op {
        SetOp::OneOf | SetOp::NoneOf => {
            let pos = list.iter().position(|x| set.binary_search(x).is_ok());
            (
                (pos.is_some()) == (op == SetOp::OneOf),
                steps(pos, list.len()),
            )
        }
        SetOp::AllOf => {
            let pos = set.iter().position(|x| !list.contains(x));
            (
                pos.is_none(),
                steps(pos, set.len()) * list.len().max(1) as u32,
            )
        }
    }
}

/// Great-circle distance.
pub(crate) fn haversine_km(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let dp = p2 - p1;
    let dl = (lon2 - lon1).to_radians();
    let a = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_KM * a.sqrt().min(1.0).asin()
}

/// Parses and type-checks `src` against `schema`.
pub(crate) fn compile_source(schema: &Schema, src: &str, consts: &Constants) -> Result<Expr> {
    let ast = parse(src)?;
    Checker { schema, consts }.expr(&ast)
}

struct Checker<'a> {
    schema: &'a Schema,
    consts: &'a Constants,
}

fn terr(col: usize, msg: impl Into<String>) -> Error {
    Error::Type {
        col,
        msg: msg.into(),
    }
}

impl Checker<'_> {
    fn expr(&self, ast: &Ast) -> Result<Expr> {
        Ok(match ast {
            Ast::Const(b) => Expr::Const(*b),
            Ast::Not(e) => Expr::Not(Box::new(self.expr(e)?)),
            Ast::And(a, b) => Expr::And(Box::new(self.expr(a)?), Box::new(self.expr(b)?)),
            Ast::Or(a, b) => Expr::Or(Box::new(self.expr(a)?), Box::new(self.expr(b)?)),
            Ast::Pred(p) => self.pred(p)?,
        })
    }

    fn attr(&self, a: &AttrRef) -> Result<(AttrId, AttrType)> {
        let id = self
            .schema
            .id(&a.name)
            .ok_or_else(|| Error::UnknownAttribute {
                col: a.col,
                name: a.name.clone(),
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

    fn str_lit(&self, a: &AttrRef, id: AttrId, lit: &Lit, col: usize) -> Result<String> {
        match lit {
            Lit::Str(s) => Ok(s.clone()),
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

    fn pred(&self, p: &PredAst) -> Result<Expr> {
        use AttrType as T;
        Ok(Expr::Pred(match p {
            PredAst::Bare(a) => {
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
                return Ok(Expr::Bool(slot));
            }
            PredAst::Cmp(a, op, lit, col) => {
                let (id, ty) = self.attr(a)?;
                match ty {
                    T::Int | T::IntEnum => Pred::IntCmp {
                        attr: id,
                        op: *op,
                        v: self.int_lit(a, id, lit, *col)?,
                    },
                    T::Float => {
                        let v = match lit {
                            Lit::Int(i) => *i as f64,
                            Lit::Float(f) => *f,
                            other => return Err(self.mismatch(a, id, other, *col)),
                        };
                        if let Bounds::Float(lo, hi) = self.schema.domain(id).bounds
                            && (v < lo || v > hi)
                        {
                            return Err(terr(
                                *col,
                                format!("{v} is outside the bounds [{lo}, {hi}] of `{}`", a.name),
                            ));
                        }
                        Pred::FloatCmp {
                            attr: id,
                            op: *op,
                            v,
                        }
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
                            v: self.str_lit(a, id, lit, *col)?,
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
                }
            }
            PredAst::In {
                attr: a,
                negated,
                items,
            } => {
                let (id, ty) = self.attr(a)?;
                match ty {
                    T::Int | T::IntEnum => {
                        let mut set = items
                            .iter()
                            .map(|(l, c)| self.int_lit(a, id, l, *c))
                            .collect::<Result<Vec<_>>>()?;
                        set.sort_unstable();
                        set.dedup();
                        Pred::IntIn {
                            attr: id,
                            negated: *negated,
                            set,
                        }
                    }
                    T::Str => {
                        let mut set = items
                            .iter()
                            .map(|(l, c)| self.str_lit(a, id, l, *c))
                            .collect::<Result<Vec<_>>>()?;
                        set.sort_unstable();
                        set.dedup();
                        Pred::StrIn {
                            attr: id,
                            negated: *negated,
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
                }
            }
            PredAst::ListHas {
                value,
                value_col,
                negated,
                attr: a,
            } => {
                let (id, ty) = self.attr(a)?;
                match (ty, value) {
                    (T::IntList, Lit::Int(_)) => Pred::IntListHas {
                        attr: id,
                        negated: *negated,
                        v: self.int_lit(a, id, value, *value_col)?,
                    },
                    (T::StrList, Lit::Str(s)) => Pred::StrListHas {
                        attr: id,
                        negated: *negated,
                        v: s.clone(),
                    },
                    (T::IntList | T::StrList, _) => {
                        return Err(terr(
                            *value_col,
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
                }
            }
            PredAst::Set { attr: a, op, items } => {
                let (id, ty) = self.attr(a)?;
                match ty {
                    T::IntList => {
                        let mut set = items
                            .iter()
                            .map(|(l, c)| self.int_lit(a, id, l, *c))
                            .collect::<Result<Vec<_>>>()?;
                        set.sort_unstable();
                        set.dedup();
                        Pred::IntSet {
                            attr: id,
                            op: *op,
                            set,
                        }
                    }
                    T::StrList => {
                        let mut set = items
                            .iter()
                            .map(|(l, c)| match l {
                                Lit::Str(s) => Ok(s.clone()),
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
                        set.sort_unstable();
                        set.dedup();
                        Pred::StrSet {
                            attr: id,
                            op: *op,
                            set,
                        }
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
                }
            }
            PredAst::IsNull(a, negated) => {
                let (id, _) = self.attr(a)?;
                if !self.schema.domain(id).allow_undefined {
                    return Err(terr(
                        a.col,
                        format!(
                            "`{}` is declared disallow-undefined, so `is {}null` is meaningless",
                            a.name,
                            if *negated { "not " } else { "" }
                        ),
                    ));
                }
                Pred::IsNull {
                    attr: id,
                    negated: *negated,
                }
            }
            PredAst::IsEmpty(a, negated) => {
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
                Pred::IsEmpty {
                    attr: id,
                    negated: *negated,
                }
            }
            PredAst::Call {
                name,
                col,
                args,
                close_col,
            } => self.call(name, *col, args, *close_col)?,
        }))
    }

    fn call(&self, name: &str, col: usize, args: &[Arg], close_col: usize) -> Result<Pred> {
        let arity = |sig: &str| {
            terr(
                col,
                format!(
                    "`{name}` takes ({sig}), got {} argument{}",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
            )
        };
        let _ = close_col;
        let int = |a: &Arg, what: &str| match a {
            Arg::Lit(Lit::Int(i), _) => Ok(*i),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects an integer {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects an integer {what}, found attribute `{}`",
                    r.name
                ),
            )),
        };
        let num = |a: &Arg, what: &str| match a {
            Arg::Lit(Lit::Int(i), _) => Ok(*i as f64),
            Arg::Lit(Lit::Float(f), _) => Ok(*f),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects a number {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects a number {what}, found attribute `{}`",
                    r.name
                ),
            )),
        };
        let string = |a: &Arg, what: &str| match a {
            Arg::Lit(Lit::Str(s), _) => Ok(s.clone()),
            Arg::Lit(l, c) => Err(terr(
                *c,
                format!("`{name}` expects a string {what}, found {}", l.kind()),
            )),
            Arg::Attr(r) => Err(terr(
                r.col,
                format!(
                    "`{name}` expects a string {what}, found attribute `{}`",
                    r.name
                ),
            )),
        };
        match name {
            "within_frequency_cap" => {
                let [k, ns, v, len] = args else {
                    return Err(arity("type, namespace, value, length"));
                };
                let kind = string(k, "cap type")?;
                let kcol = match k {
                    Arg::Lit(_, c) => *c,
                    Arg::Attr(r) => r.col,
                };
                let id = match kind.as_str() {
                    "flight" | "flightip" => self.consts.flight_id.map(|i| (i, "flight_id")),
                    "advertiser" | "advertiserip" => {
                        self.consts.advertiser_id.map(|i| (i, "advertiser_id"))
                    }
                    "campaign" | "campaignip" => {
                        self.consts.campaign_id.map(|i| (i, "campaign_id"))
                    }
                    "product" | "productip" => self.consts.product_id.map(|i| (i, "product_id")),
                    other => {
                        return Err(terr(
                            kcol,
                            format!(
                                "unknown frequency cap type {other:?} (expected flight, flightip, advertiser, advertiserip, campaign, campaignip, product or productip)"
                            ),
                        ));
                    }
                };
                let Some((id, _)) = id else {
                    let c = match kind.trim_end_matches("ip") {
                        "flight" => "flight_id",
                        "advertiser" => "advertiser_id",
                        "campaign" => "campaign_id",
                        _ => "product_id",
                    };
                    return Err(terr(
                        kcol,
                        format!(
                            "a {kind:?} frequency cap needs the constant `{c}` given with the expression"
                        ),
                    ));
                };
                let attr = self.named("frequency_caps", AttrType::FrequencyCaps, col, name)?;
                let now = self.named("now", AttrType::Int, col, name)?;
                Ok(Pred::FreqCap {
                    attr,
                    now,
                    kind,
                    id,
                    ns: string(ns, "namespace")?,
                    value: int(v, "value")?,
                    length: int(len, "length")?,
                })
            }
            "segment_within" | "segment_before" => {
                let (attr, id, secs) = match args {
                    [Arg::Attr(r), id, s] => {
                        let (aid, ty) = self.attr(r)?;
                        if ty != AttrType::Segments {
                            return Err(terr(
                                r.col,
                                format!(
                                    "`{name}` needs a segments attribute, `{}` is {} attribute",
                                    r.name,
                                    article(ty)
                                ),
                            ));
                        }
                        (aid, id, s)
                    }
                    [id, s] => (
                        self.named("segments_with_timestamp", AttrType::Segments, col, name)?,
                        id,
                        s,
                    ),
                    _ => return Err(arity("[segments attribute,] segment id, seconds")),
                };
                let now = self.named("now", AttrType::Int, col, name)?;
                Ok(Pred::Segment {
                    attr,
                    now,
                    before: name == "segment_before",
                    id: int(id, "segment id")?,
                    seconds: int(secs, "number of seconds")?,
                })
            }
            "geo_within_radius" => {
                let [la, lo, km] = args else {
                    return Err(arity("latitude, longitude, radius in km"));
                };
                Ok(Pred::Geo {
                    lat: self.named("latitude", AttrType::Float, col, name)?,
                    lon: self.named("longitude", AttrType::Float, col, name)?,
                    clat: num(la, "latitude")?,
                    clon: num(lo, "longitude")?,
                    km: num(km, "radius")?,
                })
            }
            _ => {
                let op = match name {
                    "contains" => StrOp::Contains,
                    "starts_with" => StrOp::StartsWith,
                    _ => StrOp::EndsWith,
                };
                let [a, s] = args else {
                    return Err(arity("string attribute, string"));
                };
                let Arg::Attr(r) = a else {
                    let Arg::Lit(l, c) = a else { unreachable!() };
                    return Err(terr(
                        *c,
                        format!(
                            "`{name}` expects a string attribute first, found {}",
                            l.kind()
                        ),
                    ));
                };
                let (attr, ty) = self.attr(r)?;
                if ty != AttrType::Str {
                    return Err(terr(
                        r.col,
                        format!(
                            "`{name}` needs a string attribute, `{}` is {} attribute",
                            r.name,
                            article(ty)
                        ),
                    ));
                }
                Ok(Pred::Str {
                    attr,
                    op,
                    s: string(s, "to look for")?,
                })
            }
        }
    }
}

impl Expr {
    /// Calls `f` for every predicate of the expression.
    pub(crate) fn visit_preds(&self, f: &mut dyn FnMut(&Pred)) {
        match self {
            Expr::Const(_) | Expr::Bool(_) => {}
            Expr::Not(e) => e.visit_preds(f),
            Expr::And(a, b) | Expr::Or(a, b) => {
                a.visit_preds(f);
                b.visit_preds(f);
            }
            Expr::Pred(p) => f(p),
        }
    }
}

impl Pred {
    /// String literals this predicate compares with its attribute.
    pub(crate) fn strings(&self) -> Option<(AttrId, Vec<&str>)> {
        match self {
            Pred::StrCmp { attr, v, .. } | Pred::StrListHas { attr, v, .. } => {
                Some((*attr, vec![v.as_str()]))
            }
            Pred::StrIn { attr, set, .. } | Pred::StrSet { attr, set, .. } => {
                Some((*attr, set.iter().map(String::as_str).collect()))
            }
            _ => None,
        }
    }
}
