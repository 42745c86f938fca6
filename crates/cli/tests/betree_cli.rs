//! `perfkit betree` end to end: generated 64/96/128-parameter data searched
//! in every mode gives identical output, checked against an evaluator of the
//! expression text (`perfkit_testkit::boolean_text`); `diff` and bad input behave.

mod interop;
mod schema;

use interop::{ok, perfkit};
use perfkit_testkit::boolean_text::{eval, eval_with};
use std::path::Path;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn all_modes_agree_with_an_independent_evaluator() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for params in [64, 96, 128] {
        let (e, v) = (d.join(format!("e{params}")), d.join(format!("v{params}")));
        ok(perfkit()
            .args([
                "betree",
                "gen-exprs",
                "--params",
                &params.to_string(),
                "--count",
                "150",
                "-o",
            ])
            .arg(&e));
        ok(perfkit()
            .args([
                "betree",
                "gen-events",
                "--params",
                &params.to_string(),
                "--count",
                "60",
                "-o",
            ])
            .arg(&v));
        // Expected output, from the files' text alone.
        let exprs: Vec<String> = read(&e)
            .lines()
            .filter_map(|l| l.strip_prefix("<<\"").and_then(|l| l.strip_suffix("\">>.")))
            .map(str::to_string)
            .collect();
        assert_eq!(exprs.len(), 150);
        let events: Vec<Vec<bool>> = read(&v)
            .split("].")
            .filter(|t| t.contains('['))
            .map(|t| {
                t.trim()
                    .trim_start_matches('[')
                    .split(',')
                    .map(|x| x.trim() == "1")
                    .collect()
            })
            .collect();
        assert_eq!(events.len(), 60);
        assert!(events.iter().all(|ev| ev.len() == params));
        let mut want = String::new();
        for ev in &events {
            let ids: Vec<String> = exprs
                .iter()
                .enumerate()
                .filter(|(_, x)| eval(x, ev))
                .map(|(i, _)| (i + 1).to_string())
                .collect();
            want.push_str(&ids.join(" "));
            want.push('\n');
        }
        for mode in ["std", "all", "next", "batch"] {
            let out = d.join(format!("out{params}{mode}"));
            ok(perfkit()
                .args([
                    "betree", "search", "--mode", mode, "--budget", "37", "--exprs",
                ])
                .arg(&e)
                .arg("--events")
                .arg(&v)
                .arg("-o")
                .arg(&out));
            assert_eq!(read(&out), want, "{params} params, mode {mode}");
            let same = ok(perfkit()
                .args(["betree", "diff"])
                .arg(d.join(format!("out{params}std")))
                .arg(&out));
            assert_eq!(
                String::from_utf8(same.stdout).unwrap(),
                "identical: 60 events\n"
            );
        }
    }
}

#[test]
fn diff_reports_the_first_differing_event() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, "1 2\n\n3\n").unwrap();
    std::fs::write(&b, "1 2\n\n3 4\n").unwrap();
    let out = perfkit()
        .args(["betree", "diff"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("event 3 differs: "), "{text}");
    assert!(
        text.contains("has `3`,") && text.ends_with("has `3 4`\n"),
        "{text}"
    );
}

/// What `betree diff` printed when it read both files whole and split
/// them with `str::lines` (the model its streaming must keep to).
fn diff_model(a: &str, b: &str) -> (String, i32) {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let show = |v: Option<&&str>| match v {
        Some(&"") => "no match".to_string(),
        Some(s) => format!("`{s}`"),
        None => "no such event".to_string(),
    };
    for i in 0..la.len().max(lb.len()) {
        if la.get(i) != lb.get(i) {
            return (
                format!(
                    "event {} differs: A has {}, B has {}\n",
                    i + 1,
                    show(la.get(i)),
                    show(lb.get(i))
                ),
                1,
            );
        }
    }
    (format!("identical: {} events\n", la.len()), 0)
}

