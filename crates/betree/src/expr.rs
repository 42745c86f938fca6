//! Typed expressions: the parser's tree checked against a [`Schema`], with
//! attributes resolved to ids and literals to the attribute's type. Also the
//! evaluation of one predicate on one event.

use std::borrow::Borrow;

use crate::domain::{AttrId, AttrType, Bounds, Schema, article};
use crate::event::{Event, Value};
use crate::parse::{Arg, AttrRef, CmpOp, Lit, Node, PredAst, Ref, SetOp, parse};
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
        v: Box<str>,
    },
    IntIn {
        attr: AttrId,
        negated: bool,
        set: Box<[i64]>,
    },
    StrIn {
        attr: AttrId,
        negated: bool,
        set: Box<[Box<str>]>,
    },
    IntListHas {
        attr: AttrId,
        negated: bool,
        v: i64,
    },
    StrListHas {
        attr: AttrId,
        negated: bool,
        v: Box<str>,
    },
    IntSet {
        attr: AttrId,
        op: SetOp,
        set: Box<[i64]>,
    },
    StrSet {
        attr: AttrId,
        op: SetOp,
        set: Box<[Box<str>]>,
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
        /// C takes it as `int32_t` (and so does the checker): 4 bytes keep
        /// every predicate at 24.
        seconds: i32,
    },
    /// Boxed, as the next: rare and the largest, they would make every
    /// predicate of the atom table (~300,000 for a 4 MiB expression) 80
    /// bytes instead of 24.
    FreqCap(Box<CapTest>),
    Geo(Box<GeoTest>),
    Str {
        attr: AttrId,
        op: StrOp,
        s: Box<str>,
    },
}

// The atom table holds one `Pred` per distinct predicate: strings and
// sets are boxed slices (16 bytes, not a `String`/`Vec`'s 24), which keeps
// the largest inline variant, and so every predicate, at 24 bytes.
const _: () = assert!(size_of::<Pred>() <= 24);

/// `within_frequency_cap`'s test.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CapTest {
    attr: AttrId,
    now: AttrId,
    kind: String,
    id: u32,
    ns: String,
    value: i64,
    length: i64,
}

/// `geo_within_radius`'s test.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeoTest {
    lat: AttrId,
    lon: AttrId,
    clat: f64,
    clon: f64,
    km: f64,
}

impl Pred {
    /// Feeds the atom identity of `self` (see [`Pred::same_atom`]) to `h`.
    pub(crate) fn hash_atom<H: std::hash::Hasher>(&self, h: &mut H) {
        use std::hash::Hash;
        std::mem::discriminant(self).hash(h);
        match self {
            Pred::IntCmp { attr, op, v } => (attr, op, v).hash(h),
            Pred::FloatCmp { attr, op, v } => (attr, op, v.to_bits()).hash(h),
            Pred::StrCmp { attr, eq, v } => (attr, eq, v).hash(h),
            Pred::IntIn { attr, negated, set } => (attr, negated, set).hash(h),
            Pred::StrIn { attr, negated, set } => (attr, negated, set).hash(h),
            Pred::IntListHas { attr, negated, v } => (attr, negated, v).hash(h),
            Pred::StrListHas { attr, negated, v } => (attr, negated, v).hash(h),
            Pred::IntSet { attr, op, set } => (attr, op, set).hash(h),
            Pred::StrSet { attr, op, set } => (attr, op, set).hash(h),
            Pred::IsNull { attr, negated } | Pred::IsEmpty { attr, negated } => {
                (attr, negated).hash(h)
            }
            Pred::Segment {
                attr,
                now,
                before,
                id,
                seconds,
            } => (attr, now, before, id, seconds).hash(h),
            Pred::FreqCap(c) => {
                let CapTest {
                    attr,
                    now,
                    kind,
                    id,
                    ns,
                    value,
                    length,
                } = &**c;
                (attr, now, kind, id, ns, value, length).hash(h)
            }
            Pred::Geo(g) => {
                let GeoTest {
                    lat,
                    lon,
                    clat,
                    clon,
                    km,
                } = &**g;
                (lat, lon, clat.to_bits(), clon.to_bits(), km.to_bits()).hash(h)
            }
            Pred::Str { attr, op, s } => (attr, op, s).hash(h),
        }
    }

