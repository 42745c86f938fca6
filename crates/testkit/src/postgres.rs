//! A real PostgreSQL server for the database store's tests: the one
//! throwaway cluster, [`perfkit_peers::postgres::Cluster`] (Debian's
//! `postgresql` package, `initdb` in a temporary directory, `pg_ctl` on a
//! free loopback port, run as the `postgres` user when we are root,
//! stopped and removed when dropped), with a test's face: gated by
//! [`crate::interop`] (a missing PostgreSQL fails the test, naming the
//! package, unless `PERFKIT_SKIP_INTEROP=1` is set), and a failure is a
//! panic that says what failed.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

pub use perfkit_peers::postgres::{Cluster, DATABASE, Error};

/// A running (or stopped, for [`Postgres::restart`]) PostgreSQL cluster;
/// every method panics where [`Cluster`]'s returns an error.
pub struct Postgres {
    cluster: Cluster,
    /// The loopback port it listens on.
    pub port: u16,
}

/// The value of `r`, or a panic naming what failed.
fn ok<T>(r: Result<T, Error>) -> T {
    r.unwrap_or_else(|e| match std::error::Error::source(&e) {
        Some(source) => panic!("PostgreSQL: {e}: {source}"),
        None => panic!("PostgreSQL: {e}"),
    })
}

impl Postgres {
    /// Makes a cluster in a new temporary directory and starts it, with
    /// the database [`DATABASE`] made; fails the test when PostgreSQL is
    /// not installed, or returns `None` (the test skips) under
    /// `PERFKIT_SKIP_INTEROP=1`.
    ///
    /// `durable`: commits wait for the disk (`fsync`, as a production
    /// server runs); without it they wait only for the kernel, which a
    /// killed server survives (not a power cut). A commit always waits
    /// for its WAL to be written (`synchronous_commit` stays on), so a
    /// server stopped with `-m immediate` keeps every commit it
    /// acknowledged.
    pub fn start(durable: bool) -> Option<Postgres> {
        match Cluster::start(durable) {
            Err(Error::NotInstalled) => {
                crate::interop::available(
                    false,
                    "PostgreSQL (initdb and pg_ctl under /usr/lib/postgresql/*/bin)",
                    "apt-get install postgresql",
                );
                None
            }
            r => {
                let cluster = ok(r);
                Some(Postgres {
                    port: cluster.port,
                    cluster,
                })
            }
        }
    }

    /// Starts the server again on the same directory and port (after
    /// [`Postgres::stop`]), and waits until it accepts connections.
    pub fn restart(&mut self) {
        ok(self.cluster.restart());
    }

    /// Stops the server: `fast` ends every session and shuts down
    /// cleanly (`pg_ctl stop -m fast`), otherwise it quits at once as a
    /// crash would (`-m immediate`), recovering from its WAL at the next
    /// start. Clients see their connections closed either way.
    pub fn stop(&mut self, fast: bool) {
        ok(self.cluster.stop(fast));
    }

    /// Runs `sql` in database `db` with `psql` and returns its unaligned,
    /// tuples-only output (`|` between columns, a line per row).
    pub fn psql(&self, db: &str, sql: &str) -> String {
        ok(self.cluster.psql(db, sql))
    }

    /// The `psql` command [`Self::psql`] runs, for a test that runs it
    /// beside its own work (a client holding a lock, say).
    pub fn psql_command(&self, db: &str, sql: &str) -> Command {
        self.cluster.psql_command(db, sql)
    }

    /// The settings lines that point `prefix` (`PostgreSQLStore`,
    /// `PostgreSQLLog`) at this server's [`DATABASE`].
    pub fn settings(&self, prefix: &str) -> String {
        self.cluster.settings(prefix)
    }

    /// Waits until `psql` can connect again (after [`Postgres::restart`]
    /// a server may still be recovering), up to `limit`.
    pub fn wait_ready(&self, limit: Duration) {
        ok(self.cluster.wait_ready(limit));
    }

    /// The cluster's directory (data in `data/`, the server's log in
    /// `server.log`).
    pub fn dir(&self) -> &Path {
        self.cluster.dir()
    }

    /// The cluster itself.
    pub fn cluster(&self) -> &Cluster {
        &self.cluster
    }
}