#[test]
fn diff_splits_lines_as_a_whole_file_read_did() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("1 2\n\n3\n", "1 2\r\n\r\n3\r\n"),
        ("1\n2", "1\n2\n"),
        ("1\n2\n", "1\n"),
        ("", "\n"),
        ("", ""),
        ("1\n\n", "1\n7\n"),
        ("5\r", "5\r\n"),
        ("5\r\r\n", "5\r\n"),
        ("9\n", "9\n\n"),
    ];
    for (x, y) in cases {
        for (a, b) in [(x, y), (y, x)] {
            std::fs::write(dir.path().join("A"), a).unwrap();
            std::fs::write(dir.path().join("B"), b).unwrap();
            let out = perfkit()
                .current_dir(dir.path())
                .args(["betree", "diff", "A", "B"])
                .output()
                .unwrap();
            let (text, code) = diff_model(a, b);
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                text,
                "{a:?} vs {b:?}"
            );
            assert_eq!(out.status.code(), Some(code), "{a:?} vs {b:?}");
        }
    }
    // Not UTF-8, after a difference or not, is still an error naming the file.
    std::fs::write(dir.path().join("A"), b"1\n\xff\n").unwrap();
    std::fs::write(dir.path().join("B"), b"1\n2\n").unwrap();
    let out = perfkit()
        .current_dir(dir.path())
        .args(["betree", "diff", "A", "B"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("reading A") && err.contains("UTF-8"), "{err}");
}

#[test]
fn bad_expression_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let (e, v, o) = (
        dir.path().join("e"),
        dir.path().join("v"),
        dir.path().join("o"),
    );
    std::fs::write(&e, "[{a,bool,disallow_undefined}].\n<<\"a and\">>.\n").unwrap();
    std::fs::write(&v, "[1].\n").unwrap();
    let out = perfkit()
        .args(["betree", "search", "--exprs"])
        .arg(&e)
        .arg("--events")
        .arg(&v)
        .arg("-o")
        .arg(&o)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("line 2 (expression 1): parse error at column 6: expected"),
        "{err}"
    );
    assert!(!o.exists(), "no output file on failure");
}

#[test]
fn json_events_with_a_json_domain_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("dom.json"),
        r#"[{"name": "age", "type": "integer", "allow_undefined": false},
            {"name": "tags", "type": "string_list", "allow_undefined": true},
            {"name": "vip", "type": "boolean", "allow_undefined": true}]"#,
    )
    .unwrap();
    std::fs::write(
        d.join("e"),
        "<<\"age >= 18 and \\\"sports\\\" in tags\">>.\n<<\"vip or tags is null\">>.\n<<\"age < 18\">>.\n",
    )
    .unwrap();
    std::fs::write(
        d.join("v"),
        "{\"age\": 31, \"tags\": [\"sports\"]}\n{\"age\": 12, \"vip\": true}\n",
    )
    .unwrap();
    let out = ok(&mut search_json(d, &[]));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "1\n2 3\n");
}

/// `perfkit betree search` in `d` over expressions `e`, JSON domains
/// `dom.json` and JSON events `v`, plus `extra` arguments.
fn search_json(d: &Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = perfkit();
    cmd.current_dir(d)
        .args([
            "betree",
            "search",
            "--exprs",
            "e",
            "--domains",
            "dom.json",
            "--events",
            "v",
            "--events-format",
            "json",
        ])
        .args(extra);
    cmd
}

#[test]
fn event_missing_a_required_attribute_names_the_event_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("dom.json"),
        r#"[{"name": "age", "type": "integer", "allow_undefined": false}]"#,
    )
    .unwrap();
    std::fs::write(d.join("e"), "<<\"age > 3\">>.\n").unwrap();
    std::fs::write(d.join("v"), "{\"age\": 5}\n{}\n").unwrap();
    let out = search_json(d, &["-o", "out"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "perfkit: v: event 2: event lacks attribute `age`, which is declared disallow-undefined\n"
    );
    assert!(!d.join("out").exists());
}

