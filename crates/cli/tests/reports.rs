//! Report plumbing as a user meets it: a reader that goes away, output
//! files that cannot be written, `perfkit bench --only` and its summary,
//! sample-count-aware percentile columns, shell completions and the man
//! page.

mod interop;
mod schema;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use interop::{ok, per_round, perfkit, upper_median};
use serde_json::Value;

/// A short zstd part of `perfkit bench` (two recipes, 5 ms each, a short
/// heartbeat run).
const QUICK_COMPRESS: [&str; 9] = [
    "bench",
    "--only",
    "zstd",
    "--recipes",
    "fast,balanced",
    "--zstd-time",
    "5ms",
    "--heartbeat",
    "50ms",
];

/// A short `fix-bench`: one part, few iterations.
const QUICK_FIX: [&str; 7] = [
    "fix-bench",
    "--only",
    "scan",
    "--iterations",
    "200",
    "--warmup",
    "10",
];

/// Runs `args` with stdout a pipe whose read end is closed before the
/// child starts: its first write to stdout fails with EPIPE.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    perfkit()
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_reader_that_goes_away_is_a_quiet_exit_141_for_tables_and_json() {
    let cases: Vec<Vec<&str>> = vec![
        QUICK_COMPRESS.to_vec(),
        [&QUICK_COMPRESS[..], &["--json"]].concat(),
        QUICK_FIX.to_vec(),
        [&QUICK_FIX[..], &["--json"]].concat(),
        vec!["completions", "bash"],
        vec!["man"],
    ];
    let dir = tempfile::tempdir().unwrap();
    let fix = dir.path().join("one.fix");
    std::fs::write(
        &fix,
        interop::framed("35=0|49=A|56=B|34=1|52=20260101-00:00:00|"),
    )
    .unwrap();
    let fix = fix.to_str().unwrap().to_owned();
    let corpus = dir.path().join("corpus");
    let corpus = corpus.to_str().unwrap().to_owned();
    let cases = [
        cases,
        vec![
            // Not reports, but the same rule: fix check --json writes with
            // serde_json, corpus lists what it wrote.
            vec!["fix", "check", "--json", fix.as_str()],
            vec!["corpus", "--small", corpus.as_str()],
        ],
    ]
    .concat();
    for args in cases {
        let out = with_closed_stdout(&args);
        assert_eq!(
            out.status.code(),
            Some(141),
            "perfkit {args:?}: {:?}, stderr {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "perfkit {args:?} printed on a closed pipe: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn partials(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn an_unwritable_hlog_or_plot_fails_before_anything_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    for flag in ["--hlog", "--plot"] {
        let target = missing.join("out");
        // The stress part alone runs for seconds; failing first means no
        // report on stdout and an exit well before that.
        let t = Instant::now();
        let out = perfkit()
            .args(["bench", "--only", "stress", flag])
            .arg(&target)
            .output()
            .unwrap();
        let took = t.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{flag}: {stderr}");
        assert!(out.stdout.is_empty(), "{flag}: measured and printed first");
        assert_eq!(stderr.lines().count(), 1, "{flag}: one line: {stderr}");
        assert!(
            stderr.contains("no-such-dir"),
            "{flag}: names the path: {stderr}"
        );
        // Not a timing claim about perfkit: the stress part's own schedule
        // (two rounds of 300 ms per strategy, four strategies) is 2.4 s.
        assert!(
            took < Duration::from_millis(2400),
            "{flag}: took {took:?}, so it ran the benchmark first"
        );
    }
}

#[test]
fn a_command_that_fails_after_opening_its_report_files_leaves_none_behind() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = perfkit()
        .current_dir(d)
        .args(["bench", "--only", "zstd", "--zstd-input", "missing-input"])
        .args(["--hlog", "run.hlog"])
        .args(["--plot", "run.svg"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("missing-input"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(partials(d), Vec::<String>::new(), "temporary files left");
}

#[test]
fn bench_only_rejects_an_unknown_part_listing_the_valid_ones() {
    let out = perfkit()
        .args(["bench", "--only", "zstd,nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for part in ["zstd", "betree", "fix", "zip", "stress", "commands"] {
        assert!(stderr.contains(part), "{part} not listed: {stderr}");
    }
    assert!(out.stdout.is_empty());
}

fn p50(row: &Value) -> f64 {
    row["latency"]["p50_ns"].as_f64().unwrap()
}

#[test]
fn bench_only_runs_the_named_parts_and_summarises_from_their_rows() {
    let out = ok(perfkit().args(["bench", "--only", "stress,zstd", "--json"]));
    let doc = schema::report(&out);
    let sections = doc["sections"].as_array().unwrap();
    let prefixes: std::collections::BTreeSet<&str> = sections
        .iter()
        .map(|s| s["name"].as_str().unwrap().split(':').next().unwrap())
        .collect();
    assert_eq!(
        prefixes.into_iter().collect::<Vec<_>>(),
        ["stress", "zstd"],
        "only the parts asked for"
    );
    let summary = doc["summary"].as_array().expect("a summary array");
    // The zstd line, recomputed here from the JSON rows: the worst input's
    // fresh p50 / reused p50 for the balanced recipe (the lowest ratio).
    let mut ratios = Vec::new();
    for s in sections {
        let rows = s["rows"].as_array().unwrap();
        let find = |n: &str| rows.iter().find(|r| r["name"] == n);
        if let (Some(r), Some(f)) = (find("balanced reused"), find("balanced fresh")) {
            ratios.push(p50(f) / p50(r));
        }
    }
    assert!(!ratios.is_empty());
    let expected = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let zstd = summary
        .iter()
        .find(|c| c["subject"].as_str().unwrap().contains("reused context"))
        .expect("a zstd line");
    let got = zstd["speedup"].as_f64().unwrap();
    assert!(
        (got - expected).abs() < 1e-9 * expected,
        "{got} vs {expected}"
    );
    let line = zstd["line"].as_str().unwrap();
    let word = if expected >= 1.0 { "faster" } else { "slower" };
    let factor = if expected >= 1.0 {
        expected
    } else {
        1.0 / expected
    };
    assert!(
        line.contains(&format!("{factor:.2}× {word} than")),
        "{line} ({expected})"
    );
    // The stress line: pool throughput over fresh throughput, from the rows.
    let totals = sections
        .iter()
        .find(|s| s["name"].as_str().unwrap().starts_with("stress: totals"))
        .unwrap()["rows"]
        .as_array()
        .unwrap();
    let rate = |n: &str| {
        totals.iter().find(|r| r["name"] == n).unwrap()["throughput_mb_s"]
            .as_f64()
            .unwrap()
    };
    let stress = summary
        .iter()
        .find(|c| c["subject"].as_str().unwrap().contains("context pool"))
        .expect("a stress line");
    let want = rate("pool") / rate("fresh");
    match stress["speedup"].as_f64() {
        Some(got) => assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}"),
        // A slice that completed nothing (a starved machine) has no ratio:
        // JSON holds null for it, never a made-up number.
        None => assert!(!want.is_finite(), "null speedup, but the rows give {want}"),
    }
    // Nothing from parts that did not run.
    assert!(
        summary
            .iter()
            .all(|c| !c["subject"].as_str().unwrap().contains("fixcore")),
        "{summary:#?}"
    );
}

#[test]
fn percentile_cells_need_the_samples_to_support_them() {
    // The zstd part with a tiny --zstd-iterations: 3 samples per row.
    let out = ok(perfkit().args([
        "bench",
        "--only",
        "zstd",
        "--recipes",
        "fast",
        "--zstd-iterations",
        "3",
        "--zstd-time",
        "1ms",
        "--heartbeat",
        "0s",
        // Every column, so the placement columns' titles are in the header.
        "--wide",
    ]));
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text
        .lines()
        .find(|l| l.starts_with("name") && l.contains("p99.9"))
        .expect("a table with percentiles");
    let col = |name: &str| header.split_whitespace().position(|c| c == name).unwrap();
    let (count, p90, p99, p999) = (col("count"), col("p90"), col("p99"), col("p99.9"));
    let mut rows = 0;
    for line in text.lines().filter(|l| l.starts_with("fast ")) {
        // Row names hold one space ("fast reused"); cells are two-space apart.
        let cells: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        let n: u64 = cells[count].parse().unwrap();
        assert!(n < 10, "{line}");
        assert_eq!(cells[p90], "-", "p90 from {n} samples: {line}");
        assert_eq!(cells[p99], "-", "p99 from {n} samples: {line}");
        assert_eq!(cells[p999], "-", "p99.9 from {n} samples: {line}");
        rows += 1;
    }
    assert!(rows >= 4, "{text}");
    // The placement columns are worded so a right offload does not read
    // as a failure.
    assert!(
        header.contains("placement") && header.contains("model ok"),
        "{header}"
    );
    assert!(
        !header.contains("verdict") && !header.contains("fits p99"),
        "{header}"
    );
}

#[test]
fn vs_zstd_times_perfkit_as_a_process_too() {
    if !interop::have("zstd", "zstd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in.txt");
    std::fs::write(
        &input,
        b"perfkit against zstd, process for process\n".repeat(20_000),
    )
    .unwrap();
    let out = ok(perfkit()
        .args([
            "bench",
            "--only",
            "zstd",
            "--recipes",
            "fast",
            "--zstd-time",
            "1ms",
        ])
        .args([
            "--heartbeat",
            "0s",
            "--vs-zstd",
            "--zstd-runs",
            "1",
            "--json",
        ])
        .arg("--zstd-input")
        .arg(&input));
    let doc = schema::report(&out);
    let section = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().starts_with("zstd: vs zstd CLI"))
        .expect("a vs zstd section");
    let rows = section["rows"].as_array().unwrap();
    let mut checked = 0;
    for what in ["compress fast T1", "compress fast T2", "decompress fast"] {
        let row = |side: &str| {
            rows.iter()
                .find(|r| r["name"] == format!("{what} {side}"))
                .unwrap_or_else(|| panic!("no {what} {side} row: {rows:#?}"))
        };
        let (process, zstd) = (row("perfkit process"), row("zstd"));
        row("perfkit");
        // One run each: the ratio is the zstd time over the process time,
        // recomputed here from the rows' histograms (0.1 % precision).
        let want = p50(zstd) / p50(process);
        let got = process["vs_zstd"].as_f64().unwrap();
        assert!((got / want - 1.0).abs() < 0.01, "{what}: {got} vs {want}");
        checked += 1;
    }
    assert_eq!(checked, 3);
    let notes = section["notes"].to_string();
    assert!(notes.contains("perfkit process"), "{notes}");
    // Equal work (issue 64): each compress row gives both frames' sizes
    // beside its ratio and says whether they match; the process rows'
    // size is the command's own frame, made again here.
    for threads in [1, 2] {
        let what = format!("compress fast T{threads}");
        for side in ["perfkit", "perfkit process"] {
            let row = rows
                .iter()
                .find(|r| r["name"] == format!("{what} {side}"))
                .unwrap();
            let (ours, theirs) = (
                row["out_bytes"].as_u64().unwrap(),
                row["peer_out_bytes"].as_u64().unwrap(),
            );
            let held = row["held_equal"].as_str().unwrap();
            assert!(
                held.contains(&format!("frames {ours} bytes (perfkit) and {theirs} (zstd")),
                "{what} {side}: {held}"
            );
            let within = (ours as f64 / theirs as f64 - 1.0).abs() <= 0.01;
            assert_eq!(held.contains("the same size"), ours == theirs, "{held}");
            assert_eq!(held.contains("NOT equal"), !within, "{held}");
            if side == "perfkit process" {
                let frame = ok(perfkit()
                    .args(["compress", "--recipe", "fast", "-T"])
                    .arg(threads.to_string())
                    .arg("-c")
                    .arg(&input));
                assert_eq!(frame.stdout.len() as u64, ours, "{what}");
            }
        }
    }
    let decompress = rows
        .iter()
        .find(|r| r["name"] == "decompress fast perfkit process")
        .unwrap();
    assert!(
        decompress["held_equal"]
            .as_str()
            .unwrap()
            .contains("the same frame"),
        "{decompress}"
    );
}

#[test]
fn bash_completions_parse_and_name_every_subcommand() {
    let out = ok(perfkit().args(["completions", "bash"]));
    let script = String::from_utf8(out.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perfkit.bash");
    std::fs::write(&path, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    for sub in subcommands() {
        assert!(script.contains(&sub), "{sub} missing from the completions");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = ok(perfkit().args(["completions", shell]));
        assert!(out.stdout.len() > 1000, "{shell}: a script");
    }
    let bad = perfkit().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

/// The visible subcommands as `perfkit --help` lists them: the oracle the
/// man page and completions are checked against.
fn subcommands() -> Vec<String> {
    let help = String::from_utf8(ok(perfkit().arg("--help")).stdout).unwrap();
    let list: Vec<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A wrapped description is indented deeper than a name.
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    assert!(list.len() >= 10, "{help}");
    list
}

#[test]
fn man_pages_one_per_command_render_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok(perfkit().args(["man", "--dir"]).arg(d));
    let mut names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut want: Vec<String> = subcommands()
        .iter()
        .map(|s| format!("perfkit-{s}.1"))
        .collect();
    want.extend(
        [
            "perfkit.1",
            "perfkit-fix-acceptor.1",
            "perfkit-betree-search.1",
            "perfkit-report-merge.1",
        ]
        .map(String::from),
    );
    for page in &want {
        assert!(names.contains(page), "no {page} in {names:?}");
    }
    for name in &names {
        assert!(
            !name.contains("help"),
            "a help pseudo-command's page: {name}"
        );
        let page = std::fs::read_to_string(d.join(name)).unwrap();
        for section in ["SYNOPSIS", "EXIT STATUS", "ENVIRONMENT", "EXAMPLES"] {
            assert!(
                page.contains(&format!(".SH \"{section}\""))
                    || page.contains(&format!(".SH {section}\n")),
                "{name}: no {section}"
            );
        }
    }
    // Every page a page refers to exists.
    for name in &names {
        let page = std::fs::read_to_string(d.join(name)).unwrap();
        for word in page.split(|c: char| c.is_whitespace() || c == ',') {
            if let Some(stem) = word
                .strip_suffix("(1)")
                .filter(|w| w.starts_with("perfkit"))
            {
                let stem = stem.replace("\\-", "-");
                assert!(
                    names.contains(&format!("{stem}.1")),
                    "{name} names {stem}(1)"
                );
            }
        }
    }
    let zip = std::fs::read_to_string(d.join("perfkit-zip.1")).unwrap();
    assert!(
        zip.contains("Info\\-ZIP habits"),
        "the habits text is in the page"
    );
    // One page on stdout, as `perfkit man | man -l -` reads it.
    let top = String::from_utf8(ok(perfkit().arg("man")).stdout).unwrap();
    assert_eq!(top, std::fs::read_to_string(d.join("perfkit.1")).unwrap());
    let one = String::from_utf8(ok(perfkit().args(["man", "fix", "acceptor"])).stdout).unwrap();
    assert_eq!(
        one,
        std::fs::read_to_string(d.join("perfkit-fix-acceptor.1")).unwrap()
    );
    if !interop::have("groff", "groff") || !interop::have("man", "man-db") {
        return;
    }
    for name in &names {
        let path = d.join(name);
        let check = Command::new("groff")
            .args(["-ww", "-man", "-Tutf8", "-z"])
            .arg(&path)
            .output()
            .unwrap();
        let warnings = String::from_utf8_lossy(&check.stderr);
        assert!(
            check.status.success() && warnings.is_empty(),
            "{name}: {warnings}"
        );
        let rendered = Command::new("man")
            .arg("-l")
            .arg(&path)
            .env("MANWIDTH", "100")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .unwrap();
        assert!(rendered.status.success(), "man -l {name}");
        let text = String::from_utf8_lossy(&rendered.stdout);
        assert!(text.contains("EXIT STATUS"), "{name}: {text}");
    }
}

/// The rows of the `commands` part, by name.
fn command_rows(doc: &Value) -> (Vec<Value>, String) {
    let section = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().starts_with("commands: "))
        .expect("a commands section")
        .clone();
    (
        section["rows"].as_array().unwrap().clone(),
        section["notes"].to_string(),
    )
}

#[test]
fn the_commands_part_runs_each_command_beside_the_library_and_the_peers() {
    // Once with PATH emptied and no peers directory, so no peer can be
    // found: the part must still succeed (a fresh machine has no zstd)
    // and say what it left out.
    let empty = tempfile::tempdir().unwrap();
    let out = ok(perfkit()
        .args(["bench", "--only", "commands", "--json"])
        .env("PATH", empty.path())
        .env("PERFKIT_PEERS_DIR", empty.path()));
    let doc = schema::report(&out);
    let (rows, notes) = command_rows(&doc);
    let names: Vec<&str> = rows.iter().map(|r| r["name"].as_str().unwrap()).collect();
    // betree's search runs on several workloads, a row each
    // ("perfkit betree search, WORKLOAD, Nk expressions, index build
    // excluded").
    let betree: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| {
            n.starts_with("perfkit betree search, ") && n.ends_with(", index build excluded")
        })
        .collect();
    assert!(betree.len() >= 3, "{names:?}");
    for cmd in [
        "perfkit compress --recipe balanced",
        "perfkit decompress",
        "perfkit fix check",
        "perfkit zip (deflate -6)",
        "perfkit unzip -t",
    ]
    .into_iter()
    .chain(betree)
    {
        let row = rows
            .iter()
            .find(|r| r["name"] == cmd)
            .unwrap_or_else(|| panic!("no {cmd} row in {names:?}"));
        for col in ["wall_ms", "cpu_ms", "peak_rss_mib"] {
            assert!(row[col].as_f64().unwrap() > 0.0, "{cmd} {col}: {row}");
        }
        assert!(
            row.get("vs_peer").is_none(),
            "{cmd}: no peer on an empty PATH"
        );
        // vs_library, recomputed from the library row that follows it:
        // the median of the rounds' own ratios.
        if let Some(v) = row["vs_library"].as_f64() {
            let i = names.iter().position(|n| *n == cmd).unwrap();
            let lib = &rows[i + 1];
            assert!(lib["name"].as_str().unwrap().starts_with("library: "));
            let want = paired(lib, row, "wall_ns_rounds");
            assert!((v / want - 1.0).abs() < 1e-9, "{cmd}: {v} vs {want}");
            // The row's wall is its rounds' median. Both walls are rounded
            // to 0.1 ms in the table only; JSON has the full values.
            let wall = upper_median(per_round(row, "wall_ns_rounds")) / 1e6;
            let got = row["wall_ms"].as_f64().unwrap();
            assert!((got / wall - 1.0).abs() < 1e-9, "{cmd}: {got} vs {wall}");
        }
    }
    assert!(!names.iter().any(|n| n.starts_with("peer: ")), "{names:?}");
    assert!(notes.contains("zstd not installed"), "{notes}");
    assert!(
        notes.contains("Info-ZIP zip/unzip not installed"),
        "{notes}"
    );
    assert!(
        notes.contains("fix check beside QuickFIX not measured: quickfix-parse is not built"),
        "{notes}"
    );
    assert!(
        !names.contains(&"perfkit fix check, QuickFIX-built"),
        "{names:?}"
    );

    if !(interop::have("zstd", "zstd") && interop::have("zip", "zip")) {
        return;
    }
    let doc = schema::report(&ok(
        perfkit().args(["bench", "--only", "commands", "--json"])
    ));
    let (rows, _) = command_rows(&doc);
    let summary = doc["summary"].as_array().unwrap();
    // Equal work (issue 64): every zip and unzip row beside Info-ZIP says
    // what it holds equal, and a zip row gives both archives' sizes and
    // says whether they are within 1 %, recomputed here from the sizes.
    for row in rows.iter().filter(|r| {
        let n = r["name"].as_str().unwrap();
        (n.starts_with("perfkit zip") || n.starts_with("perfkit unzip")) && r.get("peer").is_some()
    }) {
        let name = row["name"].as_str().unwrap();
        let held = row["held_equal"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} holds nothing equal: {row}"));
        if let (Some(ours), Some(theirs)) =
            (row["out_bytes"].as_u64(), row["peer_out_bytes"].as_u64())
        {
            let within = (ours as f64 / theirs as f64 - 1.0).abs() <= 0.01;
            assert!(
                held.contains(&format!("{ours} bytes (perfkit) and {theirs}")),
                "{name}: {held}"
            );
            assert_eq!(held.contains("within 1 %"), within, "{name}: {held}");
            assert_eq!(held.contains("NOT equal"), !within, "{name}: {held}");
        }
    }
    let mut with_peers = vec![
        "perfkit compress --recipe balanced",
        "perfkit zip (deflate -6)",
    ];
    if interop::peer("quickfix-parse", " (needs g++ libquickfix-dev)").is_some() {
        with_peers.push("perfkit fix check, QuickFIX-built");
    }
    for cmd in with_peers {
        let row = rows
            .iter()
            .find(|r| r["name"] == cmd)
            .unwrap_or_else(|| panic!("no {cmd} row: {rows:#?}"));
        let peer_name = row["peer"].as_str().unwrap();
        let peer = rows
            .iter()
            .find(|r| r["name"] == format!("peer: {peer_name}"))
            .unwrap();
        let want = paired(peer, row, "wall_ns_rounds");
        let got = row["vs_peer"].as_f64().unwrap();
        assert!((got / want - 1.0).abs() < 1e-9, "{cmd}: {got} vs {want}");
        let want = paired(peer, row, "cpu_ns_rounds");
        let cpu = row["cpu_vs_peer"].as_f64().unwrap();
        assert!((cpu / want - 1.0).abs() < 1e-9, "{cmd}: {cpu} vs {want}");
        // The wall-time line against this peer: its speedup is this row's,
        // or, where the row is one of a group of workloads, the group's
        // worst (a CPU line against the same peer may stand beside it).
        let line = summary
            .iter()
            .find(|c| {
                c["peer"] == peer_name
                    && c["basis"]
                        .as_str()
                        .is_some_and(|b| b.starts_with("median wall time"))
            })
            .unwrap_or_else(|| panic!("no summary line against {peer_name}: {summary:#?}"));
        let speedup = line["speedup"].as_f64().unwrap();
        if line["basis"].as_str().unwrap().contains("the lowest of") {
            assert!(speedup <= got, "{cmd}: the worst {speedup} is above {got}");
        } else {
            assert_eq!(speedup, got, "{cmd}");
        }
    }
}

/// A ratio column as the bench defines it: the median over the rounds
/// of `num`'s time over `den`'s in the same round.
fn paired(num: &Value, den: &Value, col: &str) -> f64 {
    let (n, d) = (per_round(num, col), per_round(den, col));
    assert_eq!(n.len(), d.len(), "{num} {den}");
    upper_median(n.iter().zip(&d).map(|(a, b)| a / b).collect())
}

/// A message line (`|` or SOH form) whose BodyLength and CheckSum are
/// right, checked by plain arithmetic.
fn assert_framed(line: &str) {
    let soh = line.replace('|', "\x01");
    // BodyLength: from after 9=…SOH to before 10=.
    let body_start = soh.find("\x0135=").unwrap() + 1;
    let trailer = soh.rfind("\x0110=").unwrap() + 1;
    let declared: usize = soh[soh.find("9=").unwrap() + 2..body_start - 1]
        .parse()
        .unwrap();
    assert_eq!(declared, trailer - body_start, "{line}");
    let sum = soh.as_bytes()[..trailer]
        .iter()
        .fold(0u32, |s, &b| s + u32::from(b))
        % 256;
    assert_eq!(format!("10={sum:03}\x01"), &soh[trailer..], "{line}");
}

/// The `commands` part's QuickFIX/J workload: `quickfixj-peer build N`
/// writes the mix with QuickFIX/J's classes, one SOH message a line,
/// framed right (checked by arithmetic) and in every kind of the mix, and
/// `perfkit fix check` and QuickFIX/C++'s parse both take every one.
#[test]
fn quickfixj_built_messages_are_valid_to_fix_check_and_quickfix() {
    let Some(java) = interop::peer("quickfixj-peer", " (needs a JDK)") else {
        return;
    };
    let Some(exe) = interop::peer("quickfix-parse", " (needs g++ and libquickfix-dev)") else {
        return;
    };
    let out = Command::new(&java).args(["build", "500"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 500);
    for (i, line) in lines.iter().enumerate() {
        assert!(!line.contains('|'), "SOH form: {line}");
        assert_framed(line);
        assert!(line.contains(&format!("\x0134={}\x01", i + 1)), "{line}");
    }
    for kind in ["D", "8", "F", "W", "0"] {
        assert!(text.contains(&format!("\x0135={kind}\x01")), "no 35={kind}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("j.fix");
    std::fs::write(&file, &text).unwrap();
    ok(perfkit().arg("fix").arg("check").arg(&file));
    let dict = exe.with_file_name(perfkit_peers::QUICKFIX_DICTIONARY);
    let q = Command::new(&exe)
        .arg("--dict")
        .arg(&dict)
        .arg("--file")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&q.stdout).trim(),
        "500 valid, 0 invalid"
    );
    let refused = Command::new(&java).args(["build", "-1"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
}

/// The `commands` part's market data workload: `quickfix-parse --build N
/// --book` writes snapshots of 10 to 60 book entries, each framed by
/// QuickFIX itself (BodyLength and CheckSum checked here by plain
/// arithmetic), which `perfkit fix check` and QuickFIX's own parse both
/// take as valid, in the `|` form and in SOH; `--book` without `--build`
/// is refused.
#[test]
fn quickfix_built_market_data_with_deep_books_is_valid_to_both() {
    let Some(exe) = interop::peer("quickfix-parse", " (needs g++ and libquickfix-dev)") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("book.fix");
    let out = Command::new(&exe)
        .args(["--build", "300", "--book"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut depths = Vec::new();
    for line in text.lines() {
        assert_framed(line);
        assert!(line.contains("|35=W|"), "{line}");
        let n: usize = line
            .split("|268=")
            .nth(1)
            .unwrap()
            .split('|')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(line.matches("|269=").count(), n, "{line}");
        depths.push(n);
    }
    assert_eq!(depths.len(), 300);
    assert!(depths.iter().all(|n| (10..=60).contains(n)), "{depths:?}");
    assert!(depths.iter().any(|&n| n >= 50) && depths.iter().any(|&n| n <= 20));
    std::fs::write(&file, &text).unwrap();
    let soh = dir.path().join("book-soh.fix");
    std::fs::write(&soh, text.replace('|', "\x01")).unwrap();
    let dict = exe.with_file_name(perfkit_peers::QUICKFIX_DICTIONARY);
    for f in [&file, &soh] {
        ok(perfkit().arg("fix").arg("check").arg(f));
        let q = Command::new(&exe)
            .arg("--dict")
            .arg(&dict)
            .arg("--file")
            .arg(f)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&q.stdout).trim(),
            "300 valid, 0 invalid",
            "{}",
            f.display()
        );
    }
    let refused = Command::new(&exe)
        .args(["--file", "x", "--book"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}

/// The `commands` part's version mix: `quickfix-parse --build N
/// --versions` writes FIX.4.2, FIX.4.4 and FIXT.1.1 (5.0 SP2, ApplVerID 9
/// on application messages) in turn, each framed right (checked by
/// arithmetic), and `perfkit fix check` and QuickFIX's parse take every
/// one; `--book --versions` is refused.
#[test]
fn quickfix_built_version_mix_is_valid_to_both() {
    let Some(exe) = interop::peer("quickfix-parse", " (needs g++ and libquickfix-dev)") else {
        return;
    };
    let out = Command::new(&exe)
        .args(["--build", "120", "--versions"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 120);
    for (i, line) in lines.iter().enumerate() {
        assert_framed(line);
        let begin = ["8=FIX.4.2|", "8=FIX.4.4|", "8=FIXT.1.1|"][i % 3];
        assert!(line.starts_with(begin), "{i}: {line}");
        if i % 3 == 2 && !line.contains("|35=0|") {
            assert!(line.contains("|1128=9|"), "{line}");
        }
    }
    for kind in ["D", "8", "W", "0"] {
        for v in ["FIX.4.2", "FIXT.1.1"] {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("8={v}|"))
                        && l.contains(&format!("|35={kind}|"))),
                "no {v} 35={kind}"
            );
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("v.fix");
    std::fs::write(&file, &text).unwrap();
    ok(perfkit().arg("fix").arg("check").arg(&file));
    let dict = exe.with_file_name(perfkit_peers::QUICKFIX_DICTIONARY);
    let q = Command::new(&exe)
        .arg("--dict")
        .arg(&dict)
        .arg("--file")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&q.stdout).trim(),
        "120 valid, 0 invalid"
    );
    let refused = Command::new(&exe)
        .args(["--build", "1", "--book", "--versions"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
}
