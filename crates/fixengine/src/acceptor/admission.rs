//! Descriptors, when they run short: accept errors back off instead of
//! spinning, and strangers never take the last descriptors a configured
//! counterparty needs to log on.
//!
//! How the reserve is kept: a configured session's store and logs are
//! open from the start, so to log on it needs one descriptor, its
//! socket. The acceptor keeps [`Descriptors::reserve`] of them free of
//! strangers: a session made at a Logon is made only while that many
//! stay free after it; a connection accepted into the reserve, or an
//! accept that fails for want of descriptors, closes the connection that
//! has waited longest for its Logon (an idle stranger's, most likely: a
//! real counterparty logs on at once), so the newest one, which may be
//! the configured counterparty, gets its chance.

use std::io;
use std::time::{Duration, Instant};

/// Descriptors kept free beyond one per configured session: the
/// process's own needs (a TLS handshake's, a log rotation's, a DNS
/// look-up's).
const SLACK: usize = 16;

/// The descriptor limit and the reserve kept under it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Descriptors {
    /// `RLIMIT_NOFILE`'s soft limit when the acceptor started.
    limit: usize,
    /// Descriptors left to configured sessions and the process.
    reserve: usize,
}

impl Descriptors {
    /// The limit now, with a reserve for `configured` sessions.
    pub(super) fn new(configured: usize) -> Descriptors {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit into the struct it is given,
        // which lives on this stack frame for the call.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } == 0;
        let limit = if ok && r.rlim_cur != libc::RLIM_INFINITY {
            usize::try_from(r.rlim_cur).unwrap_or(usize::MAX)
        } else {
            usize::MAX
        };
        Descriptors {
            limit,
            reserve: configured + SLACK,
        }
    }

    /// Whether `more` descriptors can be opened and the reserve still be
    /// left.
    pub(super) fn room_for(&self, more: usize) -> bool {
        fits(open_now(), more, self.reserve, self.limit)
    }

    /// Whether a descriptor just given the number `fd` ate into the
    /// reserve. Descriptors are numbered lowest-free first, so a low
    /// number proves room without counting.
    pub(super) fn in_reserve(&self, fd: i32) -> bool {
        let fd = usize::try_from(fd).unwrap_or(0);
        fd.saturating_add(self.reserve) >= self.limit && !self.room_for(0)
    }
}

/// Whether `more` descriptors beside `open` ones leave `reserve` under
/// `limit`.
fn fits(open: usize, more: usize, reserve: usize, limit: usize) -> bool {
    open.saturating_add(more).saturating_add(reserve) <= limit
}

/// The descriptors this process has open (`/proc/self/fd`, less the one
/// reading it); 0 where that cannot be read, which only turns the
/// reserve off: accept errors still back off.
fn open_now() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count().saturating_sub(1))
}

/// Accept failures that leave the listener usable (out of descriptors,
/// buffers or memory): the listener is left out of the polls for a
/// while, from [`FIRST`] doubling to [`LONGEST`], with one line when an
/// episode starts and one, with its count, when accepting works again.
#[derive(Debug, Default)]
pub(super) struct Backoff {
    /// Not before this is the listener polled again.
    until: Option<Instant>,
    delay: Duration,
    /// The episode: when it started and its failures.
    started: Option<Instant>,
    failures: u64,
}

/// The first pause after an accept fails.
const FIRST: Duration = Duration::from_millis(10);
/// The longest pause.
const LONGEST: Duration = Duration::from_secs(1);

impl Backoff {
    /// Whether the listener is polled now.
    pub(super) fn listening(&mut self, now: Instant) -> bool {
        match self.until {
            Some(t) if now < t => false,
            _ => {
                self.until = None;
                true
            }
        }
    }

    /// Accepting failed with `e`: pause, saying so once per episode.
    pub(super) fn failed(
        &mut self,
        e: &io::Error,
        listener: &std::net::TcpListener,
        misc: &(dyn Fn(&str) + Sync),
    ) {
        let now = Instant::now();
        if self.started.is_none() {
            self.started = Some(now);
            self.delay = FIRST;
            misc(&format!(
                "accepting connections on {}: {}; pausing the listener (up to {} s at a \
                 time) until it works again",
                super::local(listener),
                crate::socket::words(e),
                LONGEST.as_secs()
            ));
        } else {
            self.delay = (self.delay * 2).min(LONGEST);
        }
        self.failures += 1;
        self.until = Some(now + self.delay);
    }

    /// A connection was accepted: an episode, if any, ends with its
    /// count.
    pub(super) fn succeeded(&mut self, misc: &(dyn Fn(&str) + Sync)) {
        if let Some(started) = self.started.take() {
            misc(&format!(
                "accepting connections again after {} failed attempt(s) over {:.1} s",
                self.failures,
                started.elapsed().as_secs_f64()
            ));
            self.failures = 0;
            self.delay = Duration::ZERO;
        }
    }
}

/// Accept errors that leave the listener usable.
pub(super) fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Accept errors that concern one connection only (it went before it
/// was taken): the next accept goes on at once.
pub(super) fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ECONNABORTED | libc::EPROTO | libc::EPERM)
    ) || e.kind() == io::ErrorKind::Interrupted
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn backoff_says_one_line_per_episode_and_grows() {
        let lines = Mutex::new(Vec::new());
        let misc = |l: &str| lines.lock().unwrap().push(l.to_string());
        let mut b = Backoff::default();
        let e = io::Error::from_raw_os_error(libc::EMFILE);
        let now = Instant::now();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        assert!(b.listening(now));
        for _ in 0..20 {
            b.failed(&e, &listener, &misc);
        }
        assert!(!b.listening(Instant::now()));
        assert_eq!(b.delay, LONGEST);
        assert!(b.listening(Instant::now() + LONGEST));
        b.succeeded(&misc);
        b.succeeded(&misc);
        let lines = lines.into_inner().unwrap();
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].contains(&format!("on {at}: Too many open files;")),
            "{lines:?}"
        );
        assert!(lines[1].contains("after 20 failed"), "{lines:?}");
    }

    #[test]
    fn descriptors_count_what_is_open() {
        // Other tests open files meanwhile: only what this one holds is
        // certain.
        let files: Vec<_> = (0..8)
            .map(|_| std::fs::File::open("/dev/null").unwrap())
            .collect();
        assert!(open_now() >= 3 + files.len(), "{}", open_now());
        drop(files);
        assert!(Descriptors::new(1).room_for(0));
        assert!(fits(80, 3, 17, 100));
        assert!(!fits(80, 4, 17, 100));
        assert!(fits(0, 0, 0, usize::MAX) && !fits(10, 1, 0, 10));
        let tight = Descriptors {
            limit: 64,
            reserve: 17,
        };
        assert!(!tight.in_reserve(3), "a low number proves room");
    }
}
