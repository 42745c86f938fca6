//! The QuickFIX peer (`target/peers/quickfix-parse`, built by `cargo xtask
//! peers` from `xtask/peers/quickfix/`): a child process that parses the
//! same messages with QuickFIX 1.15.1 and times them the way fixcore's
//! parse rows are timed, driven run by run so fix-bench can alternate it
//! with its own runs.
//!
//! Protocol (stdin/stdout, text): the messages go first as records
//! `"<set> <length>\n" bytes "\n"` and a `go` line; the peer parses each
//! once and answers `ready <sets>` (or `invalid <set> <index> <reason>`).
//! Each `run <warmup> <iterations> <batch>` line then measures every set,
//! answering `s <set> <ns per call> <calls>` per batch, `e <set> <elapsed
//! ns>` per set and `done`.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use hdrhistogram::Histogram;

/// The peer's file name in the peer directory.
pub const NAME: &str = "quickfix-parse";

/// The dictionary `cargo xtask peers` installs beside the peer.
pub const DICTIONARY: &str = "quickfix-FIX44.xml";

/// Why QuickFIX could not be measured (rendered as a note), as opposed to
/// a failure of a peer that had started measuring (an error).
#[derive(Debug)]
pub struct Unavailable(pub String);

/// A running peer with the messages loaded.
pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    sets: usize,
}

/// What one set measured over every run.
pub struct Measured {
    /// Nanoseconds per call, one record per call.
    pub histogram: Histogram<u64>,
    /// Wall time the peer spent in the timed loops.
    pub elapsed: Duration,
}

/// The peer's command line for `mode` (`--check` or `--bench`).
fn command(exe: &Path, mode: &str) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg("--dict")
        .arg(exe.with_file_name(DICTIONARY))
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
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

/// Where the peer is, or why it is not there.
pub fn locate() -> std::result::Result<PathBuf, Unavailable> {
    perfkit::peer::locate(NAME).ok_or_else(|| {
        let dir = perfkit::peer::dir()
            .map_or_else(|| "target/peers".to_owned(), |d| d.display().to_string());
        Unavailable(format!(
            "QuickFIX not measured: no {NAME} in {dir} (`cargo xtask peers` builds it; needs g++ \
             and libquickfix-dev; {} overrides the directory)",
            perfkit::peer::DIR_ENV
        ))
    })
}

