//! fix-bench's `session` part: whole engines as processes over loopback,
//! perfkit and the `quickfix-session` peer (`cargo xtask peers` builds it)
//! in every pairing, with round trips, orders/s and the acceptor's CPU,
//! and the round trip's floor (`fix-roundtrip-floor`, C with no FIX work).

mod interop;
mod schema;

use interop::fix_bench;
use serde_json::Value;

const LATENCY_ORDERS: u64 = 200;
const ORDERS: u64 = 600;
const RUNS: u64 = 2;

/// The floor's row name.
const FLOOR: &str = "floor: C, one order at a time, no FIX work";

/// fix-bench's session section, run with `peers` as the peer directory
/// when given and `extra` flags (within 120 s, or the test fails).
fn session_section(peers: Option<&std::path::Path>, extra: &[&str]) -> Value {
    let orders = ORDERS.to_string();
    let latency_orders = LATENCY_ORDERS.to_string();
    let mut args = vec![
        "--session-orders",
        &orders,
        "--session-latency-orders",
        &latency_orders,
        "--session-window",
        "50",
    ];
    args.extend_from_slice(extra);
    let mut cmd = fix_bench("session", &args);
    if let Some(dir) = peers {
        cmd.env(perfkit_bench::peer::DIR_ENV, dir);
    }
    let doc = schema::report(&interop::ok_within(&mut cmd, 120));
    schema::section(&doc, "session").clone()
}

/// The floor's row timed each latency-phase order of every run, and the
/// note gives perfkit ↔ perfkit's p50 over it from the rows' own figures.
fn check_floor(section: &Value, waits: &str) {
    let rows = section["rows"].as_array().unwrap();
    let p50 = |r: &Value| r["latency"]["p50_ns"].as_f64().unwrap();
    let floor = rows.iter().find(|r| r["name"] == FLOOR).unwrap();
    let ours = rows
        .iter()
        .find(|r| r["name"] == "perfkit initiator ↔ perfkit acceptor")
        .unwrap();
    assert_eq!(
        floor["latency"]["count"].as_u64(),
        Some(LATENCY_ORDERS * RUNS),
        "{floor}"
    );
    assert!(p50(floor) > 0.0, "{floor}");
    let notes = section["notes"].to_string();
    assert!(notes.contains(waits), "{notes}");
    assert!(
        notes.contains(&format!(
            "perfkit ↔ perfkit's p50 round trip is {:.1} µs, {:.2}x the floor's {:.1} µs",
            p50(ours) / 1e3,
            p50(ours) / p50(floor),
            p50(floor) / 1e3
        )),
        "{notes}"
    );
}

