//! Fenced failover between two `perfkit fix acceptor` engines on one
//! PostgreSQL database (a real server, started by perfkit-testkit), with
//! `perfkit fix initiator` knowing both addresses: at seeded random
//! points the engine serving is killed (`kill -9`, then started again as
//! the standby) or stopped (`SIGSTOP`, then `SIGCONT`: briefly, or past
//! the lease's expiry), and the other takes the session over.
//!
//! The oracles are independent of the engines' own words:
//! - each initiator run's order ledger (its `--log`): every order
//!   answered, none twice afresh;
//! - the wire (every message the initiator received) and the database's
//!   log table (every message either engine logged as sent): no
//!   MsgSeqNum sent afresh twice; a copy is PossDupFlag=Y or a
//!   SequenceReset-GapFill;
//! - the `messages` table: each number's row is the message the
//!   initiator received afresh under it;
//! - the `sessions` row: the initiator's numbers at the end.
//!
//! The seed is printed; `PERFKIT_FAILOVER_SEED=N` repeats a run. The
//! same once more with QuickFIX/C++'s initiator (the peer `cargo xtask
//! peers` builds), through one kill and one stop past the expiry.
//!
//! Besides: lease rows edited by hand (epochs of 0, below, and at the
//! ends of BIGINT) are taken over or refused in one line, and a Logon
//! that arrives during the keeper's start-up wait is answered.

mod engines;
mod interop;
mod order_ledger;

use engines::{
    Acceptor, acceptor, acceptor_cfg_with, check, db_seqs, initiator, initiator_cfg_with, stderr_of,
};
use perfkit_testkit::noise::Rng;
use perfkit_testkit::postgres::{DATABASE, Postgres};
use perfkit_testkit::process::{Running, free_port};

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// Events in a run: each a failover or a pause the session rides out.
const EVENTS: usize = 12;

/// Orders per initiator run; runs follow one another until the events
/// are done, so the test's length does not hang on the machine's speed.
const RUN_ORDERS: u64 = 4_000;

/// What happens to the engine serving.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Event {
    /// `kill -9`, then started again (the new standby).
    Kill,
    /// `SIGSTOP` for this long, then `SIGCONT`. Past the lease's expiry
    /// (3 s at HeartBtInt=1) the other engine takes over and the resumed
    /// one must find itself fenced.
    Stop(Duration),
}

fn seed() -> u64 {
    match std::env::var("PERFKIT_FAILOVER_SEED") {
        Ok(s) => s.parse().expect("PERFKIT_FAILOVER_SEED is a number"),
        Err(_) => {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos() as u64
                | 1
        }
    }
}

/// The events of a run, in the seed's order: six kills, three stops
/// past the expiry, three short ones.
fn events(rng: &mut Rng) -> Vec<Event> {
    let mut v = Vec::new();
    for _ in 0..6 {
        v.push(Event::Kill);
    }
    for _ in 0..3 {
        v.push(Event::Stop(Duration::from_millis(4_000 + rng.below(2_000))));
        v.push(Event::Stop(Duration::from_millis(200 + rng.below(1_000))));
    }
    for i in (1..v.len()).rev() {
        v.swap(i, rng.below(i as u64 + 1) as usize);
    }
    assert_eq!(v.len(), EVENTS);
    v
}

/// The two acceptors' settings in `d`: one session, its store and log
/// in `pg`, heartbeats every second; their file names and ports.
fn pair_settings(d: &Path, pg: &Postgres) -> ([&'static str; 2], [u16; 2]) {
    let ports = [free_port(), free_port()];
    let cfgs = ["a.cfg", "b.cfg"];
    for (cfg, port) in cfgs.iter().zip(ports) {
        acceptor_cfg_with(d, cfg, port, pg, "HeartBtInt=1\n");
    }
    (cfgs, ports)
}

/// Lines in which `engine` says it found itself fenced, either way: its
/// lease keeper's renewal refused ("lease lost"), or, first, its
/// connection (a store write that found the epoch moved on, or a look at
/// the lease's standing), after which it stops serving the session before
/// the keeper looks again.
fn fenced_lines(engine: &Acceptor) -> usize {
    let err = engine.stderr();
    err.matches("lease lost").count()
        + err
            .matches("this engine no longer holds the session's lease")
            .count()
}

fn signal(child: &Running, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig}");
}

/// The initiator's runs, one after another in `dir`.
struct Runs<'a> {
    dir: &'a Path,
    /// The run going on.
    init: Running,
    /// Runs finished and checked.
    done: usize,
}

