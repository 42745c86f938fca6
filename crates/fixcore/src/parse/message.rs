//! The parsed message as the caller sees it: fields by tag, typed
//! values, repeating groups and their entries, all borrowing the input.
//!
//! The small accessors are `#[inline]`: the session machine calls them from
//! another crate (fixsession) on every message, and out of line
//! `Message::get` alone cost its caller about 3 % more instructions per
//! order (callgrind, `perfkit fix initiator --orders 20000`).

use std::collections::HashMap;

use super::{Field, GEN_MAX};
use crate::groups::{DIRECT_TAGS, Dictionary, GroupDef};
use crate::value::{self, Decimal, UtcTimestamp};
use crate::{Error, Result};

/// A field's value with its tag and position, for typed conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldRef<'a> {
    /// The tag.
    pub tag: u32,
    /// The raw value bytes.
    pub value: &'a [u8],
    /// Offset of the value in the message.
    pub pos: usize,
}

impl<'a> FieldRef<'a> {
    fn bad(&self, expected: &'static str) -> Error {
        Error::BadValue {
            tag: self.tag,
            pos: self.pos,
            expected,
        }
    }
    /// As a signed integer.
    #[inline]
    pub fn int(&self) -> Result<i64> {
        value::parse_int(self.value).ok_or_else(|| self.bad("int"))
    }
    /// As an unsigned integer.
    #[inline]
    pub fn uint(&self) -> Result<u64> {
        value::parse_uint(self.value).ok_or_else(|| self.bad("unsigned int"))
    }
    /// As an exact decimal (Price, Qty, float).
    #[inline]
    pub fn decimal(&self) -> Result<Decimal> {
        Decimal::parse(self.value).ok_or_else(|| self.bad("decimal"))
    }
    /// As a UTCTimestamp.
    #[inline]
    pub fn timestamp(&self) -> Result<UtcTimestamp> {
        UtcTimestamp::parse(self.value).ok_or_else(|| self.bad("UTCTimestamp"))
    }
    /// As a single character.
    #[inline]
    pub fn char(&self) -> Result<u8> {
        value::parse_char(self.value).ok_or_else(|| self.bad("char"))
    }
    /// As a Boolean (`Y`/`N`).
    #[inline]
    pub fn bool(&self) -> Result<bool> {
        value::parse_bool(self.value).ok_or_else(|| self.bad("Boolean"))
    }
    /// As UTF-8 text.
    #[inline]
    pub fn str(&self) -> Result<&'a str> {
        std::str::from_utf8(self.value).map_err(|_| self.bad("UTF-8 string"))
    }
}

/// Typed getters shared by messages and group entries.
macro_rules! typed_getters {
    () => {
        /// Integer value of `tag`.
        #[inline]
        pub fn int(&self, tag: u32) -> Result<i64> {
            self.require(tag)?.int()
        }
        /// Unsigned integer value of `tag`.
        #[inline]
        pub fn uint(&self, tag: u32) -> Result<u64> {
            self.require(tag)?.uint()
        }
        /// Exact decimal value of `tag`.
        #[inline]
        pub fn decimal(&self, tag: u32) -> Result<Decimal> {
            self.require(tag)?.decimal()
        }
        /// UTCTimestamp value of `tag`.
        #[inline]
        pub fn timestamp(&self, tag: u32) -> Result<UtcTimestamp> {
            self.require(tag)?.timestamp()
        }
        /// Single-character value of `tag`.
        #[inline]
        pub fn char(&self, tag: u32) -> Result<u8> {
            self.require(tag)?.char()
        }
        /// Boolean value of `tag`.
        #[inline]
        pub fn bool(&self, tag: u32) -> Result<bool> {
            self.require(tag)?.bool()
        }
        /// UTF-8 value of `tag`.
        #[inline]
        pub fn str(&self, tag: u32) -> Result<&'a str> {
            self.require(tag)?.str()
        }
        /// Raw bytes of `tag`, if present.
        #[inline]
        pub fn get(&self, tag: u32) -> Option<&'a [u8]> {
            self.field(tag).map(|f| f.value)
        }
        #[inline]
        fn require(&self, tag: u32) -> Result<FieldRef<'a>> {
            self.field(tag).ok_or_else(|| Error::MissingTag { tag })
        }
    };
}

/// A parsed, validated message borrowing its bytes.
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    pub(super) buf: &'a [u8],
    pub(super) fields: &'a [Field],
    pub(super) table: &'a [u32],
    pub(super) generation: u32,
    pub(super) high: &'a HashMap<u32, u32>,
    pub(super) dict: &'a Dictionary,
}

#[inline]
pub(super) fn field_ref<'a>(buf: &'a [u8], f: &Field) -> FieldRef<'a> {
    FieldRef {
        tag: f.tag,
        value: &buf[f.val as usize..f.end as usize],
        pos: f.val as usize,
    }
}

