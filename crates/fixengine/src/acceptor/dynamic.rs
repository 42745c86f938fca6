//! Sessions made at a Logon, from a [`Template`]: what a stranger must
//! pass before one is made, how many may live at once, and when they let
//! go of what they hold.
//!
//! A session is made only once its Logon has passed every check that
//! needs no store (the template's CompID patterns and rules, CompIDs that
//! can name files, and [`screen_logon`]); until then nothing is opened or
//! created. At most `Dynamic::max` are live at once: a session is live
//! while a connection has it, and while it waits between connections
//! holding its state in memory (a store that does not persist). One
//! whose store persists is dropped when its connection ends, closing its
//! files, and made again from them at its next Logon.

use std::collections::HashMap;
use std::time::Instant;

use super::Rules;
use super::waiting::Route;
use fixcore::affinity::CoreSet;
use fixcore::value::UtcTimestamp;
use fixsession::id::{SessionId, file_name_problem};
use fixsession::machine::{Config, Session, screen_logon};
use fixsession::store::SessionStore;

/// Makes the session a template matched: given its identity (our CompID,
/// theirs, the template's qualifier), the session with its own store, or
/// why it cannot be made.
pub type MakeSession<S> = dyn Fn(&SessionId) -> Result<Session<S>, String> + Send + Sync;

/// A template session, as QuickFIX/J's `AcceptorTemplate=Y`: a Logon for
/// no configured session whose BeginString is the template's and whose
/// CompIDs match the template's (`*` matches any) gets a session of its
/// own, made by [`MakeSession`] and kept for that counterparty's later
/// connections. Its conditions (`ValidateChecksum`,
/// `AllowedRemoteAddresses`, and the Logon checks of its [`Config`]) are
/// the template's.
pub struct Template<S: SessionStore> {
    pub(super) route: Route,
    qualifier: String,
    pub(super) rules: Rules,
    /// The cores its sessions' connection threads run on.
    pub(super) placement: Option<CoreSet>,
    config: Config,
    make: Box<MakeSession<S>>,
}

impl<S: SessionStore> Template<S> {
    /// A template with the settings of `config` (whose CompIDs may be
    /// `*`) and `qualifier` (`SessionQualifier`, often empty), making
    /// sessions with `make`.
    pub fn new(
        config: &Config,
        qualifier: &str,
        make: impl Fn(&SessionId) -> Result<Session<S>, String> + Send + Sync + 'static,
    ) -> Template<S> {
        Template {
            route: (
                config.begin_string.as_str().to_string(),
                config.sender_comp_id.clone(),
                config.target_comp_id.clone(),
            ),
            qualifier: qualifier.to_string(),
            rules: Rules::of(config),
            placement: None,
            config: config.clone(),
            make: Box::new(make),
        }
    }

    /// Runs the connections of the sessions it makes on a thread confined
    /// to `cores` (`None`: where the acceptor's own thread runs), as
    /// [`Acceptor::with_placements`](super::Acceptor::with_placements)
    /// does for configured sessions.
    pub fn with_placement(mut self, cores: Option<CoreSet>) -> Template<S> {
        self.placement = cores;
        self
    }

    /// Whether a Logon routed as `key` (BeginString, its sender = our
    /// counterparty, its target = us) is for this template.
    pub(super) fn matches(&self, key: &Route) -> bool {
        let field = |pattern: &str, value: &str| pattern == "*" || pattern == value;
        self.route.0 == key.0 && field(&self.route.2, &key.1) && field(&self.route.1, &key.2)
    }

    /// The identity of the session a Logon routed as `key` gets.
    pub(super) fn id_for(&self, key: &Route) -> SessionId {
        SessionId::new(&key.0, &key.2, &key.1, &self.qualifier)
    }

    /// Why the Logon `msg`, routed as `key`, cannot make a session,
    /// judged without one: CompIDs that cannot name files, then the
    /// session's own storeless Logon checks under the template's
    /// settings.
    pub(super) fn screen(&self, key: &Route, msg: &[u8], now: UtcTimestamp) -> Option<String> {
        for id in [&key.1, &key.2] {
            let problem = if id.is_empty() {
                Some("is empty")
            } else if id.len() > MAX_COMP_ID {
                Some("is longer than 64 bytes")
            } else {
                file_name_problem(id)
            };
            if let Some(why) = problem {
                return Some(format!("CompID {id:?} {why}"));
            }
        }
        let mut cfg = self.config.clone();
        cfg.sender_comp_id.clone_from(&key.2);
        cfg.target_comp_id.clone_from(&key.1);
        screen_logon(&cfg, msg, now)
    }

    /// Makes the session `id`.
    pub(super) fn make(&self, id: &SessionId) -> Result<Session<S>, String> {
        (self.make)(id)
    }
}

/// The longest CompID a Logon may make a session under: QuickFIX's
/// database tables hold 64 characters.
const MAX_COMP_ID: usize = 64;

/// Where a session made at a Logon stands.
pub(super) enum State<S: SessionStore> {
    /// Between connections, holding its state in memory (boxed: the
    /// table's entries are mostly connected ones).
    Free(Box<Session<S>>),
    /// A connection has it.
    Connected,
}

/// A session made at a Logon.
pub(super) struct Made<S: SessionStore> {
    pub(super) template: usize,
    pub(super) id: SessionId,
    pub(super) state: State<S>,
}

/// The sessions made at Logons that are live, by route, and the cap on
/// them.
pub(super) struct Dynamic<S: SessionStore> {
    pub(super) sessions: HashMap<Route, Made<S>>,
    /// Most sessions live at once.
    pub(super) max: usize,
    /// Logons refused at the cap since the episode began, and when it
    /// began.
    refused: u64,
    since: Option<Instant>,
}

impl<S: SessionStore> Dynamic<S> {
    /// No sessions; at most `max` at once.
    pub(super) fn new(max: usize) -> Dynamic<S> {
        Dynamic {
            sessions: HashMap::new(),
            max,
            refused: 0,
            since: None,
        }
    }

    /// Whether one more session may be made.
    pub(super) fn has_room(&self) -> bool {
        self.sessions.len() < self.max
    }

    /// A Logon was refused at the cap: the line to log, once per episode.
    pub(super) fn refused_at_cap(&mut self, id: &SessionId) -> Option<String> {
        self.refused += 1;
        if self.since.is_some() {
            return None;
        }
        self.since = Some(Instant::now());
        Some(format!(
            "Session {id} from a template: {} sessions made at a Logon are live, the most \
             allowed (--max-dynamic-sessions); its Logon and any more are closed without an \
             answer until one ends",
            self.max
        ))
    }

    /// A session was made: the line ending a cap episode, if one was on.
    pub(super) fn made(&mut self) -> Option<String> {
        let since = self.since.take()?;
        let n = std::mem::take(&mut self.refused);
        Some(format!(
            "sessions made at a Logon are below their cap again: {n} Logon(s) refused over {:.1} s",
            since.elapsed().as_secs_f64()
        ))
    }

    /// The session of `route` comes back from its connection: kept when
    /// its store holds its state in memory, dropped (closing its files)
    /// when the state persists, to be made again at its next Logon.
    pub(super) fn release(&mut self, route: &Route, session: Session<S>) {
        if session.store().persists() {
            self.sessions.remove(route);
            drop(session);
        } else if let Some(m) = self.sessions.get_mut(route) {
            m.state = State::Free(Box::new(session));
        }
    }
}
