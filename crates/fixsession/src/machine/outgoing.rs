//! What the session sends: the header every message gets, building,
//! storing and emitting a message, the Logon, Logout and
//! ResendRequest, and the session-level and business rejects.

use super::inspect::{Inbound, inspect};
use super::{INFINITY_41, Output, Session, SessionError};
use crate::reject::{self, Reason};
use crate::store::SessionStore;
use fixcore::build::{MessageBuilder, TimePrecision};
use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;

impl<S: SessionStore> Session<S> {
    /// SendingTime's precision: as configured from FIX 4.2 on (earlier
    /// versions define whole seconds only), as QuickFIX's
    /// insertSendingTime.
    pub(super) fn precision(&self) -> TimePrecision {
        if self.cfg.begin_string >= BeginString::Fix42 {
            self.cfg.timestamp_precision
        } else {
            TimePrecision::Seconds
        }
    }

    pub(super) fn header(&mut self, msg_type: &[u8], seq: u64, now: UtcTimestamp) {
        let precision = self.precision();
        let b = &mut self.builder;
        b.begin(msg_type);
        b.header_uint(34, seq)
            .header_str(49, &self.cfg.sender_comp_id)
            .header_timestamp(52, now, precision)
            .header_str(56, &self.cfg.target_comp_id);
    }

    /// Builds, stores and emits the next message.
    pub(super) fn send_message(
        &mut self,
        msg_type: &[u8],
        now: UtcTimestamp,
        body: impl FnOnce(&mut MessageBuilder),
    ) -> Result<u64, SessionError> {
        let seq = self.store.next_sender_seq();
        self.header(msg_type, seq, now);
        body(&mut self.builder);
        let mut bytes = self.spare.pop().unwrap_or_default();
        match self.builder.finish() {
            Ok(b) => bytes.extend_from_slice(b),
            Err(e) => {
                // The caller's body was unencodable: nothing is sent and
                // no number is used.
                self.log(format!("Message not sent: {e}"));
                self.spare.push(bytes);
                return Ok(seq);
            }
        };
        if self.cfg.persist_messages {
            self.store.save(seq, &bytes)?;
        }
        let target = self.store.next_target_seq();
        self.store.set_seqs(seq.saturating_add(1), target)?;
        self.last_sent = now.unix_nanos;
        self.out.push(Output::Send(bytes));
        Ok(seq)
    }

    pub(super) fn send_admin(
        &mut self,
        msg_type: &[u8],
        now: UtcTimestamp,
        body: impl FnOnce(&mut MessageBuilder),
    ) -> Result<(), SessionError> {
        self.send_message(msg_type, now, body).map(|_| ())
    }

    /// Our Logon: the initiator's request (`reply` false, which resets
    /// the store first when `reset`) or the acceptor's answer, whose
    /// NextExpectedMsgSeqNum counts the Logon being answered.
    pub(super) fn send_logon(
        &mut self,
        reset: bool,
        reply: bool,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if reset && !reply {
            self.reset_store()?;
            self.sent_reset = true;
        }
        let hb = self.heart_bt_int;
        let appl = self.cfg.default_appl_ver_id;
        let next = self.cfg.next_expected_msg_seq_num.then(|| {
            self.store
                .next_target_seq()
                .saturating_add(u64::from(reply))
        });
        // An initiator's request carries its credentials; an acceptor's
        // answer never echoes them.
        let creds = (!reply).then(|| self.cfg.credentials.clone());
        self.send_admin(b"A", now, |b| {
            b.field_uint(98, 0).field_uint(108, hb);
            if reset {
                b.field_char(141, b'Y');
            }
            if let Some(c) = &creds {
                if let Some(u) = &c.username {
                    b.field_str(553, u);
                }
                if let Some(p) = &c.password {
                    b.field_str(554, p);
                }
            }
            if let Some(n) = next {
                b.field_uint(789, n);
            }
            if let Some(a) = appl {
                b.field_str(1137, a.wire());
            }
        })?;
        self.sent_logon = true;
        Ok(())
    }

    pub(super) fn send_logout(
        &mut self,
        text: Option<&str>,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        self.send_admin(b"5", now, |b| {
            if let Some(t) = text {
                b.field_str(58, t);
            }
        })
    }

    /// A ResendRequest for `begin..` (the gap before `received`).
    pub(super) fn send_resend_request(
        &mut self,
        received: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let begin = self.store.next_target_seq();
        let end_wire = if self.cfg.begin_string >= BeginString::Fix42 {
            0
        } else {
            INFINITY_41
        };
        self.send_admin(b"2", now, |b| {
            b.field_uint(7, begin).field_uint(16, end_wire);
        })?;
        self.log(format!("Sent ResendRequest FROM: {begin} TO: {}", end_wire));
        self.resend_range = Some((begin, received - 1));
        Ok(())
    }

