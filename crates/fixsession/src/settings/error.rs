//! [`SettingsError`]: why a settings file cannot be used, each with the
//! line it concerns.

/// A settings file that cannot be used, with the 1-based line it concerns.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A line is neither a comment, a section header nor `Key=Value`.
    #[error("line {line}: expected '[SECTION]' or 'Key=Value', found {text:?}")]
    Syntax {
        /// Line number.
        line: usize,
        /// The line, trimmed.
        text: String,
    },
    /// A section other than `[DEFAULT]` and `[SESSION]`.
    #[error("line {line}: unknown section [{name}] (expected [DEFAULT] or [SESSION])")]
    UnknownSection {
        /// Line number.
        line: usize,
        /// The section name.
        name: String,
    },
    /// A second `[DEFAULT]` section.
    #[error("line {line}: second [DEFAULT] section")]
    DuplicateDefault {
        /// Line number.
        line: usize,
    },
    /// `Key=Value` before any section header.
    #[error("line {line}: key {key:?} outside any section")]
    OutsideSection {
        /// Line number.
        line: usize,
        /// The key.
        key: String,
    },
    /// A key neither QuickFIX nor perfkit knows: a misspelling, most
    /// likely.
    #[error(
        "line {line}: unknown settings key {key:?}{}",
        did_you_mean(suggestion)
    )]
    UnknownKey {
        /// Line number.
        line: usize,
        /// The key as written.
        key: String,
        /// The known key it is closest to, if one is close
        /// ([`keys::suggest`](super::keys::suggest)).
        suggestion: Option<String>,
    },
    /// A key given twice in one section.
    #[error("line {line}: key {key:?} repeated in one section (first on line {first})")]
    RepeatedKey {
        /// Line number of the repetition.
        line: usize,
        /// Line number of the first occurrence.
        first: usize,
        /// The key.
        key: String,
    },
    /// A value that does not fit its key.
    #[error("line {line}: bad value {value:?} for {key}: {why}")]
    BadValue {
        /// Line number.
        line: usize,
        /// The key as written.
        key: String,
        /// The value as written.
        value: String,
        /// What was expected.
        why: &'static str,
    },
    /// A session lacks a key it needs (neither it nor `[DEFAULT]` sets it).
    #[error("line {line}: [SESSION] has no {key}")]
    Missing {
        /// Line of the `[SESSION]` header.
        line: usize,
        /// The key.
        key: String,
    },
    /// Two sessions with the same BeginString, SenderCompID, TargetCompID
    /// and SessionQualifier.
    #[error("line {line}: session {id} already defined on line {first}")]
    DuplicateSession {
        /// Line of the second `[SESSION]` header.
        line: usize,
        /// Line of the first.
        first: usize,
        /// The session's identity.
        id: String,
    },
    /// Two sessions whose store or log files would be the same files:
    /// QuickFIX's names (`BeginString-SenderCompID-TargetCompID[-
    /// SessionQualifier]`) are ambiguous once a CompID holds `-`.
    #[error(
        "line {line}: session {id}'s {what} files ({path}.*) would be session {other}'s too \
         (line {first}): QuickFIX names them BeginString-SenderCompID-TargetCompID\
         [-SessionQualifier], which the two share; give one of them another {key} or a \
         SessionQualifier"
    )]
    SharedFiles {
        /// Line of the second `[SESSION]` header.
        line: usize,
        /// Line of the first.
        first: usize,
        /// The second session.
        id: String,
        /// The first.
        other: String,
        /// `store` or `log`.
        what: &'static str,
        /// The files' shared prefix.
        path: String,
        /// The key choosing their directory.
        key: &'static str,
    },
    /// Keys that contradict each other (QuickFIX's texts).
    #[error("line {line}: {why}")]
    Inconsistent {
        /// Line of the `[SESSION]` header.
        line: usize,
        /// Which rule is broken.
        why: &'static str,
    },
    /// A file without any `[SESSION]`.
    #[error("no [SESSION] section")]
    NoSession,
}

/// `, did you mean K?` for an [`SettingsError::UnknownKey`] with a
/// suggestion.
fn did_you_mean(suggestion: &Option<String>) -> String {
    suggestion
        .as_ref()
        .map(|k| format!(" (did you mean {k}?)"))
        .unwrap_or_default()
}
