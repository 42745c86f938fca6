//! The session bench's PostgreSQL store row's server: the one throwaway
//! cluster, [`perfkit_peers::postgres::Cluster`] (Debian's `postgresql`
//! package, `initdb` in a temporary directory, `pg_ctl` on a free
//! loopback port, run as the `postgres` user when we are root, stopped and
//! removed when dropped), and the CPU time its processes use.
//!
//! Commits wait for the WAL to reach the kernel, not the disk (not
//! `durable`: `fsync = off`, `synchronous_commit = on`): the same
//! durability as the file store's default (`FileStoreSync=N`), so the two
//! rows compare the stores, not the disk.

use crate::error::{Error, IoContext, Result};

/// A running cluster with the database `quickfix`.
pub(crate) struct Cluster(perfkit_peers::postgres::Cluster);

impl Cluster {
    /// Makes and starts a cluster; an error says why it cannot (no
    /// PostgreSQL installed, a command that failed).
    pub(crate) fn start() -> Result<Cluster> {
        Ok(Cluster(perfkit_peers::postgres::Cluster::start(false)?))
    }

    /// The CPU time (user + system) the server has used so far: the
    /// postmaster's and every process it started that is still running
    /// (the acceptor's backend lives as long as its connection, so a
    /// difference over a phase is what serving it cost), from
    /// `/proc/PID/stat`, in clock ticks (10 ms here).
    pub(crate) fn cpu(&self) -> Result<std::time::Duration> {
        let postmaster = self.0.postmaster_pid()?;
        // SAFETY: sysconf has no preconditions and touches no memory.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if ticks <= 0 {
            return Err(Error::Io {
                doing: "sysconf(_SC_CLK_TCK)".to_owned(),
                source: std::io::Error::last_os_error(),
            });
        }
        let mut total: u64 = 0;
        for e in std::fs::read_dir("/proc").doing("reading /proc")? {
            let Ok(e) = e else { continue };
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            // A process may end between the listing and the read.
            let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
                continue;
            };
            // After the command name in parentheses (which may hold
            // spaces): state, ppid, ... utime is field 14 and stime 15.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            let (Some(ppid), Some(utime), Some(stime)) = (f.get(1), f.get(11), f.get(12)) else {
                continue;
            };
            if pid == postmaster || ppid.parse::<u32>().ok() == Some(postmaster) {
                total += utime.parse::<u64>().unwrap_or(0) + stime.parse::<u64>().unwrap_or(0);
            }
        }
        Ok(std::time::Duration::from_nanos(
            total.saturating_mul(1_000_000_000) / ticks as u64,
        ))
    }

    /// The median round trip of one empty commit (`BEGIN; COMMIT` in one
    /// message, over loopback TCP, with the client the store uses),
    /// over `n` commits after 50 untimed: the floor under a round that
    /// must reach the database before it is sent.
    pub(crate) fn empty_commit(&self, n: usize) -> Result<std::time::Duration> {
        let url = format!(
            "host=127.0.0.1 port={} user=postgres dbname={}",
            self.0.port,
            perfkit_peers::postgres::DATABASE
        );
        let failed = |e: postgres::Error| Error::Program(format!("timing empty commits: {e}"));
        let mut c = postgres::Client::connect(&url, postgres::NoTls).map_err(failed)?;
        let mut times = Vec::with_capacity(n);
        for i in 0..n + 50 {
            let t = std::time::Instant::now();
            c.batch_execute("BEGIN; COMMIT").map_err(failed)?;
            if i >= 50 {
                times.push(t.elapsed());
            }
        }
        times.sort();
        Ok(times.get(times.len() / 2).copied().unwrap_or_default())
    }

    /// The settings lines of a PostgreSQL store in this cluster.
    pub(crate) fn store_settings(&self) -> String {
        self.0.settings("PostgreSQLStore")
    }
}
