//! `perfkit fix acceptor` as a process against strangers who would get
//! another session's store, floods of Logons, a descriptor limit, and two
//! engines given one store: no stranger ever sees another session's
//! messages, refused Logons leave nothing behind, and the configured
//! counterparty always logs on. Messages are framed by the tests' own
//! oracle (`perfkit_testkit::fix_wire`), not by perfkit.

use perfkit_testkit::fix_wire::frame_now as frame;
use perfkit_testkit::fix_wire::{connect, has, read_message};
use perfkit_testkit::process::{Running, free_port};
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// One test of this file at a time: each starts engines, floods them with
/// connections or runs one under a descriptor limit, and in a CI run the
/// first Logon of one, beside another, once met a reset that neither
/// shows alone.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

/// Writes `cfg` as `acceptor.cfg` in `dir` and starts the acceptor on it
/// with `args`, waiting until it listens on `port`.
fn start(dir: &Path, port: u16, cfg: &str, args: &[&str]) -> Running {
    std::fs::write(dir.join("acceptor.cfg"), cfg).unwrap();
    let mut cmd = perfkit();
    cmd.args(["fix", "acceptor", "acceptor.cfg"]).args(args);
    let running = Running::start_in(&mut cmd, dir, "stderr");
    drop(connect(port));
    running
}

/// Logs `them` on to `us` with MsgSeqNum `seq` (and `extra` fields);
/// the connection and the answer, `None` when closed without one.
fn logon(
    port: u16,
    them: &str,
    us: &str,
    seq: u64,
    extra: &str,
) -> (TcpStream, Option<Vec<String>>) {
    let mut c = connect(port);
    c.write_all(&frame(&format!(
        "35=A|34={seq}|49={them}|52=NOW|56={us}|98=0|108=30|{extra}"
    )))
    .unwrap();
    let answer = read_message(&mut c);
    (c, answer)
}

/// Logs out on `c` (our next number `seq`) and waits for the reply.
fn logout(mut c: TcpStream, them: &str, us: &str, seq: u64) {
    c.write_all(&frame(&format!("35=5|34={seq}|49={them}|52=NOW|56={us}|")))
        .unwrap();
    while let Some(m) = read_message(&mut c) {
        if has(&m, "35=5") {
            break;
        }
    }
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| {
                let p = e.unwrap().path();
                let b = std::fs::read(&p).unwrap();
                (p, b)
            })
            .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Waits up to 10 s for `cond`.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < until, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `perfkit fix acceptor CFG ARGS...` in `dir`, which is to refuse
/// to start: its stderr, once it exited with 1 (within 30 s; one that runs
/// on fails the test rather than hang it).
fn refused(dir: &Path, cfg: &str, args: &[&str]) -> String {
    use std::process::Stdio;
    let child = perfkit()
        .current_dir(dir)
        .args(["fix", "acceptor", cfg])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(Duration::from_secs(30)) else {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        panic!(
            "perfkit fix acceptor {cfg} {args:?} still ran after 30 s instead of refusing to start"
        );
    };
    let out = out.unwrap();
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{said}");
    said
}

fn stderr_of(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("stderr")).unwrap()
}

fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// CPU seconds (user + system) the process has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // The fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the whole line.
    let ticks: u64 = f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
    // SAFETY: sysconf reads a constant of the system.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    ticks as f64 / hz
}

const TIMES: &str = "StartTime=00:00:00\nEndTime=00:00:00\n";

