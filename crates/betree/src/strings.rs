//! Interned strings: every string literal of the stored expressions gets a
//! number per attribute ([`Strings`]), and a search numbers the event's
//! strings once, before anything reads them ([`EventStrings`]). String
//! equality, `in`/`not in`, list membership and `one of`/`none of`/`all
//! of` then compare numbers, in evaluation and in the counting index's key
//! tables alike; only `contains`/`starts_with`/`ends_with` read bytes.
//!
//! Numbers are per attribute, as the C library's string maps are: an
//! attribute's [`Bounds::MaxStrings`](crate::Bounds::MaxStrings) bounds how
//! many it has. A string keeps its number after the last expression naming
//! it is deleted (the C library's maps never shrink either), so an index
//! fed ever-new strings grows by their bytes; an insert that fails gives
//! back the numbers it made.

use std::hash::BuildHasher;

use crate::domain::{AttrId, AttrType, Schema};
use crate::event::Value;
use crate::{Error, Result};

/// The number of an interned string.
pub(crate) type StrId = u32;

/// What an event string no expression names is numbered: equal to no
/// literal.
pub(crate) const UNKNOWN: StrId = u32::MAX;

/// The string literals of the stored expressions, numbered per attribute.
#[derive(Debug, Clone)]
pub(crate) struct Strings {
    /// The schema's string and string list attributes, in id order: the
    /// ones an event's strings are numbered for.
    attrs: Vec<AttrId>,
    /// The numbers, by the hash of (attribute, text).
    table: hashbrown::HashTable<Entry>,
    /// Every string's text, one after another (one allocation: a `Box<str>`
    /// each took 24 bytes and a 32-byte block more a string).
    text: String,
    /// Per number, its attribute and where its text ends in `text` (it
    /// starts where the previous one ends).
    spans: Vec<(AttrId, u32)>,
    /// Per attribute, how many strings it has.
    per_attr: Vec<u32>,
    hasher: hashbrown::DefaultHashBuilder,
    /// The most bytes `text` may hold: offsets into it are `u32`.
    max_text: usize,
}

/// A string's entry in the table: its number, attribute and [`Head`], so
/// that a lookup decides a string of up to 11 bytes (most attribute
/// values) from the entry alone. Comparing the text itself cost a cache
/// miss a lookup (the text is a separate allocation), which showed as
/// `memcmp` at 0.9 % of `perfkit betree search`'s samples on the adtech
/// profile.
#[derive(Debug, Clone, Copy)]
struct Entry {
    id: StrId,
    attr: AttrId,
    head: Head,
}

const _: () = assert!(size_of::<Entry>() == 20);

/// A string's first 11 bytes, zero-padded, and in the last byte its
/// length, or [`LONG`] for a longer string (whose text is then compared).
/// Words of 4 bytes keep an entry at 20 bytes.
type Head = [u32; 3];

/// Bytes of a string a [`Head`] holds.
const HEAD_BYTES: usize = 11;

/// The length byte of a [`Head`] of a longer string.
const LONG: u8 = u8::MAX;

fn head(text: &str) -> Head {
    let b = text.as_bytes();
    let mut buf = [0u8; 12];
    let n = b.len().min(HEAD_BYTES);
    buf[..n].copy_from_slice(&b[..n]);
    buf[HEAD_BYTES] = if b.len() <= HEAD_BYTES {
        b.len() as u8
    } else {
        LONG
    };
    let word = |i: usize| u32::from_le_bytes(buf[i..i + 4].try_into().expect("4 bytes"));
    [word(0), word(4), word(8)]
}

impl Strings {
    /// An empty table for `schema`'s attributes.
    pub(crate) fn new(schema: &Schema) -> Strings {
        Strings {
            attrs: (0..schema.len() as AttrId)
                .filter(|&a| matches!(schema.domain(a).ty, AttrType::Str | AttrType::StrList))
                .collect(),
            table: hashbrown::HashTable::new(),
            text: String::new(),
            spans: Vec::new(),
            per_attr: vec![0; schema.len()],
            hasher: hashbrown::DefaultHashBuilder::default(),
            max_text: u32::MAX as usize,
        }
    }

    /// The schema's string and string list attributes, in id order.
    #[inline]
    pub(crate) fn attrs(&self) -> &[AttrId] {
        &self.attrs
    }

    /// The entry of `text` as a value of `attr`, with the hash it is
    /// filed under.
    #[inline]
    fn find(&self, attr: AttrId, text: &str) -> (u64, Option<StrId>) {
        let h = self.hasher.hash_one((attr, text));
        let hd = head(text);
        let found = self.table.find(h, |e| {
            e.attr == attr
                && e.head[0] == hd[0]
                && e.head[1] == hd[1]
                && e.head[2] == hd[2]
                && (hd[2] >> 24 != u32::from(LONG) || self.text(e.id) == text)
        });
        (h, found.map(|e| e.id))
    }

