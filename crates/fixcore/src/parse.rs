//! Zero-copy, validating FIX parser.
//!
//! [`Parser::parse`] runs the structural [`scan`](mod@crate::scan), splits the
//! message into fields, checks BeginString(8) first, BodyLength(9) second and
//! equal to the real body length, MsgType(35) third, CheckSum(10) last with
//! three digits and the right value, rejects duplicate tags and validates
//! repeating groups against a [`Dictionary`].
//!
//! Data fields (RawData(96) and the other [`Dictionary::data_pairs`]) may
//! hold any byte, SOH and `=` included: their value is exactly as long as
//! the Length field just before them says. The scan still records the
//! delimiters inside such a value; the split steps over them, and a Length
//! that does not describe the data after it is an [`Error::DataLength`]. The returned [`Message`]
//! borrows the input and the parser's reusable tables: nothing is copied and,
//! once the parser's vectors have grown, nothing is allocated.
//!
//! Tag lookup is O(1): a generation-stamped direct table for tags below
//! 10,000 (so it is never cleared between messages) and a hash map for the
//! (rare) larger top-level tags.

use crate::groups::{DIRECT_TAGS, Dictionary};
use crate::scan::{self, Positions, SOH_FLAG, ScanPath};
use crate::value;
use crate::{Error, Result};
use std::collections::HashMap;
use std::collections::hash_map;
use std::mem::MaybeUninit;
use std::sync::Arc;

mod data;
mod group;
mod message;

use data::{DataPairs, data_field};
use group::parse_group;
pub use message::{Entry, FieldRef, Group, Message, Node};

/// Most fields a message may have (field indexes are 16-bit in the table).
pub const MAX_FIELDS: usize = 0xFFFF;
/// Table bit (static, set at construction) marking the tags whose field
/// needs [`Parser::index_from`]: repeating-group counts, and CheckSum(10),
/// whose right place depends on the number of fields; and the tags of
/// Length/Data pairs, whose data field the split reads by its length.
const SLOW_BIT: u32 = 1 << 31;
/// Table bit (static, with [`SLOW_BIT`]) marking the tags of Length/Data
/// pairs, so that the split asks the dictionary about these tags only.
const DATA_BIT: u32 = 1 << 30;
/// The static bits of a table entry.
const STATIC_BITS: u32 = SLOW_BIT | DATA_BIT;
/// Generations live in bits 16..29 of a table entry (below the static bits).
const GEN_MAX: u32 = 0x3FFF;

/// Largest capacity the map of high tags keeps from one message to the next.
const HIGH_KEEP: usize = 1024;

/// Deepest nesting of repeating groups accepted.
const MAX_GROUP_DEPTH: usize = 16;

/// One field's location in the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    tag: u32,
    /// Offset of the tag's first byte.
    start: u32,
    /// Offset of the value's first byte (just after `=`).
    val: u32,
    /// Offset of the terminating SOH.
    end: u32,
    /// For a repeating-group count field: how many following fields belong
    /// to the group. Zero otherwise.
    span: u32,
}

/// Reusable parsing state. Create once per thread and parse many messages.
#[derive(Debug, Clone)]
pub struct Parser {
    dict: Arc<Dictionary>,
    path: ScanPath,
    positions: Positions,
    fields: Vec<Field>,
    /// `table[tag]` = [`SLOW_BIT`] (static: a group count, or 10; with
    /// [`DATA_BIT`], a Length/Data tag) `| generation << 16 | field index`;
    /// the index is valid only when the generation matches, so stale entries
    /// need no clearing. Keeping the flags here saves a dictionary lookup
    /// per field.
    table: Box<[u32; DIRECT_TAGS]>,
    generation: u32,
    /// Field index of each top-level tag >= DIRECT_TAGS. A map, not a
    /// list: a message of thousands of such tags would otherwise make the
    /// duplicate check quadratic (an attacker's cheap way to burn CPU). The
    /// keys are the peer's choice, so it is std's keyed SipHash map, which
    /// a peer cannot flood with colliding tags; this path is rare, so its
    /// speed matters little. [`Self::next_generation`] keeps it small.
    high: HashMap<u32, u32>,
    /// Whether a Length/Data pair has a tag of [`DIRECT_TAGS`] or more
    /// (the table cannot flag it).
    high_data: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new()
    }
}