/// Every row timed each latency-phase order of every run, and measured a
/// rate and a CPU cost.
fn check_row(r: &Value) {
    assert_eq!(
        r["latency"]["count"].as_u64(),
        Some(LATENCY_ORDERS * RUNS),
        "{r}"
    );
    assert!(r["latency"]["p50_ns"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["orders_per_s"].as_f64().unwrap() > 0.0, "{r}");
    assert!(
        r["acceptor_cpu_us_per_order"].as_f64().unwrap() > 0.0,
        "{r}"
    );
    // Each round's CPU an order is kept, and the row's figure is their
    // median (to the two decimals of a microsecond the report keeps).
    let cpus = interop::per_round(r, "acceptor_cpu_ns_per_order_runs");
    assert_eq!(cpus.len() as u64, RUNS, "{r}");
    let median_us = interop::upper_median(cpus) / 1e3;
    let got = r["acceptor_cpu_us_per_order"].as_f64().unwrap();
    assert!(
        (got - median_us).abs() <= 0.006,
        "{got} vs {median_us}: {r}"
    );
}

#[test]
fn every_pairing_of_perfkit_and_quickfix_is_measured_with_ratios_to_quickfix() {
    if interop::peer("quickfix-session", " (needs g++ libquickfix-dev)").is_none() {
        return;
    }
    let section = session_section(None, &[]);
    let all = section["rows"].as_array().unwrap();
    let names: Vec<&str> = all.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "perfkit initiator ↔ perfkit acceptor",
            "perfkit initiator ↔ perfkit acceptor, FileStorePath",
            "perfkit initiator ↔ perfkit acceptor, PostgreSQL store",
            "perfkit initiator ↔ perfkit acceptor, TLS",
            "perfkit initiator ↔ QuickFIX acceptor",
            "QuickFIX initiator ↔ perfkit acceptor",
            "QuickFIX initiator ↔ QuickFIX acceptor",
            "QuickFIX initiator ↔ QuickFIX acceptor, FileStorePath",
            FLOOR,
        ]
    );
    check_floor(&section, "busy-polling for up to 100µs, then blocking");
    let rows = &all[..8];
    let reference = &rows[6];
    let p50 = |r: &Value| r["latency"]["p50_ns"].as_f64().unwrap();
    let rate = |r: &Value| r["orders_per_s"].as_f64().unwrap();
    for r in rows {
        check_row(r);
        // The ratios are paired round by round: the median of each round's
        // p50 (and rate) over QuickFIX ↔ QuickFIX's in the same round (to
        // the two decimals the report keeps).
        for (col, rounds) in [
            ("p50_vs_quickfix_x", "p50_ns_runs"),
            ("orders_per_s_vs_quickfix_x", "orders_per_s_runs"),
        ] {
            let (ours, theirs) = (
                interop::per_round(r, rounds),
                interop::per_round(reference, rounds),
            );
            assert_eq!(ours.len(), theirs.len(), "{r}");
            let ratios: Vec<f64> = ours.iter().zip(&theirs).map(|(a, b)| a / b).collect();
            let want = interop::upper_median(ratios);
            let got = r[col].as_f64().unwrap();
            assert!(
                (got - want).abs() <= 0.006 * want.max(1.0),
                "{col}: {got} vs {want}: {r}"
            );
        }
    }
    let notes = section["notes"].to_string();
    assert!(!notes.contains("not measured"), "{section}");
    // The PostgreSQL store beside QuickFIX's own file store, and beside
    // an empty commit to its cluster, each from the rows' own figures.
    assert!(
        notes.contains(&format!(
            "answers {:.0} orders/s, {:.2}x QuickFIX ↔ QuickFIX with QuickFIX's FileStore",
            rate(&rows[2]),
            rate(&rows[2]) / rate(&rows[7])
        )),
        "{notes}"
    );
    assert!(
        notes.contains(&format!(
            "the PostgreSQL store row's p50 round trip is {:.1} µs, the FileStorePath row's \
             {:.1} µs",
            p50(&rows[2]) / 1e3,
            p50(&rows[1]) / 1e3
        )),
        "{notes}"
    );
}

#[test]
fn without_the_peer_perfkit_is_measured_alone_and_the_note_says_how_to_build_it() {
    // A peer directory with the floor alone (when it is built), and no
    // spinning: the floor waits as the initiator does.
    let peers = tempfile::tempdir().unwrap();
    let floor = interop::peer("fix-roundtrip-floor", " (needs a C compiler)");
    if let Some(f) = &floor {
        std::os::unix::fs::symlink(f, peers.path().join("fix-roundtrip-floor")).unwrap();
    }
    let section = session_section(Some(peers.path()), &["--spin", "0"]);
    let all = section["rows"].as_array().unwrap();
    assert_eq!(all.len(), 4 + usize::from(floor.is_some()), "{all:#?}");
    let rows = &all[..4];
    assert_eq!(rows[0]["name"], "perfkit initiator ↔ perfkit acceptor");
    assert_eq!(
        rows[1]["name"],
        "perfkit initiator ↔ perfkit acceptor, FileStorePath"
    );
    assert_eq!(
        rows[2]["name"],
        "perfkit initiator ↔ perfkit acceptor, PostgreSQL store"
    );
    assert_eq!(rows[3]["name"], "perfkit initiator ↔ perfkit acceptor, TLS");
    for r in rows {
        check_row(r);
        assert!(r.get("p50_vs_quickfix_x").is_none(), "{r}");
    }
    let notes = section["notes"].to_string();
    // TLS's CPU per order beside plain TCP's, as the rows have them.
    let cpu = |r: &Value| r["acceptor_cpu_us_per_order"].as_f64().unwrap();
    assert!(
        notes.contains(&format!(
            "the perfkit acceptor's CPU per order is {:.2} µs over TLS against {:.2} µs over \
             plain TCP",
            cpu(&rows[3]),
            cpu(&rows[0])
        )),
        "{notes}"
    );
    // The PostgreSQL store's beside the file store's, likewise.
    let rate = |r: &Value| r["orders_per_s"].as_f64().unwrap();
    assert!(
        notes.contains(&format!(
            "the perfkit acceptor's CPU per order is {:.2} µs against {:.2} µs with \
             FileStorePath",
            cpu(&rows[2]),
            cpu(&rows[1])
        )) && notes.contains(&format!(
            "at {:.0} orders/s against {:.0}",
            rate(&rows[2]),
            rate(&rows[1])
        )) && notes.contains("µs of CPU per order besides"),
        "{notes}"
    );
    assert!(
        notes.contains("QuickFIX session engine not measured")
            && notes.contains("cargo xtask peers"),
        "{notes}"
    );
    assert!(
        notes.contains("every engine blocks at once (`fix bench --spin 0`)"),
        "{notes}"
    );
    if floor.is_some() {
        assert_eq!(all[4]["name"], FLOOR);
        check_floor(&section, "blocking in poll at once");
    } else {
        assert!(
            notes.contains("the round trip's floor (C, no FIX work) not measured"),
            "{notes}"
        );
    }
}