#[test]
fn zero_parameters_is_a_usage_error() {
    for cmd in ["gen-exprs", "gen-events"] {
        let out = perfkit()
            .args(["betree", cmd, "--params", "0", "--count", "3"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains("invalid value '0' for '--params <PARAMS>': 0 is not in 1..=65536"),
            "{cmd}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// Issue 13.6: sizes go to a bounded parser or a stream, never straight
/// into an allocation: `--params 4294967295` aborted and `--count
/// 18446744073709551615` panicked on capacity overflow.
#[test]
fn huge_sizes_are_refused_or_streamed_never_allocated() {
    for cmd in ["gen-exprs", "gen-events"] {
        for params in ["4294967295", "18446744073709551615", "65537"] {
            let out = perfkit()
                .args(["betree", cmd, "--params", params, "--count", "1"])
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(2), "{cmd} {params}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert!(err.contains("is not in 1..=65536"), "{cmd}: {err}");
        }
        // A count no memory could hold streams: the reader takes what it
        // wants and closes the pipe, and perfkit stops quietly (141).
        let mut child = perfkit()
            .args([
                "betree",
                cmd,
                "--params",
                "16",
                "--count",
                "18446744073709551615",
            ])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = vec![0u8; 1 << 20];
        std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut head).unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(141),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stderr.is_empty(), "{cmd}");
    }
}

/// The boolean generators stream the same bytes they wrote when they built
/// the whole file first (the library's whole-file writers are the oracle).
#[test]
fn streamed_generators_write_the_reference_files() {
    use betree::reference;
    let exprs = ok(perfkit().args([
        "betree",
        "gen-exprs",
        "--params",
        "24",
        "--count",
        "300",
        "--seed",
        "7",
    ]))
    .stdout;
    let want = reference::write_expr_file(
        &reference::params_domains(24),
        &reference::random_expressions(24, 300, 7),
    );
    assert_eq!(String::from_utf8(exprs).unwrap(), want);
    let events = ok(perfkit().args([
        "betree",
        "gen-events",
        "--params",
        "70",
        "--count",
        "300",
        "--seed",
        "9",
    ]))
    .stdout;
    let want = reference::write_event_file(&reference::random_events(70, 300, 9));
    assert_eq!(String::from_utf8(events).unwrap(), want);
}

/// Issue 13.9: `search -o` naming one of the search's own inputs (directly,
/// through a symlink or a hard link) is refused and the input kept.
#[test]
fn search_refuses_to_write_over_its_own_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(perfkit().current_dir(d).args([
        "betree",
        "gen-exprs",
        "--params",
        "8",
        "--count",
        "20",
        "-o",
        "e.txt",
    ]));
    ok(perfkit().current_dir(d).args([
        "betree",
        "gen-events",
        "--params",
        "8",
        "--count",
        "20",
        "-o",
        "v.txt",
    ]));
    std::os::unix::fs::symlink("e.txt", d.join("link")).unwrap();
    std::fs::hard_link(d.join("v.txt"), d.join("hard")).unwrap();
    let exprs = std::fs::read(d.join("e.txt")).unwrap();
    let events = std::fs::read(d.join("v.txt")).unwrap();
    for (out, what, names) in [
        ("e.txt", "expression file", "e.txt"),
        ("link", "expression file", "e.txt"),
        ("v.txt", "event file", "v.txt"),
        ("hard", "event file", "v.txt"),
    ] {
        let res = perfkit()
            .current_dir(d)
            .args([
                "betree", "search", "--exprs", "e.txt", "--events", "v.txt", "-o", out,
            ])
            .output()
            .unwrap();
        assert_eq!(res.status.code(), Some(1), "{out}");
        let err = String::from_utf8(res.stderr).unwrap();
        assert_eq!(
            err,
            format!("perfkit: refusing to write {out}: it is the {what} {names}\n")
        );
        assert_eq!(std::fs::read(d.join("e.txt")).unwrap(), exprs);
        assert_eq!(std::fs::read(d.join("v.txt")).unwrap(), events);
    }
    // A distinct output still works.
    ok(perfkit().current_dir(d).args([
        "betree", "search", "--exprs", "e.txt", "--events", "v.txt", "-o", "r.txt",
    ]));
    // So does `--times`: refused over an input, else one line of the
    // build's and the search's times, beside the same search output.
    let res = perfkit()
        .current_dir(d)
        .args([
            "betree", "search", "--exprs", "e.txt", "--events", "v.txt", "-o", "t.txt", "--times",
            "link",
        ])
        .output()
        .unwrap();
    assert_eq!(res.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(res.stderr).unwrap(),
        "perfkit: refusing to write link: it is the expression file e.txt\n"
    );
    assert_eq!(std::fs::read(d.join("e.txt")).unwrap(), exprs);
    ok(perfkit().current_dir(d).args([
        "betree",
        "search",
        "--exprs",
        "e.txt",
        "--events",
        "v.txt",
        "-o",
        "t.txt",
        "--times",
        "times.txt",
    ]));
    assert_eq!(read(&d.join("t.txt")), read(&d.join("r.txt")));
    let times = read(&d.join("times.txt"));
    let keys: Vec<&str> = times
        .split_ascii_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            v.parse::<u64>().unwrap();
            k
        })
        .collect();
    assert_eq!(
        keys,
        [
            "build_wall_ns",
            "build_cpu_ns",
            "search_wall_ns",
            "search_cpu_ns"
        ],
        "{times}"
    );
    assert!(times.ends_with('\n'));
}

