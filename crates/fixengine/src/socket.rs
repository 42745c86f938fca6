//! Socket tuning shared by the acceptor's listener and every connection:
//! the buffer sizes QuickFIX's `SocketSendBufferSize` and
//! `SocketReceiveBufferSize` ask for. Its own module so that neither
//! driver reaches into the other for it.

use std::io;

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
