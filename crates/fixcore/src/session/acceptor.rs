//! Many sessions on one port: connections wait for their Logon together
//! on the acceptor's thread, and each one whose Logon names a configured,
//! free session runs on its own thread from then on. A Logon for no
//! configured session may match a [`Template`] (QuickFIX/J's
//! `AcceptorTemplate`), which makes its session then. A connection for no
//! session, for one already connected, or whose first message is not a
//! good Logon is closed without an answer, as QuickFIX does; the live
//! session is never disturbed.

use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::app::{Application, Log};
use super::connection::{self, Options, Transport};
use super::machine::Session;
use super::store::SessionStore;
use super::tls::{ServerTls, TlsStream};
use crate::frame::Framer;
use crate::settings::SessionSettings;

/// BeginString, SenderCompID and TargetCompID as a message carries them.
type Route = (String, String, String);

/// The sessions an acceptor serves.
pub struct Acceptor<S: SessionStore> {
    /// The sessions, configured first, then those made from templates.
    table: RwLock<Table<S>>,
    /// Templates for sessions made at a Logon, tried in order.
    templates: Vec<Template<S>>,
    /// TLS on every connection of the port, when set.
    tls: Option<ServerTls>,
}

/// The sessions, by slot number: a session waits in its slot while no
/// connection has it.
struct Table<S: SessionStore> {
    slots: Vec<Arc<Mutex<Option<Session<S>>>>>,
    /// (BeginString, our CompID, theirs) of each slot.
    keys: Vec<Route>,
    /// What each slot asks of a connection before its Logon is taken.
    rules: Vec<Rules>,
}

/// Makes the session of a Logon a template matched: given the slot number
/// it will have and the CompIDs (ours, theirs), the session with its own
/// store, or why it cannot be made.
pub type MakeSession<S> = dyn Fn(usize, &str, &str) -> Result<Session<S>, String> + Send + Sync;

/// A template session, as QuickFIX/J's `AcceptorTemplate=Y`: a Logon for
/// no session of the acceptor whose BeginString is the template's and
/// whose CompIDs match the template's (`*` matches any) gets a session of
/// its own, made by [`MakeSession`] and kept for that counterparty's later
/// connections. Its conditions (`ValidateChecksum`,
/// `AllowedRemoteAddresses`) are the template's.
pub struct Template<S: SessionStore> {
    route: Route,
    rules: Rules,
    make: Box<MakeSession<S>>,
}

impl<S: SessionStore> Template<S> {
    /// A template with the settings of `config` (whose CompIDs may be
    /// `*`), making sessions with `make`.
    pub fn new(
        config: &super::machine::Config,
        make: impl Fn(usize, &str, &str) -> Result<Session<S>, String> + Send + Sync + 'static,
    ) -> Template<S> {
        Template {
            route: (
                config.begin_string.as_str().to_string(),
                config.sender_comp_id.clone(),
                config.target_comp_id.clone(),
            ),
            rules: Rules::of(config),
            make: Box::new(make),
        }
    }

    /// Whether a Logon routed as `key` (BeginString, its sender = our
    /// counterparty, its target = us) is for this template.
    fn matches(&self, key: &Route) -> bool {
        let field = |pattern: &str, value: &str| pattern == "*" || pattern == value;
        self.route.0 == key.0 && field(&self.route.2, &key.1) && field(&self.route.1, &key.2)
    }
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
    fn of(c: &super::machine::Config) -> Rules {
        Rules {
            checksum: c.validate_checksum,
            allowed: c.allowed_remote_addresses.clone(),
        }
    }
}

