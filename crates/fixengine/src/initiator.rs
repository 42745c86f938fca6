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
/// `stop` is set. The error (of the last address tried) is one sentence
/// naming the address that failed: the source address when binding to it
/// failed (`binding the source address 192.0.2.1:0: Cannot assign
/// requested address`: an address not on this machine, or a source port
/// taken), the destination when connecting failed.
pub fn connect(target: &ConnectTarget, stop: &AtomicBool) -> io::Result<TcpStream> {
    use crate::socket::{failed, named};
    use socket2::{Domain, Socket, Type};
    use std::net::{SocketAddr, ToSocketAddrs};
    let host = target.host.as_str();
    let addrs = (host, target.port)
        .to_socket_addrs()
        .map_err(|e| failed(format_args!("resolving {host}:{}", target.port), &e))?;
    let mut last = io::Error::new(
        io::ErrorKind::NotFound,
        format!("resolving {host}:{}: the host has no address", target.port),
    );
    for addr in addrs {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let to = named(addr, host);
        let attempt = || -> io::Result<TcpStream> {
            let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)
                .map_err(|e| failed(format_args!("making a socket for {to}"), &e))?;
            if target.source_host.is_some() || target.source_port.is_some() {
                let port = target.source_port.unwrap_or(0);
                let from = match &target.source_host {
                    // The source's address of the target's family.
                    Some(h) => (h.as_str(), port)
                        .to_socket_addrs()
                        .map_err(|e| failed(format_args!("resolving the source host {h}"), &e))?
                        .find(|a| a.is_ipv4() == addr.is_ipv4())
                        .ok_or_else(|| {
                            io::Error::new(
                                io::ErrorKind::NotFound,
                                format!("the source host {h} has no address of the family of {to}"),
                            )
                        })?,
                    None if addr.is_ipv4() => SocketAddr::from(([0, 0, 0, 0], port)),
                    None => SocketAddr::from(([0u16; 8], port)),
                };
                let source = match &target.source_host {
                    Some(h) => named(from, h),
                    None => from.to_string(),
                };
                socket
                    .bind(&from.into())
                    .map_err(|e| failed(format_args!("binding the source address {source}"), &e))?;
            }
            socket
                .connect_timeout(&addr.into(), CONNECT_TIMEOUT)
                .map_err(|e| failed(format_args!("connecting to {to}"), &e))?;
            Ok(socket.into())
        };
        match attempt() {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}
