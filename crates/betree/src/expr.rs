//! Typed expressions: the parser's tree checked against a
//! [`Schema`](crate::domain::Schema), with attributes resolved to ids and
//! literals to the attribute's type ([`check`], the built-in functions in
//! `check::call`), and the evaluation of one predicate on one event
//! ([`eval`]).

use crate::domain::{AttrId, Bounds, Schema};
use crate::parse::{CmpOp, Node, Ref, SetOp};
use crate::strings::StrId;

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
    /// String predicates other than [`Pred::Str`] hold interned numbers
    /// (see [`crate::strings`]); sets are sorted by number.
    StrCmp {
        attr: AttrId,
        eq: bool,
        v: StrId,
    },
    IntIn {
        attr: AttrId,
        negated: bool,
        set: Box<[i64]>,
    },
    StrIn {
        attr: AttrId,
        negated: bool,
        set: Box<[StrId]>,
    },
    IntListHas {
        attr: AttrId,
        negated: bool,
        v: i64,
    },
    StrListHas {
        attr: AttrId,
        negated: bool,
        v: StrId,
    },
    IntSet {
        attr: AttrId,
        op: SetOp,
        set: Box<[i64]>,
    },
    StrSet {
        attr: AttrId,
        op: SetOp,
        set: Box<[StrId]>,
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

// The atom table holds one `Pred` per distinct predicate: sets and the
// strings of `Str` are boxed slices (16 bytes, not a `Vec`/`String`'s 24),
// which keeps the largest inline variant, and so every predicate, at 24
// bytes.
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

mod check;
mod eval;

pub(crate) use check::compile_source;

impl Pred {
    /// Heap bytes owned by the predicate (its value sets; interned strings
    /// are the index's).
    pub(crate) fn heap_bytes(&self) -> usize {
        match self {
            Pred::IntIn { set, .. } | Pred::IntSet { set, .. } => std::mem::size_of_val(&**set),
            Pred::StrIn { set, .. } | Pred::StrSet { set, .. } => std::mem::size_of_val(&**set),
            Pred::Str { s, .. } => s.len(),
            Pred::FreqCap(c) => size_of::<CapTest>() + c.kind.capacity() + c.ns.capacity(),
            Pred::Geo(_) => size_of::<GeoTest>(),
            _ => 0,
        }
    }

    /// A guess of the probability that this predicate holds on an event,
    /// for the evaluation order alone (see `program::order`): values
    /// taken as uniform over the attribute's declared bounds, so that an
    /// equality on one of 1,000 strings or a range over a tenth of an
    /// integer domain is tested before a leaf that is true about half the
    /// time; 0.5, a fair coin, where the schema declares no bounds or the
    /// predicate is of another kind.
    pub(crate) fn chance(&self, schema: &Schema) -> f64 {
        // Among `n` uniform values, the share that `k` of them are.
        let share = |k: f64, n: f64| (k / n).clamp(0.0, 1.0);
        let bounds = |attr: AttrId| &schema.domain(attr).bounds;
        match self {
            Pred::IntCmp { attr, op, v } => {
                let Bounds::Int(lo, hi) = *bounds(*attr) else {
                    return 0.5;
                };
                let n = (hi as f64 - lo as f64 + 1.0).max(1.0);
                let (v, lo, hi) = (*v as f64, lo as f64, hi as f64);
                let eq = if (lo..=hi).contains(&v) { 1.0 / n } else { 0.0 };
                match op {
                    CmpOp::Lt => share(v - lo, n),
                    CmpOp::Le => share(v - lo + 1.0, n),
                    CmpOp::Gt => share(hi - v, n),
                    CmpOp::Ge => share(hi - v + 1.0, n),
                    CmpOp::Eq => eq,
                    CmpOp::Ne => 1.0 - eq,
                }
            }
            Pred::StrCmp { attr, eq, .. } => match *bounds(*attr) {
                Bounds::MaxStrings(n) if n > 0 => {
                    let p = 1.0 / n as f64;
                    if *eq { p } else { 1.0 - p }
                }
                _ => 0.5,
            },
            Pred::IntIn { attr, negated, set } => match *bounds(*attr) {
                Bounds::Int(lo, hi) => {
                    let p = share(set.len() as f64, hi as f64 - lo as f64 + 1.0);
                    if *negated { 1.0 - p } else { p }
                }
                _ => 0.5,
            },
            Pred::StrIn { attr, negated, set } => match *bounds(*attr) {
                Bounds::MaxStrings(n) if n > 0 => {
                    let p = share(set.len() as f64, n as f64);
                    if *negated { 1.0 - p } else { p }
                }
                _ => 0.5,
            },
            _ => 0.5,
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
}
