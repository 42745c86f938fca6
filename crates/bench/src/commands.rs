//! The main job's "commands" part: the user-facing commands run as child
//! processes of this binary on built-in inputs, each beside the library
//! doing the same work in this process and, where it is installed, the
//! familiar program for the job, so the cost of the command around the
//! library (start-up, parsing, I/O) stays visible.
//!
//! Every case runs in interleaved rounds, one run of each side a round
//! (`crate::rounds::case_rounds`): at least [`RUNS`], more while the case is
//! short. The rows report medians, and a ratio between two sides is the
//! median of the rounds' own ratios (`crate::rounds::paired`). Wall, CPU
//! and peak RSS of a process come from `wait4`
//! ([`perfkit_measure::child`]); the library side is timed in-process.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use zstdkit::Recipe;

use perfkit_corpus as corpus;
use perfkit_measure::child::{self, Spawner, Usage};
use perfkit_report::{Report, Row, RunInfo, Section, Value};

use crate::error::{Error, IoContext, Result, StepContext};
use crate::invocation::{Invocation, Launcher};
use crate::peer;

mod betree;
mod compress;
mod zip;

use crate::rounds::{CASE_TIME, MAX_ROUNDS, case_rounds, in_ns, paired};

pub use betree::BetreeWorkload;

/// Size of the corpus file the commands work on: a fourth of the 64 MiB
/// corpus file, so the whole main job stays within about two minutes; 4
/// MiB in a debug build (the test suite's, which checks the rows and
/// their arithmetic, not their figures).
pub const INPUT_SIZE: usize = if cfg!(debug_assertions) {
    4 << 20
} else {
    16 << 20
};

/// The fewest interleaved rounds of a case; rows show the median. Issue
/// 64 asks medians of at least 5. A debug build (the test suite's, which
/// checks the rows' arithmetic, not their figures) runs 3: at 5, this part
/// was most of the suite's longest test executable (120 s in CI).
pub const RUNS: usize = if cfg!(debug_assertions) { 3 } else { 5 };

/// What a debug build (the test suite's, whose own crates are not
/// optimised) divides the FIX workloads by: it checks the part's rows and
/// their arithmetic, not its figures, and at full size its `fix check`
/// runs and QuickFIX's took 80 s of the suite's `bench --only commands`
/// (225 s in all).
const DEBUG_FIX_SHRINK: usize = if cfg!(debug_assertions) { 10 } else { 1 };

/// FIX messages in the generated `fix check` input.
const FIX_MESSAGES: usize = 100_000 / DEBUG_FIX_SHRINK;

/// Messages QuickFIX/C++ builds for the `fix check` case beside QuickFIX's
/// own parse: enough that both processes' start-up is noise (QuickFIX
/// takes about a second over them here).
const QUICKFIX_MESSAGES: usize = 500_000 / DEBUG_FIX_SHRINK;

/// Market data snapshots QuickFIX/C++ builds with deep books (about 1 kB
/// each: 40 MB, which QuickFIX parses in about half a second here).
const QUICKFIX_BOOK_MESSAGES: usize = 40_000 / DEBUG_FIX_SHRINK;

/// Of those, the messages checked again in the SOH form.
const QUICKFIX_SOH_MESSAGES: usize = 200_000 / DEBUG_FIX_SHRINK;

/// Messages QuickFIX/C++ builds in FIX.4.2, 4.4 and 5.0 SP2 in turn.
const QUICKFIX_VERSIONS_MESSAGES: usize = 150_000 / DEBUG_FIX_SHRINK;

/// Messages QuickFIX/J builds (the same mix as QuickFIX/C++'s; about a
/// second and a half of its start-up and building here).
const QUICKFIXJ_MESSAGES: usize = 100_000 / DEBUG_FIX_SHRINK;

/// Interleaved runs of each `fix check` workload beside QuickFIX, whose
/// CPU ratio is a headline: with 3, two runs of one binary differed by up
/// to 4 % on the smallest workload (12 ms of CPU), over the 0.12 target's
/// margin. They add about 5 s, nearly all QuickFIX's. A debug build (the
/// test suite's) runs `RUNS`.
const CHECK_RUNS: usize = if cfg!(debug_assertions) { RUNS } else { 7 };

