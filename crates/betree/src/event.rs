//! Events: the attribute values one search matches expressions against, built
//! with a typed builder or read from a JSON object.

use crate::domain::{AttrId, AttrType, Bounds, Schema, article};
use crate::{Error, Result};

mod json;

/// One frequency-cap counter carried by an event.
#[derive(Debug, Clone, PartialEq)]
pub struct FrequencyCap {
    /// Cap type: `flight`, `flightip`, `advertiser`, `advertiserip`,
    /// `campaign`, `campaignip`, `product` or `productip`.
    pub kind: String,
    /// The id of the flight/advertiser/campaign/product.
    pub id: u32,
    /// Namespace.
    pub namespace: String,
    /// Times seen so far (0 to `u32::MAX`, the C library's range).
    pub value: i64,
    /// When the counting window started, in microseconds, if known (the
    /// expression's `now` is in seconds).
    pub timestamp: Option<i64>,
}

/// A defined attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// Boolean.
    Bool(bool),
    /// Integer (also integer enums).
    Int(i64),
    /// Float.
    Float(f64),
    /// String.
    Str(String),
    /// Integer list (an event stores it sorted, without duplicates).
    IntList(Vec<i64>),
    /// String list (an event stores it sorted, without duplicates).
    StrList(Vec<String>),
    /// `(segment id, timestamp µs)` pairs, expected in ascending id order
    /// (the C library's search stops at the first id above the one sought).
    Segments(Vec<(i64, i64)>),
    /// Frequency caps.
    FrequencyCaps(Vec<FrequencyCap>),
}

impl Value {
    fn fits(&self, ty: AttrType) -> bool {
        matches!(
            (self, ty),
            (Value::Bool(_), AttrType::Bool)
                | (Value::Int(_), AttrType::Int | AttrType::IntEnum)
                | (Value::Float(_), AttrType::Float)
                | (Value::Str(_), AttrType::Str)
                | (Value::IntList(_), AttrType::IntList)
                | (Value::StrList(_), AttrType::StrList)
                | (Value::Segments(_), AttrType::Segments)
                | (Value::FrequencyCaps(_), AttrType::FrequencyCaps)
        )
    }
}

/// An event: one optional value per attribute of a [`Schema`].
///
/// Booleans are also kept in a bitset by boolean slot, false when undefined,
/// because a bare boolean predicate on an undefined attribute is false: the
/// hot loop then tests one bit and needs no separate definedness check.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub(crate) values: Vec<Option<Value>>,
    pub(crate) bits: Vec<u64>,
    pub(crate) defined: Vec<u64>,
}

impl Event {
    /// An event with every attribute undefined.
    pub fn empty(schema: &Schema) -> Event {
        Event {
            values: vec![None; schema.len()],
            bits: vec![0; (schema.bool_count() as usize).div_ceil(64)],
            defined: vec![0; schema.len().div_ceil(64)],
        }
    }

    /// The reference benchmark's event: value `i` for the `i`-th attribute,
    /// every attribute boolean.
    pub fn from_bools(schema: &Schema, values: &[bool]) -> Result<Event> {
        if values.len() != schema.len() {
            return Err(Error::Event(format!(
                "event has {} values but {} attributes are declared",
                values.len(),
                schema.len()
            )));
        }
        let mut ev = Event::empty(schema);
        for (i, &v) in values.iter().enumerate() {
            ev.set(schema, i as AttrId, Value::Bool(v))?;
        }
        Ok(ev)
    }

    /// Makes this event the one [`Event::from_bools`] builds from `values`,
    /// in place: a stream of events read into one reused event allocates
    /// nothing per event (a fresh event per line, set value by value and
    /// freed with its batch, cost `perfkit betree search` about 4% on top
    /// of the search on the dense reference workload, allocator aside). On
    /// an error, the same as `from_bools`'s, the event is left as it was.
    pub fn set_bools(&mut self, schema: &Schema, values: &[bool]) -> Result<()> {
        let all_bool = schema.bool_count() as usize == schema.len();
        if !all_bool || values.len() != schema.len() || self.check_shape(schema).is_err() {
            // Anything but the reference layout, errors included, is built
            // (and refused) as from_bools does.
            *self = Event::from_bools(schema, values)?;
            return Ok(());
        }
        // Every attribute is boolean, so attribute `i` has bit slot `i`.
        self.bits.fill(0);
        for (i, (&v, slot)) in values.iter().zip(&mut self.values).enumerate() {
            *slot = Some(Value::Bool(v));
            self.bits[i / 64] |= u64::from(v) << (i % 64);
        }
        for (w, d) in self.defined.iter_mut().enumerate() {
            let n = (values.len() - w * 64).min(64);
            *d = u64::MAX >> (64 - n);
        }
        Ok(())
    }

