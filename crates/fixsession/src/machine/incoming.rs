//! What the session receives: QuickFIX's checks of every message (logon
//! state, BeginString, header, dictionary, then `verify`: SendingTime,
//! CompIDs, MsgSeqNum), each admin message's handling, and the queue
//! of messages ahead of a gap run once it is filled.

use super::inspect::{
    Garbled, Inbound, fields_have, inspect, msg_type_of, non_positive_tag, split_fields,
};
use super::{NANOS, Output, Phase, Role, Session, SessionError};
use crate::reject::Reason;
use crate::store::SessionStore;
use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;

impl<S: SessionStore> Session<S> {
    /// One complete message from the connection (a frame as
    /// [`fixcore::frame::Framer`] cuts it).
    pub fn on_message(&mut self, msg: &[u8], now: UtcTimestamp) -> Result<(), SessionError> {
        if self.phase == Phase::Disconnected || !self.check_session_time(now)? {
            return Ok(());
        }
        self.process(msg, now, false)?;
        if self.phase != Phase::Disconnected {
            self.drain_queue(now)?;
        }
        Ok(())
    }

    /// Processes one message; `queued`: it comes from the gap queue.
    pub(super) fn process(
        &mut self,
        msg: &[u8],
        now: UtcTimestamp,
        queued: bool,
    ) -> Result<(), SessionError> {
        let m = match inspect(self.parser.get(), msg, &self.cfg) {
            Ok(m) => m,
            Err(Garbled(why)) => {
                // Garbled: dropped, no number used, the peer will resend;
                // a garbled Logon ends the connection.
                self.log(format!("Invalid message: {why}"));
                if !self.received_logon && msg_type_of(msg) == Some(b"A") {
                    self.log("Logon message is not valid".into());
                    return self.disconnect();
                }
                return Ok(());
            }
        };
        if !self.valid_logon_state(m.msg_type, m.reset_seq_num) {
            let t = String::from_utf8_lossy(m.msg_type).into_owned();
            self.log(format!(
                "Logon state is not valid for message (MsgType={t})"
            ));
            return self.disconnect();
        }
        if m.wrong_begin_string {
            // A Logout is a Logout whatever its BeginString; anything else
            // is answered with one.
            if m.msg_type == b"5" && self.received_logon {
                return self.on_logout(&m, msg, now);
            }
            if !self.received_logon {
                self.log("Incorrect BeginString".into());
                return self.disconnect();
            }
            self.send_logout(Some("Incorrect BeginString"), now)?;
            self.phase = Phase::LogoutSent(now.unix_nanos);
            self.log("Incorrect BeginString".into());
            return self.incr_target();
        }
        if let Some((reason, tag)) = m.header_problem {
            if m.seq.is_none() {
                // QuickFIX cannot reply without MsgSeqNum: it logs and drops.
                self.log(format!(
                    "Invalid message: {} ({tag})",
                    reason.text().unwrap_or("bad header")
                ));
                return Ok(());
            }
            return self.reject(&m, reason, i64::from(tag), now).map(|_| ());
        }
        if self.cfg.begin_string == BeginString::Fixt11
            && m.msg_type == b"A"
            && !fields_have(msg, 1137)
        {
            self.log("Required field missing from logon: DefaultApplVerID(1137)".into());
            return self.disconnect();
        }
        if let Some(v) = &self.cfg.validator {
            // A tag QuickFIX reads as a number (zero, negative) that no
            // dictionary can define: the first field it would judge.
            if v.checks_unknown_tags()
                && let Some(tag) = non_positive_tag(msg)
            {
                return self
                    .reject(&m, Reason::INVALID_TAG_NUMBER, tag, now)
                    .map(|_| ());
            }
            if let Err(r) = v.check(&split_fields(msg)) {
                // QuickFIX validates before it looks at the sequence number.
                return self
                    .reject(&m, Reason(r.reason), i64::from(r.tag), now)
                    .map(|_| ());
            }
        }
        match m.msg_type {
            b"A" => self.on_logon(&m, msg, now),
            b"0" => self.on_counted(&m, msg, now, true),
            b"1" => self.on_test_request(&m, msg, now),
            b"2" => self.on_resend_request(&m, msg, now),
            b"3" => {
                if self.verify(&m, msg, now, false, true, false)? {
                    self.rejects_received += 1;
                    self.incr_target()?;
                }
                Ok(())
            }
            b"4" => self.on_sequence_reset(&m, msg, now),
            b"5" => self.on_logout(&m, msg, now),
            _ => {
                if !self.verify(&m, msg, now, true, true, queued)? {
                    return Ok(());
                }
                self.incr_target()?;
                let owned = self.owned(msg);
                if m.parsed {
                    self.parser.mark_delivered(&owned);
                }
                self.out.push(Output::Deliver(owned));
                Ok(())
            }
        }
    }

