//! `perfkit fix acceptor` and `perfkit fix initiator`: fixcore's session
//! engine from a QuickFIX settings file, with the `echo` or `exec`
//! application. Events go to stderr; `--log FILE` also writes every
//! message sent and received as `time : message` lines, and a session
//! with `FileLogPath` keeps QuickFIX's file logs and one with
//! `PostgreSQLLog*` keys QuickFIX's log tables; `perfkit fix check`
//! reads the files. A session's store is in memory, QuickFIX's files
//! (`FileStorePath`) or QuickFIX's PostgreSQL tables (`PostgreSQLStore*`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use fixcore::build::TimePrecision;
use fixcore::dictionary::DataDictionary;
use fixcore::dictionary::validate::Validator;
use fixcore::session::acceptor::{Acceptor, Taken};

use super::template::{made_from, template};
use fixcore::session::app::{Application, Delivered, Log};
use fixcore::session::app::{Echo, Exchange, Orders};
use fixcore::session::connection::{self, ConnectionError, Options, Transport};
use fixcore::session::file_log::FileLog;
use fixcore::session::id::{SessionFiles, SessionId};
use fixcore::session::machine::{Config, Session, SessionError};
use fixcore::session::store::{
    AnyStore, FileStore, MemoryStore, SessionStore, StoreError, journal,
};
use fixcore::session::tls::{ClientTls, ServerTls};
use fixcore::settings::{ConnectionType, ScreenLog, SessionSettings, Settings};
use fixcore::value::UtcTimestamp;
use fixcore_postgres::{PostgresLog, PostgresStore, SessionKey};

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
pub struct Engine {
    /// A QuickFIX settings file; its sessions of the command's
    /// ConnectionType are run.
    pub settings: PathBuf,
    /// The application.
    pub app: App,
    /// Also write every message sent and received here.
    pub log: Option<PathBuf>,
    /// Initiator: send this many NewOrderSingles once logged on (at most
    /// `window` unfilled at a time), log out when each is filled, then
    /// exit, printing `answered N` and the final `seqs SENDER TARGET`.
    pub orders: Option<u64>,
    /// With `orders`: write each order's round trip (nanoseconds) here,
    /// one number per line, and print `seconds S`.
    pub latencies: Option<PathBuf>,
    /// Unfilled orders allowed in flight with `orders`.
    pub window: u64,
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
    /// Run every session over TLS (`--tls`); a session's own
    /// `SocketUseSSL=Y` does the same for it alone.
    pub tls: bool,
    /// Acceptor: most sessions made from templates live at once.
    pub max_dynamic: usize,
}

/// The application chosen at run time.
enum AnyApp {
    Echo(Echo),
    Exec(Exchange),
    Orders(Orders),
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

    fn done(&self) -> bool {
        match self {
            AnyApp::Orders(a) => a.done(),
            _ => false,
        }
    }
}