    /// Checks that this event was made for a schema of `schema`'s shape, so
    /// that every attribute id and boolean slot of `schema` indexes it.
    pub(crate) fn check_shape(&self, schema: &Schema) -> Result<()> {
        if self.values.len() != schema.len()
            || self.defined.len() != schema.len().div_ceil(64)
            || self.bits.len() != (schema.bool_count() as usize).div_ceil(64)
        {
            return Err(Error::Event(format!(
                "the event was built for another schema ({} attributes, room for {} booleans); this schema has {} attributes, {} of them boolean",
                self.values.len(),
                self.bits.len() * 64,
                schema.len(),
                schema.bool_count()
            )));
        }
        Ok(())
    }

    /// Sets an attribute's value, checking its type.
    ///
    /// Integer and string lists are stored sorted and without duplicates,
    /// as the C library stores them before a search (`sort_event_lists`):
    /// list tests then run as merges and binary searches, and a list means
    /// the set of its values. Segments and frequency caps are kept in the
    /// order given.
    pub fn set(&mut self, schema: &Schema, id: AttrId, mut value: Value) -> Result<()> {
        self.check_shape(schema)?;
        let d = schema.get(id).ok_or_else(|| {
            Error::Event(format!(
                "attribute id {id} is not declared (the schema has {} attributes)",
                schema.len()
            ))
        })?;
        if !value.fits(d.ty) {
            return Err(Error::Event(format!(
                "attribute `{}` is {}, the value given is not",
                d.name,
                article(d.ty)
            )));
        }
        if let (Value::Int(i), AttrType::IntEnum, Bounds::Int(lo, hi)) = (&value, d.ty, d.bounds)
            && (*i < lo || *i > hi)
        {
            return Err(Error::Event(format!(
                "attribute `{}` is an integer enum in [{lo}, {hi}], {i} is outside",
                d.name
            )));
        }
        if let Value::FrequencyCaps(caps) = &value
            && let Some(c) = caps.iter().find(|c| u32::try_from(c.value).is_err())
        {
            // The C library holds cap counters as `uint32_t`; a value it
            // cannot represent is refused rather than compared differently.
            return Err(Error::Event(format!(
                "attribute `{}`: frequency cap counter {} is outside [0, {}]",
                d.name,
                c.value,
                u32::MAX
            )));
        }
        match &mut value {
            Value::IntList(l) => {
                l.sort_unstable();
                l.dedup();
            }
            Value::StrList(l) => {
                l.sort_unstable();
                l.dedup();
            }
            _ => {}
        }
        if let Some(slot) = schema.bool_slot(id) {
            let (w, b) = ((slot / 64) as usize, slot % 64);
            let on = matches!(value, Value::Bool(true));
            self.bits[w] = (self.bits[w] & !(1 << b)) | ((on as u64) << b);
        }
        self.defined[(id / 64) as usize] |= 1 << (id % 64);
        self.values[id as usize] = Some(value);
        Ok(())
    }

    /// Makes an attribute undefined.
    pub fn unset(&mut self, schema: &Schema, id: AttrId) -> Result<()> {
        self.check_shape(schema)?;
        if schema.get(id).is_none() {
            return Err(Error::Event(format!(
                "attribute id {id} is not declared (the schema has {} attributes)",
                schema.len()
            )));
        }
        if let Some(slot) = schema.bool_slot(id) {
            self.bits[(slot / 64) as usize] &= !(1 << (slot % 64));
        }
        self.defined[(id / 64) as usize] &= !(1 << (id % 64));
        self.values[id as usize] = None;
        Ok(())
    }