/// What the `fix check` rows beside QuickFIX hold equal, their
/// `held_equal` column: the same file, and the same checks of each
/// message.
const CHECK_HELD: &str = "the same file, every message taken by both (each exits 0 only then); \
     the same checks: QuickFIX's FIX::Message(text, FIX44 dictionary, validate) and fixcore's \
     Parser both check BeginString, BodyLength and MsgType first and in order, BodyLength and \
     CheckSum, repeated tags, repeating groups and Length/Data fields by a FIX 4.4 dictionary, \
     and neither runs DataDictionary::validate (types, required fields, enums)";

/// Interleaved rounds of each `betree search` workload: each runs the
/// command's index build (1-4 s of CPU at 100,000 expressions) outside
/// the rows' timing, so more rounds would lengthen the bench much and the
/// rows, of 0.5-1.5 s searches, little.
const BETREE_RUNS: usize = 3;

/// Boolean parameters of the reference generator's `betree search`
/// workload (as `perfkit betree gen-*` writes it).
const BETREE_PARAMS: usize = 128;
/// Expressions of each `betree search` workload. Its rows are the
/// command's own search time (`--times`), so the index build, about 4 s of
/// CPU a run for the three at 100,000 here, adds to the bench's time but
/// not to the rows' noise. A debug build (the test suite's, whose betree
/// builds 100,000 reference expressions in 14 s) runs the same rows at
/// 5,000 (at 20,000 they took 74 s of the suite's 225 s in this part).
pub const BETREE_EXPRS: usize = if cfg!(debug_assertions) {
    5_000
} else {
    100_000
};

/// One side of a comparison: one measurement of the same work a round.
#[derive(Default)]
struct Side {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
    rss: Vec<u64>,
}

impl Side {
    fn push(&mut self, u: Usage) {
        self.wall.push(u.wall);
        self.cpu.push(u.cpu);
        self.rss.push(u.peak_rss_bytes);
    }

    fn push_wall(&mut self, d: Duration) {
        self.wall.push(d);
    }

    fn wall(&self) -> Duration {
        median(&self.wall)
    }
}

fn median<T: Copy + Ord + Default>(v: &[T]) -> T {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.get(s.len() / 2).copied().unwrap_or_default()
}

/// What a case processes per run: bytes (rows show MB/s) or items (rows
/// show items/s, named by `unit`).
#[derive(Clone, Copy)]
enum Work {
    Bytes(u64),
    Items(u64, &'static str),
}

impl Work {
    fn rate_column(self) -> &'static str {
        match self {
            Work::Bytes(_) => "throughput_mb_s",
            Work::Items(_, "events") => "events_per_s",
            Work::Items(_, _) => "messages_per_s",
        }
    }

    fn rate(self, wall: Duration) -> f64 {
        let s = wall.as_secs_f64();
        match self {
            Work::Bytes(b) => b as f64 / 1e6 / s,
            Work::Items(n, _) => n as f64 / s,
        }
    }
}

/// Runs a process side once and records it.
fn process(spawner: &mut Spawner, side: &mut Side, cmd: &mut Command) -> Result<()> {
    side.push(spawner.run(cmd)?);
    Ok(())
}

/// Times one in-process call of the library.
fn library(side: &mut Side, f: impl FnOnce() -> Result<()>) -> Result<()> {
    let t = Instant::now();
    f()?;
    side.push_wall(t.elapsed());
    Ok(())
}

