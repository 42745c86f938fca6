//! A throwaway PostgreSQL server: Debian's `postgresql` package (the
//! newest `/usr/lib/postgresql/VERSION/bin`, [`crate::postgres_bin`]), a
//! cluster made by `initdb` in a new temporary directory and started by
//! `pg_ctl` on a free loopback port, stopped and removed when dropped. The
//! one harness behind the fix bench's PostgreSQL store row and the tests
//! of the PostgreSQL store (through `perfkit_testkit::postgres`).
//!
//! PostgreSQL refuses to run as root (and CI runs as root): then every
//! server command runs as the `postgres` user (`runuser -u postgres --`),
//! in a directory that user owns. Clients (`psql`, the code under test)
//! connect over TCP as the database user `postgres`, with `trust`
//! authentication: the server listens on 127.0.0.1 only.
//!
//! ```no_run
//! use perfkit_peers::postgres::{Cluster, DATABASE};
//! let pg = Cluster::start(false)?;
//! assert_eq!(pg.psql(DATABASE, "SELECT 1 + 1")?, "2\n");
//! # Ok::<(), perfkit_peers::postgres::Error>(())
//! ```

use std::fmt;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The database each cluster gets besides PostgreSQL's own: QuickFIX's
/// default for `PostgreSQLStoreDatabase` and `PostgreSQLLogDatabase`.
pub const DATABASE: &str = "quickfix";

/// Why a cluster could not be started or a command on it failed.
#[derive(Debug)]
pub enum Error {
    /// No PostgreSQL server is installed ([`crate::postgres_bin`] found
    /// none).
    NotInstalled,
    /// A file operation, or starting a command, failed.
    Io {
        /// What was being done.
        context: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// A command ran and failed.
    Failed {
        /// The command, as `Debug` shows it.
        command: String,
        /// How it ended.
        status: ExitStatus,
        /// What it wrote (stdout, then stderr), trimmed.
        output: String,
    },
    /// The server did not accept connections within the time allowed.
    NotReady {
        /// Its port.
        port: u16,
        /// How long [`Cluster::wait_ready`] waited.
        limit: Duration,
    },
    /// `postmaster.pid` holds no process id.
    NoPid(PathBuf),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NotInstalled => {
                f.write_str("PostgreSQL is not installed (apt-get install postgresql)")
            }
            Error::Io { context, .. } => f.write_str(context),
            Error::Failed {
                command,
                status,
                output,
            } => write!(f, "{command}: {status}: {output}"),
            Error::NotReady { port, limit } => write!(
                f,
                "PostgreSQL on port {port} did not come back within {limit:?}"
            ),
            Error::NoPid(path) => write!(f, "{}: no process id", path.display()),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// An [`Error::Io`] saying what was being done.
fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
    move |source| Error::Io {
        context: context.into(),
        source,
    }
}

/// A running (or stopped, for [`Cluster::restart`]) PostgreSQL cluster
/// with the database [`DATABASE`].
#[derive(Debug)]
pub struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    /// The loopback port it listens on.
    pub port: u16,
    /// Whether server commands run as the `postgres` user (we are root).
    as_postgres: bool,
    running: bool,
}

/// Whether this process runs as root (its effective user id is 0).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Runs `cmd` (stdin closed) and insists it succeeds.
fn run(cmd: &mut Command) -> Result<Output, Error> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(io_error(format!("running {cmd:?}")))?;
    if !out.status.success() {
        let mut output = String::from_utf8_lossy(&out.stdout).into_owned();
        output.push_str(&String::from_utf8_lossy(&out.stderr));
        return Err(Error::Failed {
            command: format!("{cmd:?}"),
            status: out.status,
            output: output.trim().to_owned(),
        });
    }
    Ok(out)
}

