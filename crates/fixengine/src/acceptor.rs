//! Many sessions on one port: connections wait for their Logon together
//! on the acceptor's thread, and each one whose Logon names a configured,
//! free session runs on its own thread from then on. A Logon for no
//! configured session may match a [`Template`] (QuickFIX/J's
//! `AcceptorTemplate`), which makes its session then, once the Logon has
//! passed every check that needs no store ([`dynamic`]). A connection
//! for no session, for one already connected, or whose first message is
//! not a good Logon is closed without an answer, as QuickFIX does; the
//! live session is never disturbed. When descriptors run short, accept
//! errors pause the listener instead of spinning, and strangers never
//! take the last descriptors a configured counterparty needs
//! (`admission`). A session whose store engines share is served only
//! while this engine holds its lease ([`fixsession::lease`]); a Logon for
//! it otherwise is closed without an answer too, with a line saying why,
//! except that a Logon arriving before the lease keeper has first looked
//! at the lease (its start-up wait) waits, unread and unanswered, until
//! it has.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, ToSocketAddrs};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::connection::{self, Options};
use crate::tls::ServerTls;
use fixcore::affinity::CoreSet;
use fixcore::frame::Framer;
use fixcore::value::UtcTimestamp;
use fixsession::app::Application;
use fixsession::id::SessionId;
use fixsession::lease::{Standing, Vacancy};
use fixsession::log::Log;
use fixsession::machine::Session;
use fixsession::store::SessionStore;

mod admission;
pub mod dynamic;
mod listener;
mod waiting;

use admission::{Backoff, Descriptors};
use dynamic::{Dynamic, Made, State};
pub use dynamic::{MakeSession, Template};
pub use listener::listen;
use waiting::{Logon, Route, Stream, Waiting, poll_all};

/// The sessions an acceptor serves.
pub struct Acceptor<S: SessionStore> {
    /// The configured sessions, each in its slot while no connection has
    /// it.
    configured: Vec<Configured<S>>,
    /// Templates for sessions made at a Logon, tried in order.
    templates: Vec<Template<S>>,
    /// The sessions templates made that are live.
    dynamic: Mutex<Dynamic<S>>,
    /// TLS on every connection of the port, when set.
    tls: Option<ServerTls>,
}

/// A configured session's place.
struct Configured<S: SessionStore> {
    slot: Mutex<Option<Session<S>>>,
    /// (BeginString, our CompID, theirs).
    route: Route,
    /// What it asks of a connection before its Logon is taken.
    rules: Rules,
    /// The cores its connections' threads run on; `None`: where the
    /// acceptor's own thread runs.
    placement: Option<CoreSet>,
}

/// Which session a connection took, for the callbacks that make its
/// application and log.
#[derive(Debug, Clone, Copy)]
pub enum Taken<'a> {
    /// The configured session given at this index to [`Acceptor::new`].
    Configured(usize),
    /// A session template number `template` made for `id`.
    Dynamic {
        /// The template's index among those given to
        /// [`Acceptor::with_templates`].
        template: usize,
        /// The session's identity.
        id: &'a SessionId,
    },
}

/// A session's conditions for taking a connection.
#[derive(Clone)]
struct Rules {
    /// Whether the Logon's CheckSum must hold (`ValidateLengthAndChecksum`,
    /// `ValidateChecksum`).
    checksum: bool,
    /// `AllowedRemoteAddresses` as written; empty: any address.
    allowed: Vec<String>,
}

impl Rules {
    fn of(c: &fixsession::machine::Config) -> Rules {
        Rules {
            checksum: c.validate_checksum,
            allowed: c.allowed_remote_addresses.clone(),
        }
    }
}

/// The default of [`Acceptor::with_max_dynamic`]: with six descriptors a
/// session (its socket, four store files, two logs less the socket's
/// share) this many stay under 700, which leaves a process limited to
/// 1,024 room for the configured sessions and the connections awaiting
/// their Logon.
pub const MAX_DYNAMIC: usize = 100;

/// Descriptors a session made at a Logon may open besides its socket
/// (four store files, two logs, one spare).
const DESCRIPTORS_PER_SESSION: usize = 7;

/// The addresses each configured session and each template lets in,
/// resolved at start-up (empty: any).
struct Allowed {
    configured: Vec<Vec<IpAddr>>,
    templates: Vec<Vec<IpAddr>>,
}

