//! A real PostgreSQL server for the database store's tests: Debian's
//! `postgresql` package (`/usr/lib/postgresql/VERSION/bin`), a cluster
//! made by `initdb` in a temporary directory and started by `pg_ctl` on a
//! free loopback port, stopped and removed when dropped.
//!
//! PostgreSQL refuses to run as root, and CI runs as root: then every
//! server command runs as the `postgres` user (`runuser -u postgres --`),
//! in a directory that user owns. Clients (`psql`, the code under test)
//! connect over TCP as the database user `postgres`, with `trust`
//! authentication: the server listens on 127.0.0.1 only.
//!
//! Gated by [`crate::interop`]: a missing PostgreSQL fails the test,
//! naming the package, unless `PERFKIT_SKIP_INTEROP=1` is set.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The database each cluster gets besides PostgreSQL's own: QuickFIX's
/// default for `PostgreSQLStoreDatabase` and `PostgreSQLLogDatabase`.
pub const DATABASE: &str = "quickfix";

/// A running (or stopped, for [`Postgres::restart`]) PostgreSQL cluster.
pub struct Postgres {
    bin: PathBuf,
    dir: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
    /// Whether server commands run as the `postgres` user (we are root).
    as_postgres: bool,
    running: bool,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("spawning {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
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
        let bin = perfkit_peers::postgres_bin();
        if !crate::interop::available(
            bin.is_some(),
            "PostgreSQL (initdb and pg_ctl under /usr/lib/postgresql/*/bin)",
            "apt-get install postgresql",
        ) {
            return None;
        }
        let bin = bin.expect("checked above");
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "perfkit-pg-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("creating the cluster's directory");
        let as_postgres = is_root();
        let mut pg = Postgres {
            bin,
            dir,
            port: crate::process::free_port(),
            as_postgres,
            running: false,
        };
        if as_postgres {
            // The server's files must be its user's; the directory's
            // parent (the system's temporary directory) lets it in.
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&pg.dir));
        }
        let data = pg.data();
        run(pg
            .server_cmd("initdb")
            .args([
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data));
        let conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n\
             fsync = {on}\nfull_page_writes = {on}\n",
            pg.port,
            pg.dir.display(),
            on = if durable { "on" } else { "off" },
        );
        let conf_path = data.join("postgresql.auto.conf");
        let mut text = std::fs::read_to_string(&conf_path).unwrap_or_default();
        text.push_str(&conf);
        std::fs::write(&conf_path, text).expect("writing postgresql.auto.conf");
        pg.restart();
        pg.psql("postgres", &format!("CREATE DATABASE {DATABASE}"));
        Some(pg)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// A command of the server's `bin` directory, run as the `postgres`
    /// user when we are root.
    fn server_cmd(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// Starts the server again on the same directory and port (after
    /// [`Postgres::stop`]; also how [`Postgres::start`] starts it), and
    /// waits until it accepts connections.
    pub fn restart(&mut self) {
        let log = self.dir.join("server.log");
        // -w: wait until the server accepts connections.
        run(self
            .server_cmd("pg_ctl")
            .args(["start", "-w", "-t", "60", "-D"])
            .arg(self.data())
            .arg("-l")
            .arg(&log));
        self.running = true;
    }

    /// Stops the server: `fast` ends every session and shuts down
    /// cleanly (`pg_ctl stop -m fast`), otherwise it quits at once as a
    /// crash would (`-m immediate`), recovering from its WAL at the next
    /// start. Clients see their connections closed either way.
    pub fn stop(&mut self, fast: bool) {
        run(self
            .server_cmd("pg_ctl")
            .args(["stop", "-w", "-t", "60", "-m"])
            .arg(if fast { "fast" } else { "immediate" })
            .arg("-D")
            .arg(self.data()));
        self.running = false;
    }

    /// Runs `sql` in database `db` with `psql` and returns its unaligned,
    /// tuples-only output (`|` between columns, a line per row).
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = run(&mut self.psql_command(db, sql));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The `psql` command [`Self::psql`] runs, for a test that runs it
    /// beside its own work (a client holding a lock, say).
    pub fn psql_command(&self, db: &str, sql: &str) -> Command {
        let mut c = Command::new(self.bin.join("psql"));
        c.args([
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-At",
            "-h",
            "127.0.0.1",
            "-U",
        ])
        .arg("postgres")
        .arg("-p")
        .arg(self.port.to_string())
        .arg("-d")
        .arg(db)
        .arg("-c")
        .arg(sql);
        c
    }

    /// The settings lines that point `prefix` (`PostgreSQLStore`,
    /// `PostgreSQLLog`) at this server's [`DATABASE`].
    pub fn settings(&self, prefix: &str) -> String {
        format!(
            "{prefix}Host=127.0.0.1\n{prefix}Port={}\n{prefix}User=postgres\n\
             {prefix}Database={DATABASE}\n",
            self.port
        )
    }

    /// Waits until `psql` can connect again (after [`Postgres::restart`]
    /// a server may still be recovering), up to `limit`.
    pub fn wait_ready(&self, limit: Duration) {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            let ok = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!(
            "PostgreSQL on port {} did not come back within {limit:?}",
            self.port
        );
    }

    /// The cluster's directory (data in `data/`, the server's log in
    /// `server.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if self.running {
            let _ = self
                .server_cmd("pg_ctl")
                .args(["stop", "-w", "-t", "30", "-m", "immediate", "-D"])
                .arg(self.data())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
