//! `perfkit fix acceptor` as a process, driven by a client written here
//! (framed by the tests' own oracle, `perfkit_testkit::fix_wire`, not by perfkit): the exec application answers an order,
//! Ctrl-C logs the session out, the message log passes `fix check`, and
//! after `kill -9` a restarted acceptor resumes its sequence numbers from
//! its file store and serves a ResendRequest from disk.

use perfkit_testkit::fix_wire::frame_now as frame;
use perfkit_testkit::fix_wire::quickfix_spec;
use perfkit_testkit::fix_wire::{connect, has, read_message};
use perfkit_testkit::process::{Running, free_port};

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

fn start(dir: &Path, port: u16, reset: bool) -> Running {
    std::fs::write(
        dir.join("acceptor.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nSenderCompID=ISLD\n\
             FileStorePath={}\nResetOnLogon={}\n\n[SESSION]\nBeginString=FIX.4.4\nTargetCompID=TW\n",
            dir.join("store").display(),
            if reset { "Y" } else { "N" }
        ),
    )
    .unwrap();
    perfkit()
        .current_dir(dir)
        .args([
            "fix",
            "acceptor",
            "acceptor.cfg",
            "--app",
            "exec",
            "--log",
            "messages.log",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(Running)
        .unwrap()
}

#[test]
fn exec_acceptor_answers_logs_out_on_ctrl_c_and_resumes_after_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let mut acceptor = start(d, port, false);
    let mut c = connect(port);
    c.write_all(&frame("35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|"))
        .unwrap();
    let logon = read_message(&mut c).unwrap();
    assert!(has(&logon, "35=A") && has(&logon, "34=1"), "{logon:?}");
    c.write_all(&frame(
        "35=D|34=2|49=TW|52=NOW|56=ISLD|11=ORD1|21=1|55=MSFT|54=1|60=NOW|40=2|44=10.5|38=100|",
    ))
    .unwrap();
    let new = read_message(&mut c).unwrap();
    let filled = read_message(&mut c).unwrap();
    for (m, status, seq) in [(&new, "39=0", "34=2"), (&filled, "39=2", "34=3")] {
        assert!(has(m, "35=8") && has(m, status) && has(m, seq), "{m:?}");
        assert!(has(m, "11=ORD1") && has(m, "55=MSFT"), "{m:?}");
    }
    assert!(
        has(&filled, "14=100") && has(&filled, "31=10.5"),
        "{filled:?}"
    );

    // kill -9: no logout, nothing flushed by the process itself.
    acceptor.kill().unwrap();
    acceptor.wait().unwrap();
    drop(c);
    let mut acceptor = start(d, port, false);
    let mut c = connect(port);
    // The restarted acceptor expects 3 from us and sends 4 next; we ask
    // for everything it sent from 2 on.
    c.write_all(&frame("35=A|34=3|49=TW|52=NOW|56=ISLD|98=0|108=30|"))
        .unwrap();
    let logon = read_message(&mut c).unwrap();
    assert!(has(&logon, "35=A") && has(&logon, "34=4"), "{logon:?}");
    c.write_all(&frame("35=2|34=4|49=TW|52=NOW|56=ISLD|7=2|16=0|"))
        .unwrap();
    let r2 = read_message(&mut c).unwrap();
    let r3 = read_message(&mut c).unwrap();
    let gap = read_message(&mut c).unwrap();
    for (m, seq, status) in [(&r2, "34=2", "39=0"), (&r3, "34=3", "39=2")] {
        assert!(has(m, "35=8") && has(m, seq) && has(m, status), "{m:?}");
        assert!(
            has(m, "43=Y") && m.iter().any(|f| f.starts_with("122=")),
            "{m:?}"
        );
    }
    // Its own Logon (4) is an admin message: gap-filled to 5.
    assert!(
        has(&gap, "35=4") && has(&gap, "34=4") && has(&gap, "123=Y") && has(&gap, "36=5"),
        "{gap:?}"
    );

    // Ctrl-C: the acceptor logs out, we answer, it exits 130 (128 +
    // SIGINT, as docs/exit-codes.md says) after that clean logout.
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(acceptor.id() as i32, libc::SIGINT) }, 0);
    let logout = read_message(&mut c).unwrap();
    assert!(has(&logout, "35=5") && has(&logout, "34=5"), "{logout:?}");
    c.write_all(&frame("35=5|34=5|49=TW|52=NOW|56=ISLD|"))
        .unwrap();
    assert!(read_message(&mut c).is_none());
    let status = acceptor.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");

    let check = perfkit()
        .current_dir(d)
        .args(["fix", "check", "messages.log"])
        .output()
        .unwrap();
    assert!(check.status.success(), "{check:?}");
    let summary = String::from_utf8_lossy(&check.stdout);
    assert!(summary.contains("0 invalid"), "{summary}");
}

