//! `fix acceptor`'s engine: the acceptor sessions and templates of a
//! settings file, served on each `SocketAcceptPort` they name. As
//! QuickFIX's acceptor, one process listens on every port its sessions
//! give, and a session is served only on its own port.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fixcore::value::UtcTimestamp;
use fixsession::log::Log;
use fixsession::settings::{ConnectionType, SessionSettings};
use fixsession::store::AnyStore;

use super::error::Context;
use super::log::SessionLog;
use super::template::{made_from, template};
use super::{
    AnyApp, EngineSessions, EngineSettings, Error, Leasing, Listening, MessageLog, Opened, Opening,
    SessionFiles, SharedConsole, Warning, engine_sessions, keeper, message_log, stamp, tls_for,
};
use crate::acceptor::{Acceptor, Taken};
use crate::connection::Options;
use crate::lease::Keeper;
use crate::tls::ServerTls;

/// Runs the acceptor sessions and templates of `engine`'s settings file
/// on their ports until `stop` is set: sessions log out, then it returns.
/// [`Console::running`](super::Console::running) is called once every
/// port listens. A port that fails stops the others (their sessions log
/// out) and its error is returned.
///
/// With [`EngineSettings::cpu_affinity`] every thread runs on those cores,
/// and a session with `PerfkitCpuAffinity` runs its connections on its
/// own.
pub fn run_acceptor(
    engine: &EngineSettings,
    stop: &'static AtomicBool,
    console: SharedConsole,
) -> Result<(), Error> {
    super::placed(engine, || accept(engine, stop, console))
}

/// [`run_acceptor`], on the thread as placed.
fn accept(
    engine: &EngineSettings,
    stop: &'static AtomicBool,
    console: SharedConsole,
) -> Result<(), Error> {
    let keeper = keeper(&console);
    let EngineSessions {
        sessions,
        templates,
        global,
    } = engine_sessions(
        &engine.settings,
        ConnectionType::Acceptor,
        &Opening {
            recover: engine.recover_store,
            keep_sent: true,
            leasing: Leasing::Kept(&keeper),
        },
        &*console,
    )?;
    // The files every configured session names, so a session made at a
    // Logon is never given one of them (Settings::parse has kept the
    // configured ones apart).
    let claims = Arc::new(Mutex::new(SessionFiles::new()));
    for (s, _) in &sessions {
        claims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .claim(s)
            .map_err(|e| {
                Error::Refused(format!("{}: {}: {e}", engine.settings.display(), s.id()))
            })?;
    }
    let mut ports: Vec<u16> = sessions
        .iter()
        .map(|(s, _)| s)
        .chain(&templates)
        .filter_map(|s| s.socket_accept_port)
        .collect();
    ports.sort_unstable();
    ports.dedup();
    let mut rest = sessions;
    let mut served = Vec::with_capacity(ports.len());
    for port in ports {
        let (mine, others): (Vec<Opened>, Vec<Opened>) = rest
            .into_iter()
            .partition(|(s, _)| s.socket_accept_port == Some(port));
        rest = others;
        let tpls = templates
            .iter()
            .filter(|t| t.socket_accept_port == Some(port))
            .cloned()
            .collect();
        served.push(Port::listen(engine, port, mine, tpls, &console)?);
    }
    let messages = message_log(&engine.log)?;
    console.running();
    let global = global.map(Mutex::new);
    let misc = |line: &str| {
        let now = UtcTimestamp::now();
        if let Some(g) = &global {
            let mut g = g.lock().unwrap_or_else(|p| p.into_inner());
            g.event(now, line);
            if let Err(e) = g.flush() {
                console.warn(Warning::Text(&format!("GLOBAL file log: {e}")));
            }
        }
        console.screen(format!("{} : {line}", stamp(now)).as_bytes());
    };
    let shared = Shared {
        engine,
        stop,
        messages: &messages,
        console: &console,
        claims: &claims,
        keeper: &keeper,
        misc: &misc,
    };
    let serve = |port: Port| {
        let r = port.serve(&shared);
        if r.is_err() {
            // The other ports wind down too: one error ends the command.
            stop.store(true, Ordering::SeqCst);
        }
        r
    };
    // The first port is served on this thread, each other one on a
    // thread of its own: an engine on one port runs no thread that only
    // waits for another.
    let mut ports = served.into_iter();
    let first = ports.next();
    let result = std::thread::scope(|scope| {
        let handles: Vec<_> = ports.map(|port| scope.spawn(|| serve(port))).collect();
        let mut result = first.map_or(Ok(()), serve);
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            if result.is_ok() {
                result = r;
            }
        }
        result
    });
    // Every session has logged out: a standby may take them at once.
    keeper.stop();
    result
}