impl Parser {
    /// A parser with the FIX 4.4 group dictionary and the detected scan path.
    pub fn new() -> Parser {
        Parser::with_dictionary(Arc::new(Dictionary::fix44()))
    }

    /// A parser using `dict` for repeating groups and Length/Data pairs.
    pub fn with_dictionary(dict: Arc<Dictionary>) -> Parser {
        let mut table = Box::new([0; DIRECT_TAGS]);
        for (t, e) in (0u32..).zip(table.iter_mut()) {
            if t == 10 || dict.group(t).is_some() {
                *e = SLOW_BIT;
            }
        }
        for &(l, d) in dict.data_pairs() {
            for t in [l, d] {
                if let Some(e) = table.get_mut(t as usize) {
                    *e = STATIC_BITS;
                }
            }
        }
        Parser {
            high_data: dict.has_high_data_tags(),
            dict,
            path: ScanPath::detect(),
            positions: Positions::new(),
            fields: Vec::with_capacity(256),
            table,
            generation: 0,
            high: HashMap::new(),
        }
    }

    /// Forces a scan path (fails if the CPU lacks it).
    pub fn set_scan_path(&mut self, path: ScanPath) -> Result<()> {
        if !path.is_available() {
            return Err(Error::ScanPathUnavailable { path: path.name() });
        }
        self.path = path;
        Ok(())
    }

    /// The scan path in use.
    pub fn scan_path(&self) -> ScanPath {
        self.path
    }

    /// Parses and validates one complete message (no bytes after the
    /// CheckSum field's SOH).
    ///
    /// Limits: at most 2 GiB − 80 bytes (2³¹ − 80: the scan marks SOH
    /// positions with bit 31 of a `u32` and pads its output by 80), and at
    /// most [`MAX_FIELDS`] fields; beyond either, [`Error::TooLarge`].
    pub fn parse<'a>(&'a mut self, buf: &'a [u8]) -> Result<Message<'a>> {
        let sum = scan::scan_tagged(self.path, buf, &mut self.positions)?;
        self.next_generation();
        let rest = self.split_and_index(buf)?;
        validate_frame(buf, &self.fields, sum)?;
        self.index_from(buf, rest)?;
        Ok(self.message(buf))
    }

    /// The message of the last successful [`Self::parse`] again, without
    /// parsing: `buf` must hold exactly the bytes that parse was given
    /// (a copy is fine). Other bytes make the view's accessors read the
    /// wrong fields or panic (never undefined behaviour), hence hidden:
    /// the session crate guards it (`fixsession::app::deliver`).
    #[doc(hidden)]
    pub fn view<'a>(&'a self, buf: &'a [u8]) -> Message<'a> {
        self.message(buf)
    }

    fn message<'a>(&'a self, buf: &'a [u8]) -> Message<'a> {
        Message {
            buf,
            fields: &self.fields,
            table: &self.table[..],
            generation: self.generation,
            high: &self.high,
            dict: &self.dict,
        }
    }

    /// Starts a new message: entries stamped with older generations become
    /// stale, so the table needs no clearing (except once per 16,383
    /// messages, when the stamp wraps).
    fn next_generation(&mut self) {
        self.generation += 1;
        if self.generation > GEN_MAX {
            self.table.iter_mut().for_each(|e| *e &= STATIC_BITS);
            self.generation = 1;
        }
        // Clearing resets every control byte of the table, whatever its
        // capacity and even when it is empty: after one message of thousands
        // of high tags, keeping that capacity would make every later message
        // with a high tag pay for it. A map grown past HIGH_KEEP is dropped;
        // a small one is reused (no allocation once warm), and only cleared
        // when the last message put something in it (the usual message has
        // no high tags).
        if self.high.capacity() > HIGH_KEEP {
            self.high = HashMap::new();
        } else if !self.high.is_empty() {
            self.high.clear();
        }
    }

