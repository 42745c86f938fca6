//! [`Orders`]: `fix initiator --orders`, a test client. It sends a number
//! of NewOrderSingles (the default order, or the fields of an order
//! template, `fix load --order-template`'s format) with a bounded window
//! outstanding, counts what comes back (fills, rejected orders, business
//! and session rejects) and logs out once every order is answered, or
//! once the last ones have gone unanswered for a grace period.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use fixcore::build::TimePrecision;
use fixcore::parse::Parser;
use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;
use fixsession::app::{Application, Delivered};
use fixsession::machine::{Session, SessionError};
use fixsession::store::SessionStore;

/// Called with each order's round trip: from handing the NewOrderSingle to
/// the session to receiving its first ExecutionReport.
pub type RoundTrip = Box<dyn FnMut(Duration) + Send>;

/// How long the last orders may go unanswered, by default, before the
/// client gives up on them (`fix load`'s `--grace` too).
pub const GRACE: Duration = Duration::from_secs(5);

/// What the orders came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderResults {
    /// Orders sent.
    pub sent: u64,
    /// Orders filled (each counted once).
    pub filled: u64,
    /// Orders the counterparty rejected: an ExecutionReport with
    /// OrdStatus Rejected (39=8), or a BusinessMessageReject naming the
    /// order's ClOrdID.
    pub rejected: u64,
    /// BusinessMessageRejects (35=j) received.
    pub business_rejects: u64,
    /// Orders neither filled nor rejected when the client stopped.
    pub unanswered: u64,
    /// The first reason a rejection gave (its Text, 58).
    pub first_reason: Option<String>,
}

/// `fix initiator --orders`'s test client: sends NewOrderSingles with a
/// bounded window outstanding, counts what comes back into an
/// [`OrderResults`], and logs out once every order is answered or has gone
/// unanswered for the grace period.
pub struct Orders {
    parser: Parser,
    total: u64,
    window: u64,
    /// The order's fields after ClOrdID (and before TransactTime).
    fields: Vec<(u32, Vec<u8>)>,
    grace: Duration,
    results: OrderResults,
    /// ClOrdIDs sent and not yet answered. After a counterparty's crash
    /// an order may be answered twice (it asked for the order again, at
    /// least once); only its first answer counts.
    open: HashSet<u64>,
    logging_out: bool,
    /// When the last answer (or the last order sent) came, in the
    /// session's clock: the grace runs from it.
    last_progress: Option<UtcTimestamp>,
    /// When each unfilled order was sent, by ClOrdID modulo the window
    /// (at most `window` orders are unfilled, so slots never collide);
    /// empty unless round trips are timed.
    sent_at: Vec<Option<Instant>>,
    round_trip: Option<RoundTrip>,
    first_sent: Option<Instant>,
    last_filled: Option<Instant>,
}

/// The default order: a market order to buy 100 MSFT (as `fix load`'s).
const DEFAULT_ORDER: &[(u32, &[u8])] = &[
    (21, b"1"),
    (55, b"MSFT"),
    (54, b"1"),
    (38, b"100"),
    (40, b"1"),
];

impl Orders {
    /// Sends `total` of the default order with at most `window`
    /// unanswered at a time.
    pub fn new(total: u64, window: u64) -> Orders {
        Orders {
            parser: Parser::new(),
            total,
            window: window.max(1),
            fields: DEFAULT_ORDER
                .iter()
                .map(|(t, v)| (*t, v.to_vec()))
                .collect(),
            grace: GRACE,
            results: OrderResults::default(),
            open: HashSet::new(),
            logging_out: false,
            last_progress: None,
            sent_at: Vec::new(),
            round_trip: None,
            first_sent: None,
            last_filled: None,
        }
    }

    /// Sends orders of these fields (a template's, see
    /// [`fixsession::order_template`]) instead of the default order;
    /// ClOrdID, and TransactTime from FIX.4.2 on, are added.
    pub fn with_fields(mut self, fields: Vec<(u32, Vec<u8>)>) -> Orders {
        self.fields = fields;
        self
    }

    /// How long the last orders may go unanswered before the client logs
    /// out without them.
    pub fn with_grace(mut self, grace: Duration) -> Orders {
        self.grace = grace;
        self
    }

    /// Times each order's round trip (to its first ExecutionReport) and
    /// hands it to `sink`. An order answered only after a reconnect
    /// reports the time across it.
    pub fn time_round_trips(mut self, sink: RoundTrip) -> Orders {
        // Bounded by the window, not the total: a slot per unfilled order.
        self.sent_at = vec![None; self.window.min(self.total).max(1) as usize];
        self.round_trip = Some(sink);
        self
    }

    /// Orders filled so far.
    pub fn filled(&self) -> u64 {
        self.results.filled
    }

    /// What the orders have come to so far.
    pub fn results(&self) -> OrderResults {
        OrderResults {
            unanswered: self.open.len() as u64 + (self.total - self.results.sent),
            ..self.results.clone()
        }
    }

