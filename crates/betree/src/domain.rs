//! Attribute domains: the declared name, type, undefined policy and bounds of
//! every attribute an expression may name and an event may carry.

use std::fmt;

use crate::{Error, Result};

/// The type of an attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AttrType {
    /// `true`/`false`; tested bare (`a`, `not a`).
    Bool,
    /// A signed 64-bit integer.
    Int,
    /// A 64-bit float.
    Float,
    /// A string.
    Str,
    /// A list of integers.
    IntList,
    /// A list of strings.
    StrList,
    /// An integer drawn from a small bounded set (compared like an integer).
    IntEnum,
    /// Segments: `(segment id, timestamp in µs)` pairs.
    Segments,
    /// Frequency caps: counters per `(type, id, namespace)`.
    FrequencyCaps,
}

impl AttrType {
    /// The name used in messages and in the JSON domain file.
    pub fn name(self) -> &'static str {
        match self {
            AttrType::Bool => "boolean",
            AttrType::Int => "integer",
            AttrType::Float => "float",
            AttrType::Str => "string",
            AttrType::IntList => "integer list",
            AttrType::StrList => "string list",
            AttrType::IntEnum => "integer enum",
            AttrType::Segments => "segments",
            AttrType::FrequencyCaps => "frequency caps",
        }
    }

    /// Parses the type names of the reference (Erlang) domain terms and of the
    /// JSON domain file.
    pub fn from_name(s: &str) -> Option<AttrType> {
        Some(match s {
            "bool" | "boolean" => AttrType::Bool,
            "int" | "int64" | "integer" => AttrType::Int,
            "float" => AttrType::Float,
            "bin" | "string" | "str" => AttrType::Str,
            "int_list" | "integer_list" => AttrType::IntList,
            "bin_list" | "string_list" | "str_list" => AttrType::StrList,
            "int_enum" | "integer_enum" => AttrType::IntEnum,
            "segments" => AttrType::Segments,
            "frequency_caps" => AttrType::FrequencyCaps,
            _ => return None,
        })
    }

    /// The reference (Erlang term) spelling of this type.
    pub fn erlang_name(self) -> &'static str {
        match self {
            AttrType::Bool => "bool",
            AttrType::Int => "int",
            AttrType::Float => "float",
            AttrType::Str => "bin",
            AttrType::IntList => "int_list",
            AttrType::StrList => "bin_list",
            AttrType::IntEnum => "int_enum",
            AttrType::Segments => "segments",
            AttrType::FrequencyCaps => "frequency_caps",
        }
    }
}

impl fmt::Display for AttrType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The type's name with its indefinite article ("an integer", "a string"),
/// for messages.
pub(crate) fn article(ty: AttrType) -> String {
    match ty {
        AttrType::IntList | AttrType::IntEnum | AttrType::Int => format!("an {ty}"),
        _ => format!("a {ty}"),
    }
}

/// Optional bounds of a domain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bounds {
    /// No bounds.
    None,
    /// Inclusive integer bounds (integers, integer lists, integer enums).
    Int(i64, i64),
    /// Inclusive float bounds.
    Float(f64, f64),
    /// The most distinct string values expressions may use (strings, string lists).
    MaxStrings(usize),
}

/// One attribute's declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Domain {
    /// Attribute name as used in expressions and events.
    pub name: String,
    /// Its type.
    pub ty: AttrType,
    /// Whether an event may leave it undefined.
    pub allow_undefined: bool,
    /// Optional bounds.
    pub bounds: Bounds,
}

impl Domain {
    /// A domain without bounds.
    pub fn new(name: impl Into<String>, ty: AttrType, allow_undefined: bool) -> Domain {
        Domain {
            name: name.into(),
            ty,
            allow_undefined,
            bounds: Bounds::None,
        }
    }

    /// The same domain with bounds.
    pub fn with_bounds(mut self, bounds: Bounds) -> Domain {
        self.bounds = bounds;
        self
    }
}

/// Index of an attribute in its [`Schema`].
pub type AttrId = u32;

/// The ordered set of domains an index and its events share.
///
/// Boolean attributes additionally get a dense bit slot so that an event's
/// booleans live in one bitset and a test is a shift and a mask.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    domains: Vec<Domain>,
    /// foldhash (hashbrown's default) rather than SipHash: every attribute
    /// an expression names is looked up here.
    by_name: hashbrown::HashMap<String, AttrId>,
    bool_slot: Vec<u32>,
    bool_count: u32,
}