impl Runs<'_> {
    fn log(&self, n: usize) -> std::path::PathBuf {
        self.dir.join(format!("initiator-{n}.log"))
    }

    /// The current run's order ledger is checked once it ends, and the
    /// next run starts.
    fn next_if_done(&mut self) {
        if self.init.try_wait().unwrap().is_none() {
            return;
        }
        let next = initiator(self.dir, RUN_ORDERS, &self.log(self.done + 1));
        let ended = std::mem::replace(&mut self.init, next);
        check(
            ended,
            RUN_ORDERS,
            &self.log(self.done),
            Duration::from_secs(5),
        );
        self.done += 1;
    }

    /// Waits up to `limit` for a Logon on either engine, starting runs
    /// as they end; which engine.
    fn next_logon(&mut self, engines: &[Acceptor; 2], limit: Duration) -> Option<usize> {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            self.next_if_done();
            for (i, e) in engines.iter().enumerate() {
                if e.logons.try_recv().is_ok() {
                    return Some(i);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

/// Kills the initiator and returns its stderr, for a failure's message.
fn ended(mut init: Running, log: &Path) -> String {
    let _ = init.kill();
    let _ = init.wait();
    std::fs::read_to_string(stderr_of(log)).unwrap_or_default()
}

/// A message's field `tag`.
fn field<'a>(msg: &'a str, tag: &str) -> Option<&'a str> {
    msg.split('\x01')
        .find_map(|f| f.strip_prefix(tag).and_then(|v| v.strip_prefix('=')))
}

/// Whether `msg` is sent afresh: neither a PossDup copy nor a gap fill.
fn fresh(msg: &str) -> bool {
    field(msg, "43") != Some("Y")
        && !(field(msg, "35") == Some("4") && field(msg, "123") == Some("Y"))
}

/// Every message EXEC sent afresh, by MsgSeqNum, from `msgs`; a number
/// sent afresh twice is an error naming both.
fn fresh_by_seq<'a>(msgs: impl Iterator<Item = &'a str>, whose: &str) -> HashMap<u64, &'a str> {
    let mut seen: HashMap<u64, &str> = HashMap::new();
    for m in msgs.filter(|m| fresh(m)) {
        let seq: u64 = field(m, "34").unwrap().parse().unwrap();
        if let Some(first) = seen.insert(seq, m) {
            panic!("{whose}: MsgSeqNum {seq} sent afresh twice:\n{first:?}\n{m:?}");
        }
    }
    seen
}

/// The messages received in initiator message log `log`.
fn received(log: &Path) -> Vec<String> {
    String::from_utf8_lossy(&std::fs::read(log).unwrap())
        .lines()
        .filter_map(|l| l.find(" <- ").map(|i| l[i + 4..].to_string()))
        .collect()
}

