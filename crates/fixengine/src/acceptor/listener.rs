//! The listening socket of an acceptor's port, bound as its sessions'
//! settings say: only start-up uses it, and it needs socket2 for what
//! std's `bind` will not do, so it stands apart from accepting.

use std::io;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};

use fixsession::settings::SessionSettings;

/// A listener for the acceptor sessions of `s`'s port, made as their
/// settings say: on `SocketAcceptAddress` (every IPv4 address when it is
/// unset) at `SocketAcceptPort`, with SO_REUSEADDR as
/// `SocketReuseAddress` says (std's `bind` always sets it, hence socket2)
/// and the `SocketSendBufferSize`/`SocketReceiveBufferSize` buffers, which
/// the connections it accepts inherit. (Settings::parse has checked that
/// every acceptor session of the port agrees on these.) An error is one
/// sentence naming the address that failed (`binding 0.0.0.0:5001
/// (SocketAcceptPort): Address already in use`).
pub fn listen(s: &SessionSettings) -> io::Result<TcpListener> {
    use crate::socket::{failed, named};
    use socket2::{Domain, Socket, Type};
    let port = s.socket_accept_port.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the session has no SocketAcceptPort",
        )
    })?;
    let (addr, at) = match &s.socket_accept_address {
        None => {
            let a = SocketAddr::from(([0, 0, 0, 0], port));
            (a, format!("{a} (SocketAcceptPort)"))
        }
        Some(host) => {
            let a = (host.as_str(), port)
                .to_socket_addrs()
                .map_err(|e| {
                    failed(
                        format_args!("resolving SocketAcceptAddress {host} (port {port})"),
                        &e,
                    )
                })?
                .next()
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("SocketAcceptAddress {host} has no address"),
                    )
                })?;
            (
                a,
                format!("{} (SocketAcceptAddress, SocketAcceptPort)", named(a, host)),
            )
        }
    };
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)
        .map_err(|e| failed(format_args!("making a socket for {at}"), &e))?;
    socket
        .set_reuse_address(s.socket_reuse_address)
        .map_err(|e| failed(format_args!("setting SO_REUSEADDR on {at}"), &e))?;
    crate::socket::set_buffers(
        &socket,
        s.socket_send_buffer_size,
        s.socket_receive_buffer_size,
    )
    .map_err(|e| failed(format_args!("setting the buffer sizes of {at}"), &e))?;
    socket
        .bind(&addr.into())
        .map_err(|e| failed(format_args!("binding {at}"), &e))?;
    socket
        .listen(1024)
        .map_err(|e| failed(format_args!("listening on {at}"), &e))?;
    Ok(socket.into())
}
