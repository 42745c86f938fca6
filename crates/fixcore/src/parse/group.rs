//! Repeating groups: a count field's entries checked against the
//! dictionary's definition (delimiter first, members in order, the count
//! right).

use super::{Field, MAX_GROUP_DEPTH};
use crate::groups::{Dictionary, NESTED};
use crate::value;
use crate::{Error, Result};

/// Validates the group whose count field is `fields[i]`; returns the index of
/// the first field after the group.
pub(super) fn parse_group(
    buf: &[u8],
    fields: &mut [Field],
    dict: &Dictionary,
    count_tag: u32,
    i: usize,
    depth: usize,
) -> Result<usize> {
    let cf = fields[i];
    let Some(g) = dict.group_index(count_tag) else {
        return Ok(i + 1);
    };
    let def = dict.def(g);
    if depth >= MAX_GROUP_DEPTH {
        return Err(Error::BadValue {
            tag: cf.tag,
            pos: cf.val as usize,
            expected: "group nested at most 16 deep",
        });
    }
    let declared = value::parse_uint(&buf[cf.val as usize..cf.end as usize])
        .and_then(|c| usize::try_from(c).ok());
    let Some(declared) = declared else {
        return Err(Error::BadValue {
            tag: cf.tag,
            pos: cf.val as usize,
            expected: "NumInGroup",
        });
    };
    // The CheckSum field is never part of a group.
    let last = fields.len() - 1;
    let mut j = i + 1;
    let mut entries = 0usize;
    let mut seen = 0u64;
    let (min, slots) = dict.member_slots(g);
    if declared > 0 {
        while j < last {
            let f = fields[j];
            if f.tag == def.delimiter {
                entries += 1;
                seen = 0;
            } else if entries == 0 {
                return Err(Error::GroupDelimiter {
                    tag: cf.tag,
                    pos: f.start as usize,
                    delimiter: def.delimiter,
                    found: f.tag,
                });
            }
            // A tag below the smallest member wraps past every slot.
            let slot = match slots.get(f.tag.wrapping_sub(min) as usize) {
                Some(&s) if s != 0 => s,
                _ => break,
            };
            let m = (slot & !NESTED) - 1;
            if seen & (1 << m) != 0 {
                return Err(Error::DuplicateTag {
                    tag: f.tag,
                    pos: f.start as usize,
                });
            }
            seen |= 1 << m;
            // One load says both: a member, and whether it counts a group.
            j = if slot & NESTED != 0 {
                parse_group(buf, fields, dict, f.tag, j, depth + 1)?
            } else {
                j + 1
            };
        }
    }
    if entries != declared {
        return Err(Error::GroupCount {
            tag: cf.tag,
            pos: cf.start as usize,
            declared,
            found: entries,
        });
    }
    fields[i].span = (j - i - 1) as u32;
    Ok(j)
}
