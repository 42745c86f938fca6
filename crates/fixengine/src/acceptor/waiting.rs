//! Connections before their Logon: what they sent so far, read without a
//! thread of their own, and the Logon's routing once it is whole.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use crate::connection::Transport;
use crate::tls::TlsStream;
use fixcore::frame::Framer;

/// BeginString, SenderCompID and TargetCompID as a message carries them.
pub(super) type Route = (String, String, String);

/// An accepted connection, plain or TLS.
pub(super) enum Stream {
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

    pub(super) fn socket(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(t) => t.socket(),
        }
    }

    pub(super) fn close(&mut self) {
        match self {
            Stream::Plain(s) => s.close(),
            Stream::Tls(t) => t.close(),
        }
    }
}

/// A connection that has not sent its Logon yet.
pub(super) struct Waiting {
    pub(super) stream: Stream,
    pub(super) peer: SocketAddr,
    pub(super) framer: Framer,
    /// Every byte read, handed to the session with the connection.
    pub(super) all: Vec<u8>,
    pub(super) since: Instant,
}

impl Waiting {
    /// Reads what arrived: `None` while the first message is incomplete,
    /// the Logon once it is one, why the connection goes when it cannot
    /// be one.
    pub(super) fn read(&mut self, max_message: usize) -> Option<Result<Logon, String>> {
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
                Err(e) => return Some(Err(crate::socket::words(&e))),
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
pub(super) struct Logon {
    pub(super) route: Route,
    /// Whether its CheckSum holds; the session it is for decides whether
    /// that matters.
    pub(super) checksum_holds: bool,
    /// The message, for the checks a session made at a Logon passes
    /// first ([`screen_logon`](fixsession::machine::screen_logon)).
    pub(super) msg: Vec<u8>,
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
        checksum_holds: fixcore::frame::checksum_holds(msg),
        msg: msg.to_vec(),
    })
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

/// Polls the listener (when `listen`) and every waiting connection for
/// input, at most `timeout`: readiness of each, the listener first
/// (false when not polled).
pub(super) fn poll_all(
    listener: &TcpListener,
    listen: bool,
    waiting: &[Waiting],
    timeout: Duration,
) -> io::Result<Vec<bool>> {
    use std::os::fd::AsRawFd;
    // A negative descriptor is skipped by poll(2): the listener's place
    // stays, so readiness indices do not shift.
    let listener_fd = if listen { listener.as_raw_fd() } else { -1 };
    let mut fds: Vec<libc::pollfd> = std::iter::once(listener_fd)
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
    // stream, all borrowed (open) throughout, or -1, which poll ignores.
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