    /// The number of `text` as a value of `attr`, made if new.
    ///
    /// # Errors
    ///
    /// [`Error::Domain`] when the table's text would pass
    /// [`Strings::max_text`] bytes (its offsets are 4 bytes; strings are
    /// never freed, so this counts every distinct literal ever inserted).
    pub(crate) fn intern(&mut self, attr: AttrId, text: &str) -> Result<StrId> {
        let (h, found) = self.find(attr, text);
        if let Some(id) = found {
            return Ok(id);
        }
        if self.text.len() + text.len() > self.max_text {
            return Err(Error::Domain(format!(
                "the expressions' distinct string literals would pass {} bytes, the most an index holds",
                self.max_text
            )));
        }
        let id = self.spans.len() as StrId;
        self.text.push_str(text);
        self.spans.push((attr, self.text.len() as u32));
        let e = Entry {
            id,
            attr,
            head: head(text),
        };
        // `insert_unique` may grow the table, rehashing every entry from
        // its text, which the table does not hold.
        let Strings {
            table,
            text: all,
            spans,
            hasher,
            ..
        } = self;
        table.insert_unique(h, e, |e| {
            hasher.hash_one((e.attr, span_text(all, spans, e.id)))
        });
        self.per_attr[attr as usize] += 1;
        Ok(id)
    }

    /// The text of string `id`.
    fn text(&self, id: StrId) -> &str {
        span_text(&self.text, &self.spans, id)
    }

    /// The number of `text` as a value of `attr`, if an expression names it.
    #[inline]
    pub(crate) fn get(&self, attr: AttrId, text: &str) -> Option<StrId> {
        self.find(attr, text).1
    }

    /// How many strings are numbered: a mark for [`Strings::rollback`] and
    /// [`Strings::made_since`].
    pub(crate) fn mark(&self) -> usize {
        self.spans.len()
    }

    /// How many strings `attr` has.
    pub(crate) fn count(&self, attr: AttrId) -> usize {
        self.per_attr[attr as usize] as usize
    }

    /// The attributes of the strings numbered since `mark`, one entry per
    /// string.
    pub(crate) fn made_since(&self, mark: usize) -> impl Iterator<Item = AttrId> + '_ {
        self.spans[mark..].iter().map(|(a, _)| *a)
    }

    /// Forgets the strings numbered since `mark` (those of an insert that
    /// failed; no stored expression names them).
    pub(crate) fn rollback(&mut self, mark: usize) {
        while self.spans.len() > mark {
            let id = (self.spans.len() - 1) as StrId;
            let attr = self.spans[id as usize].0;
            let h = self.hasher.hash_one((attr, self.text(id)));
            if let Ok(e) = self.table.find_entry(h, |e| e.id == id) {
                e.remove();
            }
            self.per_attr[attr as usize] -= 1;
            self.spans.pop();
        }
        let end = self.spans.last().map_or(0, |&(_, end)| end as usize);
        self.text.truncate(end);
    }

    /// Heap bytes held.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.table.capacity() * (size_of::<Entry>() + 1)
            + self.spans.capacity() * size_of::<(AttrId, u32)>()
            + self.text.capacity()
            + (self.per_attr.capacity() + self.attrs.capacity()) * 4
    }
}

/// String `id`'s text in `all`, the texts one after another, which
/// `spans` says where each ends.
fn span_text<'a>(all: &'a str, spans: &[(AttrId, u32)], id: StrId) -> &'a str {
    let start = match id {
        0 => 0,
        _ => spans[id as usize - 1].1 as usize,
    };
    &all[start..spans[id as usize].1 as usize]
}

/// One event's strings as numbers of an index's [`Strings`], made by a
/// search before anything reads them: a scalar string's number (or
/// [`UNKNOWN`]), a list's numbers sorted (strings no expression names
/// left out: they equal no literal).
#[derive(Debug, Clone, Default)]
pub(crate) struct EventStrings {
    /// Per attribute, the number of its string value.
    scalar: Vec<StrId>,
    /// Per attribute, where its list's numbers sit in `ids`.
    lists: Vec<(u32, u32)>,
    ids: Vec<StrId>,
}

impl EventStrings {
    /// Starts an event of a schema of `attrs` attributes.
    pub(crate) fn reset(&mut self, attrs: usize) {
        self.scalar.resize(attrs, UNKNOWN);
        self.lists.resize(attrs, (0, 0));
        self.ids.clear();
    }

    /// Numbers element `elem` of `attr`'s value `v` (element 0 for a
    /// scalar, or for an undefined attribute); element 0 also forgets the
    /// last event's. The elements of one attribute are numbered in order,
    /// before the next attribute's.
    #[inline]
    pub(crate) fn number(
        &mut self,
        strings: &Strings,
        attr: AttrId,
        v: Option<&Value>,
        elem: usize,
    ) {
        let a = attr as usize;
        if elem == 0 {
            self.scalar[a] = UNKNOWN;
            let end = self.ids.len() as u32;
            self.lists[a] = (end, end);
        }
        match v {
            Some(Value::Str(s)) => self.scalar[a] = strings.get(attr, s).unwrap_or(UNKNOWN),
            Some(Value::StrList(l)) => {
                if let Some(id) = l.get(elem).and_then(|s| strings.get(attr, s)) {
                    self.ids.push(id);
                    self.lists[a].1 = self.ids.len() as u32;
                }
                if elem + 1 >= l.len() {
                    let (start, end) = self.lists[a];
                    self.ids[start as usize..end as usize].sort_unstable();
                }
            }
            _ => {}
        }
    }

