//! An initiator's side of connecting: which of its hosts the next
//! attempt goes to ([`Targets`], QuickFIX's `SocketConnectHost<n>` and
//! host selection) and the TCP connection itself ([`connect`]), from a
//! source address when the settings give one. What runs over the
//! connection is [`crate::connection::run`]'s.

use std::io;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fixsession::settings::{ConnectTarget, HostSelection, SessionSettings};

/// Where an initiator's next connection attempt goes: its
/// [`ConnectTarget`]s (`SocketConnectHost`, then `SocketConnectHost1`,
/// 2...) in the order its [`HostSelection`] gives, as QuickFIX's
/// initiator takes them. The first attempt goes to the first target and
/// each later one to the next, back to the first after the last; with
/// `PRIORITY`, an attempt long enough after the one before (a connection
/// that lasted) starts from the first again.
#[derive(Debug, Clone)]
pub struct Targets {
    list: Vec<ConnectTarget>,
    policy: HostSelection,
    /// The index and time of the last attempt.
    last: Option<(usize, Instant)>,
}

impl Targets {
    /// The targets of initiator session `s`; `None` when it has none (an
    /// acceptor).
    pub fn new(s: &SessionSettings) -> Option<Targets> {
        (!s.connect_targets.is_empty()).then(|| Targets {
            list: s.connect_targets.clone(),
            policy: s.host_selection,
            last: None,
        })
    }

    /// The target of an attempt made at `now`.
    pub fn next(&mut self, now: Instant) -> &ConnectTarget {
        let i = match (self.last, self.policy) {
            (None, _) => 0,
            (Some((_, at)), HostSelection::Priority { start_over_secs })
                if now.saturating_duration_since(at)
                    >= Duration::from_secs(u64::from(start_over_secs)) =>
            {
                0
            }
            (Some((i, _)), _) => (i + 1) % self.list.len(),
        };
        self.last = Some((i, now));
        &self.list[i]
    }
}

/// How long one address may take to answer a connection attempt: short
/// enough that a stop request is seen while a host does not answer.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Connects to `target`, trying each address its host resolves to, from
/// its source address and port when they are given; stops trying when
/// `stop` is set.
pub fn connect(target: &ConnectTarget, stop: &AtomicBool) -> io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    use std::net::{SocketAddr, ToSocketAddrs};
    let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
    for addr in (target.host.as_str(), target.port).to_socket_addrs()? {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let attempt = || -> io::Result<TcpStream> {
            let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
            if target.source_host.is_some() || target.source_port.is_some() {
                let port = target.source_port.unwrap_or(0);
                let from = match &target.source_host {
                    // The source's address of the target's family.
                    Some(h) => (h.as_str(), port)
                        .to_socket_addrs()?
                        .find(|a| a.is_ipv4() == addr.is_ipv4())
                        .ok_or_else(|| {
                            io::Error::new(
                                io::ErrorKind::NotFound,
                                format!("source host {h} has no address of {addr}'s family"),
                            )
                        })?,
                    None if addr.is_ipv4() => SocketAddr::from(([0, 0, 0, 0], port)),
                    None => SocketAddr::from(([0u16; 8], port)),
                };
                socket.bind(&from.into())?;
            }
            socket.connect_timeout(&addr.into(), CONNECT_TIMEOUT)?;
            Ok(socket.into())
        };
        match attempt() {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}
