use super::*;
use clap::Parser as _;

/// `perfkit fix …` alone, for the defaults clap fills in.
#[derive(clap::Parser)]
struct Cli {
    #[command(flatten)]
    fix: FixArgs,
}

fn bench_args(argv: &[&str]) -> FixBenchArgs {
    let cli = Cli::try_parse_from([&["fix", "bench"], argv].concat()).unwrap();
    match cli.fix.command {
        FixCommand::Bench(a) => *a,
        _ => unreachable!("parsed as fix bench"),
    }
}

fn load_args(argv: &[&str]) -> FixLoadArgs {
    let cli = Cli::try_parse_from([&["fix", "load"], argv].concat()).unwrap();
    match cli.fix.command {
        FixCommand::Load(a) => *a,
        _ => unreachable!("parsed as fix load"),
    }
}

/// `fix load`'s --warmup is a duration and its --pin the sender's
/// core, whatever `fix bench` makes of the same flags.
#[test]
fn load_flags_have_one_meaning() {
    let task = load_args(&["x.cfg", "--rate", "1k", "--warmup", "2s", "--pin", "3"])
        .task()
        .unwrap();
    assert_eq!(task.sweep.run.warmup, Duration::from_secs(2));
    assert_eq!(task.sweep.run.pin, Some(3));
    let seven = load_args(&["x.cfg", "--rate", "1k", "--warmup", "7"])
        .task()
        .unwrap();
    assert_eq!(seven.sweep.run.warmup, Duration::from_secs(7));
    assert!(Cli::try_parse_from(["fix", "load", "x.cfg"]).is_err());
}

#[test]
fn a_measured_duration_is_over_zero() {
    assert_eq!(parse_measured("2s"), Ok(Duration::from_secs(2)));
    for zero in ["0s", "0", "0ms", "0.1ns"] {
        let e = parse_measured(zero).unwrap_err();
        assert!(e.contains("measures nothing"), "{zero}: {e}");
    }
    assert!(parse_measured("fast").is_err());
}

/// The flags' defaults are the settings' own, so a command line that
/// gives none measures what the libraries' defaults say.
#[test]
fn flag_defaults_are_the_settings_defaults() {
    let suite = bench_args(&[]).suite().unwrap();
    let default = Suite::default();
    assert_eq!(suite.settings, default.settings);
    assert_eq!(suite.session, default.session);
    assert_eq!(suite.parts, default.parts);
    assert!(suite.input.is_none());
    for load in [
        load_args(&["x.cfg", "--rate", "5k,10k"]),
        bench_args(&["--connect", "x.cfg", "--rate", "5k,10k"])
            .as_load(Path::new("x.cfg"))
            .unwrap(),
    ] {
        let task = load.task().unwrap();
        assert_eq!(task.sweep, fixload::Settings::new(vec![5_000.0, 10_000.0]));
        assert_eq!(task.engine.settings, Path::new("x.cfg"));
        assert_eq!(task.engine.sessions, None);
    }
}

#[test]
fn only_and_a_count_of_warmup_become_the_suites_parts_and_warmup() {
    let suite = bench_args(&["--only", "session,scan", "--warmup", "7"])
        .suite()
        .unwrap();
    assert_eq!(suite.parts, [Part::Session, Part::Scan]);
    assert_eq!(suite.settings.warmup, 7);
}