    /// Splits the scanner's positions into fields and, in the same pass,
    /// indexes the leading run of plain top-level fields; returns the index
    /// of the first field left for [`Self::index_from`].
    ///
    /// One pass instead of two saves storing every field and loading it back.
    /// Error precedence stays that of split, then [`validate_frame`], then
    /// index: malformed fields are reported here at once, but at the first
    /// field whose indexing could fail or needs more than a table write,
    /// indexing stops and that field is examined again by `index_from`
    /// after `validate_frame`, exactly as the separate passes did. Those
    /// fields are a repeated tag (duplicates, and 8, 9 or 35 after the
    /// header: the first three fields are 8, 9, 35 or `validate_frame`
    /// fails), and tags with [`SLOW_BIT`]: group counts (which also keeps
    /// group members out of the top-level table) and CheckSum(10).
    fn split_and_index(&mut self, buf: &[u8]) -> Result<usize> {
        let g = self.generation << 16;
        let fields = &mut self.fields;
        fields.clear();
        // Every field takes at least two positions (its '=' and its SOH),
        // and no message has more than MAX_FIELDS fields: without the cap,
        // a run of N '=' bytes would reserve N / 2 fields (10 bytes each
        // per input byte) that the reused parser then keeps.
        fields.reserve((self.positions.len() / 2 + 1).min(MAX_FIELDS + 1));
        let spare = fields.spare_capacity_mut();
        // SAFETY: `spare` holds at least the
        // `min(positions.len() / 2 + 1, MAX_FIELDS + 1)` elements just
        // reserved, which is what `split_and_index_into` requires.
        let (n, rest) = unsafe {
            split_and_index_into(
                buf,
                &self.positions,
                spare,
                &mut self.table,
                &mut self.high,
                g,
                DataPairs {
                    dict: &self.dict,
                    high: self.high_data,
                },
            )
        }?;
        // SAFETY: `split_and_index_into` initialised `spare[..n]`, which are
        // the vector's elements `0..n` (its length was 0).
        unsafe { fields.set_len(n) };
        Ok(rest)
    }

    /// The separate index pass from field `from` on (every earlier field is
    /// already in the table): fills the tag table for top-level fields,
    /// checking duplicates and header placement, and validates repeating
    /// groups.
    fn index_from(&mut self, buf: &[u8], from: usize) -> Result<()> {
        let g = self.generation << 16;
        let n = self.fields.len();
        let mut i = from;
        while i < n {
            let f = self.fields[i];
            if f.tag <= 35 {
                let misplaced = match f.tag {
                    8 => i != 0,
                    9 => i != 1,
                    35 => i != 2,
                    10 => i != n - 1,
                    _ => false,
                };
                if misplaced {
                    return Err(order_error(f, i, n));
                }
            }
            if let Some(slot) = self.table.get_mut(f.tag as usize) {
                let e = *slot;
                if e & !STATIC_BITS & 0xFFFF_0000 == g {
                    return Err(Error::DuplicateTag {
                        tag: f.tag,
                        pos: f.start as usize,
                    });
                }
                *slot = (e & STATIC_BITS) | g | i as u32;
                // A group count, or CheckSum(10), which counts none: asked
                // here, not in a call per message.
                i = if e & SLOW_BIT == 0 || self.dict.group_index(f.tag).is_none() {
                    i + 1
                } else {
                    parse_group(buf, &mut self.fields, &self.dict, f.tag, i, 0)?
                };
            } else {
                if self.high.insert(f.tag, i as u32).is_some() {
                    return Err(Error::DuplicateTag {
                        tag: f.tag,
                        pos: f.start as usize,
                    });
                }
                // Never a group count: the dictionary refuses count tags
                // >= DIRECT_TAGS.
                i += 1;
            }
        }
        Ok(())
    }
}