/// `frame` for session `n`'s CompIDs.
fn frame_from(client: &str, fields: &str) -> Vec<u8> {
    frame(&fields.replace("49=TW", &format!("49={client}")))
}

#[test]
fn one_acceptor_serves_two_hundred_concurrent_sessions() {
    const SESSIONS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let mut cfg = format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nSenderCompID=ISLD\n\
         BeginString=FIX.4.4\nResetOnLogon=Y\n"
    );
    for n in 0..SESSIONS {
        cfg.push_str(&format!("\n[SESSION]\nTargetCompID=C{n}\n"));
    }
    std::fs::write(d.join("many.cfg"), cfg).unwrap();
    let mut acceptor = perfkit()
        .current_dir(d)
        .args(["fix", "acceptor", "many.cfg", "--app", "exec"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(Running)
        .unwrap();
    // Every client logs on before any sends its order, so all 200 are
    // connected at once.
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(SESSIONS));
    let clients: Vec<_> = (0..SESSIONS)
        .map(|n| {
            let barrier = std::sync::Arc::clone(&barrier);
            std::thread::spawn(move || {
                let me = format!("C{n}");
                let mut c = connect(port);
                c.write_all(&frame_from(
                    &me,
                    "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|",
                ))
                .unwrap();
                let logon = read_message(&mut c).unwrap();
                assert!(
                    has(&logon, "35=A") && has(&logon, &format!("56={me}")),
                    "{logon:?}"
                );
                barrier.wait();
                c.write_all(&frame_from(
                    &me,
                    "35=D|34=2|49=TW|52=NOW|56=ISLD|11=X|21=1|55=MSFT|54=1|60=NOW|40=1|38=7|",
                ))
                .unwrap();
                for status in ["39=0", "39=2"] {
                    let er = read_message(&mut c).unwrap();
                    assert!(has(&er, "35=8") && has(&er, status), "{me}: {er:?}");
                    assert!(has(&er, &format!("56={me}")), "{me}: {er:?}");
                }
                c.write_all(&frame_from(&me, "35=5|34=3|49=TW|52=NOW|56=ISLD|"))
                    .unwrap();
                let logout = read_message(&mut c).unwrap();
                assert!(has(&logout, "35=5"), "{me}: {logout:?}");
                assert!(read_message(&mut c).is_none());
            })
        })
        .collect();
    for c in clients {
        c.join().unwrap();
    }
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(acceptor.id() as i32, libc::SIGINT) }, 0);
    assert_eq!(acceptor.wait().unwrap().code(), Some(130));
}

#[test]
fn the_shipped_acceptance_settings_validate_as_their_sessions_say() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(spec) = quickfix_spec() else {
        return;
    };
    std::os::unix::fs::symlink(spec, d.join("spec")).unwrap();
    let port = free_port();
    let shipped = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fix/acceptance.cfg"),
    )
    .unwrap();
    std::fs::write(
        d.join("acceptance.cfg"),
        shipped.replace("SocketAcceptPort=5001", &format!("SocketAcceptPort={port}")),
    )
    .unwrap();
    let mut acceptor = perfkit()
        .current_dir(d)
        .args(["fix", "acceptor", "acceptance.cfg", "--app", "echo"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(Running)
        .unwrap();
    // An order with an empty Text(58): TW44 rejects it (reason 4),
    // NO_CHECK_FIELDS_HAVE_VALUES echoes it.
    for (me, empty_ok) in [("TW44", false), ("NO_CHECK_FIELDS_HAVE_VALUES", true)] {
        let mut c = connect(port);
        c.write_all(&frame_from(
            me,
            "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|",
        ))
        .unwrap();
        let logon = read_message(&mut c).unwrap();
        assert!(
            has(&logon, "35=A") && has(&logon, &format!("56={me}")),
            "{logon:?}"
        );
        c.write_all(&frame_from(
            me,
            "35=D|34=2|49=TW|52=NOW|56=ISLD|11=X|21=1|55=MSFT|54=1|60=NOW|40=1|38=7|58=|",
        ))
        .unwrap();
        let answer = read_message(&mut c).unwrap();
        if empty_ok {
            assert!(
                has(&answer, "35=D") && has(&answer, "11=X"),
                "{me}: {answer:?}"
            );
        } else {
            assert!(
                has(&answer, "35=3") && has(&answer, "373=4"),
                "{me}: {answer:?}"
            );
            assert!(has(&answer, "371=58"), "{me}: {answer:?}");
        }
        c.write_all(&frame_from(me, "35=5|34=3|49=TW|52=NOW|56=ISLD|"))
            .unwrap();
        assert!(has(&read_message(&mut c).unwrap(), "35=5"));
    }
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(acceptor.id() as i32, libc::SIGINT) }, 0);
    assert_eq!(acceptor.wait().unwrap().code(), Some(130));
}