    /// QuickFIX's `validLogonState`: which message types the session takes
    /// before, around and after the Logon exchange (a Logon with
    /// ResetSeqNumFlag=Y at any time: `reset`).
    pub(super) fn valid_logon_state(&self, msg_type: &[u8], reset: bool) -> bool {
        let logon = msg_type == b"A";
        let logged_out = matches!(self.phase, Phase::LogoutSent(_));
        (logon && (self.sent_reset || reset || !self.received_logon))
            || (!logon && self.received_logon)
            || (msg_type == b"5" && self.sent_logon)
            || (msg_type != b"5" && logged_out)
            || msg_type == b"4"
            || msg_type == b"3"
    }

    /// Rejects `m` for `reason`, then logs out (a bad SendingTime or
    /// CompID); false either way, for `verify` to return.
    pub(super) fn reject_and_logout(
        &mut self,
        m: &Inbound<'_>,
        reason: Reason,
        tag: i64,
        now: UtcTimestamp,
    ) -> Result<bool, SessionError> {
        if self.reject(m, reason, tag, now)? {
            self.send_logout(None, now)?;
            self.phase = Phase::LogoutSent(now.unix_nanos);
        }
        Ok(false)
    }

    /// QuickFIX's `verify`: SendingTime, CompIDs, then the sequence
    /// number; false when the message must not be processed further.
    pub(super) fn verify(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
        check_high: bool,
        check_low: bool,
        queued: bool,
    ) -> Result<bool, SessionError> {
        let Some(seq) = m.seq else {
            self.log("Invalid message: MsgSeqNum(34) missing".into());
            return Ok(false);
        };
        if seq > self.store.max_seq() {
            self.out_of_range(m, 34, seq, now)?;
            return Ok(false);
        }
        if self.cfg.check_latency && !queued {
            // abs_diff: a SendingTime in 1677 is 1e19 ns away, past i64.
            let limit = u64::from(self.cfg.max_latency_secs) * NANOS as u64;
            let good = m
                .sending_time
                .is_some_and(|st| now.unix_nanos.abs_diff(st.unix_nanos) <= limit);
            if !good {
                return self.reject_and_logout(m, Reason::SENDING_TIME_ACCURACY, 0, now);
            }
        }
        if self.cfg.check_comp_id && !m.comp_ids_ok {
            return self.reject_and_logout(m, Reason::COMPID_PROBLEM, 0, now);
        }
        let expected = self.store.next_target_seq();
        if check_high && seq > expected {
            self.too_high(msg, seq, now)?;
            return Ok(false);
        }
        if check_low && seq < expected {
            self.too_low(m, seq, expected, now)?;
            return Ok(false);
        }
        // Only a message whose number was checked can satisfy the gap (a
        // ResendRequest or Logout far ahead must not end it).
        if (check_high || check_low)
            && let Some((_, last)) = self.resend_range
            && seq >= last
        {
            let (first, last) = self.resend_range.take().unwrap_or_default();
            self.log(format!(
                "ResendRequest for messages FROM: {first} TO: {last} has been satisfied."
            ));
        }
        self.last_received = now.unix_nanos;
        self.test_requests = 0;
        Ok(true)
    }

    /// A message ahead of the expected number: kept for later, and the gap
    /// asked for unless a request already covers it.
    pub(super) fn too_high(
        &mut self,
        msg: &[u8],
        seq: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let expected = self.store.next_target_seq();
        self.log(format!(
            "MsgSeqNum too high, expecting {expected} but received {seq}"
        ));
        if !self.queue.insert(seq, msg) {
            // Full: the message is asked for again once the gap before it
            // is filled, so dropping it loses nothing but time.
            self.log(format!(
                "Queue of messages ahead of the gap is full; {seq} dropped"
            ));
        }
        self.last_received = now.unix_nanos;
        if let Some((first, last)) = self.resend_range
            && seq >= first
            && !self.cfg.send_redundant_resend_requests
        {
            self.log(format!(
                "Already sent ResendRequest FROM: {first} TO: {last}.  Not sending another."
            ));
            return Ok(());
        }
        self.send_resend_request(seq, now)
    }

    /// A message below the expected number: a PossDup resend is checked
    /// and ignored; anything else ends the session.
    pub(super) fn too_low(
        &mut self,
        m: &Inbound<'_>,
        seq: u64,
        expected: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !m.poss_dup {
            let text = format!("MsgSeqNum too low, expecting {expected} but received {seq}");
            self.send_logout(Some(&text), now)?;
            self.log(text);
            return self.disconnect();
        }
        if m.msg_type != b"4" {
            match m.orig_sending_time {
                None => {
                    self.reject(m, Reason::REQUIRED_TAG_MISSING, 122, now)?;
                    return Ok(());
                }
                Some(orig) if m.sending_time.is_some_and(|st| orig > st) => {
                    self.reject_and_logout(m, Reason::SENDING_TIME_ACCURACY, 0, now)?;
                    return Ok(());
                }
                Some(_) => {}
            }
        }
        // A duplicate of what arrived before: ignored.
        self.last_received = now.unix_nanos;
        self.test_requests = 0;
        Ok(())
    }

