//! The applications `perfkit fix acceptor --app` and `fix initiator
//! --orders` run, over the session crate's [`Application`] trait.
//!
//! - [`Echo`]: what QuickFIX's own acceptance tests run against; it is
//!   the session crate's, whose scenario scripts run it without sockets.
//! - [`Exchange`]: an exchange simulator: each NewOrderSingle gets an
//!   ExecutionReport for the new order, then one filling it.
//! - [`Orders`]: the initiator's side of that: sends a number of
//!   NewOrderSingles, keeping a bounded window outstanding, and logs out
//!   once each is filled; optionally it times each order's round trip.

mod orders;

pub use fixsession::app::Echo;
pub use orders::{GRACE, OrderResults, Orders, RoundTrip};

use fixcore::parse::Parser;
use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;
use fixsession::app::{Application, Delivered};
use fixsession::machine::{Session, SessionError};
use fixsession::store::SessionStore;

/// See the [module docs](self).
#[derive(Default)]
pub struct Exchange {
    parser: Parser,
    orders: u64,
}

impl Application for Exchange {
    fn on_message<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        msg: Delivered<'_>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let Ok(m) = msg.parse_with(&mut self.parser) else {
            return Ok(());
        };
        if m.msg_type() != b"D" {
            return session.reject_unsupported(msg.bytes(), now);
        }
        // Counted once the reports are built: `m` borrows the parser, so
        // `self` is not touched while it lives.
        let orders = self.orders + 1;
        // Ids written with the builder's integer formatter: `format!` per
        // report was a visible part of an order's cost.
        let mut id = [0u8; 24];
        id[0] = b'O';
        let n_len = fixcore::build::format::uint(&mut id[1..], orders);
        let order_id = &id[..=n_len];
        // Slices of the order itself, not copies: a copy per field was an
        // allocation per field per order.
        let get = |t| m.get(t).unwrap_or(b"");
        let (clordid, symbol, side, qty) = (get(11), get(55), get(54), get(38));
        let v = session.config().begin_string;
        let price = m.get(44).unwrap_or(b"0");
        let qty_or_0 = if qty.is_empty() { b"0" } else { qty };
        for (n, (exec_type, status)) in [(b"0", b"0"), (fill_exec_type(v), b"2")]
            .into_iter()
            .enumerate()
        {
            let filled = n == 1;
            // A whole-array copy is a few moves; a copy of the digits
            // alone was a `memcpy` call.
            let mut exec_id = id;
            let exec_id = if v == BeginString::Fix40 {
                // FIX.4.0's ExecID is an int: the order's two reports
                // are 2n-1 and 2n.
                let len = fixcore::build::format::uint(&mut exec_id, 2 * orders - 1 + n as u64);
                &exec_id[..len]
            } else {
                exec_id[0] = b'E';
                exec_id[n_len + 1] = b'-';
                exec_id[n_len + 2] = b'1' + n as u8;
                &exec_id[..n_len + 3]
            };
            session.send_app(b"8", now, |b| {
                b.field_bytes(37, order_id).field_bytes(17, exec_id);
                if v <= BeginString::Fix42 {
                    // ExecTransType: gone from FIX.4.3 on.
                    b.field_char(20, b'0');
                }
                if v >= BeginString::Fix41 {
                    // ExecType: new in FIX.4.1.
                    b.field_bytes(150, exec_type);
                }
                b.field_bytes(39, status);
                if !clordid.is_empty() {
                    b.field_bytes(11, clordid);
                }
                if !symbol.is_empty() {
                    b.field_bytes(55, symbol);
                }
                if !side.is_empty() {
                    b.field_bytes(54, side);
                }
                if !qty.is_empty() {
                    b.field_bytes(38, qty);
                }
                if filled {
                    b.field_bytes(32, qty_or_0).field_bytes(31, price);
                } else if v <= BeginString::Fix41 {
                    // FIX.4.0 and 4.1 require LastShares and LastPx on
                    // every report.
                    b.field_bytes(32, b"0").field_bytes(31, b"0");
                }
                let (cum, leaves, avg) = if filled {
                    (qty_or_0, &b"0"[..], price)
                } else {
                    (&b"0"[..], qty_or_0, &b"0"[..])
                };
                b.field_bytes(14, cum);
                if v >= BeginString::Fix41 {
                    // LeavesQty: new in FIX.4.1.
                    b.field_bytes(151, leaves);
                }
                b.field_bytes(6, avg);
            })?;
        }
        self.orders = orders;
        Ok(())
    }
}

/// The ExecType of a fill: Fill (2) up to FIX.4.2, Trade (F) from FIX.4.3
/// on, where ExecType no longer says how much is filled (OrdStatus does).
/// FIX.4.0 has no ExecType; the value is not sent there.
fn fill_exec_type(v: BeginString) -> &'static [u8; 1] {
    if v <= BeginString::Fix42 { b"2" } else { b"F" }
}