/// Two engines, one database, a dozen failovers and pauses under an
/// order flood: no order lost, none answered twice afresh, and no
/// sequence number given out twice by the two engines.
#[test]
fn two_engines_on_one_database_never_serve_a_session_at_once() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let seed = seed();
    eprintln!("failover seed {seed} (PERFKIT_FAILOVER_SEED={seed} repeats the run)");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cfgs, ports) = pair_settings(d, &pg);
    // A Logon that gets no answer (a stopped engine's kernel still takes
    // the connection) is given up after 2 s, not QuickFIX's 10.
    initiator_cfg_with(d, &ports, "HeartBtInt=1\nLogonTimeout=2\n");
    let mut engines = [acceptor(d, cfgs[0]), acceptor(d, cfgs[1])];
    for (e, port) in engines.iter().zip(ports) {
        e.listening(port);
    }

    let mut runs = Runs {
        dir: d,
        init: initiator(d, RUN_ORDERS, &d.join("initiator-0.log")),
        done: 0,
    };
    let mut fenced_resumes = 0;
    let plan = events(&mut rng);
    let mut serving = runs
        .next_logon(&engines, Duration::from_secs(30))
        .unwrap_or_else(|| panic!("seed {seed}: no engine logged on"));
    for (n, event) in plan.iter().enumerate() {
        // Orders flow for a while.
        std::thread::sleep(Duration::from_millis(50 + rng.below(400)));
        runs.next_if_done();
        eprintln!("event {n}: {event:?} engine {serving}");
        let other = 1 - serving;
        match *event {
            Event::Kill => {
                engines[serving].child.kill().unwrap();
                engines[serving].child.wait().unwrap();
                engines[serving] = acceptor(d, cfgs[serving]);
                engines[serving].listening(ports[serving]);
            }
            Event::Stop(pause) => {
                let taken = |e: &Acceptor| e.stderr().matches("lease taken").count();
                let (taken_before, fenced_before) =
                    (taken(&engines[other]), fenced_lines(&engines[serving]));
                signal(&engines[serving].child, "-STOP");
                std::thread::sleep(pause);
                let taken_over = taken(&engines[other]) > taken_before;
                signal(&engines[serving].child, "-CONT");
                if taken_over {
                    // Resumed, the old holder learns it is fenced.
                    let until = Instant::now() + Duration::from_secs(10);
                    while fenced_lines(&engines[serving]) == fenced_before {
                        assert!(
                            Instant::now() < until,
                            "seed {seed}: engine {serving} resumed after a takeover without \
                             finding itself fenced:\n{}",
                            engines[serving].stderr()
                        );
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    fenced_resumes += 1;
                }
                if pause < Duration::from_secs(2) {
                    // A pause the session rides out: no new Logon needed.
                    continue;
                }
            }
        }
        serving = match runs.next_logon(&engines, Duration::from_secs(30)) {
            Some(i) => i,
            None => {
                let log = runs.log(runs.done);
                panic!(
                    "seed {seed}: no engine took the session after event {n} ({event:?})\n\
                     A:\n{}\nB:\n{}\ninitiator:\n{}",
                    engines[0].stderr(),
                    engines[1].stderr(),
                    ended(runs.init, &log)
                )
            }
        };
    }
    let last = runs.log(runs.done);
    let ((sender, target), _) = check(runs.init, RUN_ORDERS, &last, Duration::from_secs(120));
    let runs = runs.done + 1;
    assert_eq!(db_seqs(&pg), (sender, target), "seed {seed}");

    // The wire: what the initiator received over every run.
    let log_of = |n: usize| d.join(format!("initiator-{n}.log"));
    let wire: Vec<String> = (0..runs).flat_map(|n| received(&log_of(n))).collect();
    let compared = check_database(&pg, &wire, seed);
    assert!(
        compared > 1_000,
        "seed {seed}: only {compared} messages compared"
    );
    for e in &engines {
        assert!(!e.stderr().contains("panicked"), "{}", e.stderr());
    }
    eprintln!(
        "seed {seed}: {EVENTS} events, {runs} initiator runs, {fenced_resumes} resumed engines \
         fenced, {compared} stored messages matched the wire"
    );
}

/// What the database says either engine sent, checked against `wire`
/// (EXEC's messages the initiator received): no number sent afresh
/// twice in the log table, and each stored message the one received
/// afresh under its number. How many stored messages were compared.
fn check_database(pg: &Postgres, wire: &[String], seed: u64) -> usize {
    let on_wire = fresh_by_seq(wire.iter().map(String::as_str), "the wire");
    let logged = pg.psql(
        DATABASE,
        "SELECT text FROM messages_log WHERE text LIKE '%' || chr(1) || '49=EXEC' || chr(1) || '%'",
    );
    fresh_by_seq(logged.lines(), "the engines' log table");
    let stored = pg.psql(
        DATABASE,
        "SELECT msgseqnum || ' ' || message FROM messages WHERE sendercompid = 'EXEC'",
    );
    let mut compared = 0;
    for line in stored.lines() {
        let (seq, msg) = line.split_once(' ').unwrap();
        if let Some(sent) = on_wire.get(&seq.parse().unwrap()) {
            assert_eq!(msg, *sent, "seed {seed}: stored message {seq} differs");
            compared += 1;
        }
    }
    compared
}

const QUICKFIX_ORDERS: u64 = 40_000;