/// The rows of one case: the command, the library, and the peer (or a note
/// saying it is missing).
#[allow(clippy::too_many_arguments)]
fn case(
    section: &mut Section,
    name: &str,
    work: Work,
    ours: &Side,
    lib: Option<(&str, &Side)>,
    peer: Option<(&str, &Side)>,
) {
    let wall = ours.wall();
    let mut row = Row::new(format!("perfkit {name}"))
        .col(work.rate_column(), Value::num(work.rate(wall), 1))
        .col("wall_ms", Value::num(wall.as_secs_f64() * 1e3, 1))
        .col(
            "cpu_ms",
            Value::num(median(&ours.cpu).as_secs_f64() * 1e3, 1),
        )
        .col(
            "peak_rss_mib",
            Value::num(median(&ours.rss) as f64 / (1 << 20) as f64, 1),
        )
        .json_col("rounds", ours.wall.len())
        .json_col("wall_ns_rounds", in_ns(&ours.wall))
        .json_col("cpu_ns_rounds", in_ns(&ours.cpu));
    if let Some((_, l)) = lib {
        // > 1: the command keeps up with the library; < 1: what it costs.
        row = row.col("vs_library", Value::num(paired(&l.wall, &ours.wall), 3));
    }
    if let Some((peer_name, p)) = peer {
        row = row
            .col("vs_peer", Value::num(paired(&p.wall, &ours.wall), 3))
            .col("cpu_vs_peer", Value::num(paired(&p.cpu, &ours.cpu), 3))
            .col("peer", peer_name);
    }
    section.row(row);
    if let Some((lib_name, l)) = lib {
        let w = l.wall();
        section.row(
            Row::new(format!("library: {lib_name}"))
                .col(work.rate_column(), Value::num(work.rate(w), 1))
                .col("wall_ms", Value::num(w.as_secs_f64() * 1e3, 1))
                .json_col("wall_ns_rounds", in_ns(&l.wall)),
        );
    }
    if let Some((peer_name, p)) = peer {
        let w = p.wall();
        section.row(
            Row::new(format!("peer: {peer_name}"))
                .col(work.rate_column(), Value::num(work.rate(w), 1))
                .col("wall_ms", Value::num(w.as_secs_f64() * 1e3, 1))
                .col("cpu_ms", Value::num(median(&p.cpu).as_secs_f64() * 1e3, 1))
                .col(
                    "peak_rss_mib",
                    Value::num(median(&p.rss) as f64 / (1 << 20) as f64, 1),
                )
                .json_col("wall_ns_rounds", in_ns(&p.wall))
                .json_col("cpu_ns_rounds", in_ns(&p.cpu)),
        );
    }
}

/// Whether `program` runs (`program --version` or `-v` exits at all).
fn installed(program: &str) -> bool {
    ["--version", "-v"].iter().any(|flag| {
        Command::new(program)
            .arg(flag)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    })
}

/// A FIX 4.4 NewOrderSingle framed by plain arithmetic (BodyLength and
/// CheckSum), independently of fixcore.
fn fix_message(seq: usize) -> Vec<u8> {
    let body = format!(
        "35=D\x0149=BUYSIDE\x0156=SELLSIDE\x0134={seq}\x0152=20260101-12:00:00.000\x0111=ORD{seq}\x0121=1\x0155=SYM{}\x0154={}\x0160=20260101-12:00:00.000\x0138={}\x0140=2\x0144={}.{:02}\x01",
        seq % 97,
        1 + seq % 2,
        100 + seq % 900,
        10 + seq % 90,
        seq % 100
    );
    let head = format!("8=FIX.4.4\x019={}\x01{body}", body.len());
    let sum: u32 = head.bytes().map(u32::from).sum();
    format!("{head}10={:03}\x01\n", sum % 256).into_bytes()
}

