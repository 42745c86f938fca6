//! A whole message checked against its data dictionaries, in the manner of
//! QuickFIX's `DataDictionary::validate`, with its switches
//! ([`Validation`]): fields in header / body / trailer order, a known
//! MsgType, required fields (in repeating-group entries too), values
//! present, well formed and in their enumerations, tags known and defined
//! for the message type, no tag twice at one level, and NumInGroup equal
//! to the entries that follow. The first problem found is returned as a
//! [`FieldReject`] carrying QuickFIX's SessionRejectReason and text.

use std::collections::HashSet;
use std::sync::Arc;

use super::{DataDictionary, FieldReject, Item};

/// Tags from here up are user-defined (QuickFIX's `FIELD::UserMin`).
const USER_MIN: u32 = 5000;

/// QuickFIX's data-dictionary validation switches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Validation {
    /// Reject header/body/trailer fields out of place (default on).
    pub fields_out_of_order: bool,
    /// Reject tags without a value (default on).
    pub fields_have_values: bool,
    /// Check user-defined tags (5000 and above) against the dictionary
    /// (default on).
    pub user_defined_fields: bool,
    /// Let a message carry tags its type does not define (default off).
    pub allow_unknown_msg_fields: bool,
    /// Reject messages whose SendingTime is off by more than
    /// `max_latency_secs` (default on).
    pub check_latency: bool,
    /// SendingTime tolerance in seconds (default 120).
    pub max_latency_secs: u32,
}

impl Default for Validation {
    fn default() -> Self {
        // QuickFIX's defaults.
        Validation {
            fields_out_of_order: true,
            fields_have_values: true,
            user_defined_fields: true,
            allow_unknown_msg_fields: false,
            check_latency: true,
            max_latency_secs: 120,
        }
    }
}

/// The dictionaries a session validates with: the session (header,
/// trailer, admin messages) and the application one; the same dictionary
/// twice for FIX 4.x.
#[derive(Debug, Clone)]
pub struct Validator {
    session: Arc<DataDictionary>,
    app: Arc<DataDictionary>,
    opts: Validation,
}

/// Which part of a message a level of fields belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    /// The body; `app`: an application message's, whose fields the
    /// application dictionary may define.
    Body { app: bool },
    /// The header or the trailer.
    Other,
}

fn reject(reason: u32, tag: u32) -> FieldReject {
    let text = match reason {
        0 => "Invalid tag number",
        1 => "Required tag missing",
        2 => "Tag not defined for this message type",
        4 => "Tag specified without a value",
        5 => "Value is incorrect (out of range) for this tag",
        6 => "Incorrect data format for value",
        11 => "Invalid MsgType",
        13 => "Tag appears more than once",
        14 => "Tag specified out of required order",
        _ => "Incorrect NumInGroup count for repeating group",
    };
    FieldReject { reason, tag, text }
}

impl Validator {
    /// A validator over `session` and `app` with the switches `opts`.
    pub fn new(session: Arc<DataDictionary>, app: Arc<DataDictionary>, opts: Validation) -> Self {
        Validator { session, app, opts }
    }

    fn in_items(items: &[Item], tag: u32) -> bool {
        items.iter().any(|i| i.tag() == tag)
    }

    fn is_header(&self, tag: u32) -> bool {
        matches!(tag, 8 | 9 | 35) || Self::in_items(&self.session.header, tag)
    }

    fn is_trailer(&self, tag: u32) -> bool {
        tag == 10 || Self::in_items(&self.session.trailer, tag)
    }

    /// Whether a tag no dictionary defines is rejected
    /// (`AllowUnknownMsgFields=N`).
    pub fn checks_unknown_tags(&self) -> bool {
        !self.opts.allow_unknown_msg_fields
    }

    /// Whether a tag is judged at all (QuickFIX's `shouldCheckTag`).
    fn should_check(&self, tag: u32) -> bool {
        if tag >= USER_MIN {
            self.opts.user_defined_fields
        } else {
            !self.opts.allow_unknown_msg_fields
        }
    }

    /// The dictionary that defines `tag`'s field for this message: the
    /// application one for the body of an application message (`body`).
    fn dict_for(&self, tag: u32, body: bool) -> &DataDictionary {
        if body && self.app.field(tag).is_some() {
            &self.app
        } else {
            &self.session
        }
    }

