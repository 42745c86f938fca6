//! What the acceptor's listener and every connection share about
//! sockets: the buffer sizes QuickFIX's `SocketSendBufferSize` and
//! `SocketReceiveBufferSize` ask for, and how a socket's failure is told:
//! one sentence naming the address that failed (the source address a
//! bind refused, the destination a connect did not reach, the port a
//! listener could not take) in the system's words. Its own module so
//! that neither driver reaches into the other for it.

use std::io;
use std::net::SocketAddr;

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

/// The system's words for `e` (`Cannot assign requested address`),
/// without std's ` (os error 99)`, or the message it was made with. An
/// error made from a bare kind (socket2's connect timeout, a write that
/// took nothing) would read as Rust's name for the kind (`timed out`,
/// `write zero`): those that sockets give are said in words.
pub(crate) fn words(e: &io::Error) -> String {
    let text = e.to_string();
    if let Some(n) = e.raw_os_error() {
        return text
            .strip_suffix(&format!(" (os error {n})"))
            .map(str::to_string)
            .unwrap_or(text);
    }
    if e.get_ref().is_some() {
        return text;
    }
    match e.kind() {
        io::ErrorKind::TimedOut => "no answer in the time allowed".into(),
        io::ErrorKind::WriteZero => "the connection took no more bytes".into(),
        io::ErrorKind::UnexpectedEof => "the connection ended in the middle of a message".into(),
        io::ErrorKind::ConnectionReset => "Connection reset by peer".into(),
        _ => format!("failed ({text})"),
    }
}

/// `e`, of the same kind, as the sentence `doing: words`: `doing` names
/// the address (`binding the source address 192.0.2.1:0`).
pub(crate) fn failed(doing: impl std::fmt::Display, e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{doing}: {}", words(e)))
}

/// `addr`, and the name it was resolved from when that is not the
/// address itself: `10.0.0.5:5001 (fix.example)`.
pub(crate) fn named(addr: SocketAddr, host: &str) -> String {
    if addr.ip().to_string() == host.trim_start_matches('[').trim_end_matches(']') {
        addr.to_string()
    } else {
        format!("{addr} ({host})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_one_sentence_naming_the_address() {
        let e = failed(
            "binding the source address 192.0.2.1:0",
            &io::Error::from_raw_os_error(libc::EADDRNOTAVAIL),
        );
        assert_eq!(e.kind(), io::ErrorKind::AddrNotAvailable);
        assert_eq!(
            e.to_string(),
            "binding the source address 192.0.2.1:0: Cannot assign requested address"
        );
        assert_eq!(words(&io::Error::other("no address")), "no address");
        assert_eq!(
            words(&io::ErrorKind::TimedOut.into()),
            "no answer in the time allowed"
        );
        let a: SocketAddr = "127.0.0.1:5001".parse().unwrap();
        assert_eq!(named(a, "127.0.0.1"), "127.0.0.1:5001");
        assert_eq!(named(a, "localhost"), "127.0.0.1:5001 (localhost)");
        let v6: SocketAddr = "[::1]:5001".parse().unwrap();
        assert_eq!(named(v6, "::1"), "[::1]:5001");
    }
}
