//! FIX data dictionaries in QuickFIX's XML format (`FIX40.xml` ...
//! `FIX44.xml`, `FIXT11.xml`, `FIX50*.xml`), read into typed definitions:
//! fields with their types and enum values, header, trailer and messages
//! with components expanded in place and repeating groups nested.
//!
//! Hostile input is bounded: component nesting deeper than
//! [`MAX_DEPTH`] or an expansion past [`MAX_ITEMS`] entries (a component
//! "billion laughs") is an error, not a hang.

pub mod validate;

use roxmltree::{Document, Node};
use std::collections::HashMap;

/// Components nested deeper than this are refused (cycles included).
pub const MAX_DEPTH: usize = 32;
/// Expanded field/group entries over all messages beyond this are refused.
pub const MAX_ITEMS: usize = 1 << 20;

/// A dictionary that cannot be used; `line` is 1-based in the XML text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DictionaryError {
    /// Not well-formed XML.
    #[error("not XML: {0}")]
    Xml(String),
    /// The root element is not `<fix>`.
    #[error("line {line}: root element is <{found}>, expected <fix>")]
    Root {
        /// Line of the root element.
        line: u32,
        /// Its name.
        found: String,
    },
    /// An element lacks an attribute it needs, or the value is unusable.
    #[error("line {line}: <{element}> has no usable {attr} attribute")]
    Attribute {
        /// Line of the element.
        line: u32,
        /// Element name.
        element: String,
        /// Attribute name.
        attr: &'static str,
    },
    /// A name used but never defined under `<fields>` / `<components>`.
    #[error("line {line}: undefined {kind} {name:?}")]
    Undefined {
        /// Line of the use.
        line: u32,
        /// `field` or `component`.
        kind: &'static str,
        /// The name.
        name: String,
    },
    /// A field number or name defined twice.
    #[error("line {line}: field {what} defined twice")]
    DuplicateField {
        /// Line of the second definition.
        line: u32,
        /// The number or name.
        what: String,
    },
    /// Components nested past [`MAX_DEPTH`] or expanding past
    /// [`MAX_ITEMS`].
    #[error("line {line}: component {name:?} nests or expands too far")]
    TooLarge {
        /// Line of the component use.
        line: u32,
        /// The component.
        name: String,
    },
}

/// One field definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    /// Tag number.
    pub tag: u32,
    /// Name, e.g. `ClOrdID`.
    pub name: String,
    /// QuickFIX type name, e.g. `STRING`, `PRICE`, `UTCTIMESTAMP`.
    pub kind: String,
    /// Allowed values (empty: any value of the type).
    pub values: Vec<String>,
}

/// One entry of a message, header, trailer or group, components expanded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A plain field.
    Field {
        /// Tag.
        tag: u32,
        /// Whether it must be present (a component's fields are required
        /// only where the component is).
        required: bool,
    },
    /// A repeating group.
    Group {
        /// The NoXXX count tag.
        tag: u32,
        /// Whether the group must be present.
        required: bool,
        /// Entry layout; the first item's tag is the delimiter.
        items: Vec<Item>,
    },
}

impl Item {
    /// The field tag, or the group's count tag.
    pub fn tag(&self) -> u32 {
        match self {
            Item::Field { tag, .. } | Item::Group { tag, .. } => *tag,
        }
    }
}

/// One message definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageDef {
    /// Name, e.g. `NewOrderSingle`.
    pub name: String,
    /// MsgType(35) value.
    pub msg_type: String,
    /// `msgcat='admin'` (session-level) rather than application.
    pub admin: bool,
    /// Body layout.
    pub items: Vec<Item>,
}

/// A whole dictionary file.
#[derive(Debug, Clone)]
pub struct DataDictionary {
    /// `FIX.4.4`, `FIXT.1.1`, `FIX.5.0SP2`, ...
    pub version: String,
    /// Standard header layout.
    pub header: Vec<Item>,
    /// Standard trailer layout.
    pub trailer: Vec<Item>,
    /// Messages in file order.
    pub messages: Vec<MessageDef>,
    fields: HashMap<u32, FieldDef>,
    by_type: HashMap<String, usize>,
}