impl<S: SessionStore + Send> Acceptor<S> {
    /// An acceptor for `sessions` (acceptor-role sessions).
    pub fn new(sessions: Vec<Session<S>>) -> Acceptor<S> {
        let keys = sessions
            .iter()
            .map(|s| {
                let c = s.config();
                (
                    c.begin_string.as_str().to_string(),
                    c.sender_comp_id.clone(),
                    c.target_comp_id.clone(),
                )
            })
            .collect();
        let rules = sessions.iter().map(|s| Rules::of(s.config())).collect();
        let slots = sessions
            .into_iter()
            .map(|s| Arc::new(Mutex::new(Some(s))))
            .collect();
        Acceptor {
            table: RwLock::new(Table { slots, keys, rules }),
            templates: Vec::new(),
            tls: None,
        }
    }

    /// Adds templates: a Logon no session takes is offered to each in
    /// turn (see [`Template`]).
    pub fn with_templates(mut self, templates: Vec<Template<S>>) -> Acceptor<S> {
        self.templates.extend(templates);
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
    /// `app(i)` and `log(i)` make the application and log of session `i`
    /// for one connection; `misc` logs what belongs to no session.
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
        FA: Fn(usize) -> A + Sync,
        FL: Fn(usize) -> L + Sync,
    {
        listener.set_nonblocking(true)?;
        let (mut allowed, template_allowed) = self.allowed_addresses()?;
        let mut waiting: Vec<Waiting> = Vec::new();
        let mut refused = Refused::default();
        std::thread::scope(|scope| {
            while !opts.stop.load(Ordering::Relaxed) {
                let ready = poll_all(listener, &waiting, POLL)?;
                if ready[0] {
                    let admitted = |ip: IpAddr| {
                        allowed
                            .iter()
                            .chain(&template_allowed)
                            .any(|a| admits(a, ip))
                    };
                    self.accept_all(listener, &mut waiting, &mut refused, &admitted, misc, opts)?;
                }
                let now = Instant::now();
                // From the end, so that swap_remove only moves entries
                // already looked at; waiting[i]'s readiness is ready[i + 1]
                // (ready[0] is the listener; new arrivals have none yet).
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
                            Ok(logon) => self.start(
                                scope,
                                w,
                                logon,
                                (&mut allowed, &template_allowed),
                                &app,
                                &log,
                                misc,
                                opts,
                            ),
                            Err(why) => misc(&format!("connection from {}: {why}; closed", w.peer)),
                        }
                    }
                }
                refused.report(misc);
            }
            Ok(())
        })
    }

    /// Each slot's and each template's `AllowedRemoteAddresses`, resolved
    /// once at start-up (empty: any); a name that does not resolve is an
    /// error.
    #[allow(clippy::type_complexity)]
    fn allowed_addresses(&self) -> io::Result<(Vec<Vec<IpAddr>>, Vec<Vec<IpAddr>>)> {
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
        let table = self.table.read().unwrap_or_else(|p| p.into_inner());
        let slots = table.rules.iter().map(resolve).collect::<io::Result<_>>()?;
        let templates = self
            .templates
            .iter()
            .map(|t| resolve(&t.rules))
            .collect::<io::Result<_>>()?;
        Ok((slots, templates))
    }

    /// The slot of the session `logon` from `peer` is for: a configured
    /// one, one a template made earlier, or one made now from the first
    /// template that matches (its addresses added to `allowed`). The error
    /// is the line saying why there is none. A session is made only for a
    /// Logon the template would take (its CheckSum and address rules) whose
    /// CompIDs can name its store and log files: a refused Logon leaves
    /// nothing behind.
    fn slot_for(
        &self,
        logon: &Logon,
        peer: SocketAddr,
        (allowed, template_allowed): (&mut Vec<Vec<IpAddr>>, &[Vec<IpAddr>]),
    ) -> Result<usize, String> {
        let key = &logon.route;
        let found = |t: &Table<S>| {
            t.keys
                .iter()
                .position(|(bs, ours, theirs)| key.0 == *bs && key.1 == *theirs && key.2 == *ours)
        };
        if let Some(i) = found(&self.table.read().unwrap_or_else(|p| p.into_inner())) {
            return Ok(i);
        }
        let unknown = || {
            format!(
                "Unknown session: {}:{}->{}, connection closed",
                key.0, key.2, key.1
            )
        };
        let t = self
            .templates
            .iter()
            .position(|t| t.matches(key))
            .ok_or_else(unknown)?;
        if !logon.checksum_holds && self.templates[t].rules.checksum {
            return Err(bad_checksum(peer));
        }
        if !admits(&template_allowed[t], peer.ip()) {
            return Err(not_allowed(peer, key));
        }
        if let Some(id) = [&key.1, &key.2].into_iter().find(|id| !names_files(id)) {
            return Err(format!(
                "Session {}:{}->{} from a template: CompID {id:?} cannot name its store \
                 and log files; connection closed",
                key.0, key.2, key.1
            ));
        }
        let mut table = self.table.write().unwrap_or_else(|p| p.into_inner());
        let i = table.slots.len();
        let session = (self.templates[t].make)(i, &key.2, &key.1).map_err(|e| {
            format!(
                "Session {}:{}->{} from a template: {e}; connection closed",
                key.0, key.2, key.1
            )
        })?;
        table.slots.push(Arc::new(Mutex::new(Some(session))));
        table
            .keys
            .push((key.0.clone(), key.2.clone(), key.1.clone()));
        table.rules.push(self.templates[t].rules.clone());
        allowed.push(template_allowed[t].clone());
        Ok(i)
    }

    /// Accepts every connection waiting on `listener`. A peer that no
    /// session's `AllowedRemoteAddresses` lets in is closed at once,
    /// before it can send anything.
    fn accept_all(
        &self,
        listener: &TcpListener,
        waiting: &mut Vec<Waiting>,
        refused: &mut Refused,
        admitted: &dyn Fn(IpAddr) -> bool,
        misc: &(dyn Fn(&str) + Sync),
        opts: Options<'_>,
    ) -> io::Result<()> {
        loop {
            match listener.accept() {
                Ok((stream, peer)) => {
                    if !admitted(peer.ip()) {
                        misc(&format!(
                            "connection from {peer}: not in any session's AllowedRemoteAddresses; closed"
                        ));
                        continue;
                    }
                    if waiting.len() >= opts.max_unauthenticated.max(1) {
                        // The longest waiting goes, not the newcomer: a
                        // flood of idle connections must not keep a real
                        // counterparty, which logs on at once, out.
                        let oldest = (0..waiting.len())
                            .min_by_key(|&i| waiting[i].since)
                            .unwrap_or(0);
                        waiting.swap_remove(oldest);
                        refused.count += 1;
                    }
                    if let Err(e) = stream.set_nonblocking(true) {
                        misc(&format!("connection from {peer}: {e}"));
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
                    waiting.push(Waiting {
                        stream,
                        peer,
                        framer: Framer::new(logon_limit(opts)).session_cut(),
                        all: Vec::new(),
                        since: Instant::now(),
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Out of descriptors and the like: the listener itself is
                // fine; try again on the next round.
                Err(e) if is_transient(&e) => {
                    misc(&format!("accepting a connection: {e}"));
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Gives a connection whose Logon arrived its session (made from a
    /// template if need be), on a thread of its own; refuses it when the
    /// session is unknown or taken, when its CheckSum is wrong and the
    /// session checks it, or when the session's `AllowedRemoteAddresses`
    /// leave the peer out.
    #[allow(clippy::too_many_arguments)]
    fn start<'scope, 'env, A, L, FA, FL>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        w: Waiting,
        logon: Logon,
        (allowed, template_allowed): (&mut Vec<Vec<IpAddr>>, &[Vec<IpAddr>]),
        app: &'env FA,
        log: &'env FL,
        misc: &'env (dyn Fn(&str) + Sync),
        opts: Options<'env>,
    ) where
        A: Application,
        L: Log,
        FA: Fn(usize) -> A + Sync,
        FL: Fn(usize) -> L + Sync,
    {
        let i = match self.slot_for(&logon, w.peer, (allowed, template_allowed)) {
            Ok(i) => i,
            Err(line) => return misc(&line),
        };
        let key = logon.route;
        let (slot, checksum) = {
            let table = self.table.read().unwrap_or_else(|p| p.into_inner());
            (Arc::clone(&table.slots[i]), table.rules[i].checksum)
        };
        if !logon.checksum_holds && checksum {
            return misc(&bad_checksum(w.peer));
        }
        if !admits(&allowed[i], w.peer.ip()) {
            return misc(&not_allowed(w.peer, &key));
        }
        let taken = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        let Some(mut session) = taken else {
            misc(&format!(
                "Session {}:{}->{} is already connected; new connection closed",
                key.0, key.2, key.1
            ));
            return;
        };
        let Waiting {
            stream, peer, all, ..
        } = w;
        scope.spawn(move || {
            let mut a = app(i);
            let mut l = log(i);
            // One `run` per transport, each compiled for it.
            let (res, mut stream) = match stream {
                Stream::Plain(mut s) => (
                    connection::run(&mut s, &all, &mut session, &mut a, &mut l, opts),
                    Stream::Plain(s),
                ),
                Stream::Tls(mut t) => (
                    connection::run(&mut *t, &all, &mut session, &mut a, &mut l, opts),
                    Stream::Tls(t),
                ),
            };
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(session);
            // Closed only now that the session is back in its slot (see `run`).
            stream.close();
            if let Err(e) = res {
                misc(&format!("connection from {peer}: {e}"));
            }
        });
    }
}

/// A listener for the acceptor sessions of `s`'s port, made as their
/// settings say: on `SocketAcceptAddress` (every IPv4 address when it is
/// unset) at `SocketAcceptPort`, with SO_REUSEADDR as
/// `SocketReuseAddress` says (std's `bind` always sets it, hence socket2)
/// and the `SocketSendBufferSize`/`SocketReceiveBufferSize` buffers, which
/// the connections it accepts inherit. (Settings::parse has checked that
/// every acceptor session of the port agrees on these.)
pub fn listen(s: &SessionSettings) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let port = s
        .socket_accept_port
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no SocketAcceptPort"))?;
    let addr = match &s.socket_accept_address {
        None => SocketAddr::from(([0, 0, 0, 0], port)),
        Some(host) => (host.as_str(), port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("SocketAcceptAddress {host} has no address"),
                )
            })?,
    };
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(s.socket_reuse_address)?;
    set_buffers(
        &socket,
        s.socket_send_buffer_size,
        s.socket_receive_buffer_size,
    )?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// SO_SNDBUF and SO_RCVBUF, where given (`None`: the system's).
pub(crate) fn set_buffers(
    socket: &socket2::Socket,
    send: Option<u32>,
    receive: Option<u32>,
) -> io::Result<()> {
    if let Some(n) = send {
        socket.set_send_buffer_size(n as usize)?;
    }
    if let Some(n) = receive {
        socket.set_recv_buffer_size(n as usize)?;
    }
    Ok(())
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

/// An accepted connection, plain or TLS.
enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream>),
}

impl Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => Transport::read(s, buf),
            Stream::Tls(t) => t.read(buf),
        }
    }

    fn socket(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => t.socket(),
        }
    }

    fn close(&mut self) {
        match self {
            Stream::Plain(s) => s.close(),
            Stream::Tls(t) => t.close(),
        }
    }
}