    /// A session-level Reject(3) of `m`, QuickFIX's way: RefSeqNum,
    /// RefMsgType and SessionRejectReason where the version has them,
    /// RefTagID or the tag in the text; the rejected message's number is
    /// used up when it was the expected one. Before the peer's Logon
    /// nothing may be sent: the connection is dropped instead (false).
    pub(super) fn reject(
        &mut self,
        m: &Inbound<'_>,
        reason: Reason,
        tag: i64,
        now: UtcTimestamp,
    ) -> Result<bool, SessionError> {
        let text = reason.text();
        let bs = self.cfg.begin_string;
        // 4.0 and 4.1 have no RefTagID: the tag goes in the text.
        let with_tag = text.is_some() && (tag != 0 || reason == Reason::INVALID_TAG_NUMBER);
        let shown = match text {
            Some(t) if with_tag && bs < BeginString::Fix42 => format!("{t} ({tag})"),
            Some(t) => t.to_string(),
            None => String::new(),
        };
        let line = match text {
            Some(t) if with_tag => format!("{t}:{tag}"),
            Some(t) => t.to_string(),
            None => String::new(),
        };
        let reason_field = (bs > BeginString::Fix42
            || (bs == BeginString::Fix42 && reason.0 <= Reason::INVALID_MSG_TYPE.0))
            .then_some(reason.0);
        let ref_tag = (with_tag && bs >= BeginString::Fix42).then_some(tag);
        self.send_reject(m, &shown, &line, ref_tag, reason_field, now)
    }

    /// Sends Reject(3) for `m` with Text `text` (none if empty), RefTagID
    /// and SessionRejectReason when given; fields in tag order, as QuickFIX
    /// writes them; `line` is the event log's reason.
    pub(super) fn send_reject(
        &mut self,
        m: &Inbound<'_>,
        text: &str,
        line: &str,
        ref_tag: Option<i64>,
        reason: Option<u32>,
        now: UtcTimestamp,
    ) -> Result<bool, SessionError> {
        if !self.received_logon {
            self.log("Tried to send a reject while not logged on".into());
            self.disconnect()?;
            return Ok(false);
        }
        let seq = m.seq;
        let msg_type = (self.cfg.begin_string >= BeginString::Fix42 && !m.msg_type.is_empty())
            .then_some(m.msg_type);
        let route = &m.reverse_route;
        self.send_admin(b"3", now, |b| {
            for (tag, v) in route {
                b.header_bytes(*tag, v);
            }
            if let Some(s) = seq {
                b.field_uint(45, s);
            }
            if !text.is_empty() {
                b.field_str(58, text);
            }
            if let Some(t) = ref_tag {
                b.field_int(371, t);
            }
            if let Some(t) = &msg_type {
                b.field_bytes(372, t);
            }
            if let Some(r) = reason {
                b.field_uint(373, u64::from(r));
            }
        })?;
        let shown = seq.map(|s| s.to_string()).unwrap_or_default();
        self.log(if line.is_empty() {
            format!("Message {shown} Rejected")
        } else {
            format!("Message {shown} Rejected: {line}")
        });
        if !matches!(m.msg_type, b"A" | b"4") && seq == Some(self.store.next_target_seq()) {
            self.incr_target()?;
        }
        Ok(true)
    }

    /// A BusinessMessageReject(j) of `m` with `reason` (FIX 4.2 and
    /// later), fields in tag order.
    pub(super) fn business_reject(
        &mut self,
        m: &Inbound<'_>,
        reason: u32,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let seq = m.seq;
        let msg_type = m.msg_type;
        let text = reject::business_text(reason);
        // FIXT.1.1: an application message names its version
        // (QuickFIX's generateBusinessReject adds DefaultApplVerID).
        let appl = self
            .cfg
            .default_appl_ver_id
            .filter(|_| self.cfg.begin_string == BeginString::Fixt11);
        self.send_admin(b"j", now, |b| {
            if let Some(s) = seq {
                b.field_uint(45, s);
            }
            if let Some(t) = text {
                b.field_str(58, t);
            }
            b.field_bytes(372, msg_type);
            b.field_uint(380, u64::from(reason));
            if let Some(a) = appl {
                b.field_str(1137, a.wire());
            }
        })?;
        let shown = seq.map(|s| s.to_string()).unwrap_or_default();
        self.log(format!(
            "Message {shown} Rejected: {}",
            text.unwrap_or("business reject")
        ));
        if seq == Some(self.store.next_target_seq()) {
            self.incr_target()?;
        }
        Ok(())
    }
    /// The application does not support delivered message `msg`'s type:
    /// a BusinessMessageReject(j) with UnsupportedMessageType (FIX 4.2 and
    /// later) or a Reject(3) "Unsupported message type" (FIX 4.0, 4.1), as
    /// QuickFIX answers an application's UnsupportedMessageType. The
    /// message's number was used when it was delivered.
    pub fn reject_unsupported(
        &mut self,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let Ok(m) = inspect(self.parser.get(), msg, &self.cfg) else {
            return Ok(());
        };
        if self.cfg.begin_string >= BeginString::Fix42 {
            self.business_reject(&m, reject::UNSUPPORTED_MESSAGE_TYPE, now)
        } else {
            let text = "Unsupported message type";
            self.send_reject(&m, text, text, None, None, now)
                .map(|_| ())
        }
    }
}