/// Marks a non-boolean attribute in `bool_slot`.
const NO_SLOT: u32 = u32::MAX;

impl Schema {
    /// An empty schema.
    pub fn new() -> Schema {
        Schema::default()
    }

    /// Builds a schema from domains, rejecting duplicate names.
    pub fn from_domains(domains: impl IntoIterator<Item = Domain>) -> Result<Schema> {
        let mut s = Schema::new();
        for d in domains {
            s.add(d)?;
        }
        Ok(s)
    }

    /// Adds one domain; its id is the number of domains before it.
    pub fn add(&mut self, domain: Domain) -> Result<AttrId> {
        if self.by_name.contains_key(&domain.name) {
            return Err(Error::Domain(format!(
                "attribute `{}` is declared twice",
                domain.name
            )));
        }
        if !is_identifier(&domain.name) {
            return Err(Error::Domain(format!(
                "attribute name `{}` is not an identifier ([A-Za-z_][A-Za-z0-9_]*)",
                domain.name
            )));
        }
        let id = self.domains.len() as AttrId;
        if domain.ty == AttrType::Bool {
            self.bool_slot.push(self.bool_count);
            self.bool_count += 1;
        } else {
            self.bool_slot.push(NO_SLOT);
        }
        self.by_name.insert(domain.name.clone(), id);
        self.domains.push(domain);
        Ok(id)
    }

    /// `n` boolean attributes `par1..parN`, all disallow-undefined: the
    /// reference benchmark's schema.
    pub fn boolean_params(n: usize) -> Schema {
        let mut s = Schema::new();
        for i in 1..=n {
            s.add(Domain::new(format!("par{i}"), AttrType::Bool, false))
                .expect("generated names are unique identifiers");
        }
        s
    }

    /// Looks an attribute up by name.
    pub fn id(&self, name: &str) -> Option<AttrId> {
        self.by_name.get(name).copied()
    }

    /// The domain of an attribute.
    ///
    /// # Panics
    ///
    /// If `id` is not an attribute of this schema (it must come from
    /// [`Schema::id`] or [`Schema::add`] of this schema or of a clone);
    /// [`Schema::get`] is the checked form for ids from elsewhere.
    pub fn domain(&self, id: AttrId) -> &Domain {
        &self.domains[id as usize]
    }

    /// The domain of an attribute, `None` when `id` is not declared.
    pub fn get(&self, id: AttrId) -> Option<&Domain> {
        self.domains.get(id as usize)
    }

    /// All domains in declaration order.
    pub fn domains(&self) -> &[Domain] {
        &self.domains
    }

    /// Number of attributes.
    pub fn len(&self) -> usize {
        self.domains.len()
    }

    /// Whether no attribute is declared.
    pub fn is_empty(&self) -> bool {
        self.domains.is_empty()
    }

    /// Heap bytes owned by the schema (domains and their names, the name
    /// table, the boolean slots).
    pub(crate) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.domains.capacity() * size_of::<Domain>()
            + self
                .domains
                .iter()
                .map(|d| d.name.capacity())
                .sum::<usize>()
            + self.by_name.capacity() * (size_of::<(String, AttrId)>() + 1)
            + self.by_name.keys().map(String::capacity).sum::<usize>()
            + self.bool_slot.capacity() * size_of::<u32>()
    }

    /// The bit slot of a boolean attribute.
    pub(crate) fn bool_slot(&self, id: AttrId) -> Option<u32> {
        match self.bool_slot[id as usize] {
            NO_SLOT => None,
            s => Some(s),
        }
    }

    /// Number of boolean attributes.
    pub(crate) fn bool_count(&self) -> u32 {
        self.bool_count
    }
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads domains from a JSON array such as
/// `[{"name": "age", "type": "integer", "allow_undefined": false, "min": 0,
/// "max": 120}, {"name": "tags", "type": "string_list", "allow_undefined":
/// true, "max_strings": 100}]`.
///
/// As in the reference (Erlang) domain list, every field but the bounds is
/// required: `name`, `type` (a name [`AttrType::from_name`] knows) and
/// `allow_undefined`. Bounds must fit the type: `min` and `max` together,
/// integers for integer, integer list and integer enum attributes, numbers
/// for floats, `min <= max`; `max_strings` for strings and string lists.
/// Unknown fields are errors, so a misspelt bound is not silently dropped.
pub fn domains_from_json(text: &str) -> Result<Vec<Domain>> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        // serde_json appends the position, which `Format` already gives.
        let msg = e.to_string();
        let msg = msg.rfind(" at line ").map_or(msg.as_str(), |at| &msg[..at]);
        Error::Format {
            what: "domain file",
            line: e.line().max(1),
            col: e.column().max(1),
            msg: format!("invalid JSON: {msg}"),
        }
    })?;
    let arr = v.as_array().ok_or_else(|| {
        Error::Domain("the JSON domain file must be an array of domain objects".into())
    })?;
    arr.iter()
        .enumerate()
        .map(|(i, d)| domain_from_json(i + 1, d))
        .collect()
}