/// [`Parser::split_and_index`] on disjoint borrows (so the compiler knows
/// that table writes cannot change the field count or positions); returns
/// how many fields it wrote to `out` and the first field left unindexed.
///
/// # Safety
/// `out` must hold at least `min(pos.len() / 2 + 1, MAX_FIELDS + 1)`
/// elements: fields are written without bounds checks.
#[inline(always)]
unsafe fn split_and_index_into(
    buf: &[u8],
    pos: &[u32],
    out: &mut [MaybeUninit<Field>],
    table: &mut [u32; DIRECT_TAGS],
    high: &mut HashMap<u32, u32>,
    g: u32,
    data: DataPairs<'_>,
) -> Result<(usize, usize)> {
    let (mut k, mut start, mut i) = (0, 0, 0);
    // The first loop indexes plain fields only: it stops at every flagged
    // tag, Length and data tags included, so no field after a Length field
    // is ever read by `next_field` there.
    let rest = loop {
        if start >= buf.len() {
            return Ok((i, i));
        }
        let f = next_field(buf, pos, &mut k, start, i)?;
        start = f.end as usize + 1;
        // The bounds check here cost ~4 % of a NOS parse (a spilled length).
        debug_assert!(i < MAX_FIELDS && i < pos.len() / 2);
        debug_assert!(i < out.len());
        // SAFETY: `next_field` returned a field, so `i < MAX_FIELDS` (for
        // `i >= MAX_FIELDS` it skips `common_field` and `any_field` fails
        // with `TooLarge`); and every field takes at least two positions
        // (`next_field` moves `k` by two or more, never past `pos.len()`),
        // so `2 * (i + 1) <= k <= pos.len()`: `i < pos.len() / 2`. Hence
        // `i < min(pos.len() / 2 + 1, MAX_FIELDS + 1) <= out.len()`.
        unsafe { out.get_unchecked_mut(i).write(f) };
        let tag = f.tag;
        match table.get_mut(tag as usize) {
            Some(slot) => {
                let entry = *slot;
                if entry & SLOW_BIT != 0 || entry & 0xFFFF_0000 == g {
                    break i;
                }
                *slot = g | i as u32;
            }
            None if data.high && data.dict.data_role(tag).is_some() => break i,
            None => match high.entry(tag) {
                hash_map::Entry::Occupied(_) => break i,
                hash_map::Entry::Vacant(v) => {
                    v.insert(i as u32);
                }
            },
        }
        i += 1;
    };
    // Field `rest` is written but not indexed: split the others only.
    i += 1;
    if start >= buf.len() {
        // Usually so: CheckSum(10) ends the message and stops the loop.
        // Unless that last field was a Length field, nothing is left.
        // SAFETY: `out[rest]` was written just before the loop broke.
        let tag = unsafe { out.get_unchecked(rest).assume_init_ref().tag };
        let flagged = match table.get(tag as usize) {
            Some(e) => e & DATA_BIT != 0,
            None => data.high,
        };
        if !flagged {
            return Ok((i, rest));
        }
    }
    // SAFETY: `out` is as this function requires, `out[rest]` was written
    // just before the loop broke, and `k`, `start` and `i` are where the
    // split stands.
    let n = unsafe { split_rest(buf, pos, out, table, data, k, start, i, rest) }?;
    Ok((n, rest))
}

/// The split after field `rest` (often nothing: CheckSum(10) is last),
/// reading each data field by the length its Length field declares, from
/// field `i`, which starts at `start` and whose '=' should be `pos[k]`;
/// returns the number of fields. Kept out of line: inlined, its data-field
/// handling made the first loop of [`split_and_index_into`] slower.
///
/// # Safety
/// `out` must be as [`split_and_index_into`] requires, with `out[rest]`
/// written, and `i == rest + 1`.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn split_rest(
    buf: &[u8],
    pos: &[u32],
    out: &mut [MaybeUninit<Field>],
    table: &[u32; DIRECT_TAGS],
    data: DataPairs<'_>,
    mut k: usize,
    mut start: usize,
    mut i: usize,
    rest: usize,
) -> Result<usize> {
    debug_assert_eq!(i, rest + 1);
    // SAFETY: the caller wrote `out[rest]`.
    let mut flagged = data.flagged(table, unsafe {
        out.get_unchecked(rest).assume_init_ref().tag
    });
    loop {
        // The usual field is not flagged: its loop is the plain split, and
        // a Length field's data is read out of line. (Carrying the data
        // field's declaration from one field to the next, as an `Option`,
        // made this loop spill its state: `fix check` of deep books took
        // 6 % longer.)
        if flagged {
            // SAFETY: field `i - 1` was written just before (`out[rest]`
            // on entry, since `i == rest + 1`).
            let last = unsafe { out.get_unchecked(i - 1).assume_init() };
            if let Some((f, next)) = announced_data(buf, pos, data, &last, k, start, i)? {
                start = f.end as usize + 1;
                k = next;
                debug_assert!(i < MAX_FIELDS && i < pos.len() / 2);
                // SAFETY: `data_field` succeeded, so `i < MAX_FIELDS`, and
                // it moved `k` by two or more (the data field's '=' and the
                // SOH ending it), so `i < pos.len() / 2`: below `out.len()`.
                unsafe { out.get_unchecked_mut(i).write(f) };
                i += 1;
            }
        }
        if start >= buf.len() {
            return Ok(i);
        }
        let f = next_field(buf, pos, &mut k, start, i)?;
        start = f.end as usize + 1;
        debug_assert!(i < MAX_FIELDS && i < pos.len() / 2);
        debug_assert!(i < out.len());
        // SAFETY: as in the first loop of `split_and_index_into`:
        // `next_field` succeeded, so `i < MAX_FIELDS`, and it moved `k` by
        // two or more, so `i < pos.len() / 2`; both are below `out.len()`.
        unsafe { out.get_unchecked_mut(i).write(f) };
        i += 1;
        flagged = data.flagged(table, f.tag);
    }
}

