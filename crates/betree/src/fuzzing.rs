//! Bodies of the fuzz targets (`crates/betree/fuzz`), kept in the library so
//! that `cargo test` runs them over the seed inputs too.

use std::sync::OnceLock;

use crate::coop::SearchStep;
use crate::domain::{AttrId, AttrType, Bounds, Domain, Schema, domains_from_json};
use crate::event::{Event, FrequencyCap, Value};
use crate::expr::Constants;
use crate::index::Index;
use crate::reference;

/// A schema with every attribute type, shared by the expression and JSON
/// event targets.
pub fn schema() -> &'static Schema {
    static S: OnceLock<Schema> = OnceLock::new();
    S.get_or_init(|| {
        Schema::from_domains([
            Domain::new("b", AttrType::Bool, false),
            Domain::new("i", AttrType::Int, true),
            Domain::new("e", AttrType::IntEnum, true).with_bounds(Bounds::Int(0, 10)),
            Domain::new("f", AttrType::Float, true),
            Domain::new("s", AttrType::Str, true),
            Domain::new("il", AttrType::IntList, true),
            Domain::new("sl", AttrType::StrList, true),
            Domain::new("seg", AttrType::Segments, true),
            Domain::new("frequency_caps", AttrType::FrequencyCaps, true),
            Domain::new("now", AttrType::Int, true),
            Domain::new("latitude", AttrType::Float, true),
            Domain::new("longitude", AttrType::Float, true),
        ])
        .expect("fixed schema is valid")
    })
}

/// Parses, checks, inserts and searches an arbitrary expression, on an
/// event with only the required boolean defined and on one with every
/// attribute defined (values drawn from the input's hash, so each input
/// meets its own event); every search mode must agree.
pub fn expression(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let schema = schema();
    let mut index = Index::new(schema.clone());
    let consts = Constants {
        flight_id: Some(10),
        advertiser_id: Some(20),
        campaign_id: Some(30),
        product_id: Some(40),
    };
    if index.insert_with(1, text, &consts).is_ok() {
        let mut sparse = Event::empty(schema);
        sparse
            .set(schema, 0, Value::Bool(true))
            .expect("`b` is a boolean of this schema");
        let full = full_event(data);
        let events = [sparse, full];
        let batch = index.search_batch(&events).expect("valid events");
        let mut lanes = Vec::new();
        index
            .search_batch_by(&events, &mut lanes, crate::BatchPath::Lanes)
            .expect("valid events");
        assert_eq!(lanes, batch, "the two batch paths disagree on {text:?}");
        for (ev, b) in events.iter().zip(batch) {
            let a = index
                .search(ev)
                .expect("event defines every required attribute");
            assert_eq!(a, b, "search and search_batch disagree on {text:?}");
            let it = index.search_iter(ev).expect("valid event");
            assert_eq!(index.search_all(it), a, "search_all on {text:?}");
            let mut it = index.search_iter(ev).expect("valid event");
            let bound = it.max_overrun() + 2;
            let ids = loop {
                let before = it.reductions();
                let step = index.search_next(&mut it, 3);
                assert!(it.reductions() - before <= bound, "overrun on {text:?}");
                if let SearchStep::Done(ids) = step {
                    break ids;
                }
            };
            assert_eq!(ids, a, "search_next on {text:?}");
        }
        index.delete(1).expect("just inserted");
    }
}

/// An event defining every attribute of [`schema`], with values picked from
/// small pools (so that expressions have a fair chance to match) by a
/// generator seeded from `data`.
fn full_event(data: &[u8]) -> Event {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    data.hash(&mut h);
    let mut r = fastrand::Rng::with_seed(h.finish());
    let words = ["", "a", "b", "ab", "ns", "flight"];
    let word = |r: &mut fastrand::Rng| words[r.usize(0..words.len())].to_string();
    let schema = schema();
    let mut ev = Event::empty(schema);
    let ints: Vec<i64> = (0..r.usize(0..5)).map(|_| r.i64(-3..12)).collect();
    let strs: Vec<String> = (0..r.usize(0..5)).map(|_| word(&mut r)).collect();
    let segs: Vec<(i64, i64)> = (0..r.usize(0..4))
        .map(|_| (r.i64(0..5), r.i64(-2_000_000..40_000_000)))
        .collect();
    let caps: Vec<FrequencyCap> = (0..r.usize(0..4))
        .map(|_| FrequencyCap {
            kind: ["flight", "campaign", "flightip", "product"][r.usize(0..4)].into(),
            id: [10, 20, 30, 40][r.usize(0..4)],
            namespace: word(&mut r),
            value: r.i64(0..5),
            timestamp: r.bool().then(|| r.i64(-2_000_000..40_000_000)),
        })
        .collect();
    let values = [
        Value::Bool(r.bool()),
        Value::Int(r.i64(-3..12)),
        Value::Int(r.i64(0..=10)),
        Value::Float([0.0, 0.5, 1.5, -2.0, 0.1 + 0.2][r.usize(0..5)]),
        Value::Str(word(&mut r)),
        Value::IntList(ints),
        Value::StrList(strs),
        Value::Segments(segs),
        Value::FrequencyCaps(caps),
        Value::Int(r.i64(0..40)),
        Value::Float(r.f64() * 2.0 - 1.0),
        Value::Float(r.f64() * 2.0 - 1.0),
    ];
    for (id, v) in values.into_iter().enumerate() {
        ev.set(schema, id as AttrId, v)
            .expect("values fit the fixed schema");
    }
    ev
}

