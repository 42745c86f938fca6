//! [`Echo`]: the application QuickFIX's acceptance tests run against.

use std::collections::HashSet;

use fixcore::value::UtcTimestamp;

use super::{Application, Delivered};
use crate::machine::{Session, SessionError};
use crate::store::SessionStore;

/// Header fields the session writes itself, never copied from a message
/// being echoed (PossDupFlag and OrigSendingTime are a resend's).
fn session_written(tag: u32) -> bool {
    matches!(tag, 8 | 9 | 10 | 34 | 35 | 43 | 49 | 52 | 56 | 122)
}

/// What QuickFIX's own acceptance tests run against: each
/// NewOrderSingle, SecurityDefinition and Email is sent back (a
/// NewOrderSingle with PossResend=Y whose ClOrdID was already seen is
/// not); any other type is answered as unsupported. `perfkit fix acceptor
/// --app echo` runs it, and the scenario scripts (`tests/session`) play
/// the session against it.
#[derive(Debug, Default)]
pub struct Echo {
    seen: HashSet<Vec<u8>>,
}

impl Application for Echo {
    fn on_message<S: SessionStore>(
        &mut self,
        session: &mut Session<S>,
        msg: Delivered<'_>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let msg = msg.bytes();
        // Read leniently: the session delivers messages the strict parser
        // refuses (an empty value when ValidateFieldsHaveValues=N, a
        // group it does not know), and they are echoed as they came.
        let fields = crate::machine::split_fields(msg);
        let get = |tag| fields.iter().find(|(t, _)| *t == tag).map(|&(_, v)| v);
        let msg_type = get(35).unwrap_or_default().to_vec();
        match &msg_type[..] {
            b"D" => {
                let clordid = get(11).unwrap_or_default().to_vec();
                let poss_resend = get(97) == Some(b"Y");
                if !self.seen.insert(clordid) && poss_resend {
                    return Ok(());
                }
            }
            b"d" | b"C" => {}
            _ => return session.reject_unsupported(msg, now),
        }
        // QuickFIX writes a message's body in tag order (its field map is
        // sorted); without a repeated tag there is no group whose entries
        // would be torn apart by sorting, so the echo does the same.
        let mut body: Vec<(u32, &[u8])> = fields
            .iter()
            .copied()
            .filter(|&(t, _)| !session_written(t) && !crate::machine::is_header_tag(t))
            .collect();
        let mut tags: Vec<u32> = body.iter().map(|&(t, _)| t).collect();
        tags.sort_unstable();
        tags.dedup();
        if tags.len() == body.len() {
            body.sort_by_key(|&(t, _)| t);
        }
        session.send_app(&msg_type, now, |b| {
            for &(tag, v) in fields.iter().filter(|(t, _)| !session_written(*t)) {
                if crate::machine::is_header_tag(tag) {
                    b.header_bytes(tag, v);
                }
            }
            for &(tag, v) in &body {
                b.field_bytes_or_empty(tag, v);
            }
        })?;
        Ok(())
    }
}