/// With `ACC-UAT` ← `BANK` and `ACC` ← `BANK` under qualifier UAT
/// configured, and a template `ACC` ← `*`, the strangers `UAT-BANK` and
/// `BANK-UAT` would be given those sessions' files (QuickFIX's names):
/// each is closed without an answer and one line, nothing of the
/// configured stores changes, and BANK carries on at its own numbers.
#[test]
fn a_stranger_never_gets_a_configured_sessions_store() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let cfg = format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nFileStorePath=store\n\
         FileLogPath=logs\nBeginString=FIX.4.4\n{TIMES}\n\
         [SESSION]\nSenderCompID=ACC-UAT\nTargetCompID=BANK\n\n\
         [SESSION]\nSenderCompID=ACC\nTargetCompID=BANK\nSessionQualifier=UAT\n\n\
         [SESSION]\nSenderCompID=ACC\nTargetCompID=*\nAcceptorTemplate=Y\n"
    );
    let mut acc = start(d, port, &cfg, &["--app", "exec"]);
    // BANK trades with ACC-UAT and with ACC, then logs out of both.
    for us in ["ACC-UAT", "ACC"] {
        let (mut c, answer) = logon(port, "BANK", us, 1, "");
        assert!(answer.is_some_and(|a| has(&a, "35=A")), "{us}");
        c.write_all(&frame(&format!(
            "35=D|34=2|49=BANK|52=NOW|56={us}|11=ORD-{us}|21=1|55=MSFT|54=1|60=NOW|40=1|38=100|"
        )))
        .unwrap();
        let mut fills = 0;
        while fills < 2 {
            let m = read_message(&mut c).expect("the exec application answers");
            if has(&m, "35=8") {
                fills += 1;
            }
        }
        logout(c, "BANK", us, 3);
    }
    let before = snapshot(&d.join("store"));
    assert!(before.len() >= 8, "{before:?}");
    // The strangers: UAT-BANK → ACC is FIX.4.4-ACC-UAT-BANK, BANK-UAT →
    // ACC is FIX.4.4-ACC-BANK-UAT; a second Logon at a later number too.
    for stranger in ["UAT-BANK", "BANK-UAT"] {
        for seq in [1, 3] {
            let (_, answer) = logon(port, stranger, "ACC", seq, "");
            assert!(answer.is_none(), "{stranger} was answered: {answer:?}");
        }
    }
    assert_eq!(
        snapshot(&d.join("store")),
        before,
        "a configured store changed"
    );
    let stderr = stderr_of(d);
    for (stranger, owner) in [
        ("ACC->UAT-BANK", "FIX.4.4:ACC-UAT->BANK"),
        ("ACC->BANK-UAT", "FIX.4.4:ACC->BANK:UAT"),
    ] {
        let line = format!("Session FIX.4.4:{stranger} from a template: its store files (");
        assert!(stderr.contains(&line), "{line}\n{stderr}");
        assert!(
            stderr.contains(&format!("are session {owner}'s")),
            "{stderr}"
        );
    }
    // The template still serves a stranger whose files are its own.
    let (c, answer) = logon(port, "OTHER", "ACC", 1, "");
    assert!(answer.is_some_and(|a| has(&a, "35=A") && has(&a, "56=OTHER")));
    logout(c, "OTHER", "ACC", 2);
    // BANK's sessions go on at their numbers: 4 of ours were sent each.
    for us in ["ACC-UAT", "ACC"] {
        let (c, answer) = logon(port, "BANK", us, 4, "");
        let answer = answer.unwrap_or_else(|| panic!("BANK refused by {us}"));
        assert!(
            has(&answer, "35=A") && has(&answer, "34=5"),
            "{us}: {answer:?}"
        );
        logout(c, "BANK", us, 5);
    }
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(acc.id() as i32, libc::SIGINT) }, 0);
    acc.wait().unwrap();
}

/// Across a restart the acceptor no longer remembers whose files are
/// whose: the store itself tells, by the CompIDs of the messages in it.
/// `X-Y` → `ACC` made `FIX.4.4-ACC-X-Y.*`; after a restart `Y` → `ACC-X`
/// (the same names) is closed without an answer and the files stay as
/// they were.
#[test]
fn after_a_restart_the_store_itself_refuses_a_stranger() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let cfg = format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nFileStorePath=store\n\
         BeginString=FIX.4.4\n{TIMES}\n\
         [SESSION]\nSenderCompID=*\nTargetCompID=*\nAcceptorTemplate=Y\n"
    );
    {
        let mut acc = start(d, port, &cfg, &[]);
        let (c, answer) = logon(port, "X-Y", "ACC", 1, "");
        assert!(answer.is_some_and(|a| has(&a, "35=A")));
        logout(c, "X-Y", "ACC", 2);
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(acc.id() as i32, libc::SIGINT) }, 0);
        acc.wait().unwrap();
    }
    let before = snapshot(&d.join("store"));
    assert!(
        before
            .iter()
            .any(|(p, _)| p.ends_with("FIX.4.4-ACC-X-Y.body"))
    );
    let _acc = start(d, port, &cfg, &[]);
    let (_, answer) = logon(port, "Y", "ACC-X", 1, "");
    assert!(answer.is_none(), "the stranger was answered: {answer:?}");
    assert_eq!(snapshot(&d.join("store")), before);
    let stderr = stderr_of(d);
    assert!(
        stderr.contains("is session FIX.4.4:ACC->X-Y's, not FIX.4.4:ACC-X->Y's"),
        "{stderr}"
    );
    // The owner is still served.
    let (_, answer) = logon(port, "X-Y", "ACC", 3, "");
    assert!(answer.is_some_and(|a| has(&a, "34=3")));
}

