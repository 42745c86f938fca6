//! The QuickFIX peer (`target/peers/quickfix-parse`, built by `cargo xtask
//! peers` from `xtask/peers/quickfix/`): a child process that parses the
//! same messages with QuickFIX and times them the way fixcore's parse rows
//! are timed, driven run by run so fix-bench can alternate it with its own
//! runs. The process plumbing (pipes, stderr, timeouts, killing) is
//! [`crate::peer::Process`]; this module is the protocol.
//!
//! Protocol (stdin/stdout, text): the messages go first as records
//! `"<set> <length>\n" bytes "\n"` and a `go` line; the peer parses each
//! once and answers `ready <sets>` (or `invalid <set> <index> <reason>`).
//! Each `run <warmup> <iterations> <batch>` line then measures every set,
//! answering `s <set> <ns per call> <calls>` per batch, `e <set> <elapsed
//! ns>` per set and `done`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::{self as measure, Comparison, Settings};
use crate::error::{Error, IoContext, Result, StepContext};
use crate::peer::{
    self, Process, QUICKFIX as NAME, QUICKFIX_DICTIONARY as DICTIONARY,
    QUICKFIX_VERSION_FILE as VERSION_FILE, Unavailable,
};
use perfkit_measure::latency_histogram;
use perfkit_report::one_line;

/// How the notes name the peer when its rows are left out.
const LABEL: &str = "QuickFIX";

/// What building the peer requires, added to the note when it is missing.
const NEEDS: &str = " (needs g++ and libquickfix-dev)";

/// How long the peer gets to read the messages, and then to load the
/// dictionary and parse every message once before answering `ready`: a
/// program that never reads or answers is a note, not a hung bench.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a run may take before the peer counts as stalled and is
/// killed: generous, a fixed allowance plus 1 ms per call asked for (warm-up
/// included) in every set, orders of magnitude more than a parse of a
/// sample message takes.
fn run_limit(warmup: usize, iterations: usize, sets: usize) -> Duration {
    let calls = (warmup as u64)
        .saturating_add(iterations as u64)
        .saturating_mul(sets as u64);
    Duration::from_secs(60).saturating_add(Duration::from_millis(calls))
}

/// A running peer with the messages loaded.
pub struct Peer {
    process: Process,
    sets: usize,
    version: Option<String>,
}

/// What one set measured over every run.
pub struct Measured {
    /// Nanoseconds per call, one record per call.
    pub histogram: Histogram<u64>,
    /// Wall time the peer spent in the timed loops.
    pub elapsed: Duration,
}

/// The records that hand `sets` to the peer, ending with `go`.
fn records(sets: &[Vec<Vec<u8>>]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        for m in set {
            out.extend_from_slice(format!("{i} {}\n", m.len()).as_bytes());
            out.extend_from_slice(m);
            out.push(b'\n');
        }
    }
    out.extend_from_slice(b"go\n");
    out
}

/// Where the peer is, or the note saying it has not been built: the first
/// half of [`crate::peer::start_or_note`], whose second is
/// [`Peer::start`].
pub fn locate() -> std::result::Result<PathBuf, Unavailable> {
    peer::start_or_note(NAME, LABEL, NEEDS, |exe| Ok(exe.to_owned()))
}

/// The QuickFIX version recorded beside `exe`, if any.
fn recorded_version(exe: &Path) -> Option<String> {
    let v = std::fs::read_to_string(exe.with_file_name(VERSION_FILE)).ok()?;
    let v = v.trim();
    (!v.is_empty() && !v.contains('\n')).then(|| v.to_owned())
}

impl Peer {
    /// Starts the peer on `exe` with `sets` loaded, pinned to `pin` if
    /// given. A peer that cannot start, does not answer, or rejects a
    /// message, is [`Unavailable`] with the reason, worded as
    /// [`crate::peer::start_or_note`] words it.
    pub fn start(
        exe: &Path,
        sets: &[Vec<Vec<u8>>],
        pin: Option<usize>,
    ) -> std::result::Result<Peer, Unavailable> {
        let mut cmd = Command::new(exe);
        cmd.arg("--dict")
            .arg(exe.with_file_name(DICTIONARY))
            .arg("--bench");
        if let Some(core) = pin {
            cmd.arg("--pin").arg(core.to_string());
        }
        Peer::launch(cmd, sets, recorded_version(exe))
            .map_err(|e| Unavailable::because(LABEL, one_line(&e)))
    }