impl DataDictionary {
    /// Reads a dictionary from its XML text.
    pub fn parse(xml: &str) -> Result<DataDictionary, DictionaryError> {
        let doc = Document::parse(xml).map_err(|e| DictionaryError::Xml(e.to_string()))?;
        let root = doc.root_element();
        if root.tag_name().name() != "fix" {
            return Err(DictionaryError::Root {
                line: line_of(root),
                found: root.tag_name().name().to_string(),
            });
        }
        let kind = root.attribute("type").unwrap_or("FIX");
        let major = attr(root, "major")?;
        let minor = attr(root, "minor")?;
        let mut version = format!("{kind}.{major}.{minor}");
        match root.attribute("servicepack") {
            None | Some("0") | Some("") => {}
            Some(sp) => version.push_str(&format!("SP{sp}")),
        }
        let child = |name: &str| root.children().find(|c| c.has_tag_name(name));

        let mut fields = HashMap::new();
        let mut by_name: HashMap<&str, u32> = HashMap::new();
        for f in child("fields")
            .iter()
            .flat_map(|n| n.children())
            .filter(|c| c.has_tag_name("field"))
        {
            let tag: u32 = attr(f, "number")?
                .parse()
                .ok()
                .filter(|&t| t > 0)
                .ok_or_else(|| DictionaryError::Attribute {
                    line: line_of(f),
                    element: "field".into(),
                    attr: "number",
                })?;
            let name = attr(f, "name")?;
            if by_name.insert(name, tag).is_some() {
                return Err(DictionaryError::DuplicateField {
                    line: line_of(f),
                    what: name.into(),
                });
            }
            let values = f
                .children()
                .filter(|v| v.has_tag_name("value"))
                .map(|v| attr(v, "enum").map(str::to_string))
                .collect::<Result<Vec<_>, _>>()?;
            let def = FieldDef {
                tag,
                name: name.to_string(),
                kind: attr(f, "type")?.to_string(),
                values,
            };
            if fields.insert(tag, def).is_some() {
                return Err(DictionaryError::DuplicateField {
                    line: line_of(f),
                    what: tag.to_string(),
                });
            }
        }
        let components: HashMap<&str, Node> = child("components")
            .iter()
            .flat_map(|n| n.children())
            .filter(|c| c.has_tag_name("component"))
            .map(|c| Ok((attr(c, "name")?, c)))
            .collect::<Result<_, DictionaryError>>()?;

        let mut ex = Expander {
            by_name: &by_name,
            components: &components,
            budget: MAX_ITEMS,
        };
        let header = match child("header") {
            Some(h) => ex.items(h, true, 0)?,
            None => Vec::new(),
        };
        let trailer = match child("trailer") {
            Some(t) => ex.items(t, true, 0)?,
            None => Vec::new(),
        };
        let mut messages = Vec::new();
        let mut by_type = HashMap::new();
        for m in child("messages")
            .iter()
            .flat_map(|n| n.children())
            .filter(|c| c.has_tag_name("message"))
        {
            let def = MessageDef {
                name: attr(m, "name")?.to_string(),
                msg_type: attr(m, "msgtype")?.to_string(),
                admin: m.attribute("msgcat") == Some("admin"),
                items: ex.items(m, true, 0)?,
            };
            by_type.insert(def.msg_type.clone(), messages.len());
            messages.push(def);
        }
        Ok(DataDictionary {
            version,
            header,
            trailer,
            messages,
            fields,
            by_type,
        })
    }

    /// The field with tag `tag`.
    pub fn field(&self, tag: u32) -> Option<&FieldDef> {
        self.fields.get(&tag)
    }

    /// Number of field definitions.
    pub fn field_count(&self) -> usize {
        self.fields.len()
    }

    /// The message with MsgType `msg_type`.
    pub fn message(&self, msg_type: &str) -> Option<&MessageDef> {
        self.by_type.get(msg_type).map(|&i| &self.messages[i])
    }

