//! Reading a received frame: the header and session fields the state
//! machine needs ([`Inbound`]), through the strict parser or, for a
//! well-framed message it refuses, field by field; what is not well
//! framed is [`Garbled`].

use super::{Config, is_admin};
use crate::reject::Reason;
use fixcore::Error;
use fixcore::parse::Parser;
use fixcore::value::UtcTimestamp;

/// The header and session fields of a received message, read out of the
/// parser (values borrow the message, not the parser) so the session can
/// answer while holding them.
#[derive(Debug, Default)]
pub(super) struct Inbound<'a> {
    pub(super) msg_type: &'a [u8],
    pub(super) seq: Option<u64>,
    /// SenderCompID and TargetCompID are the session's, reversed.
    pub(super) comp_ids_ok: bool,
    pub(super) sending_time: Option<UtcTimestamp>,
    pub(super) poss_dup: bool,
    pub(super) orig_sending_time: Option<UtcTimestamp>,
    /// Bad or missing required header field: (reason, tag).
    pub(super) header_problem: Option<(Reason, u32)>,
    pub(super) heart_bt_int: Option<u64>,
    pub(super) reset_seq_num: bool,
    pub(super) test_req_id: Option<&'a [u8]>,
    pub(super) begin_seq_no: Option<u64>,
    pub(super) end_seq_no: Option<u64>,
    pub(super) new_seq_no: Option<u64>,
    pub(super) gap_fill: bool,
    /// NextExpectedMsgSeqNum(789) of a Logon.
    pub(super) next_expected: Option<u64>,
    /// BeginString is not the session's.
    pub(super) wrong_begin_string: bool,
    /// The routing fields a Reject sends back reversed: (tag on the
    /// Reject, value), e.g. OnBehalfOfCompID(115) as DeliverToCompID(128).
    pub(super) reverse_route: Vec<(u32, &'a [u8])>,
    /// The strict parser accepted the message (its parse is in the
    /// session's parser until the next one).
    pub(super) parsed: bool,
    /// Username(553) and Password(554) of a Logon.
    pub(super) username: Option<&'a [u8]>,
    pub(super) password: Option<&'a [u8]>,
}

/// Whether a framed message has a field `tag`.
pub(super) fn fields_have(msg: &[u8], tag: u32) -> bool {
    split_fields(msg).iter().any(|&(t, _)| t == tag)
}

/// MsgType(35) of a framed message (the third field).
pub(super) fn msg_type_of(msg: &[u8]) -> Option<&[u8]> {
    let mut fields = msg.split(|&b| b == 1);
    let third = fields.nth(2)?;
    third.strip_prefix(b"35=")
}

/// Tags QuickFIX places in the standard header.
pub fn is_header_tag(t: u32) -> bool {
    matches!(
        t,
        8 | 9
            | 35
            | 34
            | 43
            | 49
            | 50
            | 52
            | 56
            | 57
            | 90
            | 91
            | 97
            | 115
            | 116
            | 122
            | 128
            | 129
            | 142
            | 143
            | 144
            | 145
            | 212
            | 213
            | 347
            | 369
            | 370
            | 627
            | 628
            | 629
            | 630
            | 1128
            | 1129
            | 1156
    )
}

/// Why a message is dropped as garbled.
pub(super) struct Garbled(pub(super) String);

/// Reads what the session needs from `msg`; a message the parser refuses
/// for its framing (BeginString, BodyLength, CheckSum, the order of 8, 9
/// and 35) is garbled.
pub(super) fn inspect<'m>(
    parser: &mut Parser,
    msg: &'m [u8],
    cfg: &Config,
) -> Result<Inbound<'m>, Garbled> {
    match parser.parse(msg) {
        // The values are re-sliced from `msg` so that the result borrows
        // the message alone and the parser is free again.
        Ok(m) => {
            fill(|t| m.get(t).map(|v| within(msg, v)), cfg).map(|i| Inbound { parsed: true, ..i })
        }
        // A repeated tag, a group the parser's table does not know, an
        // empty value: well framed, so the session layer goes on (QuickFIX
        // without a dictionary keeps such fields as they come); judging
        // them is the data dictionary's part.
        Err(
            Error::DuplicateTag { .. }
            | Error::GroupCount { .. }
            | Error::GroupDelimiter { .. }
            | Error::EmptyValue { .. }
            | Error::BadValue { .. },
        ) => tolerated(msg, cfg),
        // A tag of zero or below (or with leading zeros) is still a
        // number to QuickFIX, which frames and parses the message and
        // leaves the tag to the dictionary; any other bad tag is garbage.
        Err(Error::BadTag { .. })
            if fixcore::frame::checksum_matches(msg)
                && split_tags(msg).all(|t| signed_tag(t).is_some()) =>
        {
            tolerated(msg, cfg)
        }
        // QuickFIX's ValidateLengthAndChecksum=N (and QuickFIX/J's
        // ValidateChecksum=N): a frame whose numbers are wrong is still a
        // message.
        Err(Error::BodyLength { .. }) if !cfg.validate_length => tolerated(msg, cfg),
        Err(Error::CheckSum { .. }) if !cfg.validate_checksum => tolerated(msg, cfg),
        Err(e) => Err(Garbled(e.to_string())),
    }
}

