use super::*;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    betree: BetreeArgs,
}

/// The flags' defaults are the library's: `betree bench` with no
/// options measures with `Options::default()` and `REPLAYS`.
#[test]
fn bench_flag_defaults_are_the_options_defaults() {
    let argv = ["betree", "bench", "--exprs", "e", "--events", "v"];
    let Task::Bench(b) = Cli::try_parse_from(argv).unwrap().betree.task() else {
        panic!("not a bench task");
    };
    assert_eq!(b.options, Options::default());
    assert_eq!(b.replays, REPLAYS);
}

/// `bench --sweep` measures with the sweep's default settings (its
/// rounds the `--rounds` default), `--quick` with `quick()`.
#[test]
fn sweep_flag_defaults_are_the_settings_defaults() {
    let task = |argv: &[&str]| Cli::try_parse_from(argv).unwrap().betree.task();
    let Task::Sweep(s) = task(&["betree", "bench", "--sweep"]) else {
        panic!("not a sweep task");
    };
    assert_eq!(s.settings, SweepSettings::default());
    let Task::Sweep(s) = task(&["betree", "bench", "--sweep", "--quick"]) else {
        panic!("not a sweep task");
    };
    assert_eq!(s.settings, SweepSettings::quick());
    assert!(Cli::try_parse_from(["betree", "bench", "--quick"]).is_err());
    assert!(Cli::try_parse_from(["betree", "bench", "--sweep", "--exprs", "e"]).is_err());
}

/// `bench --vs-atree` runs the peer's default settings, `--quick` its
/// `quick()`; it takes no files and is not a sweep.
#[test]
fn vs_atree_flag_defaults_are_the_settings_defaults() {
    let task = |argv: &[&str]| Cli::try_parse_from(argv).unwrap().betree.task();
    let Task::VsAtree(s) = task(&["betree", "bench", "--vs-atree"]) else {
        panic!("not a vs-atree task");
    };
    assert_eq!(s.settings, PeerSettings::default());
    let Task::VsAtree(s) = task(&["betree", "bench", "--vs-atree", "--quick"]) else {
        panic!("not a vs-atree task");
    };
    assert_eq!(s.settings, PeerSettings::quick());
    for bad in [
        &["betree", "bench", "--vs-atree", "--sweep"][..],
        &["betree", "bench", "--vs-atree", "--events", "v"],
    ] {
        assert!(Cli::try_parse_from(bad).is_err(), "{bad:?}");
    }
}

/// The shape flags start from the grid point or the adtech profile and
/// override what they name; none given is the profile itself.
#[test]
fn shape_flags_become_a_shape() {
    let generate = |argv: &[&str]| match Cli::try_parse_from(argv).unwrap().betree.task() {
        Task::Generate(g) => g,
        _ => panic!("not a generator task"),
    };
    let g = generate(&["betree", "gen-exprs", "--profile", "adtech"]);
    assert!(!g.shaped);
    assert_eq!(g.shape, Shape::default());
    let g = generate(&[
        "betree",
        "gen-events",
        "--profile",
        "adtech",
        "--grid-point",
        "3",
        "--negation",
        "25%",
        "--predicates",
        "5-6",
    ]);
    assert!(g.shaped);
    let want = Shape {
        negation: Some(0.25),
        predicates: (5, 6),
        ..workload::grid()[2].clone()
    };
    assert_eq!(g.shape, want);
    for bad in [
        ["--negation", "140%"],
        ["--predicates", "6-5"],
        ["--match-rate", "x"],
    ] {
        let argv = ["betree", "gen-exprs", "--profile", "adtech", bad[0], bad[1]];
        assert!(Cli::try_parse_from(argv).is_err(), "{bad:?}");
    }
}
