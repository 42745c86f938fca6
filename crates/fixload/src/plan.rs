//! What one run sends, how fast and for how long ([`Plan`]), how its
//! threads reach the sockets ([`Io`]), and a sweep's settings: the same
//! plan at several rates ([`Settings`]).

use std::time::Duration;

/// What to send, how fast and for how long.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Orders per second over all sessions together.
    pub rate: f64,
    /// The measured part of the run.
    pub duration: Duration,
    /// Orders sent before the measured part, at the same rate, not recorded.
    pub warmup: Duration,
    /// The width of each reported interval.
    pub interval: Duration,
    /// Most unanswered orders per session; a full window holds the sender
    /// back, and the orders it delays count from their intended time.
    pub window: u64,
    /// The NewOrderSingle's body fields besides ClOrdID (11) and
    /// TransactTime (60), which every order gets.
    pub template: Vec<(u32, Vec<u8>)>,
    /// How long to wait for the last answers once every order is sent; also
    /// how long after the schedule's end a full window may still hold the
    /// sender back (the orders it holds then are never sent).
    pub grace: Duration,
    /// How long each session may take to log on.
    pub logon_timeout: Duration,
    /// Pin the sender thread to this core and the receiver thread to the
    /// next one the process may use (the same core when it has only one);
    /// `None` leaves them to the scheduler.
    pub pin: Option<usize>,
    /// Orders due within this of the sender's last round wait for the next
    /// one: at high rates the orders of each window go out in one write per
    /// session, each up to the window late (timed from when it was due).
    /// Longer windows cost fewer wakes, and so less CPU per order.
    pub coalesce: Duration,
    /// How the sender and the receiver talk to the sockets.
    pub io: Io,
    /// Most bytes a session may have produced and not yet written (see
    /// [`DEFAULT_MAX_UNSENT`]); a session that would queue more is
    /// dropped and counted as lost. Keep it well above a round's batch of
    /// orders (up to 256 per session), or a sender that falls behind drops
    /// its own session.
    pub max_unsent: usize,
}

/// The default [`Plan::max_unsent`]: 64 MiB per session.
///
/// A healthy run queues little: the orders of one round (a write per
/// session), or at most a window of them when the engine stops reading
/// (the default 100 orders are about 20 KB), and a few session messages.
/// What grows without bound is the engine's doing: fixcore's session
/// answers each ResendRequest with every message asked for, at once, so an
/// engine asking for 1..0 after every order grows the queue with the square
/// of the orders sent (2 GB in 13 s). A fixed bound rather than one derived
/// from window × order size: a resend's size follows from the orders sent
/// so far, not the window, and a bound near the window's size would drop a
/// session whose engine only paused reading. 64 MiB is far above any
/// healthy queue (a full window of 100,000 orders of 600 bytes), and costs
/// nothing until used.
pub const DEFAULT_MAX_UNSENT: usize = 64 << 20;

/// How the load generator's threads talk to the sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Io {
    /// io_uring where the kernel has it (with a timed wait, Linux 5.11),
    /// std calls otherwise.
    Auto,
    /// `send`/`recv`/`poll`.
    Std,
    /// One io_uring for the sender and one for the receiver; an error where
    /// the kernel has none.
    Uring,
}

impl Plan {
    /// The body fields of a plain limit-less buy: HandlInst 1, Symbol MSFT,
    /// Side buy, OrderQty 100, OrdType market.
    pub fn default_template() -> Vec<(u32, Vec<u8>)> {
        [(21, "1"), (55, "MSFT"), (54, "1"), (38, "100"), (40, "1")]
            .into_iter()
            .map(|(t, v)| (t, v.as_bytes().to_vec()))
            .collect()
    }
}

/// A sweep: one run per rate, in the order given, each with the same plan
/// otherwise. What a user chooses; [`Settings::plan`] makes each run's
/// [`Plan`].
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Orders per second over all sessions, one run each.
    pub rates: Vec<f64>,
    /// Every run's plan; its `rate` is replaced by each of `rates` in turn.
    pub run: Plan,
}

impl Default for Plan {
    /// No orders (a rate of 0 until one is set), 10 s measured after 1 s
    /// of warm-up, in 1 s intervals; 100 unanswered orders per session at
    /// most; [`Plan::default_template`]; 5 s of grace and 10 s for each
    /// Logon; threads unpinned; 250 µs coalescing; io_uring where the
    /// kernel has it; the [`DEFAULT_MAX_UNSENT`] bound.
    fn default() -> Plan {
        Plan {
            rate: 0.0,
            duration: Duration::from_secs(10),
            warmup: Duration::from_secs(1),
            interval: Duration::from_secs(1),
            window: 100,
            template: Plan::default_template(),
            grace: Duration::from_secs(5),
            logon_timeout: Duration::from_secs(10),
            pin: None,
            coalesce: Duration::from_micros(250),
            io: Io::Auto,
            max_unsent: DEFAULT_MAX_UNSENT,
        }
    }
}

impl Settings {
    /// A sweep of `rates`, every run at [`Plan::default`].
    pub fn new(rates: Vec<f64>) -> Settings {
        Settings {
            rates,
            run: Plan::default(),
        }
    }

    /// The run at `rate`.
    pub fn plan(&self, rate: f64) -> Plan {
        Plan {
            rate,
            ..self.run.clone()
        }
    }
}
