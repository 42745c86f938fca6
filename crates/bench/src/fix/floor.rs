//! The FIX load generator's floor: the `fixload-floor` peer program
//! (built from `xtask/peers/floor/`), the generator's I/O in C with no FIX
//! work, run right after a run of the generator with that run's shape,
//! into the [`Floor`] the generator's report compares with.
//!
//! The floor program gets what makes the two comparable from the run it
//! follows ([`measure`]): the rate, the warm-up and measured durations, the
//! coalescing window, the number of connections, the pinned cores, and the
//! mean sizes of the NewOrderSingles the generator wrote and of the
//! ExecutionReports it read. Its counterparty (a process it forks) answers
//! each order with two messages of that size, as `fix acceptor --app exec`
//! does; its CPU is its own process's (`getrusage`), from the measured
//! part's start until its last order went out, as the generator's is.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fixload::{Floor, Outcome, Plan, cores};

use crate::error::{Error, Result};

/// The smallest message the floor program takes; a run whose generator
/// wrote or read nothing has no size to copy.
const MIN_SIZE: u64 = 16;

/// How long past its own schedule and grace the floor program may take
/// (start-up, connections, its counterparty's exit) before it is killed.
const SLACK: Duration = Duration::from_secs(10);

/// Runs the floor program at `program` with the shape of `like`, the
/// generator's run of `plan`: the same rate, durations, coalescing window,
/// connections, cores, and message sizes.
pub fn measure(program: &Path, plan: &Plan, like: &Outcome) -> Result<Floor> {
    // Named by its program's name, not its path in the build tree.
    let name = program.file_name().map_or_else(
        || program.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let fail = |why: String| Error::Program(format!("{name} {why}"));
    if like.order_size < MIN_SIZE || like.report_size < MIN_SIZE {
        return Err(fail(format!(
            "was not run: the run gave no message sizes to copy (orders {} bytes, ExecutionReports {} bytes)",
            like.order_size, like.report_size
        )));
    }
    let ns = |d: Duration| d.as_nanos().to_string();
    let mut cmd = Command::new(program);
    cmd.arg("--rate")
        .arg(plan.rate.to_string())
        .arg("--sessions")
        .arg(like.sessions.to_string())
        .arg("--coalesce")
        .arg(ns(plan.coalesce))
        .arg("--warmup")
        .arg(ns(plan.warmup))
        .arg("--duration")
        .arg(ns(plan.duration))
        .arg("--grace")
        .arg(ns(plan.grace))
        .arg("--order-bytes")
        .arg(like.order_size.to_string())
        .arg("--answer-bytes")
        .arg(like.report_size.to_string());
    if let (Some(send), Some(recv)) = cores(plan.pin) {
        cmd.arg("--pin-send")
            .arg(send.to_string())
            .arg("--pin-recv")
            .arg(recv.to_string());
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("could not be started: {e}")))?;
    // Its output is one line and a few of error: read after it exits, from
    // pipes that cannot fill before then.
    let deadline = Instant::now() + plan.warmup + plan.duration + plan.grace + SLACK;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!(
                    "was still running {} s after its schedule, and was stopped",
                    SLACK.as_secs()
                )));
            }
            Err(e) => return Err(fail(format!("could not be waited for: {e}"))),
        }
    };
    let mut out = String::new();
    let mut err = String::new();
    if let Some(mut s) = child.stdout.take() {
        let _ = s.read_to_string(&mut out);
    }
    if let Some(mut s) = child.stderr.take() {
        let _ = s.read_to_string(&mut err);
    }
    match (status.success(), parse(&out)) {
        (true, Some(line)) => Ok(Floor {
            coalesce: plan.coalesce,
            order_size: like.order_size,
            report_size: like.report_size,
            ..line.floor
        }),
        (false, Some(line)) if line.answered < line.of => Err(fail(format!(
            "failed: its counterparty answered {} of {} orders",
            line.answered, line.of
        ))),
        _ => Err(fail(format!(
            "failed ({status}): {}",
            err.lines().last().unwrap_or("it printed nothing")
        ))),
    }
}

/// The fields of the floor program's line, with the counts that say
/// whether every order was answered.
struct Line {
    floor: Floor,
    answered: u64,
    of: u64,
}

/// Reads `sent=N answered=N of=N cpu_ns=N measured_ns=N send_rounds=N
/// recv_wakes=N`; `None` when a field is missing or not a number.
fn parse(out: &str) -> Option<Line> {
    let line = out.lines().next()?;
    let get = |key: &str| -> Option<u64> {
        line.split_ascii_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))?
            .parse()
            .ok()
    };
    Some(Line {
        answered: get("answered")?,
        of: get("of")?,
        floor: Floor {
            sent: get("sent")?,
            cpu: Duration::from_nanos(get("cpu_ns")?),
            measured: Duration::from_nanos(get("measured_ns")?),
            send_rounds: get("send_rounds")?,
            receive_wakes: get("recv_wakes")?,
            coalesce: Duration::ZERO,
            order_size: 0,
            report_size: 0,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_programs_line_is_read_field_by_field() {
        let line = parse(
            "sent=400 answered=440 of=440 cpu_ns=2000000 measured_ns=1000000000 send_rounds=90 recv_wakes=80\n",
        )
        .unwrap();
        assert_eq!((line.answered, line.of), (440, 440));
        assert_eq!(line.floor.sent, 400);
        assert_eq!(line.floor.cpu_per_order(), Duration::from_micros(5));
        assert_eq!(line.floor.send_rounds, 90);
        assert_eq!(line.floor.receive_wakes, 80);
        assert!(parse("sent=400 answered=x").is_none());
        assert!(parse("").is_none());
    }
}
