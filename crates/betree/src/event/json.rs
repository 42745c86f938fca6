//! A JSON event read straight into an [`Event`], with no tree of JSON
//! values in between.
//!
//! The general reader ([`Event::from_json_tree`]) parses the text into a
//! `serde_json::Value` first: a map node and a key string per attribute,
//! a value node per element, then a second string per string value. This
//! one hands each key to the schema as it is read and builds each value in
//! its final form. It takes only the plain shapes (booleans, numbers,
//! strings and their lists, `null`); anything else, an error included,
//! makes it give up, and the caller reads the text again the general way,
//! whose errors name the problem. So the two can only differ in speed:
//! the `json_event` fuzz target and a test check that they give the same
//! event or the same error.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

use super::{Event, Value};
use crate::domain::{AttrId, AttrType, Schema};

/// Reads the JSON object `text` into `ev`, which must be of `schema`'s
/// shape and have every attribute undefined. Returns false where it gives
/// up; `ev` then holds part of the event.
pub(super) fn read_into(ev: &mut Event, schema: &Schema, text: &str) -> bool {
    let mut de = serde_json::Deserializer::from_str(text);
    EventSeed { ev, schema }.deserialize(&mut de).is_ok() && de.end().is_ok()
}

/// The whole object.
struct EventSeed<'a> {
    ev: &'a mut Event,
    schema: &'a Schema,
}

impl<'de> DeserializeSeed<'de> for EventSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EventSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an event object")
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(id) = map.next_key_seed(AttrSeed(self.schema))? {
            let ty = self.schema.domain(id).ty;
            // A repeated key counts as its last value, as in the general
            // reader's map.
            match map.next_value_seed(ValueSeed(ty))? {
                None => self.ev.unset(self.schema, id),
                Some(v) => self.ev.set(self.schema, id, v),
            }
            .map_err(|e| M::Error::custom(e.to_string()))?;
        }
        Ok(())
    }
}

/// A key: the attribute it names, looked up without copying it.
struct AttrSeed<'a>(&'a Schema);

impl<'de> DeserializeSeed<'de> for AttrSeed<'_> {
    type Value = AttrId;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<AttrId, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for AttrSeed<'_> {
    type Value = AttrId;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an attribute name")
    }

    fn visit_str<E: serde::de::Error>(self, k: &str) -> Result<AttrId, E> {
        self.0.id(k).ok_or_else(|| E::custom("unknown attribute"))
    }
}

/// A value of an attribute of type `.0`, `None` for `null`.
struct ValueSeed(AttrType);