    /// The most elements in one of the event's lists (integer and string
    /// lists, segments, frequency caps): bounds a predicate's loop steps.
    pub(crate) fn longest_list(&self) -> usize {
        self.values
            .iter()
            .map(|v| match v {
                Some(Value::IntList(l)) => l.len(),
                Some(Value::StrList(l)) => l.len(),
                Some(Value::Segments(l)) => l.len(),
                Some(Value::FrequencyCaps(l)) => l.len(),
                _ => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether attribute `id` is defined (`id` must be of this event's
    /// schema).
    #[inline]
    pub(crate) fn is_defined(&self, id: AttrId) -> bool {
        self.defined[(id / 64) as usize] >> (id % 64) & 1 == 1
    }

    /// The value of an attribute, `None` when undefined.
    pub fn get(&self, id: AttrId) -> Option<&Value> {
        self.values.get(id as usize).and_then(|v| v.as_ref())
    }

    /// Reads an event from a JSON object such as
    /// `{"age": 31, "tags": ["a"], "x": null}`. Absent keys and `null` are
    /// undefined. Segments are `[[id, timestamp_us], ...]`; frequency caps are
    /// `[{"type": "flight", "id": 10, "namespace": "ns", "value": 0,
    /// "timestamp": null}, ...]`.
    pub fn from_json(schema: &Schema, text: &str) -> Result<Event> {
        let mut ev = Event::empty(schema);
        ev.set_json(schema, text)?;
        Ok(ev)
    }

    /// Makes this event the one [`Event::from_json`] reads from `text`, in
    /// place, so that a stream of JSON events read into one reused event
    /// does not build a fresh one per line. On an error, the same as
    /// `from_json`'s, the event is left with every attribute undefined.
    ///
    /// Booleans, numbers, strings and their lists are read straight into
    /// the event (`perf` put parsing through a tree of JSON values first
    /// at about 2 % of `perfkit betree search` on the ad-targeting
    /// profile); anything else, errors included, is read through
    /// [`Event::from_json_value`], whose messages say what is wrong.
    pub fn set_json(&mut self, schema: &Schema, text: &str) -> Result<()> {
        if self.check_shape(schema).is_ok() {
            self.clear();
            if json::read_into(self, schema, text) {
                return Ok(());
            }
        }
        match Event::from_json_tree(schema, text) {
            Ok(ev) => {
                *self = ev;
                Ok(())
            }
            Err(e) => {
                *self = Event::empty(schema);
                Err(e)
            }
        }
    }

    /// [`Event::from_json`] the general way: through a tree of JSON
    /// values, then [`Event::from_json_value`].
    pub(crate) fn from_json_tree(schema: &Schema, text: &str) -> Result<Event> {
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| Error::Event(format!("invalid JSON: {e}")))?;
        Event::from_json_value(schema, &v)
    }

    /// Makes every attribute undefined, keeping the event's shape.
    fn clear(&mut self) {
        self.values.iter_mut().for_each(|v| *v = None);
        self.bits.fill(0);
        self.defined.fill(0);
    }

    /// Reads an event from an already parsed JSON value.
    pub fn from_json_value(schema: &Schema, v: &serde_json::Value) -> Result<Event> {
        let obj = v
            .as_object()
            .ok_or_else(|| Error::Event("an event must be a JSON object".into()))?;
        let mut ev = Event::empty(schema);
        for (k, val) in obj {
            let id = schema
                .id(k)
                .ok_or_else(|| Error::Event(format!("unknown attribute `{k}` in event")))?;
            if val.is_null() {
                continue;
            }
            let ty = schema.domain(id).ty;
            let bad = || {
                Error::Event(format!(
                    "attribute `{k}` is {}, the JSON value {} is not",
                    article(ty),
                    short_json(val)
                ))
            };
            let value = match ty {
                AttrType::Bool => Value::Bool(val.as_bool().ok_or_else(bad)?),
                AttrType::Int | AttrType::IntEnum => Value::Int(val.as_i64().ok_or_else(bad)?),
                AttrType::Float => Value::Float(val.as_f64().ok_or_else(bad)?),
                AttrType::Str => Value::Str(val.as_str().ok_or_else(bad)?.to_string()),
                AttrType::IntList => Value::IntList(
                    val.as_array()
                        .ok_or_else(bad)?
                        .iter()
                        .map(|x| x.as_i64().ok_or_else(bad))
                        .collect::<Result<_>>()?,
                ),
                AttrType::StrList => Value::StrList(
                    val.as_array()
                        .ok_or_else(bad)?
                        .iter()
                        .map(|x| x.as_str().map(str::to_string).ok_or_else(bad))
                        .collect::<Result<_>>()?,
                ),
                AttrType::Segments => Value::Segments(
                    val.as_array()
                        .ok_or_else(bad)?
                        .iter()
                        .map(|p| match p.as_array().map(Vec::as_slice) {
                            Some([a, b]) => {
                                Ok((a.as_i64().ok_or_else(bad)?, b.as_i64().ok_or_else(bad)?))
                            }
                            _ => Err(bad()),
                        })
                        .collect::<Result<_>>()?,
                ),
                AttrType::FrequencyCaps => Value::FrequencyCaps(
                    val.as_array()
                        .ok_or_else(bad)?
                        .iter()
                        .enumerate()
                        .map(|(n, c)| cap_from_json(k, n + 1, c))
                        .collect::<Result<_>>()?,
                ),
            };
            ev.set(schema, id, value)?;
        }
        Ok(ev)
    }
}

/// One frequency cap object of a JSON event; errors name the attribute,
/// the cap's 1-based position and the field.
fn cap_from_json(attr: &str, n: usize, c: &serde_json::Value) -> Result<FrequencyCap> {
    let err = |msg: String| Error::Event(format!("attribute `{attr}`, frequency cap {n}: {msg}"));
    let o = c.as_object().ok_or_else(|| {
        err(format!(
            "expected an object with \"type\", \"id\", \"namespace\", \"value\" and \"timestamp\", found {}",
            short_json(c)
        ))
    })?;
    if let Some(f) = o
        .keys()
        .find(|f| !["type", "id", "namespace", "value", "timestamp"].contains(&f.as_str()))
    {
        return Err(err(format!("unknown field {f:?}")));
    }
    let string = |f: &str| {
        o.get(f)
            .and_then(|x| x.as_str())
            .map(str::to_string)
            .ok_or_else(|| err(format!("{f:?} must be a string")))
    };
    let counter = |f: &str| {
        o.get(f)
            .and_then(|x| x.as_u64())
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| err(format!("{f:?} must be an integer in [0, {}]", u32::MAX)))
    };
    Ok(FrequencyCap {
        kind: string("type")?,
        id: counter("id")?,
        namespace: string("namespace")?,
        value: counter("value")?.into(),
        timestamp: match o.get("timestamp") {
            None | Some(serde_json::Value::Null) => None,
            Some(t) => Some(
                t.as_i64()
                    .ok_or_else(|| err("\"timestamp\" must be an integer (µs) or null".into()))?,
            ),
        },
    })
}

fn short_json(v: &serde_json::Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!("{}...", &s[..s.floor_char_boundary(40)])
    } else {
        s
    }
}

/// A typed builder for events.
///
/// ```
/// use betree::{AttrType, Domain, EventBuilder, Schema};
/// let schema = Schema::from_domains([
///     Domain::new("age", AttrType::Int, false),
///     Domain::new("tags", AttrType::StrList, true),
/// ])?;
/// let ev = EventBuilder::new(&schema).int("age", 31)?.str_list("tags", ["a"])?.build();
/// # Ok::<(), betree::Error>(())
/// ```
#[derive(Debug)]
pub struct EventBuilder<'s> {
    schema: &'s Schema,
    event: Event,
}

