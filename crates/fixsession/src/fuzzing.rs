//! Bodies of the session fuzz targets in `fuzz/`, kept in the library so
//! `cargo test` runs them over seeds and the fuzzer and the tests exercise
//! the same code. The wire's targets (parse, frame, dictionary) are
//! fixcore's.

/// Reads `data` as a settings file; must not panic, and an accepted file
/// has at least one session.
pub fn settings_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(s) = crate::settings::Settings::parse(&text) {
        assert!(!s.sessions.is_empty());
        // No two sessions of a file that was taken name the same files
        // (compared with only `.` and repeated separators dropped, which
        // the parser's own comparison also does), and none names them
        // through a separator or `..`.
        let mut seen = std::collections::HashSet::new();
        for x in s.sessions.iter().filter(|x| !x.acceptor_template) {
            for (what, _, prefix) in x.file_prefixes() {
                let plain: std::path::PathBuf = prefix.components().collect();
                assert!(
                    seen.insert((what, plain)),
                    "two sessions share {what} files"
                );
                let name = prefix.file_name().unwrap_or_default().to_string_lossy();
                assert!(!name.contains('/') && !name.contains(".."), "{name}");
            }
        }
        for x in &s.sessions {
            assert!(x.logon_timeout >= 1);
        }
    }
}

/// Plays `data` to an acceptor session (FIX.4.4, ISLD <- TW) as a
/// counterparty would; must not panic, and every message the session
/// sends must parse and carry our CompIDs.
///
/// So the fuzzer reaches the session logic instead of dying on
/// checksums, `data` is a script: each line is `~N` (N seconds pass and
/// the timers run), `!bytes` (sent raw), `+` (the connection drops and
/// comes back) or `|`-separated fields that are sent with BeginString,
/// BodyLength and CheckSum added. A script starting with `W` plays to a
/// weekly session (Monday 12:30 to Friday 17:00; the clock starts on a
/// Monday at 12:00) that takes Logons from 13:00 to 16:00 only; one
/// starting (after that) with `P` to a session that requires
/// Username(553) `u` and Password(554) `p`.
pub fn session_script(data: &[u8]) {
    use crate::machine::{Config, Credentials, Output, Session};
    use crate::schedule::{TimeOfDay, TimeWindow, Weekday};
    use crate::settings::ConnectionType;
    use crate::store::MemoryStore;
    use fixcore::parse::Parser;
    use fixcore::value::UtcTimestamp;
    use fixcore::version::BeginString;

    let (windows, data) = match data.strip_prefix(b"W") {
        Some(rest) => {
            let (monday, friday) = (Weekday::new(2), Weekday::new(6));
            let (monday, friday) = (monday.expect("a day"), friday.expect("a day"));
            let hours = |h: u32, m: u32| TimeOfDay(h * 3600 + m * 60);
            (
                Some((
                    TimeWindow::weekly(hours(12, 30), hours(17, 0), monday, friday),
                    TimeWindow::daily(hours(13, 0), hours(16, 0)),
                )),
                rest,
            )
        }
        None => (None, data),
    };
    let (credentials, data) = match data.strip_prefix(b"P") {
        Some(rest) => (
            Credentials {
                username: Some("u".into()),
                password: Some("p".into()),
            },
            rest,
        ),
        None => (Credentials::default(), data),
    };
    let cfg = Config {
        // The script cannot know the clock: SendingTime is not judged.
        check_latency: false,
        credentials,
        session_time: windows.clone().map(|(s, _)| s),
        logon_time: windows.map(|(_, l)| l),
        ..Config::new(ConnectionType::Acceptor, BeginString::Fix44, "ISLD", "TW")
    };
    let mut session = Session::new(cfg, MemoryStore::default());
    let mut now = UtcTimestamp {
        unix_nanos: 1_795_435_200_000_000_000,
    };
    let mut parser = Parser::new();
    let mut connected = true;
    session.on_connect(now).unwrap();
    for line in data.split(|&b| b == b'\n') {
        match line.first() {
            Some(b'~') => {
                let secs = std::str::from_utf8(&line[1..])
                    .ok()
                    .and_then(|s| s.parse::<u32>().ok())
                    .unwrap_or(1);
                now.unix_nanos += i64::from(secs.min(100_000)) * 1_000_000_000;
                session.on_tick(now).unwrap();
            }
            Some(b'!') => session.on_message(&line[1..], now).unwrap(),
            Some(b'+') => {
                session.on_disconnect().unwrap();
                session.on_connect(now).unwrap();
                connected = true;
            }
            _ if connected => {
                let body: Vec<u8> = line
                    .split(|&b| b == b'|')
                    .filter(|f| !f.is_empty())
                    .flat_map(|f| f.iter().copied().chain([1]))
                    .collect();
                let mut msg = format!("8=FIX.4.4\x019={}\x01", body.len()).into_bytes();
                msg.extend_from_slice(&body);
                let sum = msg.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
                msg.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
                session.on_message(&msg, now).unwrap();
            }
            _ => {}
        }
        for o in session.drain() {
            match o {
                Output::Send(bytes) => {
                    let m = parser
                        .parse(&bytes)
                        .unwrap_or_else(|e| panic!("the session sent an invalid message: {e}"));
                    assert_eq!(m.get(49), Some(&b"ISLD"[..]));
                    assert_eq!(m.get(56), Some(&b"TW"[..]));
                }
                Output::Disconnect => connected = false,
                _ => {}
            }
        }
    }
}

