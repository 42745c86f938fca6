//! [`SessionId`]: who a session is, as QuickFIX names it, and whether a
//! CompID may be part of a file name.

use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};

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
    pub session_qualifier: String,
}

impl SessionId {
    /// The identity of these four parts.
    pub fn new(begin_string: &str, sender: &str, target: &str, qualifier: &str) -> SessionId {
        SessionId {
            begin_string: begin_string.into(),
            sender_comp_id: sender.into(),
            target_comp_id: target.into(),
            session_qualifier: qualifier.into(),
        }
    }

    /// `BeginString-SenderCompID-TargetCompID[-Qualifier]`: what
    /// QuickFIX's store and log file names start with. Two sessions can
    /// share it when a CompID holds `-`; see
    /// the file store (`crate::store::FileStore`) for how that is caught.
    pub fn file_name(&self) -> String {
        let mut name = format!(
            "{}-{}-{}",
            self.begin_string, self.sender_comp_id, self.target_comp_id
        );
        if !self.session_qualifier.is_empty() {
            name.push('-');
            name.push_str(&self.session_qualifier);
        }
        name
    }
}

impl SessionId {
    /// `BeginString:SenderCompID->TargetCompID[:Qualifier]`, as
    /// [`Display`](fmt::Display) writes it.
    pub fn id(&self) -> String {
        self.to_string()
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
        if !self.session_qualifier.is_empty() {
            write!(f, ":{}", self.session_qualifier)?;
        }
        Ok(())
    }
}

/// Which session each store and log file prefix belongs to, so that no
/// two sessions are given the same files: QuickFIX's names
/// (`BeginString-Sender-Target[-Qualifier]`) are the same for `ACC-X` ←
/// `Y` and `ACC` ← `X-Y`. Prefixes are compared as absolute paths with
/// `.` and `..` resolved by name (links are not followed: two openings
/// of one store through a link are refused by the store's lock).
#[derive(Debug, Default, Clone)]
pub struct FileClaims {
    owners: HashMap<PathBuf, SessionId>,
}

impl FileClaims {
    /// No claims.
    pub fn new() -> FileClaims {
        FileClaims::default()
    }

    /// The session other than `id` that holds one of `prefixes` (and
    /// which), or `None`: nothing else would share `id`'s files.
    pub fn conflict(&self, id: &SessionId, prefixes: &[PathBuf]) -> Option<(&Path, &SessionId)> {
        prefixes.iter().find_map(|p| {
            let key = resolved(p);
            self.owners
                .get_key_value(&key)
                .filter(|(_, owner)| *owner != id)
                .map(|(path, owner)| (path.as_path(), owner))
        })
    }

    /// Records `prefixes` as `id`'s, unless another session holds one
    /// of them: then that one is returned and nothing is recorded.
    pub fn claim(
        &mut self,
        id: &SessionId,
        prefixes: &[PathBuf],
    ) -> Result<(), (PathBuf, SessionId)> {
        if let Some((path, owner)) = self.conflict(id, prefixes) {
            return Err((path.to_path_buf(), owner.clone()));
        }
        for p in prefixes {
            self.owners.insert(resolved(p), id.clone());
        }
        Ok(())
    }

    /// How many prefixes are claimed.
    pub fn len(&self) -> usize {
        self.owners.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.owners.is_empty()
    }
}

/// `p` as an absolute path with `.` and `..` resolved by name.
fn resolved(p: &Path) -> PathBuf {
    let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// Why `part` (a CompID or qualifier) cannot be part of a store or log
/// file name, or `None` when it can: a path separator or `..` would lead
/// out of the store's directory, and control or bidirectional-override
/// characters (U+202A–U+202E, U+2066–U+2069) make names that read as
/// something else in a listing or a log.
pub fn file_name_problem(part: &str) -> Option<&'static str> {
    if part.contains('/') || part.contains('\\') {
        Some("names the store and log files, so it may not hold '/' or '\\'")
    } else if part.contains("..") {
        Some("names the store and log files, so it may not hold '..'")
    } else if part.chars().any(char::is_control) {
        Some("names the store and log files, so it may not hold control characters")
    } else if part.chars().any(is_bidi_control) {
        Some(
            "names the store and log files, so it may not hold bidirectional control \
             characters (U+202A-U+202E, U+2066-U+2069)",
        )
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
    fn claims_compare_resolved_paths() {
        let mut c = FileClaims::new();
        let a = SessionId::new("FIX.4.4", "ACC-X", "Y", "");
        let b = SessionId::new("FIX.4.4", "ACC", "X-Y", "");
        let pa = PathBuf::from("store/./").join(a.file_name());
        let pb = PathBuf::from("other/../store").join(b.file_name());
        c.claim(&a, std::slice::from_ref(&pa)).unwrap();
        // The same session again is no conflict.
        c.claim(&a, std::slice::from_ref(&pa)).unwrap();
        let (path, owner) = c.claim(&b, std::slice::from_ref(&pb)).unwrap_err();
        assert_eq!(owner, a);
        assert!(
            path.is_absolute() && path.ends_with("store/FIX.4.4-ACC-X-Y"),
            "{path:?}"
        );
        assert_eq!(c.len(), 1);
        // Elsewhere, no conflict.
        c.claim(&b, &[PathBuf::from("elsewhere").join(b.file_name())])
            .unwrap();
        assert_eq!(c.len(), 2);
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