impl<'de> DeserializeSeed<'de> for ValueSeed {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<Value>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "a value of type {}", self.0)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Option<Value>, E> {
        match self.0 {
            AttrType::Bool => Ok(Some(Value::Bool(v))),
            _ => Err(E::custom("not a boolean attribute")),
        }
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Option<Value>, E> {
        match self.0 {
            AttrType::Int | AttrType::IntEnum => Ok(Some(Value::Int(v))),
            // As `serde_json::Value::as_f64` reads an integer.
            AttrType::Float => Ok(Some(Value::Float(v as f64))),
            _ => Err(E::custom("not a number attribute")),
        }
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Option<Value>, E> {
        match (self.0, i64::try_from(v)) {
            (AttrType::Int | AttrType::IntEnum, Ok(v)) => Ok(Some(Value::Int(v))),
            (AttrType::Float, _) => Ok(Some(Value::Float(v as f64))),
            _ => Err(E::custom("not an integer of this attribute")),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Option<Value>, E> {
        match self.0 {
            AttrType::Float => Ok(Some(Value::Float(v))),
            _ => Err(E::custom("not a float attribute")),
        }
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Option<Value>, E> {
        match self.0 {
            AttrType::Str => Ok(Some(Value::Str(v.to_string()))),
            _ => Err(E::custom("not a string attribute")),
        }
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Option<Value>, S::Error> {
        // Elements as `serde_json::Value::as_i64` / `as_str` take them:
        // an integer that fits, a string; anything else gives up.
        match self.0 {
            AttrType::IntList => {
                let mut l = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(x) = seq.next_element::<i64>()? {
                    l.push(x);
                }
                Ok(Some(Value::IntList(l)))
            }
            AttrType::StrList => {
                let mut l = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(x) = seq.next_element::<String>()? {
                    l.push(x);
                }
                Ok(Some(Value::StrList(l)))
            }
            // Segments and frequency caps are left to the general reader.
            _ => Err(S::Error::custom("not a list this reader takes")),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::domain::Schema;
    use crate::event::Event;

    #[test]
    fn generated_events_and_their_mutations_read_alike() {
        // Events of the ad-targeting generator, whole and cut short or
        // with a byte changed (most of those are errors).
        let a = crate::workload::Adtech::new();
        let schema = Schema::from_domains(a.domains()).unwrap();
        let mut rng = fastrand::Rng::with_seed(7);
        let mut reused = Event::empty(&schema);
        for _ in 0..200 {
            let text = a.event_json(&mut rng);
            let cut = rng.usize(0..text.len());
            let mut changed = text.clone().into_bytes();
            let bytes = b"{}[],:\"0-9ex \\";
            changed[cut] = bytes[rng.usize(0..bytes.len())];
            let changed = String::from_utf8(changed).unwrap();
            for t in [text.as_str(), &text[..cut], &changed] {
                let want = Event::from_json_tree(&schema, t);
                assert_eq!(Event::from_json(&schema, t), want, "{t}");
                let got = reused.set_json(&schema, t).map(|()| reused.clone());
                assert_eq!(got, want, "{t}");
            }
        }
    }

    #[test]
    fn reads_what_the_general_reader_reads_and_refuses_what_it_refuses() {
        // Every attribute type; `e` is an integer enum in [0, 10].
        let schema = crate::fuzzing::schema();
        let texts = [
            r#"{"b": true, "i": -4, "e": 2, "f": 1, "s": "x", "il": [3, 1, 3], "sl": ["b", "a"]}"#,
            r#"{"i": 1, "i": 2}"#,
            r#"{"i": 1, "i": null}"#,
            r#"{"i": null, "i": 7}"#,
            r#"{"b": true, "b": false}"#,
            r#"{"f": 18446744073709551615, "i": -9223372036854775808}"#,
            r#"{"i": 9223372036854775808}"#,
            r#"{"i": 1.0}"#,
            r#"{"i": 1e2}"#,
            r#"{"f": 1e400}"#,
            r#"{"e": 11}"#,
            r#"{"frequency_caps": [{"type": "flight", "id": 10, "namespace": "n", "value": 0, "timestamp": null}]}"#,
            r#"{"s": "a\"\\\u00e9\ud83d\ude00", "s\u0074": 1}"#,
            r#"{"s\u0000": 1}"#,
            r#"{"\u0073": "escaped key"}"#,
            r#"{"il": [1, "2"]}"#,
            r#"{"il": [1, 2.5]}"#,
            r#"{"il": [18446744073709551615]}"#,
            r#"{"sl": ["a", null]}"#,
            r#"{"sl": []}"#,
            r#"{"seg": [[1, 2], [3, 4]]}"#,
            r#"{"seg": [[1]]}"#,
            r#"{"nope": 1}"#,
            r#"{"b": "true"}"#,
            r#"{"s": ["a"]}"#,
            r#"{"il": {"a": 1}}"#,
            r#"{}"#,
            r#"[]"#,
            r#"null"#,
            r#"{"i": 1} x"#,
            r#"{"i": 1"#,
            r#"  {"i": 1}  "#,
        ];
        let mut reused = Event::from_json_tree(schema, texts[0]).unwrap();
        for text in texts {
            let want = Event::from_json_tree(schema, text);
            assert_eq!(Event::from_json(schema, text), want, "{text}");
            let got = reused.set_json(schema, text);
            match &want {
                Ok(ev) => assert_eq!((got, &reused), (Ok(()), ev), "{text}"),
                Err(e) => {
                    assert_eq!(got.as_ref(), Err(e), "{text}");
                    assert_eq!(reused, Event::empty(schema), "{text}");
                }
            }
        }
    }
}
