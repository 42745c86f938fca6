//! The crate's single error type.

/// Everything that can go wrong in fixcore. Positions are byte offsets into
/// the message (or, for the framer, into the stream since it started).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input ended inside a field or before the CheckSum(10) field.
    #[error("truncated message at byte {pos}: {what}")]
    Truncated {
        /// Offset where more bytes were needed.
        pos: usize,
        /// What was missing.
        what: &'static str,
    },
    /// A field has no `=` between its tag and the SOH that ends it.
    #[error("field at byte {pos} has no '='")]
    MissingEquals {
        /// Offset of the field's first byte.
        pos: usize,
    },
    /// A field starts with `=`.
    #[error("empty tag at byte {pos}")]
    EmptyTag {
        /// Offset of the field's first byte.
        pos: usize,
    },
    /// A tag contains a non-digit, starts with 0, or has more than 9 digits.
    #[error("bad tag at byte {pos}: not 1-9 digits without a leading zero")]
    BadTag {
        /// Offset of the field's first byte.
        pos: usize,
    },
    /// A field has nothing between `=` and SOH (FIX forbids empty values).
    #[error("empty value for tag {tag} at byte {pos}")]
    EmptyValue {
        /// The tag.
        tag: u32,
        /// Offset of the field's first byte.
        pos: usize,
    },
    /// A Length field (RawDataLength(95), ...) does not describe the data
    /// field that must follow it: the next field is not that data field, or
    /// no SOH ends the data where the declared length says.
    #[error(
        "Length field {tag} at byte {pos} declares {declared} bytes for data field {data_tag}: \
         {why} at byte {at}"
    )]
    DataLength {
        /// The Length field's tag.
        tag: u32,
        /// The data field's tag.
        data_tag: u32,
        /// Offset of the Length field's first byte.
        pos: usize,
        /// The declared length.
        declared: usize,
        /// Offset of the mismatch: the next field's start, or where the
        /// data should end.
        at: usize,
        /// What does not match, e.g. "no SOH ends the data".
        why: &'static str,
    },
    /// A data field (RawData(96), ...) without its Length field just
    /// before it: nothing says where its value ends.
    #[error("data field {tag} at byte {pos} does not follow its Length field {length_tag}")]
    DataWithoutLength {
        /// The data field's tag.
        tag: u32,
        /// The Length field's tag that must precede it.
        length_tag: u32,
        /// Offset of the data field's first byte.
        pos: usize,
    },
    /// A header/trailer field is not where FIX requires it.
    #[error("field order: tag {tag} at byte {pos}: {why}")]
    FieldOrder {
        /// Offset of the offending field.
        pos: usize,
        /// Tag found there.
        tag: u32,
        /// The rule broken, e.g. "BodyLength(9) must be the second field".
        why: &'static str,
    },
    /// BodyLength(9) does not match the real body length.
    #[error("BodyLength(9) at byte {pos} says {declared}, body is {actual} bytes")]
    BodyLength {
        /// Offset of the 9= field.
        pos: usize,
        /// Declared value.
        declared: usize,
        /// Real body length.
        actual: usize,
    },
    /// The framer found no `10=ddd` trailer where BodyLength(9) says the
    /// body ends, nor anywhere after the header in the bytes it holds.
    #[error(
        "BodyLength(9) at byte {pos} says {declared}, but no CheckSum(10) field ends the body \
         there or later in the bytes received"
    )]
    BodyLengthNoTrailer {
        /// Offset of the 9= field.
        pos: usize,
        /// Declared value.
        declared: usize,
    },
    /// CheckSum(10) is not three digits.
    #[error("CheckSum(10) at byte {pos} is not three digits")]
    CheckSumFormat {
        /// Offset of the 10= field.
        pos: usize,
    },
    /// CheckSum(10) has the wrong value.
    #[error("CheckSum(10) at byte {pos} says {declared:03}, computed {actual:03}")]
    CheckSum {
        /// Offset of the 10= field.
        pos: usize,
        /// Declared value.
        declared: u32,
        /// Computed value.
        actual: u32,
    },
    /// A tag appears twice outside a repeating group (or twice in one entry).
    #[error("duplicate tag {tag} at byte {pos}")]
    DuplicateTag {
        /// The tag.
        tag: u32,
        /// Offset of the second occurrence.
        pos: usize,
    },
    /// A repeating group's count field disagrees with its entries.
    #[error("repeating group {tag} at byte {pos}: declared {declared} entries, found {found}")]
    GroupCount {
        /// The NoXXX count tag.
        tag: u32,
        /// Offset of the count field.
        pos: usize,
        /// Declared entry count.
        declared: usize,
        /// Entries found.
        found: usize,
    },
    /// A repeating group entry does not start with the group's delimiter tag.
    #[error("repeating group {tag}: entry at byte {pos} starts with tag {found}, not {delimiter}")]
    GroupDelimiter {
        /// The NoXXX count tag.
        tag: u32,
        /// Offset of the entry's first field.
        pos: usize,
        /// Required first tag.
        delimiter: u32,
        /// Tag found.
        found: u32,
    },
    /// A requested tag is absent.
    #[error("tag {tag} not present")]
    MissingTag {
        /// The tag.
        tag: u32,
    },
    /// A field's value does not have the requested type.
    #[error("tag {tag} at byte {pos}: value is not a valid {expected}")]
    BadValue {
        /// The tag.
        tag: u32,
        /// Offset of the value's first byte.
        pos: usize,
        /// Expected type ("int", "price", "UTCTimestamp"...).
        expected: &'static str,
    },
    /// Bytes that are not a FIX message where a message should start.
    #[error("garbage at stream byte {pos}: skipped {skipped} bytes to resynchronise")]
    Garbage {
        /// Stream offset of the first skipped byte.
        pos: u64,
        /// Bytes skipped.
        skipped: usize,
    },
    /// A frame in a stream was malformed; the framer skipped it.
    #[error("bad frame at stream byte {pos}: {reason}")]
    BadFrame {
        /// Stream offset of the frame's first byte.
        pos: u64,
        /// Why (part of the message, not a separate source, so error
        /// chains do not print it twice).
        reason: Box<Error>,
    },
    /// BodyLength declares a message longer than the framer accepts.
    #[error(
        "BodyLength(9) at byte {pos} says {declared}: the message would run past the \
         {limit}-byte message limit"
    )]
    BodyLengthTooLarge {
        /// Offset of the BodyLength field.
        pos: usize,
        /// The declared body length.
        declared: u64,
        /// The framer's message limit in bytes.
        limit: usize,
    },
    /// Input longer than a configured or structural limit.
    #[error("input of {len} bytes exceeds the limit of {limit}")]
    TooLarge {
        /// Size seen.
        len: usize,
        /// Limit.
        limit: usize,
    },
    /// An explicitly requested scan path needs instructions this CPU lacks.
    #[error("scan path {path} is not available on this CPU")]
    ScanPathUnavailable {
        /// Path name.
        path: &'static str,
    },
    /// A builder was given something it cannot encode.
    #[error("cannot build message: {0}")]
    Build(&'static str),
}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
