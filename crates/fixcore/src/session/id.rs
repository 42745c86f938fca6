//! [`SessionId`]: who a session is, as QuickFIX names it, and whether a
//! CompID may be part of a file name.

use std::fmt;

use crate::settings::SessionSettings;

/// A session's identity, QuickFIX's `SessionID`: BeginString, our
/// CompID, the counterparty's, and a qualifier that only local names
/// (files, table rows) carry, never the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId {
    /// `FIX.4.4`, `FIXT.1.1`.
    pub begin_string: String,
    /// Our CompID: SenderCompID(49) of what we send.
    pub sender_comp_id: String,
    /// The counterparty's: TargetCompID(56) of what we send.
    pub target_comp_id: String,
    /// `SessionQualifier`; empty when there is none.
    pub qualifier: String,
}

impl SessionId {
    /// The identity of these four parts.
    pub fn new(begin_string: &str, sender: &str, target: &str, qualifier: &str) -> SessionId {
        SessionId {
            begin_string: begin_string.into(),
            sender_comp_id: sender.into(),
            target_comp_id: target.into(),
            qualifier: qualifier.into(),
        }
    }

    /// The identity of session `s` of a settings file.
    pub fn of(s: &SessionSettings) -> SessionId {
        SessionId::new(
            s.begin_string.as_str(),
            &s.sender_comp_id,
            &s.target_comp_id,
            &s.session_qualifier,
        )
    }

    /// `BeginString-SenderCompID-TargetCompID[-Qualifier]`: what
    /// QuickFIX's store and log file names start with. Two sessions can
    /// share it when a CompID holds `-`; see
    /// [`FileStore`](super::store::FileStore) for how that is caught.
    pub fn file_name(&self) -> String {
        let mut name = format!(
            "{}-{}-{}",
            self.begin_string, self.sender_comp_id, self.target_comp_id
        );
        if !self.qualifier.is_empty() {
            name.push('-');
            name.push_str(&self.qualifier);
        }
        name
    }
}

impl fmt::Display for SessionId {
    /// `BeginString:SenderCompID->TargetCompID[:Qualifier]`, QuickFIX's
    /// notation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}->{}",
            self.begin_string, self.sender_comp_id, self.target_comp_id
        )?;
        if !self.qualifier.is_empty() {
            write!(f, ":{}", self.qualifier)?;
        }
        Ok(())
    }
}

/// Why `part` (a CompID or qualifier) cannot be part of a store or log
/// file name, or `None` when it can: a path separator or `..` would lead
/// out of the store's directory, and control or bidirectional-override
/// characters (U+202A–U+202E, U+2066–U+2069) make names that read as
/// something else in a listing or a log.
pub fn file_name_problem(part: &str) -> Option<&'static str> {
    if part.contains('/') || part.contains('\\') {
        Some("holds a path separator")
    } else if part.contains("..") {
        Some("holds '..'")
    } else if part.chars().any(char::is_control) {
        Some("holds a control character")
    } else if part.chars().any(is_bidi_control) {
        Some("holds a bidirectional control character")
    } else {
        None
    }
}

/// The Unicode bidirectional embedding, override and isolate controls.
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quickfix_names_and_notation() {
        let id = SessionId::new("FIX.4.4", "ACC", "BANK", "");
        assert_eq!(id.file_name(), "FIX.4.4-ACC-BANK");
        assert_eq!(id.to_string(), "FIX.4.4:ACC->BANK");
        let q = SessionId::new("FIX.4.4", "ACC", "BANK", "UAT");
        assert_eq!(q.file_name(), "FIX.4.4-ACC-BANK-UAT");
        assert_eq!(q.to_string(), "FIX.4.4:ACC->BANK:UAT");
        // The ambiguity the store's owner check exists for.
        let stranger = SessionId::new("FIX.4.4", "ACC", "BANK-UAT", "");
        assert_eq!(stranger.file_name(), q.file_name());
        assert_ne!(stranger, q);
    }

    #[test]
    fn parts_that_cannot_name_files() {
        for bad in [
            "a/b",
            "a\\b",
            "..",
            "a..b",
            "a\u{1}b",
            "a\tb",
            "a\u{7f}b",
            "EVIL\u{202E}gpj",
            "\u{202A}",
            "\u{2066}x",
            "x\u{2069}",
        ] {
            assert!(file_name_problem(bad).is_some(), "{bad:?}");
        }
        for good in [
            "BANK",
            "ACC-UAT",
            "a.b",
            "Ünïcödé",
            "x\u{2065}",
            "x\u{2029}y",
        ] {
            assert_eq!(file_name_problem(good), None, "{good:?}");
        }
    }
}