/// fix-bench's `failover` part: each kill of the engine serving gives
/// one figure, the time to the standby's first answer, and the note says
/// what bounds it. Three kills, a real PostgreSQL.
#[test]
fn the_failover_part_times_each_kill_to_the_standbys_answer() {
    if perfkit_testkit::postgres::Postgres::start(false).is_none() {
        return;
    }
    let mut cmd = fix_bench("failover", &["--failover-kills", "3"]);
    let doc = schema::report(&interop::ok_within(&mut cmd, 120));
    let section = schema::section(&doc, "failover");
    let rows = section["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let r = &rows[0];
    assert_eq!(r["latency"]["count"].as_u64(), Some(3), "{r}");
    assert_eq!(r["kills"].as_f64(), Some(3.0), "{r}");
    // The initiator waits ReconnectInterval (1 s) before it tries the
    // standby: no answer can come sooner.
    assert!(r["latency"]["min_ns"].as_f64().unwrap() >= 1e9, "{r}");
    assert!(
        section["notes"]
            .to_string()
            .contains("ReconnectInterval (1 s)"),
        "{section}"
    );
}

/// The placement of each pairing's two sides: with `--pin 0` the engines
/// still start from the process's mask (not the measuring thread's core),
/// each on a core of its own where two are usable, and the rows say so;
/// on a one-core mask (`taskset -c 0`) every pairing shares that core, the
/// run still works, and the notes say so.
#[test]
fn each_pairing_runs_on_two_cores_when_two_are_free_and_says_so() {
    let peers = tempfile::tempdir().unwrap();
    let placement = |doc: &Value, name: &str| -> String {
        let section = schema::section(doc, name);
        let mut text = section["notes"].to_string();
        for r in section["rows"].as_array().unwrap() {
            text.push_str(&r.to_string());
        }
        text
    };
    let run = |taskset: bool| {
        let mut cmd = fix_bench(
            "deferred,transport,session",
            &[
                "--pin",
                "0",
                "--session-orders",
                "200",
                "--session-latency-orders",
                "50",
            ],
        );
        if taskset {
            let mut t = std::process::Command::new("taskset");
            t.args(["-c", "0"])
                .arg(cmd.get_program())
                .args(cmd.get_args());
            for (k, v) in cmd.get_envs() {
                match v {
                    Some(v) => t.env(k, v),
                    None => t.env_remove(k),
                };
            }
            cmd = t;
        }
        cmd.env(perfkit_bench::peer::DIR_ENV, peers.path());
        schema::report(&interop::ok_within(&mut cmd, 120))
    };
    let two = std::thread::available_parallelism().map_or(1, |n| n.get()) >= 2;
    if two {
        let doc = run(false);
        let session = placement(&doc, "session");
        assert!(
            session
                .contains("the initiator's process pinned to core 0 and the acceptor's to core 1"),
            "{session}"
        );
        let deferred = placement(&doc, "deferred");
        assert!(
            deferred.contains(
                "producer (measuring thread) pinned to core 0; SPSC worker pinned to core 1"
            ),
            "{deferred}"
        );
        let transport = placement(&doc, "transport");
        assert!(
            transport.contains("client pinned to core 0, server pinned to core 1"),
            "{transport}"
        );
    }
    let doc = run(true);
    for name in ["session", "deferred", "transport"] {
        let text = placement(&doc, name);
        assert!(
            text.contains("both sides on the process's one core (0)"),
            "{name}: {text}"
        );
    }
}