    /// Whether `self` and `other` are one atom: equal, with floats compared
    /// bit for bit so that `-0.0` and `0.0` stay apart and a NaN finds
    /// itself (the atom table must find every predicate it holds).
    pub(crate) fn same_atom(&self, other: &Pred) -> bool {
        match (self, other) {
            (
                Pred::FloatCmp { attr, op, v },
                Pred::FloatCmp {
                    attr: a2,
                    op: o2,
                    v: v2,
                },
            ) => attr == a2 && op == o2 && v.to_bits() == v2.to_bits(),
            (Pred::Geo(a), Pred::Geo(b)) => {
                a.lat == b.lat
                    && a.lon == b.lon
                    && a.clat.to_bits() == b.clat.to_bits()
                    && a.clon.to_bits() == b.clon.to_bits()
                    && a.km.to_bits() == b.km.to_bits()
            }
            _ => self == other,
        }
    }
}

/// A checked expression, flat: its shape, `and`/`or`/`not` nodes whose
/// operands are [`Ref`]s, 8 bytes a node (a tree of boxed nodes took ~100
/// bytes per leaf). Its predicates are not in it: each was handed over as
/// it was read, and the leaf holds the number given back (the index's
/// atom id).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expr {
    pub nodes: Vec<[Ref; 2]>,
    pub root: Ref,
}

impl Expr {
    /// What `r` is.
    #[inline]
    pub(crate) fn node(&self, r: Ref) -> Node {
        r.node(&self.nodes)
    }
}

/// A checked leaf.
enum Leaf {
    Bool(u32),
    Pred(Pred),
}

/// Microseconds per second: event timestamps are in µs, `now` in seconds.
const USEC: i64 = 1_000_000;

impl Pred {
    /// Evaluates on `ev`; returns the result and the number of list/set loop
    /// steps taken (reductions beyond the predicate's own operation).
    ///
    /// The semantics are the C library's (adgear/be-tree `ast.c`
    /// `match_*_expr` and `special.c`): a predicate on an undefined attribute
    /// is false, whatever its polarity (`not in`, `none of` included); only
    /// `not` turns that into true.
    pub(crate) fn eval(&self, ev: &Event) -> (bool, u64) {
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
                Some(Value::Str(x)) => ((x.as_str() == &**v) == *eq, 0),
                _ => (false, 0),
            },
            IntIn { attr, negated, set } => match ev.get(*attr) {
                Some(Value::Int(x)) => {
                    let (found, n) = search(set, x);
                    (found != *negated, n)
                }
                _ => (false, 0),
            },
            StrIn { attr, negated, set } => match ev.get(*attr) {
                Some(Value::Str(x)) => {
                    let (found, n) = search(set, x.as_str());
                    (found != *negated, n)
                }
                _ => (false, 0),
            },
            // Event lists are sorted (see `Event::set`), so membership is a
            // binary search, as in C's `integer_in_integer_list`.
            IntListHas { attr, negated, v } => match ev.get(*attr) {
                Some(Value::IntList(l)) => {
                    let (found, n) = search(l, v);
                    (found != *negated, n)
                }
                _ => (false, 0),
            },
            StrListHas { attr, negated, v } => match ev.get(*attr) {
                Some(Value::StrList(l)) => {
                    let (found, n) = search(l, &**v);
                    (found != *negated, n)
                }
                _ => (false, 0),
            },
            IntSet { attr, op, set } => match ev.get(*attr) {
                Some(Value::IntList(l)) => set_op(*op, l, set),
                _ => (false, 0),
            },
            StrSet { attr, op, set } => match ev.get(*attr) {
                Some(Value::StrList(l)) => set_op::<_, _, str>(*op, l, set),
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
                    segment(segs, *id, i64::from(*seconds), *now, *before)
                }
                _ => (false, 0),
            },
            FreqCap(c) => match (ev.get(c.attr), ev.get(c.now)) {
                // C's `match_special_expr` answers true for an empty cap
                // list before it even looks at `now`.
                (Some(Value::FrequencyCaps(caps)), _) if caps.is_empty() => (true, 0),
                (Some(Value::FrequencyCaps(caps)), Some(Value::Int(now))) => {
                    let pos = caps
                        .iter()
                        .position(|f| f.id == c.id && f.kind == c.kind && f.namespace == c.ns);
                    let r = match pos {
                        None => true,
                        Some(p) => within_cap(&caps[p], c.value, c.length, *now),
                    };
                    (r, steps(pos, caps.len()))
                }
                _ => (false, 0),
            },
            Geo(g) => match (ev.get(g.lat), ev.get(g.lon)) {
                (Some(Value::Float(a)), Some(Value::Float(o))) => {
                    (geo_distance_km(g.clat, g.clon, *a, *o) <= g.km, 0)
                }
                _ => (false, 0),
            },
            Str { attr, op, s } => match ev.get(*attr) {
                Some(Value::Str(x)) => (
                    match op {
                        StrOp::Contains => x.contains(&**s),
                        StrOp::StartsWith => x.starts_with(&**s),
                        StrOp::EndsWith => x.ends_with(&**s),
                    },
                    0,
                ),
                _ => (false, 0),
            },
        }
    }
}

