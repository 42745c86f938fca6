use super::*;

const PREFIX: &str = "FIX.4.4-EXEC-BANZAI";

fn settings(dir: &Path) -> FileLogSettings {
    FileLogSettings {
        path: dir.join("log"),
        backup_path: None,
        heartbeats: true,
    }
}

/// 2026-11-23 08:00:00.123456789 UTC.
fn at() -> UtcTimestamp {
    UtcTimestamp {
        unix_nanos: 1_795_420_800_123_456_789,
    }
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

const ORDER: &[u8] = b"8=FIX.4.4\x019=5\x0135=D\x0110=000\x01";
const HEARTBEAT: &[u8] = b"8=FIX.4.4\x019=5\x0135=0\x0110=000\x01";

#[test]
fn lines_are_quickfixs_under_its_names() {
    let dir = tempfile::tempdir().unwrap();
    let mut log = FileLog::open(&settings(dir.path()), PREFIX).unwrap();
    log.message(at(), true, ORDER);
    log.message(at(), false, HEARTBEAT);
    log.event(at(), "Logon complete");
    // Nothing reaches the files before the round's flush.
    let messages = dir
        .path()
        .join("log/FIX.4.4-EXEC-BANZAI.messages.current.log");
    let events = dir.path().join("log/FIX.4.4-EXEC-BANZAI.event.current.log");
    assert_eq!(read(&messages), "");
    Log::flush(&mut log);
    assert_eq!(
        read(&messages),
        "20261123-08:00:00.123456789 : 8=FIX.4.4\x019=5\x0135=D\x0110=000\x01\n\
         20261123-08:00:00.123456789 : 8=FIX.4.4\x019=5\x0135=0\x0110=000\x01\n"
    );
    assert_eq!(
        read(&events),
        "20261123-08:00:00.123456789 : Logon complete\n"
    );
    assert_eq!(log.messages_path(), messages);
    assert_eq!(log.events_path(), events);
}

#[test]
fn a_restart_appends() {
    let dir = tempfile::tempdir().unwrap();
    for text in ["first run", "second run"] {
        let mut log = FileLog::open(&settings(dir.path()), PREFIX).unwrap();
        log.event(at(), text);
        log.flush().unwrap();
    }
    let events = read(&dir.path().join("log/FIX.4.4-EXEC-BANZAI.event.current.log"));
    assert_eq!(events.lines().count(), 2, "{events}");
    assert!(events.ends_with(" : second run\n"), "{events}");
}

#[test]
fn heartbeats_can_be_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let s = FileLogSettings {
        heartbeats: false,
        ..settings(dir.path())
    };
    let mut log = FileLog::open(&s, PREFIX).unwrap();
    log.message(at(), true, HEARTBEAT);
    log.message(at(), true, ORDER);
    // A Heartbeat's bytes inside another message do not make it one.
    let tricky = b"8=FIX.4.4\x019=20\x0135=B\x0158=x\x0135=0\x0110=000\x01";
    log.message(at(), true, tricky);
    log.flush().unwrap();
    let text = read(log.messages_path());
    let kept: Vec<&str> = text
        .lines()
        .map(|l| l.split_once(" : ").unwrap().1)
        .collect();
    assert_eq!(
        kept,
        [ORDER, &tricky[..]].map(|m| std::str::from_utf8(m).unwrap())
    );
}

#[test]
fn a_reset_moves_the_logs_to_numbered_backups() {
    let dir = tempfile::tempdir().unwrap();
    let s = FileLogSettings {
        backup_path: Some(dir.path().join("old")),
        ..settings(dir.path())
    };
    let mut log = FileLog::open(&s, PREFIX).unwrap();
    // Nothing written yet: nothing to back up.
    assert_eq!(log.backup().unwrap(), None);
    // A name already taken (by hand, or another engine) is skipped.
    std::fs::write(
        dir.path()
            .join("old/FIX.4.4-EXEC-BANZAI.event.backup.1.log"),
        "x",
    )
    .unwrap();
    for run in ["one", "two"] {
        log.event(at(), run);
        log.message(at(), false, ORDER);
        Log::reset(&mut log, at());
    }
    log.event(at(), "three");
    log.flush().unwrap();
    let old = |name: &str| read(&dir.path().join("old").join(name));
    assert_eq!(old("FIX.4.4-EXEC-BANZAI.event.backup.1.log"), "x");
    assert!(
        !dir.path()
            .join("old/FIX.4.4-EXEC-BANZAI.messages.backup.1.log")
            .exists()
    );
    assert!(old("FIX.4.4-EXEC-BANZAI.event.backup.2.log").ends_with(" : one\n"));
    assert!(old("FIX.4.4-EXEC-BANZAI.messages.backup.2.log").contains("35=D"));
    assert!(old("FIX.4.4-EXEC-BANZAI.event.backup.3.log").ends_with(" : two\n"));
    assert_eq!(read(log.messages_path()), "");
    assert!(read(log.events_path()).ends_with(" : three\n"));
}

#[test]
fn an_unusable_directory_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("not-a-dir");
    std::fs::write(&file, "").unwrap();
    let s = FileLogSettings {
        path: file.clone(),
        backup_path: None,
        heartbeats: true,
    };
    let e = FileLog::open(&s, PREFIX).unwrap_err();
    assert_eq!(e.path, file);
    assert!(
        e.to_string().starts_with(&file.display().to_string()),
        "{e}"
    );
}