    /// Runs `cmd` as the peer and hands it `sets`.
    fn launch(cmd: Command, sets: &[Vec<Vec<u8>>], version: Option<String>) -> Result<Peer> {
        let program = cmd.get_program().to_owned();
        let mut process = Process::spawn(cmd, b"quit\n")
            .doing_with(|| format!("starting {}", program.to_string_lossy()))?;
        let records = records(sets);
        // Written before the program has shown it reads: with a large
        // --input a program that does not would block the write for ever.
        process.send(READY_TIMEOUT, move |w| w.write_all(&records))?;
        let line = process.read_line_within(READY_TIMEOUT)?;
        if line == format!("ready {}", sets.len()) {
            process.idle();
            return Ok(Peer {
                process,
                sets: sets.len(),
                version,
            });
        }
        let what = match line.strip_prefix("invalid ") {
            Some(rest) => {
                let mut w = rest.splitn(3, ' ');
                let (set, index, reason) = (w.next(), w.next(), w.next());
                format!(
                    "QuickFIX rejects message {} of set {}: {}",
                    index.unwrap_or("?"),
                    set.unwrap_or("?"),
                    reason.unwrap_or("?")
                )
            }
            None => format!("unexpected answer {line:?}"),
        };
        Err(process.fail(&what))
    }

    /// The QuickFIX package version `cargo xtask peers` recorded, if any.
    pub fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }

    /// One run: `warmup` untimed calls, then `iterations` calls in batches
    /// of `batch` per clock read, for every set in turn, recorded into
    /// `into` (one per set) as fix-bench records its own batches. Any
    /// failure kills the peer (it may be blocked writing the rest of the
    /// run) and quotes its last stderr lines.
    pub fn run(
        &mut self,
        warmup: usize,
        iterations: usize,
        batch: usize,
        into: &mut [Measured],
    ) -> Result<()> {
        if into.len() != self.sets {
            return Err(Error::Invalid(format!(
                "{} histograms for {} sets",
                into.len(),
                self.sets
            )));
        }
        let limit = run_limit(warmup, iterations, self.sets);
        let deadline = Instant::now() + limit;
        self.process.send(limit, move |w| {
            writeln!(w, "run {warmup} {iterations} {batch}")
        })?;
        let mut tally = Tally::new(self.sets);
        loop {
            // A read that fails has killed the peer and named it already.
            let line = self.process.read_line_by(deadline)?;
            match take(&line, into, &mut tally) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) => return Err(self.process.fail(&one_line(&e))),
            }
        }
        self.process.idle();
        if let Some(set) = tally.calls.iter().position(|&c| c != iterations) {
            return Err(Error::Mismatch(format!(
                "{NAME}: set {set} measured {} calls, not {iterations}",
                tally.calls[set]
            )));
        }
        Ok(())
    }
}

/// What one run's answer has said so far, per set.
struct Tally {
    /// Calls measured.
    calls: Vec<usize>,
    /// Whether the elapsed time (`e` line) came.
    elapsed: Vec<bool>,
}

impl Tally {
    fn new(sets: usize) -> Tally {
        Tally {
            calls: vec![0; sets],
            elapsed: vec![false; sets],
        }
    }
}

/// A run's answer whose `e` lines break the protocol: each set's elapsed
/// time comes exactly once per run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Elapsed {
    /// A second `e` line for the set in one run.
    Twice(usize),
    /// `done` before the set's `e` line.
    Missing(usize),
    /// The set's elapsed times add up past what a `Duration` holds.
    Overflow(usize),
}

impl std::fmt::Display for Elapsed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Elapsed::Twice(set) => write!(f, "set {set}: a second elapsed time in one run"),
            Elapsed::Missing(set) => write!(f, "set {set}: no elapsed time before done"),
            Elapsed::Overflow(set) => {
                write!(f, "set {set}: the elapsed times overflow the total")
            }
        }
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for Error {
    fn from(e: Elapsed) -> Error {
        Error::Invalid(e.to_string())
    }
}

