//! Sessions assembled from a QuickFIX settings file and run: what
//! `perfkit fix acceptor`, `fix initiator` and `fix load` share. A
//! session's store is in memory, QuickFIX's files (`FileStorePath`) or
//! QuickFIX's PostgreSQL tables (`PostgreSQLStore*`); its logs are the
//! [`Console`]'s screen (as its `ScreenLogShow*` keys say), the engine's
//! message log ([`EngineSettings::log`]), QuickFIX's file logs
//! (`FileLogPath`) and QuickFIX's log tables (`PostgreSQLLog*`); its
//! dictionaries and TLS keys come from the file too. The caller turns its
//! flags into an [`EngineSettings`] and says where lines for the operator
//! go ([`Console`]); nothing here prints.
//!
//! - [`run_acceptor`]: every acceptor session and template of the file,
//!   each on its own `SocketAcceptPort` (the first port served on the
//!   caller's thread, any other on a thread of its own);
//! - [`run_initiator`]: every initiator session, each connecting (and
//!   reconnecting) on a thread of its own;
//! - [`load_sessions`], [`open_session`]: the sessions alone, with their
//!   stores open, for a driver of its own (the load generator).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fixcore::affinity::CoreSet;
use fixcore::build::TimePrecision;
use fixcore::dictionary::DataDictionary;
use fixcore::dictionary::validate::Validator;
use fixcore::value::UtcTimestamp;
use fixsession::app::{Application, Delivered};
use fixsession::file_log::FileLog;
use fixsession::machine::{Config, Session, SessionError};
use fixsession::settings::{ConnectionType, SessionFiles, SessionSettings, Settings, TlsSettings};
use fixsession::store::{AnyStore, FileStore, MemoryStore, SessionStore, journal};

use crate::apps::{Echo, Exchange, Orders};
use crate::lease::Keeper;

mod acceptor;
mod database;
mod error;
mod initiator;
mod log;
mod template;
#[cfg(test)]
mod tests;

pub use acceptor::run_acceptor;
use error::Context;
pub use error::Error;
pub use initiator::{Outcome, run_initiator};

/// Which application answers the counterparty's messages.
#[derive(Debug, Clone, Copy)]
pub enum App {
    /// Send back each NewOrderSingle, SecurityDefinition and Email (what
    /// QuickFIX's acceptance tests expect); other types are unsupported.
    Echo,
    /// Answer each NewOrderSingle with ExecutionReports: new, then filled.
    Exec,
}

/// The session engine to run: which sessions, with which application,
/// what it writes besides, and its limits.
#[derive(Debug, Clone)]
pub struct EngineSettings {
    /// A QuickFIX settings file; its sessions of the engine's
    /// ConnectionType are run.
    pub settings: PathBuf,
    /// The application.
    pub app: App,
    /// Also write every message sent and received here.
    pub log: Option<PathBuf>,
    /// Initiator: send this many NewOrderSingles once logged on (at most
    /// `window` unfilled at a time), log out when each is filled, then
    /// end, telling the [`Console`] `answered N` and the final
    /// `seqs SENDER TARGET`.
    pub orders: Option<u64>,
    /// With `orders`: write each order's round trip (nanoseconds) here,
    /// one number per line, and tell `seconds S`.
    pub latencies: Option<PathBuf>,
    /// Unfilled orders allowed in flight with `orders`.
    pub window: u64,
    /// With `orders`: a file of the order's fields in `fix load
    /// --order-template`'s format ([`fixsession::order_template`]),
    /// instead of the default market order.
    pub order_template: Option<PathBuf>,
    /// With `orders`: how long the last orders may go unanswered before
    /// the session logs out without them.
    pub grace: Duration,
    /// Largest message accepted, in bytes.
    pub max_message: usize,
    /// How long to busy-poll a socket before blocking when it has nothing
    /// to read (zero blocks at once).
    pub spin: Duration,
    /// Most bytes kept for a counterparty that does not read.
    pub send_queue_limit: usize,
    /// Start on a damaged FileStorePath store by cutting it at its last
    /// good record, instead of refusing to start.
    pub recover_store: bool,
    /// Run every session over TLS; a session's own `SocketUseSSL=Y` does
    /// the same for it alone.
    pub tls: bool,
    /// Acceptor: most sessions made from templates live at once.
    pub max_dynamic: usize,
    /// The cores every thread of the engine runs on (the acceptor's, each
    /// session's, the lease keeper's, a store's); `None` leaves them to
    /// the scheduler. A session's `PerfkitCpuAffinity` places its own
    /// connection thread instead.
    pub cpu_affinity: Option<CoreSet>,
}