/// A session with `Username`/`Password`: a flood of Logons with wrong
/// passwords (and one with a CompID no session has) while a legitimate
/// session is logged on. Each wrong Logon gets QuickFIX's RejectLogon
/// answer (a Logout with the reason, then the connection closed) and a log
/// line; the stranger is closed unanswered; the live session keeps
/// trading throughout.
#[test]
fn a_flood_of_wrong_passwords_is_refused_without_disturbing_the_live_session() {
    const FLOOD: usize = 40;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    std::fs::write(
        d.join("guarded.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nSenderCompID=ISLD\n\
             BeginString=FIX.4.4\nResetOnLogon=Y\nUsername=trader1\nPassword=s3cret\n\n\
             [SESSION]\nTargetCompID=TW\n\n[SESSION]\nTargetCompID=TX\n"
        ),
    )
    .unwrap();
    let mut acceptor = Running::start_in(
        perfkit().args(["fix", "acceptor", "guarded.cfg", "--app", "exec"]),
        d,
        "events.log",
    );
    let mut live = connect(port);
    live.write_all(&frame(
        "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|553=trader1|554=s3cret|",
    ))
    .unwrap();
    let logon = read_message(&mut live).unwrap();
    assert!(has(&logon, "35=A"), "{logon:?}");
    assert!(
        !logon.iter().any(|f| f.starts_with("554=")),
        "the answer must not echo the password: {logon:?}"
    );

    // One connection per session at a time (a second one is closed, as
    // QuickFIX's acceptor does), so the guesses on TX come one after the
    // other, as fast as they are answered; the stranger comes beside them.
    let flood: Vec<_> = (0..2)
        .map(|kind| {
            std::thread::spawn(move || {
                if kind == 0 {
                    // A CompID no session has: closed without a word.
                    let mut c = connect(port);
                    c.write_all(&frame_from(
                        "NOBODY",
                        "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|553=trader1|554=s3cret|",
                    ))
                    .unwrap();
                    assert!(read_message(&mut c).is_none());
                    return;
                }
                for n in 1..FLOOD {
                    let mut c = connect(port);
                    c.write_all(&frame_from(
                    "TX",
                    &format!(
                        "35=A|34=1|49=TW|52=NOW|56=ISLD|98=0|108=30|141=Y|553=trader1|554=guess{n}|"
                    ),
                ))
                .unwrap();
                    let logout = read_message(&mut c).unwrap();
                    assert!(
                        has(&logout, "35=5") && has(&logout, "58=Invalid username or password"),
                        "{logout:?}"
                    );
                    assert!(read_message(&mut c).is_none(), "the connection stays open");
                }
            })
        })
        .collect();
    // Orders on the live session while the flood runs.
    for (i, seq) in (2..12).enumerate() {
        live.write_all(&frame(&format!(
            "35=D|34={seq}|49=TW|52=NOW|56=ISLD|11=L{i}|21=1|55=MSFT|54=1|60=NOW|40=1|38=5|"
        )))
        .unwrap();
        for status in ["39=0", "39=2"] {
            let er = read_message(&mut live).unwrap();
            assert!(has(&er, "35=8") && has(&er, status), "{er:?}");
            assert!(has(&er, &format!("11=L{i}")), "{er:?}");
        }
    }
    for c in flood {
        c.join().unwrap();
    }
    live.write_all(&frame("35=5|34=12|49=TW|52=NOW|56=ISLD|"))
        .unwrap();
    let logout = read_message(&mut live).unwrap();
    assert!(has(&logout, "35=5"), "{logout:?}");
    // SAFETY: kill(2) on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(acceptor.id() as i32, libc::SIGINT) }, 0);
    assert_eq!(acceptor.wait().unwrap().code(), Some(130));
    let events = std::fs::read_to_string(d.join("events.log")).unwrap();
    let refused = events
        .lines()
        .filter(|l| l.contains("Logon rejected: Invalid username or password"))
        .count();
    assert_eq!(refused, FLOOD - 1, "{events}");
}