/// QuickFIX/C++'s initiator, both engines' addresses in its settings
/// (`SocketConnectHost1`), sends orders while the engine serving is
/// killed, and later stopped past the lease's expiry: it answers every
/// order (its own count, of distinct ClOrdIDs), its file log shows none
/// filled twice afresh, and the database and its log agree that no
/// number was given out twice.
#[test]
fn a_quickfix_initiator_rides_out_a_kill_and_a_stop() {
    let Some(qf) = interop::peer("quickfix-session", " (needs g++ libquickfix-dev)") else {
        return;
    };
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let seed = seed();
    eprintln!("failover seed {seed}");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (cfgs, ports) = pair_settings(d, &pg);
    std::fs::write(
        d.join("quickfix.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={}\nSocketConnectHost1=127.0.0.1\nSocketConnectPort1={}\n\
             ReconnectInterval=1\nHeartBtInt=1\nLogonTimeout=2\nStartTime=00:00:00\n\
             EndTime=00:00:00\nUseDataDictionary=N\nFileStorePath={}\nFileLogPath={}\n\n\
             [SESSION]\nBeginString=FIX.4.4\nSenderCompID=BANZAI\nTargetCompID=EXEC\n",
            ports[0],
            ports[1],
            d.join("qf-store").display(),
            d.join("qf-log").display()
        ),
    )
    .unwrap();
    let mut engines = [acceptor(d, cfgs[0]), acceptor(d, cfgs[1])];
    for (e, port) in engines.iter().zip(ports) {
        e.listening(port);
    }
    let mut qf_run = Command::new(&qf)
        .args(["initiator", "quickfix.cfg"])
        .arg(QUICKFIX_ORDERS.to_string())
        .arg("20")
        .current_dir(d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let logon = |engines: &[Acceptor; 2]| {
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            for (i, e) in engines.iter().enumerate() {
                if e.logons.try_recv().is_ok() {
                    return i;
                }
            }
            assert!(Instant::now() < until, "seed {seed}: no engine logged on");
            std::thread::sleep(Duration::from_millis(10));
        }
    };
    let running = |qf_run: &mut std::process::Child, what: &str| {
        assert!(
            qf_run.try_wait().unwrap().is_none(),
            "seed {seed}: QuickFIX was done before the {what}: raise QUICKFIX_ORDERS"
        );
    };
    let serving = logon(&engines);
    std::thread::sleep(Duration::from_millis(200 + rng.below(500)));
    running(&mut qf_run, "kill");
    engines[serving].child.kill().unwrap();
    engines[serving].child.wait().unwrap();
    engines[serving] = acceptor(d, cfgs[serving]);
    engines[serving].listening(ports[serving]);
    let serving = logon(&engines);
    std::thread::sleep(Duration::from_millis(200 + rng.below(500)));
    let fenced_before = fenced_lines(&engines[serving]);
    running(&mut qf_run, "stop");
    signal(&engines[serving].child, "-STOP");
    std::thread::sleep(Duration::from_millis(4_500));
    signal(&engines[serving].child, "-CONT");
    let until = Instant::now() + Duration::from_secs(90);
    while qf_run.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < until,
            "seed {seed}: QuickFIX did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = qf_run.wait_with_output().unwrap();
    let qf_out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "seed {seed}: QuickFIX: {qf_out}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        qf_out.contains(&format!("answered {QUICKFIX_ORDERS}")),
        "{qf_out}"
    );
    let until = Instant::now() + Duration::from_secs(10);
    while fenced_lines(&engines[serving]) == fenced_before {
        assert!(
            Instant::now() < until,
            "seed {seed}: the stopped engine was not fenced:\n{}",
            engines[serving].stderr()
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // QuickFIX's message log: both directions, one message a line.
    let text =
        std::fs::read_to_string(d.join("qf-log/FIX.4.4-BANZAI-EXEC.messages.current.log")).unwrap();
    let from_exec: Vec<String> = text
        .lines()
        .filter_map(|l| l.split_once(" : ").map(|(_, m)| m))
        .filter(|m| field(m, "49") == Some("EXEC"))
        .map(str::to_string)
        .collect();
    let mut fresh_fills: HashMap<&str, u32> = HashMap::new();
    for m in &from_exec {
        if field(m, "35") == Some("8") && field(m, "39") == Some("2") && fresh(m) {
            *fresh_fills.entry(field(m, "11").unwrap()).or_default() += 1;
        }
    }
    let twice: Vec<_> = fresh_fills.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "seed {seed}: filled afresh twice: {twice:?}"
    );
    let compared = check_database(&pg, &from_exec, seed);
    assert!(
        compared > 1_000,
        "seed {seed}: only {compared} messages compared"
    );
    // QuickFIX's next numbers are the database's, crossed.
    let (incoming, outgoing) = db_seqs(&pg);
    let seqs = qf_out
        .lines()
        .find_map(|l| l.strip_prefix("seqs "))
        .unwrap();
    assert_eq!(seqs, format!("{incoming} {outgoing}"), "seed {seed}");
}