fn domain_from_json(n: usize, d: &serde_json::Value) -> Result<Domain> {
    let name = d.get("name").and_then(|x| x.as_str());
    let err = |msg: String| {
        Error::Domain(match name {
            Some(name) => format!("domain {n} (`{name}`): {msg}"),
            None => format!("domain {n}: {msg}"),
        })
    };
    let o = d
        .as_object()
        .ok_or_else(|| err("expected an object".into()))?;
    const FIELDS: [&str; 6] = [
        "name",
        "type",
        "allow_undefined",
        "min",
        "max",
        "max_strings",
    ];
    if let Some(f) = o.keys().find(|f| !FIELDS.contains(&f.as_str())) {
        return Err(err(format!(
            "unknown field {f:?} (expected {})",
            FIELDS.join(", ")
        )));
    }
    let name = name.ok_or_else(|| err("needs a string \"name\"".into()))?;
    let ty = o
        .get("type")
        .and_then(|x| x.as_str())
        .ok_or_else(|| err("needs a string \"type\"".into()))?;
    let ty = AttrType::from_name(ty).ok_or_else(|| err(format!("unknown type {ty:?}")))?;
    let allow = o
        .get("allow_undefined")
        .and_then(|x| x.as_bool())
        .ok_or_else(|| err("needs \"allow_undefined\": true or false".into()))?;
    let (min, max, strings) = (o.get("min"), o.get("max"), o.get("max_strings"));
    let bounds = match (min, max, strings) {
        (None, None, None) => Bounds::None,
        (Some(_), None, _) | (None, Some(_), _) => {
            return Err(err("\"min\" and \"max\" go together".into()));
        }
        (Some(_), Some(_), Some(_)) => {
            return Err(err("has both \"min\"/\"max\" and \"max_strings\"".into()));
        }
        (Some(lo), Some(hi), None) => match ty {
            AttrType::Int | AttrType::IntList | AttrType::IntEnum => {
                match (lo.as_i64(), hi.as_i64()) {
                    (Some(lo), Some(hi)) if lo <= hi => Bounds::Int(lo, hi),
                    (Some(lo), Some(hi)) => {
                        return Err(err(format!("\"min\" {lo} is above \"max\" {hi}")));
                    }
                    _ => {
                        return Err(err(format!(
                            "the bounds of {} attribute must be integers",
                            article(ty)
                        )));
                    }
                }
            }
            AttrType::Float => match (lo.as_f64(), hi.as_f64()) {
                (Some(lo), Some(hi)) if lo <= hi => Bounds::Float(lo, hi),
                (Some(lo), Some(hi)) => {
                    return Err(err(format!("\"min\" {lo} is above \"max\" {hi}")));
                }
                _ => return Err(err("the bounds of a float attribute must be numbers".into())),
            },
            _ => {
                return Err(err(format!(
                    "{} attribute takes no \"min\"/\"max\"",
                    article(ty)
                )));
            }
        },
        (None, None, Some(n)) => match ty {
            AttrType::Str | AttrType::StrList => Bounds::MaxStrings(
                n.as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .ok_or_else(|| err("\"max_strings\" must be a non-negative integer".into()))?,
            ),
            _ => {
                return Err(err(format!(
                    "{} attribute takes no \"max_strings\"",
                    article(ty)
                )));
            }
        },
    };
    Ok(Domain::new(name, ty, allow).with_bounds(bounds))
}