impl Cluster {
    /// Makes a cluster in a new temporary directory and starts it, with
    /// the database [`DATABASE`] made; [`Error::NotInstalled`] when no
    /// PostgreSQL server is installed.
    ///
    /// `durable`: commits wait for the disk (`fsync`, as a production
    /// server runs); without it they wait only for the kernel, which a
    /// killed server survives (not a power cut), the same durability as
    /// fixsession's file store by default (`FileStoreSync=N`). A commit
    /// always waits for its WAL to be written (`synchronous_commit = on`),
    /// so a server stopped with `-m immediate` keeps every commit it
    /// acknowledged.
    pub fn start(durable: bool) -> Result<Cluster, Error> {
        let bin = crate::postgres_bin().ok_or(Error::NotInstalled)?;
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "perfkit-pg-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(io_error("creating the cluster's directory"))?;
        let mut pg = Cluster {
            bin,
            dir,
            port: 0,
            as_postgres: is_root(),
            running: false,
        };
        pg.port = crate::port::unclaimed().map_err(io_error("finding a free port"))?;
        if pg.as_postgres {
            // The server's files must be its user's; the directory's
            // parent (the system's temporary directory) lets it in.
            std::fs::set_permissions(&pg.dir, std::fs::Permissions::from_mode(0o755)).map_err(
                io_error("opening the cluster's directory to the postgres user"),
            )?;
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&pg.dir))?;
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
            .arg(&data))?;
        let conf = format!(
            "listen_addresses = '127.0.0.1'\nport = {}\nunix_socket_directories = '{}'\n\
             fsync = {on}\nfull_page_writes = {on}\nsynchronous_commit = on\n",
            pg.port,
            pg.dir.display(),
            on = if durable { "on" } else { "off" },
        );
        let conf_path = data.join("postgresql.auto.conf");
        let mut text = std::fs::read_to_string(&conf_path).unwrap_or_default();
        text.push_str(&conf);
        std::fs::write(&conf_path, text)
            .map_err(io_error(format!("writing {}", conf_path.display())))?;
        pg.restart()?;
        pg.psql("postgres", &format!("CREATE DATABASE {DATABASE}"))?;
        Ok(pg)
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
    /// [`Cluster::stop`]; also how [`Cluster::start`] starts it), and
    /// waits until it accepts connections.
    pub fn restart(&mut self) -> Result<(), Error> {
        let log = self.dir.join("server.log");
        // -w: wait until the server accepts connections.
        run(self
            .server_cmd("pg_ctl")
            .args(["start", "-w", "-t", "60", "-D"])
            .arg(self.data())
            .arg("-l")
            .arg(&log))?;
        self.running = true;
        Ok(())
    }

    /// Stops the server: `fast` ends every session and shuts down
    /// cleanly (`pg_ctl stop -m fast`), otherwise it quits at once as a
    /// crash would (`-m immediate`), recovering from its WAL at the next
    /// start. Clients see their connections closed either way.
    pub fn stop(&mut self, fast: bool) -> Result<(), Error> {
        run(self
            .server_cmd("pg_ctl")
            .args(["stop", "-w", "-t", "60", "-m"])
            .arg(if fast { "fast" } else { "immediate" })
            .arg("-D")
            .arg(self.data()))?;
        self.running = false;
        Ok(())
    }

    /// Runs `sql` in database `db` with `psql` and returns its unaligned,
    /// tuples-only output (`|` between columns, a line per row).
    pub fn psql(&self, db: &str, sql: &str) -> Result<String, Error> {
        let out = run(&mut self.psql_command(db, sql))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The `psql` command [`Self::psql`] runs, for a caller that runs it
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

    /// The QuickFIX settings lines that point `prefix` (`PostgreSQLStore`,
    /// `PostgreSQLLog`) at this server's [`DATABASE`].
    pub fn settings(&self, prefix: &str) -> String {
        format!(
            "{prefix}Host=127.0.0.1\n{prefix}Port={}\n{prefix}User=postgres\n\
             {prefix}Database={DATABASE}\n",
            self.port
        )
    }

    /// Waits until the server accepts connections again (after
    /// [`Cluster::restart`] a server may still be recovering), up to
    /// `limit`.
    pub fn wait_ready(&self, limit: Duration) -> Result<(), Error> {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            let ok = Command::new(self.bin.join("pg_isready"))
                .args(["-h", "127.0.0.1", "-p", &self.port.to_string()])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err(Error::NotReady {
            port: self.port,
            limit,
        })
    }

    /// The server's process id (the postmaster's, whose children serve
    /// the connections), from its `postmaster.pid`.
    pub fn postmaster_pid(&self) -> Result<u32, Error> {
        let path = self.data().join("postmaster.pid");
        let text = std::fs::read_to_string(&path)
            .map_err(io_error(format!("reading {}", path.display())))?;
        text.lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or(Error::NoPid(path))
    }

    /// The cluster's directory (data in `data/`, the server's log in
    /// `server.log`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for Cluster {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A cluster starts (where PostgreSQL is installed; the tests of the
    /// stores gate on it), answers, stops and starts again, and its
    /// directory goes with it.
    #[test]
    fn a_cluster_answers_restarts_and_is_removed() {
        let mut pg = match Cluster::start(false) {
            Err(Error::NotInstalled) => {
                // The tests' interop gate, by hand (perfkit-testkit
                // depends on this crate): a skip only when asked for.
                let skip = std::env::var_os("PERFKIT_SKIP_INTEROP")
                    .is_some_and(|v| !v.is_empty() && v != "0");
                assert!(
                    skip,
                    "{} (PERFKIT_SKIP_INTEROP=1 skips)",
                    Error::NotInstalled
                );
                eprintln!(
                    "SKIPPED (PERFKIT_SKIP_INTEROP is set): {}",
                    Error::NotInstalled
                );
                return;
            }
            r => r.unwrap(),
        };
        assert_eq!(pg.psql(DATABASE, "SELECT 1 + 1").unwrap(), "2\n");
        assert!(pg.postmaster_pid().unwrap() > 0);
        pg.stop(true).unwrap();
        assert!(pg.psql(DATABASE, "SELECT 1").is_err());
        pg.restart().unwrap();
        pg.wait_ready(Duration::from_secs(30)).unwrap();
        assert!(
            pg.settings("PostgreSQLStore")
                .contains(&format!("PostgreSQLStorePort={}\n", pg.port))
        );
        let dir = pg.dir().to_owned();
        drop(pg);
        assert!(!dir.exists());
    }

    #[test]
    fn errors_say_what_failed() {
        assert_eq!(
            Error::NotInstalled.to_string(),
            "PostgreSQL is not installed (apt-get install postgresql)"
        );
        let e = io_error("creating the cluster's directory")(io::ErrorKind::NotFound.into());
        assert_eq!(e.to_string(), "creating the cluster's directory");
        assert!(std::error::Error::source(&e).is_some());
    }
}