/// The data field that `last`, a field the table flags, announces when it
/// is a Length field: read by its declared length from `start` (where the
/// next field starts, its '=' at `pos[k]`), as field `i`, with the
/// position after its SOH; `None` for a flagged tag that is no Length
/// field here, and an error for a data field without its Length or a
/// message that ends before the data.
#[inline(never)]
fn announced_data(
    buf: &[u8],
    pos: &[u32],
    data: DataPairs<'_>,
    last: &Field,
    k: usize,
    start: usize,
    i: usize,
) -> Result<Option<(Field, usize)>> {
    let Some(d) = data.role(buf, last)? else {
        return Ok(None);
    };
    if start >= buf.len() {
        return Err(Error::DataLength {
            tag: d.length_tag,
            data_tag: d.data_tag,
            pos: d.at as usize,
            declared: d.declared,
            at: buf.len(),
            why: "the message ends before the data field",
        });
    }
    let mut k = k;
    let f = data_field(buf, pos, &mut k, start, i, d)?;
    Ok(Some((f, k)))
}

/// Reads field number `i`, which starts at `start` (before the end of
/// `buf`) and whose `=` should be `pos[*k]`, rejecting a malformed one, and
/// moves `k` past its SOH.
///
/// Inlined, so `k` stays in a register; the cold [`any_field`] takes it by
/// value, as a `&mut` to it there would send it through memory on every
/// field.
#[inline(always)]
fn next_field(buf: &[u8], pos: &[u32], k: &mut usize, start: usize, i: usize) -> Result<Field> {
    let common = if i < MAX_FIELDS {
        common_field(buf, pos, *k, start)
    } else {
        None
    };
    // Merge the paths on the scalars that differ and build the field after
    // the merge, never on a `Result` or a whole `Field`: LLVM then kept the
    // common field in the stack, and its 4-byte stores reloaded as one
    // 8-byte load (for the write to the field vector) cannot be forwarded.
    // Each time this crept back the parse ran 35-40 % slower.
    let (tag, val, end, next) = match common {
        Some(f) => (f.tag, f.val, f.end, *k + 2),
        None => {
            let (f, next) = any_field(buf, pos, *k, start, i)?;
            (f.tag, f.val, f.end, next)
        }
    };
    *k = next;
    Ok(Field {
        tag,
        start: start as u32,
        val,
        end,
        span: 0,
    })
}

/// The common field, `tag=value<SOH>` with a tag of 1–4 digits and no
/// `=` in the value, read with fewer checks than [`any_field`]; `None` for
/// anything else, well-formed or not.
#[inline(always)]
fn common_field(buf: &[u8], pos: &[u32], k: usize, start: usize) -> Option<Field> {
    let e = *pos.get(k)?;
    let s = *pos.get(k + 1)?;
    // An '=' then an SOH ([`SOH_FLAG`] clear, then set), not adjacent.
    if (e | !s) & SOH_FLAG != 0 || s == (e + 1) | SOH_FLAG {
        return None;
    }
    let s = s & !SOH_FLAG;
    let tag = parse_short_tag(buf.get(start..e as usize)?)?;
    Some(Field {
        tag,
        start: start as u32,
        val: e + 1,
        end: s,
        span: 0,
    })
}

