use super::*;
use clap::Parser;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    stress: StressArgs,
}

fn rounds_of(argv: &[&str]) -> u32 {
    let cli = Cli::try_parse_from(std::iter::once("stress").chain(argv.iter().copied()))
        .expect("valid arguments");
    rounds(&cli.stress)
}

#[test]
fn compare_interleaves_by_default() {
    // The default 30 s: four rounds of 7.5 s.
    assert_eq!(rounds_of(&["--compare"]), 4);
    // Fewer rounds rather than slices under 2 s, but never one.
    assert_eq!(rounds_of(&["--compare", "--duration", "6s"]), 3);
    assert_eq!(rounds_of(&["--compare", "--duration", "300ms"]), 2);
    assert_eq!(rounds_of(&["--compare", "--rounds", "7"]), 7);
    // A soak's slope needs one continuous run per strategy.
    assert_eq!(rounds_of(&["--compare", "--soak"]), 1);
    assert_eq!(rounds_of(&[]), 1);
    // --rounds means nothing without --compare, and 0 means nothing.
    let parse = |argv: &[&str]| {
        Cli::try_parse_from(std::iter::once("stress").chain(argv.iter().copied())).map(|_| ())
    };
    assert!(parse(&["--rounds", "2"]).is_err());
    assert!(parse(&["--compare", "--rounds", "0"]).is_err());
}