/// A warning for the operator: the engine goes on.
#[derive(Debug, Clone, Copy)]
pub enum Warning<'a> {
    /// Said in full, e.g. `FILE: line 3: SocketTimeout has no effect: ...`
    /// or `ID: file log: ...`.
    Text(&'a str),
    /// Session `session` of settings file `file` has certificate keys,
    /// but TLS is off (neither [`EngineSettings::tls`] nor its
    /// `SocketUseSSL=Y`): the connection is plain TCP.
    UnusedCertificates {
        /// The settings file.
        file: &'a Path,
        /// The session's id.
        session: &'a str,
    },
}

/// An acceptor listening: what it serves.
#[derive(Debug, Clone, Copy)]
pub struct Listening {
    /// Configured sessions.
    pub sessions: usize,
    /// Acceptor templates.
    pub templates: usize,
    /// The port.
    pub port: u16,
    /// Whether connections are TLS.
    pub tls: bool,
}

/// Where an engine's lines for its operator go: the screen log, warnings,
/// notices and an initiator's results. Called from the sessions' threads,
/// so each call should write its line whole.
pub trait Console: Send + Sync {
    /// One screen-log line, without its newline: a session's message or
    /// event as its `ScreenLogShow*` keys ask, or an engine event.
    fn screen(&self, line: &[u8]);
    /// Something the operator should know that does not stop the engine.
    fn warn(&self, warning: Warning<'_>);
    /// A notice about the engine's files (a store converted).
    fn notice(&self, text: &str);
    /// The acceptor listens.
    fn listening(&self, listening: Listening);
    /// One line of an initiator's result (`answered N`, `seconds S`,
    /// `seqs SENDER TARGET`).
    fn result(&self, line: &str);
    /// `err` in one line, in the operator's terms: why a session made
    /// from a template could not be opened.
    fn one_line(&self, err: &(dyn std::error::Error + 'static)) -> String;
    /// The sessions are open and about to run: from now on the stop flag
    /// ends them gracefully (a caller that sets it on a signal starts
    /// listening for the signal here, not before).
    fn running(&self) {}
}

/// The console shared by the sessions' threads.
pub type SharedConsole = Arc<dyn Console>;

/// The application chosen at run time.
enum AnyApp {
    Echo(Echo),
    Exec(Exchange),
    /// Boxed: the client keeps its counts and timings beside the window.
    Orders(Box<Orders>),
}

impl AnyApp {
    fn new(app: App) -> AnyApp {
        match app {
            App::Echo => AnyApp::Echo(Echo::default()),
            App::Exec => AnyApp::Exec(Exchange::default()),
        }
    }
}

impl Application for AnyApp {
    fn on_message<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        msg: Delivered<'_>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        match self {
            AnyApp::Echo(a) => a.on_message(session, msg, now),
            AnyApp::Exec(a) => a.on_message(session, msg, now),
            AnyApp::Orders(a) => a.on_message(session, msg, now),
        }
    }

    fn on_logon<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        match self {
            AnyApp::Orders(a) => a.on_logon(session, now),
            _ => Ok(()),
        }
    }

    fn on_tick<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        match self {
            AnyApp::Orders(a) => a.on_tick(session, now),
            _ => Ok(()),
        }
    }

    fn done(&self) -> bool {
        match self {
            AnyApp::Orders(a) => a.done(),
            _ => false,
        }
    }
}

