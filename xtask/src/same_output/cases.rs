//! The commands run through both binaries, and the masks each needs.

use super::{Case, Mask, Step};

/// A one-step case.
fn case(name: &str, args: &str, masks: &'static [Mask]) -> Case {
    steps(name, &[args], masks)
}

/// A case of several steps, each a command line split at spaces.
fn steps(name: &str, lines: &[&str], masks: &'static [Mask]) -> Case {
    Case {
        name: name.to_owned(),
        steps: lines
            .iter()
            .map(|l| Step {
                args: l.split_whitespace().map(str::to_owned).collect(),
                stdin: None,
            })
            .collect(),
        masks,
    }
}

/// A one-step case reading `stdin` from a file of the folder.
fn piped(name: &str, args: &str, stdin: &'static str) -> Case {
    let mut c = case(name, args, &[]);
    c.steps[0].stdin = Some(stdin);
    c
}

/// zstd's commands.
fn zstd_cases() -> Vec<Case> {
    const R: &[Mask] = &[Mask::Rates];
    vec![
        case("compress -v", "compress -v one.txt", R),
        case("compress", "compress one.txt two.bin", R),
        case("compress --rm", "compress --rm one.txt two.bin", R),
        case("compress -r", "compress -r tree", R),
        case("compress -c", "compress -c tree/a.txt", R),
        case("compress -19 -o", "compress -19 one.txt -o x.zst", R),
        case("compress exists", "compress one.txt -o a.zst", R),
        case("compress missing", "compress nothere.txt", R),
        case("compress -l", "compress -l a.zst", R),
        case("decompress --list -v", "decompress --list -v a.zst", R),
        case("decompress -l cut", "decompress -l cut.zst", R),
        case("decompress -v", "decompress -v a.zst -o out.txt", R),
        case("decompress --rm", "decompress --rm a.zst", R),
        case("decompress -c", "decompress -c a.zst", R),
        case("decompress -t", "decompress -t a.zst", R),
        case("decompress cut", "decompress cut.zst", R),
        case("decompress not zstd", "decompress one.txt -o x", R),
        steps(
            "compress -r then decompress -r --rm",
            &["compress -r -q --rm tree", "decompress -r -v --rm tree"],
            R,
        ),
        piped("compress stdin", "compress -c", "one.txt"),
        piped("decompress stdin", "decompress -c", "a.zst"),
    ]
}

/// zip's and unzip's commands.
fn zip_cases() -> Vec<Case> {
    vec![
        case("zip -r", "zip -r z.zip tree", &[]),
        case("zip -r -v", "zip -r -v z.zip tree", &[]),
        case("zip -r -q -9", "zip -r -q -9 z.zip tree one.txt", &[]),
        case("zip -Z store", "zip -r -Z store z.zip tree", &[]),
        case("zip -j", "zip -j z.zip tree/a.txt tree/sub/c.txt", &[]),
        case("zip update", "zip -r ref.zip one.txt", &[]),
        case("zip -d", "zip -d ref.zip tree/b.bin", &[]),
        case("zip missing", "zip z.zip nothere.txt", &[]),
        case("zip unwritable", "zip /nonexistent/c.zip one.txt", &[]),
        case("zip bad method", "zip -Z bzip3 z.zip one.txt", &[]),
        steps(
            "zip -r then unzip -v (each side's zip)",
            &["zip -r -q z.zip tree", "unzip -v z.zip"],
            &[],
        ),
        case("unzip -l", "unzip -l ref.zip", &[]),
        case("unzip -v", "unzip -v ref.zip", &[]),
        case("unzip -Z", "unzip -Z ref.zip", &[]),
        case("unzip -Z -1", "unzip -Z -1 ref.zip", &[]),
        case("unzip -Z -l", "unzip -Z -l ref.zip", &[]),
        case("unzip -Z -v", "unzip -Z -v ref.zip", &[]),
        case("unzip -t", "unzip -t ref.zip", &[]),
        case("unzip -p", "unzip -p ref.zip tree/a.txt", &[]),
        case("unzip -c", "unzip -c ref.zip tree/sub/c.txt", &[]),
        case("unzip -d", "unzip ref.zip -d out", &[]),
        case("unzip -x", "unzip ref.zip -d out -x tree/b.bin", &[]),
        case("unzip exists", "unzip -n ref.zip one.txt", &[]),
        case("unzip -t cut", "unzip -t cut.zip", &[]),
        case("unzip -l missing", "unzip -l nothere.zip", &[]),
        case("unzip -l not a zip", "unzip -l one.txt", &[]),
        piped("unzip - (stdin)", "unzip -t -", "ref.zip"),
    ]
}

