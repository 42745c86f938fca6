//! Acceptor templates (`AcceptorTemplate=Y`) made into sessions at a
//! Logon, and the files each session of an acceptor claims, so that a
//! session made at a Logon is never given another session's files.

use std::sync::{Arc, Mutex};

use fixcore::session::acceptor::Template;
use fixcore::session::id::{FileClaims, SessionId};
use fixcore::session::machine::Config;
use fixcore::session::store::AnyStore;
use fixcore::settings::SessionSettings;
use fixcore::value::UtcTimestamp;

use super::session::{open_session, stamp};

/// The store and log files of the sessions an acceptor runs, by the path
/// prefix of each, so that no two sessions share files: QuickFIX's names
/// (`BeginString-Sender-Target[-Qualifier]`) can coincide for sessions
/// whose CompIDs hold `-`.
#[derive(Default)]
pub(super) struct Claims {
    store: FileClaims,
    log: FileClaims,
}

impl Claims {
    /// Why session `s` may not have its files: the session whose they
    /// are.
    fn check(&self, s: &SessionSettings) -> std::result::Result<(), String> {
        let id = SessionId::of(s);
        for (what, _, prefix) in s.file_prefixes() {
            let claims = if what == "store" {
                &self.store
            } else {
                &self.log
            };
            if let Some((path, owner)) = claims.conflict(&id, std::slice::from_ref(&prefix)) {
                return Err(format!(
                    "its {what} files ({}.*) are session {owner}'s",
                    path.display()
                ));
            }
        }
        Ok(())
    }

    /// Records the files of session `s` as its own, unless they are
    /// another's.
    pub(super) fn claim(&mut self, s: &SessionSettings) -> std::result::Result<(), String> {
        self.check(s)?;
        let id = SessionId::of(s);
        for (what, _, prefix) in s.file_prefixes() {
            let claims = if what == "store" {
                &mut self.store
            } else {
                &mut self.log
            };
            claims
                .claim(&id, std::slice::from_ref(&prefix))
                .map_err(|(path, owner)| {
                    format!(
                        "its {what} files ({}.*) are session {owner}'s",
                        path.display()
                    )
                })?;
        }
        Ok(())
    }
}

/// Template `t` made into the session `id` (its CompIDs a Logon's).
pub(super) fn made_from(t: &SessionSettings, id: &SessionId) -> SessionSettings {
    let mut s = t.clone();
    s.sender_comp_id.clone_from(&id.sender_comp_id);
    s.target_comp_id.clone_from(&id.target_comp_id);
    s.acceptor_template = false;
    s
}

/// The acceptor template `t`: each session it makes is `t` under the
/// Logon's CompIDs, with its own store (under those CompIDs, as any
/// session's); its logs are opened for each connection. A session whose
/// files would be another's is refused before any file is opened, and
/// the files it names stay its own for the acceptor's life.
pub(super) fn template(
    t: SessionSettings,
    recover: bool,
    claims: &Arc<Mutex<Claims>>,
) -> Template<AnyStore> {
    let claims = Arc::clone(claims);
    let config = Config::from_settings(&t);
    let qualifier = t.session_qualifier.clone();
    Template::new(&config, &qualifier, move |id| {
        let s = made_from(&t, id);
        let mut claims = claims.lock().unwrap_or_else(|p| p.into_inner());
        // Checked before anything is opened, recorded once the store
        // opened: a session refused (its store another's, say) claims
        // nothing.
        claims.check(&s)?;
        let session = open_session(&s, recover, true).map_err(|e| crate::cmd::one_line(&e))?;
        claims.claim(&s)?;
        eprintln!(
            "{} : {}: session made from the template",
            stamp(UtcTimestamp::now()),
            s.id()
        );
        Ok(session)
    })
}
