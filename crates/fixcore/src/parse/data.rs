//! Length/Data field pairs in the split: a data field's value is as long
//! as its Length field says, whatever bytes it holds.

use super::{DATA_BIT, Field, MAX_FIELDS, parse_tag};
use crate::groups::{DIRECT_TAGS, Dictionary};
use crate::scan::{self, SOH_FLAG};
use crate::value;
use crate::{Error, Result};

/// The Length/Data pairs as the split consults them.
#[derive(Clone, Copy)]
pub(super) struct DataPairs<'a> {
    pub(super) dict: &'a Dictionary,
    /// Whether some pair's tag is beyond the direct table.
    pub(super) high: bool,
}

/// A data field the split must read next, as its Length field declared it.
#[derive(Clone, Copy)]
pub(super) struct DataSpec {
    pub(super) length_tag: u32,
    pub(super) data_tag: u32,
    /// Offset of the Length field.
    pub(super) at: u32,
    pub(super) declared: usize,
}

impl DataPairs<'_> {
    /// Whether the table flags `tag` as part of a Length/Data pair (a
    /// tag beyond it: whether any pair's tag is): one table load for the
    /// usual field; only flagged tags reach [`Self::role`].
    #[inline(always)]
    pub(super) fn flagged(self, table: &[u32; DIRECT_TAGS], tag: u32) -> bool {
        match table.get(tag as usize) {
            Some(e) => e & DATA_BIT != 0,
            None => self.high,
        }
    }

    /// What field `f` (just split, not itself read as data) asks of the
    /// next one: `Some` after a Length field; an error for a data field,
    /// which only a Length field may introduce.
    #[inline(always)]
    pub(super) fn role(self, buf: &[u8], f: &Field) -> Result<Option<DataSpec>> {
        match self.dict.data_role(f.tag) {
            None => Ok(None),
            Some(Err(length_tag)) => Err(Error::DataWithoutLength {
                tag: f.tag,
                length_tag,
                pos: f.start as usize,
            }),
            Some(Ok(data_tag)) => {
                let digits = &buf[f.val as usize..f.end as usize];
                let declared = value::parse_uint(digits)
                    .filter(|_| digits.len() == 1 || digits[0] != b'0')
                    .and_then(|v| usize::try_from(v).ok());
                let Some(declared) = declared else {
                    return Err(Error::BadValue {
                        tag: f.tag,
                        pos: f.val as usize,
                        expected: "Length (digits, no leading zero)",
                    });
                };
                Ok(Some(DataSpec {
                    length_tag: f.tag,
                    data_tag,
                    at: f.start,
                    declared,
                }))
            }
        }
    }
}

/// Reads field number `i`, the data field `d` announces, which starts at
/// `start` and whose `=` should be `pos[*k]`; its value is the declared
/// number of bytes whatever they hold, so `k` moves past every delimiter
/// inside it, to just after the SOH that ends it.
#[inline(never)]
pub(super) fn data_field(
    buf: &[u8],
    pos: &[u32],
    k: &mut usize,
    start: usize,
    i: usize,
    d: DataSpec,
) -> Result<Field> {
    if i >= MAX_FIELDS {
        return Err(Error::TooLarge {
            len: i + 1,
            limit: MAX_FIELDS,
        });
    }
    let lie = |at: usize, why: &'static str| Error::DataLength {
        tag: d.length_tag,
        data_tag: d.data_tag,
        pos: d.at as usize,
        declared: d.declared,
        at,
        why,
    };
    // `pos[*k]` is the first delimiter at or after `start`: the data
    // field's '=' if its tag is there.
    let e = match pos.get(*k) {
        Some(&e) if e & SOH_FLAG == 0 => e as usize,
        _ => return Err(lie(start, "the next field is not the data field")),
    };
    if parse_tag(&buf[start..e]) != Ok(d.data_tag) {
        return Err(lie(start, "the next field is not the data field"));
    }
    let val = e + 1;
    let end = match val.checked_add(d.declared) {
        Some(end) if end < buf.len() => end,
        _ => return Err(lie(buf.len(), "the message ends before the data does")),
    };
    if buf[end] != scan::SOH {
        return Err(lie(end, "no SOH ends the data where its length says"));
    }
    if d.declared == 0 {
        return Err(Error::EmptyValue {
            tag: d.data_tag,
            pos: start,
        });
    }
    // The SOH at `end` is in `pos` (the scan records every one), after the
    // '=' at `pos[*k]`; the delimiters between are data.
    let j = *k + 1 + pos[*k + 1..].partition_point(|&p| ((p & !SOH_FLAG) as usize) < end);
    debug_assert_eq!(pos.get(j), Some(&(end as u32 | SOH_FLAG)));
    *k = j + 1;
    Ok(Field {
        tag: d.data_tag,
        start: start as u32,
        val: val as u32,
        end: end as u32,
        span: 0,
    })
}
