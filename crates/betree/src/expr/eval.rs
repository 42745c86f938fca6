//! The evaluation of one predicate on one event, with the C library's
//! semantics.

use super::{Pred, StrOp};
use crate::event::{Event, Value};
use crate::parse::{CmpOp, SetOp};
use crate::strings::EventStrings;

/// Microseconds per second: event timestamps are in µs, `now` in seconds.
const USEC: i64 = 1_000_000;

impl Pred {
    /// Evaluates on `ev`, whose strings `strs` numbers; returns the result
    /// and the number of list/set loop steps taken (reductions beyond the
    /// predicate's own operation).
    ///
    /// The semantics are the C library's (adgear/be-tree `ast.c`
    /// `match_*_expr` and `special.c`): a predicate on an undefined attribute
    /// is false, whatever its polarity (`not in`, `none of` included); only
    /// `not` turns that into true.
    pub(crate) fn eval(&self, ev: &Event, strs: &EventStrings) -> (bool, u64) {
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
            // An event string no expression names is numbered `UNKNOWN`,
            // which no literal is.
            StrCmp { attr, eq, v } => match ev.get(*attr) {
                Some(Value::Str(_)) => ((strs.scalar(*attr) == *v) == *eq, 0),
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
                Some(Value::Str(_)) => {
                    let (found, n) = search(set, &strs.scalar(*attr));
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
                Some(Value::StrList(_)) => {
                    let (found, n) = search(strs.list(*attr), v);
                    (found != *negated, n)
                }
                _ => (false, 0),
            },
            IntSet { attr, op, set } => match ev.get(*attr) {
                Some(Value::IntList(l)) => set_op(*op, l, set),
                _ => (false, 0),
            },
            StrSet { attr, op, set } => match ev.get(*attr) {
                Some(Value::StrList(_)) => set_op(*op, strs.list(*attr), set),
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
fn search<T: Ord>(sorted: &[T], x: &T) -> (bool, u64) {
    let (mut lo, mut hi, mut n) = (0usize, sorted.len(), 0u64);
    while lo < hi {
        n += 1;
        let mid = lo + (hi - lo) / 2;
        match sorted[mid].cmp(x) {
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
fn set_op<T: Ord>(op: SetOp, list: &[T], set: &[T]) -> (bool, u64) {
    use std::cmp::Ordering::*;
    if op == SetOp::AllOf && set.len() > list.len() {
        return (false, 0);
    }
    let (mut i, mut j, mut n) = (0usize, 0usize, 0u64);
    let mut common = 0usize;
    while i < list.len() && j < set.len() {
        n += 1;
        match list[i].cmp(&set[j]) {
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
fn geo_distance_km(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
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
