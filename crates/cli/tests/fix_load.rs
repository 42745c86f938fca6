//! `perfkit fix load` (and its hidden alias `fix bench --connect`): the
//! load generator as a user runs it, against `perfkit fix acceptor`
//! processes, with its floor (the `fixload-floor` peer `cargo xtask peers`
//! builds). The figures are checked against what the schedule says must
//! have happened (orders per step, every order answered once), not against
//! the generator's own arithmetic.

use fixcore::build::{MessageBuilder, TimePrecision};
use fixcore::version::BeginString;
use perfkit_testkit::process::{Running, free_port};
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

mod interop;
mod schema;

fn perfkit() -> Command {
    Command::new(env!("CARGO_BIN_EXE_perfkit"))
}

/// `perfkit fix load`, its settings file to follow.
fn load() -> Command {
    let mut c = perfkit();
    c.args(["fix", "load"]);
    c
}

const COMMON: &str = "BeginString=FIX.4.4\nStartTime=00:00:00\nEndTime=00:00:00\nHeartBtInt=30\nResetOnLogon=Y\nUseDataDictionary=N\n";

/// An acceptor for LOAD1 and LOAD2 on `port`, running `app`, once it listens.
fn acceptor(dir: &Path, port: u16, app: &str) -> Running {
    let cfg = dir.join("acceptor.cfg");
    std::fs::write(
        &cfg,
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{COMMON}\
             [SESSION]\nSenderCompID=EXCH\nTargetCompID=LOAD1\n\
             [SESSION]\nSenderCompID=EXCH\nTargetCompID=LOAD2\n"
        ),
    )
    .unwrap();
    let child = perfkit()
        .args(["fix", "acceptor"])
        .arg(&cfg)
        .args(["--app", app])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let running = Running(child);
    let until = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the acceptor never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The probe connection sent nothing; the acceptor drops it.
    running
}

/// Initiator settings for LOAD1 and LOAD2 connecting to `port`.
fn initiator(dir: &Path, port: u16) -> std::path::PathBuf {
    initiator_of(dir, port, &["LOAD1", "LOAD2"])
}

/// Initiator settings for the sessions `names` (each to EXCH) connecting
/// to `port`, in a file named after the first.
fn initiator_of(dir: &Path, port: u16, names: &[&str]) -> std::path::PathBuf {
    let cfg = dir.join(format!("{}.cfg", names[0]));
    let mut text = format!(
        "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\nSocketConnectPort={port}\n{COMMON}"
    );
    for name in names {
        text += &format!("[SESSION]\nSenderCompID={name}\nTargetCompID=EXCH\n");
    }
    std::fs::write(&cfg, text).unwrap();
    cfg
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().unwrap()
}

fn section<'d>(doc: &'d Value, name: &str) -> &'d Value {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no section {name}: {doc:#}"))
}