/// Records one line of a run's answer into `into` and `tally`; true at
/// `done`.
fn take(line: &str, into: &mut [Measured], tally: &mut Tally) -> Result<bool> {
    let words: Vec<&str> = line.split_ascii_whitespace().collect();
    match words.as_slice() {
        ["done"] => {
            if let Some(set) = tally.elapsed.iter().position(|&seen| !seen) {
                return Err(Elapsed::Missing(set).into());
            }
            return Ok(true);
        }
        ["s", set, ns, calls] => {
            let (set, ns, calls) = (num(set)?, num(ns)?, num(calls)?);
            let m = into
                .get_mut(set)
                .ok_or_else(|| Error::Invalid(format!("set {set} out of range")))?;
            // A hostile count must not overflow (a panic in debug builds).
            let total = tally.calls[set].checked_add(calls).ok_or_else(|| {
                Error::Invalid(format!("set {set}: {calls} more calls overflow the count"))
            })?;
            // The peer's batch mean, recorded once per call, as fixcore's
            // measure::interleave records its own.
            m.histogram
                .record_n(ns.max(1) as u64, calls as u64)
                .map_err(|source| Error::Record {
                    value: ns as u64,
                    source,
                })?;
            tally.calls[set] = total;
        }
        ["e", set, ns] => {
            let (set, ns) = (num(set)?, num(ns)?);
            let m = into
                .get_mut(set)
                .ok_or_else(|| Error::Invalid(format!("set {set} out of range")))?;
            if std::mem::replace(&mut tally.elapsed[set], true) {
                return Err(Elapsed::Twice(set).into());
            }
            m.elapsed = m
                .elapsed
                .checked_add(Duration::from_nanos(ns as u64))
                .ok_or(Elapsed::Overflow(set))?;
        }
        _ => return Err(Error::Invalid(format!("unexpected line {line:?}"))),
    }
    Ok(false)
}

fn num(word: &str) -> Result<usize> {
    word.parse().map_err(|source| Error::Number {
        what: format!("not a number: {word:?}"),
        source,
    })
}

/// fixcore's parse rows, and QuickFIX's for the same messages (one per
/// row, same order) or why there are none.
pub struct ParseSide {
    /// fixcore's rows.
    pub ours: Comparison,
    /// QuickFIX's rows, or the note saying why there are none.
    pub quickfix: std::result::Result<QuickfixRows, String>,
}

/// What the QuickFIX peer measured, and the QuickFIX version it recorded.
pub struct QuickfixRows {
    /// One per row of ours, in the same order.
    pub measured: Vec<Measured>,
    /// The QuickFIX version the peer's build recorded.
    pub version: Option<String>,
}