/// fix check's, betree's, report's and the manuals' commands.
fn other_cases() -> Vec<Case> {
    const D: &[Mask] = &[Mask::Durations, Mask::Rates];
    const J: &[Mask] = &[Mask::JsonNumbers, Mask::Durations, Mask::Rates];
    let search = "betree search --exprs exprs.txt --events events.txt";
    vec![
        case("fix check SOH", "fix check msgs.soh", &[]),
        case("fix check |", "fix check msgs.psv", &[]),
        case("fix check SOH --json", "fix check --json msgs.soh", &[]),
        case("fix check | --json", "fix check --json msgs.psv", &[]),
        piped("fix check - (stdin)", "fix check -", "msgs.psv"),
        case("fix check missing", "fix check nothere.fix", &[]),
        case("betree search", search, &[]),
        case("betree search all", &format!("{search} --mode all"), &[]),
        case("betree search next", &format!("{search} --mode next"), &[]),
        case(
            "betree search batch",
            &format!("{search} --mode batch"),
            &[],
        ),
        case("betree search -o", &format!("{search} -o s.out"), &[]),
        case(
            "betree search json",
            "betree search --exprs ad.exprs --events ad.json --events-format json",
            &[],
        ),
        case(
            "betree search bad json",
            "betree search --exprs ad.exprs --events ad-bad.json --events-format json",
            &[],
        ),
        case(
            "betree search non-UTF-8 json",
            "betree search --exprs ad.exprs --events ad-utf8.json --events-format json",
            &[],
        ),
        case(
            "betree search missing",
            "betree search --exprs nothere --events events.txt",
            &[],
        ),
        case("betree diff same", "betree diff s1.out s1.out", &[]),
        case("betree diff differ", "betree diff s1.out s2.out", &[]),
        case(
            "betree gen-exprs",
            "betree gen-exprs --params 8 --count 20",
            &[],
        ),
        case(
            "betree gen-events",
            "betree gen-events --params 8 --count 20",
            &[],
        ),
        case(
            "stress --json",
            "stress --json --producers 2 --consumers 2 --duration 300ms --warmup 100ms --sample-every 100ms",
            J,
        ),
        case(
            "report merge",
            "report merge relative.hlog basetime.hlog plain-v2.hlog",
            D,
        ),
        case(
            "report merge --json",
            "report merge --json relative.hlog absolute-early.hlog",
            &[],
        ),
        case(
            "report merge --intervals",
            "report merge --intervals --wide relative.hlog basetime.hlog",
            D,
        ),
        case("report merge missing", "report merge nothere.hlog", &[]),
        case("man --dir", "man --dir pages", &[]),
        case("man compress", "man compress", &[]),
        case("man fix acceptor", "man fix acceptor", &[]),
        case("completions bash", "completions bash", &[]),
        case("completions zsh", "completions zsh", &[]),
        case("no arguments", "", &[]),
        case("unknown command", "frobnicate", &[]),
        case("--version", "--version", &[]),
    ]
}

/// Every command's (and subcommand's) `--help`.
fn help_cases() -> Vec<Case> {
    [
        "",
        "compress",
        "decompress",
        "bench",
        "betree",
        "betree gen-exprs",
        "betree gen-events",
        "betree search",
        "betree diff",
        "betree bench",
        "corpus",
        "fix",
        "fix bench",
        "fix load",
        "fix check",
        "fix acceptor",
        "fix initiator",
        "fix-bench",
        "zip",
        "unzip",
        "report",
        "report merge",
        "stress",
        "completions",
        "man",
    ]
    .into_iter()
    .map(|c| {
        let line = format!("{c} --help");
        case(line.trim(), &line, &[])
    })
    .chain([case("compress -h", "compress -h", &[])])
    .collect()
}

/// Every case, in the order they run.
pub(super) fn cases() -> Vec<Case> {
    let mut all = zstd_cases();
    all.extend(zip_cases());
    all.extend(other_cases());
    all.extend(help_cases());
    all
}