/// Binary search counting its probes (C counts one per probe in
/// `d64binary_search_counting`).
fn search<T: Borrow<Q>, Q: Ord + ?Sized>(sorted: &[T], x: &Q) -> (bool, u64) {
    let (mut lo, mut hi, mut n) = (0usize, sorted.len(), 0u64);
    while lo < hi {
        n += 1;
        let mid = lo + (hi - lo) / 2;
        match sorted[mid].borrow().cmp(x) {
            std::cmp::Ordering::Equal => return (true, n),
            std::cmp::Ordering::Less => lo = mid + 1,
            std::cmp::Ordering::Greater => hi = mid,
        }
    }
    (false, n)
}

fn steps(pos: Option<usize>, len: usize) -> u64 {
    pos.map_or(len, |p| p + 1) as u64
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

/// Float comparison as C's `match_compare_expr`/`match_equality_expr`: the
/// orderings are exact, `=` and `<>` go through `feq`/`fne` of `utils.c`,
/// `fabs(a - b) < DBL_EPSILON` (an absolute epsilon).
fn cmp_f(op: CmpOp, x: f64, v: f64) -> bool {
    match op {
        CmpOp::Eq => feq(x, v),
        CmpOp::Ne => !feq(x, v),
        o => cmp(o, &x, &v),
    }
}

/// C's `feq`.
fn feq(a: f64, b: f64) -> bool {
    (a - b).abs() < f64::EPSILON
}

/// `one of`/`none of`/`all of` between an event list and the expression's
/// set, both sorted without duplicates: one merge pass, a reduction per
/// step, as C's `match_not_all_of_*` and `match_all_of_*` (which also answer
/// `all of` false at once when the set is longer than the list).
fn set_op<L, S, Q>(op: SetOp, list: &[L], set: &[S]) -> (bool, u64)
where
    L: Borrow<Q>,
    S: Borrow<Q>,
    Q: Ord + ?Sized,
{
    use std::cmp::Ordering::*;
    if op == SetOp::AllOf && set.len() > list.len() {
        return (false, 0);
    }
    let (mut i, mut j, mut n) = (0usize, 0usize, 0u64);
    let mut common = 0usize;
    while i < list.len() && j < set.len() {
        n += 1;
        match list[i].borrow().cmp(set[j].borrow()) {
            Less => i += 1,
            Greater if op == SetOp::AllOf => return (false, n),
            Greater => j += 1,
            Equal => {
                if op != SetOp::AllOf {
                    return (op == SetOp::OneOf, n);
                }
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    match op {
        SetOp::OneOf => (false, n),
        SetOp::NoneOf => (true, n),
        SetOp::AllOf => (common == set.len(), n),
    }
}

/// C's `segment_within`/`segment_before` (`special.c`): walk the segments,
/// which the C library expects in ascending id order, skip ids below the one
/// sought and decide on the first id at or above it; `now` is in seconds
/// and the segment's timestamp in µs, truncated to seconds. Within means
/// `now - seconds <= ts / 10^6`, before means `now - seconds > ts / 10^6`.
/// The arithmetic is done in `i128` so no input overflows.
fn segment(segs: &[(i64, i64)], id: i64, seconds: i64, now: i64, before: bool) -> (bool, u64) {
    for (k, &(sid, ts)) in segs.iter().enumerate() {
        if sid < id {
            continue;
        }
        let r = sid == id && {
            let edge = now as i128 - seconds as i128;
            let at = (ts / USEC) as i128;
            if before { edge > at } else { edge <= at }
        };
        return (r, k as u64 + 1);
    }
    (false, segs.len() as u64)
}

/// C's `within_frequency_caps` for the first matching cap: with no length
/// the cap holds while it is below `value`; with a length a cap without a
/// timestamp holds, and so does one whose window (`now` in seconds,
/// timestamp in µs truncated to seconds) is older than `length` seconds;
/// otherwise it holds while below `value`.
fn within_cap(c: &crate::event::FrequencyCap, value: i64, length: i64, now: i64) -> bool {
    if length <= 0 {
        return value > c.value;
    }
    let Some(ts) = c.timestamp else {
        return true;
    };
    if now as i128 - (ts / USEC) as i128 > length as i128 {
        return true;
    }
    value > c.value
}

/// The C library's distance (`special.c` `geo_within_radius`): a chord on a
/// sphere of radius 6372.8 km turned into an arc, with its own degree to
/// radian factor; the first point is the expression's centre. Kept
/// operation for operation so that points near the radius fall on the same
/// side as in C.
pub(crate) fn geo_distance_km(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    const EARTH_RADIUS: f64 = 6372.8;
    // C's `TO_RAD`, deliberately not `f64::to_radians`.
    #[allow(clippy::approx_constant)]
    const TO_RAD: f64 = 3.1415926536 / 180.0;
    let dlon = (lon1 - lon2) * TO_RAD;
    let (lat1, lat2) = (lat1 * TO_RAD, lat2 * TO_RAD);
    let dz = lat1.sin() - lat2.sin();
    let dx = dlon.cos() * lat1.cos() - lat2.cos();
    let dy = dlon.sin() * lat1.cos();
    ((dx * dx + dy * dy + dz * dz).sqrt() / 2.0).asin() * 2.0 * EARTH_RADIUS
}

/// Longest expression text accepted. Parsing, checking and indexing take
/// about 4 bytes per byte of text at the peak (a long `or` chain of
/// distinct predicates: ~64 bytes a predicate), so without a bound one
/// large expression exhausts an address-space cap and aborts the process;
/// 16 MiB keeps `perfkit betree search` near 76 MB (release build).
pub(crate) const MAX_EXPR_BYTES: usize = 16 << 20;

/// Parses and type-checks `src` against `schema`, handing each predicate
/// to `pred` in text order (until the first type error; nothing after a
/// syntax error), whose returned number its leaf keeps.
pub(crate) fn compile_source(
    schema: &Schema,
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
    let checker = Checker { schema, consts };
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

    fn str_lit(&self, a: &AttrRef, id: AttrId, lit: &Lit, col: usize) -> Result<Box<str>> {
        match lit {
            Lit::Str(s) => Ok(s.as_str().into()),
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

    fn pred(&self, p: &PredAst) -> Result<Leaf> {
        use AttrType as T;
        Ok(Leaf::Pred(match p {
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
                return Ok(Leaf::Bool(slot));
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
                            set: set.into(),
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
                            set: set.into(),
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
                        v: s.as_str().into(),
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
                            set: set.into(),
                        }
                    }
                    T::StrList => {
                        let mut set = items
                            .iter()
                            .map(|(l, c)| match l {
                                Lit::Str(s) => Ok(Box::<str>::from(s.as_str())),
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
                            set: set.into(),
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
        let ranged = |a: &Arg, v: i64, what: &str, lo: i64, hi: i64| {
            if (lo..=hi).contains(&v) {
                Ok(v)
            } else {
                Err(terr(
                    arg_col(a),
                    format!("`{name}` expects a {what} in [{lo}, {hi}], found {v}"),
                ))
            }
        };
        match name {
            "within_frequency_cap" => {
                let [k, ns, v, len] = args else {
                    return Err(arity("type, namespace, value, length"));
                };
                let kind = string(k, "cap type")?;
                let kcol = arg_col(k);
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
                Ok(Pred::FreqCap(Box::new(CapTest {
                    attr,
                    now,
                    kind,
                    id,
                    ns: string(ns, "namespace")?,
                    // C passes the value as `uint32_t` and the length as
                    // `size_t`: values it would wrap are refused here.
                    value: ranged(v, int(v, "value")?, "value", 0, u32::MAX.into())?,
                    length: ranged(len, int(len, "length")?, "length", 0, i64::MAX)?,
                })))
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
                    // C's `segment_within` takes the seconds as `int32_t`;
                    // within that range the cast is exact.
                    seconds: ranged(
                        secs,
                        int(secs, "number of seconds")?,
                        "number of seconds",
                        i32::MIN.into(),
                        i32::MAX.into(),
                    )? as i32,
                })
            }
            "geo_within_radius" => {
                let [la, lo, km] = args else {
                    return Err(arity("latitude, longitude, radius in km"));
                };
                Ok(Pred::Geo(Box::new(GeoTest {
                    lat: self.named("latitude", AttrType::Float, col, name)?,
                    lon: self.named("longitude", AttrType::Float, col, name)?,
                    clat: num(la, "latitude")?,
                    clon: num(lo, "longitude")?,
                    km: num(km, "radius")?,
                })))
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
                    s: string(s, "to look for")?.into(),
                })
            }
        }
    }
}

/// The column of a function argument.
fn arg_col(a: &Arg) -> usize {
    match a {
        Arg::Lit(_, c) => *c,
        Arg::Attr(r) => r.col,
    }
}

impl Pred {
    /// Heap bytes owned by the predicate (its strings and value sets).
    pub(crate) fn heap_bytes(&self) -> usize {
        let strs =
            |v: &[Box<str>]| std::mem::size_of_val(v) + v.iter().map(|s| s.len()).sum::<usize>();
        match self {
            Pred::IntIn { set, .. } | Pred::IntSet { set, .. } => std::mem::size_of_val(&**set),
            Pred::StrIn { set, .. } | Pred::StrSet { set, .. } => strs(set),
            Pred::StrCmp { v, .. } | Pred::StrListHas { v, .. } => v.len(),
            Pred::Str { s, .. } => s.len(),
            Pred::FreqCap(c) => size_of::<CapTest>() + c.kind.capacity() + c.ns.capacity(),
            Pred::Geo(_) => size_of::<GeoTest>(),
            _ => 0,
        }
    }

    /// How many values the expression side of this predicate holds (its
    /// loop steps are at most this plus the event list's length).
    pub(crate) fn set_len(&self) -> usize {
        match self {
            Pred::IntIn { set, .. } | Pred::IntSet { set, .. } => set.len(),
            Pred::StrIn { set, .. } | Pred::StrSet { set, .. } => set.len(),
            _ => 0,
        }
    }

    /// String literals this predicate compares with its attribute.
    pub(crate) fn strings(&self) -> Option<(AttrId, Vec<&str>)> {
        match self {
            Pred::StrCmp { attr, v, .. } | Pred::StrListHas { attr, v, .. } => {
                Some((*attr, vec![&**v]))
            }
            Pred::StrIn { attr, set, .. } | Pred::StrSet { attr, set, .. } => {
                Some((*attr, set.iter().map(|s| &**s).collect()))
            }
            _ => None,
        }
    }
}