/// `YYYYMMDD-HH:MM:SS.sss`.
pub(super) fn stamp(t: UtcTimestamp) -> String {
    let mut b = [0u8; 32];
    let n = fixcore::build::format::timestamp(&mut b, t, TimePrecision::Millis).unwrap_or(0);
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// Events to stderr, messages to the shared `--log` file, both to the
/// session's QuickFIX file logs when it has `FileLogPath`. A clone
/// writes to the same files (an acceptor's connections of one session).
#[derive(Clone)]
struct SessionLog {
    id: String,
    messages: Option<Arc<Mutex<BufWriter<File>>>>,
    /// What the session's `ScreenLogShow*` keys put on stderr.
    screen: ScreenLog,
    /// The session's file logs, shared by its connections (one at a time).
    file: Option<Arc<Mutex<FileLog>>>,
    /// The session's PostgreSQL log, shared likewise.
    postgres: Option<Arc<Mutex<PostgresLog>>>,
}

impl SessionLog {
    /// The log of session `s`, opening its file and PostgreSQL logs
    /// when its settings ask for them.
    fn open(
        s: &SessionSettings,
        messages: &Option<Arc<Mutex<BufWriter<File>>>>,
    ) -> Result<SessionLog> {
        Ok(SessionLog {
            id: s.id(),
            messages: messages.clone(),
            screen: s.screen_log,
            file: file_log(s)?,
            postgres: postgres_log(s)?,
        })
    }

    fn postgres(&self) -> Option<std::sync::MutexGuard<'_, PostgresLog>> {
        self.postgres
            .as_ref()
            .map(|f| f.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn file(&self) -> Option<std::sync::MutexGuard<'_, FileLog>> {
        self.file
            .as_ref()
            .map(|f| f.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Log for SessionLog {
    fn message(&mut self, now: UtcTimestamp, incoming: bool, msg: &[u8]) {
        if let Some(mut f) = self.file() {
            f.message(now, incoming, msg);
        }
        if let Some(mut p) = self.postgres() {
            p.message(now, incoming, msg);
        }
        let dir = if incoming { "<-" } else { "->" };
        if let Some(f) = &self.messages {
            let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
            let _ = write!(f, "{} : {} {dir} ", stamp(now), self.id);
            let _ = f.write_all(msg);
            let _ = f.write_all(b"\n");
            let _ = f.flush();
        }
        if self.screen.shows(incoming, msg) {
            // One write of the whole line, so lines of sessions on other
            // threads do not interleave within it.
            let mut line = format!("{} : {} {dir} ", stamp(now), self.id).into_bytes();
            line.extend_from_slice(msg);
            line.push(b'\n');
            let _ = std::io::stderr().write_all(&line);
        }
    }
    fn event(&mut self, now: UtcTimestamp, text: &str) {
        if let Some(mut f) = self.file() {
            f.event(now, text);
        }
        if let Some(mut p) = self.postgres() {
            p.event(now, text);
        }
        if self.screen.events {
            eprintln!("{} : {} : {text}", stamp(now), self.id);
        }
    }

    fn flush(&mut self) {
        let failed = self.file().and_then(|mut f| f.flush().err());
        if let Some(e) = failed {
            // Logs are the record, not the session: it goes on.
            eprintln!("perfkit: warning: {}: file log: {e}", self.id);
        }
        let failed = self.postgres().and_then(|mut p| {
            p.flush();
            p.take_failure()
        });
        if let Some(e) = failed {
            // One line per outage; the rows wait in memory meanwhile.
            eprintln!(
                "perfkit: warning: {}: PostgreSQL log: {e}; its rows are kept and written \
                 once the database is back",
                self.id
            );
        }
    }

    fn reset(&mut self, now: UtcTimestamp) {
        let moved = self.file().map(|mut f| f.backup());
        match moved {
            Some(Err(e)) => eprintln!("perfkit: warning: {}: file log: {e}", self.id),
            Some(Ok(Some(to))) if self.screen.events => eprintln!(
                "{} : {} : sequence numbers reset: the logs so far are in {}",
                stamp(now),
                self.id,
                to.display()
            ),
            _ => {}
        }
    }
}

/// The file logs of session `s` when it has `FileLogPath`.
fn file_log(s: &SessionSettings) -> Result<Option<Arc<Mutex<FileLog>>>> {
    let Some(settings) = &s.file_log else {
        return Ok(None);
    };
    let log = FileLog::open(settings, &s.file_prefix())
        .with_context(|| format!("opening the file log of {}", s.id()))?;
    Ok(Some(Arc::new(Mutex::new(log))))
}

/// The PostgreSQL log of session `s` when it has `PostgreSQLLog*` keys.
fn postgres_log(s: &SessionSettings) -> Result<Option<Arc<Mutex<PostgresLog>>>> {
    let Some(settings) = &s.postgres_log else {
        return Ok(None);
    };
    let log = PostgresLog::open(settings, SessionKey::of(s))
        .with_context(|| format!("opening the PostgreSQL log of {}", s.id()))?;
    Ok(Some(Arc::new(Mutex::new(log))))
}

/// The file store of session `s` in `dir`, in QuickFIX's layout, opened
/// for that session (a store whose messages are another session's is
/// refused). A journal an earlier perfkit left there is converted first
/// (kept as `.journal.bak`). With `recover`, a damaged store is repaired
/// as far as it can be, each repair a warning on stderr; without, it is
/// an error, which suggests `--recover-store` when it is damage that
/// recovery repairs (not for I/O errors, a held store or another
/// session's).
fn file_store(s: &SessionSettings, dir: &Path, recover: bool) -> Result<FileStore> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("creating FileStorePath {}", dir.display()))?;
    let owner = SessionId::of(s);
    let prefix = dir.join(owner.file_name());
    let journal = dir.join(format!("{}.journal", s.id().replace(['>', ':'], "-")));
    let mut seqnums = prefix.as_os_str().to_owned();
    seqnums.push(".seqnums");
    if journal.exists() && !Path::new(&seqnums).exists() {
        let (store, bak) = journal::convert(&journal, &prefix, s.store_durability(), Some(&owner))?;
        eprintln!(
            "perfkit: {}: store converted to QuickFIX's file layout at {}.*; the journal is kept as {}",
            s.id(),
            prefix.display(),
            bak.display()
        );
        return Ok(store);
    }
    if !recover {
        return FileStore::open(&prefix, s.store_durability(), Some(&owner)).map_err(|e| match e {
            StoreError::Corrupt { .. } => {
                anyhow::anyhow!("{e}; --recover-store cuts the store at its last good record")
            }
            e => e.into(),
        });
    }
    let (store, recovery) = FileStore::recover(&prefix, s.store_durability(), Some(&owner))?;
    for line in &recovery.repairs {
        eprintln!("perfkit: warning: {}: store repaired: {line}", s.id());
    }
    Ok(store)
}

/// A session of the file, with its store opened.
type Opened = (SessionSettings, Session<AnyStore>);

/// The initiator sessions of a settings file for the load generator: as
/// the engine's, except that a session without `FileStorePath` keeps no
/// sent orders in memory for resending (a ResendRequest gets a gap fill,
/// as with `PersistMessages=N`): a generator's memory must not grow with
/// every order it sends (at 50k/s that was 7.5 MB/s).
pub(super) fn load_sessions(path: &Path) -> Result<Vec<Opened>> {
    Ok(engine_sessions(path, ConnectionType::Initiator, false, false)?.sessions)
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

/// Session `s` with its store (a damaged file store repaired when
/// `recover`; sent messages kept in a memory store only when `keep_sent`).
pub(super) fn open_session(
    s: &SessionSettings,
    recover: bool,
    keep_sent: bool,
) -> Result<Session<AnyStore>> {
    // Settings::parse refuses FileStorePath beside PostgreSQLStore*.
    let store = match (&s.file_store_path, &s.postgres_store) {
        (Some(dir), _) => AnyStore::File(Box::new(
            file_store(s, Path::new(dir), recover)
                .with_context(|| format!("opening the store of {}", s.id()))?,
        )),
        (None, Some(db)) => AnyStore::Other(Box::new(
            PostgresStore::open(db, SessionKey::of(s))
                .with_context(|| format!("opening the store of {}", s.id()))?,
        )),
        (None, None) => AnyStore::Memory(MemoryStore::default()),
    };
    let mut cfg = Config::from_settings(s);
    cfg.validator = validator(s)?;
    if !keep_sent && s.file_store_path.is_none() && s.postgres_store.is_none() {
        cfg.persist_messages = false;
    }
    Ok(Session::new(cfg, store))
}

/// The sessions and templates of `role` in the settings file, each
/// session opened as [`open_session`] says.
fn engine_sessions(
    path: &Path,
    role: ConnectionType,
    recover: bool,
    keep_sent: bool,
) -> Result<EngineSessions> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading settings {}", path.display()))?;
    let mut settings =
        Settings::parse(&text).with_context(|| format!("settings {}", path.display()))?;
    for w in &settings.warnings {
        eprintln!("perfkit: warning: {}: {w}", path.display());
    }
    let mut out = Vec::new();
    let mut templates = Vec::new();
    for s in std::mem::take(&mut settings.sessions) {
        if s.connection_type != role {
            continue;
        }
        if s.acceptor_template {
            // Validated now, so a template that cannot work fails at
            // start-up rather than at its first Logon.
            validator(&s)?;
            templates.push(s);
            continue;
        }
        let session = open_session(&s, recover, keep_sent)?;
        out.push((s, session));
    }
    if out.is_empty() && templates.is_empty() {
        bail!(
            "{}: no session with ConnectionType={}",
            path.display(),
            match role {
                ConnectionType::Acceptor => "acceptor",
                ConnectionType::Initiator => "initiator",
            }
        );
    }
    let global = match &settings.global_log {
        Some(s) => Some(FileLog::open(s, "GLOBAL").context("opening the GLOBAL file log")?),
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
fn validator(s: &SessionSettings) -> Result<Option<Arc<Validator>>> {
    let load = |path: &str| -> Result<Arc<DataDictionary>> {
        let xml = std::fs::read_to_string(path)
            .with_context(|| format!("{}: reading dictionary {path}", s.id()))?;
        let dict = DataDictionary::parse(&xml)
            .with_context(|| format!("{}: dictionary {path}", s.id()))?;
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

fn message_log(path: &Option<PathBuf>) -> Result<Option<Arc<Mutex<BufWriter<File>>>>> {
    path.as_ref()
        .map(|p| {
            let f = File::options()
                .create(true)
                .append(true)
                .open(p)
                .with_context(|| format!("opening log {}", p.display()))?;
            Ok(Arc::new(Mutex::new(BufWriter::new(f))))
        })
        .transpose()
}

/// The flag Ctrl-C sets: sessions log out, then the command exits.
fn stop_flag() -> &'static AtomicBool {
    let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    perfkit::cleanup::stop_gracefully(flag);
    flag
}

/// Runs `perfkit fix acceptor`.
pub fn acceptor(engine: Engine) -> Result<ExitCode> {
    super::cap_scan_path()?;
    let EngineSessions {
        sessions,
        templates,
        global,
    } = engine_sessions(
        &engine.settings,
        ConnectionType::Acceptor,
        engine.recover_store,
        true,
    )?;
    // Templates listen on the same port, under the same rules.
    let all: Vec<&SessionSettings> = sessions.iter().map(|(s, _)| s).chain(&templates).collect();
    let mut ports: Vec<u16> = all.iter().filter_map(|s| s.socket_accept_port).collect();
    ports.sort_unstable();
    ports.dedup();
    let [port] = ports[..] else {
        bail!(
            "{}: the acceptor sessions must share one SocketAcceptPort (found {ports:?})",
            engine.settings.display()
        );
    };
    let mut nodelay: Vec<bool> = all.iter().map(|s| s.socket_nodelay).collect();
    nodelay.dedup();
    let [nodelay] = nodelay[..] else {
        bail!(
            "{}: the acceptor sessions of port {port} must agree on SocketNodelay",
            engine.settings.display()
        );
    };
    let mut reuse: Vec<bool> = all.iter().map(|s| s.socket_reuse_address).collect();
    reuse.dedup();
    let [_] = reuse[..] else {
        bail!(
            "{}: the acceptor sessions of port {port} must agree on SocketReuseAddress",
            engine.settings.display()
        );
    };
    let ids: Vec<String> = sessions.iter().map(|(s, _)| s.id()).collect();
    // One wait for every connection's Logon, before it is known which
    // session it is for: the longest any session allows.
    let logon_timeout = all.iter().map(|s| s.logon_timeout).max().unwrap_or(10);
    // Settings::parse has checked that the port's sessions agree on
    // their TLS keys.
    let tls = tls_for(&engine, all[0], ServerTls::new)?;
    let listener = fixcore::session::acceptor::listen(all[0])
        .with_context(|| format!("listening on port {port}"))?;
    eprintln!(
        "perfkit fix acceptor: {} session(s){} on port {port}{}",
        ids.len(),
        match templates.len() {
            0 => String::new(),
            n => format!(" and {n} template(s)"),
        },
        if tls.is_some() { " (TLS)" } else { "" }
    );
    let messages = message_log(&engine.log)?;
    let stop = stop_flag();
    let logs = sessions
        .iter()
        .map(|(s, _)| SessionLog::open(s, &messages))
        .collect::<Result<Vec<_>>>()?;
    // The files every configured session names, so a session made at a
    // Logon is never given one of them (Settings::parse has kept the
    // configured ones apart).
    let claims = Arc::new(Mutex::new(SessionFiles::new()));
    for (s, _) in &sessions {
        claims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .claim(s)
            .map_err(|e| anyhow::anyhow!("{}: {}: {e}", engine.settings.display(), s.id()))?;
    }
    let made = templates
        .iter()
        .map(|t| template(t.clone(), engine.recover_store, &claims))
        .collect();
    let mut acceptor = Acceptor::new(sessions.into_iter().map(|(_, s)| s).collect())
        .with_templates(made)
        .with_max_dynamic(engine.max_dynamic);
    if let Some(tls) = tls {
        acceptor = acceptor.with_tls(tls);
    }
    let global = global.map(Mutex::new);
    let misc = |line: &str| {
        let now = UtcTimestamp::now();
        if let Some(g) = &global {
            let mut g = g.lock().unwrap_or_else(|p| p.into_inner());
            g.event(now, line);
            if let Err(e) = g.flush() {
                eprintln!("perfkit: warning: GLOBAL file log: {e}");
            }
        }
        eprintln!("{} : {line}", stamp(now));
    };
    acceptor
        .serve(
            &listener,
            |_| AnyApp::new(engine.app),
            |taken| match taken {
                Taken::Configured(i) => Ok(logs[i].clone()),
                // Opened for each connection and closed with it: a session
                // between connections holds no descriptor.
                Taken::Dynamic { template, id } => {
                    SessionLog::open(&made_from(&templates[template], id), &messages)
                        .map_err(|e| crate::cmd::one_line(&e))
                }
            },
            &misc,
            Options {
                max_message: engine.max_message,
                nodelay,
                spin: engine.spin,
                max_send_queue: engine.send_queue_limit,
                logon_timeout: Duration::from_secs(u64::from(logon_timeout)),
                ..Options::new(stop)
            },
        )
        .context("accepting connections")?;
    Ok(ExitCode::SUCCESS)
}

/// The TLS of session `s`, made by `make` from its keys, when `--tls` or
/// its `SocketUseSSL=Y` asks for it; each thing rustls cannot do as the
/// keys ask is one warning line. With TLS off, certificate keys that
/// would go unused are one warning too.
fn tls_for<T, E: std::fmt::Display>(
    engine: &Engine,
    s: &SessionSettings,
    make: impl FnOnce(&fixcore::settings::TlsSettings) -> Result<(T, Vec<String>), E>,
) -> Result<Option<T>> {
    let file = engine.settings.display();
    if !(engine.tls || s.tls.enabled) {
        let t = &s.tls;
        if t.server_certificate_file.is_some()
            || t.client_certificate_file.is_some()
            || t.ca_file.is_some()
            || t.ca_directory.is_some()
        {
            eprintln!(
                "perfkit: warning: {file}: {}: certificate keys are set but TLS is off (neither \
                 --tls nor SocketUseSSL=Y): the connection is plain TCP",
                s.id()
            );
        }
        return Ok(None);
    }
    let (tls, warnings) =
        make(&s.tls).map_err(|e| anyhow::anyhow!("{file}: {}: TLS: {e}", s.id()))?;
    for w in warnings {
        eprintln!("perfkit: warning: {file}: {}: TLS: {w}", s.id());
    }
    Ok(Some(tls))
}

/// Runs `session` over `stream` until the connection ends, then closes
/// it.
fn run_on<T: Transport>(
    mut stream: T,
    session: &mut Session<AnyStore>,
    app: &mut AnyApp,
    log: &mut SessionLog,
    opts: Options<'_>,
) -> std::result::Result<(), ConnectionError> {
    let res = connection::run(&mut stream, &[], session, app, log, opts);
    stream.close();
    res
}

/// Runs `perfkit fix initiator`: each initiator session connects,
/// reconnecting after ReconnectInterval when the connection drops, until
/// Ctrl-C logs it out.
pub fn initiator(engine: Engine) -> Result<ExitCode> {
    super::cap_scan_path()?;
    // The GLOBAL log stays open, empty, as QuickFIX's initiator leaves
    // it: no initiator event is outside a session.
    let sessions = engine_sessions(
        &engine.settings,
        ConnectionType::Initiator,
        engine.recover_store,
        true,
    )?
    .sessions;
    let messages = message_log(&engine.log)?;
    let latencies = latency_file(&engine.latencies)?;
    let stop = stop_flag();
    std::thread::scope(|scope| -> Result<()> {
        let mut handles = Vec::new();
        for (s, mut session) in sessions {
            let Some(mut targets) = connection::Targets::new(&s) else {
                bail!(
                    "{}: SocketConnectHost and SocketConnectPort are needed",
                    s.id()
                );
            };
            let mut log = SessionLog::open(&s, &messages)?;
            let mut a = match engine.orders {
                Some(n) => AnyApp::Orders(timed(Orders::new(n, engine.window), &latencies)),
                None => AnyApp::new(engine.app),
            };
            let opts = Options {
                max_message: engine.max_message,
                nodelay: s.socket_nodelay,
                spin: engine.spin,
                max_send_queue: engine.send_queue_limit,
                ..Options::new(stop)
            };
            let tls = tls_for(&engine, &s, ClientTls::new)?;
            let retry = Duration::from_secs(u64::from(s.reconnect_interval.max(1)));
            handles.push(scope.spawn(move || -> Result<()> {
                while !stop.load(Ordering::Relaxed) && !a.done() {
                    let target = targets.next(std::time::Instant::now()).clone();
                    match connection::connect(&target, stop) {
                        Ok(stream) => {
                            // One `run` per transport, each compiled for it.
                            let res = match &tls {
                                None => run_on(stream, &mut session, &mut a, &mut log, opts),
                                Some(t) => t
                                    .connect(stream, &target.host)
                                    .map_err(ConnectionError::from)
                                    .and_then(|t| run_on(t, &mut session, &mut a, &mut log, opts)),
                            };
                            match res {
                                // A store that is away (a database
                                // restarting) ends this connection, not
                                // the session: it connects again, and
                                // the Logon reloads what it needs.
                                Err(ConnectionError::Session(SessionError::Store(e)))
                                    if e.is_transient() =>
                                {
                                    log.event(
                                        UtcTimestamp::now(),
                                        &format!("Disconnected: {e}; connecting again"),
                                    );
                                    log.flush();
                                }
                                res => res.with_context(|| format!("session {}", log.id))?,
                            }
                            if a.done() {
                                break;
                            }
                        }
                        Err(e) => log.event(
                            UtcTimestamp::now(),
                            &format!("connecting to {}:{}: {e}", target.host, target.port),
                        ),
                    }
                    if a.done() {
                        break;
                    }
                    let deadline = std::time::Instant::now() + retry;
                    while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < deadline {
                        std::thread::sleep(Duration::from_millis(50));
                    }
                }
                if let AnyApp::Orders(o) = &a {
                    let st = session.store();
                    println!("answered {}", o.filled());
                    if let Some(t) = o.elapsed() {
                        println!("seconds {:.6}", t.as_secs_f64());
                    }
                    println!("seqs {} {}", st.next_sender_seq(), st.next_target_seq());
                }
                Ok(())
            }));
        }
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("a session thread panicked"))??;
        }
        Ok(())
    })?;
    if let (Some(f), Some(path)) = (latencies, &engine.latencies) {
        let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
        let flushed = f.out.flush();
        if let Some(e) = f.failed.take() {
            return Err(e).with_context(|| format!("writing {}", path.display()));
        }
        flushed.with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--latencies` file, shared by the sessions' threads, with the
/// first write error (kept for the end: a round trip's callback cannot
/// fail the session).
struct Latencies {
    out: BufWriter<File>,
    failed: Option<std::io::Error>,
}

type LatencyFile = Arc<Mutex<Latencies>>;

fn latency_file(path: &Option<PathBuf>) -> Result<Option<LatencyFile>> {
    path.as_ref()
        .map(|p| {
            let f = File::create(p).with_context(|| format!("creating {}", p.display()))?;
            Ok(Arc::new(Mutex::new(Latencies {
                out: BufWriter::new(f),
                failed: None,
            })))
        })
        .transpose()
}

/// `orders`, timing each round trip into the `--latencies` file if one
/// was asked for.
fn timed(orders: Orders, file: &Option<LatencyFile>) -> Orders {
    match file {
        Some(f) => {
            let f = f.clone();
            orders.time_round_trips(Box::new(move |t| {
                let mut f = f.lock().unwrap_or_else(|p| p.into_inner());
                if f.failed.is_none()
                    && let Err(e) = writeln!(f.out, "{}", t.as_nanos())
                {
                    f.failed = Some(e);
                }
            }))
        }
        None => orders,
    }
}
