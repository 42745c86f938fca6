//! The parser as separate passes (split every field, then validate the
//! frame, then index from the first field): the straightforward form the
//! fused [`Parser::split_and_index`] must agree with, field for field and
//! error for error. Test-only.

use super::*;
use crate::scan::SOH;

impl Parser {
    /// [`Parser::parse`] by separate passes.
    pub(crate) fn parse_by_passes<'a>(&'a mut self, buf: &'a [u8]) -> Result<Message<'a>> {
        let sum = scan::scan_and_sum(self.path, buf, &mut self.positions)?;
        self.next_generation();
        split_fields(buf, &self.positions, &mut self.fields)?;
        validate_frame(buf, &self.fields, sum)?;
        self.index_from(buf, 0)?;
        Ok(self.message(buf))
    }
}

/// Turns delimiter positions into fields, rejecting malformed ones.
fn split_fields(buf: &[u8], pos: &[u32], fields: &mut Vec<Field>) -> Result<()> {
    fields.clear();
    let len = buf.len();
    let np = pos.len();
    let mut k = 0;
    let mut start = 0usize;
    while start < len {
        if fields.len() >= MAX_FIELDS {
            return Err(Error::TooLarge {
                len: fields.len() + 1,
                limit: MAX_FIELDS,
            });
        }
        let Some(&e) = pos.get(k) else {
            return Err(Error::Truncated {
                pos: len,
                what: "field has no '=' or SOH before the end",
            });
        };
        let e = e as usize;
        if buf[e] != b'=' {
            return Err(Error::MissingEquals { pos: start });
        }
        let tag = parse_tag(&buf[start..e]).map_err(|empty| {
            if empty {
                Error::EmptyTag { pos: start }
            } else {
                Error::BadTag { pos: start }
            }
        })?;
        k += 1;
        // '=' may legitimately occur inside a value: skip to the next SOH.
        while k < np && buf[pos[k] as usize] != SOH {
            k += 1;
        }
        let Some(&s) = pos.get(k) else {
            return Err(Error::Truncated {
                pos: len,
                what: "last field is not terminated by SOH",
            });
        };
        if s as usize == e + 1 {
            return Err(Error::EmptyValue { tag, pos: start });
        }
        fields.push(Field {
            tag,
            start: start as u32,
            val: e as u32 + 1,
            end: s,
            span: 0,
        });
        start = s as usize + 1;
        k += 1;
    }
    Ok(())
}