impl<'s> EventBuilder<'s> {
    /// Starts an event with every attribute undefined.
    pub fn new(schema: &'s Schema) -> EventBuilder<'s> {
        EventBuilder {
            schema,
            event: Event::empty(schema),
        }
    }

    /// Sets any value by attribute name.
    pub fn value(mut self, name: &str, value: Value) -> Result<Self> {
        let id = self
            .schema
            .id(name)
            .ok_or_else(|| Error::Event(format!("unknown attribute `{name}` in event")))?;
        self.event.set(self.schema, id, value)?;
        Ok(self)
    }

    /// Sets a boolean.
    pub fn bool(self, name: &str, v: bool) -> Result<Self> {
        self.value(name, Value::Bool(v))
    }

    /// Sets an integer or integer enum.
    pub fn int(self, name: &str, v: i64) -> Result<Self> {
        self.value(name, Value::Int(v))
    }

    /// Sets a float.
    pub fn float(self, name: &str, v: f64) -> Result<Self> {
        self.value(name, Value::Float(v))
    }

    /// Sets a string.
    pub fn str(self, name: &str, v: impl Into<String>) -> Result<Self> {
        self.value(name, Value::Str(v.into()))
    }

    /// Sets an integer list.
    pub fn int_list(self, name: &str, v: impl IntoIterator<Item = i64>) -> Result<Self> {
        self.value(name, Value::IntList(v.into_iter().collect()))
    }

    /// Sets a string list.
    pub fn str_list<S: Into<String>>(
        self,
        name: &str,
        v: impl IntoIterator<Item = S>,
    ) -> Result<Self> {
        self.value(
            name,
            Value::StrList(v.into_iter().map(Into::into).collect()),
        )
    }

    /// Sets segments as `(segment id, timestamp µs)` pairs.
    pub fn segments(self, name: &str, v: impl IntoIterator<Item = (i64, i64)>) -> Result<Self> {
        self.value(name, Value::Segments(v.into_iter().collect()))
    }

    /// Sets frequency caps.
    pub fn frequency_caps(
        self,
        name: &str,
        v: impl IntoIterator<Item = FrequencyCap>,
    ) -> Result<Self> {
        self.value(name, Value::FrequencyCaps(v.into_iter().collect()))
    }

    /// The finished event.
    pub fn build(self) -> Event {
        self.event
    }
}