/// Two configured sessions whose files would coincide: the acceptor does
/// not start, and says which two sections.
#[test]
fn two_sessions_on_one_store_are_refused_at_start() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.cfg"),
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort=9\nFileStorePath=store\n\
         BeginString=FIX.4.4\n\n\
         [SESSION]\nSenderCompID=ACC-X\nTargetCompID=Y\n\n\
         [SESSION]\nSenderCompID=ACC\nTargetCompID=X-Y\n",
    )
    .unwrap();
    let said = refused(dir.path(), "a.cfg", &[]);
    assert!(
        said.contains("line 11: session FIX.4.4:ACC->X-Y's store files")
            && said.contains("would be session FIX.4.4:ACC-X->Y's too (line 7)"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(!dir.path().join("store").exists(), "files were made");
}

/// A second acceptor given a store another process serves refuses to
/// start, naming the file; once the first is gone, it starts.
#[test]
fn two_processes_never_serve_one_store() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (p1, p2) = (free_port(), free_port());
    let cfg = |port: u16| {
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nFileStorePath=store\n\
             BeginString=FIX.4.4\n{TIMES}\n[SESSION]\nSenderCompID=ISLD\nTargetCompID=TW\n"
        )
    };
    let mut first = start(d, p1, &cfg(p1), &[]);
    std::fs::write(d.join("second.cfg"), cfg(p2)).unwrap();
    let said = refused(d, "second.cfg", &[]);
    assert!(
        said.contains(
            "store/FIX.4.4-ISLD-TW.body: the store is held by another session or process"
        ),
        "{said}"
    );
    assert!(!said.contains("--recover-store"), "{said}");
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(first.id() as i32, libc::SIGKILL) }, 0);
    first.wait().unwrap();
    // A killed holder's lock goes with it.
    let mut cmd = perfkit();
    cmd.args(["fix", "acceptor", "second.cfg"]);
    let _second = Running::start_in(&mut cmd, d, "stderr2");
    let (_, answer) = logon(p2, "TW", "ISLD", 1, "");
    assert!(answer.is_some_and(|a| has(&a, "35=A")));
}