/// A connection that has not sent its Logon yet.
struct Waiting {
    stream: Stream,
    peer: SocketAddr,
    framer: Framer,
    /// Every byte read, handed to the session with the connection.
    all: Vec<u8>,
    since: Instant,
}

impl Waiting {
    /// Reads what arrived: `None` while the first message is incomplete,
    /// the Logon once it is one, why the connection goes when it cannot
    /// be one.
    fn read(&mut self, max_message: usize) -> Option<Result<Logon, String>> {
        let mut buf = [0u8; 4096];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => return Some(Err("closed before a first message".into())),
                Ok(n) => {
                    self.all.extend_from_slice(&buf[..n]);
                    self.framer.push(&buf[..n]);
                    if self.all.len() > max_message + 4096 {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Some(Err(e.to_string())),
            }
        }
        match self.framer.next_frame() {
            Some(Ok(msg)) => Some(logon_route(msg)),
            Some(Err(e)) => Some(Err(format!("first message garbled: {e}"))),
            None if self.all.len() > max_message => Some(Err(format!(
                "{} bytes without a whole first message (limit {max_message})",
                self.all.len()
            ))),
            None => None,
        }
    }
}

/// A connection's first message, a Logon.
struct Logon {
    route: Route,
    /// Whether its CheckSum holds; the session it is for decides whether
    /// that matters.
    checksum_holds: bool,
}

