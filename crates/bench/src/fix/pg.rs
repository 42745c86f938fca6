//! A temporary PostgreSQL cluster for the session bench's PostgreSQL
//! store row: Debian's `postgresql` package, `initdb` in a temporary
//! directory, `pg_ctl` on a free loopback port, stopped and removed when
//! dropped. PostgreSQL refuses to run as root, so as root its commands
//! run as the `postgres` user (`runuser`), in a directory it owns.
//!
//! Commits wait for the WAL to reach the kernel, not the disk (`fsync =
//! off`, `synchronous_commit = on`): the same durability as the file
//! store's default (`FileStoreSync=N`), so the two rows compare the
//! stores, not the disk.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

/// A running cluster with the database `quickfix`.
pub(crate) struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// The loopback port it listens on.
    pub port: u16,
    as_postgres: bool,
}

impl Cluster {
    /// Makes and starts a cluster; an error says why it cannot (no
    /// PostgreSQL installed, a command that failed).
    pub(crate) fn start() -> Result<Cluster> {
        let Some(bin) = perfkit_peers::postgres_bin() else {
            bail!("PostgreSQL is not installed (apt-get install postgresql)");
        };
        // SAFETY: geteuid has no preconditions and touches no memory.
        let as_postgres = unsafe { libc::geteuid() } == 0;
        let dir = tempfile::tempdir().context("creating the cluster's directory")?;
        let port = super::session::free_port()?;
        let cluster = Cluster {
            bin,
            dir,
            port,
            as_postgres,
        };
        if as_postgres {
            std::fs::set_permissions(cluster.dir.path(), std::fs::Permissions::from_mode(0o755))
                .context("opening the cluster's directory to the postgres user")?;
            cluster.run(
                Command::new("chown")
                    .arg("postgres:postgres")
                    .arg(cluster.dir.path()),
            )?;
        }
        let data = cluster.dir.path().join("data");
        cluster.run(
            cluster
                .server("initdb")
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
                .arg(&data),
        )?;
        let conf = data.join("postgresql.auto.conf");
        let mut text = std::fs::read_to_string(&conf).unwrap_or_default();
        text.push_str(&format!(
            "listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\n\
             fsync = off\nfull_page_writes = off\nsynchronous_commit = on\n",
            cluster.dir.path().display()
        ));
        std::fs::write(&conf, text).with_context(|| format!("writing {}", conf.display()))?;
        cluster.run(
            cluster
                .server("pg_ctl")
                .args(["start", "-w", "-t", "60", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(cluster.dir.path().join("server.log")),
        )?;
        cluster.run(
            Command::new(cluster.bin.join("psql"))
                .args(["-X", "-q", "-h", "127.0.0.1", "-U", "postgres", "-p"])
                .arg(port.to_string())
                .args(["-d", "postgres", "-c", "CREATE DATABASE quickfix"]),
        )?;
        Ok(cluster)
    }

    /// A server command, as the `postgres` user when we are root.
    fn server(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn run(&self, cmd: &mut Command) -> Result<()> {
        let out = cmd
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("running {cmd:?}"))?;
        if !out.status.success() {
            bail!(
                "{cmd:?}: {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(())
    }

    /// The CPU time (user + system) the server has used so far: the
    /// postmaster's and every process it started that is still running
    /// (the acceptor's backend lives as long as its connection, so a
    /// difference over a phase is what serving it cost), from
    /// `/proc/PID/stat`, in clock ticks (10 ms here).
    pub(crate) fn cpu(&self) -> Result<std::time::Duration> {
        let pid_file = self.dir.path().join("data/postmaster.pid");
        let text = std::fs::read_to_string(&pid_file)
            .with_context(|| format!("reading {}", pid_file.display()))?;
        let postmaster: u32 = text
            .lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .with_context(|| format!("{}: no process id", pid_file.display()))?;
        // SAFETY: sysconf has no preconditions and touches no memory.
        let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        if ticks <= 0 {
            bail!("sysconf(_SC_CLK_TCK) failed");
        }
        let mut total: u64 = 0;
        for e in std::fs::read_dir("/proc").context("reading /proc")? {
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

    /// The settings lines of a PostgreSQL store in this cluster.
    pub(crate) fn store_settings(&self) -> String {
        format!(
            "PostgreSQLStoreHost=127.0.0.1\nPostgreSQLStorePort={}\nPostgreSQLStoreUser=postgres\n\
             PostgreSQLStoreDatabase=quickfix\n",
            self.port
        )
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self
            .server("pg_ctl")
            .args(["stop", "-w", "-m", "immediate", "-D"])
            .arg(self.dir.path().join("data"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