    /// From the first order sent to the last one filled, once any is.
    pub fn elapsed(&self) -> Option<Duration> {
        Some(self.last_filled? - self.first_sent?)
    }

    fn answered(&self) -> u64 {
        self.results.filled + self.results.rejected
    }

    fn top_up<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let v = session.config().begin_string;
        while self.results.sent < self.total && (self.open.len() as u64) < self.window {
            let next = self.results.sent + 1;
            let fields = &self.fields;
            let sent = session.send_app(b"D", now, |b| {
                // ClOrdID: the order's number, formatted in place (a
                // String per order was an allocation on the hot path).
                b.field_uint(11, next);
                for (tag, value) in fields {
                    b.field_bytes(*tag, value);
                }
                // TransactTime: new in FIX.4.2.
                if v >= BeginString::Fix42 {
                    b.field_timestamp(60, now, TimePrecision::Millis);
                }
            })?;
            if !sent {
                break;
            }
            self.results.sent = next;
            self.open.insert(next);
            self.last_progress = Some(now);
            if self.round_trip.is_some() || self.first_sent.is_none() {
                let at = Instant::now();
                self.first_sent.get_or_insert(at);
                if let Some(slot) = self.slot(next) {
                    *slot = Some(at);
                }
            }
        }
        if self.answered() >= self.total && !self.logging_out {
            self.logging_out = true;
            session.logout(None, now)?;
        }
        Ok(())
    }

    /// The send-time slot of the order with ClOrdID `id`, when timing.
    fn slot(&mut self, id: u64) -> Option<&mut Option<Instant>> {
        let n = self.sent_at.len() as u64;
        (n > 0).then(|| &mut self.sent_at[(id % n) as usize])
    }

    /// An order is answered for good (filled or rejected).
    fn close(&mut self, id: u64, now: UtcTimestamp) -> bool {
        if !self.open.remove(&id) {
            return false;
        }
        self.last_progress = Some(now);
        true
    }

    /// An order was rejected, for `reason` (its Text).
    fn rejected(&mut self, reason: Option<String>) {
        self.results.rejected += 1;
        self.note_reason(reason);
    }

    /// Keeps the first rejection's Text.
    fn note_reason(&mut self, reason: Option<String>) {
        if self.results.first_reason.is_none() {
            self.results.first_reason = reason;
        }
    }
}

impl Application for Orders {
    fn on_message<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        msg: Delivered<'_>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let Ok(m) = msg.parse_with(&mut self.parser) else {
            return Ok(());
        };
        let id = |tag| m.get(tag).and_then(fixcore::value::parse_uint);
        // Text (58), read only for a rejection: fills carry none to copy.
        let text = || m.get(58).map(|t| String::from_utf8_lossy(t).into_owned());
        match m.msg_type() {
            b"8" => {
                // OrdStatus as one byte: new b'0', filled b'2', rejected b'8'.
                let status = match m.get(39) {
                    Some(&[b]) => b,
                    _ => 0,
                };
                let order = id(11);
                let reason = if status == b'8' { text() } else { None };
                if status == b'0' && self.round_trip.is_some() {
                    let at = Instant::now();
                    if let Some(sent) = order.and_then(|id| self.slot(id)).and_then(Option::take)
                        && let Some(sink) = &mut self.round_trip
                    {
                        sink(at - sent);
                    }
                }
                match status {
                    b'2' if order.is_some_and(|o| self.close(o, now)) => {
                        self.results.filled += 1;
                        self.last_filled = Some(Instant::now());
                    }
                    b'8' if order.is_some_and(|o| self.close(o, now)) => self.rejected(reason),
                    _ => return Ok(()),
                }
            }
            b"j" => {
                self.results.business_rejects += 1;
                // BusinessRejectRefID (379) names the order when the
                // reject is about one.
                let reason = text();
                match id(379) {
                    Some(o) if self.close(o, now) => self.rejected(reason),
                    _ => {
                        self.note_reason(reason);
                        return Ok(());
                    }
                }
            }
            _ => return Ok(()),
        }
        self.top_up(session, now)
    }

    fn on_logon<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        // After a reconnect, orders sent but unanswered were resent by
        // the session layer or will be: only the rest go out. The grace
        // starts again: time disconnected is not the counterparty's.
        self.last_progress = Some(now);
        self.top_up(session, now)
    }

    /// Every order sent and the last ones unanswered for the grace: the
    /// client logs out without them, and is done.
    fn on_tick<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let waited = self
            .last_progress
            .map(|t| now.unix_nanos.saturating_sub(t.unix_nanos));
        let gave_up = self.results.sent >= self.total
            && !self.open.is_empty()
            && waited.is_some_and(|w| w >= self.grace.as_nanos() as i64);
        if gave_up && !self.logging_out && session.is_logged_on() {
            self.logging_out = true;
            session.logout(None, now)?;
        }
        Ok(())
    }

    fn done(&self) -> bool {
        self.answered() >= self.total || (self.logging_out && self.results.sent >= self.total)
    }
}
