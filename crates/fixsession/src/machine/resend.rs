//! Serving a ResendRequest: our stored messages rebuilt with
//! PossDupFlag=Y and OrigSendingTime, admin messages and lost numbers
//! skipped with SequenceReset-GapFill.

use super::inspect::{Inbound, is_header_tag, split_fields};
use super::{INFINITY_41, Output, RESEND_BATCH, Resend, Session, SessionError, is_admin};
use crate::reject::Reason;
use crate::store::SessionStore;
use fixcore::Error;
use fixcore::value::UtcTimestamp;
use fixcore::version::BeginString;

impl<S: SessionStore> Session<S> {
    /// Serves a ResendRequest: application messages again with
    /// PossDupFlag=Y and OrigSendingTime, runs of admin messages (and of
    /// numbers the store no longer has) as one SequenceReset-GapFill.
    pub(super) fn on_resend_request(
        &mut self,
        m: &Inbound<'_>,
        msg: &[u8],
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        if !self.verify(m, msg, now, false, false, false)? {
            return Ok(());
        }
        let (Some(begin), Some(end)) = (m.begin_seq_no, m.end_seq_no) else {
            let tag = if m.begin_seq_no.is_none() { 7 } else { 16 };
            return self
                .reject(m, Reason::REQUIRED_TAG_MISSING, tag, now)
                .map(|_| ());
        };
        self.log(format!("Received ResendRequest FROM: {begin} TO: {end}"));
        let next_out = self.store.next_sender_seq();
        // QuickFIX takes 999999 as "no end" up to FIX 4.2, and 0 from 4.2.
        let bs = self.cfg.begin_string;
        let infinite = (end == 0 && bs >= BeginString::Fix42)
            || (end == INFINITY_41 && bs <= BeginString::Fix42);
        let last = if infinite || end >= next_out {
            next_out - 1
        } else {
            end
        };
        if self.cfg.persist_messages {
            self.retransmit(begin, last, now)?;
        } else {
            // Nothing kept to send: the whole range is skipped at once.
            self.send_gap_fill(begin, last + 1, now)?;
        }
        // Counted only when it was the expected number: QuickFIX serves
        // a request out of sequence without looking for a gap.
        if m.seq == Some(self.store.next_target_seq()) {
            self.incr_target()?;
        }
        Ok(())
    }

    /// Sends our messages `begin..=last` again: application messages with
    /// PossDupFlag=Y and OrigSendingTime, runs of admin messages (and of
    /// numbers the store no longer has) as one SequenceReset-GapFill.
    /// Only the first [`RESEND_BATCH`] numbers go out now; the driver asks
    /// for the rest with [`Session::continue_resend`] as the connection
    /// takes them, so a resend of millions of messages starts at once and
    /// holds one batch in memory.
    pub(super) fn retransmit(
        &mut self,
        begin: u64,
        last: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        self.resend = Some(Resend {
            next: begin.max(1),
            last,
            gap_from: None,
        });
        self.continue_resend(now)
    }

    /// Whether a resend has numbers still to send (see
    /// [`Session::continue_resend`]).
    pub fn resend_pending(&self) -> bool {
        self.resend.is_some()
    }

    /// Sends the next batch of a resend in progress, if any. A driver
    /// calls it when [`Session::resend_pending`] and its connection has
    /// room, before reading more from the peer.
    pub fn continue_resend(&mut self, now: UtcTimestamp) -> Result<(), SessionError> {
        let Some(mut r) = self.resend.take() else {
            return Ok(());
        };
        let mut stored = Vec::new();
        let stop = r
            .next
            .saturating_add(RESEND_BATCH)
            .min(r.last.saturating_add(1));
        while r.next < stop {
            let seq = r.next;
            stored.clear();
            let resend = self.store.load(seq, &mut stored)? && self.prepare_resend(&stored, now);
            if resend {
                if let Some(from) = r.gap_from.take() {
                    self.send_gap_fill(from, seq, now)?;
                }
                let bytes = self.builder_bytes();
                self.last_sent = now.unix_nanos;
                self.out.push(Output::Send(bytes));
                self.log(format!("Resending Message: {seq}"));
            } else if r.gap_from.is_none() {
                r.gap_from = Some(seq);
            }
            r.next += 1;
        }
        if r.next <= r.last {
            self.resend = Some(r);
        } else if let Some(from) = r.gap_from {
            self.send_gap_fill(from, r.last.saturating_add(1), now)?;
        }
        Ok(())
    }

    pub(super) fn builder_bytes(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.scratch)
    }

    /// Rebuilds stored message `stored` for a resend into `self.scratch`:
    /// false for an admin message (gap-filled instead) or one that no
    /// longer parses.
    pub(super) fn prepare_resend(&mut self, stored: &[u8], now: UtcTimestamp) -> bool {
        let precision = self.precision();
        // What we sent may hold what the strict parser refuses but a lax
        // session let through and the application echoed (an empty
        // value, a repeated tag): read those fields as they are.
        let fields: Vec<(u32, &[u8])> = match self.parser.get().parse(stored) {
            Ok(msg) => msg.fields().map(|f| (f.tag, f.value)).collect(),
            Err(
                Error::DuplicateTag { .. }
                | Error::GroupCount { .. }
                | Error::GroupDelimiter { .. }
                | Error::EmptyValue { .. },
            ) => split_fields(stored),
            Err(_) => return false,
        };
        let msg_type = fields
            .iter()
            .find(|(t, _)| *t == 35)
            .map_or(&b""[..], |&(_, v)| v);
        if msg_type.is_empty() || is_admin(msg_type) {
            return false;
        }
        let b = &mut self.builder;
        b.begin(msg_type);
        let mut orig = None;
        for &(tag, value) in &fields {
            match tag {
                8 | 9 | 10 | 35 | 43 | 122 => {}
                52 => {
                    orig = Some(value);
                    b.header_timestamp(52, now, precision);
                }
                t if is_header_tag(t) => {
                    b.header_bytes(t, value);
                }
                t => {
                    b.field_bytes_or_empty(t, value);
                }
            }
        }
        b.header_bytes(43, b"Y");
        if let Some(o) = orig {
            b.header_bytes(122, o);
        }
        match b.finish() {
            Ok(bytes) => {
                self.scratch.clear();
                self.scratch.extend_from_slice(bytes);
                true
            }
            Err(_) => false,
        }
    }

    /// SequenceReset-GapFill under number `from` (PossDupFlag=Y) moving the
    /// peer on to `to`. Not stored: it stands in for stored messages.
    pub(super) fn send_gap_fill(
        &mut self,
        from: u64,
        to: u64,
        now: UtcTimestamp,
    ) -> Result<(), SessionError> {
        let precision = self.precision();
        let b = &mut self.builder;
        b.begin(b"4");
        b.header_uint(34, from)
            .header_bytes(43, b"Y")
            .header_str(49, &self.cfg.sender_comp_id)
            .header_timestamp(52, now, precision)
            .header_str(56, &self.cfg.target_comp_id)
            .header_timestamp(122, now, precision);
        b.field_uint(36, to).field_char(123, b'Y');
        if let Ok(bytes) = b.finish() {
            let bytes = bytes.to_vec();
            self.last_sent = now.unix_nanos;
            self.out.push(Output::Send(bytes));
            self.log(format!("Sent SequenceReset TO: {to}"));
        }
        Ok(())
    }
}
