//! The brute-force oracle: random expressions over every domain type and
//! operator are rendered to text, indexed, and searched on random events
//! (with undefined attributes); a deliberately simple evaluator of the same
//! expressions (its own model, no index, no memo, no compilation) must agree
//! with `search`, `search_all`, `search_next` at every budget, `search_batch`
//! and `search_async`, before and after random deletes.

use std::collections::HashMap;

use betree::{
    AttrType, BatchPath, Bounds, Constants, Domain, Event, EventBuilder, FrequencyCap, Index,
    Schema, Scratch, SearchStep,
};
use perfkit_testkit::boolean_text::eval;
use proptest::prelude::*;

#[derive(Debug, Clone, PartialEq)]
enum TV {
    B(bool),
    I(i64),
    F(f64),
    S(String),
    IL(Vec<i64>),
    SL(Vec<String>),
    Seg(Vec<(i64, i64)>),
    Caps(Vec<FrequencyCap>),
}

type Model = HashMap<&'static str, TV>;

#[derive(Debug, Clone, Copy)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    fn text(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "=",
            Op::Ne => "<>",
        }
    }
    fn flip(self) -> Op {
        match self {
            Op::Lt => Op::Gt,
            Op::Le => Op::Ge,
            Op::Gt => Op::Lt,
            Op::Ge => Op::Le,
            o => o,
        }
    }
    fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
            Op::Eq => a == b,
            Op::Ne => a != b,
        }
    }
}

