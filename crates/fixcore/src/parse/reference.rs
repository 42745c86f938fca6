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
        split_fields(buf, &self.positions, &mut self.fields, &self.dict)?;
        validate_frame(buf, &self.fields, sum)?;
        self.index_from(buf, 0)?;
        Ok(self.message(buf))
    }
}

/// Turns delimiter positions into fields, rejecting malformed ones; the
/// field after a Length field is read byte by byte, by its length.
fn split_fields(buf: &[u8], pos: &[u32], fields: &mut Vec<Field>, dict: &Dictionary) -> Result<()> {
    fields.clear();
    let len = buf.len();
    let np = pos.len();
    let mut k = 0;
    let mut start = 0usize;
    // (Length field, declared length, data tag) awaiting its data field.
    let mut pending: Option<(Field, usize, u32)> = None;
    while start < len {
        if fields.len() >= MAX_FIELDS {
            return Err(Error::TooLarge {
                len: fields.len() + 1,
                limit: MAX_FIELDS,
            });
        }
        if let Some((lf, declared, data_tag)) = pending.take() {
            let lie = |at: usize, why: &'static str| Error::DataLength {
                tag: lf.tag,
                data_tag,
                pos: lf.start as usize,
                declared,
                at,
                why,
            };
            let not_data = || lie(start, "the next field is not the data field");
            let eq = buf[start..]
                .iter()
                .position(|&b| b == b'=' || b == SOH)
                .map(|p| start + p)
                .filter(|&p| buf[p] == b'=')
                .ok_or_else(not_data)?;
            if parse_tag(&buf[start..eq]) != Ok(data_tag) {
                return Err(not_data());
            }
            let end = eq + 1 + declared;
            if end >= len {
                return Err(lie(len, "the message ends before the data does"));
            }
            if buf[end] != SOH {
                return Err(lie(end, "no SOH ends the data where its length says"));
            }
            if declared == 0 {
                return Err(Error::EmptyValue {
                    tag: data_tag,
                    pos: start,
                });
            }
            fields.push(Field {
                tag: data_tag,
                start: start as u32,
                val: eq as u32 + 1,
                end: end as u32,
                span: 0,
            });
            while k < np && pos[k] as usize <= end {
                k += 1;
            }
            start = end + 1;
            continue;
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
        let f = Field {
            tag,
            start: start as u32,
            val: e as u32 + 1,
            end: s,
            span: 0,
        };
        fields.push(f);
        match dict.data_role(tag) {
            Some(Ok(data_tag)) => {
                let v = &buf[f.val as usize..f.end as usize];
                let declared = std::str::from_utf8(v)
                    .ok()
                    .filter(|t| t.bytes().all(|b| b.is_ascii_digit()))
                    .filter(|t| t.len() == 1 || !t.starts_with('0'))
                    .and_then(|t| t.parse::<usize>().ok())
                    .ok_or(Error::BadValue {
                        tag,
                        pos: f.val as usize,
                        expected: "Length (digits, no leading zero)",
                    })?;
                pending = Some((f, declared, data_tag));
            }
            Some(Err(length_tag)) => {
                return Err(Error::DataWithoutLength {
                    tag,
                    length_tag,
                    pos: start,
                });
            }
            None => {}
        }
        start = s as usize + 1;
        k += 1;
    }
    if let Some((lf, declared, data_tag)) = pending {
        return Err(Error::DataLength {
            tag: lf.tag,
            data_tag,
            pos: lf.start as usize,
            declared,
            at: len,
            why: "the message ends before the data field",
        });
    }
    Ok(())
}