impl<'a> Message<'a> {
    /// The whole message.
    #[inline]
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
    }
    /// BeginString(8), e.g. `FIX.4.4`.
    #[inline]
    pub fn begin_string(&self) -> &'a [u8] {
        field_ref(self.buf, &self.fields[0]).value
    }
    /// MsgType(35).
    #[inline]
    pub fn msg_type(&self) -> &'a [u8] {
        field_ref(self.buf, &self.fields[2]).value
    }
    /// Number of fields, group members included.
    #[inline]
    pub fn field_count(&self) -> usize {
        self.fields.len()
    }

    /// The top-level field `tag` (not fields inside repeating groups), O(1):
    /// a table for tags below 10,000, a hash map above.
    #[inline]
    pub fn field(&self, tag: u32) -> Option<FieldRef<'a>> {
        let idx = if (tag as usize) < DIRECT_TAGS {
            let e = self.table[tag as usize];
            if (e >> 16) & GEN_MAX != self.generation {
                return None;
            }
            (e & 0xFFFF) as usize
        } else {
            *self.high.get(&tag)? as usize
        };
        Some(field_ref(self.buf, &self.fields[idx]))
    }

    typed_getters!();

    /// Every field in wire order, group members included.
    pub fn fields(&self) -> impl Iterator<Item = FieldRef<'a>> + 'a {
        let buf = self.buf;
        self.fields.iter().map(move |f| field_ref(buf, f))
    }

    /// The top-level repeating group counted by `count_tag`, or `None` if the
    /// tag is absent or not a group in the dictionary.
    pub fn group(&self, count_tag: u32) -> Option<Group<'a>> {
        let def = self.dict.group(count_tag)?;
        let idx = if (count_tag as usize) < DIRECT_TAGS {
            let e = self.table[count_tag as usize];
            if (e >> 16) & GEN_MAX != self.generation {
                return None;
            }
            (e & 0xFFFF) as usize
        } else {
            return None;
        };
        Some(Group::new(self.buf, self.fields, idx, def, self.dict))
    }

    /// A tree view of the message: top-level fields, with each repeating
    /// group expanded into its entries.
    pub fn nodes(&self) -> Vec<Node<'a>> {
        nodes(self.buf, self.fields, self.dict)
    }
}

/// A field or a repeating group, for generic traversal (e.g. JSON output).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node<'a> {
    /// A plain field.
    Field(FieldRef<'a>),
    /// A group: its count field and one node list per entry.
    Group(FieldRef<'a>, Vec<Vec<Node<'a>>>),
}

fn nodes<'a>(buf: &'a [u8], fields: &'a [Field], dict: &'a Dictionary) -> Vec<Node<'a>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fields.len() {
        let f = &fields[i];
        match dict.group(f.tag) {
            Some(def) if f.span > 0 || value::parse_uint(field_ref(buf, f).value) == Some(0) => {
                let g = Group::new(buf, fields, i, def, dict);
                let entries = g.entries().map(|e| nodes(buf, e.fields, dict)).collect();
                out.push(Node::Group(field_ref(buf, f), entries));
                i += 1 + f.span as usize;
            }
            _ => {
                out.push(Node::Field(field_ref(buf, f)));
                i += 1;
            }
        }
    }
    out
}

/// A repeating group inside a message.
#[derive(Debug, Clone, Copy)]
pub struct Group<'a> {
    buf: &'a [u8],
    /// The fields of all entries (excluding the count field).
    fields: &'a [Field],
    delimiter: u32,
    count: usize,
    dict: &'a Dictionary,
}

impl<'a> Group<'a> {
    fn new(
        buf: &'a [u8],
        all: &'a [Field],
        idx: usize,
        def: &GroupDef,
        dict: &'a Dictionary,
    ) -> Group<'a> {
        let span = all[idx].span as usize;
        Group {
            buf,
            fields: &all[idx + 1..idx + 1 + span],
            delimiter: def.delimiter,
            count: value::parse_uint(field_ref(buf, &all[idx]).value).unwrap_or(0) as usize,
            dict,
        }
    }

    /// Number of entries (validated equal to the count field at parse time).
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the group has no entries.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The entries, split at each delimiter tag of this group's level.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'a>> + 'a {
        let Group {
            buf,
            fields,
            delimiter,
            dict,
            ..
        } = *self;
        let mut i = 0;
        std::iter::from_fn(move || {
            if i >= fields.len() {
                return None;
            }
            let start = i;
            // The entry's first field is the delimiter; walk to the next one
            // at this level, stepping over nested groups whole.
            i += 1 + fields[i].span as usize;
            while i < fields.len() && fields[i].tag != delimiter {
                i += 1 + fields[i].span as usize;
            }
            Some(Entry {
                buf,
                fields: &fields[start..i],
                dict,
            })
        })
    }
}

/// One entry of a repeating group.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    buf: &'a [u8],
    fields: &'a [Field],
    dict: &'a Dictionary,
}

impl<'a> Entry<'a> {
    fn index_of(&self, tag: u32) -> Option<usize> {
        let mut i = 0;
        while i < self.fields.len() {
            if self.fields[i].tag == tag {
                return Some(i);
            }
            i += 1 + self.fields[i].span as usize;
        }
        None
    }

    /// The field `tag` of this entry (nested groups' members excluded).
    pub fn field(&self, tag: u32) -> Option<FieldRef<'a>> {
        self.index_of(tag)
            .map(|i| field_ref(self.buf, &self.fields[i]))
    }

    typed_getters!();

    /// A nested group of this entry.
    pub fn group(&self, count_tag: u32) -> Option<Group<'a>> {
        let def = self.dict.group(count_tag)?;
        let i = self.index_of(count_tag)?;
        Some(Group::new(self.buf, self.fields, i, def, self.dict))
    }
}