/// `msg` as a Logon, if it is one; otherwise why it cannot open a
/// session.
fn logon_route(msg: &[u8]) -> Result<Logon, String> {
    let route = routing(msg);
    // MsgType is the third field; anything else before a Logon takes no
    // session.
    let msg_type = msg
        .split(|&b| b == 1)
        .nth(2)
        .and_then(|f| f.strip_prefix(b"35="));
    if msg_type != Some(b"A") {
        return Err(format!(
            "first message is not a Logon (MsgType {})",
            String::from_utf8_lossy(msg_type.unwrap_or(b"missing"))
        ));
    }
    Ok(Logon {
        route,
        checksum_holds: crate::frame::checksum_holds(msg),
    })
}

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

/// Whether a CompID a counterparty sent can be part of a file name, as a
/// template session's store and logs are named by its CompIDs: not empty,
/// at most 64 bytes, no path separator or control character, not `.` or
/// `..` (which `/` and `..` would otherwise lead out of the store's
/// directory).
fn names_files(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id != "."
        && id != ".."
        && !id.chars().any(|c| c == '/' || c == '\\' || c.is_control())
}

/// Whether `allowed` (empty: any) lets `peer` in; an IPv4 peer reached
/// through an IPv6 socket counts as its IPv4 address.
fn admits(allowed: &[IpAddr], peer: IpAddr) -> bool {
    allowed.is_empty() || allowed.contains(&peer.to_canonical())
}