    /// The Length/Data pairs this dictionary declares, (length tag, data
    /// tag), by data tag: each field of type DATA or XMLDATA with the
    /// LENGTH field named after it (`RawData` and `RawDataLength`,
    /// `XmlData` and `XmlDataLen`), or else the LENGTH field numbered just
    /// before it, which is how every FIX version numbers them but
    /// Signature(89), whose length is SignatureLength(93). A data field with
    /// neither has no length to read it by and is left out. Give the result
    /// to [`crate::groups::Dictionary::with_data_pairs`].
    pub fn data_pairs(&self) -> Vec<(u32, u32)> {
        let by_name: HashMap<&str, &FieldDef> =
            self.fields.values().map(|f| (f.name.as_str(), f)).collect();
        let length = |f: Option<&FieldDef>| f.filter(|l| l.kind == "LENGTH").map(|l| l.tag);
        let mut out: Vec<(u32, u32)> = self
            .fields
            .values()
            .filter(|f| f.kind == "DATA" || f.kind == "XMLDATA")
            .filter_map(|f| {
                let named = ["Len", "Length"].iter().find_map(|suffix| {
                    length(by_name.get(format!("{}{suffix}", f.name).as_str()).copied())
                });
                let before = || length(f.tag.checked_sub(1).and_then(|t| self.fields.get(&t)));
                named.or_else(before).map(|l| (l, f.tag))
            })
            .collect();
        out.sort_unstable_by_key(|&(_, d)| d);
        out
    }

    /// The parser for messages checked against this (session) dictionary
    /// and `app` (the same one outside FIXT.1.1): FIX 4.4's repeating
    /// groups, reading the Length/Data pairs of both
    /// ([`DataDictionary::data_pairs`]), each pair once. Fails as
    /// [`crate::groups::Dictionary::with_data_pairs`] does.
    pub fn parser_with(&self, app: &DataDictionary) -> crate::Result<crate::parse::Parser> {
        let mut pairs = self.data_pairs();
        pairs.extend(app.data_pairs());
        pairs.sort_unstable();
        pairs.dedup();
        let groups = crate::groups::Dictionary::fix44().with_data_pairs(pairs)?;
        Ok(crate::parse::Parser::with_dictionary(std::sync::Arc::new(
            groups,
        )))
    }
}

/// Why a field value fails its definition: QuickFIX's SessionRejectReason
/// (373) and its text, for a Reject(3) with RefTagID(371).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldReject {
    /// SessionRejectReason(373).
    pub reason: u32,
    /// The offending tag, for RefTagID(371).
    pub tag: u32,
    /// QuickFIX's text for the reason.
    pub text: &'static str,
}

impl DataDictionary {
    /// Checks one field against its definition: the tag is defined
    /// (reason 0), the value is not empty (4), is one of the enum values
    /// when the field has any (5) and has its type's format (6). Tags a
    /// message type does not allow, required fields and groups are the
    /// message-level checks, not done here.
    pub fn check_field(&self, tag: u32, value: &[u8]) -> Result<(), FieldReject> {
        let reject = |reason, text| Err(FieldReject { reason, tag, text });
        let Some(def) = self.fields.get(&tag) else {
            return reject(0, "Invalid tag number");
        };
        if value.is_empty() {
            return reject(4, "Tag specified without a value");
        }
        if !well_formed(&def.kind, value) {
            return reject(6, "Incorrect data format for value");
        }
        // MULTIPLEVALUESTRING / MULTIPLECHARVALUE list enum values
        // separated by spaces; each must be one of them.
        let multi = def.kind.starts_with("MULTIPLE");
        let known = |v: &[u8]| def.values.iter().any(|e| e.as_bytes() == v);
        let ok = def.values.is_empty()
            || if multi {
                value.split(|&b| b == b' ').all(known)
            } else {
                known(value)
            };
        if !ok {
            return reject(5, "Value is incorrect (out of range) for this tag");
        }
        Ok(())
    }
}

