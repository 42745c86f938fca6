//! Issue 34.3: every command's help fits 100 columns when stdout is not a
//! terminal (clap wraps it to the terminal otherwise), and no flag shows
//! two defaults that contradict each other.

mod interop;

use interop::{ok, perfkit};

/// The width clap wraps help to when it cannot ask a terminal.
const WIDTH: usize = 100;

/// `perfkit PATH… ARGS…` with no terminal width to inherit: clap reads
/// `COLUMNS` when stdout is not a terminal, and a test must not depend on
/// the shell that started it.
fn help(path: &[String], flag: &str) -> String {
    let out = ok(perfkit()
        .args(path)
        .arg(flag)
        .env_remove("COLUMNS")
        .env_remove("LINES"));
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help text lists under "Commands:" (less `help`).
fn listed(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  ") || l.is_empty())
        // A wrapped description is indented deeper than a name.
        .filter(|l| l.len() > 2 && !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect()
}

/// Every visible command path, the top level (empty path) included.
fn every_command() -> Vec<Vec<String>> {
    let mut all = Vec::new();
    let mut todo = vec![Vec::new()];
    while let Some(path) = todo.pop() {
        for sub in listed(&help(&path, "--help")) {
            let mut p = path.clone();
            p.push(sub);
            todo.push(p);
        }
        all.push(path);
    }
    all
}

#[test]
fn every_help_line_fits_100_columns_and_shows_one_default_per_flag() {
    let commands = every_command();
    assert!(commands.len() >= 20, "{commands:?}");
    let mut long = Vec::new();
    let mut doubled = Vec::new();
    for path in &commands {
        for flag in ["--help", "-h"] {
            let text = help(path, flag);
            for line in text.lines() {
                if line.chars().count() > WIDTH {
                    long.push(format!("perfkit {} {flag}: {line}", path.join(" ")));
                }
            }
            // With --help each flag is a paragraph of its own; with -h one
            // flag may wrap onto the lines after it. Either way a flag's
            // text ends before the next line that starts a flag.
            let mut flag_text = String::new();
            for line in text.lines().chain(["  -"]) {
                let starts_flag =
                    line.trim_start().starts_with('-') && line.len() - line.trim_start().len() <= 6;
                if starts_flag || line.is_empty() {
                    if flag_text.matches("[default:").count() > 1 {
                        doubled.push(format!("perfkit {}: {flag_text}", path.join(" ")));
                    }
                    flag_text.clear();
                }
                flag_text.push_str(line);
                flag_text.push(' ');
            }
        }
    }
    assert!(
        long.is_empty(),
        "lines over {WIDTH} columns:\n{}",
        long.join("\n")
    );
    assert!(doubled.is_empty(), "two defaults:\n{}", doubled.join("\n"));
}

/// An initiator's order flags are not the acceptor's: its help does not
/// list them, and giving one is a usage error, never silently ignored.
#[test]
fn the_acceptor_takes_no_initiator_flags() {
    let path = ["fix".to_owned(), "acceptor".to_owned()];
    let acceptor = help(&path, "--help");
    let initiator = help(&["fix".to_owned(), "initiator".to_owned()], "--help");
    for flag in ["--orders", "--latencies", "--window"] {
        assert!(!acceptor.contains(flag), "{flag}:\n{acceptor}");
        assert!(initiator.contains(flag), "{flag}:\n{initiator}");
    }
    let out = perfkit()
        .args(["fix", "acceptor", "a.cfg", "--orders", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unexpected argument '--orders'"), "{err}");
}

/// Issue 48.7: `fix-bench`, the name the FIX benchmark's users know, is
/// listed in the top-level help, not a hidden alias, and its help is
/// `fix bench`'s.
#[test]
fn fix_bench_is_listed_under_the_name_users_know() {
    let top = listed(&help(&[], "--help"));
    assert!(top.iter().any(|c| c == "fix-bench"), "{top:?}");
    let options = |h: String| -> String {
        h.lines()
            .skip_while(|l| !l.starts_with("Options:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(
        options(help(&["fix-bench".to_owned()], "--help")),
        options(help(&["fix".to_owned(), "bench".to_owned()], "--help"))
    );
}

/// The command names a command's description names: the comma-separated
/// words after its last colon (`betree`'s "…: gen-exprs, gen-events,
/// search, diff, bench"), and each `NAME SUB` in backticks.
fn named_in(about: &str, name: &str) -> Vec<String> {
    let mut named = Vec::new();
    if let Some((_, list)) = about.rsplit_once(": ")
        && list.contains(", ")
        && list.split(", ").all(|w| !w.trim().contains(' '))
    {
        named.extend(
            list.split(", ")
                .map(|w| w.trim().trim_end_matches('.').to_owned()),
        );
    }
    for quoted in about.split('`').skip(1).step_by(2) {
        if let Some(sub) = quoted.strip_prefix(&format!("{name} ")) {
            named.extend(sub.split_whitespace().next().map(str::to_owned));
        }
    }
    named
}

/// Issue 65: a command's description names only commands it has
/// (`betree --help` said "generate" where the commands are `gen-exprs`
/// and `gen-events`), in its own help and in its parent's list.
#[test]
fn every_command_a_description_names_is_one() {
    let mut checked = 0;
    for path in every_command() {
        let Some(name) = path.last() else { continue };
        let text = help(&path, "--help");
        let subs = listed(&text);
        if subs.is_empty() {
            continue;
        }
        let about: String = text
            .lines()
            .take_while(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        for word in named_in(&about, name) {
            assert!(
                subs.contains(&word),
                "`{}` names {word:?}, which is not one of its commands {subs:?}:\n{about}",
                path.join(" ")
            );
            checked += 1;
        }
    }
    assert!(checked >= 5, "the descriptions name their commands");
}
