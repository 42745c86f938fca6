//! The files a settings file's sessions name, claimed per session so no
//! two sessions are given the same store or log files
//! ([`SessionFiles`]), and [`SessionId::of`], a session's identity from
//! its settings. Here, not in [`crate::id`], so that identities know
//! nothing of settings files.

use std::fmt;
use std::path::PathBuf;

use super::SessionSettings;
use crate::id::{FileClaims, SessionId};

impl SessionId {
    /// The identity of session `s` of a settings file.
    pub fn of(s: &SessionSettings) -> SessionId {
        SessionId::new(
            s.begin_string.as_str(),
            &s.sender_comp_id,
            &s.target_comp_id,
            &s.session_qualifier,
        )
    }
}

/// The store and log files of one engine's sessions, each kind claimed
/// apart (a store's and a log's files never share a name).
#[derive(Debug, Default, Clone)]
pub struct SessionFiles {
    store: FileClaims,
    log: FileClaims,
}

/// Files a session would share with another session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedFiles {
    /// `store` or `log`.
    pub what: &'static str,
    /// The settings key choosing their directory.
    pub key: &'static str,
    /// The prefix the files' names share.
    pub path: PathBuf,
    /// The session whose files they are (boxed: the error travels in
    /// `Result`s that are mostly `Ok`).
    pub owner: Box<SessionId>,
}

impl fmt::Display for SharedFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "its {} files ({}.*) are session {}'s",
            self.what,
            self.path.display(),
            self.owner
        )
    }
}

impl SessionFiles {
    /// No files claimed.
    pub fn new() -> SessionFiles {
        SessionFiles::default()
    }

    /// Which of session `s`'s files another session's already are.
    pub fn check(&self, s: &SessionSettings) -> Result<(), SharedFiles> {
        let id = SessionId::of(s);
        for (what, key, prefix) in s.file_prefixes() {
            if let Some((path, owner)) = self
                .of_kind(what)
                .conflict(&id, std::slice::from_ref(&prefix))
            {
                return Err(SharedFiles {
                    what,
                    key,
                    path: path.to_path_buf(),
                    owner: Box::new(owner.clone()),
                });
            }
        }
        Ok(())
    }

    /// Records session `s`'s files as its own, unless one of them is
    /// another session's (then nothing is recorded).
    pub fn claim(&mut self, s: &SessionSettings) -> Result<(), SharedFiles> {
        self.check(s)?;
        let id = SessionId::of(s);
        for (what, _, prefix) in s.file_prefixes() {
            let claimed = self
                .of_kind_mut(what)
                .claim(&id, std::slice::from_ref(&prefix));
            debug_assert!(claimed.is_ok(), "checked above");
        }
        Ok(())
    }

    fn of_kind(&self, what: &str) -> &FileClaims {
        if what == "store" {
            &self.store
        } else {
            &self.log
        }
    }

    fn of_kind_mut(&mut self, what: &str) -> &mut FileClaims {
        if what == "store" {
            &mut self.store
        } else {
            &mut self.log
        }
    }
}