/// Whether `v` has the wire format of QuickFIX type `kind`; types without
/// a format rule (STRING, DATA, ...) take any bytes.
fn well_formed(kind: &str, v: &[u8]) -> bool {
    let digits = |d: &[u8]| !d.is_empty() && d.iter().all(u8::is_ascii_digit);
    let signed = |d: &[u8]| digits(d.strip_prefix(b"-").unwrap_or(d));
    match kind {
        "INT" | "LENGTH" | "NUMINGROUP" | "SEQNUM" | "TAGNUM" | "DAYOFMONTH" => signed(v),
        "FLOAT" | "PRICE" | "QTY" | "AMT" | "PRICEOFFSET" | "PERCENTAGE" => {
            let body = v.strip_prefix(b"-").unwrap_or(v);
            let mut parts = body.splitn(2, |&b| b == b'.');
            let int = parts.next().unwrap_or(b"");
            match parts.next() {
                None => digits(int),
                // "1.", ".5" and "1.5" are all numbers to QuickFIX.
                Some(frac) => {
                    (int.is_empty() || digits(int))
                        && (frac.is_empty() || digits(frac))
                        && !(int.is_empty() && frac.is_empty())
                }
            }
        }
        "CHAR" => v.len() == 1,
        "BOOLEAN" => v == b"Y" || v == b"N",
        "UTCTIMESTAMP" => crate::value::UtcTimestamp::parse(v).is_some(),
        _ => true,
    }
}

/// 1-based line of an element's start.
fn line_of(n: Node) -> u32 {
    n.document().text_pos_at(n.range().start).row
}

/// Attribute `a` of `n`, or the error naming both.
fn attr<'a>(n: Node<'a, 'a>, a: &'static str) -> Result<&'a str, DictionaryError> {
    n.attribute(a).ok_or_else(|| DictionaryError::Attribute {
        line: line_of(n),
        element: n.tag_name().name().to_string(),
        attr: a,
    })
}

/// Expands `<field>`, `<group>` and `<component>` children into items.
struct Expander<'a, 'd> {
    by_name: &'a HashMap<&'d str, u32>,
    components: &'a HashMap<&'d str, Node<'d, 'd>>,
    budget: usize,
}

impl<'d> Expander<'_, 'd> {
    fn items(
        &mut self,
        parent: Node<'d, 'd>,
        required: bool,
        depth: usize,
    ) -> Result<Vec<Item>, DictionaryError> {
        let mut out = Vec::new();
        for c in parent.children().filter(Node::is_element) {
            let name = c
                .attribute("name")
                .ok_or_else(|| DictionaryError::Attribute {
                    line: line_of(c),
                    element: c.tag_name().name().to_string(),
                    attr: "name",
                })?;
            let req = required && c.attribute("required") == Some("Y");
            let tag_of = |n: &str| {
                self.by_name
                    .get(n)
                    .copied()
                    .ok_or_else(|| DictionaryError::Undefined {
                        line: line_of(c),
                        kind: "field",
                        name: n.to_string(),
                    })
            };
            let too_large = || DictionaryError::TooLarge {
                line: line_of(c),
                name: name.to_string(),
            };
            match c.tag_name().name() {
                "field" => {
                    self.budget = self.budget.checked_sub(1).ok_or_else(too_large)?;
                    out.push(Item::Field {
                        tag: tag_of(name)?,
                        required: req,
                    });
                }
                "group" => {
                    self.budget = self.budget.checked_sub(1).ok_or_else(too_large)?;
                    if depth >= MAX_DEPTH {
                        return Err(too_large());
                    }
                    let tag = tag_of(name)?;
                    // Members keep their own flags: required within an entry.
                    let items = self.items(c, true, depth + 1)?;
                    out.push(Item::Group {
                        tag,
                        required: req,
                        items,
                    });
                }
                "component" => {
                    if depth >= MAX_DEPTH {
                        return Err(too_large());
                    }
                    let def =
                        *self
                            .components
                            .get(name)
                            .ok_or_else(|| DictionaryError::Undefined {
                                line: line_of(c),
                                kind: "component",
                                name: name.to_string(),
                            })?;
                    out.extend(self.items(def, req, depth + 1)?);
                }
                _ => {}
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