impl Allowed {
    /// Whether any session or template lets `ip` in.
    fn anyone(&self, ip: IpAddr) -> bool {
        self.configured
            .iter()
            .chain(&self.templates)
            .any(|a| admits(a, ip))
    }
}

/// A session taken for a connection, and where it goes back.
struct Claim<S: SessionStore> {
    session: Session<S>,
    home: Home,
}

/// Where a taken session goes back when its connection ends.
enum Home {
    /// Configured slot `i`.
    Configured(usize),
    /// The sessions made at a Logon, under `route`.
    Dynamic {
        route: Route,
        /// The template that made it.
        template: usize,
        id: SessionId,
    },
}

impl Home {
    fn taken(&self) -> Taken<'_> {
        match self {
            Home::Configured(i) => Taken::Configured(*i),
            Home::Dynamic { template, id, .. } => Taken::Dynamic {
                template: *template,
                id,
            },
        }
    }
}

impl<S: SessionStore + Send> Acceptor<S> {
    /// An acceptor for `sessions` (acceptor-role sessions).
    pub fn new(sessions: Vec<Session<S>>) -> Acceptor<S> {
        let configured = sessions
            .into_iter()
            .map(|s| {
                let c = s.config();
                Configured {
                    route: (
                        c.begin_string.as_str().to_string(),
                        c.sender_comp_id.clone(),
                        c.target_comp_id.clone(),
                    ),
                    rules: Rules::of(c),
                    placement: None,
                    slot: Mutex::new(Some(s)),
                }
            })
            .collect();
        Acceptor {
            configured,
            templates: Vec::new(),
            dynamic: Mutex::new(Dynamic::new(MAX_DYNAMIC)),
            tls: None,
        }
    }

    /// Adds templates: a Logon no session takes is offered to each in
    /// turn (see [`Template`]).
    pub fn with_templates(mut self, templates: Vec<Template<S>>) -> Acceptor<S> {
        self.templates.extend(templates);
        self
    }

    /// Runs each configured session's connections on a thread confined to
    /// its cores: `placements` holds one entry per session, in the order
    /// given to [`Acceptor::new`] (`None` leaves that session's thread
    /// where the acceptor's own thread runs; missing entries are `None`).
    /// The cores should have been [`CoreSet::check`]ed: a thread the OS
    /// will not place runs unplaced, with a line saying so.
    pub fn with_placements(
        mut self,
        placements: impl IntoIterator<Item = Option<CoreSet>>,
    ) -> Acceptor<S> {
        for (c, p) in self.configured.iter_mut().zip(placements) {
            c.placement = p;
        }
        self
    }

    /// At most `max` sessions made at a Logon live at once (default
    /// [`MAX_DYNAMIC`]); past it, their Logons are closed without an
    /// answer, with one line per episode.
    pub fn with_max_dynamic(self, max: usize) -> Acceptor<S> {
        self.dynamic.lock().unwrap_or_else(|p| p.into_inner()).max = max;
        self
    }

    /// Runs every connection over TLS: its handshake happens while the
    /// connection waits for its Logon, inside the same time and size
    /// limits, so a peer that stalls mid-handshake holds no thread and is
    /// closed at the Logon timeout.
    pub fn with_tls(mut self, tls: ServerTls) -> Acceptor<S> {
        self.tls = Some(tls);
        self
    }