impl Peer {
    /// Starts the peer on `exe` with `sets` loaded, pinned to `pin` if
    /// given. A peer that cannot start, or rejects a message, is
    /// [`Unavailable`] with the reason.
    pub fn start(
        exe: &Path,
        sets: &[Vec<Vec<u8>>],
        pin: Option<usize>,
    ) -> std::result::Result<Peer, Unavailable> {
        let mut cmd = command(exe, "--bench");
        if let Some(core) = pin {
            cmd.arg("--pin").arg(core.to_string());
        }
        let mut child = cmd.spawn().map_err(|e| {
            Unavailable(format!(
                "QuickFIX not measured: starting {}: {e}",
                exe.display()
            ))
        })?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Unavailable(format!(
                "QuickFIX not measured: {} started without its pipes",
                exe.display()
            )));
        };
        let mut stdout = BufReader::new(stdout);
        let sent = stdin.write_all(&records(sets)).and_then(|()| stdin.flush());
        let mut line = String::new();
        let read = stdout.read_line(&mut line);
        let fail = |child: &mut Child, what: String| {
            let _ = child.kill();
            let why = stderr_of(child);
            Unavailable(format!(
                "QuickFIX not measured: {}: {what}{why}",
                exe.display()
            ))
        };
        match (sent, read) {
            (Ok(()), Ok(_)) if line.trim_end() == format!("ready {}", sets.len()) => Ok(Peer {
                child,
                stdin,
                stdout,
                sets: sets.len(),
            }),
            (Ok(()), Ok(_)) if line.starts_with("invalid ") => {
                let mut w = line.trim_end().splitn(4, ' ').skip(1);
                let (set, index, reason) = (w.next(), w.next(), w.next());
                Err(fail(
                    &mut child,
                    format!(
                        "QuickFIX rejects message {} of set {}: {}",
                        index.unwrap_or("?"),
                        set.unwrap_or("?"),
                        reason.unwrap_or("?")
                    ),
                ))
            }
            (Ok(()), Ok(0)) => Err(fail(&mut child, "exited before it was ready".into())),
            (Ok(()), Ok(_)) => Err(fail(&mut child, format!("unexpected answer {line:?}"))),
            (Err(e), _) | (_, Err(e)) => Err(fail(&mut child, e.to_string())),
        }
    }

    /// One run: `warmup` untimed calls, then `iterations` calls in batches
    /// of `batch` per clock read, for every set in turn, recorded into
    /// `into` (one per set) as fix-bench records its own batches.
    pub fn run(
        &mut self,
        warmup: usize,
        iterations: usize,
        batch: usize,
        into: &mut [Measured],
    ) -> Result<()> {
        if into.len() != self.sets {
            bail!("{} histograms for {} sets", into.len(), self.sets);
        }
        writeln!(self.stdin, "run {warmup} {iterations} {batch}")
            .and_then(|()| self.stdin.flush())
            .map_err(|e| self.died(format!("sending a run: {e}")))?;
        let mut counted = vec![0usize; self.sets];
        let mut line = String::new();
        loop {
            line.clear();
            let n = self
                .stdout
                .read_line(&mut line)
                .map_err(|e| self.died(format!("reading a run: {e}")))?;
            if n == 0 {
                return Err(self.died("ended in the middle of a run".into()));
            }
            let words: Vec<&str> = line.split_ascii_whitespace().collect();
            match words.as_slice() {
                ["done"] => break,
                ["s", set, ns, calls] => {
                    let (set, ns, calls) = (num(set)?, num(ns)?, num(calls)?);
                    let m = into
                        .get_mut(set)
                        .ok_or_else(|| anyhow!("{NAME}: set {set} out of range"))?;
                    // The peer's batch mean, recorded once per call, as
                    // fixcore's measure::interleave records its own.
                    m.histogram
                        .record_n(ns.max(1) as u64, calls as u64)
                        .with_context(|| format!("{NAME}: recording {ns} ns"))?;
                    counted[set] += calls;
                }
                ["e", set, ns] => {
                    let (set, ns) = (num(set)?, num(ns)?);
                    let m = into
                        .get_mut(set)
                        .ok_or_else(|| anyhow!("{NAME}: set {set} out of range"))?;
                    m.elapsed += Duration::from_nanos(ns as u64);
                }
                _ => bail!("{NAME}: unexpected line {line:?}"),
            }
        }
        if let Some(set) = counted.iter().position(|&c| c != iterations) {
            bail!(
                "{NAME}: set {set} measured {} calls, not {iterations}",
                counted[set]
            );
        }
        Ok(())
    }

    fn died(&mut self, what: String) -> anyhow::Error {
        let _ = self.child.kill();
        anyhow!("{NAME}: {what}{}", stderr_of(&mut self.child))
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let _ = self.stdin.flush();
        if !matches!(self.child.try_wait(), Ok(Some(_))) {
            // It exits on "quit"; wait for it so no zombie is left.
            let _ = self.child.wait();
        }
    }
}

fn num(word: &str) -> Result<usize> {
    word.parse()
        .with_context(|| format!("{NAME}: not a number: {word:?}"))
}

/// The peer's stderr after it stopped, as ` (stderr: ...)`, or nothing.
fn stderr_of(child: &mut Child) -> String {
    let _ = child.wait();
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let err = err.trim();
    if err.is_empty() {
        String::new()
    } else {
        format!(" (stderr: {err})")
    }
}