/// `YYYYMMDD-HH:MM:SS.sss`.
pub fn stamp(t: UtcTimestamp) -> String {
    let mut b = [0u8; 32];
    let n = fixcore::build::format::timestamp(&mut b, t, TimePrecision::Millis).unwrap_or(0);
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// The file store of session `s` in `dir`, in QuickFIX's layout, opened
/// for that session (a store whose messages are another session's is
/// refused). A journal an earlier perfkit left there is converted first
/// (kept as `.journal.bak`). With `recover`, a damaged store is repaired
/// as far as it can be, each repair a warning; without, damage is
/// [`StoreError::Corrupt`](fixsession::store::StoreError::Corrupt).
fn file_store(
    s: &SessionSettings,
    dir: &Path,
    recover: bool,
    console: &dyn Console,
) -> Result<FileStore, Error> {
    std::fs::create_dir_all(dir).context(|| format!("creating FileStorePath {}", dir.display()))?;
    let owner = fixsession::id::SessionId::of(s);
    let prefix = dir.join(owner.file_name());
    let journal = dir.join(format!("{}.journal", s.id().replace(['>', ':'], "-")));
    let mut seqnums = prefix.as_os_str().to_owned();
    seqnums.push(".seqnums");
    if journal.exists() && !Path::new(&seqnums).exists() {
        let (store, bak) = journal::convert(&journal, &prefix, s.store_durability(), Some(&owner))?;
        console.notice(&format!(
            "{}: store converted to QuickFIX's file layout at {}.*; the journal is kept as {}",
            s.id(),
            prefix.display(),
            bak.display()
        ));
        return Ok(store);
    }
    if !recover {
        return Ok(FileStore::open(
            &prefix,
            s.store_durability(),
            Some(&owner),
        )?);
    }
    let (store, recovery) = FileStore::recover(&prefix, s.store_durability(), Some(&owner))?;
    for line in &recovery.repairs {
        console.warn(Warning::Text(&format!(
            "{}: store repaired: {line}",
            s.id()
        )));
    }
    Ok(store)
}

/// A session of the file, with its store opened.
pub type Opened = (SessionSettings, Session<AnyStore>);

/// The initiator sessions of a settings file for the load generator: as
/// the engine's, except that a session without `FileStorePath` keeps no
/// sent orders in memory for resending (a ResendRequest gets a gap fill,
/// as with `PersistMessages=N`): a generator's memory must not grow with
/// every order it sends (at 50k/s that was 7.5 MB/s). A session with
/// `PerfkitMemoryStoreWindow` keeps that many, on the resend ring.
///
/// A session in a PostgreSQL store takes no lease (see
/// [`fixsession::lease`]): the generator writes its rows unfenced, as a
/// QuickFIX engine would.
///
/// The generator drives every session from its own two threads, so a
/// session's `PerfkitCpuAffinity` places nothing there: one warning says
/// so.
pub fn load_sessions(path: &Path, console: &dyn Console) -> Result<Vec<Opened>, Error> {
    let opening = Opening {
        recover: false,
        keep_sent: false,
        leasing: Leasing::None,
    };
    let sessions = engine_sessions(path, ConnectionType::Initiator, &opening, console)?.sessions;
    if let Some((s, _)) = sessions.iter().find(|(s, _)| s.cpu_affinity.is_some()) {
        console.warn(Warning::Text(&format!(
            "{}: {}: PerfkitCpuAffinity has no effect in the load generator, whose two \
             threads serve every session",
            path.display(),
            s.id()
        )));
    }
    Ok(sessions)
}

/// How a session's store is opened.
pub struct Opening<'a> {
    /// Repair a damaged file store as far as it can be.
    pub recover: bool,
    /// Keep sent messages in a memory store for resending, even when it
    /// keeps every one (one with `PerfkitMemoryStoreWindow` keeps its
    /// window either way).
    pub keep_sent: bool,
    /// How a store engines share gets its lease.
    pub leasing: Leasing<'a>,
}

