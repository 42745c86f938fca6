//! What a key's type allows but its meaning does not: numbers that would
//! make a session unusable without a word, and CompIDs that cannot name
//! the files they are made to name. Each is refused at start with its
//! line, as QuickFIX's `ConfigError`s are; `docs/fix.md` lists the
//! choice made for every numeric key.

use super::{ConnectionType, Entries, SessionSettings, SettingsError};
use crate::id::file_name_problem;

/// The largest `PerfkitMemoryStoreWindow`.
pub const MAX_MEMORY_STORE_WINDOW: u32 = 1 << 20;

/// Checks session `s`, read from `e`, against its keys' meanings.
pub(super) fn check(s: &SessionSettings, e: &Entries) -> Result<(), SettingsError> {
    let bad = |key: &str, why: &'static str| {
        let (value, line) = e
            .get(key)
            .map(|(v, l)| (v.clone(), *l))
            .unwrap_or_else(|| (String::new(), s.line));
        SettingsError::BadValue {
            line,
            key: key.to_string(),
            value,
            why,
        }
    };
    // QuickFIX's LogonTimeout bounds an initiator's wait for the Logon
    // reply; perfkit's acceptor also closes a connection that sends no
    // Logon within it (QuickFIX acceptors wait forever). At 0 either
    // gives up before any answer can arrive.
    if s.logon_timeout < 1 {
        return Err(bad(
            "LogonTimeout",
            "must be at least 1 second: 0 closes every connection before its Logon can arrive",
        ));
    }
    // QuickFIX/C++ and QuickFIX/J refuse an initiator's 0 ("Heartbeat
    // must be greater than zero"); an acceptor takes the Logon's.
    if s.connection_type == ConnectionType::Initiator && s.heart_bt_int == Some(0) {
        return Err(bad("HeartBtInt", "Heartbeat must be greater than zero"));
    }
    // At 0 every message whose SendingTime is not this very instant is
    // rejected and the session logged out: CheckLatency=N is how the
    // check is turned off.
    if s.validation.check_latency && s.validation.max_latency_secs < 1 {
        return Err(bad(
            "MaxLatency",
            "must be at least 1 second (0 rejects every message; CheckLatency=N turns the check off)",
        ));
    }
    // The ring's slots are made up front: 0 would keep nothing (that is
    // PersistMessages=N), and past a million the slots alone outweigh
    // what a window is for.
    if let Some(w) = s.memory_store_window
        && !(1..=MAX_MEMORY_STORE_WINDOW).contains(&w)
    {
        return Err(bad(
            "PerfkitMemoryStoreWindow",
            "must be 1 to 1048576 messages (PersistMessages=N keeps none)",
        ));
    }
    if s.file_store_path.is_some() || s.file_log.is_some() {
        for key in ["SenderCompID", "TargetCompID", "SessionQualifier"] {
            let value = match key {
                "SenderCompID" => &s.sender_comp_id,
                "TargetCompID" => &s.target_comp_id,
                _ => &s.session_qualifier,
            };
            // A template's `*` is replaced by a Logon's CompID, which the
            // acceptor checks when it arrives.
            if s.acceptor_template && value == "*" {
                continue;
            }
            if let Some(why) = file_name_problem(value) {
                return Err(bad(key, why));
            }
        }
    }
    Ok(())
}