    pub(super) fn on_logon(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        // QuickFIX's nextLogon begins with these two.
        if self.cfg.refresh_on_logon {
            self.store.refresh()?;
        }
        if !self.is_logon_time(now) {
            self.log("Received logon outside of valid logon time".into());
            return self.disconnect();
        }
        if self.received_logon && !m.reset_seq_num {
            // A second Logon on a live session (one with ResetSeqNumFlag=Y
            // is the peer resetting it, below).
            self.log("Received logon while already logged on".into());
            return self.disconnect();
        }
        if self.cfg.role == Role::Initiator && !self.sent_logon && !m.reset_seq_num {
            self.log("Received logon response before sending request".into());
            return self.disconnect();
        }
        if m.reset_seq_num {
            self.log("Logon contains ResetSeqNumFlag=Y, reseting sequence numbers to 1".into());
            if !self.sent_reset {
                self.reset_store()?;
                // Numbers start again: nothing asked for or kept under
                // the old ones still applies.
                self.resend_range = None;
                self.queue.clear();
            }
        } else if self.cfg.role == Role::Acceptor && self.cfg.reset_on_logon {
            self.reset_store()?;
        }
        // Who answers: an acceptor, or an initiator whose peer reset the
        // session without being asked (QuickFIX's nextLogon).
        let respond = self.cfg.role == Role::Acceptor || (m.reset_seq_num && !self.sent_reset);
        if respond {
            match m.heart_bt_int {
                Some(h) => self.heart_bt_int = h,
                None => {
                    self.reject(m, Reason::REQUIRED_TAG_MISSING, 108, now)?;
                    return self.disconnect();
                }
            }
        }
        let check_low = !m.reset_seq_num;
        if !self.verify(m, msg, now, false, check_low, false)? {
            return Ok(());
        }
        // Where QuickFIX hands the Logon to the application (the end of
        // verify), which may refuse it with RejectLogon: the reason goes
        // out in a Logout and the connection closes. Both fields get one
        // answer, so a guesser learns nothing of which was wrong.
        if self.cfg.role == Role::Acceptor && !self.cfg.credentials.accept(m.username, m.password) {
            let text = "Invalid username or password";
            self.log(format!("Logon rejected: {text}"));
            self.send_logout(Some(text), now)?;
            return self.disconnect();
        }
        self.received_logon = true;
        // The peer's NextExpectedMsgSeqNum(789) (QuickFIX after 1.15.1):
        // below our next number, what it missed is sent once logged on;
        // above it, the peer expects messages we never sent.
        let next_out = self.store.next_sender_seq();
        let mut retransmit_from = None;
        match m.next_expected {
            Some(n) if n < next_out => retransmit_from = Some(n),
            Some(n) if n > next_out => {
                let text = format!(
                    "NextExpectedMsgSeqNum too high, expecting {next_out} but received {n}"
                );
                self.log(text.clone());
                self.send_logout(Some(&text), now)?;
                return self.disconnect();
            }
            _ => {}
        }
        let seq = m.seq.unwrap_or(0);
        if respond {
            self.log("Received logon request".into());
            // The reset itself happened when the Logon arrived; the
            // reply says so only when the peer asked for it (QuickFIX's
            // generateLogon(aLogon)): ResetOnLogon alone resets silently.
            self.send_logon(m.reset_seq_num, true, now)?;
            self.log("Responding to logon request".into());
        } else {
            self.log("Received logon response".into());
        }
        self.sent_reset = false;
        self.phase = Phase::LoggedOn;
        self.out.push(Output::LoggedOn);
        let expected = self.store.next_target_seq();
        if seq > expected && !m.reset_seq_num {
            if self.cfg.next_expected_msg_seq_num {
                // Our Logon's 789 already told the peer where to start:
                // no ResendRequest, the gap is expected to fill itself.
                self.log(format!(
                    "Expecting retransmits FROM: {expected} TO: {}",
                    seq - 1
                ));
                self.queue.insert(seq, msg);
                self.resend_range = Some((expected, seq - 1));
            } else {
                self.too_high(msg, seq, now)?;
            }
        } else {
            self.incr_target()?;
        }
        if let Some(from) = retransmit_from {
            let last = self.store.next_sender_seq() - 1;
            self.log(format!(
                "Sending retransmits due to received NextExpectedMsgSeqNum is too low. FROM: {from} TO: {last}"
            ));
            self.retransmit(from, last, now)?;
        }
        Ok(())
    }