/// [`next_field`] for every field, with every check in the order that
/// decides which error a malformed message gets.
#[cold]
#[inline(never)]
fn any_field(buf: &[u8], pos: &[u32], k: usize, start: usize, i: usize) -> Result<(Field, usize)> {
    let len = buf.len();
    if i >= MAX_FIELDS {
        return Err(Error::TooLarge {
            len: i + 1,
            limit: MAX_FIELDS,
        });
    }
    let Some(&e) = pos.get(k) else {
        return Err(Error::Truncated {
            pos: len,
            what: "field has no '=' or SOH before the end",
        });
    };
    if e & SOH_FLAG != 0 {
        return Err(Error::MissingEquals { pos: start });
    }
    let e = e as usize;
    let tag = parse_tag(&buf[start..e]).map_err(|empty| {
        if empty {
            Error::EmptyTag { pos: start }
        } else {
            Error::BadTag { pos: start }
        }
    })?;
    let mut k = k + 1;
    // '=' may legitimately occur inside a value: skip to the next SOH.
    while k < pos.len() && pos[k] & SOH_FLAG == 0 {
        k += 1;
    }
    let Some(&s) = pos.get(k) else {
        return Err(Error::Truncated {
            pos: len,
            what: "last field is not terminated by SOH",
        });
    };
    let s = s & !SOH_FLAG;
    if s as usize == e + 1 {
        return Err(Error::EmptyValue { tag, pos: start });
    }
    let f = Field {
        tag,
        start: start as u32,
        val: e as u32 + 1,
        end: s,
        span: 0,
    };
    Ok((f, k + 1))
}

fn order_error(f: Field, i: usize, n: usize) -> Error {
    let why = match (f.tag, i) {
        (8, _) => "BeginString(8) must be the first field",
        (9, _) => "BodyLength(9) must be the second field",
        (35, _) => "MsgType(35) must be the third field",
        (10, _) => "CheckSum(10) must be the last field",
        (_, 0) => "the first field must be BeginString(8)",
        (_, 1) => "the second field must be BodyLength(9)",
        (_, 2) => "the third field must be MsgType(35)",
        _ if i + 1 == n => "the last field must be CheckSum(10)",
        _ => "misplaced field",
    };
    Error::FieldOrder {
        pos: f.start as usize,
        tag: f.tag,
        why,
    }
}

/// [`parse_tag`] for tags of 1–4 digits; `None` for anything else.
///
/// Straight-line arithmetic chosen by length: the digit-by-digit loop,
/// whose exit mispredicts as tag lengths alternate, was ~40 % of a
/// validated parse. A SWAR (8 bytes at once) version was measured slower.
#[inline(always)]
fn parse_short_tag(t: &[u8]) -> Option<u32> {
    let d = |i: usize| u32::from(t[i].wrapping_sub(b'0'));
    // Every digit < 10 and the first not 0: one test on the OR of the
    // out-of-range flags keeps the paths branch-light.
    let (x, bad) = match t.len() {
        1 => (d(0), d(0).wrapping_sub(1) > 8),
        2 => {
            let (a, b) = (d(0), d(1));
            (a * 10 + b, (a.wrapping_sub(1) > 8) | (b > 9))
        }
        3 => {
            let (a, b, c) = (d(0), d(1), d(2));
            (
                a * 100 + b * 10 + c,
                (a.wrapping_sub(1) > 8) | (b > 9) | (c > 9),
            )
        }
        4 => {
            let (a, b, c, e) = (d(0), d(1), d(2), d(3));
            (
                a * 1000 + b * 100 + c * 10 + e,
                (a.wrapping_sub(1) > 8) | (b > 9) | (c > 9) | (e > 9),
            )
        }
        _ => return None,
    };
    if bad { None } else { Some(x) }
}

/// Parses a tag: 1–9 digits, no leading zero (so not zero either: FIX
/// tags are positive integers written without padding); `Err(true)` when
/// empty. Tags of 1–4 digits (all but a few user-defined ones) go to
/// [`parse_short_tag`].
pub(crate) fn parse_tag(t: &[u8]) -> std::result::Result<u32, bool> {
    match t.len() {
        0 => Err(true),
        1..=4 => parse_short_tag(t).ok_or(false),
        5..=9 => {
            if t[0] == b'0' {
                return Err(false);
            }
            let mut x = 0u32;
            for &b in t {
                let d = b.wrapping_sub(b'0');
                if d > 9 {
                    return Err(false);
                }
                x = x * 10 + u32::from(d);
            }
            Ok(x)
        }
        _ => Err(false),
    }
}