#[test]
fn a_sweep_against_the_exec_acceptor_sends_every_scheduled_order_once() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _acc = acceptor(dir.path(), port, "exec");
    let ini = initiator(dir.path(), port);
    let hlog = dir.path().join("load.hlog");
    let out = run(load()
        .arg(&ini)
        .args([
            "--rate",
            "400,1k",
            "--duration",
            "1s",
            "--warmup",
            "200ms",
            "--pin",
            "0",
            "--json",
            "--hlog",
        ])
        .arg(&hlog));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = schema::report(&out);
    let pinned = doc["run"]["pinned"].as_str().unwrap();
    assert!(
        pinned.starts_with("sender on core 0, receiver on core "),
        "{pinned}"
    );
    let sweep = section(&doc, "load: latency vs throughput")["rows"]
        .as_array()
        .unwrap();
    assert_eq!(sweep.len(), 2);
    // 1 s at each rate: exactly rate × 1 s orders are due in the measured
    // part, spread over the two sessions, and each is answered once.
    for (rate, name) in [
        (400, "load 400/s over 2 session(s)"),
        (1000, "load 1000/s over 2 session(s)"),
    ] {
        let rows = section(&doc, name)["rows"].as_array().unwrap();
        let corrected = &rows[0];
        assert_eq!(corrected["sent"], rate, "{name}");
        assert_eq!(corrected["answered"], rate, "{name}");
        assert_eq!(corrected["unanswered"], 0, "{name}");
        assert_eq!(corrected["latency"]["count"], rate, "{name}");
        assert_eq!(rows[1]["latency"]["count"], rate, "{name}");
        // Corrected latency counts from the intended time, which never
        // follows the actual send: no sample of it is below the least
        // uncorrected one.
        assert!(
            corrected["latency"]["min_ns"].as_f64().unwrap()
                >= rows[1]["latency"]["min_ns"].as_f64().unwrap()
        );
    }
    // The interval log holds the intervals at their place in time, as
    // the one series of the run's corrected latency.
    let text = std::fs::read_to_string(&hlog).unwrap();
    assert!(text.contains("#[StartTime: "), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("Tag=load_400_per_s_over_2_session.corrected,"))
    );
}

#[test]
fn an_acceptor_that_never_executes_orders_gives_the_report_and_a_failure() {
    // `echo` sends each NewOrderSingle back: no ExecutionReport ever comes.
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _acc = acceptor(dir.path(), port, "echo");
    let ini = initiator(dir.path(), port);
    let out = run(load().arg(&ini).args([
        "--rate",
        "200",
        "--duration",
        "500ms",
        "--warmup",
        "0s",
        "--grace",
        "300ms",
        "--json",
    ]));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("100 order(s) unanswered"), "{stderr}");
    let doc = schema::report(&out);
    let rows = section(&doc, "load 200/s over 2 session(s)")["rows"]
        .as_array()
        .unwrap();
    assert_eq!(rows[0]["sent"], 100);
    assert_eq!(rows[0]["unanswered"], 100);
}

/// Issue 63.7: the generator connects from the system's choice of
/// address, so a file whose session names a source address
/// (`SocketConnectSourceHost`, here one not on this machine) is told so
/// in one warning rather than followed silently, and the failure names
/// the destination it could not reach.
#[test]
fn a_source_address_the_generator_does_not_use_is_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let ini = initiator(dir.path(), port);
    let mut text = std::fs::read_to_string(&ini).unwrap();
    text.push_str("SocketConnectSourceHost=192.0.2.1\n");
    std::fs::write(&ini, text).unwrap();
    let out = run(load().arg(&ini).args(["--rate", "100", "--duration", "1s"]));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    assert_eq!(
        lines[0],
        format!(
            "perfkit: warning: {}: SocketConnectSourceHost and SocketConnectSourcePort have no \
             effect here: fix load connects from the system's choice of address and port",
            ini.display()
        )
    );
    assert!(
        lines[1].contains(&format!(
            "connecting to 127.0.0.1:{port}: Connection refused"
        )),
        "{stderr}"
    );
}