/// Reads an arbitrary JSON event: the direct reader ([`Event::from_json`],
/// and [`Event::set_json`] into an event that held another one) must give
/// what the general reader, through a tree of JSON values, gives: the
/// same event or the same error.
pub fn json_event(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let schema = schema();
    let general = Event::from_json_tree(schema, text);
    assert_eq!(
        Event::from_json(schema, text),
        general,
        "from_json on {text:?}"
    );
    let mut reused = full_event(data);
    let set = reused.set_json(schema, text);
    match general {
        Ok(ev) => assert_eq!((set, reused), (Ok(()), ev), "set_json on {text:?}"),
        Err(e) => {
            assert_eq!(set, Err(e), "set_json on {text:?}");
            assert_eq!(
                reused,
                Event::empty(schema),
                "set_json left {text:?} behind"
            );
        }
    }
}

/// Reads an arbitrary reference expression file; what reads must write back
/// to a file that reads the same, and build an index when its domains form
/// a schema.
pub fn expr_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(file) = reference::read_expr_file(text) else {
        return;
    };
    let again = reference::read_expr_file(&reference::write_expr_file(&file.domains, &file.exprs))
        .expect("a written expression file reads back");
    assert_eq!(again, file, "expression file round trip");
    if let Ok(schema) = Schema::from_domains(file.domains) {
        let mut index = Index::new(schema);
        for (i, e) in file.exprs.iter().enumerate() {
            let _ = index.insert(i as u64 + 1, e);
        }
    }
}

/// Reads an arbitrary reference event file; what reads must write back to
/// a file that reads the same, and reading it a term at a time through
/// [`reference::EventStream`] must accept exactly what the whole-text
/// reader accepts, with the same events.
pub fn event_file(data: &[u8]) {
    let mut stream = reference::EventStream::new(std::io::BufReader::with_capacity(5, data));
    let mut streamed = Vec::new();
    let streamed = loop {
        match stream.next_event() {
            Ok(Some((_, e))) => streamed.push(e),
            Ok(None) => break Ok(streamed),
            Err(e) => break Err(e),
        }
    };
    let Ok(text) = std::str::from_utf8(data) else {
        assert!(streamed.is_err(), "the stream accepted non-UTF-8 text");
        return;
    };
    let whole = reference::read_event_file(text);
    assert_eq!(
        whole.as_ref().ok(),
        streamed.as_ref().ok(),
        "streamed and whole-text reads disagree"
    );
    if let Ok(events) = whole {
        let again = reference::read_event_file(&reference::write_event_file(&events))
            .expect("a written event file reads back");
        assert_eq!(again, events, "event file round trip");
    }
}

/// Reads an arbitrary JSON domain file; domains it accepts must survive the
/// trip through the Erlang domain list.
pub fn json_domains(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(domains) = domains_from_json(text) {
        let file = reference::read_expr_file(&reference::write_expr_file(&domains, &[]))
            .expect("written domains read back");
        assert_eq!(
            file.domains, domains,
            "JSON domains through the Erlang list"
        );
        let _ = Schema::from_domains(domains);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_do_not_panic() {
        type Target = (&'static str, fn(&[u8]));
        let targets: [Target; 5] = [
            ("expr", super::expression),
            ("json_event", super::json_event),
            ("expr_file", super::expr_file),
            ("event_file", super::event_file),
            ("json_domains", super::json_domains),
        ];
        for (dir, target) in targets {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fuzz/seeds")
                .join(dir);
            let mut n = 0;
            for entry in std::fs::read_dir(&path).expect("seed directory") {
                let data = std::fs::read(entry.expect("entry").path()).expect("seed");
                target(&data);
                n += 1;
            }
            assert!(n > 0, "{dir} has seeds");
        }
        // Some hostile shapes.
        super::expression("((((((((((".repeat(100).as_bytes());
        super::expression("not ".repeat(10_000).as_bytes());
        super::expression(b"\"\\");
        super::json_event(b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
        super::expr_file("[".repeat(10_000).as_bytes());
        super::expr_file(
            b"[{'Par 1',bool,allow_undefined},{x,float,allow_undefined,1.0e300,1.0e301}].",
        );
        super::event_file("[".repeat(10_000).as_bytes());
        super::json_domains("[".repeat(10_000).as_bytes());
        super::json_domains(
            br#"[{"name": "It's", "type": "float", "allow_undefined": true, "min": 1e300, "max": 2e300}]"#,
        );
    }
}