/// Connections closed because too many awaited their Logon, reported at
/// most once a second.
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
            "{} connection(s) closed: too many awaiting their Logon",
            self.count
        ));
        self.count = 0;
        self.reported = Some(Instant::now());
    }
}

/// Accept errors that leave the listener usable.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM | libc::ECONNABORTED)
    )
}

/// Polls the listener and every waiting connection for input, at most
/// `timeout`: readiness of each, the listener first.
fn poll_all(
    listener: &TcpListener,
    waiting: &[Waiting],
    timeout: Duration,
) -> io::Result<Vec<bool>> {
    use std::os::fd::AsRawFd;
    let mut fds: Vec<libc::pollfd> = std::iter::once(listener.as_raw_fd())
        .chain(waiting.iter().map(|w| w.stream.socket().as_raw_fd()))
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `fds` holds `fds.len()` valid pollfds for the duration of the
    // call, each naming a descriptor owned by `listener` or a `waiting`
    // stream, all borrowed (open) throughout.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(vec![false; fds.len()]);
        }
        return Err(e);
    }
    Ok(fds
        .iter()
        .map(|f| f.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0)
        .collect())
}

/// BeginString, SenderCompID and TargetCompID of a frame, read without
/// validating it (the session does that).
fn routing(msg: &[u8]) -> Route {
    let mut key = (String::new(), String::new(), String::new());
    for f in msg.split(|&b| b == 1) {
        let text = String::from_utf8_lossy(f);
        if let Some(v) = text.strip_prefix("8=") {
            key.0 = v.to_string();
        } else if let Some(v) = text.strip_prefix("49=") {
            key.1 = v.to_string();
        } else if let Some(v) = text.strip_prefix("56=") {
            key.2 = v.to_string();
        }
    }
    key
}
