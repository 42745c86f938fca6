//! A Logon judged before its session exists ([`screen_logon`]), so a
//! session made at a Logon (an acceptor template's) costs nothing until
//! the Logon has passed every check that needs no store.

use super::inspect::{Garbled, inspect};
use super::{Config, NANOS, Role};
use fixcore::parse::Parser;
use fixcore::value::UtcTimestamp;

/// Why `msg`, the first message of a connection, cannot open a session
/// configured as `cfg`, as far as that can be told without the session's
/// store; `None` when it may. These are the session's own checks of a
/// Logon that read no sequence number: framing, MsgType, BeginString,
/// the header fields, the CompIDs, SendingTime (`CheckLatency`,
/// `MaxLatency`), HeartBtInt, Username and Password. The session checks
/// the Logon again when it takes it, its numbers included; what this
/// refuses is refused without an answer, since no session (and so no
/// sequence number to answer with) exists yet.
pub fn screen_logon(cfg: &Config, msg: &[u8], now: UtcTimestamp) -> Option<String> {
    let mut parser = Parser::new();
    let m = match inspect(&mut parser, msg, cfg) {
        Ok(m) => m,
        Err(Garbled(why)) => return Some(format!("garbled Logon: {why}")),
    };
    if m.msg_type != b"A" {
        return Some(format!(
            "first message is not a Logon (MsgType {})",
            String::from_utf8_lossy(m.msg_type)
        ));
    }
    if m.wrong_begin_string {
        return Some(format!("BeginString is not {}", cfg.begin_string.as_str()));
    }
    if let Some((_, tag)) = m.header_problem {
        return Some(format!("header field {tag} missing or malformed"));
    }
    if m.seq.is_none() {
        return Some("MsgSeqNum(34) missing".into());
    }
    if !m.comp_ids_ok {
        return Some("CompIDs are not the session's".into());
    }
    if cfg.check_latency {
        let limit = u64::from(cfg.max_latency_secs) * NANOS as u64;
        let good = m
            .sending_time
            .is_some_and(|st| now.unix_nanos.abs_diff(st.unix_nanos) <= limit);
        if !good {
            return Some(format!(
                "SendingTime is more than {} s from ours",
                cfg.max_latency_secs
            ));
        }
    }
    if m.heart_bt_int.is_none() {
        return Some("HeartBtInt(108) missing or not a number of seconds".into());
    }
    if cfg.role == Role::Acceptor && !cfg.credentials.accept(m.username, m.password) {
        return Some("Invalid username or password".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use fixcore::version::BeginString;

    const T0: i64 = 1_764_000_000_000_000_000;

    /// A framed Logon from `sender` to `target` sent at `sent` with
    /// `extra` fields (each ending in SOH).
    fn logon(sender: &str, target: &str, sent: i64, extra: &str) -> Vec<u8> {
        let t = fixcore::value::UtcTimestamp { unix_nanos: sent };
        let mut b = [0u8; 32];
        let n = fixcore::build::format::timestamp(&mut b, t, fixcore::build::TimePrecision::Millis)
            .unwrap();
        let stamp = std::str::from_utf8(&b[..n]).unwrap();
        let body =
            format!("35=A\x0134=1\x0149={sender}\x0152={stamp}\x0156={target}\x0198=0\x01{extra}");
        let mut m = format!("8=FIX.4.4\x019={}\x01{body}", body.len()).into_bytes();
        let sum = m.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
        m.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
        m
    }

    #[test]
    fn a_logon_is_screened_without_a_store() {
        let mut cfg = Config::new(Role::Acceptor, BeginString::Fix44, "ACC", "BANK");
        cfg.credentials.password = Some("secret".into());
        let now = UtcTimestamp { unix_nanos: T0 };
        let good = logon("BANK", "ACC", T0, "108=30\x01554=secret\x01");
        assert_eq!(screen_logon(&cfg, &good, now), None);
        let cases = [
            (
                logon("BANK", "ACC", T0, "108=30\x01554=wrong\x01"),
                "password",
            ),
            (logon("BANK", "ACC", T0, "108=30\x01"), "password"),
            (logon("BANK", "ACC", T0, "554=secret\x01"), "HeartBtInt"),
            (
                logon("BANK", "ACC", T0, "108=-5\x01554=secret\x01"),
                "HeartBtInt",
            ),
            (
                logon("OTHER", "ACC", T0, "108=30\x01554=secret\x01"),
                "CompIDs",
            ),
            (
                logon("BANK", "ACC", T0 - 121 * NANOS, "108=30\x01554=secret\x01"),
                "SendingTime",
            ),
            (good[..good.len() - 2].to_vec(), "garbled"),
        ];
        for (msg, why) in cases {
            let said = screen_logon(&cfg, &msg, now);
            assert!(
                said.as_deref().is_some_and(|s| s.contains(why)),
                "{why}: {said:?} for {:?}",
                String::from_utf8_lossy(&msg)
            );
        }
        let mut heartbeat = good.clone();
        let at = heartbeat.windows(5).position(|w| w == b"35=A\x01").unwrap();
        heartbeat[at + 3] = b'0';
        let sum_at = heartbeat.len() - 4;
        let sum = heartbeat[..heartbeat.len() - 7]
            .iter()
            .map(|&b| u32::from(b))
            .sum::<u32>()
            % 256;
        heartbeat[sum_at..sum_at + 3].copy_from_slice(format!("{sum:03}").as_bytes());
        assert!(
            screen_logon(&cfg, &heartbeat, now)
                .unwrap()
                .contains("not a Logon")
        );
        // Without CheckLatency the clock is not asked.
        cfg.check_latency = false;
        let late = logon("BANK", "ACC", T0 - 3600 * NANOS, "108=30\x01554=secret\x01");
        assert_eq!(screen_logon(&cfg, &late, now), None);
    }
}