/// How a session whose store engines may share (PostgreSQL) gets its
/// lease ([`fixsession::lease`]).
#[derive(Clone, Copy)]
pub enum Leasing<'a> {
    /// The keeper keeps it from now on, taking it whenever it is free
    /// (a configured session: this engine may be the standby).
    Kept(&'a Keeper),
    /// Taken now or the session is not opened (a session made at a
    /// Logon), then kept.
    Now(&'a Keeper),
    /// None: the store writes without a lease.
    None,
}

/// What a settings file gives an engine of one role.
struct EngineSessions {
    /// The sessions, each with its store opened.
    sessions: Vec<Opened>,
    /// The acceptor templates (`AcceptorTemplate=Y`), whose sessions are
    /// made at their Logon.
    templates: Vec<SessionSettings>,
    /// The engine's own `GLOBAL` file log, when the file's `[DEFAULT]`
    /// has a `FileLogPath`.
    global: Option<FileLog>,
}

/// Session `s` with its store, opened as `opening` says.
pub fn open_session(
    s: &SessionSettings,
    opening: &Opening<'_>,
    console: &dyn Console,
) -> Result<Session<AnyStore>, Error> {
    // Settings::parse refuses FileStorePath beside PostgreSQLStore*.
    let store = match (&s.file_store_path, &s.postgres_store) {
        (Some(dir), _) => AnyStore::File(Box::new(
            file_store(s, Path::new(dir), opening.recover, console)
                .context(|| format!("opening the store of {}", s.id()))?,
        )),
        (None, Some(db)) => AnyStore::Other(
            database::store(s, db, opening.leasing)
                .context(|| format!("opening the store of {}", s.id()))?,
        ),
        (None, None) => AnyStore::Memory(MemoryStore::for_session(s)),
    };
    let mut cfg = Config::from_settings(s);
    cfg.validator = validator(s)?;
    // A store that would grow with every message sent keeps none where
    // the opener asks (the load generator); a window it keeps, as its
    // memory stays flat.
    let grows = s.file_store_path.is_none()
        && s.postgres_store.is_none()
        && s.memory_store_window.is_none();
    if !opening.keep_sent && grows {
        cfg.persist_messages = false;
    }
    Ok(Session::new(cfg, store))
}

/// Runs `engine` (the whole of `run_acceptor` or `run_initiator`) with
/// the calling thread on the engine's cores, if it names any: every
/// thread the engine starts inherits them. The thread's own mask is
/// given back when it returns. A core the process may not use is refused
/// before anything is read or opened.
fn placed<R>(engine: &EngineSettings, run: impl FnOnce() -> Result<R, Error>) -> Result<R, Error> {
    match &engine.cpu_affinity {
        None => run(),
        Some(cores) => cores
            .run_placed(run)
            .context(|| format!("placing the engine's threads on cores {cores}"))?,
    }
}

/// The sessions and templates of `role` in the settings file, each
/// session opened as [`open_session`] says.
fn engine_sessions(
    path: &Path,
    role: ConnectionType,
    opening: &Opening<'_>,
    console: &dyn Console,
) -> Result<EngineSessions, Error> {
    let text = crate::whole_file::read_text(path, crate::whole_file::Kind::Settings)
        .context(|| format!("reading settings {}", path.display()))?;
    let mut settings = Settings::parse(&text).context(|| format!("settings {}", path.display()))?;
    for w in &settings.warnings {
        console.warn(Warning::Text(&format!("{}: {w}", path.display())));
    }
    let mut out = Vec::new();
    let mut templates = Vec::new();
    for s in std::mem::take(&mut settings.sessions) {
        if s.connection_type != role {
            continue;
        }
        // Before any store is opened: a core the process may not use
        // stops the engine at start-up, not at the session's first
        // connection.
        if let Some(cores) = &s.cpu_affinity {
            cores.check().context(|| {
                format!("{}: {}: PerfkitCpuAffinity={cores}", path.display(), s.id())
            })?;
        }
        if s.acceptor_template {
            // Validated now, so a template that cannot work fails at
            // start-up rather than at its first Logon.
            validator(&s)?;
            templates.push(s);
            continue;
        }
        let session = open_session(&s, opening, console)?;
        out.push((s, session));
    }
    if out.is_empty() && templates.is_empty() {
        return Err(Error::Refused(format!(
            "{}: no session with ConnectionType={}",
            path.display(),
            match role {
                ConnectionType::Acceptor => "acceptor",
                ConnectionType::Initiator => "initiator",
            }
        )));
    }
    let global = match &settings.global_log {
        Some(s) => {
            Some(FileLog::open(s, "GLOBAL").context(|| "opening the GLOBAL file log".into())?)
        }
        None => None,
    };
    Ok(EngineSessions {
        sessions: out,
        templates,
        global,
    })
}

/// The session's dictionaries (`DataDictionary`, or FIXT.1.1's
/// `TransportDataDictionary` and `AppDataDictionary`), when it uses them.
fn validator(s: &SessionSettings) -> Result<Option<Arc<Validator>>, Error> {
    let load = |path: &str| -> Result<Arc<DataDictionary>, Error> {
        let xml =
            crate::whole_file::read_text(Path::new(path), crate::whole_file::Kind::Dictionary)
                .context(|| format!("{}: reading dictionary {path}", s.id()))?;
        let dict =
            DataDictionary::parse(&xml).context(|| format!("{}: dictionary {path}", s.id()))?;
        Ok(Arc::new(dict))
    };
    if !s.use_data_dictionary {
        return Ok(None);
    }
    let (session, app) = match (
        &s.data_dictionary,
        &s.transport_data_dictionary,
        &s.app_data_dictionary,
    ) {
        (Some(d), _, _) => {
            let d = load(d)?;
            (d.clone(), d)
        }
        (None, Some(t), Some(a)) => (load(t)?, load(a)?),
        _ => return Ok(None),
    };
    Ok(Some(Arc::new(Validator::new(
        session,
        app,
        s.validation.clone(),
    ))))
}

/// The shared `--log` file, opened for appending.
type MessageLog = Arc<Mutex<BufWriter<File>>>;

fn message_log(path: &Option<PathBuf>) -> Result<Option<MessageLog>, Error> {
    path.as_ref()
        .map(|p| {
            let f = File::options()
                .create(true)
                .append(true)
                .open(p)
                .context(|| format!("opening log {}", p.display()))?;
            Ok(Arc::new(Mutex::new(BufWriter::new(f))))
        })
        .transpose()
}

/// The engine's lease keeper, its lines on the console's screen log.
fn keeper(console: &SharedConsole) -> Arc<Keeper> {
    let console = Arc::clone(console);
    Arc::new(Keeper::new(Arc::new(move |line: &str| {
        console.screen(format!("{} : {line}", stamp(UtcTimestamp::now())).as_bytes());
    })))
}

/// The TLS of session `s`, made by `make` from its keys, when the
/// engine's `tls` or its `SocketUseSSL=Y` asks for it; each thing rustls
/// cannot do as the keys ask is one warning. With TLS off, certificate
/// keys that would go unused are one warning too.
fn tls_for<T, E: std::fmt::Display>(
    engine: &EngineSettings,
    s: &SessionSettings,
    console: &dyn Console,
    make: impl FnOnce(&TlsSettings) -> Result<(T, Vec<String>), E>,
) -> Result<Option<T>, Error> {
    let file = engine.settings.display();
    if !(engine.tls || s.tls.enabled) {
        let t = &s.tls;
        if t.server_certificate_file.is_some()
            || t.client_certificate_file.is_some()
            || t.ca_file.is_some()
            || t.ca_directory.is_some()
        {
            console.warn(Warning::UnusedCertificates {
                file: &engine.settings,
                session: &s.id(),
            });
        }
        return Ok(None);
    }
    let (tls, warnings) =
        make(&s.tls).map_err(|e| Error::Refused(format!("{file}: {}: TLS: {e}", s.id())))?;
    for w in warnings {
        console.warn(Warning::Text(&format!("{file}: {}: TLS: {w}", s.id())));
    }
    Ok(Some(tls))
}