    /// Accepts connections on `listener` until `opts.stop` is set and every
    /// connection has ended (each logs its session out on `stop`).
    /// `app` and `log` make the application and log of the session a
    /// connection took (a log that cannot be made closes the connection
    /// with the reason); `misc` logs what belongs to no session.
    ///
    /// Until its Logon arrives a connection holds no session and no
    /// thread: this thread polls them all, at most
    /// `opts.max_unauthenticated` at once (a newcomer past that closes the
    /// one that has waited longest), each for at most `opts.logon_timeout` and
    /// [`MAX_LOGON`] bytes (or `opts.max_message`, if smaller). The first
    /// message must be a Logon whose
    /// CheckSum holds, for a configured session that is free; anything
    /// else closes the connection without an answer, as QuickFIX does.
    /// Only then does the connection take its session, on a thread of
    /// its own.
    pub fn serve<A, L, FA, FL>(
        &self,
        listener: &TcpListener,
        app: FA,
        log: FL,
        misc: &(dyn Fn(&str) + Sync),
        opts: Options<'_>,
    ) -> io::Result<()>
    where
        A: Application,
        L: Log,
        FA: Fn(Taken<'_>) -> A + Sync,
        FL: Fn(Taken<'_>) -> Result<L, String> + Sync,
    {
        listener.set_nonblocking(true)?;
        let allowed = self.allowed_addresses()?;
        let descriptors = Descriptors::new(self.configured.len());
        let mut backoff = Backoff::default();
        let mut waiting: Vec<Waiting> = Vec::new();
        // Logons read whose session's lease the keeper has not looked
        // at yet, each with its connection, no longer read.
        let mut held: Vec<(Waiting, Logon)> = Vec::new();
        let mut refused = Refused::default();
        std::thread::scope(|scope| {
            while !opts.stop.load(Ordering::Relaxed) {
                let listen = backoff.listening(Instant::now());
                let ready = poll_all(listener, listen, &waiting, POLL)?;
                if ready[0] {
                    let mut accepting = Accepting {
                        waiting: &mut waiting,
                        refused: &mut refused,
                        backoff: &mut backoff,
                        descriptors: &descriptors,
                        allowed: &allowed,
                    };
                    self.accept_all(listener, &mut accepting, misc, opts)?;
                }
                let now = Instant::now();
                // From the end, so that swap_remove only moves entries
                // already looked at; waiting[i]'s readiness is ready[i + 1]
                // (ready[0] is the listener; new arrivals have none yet).
                // A connection closed to make room above moved the last
                // one into its place, which may read a readiness not its
                // own: reads never block, and poll reports a ready one
                // again next round.
                for i in (0..waiting.len()).rev() {
                    let verdict = if ready.get(i + 1).copied().unwrap_or(false) {
                        waiting[i].read(logon_limit(opts))
                    } else if now.duration_since(waiting[i].since) > opts.logon_timeout {
                        Some(Err(format!(
                            "{} within {} s",
                            match &waiting[i].stream {
                                Stream::Tls(t) if !t.handshake_done() => "no TLS handshake",
                                _ => "no Logon",
                            },
                            opts.logon_timeout.as_secs_f64()
                        )))
                    } else {
                        None
                    };
                    if let Some(outcome) = verdict {
                        let w = waiting.swap_remove(i);
                        match outcome {
                            Ok(logon) => held.push((w, logon)),
                            Err(why) => misc(&format!("connection from {}: {why}; closed", w.peer)),
                        }
                    }
                }
                // Logons just read, and those held for a lease not yet
                // looked at, oldest first: the first for a session
                // takes it.
                held.sort_by_key(|(w, _)| w.since);
                let mut kept = Vec::new();
                for (w, logon) in held.drain(..) {
                    match self.claim(&logon, w.peer, &allowed, &descriptors, misc) {
                        Ok(claim) => self.start(scope, w, claim, &app, &log, misc, opts),
                        Err(Refusal::Closed(Some(line))) => misc(&line),
                        Err(Refusal::Closed(None)) => {}
                        Err(Refusal::Wait) if now.duration_since(w.since) > opts.logon_timeout => {
                            misc(&format!(
                                "connection from {}: the lease of {}:{}->{} was not looked at \
                                 within {} s of its Logon; closed",
                                w.peer,
                                logon.route.0,
                                logon.route.2,
                                logon.route.1,
                                opts.logon_timeout.as_secs_f64()
                            ));
                        }
                        Err(Refusal::Wait) => kept.push((w, logon)),
                    }
                }
                // As many held as may wait for their Logon at once: the
                // newest stay.
                let room = opts.max_unauthenticated.max(1);
                if kept.len() > room {
                    refused.count += (kept.len() - room) as u64;
                    kept.drain(..kept.len() - room);
                }
                held = kept;
                refused.report(misc);
            }
            Ok(())
        })
    }

    /// Each configured session's and each template's
    /// `AllowedRemoteAddresses`, resolved once at start-up (empty: any);
    /// a name that does not resolve is an error.
    fn allowed_addresses(&self) -> io::Result<Allowed> {
        let resolve = |r: &Rules| -> io::Result<Vec<IpAddr>> {
            let mut ips = Vec::new();
            for name in &r.allowed {
                let found = (name.as_str(), 0).to_socket_addrs().map_err(|e| {
                    io::Error::new(e.kind(), format!("AllowedRemoteAddresses {name}: {e}"))
                })?;
                ips.extend(found.map(|a| a.ip().to_canonical()));
            }
            Ok(ips)
        };
        Ok(Allowed {
            configured: self
                .configured
                .iter()
                .map(|c| resolve(&c.rules))
                .collect::<io::Result<_>>()?,
            templates: self
                .templates
                .iter()
                .map(|t| resolve(&t.rules))
                .collect::<io::Result<_>>()?,
        })
    }

    /// The session `logon` from `peer` is for, taken from its place: a
    /// configured one, one a template made earlier that waits in memory,
    /// or one made now from the first template that matches. The error is
    /// the line saying why there is none (`None`: already said, once for
    /// an episode of refusals at the cap), or to wait: a configured
    /// session whose lease the keeper has not looked at yet. A session is made only for a
    /// Logon that passed every check needing no store, while the cap and
    /// the descriptors allow: a refused Logon leaves nothing behind.
    fn claim(
        &self,
        logon: &Logon,
        peer: SocketAddr,
        allowed: &Allowed,
        descriptors: &Descriptors,
        misc: &(dyn Fn(&str) + Sync),
    ) -> Result<Claim<S>, Refusal> {
        let key = &logon.route;
        let busy = || {
            Some(format!(
                "Session {}:{}->{} is already connected; new connection closed",
                key.0, key.2, key.1
            ))
        };
        let configured = self.configured.iter().position(|c| {
            let (bs, ours, theirs) = &c.route;
            key.0 == *bs && key.1 == *theirs && key.2 == *ours
        });
        if let Some(i) = configured {
            let c = &self.configured[i];
            if !logon.checksum_holds && c.rules.checksum {
                return Err(Refusal::Closed(Some(bad_checksum(peer))));
            }
            if !admits(&allowed.configured[i], peer.ip()) {
                return Err(Refusal::Closed(Some(not_allowed(peer, key))));
            }
            let mut slot = c.slot.lock().unwrap_or_else(|p| p.into_inner());
            let session = match slot.take() {
                Some(session) => session,
                None => return Err(Refusal::Closed(busy())),
            };
            let Standing::NotHeld(vacancy) = session.store().standing() else {
                return Ok(Claim {
                    session,
                    home: Home::Configured(i),
                });
            };
            *slot = Some(session);
            // The keeper has not looked at the lease yet (its start-up
            // wait): the Logon waits for the look, unread and
            // unanswered, rather than lose the counterparty a
            // ReconnectInterval for a lease this engine may take a
            // moment later.
            if vacancy == Vacancy::Unlooked {
                return Err(Refusal::Wait);
            }
            // Not served here (fixsession::lease): the Logon gets no
            // answer, as for a session not served here, and the line
            // says why.
            let why = match vacancy {
                Vacancy::Unusable => {
                    "no engine serves it: its lease record is unusable (the lease keeper's line \
                     names the record and why)"
                }
                Vacancy::Unreachable => {
                    "this engine cannot reach its lease's database (the lease keeper's line \
                     says what it answered)"
                }
                Vacancy::Busy | Vacancy::Unlooked => {
                    "it is served by another engine (this engine does not hold its lease)"
                }
            };
            return Err(Refusal::Closed(Some(format!(
                "Session {}:{}->{}: {why}; connection from {peer} closed",
                key.0, key.2, key.1
            ))));
        }
        let Some(t) = self.templates.iter().position(|t| t.matches(key)) else {
            return Err(Refusal::Closed(Some(format!(
                "Unknown session: {}:{}->{}, connection closed",
                key.0, key.2, key.1
            ))));
        };
        let template = &self.templates[t];
        if !logon.checksum_holds && template.rules.checksum {
            return Err(Refusal::Closed(Some(bad_checksum(peer))));
        }
        if !admits(&allowed.templates[t], peer.ip()) {
            return Err(Refusal::Closed(Some(not_allowed(peer, key))));
        }
        let mut dynamic = self.dynamic.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = dynamic.sessions.get_mut(key) {
            return match std::mem::replace(&mut m.state, State::Connected) {
                State::Free(session) => Ok(Claim {
                    session: *session,
                    home: Home::Dynamic {
                        route: key.clone(),
                        template: m.template,
                        id: m.id.clone(),
                    },
                }),
                State::Connected => Err(Refusal::Closed(busy())),
            };
        }
        let id = template.id_for(key);
        let refuse = |why: &str| {
            Some(format!(
                "Session {id} from a template: {why}; connection closed"
            ))
        };
        if !dynamic.has_room() {
            return Err(Refusal::Closed(dynamic.refused_at_cap(&id)));
        }
        if !descriptors.room_for(DESCRIPTORS_PER_SESSION) {
            return Err(Refusal::Closed(refuse(
                "too few descriptors are left beside those kept for the configured sessions",
            )));
        }
        if let Some(why) = template.screen(key, &logon.msg, UtcTimestamp::now()) {
            return Err(Refusal::Closed(refuse(&why)));
        }
        let session = template
            .make(&id)
            .map_err(|e| Refusal::Closed(refuse(&e)))?;
        if let Some(line) = dynamic.made() {
            misc(&line);
        }
        dynamic.sessions.insert(
            key.clone(),
            Made {
                template: t,
                id: id.clone(),
                state: State::Connected,
            },
        );
        Ok(Claim {
            session,
            home: Home::Dynamic {
                route: key.clone(),
                template: t,
                id,
            },
        })
    }

    /// Puts a session back where it came from once its connection ended.
    fn release(&self, home: Home, session: Session<S>) {
        match home {
            Home::Configured(i) => {
                *self.configured[i]
                    .slot
                    .lock()
                    .unwrap_or_else(|p| p.into_inner()) = Some(session);
            }
            Home::Dynamic { route, .. } => self
                .dynamic
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .release(&route, session),
        }
    }

    /// Accepts connections waiting on `listener`, at most
    /// [`ACCEPTS_PER_ROUND`] before the waiting ones are read again. A
    /// peer that no session's `AllowedRemoteAddresses` lets in is closed
    /// at once, before it can send anything.
    fn accept_all(
        &self,
        listener: &TcpListener,
        a: &mut Accepting<'_>,
        misc: &(dyn Fn(&str) + Sync),
        opts: Options<'_>,
    ) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        for _ in 0..ACCEPTS_PER_ROUND {
            match listener.accept() {
                Ok((stream, peer)) => {
                    a.backoff.succeeded(misc);
                    if !a.allowed.anyone(peer.ip()) {
                        misc(&format!(
                            "connection from {peer}: not in any session's AllowedRemoteAddresses; closed"
                        ));
                        continue;
                    }
                    // The longest waiting goes, not the newcomer: a flood
                    // of idle connections must not keep a real
                    // counterparty, which logs on at once, out. Likewise
                    // when the newcomer's descriptor came out of the
                    // reserve.
                    if a.waiting.len() >= opts.max_unauthenticated.max(1)
                        || (!a.waiting.is_empty() && a.descriptors.in_reserve(stream.as_raw_fd()))
                    {
                        a.close_oldest();
                    }
                    if let Err(e) = stream.set_nonblocking(true) {
                        misc(&format!(
                            "connection from {peer}: {}",
                            crate::socket::words(&e)
                        ));
                        continue;
                    }
                    let stream = match &self.tls {
                        None => Stream::Plain(stream),
                        Some(tls) => match tls.accept(stream) {
                            Ok(t) => Stream::Tls(Box::new(t)),
                            Err(e) => {
                                misc(&format!("connection from {peer}: TLS: {e}; closed"));
                                continue;
                            }
                        },
                    };
                    a.waiting.push(Waiting {
                        stream,
                        peer,
                        framer: Framer::new(logon_limit(opts)).session_cut(),
                        all: Vec::new(),
                        since: Instant::now(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if admission::is_per_connection(&e) => {}
                Err(e) if admission::is_transient(&e) => {
                    // Out of descriptors: the connection that has waited
                    // longest for its Logon makes room for the next one;
                    // with none waiting, the listener pauses.
                    if e.raw_os_error() == Some(libc::EMFILE) && !a.waiting.is_empty() {
                        a.close_oldest();
                        continue;
                    }
                    a.backoff.failed(&e, listener, misc);
                    return Ok(());
                }
                Err(e) => {
                    return Err(crate::socket::failed(
                        format_args!("accepting connections on {}", local(listener)),
                        &e,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Runs the connection `w` on the session it claimed, on a thread of
    /// its own; the session goes back to its place when the connection
    /// ends.
    #[allow(clippy::too_many_arguments)]
    fn start<'scope, 'env, A, L, FA, FL>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        w: Waiting,
        claim: Claim<S>,
        app: &'env FA,
        log: &'env FL,
        misc: &'env (dyn Fn(&str) + Sync),
        opts: Options<'env>,
    ) where
        A: Application,
        L: Log,
        FA: Fn(Taken<'_>) -> A + Sync,
        FL: Fn(Taken<'_>) -> Result<L, String> + Sync,
    {
        let Waiting {
            stream, peer, all, ..
        } = w;
        let placement = match &claim.home {
            Home::Configured(i) => self.configured[*i].placement.as_ref(),
            Home::Dynamic { template, .. } => self.templates[*template].placement.as_ref(),
        };
        scope.spawn(move || {
            // Placed before anything of the session runs, so its reads,
            // writes and store calls all happen there.
            if let Some(cores) = placement
                && let Err(e) = cores.place_current()
            {
                misc(&format!(
                    "connection from {peer}: {e}; its thread runs where the acceptor's does"
                ));
            }
            let Claim { mut session, home } = claim;
            let mut a = app(home.taken());
            let mut stream = stream;
            let res = match log(home.taken()) {
                Err(why) => Err(why),
                // One `run` per transport, each compiled for it.
                Ok(mut l) => match &mut stream {
                    Stream::Plain(s) => {
                        connection::run(s, &all, &mut session, &mut a, &mut l, opts)
                    }
                    Stream::Tls(t) => {
                        connection::run(&mut **t, &all, &mut session, &mut a, &mut l, opts)
                    }
                }
                .map_err(|e| e.to_string()),
            };
            self.release(home, session);
            // Closed only now that the session is back in its place (see
            // `run`).
            stream.close();
            if let Err(e) = res {
                misc(&format!("connection from {peer}: {e}"));
            }
        });
    }
}

/// Why a Logon takes no session now.
enum Refusal {
    /// Its connection is closed, with this line (`None`: already said).
    Closed(Option<String>),
    /// It waits, unread and unanswered, until the keeper has looked at
    /// its session's lease.
    Wait,
}

/// What accepting a connection works on.
struct Accepting<'a> {
    waiting: &'a mut Vec<Waiting>,
    refused: &'a mut Refused,
    backoff: &'a mut Backoff,
    descriptors: &'a Descriptors,
    allowed: &'a Allowed,
}

impl Accepting<'_> {
    /// Closes the connection that has waited longest for its Logon.
    fn close_oldest(&mut self) {
        if let Some(oldest) = (0..self.waiting.len()).min_by_key(|&i| self.waiting[i].since) {
            self.waiting.swap_remove(oldest);
            self.refused.count += 1;
        }
    }
}

/// Most connections accepted before those waiting are read again, so a
/// full backlog cannot starve them.
const ACCEPTS_PER_ROUND: usize = 64;

/// The address `listener` listens on, for a line naming it.
fn local(listener: &TcpListener) -> String {
    listener
        .local_addr()
        .map_or_else(|_| "the acceptor's port".to_string(), |a| a.to_string())
}

/// The longest first message a connection may send: a Logon is a few
/// hundred bytes, and this bounds what the connections awaiting theirs
/// hold together (256 of them, 16 MiB, where the 1 MiB message limit would
/// allow 256 MiB).
pub const MAX_LOGON: usize = 64 << 10;

/// The size limit for a connection's first message.
fn logon_limit(opts: Options<'_>) -> usize {
    opts.max_message.min(MAX_LOGON)
}

/// How long the acceptor's thread waits in one poll.
const POLL: Duration = Duration::from_millis(50);

/// The line closing a connection from `peer` whose Logon's CheckSum is
/// wrong, for a session that validates it.
fn bad_checksum(peer: SocketAddr) -> String {
    format!("connection from {peer}: first message has a bad CheckSum; closed")
}

/// The line closing a connection from `peer` that the session routed as
/// `key` does not let in.
fn not_allowed(peer: SocketAddr, key: &Route) -> String {
    format!(
        "connection from {peer}: not in the AllowedRemoteAddresses of {}:{}->{}; closed",
        key.0, key.2, key.1
    )
}

/// Whether `allowed` (empty: any) lets `peer` in; an IPv4 peer reached
/// through an IPv6 socket counts as its IPv4 address.
fn admits(allowed: &[IpAddr], peer: IpAddr) -> bool {
    allowed.is_empty() || allowed.contains(&peer.to_canonical())
}

/// Connections closed before their Logon to make room (too many waiting,
/// or descriptors short), reported at most once a second.
#[derive(Default)]
struct Refused {
    count: u64,
    reported: Option<Instant>,
}

impl Refused {
    fn report(&mut self, misc: &(dyn Fn(&str) + Sync)) {
        if self.count == 0
            || self
                .reported
                .is_some_and(|t| t.elapsed() < Duration::from_secs(1))
        {
            return;
        }
        misc(&format!(
            "{} connection(s) awaiting their Logon closed to make room for newer ones",
            self.count
        ));
        self.count = 0;
        self.reported = Some(Instant::now());
    }
}