/// Issue 63.3: whatever epoch a hand edit leaves in the lease row (0,
/// -5, i64::MIN with the expiry an hour ahead or past), an engine started
/// on it takes the lease at max(epoch, 0) + 1 and serves the session (an
/// order answered); from i64::MAX - 1 it takes i64::MAX, and the next
/// engine, which cannot raise that, says so in one line naming the row
/// however often it looks, and closes each Logon saying why. Before, an
/// epoch of 0 or below read as no row, the insert never landed, and
/// every Logon was closed as "served by another engine".
#[test]
fn a_hand_set_lease_epoch_is_taken_over_or_refused_in_one_line() {
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    acceptor_cfg_with(d, "a.cfg", port, &pg, "HeartBtInt=30\n");
    initiator_cfg_with(d, &[port], "HeartBtInt=30\n");
    let mut run = 0;
    // An engine started on the row as it stands takes the lease at
    // `epoch` and answers an order.
    let mut serve = |epoch: i64| {
        let e = acceptor(d, "a.cfg");
        e.listening(port);
        let log = d.join(format!("initiator-{run}.log"));
        run += 1;
        check(initiator(d, 1, &log), 1, &log, Duration::from_secs(30));
        let taken = format!("lease taken (epoch {epoch})");
        assert!(e.stderr().contains(&taken), "{taken}:\n{}", e.stderr());
        e
    };
    let row = || pg.psql(DATABASE, "SELECT epoch FROM perfkit_session_leases");
    let mut engine = serve(1);
    for (epoch, expiry, next) in [
        (0, "+", 1),
        (-5, "+", 1),
        (i64::MIN, "-", 1),
        (i64::MAX - 1, "-", i64::MAX),
    ] {
        engine.child.kill().unwrap();
        engine.child.wait().unwrap();
        pg.psql(
            DATABASE,
            &format!(
                "UPDATE perfkit_session_leases SET epoch = {epoch}, \
                 expires_at = now() {expiry} interval '1 hour'"
            ),
        );
        engine = serve(next);
        assert_eq!(row(), format!("{next}\n"));
    }

    engine.child.kill().unwrap();
    engine.child.wait().unwrap();
    let engine = acceptor(d, "a.cfg");
    engine.listening(port);
    let log = d.join("initiator-refused.log");
    let mut init = initiator(d, 1, &log);
    let closed = "FIX.4.4:EXEC->BANZAI: no engine serves it: its lease record is unusable";
    let until = Instant::now() + Duration::from_secs(20);
    while engine.stderr().matches(closed).count() < 2 {
        assert!(
            Instant::now() < until,
            "no Logon closed as unusable:\n{}",
            engine.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = init.kill();
    let _ = init.wait();
    let said = engine.stderr();
    let lines: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("perfkit_session_leases"))
        .collect();
    assert_eq!(lines.len(), 1, "{said}");
    for part in [
        "FIX.4.4:EXEC->BANZAI",
        "9223372036854775807",
        "postgresql://",
    ] {
        assert!(lines[0].contains(part), "{part}: {}", lines[0]);
    }
    assert!(!said.contains("lease taken"), "{said}");
    assert!(!said.contains("served by another engine"), "{said}");
    assert_eq!(row(), format!("{}\n", i64::MAX));
}

/// Issue 63: a counterparty that connects the moment an engine with a
/// lease listens (a restart), before the keeper's first look at the
/// lease (its start-up wait), has its Logon held and answered, rather
/// than closed as "served by another engine" and made to wait out a
/// ReconnectInterval.
#[test]
fn a_logon_right_after_start_up_is_answered_not_closed() {
    use perfkit_testkit::fix_wire::{connect, frame_now, has, read_message};
    use std::io::Write;
    let Some(pg) = Postgres::start(false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    acceptor_cfg_with(d, "a.cfg", port, &pg, "HeartBtInt=30\n");
    let engine = acceptor(d, "a.cfg");
    // Tried every 50 ms until the port listens: well inside the 500 ms
    // the keeper waits from its start.
    let mut c = connect(port);
    c.write_all(&frame_now(
        "35=A|34=1|49=BANZAI|52=NOW|56=EXEC|98=0|108=30|",
    ))
    .unwrap();
    let early = !engine.stderr().contains("lease taken");
    let answer = read_message(&mut c);
    assert!(
        answer.as_ref().is_some_and(|m| has(m, "35=A")),
        "the Logon was not answered ({answer:?}):\n{}",
        engine.stderr()
    );
    assert!(
        !engine.stderr().contains("served by another engine"),
        "{}",
        engine.stderr()
    );
    if !early {
        eprintln!("note: the lease was taken before the Logon was sent; the wait went untested");
    }
}
