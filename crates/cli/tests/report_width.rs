//! Issue 34.5: the default text report of every measuring command fits
//! 100 columns (extra columns wait for `--wide`, notes are numbered
//! footnotes), and `--wide` shows what the default left out. Tiny runs:
//! the layout is the subject, not the figures.

mod interop;

use std::path::Path;
use std::process::Command;

use interop::{ok, perfkit};

const WIDTH: usize = 100;

/// The lines of `out`'s stdout wider than [`WIDTH`].
fn too_wide(out: &std::process::Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .filter(|l| l.chars().count() > WIDTH)
        .map(str::to_owned)
        .collect()
}

fn betree_inputs(d: &Path) {
    for (cmd, n) in [("gen-exprs", "200"), ("gen-events", "40")] {
        ok(perfkit()
            .current_dir(d)
            .args(["betree", cmd, "--params", "128", "--count", n, "-o", cmd]));
    }
}

#[test]
fn default_reports_fit_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    betree_inputs(d);
    let runs: [(&str, Vec<&str>); 6] = [
        (
            "bench --only zstd",
            vec![
                "bench",
                "--only",
                "zstd",
                "--recipes",
                "fast",
                "--zstd-time",
                "10ms",
                "--heartbeat",
                "0",
            ],
        ),
        // `zip bench` is now this part of `perfkit bench`.
        ("bench --only zip", vec!["bench", "--only", "zip"]),
        (
            "stress",
            vec![
                "stress",
                "--duration",
                "300ms",
                "--sample-every",
                "100ms",
                "--producers",
                "4",
            ],
        ),
        (
            "betree bench",
            vec![
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
                "--replay-top",
                "3",
            ],
        ),
        (
            "fix bench",
            vec![
                "fix",
                "bench",
                "--only",
                "scan,parse",
                "--iterations",
                "200",
                "--runs",
                "1",
            ],
        ),
        ("bench", vec!["bench", "--only", "stress"]),
    ];
    let mut failures = Vec::new();
    for (what, args) in &runs {
        let out = ok(perfkit().current_dir(d).args(args));
        let wide = too_wide(&out);
        // The title is the command and the machine alone (issue 65: with
        // the run's counts beside the CPU's name, its width depended on
        // the name).
        let text = String::from_utf8_lossy(&out.stdout);
        let title = text.lines().next().unwrap_or("");
        if !(title.starts_with("perfkit ") && title.ends_with(" cores)")) {
            failures.push(format!("{what}: title {title:?}"));
        }
        if !wide.is_empty() {
            failures.push(format!("{what}:\n{}", wide.join("\n")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn wide_shows_the_columns_the_default_leaves_out() {
    let run = |extra: &[&str]| {
        let out = ok(Command::new(env!("CARGO_BIN_EXE_perfkit"))
            .args([
                "bench",
                "--only",
                "zstd",
                "--recipes",
                "fast",
                "--zstd-time",
                "10ms",
            ])
            .args(["--heartbeat", "0"])
            .args(extra));
        String::from_utf8(out.stdout).unwrap()
    };
    let narrow = run(&[]);
    let wide = run(&["--wide"]);
    assert!(
        narrow.contains("--wide adds"),
        "a table left columns out:\n{narrow}"
    );
    assert!(!wide.contains("--wide adds"), "{wide}");
    // Every column of a --wide table is in the default report: in its
    // table, or named in the line that says what --wide adds (which may
    // wrap, hence whitespace made single).
    let flat = narrow.split_whitespace().collect::<Vec<_>>().join(" ");
    let lines: Vec<&str> = wide.lines().collect();
    let mut titles = 0;
    for pair in lines.windows(2) {
        if !pair[1].is_empty() && pair[1].chars().all(|c| c == '-') {
            for title in pair[0].split("  ").map(str::trim).filter(|t| !t.is_empty()) {
                assert!(flat.contains(title), "{title} is only in --wide:\n{narrow}");
                titles += 1;
            }
        }
    }
    assert!(titles > 10, "{wide}");
}

/// Issue 48.5: a command's live status on a terminal counts in its own
/// units: the spinner beside `fix bench`'s part (which counts no bytes)
/// shows the time so far, never "0 B 0 B/s".
#[test]
fn a_terminal_status_line_shows_no_byte_counter_for_what_is_not_bytes() {
    if !interop::have("script", "bsdutils") {
        return;
    }
    let pk = env!("CARGO_BIN_EXE_perfkit");
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!(
                "{pk} fix bench --only parse --iterations 20000 --warmup 100 --runs 1 >/dev/null"
            ),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&out.stdout).replace('\r', "\n");
    assert!(out.status.success(), "{screen}");
    assert!(
        screen.contains("parse ("),
        "no status line drawn: {screen:?}"
    );
    assert!(
        !screen.contains(" B/s") && !screen.contains(" 0 B"),
        "{screen:?}"
    );
}
