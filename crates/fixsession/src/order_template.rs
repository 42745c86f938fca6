//! Order templates: the NewOrderSingle fields a user chooses, as text,
//! for the two senders of orders (`fix load`'s generator and `fix
//! initiator --orders`), which read them with this one parser.

/// An order's fields, `(tag, value)` in the order given.
pub type OrderFields = Vec<(u32, Vec<u8>)>;

/// Why an order template is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// A field that is not `tag=value`.
    #[error("'{0}' is not a tag=value field")]
    Field(String),
    /// A field the session or the sender writes.
    #[error("tag {0} is written by the session or the generator, not the template")]
    Tag(u32),
    /// A field with an empty value.
    #[error("tag {0} has an empty value")]
    Empty(u32),
}

/// The fields of an order template: `tag=value` fields separated by `|`
/// or SOH (line breaks too). The fields the session writes (BeginString,
/// BodyLength, CheckSum, MsgSeqNum, MsgType, the CompIDs, SendingTime) and
/// the generator's own (ClOrdID 11, TransactTime 60) may not be given, and
/// no value may be empty.
///
/// ```
/// use fixsession::order_template::parse_template;
/// let fields = parse_template(b"55=IBM|54=2").unwrap();
/// assert_eq!(fields, vec![(55, b"IBM".to_vec()), (54, b"2".to_vec())]);
/// assert!(parse_template(b"11=mine").is_err());
/// ```
pub fn parse_template(text: &[u8]) -> Result<OrderFields, TemplateError> {
    let mut fields = Vec::new();
    for f in text
        .split(|&b| b == b'|' || b == 1 || b == b'\n' || b == b'\r')
        .filter(|f| !f.is_empty())
    {
        let eq = f.iter().position(|&b| b == b'=');
        let tag = eq
            .and_then(|i| std::str::from_utf8(&f[..i]).ok())
            .and_then(|t| t.parse::<u32>().ok())
            .filter(|&t| t > 0);
        let (Some(i), Some(tag)) = (eq, tag) else {
            return Err(TemplateError::Field(
                String::from_utf8_lossy(f).into_owned(),
            ));
        };
        if matches!(tag, 8 | 9 | 10 | 11 | 34 | 35 | 49 | 52 | 56 | 60) {
            return Err(TemplateError::Tag(tag));
        }
        if f.len() == i + 1 {
            return Err(TemplateError::Empty(tag));
        }
        fields.push((tag, f[i + 1..].to_vec()));
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_fields_without_the_generators_tags() {
        assert_eq!(
            parse_template(b"55=IBM|54=2\n38=5|").unwrap(),
            vec![
                (55, b"IBM".to_vec()),
                (54, b"2".to_vec()),
                (38, b"5".to_vec())
            ]
        );
        for (text, msg) in [
            ("11=x", "tag 11 is written"),
            ("55", "'55' is not a tag=value field"),
            ("x=1", "'x=1' is not"),
            ("55=", "tag 55 has an empty value"),
        ] {
            let e = parse_template(text.as_bytes()).unwrap_err().to_string();
            assert!(e.contains(msg), "{text}: {e}");
        }
    }
}