#[test]
fn an_unreachable_engine_is_a_one_line_error_and_no_report() {
    let dir = tempfile::tempdir().unwrap();
    let ini = initiator(dir.path(), free_port());
    let out = run(load().arg(&ini).args(["--rate", "100", "--duration", "1s"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("LOAD1->EXCH: connecting to 127.0.0.1:"),
        "{stderr}"
    );
    // A core the process may not run on is refused before connecting.
    let out = run(load()
        .arg(&ini)
        .args(["--rate", "100", "--duration", "1s", "--pin", "100000"]));
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--pin 100000: this process may run on cores") && !stderr.contains('['),
        "{stderr}"
    );
}

/// `fix load`'s flags are its own: --rate is required (a usage error
/// without it) and bad values are named; `fix bench` takes none of them
/// without --connect, and its --warmup stays a count.
#[test]
fn load_flags_are_checked_and_bench_keeps_its_own() {
    let out = run(perfkit().args(["fix", "bench", "--rate", "5"]));
    assert_eq!(out.status.code(), Some(2));
    let out = run(perfkit().args(["fix", "bench", "--only", "build", "--warmup", "2s"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("a duration is for `fix load`"));
    let dir = tempfile::tempdir().unwrap();
    let ini = initiator(dir.path(), free_port());
    let out = run(load().arg(&ini));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rate"));
    for (flag, value, msg) in [
        ("--rate", "fast", "is not a rate"),
        ("--warmup", "a while", "is not a duration"),
        ("--sessions", "3", "the file has 2 initiator session(s)"),
        ("--coalesce", "11ms", "longer than 10ms"),
        ("--io", "epoll", "possible values: auto, std, io-uring"),
    ] {
        let mut cmd = load();
        cmd.arg(&ini);
        if flag != "--rate" {
            cmd.args(["--rate", "100"]);
        }
        let out = run(cmd.args([flag, value]));
        assert_ne!(out.status.code(), Some(0), "{flag} {value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(msg), "{flag} {value}: {stderr}");
    }
}

/// Issue 32.5: `fix bench --connect`, the hidden alias, still runs the
/// generator, with one line on stderr naming `fix load`, and is not in
/// `fix bench --help`. Without the floor program (an empty peer
/// directory) the report says so where its row would be.
#[test]
fn the_hidden_alias_runs_fix_load_and_names_it() {
    let help = run(perfkit().args(["fix", "bench", "--help"]));
    assert!(!String::from_utf8_lossy(&help.stdout).contains("--connect"));
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _acc = acceptor(dir.path(), port, "exec");
    let ini = initiator(dir.path(), port);
    let empty = tempfile::tempdir().unwrap();
    let out = run(perfkit()
        .args(["fix", "bench", "--connect"])
        .arg(&ini)
        .args(["--rate", "300", "--duration", "300ms", "--warmup", "0s"])
        .arg("--json")
        .env("PERFKIT_PEERS_DIR", empty.path()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr,
        "perfkit: `fix bench --connect SETTINGS` is now `perfkit fix load SETTINGS`\n"
    );
    let doc = schema::report(&out);
    let totals = section(&doc, "load 300/s over 2 session(s)");
    assert_eq!(totals["rows"][0]["sent"], 90);
    assert_eq!(totals["rows"].as_array().unwrap().len(), 2);
    let notes = totals["notes"].as_array().unwrap();
    // One sentence, naming the program and how to build it, and no path
    // of the build tree (issue 65): the user's perfkit may be installed
    // anywhere.
    assert!(
        notes.iter().any(|n| n.as_str().unwrap()
            == "floor not measured: fixload-floor is not built; `cargo xtask peers` builds it, \
                and PERFKIT_PEERS_DIR names the directory that holds it"),
        "{notes:?}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("/target/"), "{text}");
}

/// Issue 32.5: each rate of `fix load` is followed by its floor, the C
/// program doing the same I/O with no FIX work, at the same schedule: the
/// totals carry the floor's row (the schedule's count of orders, a CPU
/// per order over zero) and the generator's CPU per order as a ratio to
/// it, and the sweep's table the ratio per rate. A missing floor program
/// fails the test (`cargo xtask peers` builds it) unless
/// PERFKIT_SKIP_INTEROP=1.
#[test]
fn fix_load_reports_its_floor_and_the_ratio_to_it() {
    if interop::peer(perfkit_peers::LOAD_FLOOR, " (and a C compiler)").is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _acc = acceptor(dir.path(), port, "exec");
    let ini = initiator(dir.path(), port);
    let out = run(load()
        .arg(&ini)
        .args(["--rate", "500,1k", "--duration", "1s", "--warmup", "200ms"])
        .arg("--json"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = schema::report(&out);
    let table = section(&doc, "load: latency vs throughput")["rows"]
        .as_array()
        .unwrap();
    for (row, rate) in table.iter().zip([500, 1000]) {
        let x = row["cpu_over_floor_x"].as_f64().unwrap();
        assert!(x > 0.0, "{rate}: {row}");
        let totals = section(&doc, &format!("load {rate}/s over 2 session(s)"));
        let rows = totals["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 3, "{rate}: {rows:?}");
        let floor = &rows[2];
        assert!(
            floor["name"]
                .as_str()
                .unwrap()
                .starts_with("floor (fixload-floor"),
            "{floor}"
        );
        assert_eq!(floor["sent"], rate, "the floor's schedule is the run's");
        let floor_ns = floor["floor_cpu_per_order_ns"].as_f64().unwrap();
        let gen_ns = rows[1]["generator_cpu_per_order_ns"].as_f64().unwrap();
        assert!(floor_ns > 0.0 && gen_ns > 0.0, "{rows:?}");
        let ratio = rows[1]["generator_over_floor_x"].as_f64().unwrap();
        assert!(
            (ratio - gen_ns / floor_ns).abs() <= 0.01 + ratio * 0.01,
            "{ratio} vs {gen_ns} / {floor_ns}"
        );
        assert_eq!(row["cpu_over_floor_x"], rows[1]["generator_over_floor_x"]);
        let notes = totals["notes"].as_array().unwrap();
        let has = |start: &str| notes.iter().any(|n| n.as_str().unwrap().starts_with(start));
        assert!(has("floor: run right after"), "{notes:?}");
        assert!(
            has(&format!(
                "CPU per order: the generator {gen_ns:.0} ns, its floor {floor_ns:.0} ns: "
            )),
            "{notes:?}"
        );
    }
}

/// Issue 30: a rate under 1/s (alone or in a list) and a zero measured
/// duration are refused as usage errors, exit 2, before anything
/// connects (nothing listens on the port); a zero warm-up is not one.
#[test]
fn a_rate_under_one_per_second_and_a_zero_duration_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ini = initiator(dir.path(), free_port());
    for (args, msg) in [
        (&["--rate", "0.5"][..], "'0.5' is not a rate"),
        (&["--rate", "100,0.5k,0.9/s"], "'0.9/s' is not a rate"),
        (
            &["--rate", "100", "--duration", "0s"],
            "'0s' measures nothing",
        ),
        (
            &["--rate", "100", "--duration", "0ms", "--warmup", "0s"],
            "'0ms' measures nothing",
        ),
    ] {
        let out = run(load().arg(&ini).args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
        assert_eq!(errors.len(), 1, "{args:?}: {stderr}");
        assert!(errors[0].contains(msg), "{args:?}: {stderr}");
    }
}

/// What a hostile engine ([`hostile`]) does with a session once it has
/// answered its Logon.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    /// Closes its side of the connection 300 ms later (reading on, so the
    /// generator sees an orderly end, not a reset).
    Close,
    /// Sends a Logout 300 ms later, reading on.
    Logout,
    /// Reads nothing more, and 200 ms later (the window full of orders)
    /// sends `n` ResendRequests 1..0, each asking for every message the
    /// session sent.
    ResendFlood(u64),
    /// Sends one ExecutionReport rejecting ClOrdID 1, 300 ms later,
    /// reading on.
    Reject,
}

/// One message from EXCH to `to`, numbered `seq`, sent now.
fn fix_msg(msg_type: &[u8], seq: u64, to: &str, body: &[(u32, &str)]) -> Vec<u8> {
    let mut b = MessageBuilder::new(BeginString::Fix44);
    b.begin(msg_type)
        .header_str(49, "EXCH")
        .header_str(56, to)
        .header_uint(34, seq)
        .header_timestamp(
            52,
            fixcore::value::UtcTimestamp::now(),
            TimePrecision::Millis,
        );
    for (tag, v) in body {
        b.field_str(*tag, v);
    }
    b.finish().unwrap().to_vec()
}

/// A FIX engine on a free loopback port that answers each Logon and then
/// does what `act` says for the session (by its SenderCompID); a thread per
/// connection, left to end with the test process.
fn hostile(act: fn(&str) -> Hostile) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(s) = conn else { return };
            std::thread::spawn(move || serve_hostile(s, act));
        }
    });
    port
}

fn serve_hostile(mut s: TcpStream, act: fn(&str) -> Hostile) {
    // The Logon: up to its CheckSum field's end.
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        let Ok(n @ 1..) = s.read(&mut buf) else {
            return;
        };
        got.extend_from_slice(&buf[..n]);
        if let Some(i) = got.windows(4).position(|w| w == b"\x0110=")
            && let Some(j) = got[i + 1..].iter().position(|&b| b == 1)
        {
            break i + 1 + j;
        }
    };
    let logon = String::from_utf8_lossy(&got[..end]).into_owned();
    let who = logon
        .split('\x01')
        .find_map(|f| f.strip_prefix("49="))
        .unwrap()
        .to_owned();
    let ok = fix_msg(b"A", 1, &who, &[(98, "0"), (108, "30"), (141, "Y")]);
    s.write_all(&ok).unwrap();
    let act = act(&who);
    if !matches!(act, Hostile::ResendFlood(_)) {
        let mut r = s.try_clone().unwrap();
        std::thread::spawn(move || while matches!(r.read(&mut buf), Ok(1..)) {});
    }
    match act {
        Hostile::Close => {
            std::thread::sleep(Duration::from_millis(300));
            let _ = s.shutdown(Shutdown::Write);
        }
        Hostile::Logout => {
            std::thread::sleep(Duration::from_millis(300));
            let _ = s.write_all(&fix_msg(b"5", 2, &who, &[(58, "going away")]));
        }
        Hostile::Reject => {
            std::thread::sleep(Duration::from_millis(300));
            let _ = s.write_all(&fix_msg(
                b"8",
                2,
                &who,
                &[
                    (37, "NONE"),
                    (17, "R1"),
                    (150, "8"),
                    (39, "8"),
                    (11, "1"),
                    (55, "MSFT"),
                    (54, "1"),
                    (151, "0"),
                    (14, "0"),
                    (6, "0"),
                    (58, "Unknown security"),
                ],
            ));
        }
        Hostile::ResendFlood(n) => {
            std::thread::sleep(Duration::from_millis(200));
            let mut all = Vec::new();
            for seq in 2..2 + n {
                all.extend(fix_msg(b"2", seq, &who, &[(7, "1"), (16, "0")]));
            }
            let _ = s.write_all(&all);
        }
    }
    // Held open (a flood's engine reading nothing) until the generator
    // ends it.
    std::thread::sleep(Duration::from_secs(60));
}

/// Issue 30: an engine that ends sessions mid-run (LOAD1's connection
/// closed, LOAD2 logged out) fails the run, exit 1, with each lost session
/// named with when and why, counted in `disconnects` and named by the
/// verdict instead of the generator. Both transports: each has its own
/// end-of-stream path. A run ends once every session is lost, long
/// before the 5 s scheduled.
#[test]
fn sessions_the_engine_ends_mid_run_are_lost_and_fail_the_run() {
    let dir = tempfile::tempdir().unwrap();
    for io in ["std", "io-uring"] {
        let port = hostile(|who| {
            if who == "LOAD1" {
                Hostile::Close
            } else {
                Hostile::Logout
            }
        });
        let ini = initiator(dir.path(), port);
        let out = run(load()
            .arg(&ini)
            .args(["--rate", "200", "--duration", "5s", "--warmup", "0s"])
            .args(["--grace", "200ms", "--json", "--io", io]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        if io == "io-uring" && stderr.contains("io_uring is not available") {
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{io}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{io}: {stderr}");
        for want in [
            "session FIX.4.4:LOAD1->EXCH lost at ",
            "s: connection closed by the engine",
            "session FIX.4.4:LOAD2->EXCH lost at ",
            "s: logged out by the engine (Text: going away)",
        ] {
            assert!(stderr.contains(want), "{io}: {want}: {stderr}");
        }
        let doc = schema::report(&out);
        let totals = section(&doc, "load 200/s over 2 session(s)");
        assert_eq!(totals["rows"][1]["disconnects"], 2, "{io}");
        let verdict = totals["notes"][0].as_str().unwrap();
        assert!(
            verdict.starts_with(
                "verdict: 200/s not held (session lost): session FIX.4.4:LOAD1->EXCH lost at "
            ),
            "{io}: {verdict}"
        );
        assert!(!verdict.contains("generator"), "{io}: {verdict}");
    }
}

/// Issue 30: an engine that reads nothing and floods ResendRequests 1..0
/// makes the generator's session queue every message again for each; the
/// queue stops at the default bound (64 MiB) with the session dropped,
/// named in the verdict, exit 1, instead of growing for as long as the
/// flood lasts. Orders of 16 KB (a long Text field) reach the bound in some
/// hundred resends of the orders sent in the first 200 ms. The run ends
/// once its one session is lost, well before the 5 s scheduled (a slow
/// machine has that long to reach the bound).
#[test]
fn an_engine_flooding_resend_requests_hits_the_unsent_bound() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("big.tpl");
    std::fs::write(
        &template,
        format!("55=MSFT|54=1|38=100|40=1|58={}", "x".repeat(16_000)),
    )
    .unwrap();
    let port = hostile(|_| Hostile::ResendFlood(600));
    let ini = initiator_of(dir.path(), port, &["LOAD1"]);
    // Sent orders are kept for resending only in a file store: without
    // one, each ResendRequest would get one small gap fill.
    let text = std::fs::read_to_string(&ini).unwrap().replace(
        "[SESSION]",
        &format!(
            "FileStorePath={}\n[SESSION]",
            dir.path().join("store").display()
        ),
    );
    std::fs::write(&ini, text).unwrap();
    let out = run(load()
        .arg(&ini)
        .args(["--rate", "200", "--duration", "5s", "--warmup", "0s"])
        .args(["--grace", "200ms", "--json", "--order-template"])
        .arg(&template));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("session FIX.4.4:LOAD1->EXCH lost at "),
        "{stderr}"
    );
    assert!(
        stderr.contains(" s: unsent queue over 67108864 bytes ("),
        "{stderr}"
    );
    let doc = schema::report(&out);
    let totals = section(&doc, "load 200/s over 1 session(s)");
    assert_eq!(totals["rows"][1]["disconnects"], 1);
    let verdict = totals["notes"][0].as_str().unwrap();
    assert!(
        verdict.starts_with(
            "verdict: 200/s not held (session lost): session FIX.4.4:LOAD1->EXCH lost at "
        ) && verdict.contains("unsent queue over 67108864 bytes"),
        "{verdict}"
    );
}

/// Reads interval logs with Python's `hdrh` and prints, for the tag in
/// argv[1], the buckets of all intervals of the logs in argv[2:-1] added
/// together ("union") and of the log in argv[-1] ("merged").
const UNION: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
tag = sys.argv[1]
def total(paths):
    acc = HdrHistogram(1, 3600 * 10**9, 3)
    for path in paths:
        reader = HistogramLogReader(path, HdrHistogram(1, 3600 * 10**9, 3))
        while True:
            h = reader.get_next_interval_histogram()
            if h is None:
                break
            if h.get_tag() == tag:
                acc.add(h)
    return {"count": acc.get_total_count(),
            "buckets": [[v.value_iterated_to, v.count_at_value_iterated_to]
                        for v in acc.get_recorded_iterator()]}
print(json.dumps({"union": total(sys.argv[2:-1]), "merged": total(sys.argv[-1:])}))
"#;

/// Issue 17.4, scaling out: two generators run at the same time against
/// one engine, one session each, as two machines would, each writing its
/// own interval log. `report merge` of the two logs must give one
/// histogram of every order either run measured: its count is the runs'
/// orders together, its p50 and p99 are true percentiles of Python's own
/// sum of the two logs, and the merged log it writes holds exactly those
/// buckets when Python reads it back.
#[test]
fn logs_of_two_concurrent_runs_merge_into_one_histogram_of_their_orders() {
    if !interop::have("python3", "python3")
        || !perfkit_testkit::interop::have_python_module(
            "hdrh",
            "python3 -m pip install hdrhistogram",
        )
    {
        return;
    }
    const RATE: u64 = 500;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let _acc = acceptor(d, port, "exec");
    let runs: Vec<_> = ["LOAD1", "LOAD2"]
        .iter()
        .map(|name| {
            let hlog = d.join(format!("{name}.hlog"));
            let child = load()
                .arg(initiator_of(d, port, &[name]))
                .args(["--rate", &RATE.to_string()])
                .args(["--duration", "2s", "--warmup", "200ms", "--json", "--hlog"])
                .arg(&hlog)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            (child, hlog)
        })
        .collect();
    let mut logs = Vec::new();
    for (child, hlog) in runs {
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc = schema::report(&out);
        let rows = section(&doc, &format!("load {RATE}/s over 1 session(s)"))["rows"]
            .as_array()
            .unwrap();
        // The schedule's count: RATE orders a second for 2 s.
        assert_eq!(rows[0]["latency"]["count"], 2 * RATE, "{}", hlog.display());
        logs.push(hlog);
    }
    let merged = d.join("merged.hlog");
    let out = run(perfkit()
        .args(["report", "merge", "--json", "--hlog"])
        .arg(&merged)
        .args(&logs));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = schema::report(&out);
    let tag = format!("load_{RATE}_per_s_over_1_session.corrected");
    let row = doc["sections"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == tag.as_str())
        .unwrap_or_else(|| panic!("no row {tag}: {doc:#}"));
    assert_eq!(row["logs"], 2, "both runs' logs share the tag");
    let out = interop::ok(
        Command::new("python3")
            .args(["-c", UNION, &tag])
            .args(&logs)
            .arg(&merged),
    )
    .stdout;
    let python: Value = serde_json::from_slice(&out).unwrap();
    let union = &python["union"];
    assert_eq!(union["count"], 4 * RATE, "every order of both runs");
    assert_eq!(row["latency"]["count"], union["count"]);
    let buckets = union["buckets"].as_array().unwrap();
    for (q, key) in [(50.0, "p50_ns"), (99.0, "p99_ns")] {
        let v = row["latency"][key].as_u64().unwrap();
        assert!(
            interop::is_percentile(buckets, v, q),
            "{key} {v} is not a p{q} of the two runs' samples"
        );
    }
    assert_eq!(python["merged"], *union, "the merged log, read by Python");
}

/// The generator's peak resident set (KiB, from GNU time) over a run of
/// `secs` seconds at 20,000 orders/s, without the floor (no peers there).
fn load_peak_rss(dir: &Path, ini: &Path, secs: u32) -> u64 {
    let empty = dir.join("no-peers");
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new("time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_perfkit"))
        .args(["fix", "load"])
        .arg(ini)
        .args([
            "--rate",
            "20k",
            "--duration",
            &format!("{secs}s"),
            "--warmup",
            "200ms",
        ])
        .arg("--json")
        .env("PERFKIT_PEERS_DIR", &empty)
        .stdout(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    err.lines().last().unwrap().trim().parse().unwrap()
}

#[test]
fn a_longer_run_does_not_grow_the_generators_memory() {
    if !interop::have("time", "time") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let _acc = acceptor(dir.path(), port, "exec");
    let ini = initiator(dir.path(), port);
    // Six times the orders: a generator that keeps each sent order (for
    // resends it will not make) grows by megabytes here.
    let short = load_peak_rss(dir.path(), &ini, 1);
    let long = load_peak_rss(dir.path(), &ini, 6);
    assert!(
        (long as f64) < short as f64 * 1.3,
        "peak RSS {short} KiB over 1 s, {long} KiB over 6 s"
    );
}

/// Issue 48.4: a sweep keeps its sessions across rates, their numbers
/// carrying on, so a stateful engine (a file store, no ResetOnLogon)
/// takes the second rate as it took the first; before, the second rate
/// logged on at 1 and was refused ("MsgSeqNum too low").
#[test]
fn a_sweep_keeps_its_sessions_across_rates_against_a_stateful_engine() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = free_port();
    let stateful = COMMON.replace("ResetOnLogon=Y\n", "");
    std::fs::write(
        d.join("acceptor.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=acceptor\nSocketAcceptPort={port}\n{stateful}\
             FileStorePath={}\n[SESSION]\nSenderCompID=EXCH\nTargetCompID=LOAD1\n",
            d.join("store").display()
        ),
    )
    .unwrap();
    let _acc = Running::start_in(
        perfkit().args(["fix", "acceptor", "acceptor.cfg", "--app", "exec"]),
        d,
        "acceptor.err",
    );
    let until = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "the acceptor never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::fs::write(
        d.join("i.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={port}\n{stateful}[SESSION]\nSenderCompID=LOAD1\n\
             TargetCompID=EXCH\n"
        ),
    )
    .unwrap();
    let out = run(load().current_dir(d).args([
        "i.cfg",
        "--rate",
        "300,600",
        "--duration",
        "1s",
        "--warmup",
        "100ms",
        "--json",
    ]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc = schema::report(&out);
    for (rate, name) in [
        (300, "load 300/s over 1 session(s)"),
        (600, "load 600/s over 1 session(s)"),
    ] {
        let rows = section(&doc, name)["rows"].as_array().unwrap();
        assert_eq!(rows[0]["answered"], rate, "{name}");
        assert_eq!(rows[0]["unanswered"], 0, "{name}");
    }
    let events = std::fs::read_to_string(d.join("acceptor.err")).unwrap();
    assert!(!events.contains("too low"), "{events}");
}

/// Issue 48.4: a session with SocketUseSSL=Y is refused in one line, not
/// sent orders over plain TCP.
#[test]
fn a_tls_session_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("i.cfg"),
        format!(
            "[DEFAULT]\nConnectionType=initiator\nSocketConnectHost=127.0.0.1\n\
             SocketConnectPort={}\nSocketUseSSL=Y\n{COMMON}[SESSION]\nSenderCompID=LOAD1\n\
             TargetCompID=EXCH\n",
            free_port()
        ),
    )
    .unwrap();
    let out = run(load()
        .current_dir(d)
        .args(["i.cfg", "--rate", "100", "--duration", "1s"]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("SocketUseSSL=Y") && err.contains("plain TCP"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

/// Issue 48.4: the verdict names what was rejected, not only how many:
/// the first rejection's kind, order and Text.
#[test]
fn the_verdict_names_the_first_rejected_order() {
    let dir = tempfile::tempdir().unwrap();
    let port = hostile(|_| Hostile::Reject);
    let ini = initiator_of(dir.path(), port, &["LOAD1"]);
    let out = run(load().arg(&ini).args([
        "--rate",
        "100",
        "--duration",
        "1s",
        "--warmup",
        "0s",
        "--grace",
        "200ms",
    ]));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(
            "1 reject(s) (first: order rejected (OrdStatus 8) of ClOrdID 1: Unknown security)"
        ),
        "{err}"
    );
}
