//! Ports for servers a test or a bench starts on loopback: free now, and
//! from a range the kernel never hands out by itself.
//!
//! The usual way, binding port 0 and closing it, yields a port from the
//! kernel's ephemeral range (`/proc/sys/net/ipv4/ip_local_port_range`),
//! the range every outgoing connection's local port and every other
//! bind to port 0 also come from. Between the probe and the server's own
//! bind, a connection made anywhere on the machine may take it: with two
//! test executables running at once, an acceptor's bind failed with
//! "Address already in use" so. A port below (or above) that range is
//! taken only by a bind that names it, and this process names each one
//! once.

use std::io;
use std::net::{Ipv4Addr, TcpListener};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// The kernel's ephemeral range when it cannot be read (Linux's default).
const EPHEMERAL: (u16, u16) = (32768, 60999);

/// How many ports below the ephemeral range are drawn from.
const SPAN: u16 = 16384;

/// The lowest port drawn: the ports below are well known or registered
/// to services a machine may run.
const LOWEST: u16 = 10000;

/// A TCP port no socket on any IPv4 address holds now, outside the
/// kernel's ephemeral range, and never one this process was given
/// before. Each process starts at its own place in the range (from its
/// id and the clock), so two at once seldom draw the same ports.
pub fn unclaimed() -> io::Result<u16> {
    static DRAWN: AtomicU32 = AtomicU32::new(0);
    // The range and where this process starts in it, found once: a start
    // taken afresh at each call (from the clock) could give a port given
    // before.
    static PLACE: OnceLock<((u16, u16), u32)> = OnceLock::new();
    let &(range, start) = PLACE.get_or_init(|| {
        let range = outside(ephemeral());
        (range, process_start(span(range)))
    });
    let next = || start.wrapping_add(DRAWN.fetch_add(1, Ordering::Relaxed));
    let free = |port| TcpListener::bind((Ipv4Addr::UNSPECIFIED, port)).is_ok();
    draw(range, next, free).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("every TCP port from {} to {} is in use", range.0, range.1),
        )
    })
}

/// Ports in `low..=high`.
fn span((low, high): (u16, u16)) -> u32 {
    u32::from(high - low) + 1
}

/// The first port of `range` that is `free`, taking the `next` one each
/// time, once round the range at most.
fn draw(
    range: (u16, u16),
    mut next: impl FnMut() -> u32,
    free: impl Fn(u16) -> bool,
) -> Option<u16> {
    let span = span(range);
    // The remainder is below `span`, so it fits the range's u16 offsets.
    (0..span)
        .map(|_| range.0 + (next() % span) as u16)
        .find(|&port| free(port))
}

/// The kernel's ephemeral range, as it says, or Linux's default.
fn ephemeral() -> (u16, u16) {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| {
            let mut bounds = text.split_whitespace().map(|b| b.parse::<u16>().ok());
            Some((bounds.next()??, bounds.next()??))
        })
        .filter(|(low, high)| low <= high)
        .unwrap_or(EPHEMERAL)
}

/// The ports drawn from, given the ephemeral range: up to [`SPAN`] below
/// it (not below [`LOWEST`]), or above it when that leaves more.
fn outside((low, high): (u16, u16)) -> (u16, u16) {
    let below = (low.saturating_sub(SPAN).max(LOWEST), low.saturating_sub(1));
    let above = (high.saturating_add(1), high.saturating_add(SPAN));
    let room = |(a, b): (u16, u16)| b.saturating_sub(a);
    if room(below) >= room(above) && room(below) > 0 {
        below
    } else if room(above) > 0 {
        above
    } else {
        // An ephemeral range over every port: nothing is outside it.
        (LOWEST, u16::MAX)
    }
}

/// Where this process starts in a range of `span` ports: from its id and
/// the clock, so that processes started together start apart.
fn process_start(span: u32) -> u32 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // Knuth's multiplicative hash spreads neighbouring ids apart.
    (std::process::id().wrapping_mul(2_654_435_761) ^ nanos) % span
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ports come from outside the ephemeral range and are never given
    /// twice. (Whether one is still free a moment later is not this
    /// process's to promise: another test executable's server may bind
    /// it meanwhile, as one did in a CI run. [`draw`]'s test checks that
    /// a port held is passed over.)
    #[test]
    fn ports_are_outside_the_ephemeral_range_and_distinct() {
        let (low, high) = ephemeral();
        // The range as read is the kernel's: the ports it hands out for
        // port 0 fall inside it.
        for _ in 0..20 {
            let given = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
            let port = given.local_addr().unwrap().port();
            assert!((low..=high).contains(&port), "{port} outside {low}-{high}");
        }
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..50 {
            let port = unclaimed().unwrap();
            assert!(!(low..=high).contains(&port), "{port} in {low}-{high}");
            assert!(seen.insert(port), "{port} given twice");
        }
    }

    /// A port something holds is passed over, and a range with nothing
    /// free gives none.
    #[test]
    fn a_held_port_is_passed_over() {
        let mut n = 0;
        let next = || {
            n += 1;
            n - 1
        };
        assert_eq!(draw((100, 109), next, |p| p != 100 && p != 101), Some(102));
        assert_eq!(draw((100, 109), || 7, |_| false), None);
        // Wrapping round the range.
        let mut m = 8;
        let next = || {
            m += 1;
            m - 1
        };
        assert_eq!(draw((100, 109), next, |p| p < 105), Some(100));
    }

    #[test]
    fn the_range_is_beside_the_ephemeral_one() {
        assert_eq!(outside((32768, 60999)), (16384, 32767));
        assert_eq!(outside((12000, 60999)), (61000, u16::MAX));
        assert_eq!(outside((20000, 64000)), (10000, 19999));
        assert_eq!(outside((1024, 40000)), (40001, 56384));
        assert_eq!(outside((1024, 65535)), (LOWEST, u16::MAX));
    }
}