    /// A Heartbeat (`check_high`) or a Reject (not): checked, then only
    /// counted.
    pub(super) fn on_counted(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
        check_high: bool,
    ) -> Result<(), SessionError> {
        if self.verify(m, msg, now, check_high, true, false)? {
            self.incr_target()?;
        }
        Ok(())
    }

    pub(super) fn on_test_request(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !self.verify(m, msg, now, true, true, false)? {
            return Ok(());
        }
        let id = m.test_req_id;
        self.send_admin(b"0", now, |b| {
            // An empty TestReqID (a session with ValidateFieldsHaveValues=N
            // lets one through) comes back as it came.
            if let Some(id) = &id {
                b.field_bytes_or_empty(112, id);
            }
        })?;
        self.log("Received test request".into());
        self.incr_target()
    }

    pub(super) fn on_logout(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !self.verify(m, msg, now, false, false, false)? {
            return Ok(());
        }
        if let Phase::LogoutSent(_) = self.phase {
            self.log("Received logout response".into());
        } else {
            self.send_logout(None, now)?;
            self.log("Received logout request".into());
            self.log("Sending logout response".into());
        }
        self.incr_target()?;
        if self.cfg.reset_on_logout {
            self.reset_store()?;
        }
        self.out.push(Output::LoggedOut);
        self.disconnect()
    }

    pub(super) fn on_sequence_reset(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let gap_fill = m.gap_fill;
        // A reset (not a gap fill) is honoured whatever its own number.
        if !self.verify(m, msg, now, gap_fill, gap_fill, false)? {
            return Ok(());
        }
        let Some(new) = m.new_seq_no else {
            return self
                .reject(m, Reason::REQUIRED_TAG_MISSING, 36, now)
                .map(|_| ());
        };
        if new > self.store.max_seq() {
            return self.out_of_range(m, 36, new, now);
        }
        let expected = self.store.next_target_seq();
        self.log(format!("Received SequenceReset FROM: {expected} TO: {new}"));
        if new > expected {
            self.set_target(new)?;
        } else if new < expected {
            // QuickFIX names no tag here (no RefTagID).
            self.reject(m, Reason::VALUE_INCORRECT, 0, now)?;
        }
        Ok(())
    }

    /// Processes queued messages that are now in sequence.
    pub(super) fn drain_queue(&mut self, now: UtcTimestamp) -> Result<(), SessionError> {
        loop {
            let expected = self.store.next_target_seq();
            let Some(msg) = self.queue.take(expected) else {
                return Ok(());
            };
            self.log(format!("Processing QUEUED message: {expected}"));
            // QuickFIX does not act on a queued Logon or ResendRequest
            // again (both were handled when they arrived): it counts them.
            if msg_type_of(&msg).is_some_and(|t| t == b"A" || t == b"2") {
                self.incr_target()?;
                continue;
            }
            self.process(&msg, now, true)?;
            if self.phase == Phase::Disconnected {
                return Ok(());
            }
        }
    }

    /// A MsgSeqNum(34) or NewSeqNo(36) above the largest number the store
    /// records. The specification defines SeqNum as a positive integer
    /// without naming a largest value, and a message with a value out of
    /// range for its tag gets a session Reject (SessionRejectReason 5,
    /// "Value is incorrect (out of range) for this tag"). Such a number
    /// cannot be counted past, so the session also logs out: the message
    /// is never delivered, and no number is ever delivered twice.
    fn out_of_range(
        &mut self,
        m: &Inbound<'_>,
        tag: u32,
        value: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let text = format!(
            "{} {value} is above {}, the largest sequence number this session records",
            if tag == 34 {
                "MsgSeqNum(34)"
            } else {
                "NewSeqNo(36)"
            },
            self.store.max_seq()
        );
        self.log(text.clone());
        if self.received_logon {
            // Not counted: RefSeqNum names it, and the reject must not
            // move the expected number up to it.
            self.send_reject(
                m,
                &text,
                &text,
                Some(i64::from(tag)),
                Some(Reason::VALUE_INCORRECT.0),
                now,
            )?;
            self.send_logout(Some(&text), now)?;
        }
        self.disconnect()
    }

    pub(super) fn incr_target(&mut self) -> Result<(), SessionError> {
        let (s, t) = (self.store.next_sender_seq(), self.store.next_target_seq());
        // A peer's SequenceReset can set the number to u64::MAX.
        self.store.set_seqs(s, t.saturating_add(1))?;
        Ok(())
    }

    pub(super) fn set_target(&mut self, next: u64) -> Result<(), SessionError> {
        let s = self.store.next_sender_seq();
        self.store.set_seqs(s, next)?;
        Ok(())
    }
}
