//! The client side of `szip-peer` (xtask/peers/szip): s-zip on its own
//! default flate2 backend, in a program of its own because this binary
//! links zlib-rs for every crate in it.
//!
//! The peer is started once per bench, loaded with each scenario's entries,
//! and asked for one archive at a time between ours, so its rows are
//! interleaved with the others iteration by iteration. It times each
//! archive itself, with the clocks this bench uses (thread CPU clock,
//! `Instant`, VmHWM after clearing it), so the pipe round trip is not in
//! its numbers. The protocol is documented in the peer's `protocol.rs`.

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use crate::error::{Error, IoContext, Result};
use crate::peer::{Process, SZIP as NAME};
use perfkit_report::one_line;

/// The greeting this client speaks to: program name and protocol version.
const HELLO_PREFIX: &str = "hello szip-peer 1 ";

/// How long the peer gets to greet: a program that is not the peer may
/// neither greet nor exit, and zip bench must not hang on it.
const GREETING_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the peer gets to read one request (a scenario is up to 200 MiB)
/// before it counts as stalled and is killed: a peer that greets and then
/// stops reading must not hang zip bench on the write.
const INPUT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long one reply (loading a scenario, or writing one archive of it)
/// may take before the peer counts as stalled and is killed: generous, far
/// beyond any scenario's archive.
const REPLY_TIMEOUT: Duration = Duration::from_secs(600);

/// Which of s-zip's writers the peer drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// `StreamingZipWriter`.
    Sync,
    /// `AsyncStreamingZipWriter` on a current-thread tokio runtime.
    Async,
}

impl Writer {
    fn word(self) -> &'static str {
        match self {
            Writer::Sync => "sync",
            Writer::Async => "async",
        }
    }
}

/// What one archive cost inside the peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// The peer thread's CPU time.
    pub cpu: Duration,
    /// Wall time.
    pub wall: Duration,
    /// Archive size in bytes.
    pub out_bytes: u64,
    /// Growth of the peer's resident set during the archive.
    pub rss_growth: u64,
}

/// A scenario's entries, name and bytes: shared, so that loading them into
/// the peer (on the thread that writes its stdin) copies nothing.
pub type Entries = Arc<[(String, Vec<u8>)]>;

/// A running peer. The process plumbing (pipes, stderr, timeouts, killing
/// on failure or drop) is [`crate::peer::Process`]; this is the protocol.
pub struct SZipPeer {
    process: Process,
}

impl SZipPeer {
    /// Starts the peer at `path` and checks its greeting.
    pub fn start(path: &Path) -> Result<SZipPeer> {
        // End of stdin is the peer's signal to exit: nothing else to send.
        let mut process = Process::spawn(Command::new(path), b"")
            .doing_with(|| format!("starting {}", path.display()))?;
        let hello = process.read_line_within(GREETING_TIMEOUT)?;
        if !hello.starts_with(HELLO_PREFIX) {
            return Err(process.fail(&format!(
                "not an szip-peer speaking protocol 1 (said {hello:?}); rebuild it with `cargo \
                 xtask peers`"
            )));
        }
        Ok(SZipPeer { process })
    }

    /// Sends one request and reads its one-line reply; `err …` replies and
    /// any failure kill the peer (the stream may be out of step).
    fn request(
        &mut self,
        write: impl FnOnce(&mut dyn Write) -> std::io::Result<()> + Send + 'static,
    ) -> Result<String> {
        self.process.send(INPUT_TIMEOUT, write)?;
        let reply = self.process.read_line_within(REPLY_TIMEOUT)?;
        if let Some(why) = reply.strip_prefix("err ") {
            return Err(self.process.fail(why));
        }
        self.process.idle();
        Ok(reply)
    }

    /// Checks a reply with `check`; a reply that does not parse kills the
    /// peer, as any other failure mid-protocol does.
    fn checked<T>(&mut self, reply: &str, check: impl FnOnce(&str) -> Result<T>) -> Result<T> {
        check(reply).map_err(|e| self.process.fail(&one_line(&e)))
    }

