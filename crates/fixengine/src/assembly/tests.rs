use fixsession::settings::Settings;
use fixsession::store::{AnyStore, SessionStore};

use super::*;

/// A console that says nothing: these sessions are opened, not run.
struct Quiet;

impl Console for Quiet {
    fn screen(&self, _: &[u8]) {}
    fn warn(&self, _: Warning<'_>) {}
    fn notice(&self, _: &str) {}
    fn listening(&self, _: Listening) {}
    fn result(&self, _: &str) {}
    fn one_line(&self, err: &(dyn std::error::Error + 'static)) -> String {
        err.to_string()
    }
}

/// The session of an initiator `[SESSION]` with `keys` added, opened as
/// the engine (`keep_sent`) or the load generator (not) opens it.
fn opened(keys: &str, keep_sent: bool) -> Session<AnyStore> {
    let text = format!(
        "[SESSION]\nConnectionType=initiator\nBeginString=FIX.4.4\nSenderCompID=A\n\
         TargetCompID=B\nSocketConnectHost=127.0.0.1\nSocketConnectPort=1\nHeartBtInt=30\n{keys}"
    );
    let s = Settings::parse(&text).unwrap().sessions.remove(0);
    let opening = Opening {
        recover: false,
        keep_sent,
        leasing: Leasing::None,
    };
    open_session(&s, &opening, &Quiet).unwrap()
}

/// What a session's memory store keeps: `None` every message.
fn kept(session: &Session<AnyStore>) -> Option<usize> {
    match session.store() {
        AnyStore::Memory(m) => m.kept(),
        other => panic!("not in memory: {other:?}"),
    }
}

/// A session in memory keeps every message sent unless its settings bound
/// it; the load generator keeps none of an unbounded store (its memory
/// would grow with every order) but does keep a bounded one.
#[test]
fn a_memory_store_window_is_kept_by_the_engine_and_the_load_generator() {
    let engine = opened("", true);
    assert_eq!(kept(&engine), None);
    assert!(engine.config().persist_messages);
    let load = opened("", false);
    assert!(!load.config().persist_messages);

    for keep_sent in [true, false] {
        let s = opened("PerfkitMemoryStoreWindow=1000\n", keep_sent);
        assert_eq!(kept(&s), Some(1024), "keep_sent {keep_sent}");
        assert!(s.config().persist_messages, "keep_sent {keep_sent}");
        assert_eq!(s.store().next_sender_seq(), 1);
    }
}