    /// The number of `attr`'s string value ([`UNKNOWN`] when undefined or
    /// named by no expression).
    #[inline]
    pub(crate) fn scalar(&self, attr: AttrId) -> StrId {
        self.scalar.get(attr as usize).copied().unwrap_or(UNKNOWN)
    }

    /// The numbers of `attr`'s list value, sorted.
    #[inline]
    pub(crate) fn list(&self, attr: AttrId) -> &[StrId] {
        let (start, end) = self.lists.get(attr as usize).copied().unwrap_or((0, 0));
        self.ids.get(start as usize..end as usize).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::Domain;

    fn schema() -> Schema {
        Schema::from_domains([
            Domain::new("s", AttrType::Str, true),
            Domain::new("i", AttrType::Int, true),
            Domain::new("l", AttrType::StrList, true),
        ])
        .unwrap()
    }

    #[test]
    fn numbers_tell_apart_what_heads_do_not() {
        let mut t = Strings::new(&schema());
        // Equal heads but for the length byte, a shared 11-byte prefix
        // (long strings: the text decides), the same text in another
        // attribute.
        let texts = [
            "",
            "a",
            "a\0",
            "abcdefghijk",
            "abcdefghijkX",
            "abcdefghijkY",
            "\u{e9}t\u{e9}",
        ];
        let ids: Vec<StrId> = texts.iter().map(|x| t.intern(0, x).unwrap()).collect();
        let mut distinct = ids.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), texts.len());
        for (x, id) in texts.iter().zip(&ids) {
            assert_eq!(t.intern(0, x).unwrap(), *id);
            assert_eq!(t.get(0, x), Some(*id));
            assert_eq!(t.get(2, x), None);
        }
        assert_eq!(t.get(0, "abcdefghijkZ"), None);
        assert_ne!(t.intern(2, "a").unwrap(), ids[1]);
        assert_eq!((t.count(0), t.count(2)), (texts.len(), 1));
    }

    #[test]
    fn text_past_the_offsets_is_refused() {
        let mut t = Strings::new(&schema());
        t.max_text = 10;
        t.intern(0, "0123456").unwrap();
        let e = t.intern(0, "abcd").unwrap_err().to_string();
        assert!(e.contains("would pass 10 bytes"), "{e}");
        // Known strings are still found; shorter new ones still fit.
        assert_eq!(t.intern(0, "0123456").unwrap(), 0);
        assert_eq!(t.intern(0, "abc").unwrap(), 1);
        assert_eq!(t.get(0, "abc"), Some(1));
    }

    #[test]
    fn rollback_forgets_what_was_made_after_the_mark() {
        let mut t = Strings::new(&schema());
        let a = t.intern(0, "a").unwrap();
        let mark = t.mark();
        t.intern(0, "b").unwrap();
        t.intern(2, "a much longer string than fifteen bytes")
            .unwrap();
        assert_eq!(t.made_since(mark).collect::<Vec<_>>(), [0, 2]);
        t.rollback(mark);
        assert_eq!((t.get(0, "a"), t.get(0, "b")), (Some(a), None));
        assert_eq!(t.get(2, "a much longer string than fifteen bytes"), None);
        assert_eq!((t.count(0), t.count(2)), (1, 0));
        // Numbers are given again from the mark.
        assert_eq!(t.intern(0, "c").unwrap(), a + 1);
    }

    #[test]
    fn an_event_list_keeps_the_numbers_of_named_strings_sorted() {
        let schema = schema();
        let mut t = Strings::new(&schema);
        let (z, y) = (t.intern(2, "z").unwrap(), t.intern(2, "y").unwrap());
        let s = t.intern(0, "x").unwrap();
        let mut ev = EventStrings::default();
        ev.reset(schema.len());
        let list = Value::StrList(vec!["unknown".into(), "y".into(), "z".into()]);
        for elem in 0..3 {
            ev.number(&t, 2, Some(&list), elem);
        }
        ev.number(&t, 0, Some(&Value::Str("nope".into())), 0);
        assert_eq!(ev.list(2), [z.min(y), z.max(y)]);
        assert_eq!(ev.scalar(0), UNKNOWN);
        // The next event forgets the last one's values.
        ev.reset(schema.len());
        ev.number(&t, 2, Some(&Value::StrList(vec![])), 0);
        ev.number(&t, 0, Some(&Value::Str("x".into())), 0);
        assert_eq!((ev.list(2), ev.scalar(0)), (&[][..], s));
    }
}