    /// Replaces the peer's entries with `entries`.
    pub fn load(&mut self, entries: &Entries) -> Result<()> {
        if let Some((n, _)) = entries
            .iter()
            .find(|(n, _)| n.contains('\n') || n.is_empty())
        {
            return Err(Error::Invalid(format!(
                "entry name {n:?} cannot be sent to {NAME}"
            )));
        }
        let sent = Arc::clone(entries);
        let reply = self.request(move |w| {
            writeln!(w, "load {}", sent.len())?;
            for (n, d) in sent.iter() {
                writeln!(w, "{} {n}", d.len())?;
                w.write_all(d)?;
            }
            Ok(())
        })?;
        let bytes: u64 = entries.iter().map(|(_, d)| d.len() as u64).sum();
        self.checked(&reply, |reply| {
            let f = fields(reply)?;
            if get(&f, "entries")? != entries.len() as u64 || get(&f, "bytes")? != bytes {
                return Err(Error::Invalid(format!("loaded something else: {reply:?}")));
            }
            Ok(())
        })
    }

    /// Has the peer write one archive in memory and returns its measurement.
    pub fn run(&mut self, writer: Writer, level: u32) -> Result<Measured> {
        let reply = self.request(move |w| writeln!(w, "run {} {level}", writer.word()))?;
        self.checked(&reply, |reply| {
            let f = fields(reply)?;
            Ok(Measured {
                cpu: Duration::from_nanos(get(&f, "cpu_ns")?),
                wall: Duration::from_nanos(get(&f, "wall_ns")?),
                out_bytes: get(&f, "out_bytes")?,
                rss_growth: get(&f, "rss_growth_bytes")?,
            })
        })
    }

    /// Has the peer write one archive to `path`.
    pub fn save(&mut self, writer: Writer, level: u32, path: &Path) -> Result<()> {
        let p = path
            .to_str()
            .filter(|p| !p.contains('\n'))
            .ok_or_else(|| Error::Invalid(format!("{} cannot be sent to {NAME}", path.display())))?
            .to_owned();
        let reply = self.request(move |w| writeln!(w, "save {} {level} {p}", writer.word()))?;
        // The reply is checked as any other, though its size is not used.
        self.checked(&reply, |reply| get(&fields(reply)?, "out_bytes").map(drop))
    }
}

/// Splits an `ok key=value …` reply into its numeric fields.
fn fields(reply: &str) -> Result<Vec<(&str, u64)>> {
    let rest = reply
        .strip_prefix("ok ")
        .ok_or_else(|| Error::Invalid(format!("{NAME}: unexpected reply {reply:?}")))?;
    rest.split(' ')
        .map(|kv| {
            let (k, v) = kv.split_once('=').ok_or_else(|| {
                Error::Invalid(format!("{NAME}: {kv:?} in {reply:?} is not key=value"))
            })?;
            let v = v.parse().map_err(|source| Error::Number {
                what: format!("{NAME}: {kv:?} in {reply:?} is not a count"),
                source,
            })?;
            Ok((k, v))
        })
        .collect()
}

fn get(fields: &[(&str, u64)], key: &str) -> Result<u64> {
    fields
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| *v)
        .ok_or_else(|| Error::Invalid(format!("{NAME}: reply has no {key}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_into_fields_or_errors() {
        let f = fields("ok cpu_ns=12 wall_ns=34 out_bytes=5 rss_growth_bytes=0").unwrap();
        assert_eq!(get(&f, "cpu_ns").unwrap(), 12);
        assert_eq!(get(&f, "rss_growth_bytes").unwrap(), 0);
        assert!(get(&f, "missing").is_err());
        for bad in [
            "",
            "ok",
            "ok x",
            "ok x=",
            "ok x=-1",
            "ok x=1  y=2",
            "yes x=1",
        ] {
            assert!(fields(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_program_that_is_not_the_peer_is_refused() {
        // `true` exits at once without a greeting; `echo` greets wrongly.
        let e = SZipPeer::start(Path::new("/bin/true")).err().unwrap();
        assert!(e.to_string().contains("peer died"), "{e}");
        let e = SZipPeer::start(Path::new("/bin/echo")).err().unwrap();
        assert!(e.to_string().contains("not an szip-peer"), "{e}");
    }
}
