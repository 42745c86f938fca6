//! Bodies of the fuzz targets (`crates/betree/fuzz`), kept in the library so
//! that `cargo test` runs them over the seed inputs too.

use std::sync::OnceLock;

use crate::domain::{AttrType, Bounds, Domain, Schema};
use crate::event::Event;
use crate::expr::Constants;
use crate::index::Index;

/// A schema with every attribute type, shared by both targets.
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

/// Parses, checks, inserts and searches an arbitrary expression.
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
        let mut ev = Event::empty(schema);
        let _ = ev.set(schema, 0, crate::Value::Bool(true));
        let a = index
            .search(&ev)
            .expect("event defines every required attribute");
        let b = index
            .search_batch(std::slice::from_ref(&ev))
            .expect("same event");
        assert_eq!(vec![a], b, "search and search_batch disagree on {text:?}");
        index.delete(1).expect("just inserted");
    }
}

/// Reads an arbitrary JSON event.
pub fn json_event(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = Event::from_json(schema(), text);
}

#[cfg(test)]
mod tests {
    #[test]
    fn seeds_do_not_panic() {
        for dir in ["expr", "json_event"] {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fuzz/seeds")
                .join(dir);
            let mut n = 0;
            for entry in std::fs::read_dir(&path).expect("seed directory") {
                let data = std::fs::read(entry.expect("entry").path()).expect("seed");
                if dir == "expr" {
                    super::expression(&data);
                } else {
                    super::json_event(&data);
                }
                n += 1;
            }
            assert!(n > 0);
        }
        // Some hostile shapes.
        super::expression("((((((((((".repeat(100).as_bytes());
        super::expression("not ".repeat(10_000).as_bytes());
        super::expression(b"\"\\");
        super::json_event(b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[");
    }
}