/// What every port's serving shares.
struct Shared<'a> {
    engine: &'a EngineSettings,
    stop: &'static AtomicBool,
    messages: &'a Option<MessageLog>,
    console: &'a SharedConsole,
    claims: &'a Arc<Mutex<SessionFiles>>,
    keeper: &'a Arc<Keeper>,
    misc: &'a (dyn Fn(&str) + Sync),
}

/// One listening port and the sessions and templates it serves.
struct Port {
    listener: std::net::TcpListener,
    sessions: Vec<Opened>,
    templates: Vec<SessionSettings>,
    tls: Option<ServerTls>,
    nodelay: bool,
    /// One wait for every connection's Logon, before it is known which
    /// session it is for: the longest any of the port's sessions allows.
    logon_timeout: u32,
}

impl Port {
    /// Checks that the port's sessions agree on its socket's settings,
    /// makes its TLS and listens, saying so on the console.
    fn listen(
        engine: &EngineSettings,
        port: u16,
        sessions: Vec<Opened>,
        templates: Vec<SessionSettings>,
        console: &SharedConsole,
    ) -> Result<Port, Error> {
        let all: Vec<&SessionSettings> =
            sessions.iter().map(|(s, _)| s).chain(&templates).collect();
        let agreed = |what: &str, values: Vec<bool>| -> Result<bool, Error> {
            let mut v = values;
            v.dedup();
            match v[..] {
                [one] => Ok(one),
                _ => Err(Error::Refused(format!(
                    "{}: the acceptor sessions of port {port} must agree on {what}",
                    engine.settings.display()
                ))),
            }
        };
        let nodelay = agreed(
            "SocketNodelay",
            all.iter().map(|s| s.socket_nodelay).collect(),
        )?;
        agreed(
            "SocketReuseAddress",
            all.iter().map(|s| s.socket_reuse_address).collect(),
        )?;
        let logon_timeout = all.iter().map(|s| s.logon_timeout).max().unwrap_or(10);
        // Settings::parse has checked that the port's sessions agree on
        // their TLS keys.
        let tls = tls_for(engine, all[0], &**console, ServerTls::new)?;
        // The error names the address and the keys that gave it.
        let listener =
            crate::acceptor::listen(all[0]).context(|| engine.settings.display().to_string())?;
        console.listening(Listening {
            sessions: sessions.len(),
            templates: templates.len(),
            port,
            tls: tls.is_some(),
        });
        Ok(Port {
            listener,
            sessions,
            templates,
            tls,
            nodelay,
            logon_timeout,
        })
    }

    /// Serves the port's sessions until the engine stops.
    fn serve(self, sh: &Shared<'_>) -> Result<(), Error> {
        let Port {
            listener,
            sessions,
            templates,
            tls,
            nodelay,
            logon_timeout,
        } = self;
        let engine = sh.engine;
        let logs = sessions
            .iter()
            .map(|(s, _)| SessionLog::open(s, sh.messages, sh.console))
            .collect::<Result<Vec<_>, Error>>()?;
        let made = templates
            .iter()
            .map(|t| {
                template(
                    t.clone(),
                    engine.recover_store,
                    sh.claims,
                    sh.console,
                    sh.keeper,
                )
            })
            .collect();
        let placements: Vec<_> = sessions
            .iter()
            .map(|(s, _)| s.cpu_affinity.clone())
            .collect();
        let mut acceptor: Acceptor<AnyStore> =
            Acceptor::new(sessions.into_iter().map(|(_, s)| s).collect())
                .with_placements(placements)
                .with_templates(made)
                .with_max_dynamic(engine.max_dynamic);
        if let Some(tls) = tls {
            acceptor = acceptor.with_tls(tls);
        }
        acceptor
            .serve(
                &listener,
                |_| AnyApp::new(engine.app),
                |taken| match taken {
                    Taken::Configured(i) => Ok(logs[i].clone()),
                    // Opened for each connection and closed with it: a
                    // session between connections holds no descriptor.
                    Taken::Dynamic { template, id } => SessionLog::open(
                        &made_from(&templates[template], id),
                        sh.messages,
                        sh.console,
                    )
                    .map_err(|e| sh.console.one_line(&e)),
                },
                sh.misc,
                Options {
                    max_message: engine.max_message,
                    nodelay,
                    spin: engine.spin,
                    max_send_queue: engine.send_queue_limit,
                    logon_timeout: Duration::from_secs(u64::from(logon_timeout)),
                    ..Options::new(sh.stop)
                },
            )
            .context(|| "accepting connections".into())
    }
}
