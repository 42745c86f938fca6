//! The order ledger of the FIX crash tests: what crossed the wire for
//! each ClOrdID, read from an initiator's `--log` message log, so a test
//! can check that no order was lost or answered twice afresh.

use std::collections::HashMap;
use std::path::Path;

/// What crossed the wire for one ClOrdID.
#[derive(Default, Debug)]
pub struct Order {
    /// Sent afresh.
    pub sent: u32,
    /// Sent again, as a PossDup copy.
    pub sent_possdup: u32,
    /// ExecutionReports that came afresh.
    pub fresh_answers: u32,
    /// ExecutionReports that came as PossDup copies.
    pub resent_answers: u32,
}

/// Reads the initiator's message log into the ledger.
pub fn ledger(log: &Path) -> HashMap<String, Order> {
    let text = std::fs::read(log).unwrap();
    let mut orders: HashMap<String, Order> = HashMap::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let line = String::from_utf8_lossy(line);
        let (outgoing, msg) = match (line.find(" -> "), line.find(" <- ")) {
            (Some(i), _) => (true, &line[i + 4..]),
            (None, Some(i)) => (false, &line[i + 4..]),
            _ => panic!("not a message line: {line:?}"),
        };
        let field = |tag: &str| {
            msg.split('\x01')
                .find_map(|f| f.strip_prefix(tag).and_then(|v| v.strip_prefix('=')))
        };
        let possdup = field("43") == Some("Y");
        let Some(id) = field("11") else { continue };
        let o = orders.entry(id.to_string()).or_default();
        match (outgoing, field("35"), field("39")) {
            (true, Some("D"), _) if possdup => o.sent_possdup += 1,
            (true, Some("D"), _) => o.sent += 1,
            (false, Some("8"), Some("0")) if possdup => o.resent_answers += 1,
            (false, Some("8"), Some("0")) => o.fresh_answers += 1,
            _ => {}
        }
    }
    orders
}
