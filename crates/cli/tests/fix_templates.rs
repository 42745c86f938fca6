//! QuickFIX/J's `AcceptorTemplate=Y` through `perfkit fix acceptor`: a
//! Logon whose CompIDs match a template session gets a session of its own,
//! with its own store in QuickFIX's file layout, kept for that
//! counterparty's next connection; a Logon outside every template is
//! dropped with a line naming its CompIDs, as QuickFIX/J drops an unknown
//! session.

use perfkit_testkit::fix_wire::frame_now as frame;
use perfkit_testkit::fix_wire::{connect, has, read_message};
use perfkit_testkit::process::{Running, free_port};
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;

/// An acceptor serving one template: ours EXEC, theirs any.
fn start(dir: &Path, port: u16) -> Running {
    std::fs::write(
        dir.join("acceptor.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nFileStorePath=store\n\
             StartTime=00:00:00\nEndTime=00:00:00\n\n\
             [SESSION]\nBeginString=FIX.4.4\nSenderCompID=EXEC\nTargetCompID=*\nAcceptorTemplate=Y\n"
        ),
    )
    .unwrap();
    Running::start_in(
        Command::new(env!("CARGO_BIN_EXE_perfkit")).args(["fix", "acceptor", "acceptor.cfg"]),
        dir,
        "stderr",
    )
}

/// Logs `them` on with MsgSeqNum `seq` and asks for a heartbeat; returns
/// the connection and the Logon's answer.
fn logon(port: u16, them: &str, ours: &str, seq: u32) -> (TcpStream, Option<Vec<String>>) {
    let mut c = connect(port);
    c.write_all(&frame(&format!(
        "35=A|34={seq}|49={them}|52=NOW|56={ours}|98=0|108=30|"
    )))
    .unwrap();
    let answer = read_message(&mut c);
    (c, answer)
}

/// The next sender and target numbers a `.seqnums` file holds.
fn seqnums(path: &Path) -> (u64, u64) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (a, b) = text.split_once(':').unwrap();
    (a.trim().parse().unwrap(), b.trim().parse().unwrap())
}

#[test]
fn fifty_counterparties_matching_a_template_each_get_a_session_and_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let mut acceptor = start(d, port);
    // Fifty at once, each answered under its own CompIDs and numbers.
    let mut open = Vec::new();
    for n in 0..50 {
        let them = format!("CLIENT{n}");
        let (mut c, answer) = logon(port, &them, "EXEC", 1);
        let answer = answer.unwrap_or_else(|| panic!("{them}: no Logon answer"));
        assert!(
            has(&answer, "35=A") && has(&answer, &format!("56={them}")),
            "{answer:?}"
        );
        c.write_all(&frame(&format!(
            "35=1|34=2|49={them}|52=NOW|56=EXEC|112=ping{n}|"
        )))
        .unwrap();
        let hb = read_message(&mut c).unwrap();
        assert!(
            has(&hb, &format!("112=ping{n}")) && has(&hb, "34=2"),
            "{hb:?}"
        );
        open.push(c);
    }
    // Outside the template (not to EXEC): dropped without an answer.
    let (_, answer) = logon(port, "STRANGER", "NOTEXEC", 1);
    assert!(answer.is_none(), "{answer:?}");
    // Matching it but refused, before any session is made: a CompID that
    // would lead out of the store's directory, and a bad CheckSum.
    let (_, answer) = logon(port, "../OUT", "EXEC", 1);
    assert!(answer.is_none(), "{answer:?}");
    let mut bad = frame("35=A|34=1|49=BADSUM|52=NOW|56=EXEC|98=0|108=30|");
    let n = bad.len();
    let wrong: &[u8] = if &bad[n - 4..n - 1] == b"000" {
        b"001"
    } else {
        b"000"
    };
    bad[n - 4..n - 1].copy_from_slice(wrong);
    let mut c = connect(port);
    c.write_all(&bad).unwrap();
    assert!(read_message(&mut c).is_none());
    // A counterparty back again finds its session and store: the Logon is
    // answered with the next number, 3.
    for c in open.drain(..10) {
        drop(c);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (_again, answer) = logon(port, "CLIENT3", "EXEC", 3);
    let answer = answer.expect("CLIENT3's second Logon answered");
    assert!(has(&answer, "35=A") && has(&answer, "34=3"), "{answer:?}");
    // SAFETY: kill(2) on the child's pid; no memory is involved.
    assert_eq!(unsafe { libc::kill(acceptor.id() as i32, libc::SIGINT) }, 0);
    drop(open);
    drop(_again);
    assert_eq!(acceptor.wait().unwrap().code(), Some(130));
    // Each its own store, under its CompIDs, with its own numbers.
    for n in 0..50 {
        let file = d.join(format!("store/FIX.4.4-EXEC-CLIENT{n}.seqnums"));
        let (sender, target) = seqnums(&file);
        // Logon and heartbeat answered (and a Logout on the way out for
        // those still connected); Logon and TestRequest taken.
        let expected_target = if n == 3 { 4 } else { 3 };
        assert!(sender >= 3, "CLIENT{n}: {sender}");
        assert_eq!(target, expected_target, "CLIENT{n}");
    }
    assert!(!d.join("store/FIX.4.4-NOTEXEC-STRANGER.seqnums").exists());
    assert!(!d.join("store/FIX.4.4-EXEC-BADSUM.seqnums").exists());
    let stderr = std::fs::read_to_string(d.join("stderr")).unwrap();
    assert!(
        stderr.contains("Unknown session: FIX.4.4:NOTEXEC->STRANGER"),
        "{stderr}"
    );
    assert!(
        stderr.contains("CompID \"../OUT\" names the store and log files")
            && stderr.contains("bad CheckSum"),
        "{stderr}"
    );
    // Fifty sessions made, and CLIENT3's made again from its files: a
    // session between connections holds none open.
    assert_eq!(
        stderr.matches("session made from the template").count(),
        51,
        "{stderr}"
    );
    assert_eq!(
        stderr
            .matches("FIX.4.4:EXEC->CLIENT3: session made from the template")
            .count(),
        2,
        "{stderr}"
    );
}

#[test]
fn a_template_on_an_initiator_is_refused_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("i.cfg"),
        "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
         SocketConnectPort=9\nHeartBtInt=30\nStartTime=00:00:00\nEndTime=00:00:00\n\n\
         [SESSION]\nBeginString=FIX.4.4\nSenderCompID=A\nTargetCompID=*\nAcceptorTemplate=Y\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_perfkit"))
        .current_dir(dir.path())
        .args(["fix", "initiator", "i.cfg"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{said}");
    assert!(
        said.contains("line 9") && said.contains("AcceptorTemplate"),
        "{said}"
    );
}