#[test]
fn json_domain_file_errors_name_the_file_and_the_domain() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("e"), "<<\"age > 3\">>.\n").unwrap();
    std::fs::write(d.join("v"), "{\"age\": 5}\n").unwrap();
    for (dom, msg) in [
        (
            r#"[{"name": "age", "type": "integer"}]"#,
            "domain 1 (`age`): needs \"allow_undefined\": true or false",
        ),
        (
            r#"[{"name": "age", "type": "integer", "allow_undefined": true, "min": 9, "max": 1}]"#,
            "domain 1 (`age`): \"min\" 9 is above \"max\" 1",
        ),
        (
            r#"[{"name": "age", "type": "string", "allow_undefined": true, "min": 0, "max": 1}]"#,
            "domain 1 (`age`): a string attribute takes no \"min\"/\"max\"",
        ),
        (
            r#"[{"name": "age", "type": "integer", "allow_undefined": true"#,
            "domain file line 1, column 59: invalid JSON: EOF while parsing an object\n",
        ),
    ] {
        std::fs::write(d.join("dom.json"), dom).unwrap();
        let out = search_json(d, &[]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{dom}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("perfkit: reading dom.json: ") && err.contains(msg),
            "{dom}: {err}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// The row named `name` (a prefix) in the section whose name contains
/// `section`.
fn row<'a>(doc: &'a serde_json::Value, section: &str, name: &str) -> &'a serde_json::Value {
    doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"].as_str().unwrap().contains(section))
        .flat_map(|s| s["rows"].as_array().unwrap())
        .find(|r| r["name"].as_str().unwrap().starts_with(name))
        .unwrap_or_else(|| panic!("no row `{name}` in a section `{section}`"))
}

