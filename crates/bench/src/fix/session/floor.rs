//! The session round trip's floor: the `fix-roundtrip-floor` peer program
//! (built from `xtask/peers/floor/roundtrip_floor.c`), one order at a time
//! over one loopback connection in C with no FIX work: the same
//! TCP_NODELAY writes, the same waits (a busy poll for the initiator's
//! spin, then a blocking `poll`, then `recv`; a blocking `poll` for the
//! acceptor) and the same message sizes as the latency phase of the
//! perfkit pairings, so their p50 has a floor to be read against.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::{Floor, Load, record_round_trips, wait_for_orders};
use crate::error::{Error, IoContext, Result};

/// The sizes of what perfkit's pairings exchange, in bytes: fixcore's
/// sample NewOrderSingle and ExecutionReport (FIX 4.4, as the bench's
/// sessions are).
pub fn message_sizes() -> (usize, usize) {
    let samples = fixcore::sample::all();
    let size = |name: &str| {
        samples
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(0, |(_, m)| m.len())
    };
    (size("NewOrderSingle"), size("ExecutionReport"))
}

/// Runs the floor program at `program` once with `load`'s latency phase
/// (its orders, the initiator's spin) and `into`'s message sizes,
/// recording each round trip and the run's wall time into `into`; `dir`
/// holds its round-trip file.
pub fn round(program: &Path, load: Load, dir: &Path, into: &mut Floor) -> Result<()> {
    let (order_bytes, answer_bytes) = into.sizes;
    let latencies = dir.join("floor-latencies");
    let fail = |why: String| Error::Program(format!("{}: {why}", program.display()));
    let started = Instant::now();
    let mut child = Command::new(program)
        .arg("--orders")
        .arg(load.latency_orders.to_string())
        .arg("--order-bytes")
        .arg(order_bytes.to_string())
        .arg("--answer-bytes")
        .arg(answer_bytes.to_string())
        .arg("--spin")
        .arg(load.spin.as_nanos().to_string())
        .arg("--latencies")
        .arg(&latencies)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .doing_with(|| format!("starting {}", program.display()))?;
    let what = program.display().to_string();
    if wait_for_orders(&mut child, load.latency_orders, &what)?.is_none() {
        return Err(fail(format!(
            "did not finish {} orders in time",
            load.latency_orders
        )));
    }
    // Its one line and any error are in the pipes; it has exited.
    let out = child
        .wait_with_output()
        .doing_with(|| format!("reading {what}'s output"))?;
    into.elapsed += started.elapsed();
    let said = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || said.trim() != format!("answered {}", load.latency_orders) {
        return Err(fail(format!(
            "{} said {:?} {}",
            out.status,
            said.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let n = record_round_trips(&latencies, &mut into.round_trips)?;
    if n != load.latency_orders {
        return Err(fail(format!(
            "timed {n} round trips of {} orders",
            load.latency_orders
        )));
    }
    Ok(())
}
