//! fix-bench's `session` part: whole engines as processes over loopback,
//! perfkit and the `quickfix-session` peer (`cargo xtask peers` builds it)
//! in every pairing, with round trips, orders/s and the acceptor's CPU.

mod interop;
mod schema;

use interop::fix_bench;
use serde_json::Value;

const LATENCY_ORDERS: u64 = 200;
const ORDERS: u64 = 600;
const RUNS: u64 = 2;

/// fix-bench's session section, run with `peers` as the peer directory
/// when given (within 120 s, or the test fails).
fn session_section(peers: Option<&std::path::Path>) -> Value {
    let mut cmd = fix_bench(
        "session",
        &[
            "--session-orders",
            &ORDERS.to_string(),
            "--session-latency-orders",
            &LATENCY_ORDERS.to_string(),
            "--session-window",
            "50",
        ],
    );
    if let Some(dir) = peers {
        cmd.env(perfkit_bench::peer::DIR_ENV, dir);
    }
    let doc = schema::report(&interop::ok_within(&mut cmd, 120));
    schema::section(&doc, "session").clone()
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
}

#[test]
fn every_pairing_of_perfkit_and_quickfix_is_measured_with_ratios_to_quickfix() {
    if interop::peer("quickfix-session", " (needs g++ libquickfix-dev)").is_none() {
        return;
    }
    let section = session_section(None);
    let rows = section["rows"].as_array().unwrap();
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
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
        ]
    );
    let reference = &rows[6];
    let p50 = |r: &Value| r["latency"]["p50_ns"].as_f64().unwrap();
    let rate = |r: &Value| r["orders_per_s"].as_f64().unwrap();
    for r in rows {
        check_row(r);
        // The ratios are the rows' own figures over QuickFIX ↔ QuickFIX's
        // (to the two decimals the report keeps).
        let want = p50(r) / p50(reference);
        let got = r["p50_vs_quickfix_x"].as_f64().unwrap();
        assert!((got - want).abs() <= 0.006, "{got} vs {want}: {r}");
        let want = rate(r) / rate(reference);
        let got = r["orders_per_s_vs_quickfix_x"].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 0.006 * want.max(1.0),
            "{got} vs {want}: {r}"
        );
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
    let empty = tempfile::tempdir().unwrap();
    let section = session_section(Some(empty.path()));
    let rows = section["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{rows:#?}");
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
