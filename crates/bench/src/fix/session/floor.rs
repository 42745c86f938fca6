//! The session round trip's floor: the `fix-roundtrip-floor` peer program
//! (built from `xtask/peers/floor/roundtrip_floor.c`), one order at a time
//! over one loopback connection in C with no FIX work: the same
//! TCP_NODELAY writes, the same waits (a busy poll for the initiator's
//! spin, then a blocking `poll`, then `recv`; a blocking `poll` for the
//! acceptor) and the same message sizes as the latency phase of the
//! perfkit pairings, so their p50 has a floor to be read against.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::Load;
use crate::error::{Error, IoContext, Result};

/// How long the floor program may take: a minute, plus a millisecond an
/// order (it takes tens of microseconds each).
fn limit(orders: u64) -> Duration {
    Duration::from_secs(60) + Duration::from_millis(orders)
}

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
/// (its orders, the initiator's spin), recording each round trip into
/// `into`; `dir` holds its round-trip file.
pub fn round(program: &Path, load: Load, dir: &Path, into: &mut Histogram<u64>) -> Result<()> {
    let (order_bytes, answer_bytes) = message_sizes();
    let latencies = dir.join("floor-latencies");
    let fail = |why: String| Error::Program(format!("{}: {why}", program.display()));
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
    let deadline = Instant::now() + limit(load.latency_orders);
    loop {
        if child
            .try_wait()
            .doing_with(|| format!("waiting for {}", program.display()))?
            .is_some()
        {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(fail(format!(
                "did not finish {} orders in time",
                load.latency_orders
            )));
        }
        // Coarse: the program times itself; this only notices the end.
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child
        .wait_with_output()
        .doing_with(|| format!("reading {}'s output", program.display()))?;
    let said = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || said.trim() != format!("answered {}", load.latency_orders) {
        return Err(fail(format!(
            "{} said {:?} {}",
            out.status,
            said.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let n = super::record_round_trips(&latencies, into)?;
    if n != load.latency_orders {
        return Err(fail(format!(
            "timed {n} round trips of {} orders",
            load.latency_orders
        )));
    }
    Ok(())
}