/// The session's view of a well-framed message the strict parser refused.
fn tolerated<'m>(msg: &'m [u8], cfg: &Config) -> Result<Inbound<'m>, Garbled> {
    let fields = split_fields(msg);
    fill(
        |t| fields.iter().find(|(ft, _)| *ft == t).map(|&(_, v)| v),
        cfg,
    )
}

/// The tag text of each field of a frame.
fn split_tags(msg: &[u8]) -> impl Iterator<Item = &[u8]> {
    msg.split(|&b| b == 1)
        .filter(|f| !f.is_empty())
        .map(|f| f.split(|&b| b == b'=').next().unwrap_or_default())
}

/// A tag as QuickFIX's integer conversion reads it: an optional minus
/// and 1-9 digits.
fn signed_tag(t: &[u8]) -> Option<i64> {
    let digits = t.strip_prefix(b"-").unwrap_or(t);
    if digits.is_empty() || digits.len() > 9 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(t).ok()?.parse().ok()
}

/// The first tag of `msg` that is a number no dictionary defines (zero
/// or negative).
pub(super) fn non_positive_tag(msg: &[u8]) -> Option<i64> {
    split_tags(msg).find_map(|t| signed_tag(t).filter(|&n| n <= 0))
}

/// A frame's fields in order, read without validation.
pub fn split_fields(msg: &[u8]) -> Vec<(u32, &[u8])> {
    msg.split(|&b| b == 1)
        .filter_map(|f| {
            let eq = f.iter().position(|&b| b == b'=')?;
            let tag = std::str::from_utf8(&f[..eq]).ok()?.parse().ok()?;
            Some((tag, &f[eq + 1..]))
        })
        .collect()
}

/// `part`, a slice of `msg`'s bytes, as a slice of `msg` itself.
fn within<'m>(msg: &'m [u8], part: &[u8]) -> &'m [u8] {
    let at = (part.as_ptr() as usize).wrapping_sub(msg.as_ptr() as usize);
    &msg[at..at + part.len()]
}

/// The session's view of a message whose fields `get` looks up (the
/// first occurrence of a tag).
fn fill<'a>(get: impl Fn(u32) -> Option<&'a [u8]>, cfg: &Config) -> Result<Inbound<'a>, Garbled> {
    let uint = |t| get(t).and_then(fixcore::value::parse_uint);
    let msg_type = get(35).unwrap_or_default();
    let begin_string = get(8);
    let (seq_text, sending_text) = (get(34), get(52));
    let (sender, target) = (get(49), get(56));
    let mut i = Inbound {
        msg_type,
        seq: seq_text.and_then(fixcore::value::parse_uint),
        comp_ids_ok: sender == Some(cfg.target_comp_id.as_bytes())
            && target == Some(cfg.sender_comp_id.as_bytes()),
        sending_time: sending_text.and_then(UtcTimestamp::parse),
        poss_dup: get(43) == Some(b"Y"),
        orig_sending_time: get(122).and_then(UtcTimestamp::parse),
        wrong_begin_string: begin_string != Some(cfg.begin_string.as_str().as_bytes()),
        ..Inbound::default()
    };
    // The fields only session messages carry are read for those alone:
    // an order is most of the traffic and has none of them.
    if is_admin(msg_type) {
        i.heart_bt_int = uint(108);
        i.reset_seq_num = get(141) == Some(b"Y");
        i.test_req_id = get(112);
        i.begin_seq_no = uint(7);
        i.end_seq_no = uint(16);
        i.new_seq_no = uint(36);
        i.gap_fill = get(123) == Some(b"Y");
        i.next_expected = uint(789);
        i.username = get(553);
        i.password = get(554);
    }
    // QuickFIX's Message::reverseRoute: each non-empty routing field
    // comes back as its counterpart (the location ids from FIX 4.1 on).
    let with_location = begin_string.is_some_and(|b| b >= b"FIX.4.1".as_slice());
    for (from, to) in [
        (115, 128),
        (116, 129),
        (128, 115),
        (129, 116),
        (144, 145),
        (145, 144),
    ] {
        if from >= 144 && !with_location {
            continue;
        }
        if let Some(v) = get(from).filter(|v| !v.is_empty()) {
            i.reverse_route.push((to, v));
        }
    }
    // The header fields the session needs, in QuickFIX's order of checks.
    i.header_problem = if seq_text.is_some() && i.seq.is_none() {
        Some((Reason::INCORRECT_DATA_FORMAT, 34))
    } else if sending_text.is_none() {
        Some((Reason::REQUIRED_TAG_MISSING, 52))
    } else if i.sending_time.is_none() {
        Some((Reason::INCORRECT_DATA_FORMAT, 52))
    } else if sender.is_none() {
        Some((Reason::REQUIRED_TAG_MISSING, 49))
    } else if target.is_none() {
        Some((Reason::REQUIRED_TAG_MISSING, 56))
    } else {
        None
    };
    Ok(i)
}
