//! Many sessions on one port: connections wait for their Logon together
//! on the acceptor's thread, and each one whose Logon names a configured,
//! free session runs on its own thread from then on. A connection for no
//! configured session, for one already connected, or whose first message
//! is not a good Logon is closed without an answer, as QuickFIX does; the
//! live session is never disturbed.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::app::{Application, Log};
use super::connection::{self, Options};
use super::machine::Session;
use super::store::SessionStore;
use crate::frame::Framer;

/// BeginString, SenderCompID and TargetCompID as a message carries them.
type Route = (String, String, String);

/// The sessions an acceptor serves.
pub struct Acceptor<S: SessionStore> {
    slots: Vec<Mutex<Option<Session<S>>>>,
    /// (BeginString, our CompID, theirs) of each slot.
    keys: Vec<Route>,
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
        Acceptor {
            slots: sessions.into_iter().map(|s| Mutex::new(Some(s))).collect(),
            keys,
        }
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
        let mut waiting: Vec<Waiting> = Vec::new();
        let mut refused = Refused::default();
        std::thread::scope(|scope| {
            while !opts.stop.load(Ordering::Relaxed) {
                let ready = poll_all(listener, &waiting, POLL)?;
                if ready[0] {
                    self.accept_all(listener, &mut waiting, &mut refused, misc, opts)?;
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
                            "no Logon within {} s",
                            opts.logon_timeout.as_secs_f64()
                        )))
                    } else {
                        None
                    };
                    if let Some(outcome) = verdict {
                        let w = waiting.swap_remove(i);
                        match outcome {
                            Ok(route) => self.start(scope, w, route, &app, &log, misc, opts),
                            Err(why) => misc(&format!("connection from {}: {why}; closed", w.peer)),
                        }
                    }
                }
                refused.report(misc);
            }
            Ok(())
        })
    }

    /// Accepts every connection waiting on `listener`.
    fn accept_all(
        &self,
        listener: &TcpListener,
        waiting: &mut Vec<Waiting>,
        refused: &mut Refused,
        misc: &(dyn Fn(&str) + Sync),
        opts: Options<'_>,
    ) -> io::Result<()> {
        loop {
            match listener.accept() {
                Ok((stream, peer)) => {
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

    /// Gives a connection whose Logon arrived its session, on a thread of
    /// its own; refuses it when the session is unknown or taken.
    #[allow(clippy::too_many_arguments)]
    fn start<'scope, 'env, A, L, FA, FL>(
        &'env self,
        scope: &'scope std::thread::Scope<'scope, 'env>,
        w: Waiting,
        key: Route,
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
        let Some(i) = self
            .keys
            .iter()
            .position(|(bs, ours, theirs)| key.0 == *bs && key.1 == *theirs && key.2 == *ours)
        else {
            misc(&format!(
                "Unknown session: {}:{}->{}, connection closed",
                key.0, key.2, key.1
            ));
            return;
        };
        let taken = self.slots[i]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let Some(mut session) = taken else {
            misc(&format!(
                "Session {}:{}->{} is already connected; new connection closed",
                key.0, key.2, key.1
            ));
            return;
        };
        let Waiting {
            mut stream,
            peer,
            all,
            ..
        } = w;
        scope.spawn(move || {
            let mut a = app(i);
            let mut l = log(i);
            let res = connection::run(&mut stream, &all, &mut session, &mut a, &mut l, opts);
            *self.slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(session);
            // Closed only now that the session is back in its slot (see `run`).
            let _ = stream.shutdown(std::net::Shutdown::Both);
            if let Err(e) = res {
                misc(&format!("connection from {peer}: {e}"));
            }
        });
    }
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

/// A connection that has not sent its Logon yet.
struct Waiting {
    stream: TcpStream,
    peer: SocketAddr,
    framer: Framer,
    /// Every byte read, handed to the session with the connection.
    all: Vec<u8>,
    since: Instant,
}

impl Waiting {
    /// Reads what arrived: `None` while the first message is incomplete,
    /// its route once it is a good Logon, why the connection goes when it
    /// cannot be one.
    fn read(&mut self, max_message: usize) -> Option<Result<Route, String>> {
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

/// The route of `msg` if it is a Logon whose CheckSum holds; otherwise
/// why it cannot open a session.
fn logon_route(msg: &[u8]) -> Result<Route, String> {
    if !crate::frame::checksum_holds(msg) {
        return Err("first message has a bad CheckSum".into());
    }
    let key = routing(msg);
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
    Ok(key)
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
        .chain(waiting.iter().map(|w| w.stream.as_raw_fd()))
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