/// Measures every command case into a report whose one section is
/// "process vs library vs peer". `search_batch` is the batch size of
/// `perfkit betree search`, so the library side searches as the command does;
/// `perfkit` spells the commands and `spawner` starts the measured ones.
pub fn measure(
    search_batch: usize,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<Report> {
    let dir = tempfile::tempdir().doing("creating a scratch directory")?;
    let d = dir.path();
    let mut report = Report::new("bench commands");
    let mut section = Section::new(format!(
        "process vs library vs peer, interleaved rounds (at least {RUNS}, {CHECK_RUNS} for fix \
         check beside QuickFIX and {BETREE_RUNS} for betree search; a case of short runs runs \
         more, up to {MAX_ROUNDS}, until it has spent {} s), medians",
        CASE_TIME.as_secs()
    ));

    let input = d.join("corpus.bin");
    std::fs::write(&input, corpus::mixed(INPUT_SIZE)?).doing("writing the corpus file")?;
    compress_cases(&mut section, d, &input, perfkit, spawner)?;
    compress::compress_found_cases(&mut section, d, perfkit, spawner)?;
    fix_check_case(&mut section, d, perfkit, spawner)?;
    quickfix_check_case(&mut section, d, perfkit, spawner)?;
    betree::betree_case(&mut section, d, search_batch, perfkit, spawner)?;
    zip::zip_cases(&mut section, d, &input, perfkit, spawner)?;
    zip::zip_found_cases(&mut section, d, perfkit, spawner)?;
    zip::zip_delete_case(&mut section, d, &input, perfkit, spawner)?;
    section.note(format!(
        "inputs: the {} MiB mixed corpus file; {FIX_MESSAGES} generated NewOrderSingle messages; {QUICKFIX_MESSAGES} messages QuickFIX/C++ built (quickfix-parse --build); betree search on three generators (the reference one over {BETREE_PARAMS} parameters, the adtech profile, deep negation), {BETREE_EXPRS} expressions each and 1,000, 2,500 and 5,000 events",
        INPUT_SIZE >> 20
    ));
    section.note(
        "perfkit and peer rows are child processes started from a copy of this program forked at its start (wall from spawn to exit, CPU and peak RSS from wait4, output to /dev/null; Linux counts that copy's few MiB into a child's peak RSS); library rows are timed in this process on the same input",
    );
    section.note(
        "betree search: the search's own wall and CPU time as the command reports it (--times: its output written, start-up and index build left out), so the row compares with the library's search of a built index",
    );
    section.note(
        "vs_library = library wall / command wall (below 1: what the command adds to the library); vs_peer = peer wall / perfkit wall (above 1: perfkit faster); cpu_vs_peer = peer CPU / perfkit CPU, user + sys (above 1: perfkit spends less); each the median of the rounds' own ratios, so it need not equal the ratio of the rows' medians",
    );
    // The runs follow each other closely, so each meets memory the one
    // before freed: on a VM that hands free memory back to its host, a lone
    // command meets colder memory than these rows (docs/compress.md).
    section.note(format!(
        "huge pages for perfkit's large buffers: {}; the runs follow each other closely, so on a VM that hands free memory back to its host a lone command meets colder memory than these rows",
        hugepages::policy()
    ));
    report.sections.push(section);
    report.run = RunInfo {
        iterations: RUNS as u64,
        warmup: 0,
        runs: RUNS as u64,
        pinned: None,
        timing: "wall from spawn to wait4 per child process; Instant around each library call"
            .into(),
    };
    Ok(report)
}

/// `compress --recipe balanced` and `decompress` of the corpus file,
/// beside zstdkit in this process and the zstd CLI.
fn compress_cases(
    section: &mut Section,
    d: &Path,
    input: &Path,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    let work = Work::Bytes(INPUT_SIZE as u64);
    let have_zstd = installed("zstd");
    let recipe = Recipe::Balanced;
    let frame = d.join("corpus.bin.zst");
    child::run(
        perfkit
            .command(&Invocation::Compress {
                input,
                recipe,
                threads: None,
                output: Some(&frame),
            })
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    )?;
    let zstd_args = |extra: &[&str], file: &Path| -> Vec<std::ffi::OsString> {
        let mut v: Vec<std::ffi::OsString> = extra.iter().map(Into::into).collect();
        v.push(file.into());
        v
    };
    let level = format!("-{}", recipe.level());
    let strategy = format!("--zstd=strategy={}", recipe.strategy().id());
    let (mut ours, mut lib, mut peer) = (Side::default(), Side::default(), Side::default());
    let mut rounds = case_rounds(RUNS);
    while rounds.another() {
        process(
            spawner,
            &mut ours,
            &mut perfkit.command(&Invocation::Compress {
                input,
                recipe,
                threads: None,
                output: None,
            }),
        )?;
        library(&mut lib, || {
            crate::zstd::compress_file(input, recipe.params()).map(drop)
        })?;
        if have_zstd {
            process(
                spawner,
                &mut peer,
                Command::new("zstd").args(zstd_args(
                    &["-q", "-c", "--ultra", &level, &strategy, "--single-thread"],
                    input,
                )),
            )?;
        }
    }
    let zstd_name = format!("zstd {level} {strategy} --single-thread");
    case(
        section,
        "compress --recipe balanced",
        work,
        &ours,
        Some(("zstdkit runway encoder, recipe balanced", &lib)),
        have_zstd.then_some((zstd_name.as_str(), &peer)),
    );
    if have_zstd {
        compress::corpus_held(section, d, input, &frame, recipe)?;
    }
    let (mut ours, mut lib, mut peer) = (Side::default(), Side::default(), Side::default());
    let mut rounds = case_rounds(RUNS);
    while rounds.another() {
        process(
            spawner,
            &mut ours,
            &mut perfkit.command(&Invocation::Decompress { input: &frame }),
        )?;
        library(&mut lib, || {
            let n = crate::zstd::decompress_file(&frame)?;
            if n != INPUT_SIZE as u64 {
                return Err(Error::Mismatch(format!(
                    "decompressed {n} bytes, expected {INPUT_SIZE}"
                )));
            }
            Ok(())
        })?;
        if have_zstd {
            process(
                spawner,
                &mut peer,
                Command::new("zstd").args(zstd_args(&["-q", "-d", "-c"], &frame)),
            )?;
        }
    }
    case(
        section,
        "decompress",
        work,
        &ours,
        Some(("zstdkit streaming decoder", &lib)),
        have_zstd.then_some(("zstd -d", &peer)),
    );
    if have_zstd {
        let frame_bytes = std::fs::metadata(&frame)
            .doing("reading the corpus frame's size")?
            .len();
        compress::frame_held(section, "decompress", frame_bytes, INPUT_SIZE as u64);
    }
    if !have_zstd {
        section.note(
            "zstd not installed: compress/decompress have no peer row (apt-get install zstd)",
        );
    }
    Ok(())
}

/// `fix check` of generated NewOrderSingle messages, beside fixcore's
/// parser in this process.
fn fix_check_case(
    section: &mut Section,
    d: &Path,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    let fix_file = d.join("orders.fix");
    let fix_data: Vec<u8> = (1..=FIX_MESSAGES).flat_map(fix_message).collect();
    std::fs::write(&fix_file, &fix_data).doing("writing the FIX file")?;
    let (mut ours, mut lib) = (Side::default(), Side::default());
    let mut rounds = case_rounds(RUNS);
    while rounds.another() {
        process(
            spawner,
            &mut ours,
            &mut perfkit.command(&Invocation::FixCheck { input: &fix_file }),
        )?;
        library(&mut lib, || {
            let mut parser = fixcore::parse::Parser::new();
            for m in fix_data.split_inclusive(|&b| b == b'\n') {
                let m = m.strip_suffix(b"\n").unwrap_or(m);
                parser.parse(m).during("generated FIX message")?;
            }
            Ok(())
        })?;
    }
    case(
        section,
        "fix check",
        Work::Items(FIX_MESSAGES as u64, "messages"),
        &ours,
        Some(("fixcore Parser::parse per message", &lib)),
        None,
    );
    Ok(())
}

/// `fix check` of a file QuickFIX/C++ wrote (`quickfix-parse --build`: a
/// mix of orders, reports, cancels, market data with groups, heartbeats,
/// one per line in the `|` form), beside the quickfix-parse peer reading
/// the same file line by line as a QuickFIX session parses what it reads
/// (`--file`: `FIX::Message(string, dictionary, validate)`). Left out with
/// a note when the peer has not been built.
fn quickfix_check_case(
    section: &mut Section,
    d: &Path,
    perfkit: &dyn Launcher,
    spawner: &mut Spawner,
) -> Result<()> {
    let file = d.join("quickfix-built.fix");
    let built = peer::start_or_note(
        peer::QUICKFIX,
        "fix check beside QuickFIX",
        " (needs g++ and libquickfix-dev)",
        |exe| {
            build_file(
                exe,
                &["--build", &QUICKFIX_MESSAGES.to_string()],
                &file,
                "creating the QuickFIX-built file",
            )?;
            Ok(exe.to_owned())
        },
    );
    let exe = match built {
        Ok(exe) => exe,
        Err(peer::Unavailable(why)) => {
            section.note(why);
            return Ok(());
        }
    };
    let dictionary = exe.with_file_name(peer::QUICKFIX_DICTIONARY);
    // The same messages in the SOH form.
    let soh = d.join("quickfix-built-soh.fix");
    write_soh_form(&file, &soh)?;
    let mut workloads = vec![
        ("fix check, QuickFIX-built", file.clone(), QUICKFIX_MESSAGES),
        (
            "fix check, QuickFIX-built, SOH form",
            soh,
            QUICKFIX_SOH_MESSAGES,
        ),
    ];
    deep_workloads(section, d, &exe, &mut workloads);
    // The same mix framed by another engine, QuickFIX/J (its own field
    // order, number and time formats), in the SOH form it writes.
    let java = d.join("quickfixj-built.fix");
    let built = peer::start_or_note(
        perfkit_peers::QUICKFIXJ,
        "fix check of QuickFIX/J-built messages",
        " (needs a JDK)",
        |exe| {
            build_file(
                exe,
                &["build", &QUICKFIXJ_MESSAGES.to_string()],
                &java,
                "creating the QuickFIX/J-built file",
            )
        },
    );
    match built {
        Ok(()) => workloads.push((
            "fix check, QuickFIX/J-built, SOH form",
            java,
            QUICKFIXJ_MESSAGES,
        )),
        Err(peer::Unavailable(why)) => {
            section.note(why);
        }
    }
    for (name, input, messages) in &workloads {
        let (name, input, messages) = (*name, input.as_path(), *messages);
        let (mut ours, mut theirs) = (Side::default(), Side::default());
        let mut rounds = case_rounds(CHECK_RUNS);
        while rounds.another() {
            process(
                spawner,
                &mut ours,
                &mut perfkit.command(&Invocation::FixCheck { input }),
            )?;
            process(
                spawner,
                &mut theirs,
                Command::new(&exe)
                    .arg("--dict")
                    .arg(&dictionary)
                    .arg("--file")
                    .arg(input),
            )?;
        }
        case(
            section,
            name,
            Work::Items(messages as u64, "messages"),
            &ours,
            None,
            Some(("QuickFIX Message(line, dictionary, validate)", &theirs)),
        );
        // Saying what is held equal makes the rows' CPU ratio a summary
        // line (the worst workload's), as issue 64's target is stated in
        // CPU; without it the summary gave only the wall ratio.
        held(
            section,
            &format!("perfkit {name}"),
            &[],
            CHECK_HELD.to_owned(),
        );
        of_workloads(section, FIX_CHECK_WORKLOADS);
    }
    if !workloads.is_empty() {
        section.note(format!(
            "fix check beside QuickFIX: medians of at least {CHECK_RUNS} interleaved rounds each; held_equal \
             (--wide, JSON) says what both sides check; each file is written just before its runs, \
             so both read it from a fresh page cache, as after reading it from disk (the same \
             QuickFIX/J file cached hours before, its cache aged, cost perfkit 13 % more CPU in \
             the kernel's copy and QuickFIX 1 %)"
        ));
    }
    Ok(())
}

/// The first QUICKFIX_SOH_MESSAGES messages of `file` (one a line, `|`
/// between fields) to `soh` in the SOH form, one a line, as a session log
/// holds them: `fix check` reads them as a byte stream split by
/// BodyLength, QuickFIX line by line. The form, not the count, is what
/// this workload varies.
fn write_soh_form(file: &Path, soh: &Path) -> Result<()> {
    let mut text = std::fs::read(file).doing("reading the QuickFIX-built file")?;
    let cut = text
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .nth(QUICKFIX_SOH_MESSAGES - 1)
        .map_or(text.len(), |(i, _)| i + 1);
    text.truncate(cut);
    for b in &mut text {
        if *b == b'|' {
            *b = 0x01;
        }
    }
    std::fs::write(soh, text).doing("writing the QuickFIX-built file in the SOH form")
}

/// The workloads the QuickFIX peer `exe` builds with a flag, added to
/// `workloads` as (name, file in `d`, messages):
/// market data with deep books (`--build N --book`: snapshots of 10 to
/// 60 entries), and FIX.4.2, 4.4 and 5.0 SP2 in turn (`--versions`). A
/// peer built before these flags refuses them: a note, and the other
/// workloads still run.
fn deep_workloads(
    section: &mut Section,
    d: &Path,
    exe: &Path,
    workloads: &mut Vec<(&'static str, PathBuf, usize)>,
) {
    for (name, flag, count, file) in [
        (
            "fix check, QuickFIX-built market data, 10-60 entries a message",
            "--book",
            QUICKFIX_BOOK_MESSAGES,
            "quickfix-built-book.fix",
        ),
        (
            "fix check, QuickFIX-built FIX.4.2, 4.4 and 5.0 SP2 in turn",
            "--versions",
            QUICKFIX_VERSIONS_MESSAGES,
            "quickfix-built-versions.fix",
        ),
    ] {
        let path = d.join(file);
        let built = std::fs::File::create(&path)
            .doing_with(|| format!("creating {}", path.display()))
            .and_then(|out| {
                child::run(
                    Command::new(exe)
                        .args(["--build", &count.to_string(), flag])
                        .stdin(Stdio::null())
                        .stdout(out),
                )
                .map(drop)
                .map_err(Error::from)
            });
        match built {
            Ok(()) => workloads.push((name, path, count)),
            Err(e) => {
                section.note(format!(
                    "{name} not measured: {} (`cargo xtask peers` builds a quickfix-parse that \
                     has {flag})",
                    perfkit_report::one_line(&e)
                ));
            }
        }
    }
}

/// Runs the peer `exe` with `args` on no input, its output written to
/// `file` (created; `creating` names that step in the error): how the
/// QuickFIX and QuickFIX/J peers build their message files.
fn build_file(exe: &Path, args: &[&str], file: &Path, creating: &str) -> Result<()> {
    let out = std::fs::File::create(file).doing(creating)?;
    child::run(
        Command::new(exe)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out),
    )?;
    Ok(())
}

/// The group of the `fix check` rows beside QuickFIX, one per workload,
/// whose summary line is the worst of them.
pub const FIX_CHECK_WORKLOADS: &str = "fix check beside QuickFIX";

/// The group of the `betree search` rows, one per generator, whose summary
/// line is the worst of them.
pub const BETREE_WORKLOADS: &str = "betree search";

/// The last row named `row` (the one a case just added) gets `cols` and
/// says what it holds equal with its peer (`held_equal`).
fn held(section: &mut Section, row: &str, cols: &[(&str, Value)], equal: String) {
    if let Some(r) = section.rows.iter_mut().rev().find(|r| r.name == row) {
        let mut with = r.clone();
        for (c, v) in cols {
            with = with.col(c, v.clone());
        }
        *r = with.col("held_equal", equal);
    }
}

/// Marks the last perfkit row of `section` as one workload of `group`
/// ([`crate::summary::WORKLOAD_GROUP`]): the summary shows the group's
/// worst ratio, not each row's.
fn of_workloads(section: &mut Section, group: &str) {
    if let Some(row) = section
        .rows
        .iter_mut()
        .rev()
        .find(|r| r.name.starts_with("perfkit "))
    {
        let marked = row.clone().json_col(crate::summary::WORKLOAD_GROUP, group);
        *row = marked;
    }
}