/// Logons for a template with a Password: two hundred wrong ones make no
/// session, no file and no lasting descriptor; good ones make sessions up
/// to the cap and no further (one line for the episode), a session that
/// disconnects gives its descriptors back and its place to the next, and
/// the configured counterparty logs on throughout.
#[test]
fn logon_floods_cost_nothing_and_dynamic_sessions_are_capped() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let cfg = format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nFileStorePath=store\n\
         FileLogPath=logs\nBeginString=FIX.4.4\n{TIMES}\n\
         [SESSION]\nSenderCompID=ISLD\nTargetCompID=TW\n\n\
         [SESSION]\nSenderCompID=ISLD\nTargetCompID=*\nAcceptorTemplate=Y\nPassword=secret\n"
    );
    let acc = start(d, port, &cfg, &["--max-dynamic-sessions", "3"]);
    let pid = acc.id();
    let store_files = || snapshot(&d.join("store")).len() + snapshot(&d.join("logs")).len();
    let (files, fds) = (store_files(), open_descriptors(pid));
    for n in 0..200 {
        let (_, answer) = logon(port, &format!("FLOOD{n}"), "ISLD", 1, "554=wrong|");
        assert!(answer.is_none(), "FLOOD{n} answered");
    }
    // A CompID that would hide what its files are, with the password.
    let (_, answer) = logon(port, "EVIL\u{202E}gpj", "ISLD", 1, "554=secret|");
    assert!(answer.is_none());
    eventually("descriptors back after the flood", || {
        open_descriptors(pid) <= fds + 2
    });
    assert_eq!(store_files(), files, "refused Logons made files");
    // Three sessions, the cap; two more refused without an answer.
    let mut live = Vec::new();
    for n in 0..3 {
        let (c, answer) = logon(port, &format!("C{n}"), "ISLD", 1, "554=secret|");
        assert!(answer.is_some_and(|a| has(&a, "35=A")), "C{n}");
        live.push(c);
    }
    for n in 3..5 {
        let (_, answer) = logon(port, &format!("C{n}"), "ISLD", 1, "554=secret|");
        assert!(answer.is_none(), "C{n} answered past the cap");
    }
    // The configured counterparty is not a template session: it is in.
    let (c, answer) = logon(port, "TW", "ISLD", 1, "");
    assert!(answer.is_some_and(|a| has(&a, "35=A")));
    logout(c, "TW", "ISLD", 2);
    // C0 leaves: its files close and C3 takes its place.
    let held = open_descriptors(pid);
    logout(live.remove(0), "C0", "ISLD", 2);
    eventually("C0's descriptors closed", || {
        open_descriptors(pid) + 6 <= held
    });
    let (_c3, answer) = logon(port, "C3", "ISLD", 1, "554=secret|");
    assert!(answer.is_some_and(|a| has(&a, "35=A")), "C3 after C0 left");
    let stderr = stderr_of(d);
    assert_eq!(
        stderr
            .matches("the most allowed (--max-dynamic-sessions)")
            .count(),
        1,
        "{stderr}"
    );
    assert!(
        stderr.contains("below their cap again: 2 Logon(s) refused"),
        "{stderr}"
    );
    assert!(stderr.contains("Invalid username or password"), "{stderr}");
    assert!(stderr.contains("bidirectional control"), "{stderr}");
    // C0 again, later: made again from its files, at its numbers.
    drop(live);
    eventually("a place free", || {
        let (_, a) = logon(port, "C0", "ISLD", 3, "554=secret|");
        a.is_some_and(|a| has(&a, "34=3"))
    });
}

/// Under `ulimit -n 64`, with hundreds of idle strangers connecting and
/// template sessions taking what they can: the acceptor neither spins nor
/// floods its log, and the configured counterparty still logs on.
#[test]
fn out_of_descriptors_the_acceptor_degrades_and_never_spins() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let cfg = format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nFileStorePath=store\n\
         FileLogPath=logs\nBeginString=FIX.4.4\nLogonTimeout=30\n{TIMES}\n\
         [SESSION]\nSenderCompID=ISLD\nTargetCompID=TW\n\n\
         [SESSION]\nSenderCompID=ISLD\nTargetCompID=*\nAcceptorTemplate=Y\n"
    );
    std::fs::write(d.join("acceptor.cfg"), &cfg).unwrap();
    let mut cmd = Command::new("sh");
    cmd.args([
        "-c",
        "ulimit -n 64 && exec \"$0\" fix acceptor acceptor.cfg",
    ])
    .arg(env!("CARGO_BIN_EXE_perfkit"));
    let acc = Running::start_in(&mut cmd, d, "stderr");
    let pid = acc.id();
    drop(connect(port));
    // Template sessions until the descriptors' reserve stops them.
    let mut sessions = Vec::new();
    for n in 0..20 {
        let (c, answer) = logon(port, &format!("T{n}"), "ISLD", 1, "");
        if answer.is_some() {
            sessions.push(c);
        }
    }
    assert!(
        !sessions.is_empty() && sessions.len() < 20,
        "{} made",
        sessions.len()
    );
    // Idle strangers, far past the limit.
    let cpu = cpu_seconds(pid);
    let start = Instant::now();
    let mut idle = Vec::new();
    for _ in 0..300 {
        if let Ok(c) = TcpStream::connect(("127.0.0.1", port)) {
            idle.push(c);
        }
    }
    std::thread::sleep(Duration::from_secs(3));
    let spent = cpu_seconds(pid) - cpu;
    let wall = start.elapsed().as_secs_f64();
    assert!(
        spent < 0.5 * wall,
        "{spent:.2} s of CPU in {wall:.2} s with the descriptors exhausted"
    );
    // The configured counterparty among them.
    let (c, answer) = logon(port, "TW", "ISLD", 1, "");
    assert!(answer.is_some_and(|a| has(&a, "35=A")), "TW locked out");
    logout(c, "TW", "ISLD", 2);
    let stderr = stderr_of(d);
    assert!(
        stderr.lines().count() < 400,
        "{} lines",
        stderr.lines().count()
    );
    assert!(stderr.contains("too few descriptors are left"), "{stderr}");
    drop(idle);
}

