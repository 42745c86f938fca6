use super::*;
use clap::CommandFactory;

/// The words of every visible command, as the pages name them
/// (`perfkit fix acceptor`).
fn command_words(cmd: &clap::Command, parent: Option<&str>, all: &mut Vec<String>) {
    let words = match parent {
        Some(p) => format!("{p} {}", cmd.get_name()),
        None => cmd.get_name().to_owned(),
    };
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        command_words(sub, Some(&words), all);
    }
    all.push(words);
}

/// examples.txt is read by position (a line, then what it does), so a
/// stray or unindented line would pair the wrong text: every section must
/// name a command, once, and hold whole pairs.
#[test]
fn every_example_section_names_a_command_and_holds_whole_pairs() {
    let mut commands = Vec::new();
    command_words(&crate::flags::Cli::command(), None, &mut commands);
    let mut seen = Vec::new();
    let mut expect_what = false;
    for line in EXAMPLES
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some(words) = line.strip_prefix('[') {
            assert!(
                !expect_what,
                "an example without its description before {line}"
            );
            let words = words.strip_suffix(']').expect("a header ends with ]");
            assert!(commands.iter().any(|c| c == words), "no command {words}");
            assert!(!seen.contains(&words), "{words} twice");
            seen.push(words);
        } else if expect_what {
            let what = line.strip_prefix("    ");
            assert!(
                what.is_some_and(|w| !w.starts_with(' ')),
                "a description is indented by four spaces: {line}"
            );
            expect_what = false;
        } else {
            assert!(
                line.starts_with("perfkit"),
                "an example runs perfkit: {line}"
            );
            assert!(!seen.is_empty(), "{line} before any section");
            expect_what = true;
        }
    }
    assert!(!expect_what, "the last example has no description");
    for words in seen {
        let found = examples_of(words).expect("each section is found");
        assert!(!found.is_empty(), "{words} has no examples");
    }
}

#[test]
fn a_command_without_examples_points_to_its_help() {
    // roff writes a dash as `\-`: the text read without the escapes.
    let text = |roff: Roff| roff.to_roff().replace('\\', "");
    let mut roff = Roff::new();
    examples(&mut roff, "perfkit nothing-such");
    let page = text(roff);
    assert!(page.contains("perfkit nothing-such --help"), "{page}");
    let mut roff = Roff::new();
    examples(&mut roff, "perfkit fix load");
    let page = text(roff);
    assert!(page.contains("Load an acceptor at two rates"), "{page}");
    assert!(!page.contains("--help"), "{page}");
}