    /// Checks one message, given as its fields in wire order.
    pub fn check(&self, fields: &[(u32, &[u8])]) -> Result<(), FieldReject> {
        let msg_type = fields
            .iter()
            .find(|(t, _)| *t == 35)
            .map(|(_, v)| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        if self.opts.fields_out_of_order {
            // Where the body and the trailer start; anything out of place
            // is "out of required order".
            let body_start = fields
                .iter()
                .position(|(t, _)| !self.is_header(*t))
                .unwrap_or(fields.len());
            let trailer_start = fields[body_start..]
                .iter()
                .position(|(t, _)| self.is_trailer(*t))
                .map_or(fields.len(), |p| body_start + p);
            for (i, &(t, _)) in fields.iter().enumerate() {
                let misplaced = (i >= body_start && self.is_header(t))
                    || (i >= trailer_start && !self.is_trailer(t));
                if misplaced {
                    return Err(reject(14, t));
                }
            }
        }
        let def = match self
            .app
            .message(&msg_type)
            .or_else(|| self.session.message(&msg_type))
        {
            Some(d) => d,
            // No tag: QuickFIX's reject for it carries no RefTagID.
            None => return Err(reject(11, 0)),
        };
        // QuickFIX's parser files every header and trailer field where it
        // belongs wherever it stands (under `ValidateFieldsOutOfOrder=N` a
        // SenderCompID after the body is still the header's); past the
        // check above, that is where each stood.
        let (mut header, mut body, mut trailer) = (Vec::new(), Vec::new(), Vec::new());
        for &f in fields {
            if self.is_header(f.0) {
                header.push(f);
            } else if self.is_trailer(f.0) {
                trailer.push(f);
            } else {
                body.push(f);
            }
        }
        // Required fields first, as QuickFIX's checkHasRequired runs
        // before it iterates the fields.
        self.required(&self.session.header, &header)?;
        self.required(&def.items, &body)?;
        self.required(&self.session.trailer, &trailer)?;
        // An admin message is the session dictionary's alone (QuickFIX
        // validates it with that one only): under FIXT.1.1 a tag FIX 5.0
        // defines is still no tag of a Heartbeat's.
        let app = self.app.message(&msg_type).is_some();
        self.level(&header, &self.session.header, Part::Other, true)?;
        self.level(&body, &def.items, Part::Body { app }, true)?;
        self.level(&trailer, &self.session.trailer, Part::Other, true)?;
        Ok(())
    }

    /// Required items of `items` missing from the top level of `fields`
    /// (group entries are checked as the group is walked).
    fn required(&self, items: &[Item], fields: &[(u32, &[u8])]) -> Result<(), FieldReject> {
        for item in items {
            let (tag, required) = match item {
                Item::Field { tag, required } | Item::Group { tag, required, .. } => {
                    (*tag, *required)
                }
            };
            if required && !fields.iter().any(|(t, _)| *t == tag) {
                return Err(reject(1, tag));
            }
        }
        Ok(())
    }

    /// Checks the fields of one level (a header, body, trailer or group
    /// entry) against `items`; `top`: fields outside `items` are "not
    /// defined for this message" rather than the end of a group entry.
    fn level(
        &self,
        fields: &[(u32, &[u8])],
        items: &[Item],
        part: Part,
        top: bool,
    ) -> Result<(), FieldReject> {
        let body = matches!(part, Part::Body { .. });
        let app = matches!(part, Part::Body { app: true });
        let mut seen = HashSet::new();
        let mut i = 0;
        while i < fields.len() {
            let (tag, value) = fields[i];
            if !seen.insert(tag) {
                return Err(reject(13, tag));
            }
            // QuickFIX 1.15.1 judges values (presence, format, enumeration,
            // known tag) of the header, body and trailer only: its iterate
            // does not descend into group entries, so a member's value
            // never hides a wrong NumInGroup (14i_RepeatingGroupCountNotEqual
            // under FIX 5.0SP2, whose TradingSessionID has an enumeration).
            if top {
                self.field(tag, value, app)?;
            }
            let item = items.iter().find(|it| it.tag() == tag);
            if top
                && item.is_none()
                && body
                && self.should_check(tag)
                && !self.is_header(tag)
                && !self.is_trailer(tag)
            {
                return Err(reject(2, tag));
            }
            i += 1;
            if let Some(Item::Group { items: members, .. }) = item {
                i = self.group(tag, value, fields, i, members, part)?;
            }
        }
        Ok(())
    }

    /// The entries of the group whose count field `tag = value` precedes
    /// `fields[from..]`; returns where the group ends.
    fn group(
        &self,
        tag: u32,
        value: &[u8],
        fields: &[(u32, &[u8])],
        from: usize,
        members: &[Item],
        part: Part,
    ) -> Result<usize, FieldReject> {
        let declared = crate::value::parse_uint(value).unwrap_or(0);
        let Some(delimiter) = members.first().map(Item::tag) else {
            return Ok(from);
        };
        let mut i = from;
        let mut entries = 0u64;
        while i < fields.len() && fields[i].0 == delimiter {
            // An entry runs to the next delimiter or the first field that
            // is not a member.
            let mut end = i + 1;
            while end < fields.len()
                && fields[end].0 != delimiter
                && Self::in_items(members, fields[end].0)
            {
                end += 1;
            }
            let entry = &fields[i..end];
            self.required(members, entry)?;
            self.level(entry, members, part, false)?;
            entries += 1;
            i = end;
        }
        if entries != declared {
            return Err(reject(16, tag));
        }
        Ok(i)
    }

    /// One field's own checks: a value (4), its format (6) and enumeration
    /// (5), a known tag (0).
    fn field(&self, tag: u32, value: &[u8], body: bool) -> Result<(), FieldReject> {
        if value.is_empty() {
            if self.opts.fields_have_values {
                return Err(reject(4, tag));
            }
            return Ok(());
        }
        let dict = self.dict_for(tag, body);
        match dict.check_field(tag, value) {
            Ok(()) => Ok(()),
            Err(r) if r.reason == 0 && !self.should_check(tag) => Ok(()),
            Err(r) => Err(r),
        }
    }
}