/// `LogonTimeout=0`, which would close every connection before its
/// Logon, stops the acceptor at start naming the line.
#[test]
fn a_logon_timeout_of_zero_is_refused_at_start() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("a.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort=9\nBeginString=FIX.4.4\n\
             LogonTimeout=0\n{TIMES}\n[SESSION]\nSenderCompID=ISLD\nTargetCompID=TW\n"
        ),
    )
    .unwrap();
    let said = refused(dir.path(), "a.cfg", &[]);
    assert!(
        said.contains("line 5: bad value \"0\" for LogonTimeout: must be at least 1 second"),
        "{said}"
    );
}

/// A damaged `.session` stops a start with the hint to recover; the
/// recovery writes it anew and keeps the numbers. An I/O error is said
/// as one, with the path and the OS's words, and no such hint.
#[test]
fn a_damaged_session_file_is_recovered_and_io_errors_say_so() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let cfg = format!(
        "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\nFileStorePath=store\n\
         BeginString=FIX.4.4\n{TIMES}\n[SESSION]\nSenderCompID=ISLD\nTargetCompID=TW\n"
    );
    {
        let mut acc = start(d, port, &cfg, &[]);
        let (c, answer) = logon(port, "TW", "ISLD", 1, "");
        assert!(answer.is_some(), "{}", stderr_of(d));
        logout(c, "TW", "ISLD", 2);
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(acc.id() as i32, libc::SIGINT) }, 0);
        acc.wait().unwrap();
    }
    let session = d.join("store/FIX.4.4-ISLD-TW.session");
    // QuickFIX's forms are read as they are.
    for form in ["29991231-23:59:59", "20261126-01:02:03.123"] {
        std::fs::write(&session, form).unwrap();
        let mut acc = start(d, port, &cfg, &[]);
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(acc.id() as i32, libc::SIGINT) }, 0);
        acc.wait().unwrap();
        assert_eq!(std::fs::read_to_string(&session).unwrap(), form);
    }
    std::fs::write(&session, "garbage").unwrap();
    let said = refused(d, "acceptor.cfg", &[]);
    assert!(
        said.contains("FIX.4.4-ISLD-TW.session") && said.contains("--recover-store"),
        "{said}"
    );
    let _acc = start(d, port, &cfg, &["--recover-store"]);
    let (_, answer) = logon(port, "TW", "ISLD", 3, "");
    assert!(answer.is_some_and(|a| has(&a, "34=3")), "numbers kept");
    let text = std::fs::read_to_string(&session).unwrap();
    assert!(text.len() == 17 && text.as_bytes()[8] == b'-', "{text:?}");
    assert!(stderr_of(d).contains("written anew"));
    drop(_acc);
    // An I/O error: the header is a directory.
    let header = d.join("store/FIX.4.4-ISLD-TW.header");
    std::fs::remove_file(&header).unwrap();
    std::fs::create_dir(&header).unwrap();
    for extra in [&[][..], &["--recover-store"][..]] {
        let said = refused(d, "acceptor.cfg", extra);
        assert!(
            said.contains("FIX.4.4-ISLD-TW.header: I/O error (open): Is a directory"),
            "{said}"
        );
        assert!(!said.contains("--recover-store"), "{said}");
    }
}
