//! Session-level rejection: SessionRejectReason(373) codes with the texts
//! QuickFIX writes for them (counterparties' test suites compare the
//! texts), and the BusinessRejectReason(380) the session itself uses.

/// A SessionRejectReason(373) value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reason(pub u32);

impl Reason {
    /// 0: the tag is not a known field.
    pub const INVALID_TAG_NUMBER: Reason = Reason(0);
    /// 1: a required tag is missing.
    pub const REQUIRED_TAG_MISSING: Reason = Reason(1);
    /// 2: the tag is not defined for the message type.
    pub const TAG_NOT_DEFINED_FOR_MESSAGE: Reason = Reason(2);
    /// 3: undefined tag.
    pub const UNDEFINED_TAG: Reason = Reason(3);
    /// 4: `tag=` with no value.
    pub const TAG_WITHOUT_VALUE: Reason = Reason(4);
    /// 5: a value outside the field's enumeration or range.
    pub const VALUE_INCORRECT: Reason = Reason(5);
    /// 6: a value not in the field's data format.
    pub const INCORRECT_DATA_FORMAT: Reason = Reason(6);
    /// 9: SenderCompID / TargetCompID not those of the session.
    pub const COMPID_PROBLEM: Reason = Reason(9);
    /// 10: SendingTime too far from our clock, or OrigSendingTime after it.
    pub const SENDING_TIME_ACCURACY: Reason = Reason(10);
    /// 11: an unknown MsgType.
    pub const INVALID_MSG_TYPE: Reason = Reason(11);
    /// 13: a tag appears more than once.
    pub const TAG_APPEARS_MORE_THAN_ONCE: Reason = Reason(13);
    /// 14: a tag out of the required order.
    pub const TAG_OUT_OF_ORDER: Reason = Reason(14);
    /// 15: repeating group fields out of order.
    pub const GROUP_FIELDS_OUT_OF_ORDER: Reason = Reason(15);
    /// 16: NumInGroup does not match the entries.
    pub const INCORRECT_NUM_IN_GROUP: Reason = Reason(16);

    /// QuickFIX's text for the reason, if it has one.
    pub fn text(self) -> Option<&'static str> {
        Some(match self.0 {
            0 => "Invalid tag number",
            1 => "Required tag missing",
            2 => "Tag not defined for this message type",
            3 => "Undefined Tag",
            4 => "Tag specified without a value",
            5 => "Value is incorrect (out of range) for this tag",
            6 => "Incorrect data format for value",
            7 => "Decryption problem",
            8 => "Signature problem",
            9 => "CompID problem",
            10 => "SendingTime accuracy problem",
            11 => "Invalid MsgType",
            13 => "Tag appears more than once",
            14 => "Tag specified out of required order",
            15 => "Repeating group fields out of order",
            16 => "Incorrect NumInGroup count for repeating group",
            17 => "Non Data value includes field delimiter (SOH character)",
            _ => return None,
        })
    }
}

/// BusinessRejectReason(380) 3: the application does not support the
/// message type.
pub const UNSUPPORTED_MESSAGE_TYPE: u32 = 3;
/// BusinessRejectReason(380) 5: a conditionally required field is missing.
pub const CONDITIONALLY_REQUIRED_FIELD_MISSING: u32 = 5;

/// QuickFIX's text for a BusinessRejectReason(380).
pub fn business_text(reason: u32) -> Option<&'static str> {
    Some(match reason {
        0 => "Other",
        1 => "Unknown ID",
        2 => "Unknown Security",
        3 => "Unsupported Message Type",
        4 => "Application not available",
        5 => "Conditionally Required Field Missing",
        _ => return None,
    })
}