#[derive(Debug, Clone)]
enum TP {
    Bare(&'static str),
    IntCmp(&'static str, Op, i64, bool),
    FloatCmp(Op, f64, bool),
    StrCmp(bool, String),
    IntIn(&'static str, bool, Vec<i64>),
    StrIn(bool, Vec<String>),
    ListHasInt(bool, i64),
    ListHasStr(bool, String),
    SetInt(u8, Vec<i64>),
    SetStr(u8, Vec<String>),
    IsNull(&'static str, bool),
    IsEmpty(&'static str, bool),
    Seg(bool, bool, i64, i64),
    Freq(&'static str, &'static str, i64, i64),
    Geo(f64, f64, f64),
    StrFn(u8, String),
}

#[derive(Debug, Clone)]
enum TE {
    Const(bool),
    Not(Box<TE>),
    And(Box<TE>, Box<TE>),
    Or(Box<TE>, Box<TE>),
    Leaf(TP),
}

const INT_ATTRS: [&str; 3] = ["i", "e", "now"];
const NULLABLE: [&str; 12] = [
    "b1",
    "i",
    "e",
    "f",
    "s",
    "il",
    "sl",
    "seg",
    "segments_with_timestamp",
    "frequency_caps",
    "latitude",
    "now",
];
const WORDS: [&str; 5] = ["a", "b", "ab", "ba", ""];
/// What events draw their strings from: the expressions' words and words
/// no expression names, which the index numbers as unknown (equal to no
/// literal; left out of a list's numbers).
const EVENT_WORDS: [&str; 7] = ["a", "b", "ab", "ba", "", "zz", "b\u{e9}"];
/// Float literals of expressions; 0.3 meets the event value 0.1 + 0.2,
/// equal within C's `feq` epsilon but not exactly.
const FLOAT_LITS: [f64; 5] = [-1.5, 0.0, 2.5, 1.0, 0.3];
const FLOAT_VALS: [f64; 5] = [-1.5, 0.0, 2.5, 1.0, 0.1 + 0.2];
/// Timestamps (µs): whole seconds, negative and fractional ones, where
/// truncating to seconds (as C's integer division does) matters.
const STAMPS: [i64; 5] = [0, 5_000_000, 20_000_000, -1_500_000, 25_900_000];
/// `now` is in seconds.
const NOWS: [i64; 3] = [0, 10, 30];
/// Seconds/lengths of `segment_*` and `within_frequency_cap`; 11 puts
/// `now = 10` against the timestamp -1.5 s exactly on the edge.
const SPANS: [i64; 4] = [0, 5, 11, 20];

fn schema() -> Schema {
    Schema::from_domains([
        Domain::new("b0", AttrType::Bool, false),
        Domain::new("b1", AttrType::Bool, true),
        Domain::new("i", AttrType::Int, true),
        Domain::new("e", AttrType::IntEnum, true).with_bounds(Bounds::Int(-3, 3)),
        Domain::new("f", AttrType::Float, true),
        Domain::new("s", AttrType::Str, true),
        Domain::new("il", AttrType::IntList, true),
        Domain::new("sl", AttrType::StrList, true),
        Domain::new("seg", AttrType::Segments, true),
        Domain::new("segments_with_timestamp", AttrType::Segments, true),
        Domain::new("frequency_caps", AttrType::FrequencyCaps, true),
        Domain::new("now", AttrType::Int, true),
        Domain::new("latitude", AttrType::Float, true),
        Domain::new("longitude", AttrType::Float, false),
    ])
    .unwrap()
}

fn pick<T: Clone>(r: &mut fastrand::Rng, xs: &[T]) -> T {
    xs[r.usize(0..xs.len())].clone()
}

fn op(r: &mut fastrand::Rng) -> Op {
    pick(r, &[Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne])
}

fn small(r: &mut fastrand::Rng) -> i64 {
    r.i64(-3..=3)
}

fn ints(r: &mut fastrand::Rng) -> Vec<i64> {
    (0..r.usize(1..4)).map(|_| small(r)).collect()
}

fn words(r: &mut fastrand::Rng) -> Vec<String> {
    (0..r.usize(1..4))
        .map(|_| pick(r, &WORDS).to_string())
        .collect()
}

fn gen_pred(r: &mut fastrand::Rng) -> TP {
    match r.u32(0..17) {
        0 | 1 => TP::Bare(pick(r, &["b0", "b1"])),
        2 => TP::IntCmp(pick(r, &INT_ATTRS), op(r), small(r), r.bool()),
        3 => TP::FloatCmp(op(r), pick(r, &FLOAT_LITS), r.bool()),
        4 => TP::StrCmp(r.bool(), pick(r, &WORDS).to_string()),
        5 => TP::IntIn(pick(r, &["i", "e"]), r.bool(), ints(r)),
        6 => TP::StrIn(r.bool(), words(r)),
        7 => TP::ListHasInt(r.bool(), small(r)),
        8 => TP::ListHasStr(r.bool(), pick(r, &WORDS).to_string()),
        9 => TP::SetInt(r.u8(0..3), ints(r)),
        10 => TP::SetStr(r.u8(0..3), words(r)),
        11 => TP::IsNull(pick(r, &NULLABLE), r.bool()),
        12 => TP::IsEmpty(pick(r, &["il", "sl", "seg", "frequency_caps"]), r.bool()),
        13 => TP::Seg(r.bool(), r.bool(), r.i64(1..4), pick(r, &SPANS)),
        14 => TP::Freq(
            pick(r, &["flight", "campaign", "flightip"]),
            pick(r, &["ns", "x"]),
            r.i64(0..4),
            pick(r, &SPANS),
        ),
        // 111.21 km separates C's radius (6372.8 km: one degree of
        // longitude on the equator is 111.226 km) from the usual 6371 km
        // (111.195 km).
        15 => TP::Geo(
            0.0,
            pick(r, &[0.0, 0.5]),
            pick(r, &[50.0, 111.21, 120.0, 200.0]),
        ),
        _ => TP::StrFn(r.u8(0..3), pick(r, &WORDS).to_string()),
    }
}

fn gen_expr(r: &mut fastrand::Rng, depth: u32) -> TE {
    if depth == 0 || r.u32(0..10) < 3 {
        return if r.u32(0..30) == 0 {
            TE::Const(r.bool())
        } else {
            TE::Leaf(gen_pred(r))
        };
    }
    match r.u32(0..5) {
        0 => TE::Not(Box::new(gen_expr(r, depth - 1))),
        1 | 2 => TE::And(
            Box::new(gen_expr(r, depth - 1)),
            Box::new(gen_expr(r, depth - 1)),
        ),
        _ => TE::Or(
            Box::new(gen_expr(r, depth - 1)),
            Box::new(gen_expr(r, depth - 1)),
        ),
    }
}

fn fl(x: f64) -> String {
    format!("{x:?}")
}

fn list<T: std::fmt::Debug>(xs: &[T]) -> String {
    xs.iter()
        .map(|x| format!("{x:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn render_pred(p: &TP) -> String {
    let setop = |k: u8| ["one of", "none of", "all of"][k as usize];
    match p {
        TP::Bare(a) => a.to_string(),
        TP::IntCmp(a, o, v, false) => format!("{a} {} {v}", o.text()),
        TP::IntCmp(a, o, v, true) => format!("{v} {} {a}", o.flip().text()),
        TP::FloatCmp(o, v, false) => format!("f {} {}", o.text(), fl(*v)),
        TP::FloatCmp(o, v, true) => format!("{} {} f", fl(*v), o.flip().text()),
        TP::StrCmp(eq, v) => format!("s {} {v:?}", if *eq { "=" } else { "<>" }),
        TP::IntIn(a, neg, set) => {
            format!("{a} {}in ({})", if *neg { "not " } else { "" }, list(set))
        }
        TP::StrIn(neg, set) => format!("s {}in ({})", if *neg { "not " } else { "" }, list(set)),
        TP::ListHasInt(neg, v) => format!("{v} {}in il", if *neg { "not " } else { "" }),
        TP::ListHasStr(neg, v) => format!("{v:?} {}in sl", if *neg { "not " } else { "" }),
        TP::SetInt(k, set) => format!("il {} ({})", setop(*k), list(set)),
        TP::SetStr(k, set) => format!("sl {} ({})", setop(*k), list(set)),
        TP::IsNull(a, neg) => format!("{a} is {}null", if *neg { "not " } else { "" }),
        TP::IsEmpty(a, neg) => format!("{a} is {}empty", if *neg { "not " } else { "" }),
        TP::Seg(before, explicit, id, secs) => format!(
            "segment_{}({}{id}, {secs})",
            if *before { "before" } else { "within" },
            if *explicit { "seg, " } else { "" }
        ),
        TP::Freq(k, ns, v, len) => format!("within_frequency_cap({k:?}, {ns:?}, {v}, {len})"),
        TP::Geo(la, lo, km) => format!("geo_within_radius({}, {}, {})", fl(*la), fl(*lo), fl(*km)),
        TP::StrFn(k, v) => format!(
            "{}(s, {v:?})",
            ["contains", "starts_with", "ends_with"][*k as usize]
        ),
    }
}

fn render(e: &TE) -> String {
    match e {
        TE::Const(b) => b.to_string(),
        TE::Not(x) => format!("not ({})", render(x)),
        TE::And(a, b) => format!("({}) and ({})", render(a), render(b)),
        TE::Or(a, b) => format!("({}) || ({})", render(a), render(b)),
        TE::Leaf(p) => render_pred(p),
    }
}

const FLIGHT_ID: u32 = 10;
const CAMPAIGN_ID: u32 = 30;

/// The constants every generated expression may name.
fn consts() -> Constants {
    Constants {
        flight_id: Some(FLIGHT_ID),
        campaign_id: Some(CAMPAIGN_ID),
        ..Constants::default()
    }
}

/// The C library's great-circle distance (adgear/be-tree `special.c`):
/// the chord between the two points on a sphere of radius 6372.8 km, turned
/// into an arc, with C's `TO_RAD` of 3.1415926536 / 180. Computed here from
/// unit vectors rather than C's expression.
fn c_distance_km(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    // C's constant, not `PI`: the last digits matter at the radius edge.
    #[allow(clippy::approx_constant)]
    let rad = 3.1415926536_f64 / 180.0;
    let unit = |lat: f64, lon: f64| {
        let (la, lo) = (lat * rad, lon * rad);
        [la.cos() * lo.cos(), la.cos() * lo.sin(), la.sin()]
    };
    let (a, b) = (unit(lat1, lon1), unit(lat2, lon2));
    let chord = a
        .iter()
        .zip(&b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    2.0 * 6372.8 * (chord / 2.0).asin()
}

/// Seconds of a µs timestamp as C computes them (`ts / 1000000`, which
/// truncates toward zero).
fn secs(ts: i64) -> i64 {
    let s = ts.abs() / 1_000_000;
    if ts < 0 { -s } else { s }
}

/// The specification, evaluated directly on the model.
fn oracle_pred(p: &TP, m: &Model) -> bool {
    let int = |a: &str| match m.get(a) {
        Some(TV::I(x)) => Some(*x),
        _ => None,
    };
    let s = match m.get("s") {
        Some(TV::S(x)) => Some(x.as_str()),
        _ => None,
    };
    match p {
        TP::Bare(a) => matches!(m.get(a), Some(TV::B(true))),
        TP::IntCmp(a, o, v, _) => int(a).is_some_and(|x| o.holds(x, *v)),
        // `=` and `<>` on floats are C's `feq`/`fne`: |a - b| < DBL_EPSILON.
        TP::FloatCmp(Op::Eq, v, _) => {
            matches!(m.get("f"), Some(TV::F(x)) if (x - v).abs() < f64::EPSILON)
        }
        TP::FloatCmp(Op::Ne, v, _) => {
            matches!(m.get("f"), Some(TV::F(x)) if (x - v).abs() >= f64::EPSILON)
        }
        TP::FloatCmp(o, v, _) => matches!(m.get("f"), Some(TV::F(x)) if o.holds(*x, *v)),
        TP::StrCmp(eq, v) => s.is_some_and(|x| (x == v) == *eq),
        TP::IntIn(a, neg, set) => int(a).is_some_and(|x| set.contains(&x) != *neg),
        TP::StrIn(neg, set) => s.is_some_and(|x| set.iter().any(|w| w == x) != *neg),
        TP::ListHasInt(neg, v) => matches!(m.get("il"), Some(TV::IL(l)) if l.contains(v) != *neg),
        TP::ListHasStr(neg, v) => matches!(m.get("sl"), Some(TV::SL(l)) if l.contains(v) != *neg),
        TP::SetInt(k, set) => match m.get("il") {
            Some(TV::IL(l)) => match k {
                0 => set.iter().any(|x| l.contains(x)),
                1 => !set.iter().any(|x| l.contains(x)),
                _ => set.iter().all(|x| l.contains(x)),
            },
            _ => false,
        },
        TP::SetStr(k, set) => match m.get("sl") {
            Some(TV::SL(l)) => match k {
                0 => set.iter().any(|x| l.contains(x)),
                1 => !set.iter().any(|x| l.contains(x)),
                _ => set.iter().all(|x| l.contains(x)),
            },
            _ => false,
        },
        TP::IsNull(a, neg) => m.contains_key(a) == *neg,
        TP::IsEmpty(a, neg) => match m.get(a) {
            Some(TV::IL(l)) => l.is_empty() != *neg,
            Some(TV::SL(l)) => l.is_empty() != *neg,
            Some(TV::Seg(l)) => l.is_empty() != *neg,
            Some(TV::Caps(l)) => l.is_empty() != *neg,
            _ => false,
        },
        // C's `segment_within`/`segment_before`: the first segment whose id
        // is not below the one sought decides (C expects ids ascending);
        // `now` is in seconds, the timestamp in µs.
        TP::Seg(before, explicit, id, span) => {
            let attr = if *explicit {
                "seg"
            } else {
                "segments_with_timestamp"
            };
            match (m.get(attr), int("now")) {
                (Some(TV::Seg(l)), Some(now)) => match l.iter().find(|(sid, _)| sid >= id) {
                    Some((sid, ts)) if sid == id => {
                        if *before {
                            now - span > secs(*ts)
                        } else {
                            now - span <= secs(*ts)
                        }
                    }
                    _ => false,
                },
                _ => false,
            }
        }
        // C's `within_frequency_caps`, behind `match_special_expr`'s early
        // true for an empty cap list (before `now` is even read).
        TP::Freq(kind, ns, v, len) => {
            let id = if kind.starts_with("flight") {
                FLIGHT_ID
            } else {
                CAMPAIGN_ID
            };
            match (m.get("frequency_caps"), int("now")) {
                (Some(TV::Caps(caps)), _) if caps.is_empty() => true,
                (Some(TV::Caps(caps)), Some(now)) => {
                    match caps
                        .iter()
                        .find(|c| c.kind == *kind && c.id == id && c.namespace == *ns)
                    {
                        None => true,
                        Some(c) if *len == 0 => *v > c.value,
                        Some(c) => match c.timestamp {
                            None => true,
                            Some(ts) => now - secs(ts) > *len || *v > c.value,
                        },
                    }
                }
                _ => false,
            }
        }
        TP::Geo(la, lo, km) => match (m.get("latitude"), m.get("longitude")) {
            (Some(TV::F(a)), Some(TV::F(o))) => c_distance_km(*la, *lo, *a, *o) <= *km,
            _ => false,
        },
        TP::StrFn(k, v) => s.is_some_and(|x| match k {
            0 => x.contains(v.as_str()),
            1 => x.starts_with(v.as_str()),
            _ => x.ends_with(v.as_str()),
        }),
    }
}

fn oracle(e: &TE, m: &Model) -> bool {
    match e {
        TE::Const(b) => *b,
        TE::Not(x) => !oracle(x, m),
        TE::And(a, b) => oracle(a, m) & oracle(b, m),
        TE::Or(a, b) => oracle(a, m) | oracle(b, m),
        TE::Leaf(p) => oracle_pred(p, m),
    }
}

fn gen_model(r: &mut fastrand::Rng) -> Model {
    let mut m = Model::new();
    let defined = |r: &mut fastrand::Rng| r.u32(0..5) != 0;
    m.insert("b0", TV::B(r.bool()));
    m.insert("longitude", TV::F(pick(r, &[0.0, 1.0])));
    if defined(r) {
        m.insert("b1", TV::B(r.bool()));
    }
    if defined(r) {
        m.insert("i", TV::I(small(r)));
    }
    if defined(r) {
        m.insert("e", TV::I(small(r)));
    }
    if defined(r) {
        m.insert("now", TV::I(pick(r, &NOWS)));
    }
    if defined(r) {
        m.insert("f", TV::F(pick(r, &FLOAT_VALS)));
    }
    if defined(r) {
        m.insert("s", TV::S(pick(r, &EVENT_WORDS).to_string()));
    }
    if defined(r) {
        let n = r.usize(0..4);
        m.insert("il", TV::IL((0..n).map(|_| small(r)).collect()));
    }
    if defined(r) {
        let n = r.usize(0..4);
        m.insert(
            "sl",
            TV::SL((0..n).map(|_| pick(r, &EVENT_WORDS).to_string()).collect()),
        );
    }
    for a in ["seg", "segments_with_timestamp"] {
        if defined(r) {
            let n = r.usize(0..3);
            m.insert(
                a,
                TV::Seg((0..n).map(|_| (r.i64(1..4), pick(r, &STAMPS))).collect()),
            );
        }
    }
    if defined(r) {
        let n = r.usize(0..3);
        m.insert(
            "frequency_caps",
            TV::Caps(
                (0..n)
                    .map(|_| FrequencyCap {
                        kind: pick(r, &["flight", "campaign", "flightip"]).to_string(),
                        id: pick(r, &[10, 11, 30]),
                        namespace: pick(r, &["ns", "x"]).to_string(),
                        value: r.i64(0..4),
                        timestamp: r.bool().then(|| pick(r, &STAMPS)),
                    })
                    .collect(),
            ),
        );
    }
    if defined(r) {
        m.insert("latitude", TV::F(pick(r, &[0.0, 1.0])));
    }
    m
}

fn to_event(schema: &Schema, m: &Model) -> Event {
    let mut b = EventBuilder::new(schema);
    for (k, v) in m {
        b = match v.clone() {
            TV::B(x) => b.bool(k, x),
            TV::I(x) => b.int(k, x),
            TV::F(x) => b.float(k, x),
            TV::S(x) => b.str(k, x),
            TV::IL(x) => b.int_list(k, x),
            TV::SL(x) => b.str_list(k, x),
            TV::Seg(x) => b.segments(k, x),
            TV::Caps(x) => b.frequency_caps(k, x),
        }
        .unwrap();
    }
    b.build()
}

fn check_all(
    index: &Index,
    exprs: &[(u64, TE)],
    models: &[Model],
    events: &[Event],
    max_budget: u64,
) {
    let batch = index.search_batch(events).unwrap();
    let mut lanes = Vec::new();
    index
        .search_batch_by(events, &mut lanes, BatchPath::Lanes)
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    // One scratch through every event, left each time by a search
    // abandoned part way, so that no state of one search leaks into the
    // next.
    let mut scratch = Scratch::default();
    for (k, (m, ev)) in models.iter().zip(events).enumerate() {
        let want: Vec<u64> = exprs
            .iter()
            .filter(|(_, e)| oracle(e, m))
            .map(|(id, _)| *id)
            .collect();
        let got = index.search(ev).unwrap();
        if got != want {
            for (id, e) in exprs {
                let w = oracle(e, m);
                let g = got.contains(id);
                assert_eq!(g, w, "expr {id}: {}\nevent {m:?}", render(e));
            }
        }
        assert_eq!(
            index.search_all(index.search_iter(ev).unwrap()),
            want,
            "search_all"
        );
        assert_eq!(batch[k], want, "search_batch");
        assert_eq!(lanes[k], want, "search_batch_by(Lanes)");
        let it = index.search_iter_in(ev, &mut scratch).unwrap();
        assert_eq!(
            index.search_all_in(it, &mut scratch),
            want,
            "search_all_in on a reused scratch"
        );
        let mut it = index.search_iter_in(ev, &mut scratch).unwrap();
        let _ = index.search_next(&mut it, 3);
        scratch = it.into_scratch();
        assert_eq!(
            rt.block_on(index.search_async(ev, 3)).unwrap(),
            want,
            "search_async"
        );
        for budget in (1..=max_budget).chain([1_000_000]) {
            let (ids, _) = stepped(index, ev, budget);
            assert_eq!(ids, want, "search_next budget {budget}");
        }
        // A search started step by step and finished in one go.
        let mut it = index.search_iter(ev).unwrap();
        match index.search_next(&mut it, 5) {
            SearchStep::Done(ids) => assert_eq!(ids, want),
            SearchStep::Continue => {
                let _ = index.search_next(&mut it, 7);
                assert_eq!(index.search_all(it), want, "search_next then search_all");
            }
        }
    }
}

fn scenario(seed: u64, n_exprs: usize, n_events: usize, max_budget: u64) {
    let mut r = fastrand::Rng::with_seed(seed);
    let schema = schema();
    let consts = consts();
    let mut index = Index::new(schema.clone());
    let mut exprs = Vec::new();
    for id in 1..=n_exprs as u64 {
        let e = gen_expr(&mut r, 4);
        // Ids are inserted out of order so sorting is exercised.
        let id = id * 7 % 1009;
        index
            .insert_with(id, &render(&e), &consts)
            .unwrap_or_else(|err| panic!("{err}: {}", render(&e)));
        exprs.push((id, e));
    }
    exprs.sort_by_key(|(id, _)| *id);
    let models: Vec<Model> = (0..n_events).map(|_| gen_model(&mut r)).collect();
    let events: Vec<Event> = models.iter().map(|m| to_event(&schema, m)).collect();
    check_all(&index, &exprs, &models, &events, max_budget);

    // Delete a random half, check, re-insert some under new ids, check.
    let mut kept = Vec::new();
    for (id, e) in exprs {
        if r.bool() {
            index.delete(id).unwrap();
            assert!(!index.contains(id));
        } else {
            kept.push((id, e));
        }
    }
    check_all(&index, &kept, &models, &events, max_budget.min(8));
    for id in 2000..2000 + n_exprs as u64 / 2 {
        let e = gen_expr(&mut r, 3);
        index.insert_with(id, &render(&e), &consts).unwrap();
        kept.push((id, e));
    }
    assert_eq!(index.len(), kept.len());
    check_all(&index, &kept, &models, &events, 4);
}

#[test]
fn oracle_agrees_on_fixed_seeds() {
    for seed in 0..6 {
        scenario(seed, 60, 70, 40);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn oracle_agrees_on_random_seeds(seed in any::<u64>()) {
        scenario(seed, 40, 20, 12);
    }
}

/// `parts` joined by `and` (`or` unless) as a balanced tree, so that
/// hundreds of them stay far below the depth limit.
fn balanced(parts: &[TE], and: bool) -> TE {
    if parts.len() == 1 {
        return parts[0].clone();
    }
    let (l, r) = parts.split_at(parts.len() / 2);
    let (l, r) = (Box::new(balanced(l, and)), Box::new(balanced(r, and)));
    if and { TE::And(l, r) } else { TE::Or(l, r) }
}

/// Expressions over 16 KiB of text keep their atoms to themselves and
/// register only their top-level conjuncts; beside small expressions
/// sharing their predicates (the generator's pools are small), and
/// through deletes and re-inserts, every search mode still agrees with
/// the oracle.
#[test]
fn large_expressions_agree_with_oracle() {
    let mut r = fastrand::Rng::with_seed(18);
    let schema = schema();
    let consts = consts();
    let mut index = Index::new(schema.clone());
    let mut exprs = Vec::new();
    let large = |r: &mut fastrand::Rng| {
        // A few top-level conjuncts (some of them posted) and a long
        // `or` of random subexpressions.
        let (mut alts, mut len) = (Vec::new(), 0);
        while len <= 17 << 10 {
            let e = gen_expr(r, 3);
            len += render(&e).len();
            alts.push(e);
        }
        let mut conj: Vec<TE> = (0..r.usize(0..3)).map(|_| TE::Leaf(gen_pred(r))).collect();
        conj.push(balanced(&alts, false));
        balanced(&conj, true)
    };
    for id in 1..=40u64 {
        let e = if id % 5 == 0 {
            large(&mut r)
        } else {
            gen_expr(&mut r, 4)
        };
        let text = render(&e);
        assert_eq!(text.len() > 16 << 10, id % 5 == 0);
        index
            .insert_with(id, &text, &consts)
            .unwrap_or_else(|err| panic!("{err}: {text}"));
        exprs.push((id, e));
    }
    let models: Vec<Model> = (0..24).map(|_| gen_model(&mut r)).collect();
    let events: Vec<Event> = models.iter().map(|m| to_event(&schema, m)).collect();
    check_all(&index, &exprs, &models, &events, 3);
    let mut kept = Vec::new();
    for (id, e) in exprs {
        if r.bool() {
            index.delete(id).unwrap();
        } else {
            kept.push((id, e));
        }
    }
    for id in 100..110u64 {
        let e = if id % 2 == 0 {
            large(&mut r)
        } else {
            gen_expr(&mut r, 3)
        };
        index.insert_with(id, &render(&e), &consts).unwrap();
        kept.push((id, e));
    }
    check_all(&index, &kept, &models, &events, 2);
}

#[test]
fn reference_workload_agrees_with_oracle() {
    // The benchmark's shape: every expression uses every parameter once.
    let params = 16;
    let texts = betree::reference::random_expressions(params, 300, 7);
    let evs = betree::reference::random_events(params, 100, 8);
    let schema = Schema::boolean_params(params);
    let mut index = Index::new(schema.clone());
    for (i, t) in texts.iter().enumerate() {
        index.insert(i as u64 + 1, t).unwrap();
    }
    let events: Vec<Event> = evs
        .iter()
        .map(|v| Event::from_bools(&schema, v).unwrap())
        .collect();
    let batch = index.search_batch(&events).unwrap();
    for (k, (vals, ev)) in evs.iter().zip(&events).enumerate() {
        // Independent evaluation: substitute the values and evaluate the text
        // with a tiny recursive-descent evaluator written here.
        let want: Vec<u64> = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| eval(t, vals))
            .map(|(i, _)| i as u64 + 1)
            .collect();
        assert_eq!(index.search(ev).unwrap(), want);
        assert_eq!(batch[k], want);
    }
}

#[test]
fn missing_disallow_undefined_attribute_is_an_error() {
    let schema = schema();
    let mut index = Index::new(schema.clone());
    index.insert(1, "b0").unwrap();
    let ev = EventBuilder::new(&schema).bool("b0", true).unwrap().build();
    assert_eq!(
        index.search(&ev).unwrap_err().to_string(),
        "event lacks attribute `longitude`, which is declared disallow-undefined"
    );
    assert!(index.search_iter(&ev).is_err());
    assert!(index.search_batch(&[ev]).is_err());
}

#[test]
fn batch_spans_several_lane_groups() {
    // More events than one pass of the batch search holds, and a partial last
    // pass; some expressions in partitions (a bare conjunct), some not.
    let params = 12;
    let mut texts = betree::reference::random_expressions(params, 30, 11);
    texts.push("par3 and (par1 or not par2)".into());
    texts.push("par5 and par5".into());
    let evs = betree::reference::random_events(params, 1100, 12);
    let schema = Schema::boolean_params(params);
    let mut index = Index::new(schema.clone());
    for (i, t) in texts.iter().enumerate() {
        index.insert(i as u64 + 1, t).unwrap();
    }
    let events: Vec<Event> = evs
        .iter()
        .map(|v| Event::from_bools(&schema, v).unwrap())
        .collect();
    let batch = index.search_batch(&events).unwrap();
    assert_eq!(batch.len(), events.len());
    for (k, vals) in evs.iter().enumerate() {
        let want: Vec<u64> = texts
            .iter()
            .enumerate()
            .filter(|(_, t)| eval(t, vals))
            .map(|(i, _)| i as u64 + 1)
            .collect();
        assert_eq!(batch[k], want, "event {k}");
    }
}

/// The C library's answers on hand-picked events, each case citing the C
/// behaviour it pins (adgear/be-tree `ast.c` match functions, `special.c`,
/// `utils.c`). Every mode must give them.
#[test]
fn c_library_semantics_by_example() {
    let schema = schema();
    let consts = consts();
    let cap = |value: i64, ts: &str| {
        format!(
            r#""frequency_caps": [{{"type": "flight", "id": 10, "namespace": "ns", "value": {value}, "timestamp": {ts}}}]"#
        )
    };
    let cases: Vec<(&str, String, bool)> = vec![
        // within_frequency_caps: a length and no timestamp holds, whatever
        // the counter.
        (
            r#"within_frequency_cap("flight", "ns", 1, 20)"#,
            format!(r#"{}, "now": 0"#, cap(5, "null")),
            true,
        ),
        // No length: the counter must be below the value.
        (
            r#"within_frequency_cap("flight", "ns", 1, 0)"#,
            format!(r#"{}, "now": 0"#, cap(1, "null")),
            false,
        ),
        (
            r#"within_frequency_cap("flight", "ns", 1, 0)"#,
            format!(r#"{}, "now": 0"#, cap(0, "null")),
            true,
        ),
        // `now` in seconds, the timestamp in µs: 30 - 5 > 20, expired.
        (
            r#"within_frequency_cap("flight", "ns", 1, 20)"#,
            format!(r#"{}, "now": 30"#, cap(5, "5000000")),
            true,
        ),
        // 30 - 5 > 25 fails, and the counter 5 is not below 1.
        (
            r#"within_frequency_cap("flight", "ns", 1, 25)"#,
            format!(r#"{}, "now": 30"#, cap(5, "5000000")),
            false,
        ),
        // An empty cap list is true before `now` is read.
        (
            r#"within_frequency_cap("flight", "ns", 1, 20)"#,
            r#""frequency_caps": []"#.to_string(),
            true,
        ),
        // A non-empty one needs `now`.
        (
            r#"within_frequency_cap("flight", "ns", 1, 20)"#,
            cap(0, "null"),
            false,
        ),
        // segment_within: now - seconds <= ts / 10^6 (20 <= 20).
        (
            "segment_within(seg, 1, 10)",
            r#""seg": [[1, 20000000]], "now": 30"#.to_string(),
            true,
        ),
        // 19_999_999 µs truncates to 19 s.
        (
            "segment_within(seg, 1, 10)",
            r#""seg": [[1, 19999999]], "now": 30"#.to_string(),
            false,
        ),
        (
            "segment_before(seg, 1, 10)",
            r#""seg": [[1, 19999999]], "now": 30"#.to_string(),
            true,
        ),
        // Truncation toward zero: -1.5 s is -1 s, and 10 - 11 <= -1.
        (
            "segment_within(seg, 1, 11)",
            r#""seg": [[1, -1500000]], "now": 10"#.to_string(),
            true,
        ),
        // C stops at the first id not below the one sought.
        (
            "segment_within(seg, 1, 0)",
            r#""seg": [[2, 0], [1, 30000000]], "now": 30"#.to_string(),
            false,
        ),
        // feq: |a - b| < DBL_EPSILON.
        ("f = 0.3", r#""f": 0.30000000000000004"#.to_string(), true),
        ("f <> 0.3", r#""f": 0.30000000000000004"#.to_string(), false),
        ("f > 0.3", r#""f": 0.30000000000000004"#.to_string(), true),
        // geo_within_radius on a 6372.8 km sphere: one degree is 111.226 km.
        (
            "geo_within_radius(0, 0, 111.21)",
            r#""latitude": 0.0"#.to_string(),
            false,
        ),
        (
            "geo_within_radius(0, 0, 111.23)",
            r#""latitude": 0.0"#.to_string(),
            true,
        ),
        // Event lists are sets (sort_event_lists removes duplicates).
        ("il all of (1, 2)", r#""il": [2, 1, 2]"#.to_string(), true),
        (
            "il all of (1, 2, 3)",
            r#""il": [2, 1, 2]"#.to_string(),
            false,
        ),
        (r#""a" in sl"#, r#""sl": ["b", "a"]"#.to_string(), true),
        // On an undefined attribute every predicate is false, negated
        // forms included; `not` turns it true.
        ("not (i = 1)", String::new(), true),
        ("i not in (1)", String::new(), false),
        ("il none of (1)", String::new(), false),
        ("1 not in il", String::new(), false),
        ("not b1", String::new(), true),
        // strstr/strncmp: the empty pattern is found everywhere.
        (r#"contains(s, "")"#, r#""s": """#.to_string(), true),
        (r#"starts_with(s, "ab")"#, r#""s": "a""#.to_string(), false),
        (r#"ends_with(s, "ba")"#, r#""s": "aba""#.to_string(), true),
    ];
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    for (expr, fields, want) in cases {
        let mut index = Index::new(schema.clone());
        index
            .insert_with(7, expr, &consts)
            .unwrap_or_else(|e| panic!("{expr}: {e}"));
        let sep = if fields.is_empty() { "" } else { ", " };
        let json = format!(r#"{{"b0": true, "longitude": 1.0{sep}{fields}}}"#);
        let ev = Event::from_json(&schema, &json).unwrap_or_else(|e| panic!("{json}: {e}"));
        let want: Vec<u64> = if want { vec![7] } else { vec![] };
        assert_eq!(index.search(&ev).unwrap(), want, "{expr} on {json}");
        assert_eq!(
            index.search_batch(std::slice::from_ref(&ev)).unwrap()[0],
            want,
            "batch: {expr} on {json}"
        );
        assert_eq!(
            rt.block_on(index.search_async(&ev, 1)).unwrap(),
            want,
            "async: {expr} on {json}"
        );
    }
}

/// Runs `search_next` with `budget` to the end; returns the ids and the
/// reductions of each call, checking each call against the documented
/// bound: at most `budget - 1 + max_overrun()`.
fn stepped(index: &Index, ev: &Event, budget: u64) -> (Vec<u64>, Vec<u64>) {
    let mut it = index.search_iter(ev).unwrap();
    let bound = (budget.max(1) - 1).saturating_add(it.max_overrun());
    let mut per_call = Vec::new();
    loop {
        let before = it.reductions();
        let step = index.search_next(&mut it, budget);
        let spent = it.reductions() - before;
        assert!(
            spent <= bound,
            "a call with budget {budget} spent {spent}, bound {bound}"
        );
        per_call.push(spent);
        assert!(per_call.len() < 1_000_000, "search_next does not terminate");
        if let SearchStep::Done(ids) = step {
            return (ids, per_call);
        }
    }
}

#[test]
fn every_budget_up_to_the_whole_search_gives_the_same_ids() {
    let mut r = fastrand::Rng::with_seed(99);
    let schema = schema();
    let consts = consts();
    let mut index = Index::new(schema.clone());
    let mut exprs = Vec::new();
    for id in 1..=24u64 {
        let e = gen_expr(&mut r, 4);
        index.insert_with(id, &render(&e), &consts).unwrap();
        exprs.push((id, e));
    }
    // Some expressions share an equality conjunct's attribute, so
    // selection has lists to merge.
    for (id, t) in [(30, "b1 and i = 1"), (31, "b1 and i = 2"), (32, "b1")] {
        index.insert(id, t).unwrap();
    }
    let mut max_used = 0;
    for _ in 0..6 {
        let m = gen_model(&mut r);
        let ev = to_event(&schema, &m);
        let (want, calls) = stepped(&index, &ev, u64::MAX);
        assert_eq!(calls.len(), 1);
        let total = calls[0];
        let mut oracle_ids: Vec<u64> = exprs
            .iter()
            .filter(|(_, e)| oracle(e, &m))
            .map(|(id, _)| *id)
            .collect();
        // Expressions 30-32, decided from the model (an undefined `b1` or
        // `i` makes each predicate false).
        let b1 = matches!(m.get("b1"), Some(TV::B(true)));
        let i_is = |v: i64| matches!(m.get("i"), Some(TV::I(x)) if *x == v);
        for (id, holds) in [(30, b1 && i_is(1)), (31, b1 && i_is(2)), (32, b1)] {
            if holds {
                oracle_ids.push(id);
            }
        }
        assert_eq!(want, oracle_ids);
        for budget in 0..=total + 1 {
            let (ids, calls) = stepped(&index, &ev, budget);
            assert_eq!(ids, want, "budget {budget}");
            // The budget decides where the search pauses, not what it does.
            assert_eq!(calls.iter().sum::<u64>(), total, "budget {budget}");
            let over = calls.iter().max().unwrap().saturating_sub(budget.max(1));
            max_used = max_used.max(over);
        }
    }
    // The bound is not vacuous: some step did overrun.
    assert!(max_used > 0);
}

#[test]
fn and_or_not_nodes_are_counted() {
    let schema = Schema::boolean_params(3);
    let ev = Event::from_bools(&schema, &[true, true, false]).unwrap();
    let total = |text: &str| {
        let mut index = Index::new(schema.clone());
        index.insert(1, text).unwrap();
        let (_, calls) = stepped(&index, &ev, u64::MAX);
        calls[0]
    };
    // A `not` of a node posts nothing. Selection: the root, then one
    // candidate copied from the scan list. Evaluation: one candidate
    // taken, the leaf (node and test), the nots.
    assert_eq!(total("not (not (not par3))"), 2 + 1 + 2 + 3);
    // `not par3` evaluated so, from the scan list.
    let scanned_not = 2 + 1 + 2 + 1;
    // A top-level `not par3` is gated under par3, killed when par3 is
    // true: the root, one value probed (par3, false: no kill), one gated
    // entry; one candidate taken, which not being killed proved.
    assert_eq!(total("not par3"), 1 + 1 + 1 + 1);
    // `or` entered at its first operand; par3 is false, so par1 is tested.
    assert_eq!(total("par3 or par1"), 2 + 1 + (2 + 1) + 2);
    // `par1 and par2` posts both conjuncts: the root, two values probed,
    // two terms taken with one posting entry each (the second completes
    // the count); then one candidate taken, which the count proved: its
    // conjuncts are not tested again.
    assert_eq!(total("par1 and par2"), 1 + 2 + (2 + 2) + 1);
    // `par1 and not par3` counts par1 and gates on par3 (two values
    // probed, one term taken, one posting entry): both conjuncts are
    // proven, so the candidate is taken and not evaluated.
    assert_eq!(total("par1 and not par3"), 1 + 2 + (1 + 1) + 1);
    // A bare `par3` is posted under par3, which is false: selection alone
    // (the root, one value probed) decides.
    assert_eq!(total("par3"), 2);
    // Constants are folded at compile time and cost nothing, but the
    // `and`/`or` above one is still entered...
    assert_eq!(total("not par3 or false"), scanned_not + 1);
    assert_eq!(total("not (par3 and true)"), scanned_not + 1);
    // ...unless the constant decides it: then no step is left at all.
    assert_eq!(total("not par3 or true"), 2 + 1);
}

#[test]
fn search_async_yields_while_it_searches() {
    use std::future::Future;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::task::{Context, Poll};

    let params = 32;
    let schema = Schema::boolean_params(params);
    let mut index = Index::new(schema.clone());
    for (i, t) in betree::reference::random_expressions(params, 400, 5)
        .iter()
        .enumerate()
    {
        index.insert(i as u64 + 1, t).unwrap();
    }
    let ev =
        Event::from_bools(&schema, &betree::reference::random_events(params, 1, 6)[0]).unwrap();
    let want = index.search(&ev).unwrap();
    let budget = 64;
    let (_, calls) = stepped(&index, &ev, budget);
    assert!(
        calls.len() > 50,
        "the search takes many steps, not {}",
        calls.len()
    );

    /// Counts how often the wrapped future returns `Pending`.
    struct CountPending<F> {
        inner: std::pin::Pin<Box<F>>,
        pending: u64,
    }
    impl<F: Future> Future for CountPending<F> {
        type Output = (F::Output, u64);
        fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            match self.inner.as_mut().poll(cx) {
                Poll::Ready(v) => Poll::Ready((v, self.pending)),
                Poll::Pending => {
                    self.pending += 1;
                    Poll::Pending
                }
            }
        }
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let ticks = Arc::new(AtomicU64::new(0));
    let (ids, pending, ticked) = rt.block_on(async {
        // On a one-thread runtime this task runs only when the search yields.
        let t = Arc::clone(&ticks);
        let counter = tokio::spawn(async move {
            loop {
                t.fetch_add(1, Ordering::Relaxed);
                tokio::task::yield_now().await;
            }
        });
        let (ids, pending) = CountPending {
            inner: Box::pin(index.search_async(&ev, budget)),
            pending: 0,
        }
        .await;
        let ticked = ticks.load(Ordering::Relaxed);
        counter.abort();
        (ids.unwrap(), pending, ticked)
    });
    assert_eq!(ids, want);
    // One yield between two steps.
    assert_eq!(pending, calls.len() as u64 - 1);
    assert!(
        ticked >= pending / 2,
        "the other task ran {ticked} times during {pending} yields"
    );
}

#[test]
fn selection_counts_conjuncts_in_budgeted_steps() {
    // Odd ids post `i = v` and `b` (both needed), even ids post `s = w`
    // and `not b` (killed when `b` is true): an event's values hit a few
    // postings of `i` and `s` and every posting of `b`. Three values of
    // `i` keep each of its postings within 16 times `b`'s, so both are
    // counted (see `conjuncts_on_common_values_are_checked_not_counted`).
    let schema = Schema::from_domains([
        Domain::new("i", AttrType::Int, true),
        Domain::new("s", AttrType::Str, true),
        Domain::new("b", AttrType::Bool, true),
    ])
    .unwrap();
    let mut index = Index::new(schema.clone());
    for k in 0..60i64 {
        // Ids interleave the two partitions.
        index
            .insert(2 * k as u64 + 1, &format!("i = {} and b", k % 3))
            .unwrap();
        index
            .insert(2 * k as u64 + 2, &format!("s = \"w{}\" and not b", k % 15))
            .unwrap();
    }
    for (i, s, b) in [(0, "w4", true), (1, "w7", false), (2, "nope", true)] {
        let ev = EventBuilder::new(&schema)
            .int("i", i)
            .unwrap()
            .str("s", s)
            .unwrap()
            .bool("b", b)
            .unwrap()
            .build();
        // Brute force: every expression text evaluated on the values.
        let want: Vec<u64> = (0..60i64)
            .flat_map(|k| {
                let a = (k % 3 == i && b).then_some(2 * k as u64 + 1);
                let c = (format!("w{}", k % 15) == s && !b).then_some(2 * k as u64 + 2);
                [a, c]
            })
            .flatten()
            .collect();
        assert_eq!(index.search(&ev).unwrap(), want);
        for budget in [1, 2, 3, 5, 1000] {
            let (ids, _) = stepped(&index, &ev, budget);
            assert_eq!(ids, want, "budget {budget}");
        }
        // With budget 1 selection shows, one reduction per call: the root,
        // the one string numbered, three values probed, one per expression killed (the 60 with
        // `not b` when `b` is true), then per term hit one for taking it
        // and one per posting entry; candidates appear one at a time, when
        // an expression's count completes (a killed one never does).
        let kills = if b { 60 } else { 0 };
        let units = 1
            + 1
            + 3
            + kills
            + (1 + 20)
            + if s == "nope" { 0 } else { 1 + 4 }
            + if b { 1 + 60 } else { 0 };
        let expect = if s == "nope" || b { 0 } else { 4 } + if b { 20 } else { 0 };
        let mut it = index.search_iter(&ev).unwrap();
        let mut last = 0;
        while it.reductions() < units {
            let before = it.reductions();
            assert_eq!(index.search_next(&mut it, 1), SearchStep::Continue);
            assert_eq!(it.reductions(), before + 1);
            assert!(it.candidates() - last <= 1);
            last = it.candidates();
        }
        assert_eq!(it.candidates(), expect);
    }
}

#[test]
fn conjuncts_on_common_values_are_checked_not_counted() {
    // Each expression pairs a value of `i` no other one names with `b`,
    // which all of them name: `b`'s posting would hold 200 entries, each
    // walked by every event with `b` true. Once it holds more than 16
    // times the entries of `i = k`'s (empty, counted as one), later
    // expressions count `i = k` alone, and the selection checks `b` for
    // those whose count completes. The oracle: `i = k and b` holds for
    // the one expression naming `i`'s value, when `b` is true.
    let schema = Schema::from_domains([
        Domain::new("i", AttrType::Int, true),
        Domain::new("b", AttrType::Bool, true),
    ])
    .unwrap();
    let mut index = Index::new(schema.clone());
    for k in 0..200u64 {
        index.insert(k + 1, &format!("i = {k} and b")).unwrap();
    }
    for (i, b) in [
        (5, true),
        (150, true),
        (150, false),
        (5, false),
        (999, true),
    ] {
        let ev = EventBuilder::new(&schema)
            .int("i", i)
            .unwrap()
            .bool("b", b)
            .unwrap()
            .build();
        let want: Vec<u64> = if b && i < 200 {
            vec![i as u64 + 1]
        } else {
            vec![]
        };
        assert_eq!(index.search(&ev).unwrap(), want, "i = {i}, b = {b}");
        assert_eq!(
            index.search_batch(std::slice::from_ref(&ev)).unwrap(),
            std::slice::from_ref(&want)
        );
        let (ids, calls) = stepped(&index, &ev, u64::MAX);
        assert_eq!(ids, want);
        // The root, two values probed, `i`'s posting (a term and its
        // entry), with `b` true the 17 entries `b` kept, a check and the
        // candidate's evaluation: far below `b`'s 200 entries.
        let spent: u64 = calls.iter().sum();
        assert!(spent < 40, "i = {i}, b = {b}: {spent} reductions");
    }
}

/// Hand-made files in erl-be-tree's test layouts (a `~p`-printed domain
/// list and `<<"...">>.` expressions; events as `[false,true,...].`, as in
/// its `test/Params_10_Events_20.txt`): read, searched in every mode, and
/// checked against the text evaluator.
#[test]
fn erl_be_tree_format_fixtures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let text = std::fs::read_to_string(dir.join("params_10_exprs_40.txt")).unwrap();
    let file = betree::reference::read_expr_file(&text).unwrap();
    assert_eq!(file.domains, betree::reference::params_domains(10));
    assert_eq!(file.exprs.len(), 40);
    // The writer reproduces the layout byte for byte.
    assert_eq!(
        betree::reference::write_expr_file(&file.domains, &file.exprs),
        text
    );
    let evs = betree::reference::read_event_file(
        &std::fs::read_to_string(dir.join("params_10_events_20.txt")).unwrap(),
    )
    .unwrap();
    assert_eq!(evs.len(), 20);
    let schema = Schema::from_domains(file.domains).unwrap();
    let mut index = Index::new(schema.clone());
    for (i, e) in file.exprs.iter().enumerate() {
        index.insert(i as u64 + 1, e).unwrap();
    }
    let events: Vec<Event> = evs
        .iter()
        .map(|v| Event::from_bools(&schema, v).unwrap())
        .collect();
    let batch = index.search_batch(&events).unwrap();
    let mut matched = 0;
    for (k, (vals, ev)) in evs.iter().zip(&events).enumerate() {
        let want: Vec<u64> = file
            .exprs
            .iter()
            .enumerate()
            .filter(|(_, t)| eval(t, vals))
            .map(|(i, _)| i as u64 + 1)
            .collect();
        matched += want.len();
        assert_eq!(index.search(ev).unwrap(), want, "event {k}");
        assert_eq!(batch[k], want, "batch, event {k}");
        assert_eq!(index.search_all(index.search_iter(ev).unwrap()), want);
        for budget in [1, 7, 100] {
            assert_eq!(stepped(&index, ev, budget).0, want, "budget {budget}");
        }
    }
    assert!(matched > 0 && matched < 40 * 20);
}
