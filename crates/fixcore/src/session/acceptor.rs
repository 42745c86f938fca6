//! Many sessions on one port: each accepted connection runs on its own
//! thread, routed to its session by the BeginString and CompIDs of the
//! first message (which must be a Logon). A connection for no configured
//! session, or for one already connected, is closed without an answer, as
//! QuickFIX does; the live session is never disturbed.

use std::io::{self, Read};
use std::net::{TcpListener, TcpStream};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::connection::{self, Application, Log, Options};
use super::machine::Session;
use super::store::SessionStore;
use crate::frame::Framer;

/// How long a new connection may take to send its first message.
const FIRST_MESSAGE: Duration = Duration::from_secs(10);

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
        std::thread::scope(|scope| {
            while !opts.stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, peer)) => {
                        let (app, log) = (&app, &log);
                        scope.spawn(move || {
                            if let Err(e) = self.connection(stream, app, log, misc, opts) {
                                misc(&format!("connection from {peer}: {e}"));
                            }
                        });
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })
    }

    fn connection<A, L, FA, FL>(
        &self,
        mut stream: TcpStream,
        app: &FA,
        log: &FL,
        misc: &(dyn Fn(&str) + Sync),
        opts: Options<'_>,
    ) -> Result<(), connection::ConnectionError>
    where
        A: Application,
        L: Log,
        FA: Fn(usize) -> A,
        FL: Fn(usize) -> L,
    {
        stream.set_nonblocking(false)?;
        let Some((initial, key)) = first_message(&mut stream, opts.max_message)? else {
            misc("connection closed before a first message");
            return Ok(());
        };
        let Some(i) = self
            .keys
            .iter()
            .position(|(bs, ours, theirs)| key.0 == *bs && key.1 == *theirs && key.2 == *ours)
        else {
            misc(&format!(
                "Unknown session: {}:{}->{}, connection closed",
                key.0, key.2, key.1
            ));
            return Ok(());
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
            return Ok(());
        };
        let mut a = app(i);
        let mut l = log(i);
        let res = connection::run(&mut stream, &initial, &mut session, &mut a, &mut l, opts);
        *self.slots[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(session);
        // Closed only now that the session is back in its slot (see `run`).
        let _ = stream.shutdown(std::net::Shutdown::Both);
        res
    }
}

/// Reads until the first complete frame; returns every byte read and the
/// frame's (BeginString, SenderCompID, TargetCompID), or `None` when the
/// peer closed or stayed silent.
fn first_message(
    stream: &mut TcpStream,
    max_message: usize,
) -> io::Result<Option<(Vec<u8>, Route)>> {
    stream.set_read_timeout(Some(Duration::from_millis(100)))?;
    let start = Instant::now();
    let mut framer = Framer::new(max_message).session_cut();
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        while let Some(f) = framer.next_frame() {
            if let Ok(msg) = f {
                let key = routing(msg);
                return Ok(Some((all, key)));
            }
        }
        if start.elapsed() > FIRST_MESSAGE || all.len() > max_message {
            return Ok(None);
        }
        match stream.read(&mut buf) {
            Ok(0) => return Ok(None),
            Ok(n) => {
                all.extend_from_slice(&buf[..n]);
                framer.push(&buf[..n]);
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(e),
        }
    }
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