#[test]
fn bench_replays_the_long_slices_and_its_figures_agree() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (cmd, n) in [("gen-exprs", "200"), ("gen-events", "40")] {
        ok(perfkit()
            .current_dir(d)
            .args(["betree", cmd, "--params", "128", "--count", n, "-o", cmd]));
    }
    let bench = |extra: &[&str]| {
        let mut c = perfkit();
        c.current_dir(d)
            .args([
                "betree",
                "bench",
                "--exprs",
                "gen-exprs",
                "--events",
                "gen-events",
                "--budget",
                "100",
                "--block",
                "10",
                "--warmup",
                "5",
            ])
            .args(extra);
        c
    };
    // Every slice is over 0 µs, so exactly the 20 longest are replayed.
    let out = ok(&mut bench(&[
        "--replay-over",
        "0us",
        "--replay-top",
        "20",
        "--replays",
        "3",
        "--json",
    ]));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    schema::assert_valid(&doc);

    let f = |r: &serde_json::Value, c: &str| {
        r[c].as_f64()
            .unwrap_or_else(|| panic!("{c} is a number in {r}"))
    };
    // The index's pruning is shown: every match was a candidate, and no
    // event has more candidates than the 200 expressions.
    let sel = row(&doc, "selection", "candidates evaluated vs matches");
    let (cands, matches) = (f(sel, "candidates_per_event"), f(sel, "matches_per_event"));
    assert!(matches > 0.0 && cands >= matches && cands <= 200.0, "{sel}");
    let next = row(&doc, "search per event", "next (search_iter");
    let yields = row(&doc, "search per event", "next: time between yields");
    let least = row(&doc, "replayed", "least time of each replayed slice");
    let worst = row(&doc, "replayed", "worst replayed slice");
    let slices = yields["latency"]["count"].as_u64().unwrap();
    assert!(slices > 40, "several slices per event at budget 100");
    assert_eq!(least["slices"], slices);
    assert_eq!(least["over_threshold"], slices);
    assert_eq!(least["replayed"], 20);
    assert_eq!(least["latency"]["count"], 20);
    assert_eq!(least["replays_each"], 3);
    assert_eq!(f(least, "threshold_us"), 0.0);
    // The raw maximum is the one the search table shows, and no slice's
    // least time exceeds it; the replayed estimate is the larger of the
    // replayed slices' least times and the unreplayed slices' raw maximum.
    let raw = f(least, "raw_max_us");
    assert_eq!(raw, f(next, "max_slice_us"));
    let (min_max, unreplayed) = (f(least, "replay_min_max_us"), f(least, "unreplayed_max_us"));
    assert!(min_max <= raw && unreplayed <= raw, "{least}");
    assert_eq!(
        f(least, "replayed_estimate_max_us"),
        min_max.max(unreplayed)
    );
    // The note says what that column is: 3 replays + the timed pass.
    let notes = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().contains("replayed"))
        .unwrap()["notes"]
        .to_string();
    assert!(
        notes.contains("a best-of-4 estimate, not a bound"),
        "{notes}"
    );
    // Each slice's least time is at most any of its replays, the median
    // included.
    assert!(f(least, "replay_median_max_us") >= min_max, "{least}");
    // The histogram of least times tops out at the same value (to the
    // histogram's 0.1 % precision, which the 0.1 µs rounding dwarfs).
    let hist_max = least["latency"]["max_ns"].as_f64().unwrap() / 1e3;
    assert!(
        (hist_max - min_max).abs() <= 0.05 + min_max * 1e-3,
        "{hist_max} vs {min_max}"
    );
    // The worst slice is the one with that least time, replayed 3 times.
    assert_eq!(worst["latency"]["count"], 3);
    assert_eq!(f(worst, "min_us"), min_max);
    assert!(f(worst, "min_us") <= f(worst, "raw_us"));
    assert!(f(worst, "min_us") <= f(worst, "median_us"));
    let event = worst["event"].as_u64().unwrap();
    assert!((1..=40).contains(&event), "{worst}");
    assert!(worst["slice"].as_u64().unwrap() >= 1);
    // An event's last slice may spend no reductions (it only finds that
    // nothing is left), and a preempted one can be the worst.
    assert!(worst["reductions"].as_u64().is_some(), "{worst}");

    // Nothing over the threshold: nothing replayed, no worst row.
    let out = ok(&mut bench(&["--replay-over", "60s", "--json"]));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let least = row(&doc, "replayed", "least time of each replayed slice");
    assert_eq!(
        (least["over_threshold"].as_u64(), least["replayed"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(f(least, "unreplayed_max_us"), f(least, "raw_max_us"));
    assert!(doc.to_string().find("worst replayed slice").is_none());

    // A replay count of 0 would measure nothing: a usage error.
    let out = bench(&["--replays", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `bench --vs-atree --quick`: betree and the a-tree crate on the adtech
/// profile and three grid points, every event's ids agreeing (the run
/// fails otherwise), one row per workload with both's rates and their
/// ratio, and every generated expression either indexed or left out.
#[test]
fn bench_vs_atree_quick_runs_every_workload_with_agreeing_ids() {
    let out = ok(perfkit().args(["betree", "bench", "--vs-atree", "--quick", "--json"]));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    schema::assert_valid(&doc);
    let f = |r: &serde_json::Value, c: &str| {
        r[c].as_f64()
            .unwrap_or_else(|| panic!("{c} is a number in {r}"))
    };
    for name in [
        "adtech",
        "attrs=400 zipf=0.6 preds=2-4 neg=0%",
        "attrs=200 zipf=1.4 preds=8-15 neg=40%",
        "attrs=50 zipf=1.4 preds=8-15 neg=0%",
    ] {
        let r = row(&doc, "a-tree", name);
        let (b, a) = (f(r, "betree_events_per_s"), f(r, "atree_events_per_s"));
        assert!(b > 0.0 && a > 0.0, "{r}");
        assert!((f(r, "ratio") - b / a).abs() <= 0.02 * b / a + 0.01, "{r}");
        assert_eq!(f(r, "expressions") + f(r, "left_out"), 2000.0, "{r}");
        assert!(
            f(r, "expressions") >= 1000.0 && f(r, "matches_per_event") > 0.0,
            "{r}"
        );
    }
}

/// `gen-exprs`/`gen-events --profile deep-negation` write the bench's
/// third shape (`perfkit bench`'s files are these at the default seeds),
/// and `betree search` of them agrees with an evaluator of the text: each
/// expression read from the file, each event from its JSON, every
/// comparison evaluated here.
#[test]
fn deep_negation_files_search_as_their_text_reads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (cmd, file, n) in [("gen-exprs", "e", "400"), ("gen-events", "v", "150")] {
        ok(perfkit()
            .args([
                "betree",
                cmd,
                "--profile",
                "deep-negation",
                "--count",
                n,
                "-o",
            ])
            .arg(d.join(file)));
    }
    let exprs = betree::reference::read_expr_file(&read(&d.join("e")))
        .unwrap()
        .exprs;
    assert_eq!(exprs.len(), 400);
    let events: Vec<serde_json::Map<String, serde_json::Value>> = read(&d.join("v"))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(events.len(), 150);
    let mut want = String::new();
    let mut matched = 0;
    for ev in &events {
        let mut leaf = |t: &[&str], at: &mut usize| {
            let (name, op, operand) = (t[*at], t[*at + 1], t[*at + 2]);
            *at += 3;
            let v = &ev[name];
            match op {
                ">=" => v.as_i64().unwrap() >= operand.parse::<i64>().unwrap(),
                "<=" => v.as_i64().unwrap() <= operand.parse::<i64>().unwrap(),
                "=" | "<>" => (v.as_str().unwrap() == operand.trim_matches('"')) == (op == "="),
                _ => panic!("{op} in {t:?}"),
            }
        };
        let ids: Vec<String> = exprs
            .iter()
            .enumerate()
            .filter(|(_, x)| eval_with(x, &mut leaf))
            .map(|(i, _)| (i + 1).to_string())
            .collect();
        matched += ids.len();
        want.push_str(&ids.join(" "));
        want.push('\n');
    }
    // Neither nothing nor everything: the shape's match rate is a few
    // per cent.
    assert!((100..30_000).contains(&matched), "{matched} matches");
    for mode in ["std", "batch"] {
        let out = ok(perfkit()
            .current_dir(d)
            .args(["betree", "search", "--exprs", "e", "--events", "v"])
            .args(["--events-format", "json", "--mode", mode]));
        assert_eq!(String::from_utf8(out.stdout).unwrap(), want, "mode {mode}");
    }
    // The files are the bench's: the library's writers at the bench's
    // seeds (1 for expressions, 2 for events), which are the commands'
    // defaults.
    assert_eq!(exprs, betree::workload::DeepNegation.expressions(400, 1));
    let mut lib = Vec::new();
    betree::workload::DeepNegation
        .write_events(&mut lib, 150, 2)
        .unwrap();
    assert_eq!(std::fs::read(d.join("v")).unwrap(), lib);
}
