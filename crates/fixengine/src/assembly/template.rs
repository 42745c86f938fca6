//! Acceptor templates (`AcceptorTemplate=Y`) made into sessions at a
//! Logon, and the files each session of an acceptor claims, so that a
//! session made at a Logon is never given another session's files.

use std::sync::{Arc, Mutex};

use fixcore::value::UtcTimestamp;
use fixsession::id::SessionId;
use fixsession::machine::Config;
use fixsession::settings::{SessionFiles, SessionSettings};
use fixsession::store::AnyStore;

use super::{Leasing, Opening, SharedConsole, open_session, stamp};
use crate::acceptor::Template;
use crate::lease::Keeper;

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
/// store engines share is made only once this engine holds its lease
/// (`keeper`). A session whose
/// files would be another's is refused before any file is opened, and
/// the files it names stay its own for the acceptor's life.
pub(super) fn template(
    t: SessionSettings,
    recover: bool,
    claims: &Arc<Mutex<SessionFiles>>,
    console: &SharedConsole,
    keeper: &Arc<Keeper>,
) -> Template<AnyStore> {
    let keeper = Arc::clone(keeper);
    let claims = Arc::clone(claims);
    let console = Arc::clone(console);
    let config = Config::from_settings(&t);
    let qualifier = t.session_qualifier.clone();
    let placement = t.cpu_affinity.clone();
    Template::new(&config, &qualifier, move |id| {
        let s = made_from(&t, id);
        let mut claims = claims.lock().unwrap_or_else(|p| p.into_inner());
        // Checked before anything is opened, recorded once the store
        // opened: a session refused (its store another's, say) claims
        // nothing.
        claims.check(&s).map_err(|e| e.to_string())?;
        // A store engines share is opened only once its lease is held
        // here: a standby refuses the Logon instead.
        let opening = Opening {
            recover,
            keep_sent: true,
            leasing: Leasing::Now(&keeper),
        };
        let session = open_session(&s, &opening, &*console).map_err(|e| console.one_line(&e))?;
        claims.claim(&s).map_err(|e| e.to_string())?;
        console.screen(
            format!(
                "{} : {}: session made from the template",
                stamp(UtcTimestamp::now()),
                s.id()
            )
            .as_bytes(),
        );
        Ok(session)
    })
    .with_placement(placement)
}