/// `FIX.d.d` or `FIXT.d.d`: every BeginString FIX has defined (FIX.4.0 to
/// FIX.4.4, FIXT.1.1 for FIX 5.0 and later).
pub(crate) fn valid_begin_string(v: &[u8]) -> bool {
    let rest = v.strip_prefix(b"FIXT.").or_else(|| v.strip_prefix(b"FIX."));
    matches!(rest, Some([a, b'.', b]) if a.is_ascii_digit() && b.is_ascii_digit())
}

/// What [`Error::BadValue`] names for a bad BeginString(8).
pub(crate) const BEGIN_STRING: &str = "BeginString (FIX.n.n or FIXT.n.n)";

/// Checks 8/9/35 placement, BodyLength and CheckSum. `sum` is the sum of
/// every byte of `buf`, from the scan.
fn validate_frame(buf: &[u8], fields: &[Field], sum: u64) -> Result<()> {
    let n = fields.len();
    if n == 0 {
        return Err(Error::Truncated {
            pos: 0,
            what: "empty message",
        });
    }
    for (i, want) in [8u32, 9, 35].into_iter().enumerate() {
        match fields.get(i) {
            Some(f) if f.tag == want => {}
            Some(&f) => return Err(order_error(f, i, n)),
            None => {
                return Err(Error::Truncated {
                    pos: buf.len(),
                    what: "message ends before MsgType(35)",
                });
            }
        }
    }
    let f8 = fields[0];
    if !valid_begin_string(&buf[f8.val as usize..f8.end as usize]) {
        return Err(Error::BadValue {
            tag: 8,
            pos: f8.val as usize,
            expected: BEGIN_STRING,
        });
    }
    let last = fields[n - 1];
    if last.tag != 10 {
        // A CheckSum elsewhere is an ordering fault; none at all means the
        // message was cut short.
        if let Some(f) = fields.iter().find(|f| f.tag == 10) {
            return Err(order_error(*f, 0, n));
        }
        return Err(Error::Truncated {
            pos: buf.len(),
            what: "no CheckSum(10) field at the end",
        });
    }
    let f9 = fields[1];
    let len_digits = &buf[f9.val as usize..f9.end as usize];
    // A Length is written without leading zeros (unlike CheckSum, which is
    // always three digits, zero-padded: checked below).
    let declared = value::parse_uint(len_digits)
        .filter(|_| len_digits.len() == 1 || len_digits[0] != b'0')
        .and_then(|v| usize::try_from(v).ok());
    // A `let else`, not `ok_or`: an eager `Error` costs a drop call on every
    // message.
    let Some(declared) = declared else {
        return Err(Error::BadValue {
            tag: 9,
            pos: f9.val as usize,
            expected: "Length (digits, no leading zero)",
        });
    };
    let actual = (last.start - fields[2].start) as usize;
    if declared != actual {
        return Err(Error::BodyLength {
            pos: f9.start as usize,
            declared,
            actual,
        });
    }
    let cs = &buf[last.val as usize..last.end as usize];
    let declared = match cs {
        [a, b, c] if a.is_ascii_digit() && b.is_ascii_digit() && c.is_ascii_digit() => {
            u32::from(a - b'0') * 100 + u32::from(b - b'0') * 10 + u32::from(c - b'0')
        }
        _ => {
            return Err(Error::CheckSumFormat {
                pos: last.start as usize,
            });
        }
    };
    // The trailer is exactly `10=ddd<SOH>` here, so subtracting its seven
    // bytes from the whole-message sum leaves the checksummed range.
    let trailer: u64 = buf[last.start as usize..]
        .iter()
        .map(|&b| u64::from(b))
        .sum();
    let actual = ((sum - trailer) % 256) as u32;
    if declared != actual {
        return Err(Error::CheckSum {
            pos: last.start as usize,
            declared,
            actual,
        });
    }
    Ok(())
}

/// FIX checksum: byte sum modulo 256. Wrapping `u8` addition is exactly
/// that, and vectorises to plain byte adds.
#[inline]
pub fn checksum(bytes: &[u8]) -> u8 {
    bytes.iter().fold(0u8, |a, &b| a.wrapping_add(b))
}

#[cfg(test)]
mod reference;
#[cfg(test)]
pub(crate) mod tests;