/// Splits `data` at `\0\0` into the four files of a QuickFIX file store
/// (header, body, seqnums, session), opens it plainly and with recovery,
/// reads every number it might hold, stores one more message and opens it
/// again. Any bytes must give a typed result, never a panic; a store that
/// opens must keep what it is given.
pub fn store_files(data: &[u8]) {
    use crate::id::SessionId;
    use crate::store::{Durability, FileStore, SessionStore};
    /// Removes the store's folder when the input is done, a failed
    /// assertion's unwinding included: a folder left per process piled up
    /// in the temporary directory, one for every test and fuzz run.
    struct Scratch(std::path::PathBuf);
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    // A folder per call, so that two threads of one process never remove
    // each other's.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = Scratch(std::env::temp_dir().join(format!(
        "fixsession-fuzz-store-{}-{call}",
        std::process::id()
    )));
    let _ = std::fs::create_dir_all(&dir.0);
    let prefix = dir.0.join("FIX.4.4-A-B");
    let mut parts = data.splitn(4, |&b| b == 0);
    for ext in ["header", "body", "seqnums", "session"] {
        let mut name = prefix.as_os_str().to_owned();
        name.push(".");
        name.push(ext);
        let _ = std::fs::write(&name, parts.next().unwrap_or(b""));
    }
    let probe = |s: &FileStore| {
        let mut out = Vec::new();
        for seq in 0..s.next_sender_seq().min(64) + 2 {
            out.clear();
            let _ = s.load(seq, &mut out);
        }
    };
    // Half the inputs open for the owner the name says, so stored
    // messages of another session (a typed refusal) are reached too.
    let owner = SessionId::new("FIX.4.4", "A", "B", "");
    let owner = data.len().is_multiple_of(2).then_some(&owner);
    if let Ok(s) = FileStore::open(&prefix, Durability::Process, owner) {
        probe(&s);
    }
    if let Ok((mut s, _)) = FileStore::recover(&prefix, Durability::Process, owner) {
        probe(&s);
        let seq = s.next_sender_seq();
        let body = format!("35=0\x0134={seq}\x0149=A\x0156=B\x01");
        let mut msg = format!("8=FIX.4.4\x019={}\x01{body}", body.len()).into_bytes();
        let sum = msg.iter().map(|&b| u32::from(b)).sum::<u32>() % 256;
        msg.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
        if s.save(seq, &msg).is_ok() && s.set_seqs(seq + 1, s.next_target_seq()).is_ok() {
            let _ = s.flush();
            drop(s);
            let s = FileStore::open(&prefix, Durability::Process, owner)
                .expect("a repaired store opens");
            let mut out = Vec::new();
            assert!(
                s.load(seq, &mut out)
                    .expect("the message just stored reads")
            );
            assert_eq!(out, msg);
        }
    }
}

#[cfg(test)]
mod tests {
    /// The store fuzz body over its seeds, and every one-byte change and
    /// cut of them.
    #[test]
    fn store_files_over_seeds_and_mutations() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/store");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let seed = std::fs::read(e.unwrap().path()).unwrap();
            n += 1;
            super::store_files(&seed);
            for i in (0..seed.len()).step_by(3) {
                let mut m = seed.clone();
                m[i] = m[i].wrapping_add(1 + (i as u8 % 7));
                super::store_files(&m);
                super::store_files(&seed[..i]);
            }
        }
        assert!(n >= 1, "seeds missing in {}", dir.display());
    }

    /// The session fuzz body over its committed seeds and a few thousand
    /// deterministic mutations of them (lines dropped, repeated and
    /// swapped, bytes flipped), so `cargo test` covers what the fuzzer
    /// starts from.
    #[test]
    fn session_script_over_seeds_and_mutations() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/session");
        for seed in perfkit_testkit::mutation::seeds(&dir, 2) {
            perfkit_testkit::mutation::line_mutations(&seed, 1500, super::session_script);
        }
    }
}