/// The parse section: fixcore's parser on each sample (or the `--input`
/// messages), and the QuickFIX peer on the same messages when it is built.
/// fixcore validates the messages and names the rows
/// ([`measure::parse_sets`]); the peer is fed exactly those, and runs
/// between fixcore's runs ([`measure::parse_with`]): run k of ours is
/// followed by run k of QuickFIX's, in one invocation, so a slow stretch of
/// the machine hits both. Both sides make `warmup` unmeasured calls per row
/// before the first run, then measure [`Settings::per_run`] calls per row in
/// each run, as every other part of fix-bench spreads its iterations. The
/// sides do not construct alike: fixcore's measure builds one Parser per row
/// and reuses its tables for every call, which is how fixcore is meant to be
/// used; QuickFIX constructs a new FIX::Message per call, which is what a
/// QuickFIX session does with each message it reads. The report says so.
pub fn parse_beside_quickfix(s: &Settings, input: Option<&[Vec<u8>]>) -> Result<ParseSide> {
    let sets = measure::parse_sets(input).during("benchmarking the parser")?;
    let mut peer = locate().and_then(|exe| Peer::start(&exe, sets.messages(), s.pin));
    let mut theirs: Vec<Measured> = sets
        .messages()
        .iter()
        .map(|_| Measured {
            histogram: latency_histogram(),
            elapsed: Duration::ZERO,
        })
        .collect();
    // After run k of ours, run k of QuickFIX's.
    let ours = measure::parse_with(s, &sets, |run| -> Result<()> {
        if let Ok(p) = &mut peer {
            let warmup = if run == 0 { s.warmup } else { 0 };
            p.run(warmup, s.per_run(), s.batch, &mut theirs)
                .during("measuring QuickFIX (the quickfix-parse peer)")?;
        }
        Ok(())
    })?;
    Ok(ParseSide {
        ours,
        quickfix: peer
            .map(|p| QuickfixRows {
                measured: theirs,
                version: p.version().map(str::to_owned),
            })
            .map_err(|Unavailable(why)| why),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_frame_each_message_with_its_set_and_length() {
        let r = records(&[vec![b"ab".to_vec()], vec![b"c\n".to_vec(), Vec::new()]]);
        assert_eq!(r, b"0 2\nab\n1 2\nc\n\n1 0\n\ngo\n");
    }

    fn measured(sets: usize) -> Vec<Measured> {
        (0..sets)
            .map(|_| Measured {
                histogram: latency_histogram(),
                elapsed: Duration::ZERO,
            })
            .collect()
    }

    #[test]
    fn run_lines_are_recorded_or_refused() {
        let mut into = measured(1);
        let mut tally = Tally::new(1);
        assert!(!take("s 0 250 10", &mut into, &mut tally).unwrap());
        assert!(!take("e 0 2500", &mut into, &mut tally).unwrap());
        assert!(take("done", &mut into, &mut tally).unwrap());
        assert_eq!(tally.calls, [10]);
        assert_eq!(into[0].histogram.len(), 10);
        assert_eq!(into[0].elapsed, Duration::from_nanos(2500));
        for bad in [
            "s 1 250 10",
            "s 0 x 10",
            "s 0 -1 10",
            "e 0",
            "e 1 5",
            "ready 1",
            "",
        ] {
            assert!(take(bad, &mut into, &mut tally).is_err(), "{bad:?}");
        }
        // Counts that add up past usize::MAX are refused, not a panic, and
        // leave the count as it was.
        let huge = format!("s 0 250 {}", usize::MAX);
        let e = take(&huge, &mut into, &mut tally).unwrap_err();
        assert!(e.to_string().contains("overflow"), "{e}");
        assert_eq!(tally.calls, [10]);
    }

    #[test]
    fn each_set_has_exactly_one_elapsed_time_per_run_without_overflow() {
        let elapsed = |e: Error| match e {
            Error::Invalid(why) => why,
            e => panic!("not a reply that breaks the protocol: {e}"),
        };
        // A second `e` line for a set in the same run.
        let (mut into, mut tally) = (measured(2), Tally::new(2));
        take("e 1 5", &mut into, &mut tally).unwrap();
        let e = take("e 1 5", &mut into, &mut tally).unwrap_err();
        assert_eq!(elapsed(e), Elapsed::Twice(1).to_string());
        // `done` before set 0's.
        let e = take("done", &mut into, &mut tally).unwrap_err();
        assert_eq!(elapsed(e), Elapsed::Missing(0).to_string());
        // Times that add up past a Duration's range: refused, not a panic,
        // and the total is left as it was.
        let (mut into, mut tally) = (measured(1), Tally::new(1));
        into[0].elapsed = Duration::MAX;
        let e = take("e 0 1", &mut into, &mut tally).unwrap_err();
        assert_eq!(elapsed(e), Elapsed::Overflow(0).to_string());
        assert_eq!(into[0].elapsed, Duration::MAX);
    }

    #[test]
    fn a_peer_whose_run_breaks_the_elapsed_rule_fails_the_run() {
        // Loads one set, answers `ready`, then answers the run with the
        // given lines and stays (it must be killed, not waited for).
        let peer = |answer: &str| {
            let script = format!(
                "while read -r l; do [ \"$l\" = go ] && break; done; echo 'ready 1'; \
                 read -r l; {answer}; exec sleep 30"
            );
            let mut cmd = Command::new("/bin/sh");
            cmd.arg("-c").arg(script);
            Peer::launch(cmd, &[vec![b"8=FIX.4.4".to_vec()]], None).unwrap()
        };
        for (answer, want) in [
            (
                "echo 's 0 5 10'; echo 'e 0 100'; echo 'e 0 100'; echo done",
                "set 0: a second elapsed time in one run",
            ),
            (
                "echo 's 0 5 10'; echo done",
                "set 0: no elapsed time before done",
            ),
        ] {
            let t = Instant::now();
            let mut p = peer(answer);
            let mut into = measured(1);
            let e = p.run(0, 10, 10, &mut into).unwrap_err().to_string();
            // Named by the program, as every peer failure is.
            assert!(e.starts_with("/bin/sh: "), "{answer}: {e}");
            assert!(e.contains(want), "{answer}: {e}");
            drop(p);
            assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
        }
        // The same peer answering by the rule is measured.
        let mut p = peer("echo 's 0 5 10'; echo 'e 0 100'; echo done");
        let mut into = measured(1);
        p.run(0, 10, 10, &mut into).unwrap();
        assert_eq!(into[0].elapsed, Duration::from_nanos(100));
    }

    #[test]
    fn the_recorded_version_is_one_trimmed_line_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        let exe = d.path().join(NAME);
        assert_eq!(recorded_version(&exe), None);
        std::fs::write(d.path().join(VERSION_FILE), "1.15.1+dfsg-4+b1\n").unwrap();
        assert_eq!(recorded_version(&exe).as_deref(), Some("1.15.1+dfsg-4+b1"));
        std::fs::write(d.path().join(VERSION_FILE), "a\nb\n").unwrap();
        assert_eq!(recorded_version(&exe), None);
    }
}
